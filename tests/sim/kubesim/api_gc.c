/* api_gc.c -- removal in kubesim: finalizers, graceful pod deletion, namespace and owner-reference cascades.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

/* ---- removal and cascades (lock held) ---- */

/* After an object is gone: namespace content, CRD custom resources, and owner-reference
 * dependents (the garbage collector's job, done at once here). */
static void after_removal(struct ks_resource *res, const cJSON *gone, const char *policy)
{
    const char *uid = ks_json_str(gone, "metadata.uid");
    const char *name = ks_json_str(gone, "metadata.name");
    if (api_is(res, "", "namespaces")) {
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
    if (api_is(res, "apiextensions.k8s.io", "customresourcedefinitions")) {
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
            api_delete_object(r, cur, -1, "Background", &gone_dep, &upd);
            ks_snap_unref(gone_dep);
            cJSON_Delete(upd);
        }
        ks_snaps_free(v, n);
    }
}

void api_remove_now(struct ks_resource *res, const cJSON *obj, const char *policy, struct ks_snap **removed)
{
    struct ks_snap *gone = ks_store_remove(res->group, res->plural, ks_json_str(obj, "metadata.namespace"),
                                           ks_json_str(obj, "metadata.name"), "DELETE");
    if (gone)
        after_removal(res, gone->obj, policy);
    *removed = gone;
}

/* Deletes per the apiserver's rules. On removal *removed gets the final snapshot (ref); when the
 * object stays (finalizers, graceful pod) *updated gets a copy of its new state. */
void api_delete_object(struct ks_resource *res, struct ks_snap *snap, long grace, const char *policy,
                       struct ks_snap **removed, cJSON **updated)
{
    const cJSON *cur = snap->obj;
    *removed = NULL;
    *updated = NULL;
    if (api_is(res, "", "pods")) {
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
    if (api_has_finalizers(cur)) {
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
    api_remove_now(res, cur, policy, removed);
}
