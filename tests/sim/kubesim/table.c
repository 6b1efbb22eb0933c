/* table.c -- meta.k8s.io/v1 Table responses for `kubectl get`: CRD additionalPrinterColumns and a
 * few sensible columns for the built-in kinds, plus the small JSONPath subset the columns use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "kubesim.h"

const char ks_table_content_type[] = "application/json;as=Table;v=v1;g=meta.k8s.io";

bool ks_wants_table(const char *accept)
{
    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

/* One step of a path: .name, [N], [*] (first element), [?(@.k=="v")]. */
const cJSON *ks_jsonpath(const cJSON *obj, const char *path)
{
    const cJSON *cur = obj;
    const char *p = path;
    if (*p == '{') /* {.spec.x} as written in some columns */
        p++;
    while (cur && *p && *p != '}') {
        if (*p == '.') {
            p++;
            const char *e = p;
            while (*e && *e != '.' && *e != '[' && *e != '}')
                e++;
            if (e == p)
                continue;
            char key[256];
            size_t len = (size_t)(e - p) < sizeof(key) - 1 ? (size_t)(e - p) : sizeof(key) - 1;
            memcpy(key, p, len);
            key[len] = '\0';
            cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, key) : NULL;
            p = e;
        } else if (*p == '[') {
            const char *close = strchr(p, ']');
            if (!close || !cJSON_IsArray(cur))
                return NULL;
            if (p[1] == '?') {
                /* [?(@.key=="value")] or with single quotes */
                char key[128], val[256];
                const char *k = strstr(p, "@.");
                const char *eq = k ? strstr(k, "==") : NULL;
                if (!k || !eq)
                    return NULL;
                size_t kl = (size_t)(eq - (k + 2));
                if (kl >= sizeof(key))
                    return NULL;
                memcpy(key, k + 2, kl);
                key[kl] = '\0';
                const char *v = eq + 2;
                char quote = (*v == '"' || *v == '\'') ? *v++ : 0;
                const char *ve = quote ? strchr(v, quote) : strchr(v, ')');
                if (!ve || (size_t)(ve - v) >= sizeof(val))
                    return NULL;
                memcpy(val, v, (size_t)(ve - v));
                val[ve - v] = '\0';
                const cJSON *found = NULL, *e;
                cJSON_ArrayForEach(e, cur)
                {
                    const char *s = ks_json_str(e, key);
                    if (s && !strcmp(s, val)) {
                        found = e;
                        break;
                    }
                }
                cur = found;
                close = strstr(ve, ")]") ? strstr(ve, ")]") + 1 : close;
            } else if (p[1] == '*') {
                cur = cJSON_GetArrayItem(cur, 0);
            } else {
                cur = cJSON_GetArrayItem(cur, atoi(p + 1));
            }
            p = close + 1;
        } else {
            return NULL;
        }
    }
    return cur;
}

static cJSON *age_cell(const cJSON *obj, const char *field)
{
    long t = ks_time_parse(ks_json_str(obj, field));
    char buf[32];
    if (t < 0)
        return cJSON_CreateString("<unknown>");
    ks_human_duration((long)time(NULL) - t, buf, sizeof(buf));
    return cJSON_CreateString(buf);
}

