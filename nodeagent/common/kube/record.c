/* record.c -- naming and reading the per-member record ConfigMaps (rss/record.h). */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "rss/record.h"

char *rss_record_name(const char *ns, const char *pod)
{
    if (!ns || !pod || !*ns || !*pod || strlen(ns) + 1 + strlen(pod) > 253)
        return NULL;
    return rss_xasprintf("%s.%s", ns, pod);
}

char *rss_record_path(const char *rssd_ns, const char *ns, const char *pod)
{
    char *name = rss_record_name(ns, pod);
    if (!name)
        return NULL;
    char *path = rss_kube_path("v1", rssd_ns, "configmaps", name, NULL);
    free(name);
    return path;
}

cJSON *rss_record_new(const char *ns, const char *rss, const char *pod)
{
    char *name = rss_record_name(ns, pod);
    if (!name || !rss) {
        free(name);
        return NULL;
    }
    cJSON *cm = cJSON_CreateObject();
    cJSON_AddStringToObject(cm, "apiVersion", "v1");
    cJSON_AddStringToObject(cm, "kind", "ConfigMap");
    cJSON *md = cJSON_AddObjectToObject(cm, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, RSS_LABEL_RECORD_NS, ns);
    cJSON_AddStringToObject(labels, RSS_LABEL_RECORD_RSS, rss);
    cJSON_AddStringToObject(labels, RSS_LABEL_RECORD_MEMBER, pod);
    cJSON_AddObjectToObject(cm, "data");
    free(name);
    return cm;
}

const char *rss_record_value(const cJSON *cm, const char *key, const char *key_for, const char *pod_uid)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, key));
    const char *f = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, key_for));
    return v && f && pod_uid && !strcmp(f, pod_uid) ? v : NULL;
}

bool rss_record_member(const cJSON *cm, const char **ns, const char **rss, const char **pod)
{
    const cJSON *labels = rss_json_obj(rss_json_obj(cm, "metadata"), "labels");
    /* Label keys contain dots: no dotted-path lookup here. */
    *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, RSS_LABEL_RECORD_NS));
    *rss = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, RSS_LABEL_RECORD_RSS));
    *pod = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, RSS_LABEL_RECORD_MEMBER));
    return *ns && *rss && *pod;
}
