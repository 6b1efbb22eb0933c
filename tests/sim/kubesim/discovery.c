/* discovery.c -- /version, health endpoints, legacy discovery (/api, /apis, /apis/G/V) and the
 * minimal OpenAPI documents kubectl needs for `apply` with default validation (kube-api.md 4.5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kubesim.h"

int ks_minor = 32;
int ks_port;

static cJSON *verbs(const char *const *v)
{
    cJSON *a = cJSON_CreateArray();
    for (; *v; v++)
        cJSON_AddItemToArray(a, cJSON_CreateString(*v));
    return a;
}

static const char *const all_verbs[] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
static const char *const sub_verbs[] = {"get", "patch", "update", NULL};
static const char *const create_verb[] = {"create", NULL};

/* authorization.k8s.io/v1: the access reviews (rbac.c answers them; nothing is stored). */
#define AUTHZ_GROUP "authorization.k8s.io"
static const struct {
    const char *plural, *kind;
    bool namespaced;
} reviews[] = {
    {"selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
    {"selfsubjectrulesreviews", "SelfSubjectRulesReview", false},
    {"subjectaccessreviews", "SubjectAccessReview", false},
};

static void add_reviews(cJSON *list)
{
    for (size_t i = 0; i < sizeof(reviews) / sizeof(reviews[0]); i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", reviews[i].plural);
        cJSON_AddStringToObject(o, "singularName", "");
        cJSON_AddBoolToObject(o, "namespaced", reviews[i].namespaced);
        cJSON_AddStringToObject(o, "kind", reviews[i].kind);
        cJSON_AddItemToObject(o, "verbs", verbs(create_verb));
        cJSON_AddItemToArray(list, o);
    }
}

static void add_resource(cJSON *list, const struct ks_resource *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->plural);
    cJSON_AddStringToObject(o, "singularName", r->singular);
    cJSON_AddBoolToObject(o, "namespaced", r->namespaced);
    cJSON_AddStringToObject(o, "kind", r->kind);
    cJSON_AddItemToObject(o, "verbs", verbs(all_verbs));
    if (r->short_names)
        cJSON_AddItemToObject(o, "shortNames", cJSON_Duplicate(r->short_names, true));
    if (r->categories)
        cJSON_AddItemToObject(o, "categories", cJSON_Duplicate(r->categories, true));
    cJSON_AddStringToObject(o, "storageVersionHash", "kubesim");
    cJSON_AddItemToArray(list, o);
    if (r->flags & KS_STATUS) {
        _cleanup_free_ char *name = rss_xasprintf("%s/status", r->plural);
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "singularName", "");
        cJSON_AddBoolToObject(o, "namespaced", r->namespaced);
        cJSON_AddStringToObject(o, "kind", r->kind);
        cJSON_AddItemToObject(o, "verbs", verbs(sub_verbs));
        cJSON_AddItemToArray(list, o);
    }
    if (!*r->group && !strcmp(r->plural, "serviceaccounts")) {
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", "serviceaccounts/token");
        cJSON_AddStringToObject(o, "singularName", "");
        cJSON_AddBoolToObject(o, "namespaced", true);
        cJSON_AddStringToObject(o, "group", "authentication.k8s.io");
        cJSON_AddStringToObject(o, "version", "v1");
        cJSON_AddStringToObject(o, "kind", "TokenRequest");
        cJSON_AddItemToObject(o, "verbs", verbs(create_verb));
        cJSON_AddItemToArray(list, o);
    }
    if (!*r->group && !strcmp(r->plural, "pods")) {
        /* kubectl drain evicts only when it finds this entry (CheckEvictionSupport), else deletes. */
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", "pods/eviction");
        cJSON_AddStringToObject(o, "singularName", "");
        cJSON_AddBoolToObject(o, "namespaced", true);
        cJSON_AddStringToObject(o, "group", "policy");
        cJSON_AddStringToObject(o, "version", "v1");
        cJSON_AddStringToObject(o, "kind", "Eviction");
        cJSON_AddItemToObject(o, "verbs", verbs(create_verb));
        cJSON_AddItemToArray(list, o);
    }
    if (r->flags & KS_SCALE) {
        _cleanup_free_ char *name = rss_xasprintf("%s/scale", r->plural);
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "singularName", "");
        cJSON_AddBoolToObject(o, "namespaced", r->namespaced);
        cJSON_AddStringToObject(o, "group", "autoscaling");
        cJSON_AddStringToObject(o, "version", "v1");
        cJSON_AddStringToObject(o, "kind", "Scale");
        cJSON_AddItemToObject(o, "verbs", verbs(sub_verbs));
        cJSON_AddItemToArray(list, o);
    }
}

