/* schema.c -- validation of custom resources against a CRD's openAPIV3Schema, with the apiserver's
 * pruning of unknown fields and its error messages (apiextensions-apiserver, kube-openapi validate). */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kubesim.h"

static void add_cause(cJSON *causes, const char *type, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_cause(cJSON *causes, const char *type, const char *field, const char *fmt, ...)
{
    _cleanup_free_ char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", type);
    cJSON_AddStringToObject(c, "message", msg ? msg : "");
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsNumber(v))
        return v->valuedouble == floor(v->valuedouble) ? "integer" : "number";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "null";
}

static bool type_ok(const char *type, const cJSON *v)
{
    if (!strcmp(type, "object"))
        return cJSON_IsObject(v);
    if (!strcmp(type, "array"))
        return cJSON_IsArray(v);
    if (!strcmp(type, "string"))
        return cJSON_IsString(v);
    if (!strcmp(type, "boolean"))
        return cJSON_IsBool(v);
    if (!strcmp(type, "number"))
        return cJSON_IsNumber(v);
    if (!strcmp(type, "integer"))
        return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    return true;
}

static char *child_path(const char *path, const char *key)
{
    return *path ? rss_xasprintf("%s.%s", path, key) : rss_xstrdup(key);
}

static double num(const cJSON *s, const char *key, bool *present)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
    *present = cJSON_IsNumber(v);
    return *present ? v->valuedouble : 0;
}

static void validate(const cJSON *s, cJSON *v, const char *path, cJSON *causes, cJSON *pruned, bool root)
{
    if (!cJSON_IsObject(s))
        return;
    _cleanup_free_ char *shown = cJSON_PrintUnformatted(v);
    const char *field = *path ? path : "<root>";
    if (cJSON_IsNull(v)) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "nullable")) &&
            !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-preserve-unknown-fields")))
            add_cause(causes, "FieldValueTypeInvalid", field,
                      "Invalid value: \"null\": %s in body must be of type %s: \"null\"", field,
                      ks_json_str(s, "type") ? ks_json_str(s, "type") : "object");
        return;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-int-or-string"))) {
        if (!cJSON_IsString(v) && !(cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble))) {
            add_cause(causes, "FieldValueTypeInvalid", field,
                      "Invalid value: \"%s\": %s in body must be of type integer,string: \"%s\"",
                      type_name(v), field, type_name(v));
            return;
        }
    } else {
        const char *type = ks_json_str(s, "type");
        if (type && !type_ok(type, v)) {
            add_cause(causes, "FieldValueTypeInvalid", field,
                      "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"", type_name(v), field,
                      type, type_name(v));
            return;
        }
    }
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum");
    if (cJSON_IsArray(en)) {
        bool ok = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, en) ok = ok || cJSON_Compare(e, v, true);
        if (!ok) {
            char list[1024] = "";
            size_t used = 0;
            cJSON_ArrayForEach(e, en)
            {
                _cleanup_free_ char *one = cJSON_PrintUnformatted(e);
                used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0, "%s%s",
                                         used ? ", " : "", one);
                if (used >= sizeof(list))
                    break;
            }
            add_cause(causes, "FieldValueNotSupported", field, "Unsupported value: %s: supported values: %s",
                      shown, list);
        }
    }
    bool has;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        double mn = num(s, "minimum", &has);
        bool excl = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum"));
        if (has && (excl ? d <= mn : d < mn))
            add_cause(causes, "FieldValueInvalid", field,
                      "Invalid value: %s: %s in body should be greater than %s%g", shown, field,
                      excl ? "" : "or equal to ", mn);
        double mx = num(s, "maximum", &has);
        excl = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum"));
        if (has && (excl ? d >= mx : d > mx))
            add_cause(causes, "FieldValueInvalid", field,
                      "Invalid value: %s: %s in body should be less than %s%g", shown, field,
                      excl ? "" : "or equal to ", mx);
    }
    if (cJSON_IsString(v)) {
        double len = (double)strlen(v->valuestring);
        double mn = num(s, "minLength", &has);
        if (has && len < mn)
            add_cause(causes, "FieldValueInvalid", field,
                      "Invalid value: %s: %s in body should be at least %g chars long", shown, field, mn);
        double mx = num(s, "maxLength", &has);
        if (has && len > mx)
            add_cause(causes, "FieldValueTooLong", field, "Too long: may not be more than %g bytes", mx);
        const char *pat = ks_json_str(s, "pattern");
        regex_t re;
        if (pat && regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) == 0) {
            if (regexec(&re, v->valuestring, 0, NULL, 0) != 0)
                add_cause(causes, "FieldValueInvalid", field,
                          "Invalid value: %s: %s in body should match '%s'", shown, field, pat);
            regfree(&re);
        }
    }
    if (cJSON_IsArray(v)) {
        double cnt = (double)cJSON_GetArraySize(v);
        double mn = num(s, "minItems", &has);
        if (has && cnt < mn)
            add_cause(causes, "FieldValueInvalid", field,
                      "Invalid value: %g: %s in body should have at least %g items", cnt, field, mn);
        double mx = num(s, "maxItems", &has);
        if (has && cnt > mx)
            add_cause(causes, "FieldValueTooMany", field, "Too many: %g: must have at most %g items", cnt,
                      mx);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        int i = 0;
        cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            _cleanup_free_ char *p = rss_xasprintf("%s[%d]", path, i++);
            validate(items, e, p, causes, pruned, false);
        }
    }
    if (cJSON_IsObject(v)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        const cJSON *addl = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
        bool preserve =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-preserve-unknown-fields")) ||
            cJSON_IsTrue(addl);
        bool embedded =
            root || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-embedded-resource"));
        const cJSON *req;
        cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(s, "required"))
        {
            if (cJSON_IsString(req) && !cJSON_GetObjectItemCaseSensitive(v, req->valuestring)) {
                _cleanup_free_ char *p = child_path(path, req->valuestring);
                add_cause(causes, "FieldValueRequired", p, "Required value");
            }
        }
        cJSON *m = v->child;
        while (m) {
            cJSON *next = m->next;
            _cleanup_free_ char *p = child_path(path, m->string);
            const cJSON *ps =
                cJSON_IsObject(props) ? cJSON_GetObjectItemCaseSensitive(props, m->string) : NULL;
            if (embedded && (!strcmp(m->string, "apiVersion") || !strcmp(m->string, "kind") ||
                             !strcmp(m->string, "metadata"))) {
                /* ObjectMeta is validated by the generic code, never pruned here. */
            } else if (ps) {
                validate(ps, m, p, causes, pruned, false);
            } else if (cJSON_IsObject(addl)) {
                validate(addl, m, p, causes, pruned, false);
            } else if (!preserve) {
                if (pruned)
                    cJSON_AddItemToArray(pruned, cJSON_CreateString(p));
                cJSON_Delete(cJSON_DetachItemViaPointer(v, m));
            }
            m = next;
        }
    }
}

cJSON *ks_schema_validate(const cJSON *schema, cJSON *obj, cJSON *pruned)
{
    cJSON *causes = cJSON_CreateArray();
    validate(schema, obj, "", causes, pruned, true);
    return causes;
}
