/* api_verbs.c -- kubesim's REST verbs: get, list, watch, create, update, patch, delete, deletecollection. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

/* ---- verbs ---- */

static cJSON *parse_body(struct ctx *c)
{
    const char *ct = c->req->content_type;
    if (ct && strstr(ct, "protobuf")) {
        /* Helm stores its releases as Secrets through a typed client, in protobuf: those decode. */
        cJSON *o = c->req->body ? ks_proto_decode(c->req->body, c->req->body_len) : NULL;
        if (o && api_is(c->res, "", "secrets") && !c->sub) {
            const char *kind = ks_json_str(o, "kind");
            if (kind && !strcmp(kind, "Secret"))
                return o;
        }
        cJSON_Delete(o);
        /* kubectl's imperative generators (`create configmap`, ...) send protobuf; kubesim
         * only speaks JSON, so say so plainly (docs/kubesim.md). */
        api_reply_err(c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
                      "kubesim does not decode protobuf request bodies (%s); send application/json", ct);
        return NULL;
    }
    if (!c->req->body || !c->req->body_len) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "the request body is empty");
        return NULL;
    }
    cJSON *o = cJSON_ParseWithLength(c->req->body, c->req->body_len);
    if (!o) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "the body of the request was in an unknown format - accepted media types include: "
                      "application/json, application/yaml, application/vnd.kubernetes.protobuf");
    }
    return o;
}

void api_do_get(struct ctx *c)
{
    ks_lock();
    struct ks_snap *s = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!s)
        api_not_found(c->reply, c->res, c->name);
    else if (c->sub && !strcmp(c->sub, "scale"))
        ks_reply_json(c->reply, 200, api_scale_of(c->res, s->obj));
    else
        api_reply_obj(c, 200, s->obj);
    ks_unlock();
}

static bool parse_rv(struct ctx *c, const char *s, uint64_t *rv)
{
    char *end;
    if (!s || !*s) {
        *rv = 0;
        return true;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "invalid resource version: %s", s);
        return false;
    }
    *rv = v;
    return true;
}

static char *hex_encode(const char *s)
{
    size_t n = strlen(s);
    char *o = rss_xmalloc(2 * n + 1);
    for (size_t i = 0; i < n; i++)
        snprintf(o + 2 * i, 3, "%02x", (unsigned char)s[i]);
    o[2 * n] = '\0';
    return o;
}

static char *hex_decode(const char *s)
{
    size_t n = strlen(s);
    if (n % 2)
        return NULL;
    char *o = rss_xmalloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) {
            free(o);
            return NULL;
        }
        o[i] = (char)v;
    }
    o[n / 2] = '\0';
    return o;
}

static bool parse_selectors(struct ctx *c, struct ks_selector **labels, struct ks_selector **fields)
{
    char err[256];
    *labels = ks_label_selector_parse(api_q(c, "labelSelector"), err, sizeof(err));
    if (!*labels) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "unable to parse requirement: %s", err);
        return false;
    }
    *fields = ks_field_selector_parse(api_q(c, "fieldSelector"), c->res, err, sizeof(err));
    if (!*fields) {
        ks_selector_free(*labels);
        *labels = NULL;
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "%s", err);
        return false;
    }
    return true;
}

void api_do_watch(struct ctx *c)
{
    struct ks_watch_opts o = {0};
    if (!parse_selectors(c, &o.labels, &o.fields))
        return;
    uint64_t rv;
    if (!parse_rv(c, api_q(c, "resourceVersion"), &rv)) {
        ks_selector_free(o.labels);
        ks_selector_free(o.fields);
        return;
    }
    o.res = c->res;
    o.ns = c->ns ? rss_xstrdup(c->ns) : NULL;
    o.bookmarks = api_qbool(c, "allowWatchBookmarks");
    o.table = c->table;
    o.client = c->req->client ? rss_xstrdup(c->req->client) : NULL;
    const char *ts = api_q(c, "timeoutSeconds");
    o.timeout_s = ts ? atol(ts) : 0;
    if (o.timeout_s <= 0)
        o.timeout_s = 1800 + rand() % 1800; /* --min-request-timeout: [1800, 3600) */
    ks_lock();
    uint64_t cur = ks_store_rv();
    if (api_qbool(c, "sendInitialEvents")) {
        o.send_initial = true;
        o.initial_bookmark = true;
        o.from_rv = cur;
    } else if (rv == 0) {
        o.send_initial = true;
        o.from_rv = cur;
    } else {
        o.from_rv = rv;
        if (rv < ks_store_compacted() || rv + 1 < ks_history_oldest()) {
            o.expired = true;
            o.expired_rv = rv;
        }
    }
    c->reply->watch = ks_watch_new(&o);
    ks_unlock();
    c->reply->code = 200;
    c->reply->content_type = c->table ? ks_table_content_type : "application/json";
}

