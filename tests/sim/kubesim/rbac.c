/* rbac.c -- kubesim's authorizer: request attributes as the apiserver's RequestInfo, RBAC decisions
 * over the stored Roles, ClusterRoles and their bindings (plus the built-in bootstrap roles), the
 * 403 Forbidden answer, and the access reviews kubectl auth can-i sends. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

#define RBAC "rbac.authorization.k8s.io"

/* ---- request attributes (apiserver: endpoints/request/requestinfo.go) ---- */

static void copy(char *dst, size_t n, const char *src, size_t len)
{
    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* The value of a metadata.name=X (or ==) term of a field selector, into buf; false if none. */
static bool selector_name(const char *sel, char *buf, size_t n)
{
    for (const char *p = sel; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        static const char key[] = "metadata.name";
        size_t kl = sizeof(key) - 1;
        if (len > kl + 1 && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t off = kl + 1 + (p[kl + 1] == '=');
            copy(buf, n, p + off, len - off);
            return *buf != '\0';
        }
        p = e ? e + 1 : NULL;
    }
    return false;
}

void ks_request_attrs(const struct ks_req *req, struct ks_attrs *a)
{
    memset(a, 0, sizeof(*a));
    copy(a->path, sizeof(a->path), req->path, strlen(req->path));
    for (size_t i = 0; req->method[i] && i < sizeof(a->verb) - 1; i++)
        a->verb[i] = (char)tolower((unsigned char)req->method[i]);

    /* Split the path into at most 8 segments after /api or /apis. */
    const char *p = req->path;
    bool core;
    if (!strncmp(p, "/api/", 5))
        core = true;
    else if (!strncmp(p, "/apis/", 6))
        core = false;
    else
        return;
    char segs[8][256];
    size_t n = 0;
    for (const char *s = p + (core ? 5 : 6); *s && n < 8;) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len)
            copy(segs[n++], sizeof(segs[0]), s, len);
        s = e ? e + 1 : s + len;
    }
    size_t i = 0;
    if (core) {
        if (n < 2)
            return;
        copy(a->version, sizeof(a->version), segs[0], strlen(segs[0]));
        i = 1;
    } else {
        if (n < 3)
            return;
        copy(a->group, sizeof(a->group), segs[0], strlen(segs[0]));
        copy(a->version, sizeof(a->version), segs[1], strlen(segs[1]));
        i = 2;
    }
    a->resource_request = true;
    const char *m = req->method;
    if (!strcmp(m, "POST"))
        snprintf(a->verb, sizeof(a->verb), "create");
    else if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        snprintf(a->verb, sizeof(a->verb), "get");
    else if (!strcmp(m, "PUT"))
        snprintf(a->verb, sizeof(a->verb), "update");
    else if (!strcmp(m, "PATCH"))
        snprintf(a->verb, sizeof(a->verb), "patch");
    else if (!strcmp(m, "DELETE"))
        snprintf(a->verb, sizeof(a->verb), "delete");
    /* /namespaces/NS/RESOURCE/...: the namespace, then the resource in it; namespaces/NS[/status] is
     * the namespace object itself (its own namespace too). */
    if (!strcmp(segs[i], "namespaces") && n - i > 1) {
        copy(a->ns, sizeof(a->ns), segs[i + 1], strlen(segs[i + 1]));
        if (n - i > 2 && strcmp(segs[i + 2], "status") && strcmp(segs[i + 2], "finalize"))
            i += 2;
    }
    copy(a->resource, sizeof(a->resource), segs[i], strlen(segs[i]));
    if (n - i > 1)
        copy(a->name, sizeof(a->name), segs[i + 1], strlen(segs[i + 1]));
    if (n - i > 2)
        copy(a->sub, sizeof(a->sub), segs[i + 2], strlen(segs[i + 2]));
    if (!*a->name && !strcmp(a->verb, "get")) {
        const char *w = req->query ? req->query(req->query_ctx, "watch") : NULL;
        bool watch = w && (!strcmp(w, "1") || !strcasecmp(w, "true") || !strcmp(w, "t"));
        snprintf(a->verb, sizeof(a->verb), "%s", watch ? "watch" : "list");
        const char *fs = req->query ? req->query(req->query_ctx, "fieldSelector") : NULL;
        selector_name(fs, a->name, sizeof(a->name));
    }
    if (!*a->name && !strcmp(a->verb, "delete"))
        snprintf(a->verb, sizeof(a->verb), "deletecollection");
}

