/* forceseed.c -- `kubectl rss force-seed NAME POD`: the leader's refusals checked and shown before the
 * annotation is set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/forceseed.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "rss/spec.h"
#include "plugin_internal.h"

/* The leader's dead window beyond the fence timeout and the stop hook's timeout: the kill, then the
 * margin (LEADER_KILL_MS and LEADER_FENCE_MARGIN in leader/leader_internal.h); and rssd's default
 * --fence-timeout, for an agent that publishes none (the leader takes the longer of its own and the
 * published one; both are the install's setting unless they differ during an upgrade). */
#define KILL_AND_MARGIN_MS 10000
#define DEFAULT_FENCE_MS   30000

/* As the planner judges a member live: it runs, is starting, or has an action in flight, as last
 * reported, unless its node was judged dead and it was fenced. The status carries that report. */
static bool live_in_status(const cJSON *ms)
{
    const char *state = rss_json_str(ms, "state"), *role = rss_json_str(ms, "role");
    const char *last = rss_json_str(ms, "lastResult");
    if (state && !strcmp(state, "fenced"))
        return false;
    if (role && (!strcmp(role, "primary") || !strcmp(role, "secondary") || !strcmp(role, "starting")))
        return true;
    return last && !strcmp(last, "pending");
}

/* The Node's Ready condition is True, or the Node cannot be read (the leader then cannot see the kubelet
 * down either). A Node that is gone counts as down, as for the leader. */
static bool kubelet_ready(const struct plugin_ctx *ctx, const char *node)
{
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", node, NULL);
    _cleanup_json_ cJSON *n = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_get(ctx->kube, path, &n, &err) < 0)
        return rss_error_code(err) != RSS_E_NOT_FOUND;
    const cJSON *c;
    cJSON_ArrayForEach(c, rss_json_path(n, "status.conditions"))
    {
        const char *type = rss_json_str(c, "type"), *st = rss_json_str(c, "status");
        if (type && st && !strcmp(type, "Ready"))
            return !strcmp(st, "True");
    }
    return true; /* no Ready condition: nothing says it is down */
}

/* The node's state as the leader would judge it, from its heartbeat Lease in rssd's namespace: silent
 * from its renewTime (the leader counts from when it saw that renewal, a moment later, or from its own
 * start), dead once the window (the longer fence timeout, the stop hook's, the kill, the margin) has
 * passed and the kubelet is down. A Lease that cannot be read says nothing. */
static void node_from_lease(const struct plugin_ctx *ctx, int64_t stop_ms, int64_t now_ms,
                            struct rss_forceseed_member *f)
{
    _cleanup_free_ char *lname = rss_xasprintf(RSS_HEARTBEAT_PREFIX "%s", f->node);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", ctx->rssd_ns, "leases", lname, NULL);
    _cleanup_json_ cJSON *lease = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_get(ctx->kube, path, &lease, &err) < 0) {
        f->node_state = rss_error_code(err) == RSS_E_NOT_FOUND ? RSS_FORCESEED_NODE_NO_HEARTBEAT
                                                               : RSS_FORCESEED_NODE_UNKNOWN;
        return;
    }
    const char *renew = rss_json_str(lease, "spec.renewTime");
    int64_t renew_ms = 0;
    _cleanup_error_ rss_error_t perr = NULL;
    if (!renew || rss_time_parse_ms(renew, &renew_ms, &perr) < 0)
        return;
    const cJSON *d = rss_json_path(lease, "spec.leaseDurationSeconds");
    int64_t duration =
        cJSON_IsNumber(d) && isfinite(d->valuedouble) && d->valuedouble >= 1 && d->valuedouble <= 3600
            ? (int64_t)d->valuedouble * 1000
            : 1000;
    if (now_ms - renew_ms < duration) {
        f->node_state = RSS_FORCESEED_NODE_ALIVE;
        return;
    }
    const char *fence = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        rss_json_path(lease, "metadata.annotations"), RSS_ANNOTATION_FENCE_TIMEOUT));
    char *end = NULL;
    long long fms = fence ? strtoll(fence, &end, 10) : 0;
    if (!fence || !*fence || *end || fms <= 0 || fms > 3600 * 1000)
        fms = 0;
    f->silent_since_ms = renew_ms;
    f->dead_at_ms = renew_ms + (fms > 0 ? fms : DEFAULT_FENCE_MS) + stop_ms + KILL_AND_MARGIN_MS;
    if (now_ms < f->dead_at_ms)
        f->node_state = RSS_FORCESEED_NODE_SILENT;
    else
        f->node_state = kubelet_ready(ctx, f->node) ? RSS_FORCESEED_NODE_ABSENT : RSS_FORCESEED_NODE_DOWN;
}

