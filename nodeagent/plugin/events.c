/* events.c -- `kubectl rss events NAME`: what rssd reported about an RSS, oldest first. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "plugin_internal.h"

static const char *when(const cJSON *e)
{
    const char *t = rss_json_str(e, "lastTimestamp");
    if (!t)
        t = rss_json_str(e, "eventTime");
    if (!t)
        t = rss_json_str(e, "firstTimestamp");
    return t ? t : "";
}

/* RFC 3339 times of one form sort as strings. */
static int by_time(const void *a, const void *b)
{
    return strcmp(when(*(const cJSON *const *)a), when(*(const cJSON *const *)b));
}

int plugin_print_events(const struct plugin_ctx *ctx, const char *name, size_t last, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path("v1", ctx->ns, "events", NULL, NULL);
    _cleanup_free_ char *sel =
        rss_xasprintf("involvedObject.kind=ReplicatedStatefulSet,involvedObject.name=%s", name);
    struct rss_kube_list_opts lo = {.field_selector = sel};
    _cleanup_json_ cJSON *list = NULL;
    if (rss_kube_list(ctx->kube, path, &lo, &list, err) < 0)
        return rss_error_wrap(err, "listing the events of %s/%s", ctx->ns, name);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    size_t n = (size_t)cJSON_GetArraySize(items), i = 0;
    if (ctx->output && !n) {
        _cleanup_json_ cJSON *empty = cJSON_CreateArray();
        plugin_print_value(ctx, empty);
        return 0;
    }
    if (!n) {
        fprintf(ctx->out, "No events for %s/%s.\n", ctx->ns, name);
        return 0;
    }
    _cleanup_free_ const cJSON **v = rss_xcalloc(n, sizeof(*v));
    const cJSON *e;
    cJSON_ArrayForEach(e, items) v[i++] = e;
    qsort(v, n, sizeof(*v), by_time);
    if (ctx->output) {
        _cleanup_json_ cJSON *arr = cJSON_CreateArray();
        for (i = last && n > last ? n - last : 0; i < n; i++)
            cJSON_AddItemToArray(arr, cJSON_Duplicate(v[i], true));
        plugin_print_value(ctx, arr);
        return 0;
    }
    fprintf(ctx->out, "%-20s  %-7s  %-18s  %5s  %s\n", "LAST SEEN", "TYPE", "REASON", "COUNT", "MESSAGE");
    for (i = last && n > last ? n - last : 0; i < n; i++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(v[i], "count");
        const char *type = rss_json_str(v[i], "type"), *reason = rss_json_str(v[i], "reason");
        const char *msg = rss_json_str(v[i], "message");
        fprintf(ctx->out, "%-20s  %-7s  %-18s  %5d  %s\n", when(v[i]), type ? type : "", reason ? reason : "",
                cJSON_IsNumber(c) ? c->valueint : 1, msg ? msg : "");
    }
    return 0;
}

int plugin_events(const struct plugin_ctx *ctx, const char *name, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    return plugin_print_events(ctx, name, 0, err);
}
