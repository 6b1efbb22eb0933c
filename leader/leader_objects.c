/* leader_objects.c -- builds the Service, StatefulSet and PodDisruptionBudget an RSS owns, and tells them
 * from others' (pure). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/hash.h"

cJSON *leader_owner_ref(const struct rss_spec *spec)
{
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", RSS_CRD_GROUP_VERSION);
    cJSON_AddStringToObject(ref, "kind", RSS_CRD_KIND);
    cJSON_AddStringToObject(ref, "name", spec->name);
    cJSON_AddStringToObject(ref, "uid", spec->uid ? spec->uid : "");
    /* controller: the StatefulSet and Service are ours alone; blockOwnerDeletion so a foreground
     * deletion of the RSS waits for them. */
    cJSON_AddBoolToObject(ref, "controller", true);
    cJSON_AddBoolToObject(ref, "blockOwnerDeletion", true);
    return ref;
}

bool leader_owned_by(const cJSON *obj, const struct rss_spec *spec)
{
    const cJSON *ref;
    cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "ownerReferences"))
    {
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "uid"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) && uid && spec->uid &&
            *spec->uid && !strcmp(uid, spec->uid))
            return true;
    }
    return false;
}

static cJSON *name_labels(const struct rss_spec *spec)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, RSS_LABEL_NAME, spec->name);
    return l;
}

static cJSON *object_meta(const struct rss_spec *spec, const char *name)
{
    cJSON *md = cJSON_CreateObject();
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", spec->ns ? spec->ns : "");
    cJSON_AddItemToObject(md, "labels", name_labels(spec));
    cJSON *refs = cJSON_AddArrayToObject(md, "ownerReferences");
    cJSON_AddItemToArray(refs, leader_owner_ref(spec));
    return md;
}

/* A field of the raw CR's spec (or spec.pod when in_pod), or NULL. */
static const cJSON *cr_field(const cJSON *cr, bool in_pod, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(cr, "spec");
    if (in_pod)
        s = cJSON_GetObjectItemCaseSensitive(s, "pod");
    return cJSON_GetObjectItemCaseSensitive(s, key);
}

cJSON *leader_build_service(const struct rss_spec *spec, const cJSON *cr)
{
    _cleanup_free_ char *name = rss_spec_service_name(spec);
    cJSON *svc = cJSON_CreateObject();
    cJSON_AddStringToObject(svc, "apiVersion", "v1");
    cJSON_AddStringToObject(svc, "kind", "Service");
    cJSON_AddItemToObject(svc, "metadata", object_meta(spec, name));
    cJSON *s = cJSON_AddObjectToObject(svc, "spec");
    /* Headless: members find each other by <pod>.<svc> DNS names (the peers of every hook). */
    cJSON_AddStringToObject(s, "clusterIP", "None");
    /* A member must be resolvable before it is ready: the seed's peers join it while it starts. */
    cJSON_AddBoolToObject(s, "publishNotReadyAddresses", true);
    cJSON_AddItemToObject(s, "selector", name_labels(spec));
    const cJSON *ports = cr_field(cr, false, "servicePorts");
    if (cJSON_IsArray(ports) && cJSON_GetArraySize(ports) > 0)
        cJSON_AddItemToObject(s, "ports", cJSON_Duplicate(ports, true));
    return svc;
}

static cJSON *env_field_ref(const char *name, const char *path)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON *vf = cJSON_AddObjectToObject(e, "valueFrom");
    cJSON *fr = cJSON_AddObjectToObject(vf, "fieldRef");
    cJSON_AddStringToObject(fr, "fieldPath", path);
    return e;
}

static bool env_has(const cJSON *env, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, env)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
            return true;
    }
    return false;
}

/* Adds POD_NAME, POD_NAMESPACE and SERVICE_NAME to a container unless the admin set them. */
static void add_env(cJSON *container, const char *service)
{
    cJSON *env = cJSON_GetObjectItemCaseSensitive(container, "env");
    if (!cJSON_IsArray(env)) {
        cJSON_DeleteItemFromObjectCaseSensitive(container, "env");
        env = cJSON_AddArrayToObject(container, "env");
    }
    if (!env_has(env, "POD_NAME"))
        cJSON_AddItemToArray(env, env_field_ref("POD_NAME", "metadata.name"));
    if (!env_has(env, "POD_NAMESPACE"))
        cJSON_AddItemToArray(env, env_field_ref("POD_NAMESPACE", "metadata.namespace"));
    if (!env_has(env, "SERVICE_NAME")) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", "SERVICE_NAME");
        cJSON_AddStringToObject(e, "value", service);
        cJSON_AddItemToArray(env, e);
    }
}

