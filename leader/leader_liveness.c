/* leader_liveness.c -- which nodes' agents live, judged only from what this leader itself observed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leader_internal.h"
#include "rss/record.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/hash.h"
#include "rss/json.h"

/* Why not renewTime: renewTime is another machine's wall clock, and a heartbeat that did not change
 * during an API outage is stale because nobody could write, not because its node died. After a 75 s
 * API freeze every heartbeat looked 72 s old and a leader skipped live members. So, like client-go's
 * leader election, a node's clock starts when this leader sees its heartbeat change, and every clock
 * restarts when this leader's own view had a gap (a new term, a failed or late LIST). */

void leader_liveness_init(struct leader_liveness *lv)
{
    memset(lv, 0, sizeof(*lv));
}

void leader_liveness_clear(struct leader_liveness *lv)
{
    for (size_t i = 0; i < lv->n; i++) {
        free(lv->v[i].node);
        free(lv->v[i].renew);
        free(lv->v[i].peer);
    }
    free(lv->v);
    for (size_t i = 0; i < lv->n_r; i++)
        free(lv->r[i].uid);
    free(lv->r);
    leader_liveness_init(lv);
}

void leader_liveness_start(struct leader_liveness *lv, int64_t now_ms)
{
    leader_liveness_clear(lv);
    lv->clock_start_ms = now_ms;
}

void leader_liveness_failed(struct leader_liveness *lv)
{
    lv->gap = true;
}

static struct leader_node_obs *find(const struct leader_liveness *lv, const char *node)
{
    for (size_t i = 0; i < lv->n; i++)
        if (!strcmp(lv->v[i].node, node))
            return &lv->v[i];
    return NULL;
}

/* leaseDurationSeconds as milliseconds, kept in [1 s, 1 h]: the value is another process's input and
 * (int64_t)(1e300 * 1000) is undefined behaviour. */
static int64_t duration_ms(const cJSON *lease)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "spec"),
                                                      "leaseDurationSeconds");
    double s = cJSON_IsNumber(d) && isfinite(d->valuedouble) ? d->valuedouble : 0;
    if (s < 1)
        s = 1;
    if (s > 3600)
        s = 3600;
    return (int64_t)(s * 1000);
}

/* A duration the agent published in its heartbeat Lease (its --fence-timeout, its longest fence `stop`), in
 * [0, max]; 0 when absent or malformed. A forged larger value only makes this leader wait longer before
 * judging the node dead. */
static int64_t published_ms(const cJSON *lease, const char *annotation, int64_t max)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "metadata"), "annotations"),
        annotation));
    int64_t ms = 0;
    for (const char *p = v; p && *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        if (ms <= max) /* no overflow: the digits past the bound only keep it over */
            ms = ms * 10 + (*p - '0');
    }
    return ms > max ? max : ms;
}

/* A boot id as the kernel writes it (a UUID: hex digits and dashes), copied to dst; anything else "". */
static void copy_boot(char dst[40], const char *v)
{
    dst[0] = '\0';
    if (v && strlen(v) >= 8 && strlen(v) < 40 && strspn(v, "0123456789abcdef-") == strlen(v))
        memcpy(dst, v, strlen(v) + 1);
}

/* The incarnation that renews the Lease and when it started, from the peer annotation (parsed again only
 * when it changed: once per agent process). Anything odd reads as unknown. */
static void learn_agent(struct leader_node_obs *o, const cJSON *lease)
{
    const char *ann = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "metadata"), "annotations"),
        RSS_ANNOTATION_PEER));
    if ((!ann && !o->peer) || (ann && o->peer && !strcmp(ann, o->peer)))
        return;
    free(o->peer);
    o->peer = ann ? rss_xstrdup(ann) : NULL;
    o->agent[0] = '\0';
    o->agent_since_ms = 0;
    o->agent_boot[0] = '\0';
    _cleanup_json_ cJSON *pj = ann ? cJSON_Parse(ann) : NULL;
    const char *agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pj, "agent"));
    const cJSON *since = cJSON_GetObjectItemCaseSensitive(pj, "since");
    copy_boot(o->agent_boot, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pj, "boot")));
    if (!agent || !*agent || strlen(agent) >= sizeof(o->agent) ||
        strspn(agent, "0123456789abcdef") != strlen(agent) || !cJSON_IsNumber(since) ||
        !isfinite(since->valuedouble) || since->valuedouble <= 0 || since->valuedouble > 1e15)
        return;
    snprintf(o->agent, sizeof(o->agent), "%s", agent);
    o->agent_since_ms = (int64_t)since->valuedouble;
}

