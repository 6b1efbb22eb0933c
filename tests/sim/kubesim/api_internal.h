/* api_internal.h -- what kubesim's api*.c files share: the request context and the helpers of each
 * step (errors, defaults and schemas, removal and cascades, writes, verbs). Not used elsewhere. */
#ifndef KS_API_INTERNAL_H
#define KS_API_INTERNAL_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "kubesim.h"

#define MAX_NAME 253

struct ctx {
    const struct ks_req *req;
    struct ks_reply *reply;
    struct ks_resource *res;
    char *ns;   /* from the URL, or NULL */
    char *name; /* from the URL, or NULL */
    char *sub;  /* "status", "scale", "log" or "eviction" (pods) or NULL */
    bool table;
};

/* Storage resources (one per group/plural), each visited once. */
#define FOREACH_STORAGE(r)                                                                                   \
    for (struct ks_resource *r = ks_resource_first(); r; r = r->next)                                        \
        if (ks_resource_any(r->group, r->plural) == r)

/* api_errors.c: errors in the apiserver's Status form, and small helpers */
void api_add_cause(cJSON *causes, const char *type, const char *field, const char *msg);
void api_conflict(struct ks_reply *r, const struct ks_resource *res, const char *name, const char *why);
bool api_dns_subdomain(const char *s, bool label);
bool api_has_finalizers(const cJSON *o);
void api_invalid(struct ks_reply *r, const struct ks_resource *res, const char *name, cJSON *causes);
bool api_is(const struct ks_resource *r, const char *group, const char *plural);
void api_normalize(cJSON *obj);
void api_not_found(struct ks_reply *r, const struct ks_resource *res, const char *name);
const char *api_obj_rv(const cJSON *o);
cJSON *api_one_cause(const char *type, const char *field, const char *msg);
cJSON *api_present(const struct ks_resource *res, const cJSON *obj);
const char *api_q(const struct ctx *c, const char *key);
bool api_qbool(const struct ctx *c, const char *key);
void api_reply_err(struct ks_reply *r, int code, const char *reason, const struct ks_resource *res,
                   const char *name, cJSON *causes, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
void api_reply_obj(struct ctx *c, int code, const cJSON *obj);

/* api_defaults.c: defaults and custom-resource schemas */
void api_apply_defaults(const struct ks_resource *res, cJSON *obj);
bool api_check_crd(struct ctx *c, cJSON *obj, const char *name);
bool api_check_custom(struct ctx *c, cJSON *obj, const char *name);

/* api_gc.c: removal, finalizers, graceful deletion and cascades (lock held) */
void api_delete_object(struct ks_resource *res, struct ks_snap *snap, long grace, const char *policy,
                       struct ks_snap **removed, cJSON **updated);
void api_remove_now(struct ks_resource *res, const cJSON *obj, const char *policy, struct ks_snap **removed);

/* api_admission.c: OwnerReferencesPermissionEnforcement (lock held); false after replying 403.
 * old is NULL on create. */
bool api_admit_owner_refs(struct ctx *c, const cJSON *obj, const cJSON *old);
/* api_admission.c: Priority on a pod create (lock held): resolves spec.priorityClassName of the
 * built-in classes into spec.priority; false after replying 403 (an unknown class, a system class
 * outside kube-system before 1.17, a conflicting spec.priority). */
bool api_admit_priority(struct ctx *c, cJSON *obj);

/* api_write.c: create and update paths (lock held), and the scale subresource */
void api_do_create(struct ctx *c, cJSON *obj, const char *verb);
void api_do_update(struct ctx *c, struct ks_snap *old, cJSON *in, const char *verb);
cJSON *api_scale_of(const struct ks_resource *r, const cJSON *o);
const char *api_scale_spec_path(const struct ks_resource *r);
void api_set_path_num(cJSON *o, const char *dotted, double v);

/* api_verbs.c: the verbs */
void api_do_delete(struct ctx *c);
void api_do_delete_collection(struct ctx *c);
void api_do_get(struct ctx *c);
/* api_podlog.c: GET pods/NAME/log from the world kubelet's CRI log files under ks_pod_logs_root. */
void api_pod_log(struct ctx *c);
/* api_eviction.c: POST pods/NAME/eviction, the PodDisruptionBudget check, then the deletion. */
void api_pod_eviction(struct ctx *c);
void api_do_list(struct ctx *c);
void api_do_patch(struct ctx *c);
void api_do_post(struct ctx *c);
void api_do_put(struct ctx *c);
void api_do_watch(struct ctx *c);

#endif
