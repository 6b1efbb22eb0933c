/* annotate.c -- what the commands that set an annotation on an RSS share: the member as rssd last
 * reported it, the admin's confirmation, and the write on the version that was checked. */
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

const cJSON *plugin_member_status(const cJSON *rss, const char *pod)
{
    const cJSON *ms;
    cJSON_ArrayForEach(ms, rss_json_path(rss, "status.memberStatus"))
    {
        const char *n = rss_json_str(ms, "name");
        if (n && !strcmp(n, pod))
            return ms;
    }
    return NULL;
}

/* --yes, or the pod's name typed on the terminal; false when stdin is not one. */
static bool confirmed(const struct plugin_ctx *ctx, const char *pod)
{
    if (ctx->yes)
        return true;
    if (!isatty(STDIN_FILENO))
        return false;
    fprintf(ctx->out, "Type the pod name (%s) to set the annotation: ", pod);
    fflush(ctx->out);
    char line[300];
    if (!fgets(line, sizeof(line), stdin))
        return false;
    line[strcspn(line, "\r\n")] = '\0';
    return !strcmp(line, pod);
}

int plugin_annotate(const struct plugin_ctx *ctx, const char *name, const cJSON *rss, const char *key,
                    const char *value, rss_error_t *err)
{
    if (!confirmed(ctx, value))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "not confirmed: nothing was changed (pass --yes when not on a terminal)");
    /* Set only on the version that was checked: a change meanwhile (a member started) means checking
     * again. */
    const char *rv = rss_json_str(rss, "metadata.resourceVersion");
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), key, value);
    if (rv)
        cJSON_AddStringToObject(md, "resourceVersion", rv);
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ctx->ns, RSS_CRD_PLURAL, name, NULL);
    if (rss_kube_merge_patch(ctx->kube, path, patch, NULL, err) < 0) {
        if (rss_error_code(*err) == RSS_E_CONFLICT)
            return rss_error_wrap(err,
                                  "%s/%s changed while it was checked; nothing was set, run the command "
                                  "again",
                                  ctx->ns, name);
        return rss_error_wrap(err, "setting %s on %s/%s", key, ctx->ns, name);
    }
    return 0;
}
