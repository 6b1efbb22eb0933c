/* disruption.c -- the disruption controller: every PodDisruptionBudget's status, as
 * kube-controller-manager's (pkg/controller/disruption/disruption.go) computes it, so that the
 * eviction subresource kubesim serves (and kubectl drain) meets the budgets a real cluster keeps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

/* disruption.go DeletionTimeout: an evicted pod not gone by then counts again. */
#define DELETION_TIMEOUT_S 120.0

static long num_at(const cJSON *o, const char *path)
{
    const cJSON *v = rss_json_path(o, path);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

static double parse_time(const char *s)
{
    struct timespec ts;
    _cleanup_error_ rss_error_t err = NULL;
    if (!s || rss_time_parse(s, &ts, &err) < 0)
        return -1;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The controller ownerReference of a pod, or NULL (an unmanaged pod). */
static const cJSON *controller_ref(const cJSON *pod)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, rss_json_path(pod, "metadata.ownerReferences"))
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")))
            return r;
    }
    return NULL;
}

/* intstr.GetScaledValueFromIntOrPercent: an integer, or "N%" of `total`, rounded up or down. -1 when
 * it is neither. */
static long scaled(const cJSON *v, long total, bool round_up)
{
    if (cJSON_IsNumber(v))
        return (long)v->valuedouble;
    if (!cJSON_IsString(v))
        return -1;
    char *end = NULL;
    long pct = strtol(v->valuestring, &end, 10);
    if (end == v->valuestring || strcmp(end, "%"))
        return -1;
    double x = (double)pct * (double)total / 100.0;
    return (long)(round_up ? ceil(x) : floor(x));
}

/* getExpectedScale: the sum of spec.replicas of the pods' controllers (each counted once). The
 * world runs StatefulSets only: a pod of any other controller, or of a set that is gone, is the
 * real controller's "found no controllers for pod" error. Unmanaged pods count for nothing. */
static bool expected_scale(const cJSON **pods, size_t n, const cJSON *statefulsets, long *expected,
                           char *errbuf, size_t errlen)
{
    *expected = 0;
    const char **seen = rss_xcalloc(n + 1, sizeof(*seen));
    size_t nseen = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const cJSON *ref = controller_ref(pods[i]);
        if (!ref)
            continue;
        const char *uid = rss_json_str(ref, "uid"), *kind = rss_json_str(ref, "kind");
        bool known = false;
        for (size_t k = 0; k < nseen && !known; k++)
            known = uid && !strcmp(seen[k], uid);
        if (known)
            continue;
        const cJSON *sts = NULL;
        if (kind && !strcmp(kind, "StatefulSet"))
            sts = ctl_find(statefulsets, ctl_namespace(pods[i]), rss_json_str(ref, "name"));
        if (!sts || !uid || strcmp(ctl_uid(sts), uid)) {
            snprintf(errbuf, errlen, "found no controllers for pod \"%s\"", ctl_name(pods[i]));
            ok = false;
            break;
        }
        const cJSON *r = rss_json_path(sts, "spec.replicas");
        *expected += cJSON_IsNumber(r) ? (long)r->valuedouble : 1;
        seen[nseen++] = uid;
    }
    free(seen);
    return ok;
}

/* apimeta.SetStatusCondition: lastTransitionTime moves only when the status changes. */
static void set_condition(cJSON *status, const char *st, const char *reason, const char *msg, long gen,
                          const char *now_str)
{
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
    }
    cJSON *c = NULL, *x;
    cJSON_ArrayForEach(x, conds)
    {
        const char *t = rss_json_str(x, "type");
        if (t && !strcmp(t, "DisruptionAllowed"))
            c = x;
    }
    if (!c) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", "DisruptionAllowed");
        cJSON_AddItemToArray(conds, c);
    }
    const char *old = rss_json_str(c, "status");
    const char *when = (old && !strcmp(old, st) && rss_json_str(c, "lastTransitionTime"))
                           ? rss_json_str(c, "lastTransitionTime")
                           : now_str;
    cJSON *entries[] = {cJSON_CreateString("DisruptionAllowed"),
                        cJSON_CreateString(st),
                        cJSON_CreateNumber((double)gen),
                        cJSON_CreateString(when),
                        cJSON_CreateString(reason),
                        cJSON_CreateString(msg)};
    const char *keys[] = {"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"};
    /* Rebuilt in the order Go prints a metav1.Condition, `when` copied before its source goes. */
    cJSON *fresh = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cJSON_AddItemToObject(fresh, keys[i], entries[i]);
    cJSON_ReplaceItemViaPointer(conds, c, fresh);
}

