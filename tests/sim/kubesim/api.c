/* api.c -- the REST verbs of kubesim: routing of resource paths, get/list/watch/create/update/patch/
 * delete with the apiserver's resourceVersion, generation, status-subresource, finalizer, graceful
 * pod deletion and simple garbage-collection rules (kube-api.md sections 2 and 5). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

#define MAX_NAME 253

struct ctx {
    const struct ks_req *req;
    struct ks_reply *reply;
    struct ks_resource *res;
    char *ns;   /* from the URL, or NULL */
    char *name; /* from the URL, or NULL */
    char *sub;  /* "status", "scale" or NULL */
    bool table;
};

static const char *q(const struct ctx *c, const char *key)
{
    return c->req->query(c->req->query_ctx, key);
}

static bool qbool(const struct ctx *c, const char *key)
{
    const char *v = q(c, key);
    return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

/* ---- errors ---- */

static void reply_err(struct ks_reply *r, int code, const char *reason, const struct ks_resource *res,
                      const char *name, cJSON *causes, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static void reply_err(struct ks_reply *r, int code, const char *reason, const struct ks_resource *res,
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

static void not_found(struct ks_reply *r, const struct ks_resource *res, const char *name)
{
    char qn[300];
    ks_resource_qualified(res, qn, sizeof(qn));
    reply_err(r, 404, "NotFound", res, name, NULL, "%s \"%s\" not found", qn, name);
}

static void conflict(struct ks_reply *r, const struct ks_resource *res, const char *name, const char *why)
{
    char qn[300];
    ks_resource_qualified(res, qn, sizeof(qn));
    reply_err(r, 409, "Conflict", res, name, NULL, "Operation cannot be fulfilled on %s \"%s\": %s", qn, name,
              why);
}

/* 422 with one cause. */
static void invalid(struct ks_reply *r, const struct ks_resource *res, const char *name, cJSON *causes)
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
        reply_err(r, 422, "Invalid", res, name, causes, "%s.%s \"%s\" is invalid: %s%s%s", res->kind,
                  res->group, name ? name : "", many ? "[" : "", text, many ? "]" : "");
    else
        reply_err(r, 422, "Invalid", res, name, causes, "%s \"%s\" is invalid: %s%s%s", res->kind,
                  name ? name : "", many ? "[" : "", text, many ? "]" : "");
}

static void add_cause(cJSON *causes, const char *type, const char *field, const char *msg);

static cJSON *one_cause(const char *type, const char *field, const char *msg)
{
    cJSON *arr = cJSON_CreateArray();
    add_cause(arr, type, field, msg);
    return arr;
}

static void add_cause(cJSON *causes, const char *type, const char *field, const char *msg)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", type);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

/* ---- helpers ---- */

static bool dns_subdomain(const char *s, bool label)
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

static bool is(const struct ks_resource *r, const char *group, const char *plural)
{
    return !strcmp(r->group, group) && !strcmp(r->plural, plural);
}

/* The object as the client asked for it: CRs carry the requested version. */
static cJSON *present(const struct ks_resource *res, const cJSON *obj)
{
    cJSON *o = cJSON_Duplicate(obj, true);
    if (res->flags & KS_CUSTOM) {
        _cleanup_free_ char *av = ks_resource_api_version(res);
        ks_json_set_str(o, "apiVersion", av);
    }
    return o;
}

static void reply_obj(struct ctx *c, int code, const cJSON *obj)
{
    cJSON *o = present(c->res, obj);
    if (c->table) {
        cJSON *t = ks_table(c->res, &o, 1, ks_json_str(o, "metadata.resourceVersion"), true,
                            q(c, "includeObject") && !strcmp(q(c, "includeObject"), "Object"));
        cJSON_Delete(o);
        c->reply->content_type = ks_table_content_type;
        ks_reply_json(c->reply, code, t);
        return;
    }
    ks_reply_json(c->reply, code, o);
}

static const char *obj_rv(const cJSON *o)
{
    const char *rv = ks_json_str(o, "metadata.resourceVersion");
    return rv ? rv : "";
}

static bool has_finalizers(const cJSON *o)
{
    return cJSON_GetArraySize(ks_json_path(o, "metadata.finalizers")) > 0;
}

/* Storage resources (one per group/plural), each visited once. */
#define FOREACH_STORAGE(r)                                                                                   \
    for (struct ks_resource *r = ks_resource_first(); r; r = r->next)                                        \
        if (ks_resource_any(r->group, r->plural) == r)

/* Go's omitempty drops empty maps and lists; apiVersion, kind and metadata print first. */
static void normalize(cJSON *obj)
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

/* ---- defaults (the few the simulated controllers and kubectl rely on) ---- */

static void default_num(cJSON *o, const char *key, double v)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddNumberToObject(o, key, v);
}

static void default_str(cJSON *o, const char *key, const char *v)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddStringToObject(o, key, v);
}