static cJSON *resource_list(const char *group, const char *version)
{
    bool any = false;
    cJSON *list = cJSON_CreateObject();
    cJSON_AddStringToObject(list, "kind", "APIResourceList");
    cJSON_AddStringToObject(list, "apiVersion", "v1");
    _cleanup_free_ char *gv = *group ? rss_xasprintf("%s/%s", group, version) : rss_xstrdup(version);
    cJSON_AddStringToObject(list, "groupVersion", gv);
    cJSON *res = cJSON_AddArrayToObject(list, "resources");
    if (!strcmp(group, AUTHZ_GROUP) && !strcmp(version, "v1")) {
        add_reviews(res);
        any = true;
    }
    for (const struct ks_resource *r = ks_resource_first(); r; r = r->next) {
        if (!strcmp(r->group, group) && !strcmp(r->version, version)) {
            add_resource(res, r);
            any = true;
        }
    }
    if (!any) {
        cJSON_Delete(list);
        return NULL;
    }
    return list;
}

/* Every distinct group except core, with its versions, in registration order. */
static cJSON *group_object(const char *group)
{
    cJSON *g = NULL, *versions = NULL;
    if (!strcmp(group, AUTHZ_GROUP)) {
        g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", group);
        versions = cJSON_AddArrayToObject(g, "versions");
        cJSON *vo = cJSON_CreateObject();
        cJSON_AddStringToObject(vo, "groupVersion", AUTHZ_GROUP "/v1");
        cJSON_AddStringToObject(vo, "version", "v1");
        cJSON_AddItemToArray(versions, vo);
        cJSON_AddItemToObject(g, "preferredVersion", cJSON_Duplicate(vo, true));
        return g;
    }
    for (const struct ks_resource *r = ks_resource_first(); r; r = r->next) {
        if (strcmp(r->group, group))
            continue;
        if (!g) {
            g = cJSON_CreateObject();
            cJSON_AddStringToObject(g, "name", group);
            versions = cJSON_AddArrayToObject(g, "versions");
        }
        bool have = false;
        const cJSON *v;
        cJSON_ArrayForEach(v, versions) have = have || !strcmp(ks_json_str(v, "version"), r->version);
        if (have)
            continue;
        _cleanup_free_ char *gv = rss_xasprintf("%s/%s", group, r->version);
        cJSON *vo = cJSON_CreateObject();
        cJSON_AddStringToObject(vo, "groupVersion", gv);
        cJSON_AddStringToObject(vo, "version", r->version);
        cJSON_AddItemToArray(versions, vo);
        if (!cJSON_GetObjectItemCaseSensitive(g, "preferredVersion"))
            cJSON_AddItemToObject(g, "preferredVersion", cJSON_Duplicate(vo, true));
    }
    return g;
}

static cJSON *group_list(void)
{
    cJSON *list = cJSON_CreateObject();
    cJSON_AddStringToObject(list, "kind", "APIGroupList");
    cJSON_AddStringToObject(list, "apiVersion", "v1");
    cJSON *groups = cJSON_AddArrayToObject(list, "groups");
    for (const struct ks_resource *r = ks_resource_first(); r; r = r->next) {
        if (!*r->group)
            continue;
        bool seen = false;
        const cJSON *g;
        cJSON_ArrayForEach(g, groups) seen = seen || !strcmp(ks_json_str(g, "name"), r->group);
        if (!seen)
            cJSON_AddItemToArray(groups, group_object(r->group));
    }
    cJSON_AddItemToArray(groups, group_object(AUTHZ_GROUP));
    return list;
}

static cJSON *version_doc(void)
{
    cJSON *v = cJSON_CreateObject();
    char minor[16], git[32];
    snprintf(minor, sizeof(minor), "%d", ks_minor);
    snprintf(git, sizeof(git), "v1.%d.0", ks_minor);
    cJSON_AddStringToObject(v, "major", "1");
    cJSON_AddStringToObject(v, "minor", minor);
    cJSON_AddStringToObject(v, "gitVersion", git);
    cJSON_AddStringToObject(v, "gitCommit", "0000000000000000000000000000000000000000");
    cJSON_AddStringToObject(v, "gitTreeState", "clean");
    cJSON_AddStringToObject(v, "buildDate", "2025-01-01T00:00:00Z");
    cJSON_AddStringToObject(v, "goVersion", "go1.23.0");
    cJSON_AddStringToObject(v, "compiler", "gc");
    cJSON_AddStringToObject(v, "platform", "linux/amd64");
    return v;
}

