/* leader_replace.c -- what spec.nodeLossPolicy Replace needs from the API about a member on a dead node
 * (its node's out-of-service taint, where its data lives), and the deletion of a lost member's claims
 * (docs/node-loss.md). The decision itself is the planner's. */
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"

#define OUT_OF_SERVICE_TAINT "node.kubernetes.io/out-of-service"
#define HOSTNAME_LABEL       "kubernetes.io/hostname"

static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
    o = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(o, b) : o;
}

bool leader_node_out_of_service(const cJSON *node)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, at(node, "spec", "taints"))
    {
        const char *key = cJSON_GetStringValue(at(t, "key", NULL));
        const char *effect = cJSON_GetStringValue(at(t, "effect", NULL));
        /* Kubernetes documents NoExecute; NoSchedule states the same intent. PreferNoSchedule does not. */
        if (key && !strcmp(key, OUT_OF_SERVICE_TAINT) && effect &&
            (!strcmp(effect, "NoExecute") || !strcmp(effect, "NoSchedule")))
            return true;
    }
    return false;
}

/* A node selector term that pins a volume to one node: kubernetes.io/hostname, or the node's name. */
static bool pins_node(const cJSON *term)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, at(term, "matchExpressions", NULL))
    {
        const char *key = cJSON_GetStringValue(at(e, "key", NULL));
        if (key && !strcmp(key, HOSTNAME_LABEL))
            return true;
    }
    cJSON_ArrayForEach(e, at(term, "matchFields", NULL))
    {
        const char *key = cJSON_GetStringValue(at(e, "key", NULL));
        if (key && !strcmp(key, "metadata.name"))
            return true;
    }
    return false;
}

enum rss_volume_locality leader_pv_locality(const cJSON *pv)
{
    const cJSON *spec = at(pv, "spec", NULL);
    if (!cJSON_IsObject(spec))
        return RSS_VOLUME_UNKNOWN;
    if (cJSON_IsObject(at(spec, "local", NULL)) || cJSON_IsObject(at(spec, "hostPath", NULL)))
        return RSS_VOLUME_NODE_LOCAL;
    /* A zone affinity (a cloud disk) lets the volume follow the pod within its zone; a hostname one
     * does not (local PVs, TopoLVM, OpenEBS LocalPV, ... all pin their PVs this way). */
    const cJSON *t;
    cJSON_ArrayForEach(t, at(at(spec, "nodeAffinity", "required"), "nodeSelectorTerms", NULL))
    {
        if (pins_node(t))
            return RSS_VOLUME_NODE_LOCAL;
    }
    return RSS_VOLUME_NETWORK;
}

/* Where member `pod`'s data lives: every claim from the spec's templates, through its bound PV. */
static enum rss_volume_locality member_volume(const struct leader_ctx *ctx, const struct rss_spec *spec,
                                              const char *pod)
{
    enum rss_volume_locality all = RSS_VOLUME_UNKNOWN;
    size_t n = 0;
    const cJSON *tpl;
    cJSON_ArrayForEach(tpl, spec->volume_claim_templates)
    {
        const char *name = cJSON_GetStringValue(at(tpl, "metadata", "name"));
        if (!name)
            return RSS_VOLUME_UNKNOWN;
        _cleanup_free_ char *claim = rss_xasprintf("%s-%s", name, pod);
        _cleanup_free_ char *path = rss_kube_path("v1", spec->ns, "persistentvolumeclaims", claim, NULL);
        _cleanup_json_ cJSON *pvc = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_get(ctx->kube, path, &pvc, &err) < 0) {
            _cleanup_free_ char *why = rss_error_string(err);
            rss_log_debug("%s/%s: claim %s: %s (volume locality unknown)", spec->ns, spec->name, claim, why);
            return RSS_VOLUME_UNKNOWN;
        }
        const char *pv_name = cJSON_GetStringValue(at(pvc, "spec", "volumeName"));
        if (!pv_name || !*pv_name)
            return RSS_VOLUME_UNKNOWN;
        _cleanup_free_ char *pv_path = rss_kube_path("v1", NULL, "persistentvolumes", pv_name, NULL);
        _cleanup_json_ cJSON *pv = NULL;
        if (rss_kube_get(ctx->kube, pv_path, &pv, &err) < 0) {
            _cleanup_free_ char *why = rss_error_string(err);
            rss_log_debug("%s/%s: volume %s: %s (volume locality unknown)", spec->ns, spec->name, pv_name,
                          why);
            return RSS_VOLUME_UNKNOWN;
        }
        enum rss_volume_locality l = leader_pv_locality(pv);
        if (l == RSS_VOLUME_NODE_LOCAL)
            return l; /* one node-local claim pins the member */
        if (l != RSS_VOLUME_NETWORK)
            return RSS_VOLUME_UNKNOWN;
        all = RSS_VOLUME_NETWORK;
        n++;
    }
    return n ? all : RSS_VOLUME_UNKNOWN;
}

void leader_replace_facts(const struct leader_ctx *ctx, const struct rss_spec *spec,
                          struct leader_snapshot *snap)
{
    if (!spec->node_loss_replace)
        return; /* Wait: nothing to learn, no extra reads */
    for (size_t i = 0; i < snap->n_members; i++) {
        struct rss_member_input *m = &snap->members[i];
        if (!m->pod_exists || !m->node_dead || !m->node || !*m->node)
            continue;
        _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", m->node, NULL);
        _cleanup_json_ cJSON *node = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_get(ctx->kube, path, &node, &err) == 0) {
            m->node_out_of_service = leader_node_out_of_service(node);
        } else {
            /* A Node object deleted by the admin is no taint: the safe side is to keep waiting. */
            _cleanup_free_ char *why = rss_error_string(err);
            rss_log_debug("%s/%s: node %s: %s", spec->ns, spec->name, m->node, why);
        }
        _cleanup_free_ char *pod = rss_spec_pod_name(spec, m->ordinal);
        m->volume = member_volume(ctx, spec, pod);
    }
}

int leader_delete_claims(const struct leader_ctx *ctx, const struct rss_spec *spec,
                         const struct rss_plan_delete *d, rss_error_t *err)
{
    for (size_t k = 0; k < d->n_claims; k++) {
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        _cleanup_free_ char *path =
            rss_kube_path("v1", spec->ns, "persistentvolumeclaims", d->claims[k], NULL);
        if (rss_kube_delete(ctx->kube, path, NULL, NULL, err) < 0) {
            if (rss_error_code(*err) != RSS_E_NOT_FOUND)
                return rss_error_wrap(err, "delete claim %s of %s", d->claims[k], d->pod);
            rss_error_release(err);
            continue;
        }
        rss_log_info("%s/%s: deleted claim %s of %s (its node is lost)", spec->ns, spec->name, d->claims[k],
                     d->pod);
    }
    return LEADER_DONE;
}