static void apply_defaults(const struct ks_resource *res, cJSON *obj)
{
    if (is(res, "", "pods")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_str(spec, "restartPolicy", "Always");
        default_num(spec, "terminationGracePeriodSeconds", 30);
        default_str(spec, "dnsPolicy", "ClusterFirst");
        default_str(spec, "schedulerName", "default-scheduler");
    } else if (is(res, "apps", "statefulsets")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_num(spec, "replicas", 1);
        default_str(spec, "podManagementPolicy", "OrderedReady");
        default_num(spec, "revisionHistoryLimit", 10);
        if (!cJSON_GetObjectItemCaseSensitive(spec, "updateStrategy"))
            cJSON_AddItemToObject(
                spec, "updateStrategy",
                cJSON_Parse("{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"partition\":0}}"));
    } else if (is(res, "apps", "deployments")) {
        default_num(ks_json_obj(obj, "spec"), "replicas", 1);
    } else if (is(res, "", "services")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_str(spec, "type", "ClusterIP");
        default_str(spec, "sessionAffinity", "None");
        if (!cJSON_GetObjectItemCaseSensitive(spec, "clusterIP")) {
            unsigned char b[2];
            ks_random_suffix((char *)b, 2);
            char ip[32];
            snprintf(ip, sizeof(ip), "10.96.%u.%u", b[0] % 250 + 1, b[1] % 250 + 2);
            cJSON_AddStringToObject(spec, "clusterIP", ip);
        }
        cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(spec, "ports"))
        {
            default_str(p, "protocol", "TCP");
            const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
            if (cJSON_IsNumber(port))
                default_num(p, "targetPort", port->valuedouble);
        }
    }
}

/* ---- CR schema handling ---- */

/* Validates and prunes a custom resource. Returns false with the reply set on failure. */
static bool check_custom(struct ctx *c, cJSON *obj, const char *name)
{
    const struct ks_resource *res = c->res;
    if (!(res->flags & KS_CUSTOM) || !res->schema)
        return true;
    _cleanup_json_ cJSON *pruned = cJSON_CreateArray();
    cJSON *causes = ks_schema_validate(res->schema, obj, pruned);
    if (cJSON_GetArraySize(causes) > 0) {
        invalid(c->reply, res, name, causes);
        return false;
    }
    cJSON_Delete(causes);
    const char *fv = q(c, "fieldValidation");
    if (cJSON_GetArraySize(pruned) > 0 && fv && !strcmp(fv, "Strict")) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "strict decoding error: unknown field \"%s\"", cJSON_GetArrayItem(pruned, 0)->valuestring);
        return false;
    }
    if (cJSON_GetArraySize(pruned) > 0 && fv && !strcmp(fv, "Warn")) {
        free(c->reply->warning);
        c->reply->warning =
            rss_xasprintf("299 - \"unknown field \\\"%s\\\"\"", cJSON_GetArrayItem(pruned, 0)->valuestring);
    }
    return true;
}

static bool check_crd(struct ctx *c, cJSON *obj, const char *name)
{
    const char *group = ks_json_str(obj, "spec.group");
    const char *plural = ks_json_str(obj, "spec.names.plural");
    const char *kind = ks_json_str(obj, "spec.names.kind");
    cJSON *causes = cJSON_CreateArray();
    if (!group || !*group)
        add_cause(causes, "FieldValueRequired", "spec.group", "Required value");
    if (!plural || !*plural)
        add_cause(causes, "FieldValueRequired", "spec.names.plural", "Required value");
    if (!kind || !*kind)
        add_cause(causes, "FieldValueRequired", "spec.names.kind", "Required value");
    if (group && plural) {
        _cleanup_free_ char *want = rss_xasprintf("%s.%s", plural, group);
        if (strcmp(want, name)) {
            _cleanup_free_ char *m =
                rss_xasprintf("Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name);
            add_cause(causes, "FieldValueInvalid", "metadata.name", m);
        }
    }
    int storage = 0, n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, ks_json_path(obj, "spec.versions"))
    {
        n++;
        storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        if (!cJSON_IsObject(ks_json_path(v, "schema.openAPIV3Schema"))) {
            _cleanup_free_ char *f = rss_xasprintf("spec.versions[%d].schema.openAPIV3Schema", n - 1);
            add_cause(causes, "FieldValueRequired", f, "Required value: schemas are required");
        }
    }
    if (!n)
        add_cause(causes, "FieldValueRequired", "spec.versions",
                  "Required value: must have exactly one version marked as storage version");
    else if (storage != 1)
        add_cause(causes, "FieldValueInvalid", "spec.versions",
                  "Invalid value: must have exactly one version marked as storage version");
    if (cJSON_GetArraySize(causes)) {
        invalid(c->reply, c->res, name, causes);
        return false;
    }
    cJSON_Delete(causes);
    /* Established at once (kube-api.md 4.6). */
    cJSON *status = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    _cleanup_free_ char *now = ks_time_now(0);
    const char *types[] = {"NamesAccepted", "Established"};
    const char *reasons[] = {"NoConflicts", "InitialNamesAccepted"};
    for (int i = 0; i < 2; i++) {
        cJSON *cd = cJSON_CreateObject();
        cJSON_AddStringToObject(cd, "type", types[i]);
        cJSON_AddStringToObject(cd, "status", "True");
        cJSON_AddStringToObject(cd, "lastTransitionTime", now);
        cJSON_AddStringToObject(cd, "reason", reasons[i]);
        cJSON_AddStringToObject(cd, "message",
                                i ? "the initial names have been accepted" : "no conflicts found");
        cJSON_AddItemToArray(conds, cd);
    }
    cJSON *names = cJSON_Duplicate(ks_json_path(obj, "spec.names"), true);
    if (!ks_json_str(names, "singular")) {
        _cleanup_free_ char *l = rss_xstrdup(kind);
        for (char *p = l; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        cJSON_AddStringToObject(names, "singular", l);
    }
    if (!ks_json_str(names, "listKind")) {
        _cleanup_free_ char *lk = rss_xasprintf("%sList", kind);
        cJSON_AddStringToObject(names, "listKind", lk);
    }
    ks_json_set(ks_json_obj(obj, "spec"), "names", cJSON_Duplicate(names, true));
    cJSON_AddItemToObject(status, "acceptedNames", names);
    cJSON *stored = cJSON_AddArrayToObject(status, "storedVersions");
    cJSON_ArrayForEach(v, ks_json_path(obj, "spec.versions"))
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
            cJSON_AddItemToArray(stored, cJSON_CreateString(ks_json_str(v, "name")));
    }
    default_str(ks_json_obj(obj, "spec"), "scope", "Namespaced");
    ks_json_set(obj, "status", status);
    return true;
}

