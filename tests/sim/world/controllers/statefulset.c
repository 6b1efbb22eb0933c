/* statefulset.c -- the world's StatefulSet controller: stable pod identities, claims, ordering, status.
 *
 * It follows kube-controller-manager's stateful_set_control.go in a reduced form: no
 * ControllerRevision objects (the revision is a hash of the template, kept in the pods'
 * controller-revision-hash label), no minReadySeconds, claims always retained. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

/* A set asking for more is a mistake; keep the controller's memory bounded. */
#define MAX_REPLICAS 10000

void ctl_sts_plan_clear(struct ctl_sts_plan *plan)
{
    free(plan->create);
    free(plan->remove);
    memset(plan, 0, sizeof(*plan));
}

char *ctl_sts_revision(const cJSON *sts)
{
    char hash[9];
    ctl_json_hash(rss_json_path(sts, "spec.template"), hash);
    return rss_xasprintf("%s-%s", ctl_name(sts), hash);
}

static long sts_replicas(const cJSON *sts)
{
    long r = rss_json_long(sts, "spec.replicas", 1);
    return r < 0 ? 0 : r > MAX_REPLICAS ? MAX_REPLICAS : r;
}

static long sts_start(const cJSON *sts)
{
    long s = rss_json_long(sts, "spec.ordinals.start", 0);
    return s < 0 ? 0 : s;
}

static void plan_create(struct ctl_sts_plan *plan, long ordinal)
{
    plan->create = rss_xrealloc(plan->create, (plan->ncreate + 1) * sizeof(*plan->create));
    plan->create[plan->ncreate++] = ordinal;
}

static void plan_remove(struct ctl_sts_plan *plan, const cJSON *pod)
{
    for (size_t i = 0; i < plan->nremove; i++) {
        if (plan->remove[i] == pod)
            return;
    }
    plan->remove = rss_xrealloc(plan->remove, (plan->nremove + 1) * sizeof(*plan->remove));
    plan->remove[plan->nremove++] = pod;
}

struct condemned {
    const cJSON *pod;
    long ordinal; /* -1: a name without an ordinal of this set */
};

static int condemned_desc(const void *pa, const void *pb)
{
    const struct condemned *a = pa, *b = pb;
    if (a->ordinal != b->ordinal)
        return a->ordinal < b->ordinal ? 1 : -1;
    return strcmp(ctl_name(a->pod), ctl_name(b->pod));
}

static bool pod_outdated(const cJSON *pod, const char *revision)
{
    /* A pod without the label was not made by this controller's template; leave it alone. */
    const char *rev = rss_json_str(rss_json_path(pod, "metadata.labels"), "controller-revision-hash");
    return rev && strcmp(rev, revision) != 0;
}

/* The replica loop of stateful_set_control.go; returns false where Kubernetes returns early. */
static bool plan_replicas(const cJSON **slots, long replicas, long start, bool monotonic,
                          struct ctl_sts_plan *plan)
{
    for (long i = 0; i < replicas; i++) {
        const cJSON *pod = slots[i];
        if (pod && ctl_pod_terminated(pod) && !ctl_is_terminating(pod)) {
            /* Failed or completed: delete it so that it is recreated with the same identity. */
            plan_remove(plan, pod);
            if (monotonic)
                return false;
            continue;
        }
        if (!pod) {
            plan_create(plan, start + i);
            if (monotonic)
                return false;
            continue;
        }
        if (monotonic && (ctl_is_terminating(pod) || !ctl_pod_running_ready(pod)))
            return false;
    }
    return true;
}

static bool plan_condemned(struct condemned *cond, size_t ncond, bool monotonic, struct ctl_sts_plan *plan)
{
    qsort(cond, ncond, sizeof(*cond), condemned_desc);
    const cJSON *first_unhealthy = NULL;
    for (size_t i = ncond; i-- > 0;) {
        if (!ctl_pod_running_ready(cond[i].pod))
            first_unhealthy = cond[i].pod;
    }
    for (size_t i = 0; i < ncond; i++) {
        const cJSON *pod = cond[i].pod;
        if (ctl_is_terminating(pod)) {
            if (monotonic)
                return false;
            continue;
        }
        /* OrderedReady never removes a healthy pod while a lower one is unhealthy. */
        if (monotonic && first_unhealthy && first_unhealthy != pod)
            return false;
        plan_remove(plan, pod);
        if (monotonic)
            return false;
    }
    return true;
}

