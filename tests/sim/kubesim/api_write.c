/* api_write.c -- kubesim's create and update paths (resourceVersion, generation, status), and scale. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

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

/* The apiserver's limit on an object's annotations, keys and values together (256 KiB): kubectl's
 * last-applied copy of a large object reaches it long before the object reaches etcd's limit. */
#define KS_ANNOTATIONS_MAX 262144
static bool annotations_fit(struct ctx *c, const cJSON *obj, const char *name)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(md, "annotations");
    size_t total = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        total += strlen(e->string);
        if (cJSON_IsString(e))
            total += strlen(e->valuestring);
    }
    if (total <= KS_ANNOTATIONS_MAX)
        return true;
    api_invalid(c->reply, c->res, name,
                api_one_cause("FieldValueTooLong", "metadata.annotations",
                              "Too long: may not be more than 262144 bytes"));
    return false;
}

/* Prepares a new object for create; returns false with the reply set. */
static bool prepare_create(struct ctx *c, cJSON *obj)
{
    struct ks_resource *res = c->res;
    if (!cJSON_IsObject(obj)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "the body of the request must be a JSON object");
        return false;
    }
    const char *kind = ks_json_str(obj, "kind");
    if (kind && strcmp(kind, res->kind)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
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
            api_reply_err(
                c->reply, 400, "BadRequest", NULL, NULL, NULL,
                "the namespace of the provided object does not match the namespace sent on the request");
            return false;
        }
        if (c->ns)
            ks_json_set_str(md, "namespace", c->ns);
        const char *ns = ks_json_str(md, "namespace");
        if (!ns || !ks_store_get("", "namespaces", "", ns)) {
            api_reply_err(c->reply, 404, "NotFound", ks_resource_find("", "v1", "namespaces"), ns ? ns : "",
                          NULL, "namespaces \"%s\" not found", ns ? ns : "");
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
        api_invalid(c->reply, res, "",
                    api_one_cause("FieldValueRequired", "metadata.name",
                                  "Required value: name or generateName is required"));
        return false;
    }
    if (strcmp(res->group, "rbac.authorization.k8s.io") &&
        !api_dns_subdomain(name, api_is(res, "", "namespaces") || api_is(res, "", "services"))) {
        _cleanup_free_ char *m = rss_xasprintf(
            "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character",
            name);
        api_invalid(c->reply, res, name, api_one_cause("FieldValueInvalid", "metadata.name", m));
        return false;
    }
    if (c->name && strcmp(c->name, name)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "the name of the object (%s) does not match the name on the URL (%s)", name, c->name);
        return false;
    }
    if (!annotations_fit(c, obj, name))
        return false;
    _cleanup_free_ char *uid = ks_uuid();
    _cleanup_free_ char *now = ks_time_now(0);
    ks_json_set_str(md, "uid", uid);
    ks_json_set_str(md, "creationTimestamp", now);
    if (res->flags & KS_GENERATION)
        ks_json_set_num(md, "generation", 1);
    if ((res->flags & KS_STATUS) && !(res->flags & KS_KEEP_STATUS_ON_CREATE))
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (api_is(res, "", "pods"))
        ks_json_set(obj, "status", cJSON_Parse("{\"phase\":\"Pending\",\"qosClass\":\"BestEffort\"}"));
    if (api_is(res, "", "namespaces"))
        ks_json_set(obj, "status", cJSON_Parse("{\"phase\":\"Active\"}"));
    api_apply_defaults(res, obj);
    if (!api_check_custom(c, obj, name))
        return false;
    if (api_is(res, "apiextensions.k8s.io", "customresourcedefinitions") && !api_check_crd(c, obj, name))
        return false;
    return true;
}

