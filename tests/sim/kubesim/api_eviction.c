/* api_eviction.c -- POST pods/NAME/eviction (policy/v1 Eviction), as the apiserver's EvictionREST
 * (pkg/registry/core/pod/storage/eviction.go): the PodDisruptionBudget check and decrement, then the
 * pod's deletion. Everything runs under kubesim's one lock, so the real server's conflict retries
 * (a pod or budget changed between its reads and writes) cannot happen here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

/* eviction.go MaxDisruptedPodSize: a budget with more unconfirmed evictions refuses more. */
#define MAX_DISRUPTED_PODS 2000

static const char too_many_msg[] = "Cannot evict pod as it would violate the pod's disruption budget.";

static long num_at(const cJSON *o, const char *path)
{
    const cJSON *v = ks_json_path(o, path);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

static bool str_in(const cJSON *arr, const char *s)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) if (cJSON_IsString(x) && s && !strcmp(x->valuestring, s)) return true;
    return false;
}

/* metav1.LabelSelector against a pod's labels. A nil or empty selector matches no pod here:
 * eviction.go skips such budgets ("it should match nothing, not everything"). */
static bool selector_matches(const cJSON *sel, const cJSON *labels)
{
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
    const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
    if (cJSON_GetArraySize(ml) == 0 && cJSON_GetArraySize(me) == 0)
        return false;
    const cJSON *kv;
    cJSON_ArrayForEach(kv, ml)
    {
        /* label keys hold dots (app.kubernetes.io/name): no dotted-path lookup */
        const cJSON *have = cJSON_GetObjectItemCaseSensitive(labels, kv->string);
        if (!cJSON_IsString(kv) || !cJSON_IsString(have) || strcmp(have->valuestring, kv->valuestring))
            return false;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, me)
    {
        const char *key = ks_json_str(e, "key"), *op = ks_json_str(e, "operator");
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values");
        const cJSON *lv = key ? cJSON_GetObjectItemCaseSensitive(labels, key) : NULL;
        const char *have = cJSON_IsString(lv) ? lv->valuestring : NULL;
        if (!key || !op)
            return false;
        if (!strcmp(op, "In") && !(have && str_in(vals, have)))
            return false;
        if (!strcmp(op, "NotIn") && have && str_in(vals, have))
            return false;
        if (!strcmp(op, "Exists") && !have)
            return false;
        if (!strcmp(op, "DoesNotExist") && have)
            return false;
        if (strcmp(op, "In") && strcmp(op, "NotIn") && strcmp(op, "Exists") && strcmp(op, "DoesNotExist"))
            return false; /* an invalid selector matches nothing */
    }
    return true;
}

static bool pod_ready(const cJSON *pod)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, ks_json_path(pod, "status.conditions"))
    {
        const char *t = ks_json_str(c, "type"), *s = ks_json_str(c, "status");
        if (t && !strcmp(t, "Ready"))
            return s && !strcmp(s, "True");
    }
    return false;
}

/* canIgnorePDB: a terminal or Pending pod, or one already being deleted, disrupts nothing more. */
static bool can_ignore_pdb(const cJSON *pod)
{
    const char *phase = ks_json_str(pod, "status.phase");
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") || !strcmp(phase, "Pending")))
        return true;
    return ks_json_path(pod, "metadata.deletionTimestamp") != NULL;
}

/* createTooManyRequestsError and checkAndDecrement's refusal: 429 with one DisruptionBudget cause. */
static void reply_too_many(struct ks_reply *r, const char *cause)
{
    cJSON *st = ks_status_new(429, "TooManyRequests", too_many_msg);
    cJSON *causes = cJSON_AddArrayToObject(cJSON_AddObjectToObject(st, "details"), "causes");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", "DisruptionBudget");
    cJSON_AddStringToObject(c, "message", cause);
    cJSON_AddItemToArray(causes, c);
    r->content_type = "application/json";
    ks_reply_json(r, 429, st);
}

