/* history.c -- `kubectl rss history NAME`: the recoveries and failovers of an RSS (status.history), oldest
 * first, readable after their Events expired. */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "plugin_internal.h"

int plugin_history(const struct plugin_ctx *ctx, const char *name, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    const cJSON *h =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rss, "status"), "history");
    if (ctx->output) {
        _cleanup_json_ cJSON *empty = cJSON_CreateArray();
        plugin_print_value(ctx, cJSON_IsArray(h) ? h : empty);
        return 0;
    }
    if (!cJSON_GetArraySize(h)) {
        fprintf(ctx->out, "No history for %s/%s: no recovery or failover since rssd first managed it.\n",
                ctx->ns, name);
        return 0;
    }
    fprintf(ctx->out, "%-24s  %-18s  %-20s  %s\n", "AT", "REASON", "MEMBER", "MESSAGE");
    const cJSON *e;
    cJSON_ArrayForEach(e, h)
    {
        const char *at = rss_json_str(e, "at"), *reason = rss_json_str(e, "reason");
        const char *member = rss_json_str(e, "member"), *msg = rss_json_str(e, "message");
        /* A new episode starts after each Running line: a blank line between episodes. */
        fprintf(ctx->out, "%-24s  %-18s  %-20s  %s\n", at ? at : "", reason ? reason : "",
                member ? member : "-", msg ? msg : "");
        if (reason && !strcmp(reason, "Running") && e->next)
            fputc('\n', ctx->out);
    }
    return 0;
}