static cJSON *builtin_cell(const cJSON *obj, const char *name)
{
    char buf[256];
    if (!strcmp(name, "age"))
        return age_cell(obj, "metadata.creationTimestamp");
    if (!strcmp(name, "lastseen")) {
        if (ks_json_str(obj, "lastTimestamp"))
            return age_cell(obj, "lastTimestamp");
        if (ks_json_str(obj, "eventTime"))
            return age_cell(obj, "eventTime");
        return age_cell(obj, "metadata.creationTimestamp");
    }
    if (!strcmp(name, "podready")) {
        int total = cJSON_GetArraySize(ks_json_path(obj, "spec.containers")), ready = 0;
        const cJSON *cs;
        cJSON_ArrayForEach(cs, ks_json_path(obj, "status.containerStatuses")) ready +=
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "ready"));
        snprintf(buf, sizeof(buf), "%d/%d", ready, total);
        return cJSON_CreateString(buf);
    }
    if (!strcmp(name, "podstatus")) {
        if (ks_json_path(obj, "metadata.deletionTimestamp"))
            return cJSON_CreateString("Terminating");
        const char *reason = ks_json_str(obj, "status.reason");
        const char *phase = ks_json_str(obj, "status.phase");
        return cJSON_CreateString(reason ? reason : phase ? phase : "Unknown");
    }
    if (!strcmp(name, "restarts")) {
        double n = 0;
        const cJSON *cs;
        cJSON_ArrayForEach(cs, ks_json_path(obj, "status.containerStatuses"))
        {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(cs, "restartCount");
            n += cJSON_IsNumber(r) ? r->valuedouble : 0;
        }
        snprintf(buf, sizeof(buf), "%.0f", n);
        return cJSON_CreateString(buf);
    }
    if (!strcmp(name, "stsready")) {
        const cJSON *r = ks_json_path(obj, "status.readyReplicas");
        const cJSON *s = ks_json_path(obj, "spec.replicas");
        snprintf(buf, sizeof(buf), "%.0f/%.0f", cJSON_IsNumber(r) ? r->valuedouble : 0,
                 cJSON_IsNumber(s) ? s->valuedouble : 0);
        return cJSON_CreateString(buf);
    }
    if (!strcmp(name, "nodestatus")) {
        const cJSON *st = ks_jsonpath(obj, ".status.conditions[?(@.type==\"Ready\")].status");
        const char *s = cJSON_IsString(st) ? st->valuestring : "Unknown";
        return cJSON_CreateString(!strcmp(s, "True") ? "Ready" : "NotReady");
    }
    if (!strcmp(name, "involved")) {
        const char *kind = ks_json_str(obj, "involvedObject.kind");
        const char *n = ks_json_str(obj, "involvedObject.name");
        snprintf(buf, sizeof(buf), "%s/%s", kind ? kind : "", n ? n : "");
        for (char *p = buf; *p && *p != '/'; p++)
            *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
        return cJSON_CreateString(buf);
    }
    if (!strcmp(name, "pdbmin") || !strcmp(name, "pdbmax")) {
        const cJSON *v =
            ks_json_path(obj, !strcmp(name, "pdbmin") ? "spec.minAvailable" : "spec.maxUnavailable");
        if (cJSON_IsNumber(v))
            snprintf(buf, sizeof(buf), "%.0f", v->valuedouble);
        else
            snprintf(buf, sizeof(buf), "%s", cJSON_IsString(v) ? v->valuestring : "N/A");
        return cJSON_CreateString(buf);
    }
    if (!strcmp(name, "pdballowed"))
        return cJSON_CreateNumber(cJSON_IsNumber(ks_json_path(obj, "status.disruptionsAllowed"))
                                      ? ks_json_path(obj, "status.disruptionsAllowed")->valuedouble
                                      : 0);
    if (!strcmp(name, "datacount")) {
        int n = cJSON_GetArraySize(ks_json_path(obj, "data")) +
                cJSON_GetArraySize(ks_json_path(obj, "binaryData"));
        return cJSON_CreateNumber(n);
    }
    return cJSON_CreateString("");
}

static cJSON *path_cell(const cJSON *obj, const char *path, const char *type)
{
    const cJSON *v = ks_jsonpath(obj, path);
    if (!v || cJSON_IsNull(v))
        return cJSON_CreateNull();
    if (!strcmp(type, "date") && cJSON_IsString(v)) {
        /* The CR table converter humanises date cells (tableconvertor.go). */
        long t = ks_time_parse(v->valuestring);
        char buf[32];
        if (t < 0)
            return cJSON_CreateString(v->valuestring);
        ks_human_duration((long)time(NULL) - t, buf, sizeof(buf));
        return cJSON_CreateString(buf);
    }
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        char *s = cJSON_PrintUnformatted(v);
        cJSON *c = cJSON_CreateString(s);
        free(s);
        return c;
    }
    return cJSON_Duplicate(v, true);
}