/* ---- rule matching (plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows) ---- */

static bool str_in(const cJSON *arr, const char *s)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) if (cJSON_IsString(x) && !strcmp(x->valuestring, s)) return true;
    return false;
}

static bool has_star_or(const cJSON *arr, const char *s)
{
    return str_in(arr, "*") || str_in(arr, s);
}

static bool resource_matches(const cJSON *resources, const char *resource, const char *sub)
{
    char combined[192], star_sub[80];
    snprintf(combined, sizeof(combined), "%s%s%s", resource, *sub ? "/" : "", sub);
    snprintf(star_sub, sizeof(star_sub), "*/%s", sub);
    const cJSON *x;
    cJSON_ArrayForEach(x, resources)
    {
        if (!cJSON_IsString(x))
            continue;
        if (!strcmp(x->valuestring, "*") || !strcmp(x->valuestring, combined) ||
            (*sub && !strcmp(x->valuestring, star_sub)))
            return true;
    }
    return false;
}

static bool url_matches(const cJSON *urls, const char *path)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, urls)
    {
        if (!cJSON_IsString(x))
            continue;
        const char *u = x->valuestring;
        size_t l = strlen(u);
        if (!strcmp(u, "*") || !strcmp(u, path) || (l && u[l - 1] == '*' && !strncmp(u, path, l - 1)))
            return true;
    }
    return false;
}

