/* leader_records.c -- the member records as the leader reads and collects them: find, hold, drop. */
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "rss/record.h"

const cJSON *leader_record_find(const cJSON *records, const char *pod)
{
    const cJSON *cm;
    cJSON_ArrayForEach(cm, cJSON_GetObjectItemCaseSensitive(records, "items"))
    {
        const char *ns, *rss, *member;
        if (rss_record_member(cm, &ns, &rss, &member) && !strcmp(member, pod))
            return cm;
    }
    return NULL;
}

bool leader_record_holds(const cJSON *cm)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    /* Rule 14's hold and rule 2's recovery pin are about the volume's data, which outlives the pod. */
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, RSS_RECORD_LEFT_OUT)) != NULL ||
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, RSS_RECORD_RECOVERY_PIN)) != NULL;
}

void leader_record_drop(struct rss_kube *kube, const char *ns, const cJSON *cm, const char *why)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(cm, "metadata");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
    if (!name)
        return;
    struct rss_kube_delete_opts o = {
        .uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid")),
        .resource_version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion"))};
    _cleanup_free_ char *path = rss_kube_path("v1", ns, "configmaps", name, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_delete(kube, path, &o, NULL, &err) < 0) {
        if (rss_error_code(err) != RSS_E_NOT_FOUND && rss_error_code(err) != RSS_E_CONFLICT)
            rss_log_error(RSS_LOG_WARN, &err, "deleting %s", why);
        return;
    }
    rss_log_info("deleted %s", why);
}
