/* nodelifecycle.c -- the world's node-lifecycle controller: a node whose heartbeat stops goes Ready=Unknown.
 *
 * As in kube-controller-manager, the heartbeat is judged by when this process saw it advance
 * (its own monotonic clock), never by comparing the timestamps' values with its wall clock. Only
 * the kubelet sets Ready=True again. Taints (node.kubernetes.io/unreachable) and evictions are
 * left out: nothing in the world reads them. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

struct nodelc_entry {
    char *name;
    char *renew;     /* the Lease's spec.renewTime last seen, or NULL */
    char *heartbeat; /* the Ready condition's lastHeartbeatTime last seen, or NULL */
    double observed; /* when either last changed, by our clock */
    bool seen;
};

struct ctl_nodelc {
    double grace;
    struct nodelc_entry *e;
    size_t n;
};

struct ctl_nodelc *ctl_nodelc_new(double grace_seconds)
{
    struct ctl_nodelc *lc = rss_xcalloc(1, sizeof(*lc));
    lc->grace = grace_seconds;
    return lc;
}

static void entry_clear(struct nodelc_entry *e)
{
    free(e->name);
    free(e->renew);
    free(e->heartbeat);
}

void ctl_nodelc_free(struct ctl_nodelc *lc)
{
    if (!lc)
        return;
    for (size_t i = 0; i < lc->n; i++)
        entry_clear(&lc->e[i]);
    free(lc->e);
    free(lc);
}

static struct nodelc_entry *find_entry(const struct ctl_nodelc *lc, const char *name)
{
    for (size_t i = 0; i < lc->n; i++) {
        if (strcmp(lc->e[i].name, name) == 0)
            return &lc->e[i];
    }
    return NULL;
}

static bool str_changed(char **stored, const char *now)
{
    if ((!*stored && !now) || (*stored && now && strcmp(*stored, now) == 0))
        return false;
    free(*stored);
    *stored = now ? rss_xstrdup(now) : NULL;
    return true;
}

void ctl_nodelc_observe(struct ctl_nodelc *lc, const cJSON *nodes, const cJSON *leases, double now)
{
    for (size_t i = 0; i < lc->n; i++)
        lc->e[i].seen = false;
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes)
    {
        const char *name = ctl_name(node);
        struct nodelc_entry *e = find_entry(lc, name);
        if (!e) {
            lc->e = rss_xrealloc(lc->e, (lc->n + 1) * sizeof(*lc->e));
            e = &lc->e[lc->n++];
            *e = (struct nodelc_entry){.name = rss_xstrdup(name), .observed = now};
        }
        e->seen = true;
        const char *hb = rss_json_str(ctl_condition(node, "Ready"), "lastHeartbeatTime");
        const char *renew = NULL;
        const cJSON *lease;
        cJSON_ArrayForEach(lease, leases)
        {
            if (strcmp(ctl_name(lease), name) == 0)
                renew = rss_json_str(lease, "spec.renewTime");
        }
        bool changed = str_changed(&e->heartbeat, hb);
        changed = str_changed(&e->renew, renew) || changed;
        if (changed)
            e->observed = now;
    }
    size_t w = 0;
    for (size_t i = 0; i < lc->n; i++) {
        if (lc->e[i].seen)
            lc->e[w++] = lc->e[i];
        else
            entry_clear(&lc->e[i]);
    }
    lc->n = w;
}

bool ctl_nodelc_fresh(const struct ctl_nodelc *lc, const char *node, double now)
{
    const struct nodelc_entry *e = find_entry(lc, node);
    return e && now - e->observed <= lc->grace;
}

bool ctl_node_usable(const struct ctl_nodelc *lc, const cJSON *node, double now, bool check_unschedulable)
{
    const char *ready = ctl_condition_status(node, "Ready");
    if (!ready || strcmp(ready, "True") != 0 || ctl_is_terminating(node))
        return false;
    if (check_unschedulable && cJSON_IsTrue(rss_json_path(node, "spec.unschedulable")))
        return false;
    return ctl_nodelc_fresh(lc, ctl_name(node), now);
}

static void set_string(cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddStringToObject(obj, key, value);
}

