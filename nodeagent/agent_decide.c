/* agent_decide.c -- the agent's pure decisions: execute/reject/skip a desired action, generation bumps. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rss/action.h"
#include "rss/agent.h"

const char *rss_agent_verdict_name(enum rss_agent_verdict v)
{
    switch (v) {
    case RSS_AGENT_SKIP:
        return "skip";
    case RSS_AGENT_EXECUTE:
        return "execute";
    case RSS_AGENT_REJECT:
        return "reject";
    }
    return "?";
}

enum rss_agent_verdict rss_agent_decide(const struct rss_desired *d, const struct rss_agent_view *v,
                                        char *reason, size_t size)
{
    char id[48] = "";
    if (d && d->action != RSS_ACTION_NONE)
        rss_action_id_format(d->id, id, sizeof(id));

    if (!d || d->action == RSS_ACTION_NONE) {
        snprintf(reason, size, "no action desired");
        return RSS_AGENT_SKIP;
    }
    /* Rule 10: nothing runs before the Lease was read; a desired from a leader we have not seen yet
     * waits until the Lease watch catches up. */
    if (!v->lease_known) {
        snprintf(reason, size, "%s %s: leader Lease not read yet", rss_action_name(d->action), id);
        return RSS_AGENT_SKIP;
    }
    if (d->epoch != v->lease_epoch) {
        snprintf(reason, size, "%s %s: epoch %" PRIu64 " is %s than the Lease's %" PRIu64 " (%s)",
                 rss_action_name(d->action), id, d->epoch, d->epoch < v->lease_epoch ? "older" : "newer",
                 v->lease_epoch,
                 d->epoch < v->lease_epoch ? "deposed leader: never executed" : "waiting for the Lease view");
        return RSS_AGENT_SKIP;
    }
    /* Exactly once, also across agent restarts: lastAction.id is read back from our own record's `observed`.
     */
    if (v->has_last && rss_action_id_equal(v->last_id, d->id)) {
        snprintf(reason, size, "%s %s: already taken up", rss_action_name(d->action), id);
        return RSS_AGENT_SKIP;
    }
    if (v->fenced) {
        snprintf(reason, size, "%s %s: self-fenced, the API server is unreachable",
                 rss_action_name(d->action), id);
        return RSS_AGENT_SKIP;
    }
    if (!v->has_container) {
        snprintf(reason, size, "%s %s: no running container", rss_action_name(d->action), id);
        return RSS_AGENT_SKIP;
    }
    /* Rule 8, last bullet: report the real state of the container before acting on it. */
    if (!v->probed) {
        snprintf(reason, size, "%s %s: container not probed yet", rss_action_name(d->action), id);
        return RSS_AGENT_SKIP;
    }
    if (d->generation != v->generation) {
        snprintf(reason, size, "stale target generation %" PRIu64 " (member is in generation %" PRIu64 ")",
                 d->generation, v->generation);
        return RSS_AGENT_REJECT;
    }
    snprintf(reason, size, "%s %s: epoch %" PRIu64 " and generation %" PRIu64 " match",
             rss_action_name(d->action), id, d->epoch, d->generation);
    return RSS_AGENT_EXECUTE;
}

uint64_t rss_agent_generation_for_container(bool prev_known, uint64_t prev_generation,
                                            const char *prev_container, const char *new_container,
                                            const char **reason)
{
    const char *why;
    uint64_t g;
    if (!prev_container)
        prev_container = "";
    if (!new_container)
        new_container = "";
    if (!prev_known) {
        why = "first report of this member";
        g = prev_generation + 1;
    } else if (strcmp(prev_container, new_container) != 0) {
        why = "new container";
        g = prev_generation + 1;
    } else {
        why = "same container";
        g = prev_generation;
    }
    if (reason)
        *reason = why;
    return g;
}

bool rss_agent_status_is_crash(enum rss_role before, enum rss_role after, bool we_stopped)
{
    /* Starting counts as up here: a start that ends stopped or failed without our stop is a crash. */
    bool up = rss_role_running(before) || before == RSS_ROLE_STARTING;
    return up && (after == RSS_ROLE_STOPPED || after == RSS_ROLE_FAILED) && !we_stopped;
}

enum rss_result rss_agent_hook_result(int err_code, int exit_code)
{
    if (err_code == 0)
        return exit_code == 0 ? RSS_RESULT_OK : RSS_RESULT_FAILED;
    if (err_code == RSS_E_TIMEOUT)
        return RSS_RESULT_TIMEOUT;
    if (err_code == RSS_E_NOT_RUNNING || err_code == RSS_E_NOT_FOUND)
        return RSS_RESULT_INTERRUPTED;
    return RSS_RESULT_FAILED;
}