/* errors.NewForbidden(policy.Resource("poddisruptionbudget"), name, err). */
static void reply_pdb_forbidden(struct ks_reply *r, const char *name, const char *why)
{
    _cleanup_free_ char *msg = rss_xasprintf("poddisruptionbudget.policy \"%s\" is forbidden: %s", name, why);
    cJSON *st = ks_status_new(403, "Forbidden", msg);
    cJSON *d = cJSON_AddObjectToObject(st, "details");
    cJSON_AddStringToObject(d, "name", name);
    cJSON_AddStringToObject(d, "group", "policy");
    cJSON_AddStringToObject(d, "kind", "poddisruptionbudget");
    r->content_type = "application/json";
    ks_reply_json(r, 403, st);
}

/* The Status a successful eviction answers: the create handler fills in 201. */
static void reply_created_status(struct ks_reply *r, int code, const char *msg)
{
    cJSON *st = ks_status_new(code, NULL, msg);
    r->content_type = "application/json";
    /* The REST returns the Status as its object, so the HTTP code stays the create's 201 even
     * for the Failure (code 500) of a pod with several budgets; clients read the body's code. */
    ks_reply_json(r, 201, st);
}

/* apimeta.SetStatusCondition: the transition time moves only when the status changes. */
static void set_condition(cJSON *status, const char *type, const char *st, const char *reason, long gen)
{
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
    }
    cJSON *c = NULL, *x;
    cJSON_ArrayForEach(x, conds)
    {
        const char *t = ks_json_str(x, "type");
        if (t && !strcmp(t, type))
            c = x;
    }
    if (!c) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", type);
        cJSON_AddItemToArray(conds, c);
    }
    const char *old = ks_json_str(c, "status");
    if (!old || strcmp(old, st) || !ks_json_str(c, "lastTransitionTime")) {
        _cleanup_free_ char *now = ks_time_now(0);
        ks_json_set_str(c, "lastTransitionTime", now);
    }
    ks_json_set_str(c, "status", st);
    ks_json_set_num(c, "observedGeneration", (double)gen);
    ks_json_set_str(c, "reason", reason);
    ks_json_set_str(c, "message", "");
}

/* Go's %v of a []string: [a b]. */
static void go_string_list(const cJSON *arr, char *buf, size_t n)
{
    size_t used = 0;
    const cJSON *x;
    buf[0] = '\0';
    int w = snprintf(buf, n, "[");
    used = w > 0 ? (size_t)w : 0;
    cJSON_ArrayForEach(x, arr)
    {
        w = snprintf(buf + used, n - used, "%s%s", used > 1 ? " " : "",
                     cJSON_IsString(x) ? x->valuestring : "");
        if (w < 0 || (size_t)w >= n - used)
            return;
        used += (size_t)w;
    }
    snprintf(buf + used, n - used, "]");
}

struct evict_opts {
    long grace;
    const char *policy, *puid, *prv;
    bool dry_run;
};

/* addConditionAndDeletePod (lock held): the DisruptionTarget condition (1.26+, GA in 1.31), then
 * the deletion with the eviction's DeleteOptions. False after replying an error. */