static bool rule_allows(const cJSON *rule, const struct ks_attrs *a)
{
    const cJSON *verbs = cJSON_GetObjectItemCaseSensitive(rule, "verbs");
    if (!has_star_or(verbs, a->verb))
        return false;
    if (!a->resource_request)
        return url_matches(cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs"), a->path);
    if (!has_star_or(cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"), a->group))
        return false;
    if (!resource_matches(cJSON_GetObjectItemCaseSensitive(rule, "resources"), a->resource, a->sub))
        return false;
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(rule, "resourceNames");
    return cJSON_GetArraySize(names) == 0 || (*a->name && str_in(names, a->name));
}

/* ---- the built-in bootstrap roles (not stored; see docs/kubesim.md) ---- */

static const char builtin_json[] =
    "["
    /* system:discovery and system:public-info-viewer, bound to system:authenticated */
    "{\"binding\":\"system:discovery\",\"group\":\"system:authenticated\",\"rules\":["
    "{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/api\",\"/api/*\",\"/apis\",\"/apis/*\",\"/healthz\","
    "\"/livez\",\"/openapi\",\"/openapi/*\",\"/readyz\",\"/version\",\"/version/\"]}]},"
    /* system:basic-user */
    "{\"binding\":\"system:basic-user\",\"group\":\"system:authenticated\",\"rules\":["
    "{\"verbs\":[\"create\"],\"apiGroups\":[\"authorization.k8s.io\"],"
    "\"resources\":[\"selfsubjectaccessreviews\",\"selfsubjectrulesreviews\"]},"
    "{\"verbs\":[\"create\"],\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"selfsubjectreviews\"]"
    "}]},"
    /* system:public-info-viewer for everyone */
    "{\"binding\":\"system:public-info-viewer\",\"group\":\"system:unauthenticated\",\"rules\":["
    "{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/healthz\",\"/livez\",\"/readyz\",\"/version\","
    "\"/version/\"]}]}"
    "]";

static cJSON *builtins;

static const cJSON *builtin_roles(void)
{
    if (!builtins)
        builtins = cJSON_Parse(builtin_json);
    return builtins;
}

/* ---- the rule visitor (rbac/validation: DefaultRuleResolver.VisitRulesFor) ---- */

struct visit {
    const struct ks_attrs *attrs; /* when deciding: stop at the first rule that allows */
    bool allowed;
    char *reason;
    size_t reason_n;
    char errors[1024];
    size_t n_errors;
    cJSON *rules; /* when listing (rules review): every rule */
};

static void add_error(struct visit *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_error(struct visit *v, const char *fmt, ...)
{
    size_t used = strlen(v->errors);
    if (used + 4 >= sizeof(v->errors))
        return;
    if (v->n_errors++)
        used += (size_t)snprintf(v->errors + used, sizeof(v->errors) - used, ", ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->errors + used, sizeof(v->errors) - used, fmt, ap);
    va_end(ap);
}

/* Visits one rule from `source`; false stops the walk. */
static bool visit_rule(struct visit *v, const char *source, const cJSON *rule)
{
    if (v->rules)
        cJSON_AddItemToArray(v->rules, cJSON_Duplicate(rule, true));
    if (v->attrs && rule_allows(rule, v->attrs)) {
        v->allowed = true;
        if (v->reason)
            snprintf(v->reason, v->reason_n, "RBAC: allowed by %s", source);
        return false;
    }
    return true;
}

static bool subject_applies(const cJSON *s, const struct ks_user *u, const char *binding_ns)
{
    const char *kind = ks_json_str(s, "kind"), *name = ks_json_str(s, "name");
    if (!kind || !name)
        return false;
    if (!strcmp(kind, "User"))
        return !strcmp(name, u->name);
    if (!strcmp(kind, "Group"))
        return ks_user_in_group(u, name);
    if (!strcmp(kind, "ServiceAccount")) {
        const char *ns = ks_json_str(s, "namespace");
        if (!ns || !*ns)
            ns = binding_ns;
        if (!ns || !*ns)
            return false;
        char want[600];
        snprintf(want, sizeof(want), "system:serviceaccount:%s:%s", ns, name);
        return !strcmp(want, u->name);
    }
    return false;
}

static void describe_subject(const cJSON *s, const char *binding_ns, char *buf, size_t n)
{
    const char *kind = ks_json_str(s, "kind"), *name = ks_json_str(s, "name");
    if (!strcmp(kind, "ServiceAccount")) {
        const char *ns = ks_json_str(s, "namespace");
        snprintf(buf, n, "%s \"%s/%s\"", kind, name, ns && *ns ? ns : binding_ns);
    } else {
        snprintf(buf, n, "%s \"%s\"", kind, name);
    }
}

/* Whether a ClusterRole's labels match one selector's matchLabels (matchExpressions unsupported). */
static bool labels_match(const cJSON *role, const cJSON *selector)
{
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(selector, "matchLabels");
    if (cJSON_GetObjectItemCaseSensitive(selector, "matchExpressions") || !cJSON_IsObject(ml) || !ml->child)
        return false;
    const cJSON *labels = ks_json_path(role, "metadata.labels"), *l;
    cJSON_ArrayForEach(l, ml)
    {
        const cJSON *have = cJSON_GetObjectItemCaseSensitive(labels, l->string);
        if (!cJSON_IsString(have) || !cJSON_IsString(l) || strcmp(have->valuestring, l->valuestring))
            return false;
    }
    return true;
}

/* The rules of a role object; an aggregated ClusterRole also gets those of the ClusterRoles its
 * aggregationRule selects (what the aggregation controller would have written into it). */
static bool visit_role_rules(struct visit *v, const char *source, const cJSON *role, bool cluster)
{
    const cJSON *r;
    cJSON_ArrayForEach(
        r, cJSON_GetObjectItemCaseSensitive(role, "rules")) if (!visit_rule(v, source, r)) return false;
    const cJSON *sels = ks_json_path(role, "aggregationRule.clusterRoleSelectors");
    if (!cluster || !cJSON_IsArray(sels))
        return true;
    size_t n = 0;
    struct ks_snap **all = ks_store_list(RBAC, "clusterroles", NULL, &n);
    bool go = true;
    for (size_t i = 0; go && i < n; i++) {
        if (all[i]->obj == role)
            continue;
        const cJSON *sel;
        bool match = false;
        cJSON_ArrayForEach(sel, sels) match = match || labels_match(all[i]->obj, sel);
        if (!match)
            continue;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(all[i]->obj, "rules"))
        {
            if (!(go = visit_rule(v, source, r)))
                break;
        }
    }
    ks_snaps_free(all, n);
    return go;
}

/* Visits the rules of one binding if a subject applies to the user; false stops. */
static bool visit_binding(struct visit *v, const struct ks_user *u, const cJSON *b, const char *binding_ns)
{
    const cJSON *subjects = cJSON_GetObjectItemCaseSensitive(b, "subjects"), *s, *applies = NULL;
    cJSON_ArrayForEach(s, subjects)
    {
        if (subject_applies(s, u, binding_ns)) {
            applies = s;
            break;
        }
    }
    if (!applies)
        return true;
    const char *kind = ks_json_str(b, "roleRef.kind"), *rname = ks_json_str(b, "roleRef.name");
    const char *bname = ks_json_str(b, "metadata.name");
    if (!kind || !rname || !bname)
        return true;
    bool cluster = !strcmp(kind, "ClusterRole");
    if (!cluster && strcmp(kind, "Role"))
        return true;
    struct ks_snap *role = cluster ? ks_store_get(RBAC, "clusterroles", "", rname)
                                   : ks_store_get(RBAC, "roles", binding_ns, rname);
    if (!role) {
        add_error(v, "%s.rbac.authorization.k8s.io \"%s\" not found", cluster ? "clusterrole" : "role",
                  rname);
        return true;
    }
    char subj[600], source[1400];
    describe_subject(applies, binding_ns ? binding_ns : "", subj, sizeof(subj));
    if (binding_ns)
        snprintf(source, sizeof(source), "RoleBinding \"%s/%s\" of %s \"%s\" to %s", bname, binding_ns, kind,
                 rname, subj);
    else
        snprintf(source, sizeof(source), "ClusterRoleBinding \"%s\" of %s \"%s\" to %s", bname, kind, rname,
                 subj);
    return visit_role_rules(v, source, role->obj, cluster);
}

/* Lock held. */
static void visit_rules_for(struct visit *v, const struct ks_user *u, const char *ns)
{
    const cJSON *b;
    cJSON_ArrayForEach(b, builtin_roles())
    {
        const char *group = ks_json_str(b, "group"), *name = ks_json_str(b, "binding");
        if (!ks_user_in_group(u, group))
            continue;
        char source[512];
        snprintf(source, sizeof(source), "ClusterRoleBinding \"%s\" of ClusterRole \"%s\" to Group \"%s\"",
                 name, name, group);
        const cJSON *r;
        cJSON_ArrayForEach(
            r, cJSON_GetObjectItemCaseSensitive(b, "rules")) if (!visit_rule(v, source, r)) return;
    }
    size_t n = 0;
    struct ks_snap **crbs = ks_store_list(RBAC, "clusterrolebindings", NULL, &n);
    bool go = true;
    for (size_t i = 0; go && i < n; i++)
        go = visit_binding(v, u, crbs[i]->obj, NULL);
    ks_snaps_free(crbs, n);
    if (!go || !ns || !*ns)
        return;
    struct ks_snap **rbs = ks_store_list(RBAC, "rolebindings", ns, &n);
    for (size_t i = 0; go && i < n; i++)
        go = visit_binding(v, u, rbs[i]->obj, ns);
    ks_snaps_free(rbs, n);
}

bool ks_authorize_locked(const struct ks_user *u, const struct ks_attrs *a, char *reason, size_t n)
{
    if (reason && n)
        reason[0] = '\0';
    if (!u)
        return false;
    /* The privileged group is allowed everything before RBAC is asked (as kube-apiserver does). */
    if (ks_user_in_group(u, "system:masters"))
        return true;
    struct visit v = {.attrs = a, .reason = reason, .reason_n = n};
    visit_rules_for(&v, u, a->resource_request ? a->ns : NULL);
    if (!v.allowed && reason && v.n_errors)
        snprintf(reason, n, "RBAC: %s%s%s", v.n_errors > 1 ? "[" : "", v.errors, v.n_errors > 1 ? "]" : "");
    return v.allowed;
}

bool ks_authorize(const struct ks_user *u, const struct ks_attrs *a, char *reason, size_t n)
{
    ks_lock();
    bool ok = ks_authorize_locked(u, a, reason, n);
    ks_unlock();
    return ok;
}

/* ---- 403 (apiserver: endpoints/handlers/responsewriters/errors.go) ---- */

void ks_reply_forbidden(struct ks_reply *reply, const struct ks_user *u, const struct ks_attrs *a,
                        const char *reason)
{
    const char *user = u ? u->name : "";
    char what[1200];
    if (!a->resource_request)
        snprintf(what, sizeof(what), "User \"%s\" cannot %s path \"%s\"", user, a->verb, a->path);
    else if (*a->ns)
        snprintf(what, sizeof(what),
                 "User \"%s\" cannot %s resource \"%s%s%s\" in API group \"%s\" in the namespace \"%s\"",
                 user, a->verb, a->resource, *a->sub ? "/" : "", a->sub, a->group, a->ns);
    else
        snprintf(what, sizeof(what),
                 "User \"%s\" cannot %s resource \"%s%s%s\" in API group \"%s\" at the cluster scope", user,
                 a->verb, a->resource, *a->sub ? "/" : "", a->sub, a->group);
    _cleanup_free_ char *msg = NULL;
    const char *sep = reason && *reason ? ": " : "";
    if (!a->resource_request)
        msg = rss_xasprintf("forbidden: %s%s%s", what, sep, reason ? reason : "");
    else if (*a->name)
        msg = rss_xasprintf("%s%s%s \"%s\" is forbidden: %s%s%s", a->resource, *a->group ? "." : "", a->group,
                            a->name, what, sep, reason ? reason : "");
    else
        msg = rss_xasprintf("%s%s%s is forbidden: %s%s%s", a->resource, *a->group ? "." : "", a->group, what,
                            sep, reason ? reason : "");
    cJSON *st = ks_status_new(403, "Forbidden", msg);
    cJSON *d = cJSON_AddObjectToObject(st, "details");
    if (a->resource_request) {
        if (*a->name)
            cJSON_AddStringToObject(d, "name", a->name);
        if (*a->group)
            cJSON_AddStringToObject(d, "group", a->group);
        cJSON_AddStringToObject(d, "kind", a->resource);
    }
    ks_reply_json(reply, 403, st);
    rss_log_info("403: %s", msg);
}

/* ---- access reviews (authorization.k8s.io/v1) ---- */

static void attr_str(char *dst, size_t n, const cJSON *obj, const char *key)
{
    const char *s = ks_json_str(obj, key);
    copy(dst, n, s ? s : "", s ? strlen(s) : 0);
}

/* spec.resourceAttributes / nonResourceAttributes into attributes; false if neither. */
static bool review_attrs(const cJSON *spec, struct ks_attrs *a)
{
    memset(a, 0, sizeof(*a));
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(spec, "resourceAttributes");
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");
    if (cJSON_IsObject(ra)) {
        a->resource_request = true;
        attr_str(a->verb, sizeof(a->verb), ra, "verb");
        attr_str(a->group, sizeof(a->group), ra, "group");
        attr_str(a->version, sizeof(a->version), ra, "version");
        attr_str(a->resource, sizeof(a->resource), ra, "resource");
        attr_str(a->sub, sizeof(a->sub), ra, "subresource");
        attr_str(a->ns, sizeof(a->ns), ra, "namespace");
        attr_str(a->name, sizeof(a->name), ra, "name");
        return true;
    }
    if (cJSON_IsObject(na)) {
        attr_str(a->verb, sizeof(a->verb), na, "verb");
        attr_str(a->path, sizeof(a->path), na, "path");
        return true;
    }
    return false;
}

static void invalid(struct ks_reply *reply, const char *kind, const char *field, const char *msg)
{
    _cleanup_free_ char *m =
        rss_xasprintf("%s.authorization.k8s.io \"\" is invalid: %s: %s", kind, field, msg);
    cJSON *st = ks_status_new(422, "Invalid", m);
    cJSON *d = cJSON_AddObjectToObject(st, "details");
    cJSON_AddStringToObject(d, "group", "authorization.k8s.io");
    cJSON_AddStringToObject(d, "kind", kind);
    cJSON *causes = cJSON_AddArrayToObject(d, "causes"), *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", "FieldValueRequired");
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
    ks_reply_json(reply, 422, st);
}

static cJSON *rules_review(const struct ks_user *u, const char *ns)
{
    struct visit v = {.rules = cJSON_CreateArray()};
    if (ks_user_in_group(u, "system:masters")) {
        cJSON *r = cJSON_CreateObject();
        const char *star[] = {"*"};
        cJSON_AddItemToObject(r, "verbs", cJSON_CreateStringArray(star, 1));
        cJSON_AddItemToObject(r, "apiGroups", cJSON_CreateStringArray(star, 1));
        cJSON_AddItemToObject(r, "resources", cJSON_CreateStringArray(star, 1));
        cJSON_AddItemToArray(v.rules, r);
        r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "verbs", cJSON_CreateStringArray(star, 1));
        cJSON_AddItemToObject(r, "nonResourceURLs", cJSON_CreateStringArray(star, 1));
        cJSON_AddItemToArray(v.rules, r);
    }
    ks_lock();
    visit_rules_for(&v, u, ns);
    ks_unlock();
    cJSON *status = cJSON_CreateObject();
    cJSON *res = cJSON_AddArrayToObject(status, "resourceRules");
    cJSON *non = cJSON_AddArrayToObject(status, "nonResourceRules");
    cJSON *r;
    while ((r = cJSON_DetachItemFromArray(v.rules, 0))) {
        bool nonres = cJSON_GetObjectItemCaseSensitive(r, "nonResourceURLs") != NULL;
        cJSON *o = cJSON_CreateObject();
        static const char *const rkeys[] = {"verbs", "apiGroups", "resources", "resourceNames"};
        static const char *const nkeys[] = {"verbs", "nonResourceURLs"};
        for (size_t i = 0; i < (nonres ? 2u : 4u); i++) {
            const char *k = nonres ? nkeys[i] : rkeys[i];
            cJSON *x = cJSON_GetObjectItemCaseSensitive(r, k);
            if (x)
                cJSON_AddItemToObject(o, k, cJSON_Duplicate(x, true));
        }
        cJSON_AddItemToArray(nonres ? non : res, o);
        cJSON_Delete(r);
    }
    cJSON_Delete(v.rules);
    cJSON_AddBoolToObject(status, "incomplete", v.n_errors > 0);
    if (v.n_errors) {
        _cleanup_free_ char *e = rss_xasprintf("%s", v.errors);
        cJSON_AddStringToObject(status, "evaluationError", e);
    }
    return status;
}

bool ks_review_handle(const struct ks_req *req, struct ks_reply *reply)
{
    static const char prefix[] = "/apis/authorization.k8s.io/v1/";
    if (strncmp(req->path, prefix, sizeof(prefix) - 1))
        return false;
    const char *what = req->path + sizeof(prefix) - 1;
    const char *kind;
    if (!strcmp(what, "selfsubjectaccessreviews"))
        kind = "SelfSubjectAccessReview";
    else if (!strcmp(what, "subjectaccessreviews"))
        kind = "SubjectAccessReview";
    else if (!strcmp(what, "selfsubjectrulesreviews"))
        kind = "SelfSubjectRulesReview";
    else
        return false;
    if (strcmp(req->method, "POST")) {
        ks_reply_status(reply, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource");
        return true;
    }
    _cleanup_json_ cJSON *in = ks_body_json(req);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(in, "spec");
    if (!cJSON_IsObject(spec)) {
        ks_reply_status(reply, 400, "BadRequest", "the body of the request was in an unknown format");
        return true;
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", kind);
    cJSON_AddStringToObject(out, "apiVersion", "authorization.k8s.io/v1");
    cJSON_AddItemToObject(out, "metadata", cJSON_CreateObject());
    cJSON_AddItemToObject(out, "spec", cJSON_Duplicate(spec, true));
    if (!strcmp(kind, "SelfSubjectRulesReview")) {
        const char *ns = ks_json_str(spec, "namespace");
        cJSON_AddItemToObject(out, "status", rules_review(req->user, ns ? ns : ""));
        ks_reply_json(reply, 201, out);
        return true;
    }
    struct ks_attrs a;
    if (!review_attrs(spec, &a)) {
        cJSON_Delete(out);
        invalid(reply, kind, "spec.resourceAttributes",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified");
        return true;
    }
    struct ks_user *subject = NULL;
    if (!strcmp(kind, "SubjectAccessReview")) {
        const char *user = ks_json_str(spec, "user"), *uid = ks_json_str(spec, "uid");
        const cJSON *groups = cJSON_GetObjectItemCaseSensitive(spec, "groups"), *g;
        if ((!user || !*user) && cJSON_GetArraySize(groups) == 0) {
            cJSON_Delete(out);
            invalid(reply, kind, "spec.user", "at least one of user or group must be specified");
            return true;
        }
        const char *gv[64];
        size_t ng = 0;
        cJSON_ArrayForEach(g, groups) if (cJSON_IsString(g) && ng < 64) gv[ng++] = g->valuestring;
        /* The groups are taken as given: no system:authenticated is added for a SubjectAccessReview. */
        subject = ks_user_new(user ? user : "", uid, gv, ng);
        if (!str_in(groups, "system:authenticated"))
            free(subject->groups[--subject->n_groups]); /* the one ks_user_new added */
    }
    char reason[1400];
    bool allowed = ks_authorize(subject ? subject : req->user, &a, reason, sizeof(reason));
    ks_user_free(subject);
    cJSON *st = cJSON_AddObjectToObject(out, "status");
    cJSON_AddBoolToObject(st, "allowed", allowed);
    if (*reason)
        cJSON_AddStringToObject(st, "reason", reason);
    ks_reply_json(reply, 201, out);
    return true;
}

void ks_rbac_free(void)
{
    cJSON_Delete(builtins);
    builtins = NULL;
}