/* ---- removal and cascades (lock held) ---- */

static void delete_object(struct ks_resource *res, struct ks_snap *snap, long grace, const char *policy,
                          struct ks_snap **removed, cJSON **updated);

/* After an object is gone: namespace content, CRD custom resources, and owner-reference
 * dependents (the garbage collector's job, done at once here). */
static void after_removal(struct ks_resource *res, const cJSON *gone, const char *policy)
{
    const char *uid = ks_json_str(gone, "metadata.uid");
    const char *name = ks_json_str(gone, "metadata.name");
    if (is(res, "", "namespaces")) {
        FOREACH_STORAGE(r)
        {
            if (!r->namespaced)
                continue;
            size_t n;
            struct ks_snap **v = ks_store_list(r->group, r->plural, name, &n);
            for (size_t i = 0; i < n; i++)
                ks_snap_unref(ks_store_remove(r->group, r->plural, name,
                                              ks_json_str(v[i]->obj, "metadata.name"), "DELETE"));
            ks_snaps_free(v, n);
        }
    }
    if (is(res, "apiextensions.k8s.io", "customresourcedefinitions")) {
        const char *group = ks_json_str(gone, "spec.group"), *plural = ks_json_str(gone, "spec.names.plural");
        if (group && plural) {
            size_t n;
            struct ks_snap **v = ks_store_list(group, plural, NULL, &n);
            for (size_t i = 0; i < n; i++)
                ks_snap_unref(ks_store_remove(group, plural, ks_json_str(v[i]->obj, "metadata.namespace"),
                                              ks_json_str(v[i]->obj, "metadata.name"), "DELETE"));
            ks_snaps_free(v, n);
            ks_registry_crd_remove(group, plural);
        }
    }
    if (!uid)
        return;
    const char *owner_ns = res->namespaced ? ks_json_str(gone, "metadata.namespace") : NULL;
    bool orphan = policy && !strcmp(policy, "Orphan");
    FOREACH_STORAGE(r)
    {
        size_t n;
        struct ks_snap **v = ks_store_list(r->group, r->plural, owner_ns, &n);
        for (size_t i = 0; i < n; i++) {
            const cJSON *refs = ks_json_path(v[i]->obj, "metadata.ownerReferences");
            int idx = -1, k = 0;
            const cJSON *ref;
            cJSON_ArrayForEach(ref, refs)
            {
                const char *ru = ks_json_str(ref, "uid");
                if (ru && !strcmp(ru, uid))
                    idx = k;
                k++;
            }
            if (idx < 0)
                continue;
            struct ks_snap *cur =
                ks_store_get(r->group, r->plural, ks_json_str(v[i]->obj, "metadata.namespace"),
                             ks_json_str(v[i]->obj, "metadata.name"));
            if (cur != v[i])
                continue; /* already changed by an earlier cascade step */
            if (orphan || cJSON_GetArraySize(refs) > 1) {
                /* Orphaned, or other owners remain: only drop this owner reference. */
                cJSON *o = cJSON_Duplicate(cur->obj, true);
                cJSON_DeleteItemFromArray(ks_json_path(o, "metadata.ownerReferences"), idx);
                ks_store_put(r->group, r->plural, ks_json_str(o, "metadata.namespace"), o, "PUT");
                continue;
            }
            struct ks_snap *gone_dep = NULL;
            cJSON *upd = NULL;
            delete_object(r, cur, -1, "Background", &gone_dep, &upd);
            ks_snap_unref(gone_dep);
            cJSON_Delete(upd);
        }
        ks_snaps_free(v, n);
    }
}

static void remove_now(struct ks_resource *res, const cJSON *obj, const char *policy,
                       struct ks_snap **removed)
{
    struct ks_snap *gone = ks_store_remove(res->group, res->plural, ks_json_str(obj, "metadata.namespace"),
                                           ks_json_str(obj, "metadata.name"), "DELETE");
    if (gone)
        after_removal(res, gone->obj, policy);
    *removed = gone;
}

/* Deletes per the apiserver's rules. On removal *removed gets the final snapshot (ref); when the
 * object stays (finalizers, graceful pod) *updated gets a copy of its new state. */