void ctl_sts_plan(const cJSON *sts, const cJSON **pods, size_t npods, struct ctl_sts_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    long replicas = sts_replicas(sts), start = sts_start(sts);
    const char *policy = rss_json_str(sts, "spec.podManagementPolicy");
    bool monotonic = !(policy && strcmp(policy, "Parallel") == 0);
    const char *name = ctl_name(sts);

    _cleanup_free_ const cJSON **slots = rss_xcalloc((size_t)replicas + 1, sizeof(*slots));
    _cleanup_free_ struct condemned *cond = rss_xcalloc(npods + 1, sizeof(*cond));
    size_t ncond = 0;
    for (size_t i = 0; i < npods; i++) {
        long ord = ctl_parse_ordinal(name, ctl_name(pods[i]));
        if (ord >= start && ord < start + replicas && !slots[ord - start])
            slots[ord - start] = pods[i];
        else
            cond[ncond++] = (struct condemned){pods[i], ord};
    }

    if (!plan_replicas(slots, replicas, start, monotonic, plan))
        return;
    if (!plan_condemned(cond, ncond, monotonic, plan))
        return;

    const char *strategy = rss_json_str(sts, "spec.updateStrategy.type");
    if (strategy && strcmp(strategy, "OnDelete") == 0)
        return;
    long partition = rss_json_long(sts, "spec.updateStrategy.rollingUpdate.partition", 0);
    _cleanup_free_ char *revision = ctl_sts_revision(sts);
    /* Rolling update: newest ordinal first, one pod at a time, each only once the ones above are healthy. */
    for (long i = replicas - 1; i >= 0 && i >= partition; i--) {
        const cJSON *pod = slots[i];
        if (!pod)
            continue;
        if (pod_outdated(pod, revision) && !ctl_is_terminating(pod)) {
            plan_remove(plan, pod);
            return;
        }
        if (!ctl_pod_running_ready(pod))
            return;
    }
}

static void add_string_copy(cJSON *dst, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
    cJSON_AddStringToObject(dst, key, value);
}

static cJSON *object_copy_or_new(const cJSON *src)
{
    return cJSON_IsObject(src) ? cJSON_Duplicate(src, true) : cJSON_CreateObject();
}

