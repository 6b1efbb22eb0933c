/* status.c -- `kubectl rss status NAME`: members, roles, sequences, the last recovery, and in plain words
 * what rssd waits for. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/strbuf.h"
#include "plugin_internal.h"

/* The reasons of the WaitingForMembers condition (leader/planner/), said for a person at 3 a.m. */
static const struct {
    const char *reason, *words;
} explain[] = {
    {"WaitingForMembers",
     "rssd starts only the copy with the highest sequence, so it waits until every member has reported its "
     "sequence: a member whose node is still off may hold the newest writes. If you know a member is gone "
     "for "
     "good, spec.recovery.minimumMembers lets the recovery go on without it (with a Warning naming it), or "
     "choose "
     "the copy yourself with `kubectl rss force-seed`."},
    {"WaitingForStart", "a member is starting; rssd starts the next one only when it runs (one at a time)."},
    {"SequenceError", "a member's sequence hook printed something that is not a sequence number, so its copy "
                      "cannot be compared "
                      "and rssd will not guess. Fix the data on its volume (it is asked again every "
                      "reconcileInterval) or choose "
                      "a copy with `kubectl rss force-seed`."},
    {"SeedFallbackRefused", "the member with the highest sequence cannot be started, and rssd never falls "
                            "back to an older copy on its "
                            "own. Repair that member, or choose a copy with `kubectl rss force-seed` if you "
                            "accept losing its writes."},
    {"RolloutHalted",
     "a member failed after its update, so the rolling update stops: no other member is stopped while it is "
     "down. Fix the template (a new edit starts a new rollout) or the member."},
    {"RollingUpdate",
     "a rolling update is under way, one member at a time; never more than one member is down."},
    {"MemberOnDeadNode",
     "a member's node is judged dead. With spec.nodeLossPolicy Wait (the default) rssd waits for the node; "
     "with Replace it recreates the member elsewhere once the node is confirmed out of service "
     "(docs/node-loss.md)."},
    {"Suspending", "spec.suspend is set: rssd stops the members one at a time and records their sequences."},
    {"ScalingDown", "the RSS is scaling down; members above the new size are stopped first."},
};

static const char *words_for(const char *reason)
{
    for (size_t i = 0; reason && i < sizeof(explain) / sizeof(explain[0]); i++)
        if (!strcmp(explain[i].reason, reason))
            return explain[i].words;
    return NULL;
}

static const cJSON *condition(const cJSON *rss, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, rss_json_path(rss, "status.conditions"))
    {
        const char *t = rss_json_str(c, "type");
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static void members(const struct plugin_ctx *ctx, const cJSON *rss)
{
    const cJSON *list = rss_json_path(rss, "status.memberStatus");
    if (!cJSON_GetArraySize(list)) {
        fprintf(ctx->out, "\nNo member has reported yet.\n");
        return;
    }
    fprintf(ctx->out, "\n%-24s  %-10s  %-20s  %-16s  %-18s  %s\n", "MEMBER", "ROLE", "SEQUENCE", "NODE",
            "LAST HOOK", "NOTE");
    const cJSON *m;
    cJSON_ArrayForEach(m, list)
    {
        const char *state = rss_json_str(m, "state"), *role = rss_json_str(m, "role");
        const char *seq = rss_json_str(m, "sequence");
        const char *hook = rss_json_str(m, "lastHook"), *res = rss_json_str(m, "lastResult");
        char last[64] = "-";
        if (hook)
            snprintf(last, sizeof(last), "%s %s", hook, res ? res : "");
        struct rss_strbuf note = {0};
        if (state)
            rss_strbuf_item(&note, "%s", state);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "nodeDown")))
            rss_strbuf_item(&note, "node down");
        if (rss_json_str(m, "sequenceError"))
            rss_strbuf_item(&note, "sequence error: %s", rss_json_str(m, "sequenceError"));
        const cJSON *lo = rss_json_path(m, "leftOut");
        if (lo)
            rss_strbuf_item(&note, "%s (seed had %s)",
                            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "held"))
                                ? "HELD BACK: newer than the seed"
                                : "left out of the recovery",
                            or_dash(rss_json_str(lo, "seedSequence")));
        if (rss_json_str(m, "message"))
            rss_strbuf_item(&note, "%s", rss_json_str(m, "message"));
        fprintf(ctx->out, "%-24s  %-10s  %-20s  %-16s  %-18s  %s\n", or_dash(rss_json_str(m, "name")),
                or_dash(role), or_dash(seq), or_dash(rss_json_str(m, "node")), last, rss_strbuf_str(&note));
        free(note.s);
    }
}

