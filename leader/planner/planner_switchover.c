/* planner_switchover.c -- the admin's planned switchover: stop the primary, then rule 15's promotion.
 *
 * A switchover is a failover the admin asks for (kubectl rss switchover, the rss.clusterlabs.org/switchover
 * annotation), so it keeps every promise of planner_failover.c by going through it: this file only stops
 * the primary with its own `stop` hook (the application's clean shutdown, which for PostgreSQL sends the
 * standbys everything it wrote), once nothing is in flight and enough standbys follow it for the promotion
 * to need no lights-out. From the plan that sees it stopped on, the failover path asks the standbys for
 * their positions, promotes the most advanced (the named one when it is as advanced: a tie never costs a
 * commit), repoints the others and lets the old primary rejoin as a secondary. status.failover.switchover
 * carries the request meanwhile; only the choice among equals depends on it, so its loss costs nothing. */
#include <stdlib.h>

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

bool planner_switchover(struct planner *c, bool busy)
{
    const char *value = c->in->switchover;
    if (!value)
        return false;
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
    size_t s_total = 0, n_run = 0, need = primary ? planner_failover_need(c, primary, &s_total, &n_run) : 1;
    bool promote = c->spec->promote_standby && c->spec->primaries == 1;
    enum rss_switchover_verdict v = rss_switchover_check(from, to, promote, mm, c->n, need);
    /* While something is in flight the members' state is about to change: a verdict now could refuse
     * what the next plan allows (a standby still joining), so it waits; only a request that can never
     * be carried out is refused at once. */
    const struct planner_member *blocker = NULL;
    for (size_t i = 0; i < c->n && !blocker; i++) {
        const struct planner_member *m = &c->m[i];
        if (m->unresolved || m->pending || m->start_inflight || m->decided)
            blocker = m;
    }
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
    _cleanup_free_ char *why =
        rss_xasprintf("switchover: stop the primary so that %s%s is promoted",
                      to ? to : "the most advanced standby", to ? " (or a standby ahead of it)" : "");
    planner_issue(c, primary, RSS_ACTION_STOP, NULL, 0, why);
    char when[RSS_TIME_LEN];
    c->new_failover = cJSON_CreateObject();
    cJSON_AddNumberToObject(c->new_failover, "lost", primary->ordinal);
    cJSON_AddStringToObject(c->new_failover, "since", rss_time_ms(when, c->in->now_ms));
    cJSON *rec = cJSON_AddObjectToObject(c->new_failover, "switchover");
    cJSON_AddStringToObject(rec, "from", from);
    if (to)
        cJSON_AddStringToObject(rec, "to", to);
    planner_event(c, RSS_EVENT_NORMAL, "Switchover", primary,
                  "switchover requested (%s): stopping the primary %s; once it is stopped, the %zu running "
                  "standbys report their positions and %s is promoted",
                  value, primary->pod, n_run, to ? to : "the most advanced standby");
    planner_decision(c, "switchover: stopping the primary %s", primary->pod);
    c->out->clear_switchover = true;
    return true;
}
