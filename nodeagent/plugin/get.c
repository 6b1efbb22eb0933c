/* get.c -- reads the ReplicatedStatefulSet a command names, with an error that says which one is missing;
 * prints what a read command found as JSON (-o json). */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

int plugin_get_rss(const struct plugin_ctx *ctx, const char *name, cJSON **ret, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ctx->ns, RSS_CRD_PLURAL, name, NULL);
    if (rss_kube_get(ctx->kube, path, ret, err) < 0) {
        if (rss_error_code(*err) == RSS_E_NOT_FOUND) {
            rss_error_release(err);
            return rss_error_make(err, RSS_E_NOT_FOUND, 0,
                                  "replicatedstatefulset \"%s\" not found in namespace \"%s\"", name,
                                  ctx->ns);
        }
        return rss_error_wrap(err, "reading replicatedstatefulset %s/%s", ctx->ns, name);
    }
    return 0;
}

void plugin_print_value(const struct plugin_ctx *ctx, const cJSON *v)
{
    if (ctx->output && !strcmp(ctx->output, "yaml")) {
        plugin_print_yaml(ctx->out, v);
        return;
    }
    _cleanup_free_ char *text = v ? cJSON_Print(v) : NULL;
    fprintf(ctx->out, "%s\n", text ? text : "null");
}