bool leader_liveness_superseded(const struct leader_liveness *lv, const char *node, const char *agent,
                                int64_t time_ms)
{
    const struct leader_node_obs *o = node ? find(lv, node) : NULL;
    /* The report's time and the new process's start are one node's wall clock, but on either side of a
     * reboot, before NTP has set it again: a clock that came back late made a report from before the power
     * cut look newer than the agent that replaced it, and the status counted a member ready that was not
     * running (rule 12). So a report up to the clock skew bound after that start is superseded too. The
     * report of a newer incarnation whose Lease this leader has not seen yet (the Lease seen late) then
     * waits for it, if that incarnation started within the bound of the one the Lease names. */
    if (o && o->agent[0] && agent && *agent && time_ms > 0 && strcmp(o->agent, agent) &&
        time_ms < o->agent_since_ms + RSS_CLOCK_SKEW_MAX_MS)
        return true;
    /* The agent the Lease names, silent, on a node that booted again since it started (the Node read
     * after the silence says another boot): that process is gone, and so are the containers its report
     * saw, although the pod may still name them until its kubelet syncs (a CI run on the real world: a
     * member counted ready 1 s after its node's power-on, before the new rssd or the kubelet said a word). */
    return o && o->agent[0] && agent && !strcmp(o->agent, agent) && o->agent_boot[0] && o->node_boot[0] &&
           strcmp(o->agent_boot, o->node_boot);
}

/* The node is judged with the longer of the two fence timeouts: an agent updated to a longer one
 * still stops its members only at its own. `members`: dead_after_ms is a member's window, which holds its
 * RSS's stop timeout (leader_dead_window); the agent's own fence then ends no earlier than its fence timeout
 * + its longest fence `stop` + the kill, so the window is at least that. That `stop` is the one the agent
 * holds, which a spec lowered while the node is cut off does not reach (issue 35: stop 30 s -> 2 s during
 * a cut made the leader count 2 s). Without `members` (the node's silence alone: when to read its kubelet,
 * when a verdict changes) there is no stop in the window and none is added. */
static int64_t node_window(const struct leader_liveness *lv, const struct leader_node_obs *o,
                           int64_t dead_after_ms, bool members)
{
    int64_t w = lv->own_fence_ms > 0 && o->fence_ms > lv->own_fence_ms
                    ? dead_after_ms + o->fence_ms - lv->own_fence_ms
                    : dead_after_ms;
    if (!members || lv->own_fence_ms <= 0 || o->stop_ms <= 0)
        return w;
    /* As the agent passes it to the runtime: whole seconds, rounded up (agent_hook.c). */
    int64_t stop = (o->stop_ms + 999) / 1000 * 1000;
    int64_t fence = o->fence_ms > lv->own_fence_ms ? o->fence_ms : lv->own_fence_ms;
    int64_t agent = fence + LEADER_FENCE_MARGIN + stop + LEADER_KILL_MS;
    return agent > w ? agent : w;
}

static int64_t since_ms(const struct leader_liveness *lv, const struct leader_node_obs *o)
{
    return o->changed_ms > lv->clock_start_ms ? o->changed_ms : lv->clock_start_ms;
}

/* The agent's silence alone is not death: an OOM-killed, crash-looping, evicted or SIGSTOPped rssd
 * fenced nothing, and its node's members may run on. Only a kubelet read down after the heartbeat's
 * last change (and after this leader's view last had a gap) joins the agent's silence into "dead". */
static bool kubelet_down(const struct leader_liveness *lv, const struct leader_node_obs *o)
{
    return o->kubelet == LEADER_KUBELET_DOWN && o->kubelet_ms >= since_ms(lv, o);
}