static void delete_object(struct ks_resource *res, struct ks_snap *snap, long grace, const char *policy,
                          struct ks_snap **removed, cJSON **updated)
{
    const cJSON *cur = snap->obj;
    *removed = NULL;
    *updated = NULL;
    if (is(res, "", "pods")) {
        long g = grace;
        if (g < 0) {
            const cJSON *t = ks_json_path(cur, "spec.terminationGracePeriodSeconds");
            g = cJSON_IsNumber(t) ? (long)t->valuedouble : 30;
        }
        const char *node = ks_json_str(cur, "spec.nodeName");
        const char *phase = ks_json_str(cur, "status.phase");
        if (!node || !*node || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            g = 0;
        if (g > 0) {
            const cJSON *old = ks_json_path(cur, "metadata.deletionGracePeriodSeconds");
            if (ks_json_path(cur, "metadata.deletionTimestamp") && cJSON_IsNumber(old) &&
                old->valuedouble <= g) {
                *updated = cJSON_Duplicate(cur, true);
                return;
            }
            cJSON *o = cJSON_Duplicate(cur, true);
            cJSON *md = ks_json_obj(o, "metadata");
            _cleanup_free_ char *when = ks_time_now(g);
            ks_json_set_str(md, "deletionTimestamp", when);
            ks_json_set_num(md, "deletionGracePeriodSeconds", (double)g);
            struct ks_snap *s =
                ks_store_put(res->group, res->plural, ks_json_str(o, "metadata.namespace"), o, "DELETE");
            *updated = cJSON_Duplicate(s->obj, true);
            return;
        }
    }
    if (has_finalizers(cur)) {
        if (ks_json_path(cur, "metadata.deletionTimestamp")) {
            *updated = cJSON_Duplicate(cur, true);
            return;
        }
        cJSON *o = cJSON_Duplicate(cur, true);
        cJSON *md = ks_json_obj(o, "metadata");
        _cleanup_free_ char *now = ks_time_now(0);
        ks_json_set_str(md, "deletionTimestamp", now);
        ks_json_set_num(md, "deletionGracePeriodSeconds", 0);
        struct ks_snap *s =
            ks_store_put(res->group, res->plural, ks_json_str(o, "metadata.namespace"), o, "DELETE");
        *updated = cJSON_Duplicate(s->obj, true);
        return;
    }
    remove_now(res, cur, policy, removed);
}

/* ---- write paths (lock held) ---- */

static const char *const server_fields[] = {"uid",
                                            "resourceVersion",
                                            "creationTimestamp",
                                            "deletionTimestamp",
                                            "deletionGracePeriodSeconds",
                                            "generation",
                                            "managedFields",
                                            "selfLink",
                                            NULL};

/* Prepares a new object for create; returns false with the reply set. */
static bool prepare_create(struct ctx *c, cJSON *obj)
{
    struct ks_resource *res = c->res;
    if (!cJSON_IsObject(obj)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the body of the request must be a JSON object");
        return false;
    }
    const char *kind = ks_json_str(obj, "kind");
    if (kind && strcmp(kind, res->kind)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the kind in the data (%s) does not match the expected kind (%s)", kind, res->kind);
        return false;
    }
    _cleanup_free_ char *av = ks_resource_api_version(res);
    ks_json_set_str(obj, "apiVersion", av);
    ks_json_set_str(obj, "kind", res->kind);
    cJSON *md = ks_json_obj(obj, "metadata");
    for (const char *const *f = server_fields; *f; f++)
        cJSON_DeleteItemFromObjectCaseSensitive(md, *f);
    if (res->namespaced) {
        const char *bns = ks_json_str(md, "namespace");
        if (bns && *bns && c->ns && strcmp(bns, c->ns)) {
            reply_err(
                c->reply, 400, "BadRequest", NULL, NULL, NULL,
                "the namespace of the provided object does not match the namespace sent on the request");
            return false;
        }
        if (c->ns)
            ks_json_set_str(md, "namespace", c->ns);
        const char *ns = ks_json_str(md, "namespace");
        if (!ns || !ks_store_get("", "namespaces", "", ns)) {
            reply_err(c->reply, 404, "NotFound", ks_resource_find("", "v1", "namespaces"), ns ? ns : "", NULL,
                      "namespaces \"%s\" not found", ns ? ns : "");
            return false;
        }
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "namespace");
    }
    const char *name = ks_json_str(md, "name");
    const char *gen = ks_json_str(md, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char suffix[6] = {0};
        ks_random_suffix(suffix, 5);
        _cleanup_free_ char *n = rss_xasprintf("%s%s", gen, suffix);
        ks_json_set_str(md, "name", n);
        name = ks_json_str(md, "name");
    }
    if (!name || !*name) {
        invalid(c->reply, res, "",
                one_cause("FieldValueRequired", "metadata.name",
                          "Required value: name or generateName is required"));
        return false;
    }
    if (strcmp(res->group, "rbac.authorization.k8s.io") &&
        !dns_subdomain(name, is(res, "", "namespaces") || is(res, "", "services"))) {
        _cleanup_free_ char *m = rss_xasprintf(
            "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character",
            name);
        invalid(c->reply, res, name, one_cause("FieldValueInvalid", "metadata.name", m));
        return false;
    }
    if (c->name && strcmp(c->name, name)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the name of the object (%s) does not match the name on the URL (%s)", name, c->name);
        return false;
    }
    _cleanup_free_ char *uid = ks_uuid();
    _cleanup_free_ char *now = ks_time_now(0);
    ks_json_set_str(md, "uid", uid);
    ks_json_set_str(md, "creationTimestamp", now);
    if (res->flags & KS_GENERATION)
        ks_json_set_num(md, "generation", 1);
    if ((res->flags & KS_STATUS) && !(res->flags & KS_KEEP_STATUS_ON_CREATE))
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (is(res, "", "pods"))
        ks_json_set(obj, "status", cJSON_Parse("{\"phase\":\"Pending\",\"qosClass\":\"BestEffort\"}"));
    if (is(res, "", "namespaces"))
        ks_json_set(obj, "status", cJSON_Parse("{\"phase\":\"Active\"}"));
    apply_defaults(res, obj);
    if (!check_custom(c, obj, name))
        return false;
    if (is(res, "apiextensions.k8s.io", "customresourcedefinitions") && !check_crd(c, obj, name))
        return false;
    return true;
}