cJSON *ctl_pdb_status(const cJSON *pdb, const cJSON *pods, const cJSON *statefulsets, double now,
                      const char *now_str)
{
    const char *ns = ctl_namespace(pdb);
    const cJSON *selector = rss_json_path(pdb, "spec.selector");
    size_t nall;
    _cleanup_free_ const cJSON **all = ctl_items(pods, &nall);
    const cJSON **mine = rss_xcalloc(nall + 1, sizeof(*mine));
    size_t n = 0;
    for (size_t i = 0; i < nall; i++) {
        /* policy/v1: a nil selector matches no pod, an empty one every pod of the namespace. */
        if (!strcmp(ctl_namespace(all[i]), ns) &&
            ctl_selector_matches(selector, rss_json_path(all[i], "metadata.labels")))
            mine[n++] = all[i];
    }
    const cJSON *old = rss_json_path(pdb, "status");
    long gen = num_at(pdb, "metadata.generation");
    cJSON *status = cJSON_IsObject(old) ? cJSON_Duplicate(old, true) : cJSON_CreateObject();

    /* getExpectedPodCount */
    const cJSON *max_unavail = rss_json_path(pdb, "spec.maxUnavailable");
    const cJSON *min_avail = rss_json_path(pdb, "spec.minAvailable");
    long expected = 0, desired = 0;
    char errbuf[512] = "";
    bool ok = true;
    if (max_unavail && !cJSON_IsNull(max_unavail)) {
        ok = expected_scale(mine, n, statefulsets, &expected, errbuf, sizeof(errbuf));
        long mu = ok ? scaled(max_unavail, expected, true) : 0;
        if (ok && mu < 0) {
            snprintf(errbuf, sizeof(errbuf), "invalid value for IntOrString: invalid value \"%s\"",
                     cJSON_IsString(max_unavail) ? max_unavail->valuestring : "?");
            ok = false;
        }
        desired = expected - mu < 0 ? 0 : expected - mu;
    } else if (cJSON_IsNumber(min_avail)) {
        desired = (long)min_avail->valuedouble;
        expected = (long)n;
    } else if (cJSON_IsString(min_avail)) {
        ok = expected_scale(mine, n, statefulsets, &expected, errbuf, sizeof(errbuf));
        desired = ok ? scaled(min_avail, expected, true) : 0;
        if (ok && desired < 0) {
            snprintf(errbuf, sizeof(errbuf), "invalid value for IntOrString: invalid value \"%s\"",
                     min_avail->valuestring);
            ok = false;
        }
    }
    if (!ok) {
        /* failSafe: no disruption until the budget can be computed again; observedGeneration stays. */
        free(mine);
        cJSON_DeleteItemFromObjectCaseSensitive(status, "disruptionsAllowed");
        cJSON_AddNumberToObject(status, "disruptionsAllowed", 0);
        set_condition(status, "False", "SyncFailed", errbuf, num_at(status, "observedGeneration"), now_str);
        return status;
    }

    /* buildDisruptedPodMap: an entry lives while its pod exists, is not being deleted, and for at
     * most DeletionTimeout; then countHealthyPods leaves those pods out. */
    const cJSON *old_disrupted = rss_json_path(pdb, "status.disruptedPods");
    cJSON *disrupted = cJSON_CreateObject();
    long healthy = 0;
    for (size_t i = 0; i < n; i++) {
        if (ctl_is_terminating(mine[i]))
            continue;
        const cJSON *when = cJSON_IsObject(old_disrupted)
                                ? cJSON_GetObjectItemCaseSensitive(old_disrupted, ctl_name(mine[i]))
                                : NULL;
        double t = cJSON_IsString(when) ? parse_time(when->valuestring) : -1;
        if (t >= 0 && t + DELETION_TIMEOUT_S > now) {
            cJSON_AddItemToObject(disrupted, ctl_name(mine[i]), cJSON_Duplicate(when, true));
            continue;
        }
        if (t >= 0)
            rss_log_info("pod %s/%s was expected by PDB %s/%s to be deleted but it wasn't", ns,
                         ctl_name(mine[i]), ns, ctl_name(pdb));
        const char *ready = ctl_condition_status(mine[i], "Ready");
        if (ready && !strcmp(ready, "True"))
            healthy++;
    }
    free(mine);
    long allowed = healthy - desired;
    if (expected <= 0 || allowed <= 0)
        allowed = 0;

    /* updatePdbStatus: the whole status anew, the conditions carried over. */
    cJSON *conds = cJSON_DetachItemFromObjectCaseSensitive(status, "conditions");
    cJSON_Delete(status);
    status = cJSON_CreateObject();
    if (cJSON_GetArraySize(disrupted) > 0)
        cJSON_AddItemToObject(status, "disruptedPods", disrupted);
    else
        cJSON_Delete(disrupted);
    cJSON_AddNumberToObject(status, "disruptionsAllowed", (double)allowed);
    cJSON_AddNumberToObject(status, "currentHealthy", (double)healthy);
    cJSON_AddNumberToObject(status, "desiredHealthy", (double)desired);
    cJSON_AddNumberToObject(status, "expectedPods", (double)expected);
    cJSON_AddNumberToObject(status, "observedGeneration", (double)gen);
    if (conds)
        cJSON_AddItemToObject(status, "conditions", conds);
    if (allowed > 0)
        set_condition(status, "True", "SufficientPods", "", gen, now_str);
    else
        set_condition(status, "False", "InsufficientPods", "", gen, now_str);
    return status;
}