void api_do_list(struct ctx *c)
{
    struct ks_selector *labels, *fields;
    if (!parse_selectors(c, &labels, &fields))
        return;
    const char *lim = api_q(c, "limit");
    long limit = lim ? atol(lim) : 0;
    const char *cont = api_q(c, "continue");
    _cleanup_free_ char *after = NULL;
    _cleanup_free_ char *next = NULL;
    uint64_t list_rv = 0;
    if (cont && *cont) {
        _cleanup_free_ char *tok = hex_decode(cont);
        char *sep = tok ? strchr(tok, '\x1f') : NULL;
        if (!sep) {
            api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "continue key is not valid: %s",
                          cont);
            goto out;
        }
        *sep = '\0';
        list_rv = strtoull(tok, NULL, 10);
        after = rss_xstrdup(sep + 1);
    }
    ks_lock();
    if (after && list_rv < ks_store_compacted()) {
        ks_unlock();
        api_reply_err(
            c->reply, 410, "Expired", NULL, NULL, NULL,
            "The provided continue parameter is too old to display a consistent list result. You can start a "
            "new list without the continue parameter, or use the continue token in this response to "
            "retrieve the remainder of the results. Continuing with the provided token results in an "
            "inconsistent list - objects that were created, modified, or deleted between the time the first "
            "chunk was returned and now may show up in the list.");
        goto out;
    }
    uint64_t rvq;
    const char *rvs = api_q(c, "resourceVersion");
    if (!after && rvs && *rvs && parse_rv(c, rvs, &rvq) && rvq && rvq < ks_store_compacted() && limit > 0) {
        ks_unlock();
        api_reply_err(c->reply, 410, "Expired", NULL, NULL, NULL, "too old resource version: %s (%llu)", rvs,
                      (unsigned long long)ks_store_rv());
        goto out;
    }
    if (!list_rv)
        list_rv = ks_store_rv();
    size_t n;
    struct ks_snap **v = ks_store_list(c->res->group, c->res->plural, c->ns, &n);
    ks_unlock();
    cJSON **items = rss_xcalloc(n ? n : 1, sizeof(*items));
    size_t cnt = 0, remaining = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *o = v[i]->obj;
        if (!ks_selector_match(labels, o) || !ks_selector_match(fields, o))
            continue;
        const char *ons = ks_json_str(o, "metadata.namespace");
        _cleanup_free_ char *key = rss_xasprintf("%s/%s", ons ? ons : "", ks_json_str(o, "metadata.name"));
        if (after && strcmp(key, after) <= 0)
            continue;
        if (limit > 0 && cnt == (size_t)limit) {
            remaining++;
            continue;
        }
        if (limit > 0 && cnt + 1 == (size_t)limit) {
            free(next);
            next = rss_xstrdup(key);
        }
        items[cnt++] = api_present(c->res, o);
    }
    ks_snaps_free(v, n);
    char rvbuf[32];
    snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)list_rv);
    cJSON *out;
    if (c->table) {
        out = ks_table(c->res, items, cnt, rvbuf, true,
                       api_q(c, "includeObject") && !strcmp(api_q(c, "includeObject"), "Object"));
        c->reply->content_type = ks_table_content_type;
    } else {
        out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "kind", c->res->list_kind);
        _cleanup_free_ char *av = ks_resource_api_version(c->res);
        cJSON_AddStringToObject(out, "apiVersion", av);
    }
    cJSON *md = cJSON_GetObjectItemCaseSensitive(out, "metadata");
    if (!md)
        md = cJSON_AddObjectToObject(out, "metadata");
    ks_json_set_str(md, "resourceVersion", rvbuf);
    if (remaining && next) {
        _cleanup_free_ char *raw = rss_xasprintf("%s\x1f%s", rvbuf, next);
        _cleanup_free_ char *tok = hex_encode(raw);
        cJSON_AddStringToObject(md, "continue", tok);
        cJSON_AddNumberToObject(md, "remainingItemCount", (double)remaining);
    }
    if (!c->table) {
        cJSON *arr = cJSON_AddArrayToObject(out, "items");
        for (size_t i = 0; i < cnt; i++)
            cJSON_AddItemToArray(arr, items[i]);
    } else {
        for (size_t i = 0; i < cnt; i++)
            cJSON_Delete(items[i]);
    }
    free(items);
    ks_reply_json(c->reply, 200, out);
out:
    ks_selector_free(labels);
    ks_selector_free(fields);
}

void api_do_post(struct ctx *c)
{
    cJSON *obj = parse_body(c);
    if (!obj)
        return;
    ks_lock();
    api_do_create(c, obj, "POST");
    ks_unlock();
}