/* Commits a create (lock held): 409 AlreadyExists or 201. Takes obj. */
static void do_create(struct ctx *c, cJSON *obj, const char *verb)
{
    if (!prepare_create(c, obj)) {
        cJSON_Delete(obj);
        return;
    }
    const char *name = ks_json_str(obj, "metadata.name");
    const char *ns = ks_json_str(obj, "metadata.namespace");
    if (ks_store_get(c->res->group, c->res->plural, ns, name)) {
        char qn[300];
        ks_resource_qualified(c->res, qn, sizeof(qn));
        reply_err(c->reply, 409, "AlreadyExists", c->res, name, NULL, "%s \"%s\" already exists", qn, name);
        cJSON_Delete(obj);
        return;
    }
    normalize(obj);
    if (q(c, "dryRun")) {
        reply_obj(c, 201, obj);
        cJSON_Delete(obj);
        return;
    }
    struct ks_snap *s = ks_store_put(c->res->group, c->res->plural, ns, obj, verb);
    if (is(c->res, "apiextensions.k8s.io", "customresourcedefinitions"))
        ks_registry_crd_apply(s->obj);
    reply_obj(c, 201, s->obj);
}

/* Everything outside metadata (and status, when it has its own endpoint) equal? */
static bool same_spec(const struct ks_resource *res, const cJSON *a, const cJSON *b)
{
    _cleanup_json_ cJSON *x = cJSON_Duplicate(a, true);
    _cleanup_json_ cJSON *y = cJSON_Duplicate(b, true);
    cJSON_DeleteItemFromObjectCaseSensitive(x, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(y, "metadata");
    if (res->flags & KS_STATUS) {
        cJSON_DeleteItemFromObjectCaseSensitive(x, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(y, "status");
    }
    return cJSON_Compare(x, y, true);
}

/* The shared tail of PUT and PATCH (lock held): `in` (taken) is the full desired object. */
static void do_update(struct ctx *c, struct ks_snap *old, cJSON *in, const char *verb)
{
    struct ks_resource *res = c->res;
    const cJSON *o = old->obj;
    const char *name = c->name;
    if (!cJSON_IsObject(in)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the body of the request must be a JSON object");
        cJSON_Delete(in);
        return;
    }
    const char *bname = ks_json_str(in, "metadata.name");
    if (bname && strcmp(bname, name)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the name of the object (%s) does not match the name on the URL (%s)", bname, name);
        cJSON_Delete(in);
        return;
    }
    const char *bns = ks_json_str(in, "metadata.namespace");
    if (res->namespaced && bns && *bns && strcmp(bns, c->ns)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the namespace of the provided object does not match the namespace sent on the request");
        cJSON_Delete(in);
        return;
    }
    const char *rv = ks_json_str(in, "metadata.resourceVersion");
    if (!rv || !*rv) {
        if (res->flags & KS_NO_UNCONDITIONAL) {
            invalid(c->reply, res, name,
                    one_cause("FieldValueInvalid", "metadata.resourceVersion",
                              "Invalid value: 0x0: must be specified for an update"));
            cJSON_Delete(in);
            return;
        }
    } else if (strcmp(rv, obj_rv(o))) {
        conflict(
            c->reply, res, name,
            "the object has been modified; please apply your changes to the latest version and try again");
        cJSON_Delete(in);
        return;
    }
    cJSON *out;
    bool status_only = c->sub && !strcmp(c->sub, "status");
    if (status_only) {
        /* /status copies in only .status (status_strategy.go). */
        out = cJSON_Duplicate(o, true);
        cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(in, "status");
        if (st)
            ks_json_set(out, "status", st);
        else
            cJSON_DeleteItemFromObjectCaseSensitive(out, "status");
        cJSON_Delete(in);
    } else {
        out = in;
        _cleanup_free_ char *av = ks_resource_api_version(res);
        ks_json_set_str(out, "apiVersion", av);
        ks_json_set_str(out, "kind", res->kind);
        cJSON *md = ks_json_obj(out, "metadata");
        const cJSON *omd = cJSON_GetObjectItemCaseSensitive(o, "metadata");
        const char *keep[] = {
            "uid",  "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
            "name", "namespace"};
        for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(omd, keep[i]);
            if (v)
                ks_json_set(md, keep[i], cJSON_Duplicate(v, true));
            else
                cJSON_DeleteItemFromObjectCaseSensitive(md, keep[i]);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
        if (res->flags & KS_STATUS) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
            if (st)
                ks_json_set(out, "status", cJSON_Duplicate(st, true));
            else
                cJSON_DeleteItemFromObjectCaseSensitive(out, "status");
        }
        if (ks_json_path(o, "metadata.deletionTimestamp")) {
            const cJSON *f;
            cJSON_ArrayForEach(f, ks_json_path(out, "metadata.finalizers"))
            {
                bool had = false;
                const cJSON *g;
                cJSON_ArrayForEach(g, ks_json_path(o, "metadata.finalizers")) had =
                    had || cJSON_Compare(f, g, true);
                if (!had) {
                    invalid(c->reply, res, name,
                            one_cause(
                                "FieldValueForbidden", "metadata.finalizers",
                                "Forbidden: no new finalizers can be added if the object is being deleted"));
                    cJSON_Delete(out);
                    return;
                }
            }
        }
        apply_defaults(res, out);
    }
    if (!check_custom(c, out, name)) {
        cJSON_Delete(out);
        return;
    }
    if (is(res, "apiextensions.k8s.io", "customresourcedefinitions") && !status_only) {
        cJSON *keep_status = cJSON_DetachItemFromObjectCaseSensitive(out, "status");
        if (!check_crd(c, out, name)) {
            cJSON_Delete(keep_status);
            cJSON_Delete(out);
            return;
        }
        cJSON_Delete(keep_status);
    }
    cJSON *md = ks_json_obj(out, "metadata");
    if ((res->flags & KS_GENERATION) && !status_only && !same_spec(res, o, out)) {
        const cJSON *g = ks_json_path(o, "metadata.generation");
        ks_json_set_num(md, "generation", (cJSON_IsNumber(g) ? g->valuedouble : 0) + 1);
    }
    ks_json_set_str(md, "resourceVersion", obj_rv(o));
    normalize(out);
    if (cJSON_Compare(out, o, true)) {
        /* A no-op write keeps the resourceVersion and makes no event. */
        cJSON_Delete(out);
        reply_obj(c, 200, o);
        return;
    }
    if (q(c, "dryRun")) {
        reply_obj(c, 200, out);
        cJSON_Delete(out);
        return;
    }
    if (ks_json_path(out, "metadata.deletionTimestamp") && !has_finalizers(out) &&
        !(is(res, "", "pods") && ks_json_path(out, "metadata.deletionGracePeriodSeconds") &&
          ks_json_path(out, "metadata.deletionGracePeriodSeconds")->valuedouble > 0)) {
        /* The last finalizer went away: the object goes. */
        struct ks_snap *s =
            ks_store_put(res->group, res->plural, ks_json_str(out, "metadata.namespace"), out, verb);
        cJSON *final = cJSON_Duplicate(s->obj, true);
        struct ks_snap *gone = NULL;
        remove_now(res, final, "Background", &gone);
        ks_snap_unref(gone);
        reply_obj(c, 200, final);
        cJSON_Delete(final);
        return;
    }
    struct ks_snap *s =
        ks_store_put(res->group, res->plural, ks_json_str(out, "metadata.namespace"), out, verb);
    if (is(res, "apiextensions.k8s.io", "customresourcedefinitions"))
        ks_registry_crd_apply(s->obj);
    reply_obj(c, 200, s->obj);
}

/* ---- scale subresource ---- */

static const char *scale_spec_path(const struct ks_resource *r)
{
    return r->scale_spec ? r->scale_spec + (r->scale_spec[0] == '.') : "spec.replicas";
}

static cJSON *scale_of(const struct ks_resource *r, const cJSON *o)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "Scale");
    cJSON_AddStringToObject(s, "apiVersion", "autoscaling/v1");
    cJSON *md = cJSON_AddObjectToObject(s, "metadata");
    const char *keys[] = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"};
    for (size_t i = 0; i < 5; i++) {
        const cJSON *v = ks_json_path(ks_json_path(o, "metadata"), keys[i]);
        if (v)
            cJSON_AddItemToObject(md, keys[i], cJSON_Duplicate(v, true));
    }
    const cJSON *sp = ks_json_path(o, scale_spec_path(r));
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(s, "spec"), "replicas",
                            cJSON_IsNumber(sp) ? sp->valuedouble : 0);
    const cJSON *st =
        ks_json_path(o, r->scale_status ? r->scale_status + (r->scale_status[0] == '.') : "status.replicas");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(s, "status"), "replicas",
                            cJSON_IsNumber(st) ? st->valuedouble : 0);
    return s;
}

