/* agents.c -- `kubectl rss agents`: which node runs which rssd, how fresh its heartbeat is, and which one
 * leads; read from rssd's Leases in its namespace. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

/* A Lease's renewTime age in ms against now, and whether it is past its duration; false when unreadable. */
static bool lease_age(const cJSON *lease, int64_t now_ms, int64_t *age_ms, bool *expired)
{
    const char *renew = rss_json_str(lease, "spec.renewTime");
    int64_t renew_ms = 0;
    _cleanup_error_ rss_error_t err = NULL;
    if (!renew || rss_time_parse_ms(renew, &renew_ms, &err) < 0)
        return false;
    const cJSON *d = rss_json_path(lease, "spec.leaseDurationSeconds");
    double dur_s = cJSON_IsNumber(d) && isfinite(d->valuedouble) ? d->valuedouble : 0;
    *age_ms = now_ms - renew_ms;
    *expired = *age_ms > (int64_t)(dur_s * 1000);
    return true;
}

static int by_name(const void *a, const void *b)
{
    const char *x = rss_json_str(*(const cJSON *const *)a, "metadata.name");
    const char *y = rss_json_str(*(const cJSON *const *)b, "metadata.name");
    return strcmp(x ? x : "", y ? y : "");
}

int plugin_agents(const struct plugin_ctx *ctx, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", ctx->rssd_ns, "leases", NULL, NULL);
    _cleanup_json_ cJSON *list = NULL;
    if (rss_kube_list(ctx->kube, path, NULL, &list, err) < 0)
        return rss_error_wrap(err, "listing rssd's Leases in namespace %s (--rssd-namespace)", ctx->rssd_ns);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    size_t n = (size_t)cJSON_GetArraySize(items), k = 0;
    _cleanup_free_ const cJSON **hb = rss_xcalloc(n + 1, sizeof(*hb));
    const cJSON *leader = NULL, *e;
    cJSON_ArrayForEach(e, items)
    {
        const char *name = rss_json_str(e, "metadata.name");
        if (name && !strcmp(name, RSS_LEADER_LEASE))
            leader = e;
        else if (name && !strncmp(name, RSS_HEARTBEAT_PREFIX, strlen(RSS_HEARTBEAT_PREFIX)))
            hb[k++] = e;
    }
    if (!k && ctx->output) {
        _cleanup_json_ cJSON *empty = cJSON_CreateArray();
        plugin_print_value(ctx, empty);
        return 0;
    }
    if (!k) {
        fprintf(ctx->out,
                "No rssd heartbeat in namespace %s: rssd does not run there (see --rssd-namespace).\n",
                ctx->rssd_ns);
        return 0;
    }
    qsort(hb, k, sizeof(*hb), by_name);
    int64_t now = rss_clock_wall_ms(), age = 0;
    bool expired = false;
    /* The leader's identity starts with its node's name and "_" (rss_election_make_identity). */
    const char *lh = leader ? rss_json_str(leader, "spec.holderIdentity") : NULL;
    bool leader_live = leader && lh && *lh && lease_age(leader, now, &age, &expired) && !expired;
    _cleanup_json_ cJSON *arr = ctx->output ? cJSON_CreateArray() : NULL;
    if (!ctx->output)
        fprintf(ctx->out, "%-24s  %-10s  %-22s  %-6s  %s\n", "NODE", "VERSION", "HEARTBEAT", "LEADER",
                "FENCE TIMEOUT");
    for (size_t i = 0; i < k; i++) {
        const char *node = rss_json_str(hb[i], "metadata.name") + strlen(RSS_HEARTBEAT_PREFIX);
        const cJSON *ann = rss_json_path(hb[i], "metadata.annotations");
        const char *ver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, RSS_ANNOTATION_VERSION));
        const char *fence =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, RSS_ANNOTATION_FENCE_TIMEOUT));
        bool known = lease_age(hb[i], now, &age, &expired);
        size_t nl = strlen(node);
        bool leads = leader_live && !strncmp(lh, node, nl) && lh[nl] == '_';
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "node", node);
            if (ver)
                cJSON_AddStringToObject(o, "version", ver);
            if (known) {
                cJSON_AddNumberToObject(o, "heartbeatAgeMs", (double)(age < 0 ? 0 : age));
                cJSON_AddBoolToObject(o, "expired", expired);
            }
            cJSON_AddBoolToObject(o, "leader", leads);
            if (fence && *fence)
                cJSON_AddStringToObject(o, "fenceTimeoutMs", fence);
            cJSON_AddItemToArray(arr, o);
            continue;
        }
        char beat[40] = "unknown";
        if (known)
            snprintf(beat, sizeof(beat), "%.1f s ago%s", (double)(age < 0 ? 0 : age) / 1000.0,
                     expired ? " (expired)" : "");
        char ft[32] = "-";
        if (fence && *fence)
            snprintf(ft, sizeof(ft), "%s ms", fence);
        fprintf(ctx->out, "%-24s  %-10s  %-22s  %-6s  %s\n", node, ver ? ver : "(older)", beat,
                leads ? "yes" : "", ft);
    }
    if (arr)
        plugin_print_value(ctx, arr);
    else if (!leader_live)
        fprintf(ctx->out, "\nNo leader: the Lease %s is %s.\n", RSS_LEADER_LEASE,
                !leader       ? "missing"
                : !lh || !*lh ? "released"
                              : "expired");
    return 0;
}