cJSON *ctl_sts_build_pod(const cJSON *sts, long ordinal)
{
    const char *ns = ctl_namespace(sts);
    _cleanup_free_ char *name = rss_xasprintf("%s-%ld", ctl_name(sts), ordinal);
    _cleanup_free_ char *revision = ctl_sts_revision(sts);
    char index[24];
    snprintf(index, sizeof(index), "%ld", ordinal);

    cJSON *pod = cJSON_CreateObject();
    cJSON_AddStringToObject(pod, "apiVersion", "v1");
    cJSON_AddStringToObject(pod, "kind", "Pod");
    cJSON *meta = cJSON_AddObjectToObject(pod, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON *labels = object_copy_or_new(rss_json_path(sts, "spec.template.metadata.labels"));
    add_string_copy(labels, "statefulset.kubernetes.io/pod-name", name);
    add_string_copy(labels, "apps.kubernetes.io/pod-index", index);
    add_string_copy(labels, "controller-revision-hash", revision);
    cJSON_AddItemToObject(meta, "labels", labels);
    const cJSON *ann = rss_json_path(sts, "spec.template.metadata.annotations");
    if (cJSON_IsObject(ann))
        cJSON_AddItemToObject(meta, "annotations", cJSON_Duplicate(ann, true));
    cJSON_AddItemToObject(meta, "ownerReferences", ctl_owner_refs(sts, "apps/v1", "StatefulSet"));

    cJSON *spec = object_copy_or_new(rss_json_path(sts, "spec.template.spec"));
    add_string_copy(spec, "hostname", name);
    const char *service = rss_json_str(sts, "spec.serviceName");
    if (service && *service)
        add_string_copy(spec, "subdomain", service);

    const cJSON *vcts = rss_json_path(sts, "spec.volumeClaimTemplates");
    if (cJSON_GetArraySize(vcts) > 0) {
        cJSON *volumes = cJSON_GetObjectItemCaseSensitive(spec, "volumes");
        if (!cJSON_IsArray(volumes)) {
            cJSON_DeleteItemFromObjectCaseSensitive(spec, "volumes");
            volumes = cJSON_AddArrayToObject(spec, "volumes");
        }
        const cJSON *vct;
        cJSON_ArrayForEach(vct, vcts)
        {
            const char *vname = ctl_name(vct);
            /* A claim template replaces a template volume of the same name, as in Kubernetes. */
            for (int i = cJSON_GetArraySize(volumes) - 1; i >= 0; i--) {
                const char *n = rss_json_str(cJSON_GetArrayItem(volumes, i), "name");
                if (n && strcmp(n, vname) == 0)
                    cJSON_DeleteItemFromArray(volumes, i);
            }
            _cleanup_free_ char *claim = rss_xasprintf("%s-%s", vname, name);
            cJSON *vol = cJSON_CreateObject();
            cJSON_AddStringToObject(vol, "name", vname);
            cJSON *pvc = cJSON_AddObjectToObject(vol, "persistentVolumeClaim");
            cJSON_AddStringToObject(pvc, "claimName", claim);
            cJSON_AddItemToArray(volumes, vol);
        }
    }
    cJSON_AddItemToObject(pod, "spec", spec);
    return pod;
}

cJSON *ctl_sts_build_pvcs(const cJSON *sts, const char *pod_name)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *vct;
    cJSON_ArrayForEach(vct, rss_json_path(sts, "spec.volumeClaimTemplates"))
    {
        _cleanup_free_ char *claim = rss_xasprintf("%s-%s", ctl_name(vct), pod_name);
        cJSON *pvc = cJSON_CreateObject();
        cJSON_AddStringToObject(pvc, "apiVersion", "v1");
        cJSON_AddStringToObject(pvc, "kind", "PersistentVolumeClaim");
        cJSON *meta = cJSON_AddObjectToObject(pvc, "metadata");
        cJSON_AddStringToObject(meta, "name", claim);
        cJSON_AddStringToObject(meta, "namespace", ctl_namespace(sts));
        cJSON *labels = object_copy_or_new(rss_json_path(vct, "metadata.labels"));
        const cJSON *kv;
        cJSON_ArrayForEach(kv, rss_json_path(sts, "spec.selector.matchLabels"))
        {
            if (cJSON_IsString(kv))
                add_string_copy(labels, kv->string, kv->valuestring);
        }
        cJSON_AddItemToObject(meta, "labels", labels);
        const cJSON *ann = rss_json_path(vct, "metadata.annotations");
        if (cJSON_IsObject(ann))
            cJSON_AddItemToObject(meta, "annotations", cJSON_Duplicate(ann, true));
        cJSON_AddItemToObject(pvc, "spec", object_copy_or_new(rss_json_path(vct, "spec")));
        cJSON_AddItemToArray(out, pvc);
    }
    return out;
}

cJSON *ctl_sts_status(const cJSON *sts, const cJSON **pods, size_t npods)
{
    _cleanup_free_ char *revision = ctl_sts_revision(sts);
    const char *current_rev = rss_json_str(sts, "status.currentRevision");
    if (!current_rev || !*current_rev)
        current_rev = revision;
    long replicas = 0, ready = 0, updated = 0, current = 0;
    for (size_t i = 0; i < npods; i++) {
        const cJSON *pod = pods[i];
        replicas++;
        if (ctl_pod_running_ready(pod))
            ready++;
        if (ctl_is_terminating(pod))
            continue;
        const char *rev = rss_json_str(rss_json_path(pod, "metadata.labels"), "controller-revision-hash");
        if (!rev || strcmp(rev, revision) == 0)
            updated++;
        if (!rev || strcmp(rev, current_rev) == 0)
            current++;
    }
    /* The update is complete once every wanted replica runs the new template and is ready. */
    if (updated == sts_replicas(sts) && ready == updated && replicas == updated) {
        current_rev = revision;
        current = updated;
    }
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "observedGeneration", (double)rss_json_long(sts, "metadata.generation", 0));
    cJSON_AddNumberToObject(st, "replicas", (double)replicas);
    cJSON_AddNumberToObject(st, "readyReplicas", (double)ready);
    cJSON_AddNumberToObject(st, "currentReplicas", (double)current);
    cJSON_AddNumberToObject(st, "updatedReplicas", (double)updated);
    cJSON_AddNumberToObject(st, "availableReplicas", (double)ready);
    cJSON_AddStringToObject(st, "currentRevision", current_rev);
    cJSON_AddStringToObject(st, "updateRevision", revision);
    cJSON_AddNumberToObject(st, "collisionCount", 0);
    return st;
}