static void add_coldef(cJSON *defs, const char *name, const char *type, const char *format, int priority,
                       const char *desc)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "name", name);
    cJSON_AddStringToObject(d, "type", type);
    cJSON_AddStringToObject(d, "format", format);
    cJSON_AddStringToObject(d, "description", desc ? desc : "");
    cJSON_AddNumberToObject(d, "priority", priority);
    cJSON_AddItemToArray(defs, d);
}

cJSON *ks_table(const struct ks_resource *res, cJSON *const *objs, size_t n, const char *rv, bool header,
                bool include_object)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
    cJSON *md = cJSON_AddObjectToObject(t, "metadata");
    if (rv)
        cJSON_AddStringToObject(md, "resourceVersion", rv);
    cJSON *defs = cJSON_CreateArray();
    /* Events print Name only with -o wide, like the apiserver's event printer. */
    bool event = !strcmp(res->plural, "events") && !*res->group;
    add_coldef(defs, "Name", "string", "name", event ? 1 : 0, "Name must be unique within a namespace.");
    bool custom_cols = (res->flags & KS_CUSTOM) && cJSON_GetArraySize(res->printer_cols) > 0;
    if (custom_cols) {
        const cJSON *c;
        cJSON_ArrayForEach(c, res->printer_cols)
        {
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(c, "priority");
            const char *fmt = ks_json_str(c, "format");
            add_coldef(defs, ks_json_str(c, "name") ? ks_json_str(c, "name") : "",
                       ks_json_str(c, "type") ? ks_json_str(c, "type") : "string", fmt ? fmt : "",
                       cJSON_IsNumber(pr) ? pr->valueint : 0, ks_json_str(c, "description"));
        }
    } else if (res->cols && !(res->flags & KS_CUSTOM)) {
        for (const struct ks_column *c = res->cols; c->name; c++)
            add_coldef(defs, c->name, c->type, "", c->priority, NULL);
    } else {
        add_coldef(
            defs, "Age", "date", "", 0,
            "CreationTimestamp is a timestamp representing the server time when this object was created.");
    }
    if (header)
        cJSON_AddItemToObject(t, "columnDefinitions", defs);
    else {
        cJSON_Delete(defs);
        cJSON_AddItemToObject(t, "columnDefinitions", cJSON_CreateArray());
    }
    cJSON *rows = cJSON_AddArrayToObject(t, "rows");
    for (size_t i = 0; i < n; i++) {
        const cJSON *o = objs[i];
        cJSON *row = cJSON_CreateObject();
        cJSON *cells = cJSON_AddArrayToObject(row, "cells");
        const char *name = ks_json_str(o, "metadata.name");
        cJSON_AddItemToArray(cells, cJSON_CreateString(name ? name : ""));
        if (custom_cols) {
            const cJSON *c;
            cJSON_ArrayForEach(c, res->printer_cols)
            {
                const char *jp = ks_json_str(c, "jsonPath");
                const char *type = ks_json_str(c, "type");
                cJSON_AddItemToArray(cells,
                                     jp ? path_cell(o, jp, type ? type : "string") : cJSON_CreateNull());
            }
        } else if (res->cols && !(res->flags & KS_CUSTOM)) {
            for (const struct ks_column *c = res->cols; c->name; c++) {
                if (c->jsonpath[0] == '!')
                    cJSON_AddItemToArray(cells, builtin_cell(o, c->jsonpath + 1));
                else
                    cJSON_AddItemToArray(cells, path_cell(o, c->jsonpath, c->type));
            }
        } else {
            cJSON_AddItemToArray(cells, age_cell(o, "metadata.creationTimestamp"));
        }
        cJSON *ro;
        if (include_object) {
            ro = cJSON_Duplicate(o, true);
        } else {
            ro = cJSON_CreateObject();
            cJSON_AddStringToObject(ro, "kind", "PartialObjectMetadata");
            cJSON_AddStringToObject(ro, "apiVersion", "meta.k8s.io/v1");
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
            cJSON_AddItemToObject(ro, "metadata", m ? cJSON_Duplicate(m, true) : cJSON_CreateObject());
        }
        cJSON_AddItemToObject(row, "object", ro);
        cJSON_AddItemToArray(rows, row);
    }
    return t;
}