static bool delete_pod(struct ctx *c, struct ks_snap *s, const struct evict_opts *o)
{
    const char *uid = ks_json_str(s->obj, "metadata.uid");
    if (o->puid && strcmp(o->puid, uid ? uid : "")) {
        char why[512];
        snprintf(
            why, sizeof(why),
            "StorageError: invalid object, Code: 4, Key: pods/%s, ResourceVersion: 0, AdditionalErrorMsg: "
            "Precondition failed: UID in precondition: %s, UID in object meta: %s",
            c->name, o->puid, uid ? uid : "");
        api_conflict(c->reply, c->res, c->name, why);
        return false;
    }
    if (o->prv && strcmp(o->prv, api_obj_rv(s->obj))) {
        char why[512];
        snprintf(
            why, sizeof(why),
            "StorageError: invalid object, Code: 4, Key: pods/%s, ResourceVersion: 0, AdditionalErrorMsg: "
            "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
            c->name, o->prv, api_obj_rv(s->obj));
        api_conflict(c->reply, c->res, c->name, why);
        return false;
    }
    if (o->dry_run)
        return true;
    if (ks_minor >= 26) {
        cJSON *p = cJSON_Duplicate(s->obj, true);
        cJSON *conds = ks_json_path(p, "status.conditions");
        if (!cJSON_IsArray(conds)) {
            cJSON *st = ks_json_obj(p, "status");
            cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
            conds = cJSON_AddArrayToObject(st, "conditions");
        }
        cJSON *dc = NULL, *x;
        cJSON_ArrayForEach(x, conds)
        {
            const char *t = ks_json_str(x, "type");
            if (t && !strcmp(t, "DisruptionTarget"))
                dc = x;
        }
        if (!dc) {
            dc = cJSON_CreateObject();
            cJSON_AddStringToObject(dc, "type", "DisruptionTarget");
            cJSON_AddItemToArray(conds, dc);
        }
        const char *was = ks_json_str(dc, "status");
        if (!was || strcmp(was, "True")) {
            _cleanup_free_ char *now = ks_time_now(0);
            ks_json_set_str(dc, "lastTransitionTime", now);
        }
        ks_json_set_str(dc, "status", "True");
        ks_json_set_str(dc, "reason", "EvictionByEvictionAPI");
        ks_json_set_str(dc, "message", "Eviction API: evicting");
        if (cJSON_Compare(p, s->obj, true))
            cJSON_Delete(p);
        else
            s = ks_store_put("", "pods", c->ns, p, "PUT");
    }
    struct ks_snap *gone = NULL;
    cJSON *upd = NULL;
    api_delete_object(c->res, s, o->grace, o->policy, &gone, &upd);
    ks_snap_unref(gone);
    cJSON_Delete(upd);
    return true;
}

/* checkAndDecrement (lock held): false after replying the refusal. */
static bool check_and_decrement(struct ctx *c, const cJSON *pdb, bool dry_run)
{
    const char *name = ks_json_str(pdb, "metadata.name");
    long gen = num_at(pdb, "metadata.generation");
    if (num_at(pdb, "status.observedGeneration") < gen) {
        _cleanup_free_ char *cause =
            rss_xasprintf("The disruption budget %s is still being processed by the server.", name);
        reply_too_many(c->reply, cause);
        return false;
    }
    long allowed = num_at(pdb, "status.disruptionsAllowed");
    if (allowed < 0) {
        reply_pdb_forbidden(c->reply, name, "pdb disruptions allowed is negative");
        return false;
    }
    if (cJSON_GetArraySize(ks_json_path(pdb, "status.disruptedPods")) > MAX_DISRUPTED_PODS) {
        reply_pdb_forbidden(c->reply, name,
                            "DisruptedPods map too big - too many evictions not confirmed by PDB controller");
        return false;
    }
    if (allowed == 0) {
        _cleanup_free_ char *cause =
            rss_xasprintf("The disruption budget %s needs %ld healthy pods and has %ld currently", name,
                          num_at(pdb, "status.desiredHealthy"), num_at(pdb, "status.currentHealthy"));
        reply_too_many(c->reply, cause);
        return false;
    }
    if (dry_run)
        return true;
    cJSON *o = cJSON_Duplicate(pdb, true);
    cJSON *st = ks_json_obj(o, "status");
    ks_json_set_num(st, "disruptionsAllowed", (double)(allowed - 1));
    if (allowed - 1 == 0)
        set_condition(st, "DisruptionAllowed", "False", "InsufficientPods",
                      num_at(o, "status.observedGeneration"));
    /* Tells the disruption controller not to count the pod as healthy while it goes away. */
    _cleanup_free_ char *now = ks_time_now(0);
    ks_json_set_str(ks_json_obj(st, "disruptedPods"), c->name, now);
    ks_store_put("policy", "poddisruptionbudgets", c->ns, o, "PUT");
    return true;
}