/* Commits a create (lock held): 409 AlreadyExists or 201. Takes obj. */
void api_do_create(struct ctx *c, cJSON *obj, const char *verb)
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
        api_reply_err(c->reply, 409, "AlreadyExists", c->res, name, NULL, "%s \"%s\" already exists", qn,
                      name);
        cJSON_Delete(obj);
        return;
    }
    api_normalize(obj);
    if (!api_admit_owner_refs(c, obj, NULL) || !api_admit_priority(c, obj)) {
        cJSON_Delete(obj);
        return;
    }
    if (api_q(c, "dryRun")) {
        api_reply_obj(c, 201, obj);
        cJSON_Delete(obj);
        return;
    }
    struct ks_snap *s = ks_store_put(c->res->group, c->res->plural, ns, obj, verb);
    if (api_is(c->res, "apiextensions.k8s.io", "customresourcedefinitions"))
        ks_registry_crd_apply(s->obj);
    if (api_is(c->res, "", "namespaces"))
        ks_default_serviceaccount(name);
    api_reply_obj(c, 201, s->obj);
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
void api_do_update(struct ctx *c, struct ks_snap *old, cJSON *in, const char *verb)
{
    struct ks_resource *res = c->res;
    const cJSON *o = old->obj;
    const char *name = c->name;
    if (!cJSON_IsObject(in)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "the body of the request must be a JSON object");
        cJSON_Delete(in);
        return;
    }
    const char *bname = ks_json_str(in, "metadata.name");
    if (bname && strcmp(bname, name)) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "the name of the object (%s) does not match the name on the URL (%s)", bname, name);
        cJSON_Delete(in);
        return;
    }
    const char *bns = ks_json_str(in, "metadata.namespace");
    if (res->namespaced && bns && *bns && strcmp(bns, c->ns)) {
        api_reply_err(
            c->reply, 400, "BadRequest", NULL, NULL, NULL,
            "the namespace of the provided object does not match the namespace sent on the request");
        cJSON_Delete(in);
        return;
    }
    if (!annotations_fit(c, in, name)) {
        cJSON_Delete(in);
        return;
    }
    const char *rv = ks_json_str(in, "metadata.resourceVersion");
    if (!rv || !*rv) {
        if (res->flags & KS_NO_UNCONDITIONAL) {
            api_invalid(c->reply, res, name,
                        api_one_cause("FieldValueInvalid", "metadata.resourceVersion",
                                      "Invalid value: 0x0: must be specified for an update"));
            cJSON_Delete(in);
            return;
        }
    } else if (strcmp(rv, api_obj_rv(o))) {
        api_conflict(
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
                    api_invalid(
                        c->reply, res, name,
                        api_one_cause(
                            "FieldValueForbidden", "metadata.finalizers",
                            "Forbidden: no new finalizers can be added if the object is being deleted"));
                    cJSON_Delete(out);
                    return;
                }
            }
        }
        api_apply_defaults(res, out);
    }
    if (!api_check_custom(c, out, name)) {
        cJSON_Delete(out);
        return;
    }
    if (api_is(res, "apiextensions.k8s.io", "customresourcedefinitions") && !status_only) {
        cJSON *keep_status = cJSON_DetachItemFromObjectCaseSensitive(out, "status");
        if (!api_check_crd(c, out, name)) {
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
    ks_json_set_str(md, "resourceVersion", api_obj_rv(o));
    api_normalize(out);
    if (!status_only && !api_admit_owner_refs(c, out, o)) {
        cJSON_Delete(out);
        return;
    }
    if (cJSON_Compare(out, o, true)) {
        /* A no-op write keeps the resourceVersion and makes no event. */
        cJSON_Delete(out);
        api_reply_obj(c, 200, o);
        return;
    }
    if (api_q(c, "dryRun")) {
        api_reply_obj(c, 200, out);
        cJSON_Delete(out);
        return;
    }
    if (ks_json_path(out, "metadata.deletionTimestamp") && !api_has_finalizers(out) &&
        !(api_is(res, "", "pods") && ks_json_path(out, "metadata.deletionGracePeriodSeconds") &&
          ks_json_path(out, "metadata.deletionGracePeriodSeconds")->valuedouble > 0)) {
        /* The last finalizer went away: the object goes. */
        struct ks_snap *s =
            ks_store_put(res->group, res->plural, ks_json_str(out, "metadata.namespace"), out, verb);
        cJSON *final = cJSON_Duplicate(s->obj, true);
        struct ks_snap *gone = NULL;
        api_remove_now(res, final, "Background", &gone);
        ks_snap_unref(gone);
        api_reply_obj(c, 200, final);
        cJSON_Delete(final);
        return;
    }
    struct ks_snap *s =
        ks_store_put(res->group, res->plural, ks_json_str(out, "metadata.namespace"), out, verb);
    if (api_is(res, "apiextensions.k8s.io", "customresourcedefinitions"))
        ks_registry_crd_apply(s->obj);
    api_reply_obj(c, 200, s->obj);
}

/* ---- scale subresource ---- */

const char *api_scale_spec_path(const struct ks_resource *r)
{
    return r->scale_spec ? r->scale_spec + (r->scale_spec[0] == '.') : "spec.replicas";
}

cJSON *api_scale_of(const struct ks_resource *r, const cJSON *o)
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
    const cJSON *sp = ks_json_path(o, api_scale_spec_path(r));
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(s, "spec"), "replicas",
                            cJSON_IsNumber(sp) ? sp->valuedouble : 0);
    const cJSON *st =
        ks_json_path(o, r->scale_status ? r->scale_status + (r->scale_status[0] == '.') : "status.replicas");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(s, "status"), "replicas",
                            cJSON_IsNumber(st) ? st->valuedouble : 0);
    return s;
}

/* Sets the dotted path (creating objects) to a number. */
void api_set_path_num(cJSON *o, const char *dotted, double v)
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
