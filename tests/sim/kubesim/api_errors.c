/* api_errors.c -- kubesim's errors in the apiserver's Status form, and the small helpers the verbs share. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

const char *api_q(const struct ctx *c, const char *key)
{
    return c->req->query(c->req->query_ctx, key);
}

bool api_qbool(const struct ctx *c, const char *key)
{
    const char *v = api_q(c, key);
    return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

/* ---- errors ---- */

void api_reply_err(struct ks_reply *r, int code, const char *reason, const struct ks_resource *res,
                   const char *name, cJSON *causes, const char *fmt, ...)
{
    _cleanup_free_ char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    cJSON *st = ks_status_new(code, reason, msg);
    if (res && (name || causes)) {
        cJSON *d = cJSON_AddObjectToObject(st, "details");
        if (name)
            cJSON_AddStringToObject(d, "name", name);
        cJSON_AddStringToObject(d, "group", res->group);
        /* details.kind is the resource plural, except for Invalid where it is the Kind */
        cJSON_AddStringToObject(d, "kind", causes ? res->kind : res->plural);
        if (causes)
            cJSON_AddItemToObject(d, "causes", causes);
    } else {
        cJSON_Delete(causes);
    }
    r->content_type = "application/json";
    ks_reply_json(r, code, st);
    rss_log_debug("-> %d %s: %s", code, reason, msg ? msg : "");
}

void api_not_found(struct ks_reply *r, const struct ks_resource *res, const char *name)
{
    char qn[300];
    ks_resource_qualified(res, qn, sizeof(qn));
    api_reply_err(r, 404, "NotFound", res, name, NULL, "%s \"%s\" not found", qn, name);
}

void api_conflict(struct ks_reply *r, const struct ks_resource *res, const char *name, const char *why)
{
    char qn[300];
    ks_resource_qualified(res, qn, sizeof(qn));
    api_reply_err(r, 409, "Conflict", res, name, NULL, "Operation cannot be fulfilled on %s \"%s\": %s", qn,
                  name, why);
}

/* 422 with one cause. */
void api_invalid(struct ks_reply *r, const struct ks_resource *res, const char *name, cJSON *causes)
{
    char text[2048] = "";
    size_t used = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, causes)
    {
        const char *f = ks_json_str(c, "field"), *m = ks_json_str(c, "message");
        int w =
            snprintf(text + used, sizeof(text) - used, "%s%s: %s", used ? ", " : "", f ? f : "", m ? m : "");
        if (w < 0 || (size_t)w >= sizeof(text) - used)
            break;
        used += (size_t)w;
    }
    bool many = cJSON_GetArraySize(causes) > 1;
    if (*res->group)
        api_reply_err(r, 422, "Invalid", res, name, causes, "%s.%s \"%s\" is invalid: %s%s%s", res->kind,
                      res->group, name ? name : "", many ? "[" : "", text, many ? "]" : "");
    else
        api_reply_err(r, 422, "Invalid", res, name, causes, "%s \"%s\" is invalid: %s%s%s", res->kind,
                      name ? name : "", many ? "[" : "", text, many ? "]" : "");
}

cJSON *api_one_cause(const char *type, const char *field, const char *msg)
{
    cJSON *arr = cJSON_CreateArray();
    api_add_cause(arr, type, field, msg);
    return arr;
}

void api_add_cause(cJSON *causes, const char *type, const char *field, const char *msg)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", type);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

/* ---- helpers ---- */

bool api_dns_subdomain(const char *s, bool label)
{
    size_t n = strlen(s);
    if (!n || n > (label ? 63 : MAX_NAME))
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (alnum)
            continue;
        if (ch == '-' && i > 0 && i + 1 < n && s[i - 1] != '.' && s[i + 1] != '.')
            continue;
        if (ch == '.' && !label && i > 0 && i + 1 < n && s[i - 1] != '.' && s[i - 1] != '-')
            continue;
        return false;
    }
    return true;
}

bool api_is(const struct ks_resource *r, const char *group, const char *plural)
{
    return !strcmp(r->group, group) && !strcmp(r->plural, plural);
}

/* The object as the client asked for it: CRs carry the requested version. */
cJSON *api_present(const struct ks_resource *res, const cJSON *obj)
{
    cJSON *o = cJSON_Duplicate(obj, true);
    if (res->flags & KS_CUSTOM) {
        _cleanup_free_ char *av = ks_resource_api_version(res);
        ks_json_set_str(o, "apiVersion", av);
    }
    return o;
}

void api_reply_obj(struct ctx *c, int code, const cJSON *obj)
{
    cJSON *o = api_present(c->res, obj);
    if (c->table) {
        cJSON *t = ks_table(c->res, &o, 1, ks_json_str(o, "metadata.resourceVersion"), true,
                            api_q(c, "includeObject") && !strcmp(api_q(c, "includeObject"), "Object"));
        cJSON_Delete(o);
        c->reply->content_type = ks_table_content_type;
        ks_reply_json(c->reply, code, t);
        return;
    }
    ks_reply_json(c->reply, code, o);
}

const char *api_obj_rv(const cJSON *o)
{
    const char *rv = ks_json_str(o, "metadata.resourceVersion");
    return rv ? rv : "";
}

bool api_has_finalizers(const cJSON *o)
{
    return cJSON_GetArraySize(ks_json_path(o, "metadata.finalizers")) > 0;
}

/* Go's omitempty drops empty maps and lists; apiVersion, kind and metadata print first. */
void api_normalize(cJSON *obj)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *empty_ok[] = {"labels", "annotations", "finalizers", "ownerReferences"};
    for (size_t i = 0; i < sizeof(empty_ok) / sizeof(empty_ok[0]); i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(md, empty_ok[i]);
        if (v && (cJSON_IsNull(v) || ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child)))
            cJSON_DeleteItemFromObjectCaseSensitive(md, empty_ok[i]);
    }
    const char *front[] = {"metadata", "kind", "apiVersion"};
    for (size_t i = 0; i < 3; i++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, front[i]);
        if (!v)
            continue;
        /* cJSON_InsertItemInArray works on objects too; the key name stays in v->string. */
        if (obj->child)
            cJSON_InsertItemInArray(obj, 0, v);
        else
            cJSON_AddItemToObject(obj, front[i], v);
    }
}
