/* api_admission.c -- the admission plugins kubesim runs: OwnerReferencesPermissionEnforcement
 * (kube-apiserver's plugin/pkg/admission/gc), which makes the RBAC rules on the finalizers
 * subresource matter, and Priority (plugin/pkg/admission/priority) for the built-in classes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

static bool refs_equal(const cJSON *a, const cJSON *b)
{
    if (cJSON_GetArraySize(a) == 0 && cJSON_GetArraySize(b) == 0)
        return true;
    return a && b && cJSON_Compare(a, b, true);
}

/* Whether `ref` (blockOwnerDeletion true) was already in old with blockOwnerDeletion true. */
static bool was_blocking(const cJSON *ref, const cJSON *old_refs)
{
    const char *uid = ks_json_str(ref, "uid");
    const cJSON *o;
    cJSON_ArrayForEach(o, old_refs)
    {
        const char *ou = ks_json_str(o, "uid");
        if (uid && ou && !strcmp(uid, ou) &&
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "blockOwnerDeletion")))
            return true;
    }
    return false;
}

static void forbid(struct ctx *c, const char *name, const char *why)
{
    char qn[300];
    ks_resource_qualified(c->res, qn, sizeof(qn));
    api_reply_err(c->reply, 403, "Forbidden", c->res, name, NULL, "%s \"%s\" is forbidden: %s", qn, name,
                  why);
    /* Logged like the authorizer's denials (rbac.c); tests/e2e/rbac_minimal.sh reads them. */
    rss_log_info("403: %s \"%s\" is forbidden: %s (admission, User \"%s\")", qn, name, why,
                 c->req->user->name);
}

bool api_admit_owner_refs(struct ctx *c, const cJSON *obj, const cJSON *old)
{
    const struct ks_user *u = c->req->user;
    if (!u || (c->sub && *c->sub))
        return true;
    const cJSON *refs = ks_json_path(obj, "metadata.ownerReferences");
    const cJSON *old_refs = old ? ks_json_path(old, "metadata.ownerReferences") : NULL;
    if (refs_equal(refs, old_refs))
        return true;
    const char *name = ks_json_str(obj, "metadata.name");
    if (!name)
        name = "";
    char reason[1400];
    if (old) {
        struct ks_attrs a = {.resource_request = true};
        snprintf(a.verb, sizeof(a.verb), "delete");
        snprintf(a.group, sizeof(a.group), "%s", c->res->group);
        snprintf(a.resource, sizeof(a.resource), "%s", c->res->plural);
        snprintf(a.ns, sizeof(a.ns), "%s", c->ns ? c->ns : "");
        snprintf(a.name, sizeof(a.name), "%s", name);
        if (!ks_authorize_locked(u, &a, reason, sizeof(reason))) {
            _cleanup_free_ char *why =
                rss_xasprintf("cannot set an ownerRef on a resource you can't delete: %s, <nil>", reason);
            forbid(c, name, why);
            return false;
        }
    }
    const cJSON *ref;
    cJSON_ArrayForEach(ref, refs)
    {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "blockOwnerDeletion")) ||
            was_blocking(ref, old_refs))
            continue;
        const char *av = ks_json_str(ref, "apiVersion"), *kind = ks_json_str(ref, "kind");
        const char *rname = ks_json_str(ref, "name");
        if (!av || !kind || !rname)
            continue;
        const char *slash = strchr(av, '/');
        _cleanup_free_ char *group = slash ? strndup(av, (size_t)(slash - av)) : rss_xstrdup("");
        /* Every served resource of that group and kind (the RESTMapper's matches). */
        for (struct ks_resource *r = ks_resource_first(); r; r = r->next) {
            if (strcmp(r->group, group ? group : "") || strcmp(r->kind, kind))
                continue;
            struct ks_attrs a = {.resource_request = true};
            snprintf(a.verb, sizeof(a.verb), "update");
            snprintf(a.group, sizeof(a.group), "%s", r->group);
            snprintf(a.resource, sizeof(a.resource), "%s", r->plural);
            snprintf(a.sub, sizeof(a.sub), "finalizers");
            snprintf(a.ns, sizeof(a.ns), "%s", r->namespaced && c->ns ? c->ns : "");
            snprintf(a.name, sizeof(a.name), "%s", rname);
            if (!ks_authorize_locked(u, &a, reason, sizeof(reason))) {
                _cleanup_free_ char *why =
                    rss_xasprintf("cannot set blockOwnerDeletion if an ownerReference refers "
                                  "to a resource you can't set finalizers on: %s, <nil>",
                                  reason);
                forbid(c, name, why);
                return false;
            }
        }
    }
    return true;
}

/* The PriorityClasses every kube-apiserver creates at start (scheduling.k8s.io, not deletable). */
static const struct {
    const char *name;
    double value;
} system_classes[] = {
    {"system-node-critical", 2000001000},
    {"system-cluster-critical", 2000000000},
};

bool api_admit_priority(struct ctx *c, cJSON *obj)
{
    if (!api_is(c->res, "", "pods") || (c->sub && *c->sub))
        return true;
    cJSON *spec = ks_json_obj(obj, "spec");
    const char *cls = ks_json_str(obj, "spec.priorityClassName");
    if (!cls || !*cls)
        return true; /* the real one writes priority 0 here; kubesim leaves the field out */
    const char *name = ks_json_str(obj, "metadata.name");
    if (!name)
        name = "";
    double value = 0;
    bool found = false;
    for (size_t i = 0; i < sizeof(system_classes) / sizeof(system_classes[0]); i++)
        if (!strcmp(cls, system_classes[i].name)) {
            value = system_classes[i].value;
            found = true;
        }
    if (!found) {
        /* kubesim stores no PriorityClass objects, so a class of one's own is never found. */
        _cleanup_free_ char *why = rss_xasprintf("no PriorityClass with name %s was found", cls);
        forbid(c, name, why);
        return false;
    }
    /* 1.11-1.16 kept the system classes to kube-system; 1.17 lifted that (a cluster may still limit
     * them with the ResourceQuota admission's limitedResources, which kubesim does not run). */
    if (ks_minor < 17 && (!c->ns || strcmp(c->ns, "kube-system"))) {
        _cleanup_free_ char *why = rss_xasprintf(
            "pods with %s priorityClass is not permitted in %s namespace", cls, c->ns ? c->ns : "");
        forbid(c, name, why);
        return false;
    }
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(spec, "priority");
    if (cJSON_IsNumber(given) && given->valuedouble != value) {
        _cleanup_free_ char *why =
            rss_xasprintf("the integer value of priority (%.0f) must not be provided in pod spec; priority "
                          "admission controller computed %.0f from the given PriorityClass name",
                          given->valuedouble, value);
        forbid(c, name, why);
        return false;
    }
    ks_json_set_num(spec, "priority", value);
    if (!cJSON_GetObjectItemCaseSensitive(spec, "preemptionPolicy"))
        cJSON_AddStringToObject(spec, "preemptionPolicy", "PreemptLowerPriority");
    return true;
}