/* /openapi/v3: one entry per group-version, hashed by the registry generation so kubectl's cache
 * notices new CRDs. */
static cJSON *openapi_v3_root(void)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *paths = cJSON_AddObjectToObject(root, "paths");
    for (const struct ks_resource *r = ks_resource_first(); r; r = r->next) {
        _cleanup_free_ char *key = *r->group ? rss_xasprintf("apis/%s/%s", r->group, r->version)
                                             : rss_xasprintf("api/%s", r->version);
        if (cJSON_GetObjectItemCaseSensitive(paths, key))
            continue;
        _cleanup_free_ char *url = rss_xasprintf("/openapi/v3/%s?hash=%08X", key, ks_registry_generation());
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "serverRelativeURL", url);
        cJSON_AddItemToObject(paths, key, o);
    }
    return root;
}

static cJSON *openapi_v3_gv(const char *group, const char *version)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "openapi", "3.0.0");
    cJSON *info = cJSON_AddObjectToObject(doc, "info");
    cJSON_AddStringToObject(info, "title", "Kubernetes");
    char v[32];
    snprintf(v, sizeof(v), "v1.%d.0", ks_minor);
    cJSON_AddStringToObject(info, "version", v);
    cJSON *paths = cJSON_AddObjectToObject(doc, "paths");
    bool any = false;
    for (const struct ks_resource *r = ks_resource_first(); r; r = r->next) {
        if (strcmp(r->group, group) || strcmp(r->version, version))
            continue;
        any = true;
        _cleanup_free_ char *prefix =
            *group ? rss_xasprintf("/apis/%s/%s", group, version) : rss_xasprintf("/api/%s", version);
        _cleanup_free_ char *path =
            r->namespaced ? rss_xasprintf("%s/namespaces/{namespace}/%s/{name}", prefix, r->plural)
                          : rss_xasprintf("%s/%s/{name}", prefix, r->plural);
        cJSON *item = cJSON_CreateObject();
        cJSON *patch = cJSON_AddObjectToObject(item, "patch");
        cJSON *gvk = cJSON_AddObjectToObject(patch, "x-kubernetes-group-version-kind");
        cJSON_AddStringToObject(gvk, "group", group);
        cJSON_AddStringToObject(gvk, "version", version);
        cJSON_AddStringToObject(gvk, "kind", r->kind);
        cJSON_AddStringToObject(patch, "x-kubernetes-action", "patch");
        cJSON *params = cJSON_AddArrayToObject(patch, "parameters");
        const char *pnames[] = {"fieldValidation", "fieldManager", "dryRun", "force"};
        for (size_t i = 0; i < 4; i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "name", pnames[i]);
            cJSON_AddStringToObject(p, "in", "query");
            cJSON_AddItemToObject(p, "schema", cJSON_Parse("{\"type\":\"string\"}"));
            cJSON_AddItemToArray(params, p);
        }
        /* No strategic-merge-patch+json here: kubectl would then build SMPs from this (empty)
         * schema; without it, it falls back to its compiled-in types. */
        cJSON *content = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "requestBody"), "content");
        const char *types[] = {"application/json-patch+json", "application/merge-patch+json",
                               "application/apply-patch+yaml"};
        for (size_t i = 0; i < 3; i++)
            cJSON_AddItemToObject(content, types[i], cJSON_Parse("{\"schema\":{\"type\":\"object\"}}"));
        cJSON_AddItemToObject(patch, "responses", cJSON_Parse("{\"200\":{\"description\":\"OK\"}}"));
        cJSON_AddItemToObject(paths, path, item);
    }
    cJSON_AddItemToObject(cJSON_AddObjectToObject(doc, "components"), "schemas", cJSON_CreateObject());
    if (!any) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

static void reply_text(struct ks_reply *reply, int code, const char *text, const char *type)
{
    reply->code = code;
    reply->body = rss_xstrdup(text);
    reply->content_type = type;
}

