/* api.c -- kubesim's REST routing: resource paths to the verbs (kube-api.md sections 2 and 5). */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

/* ---- routing ---- */

static void not_served(struct ks_reply *r)
{
    api_reply_err(r, 404, "NotFound", NULL, NULL, NULL, "the server could not find the requested resource");
}

void ks_api_handle(const struct ks_req *req, struct ks_reply *reply, const char **verb)
{
    *verb = req->method;
    if (!strcmp(req->method, "GET"))
        *verb = "GET";
    /* Authorization comes first, on the request's attributes alone, as in kube-apiserver: a
     * denied user learns nothing about what exists (403 even for unknown resources). */
    struct ks_attrs attrs;
    ks_request_attrs(req, &attrs);
    char reason[1400];
    if (!ks_authorize(req->user, &attrs, reason, sizeof(reason))) {
        if (attrs.resource_request && !strcmp(attrs.verb, "list"))
            *verb = "LIST";
        else if (attrs.resource_request && !strcmp(attrs.verb, "watch"))
            *verb = "WATCH";
        ks_reply_forbidden(reply, req->user, &attrs, reason);
        return;
    }
    if (ks_review_handle(req, reply))
        return;
    if (ks_discovery_handle(req, reply))
        return;
    char group[256], version[64];
    const char *rest;
    const char *p = req->path;
    if (!strncmp(p, "/api/v1/", 8)) {
        group[0] = '\0';
        snprintf(version, sizeof(version), "v1");
        rest = p + 8;
    } else if (!strncmp(p, "/apis/", 6)) {
        const char *g = p + 6, *s1 = strchr(g, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
        if (!s2 || (size_t)(s1 - g) >= sizeof(group) || (size_t)(s2 - s1 - 1) >= sizeof(version)) {
            not_served(reply);
            return;
        }
        memcpy(group, g, (size_t)(s1 - g));
        group[s1 - g] = '\0';
        memcpy(version, s1 + 1, (size_t)(s2 - s1 - 1));
        version[s2 - s1 - 1] = '\0';
        rest = s2 + 1;
    } else {
        not_served(reply);
        return;
    }
    char *segs[6];
    size_t n = 0;
    _cleanup_free_ char *copy = rss_xstrdup(rest);
    char *save = NULL;
    for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (n == 6) {
            not_served(reply);
            return;
        }
        segs[n++] = t;
    }
    struct ctx c = {.req = req, .reply = reply, .table = ks_wants_table(req->accept)};
    ks_lock();
    struct ks_resource *res = NULL;
    size_t i = 0;
    if (n >= 3 && !strcmp(segs[0], "namespaces")) {
        res = ks_resource_find(group, version, segs[2]);
        if (res && res->namespaced) {
            c.ns = segs[1];
            i = 2;
        } else {
            res = NULL;
        }
    }
    if (!res && n >= 1) {
        res = ks_resource_find(group, version, segs[0]);
        i = 0;
        if (res && res->namespaced && n > 1)
            res = NULL; /* a namespaced item needs its namespace */
    }
    ks_unlock();
    if (!res || n - i > 3) {
        not_served(reply);
        return;
    }
    c.res = res;
    c.name = n - i >= 2 ? segs[i + 1] : NULL;
    c.sub = n - i == 3 ? segs[i + 2] : NULL;
    if (c.sub && !strcmp(c.sub, "token") && !*res->group && !strcmp(res->plural, "serviceaccounts")) {
        if (strcmp(req->method, "POST"))
            api_reply_err(reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                          "the server does not allow this method on the requested resource");
        else
            ks_token_request(req, c.ns, c.name, reply);
        return;
    }
    if (c.sub && !strcmp(c.sub, "eviction") && !*res->group && !strcmp(res->plural, "pods")) {
        api_pod_eviction(&c);
        return;
    }
    if (c.sub && !strcmp(c.sub, "log") && !*res->group && !strcmp(res->plural, "pods")) {
        api_pod_log(&c);
        return;
    }
    if (c.sub && !((!strcmp(c.sub, "status") && (res->flags & KS_STATUS)) ||
                   (!strcmp(c.sub, "scale") && (res->flags & KS_SCALE)))) {
        not_served(reply);
        return;
    }
    if (c.sub && !strcmp(c.sub, "scale"))
        c.table = false;
    const char *m = req->method;
    if (!c.name) {
        if (!strcmp(m, "GET")) {
            bool watch = api_qbool(&c, "watch");
            *verb = watch ? "WATCH" : "LIST";
            if (watch)
                api_do_watch(&c);
            else
                api_do_list(&c);
        } else if (!strcmp(m, "POST")) {
            if (res->namespaced && !c.ns) {
                not_served(reply);
                return;
            }
            api_do_post(&c);
        } else if (!strcmp(m, "DELETE")) {
            api_do_delete_collection(&c);
        } else {
            api_reply_err(reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                          "the server does not allow this method on the requested resource");
        }
        return;
    }
    if (!strcmp(m, "GET"))
        api_do_get(&c);
    else if (!strcmp(m, "PUT"))
        api_do_put(&c);
    else if (!strcmp(m, "PATCH"))
        api_do_patch(&c);
    else if (!strcmp(m, "DELETE") && !c.sub)
        api_do_delete(&c);
    else
        api_reply_err(reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                      "the server does not allow this method on the requested resource");
}