cJSON *ctl_nodelc_mark_unknown(const struct ctl_nodelc *lc, const cJSON *node, double now,
                               const char *wall_time)
{
    if (ctl_nodelc_fresh(lc, ctl_name(node), now) || ctl_is_terminating(node))
        return NULL;
    const char *ready = ctl_condition_status(node, "Ready");
    if (ready && strcmp(ready, "Unknown") == 0)
        return NULL;
    cJSON *out = cJSON_Duplicate(node, true);
    cJSON *status = cJSON_GetObjectItemCaseSensitive(out, "status");
    if (!cJSON_IsObject(status)) {
        cJSON_DeleteItemFromObjectCaseSensitive(out, "status");
        status = cJSON_AddObjectToObject(out, "status");
    }
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
    }
    if (!ready) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", "Ready");
        cJSON_AddStringToObject(c, "status", "Unknown");
        cJSON_AddStringToObject(c, "reason", "NodeStatusNeverUpdated");
        cJSON_AddStringToObject(c, "message", "Kubelet never posted node status.");
        cJSON_AddStringToObject(c, "lastHeartbeatTime", wall_time);
        cJSON_AddStringToObject(c, "lastTransitionTime", wall_time);
        cJSON_AddItemToArray(conds, c);
    }
    cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const char *st = rss_json_str(c, "status");
        if (st && strcmp(st, "Unknown") == 0)
            continue;
        /* lastHeartbeatTime stays: it is the kubelet's, and a fresh one is what brings the node back. */
        set_string(c, "status", "Unknown");
        set_string(c, "reason", "NodeStatusUnknown");
        set_string(c, "message", "Kubelet stopped posting node status.");
        set_string(c, "lastTransitionTime", wall_time);
    }
    return out;
}

/* ---------------------------------------------------------------- sync */

#define CONFLICT_RETRIES 5

static void mark_one(struct ctl_ctx *ctx, struct ctl_snapshot *snap, const cJSON *cached)
{
    const char *name = ctl_name(cached);
    const char *cached_hb = rss_json_str(ctl_condition(cached, "Ready"), "lastHeartbeatTime");
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", name, NULL);
    for (int attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
        _cleanup_error_ rss_error_t err = NULL;
        _cleanup_json_ cJSON *node = NULL;
        if (rss_kube_get(ctx->kube, path, &node, &err) < 0) {
            if (rss_error_code(err) != RSS_E_NOT_FOUND)
                rss_log_error(RSS_LOG_WARN, &err, "node %s: reading it", name);
            return;
        }
        /* A heartbeat newer than the one we judged by: the kubelet is back; the next pass sees it. */
        const char *hb = rss_json_str(ctl_condition(node, "Ready"), "lastHeartbeatTime");
        if ((hb || cached_hb) && (!hb || !cached_hb || strcmp(hb, cached_hb) != 0))
            return;
        char wall[RSS_TIME_LEN];
        _cleanup_json_ cJSON *want =
            ctl_nodelc_mark_unknown(snap->nodelc, node, snap->now, rss_time_seconds(wall, NULL));
        if (!want)
            return;
        _cleanup_json_ cJSON *ret = NULL;
        if (rss_kube_update_status(ctx->kube, path, want, &ret, &err) < 0) {
            if (rss_error_code(err) == RSS_E_CONFLICT)
                continue;
            if (rss_error_code(err) != RSS_E_NOT_FOUND)
                rss_log_error(RSS_LOG_WARN, &err, "node %s: setting Ready=Unknown", name);
            return;
        }
        rss_log_info("node %s: no heartbeat for more than %.1f s, Ready=Unknown", name, snap->nodelc->grace);
        if (ctx->written && ret)
            ctx->written(ctx->userdata, "nodes", ret);
        return;
    }
    rss_log_warn("node %s: setting Ready=Unknown: still conflicting after %d attempts", name,
                 CONFLICT_RETRIES);
}

int ctl_nodelc_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err)
{
    (void)err;
    ctl_nodelc_observe(snap->nodelc, snap->nodes, snap->leases, snap->now);
    const cJSON *node;
    cJSON_ArrayForEach(node, snap->nodes)
    {
        _cleanup_json_ cJSON *want = ctl_nodelc_mark_unknown(snap->nodelc, node, snap->now, "");
        if (want)
            mark_one(ctx, snap, node);
    }
    return 0;
}
