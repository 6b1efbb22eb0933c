/* agent_publish.c -- writes a member's `observed` into its record (the agent is its only writer). */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/record.h"
#include "agent_internal.h"

int agent_publish(struct rss_agent *a, const char *ns, const char *pod, const char *uid, const char *rss,
                  const struct rss_observed *o, const char *resource_version, char **new_rv,
                  char **new_desired, rss_error_t *err)
{
    _cleanup_free_ char *json = rss_recordcodec_observed_encode(o);
    _cleanup_free_ char *path = rss_record_path(a->ns, ns, pod);
    if (!path)
        return rss_error_make(err, RSS_E_INVALID, 0, "pod %s/%s: no record name fits", ns, pod);
    _cleanup_json_ cJSON *body = cJSON_CreateObject();
    /* The write-ahead of rule 8 is a CAS on the record version `desired` was read from: if the leader
     * changed its mind in between, the hook must not run. */
    if (resource_version)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "metadata"), "resourceVersion",
                                resource_version);
    cJSON *data = cJSON_AddObjectToObject(body, "data");
    /* One write carries the report, the incarnation it is about and where it runs: the other agents of the
     * RSS ask this node's agent in the failsafe as soon as they see this record, before the leader's status
     * names the node (agent_spec_nodes). */
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED, json);
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_FOR, uid);
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_NODE, a->node);
    _cleanup_json_ cJSON *res = NULL;
    int r = rss_kube_merge_patch(a->kube, path, body, &res, err);
    if (r < 0 && !resource_version && rss_error_code(*err) == RSS_E_NOT_FOUND) {
        /* No record yet (the leader has decided nothing for this member): the first writer creates it. */
        rss_error_release(err);
        _cleanup_json_ cJSON *cm = rss_record_new(ns, rss, pod);
        cJSON_ReplaceItemInObjectCaseSensitive(cm, "data", cJSON_Duplicate(data, true));
        _cleanup_free_ char *coll = rss_kube_path("v1", a->ns, "configmaps", NULL, NULL);
        r = rss_kube_create(a->kube, coll, cm, &res, err);
        if (r < 0 && rss_error_code(*err) == RSS_E_EXISTS) {
            rss_error_release(err);
            r = rss_kube_merge_patch(a->kube, path, body, &res, err); /* the leader created it meanwhile */
        }
    }
    if (r < 0)
        return rss_error_wrap(err, "publishing observed of pod %s/%s", ns, pod);
    const char *rv = rss_json_str(res, "metadata.resourceVersion");
    const char *d = rss_record_value(res, RSS_RECORD_DESIRED, RSS_RECORD_DESIRED_FOR, uid);
    if (new_rv)
        *new_rv = rv ? rss_xstrdup(rv) : NULL;
    if (new_desired)
        *new_desired = d ? rss_xstrdup(d) : NULL;
    rss_log_debug("published observed of %s/%s: %s", ns, pod, json);
    return 0;
}
