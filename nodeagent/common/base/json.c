/* json.c -- dotted-path lookups in cJSON trees (see rss/json.h). */
#include <string.h>

#include "rss/json.h"

const cJSON *rss_json_path(const cJSON *obj, const char *dotted)
{
    char key[256];
    const char *p = dotted;
    while (obj && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= sizeof(key) || !cJSON_IsObject(obj))
            return NULL;
        memcpy(key, p, len);
        key[len] = '\0';
        obj = cJSON_GetObjectItemCaseSensitive(obj, key);
        p += len + (dot ? 1 : 0);
    }
    return obj;
}

const char *rss_json_str(const cJSON *obj, const char *dotted)
{
    const cJSON *v = rss_json_path(obj, dotted);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *rss_json_obj(const cJSON *obj, const char *dotted)
{
    const cJSON *v = rss_json_path(obj, dotted);
    return cJSON_IsObject(v) ? v : NULL;
}

long rss_json_long(const cJSON *obj, const char *dotted, long def)
{
    const cJSON *v = rss_json_path(obj, dotted);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : def;
}

bool rss_json_uint53(const cJSON *v, uint64_t *out)
{
    /* Written so that NaN fails every comparison and is refused. */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= RSS_JSON_INT_MAX))
        return false;
    uint64_t u = (uint64_t)v->valuedouble;
    if ((double)u != v->valuedouble)
        return false;
    *out = u;
    return true;
}
