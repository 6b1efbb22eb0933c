/* agent_decide.c -- the agent's pure decisions: execute/reject/skip a desired action, generation bumps, the
 * failsafe, and a wake's fence (rule 18). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rss/action.h"
#include "rss/agent.h"
#include "rss/clock.h"
#include "rss/json.h"

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

bool rss_agent_failsafe_keep(size_t hosting, size_t reached, bool peer_has_api)
{
    /* A reached peer that talks to the API server means the API is up and we are the one cut off:
     * the leader will judge this node dead and may fail over, so our members must stop. */
    if (peer_has_api)
        return false;
    /* Every agent hosting a member of this RSS, this one included, must be together. A majority is not
     * enough: the leader may sit on the minority side with the API server, see the majority silent for
     * the dead window, take that as "fenced" and start a member on its side (a partial partition with
     * one primary and minimumMembers gave two primaries). Only when no hosting agent is missing is
     * there no side where a member could be started: the leader's "silent means fenced" stays true for
     * every node it could fail over to. Patroni's failsafe requires all members for the same reason. */
    return hosting > 0 && reached == hosting;
}

/* The agent's loop checks every second; a longer gap means the agent itself was not running. */
#define WAKE_STALL_MS 5000

enum rss_agent_wake rss_agent_wake_verdict(bool first, int64_t gap_ms, int64_t silence_ms,
                                           int64_t fence_timeout_ms)
{
    if (!first && gap_ms <= WAKE_STALL_MS)
        return RSS_AGENT_WAKE_NONE;
    /* Shorter than the fence timeout: the leader cannot have judged this node dead (its window is longer
     * still); a fence that comes due soon takes a last look first. */
    if (silence_ms <= fence_timeout_ms)
        return RSS_AGENT_WAKE_LOOK;
    return RSS_AGENT_WAKE_FENCE;
}

/* metav1.Time has whole seconds, truncated: "12:00:05" stands for an instant up to 12:00:05.999. So a time
 * proves "before wall_ms" only when it is at least a second earlier. */
static bool time_before(const char *t, int64_t wall_ms)
{
    int64_t ms;
    rss_error_t err = NULL;
    if (rss_time_parse_ms(t, &ms, &err) < 0) {
        rss_error_release(&err);
        return false;
    }
    return ms + 1000 <= wall_ms;
}

/* Why this proves enough: the leader's dead verdict (leader_liveness.c, kubelet_down) needs, besides the
 * heartbeat's silence, this Node read with Ready not True (or the Node deleted) after the heartbeat's last
 * change. Ready=True is written only by the node's own kubelet, which sets lastTransitionTime to its now
 * whenever the status changes (a Ready=Unknown of the node controller, then True on the thaw), with this
 * node's clock, the one ok_wall_ms was read from: Ready=True since before the renewal means no other
 * status since, so no such read. A Node created after the renewal may be a new one after a deletion. */
bool rss_agent_wake_keep(const cJSON *node, int64_t ok_wall_ms, char *why, size_t size)
{
    char ok[RSS_TIME_LEN];
    rss_time_ms(ok, ok_wall_ms);
    if (!cJSON_IsObject(node)) {
        snprintf(why, size, "no Node object to read");
        return false;
    }
    if (ok_wall_ms <= 0) {
        snprintf(why, size, "the time of the last renewal before the gap is unknown");
        return false;
    }
    const char *created = rss_json_str(node, "metadata.creationTimestamp");
    if (!created || !time_before(created, ok_wall_ms)) {
        snprintf(why, size,
                 "the Node's creationTimestamp (%s) is not before the last renewal before the gap (%s): it "
                 "may have been deleted meanwhile, which the leader counts as a kubelet down",
                 created ? created : "none", ok);
        return false;
    }
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(rss_json_obj(node, "status"), "conditions");
    const char *since = NULL;
    const cJSON *c;
    if (cJSON_IsArray(conds))
        cJSON_ArrayForEach(c, conds)
        {
            const char *type = rss_json_str(c, "type");
            if (!type || strcmp(type, "Ready") != 0)
                continue;
            const char *st = rss_json_str(c, "status"), *lt = rss_json_str(c, "lastTransitionTime");
            if (!st || strcmp(st, "True") != 0) {
                const char *reason = rss_json_str(c, "reason");
                snprintf(why, size,
                         "the Node's Ready condition is %s (%s) since %s: the leader counts that a "
                         "kubelet down",
                         st ? st : "without a status", reason ? reason : "no reason",
                         lt ? lt : "an unknown time");
                return false;
            }
            if (!lt || !time_before(lt, ok_wall_ms)) {
                snprintf(why, size,
                         "the Node has been Ready only since %s, not before the last renewal before the gap "
                         "(%s): it was not Ready in between, and the leader may have read it so",
                         lt ? lt : "an unknown time", ok);
                return false;
            }
            since = lt;
        }
    if (!since) {
        snprintf(why, size, "the Node has no Ready condition");
        return false;
    }
    snprintf(
        why, size,
        "the Node has been Ready since %s and exists since %s, before the last renewal before the gap (%s): "
        "the leader needs Ready read not True after that renewal to judge this node dead",
        since, created, ok);
    return true;
}
