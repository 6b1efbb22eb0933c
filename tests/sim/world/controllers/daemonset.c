/* daemonset.c -- the world's DaemonSet controller: one pod per Ready node, bound directly.
 *
 * Simplifications against kube-controller-manager: pods are named <ds>-<node> and get
 * spec.nodeName at creation instead of a node affinity for the scheduler; no tolerations are
 * added and taints are ignored; a rolling update replaces one outdated pod at a time once every
 * pod is ready (maxUnavailable 1, no maxSurge). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

void ctl_ds_plan_clear(struct ctl_ds_plan *plan)
{
    free(plan->create_on);
    free(plan->remove);
    memset(plan, 0, sizeof(*plan));
}

static char *ds_revision(const cJSON *ds)
{
    char hash[9];
    ctl_json_hash(rss_json_path(ds, "spec.template"), hash);
    return rss_xasprintf("%s-%s", ctl_name(ds), hash);
}

static const cJSON *node_selector(const cJSON *ds)
{
    return rss_json_path(ds, "spec.template.spec.nodeSelector");
}

static long node_index(const cJSON **nodes, size_t nnodes, const char *name)
{
    for (size_t i = 0; i < nnodes; i++) {
        if (name && strcmp(ctl_name(nodes[i]), name) == 0)
            return (long)i;
    }
    return -1;
}

static bool node_wanted(const cJSON *ds, const cJSON *node)
{
    return ctl_node_selector_matches(node_selector(ds), rss_json_path(node, "metadata.labels"));
}

void ctl_ds_plan(const cJSON *ds, const cJSON **nodes, const bool *usable, size_t nnodes, const cJSON **pods,
                 size_t npods, struct ctl_ds_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->create_on = rss_xcalloc(nnodes + 1, sizeof(*plan->create_on));
    plan->remove = rss_xcalloc(npods + 1, sizeof(*plan->remove));
    _cleanup_free_ bool *covered = rss_xcalloc(nnodes + 1, sizeof(*covered));
    _cleanup_free_ char *revision = ds_revision(ds);
    bool all_ready = true;
    const cJSON *outdated = NULL;

    for (size_t i = 0; i < npods; i++) {
        const cJSON *pod = pods[i];
        long n = node_index(nodes, nnodes, rss_json_str(pod, "spec.nodeName"));
        if (ctl_is_terminating(pod)) {
            all_ready = false;
            if (n >= 0)
                covered[n] = true; /* its name is taken until it is gone */
            continue;
        }
        if (n < 0 || !node_wanted(ds, nodes[n]) || covered[n] || ctl_pod_terminated(pod)) {
            plan->remove[plan->nremove++] = pod;
            continue;
        }
        covered[n] = true;
        if (!ctl_pod_running_ready(pod))
            all_ready = false;
        const char *rev = rss_json_str(rss_json_path(pod, "metadata.labels"), "controller-revision-hash");
        if (!outdated && rev && strcmp(rev, revision) != 0)
            outdated = pod;
    }
    for (size_t i = 0; i < nnodes; i++) {
        if (!covered[i] && usable[i] && node_wanted(ds, nodes[i]))
            plan->create_on[plan->ncreate++] = nodes[i];
    }
    const char *strategy = rss_json_str(ds, "spec.updateStrategy.type");
    bool on_delete = strategy && strcmp(strategy, "OnDelete") == 0;
    if (!on_delete && outdated && all_ready && plan->nremove == 0 && plan->ncreate == 0)
        plan->remove[plan->nremove++] = outdated;
}

cJSON *ctl_ds_build_pod(const cJSON *ds, const char *node)
{
    _cleanup_free_ char *name = rss_xasprintf("%s-%s", ctl_name(ds), node);
    _cleanup_free_ char *revision = ds_revision(ds);
    char gen[24];
    snprintf(gen, sizeof(gen), "%ld", rss_json_long(ds, "metadata.generation", 1));

    cJSON *pod = cJSON_CreateObject();
    cJSON_AddStringToObject(pod, "apiVersion", "v1");
    cJSON_AddStringToObject(pod, "kind", "Pod");
    cJSON *meta = cJSON_AddObjectToObject(pod, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ctl_namespace(ds));
    const cJSON *tl = rss_json_path(ds, "spec.template.metadata.labels");
    cJSON *labels = cJSON_IsObject(tl) ? cJSON_Duplicate(tl, true) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(labels, "controller-revision-hash");
    cJSON_AddStringToObject(labels, "controller-revision-hash", revision);
    cJSON_DeleteItemFromObjectCaseSensitive(labels, "pod-template-generation");
    cJSON_AddStringToObject(labels, "pod-template-generation", gen);
    cJSON_AddItemToObject(meta, "labels", labels);
    const cJSON *ann = rss_json_path(ds, "spec.template.metadata.annotations");
    if (cJSON_IsObject(ann))
        cJSON_AddItemToObject(meta, "annotations", cJSON_Duplicate(ann, true));
    cJSON_AddItemToObject(meta, "ownerReferences", ctl_owner_refs(ds, "apps/v1", "DaemonSet"));
    const cJSON *ts = rss_json_path(ds, "spec.template.spec");
    cJSON *spec = cJSON_IsObject(ts) ? cJSON_Duplicate(ts, true) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
    cJSON_AddStringToObject(spec, "nodeName", node);
    cJSON_AddItemToObject(pod, "spec", spec);
    return pod;
}