static void verdict(const struct leader_liveness *lv, const struct leader_node_obs *o, int64_t now_ms,
                    int64_t dead_after_ms, bool members, bool *alive, bool *dead, int64_t *silent_ms)
{
    int64_t silent = now_ms - since_ms(lv, o);
    *alive = silent < o->duration_ms;
    *dead = silent >= node_window(lv, o, dead_after_ms, members) && kubelet_down(lv, o);
    *silent_ms = *alive ? 0 : silent;
}

bool leader_liveness_update(struct leader_liveness *lv, const cJSON *leases, int64_t now_ms,
                            int64_t max_gap_ms, int64_t dead_after_ms)
{
    if (lv->gap || lv->last_ok_ms == 0 || now_ms - lv->last_ok_ms > max_gap_ms)
        lv->clock_start_ms = now_ms;
    lv->gap = false;
    lv->last_ok_ms = now_ms;
    const size_t plen = strlen(RSS_HEARTBEAT_PREFIX);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(leases, "items"))
    {
        const char *name = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name"));
        if (!name || strncmp(name, RSS_HEARTBEAT_PREFIX, plen) || !name[plen])
            continue;
        const char *renew = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "spec"), "renewTime"));
        struct leader_node_obs *o = find(lv, name + plen);
        if (!o) {
            if (lv->n >= LEADER_MAX_NODES)
                continue;
            o = rss_xarray_push(&lv->v, &lv->n, &lv->cap, sizeof(*lv->v));
            *o = (struct leader_node_obs){.node = rss_xstrdup(name + plen), .changed_ms = now_ms};
            o->renew = renew ? rss_xstrdup(renew) : NULL;
        } else if ((renew == NULL) != (o->renew == NULL) || (renew && strcmp(renew, o->renew))) {
            free(o->renew);
            o->renew = renew ? rss_xstrdup(renew) : NULL;
            o->changed_ms = now_ms;
            o->kubelet = LEADER_KUBELET_UNKNOWN;
            o->kubelet_ms = 0;
            o->node_boot[0] = '\0';
        }
        o->duration_ms = duration_ms(it);
        o->fence_ms = published_ms(it, RSS_ANNOTATION_FENCE_TIMEOUT, 3600 * 1000);
        /* A hook timeout may be as long as the spec allows (366 days, spec.c): a cap below it would let the
         * leader count a shorter stop than the agent runs. */
        o->stop_ms = published_ms(it, RSS_ANNOTATION_STOP_TIMEOUT, 366LL * 24 * 3600 * 1000);
        learn_agent(o, it);
    }
    /* Report a change of any verdict, so that the caller plans again at once. */
    bool changed = false;
    for (size_t i = 0; i < lv->n; i++) {
        bool alive, dead;
        int64_t silent;
        verdict(lv, &lv->v[i], now_ms, dead_after_ms, false, &alive, &dead, &silent);
        changed |= alive != lv->v[i].was_alive || dead != lv->v[i].was_dead;
        lv->v[i].was_alive = alive;
        lv->v[i].was_dead = dead;
    }
    return changed;
}

/* Drops the reports of pods no LIST has shown for an hour (deleted pods), to make room. */
static void forget_old_reports(struct leader_liveness *lv, int64_t now_ms)
{
    size_t k = 0;
    for (size_t i = 0; i < lv->n_r; i++) {
        if (now_ms - lv->r[i].seen_ms > 3600 * 1000) {
            free(lv->r[i].uid);
            continue;
        }
        lv->r[k++] = lv->r[i];
    }
    lv->n_r = k;
}

void leader_liveness_reports(struct leader_liveness *lv, const cJSON *pods, const cJSON *records,
                             int64_t now_ms)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(pods, "items"))
    {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "uid"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
        const char *rep = name ? rss_record_value(leader_record_find(records, name), RSS_RECORD_OBSERVED,
                                                  RSS_RECORD_OBSERVED_FOR, uid)
                               : NULL;
        const char *node = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "spec"), "nodeName"));
        if (!uid || !rep)
            continue;
        uint64_t h = rss_hash_fnv1a(rep);
        struct leader_report_obs *r = NULL;
        for (size_t i = 0; i < lv->n_r && !r; i++)
            if (!strcmp(lv->r[i].uid, uid))
                r = &lv->r[i];
        if (!r) {
            if (lv->n_r >= LEADER_MAX_REPORTS)
                forget_old_reports(lv, now_ms);
            if (lv->n_r >= LEADER_MAX_REPORTS)
                continue; /* no revival without a baseline: the safe side is a node that looks dead */
            *(struct leader_report_obs *)rss_xarray_push(&lv->r, &lv->n_r, &lv->cap_r, sizeof(*lv->r)) =
                (struct leader_report_obs){.uid = rss_xstrdup(uid), .hash = h, .seen_ms = now_ms};
            continue;
        }
        r->seen_ms = now_ms;
        if (r->hash == h)
            continue;
        r->hash = h;
        struct leader_node_obs *o = node ? find(lv, node) : NULL;
        if (o)
            o->changed_ms = now_ms;
    }
}