static cJSON *anti_affinity(const struct rss_spec *spec)
{
    cJSON *aff = cJSON_CreateObject();
    cJSON *paa = cJSON_AddObjectToObject(aff, "podAntiAffinity");
    cJSON *req = cJSON_AddArrayToObject(paa, "requiredDuringSchedulingIgnoredDuringExecution");
    cJSON *term = cJSON_CreateObject();
    cJSON *ls = cJSON_AddObjectToObject(term, "labelSelector");
    cJSON_AddItemToObject(ls, "matchLabels", name_labels(spec));
    cJSON_AddStringToObject(term, "topologyKey", "kubernetes.io/hostname");
    cJSON_AddItemToArray(req, term);
    return aff;
}

static void copy_opt(cJSON *dst, const char *key, const cJSON *src)
{
    if (src && !cJSON_IsNull(src))
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(src, true));
}

cJSON *leader_build_statefulset(const struct rss_spec *spec, const cJSON *cr, int replicas)
{
    _cleanup_free_ char *name = rss_spec_statefulset_name(spec);
    _cleanup_free_ char *service = rss_spec_service_name(spec);

    cJSON *sts = cJSON_CreateObject();
    cJSON_AddStringToObject(sts, "apiVersion", "apps/v1");
    cJSON_AddStringToObject(sts, "kind", "StatefulSet");
    cJSON *md = object_meta(spec, name);
    cJSON_AddItemToObject(sts, "metadata", md);
    cJSON *s = cJSON_AddObjectToObject(sts, "spec");
    cJSON_AddNumberToObject(s, "replicas", replicas);
    cJSON_AddStringToObject(s, "serviceName", service);
    /* Parallel: the order of starts is rssd's business (the hooks), not the StatefulSet's; an
     * OrderedReady set would never create pod 1 while pod 0's app is (deliberately) not started. */
    cJSON_AddStringToObject(s, "podManagementPolicy", "Parallel");
    /* OnDelete: a template change replaces no pod by itself; the planner rolls the members one at a time
     * (stop hook, delete, join), which a RollingUpdate that only waits for Ready containers cannot do. */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(s, "updateStrategy"), "type", "OnDelete");
    cJSON *sel = cJSON_AddObjectToObject(s, "selector");
    cJSON_AddItemToObject(sel, "matchLabels", name_labels(spec));

    cJSON *tpl = cJSON_AddObjectToObject(s, "template");
    cJSON *tmd = cJSON_AddObjectToObject(tpl, "metadata");
    cJSON_AddItemToObject(tmd, "labels", name_labels(spec));
    cJSON *ps = cJSON_AddObjectToObject(tpl, "spec");
    cJSON *containers = cJSON_Duplicate(spec->containers, true);
    if (!containers)
        containers = cJSON_CreateArray();
    cJSON *c;
    cJSON_ArrayForEach(c, containers)
    {
        if (cJSON_IsObject(c))
            add_env(c, service);
    }
    cJSON_AddItemToObject(ps, "containers", containers);
    copy_opt(ps, "volumes", spec->volumes);
    const cJSON *ns = cr_field(cr, true, "nodeSelector");
    copy_opt(ps, "nodeSelector", ns ? ns : cr_field(cr, false, "nodeSelector"));
    copy_opt(ps, "tolerations", cr_field(cr, false, "tolerations"));
    copy_opt(ps, "serviceAccountName", cr_field(cr, false, "serviceAccountName"));
    copy_opt(ps, "imagePullSecrets", cr_field(cr, false, "imagePullSecrets"));
    copy_opt(ps, "securityContext", cr_field(cr, true, "securityContext"));
    copy_opt(ps, "automountServiceAccountToken", cr_field(cr, true, "automountServiceAccountToken"));
    if (spec->anti_affinity)
        cJSON_AddItemToObject(ps, "affinity", anti_affinity(spec));
    else
        copy_opt(ps, "affinity", cr_field(cr, false, "affinity"));
    copy_opt(s, "volumeClaimTemplates", spec->volume_claim_templates);

    /* The hash covers the template and claim templates (what a spec change can alter), not the
     * replicas the planner owns. */
    cJSON *h = cJSON_CreateObject();
    cJSON_AddItemReferenceToObject(h, "template", tpl);
    cJSON_AddItemReferenceToObject(h, "updateStrategy",
                                   cJSON_GetObjectItemCaseSensitive(s, "updateStrategy"));
    cJSON *vct = cJSON_GetObjectItemCaseSensitive(s, "volumeClaimTemplates");
    if (vct)
        cJSON_AddItemReferenceToObject(h, "volumeClaimTemplates", vct);
    _cleanup_free_ char *text = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    char buf[32];
    snprintf(buf, sizeof(buf), "%016" PRIx64, rss_hash_fnv1a(text ? text : ""));
    cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
    cJSON_AddStringToObject(ann, RSS_ANNOTATION_SPEC_HASH, buf);
    return sts;
}

