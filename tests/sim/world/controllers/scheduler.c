/* scheduler.c -- the world's scheduler: binds pending pods to Ready nodes, honouring nodeSelector and
 * required pod anti-affinity.
 *
 * Simplifications against kube-scheduler: no resources, taints, node affinity, pod affinity,
 * priorities or preemption; the "binding" is a merge patch of spec.nodeName guarded by the pod's
 * resourceVersion (kubesim serves no pods/binding), followed by the PodScheduled condition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

#define HOSTNAME_KEY "kubernetes.io/hostname"

bool ctl_sched_wants(const cJSON *pod)
{
    const char *node = rss_json_str(pod, "spec.nodeName");
    if (node && *node)
        return false;
    if (ctl_is_terminating(pod) || ctl_pod_terminated(pod))
        return false;
    const char *sched = rss_json_str(pod, "spec.schedulerName");
    return !sched || !*sched || strcmp(sched, "default-scheduler") == 0;
}

static const cJSON *node_by_name(const cJSON **nodes, size_t nnodes, const char *name)
{
    for (size_t i = 0; i < nnodes; i++) {
        if (strcmp(ctl_name(nodes[i]), name) == 0)
            return nodes[i];
    }
    return NULL;
}

/* The node's value of a topology key. The kubelet always sets kubernetes.io/hostname; a node
 * object without it (or a pod on a node we do not know) falls back to the node name. */
static const char *topology(const cJSON *node, const char *node_name, const char *key)
{
    const char *v = node ? rss_json_str(rss_json_path(node, "metadata.labels"), key) : NULL;
    if (!v && strcmp(key, HOSTNAME_KEY) == 0)
        v = node_name;
    return v;
}

/* Whether a term of a pod in namespace `owner_ns` applies to a pod in namespace `ns`. */
static bool term_namespace_matches(const cJSON *term, const char *owner_ns, const char *ns)
{
    const cJSON *nss = rss_json_path(term, "namespaces");
    const cJSON *nsel = rss_json_path(term, "namespaceSelector");
    /* An empty namespaceSelector means every namespace; a non-empty one needs namespace labels,
     * which the world does not use, so it is read as "no extra namespaces". */
    if (cJSON_IsObject(nsel) && !nsel->child)
        return true;
    if (cJSON_GetArraySize(nss) > 0) {
        const cJSON *n;
        cJSON_ArrayForEach(n, nss)
        {
            if (cJSON_IsString(n) && strcmp(n->valuestring, ns) == 0)
                return true;
        }
        return false;
    }
    return strcmp(owner_ns, ns) == 0;
}