int plugin_force_seed(const struct plugin_ctx *ctx, const char *name, const char *pod, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    _cleanup_free_ char *pods_path = rss_kube_path("v1", ctx->ns, "pods", NULL, NULL);
    _cleanup_free_ char *sel = rss_xasprintf(RSS_LABEL_NAME "=%s", name);
    struct rss_kube_list_opts lo = {.label_selector = sel};
    _cleanup_json_ cJSON *pods = NULL;
    if (rss_kube_list(ctx->kube, pods_path, &lo, &pods, err) < 0)
        return rss_error_wrap(err, "listing the member pods of %s/%s", ctx->ns, name);

    /* The members: every pod of the RSS, and every member the status still names (a pod that is gone
     * does not exist, as for the planner). */
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(pods, "items");
    size_t cap = (size_t)cJSON_GetArraySize(items) +
                 (size_t)cJSON_GetArraySize(rss_json_path(rss, "status.memberStatus")) + 1;
    _cleanup_free_ struct rss_forceseed_member *m = rss_xcalloc(cap, sizeof(*m));
    size_t n = 0;
    const cJSON *p;
    /* The stop hook's timeout as the runtime gets it (whole seconds), for the node's dead window. */
    struct rss_spec spec = {0};
    _cleanup_error_ rss_error_t serr = NULL;
    int64_t stop_ms = 0;
    if (rss_spec_parse(rss, &spec, &serr) == 0)
        stop_ms = (int64_t)((spec.hooks[RSS_HOOK_STOP].timeout_ms + 999) / 1000) * 1000;
    rss_spec_clear(&spec);
    int64_t now_ms = rss_clock_wall_ms();
    cJSON_ArrayForEach(p, items)
    {
        const char *pn = rss_json_str(p, "metadata.name");
        if (!pn)
            continue;
        const cJSON *ms = plugin_member_status(rss, pn);
        struct rss_forceseed_member *f = &m[n++];
        *f = (struct rss_forceseed_member){.pod = pn, .exists = true, .live = ms && live_in_status(ms)};
        if (!f->live)
            continue;
        /* Why it may run, in the words the leader's Warning uses. */
        const char *state = rss_json_str(ms, "state"), *last = rss_json_str(ms, "lastResult");
        f->role = rss_json_str(ms, "role");
        f->action = last && !strcmp(last, "pending") ? rss_json_str(ms, "lastHook") : NULL;
        f->stale = state != NULL;
        f->node = rss_json_str(p, "spec.nodeName");
        if (!f->node)
            f->node = rss_json_str(ms, "node");
        if (f->node)
            node_from_lease(ctx, stop_ms, now_ms, f);
    }
    cJSON_ArrayForEach(p, rss_json_path(rss, "status.memberStatus"))
    {
        const char *pn = rss_json_str(p, "name");
        bool seen = false;
        for (size_t i = 0; pn && i < n; i++)
            seen |= !strcmp(m[i].pod, pn);
        if (pn && !seen)
            m[n++] = (struct rss_forceseed_member){.pod = pn};
    }

    fprintf(ctx->out, "%s/%s members, as rssd last reported them:\n", ctx->ns, name);
    for (size_t i = 0; i < n; i++) {
        const cJSON *ms = plugin_member_status(rss, m[i].pod);
        const char *seq = ms ? rss_json_str(ms, "sequence") : NULL;
        const char *role = ms ? rss_json_str(ms, "role") : NULL,
                   *state = ms ? rss_json_str(ms, "state") : NULL;
        fprintf(ctx->out, "  %-24s sequence %-20s %s%s%s%s\n", m[i].pod,
                seq ? seq : (ms && rss_json_str(ms, "sequenceError") ? "error" : "unknown"),
                role ? role : "unreported", state ? " (" : "", state ? state : "", state ? ")" : "");
        if (!m[i].exists)
            fprintf(ctx->out, "  %-24s (its pod does not exist)\n", "");
    }

    enum rss_forceseed_verdict v = rss_forceseed_check(pod, m, n, NULL, NULL);
    if (v != RSS_FORCESEED_ALLOWED) {
        /* The leader's own words (rss_forceseed_explain), from what this command can read: its times
         * count from the heartbeat's renewTime, the leader's from when it saw that renewal. */
        _cleanup_free_ char *why = rss_forceseed_explain(pod, v, m, n, now_ms);
        if (v == RSS_FORCESEED_RUNNING)
            return rss_error_make(err, RSS_E_INVALID, 0, "%s; rssd would refuse the annotation too", why);
        return rss_error_make(err, RSS_E_INVALID, 0, "%s of %s/%s; rssd would refuse the annotation too", why,
                              ctx->ns, name);
    }
    /* Annotation keys hold dots: no dotted path. */
    const char *pending = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        rss_json_path(rss, "metadata.annotations"), RSS_ANNOTATION_FORCE_SEED));
    if (pending)
        fprintf(ctx->out, "A force-seed of %s is already requested; it is replaced.\n", pending);

    /* What the admin is about to accept: members with a higher sequence lose what only they hold. */
    const cJSON *mine = plugin_member_status(rss, pod);
    const char *my_seq = mine ? rss_json_str(mine, "sequence") : NULL;
    unsigned long long mv = my_seq ? strtoull(my_seq, NULL, 10) : 0;
    bool warned = false;
    for (size_t i = 0; i < n; i++) {
        const cJSON *ms = plugin_member_status(rss, m[i].pod);
        const char *seq = ms ? rss_json_str(ms, "sequence") : NULL;
        if (!strcmp(m[i].pod, pod))
            continue;
        if (!seq || !my_seq || strtoull(seq, NULL, 10) > mv) {
            fprintf(ctx->out, "WARNING: %s %s%s; writes only it holds may be lost.\n", m[i].pod,
                    seq ? "has a higher sequence: " : "did not report a sequence", seq ? seq : "");
            warned = true;
        }
    }
    if (!warned)
        fprintf(ctx->out, "%s has the highest sequence reported.\n", pod);
    const char *role = mine ? rss_json_str(mine, "role") : NULL;
    if (!role || strcmp(role, "stopped"))
        fprintf(ctx->out, "Note: rssd seeds %s only once it reports as stopped.\n", pod);
    if (plugin_annotate(ctx, name, rss, RSS_ANNOTATION_FORCE_SEED, pod, pod, err) < 0)
        return -1;
    fprintf(ctx->out,
            "%s=%s set on %s/%s. The leader checks again, seeds %s, records lastRecovery.kind ForceSeed "
            "and removes the annotation (or refuses with a Warning ForceSeedRefused).\n"
            "Follow it with: kubectl rss status %s -n %s\n",
            RSS_ANNOTATION_FORCE_SEED, pod, ctx->ns, name, pod, name, ctx->ns);
    return 0;
}
