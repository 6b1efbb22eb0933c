/* planner_switchover.c -- planned switchovers (the admin's, a drain's): stop the primary, then rule 15's
 * promotion.
 *
 * A switchover is a failover the admin asks for (kubectl rss switchover, the rss.clusterlabs.org/switchover
 * annotation), so it keeps every promise of planner_failover.c by going through it: this file only stops
 * the primary with its own `stop` hook (the application's clean shutdown, which for PostgreSQL sends the
 * standbys everything it wrote), once nothing is in flight and enough standbys follow it for the promotion
 * to need no lights-out. From the plan that sees it stopped on, the failover path asks the standbys for
 * their positions, promotes the most advanced (the named one when it is as advanced: a tie never costs a
 * commit), repoints the others and lets the old primary rejoin as a secondary. status.failover.switchover
 * carries the request meanwhile; only the choice among equals depends on it, so its loss costs nothing.
 * The same happens unasked when the primary's node is cordoned, and for a rolling update's primary. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/switchover.h"
#include "planner_internal.h"

static bool refuse(struct planner *c, const char *value, const char *why)
{
    planner_event(c, RSS_EVENT_WARNING, "SwitchoverRefused", NULL,
                  "switchover request %s refused: %s; the annotation " RSS_ANNOTATION_SWITCHOVER
                  " is removed",
                  value, why);
    c->out->clear_switchover = true;
    return false;
}

/* The primary a switchover would stop: the newest mark's member when it runs as primary, else the one
 * running primary (an RSS from before the marks); NULL when none or several run. */
static struct planner_member *the_primary(struct planner *c)
{
    if (c->top && c->top->primary_up)
        return c->top;
    struct planner_member *p = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m->primary_up && m->role == RSS_ROLE_PRIMARY) {
            if (p)
                return NULL;
            p = m;
        }
    }
    return p;
}

/* The shared check on this plan's members: primary (NULL: none or several run) asked to hand over to `to`
 * (NULL: the most advanced standby); the standbys S, those running that follow it, and the answers the
 * promotion will need. */
static enum rss_switchover_verdict verdict(struct planner *c, struct planner_member *primary,
                                           const char *from, const char *to, size_t *s_total, size_t *n_run,
                                           size_t *need)
{
    _cleanup_free_ struct rss_switchover_member *mm = rss_xcalloc(c->n + 1, sizeof(*mm));
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        mm[i] = (struct rss_switchover_member){
            .pod = m->pod,
            .primary = m == primary,
            .standby = primary && m != primary && m->exists && planner_standby_runs(m) &&
                       planner_follows(m, primary),
            .leaving = (int)m->ordinal >= c->target,
        };
    }
    *s_total = *n_run = 0;
    *need = primary ? planner_failover_need(c, primary, s_total, n_run) : 1;
    return rss_switchover_check(from, to, c->spec->promote_standby && c->spec->primaries == 1, mm, c->n,
                                *need);
}

/* Stops the primary for a switchover (why: the request, for the Event) and records it in status.failover,
 * which carries it to the promotion (planner_failover.c). */
static void start(struct planner *c, struct planner_member *primary, const char *to, size_t n_run,
                  const char *why)
{
    _cleanup_free_ char *reason =
        rss_xasprintf("switchover: stop the primary so that %s%s is promoted",
                      to ? to : "the most advanced standby", to ? " (or a standby ahead of it)" : "");
    planner_issue(c, primary, RSS_ACTION_STOP, NULL, 0, reason);
    char when[RSS_TIME_LEN];
    cJSON_Delete(c->new_failover);
    c->new_failover = cJSON_CreateObject();
    cJSON_AddNumberToObject(c->new_failover, "lost", primary->ordinal);
    cJSON_AddStringToObject(c->new_failover, "since", rss_time_ms(when, c->in->now_ms));
    cJSON *rec = cJSON_AddObjectToObject(c->new_failover, "switchover");
    cJSON_AddStringToObject(rec, "from", primary->pod);
    if (to)
        cJSON_AddStringToObject(rec, "to", to);
    planner_event(c, RSS_EVENT_NORMAL, "Switchover", primary,
                  "%s: stopping the primary %s; once it is stopped, the %zu running standbys report their "
                  "positions and %s is promoted",
                  why, primary->pod, n_run, to ? to : "the most advanced standby");
    planner_decision(c, "switchover: stopping the primary %s", primary->pod);
}

/* A switchover of primary fell back to the lights-out path a moment ago (the standbys' positions did not
 * come, a `detach` failed): a drain or a rolling update starting another at once would stop every member
 * again, plan after plan. Until the retry period ends they wait; the admin's own request is not held. */
static bool retry_held(const struct planner *c, const struct planner_member *primary, char *why, size_t size)
{
    const cJSON *f = planner_switchover_fallback(c);
    const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "from"));
    if (!from || strcmp(from, primary->pod))
        return false;
    snprintf(why, size,
             "a switchover from %s fell back to a lights-out recovery at %s (Warning FailoverFallback says "
             "why); another is not started from it for %d minutes (kubectl rss switchover may)",
             primary->pod, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "at")),
             PLANNER_SWITCHOVER_RETRY_MS / 60000);
    return true;
}