bool ks_discovery_handle(const struct ks_req *req, struct ks_reply *reply)
{
    const char *p = req->path;
    if (!strcmp(p, "/healthz") || !strcmp(p, "/livez") || !strcmp(p, "/readyz") ||
        !strncmp(p, "/healthz/", 9) || !strncmp(p, "/livez/", 7) || !strncmp(p, "/readyz/", 8)) {
        reply_text(reply, 200, "ok", "text/plain; charset=utf-8");
        return true;
    }
    if (!strcmp(p, "/version") || !strcmp(p, "/version/")) {
        ks_reply_json(reply, 200, version_doc());
        return true;
    }
    if (strcmp(req->method, "GET"))
        return false;
    if (!strcmp(p, "/api") || !strcmp(p, "/api/")) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "kind", "APIVersions");
        cJSON_AddItemToObject(v, "versions", cJSON_Parse("[\"v1\"]"));
        char addr[64];
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", ks_port);
        cJSON *cidrs = cJSON_AddArrayToObject(v, "serverAddressByClientCIDRs");
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "clientCIDR", "0.0.0.0/0");
        cJSON_AddStringToObject(c, "serverAddress", addr);
        cJSON_AddItemToArray(cidrs, c);
        ks_reply_json(reply, 200, v);
        return true;
    }
    if (!strcmp(p, "/apis") || !strcmp(p, "/apis/")) {
        ks_lock();
        cJSON *l = group_list();
        ks_unlock();
        ks_reply_json(reply, 200, l);
        return true;
    }
    if (!strcmp(p, "/api/v1")) {
        ks_lock();
        cJSON *l = resource_list("", "v1");
        ks_unlock();
        ks_reply_json(reply, 200, l);
        return true;
    }
    if (!strncmp(p, "/apis/", 6)) {
        char group[256], version[64];
        const char *g = p + 6, *slash = strchr(g, '/');
        if (!slash) {
            snprintf(group, sizeof(group), "%s", g);
            ks_lock();
            cJSON *o = group_object(group);
            ks_unlock();
            if (!o)
                return false;
            cJSON_AddStringToObject(o, "kind", "APIGroup");
            cJSON_AddStringToObject(o, "apiVersion", "v1");
            ks_reply_json(reply, 200, o);
            return true;
        }
        if (strchr(slash + 1, '/') || (size_t)(slash - g) >= sizeof(group) ||
            strlen(slash + 1) >= sizeof(version))
            return false;
        memcpy(group, g, (size_t)(slash - g));
        group[slash - g] = '\0';
        snprintf(version, sizeof(version), "%s", slash + 1);
        ks_lock();
        cJSON *l = resource_list(group, version);
        ks_unlock();
        if (!l)
            return false;
        ks_reply_json(reply, 200, l);
        return true;
    }
    if (!strcmp(p, "/openapi/v2")) {
        if (req->accept && strstr(req->accept, "protobuf")) {
            /* An openapi_v2.Document with only swagger="2.0": kubectl finds no models and skips
             * client-side validation, and builds patches from its compiled-in types. */
            static const char pb[] = {0x0a, 0x03, '2', '.', '0'};
            reply->code = 200;
            reply->body = rss_xmalloc(sizeof(pb) + 1);
            memcpy(reply->body, pb, sizeof(pb));
            reply->body[sizeof(pb)] = '\0';
            reply->content_type = "application/octet-stream";
            return true;
        }
        ks_reply_json(reply, 200,
                      cJSON_Parse("{\"swagger\":\"2.0\",\"info\":{\"title\":\"Kubernetes\",\"version\":"
                                  "\"v1\"},\"paths\":{},\"definitions\":{}}"));
        return true;
    }
    if (!strcmp(p, "/openapi/v3") || !strcmp(p, "/openapi/v3/")) {
        ks_lock();
        cJSON *r = openapi_v3_root();
        ks_unlock();
        ks_reply_json(reply, 200, r);
        return true;
    }
    if (!strncmp(p, "/openapi/v3/", 12)) {
        const char *gv = p + 12;
        char group[256] = "", version[64] = "";
        if (!strncmp(gv, "api/", 4)) {
            snprintf(version, sizeof(version), "%s", gv + 4);
        } else if (!strncmp(gv, "apis/", 5)) {
            const char *slash = strchr(gv + 5, '/');
            if (!slash || (size_t)(slash - gv - 5) >= sizeof(group))
                return false;
            memcpy(group, gv + 5, (size_t)(slash - gv - 5));
            group[slash - gv - 5] = '\0';
            snprintf(version, sizeof(version), "%s", slash + 1);
        } else {
            return false;
        }
        ks_lock();
        cJSON *d = openapi_v3_gv(group, version);
        ks_unlock();
        if (!d)
            return false;
        ks_reply_json(reply, 200, d);
        return true;
    }
    return false;
}