/* Sets the dotted path (creating objects) to a number. */
static void set_path_num(cJSON *o, const char *dotted, double v)
{
    _cleanup_free_ char *copy = rss_xstrdup(dotted);
    char *save = NULL, *tok = strtok_r(copy, ".", &save);
    cJSON *cur = o;
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) {
            ks_json_set_num(cur, tok, v);
            return;
        }
        cur = ks_json_obj(cur, tok);
        tok = next;
    }
}

/* ---- verbs ---- */

static cJSON *parse_body(struct ctx *c)
{
    const char *ct = c->req->content_type;
    if (ct && strstr(ct, "protobuf")) {
        /* kubectl's imperative generators (`create configmap`, ...) send protobuf; kubesim
         * only speaks JSON, so say so plainly (docs/kubesim.md). */
        reply_err(c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
                  "kubesim does not decode protobuf request bodies (%s); send application/json", ct);
        return NULL;
    }
    if (!c->req->body || !c->req->body_len) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "the request body is empty");
        return NULL;
    }
    cJSON *o = cJSON_ParseWithLength(c->req->body, c->req->body_len);
    if (!o) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  "the body of the request was in an unknown format - accepted media types include: "
                  "application/json, application/yaml, application/vnd.kubernetes.protobuf");
    }
    return o;
}

static void do_get(struct ctx *c)
{
    ks_lock();
    struct ks_snap *s = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!s)
        not_found(c->reply, c->res, c->name);
    else if (c->sub && !strcmp(c->sub, "scale"))
        ks_reply_json(c->reply, 200, scale_of(c->res, s->obj));
    else
        reply_obj(c, 200, s->obj);
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
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "invalid resource version: %s", s);
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
    *labels = ks_label_selector_parse(q(c, "labelSelector"), err, sizeof(err));
    if (!*labels) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "unable to parse requirement: %s", err);
        return false;
    }
    *fields = ks_field_selector_parse(q(c, "fieldSelector"), c->res, err, sizeof(err));
    if (!*fields) {
        ks_selector_free(*labels);
        *labels = NULL;
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "%s", err);
        return false;
    }
    return true;
}