int plugin_status(const struct plugin_ctx *ctx, const char *name, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    if (ctx->output) {
        plugin_print_value(ctx, rss);
        return 0;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(rss, "status");
    const cJSON *prim = rss_json_path(rss, "spec.primaries"), *reps = rss_json_path(rss, "spec.replicas");
    fprintf(ctx->out, "ReplicatedStatefulSet %s/%s\n", ctx->ns, name);
    if (!st) {
        fprintf(ctx->out, "No status yet: no rssd leader has handled it. Is rssd running "
                          "(kubectl get pods -n rssd-system), and does it manage this namespace?\n");
        return 0;
    }
    const cJSON *ready = cJSON_GetObjectItemCaseSensitive(st, "readyReplicas");
    fprintf(ctx->out, "  phase:     %s\n  message:   %s\n", or_dash(rss_json_str(st, "phase")),
            or_dash(rss_json_str(st, "message")));
    /* spec.primaries defaults to replicas (every member a primary, as rssd's spec parser does). */
    int want = cJSON_IsNumber(reps) ? reps->valueint : 0;
    int np = cJSON_IsNumber(prim) ? prim->valueint : want;
    fprintf(ctx->out, "  members:   %d wanted, %d ready, ", want,
            cJSON_IsNumber(ready) ? ready->valueint : 0);
    if (np >= want)
        fprintf(ctx->out, "all primaries\n");
    else if (np == 1)
        fprintf(ctx->out, "one primary, the others read-only secondaries\n");
    else
        fprintf(ctx->out, "up to %d primaries, the others read-only secondaries\n", np);
    members(ctx, rss);

    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(st, "lastRecovery");
    if (lr)
        fprintf(ctx->out, "\nLast recovery: %s at %s: %s seeded with sequence %s\n",
                or_dash(rss_json_str(lr, "kind")), or_dash(rss_json_str(lr, "time")),
                or_dash(rss_json_str(lr, "seed")), or_dash(rss_json_str(lr, "sequence")));
    else
        fprintf(ctx->out, "\nLast recovery: none recorded\n");

    /* What rssd waits for, and why, in words. */
    const char *phase = rss_json_str(st, "phase");
    const cJSON *w = condition(rss, "WaitingForMembers");
    const char *ws = w ? rss_json_str(w, "status") : NULL;
    fprintf(ctx->out, "\n");
    if (phase && !strcmp(phase, "Paused")) {
        fprintf(ctx->out,
                "rssd only observes: spec.paused is true. Nothing is started or stopped until it is "
                "cleared.\n");
    } else if (phase && !strcmp(phase, "Suspended")) {
        fprintf(ctx->out,
                "Suspended on purpose (spec.suspend): every member stopped, volumes kept. `kubectl rss "
                "resume %s -n %s` brings it back through a normal recovery.\n",
                name, ctx->ns);
    } else if (ws && !strcmp(ws, "True")) {
        const char *reason = rss_json_str(w, "reason");
        fprintf(ctx->out, "rssd waits (%s): %s\n", or_dash(reason), or_dash(rss_json_str(w, "message")));
        const char *words = words_for(reason);
        if (words)
            fprintf(ctx->out, "Why: %s\n", words);
    } else if (phase && !strcmp(phase, "Running")) {
        fprintf(ctx->out, "Nothing to wait for: every member runs.\n");
    } else {
        fprintf(ctx->out, "rssd is not waiting for anything it could name; the phase is %s.\n",
                or_dash(phase));
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, rss_json_path(rss, "status.memberStatus"))
    {
        if (!cJSON_IsTrue(rss_json_path(m, "leftOut.held")))
            continue;
        fprintf(
            ctx->out,
            "Held back: %s came back with newer data (sequence %s) than the seed had (%s). Joining would "
            "replace its newer writes with the cluster's, so rssd keeps it stopped. Recover what you need "
            "from it, then set spec.recovery.onNewerLateMember: Join.\n",
            or_dash(rss_json_str(m, "name")), or_dash(rss_json_str(m, "sequence")),
            or_dash(rss_json_str(m, "leftOut.seedSequence")));
    }
    fprintf(ctx->out, "\nRecent events (all of them: kubectl rss events %s -n %s):\n", name, ctx->ns);
    return plugin_print_events(ctx, name, 5, err);
}