void api_do_put(struct ctx *c)
{
    cJSON *obj = parse_body(c);
    if (!obj)
        return;
    ks_lock();
    struct ks_snap *old = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!old) {
        if ((c->res->flags & KS_CREATE_ON_UPDATE) && !c->sub)
            api_do_create(c, obj, "PUT");
        else {
            api_not_found(c->reply, c->res, c->name);
            cJSON_Delete(obj);
        }
    } else if (c->sub && !strcmp(c->sub, "scale")) {
        const cJSON *r = ks_json_path(obj, "spec.replicas");
        const char *rv = ks_json_str(obj, "metadata.resourceVersion");
        cJSON *o = cJSON_Duplicate(old->obj, true);
        api_set_path_num(o, api_scale_spec_path(c->res), cJSON_IsNumber(r) ? r->valuedouble : 0);
        if (rv)
            ks_json_set_str(ks_json_obj(o, "metadata"), "resourceVersion", rv);
        cJSON_Delete(obj);
        c->sub = NULL;
        api_do_update(c, old, o, "PUT");
        if (c->reply->code == 200) {
            cJSON *full = cJSON_Parse(c->reply->body);
            ks_reply_json(c->reply, 200, api_scale_of(c->res, full));
            cJSON_Delete(full);
        }
    } else {
        api_do_update(c, old, obj, "PUT");
    }
    ks_unlock();
}

void api_do_patch(struct ctx *c)
{
    const char *ct = c->req->content_type ? c->req->content_type : "";
    enum { MERGE, JSONP, SMP, APPLY } type;
    if (!strncmp(ct, "application/merge-patch+json", 28))
        type = MERGE;
    else if (!strncmp(ct, "application/json-patch+json", 27))
        type = JSONP;
    else if (!strncmp(ct, "application/strategic-merge-patch+json", 38))
        type = SMP;
    else if (!strncmp(ct, "application/apply-patch+yaml", 28) ||
             !strncmp(ct, "application/apply-patch+json", 28))
        type = APPLY;
    else {
        api_reply_err(
            c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml%s",
            (c->res->flags & KS_CUSTOM) ? "" : ", application/strategic-merge-patch+json");
        return;
    }
    if (type == SMP && (c->res->flags & KS_CUSTOM)) {
        api_reply_err(
            c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
        return;
    }
    cJSON *patch = c->req->body ? cJSON_ParseWithLength(c->req->body, c->req->body_len) : NULL;
    if (!patch) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      type == APPLY ? "kubesim accepts only JSON bodies for server-side apply"
                                    : "error decoding patch: invalid JSON");
        return;
    }
    if (type != JSONP && !cJSON_IsObject(patch)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "error decoding patch: not a JSON object");
        cJSON_Delete(patch);
        return;
    }
    ks_lock();
    struct ks_snap *old = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!old) {
        if (type == APPLY && !c->sub) {
            api_do_create(c, patch, "PATCH");
            ks_unlock();
            return;
        }
        api_not_found(c->reply, c->res, c->name);
        goto out;
    }
    bool scale = c->sub && !strcmp(c->sub, "scale");
    cJSON *base = scale ? api_scale_of(c->res, old->obj) : cJSON_Duplicate(old->obj, true);
    cJSON *patched = NULL;
    if (type == JSONP) {
        char err[512];
        int code = 422;
        patched = ks_json_patch(base, patch, c->req->body, c->req->body_len, &code, err, sizeof(err));
        cJSON_Delete(base);
        if (!patched && code == 400) {
            api_reply_err(c->reply, code, "BadRequest", NULL, NULL, NULL, "%s", err);
            goto out;
        }
        if (!patched) {
            /* The real server's answer names neither the operation nor why (v1.34: a generic 422 with
             * empty details); the log does. */
            rss_log_debug("json patch of %s/%s: %s", c->ns ? c->ns : "", c->name, err);
            cJSON *st = ks_status_new(422, "Invalid",
                                      "the server rejected our request due to an error in our request");
            cJSON_AddObjectToObject(st, "details");
            c->reply->content_type = "application/json";
            ks_reply_json(c->reply, 422, st);
            goto out;
        }
    } else if (type == SMP) {
        ks_strategic_patch(base, patch);
        patched = base;
    } else {
        ks_merge_patch(base, patch);
        patched = base;
    }
    if (scale) {
        const cJSON *r = ks_json_path(patched, "spec.replicas");
        cJSON *o = cJSON_Duplicate(old->obj, true);
        api_set_path_num(o, api_scale_spec_path(c->res), cJSON_IsNumber(r) ? r->valuedouble : 0);
        cJSON_Delete(patched);
        c->sub = NULL;
        api_do_update(c, old, o, "PATCH");
        if (c->reply->code == 200) {
            cJSON *full = cJSON_Parse(c->reply->body);
            ks_reply_json(c->reply, 200, api_scale_of(c->res, full));
            cJSON_Delete(full);
        }
    } else {
        api_do_update(c, old, patched, "PATCH");
    }