static const cJSON *anti_terms(const cJSON *pod)
{
    return rss_json_path(pod, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
}

static bool same_pod(const cJSON *a, const cJSON *b)
{
    return strcmp(ctl_namespace(a), ctl_namespace(b)) == 0 && strcmp(ctl_name(a), ctl_name(b)) == 0;
}

/* Whether a `term` of pod `owner` placed in `owner_domain` forbids `other` in `other_domain`. */
static bool term_forbids(const cJSON *term, const cJSON *owner, const char *owner_domain, const cJSON *other,
                         const char *other_domain)
{
    if (!owner_domain || !other_domain || strcmp(owner_domain, other_domain) != 0)
        return false;
    if (!term_namespace_matches(term, ctl_namespace(owner), ctl_namespace(other)))
        return false;
    return ctl_selector_matches(rss_json_path(term, "labelSelector"),
                                rss_json_path(other, "metadata.labels"));
}

static bool anti_affinity_conflict(const cJSON *pod, const cJSON *node, const cJSON **nodes, size_t nnodes,
                                   const cJSON **pods, size_t npods)
{
    const char *node_name = ctl_name(node);
    for (size_t i = 0; i < npods; i++) {
        const cJSON *other = pods[i];
        const char *other_node_name = rss_json_str(other, "spec.nodeName");
        if (!other_node_name || !*other_node_name || same_pod(pod, other) || ctl_pod_terminated(other))
            continue;
        const cJSON *other_node = node_by_name(nodes, nnodes, other_node_name);
        const cJSON *term;
        cJSON_ArrayForEach(term, anti_terms(pod))
        {
            const char *key = rss_json_str(term, "topologyKey");
            if (key && term_forbids(term, pod, topology(node, node_name, key), other,
                                    topology(other_node, other_node_name, key)))
                return true;
        }
        /* Symmetry: a placed pod's own required anti-affinity keeps newcomers away too. */
        cJSON_ArrayForEach(term, anti_terms(other))
        {
            const char *key = rss_json_str(term, "topologyKey");
            if (key && term_forbids(term, other, topology(other_node, other_node_name, key), pod,
                                    topology(node, node_name, key)))
                return true;
        }
    }
    return false;
}

static size_t pods_on(const char *node, const cJSON **pods, size_t npods)
{
    size_t n = 0;
    for (size_t i = 0; i < npods; i++) {
        const char *nn = rss_json_str(pods[i], "spec.nodeName");
        if (nn && strcmp(nn, node) == 0 && !ctl_pod_terminated(pods[i]))
            n++;
    }
    return n;
}

/* The TaintToleration filter: a toleration matches a taint by effect (empty = any), key (empty with
 * Exists = every taint) and, for operator Equal (the default), value. */
static bool tolerates(const cJSON *pod, const cJSON *taint)
{
    const char *key = rss_json_str(taint, "key"), *value = rss_json_str(taint, "value");
    const char *effect = rss_json_str(taint, "effect");
    const cJSON *tol;
    cJSON_ArrayForEach(tol, rss_json_path(pod, "spec.tolerations"))
    {
        const char *tk = rss_json_str(tol, "key"), *op = rss_json_str(tol, "operator");
        const char *tv = rss_json_str(tol, "value"), *te = rss_json_str(tol, "effect");
        bool exists = op && !strcmp(op, "Exists");
        if (te && *te && strcmp(te, effect ? effect : ""))
            continue;
        if (!tk || !*tk) {
            if (exists)
                return true;
            continue;
        }
        if (strcmp(tk, key ? key : ""))
            continue;
        if (exists || !strcmp(tv ? tv : "", value ? value : ""))
            return true;
    }
    return false;
}

/* A NoSchedule or NoExecute taint of the node the pod does not tolerate (PreferNoSchedule only
 * scores in the real scheduler). */
static const cJSON *untolerated_taint(const cJSON *pod, const cJSON *node)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, rss_json_path(node, "spec.taints"))
    {
        const char *effect = rss_json_str(t, "effect");
        if (effect && (!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")) && !tolerates(pod, t))
            return t;
    }
    return NULL;
}

long ctl_sched_pick(const cJSON *pod, const cJSON **nodes, const bool *usable, size_t nnodes,
                    const cJSON **pods, size_t npods, char **why)
{
    size_t not_ready = 0, selector = 0, anti = 0, tainted = 0;
    long best = -1;
    size_t best_load = 0;
    for (size_t i = 0; i < nnodes; i++) {
        if (!usable[i]) {
            not_ready++;
            continue;
        }
        if (!ctl_node_selector_matches(rss_json_path(pod, "spec.nodeSelector"),
                                       rss_json_path(nodes[i], "metadata.labels"))) {
            selector++;
            continue;
        }
        if (untolerated_taint(pod, nodes[i])) {
            tainted++;
            continue;
        }
        if (anti_affinity_conflict(pod, nodes[i], nodes, nnodes, pods, npods)) {
            anti++;
            continue;
        }
        size_t load = pods_on(ctl_name(nodes[i]), pods, npods);
        if (best < 0 || load < best_load ||
            (load == best_load && strcmp(ctl_name(nodes[i]), ctl_name(nodes[best])) < 0)) {
            best = (long)i;
            best_load = load;
        }
    }
    if (best >= 0)
        return best;
    if (why) {
        char parts[256] = "";
        size_t len = 0;
        if (selector)
            len +=
                (size_t)snprintf(parts + len, sizeof(parts) - len,
                                 "%s%zu node(s) didn't match Pod's node selector", len ? ", " : "", selector);
        if (tainted && len < sizeof(parts))
            len += (size_t)snprintf(parts + len, sizeof(parts) - len, "%s%zu node(s) had untolerated taints",
                                    len ? ", " : "", tainted);
        if (anti && len < sizeof(parts))
            len +=
                (size_t)snprintf(parts + len, sizeof(parts) - len,
                                 "%s%zu node(s) didn't match pod anti-affinity rules", len ? ", " : "", anti);
        if (not_ready && len < sizeof(parts))
            snprintf(parts + len, sizeof(parts) - len, "%s%zu node(s) were not ready", len ? ", " : "",
                     not_ready);
        *why = nnodes ? rss_xasprintf("0/%zu nodes are available: %s.", nnodes, parts)
                      : rss_xstrdup("0/0 nodes are available: no nodes registered.");
    }
    return -1;
}

/* ---------------------------------------------------------------- sync */

/* The pod's conditions with PodScheduled replaced (an array for a merge patch, which replaces
 * arrays whole). NULL when it already says exactly that. */
static cJSON *scheduled_conditions(const cJSON *pod, const char *status, const char *reason,
                                   const char *message)
{
    const cJSON *cur = ctl_condition(pod, "PodScheduled");
    if (cur) {
        const char *s = rss_json_str(cur, "status"), *r = rss_json_str(cur, "reason"),
                   *m = rss_json_str(cur, "message");
        if (s && strcmp(s, status) == 0 && strcmp(r ? r : "", reason) == 0 &&
            strcmp(m ? m : "", message) == 0)
            return NULL;
    }
    char now[RSS_TIME_LEN];
    rss_time_seconds(now, NULL);
    cJSON *conds = cJSON_CreateArray();
    const cJSON *c;
    cJSON_ArrayForEach(c, rss_json_path(pod, "status.conditions"))
    {
        const char *t = rss_json_str(c, "type");
        if (!t || strcmp(t, "PodScheduled") != 0)
            cJSON_AddItemToArray(conds, cJSON_Duplicate(c, true));
    }
    cJSON *mine = cJSON_CreateObject();
    cJSON_AddStringToObject(mine, "type", "PodScheduled");
    cJSON_AddStringToObject(mine, "status", status);
    if (*reason)
        cJSON_AddStringToObject(mine, "reason", reason);
    if (*message)
        cJSON_AddStringToObject(mine, "message", message);
    cJSON_AddNullToObject(mine, "lastProbeTime");
    const char *old_status = rss_json_str(cur, "status");
    const char *old_lt = rss_json_str(cur, "lastTransitionTime");
    cJSON_AddStringToObject(mine, "lastTransitionTime",
                            old_status && old_lt && strcmp(old_status, status) == 0 ? old_lt : now);
    cJSON_AddItemToArray(conds, mine);
    return conds;
}

/* Writes the PodScheduled condition, guarded by resourceVersion so that a concurrent writer (the
 * kubelet) is never overwritten: on a conflict the next pass recomputes. */
static void set_scheduled(struct ctl_ctx *ctx, const cJSON *pod, const char *status, const char *reason,
                          const char *message)
{
    cJSON *conds = scheduled_conditions(pod, status, reason, message);
    if (!conds)
        return;
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    const char *rv = rss_json_str(pod, "metadata.resourceVersion");
    if (rv)
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddItemToObject(st, "conditions", conds);
    if (strcmp(status, "False") == 0 && !rss_json_str(pod, "status.phase"))
        cJSON_AddStringToObject(st, "phase", "Pending");
    _cleanup_free_ char *path = rss_kube_path("v1", ctl_namespace(pod), "pods", ctl_name(pod), NULL);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_merge_patch_status(ctx->kube, path, patch, &ret, &err) < 0) {
        enum rss_errc c = rss_error_code(err);
        if (c != RSS_E_CONFLICT && c != RSS_E_NOT_FOUND)
            rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: setting PodScheduled=%s", ctl_namespace(pod),
                          ctl_name(pod), status);
        return;
    }
    if (ctx->written && ret)
        ctx->written(ctx->userdata, "pods", ret);
}

