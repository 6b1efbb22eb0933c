/* writes.c -- the API writes the world controllers share: create and delete pods, patch a status. */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

void ctl_sync_delete_pod(struct ctl_ctx *ctx, const cJSON *pod, const char *why)
{
    const char *ns = ctl_namespace(pod);
    _cleanup_free_ char *path = rss_kube_path("v1", ns, "pods", ctl_name(pod), NULL);
    /* The uid precondition keeps a stale cache from deleting a newer incarnation of the name. */
    struct rss_kube_delete_opts opts = {.uid = ctl_uid(pod)};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_delete(ctx->kube, path, &opts, NULL, &err) < 0) {
        enum rss_errc c = rss_error_code(err);
        if (c != RSS_E_NOT_FOUND && c != RSS_E_CONFLICT)
            rss_log_error(RSS_LOG_WARN, &err, "deleting pod %s/%s (%s)", ns, ctl_name(pod), why);
        return;
    }
    rss_log_info("deleted pod %s/%s (%s)", ns, ctl_name(pod), why);
}

void ctl_sync_create_pod(struct ctl_ctx *ctx, const cJSON *pod, const char *owner_kind, const char *owner)
{
    const char *ns = ctl_namespace(pod);
    _cleanup_free_ char *path = rss_kube_path("v1", ns, "pods", NULL, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_create(ctx->kube, path, pod, &ret, &err) < 0) {
        /* Exists: the cache has not seen it yet, or its previous incarnation is still terminating. */
        if (rss_error_code(err) != RSS_E_EXISTS)
            rss_log_error(RSS_LOG_WARN, &err, "%s %s/%s: creating pod %s", owner_kind, ns, owner,
                          ctl_name(pod));
        return;
    }
    rss_log_info("%s %s/%s: created pod %s", owner_kind, ns, owner, ctl_name(pod));
    if (ctx->written)
        ctx->written(ctx->userdata, "pods", ret);
}

void ctl_sync_patch_status(struct ctl_ctx *ctx, const char *group_version, const char *plural,
                           const cJSON *obj, cJSON *status)
{
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(patch, "status", status);
    if (!ctl_status_differs(rss_json_path(obj, "status"), status))
        return;
    _cleanup_free_ char *path = rss_kube_path(group_version, ctl_namespace(obj), plural, ctl_name(obj), NULL);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_merge_patch_status(ctx->kube, path, patch, &ret, &err) < 0) {
        if (rss_error_code(err) != RSS_E_NOT_FOUND)
            rss_log_error(RSS_LOG_WARN, &err, "%s %s/%s: updating status", plural, ctl_namespace(obj),
                          ctl_name(obj));
        return;
    }
    if (ctx->written && ret)
        ctx->written(ctx->userdata, plural, ret);
}