static void do_watch(struct ctx *c)
{
    struct ks_watch_opts o = {0};
    if (!parse_selectors(c, &o.labels, &o.fields))
        return;
    uint64_t rv;
    if (!parse_rv(c, q(c, "resourceVersion"), &rv)) {
        ks_selector_free(o.labels);
        ks_selector_free(o.fields);
        return;
    }
    o.res = c->res;
    o.ns = c->ns ? rss_xstrdup(c->ns) : NULL;
    o.bookmarks = qbool(c, "allowWatchBookmarks");
    o.table = c->table;
    const char *ts = q(c, "timeoutSeconds");
    o.timeout_s = ts ? atol(ts) : 0;
    if (o.timeout_s <= 0)
        o.timeout_s = 1800 + rand() % 1800; /* --min-request-timeout: [1800, 3600) */
    ks_lock();
    uint64_t cur = ks_store_rv();
    if (qbool(c, "sendInitialEvents")) {
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

static void do_list(struct ctx *c)
{
    struct ks_selector *labels, *fields;
    if (!parse_selectors(c, &labels, &fields))
        return;
    const char *lim = q(c, "limit");
    long limit = lim ? atol(lim) : 0;
    const char *cont = q(c, "continue");
    _cleanup_free_ char *after = NULL;
    _cleanup_free_ char *next = NULL;
    uint64_t list_rv = 0;
    if (cont && *cont) {
        _cleanup_free_ char *tok = hex_decode(cont);
        char *sep = tok ? strchr(tok, '\x1f') : NULL;
        if (!sep) {
            reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "continue key is not valid: %s", cont);
            goto out;
        }
        *sep = '\0';
        list_rv = strtoull(tok, NULL, 10);
        after = rss_xstrdup(sep + 1);
    }
    ks_lock();
    if (after && list_rv < ks_store_compacted()) {
        ks_unlock();
        reply_err(
            c->reply, 410, "Expired", NULL, NULL, NULL,
            "The provided continue parameter is too old to display a consistent list result. You can start a "
            "new list without the continue parameter, or use the continue token in this response to "
            "retrieve the remainder of the results. Continuing with the provided token results in an "
            "inconsistent list - objects that were created, modified, or deleted between the time the first "
            "chunk was returned and now may show up in the list.");
        goto out;
    }
    uint64_t rvq;
    const char *rvs = q(c, "resourceVersion");
    if (!after && rvs && *rvs && parse_rv(c, rvs, &rvq) && rvq && rvq < ks_store_compacted() && limit > 0) {
        ks_unlock();
        reply_err(c->reply, 410, "Expired", NULL, NULL, NULL, "too old resource version: %s (%llu)", rvs,
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
        items[cnt++] = present(c->res, o);
    }
    ks_snaps_free(v, n);
    char rvbuf[32];
    snprintf(rvbuf, sizeof(rvbuf), "%llu", (unsigned long long)list_rv);
    cJSON *out;
    if (c->table) {
        out = ks_table(c->res, items, cnt, rvbuf, true,
                       q(c, "includeObject") && !strcmp(q(c, "includeObject"), "Object"));
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

static void do_post(struct ctx *c)
{
    cJSON *obj = parse_body(c);
    if (!obj)
        return;
    ks_lock();
    do_create(c, obj, "POST");
    ks_unlock();
}

static void do_put(struct ctx *c)
{
    cJSON *obj = parse_body(c);
    if (!obj)
        return;
    ks_lock();
    struct ks_snap *old = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!old) {
        if ((c->res->flags & KS_CREATE_ON_UPDATE) && !c->sub)
            do_create(c, obj, "PUT");
        else {
            not_found(c->reply, c->res, c->name);
            cJSON_Delete(obj);
        }
    } else if (c->sub && !strcmp(c->sub, "scale")) {
        const cJSON *r = ks_json_path(obj, "spec.replicas");
        const char *rv = ks_json_str(obj, "metadata.resourceVersion");
        cJSON *o = cJSON_Duplicate(old->obj, true);
        set_path_num(o, scale_spec_path(c->res), cJSON_IsNumber(r) ? r->valuedouble : 0);
        if (rv)
            ks_json_set_str(ks_json_obj(o, "metadata"), "resourceVersion", rv);
        cJSON_Delete(obj);
        c->sub = NULL;
        do_update(c, old, o, "PUT");
        if (c->reply->code == 200) {
            cJSON *full = cJSON_Parse(c->reply->body);
            ks_reply_json(c->reply, 200, scale_of(c->res, full));
            cJSON_Delete(full);
        }
    } else {
        do_update(c, old, obj, "PUT");
    }
    ks_unlock();
}

static void do_patch(struct ctx *c)
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
        reply_err(c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
                  "the body of the request was in an unknown format - accepted media types include: "
                  "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml%s",
                  (c->res->flags & KS_CUSTOM) ? "" : ", application/strategic-merge-patch+json");
        return;
    }
    if (type == SMP && (c->res->flags & KS_CUSTOM)) {
        reply_err(c->reply, 415, "UnsupportedMediaType", NULL, NULL, NULL,
                  "the body of the request was in an unknown format - accepted media types include: "
                  "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
        return;
    }
    cJSON *patch = c->req->body ? cJSON_ParseWithLength(c->req->body, c->req->body_len) : NULL;
    if (!patch) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                  type == APPLY ? "kubesim accepts only JSON bodies for server-side apply"
                                : "error decoding patch: invalid JSON");
        return;
    }
    if (type != JSONP && !cJSON_IsObject(patch)) {
        reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "error decoding patch: not a JSON object");
        cJSON_Delete(patch);
        return;
    }
    ks_lock();
    struct ks_snap *old = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!old) {
        if (type == APPLY && !c->sub) {
            do_create(c, patch, "PATCH");
            ks_unlock();
            return;
        }
        not_found(c->reply, c->res, c->name);
        goto out;
    }
    bool scale = c->sub && !strcmp(c->sub, "scale");
    cJSON *base = scale ? scale_of(c->res, old->obj) : cJSON_Duplicate(old->obj, true);
    cJSON *patched = NULL;
    if (type == JSONP) {
        char err[512];
        int code = 422;
        patched = ks_json_patch(base, patch, &code, err, sizeof(err));
        cJSON_Delete(base);
        if (!patched) {
            reply_err(c->reply, code, code == 400 ? "BadRequest" : "Invalid", NULL, NULL, NULL, "%s", err);
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
        set_path_num(o, scale_spec_path(c->res), cJSON_IsNumber(r) ? r->valuedouble : 0);
        cJSON_Delete(patched);
        c->sub = NULL;
        do_update(c, old, o, "PATCH");
        if (c->reply->code == 200) {
            cJSON *full = cJSON_Parse(c->reply->body);
            ks_reply_json(c->reply, 200, scale_of(c->res, full));
            cJSON_Delete(full);
        }
    } else {
        do_update(c, old, patched, "PATCH");
    }
out:
    ks_unlock();
    cJSON_Delete(patch);
}

