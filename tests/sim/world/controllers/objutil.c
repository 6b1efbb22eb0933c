/* objutil.c -- JSON, label-selector, ownership and pod-state helpers shared by the world controllers. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "controllers.h"

const char *ctl_name(const cJSON *obj)
{
    const char *s = rss_json_str(obj, "metadata.name");
    return s ? s : "";
}

const char *ctl_namespace(const cJSON *obj)
{
    const char *s = rss_json_str(obj, "metadata.namespace");
    return s ? s : "";
}

const char *ctl_uid(const cJSON *obj)
{
    const char *s = rss_json_str(obj, "metadata.uid");
    return s ? s : "";
}

bool ctl_is_terminating(const cJSON *obj)
{
    const char *s = rss_json_str(obj, "metadata.deletionTimestamp");
    return s && *s;
}

static bool str_in_array(const cJSON *arr, const char *s)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        if (cJSON_IsString(v) && strcmp(v->valuestring, s) == 0)
            return true;
    }
    return false;
}

static bool expression_matches(const cJSON *expr, const cJSON *labels)
{
    const char *key = rss_json_str(expr, "key");
    const char *op = rss_json_str(expr, "operator");
    if (!key || !op)
        return false;
    const cJSON *v = labels ? cJSON_GetObjectItemCaseSensitive(labels, key) : NULL;
    const char *value = cJSON_IsString(v) ? v->valuestring : NULL;
    const cJSON *values = rss_json_path(expr, "values");
    if (strcmp(op, "In") == 0)
        return value && str_in_array(values, value);
    if (strcmp(op, "NotIn") == 0)
        return !value || !str_in_array(values, value);
    if (strcmp(op, "Exists") == 0)
        return value != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return value == NULL;
    return false;
}

bool ctl_selector_matches(const cJSON *selector, const cJSON *labels)
{
    if (!cJSON_IsObject(selector))
        return false;
    const cJSON *ml = rss_json_path(selector, "matchLabels");
    const cJSON *kv;
    cJSON_ArrayForEach(kv, ml)
    {
        const cJSON *have = labels ? cJSON_GetObjectItemCaseSensitive(labels, kv->string) : NULL;
        if (!cJSON_IsString(kv) || !cJSON_IsString(have) || strcmp(have->valuestring, kv->valuestring) != 0)
            return false;
    }
    const cJSON *expr;
    cJSON_ArrayForEach(expr, rss_json_path(selector, "matchExpressions"))
    {
        if (!expression_matches(expr, labels))
            return false;
    }
    return true;
}

bool ctl_node_selector_matches(const cJSON *node_selector, const cJSON *labels)
{
    const cJSON *kv;
    cJSON_ArrayForEach(kv, node_selector)
    {
        const cJSON *have = labels ? cJSON_GetObjectItemCaseSensitive(labels, kv->string) : NULL;
        if (!cJSON_IsString(kv) || !cJSON_IsString(have) || strcmp(have->valuestring, kv->valuestring) != 0)
            return false;
    }
    return true;
}

const char *ctl_controller_uid(const cJSON *obj, const char *kind)
{
    const cJSON *ref;
    cJSON_ArrayForEach(ref, rss_json_path(obj, "metadata.ownerReferences"))
    {
        const char *k = rss_json_str(ref, "kind");
        if (cJSON_IsTrue(rss_json_path(ref, "controller")) && k && strcmp(k, kind) == 0)
            return rss_json_str(ref, "uid");
    }
    return NULL;
}

cJSON *ctl_owner_refs(const cJSON *owner, const char *api_version, const char *kind)
{
    cJSON *refs = cJSON_CreateArray();
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", api_version);
    cJSON_AddStringToObject(ref, "kind", kind);
    cJSON_AddStringToObject(ref, "name", ctl_name(owner));
    cJSON_AddStringToObject(ref, "uid", ctl_uid(owner));
    cJSON_AddTrueToObject(ref, "controller");
    cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
    cJSON_AddItemToArray(refs, ref);
    return refs;
}

const cJSON *ctl_condition(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, rss_json_path(obj, "status.conditions"))
    {
        const char *t = rss_json_str(c, "type");
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

const char *ctl_condition_status(const cJSON *obj, const char *type)
{
    return rss_json_str(ctl_condition(obj, type), "status");
}

bool ctl_pod_running_ready(const cJSON *pod)
{
    const char *phase = rss_json_str(pod, "status.phase");
    const char *ready = ctl_condition_status(pod, "Ready");
    return !ctl_is_terminating(pod) && phase && strcmp(phase, "Running") == 0 && ready &&
           strcmp(ready, "True") == 0;
}

bool ctl_pod_terminated(const cJSON *pod)
{
    const char *phase = rss_json_str(pod, "status.phase");
    return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

long ctl_parse_ordinal(const char *parent, const char *pod_name)
{
    size_t plen = strlen(parent);
    if (strncmp(pod_name, parent, plen) != 0 || pod_name[plen] != '-')
        return -1;
    const char *d = pod_name + plen + 1;
    if (*d == '\0' || (*d == '0' && d[1] != '\0'))
        return -1;
    long v = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        v = v * 10 + (*d - '0');
        if (v > INT32_MAX)
            return -1;
    }
    return v;
}

static bool parse_u64(const char *s, unsigned long long *v)
{
    if (!s || !*s)
        return false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
    }
    errno = 0;
    *v = strtoull(s, NULL, 10);
    return errno == 0;
}

int ctl_rv_compare(const char *a, const char *b)
{
    unsigned long long x, y;
    if (!parse_u64(a, &x) || !parse_u64(b, &y))
        return -1;
    return x < y ? -1 : x > y ? 1 : 0;
}

void ctl_json_hash(const cJSON *obj, char out[9])
{
    _cleanup_free_ char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;
    uint32_t h = 2166136261u;
    for (const char *p = text ? text : ""; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 16777619u;
    }
    snprintf(out, 9, "%08x", (unsigned)h);
}

static int age_cmp(const void *pa, const void *pb)
{
    const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
    const char *ta = rss_json_str(a, "metadata.creationTimestamp");
    const char *tb = rss_json_str(b, "metadata.creationTimestamp");
    /* RFC 3339 in UTC with a fixed layout sorts as text. */
    int c = strcmp(ta ? ta : "", tb ? tb : "");
    if (c == 0)
        c = strcmp(ctl_namespace(a), ctl_namespace(b));
    if (c == 0)
        c = strcmp(ctl_name(a), ctl_name(b));
    return c;
}

void ctl_sort_by_age(const cJSON **objs, size_t n)
{
    if (n > 1)
        qsort(objs, n, sizeof(*objs), age_cmp);
}

const cJSON **ctl_items(const cJSON *arr, size_t *n)
{
    size_t count = (size_t)cJSON_GetArraySize(arr);
    const cJSON **items = rss_xcalloc(count + 1, sizeof(*items));
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (i < count)
            items[i++] = it;
    }
    *n = i;
    return items;
}

const cJSON *ctl_find(const cJSON *arr, const char *ns, const char *name)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        if (strcmp(ctl_namespace(o), ns) == 0 && strcmp(ctl_name(o), name) == 0)
            return o;
    }
    return NULL;
}