/* ---------------------------------------------------------------- sync */

int ctl_pdb_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err)
{
    (void)err;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char now_str[RSS_TIME_LEN];
    rss_time_seconds(now_str, &ts);
    const cJSON *pdb;
    cJSON_ArrayForEach(pdb, snap->pdbs)
    {
        _cleanup_json_ cJSON *want =
            ctl_pdb_status(pdb, snap->pods, snap->statefulsets, (double)ts.tv_sec, now_str);
        const cJSON *have = rss_json_path(pdb, "status");
        if (have && cJSON_Compare(have, want, true))
            continue;
        /* A full update guarded by the resourceVersion, as the real controller's UpdateStatus: the
         * eviction subresource writes this status too (the decrement, disruptedPods), and a stale
         * pass must lose to it (409) rather than hand the same disruption out twice. */
        _cleanup_json_ cJSON *obj = cJSON_Duplicate(pdb, true);
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        cJSON_AddItemToObject(obj, "status", cJSON_Duplicate(want, true));
        _cleanup_free_ char *path =
            rss_kube_path("policy/v1", ctl_namespace(pdb), "poddisruptionbudgets", ctl_name(pdb), NULL);
        _cleanup_error_ rss_error_t e = NULL;
        _cleanup_json_ cJSON *ret = NULL;
        if (rss_kube_update_status(ctx->kube, path, obj, &ret, &e) < 0) {
            enum rss_errc c = rss_error_code(e);
            if (c != RSS_E_CONFLICT && c != RSS_E_NOT_FOUND)
                rss_log_error(RSS_LOG_WARN, &e, "poddisruptionbudget %s/%s: updating status",
                              ctl_namespace(pdb), ctl_name(pdb));
            continue;
        }
        rss_log_debug("poddisruptionbudget %s/%s: %ld disruptions allowed", ctl_namespace(pdb), ctl_name(pdb),
                      (long)rss_json_long(want, "disruptionsAllowed", 0));
        if (ctx->written && ret)
            ctx->written(ctx->userdata, "poddisruptionbudgets", ret);
    }
    return 0;
}
