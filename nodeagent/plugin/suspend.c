/* suspend.c -- `kubectl rss suspend|resume NAME`: sets spec.suspend, the planned full stop and its end. */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

int plugin_suspend(const struct plugin_ctx *ctx, const char *name, bool suspend, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    const cJSON *cur = rss_json_path(rss, "spec.suspend");
    if (cJSON_IsTrue(cur) == suspend) {
        fprintf(ctx->out, "%s/%s is already %s (spec.suspend: %s); nothing changed.\n", ctx->ns, name,
                suspend ? "suspended or suspending" : "not suspended", suspend ? "true" : "false");
        return 0;
    }
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON_AddBoolToObject(cJSON_AddObjectToObject(patch, "spec"), "suspend", suspend);
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ctx->ns, RSS_CRD_PLURAL, name, NULL);
    if (rss_kube_merge_patch(ctx->kube, path, patch, NULL, err) < 0)
        return rss_error_wrap(err, "setting spec.suspend of %s/%s", ctx->ns, name);
    if (suspend)
        fprintf(ctx->out,
                "%s/%s: spec.suspend set. rssd stops the members one at a time (secondaries first, the last "
                "primary last), records their sequences and scales to 0; the volumes stay.\n"
                "Follow it with: kubectl rss status %s -n %s\n",
                ctx->ns, name, name, ctx->ns);
    else
        fprintf(ctx->out,
                "%s/%s: spec.suspend cleared. The members come back and recover as after a lights-out: "
                "every member reports, the highest sequence seeds, the others join.\n",
                ctx->ns, name);
    return 0;
}