out:
    ks_unlock();
    cJSON_Delete(patch);
}

void api_do_delete(struct ctx *c)
{
    _cleanup_json_ cJSON *opts = NULL;
    if (c->req->body && c->req->body_len) {
        opts = ks_body_json(c->req); /* JSON, or protobuf from typed clients (Helm's release storage) */
        if (!opts) {
            api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "invalid DeleteOptions body");
            return;
        }
    }
    long grace = -1;
    const cJSON *g = ks_json_path(opts, "gracePeriodSeconds");
    if (cJSON_IsNumber(g))
        grace = (long)g->valuedouble;
    if (api_q(c, "gracePeriodSeconds"))
        grace = atol(api_q(c, "gracePeriodSeconds"));
    const char *policy = ks_json_str(opts, "propagationPolicy");
    if (api_q(c, "propagationPolicy"))
        policy = api_q(c, "propagationPolicy");
    const char *puid = ks_json_str(opts, "preconditions.uid");
    const char *prv = ks_json_str(opts, "preconditions.resourceVersion");
    ks_lock();
    struct ks_snap *s = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!s) {
        api_not_found(c->reply, c->res, c->name);
        goto out;
    }
    const char *uid = ks_json_str(s->obj, "metadata.uid");
    if (puid && strcmp(puid, uid ? uid : "")) {
        char why[512];
        snprintf(why, sizeof(why),
                 "StorageError: invalid object, Code: 4, Key: %s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                 c->res->plural, c->name, puid, uid ? uid : "");
        api_conflict(c->reply, c->res, c->name, why);
        goto out;
    }
    if (prv && strcmp(prv, api_obj_rv(s->obj))) {
        char why[512];
        snprintf(
            why, sizeof(why),
            "StorageError: invalid object, Code: 4, Key: %s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
            "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
            c->res->plural, c->name, prv, api_obj_rv(s->obj));
        api_conflict(c->reply, c->res, c->name, why);
        goto out;
    }
    struct ks_snap *gone = NULL;
    cJSON *upd = NULL;
    if (api_q(c, "dryRun") || cJSON_GetArraySize(ks_json_path(opts, "dryRun")) > 0) {
        api_reply_obj(c, 200, s->obj);
        goto out;
    }
    api_delete_object(c->res, s, grace, policy, &gone, &upd);
    if (upd) {
        api_reply_obj(c, 200, upd);
        cJSON_Delete(upd);
    } else if (c->res->flags & KS_RETURN_DELETED) {
        api_reply_obj(c, 200, gone->obj);
    } else {
        cJSON *st = ks_status_new(200, NULL, NULL);
        cJSON *d = cJSON_AddObjectToObject(st, "details");
        cJSON_AddStringToObject(d, "name", c->name);
        cJSON_AddStringToObject(d, "group", c->res->group);
        cJSON_AddStringToObject(d, "kind", c->res->plural);
        cJSON_AddStringToObject(d, "uid", uid ? uid : "");
        ks_reply_json(c->reply, 200, st);
    }
    ks_snap_unref(gone);
out:
    ks_unlock();
}

void api_do_delete_collection(struct ctx *c)
{
    struct ks_selector *labels, *fields;
    if (!parse_selectors(c, &labels, &fields))
        return;
    ks_lock();
    size_t n;
    struct ks_snap **v = ks_store_list(c->res->group, c->res->plural, c->ns, &n);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", c->res->list_kind);
    _cleanup_free_ char *av = ks_resource_api_version(c->res);
    cJSON_AddStringToObject(out, "apiVersion", av);
    cJSON *md = cJSON_AddObjectToObject(out, "metadata");
    cJSON *items = cJSON_AddArrayToObject(out, "items");
    for (size_t i = 0; i < n; i++) {
        if (!ks_selector_match(labels, v[i]->obj) || !ks_selector_match(fields, v[i]->obj))
            continue;
        struct ks_snap *cur =
            ks_store_get(c->res->group, c->res->plural, ks_json_str(v[i]->obj, "metadata.namespace"),
                         ks_json_str(v[i]->obj, "metadata.name"));
        if (!cur)
            continue;
        struct ks_snap *gone = NULL;
        cJSON *upd = NULL;
        api_delete_object(c->res, cur, -1, "Background", &gone, &upd);
        cJSON_AddItemToArray(items, upd ? upd : api_present(c->res, gone->obj));
        ks_snap_unref(gone);
    }
    char rv[32];
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)ks_store_rv());
    cJSON_AddStringToObject(md, "resourceVersion", rv);
    ks_unlock();
    ks_snaps_free(v, n);
    ks_reply_json(c->reply, 200, out);
    ks_selector_free(labels);
    ks_selector_free(fields);
}