char *leader_primary_budget_name(const struct rss_spec *spec)
{
    _cleanup_free_ char *sts = rss_spec_statefulset_name(spec);
    return rss_xasprintf("%s" LEADER_PRIMARY_BUDGET_SUFFIX, sts);
}

/* A PodDisruptionBudget named name, its spec (*s) still empty. */
static cJSON *budget_object(const struct rss_spec *spec, const char *name, cJSON **s)
{
    cJSON *pdb = cJSON_CreateObject();
    cJSON_AddStringToObject(pdb, "apiVersion", "policy/v1");
    cJSON_AddStringToObject(pdb, "kind", "PodDisruptionBudget");
    cJSON_AddItemToObject(pdb, "metadata", object_meta(spec, name));
    *s = cJSON_AddObjectToObject(pdb, "spec");
    return pdb;
}

cJSON *leader_build_budget(const struct rss_spec *spec, int max_unavailable, const char *primary)
{
    _cleanup_free_ char *name = rss_spec_statefulset_name(spec);
    cJSON *s;
    cJSON *pdb = budget_object(spec, name, &s);
    /* The eviction policy is the server's default (IfHealthyBudget): a member that is not Ready may be
     * evicted only while the others meet the budget, so a drain cannot take a second member while one is
     * down. */
    if (!primary) {
        /* maxUnavailable: it follows the StatefulSet's replicas through a scale. */
        cJSON_AddNumberToObject(s, "maxUnavailable", max_unavailable);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(s, "selector"), "matchLabels", name_labels(spec));
        return pdb;
    }
    /* All but the primary, which has a budget of its own: a pod selected by two budgets cannot be
     * evicted at all (the server answers 500), so the selectors never overlap. An integer minAvailable,
     * because the disruption controller counts a maxUnavailable against the whole StatefulSet's scale,
     * the primary included (getExpectedScale): one standby of three could never go. */
    int min = spec->replicas - 1 - max_unavailable;
    cJSON_AddNumberToObject(s, "minAvailable", min > 0 ? min : 0);
    cJSON *sel = cJSON_AddObjectToObject(s, "selector");
    cJSON_AddItemToObject(sel, "matchLabels", name_labels(spec));
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "key", RSS_LABEL_POD_NAME);
    cJSON_AddStringToObject(e, "operator", "NotIn");
    cJSON_AddItemToObject(e, "values", cJSON_CreateStringArray(&primary, 1));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(sel, "matchExpressions"), e);
    return pdb;
}

cJSON *leader_build_primary_budget(const struct rss_spec *spec, const char *primary)
{
    _cleanup_free_ char *name = leader_primary_budget_name(spec);
    cJSON *s;
    cJSON *pdb = budget_object(spec, name, &s);
    /* Never evicted: it hands over first (planner_switchover.c), then this budget names the new primary
     * and the old one falls under the members' budget. The default eviction policy keeps a primary that
     * is not Ready (a failover under way) from eviction too, until the promotion moves this budget. */
    cJSON_AddNumberToObject(s, "minAvailable", 1);
    cJSON *labels = name_labels(spec);
    cJSON_AddStringToObject(labels, RSS_LABEL_POD_NAME, primary);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(s, "selector"), "matchLabels", labels);
    return pdb;
}