/* Binds `pod` to `node`; on success replaces the snapshot's copy with the bound pod so later pods
 * of the same pass see it. */
static bool bind(struct ctl_ctx *ctx, cJSON *snap_pods, const cJSON *pod, const char *node)
{
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    const char *rv = rss_json_str(pod, "metadata.resourceVersion");
    if (rv)
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    cJSON *spec = cJSON_AddObjectToObject(patch, "spec");
    cJSON_AddStringToObject(spec, "nodeName", node);
    _cleanup_free_ char *path = rss_kube_path("v1", ctl_namespace(pod), "pods", ctl_name(pod), NULL);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_merge_patch(ctx->kube, path, patch, &ret, &err) < 0) {
        enum rss_errc c = rss_error_code(err);
        if (c != RSS_E_CONFLICT && c != RSS_E_NOT_FOUND)
            rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: binding to %s", ctl_namespace(pod), ctl_name(pod),
                          node);
        return false;
    }
    rss_log_info("pod %s/%s: bound to node %s", ctl_namespace(pod), ctl_name(pod), node);
    if (!ret)
        return true;
    if (ctx->written)
        ctx->written(ctx->userdata, "pods", ret);
    set_scheduled(ctx, ret, "True", "", "");
    for (int i = 0; i < cJSON_GetArraySize(snap_pods); i++) {
        if (same_pod(cJSON_GetArrayItem(snap_pods, i), ret)) {
            cJSON_ReplaceItemInArray(snap_pods, i, TAKE_PTR(ret));
            break;
        }
    }
    return true;
}