static void do_delete(struct ctx *c)
{
    _cleanup_json_ cJSON *opts = NULL;
    if (c->req->body && c->req->body_len) {
        opts = cJSON_ParseWithLength(c->req->body, c->req->body_len);
        if (!opts) {
            reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "invalid DeleteOptions body");
            return;
        }
    }
    long grace = -1;
    const cJSON *g = ks_json_path(opts, "gracePeriodSeconds");
    if (cJSON_IsNumber(g))
        grace = (long)g->valuedouble;
    if (q(c, "gracePeriodSeconds"))
        grace = atol(q(c, "gracePeriodSeconds"));
    const char *policy = ks_json_str(opts, "propagationPolicy");
    if (q(c, "propagationPolicy"))
        policy = q(c, "propagationPolicy");
    const char *puid = ks_json_str(opts, "preconditions.uid");
    const char *prv = ks_json_str(opts, "preconditions.resourceVersion");
    ks_lock();
    struct ks_snap *s = ks_store_get(c->res->group, c->res->plural, c->ns, c->name);
    if (!s) {
        not_found(c->reply, c->res, c->name);
        goto out;
    }
    const char *uid = ks_json_str(s->obj, "metadata.uid");
    if (puid && strcmp(puid, uid ? uid : "")) {
        char why[512];
        snprintf(why, sizeof(why),
                 "StorageError: invalid object, Code: 4, Key: %s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                 c->res->plural, c->name, puid, uid ? uid : "");
        conflict(c->reply, c->res, c->name, why);
        goto out;
    }
    if (prv && strcmp(prv, obj_rv(s->obj))) {
        char why[512];
        snprintf(
            why, sizeof(why),
            "StorageError: invalid object, Code: 4, Key: %s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
            "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
            c->res->plural, c->name, prv, obj_rv(s->obj));
        conflict(c->reply, c->res, c->name, why);
        goto out;
    }
    struct ks_snap *gone = NULL;
    cJSON *upd = NULL;
    if (q(c, "dryRun") || cJSON_GetArraySize(ks_json_path(opts, "dryRun")) > 0) {
        reply_obj(c, 200, s->obj);
        goto out;
    }
    delete_object(c->res, s, grace, policy, &gone, &upd);
    if (upd) {
        reply_obj(c, 200, upd);
        cJSON_Delete(upd);
    } else if (c->res->flags & KS_RETURN_DELETED) {
        reply_obj(c, 200, gone->obj);
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

static void do_delete_collection(struct ctx *c)
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
        delete_object(c->res, cur, -1, "Background", &gone, &upd);
        cJSON_AddItemToArray(items, upd ? upd : present(c->res, gone->obj));
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

/* ---- routing ---- */

static void not_served(struct ks_reply *r)
{
    reply_err(r, 404, "NotFound", NULL, NULL, NULL, "the server could not find the requested resource");
}

void ks_api_handle(const struct ks_req *req, struct ks_reply *reply, const char **verb)
{
    *verb = req->method;
    if (!strcmp(req->method, "GET"))
        *verb = "GET";
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
            bool watch = qbool(&c, "watch");
            *verb = watch ? "WATCH" : "LIST";
            if (watch)
                do_watch(&c);
            else
                do_list(&c);
        } else if (!strcmp(m, "POST")) {
            if (res->namespaced && !c.ns) {
                not_served(reply);
                return;
            }
            do_post(&c);
        } else if (!strcmp(m, "DELETE")) {
            do_delete_collection(&c);
        } else {
            reply_err(reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                      "the server does not allow this method on the requested resource");
        }
        return;
    }
    if (!strcmp(m, "GET"))
        do_get(&c);
    else if (!strcmp(m, "PUT"))
        do_put(&c);
    else if (!strcmp(m, "PATCH"))
        do_patch(&c);
    else if (!strcmp(m, "DELETE") && !c.sub)
        do_delete(&c);
    else
        reply_err(reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                  "the server does not allow this method on the requested resource");
}