void api_pod_eviction(struct ctx *c)
{
    if (strcmp(c->req->method, "POST")) {
        api_reply_err(c->reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    _cleanup_json_ cJSON *ev = ks_body_json(c->req);
    /* The subresource's decoder defaults a missing apiVersion and kind to policy/v1 Eviction. */
    const char *kind = ks_json_str(ev, "kind"), *av = ks_json_str(ev, "apiVersion");
    if (!cJSON_IsObject(ev) || (kind && strcmp(kind, "Eviction")) || (av && strncmp(av, "policy/", 7))) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "not a Eviction object: %s",
                      kind ? kind : "the body is not a policy/v1 Eviction");
        return;
    }
    const char *ename = ks_json_str(ev, "metadata.name");
    if (!ename || strcmp(ename, c->name)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "name in URL does not match name in Eviction object");
        return;
    }
    const cJSON *dopts = ks_json_path(ev, "deleteOptions");
    struct evict_opts o = {.grace = -1};
    const cJSON *g = ks_json_path(dopts, "gracePeriodSeconds");
    if (cJSON_IsNumber(g))
        o.grace = (long)g->valuedouble;
    o.policy = ks_json_str(dopts, "propagationPolicy");
    o.puid = ks_json_str(dopts, "preconditions.uid");
    o.prv = ks_json_str(dopts, "preconditions.resourceVersion");
    /* propagateDryRun: either makes it a dry run; both given must agree (the only value is All). */
    const char *qdry = api_q(c, "dryRun");
    const cJSON *bdry = ks_json_path(dopts, "dryRun");
    if (qdry && cJSON_GetArraySize(bdry) > 0) {
        const cJSON *b0 = cJSON_GetArrayItem(bdry, 0);
        if (cJSON_GetArraySize(bdry) != 1 || !cJSON_IsString(b0) || strcmp(b0->valuestring, qdry)) {
            char text[256];
            go_string_list(bdry, text, sizeof(text));
            /* a plain error of the REST: 500 without a reason */
            api_reply_err(c->reply, 500, NULL, NULL, NULL, NULL,
                          "Non-matching dry-run options in request and content: [%s] and %s", qdry, text);
            return;
        }
    }
    o.dry_run = qdry || cJSON_GetArraySize(bdry) > 0;

    ks_lock();
    struct ks_snap *s = ks_store_get("", "pods", c->ns, c->name);
    if (!s) {
        api_not_found(c->reply, c->res, c->name);
        goto out;
    }
    if (can_ignore_pdb(s->obj)) {
        if (delete_pod(c, s, &o))
            reply_created_status(c->reply, 201, NULL);
        goto out;
    }
    const cJSON *labels = ks_json_path(s->obj, "metadata.labels");
    size_t n, matched = 0;
    struct ks_snap **v = ks_store_list("policy", "poddisruptionbudgets", c->ns, &n);
    const cJSON *pdb = NULL;
    for (size_t i = 0; i < n; i++) {
        if (selector_matches(ks_json_path(v[i]->obj, "spec.selector"), labels)) {
            pdb = v[i]->obj;
            matched++;
        }
    }
    bool go = true;
    if (matched > 1) {
        reply_created_status(c->reply, 500,
                             "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                             "does not support.");
        go = false;
    } else if (matched == 1) {
        bool skip_budget = false;
        if (!pod_ready(s->obj)) {
            /* An unready pod does not count as healthy: with AlwaysAllow it goes at once, and
             * with the default IfHealthyBudget when the budget is met without it. */
            const char *policy = ks_json_str(pdb, "spec.unhealthyPodEvictionPolicy");
            long desired = num_at(pdb, "status.desiredHealthy");
            if ((policy && !strcmp(policy, "AlwaysAllow")) ||
                (num_at(pdb, "status.currentHealthy") >= desired && desired > 0))
                skip_budget = true;
        }
        if (!skip_budget)
            go = check_and_decrement(c, pdb, o.dry_run);
    }
    ks_snaps_free(v, n);
    if (go && delete_pod(c, s, &o))
        reply_created_status(c->reply, 201, NULL);
out:
    ks_unlock();
}