bool planner_switchover_rollout(struct planner *c, struct planner_member *primary, const char *rev, char *why,
                                size_t size)
{
    if (retry_held(c, primary, why, size))
        return false;
    size_t s_total, n_run, need;
    enum rss_switchover_verdict v = verdict(c, primary, primary->pod, NULL, &s_total, &n_run, &need);
    if (v != RSS_SWITCHOVER_ALLOWED || c->new_failover) {
        snprintf(why, size, "%s",
                 c->new_failover ? "the last failover's repoint is under way" : rss_switchover_reason(v));
        return false;
    }
    _cleanup_free_ char *msg =
        rss_xasprintf("rolling update to revision %s: the primary is the last member on an "
                      "older revision, so it hands over before its pod is recreated",
                      rev);
    start(c, primary, NULL, n_run, msg);
    return true;
}

/* A member whose state is about to change: an action of this plan or one in flight. */
static const struct planner_member *in_flight(const struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (m->unresolved || m->pending || m->start_inflight || m->decided)
            return m;
    }
    return NULL;
}

/* The primary's node is cordoned (`kubectl drain`, a node upgrade): it hands over before the drain's
 * eviction reaches it, which its own budget refuses meanwhile (leader_budget.c), so the write outage is
 * a switchover's, not the pod's grace period and a failover's. Only to a standby on a node that is not
 * cordoned (a drain of two nodes does not move the primary from one to the other), only when quiet, and
 * only what the admin's request would be allowed to do. Without such a standby the primary stays and
 * its eviction keeps being refused: the drain waits, as it would for any budget. */
static bool drain(struct planner *c, bool busy)
{
    struct planner_member *primary = the_primary(c);
    if (!primary || !primary->in->node_cordoned || !c->spec->promote_standby || c->spec->primaries != 1)
        return false;
    if (busy || c->new_failover || !primary->actionable || in_flight(c))
        return false;
    char held[320];
    if (retry_held(c, primary, held, sizeof(held))) {
        planner_decision(c, "the primary %s's node %s is cordoned; it stays primary: %s", primary->pod,
                         primary->in->node ? primary->in->node : "?", held);
        return false;
    }
    const struct planner_member *to = NULL;
    for (size_t i = 0; i < c->n && !to; i++) {
        const struct planner_member *m = &c->m[i];
        if (m != primary && m->exists && (int)m->ordinal < c->target && !m->in->node_cordoned &&
            planner_standby_runs(m) && planner_follows(m, primary))
            to = m;
    }
    size_t s_total, n_run, need;
    enum rss_switchover_verdict v =
        to ? verdict(c, primary, primary->pod, to->pod, &s_total, &n_run, &need) : RSS_SWITCHOVER_NO_TARGET;
    if (v != RSS_SWITCHOVER_ALLOWED) {
        planner_decision(c, "the primary %s's node %s is cordoned; it stays primary: %s", primary->pod,
                         primary->in->node ? primary->in->node : "?",
                         to ? rss_switchover_reason(v) : "no standby runs on a node that is not cordoned");
        return false;
    }
    _cleanup_free_ char *msg =
        rss_xasprintf("node %s of the primary is cordoned (a drain)", primary->in->node);
    start(c, primary, to->pod, n_run, msg);
    return true;
}

bool planner_switchover(struct planner *c, bool busy)
{
    const char *value = c->in->switchover;
    if (!value)
        return drain(c, busy);
    _cleanup_free_ char *from = NULL, *to = NULL;
    _cleanup_error_ rss_error_t perr = NULL;
    if (rss_switchover_parse(value, &from, &to, &perr) < 0) {
        _cleanup_free_ char *why = rss_error_string(perr);
        return refuse(c, value, why);
    }
    /* Already under way (the annotation's removal was lost): the failover path carries it on. */
    const cJSON *sw =
        c->new_failover ? cJSON_GetObjectItemCaseSensitive(c->new_failover, "switchover") : NULL;
    const char *sw_from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sw, "from"));
    if (sw_from && !strcmp(sw_from, from)) {
        c->out->clear_switchover = true;
        return false;
    }
    struct planner_member *primary = the_primary(c);
    size_t s_total, n_run, need;
    enum rss_switchover_verdict v = verdict(c, primary, from, to, &s_total, &n_run, &need);
    /* While something is in flight the members' state is about to change: a verdict now could refuse
     * what the next plan allows (a standby still joining), so it waits; only a request that can never
     * be carried out is refused at once. */
    const struct planner_member *blocker = in_flight(c);
    bool quiet = !busy && !blocker && !c->new_failover && primary && primary->actionable;
    if (v == RSS_SWITCHOVER_NOT_PROMOTE || (quiet && v != RSS_SWITCHOVER_ALLOWED)) {
        if (v == RSS_SWITCHOVER_TOO_FEW) {
            _cleanup_free_ char *why =
                rss_xasprintf("%s: %zu of %zu standbys run and follow %s, a promotion needs %zu",
                              rss_switchover_reason(v), n_run, s_total, from, need);
            return refuse(c, value, why);
        }
        return refuse(c, value, rss_switchover_reason(v));
    }
    if (!quiet) {
        planner_wait(c, false, "Switchover", "switchover from %s: waiting for %s", from,
                     blocker                ? blocker->pod
                     : c->new_failover      ? "the last failover's repoint"
                     : !primary             ? "a single running primary"
                     : !primary->actionable ? primary->pod
                                            : "the actions of this plan");
        return true;
    }
    _cleanup_free_ char *msg = rss_xasprintf("switchover requested (%s)", value);
    start(c, primary, to, n_run, msg);
    c->out->clear_switchover = true;
    return true;
}