bool ctl_status_differs(const cJSON *current_status, const cJSON *want)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, want)
    {
        const cJSON *have = cJSON_IsObject(current_status)
                                ? cJSON_GetObjectItemCaseSensitive(current_status, w->string)
                                : NULL;
        if (!have || !cJSON_Compare(have, w, true))
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- sync */

static void ensure_pvcs(struct ctl_ctx *ctx, struct ctl_snapshot *snap, const cJSON *sts,
                        const char *pod_name)
{
    _cleanup_json_ cJSON *pvcs = ctl_sts_build_pvcs(sts, pod_name);
    const char *ns = ctl_namespace(sts);
    const cJSON *pvc;
    cJSON_ArrayForEach(pvc, pvcs)
    {
        if (ctl_find(snap->pvcs, ns, ctl_name(pvc)))
            continue;
        _cleanup_free_ char *path = rss_kube_path("v1", ns, "persistentvolumeclaims", NULL, NULL);
        _cleanup_error_ rss_error_t err = NULL;
        _cleanup_json_ cJSON *ret = NULL;
        if (rss_kube_create(ctx->kube, path, pvc, &ret, &err) < 0) {
            if (rss_error_code(err) != RSS_E_EXISTS)
                rss_log_error(RSS_LOG_WARN, &err, "statefulset %s/%s: creating claim %s", ns, ctl_name(sts),
                              ctl_name(pvc));
            continue;
        }
        rss_log_info("statefulset %s/%s: created claim %s", ns, ctl_name(sts), ctl_name(pvc));
        if (ctx->written)
            ctx->written(ctx->userdata, "persistentvolumeclaims", ret);
        cJSON_AddItemToArray(snap->pvcs, TAKE_PTR(ret));
    }
}

static bool owner_exists(const cJSON *owners, const char *uid)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, owners)
    {
        if (strcmp(ctl_uid(o), uid) == 0)
            return true;
    }
    return false;
}

static void sync_one(struct ctl_ctx *ctx, struct ctl_snapshot *snap, const cJSON *sts)
{
    const char *ns = ctl_namespace(sts), *uid = ctl_uid(sts);
    size_t npods = 0;
    _cleanup_free_ const cJSON **all = ctl_items(snap->pods, &npods);
    _cleanup_free_ const cJSON **owned = rss_xcalloc(npods + 1, sizeof(*owned));
    size_t nowned = 0;
    for (size_t i = 0; i < npods; i++) {
        const char *owner = ctl_controller_uid(all[i], "StatefulSet");
        if (owner && strcmp(owner, uid) == 0 && strcmp(ctl_namespace(all[i]), ns) == 0)
            owned[nowned++] = all[i];
    }

    struct ctl_sts_plan plan;
    ctl_sts_plan(sts, owned, nowned, &plan);
    /* Claims first: a pod must never start without its claims (the kubelet would wait anyway). */
    for (size_t i = 0; i < nowned; i++) {
        if (!ctl_is_terminating(owned[i]))
            ensure_pvcs(ctx, snap, sts, ctl_name(owned[i]));
    }
    for (size_t i = 0; i < plan.ncreate; i++) {
        _cleanup_json_ cJSON *pod = ctl_sts_build_pod(sts, plan.create[i]);
        ensure_pvcs(ctx, snap, sts, ctl_name(pod));
        ctl_sync_create_pod(ctx, pod, "statefulset", ctl_name(sts));
    }
    for (size_t i = 0; i < plan.nremove; i++)
        ctl_sync_delete_pod(ctx, plan.remove[i], "statefulset");
    ctl_sts_plan_clear(&plan);

    ctl_sync_patch_status(ctx, "apps/v1", "statefulsets", sts, ctl_sts_status(sts, owned, nowned));
}

int ctl_sts_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err)
{
    (void)err;
    const cJSON *sts;
    cJSON_ArrayForEach(sts, snap->statefulsets)
    {
        if (!ctl_is_terminating(sts))
            sync_one(ctx, snap, sts);
    }
    /* The garbage collector's part for our pods: kubesim has none, so pods of a deleted set would
     * otherwise stay forever. Claims are kept, as with the Retain policy. */
    const cJSON *pod;
    cJSON_ArrayForEach(pod, snap->pods)
    {
        const char *owner = ctl_controller_uid(pod, "StatefulSet");
        if (owner && !ctl_is_terminating(pod) && !owner_exists(snap->statefulsets, owner))
            ctl_sync_delete_pod(ctx, pod, "its statefulset is gone");
    }
    return 0;
}