void leader_liveness_node(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                          int64_t dead_after_ms, bool *alive, bool *dead, int64_t *silent_ms)
{
    *alive = *dead = false;
    *silent_ms = 0;
    const struct leader_node_obs *o = node ? find(lv, node) : NULL;
    if (o) /* a node without a heartbeat Lease is unknown: neither alive nor dead (waiting is safe) */
        verdict(lv, o, now_ms, dead_after_ms, true, alive, dead, silent_ms);
}

int64_t leader_liveness_dead_at(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                                int64_t dead_after_ms)
{
    const struct leader_node_obs *o = node ? find(lv, node) : NULL;
    bool alive, dead;
    int64_t silent;
    if (!o)
        return 0;
    verdict(lv, o, now_ms, dead_after_ms, true, &alive, &dead, &silent);
    /* Past the window and waiting only for the kubelet's view: the kubelet read re-plans (no due time). */
    int64_t window = node_window(lv, o, dead_after_ms, true);
    return alive || dead || silent >= window ? 0 : now_ms + window - silent;
}

bool leader_liveness_agent_absent(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                                  int64_t dead_after_ms)
{
    const struct leader_node_obs *o = node ? find(lv, node) : NULL;
    return o && now_ms - since_ms(lv, o) >= node_window(lv, o, dead_after_ms, true) && !kubelet_down(lv, o);
}

const char *leader_liveness_suspect(const struct leader_liveness *lv, size_t i, int64_t now_ms,
                                    int64_t dead_after_ms, int64_t recheck_ms)
{
    for (size_t k = 0; k < lv->n; k++) {
        const struct leader_node_obs *o = &lv->v[k];
        if (now_ms - since_ms(lv, o) < node_window(lv, o, dead_after_ms, false))
            continue;
        if (kubelet_down(lv, o) && now_ms - o->kubelet_ms < recheck_ms)
            continue;
        if (i-- == 0)
            return o->node;
    }
    return NULL;
}

bool leader_liveness_kubelet(struct leader_liveness *lv, const char *node, enum leader_kubelet k,
                             const char *boot_id, int64_t now_ms, int64_t dead_after_ms)
{
    struct leader_node_obs *o = node ? find(lv, node) : NULL;
    if (!o)
        return false;
    o->kubelet = k;
    o->kubelet_ms = now_ms;
    char was[40];
    memcpy(was, o->node_boot, sizeof(was));
    if (boot_id)
        copy_boot(o->node_boot, boot_id);
    bool rebooted = o->agent_boot[0] && o->node_boot[0] && strcmp(o->node_boot, was) &&
                    strcmp(o->node_boot, o->agent_boot);
    bool alive, dead;
    int64_t silent;
    verdict(lv, o, now_ms, dead_after_ms, false, &alive, &dead, &silent);
    bool changed = dead != o->was_dead || rebooted; /* a reboot supersedes reports: plan again */
    o->was_dead = dead;
    return changed;
}

const char *leader_node_boot_id(const cJSON *node)
{
    return rss_json_str(node, "status.nodeInfo.bootID");
}

enum leader_kubelet leader_node_kubelet(const cJSON *node)
{
    const cJSON *c;
    cJSON_ArrayForEach(
        c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"), "conditions"))
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));
        if (type && st && !strcmp(type, "Ready"))
            return !strcmp(st, "True") ? LEADER_KUBELET_READY : LEADER_KUBELET_DOWN;
    }
    /* No Ready condition: a Node the kubelet never reported on; nothing says it is down. */
    return LEADER_KUBELET_UNKNOWN;
}
