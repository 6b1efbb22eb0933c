/* agent_publish.c -- writes a member's `observed` annotation (the agent is its only writer). */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "agent_internal.h"

int agent_publish(struct rss_agent *a, const char *ns, const char *pod, const struct rss_observed *o,
                  const char *resource_version, char **new_rv, char **new_desired, rss_error_t *err)
{
    _cleanup_free_ char *json = rss_annotation_observed_encode(o);
    _cleanup_free_ char *path = rss_kube_path("v1", ns, "pods", pod, NULL);
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    /* The write-ahead of rule 8 is a CAS on the version `desired` was read from: if the leader changed
     * its mind in between, the hook must not run. */
    if (resource_version)
        cJSON_AddStringToObject(meta, "resourceVersion", resource_version);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), RSS_ANNOTATION_OBSERVED, json);
    _cleanup_json_ cJSON *res = NULL;
    if (rss_kube_merge_patch(a->kube, path, patch, &res, err) < 0)
        return rss_error_wrap(err, "publishing observed on pod %s/%s", ns, pod);
    const cJSON *rmeta = cJSON_GetObjectItemCaseSensitive(res, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(rmeta, "resourceVersion");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rmeta, "annotations"),
                                                      RSS_ANNOTATION_DESIRED);
    if (new_rv)
        *new_rv = cJSON_IsString(rv) ? rss_xstrdup(rv->valuestring) : NULL;
    if (new_desired)
        *new_desired = cJSON_IsString(d) ? rss_xstrdup(d->valuestring) : NULL;
    rss_log_debug("published observed on %s/%s: %s", ns, pod, json);
    return 0;
}