cJSON *ctl_ds_status(const cJSON *ds, const cJSON **nodes, size_t nnodes, const cJSON **pods, size_t npods)
{
    _cleanup_free_ char *revision = ds_revision(ds);
    _cleanup_free_ bool *scheduled = rss_xcalloc(nnodes + 1, sizeof(*scheduled));
    long desired = 0, current = 0, mis = 0, ready = 0, updated = 0;
    for (size_t i = 0; i < nnodes; i++) {
        if (node_wanted(ds, nodes[i]))
            desired++;
    }
    for (size_t i = 0; i < npods; i++) {
        const cJSON *pod = pods[i];
        if (ctl_pod_terminated(pod))
            continue;
        long n = node_index(nodes, nnodes, rss_json_str(pod, "spec.nodeName"));
        if (n < 0 || !node_wanted(ds, nodes[n])) {
            mis++;
            continue;
        }
        if (!scheduled[n]) {
            scheduled[n] = true;
            current++;
        }
        if (ctl_pod_running_ready(pod))
            ready++;
        const char *rev = rss_json_str(rss_json_path(pod, "metadata.labels"), "controller-revision-hash");
        if (!ctl_is_terminating(pod) && rev && strcmp(rev, revision) == 0)
            updated++;
    }
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "observedGeneration", (double)rss_json_long(ds, "metadata.generation", 0));
    cJSON_AddNumberToObject(st, "desiredNumberScheduled", (double)desired);
    cJSON_AddNumberToObject(st, "currentNumberScheduled", (double)current);
    cJSON_AddNumberToObject(st, "numberMisscheduled", (double)mis);
    cJSON_AddNumberToObject(st, "numberReady", (double)ready);
    cJSON_AddNumberToObject(st, "updatedNumberScheduled", (double)updated);
    cJSON_AddNumberToObject(st, "numberAvailable", (double)ready);
    cJSON_AddNumberToObject(st, "numberUnavailable", (double)(desired > ready ? desired - ready : 0));
    return st;
}

/* ---------------------------------------------------------------- sync */

static void sync_one(struct ctl_ctx *ctx, struct ctl_snapshot *snap, const cJSON *ds, const cJSON **nodes,
                     const bool *usable, size_t nnodes)
{
    const char *ns = ctl_namespace(ds), *uid = ctl_uid(ds);
    size_t npods = 0;
    _cleanup_free_ const cJSON **all = ctl_items(snap->pods, &npods);
    _cleanup_free_ const cJSON **owned = rss_xcalloc(npods + 1, sizeof(*owned));
    size_t nowned = 0;
    for (size_t i = 0; i < npods; i++) {
        const char *owner = ctl_controller_uid(all[i], "DaemonSet");
        if (owner && strcmp(owner, uid) == 0 && strcmp(ctl_namespace(all[i]), ns) == 0)
            owned[nowned++] = all[i];
    }
    struct ctl_ds_plan plan;
    ctl_ds_plan(ds, nodes, usable, nnodes, owned, nowned, &plan);
    for (size_t i = 0; i < plan.ncreate; i++) {
        _cleanup_json_ cJSON *pod = ctl_ds_build_pod(ds, ctl_name(plan.create_on[i]));
        ctl_sync_create_pod(ctx, pod, "daemonset", ctl_name(ds));
    }
    for (size_t i = 0; i < plan.nremove; i++)
        ctl_sync_delete_pod(ctx, plan.remove[i], "daemonset");
    ctl_ds_plan_clear(&plan);
    ctl_sync_patch_status(ctx, "apps/v1", "daemonsets", ds, ctl_ds_status(ds, nodes, nnodes, owned, nowned));
}

int ctl_ds_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err)
{
    (void)err;
    size_t nnodes = 0;
    _cleanup_free_ const cJSON **nodes = ctl_items(snap->nodes, &nnodes);
    _cleanup_free_ bool *usable = rss_xcalloc(nnodes + 1, sizeof(*usable));
    /* DaemonSet pods tolerate spec.unschedulable (cordon), as in Kubernetes. */
    for (size_t i = 0; i < nnodes; i++)
        usable[i] = ctl_node_usable(snap->nodelc, nodes[i], snap->now, false);
    const cJSON *ds;
    cJSON_ArrayForEach(ds, snap->daemonsets)
    {
        if (!ctl_is_terminating(ds))
            sync_one(ctx, snap, ds, nodes, usable, nnodes);
    }
    const cJSON *pod;
    cJSON_ArrayForEach(pod, snap->pods)
    {
        const char *owner = ctl_controller_uid(pod, "DaemonSet");
        bool found = false;
        const cJSON *d;
        cJSON_ArrayForEach(d, snap->daemonsets)
        {
            if (owner && strcmp(ctl_uid(d), owner) == 0)
                found = true;
        }
        if (owner && !found && !ctl_is_terminating(pod))
            ctl_sync_delete_pod(ctx, pod, "its daemonset is gone");
    }
    return 0;
}