int ctl_sched_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err)
{
    (void)err;
    size_t nnodes = 0, npending = 0;
    _cleanup_free_ const cJSON **nodes = ctl_items(snap->nodes, &nnodes);
    _cleanup_free_ bool *usable = rss_xcalloc(nnodes + 1, sizeof(*usable));
    for (size_t i = 0; i < nnodes; i++)
        usable[i] = ctl_node_usable(snap->nodelc, nodes[i], snap->now, true);

    /* Names, not pointers: bind() replaces snapshot items as it goes. */
    _cleanup_json_ cJSON *pending = cJSON_CreateArray();
    {
        size_t n = 0;
        _cleanup_free_ const cJSON **all = ctl_items(snap->pods, &n);
        _cleanup_free_ const cJSON **want = rss_xcalloc(n + 1, sizeof(*want));
        for (size_t i = 0; i < n; i++) {
            if (ctl_sched_wants(all[i]))
                want[npending++] = all[i];
        }
        ctl_sort_by_age(want, npending);
        for (size_t i = 0; i < npending; i++) {
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, cJSON_CreateString(ctl_namespace(want[i])));
            cJSON_AddItemToArray(pair, cJSON_CreateString(ctl_name(want[i])));
            cJSON_AddItemToArray(pending, pair);
        }
    }
    const cJSON *pair;
    cJSON_ArrayForEach(pair, pending)
    {
        const cJSON *pod = ctl_find(snap->pods, cJSON_GetArrayItem(pair, 0)->valuestring,
                                    cJSON_GetArrayItem(pair, 1)->valuestring);
        if (!pod)
            continue;
        size_t npods = 0;
        _cleanup_free_ const cJSON **pods = ctl_items(snap->pods, &npods);
        _cleanup_free_ char *why = NULL;
        long idx = ctl_sched_pick(pod, nodes, usable, nnodes, pods, npods, &why);
        if (idx >= 0) {
            bind(ctx, snap->pods, pod, ctl_name(nodes[idx]));
            continue;
        }
        const cJSON *cur = ctl_condition(pod, "PodScheduled");
        const char *old = rss_json_str(cur, "message");
        if (!old || strcmp(old, why) != 0)
            rss_log_info("pod %s/%s: unschedulable: %s", ctl_namespace(pod), ctl_name(pod), why);
        set_scheduled(ctx, pod, "False", "Unschedulable", why);
    }
    return 0;
}
