/* planner_running.c -- rows 7 and 8: the running cluster (joins, failover, too many primaries, then
 * the rollout and the scale down), and no primary running. */
#include "planner_internal.h"

static void peers_up(struct planner *c, char ***peers, size_t *n)
{
    *peers = rss_xcalloc(c->n + 1, sizeof(char *));
    *n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].primary_up)
            (*peers)[(*n)++] = rss_spec_peer_dns(c->spec, c->m[i].ordinal);
}

static void free_peers(char **peers, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(peers[i]);
    free(peers);
}

static int cmp_join(const void *a, const void *b)
{
    const struct planner_member *x = *(const struct planner_member *const *)a,
                                *y = *(const struct planner_member *const *)b;
    if (x->has_seq != y->has_seq)
        return x->has_seq ? -1 : 1;
    if (x->has_seq && x->seq != y->seq)
        return x->seq > y->seq ? -1 : 1;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Stopped members below the target are started one at a time, highest sequence first, as primaries up to
 * spec.primaries with the running primaries as peers, then as secondaries when the spec has that hook. */
static bool joins(struct planner *c, size_t slots)
{
    _cleanup_free_ struct planner_member **cand = rss_xcalloc(c->n + 1, sizeof(*cand));
    size_t nc = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        /* A stopped member made from an older template is recreated first (planner_rollout_step()), not
         * started.
         */
        if (m->exists && m->actionable && !m->decided && m->role == RSS_ROLE_STOPPED && !m->outdated &&
            (int)m->ordinal < c->target && m->failures < (unsigned)c->spec->max_failures &&
            !planner_hold_newer(c, m))
            cand[nc++] = m;
    }
    if (!nc)
        return false;
    qsort(cand, nc, sizeof(*cand), cmp_join);
    /* Primaries now, counting starts in flight (with joinConcurrency > 1 several are). */
    size_t n_primary = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *o = &c->m[i];
        bool starting_primary = o->start_inflight && o->in && o->in->desired.action == RSS_ACTION_PRIMARY;
        if ((o->live && o->role == RSS_ROLE_PRIMARY) || starting_primary)
            n_primary++;
    }
    char **peers;
    size_t np;
    peers_up(c, &peers, &np);
    struct rss_strbuf list = {0};
    for (size_t i = 0; i < np; i++)
        rss_strbuf_printf(&list, "%s%s", i ? " " : "", peers[i]);
    size_t started = 0;
    for (size_t k = 0; k < nc && started < slots; k++) {
        struct planner_member *m = cand[k];
        enum rss_action action;
        if (n_primary < (size_t)c->spec->primaries) {
            action = RSS_ACTION_PRIMARY;
            n_primary++;
        } else if (c->spec->hooks[RSS_HOOK_SECONDARY].present) {
            action = RSS_ACTION_SECONDARY;
        } else {
            for (size_t i = k; i < nc; i++)
                rss_strbuf_item(
                    &cand[i]->note,
                    "standby: %zu primaries run (spec.primaries %d) and there is no secondary hook",
                    n_primary, c->spec->primaries);
            break;
        }
        char seqbuf[24] = "none";
        if (m->has_seq)
            fmt_seq(m->seq, seqbuf, sizeof(seqbuf));
        bool failover = m->crashed || (m->prev_known && rss_role_running(m->prev_role) && !m->node_down);
        _cleanup_free_ char *why =
            rss_xasprintf("%s as %s (sequence %s) with peers [%s]", failover ? "failover: restart" : "join",
                          rss_action_name(action), seqbuf, rss_strbuf_str(&list));
        planner_issue(c, m, action, peers, np, why);
        planner_event(c, RSS_EVENT_NORMAL, failover ? "Failover" : "Joining", m,
                      "%s %s; %zu more stopped member(s) to start after it", m->pod, why, nc - k - 1);
        planner_decision(c, "%s: %s", m->pod, why);
        started++;
    }
    free(list.s);
    free_peers(peers, np);
    return started > 0;
}

/* Rule 17: a member running as primary while held (planner_derive.c, `diverged`) holds a history the
 * cluster gave up when it was left out: most often a primary whose whole node froze past the dead window
 * and thawed after a standby was promoted. Every write it takes now is lost at its rejoin, and it is no
 * peer for anyone: it is stopped at once, whatever else runs, and stays held (it rejoins as any held
 * member does). */
static bool stop_diverged(struct planner *c)
{
    bool any = false;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        any |= m->diverged;
        if (!m->diverged || m->decided)
            continue;
        char ss[48] = "a promotion";
        if (m->left_out_seed_seq != UINT64_MAX)
            snprintf(ss, sizeof(ss), "sequence %" PRIu64, m->left_out_seed_seq);
        if (!m->actionable) {
            planner_wait(c, true, "DivergedPrimary",
                         "%s runs as primary with a history the cluster gave up (left out at %s): waiting "
                         "for its agent to stop it",
                         m->pod, ss);
            continue;
        }
        planner_issue(c, m, RSS_ACTION_STOP, NULL, 0,
                      "rule 17: it runs as primary with a history the cluster gave up");
        planner_event(c, RSS_EVENT_WARNING, "DivergedPrimary", m,
                      "%s runs as primary but was left out of the cluster's history at %s (its node was "
                      "judged dead, or it missed a recovery) and never rejoined since: stopping it; it stays "
                      "held and rejoins the cluster's primary, which replaces the writes it took meanwhile",
                      m->pod, ss);
        planner_decision(c, "stopping %s: a diverged primary", m->pod);
    }
    return any;
}

/* Too many primaries (spec.primaries lowered, or two histories): one is stopped, and it rejoins. Under one
 * primary the newer history wins (rule 17): every primary but the newest mark's. Otherwise the highest
 * ordinal, whose data the others share. */
static void too_many_primaries(struct planner *c)
{
    size_t n = 0;
    struct planner_member *victim = NULL;
    bool unresolved = false;
    const struct planner_member *keep =
        c->spec->primaries == 1 && c->top && c->top->primary_up ? c->top : NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        unresolved |= m->unresolved;
        if (!m->running || m->role != RSS_ROLE_PRIMARY || m->diverged || (int)i >= c->target)
            continue;
        n++;
        if (!keep)
            victim = m; /* the highest ordinal */
        else if (m != keep && !victim)
            victim = m;
    }
    if (n <= (size_t)c->spec->primaries || unresolved || !victim || !victim->actionable || victim->decided)
        return;
    if (keep) {
        char a[48], b[48];
        rss_action_id_format(keep->mark_at, a, sizeof(a));
        rss_action_id_format(victim->mark_at, b, sizeof(b));
        planner_issue(c, victim, RSS_ACTION_STOP, NULL, 0, "rule 17: another member holds the newer history");
        planner_event(
            c, RSS_EVENT_WARNING, "Demoting", victim,
            "%zu primaries run but spec.primaries is 1; the newer history wins: %s was made primary "
            "by action %s, %s %s; stopping %s",
            n, keep->pod, a, victim->pod, victim->mark ? b : "by no action rssd recorded", victim->pod);
    } else {
        planner_issue(c, victim, RSS_ACTION_STOP, NULL, 0, "more primaries than spec.primaries");
        planner_event(c, RSS_EVENT_NORMAL, "Demoting", victim,
                      "%zu primaries run but spec.primaries is %d; stopping %s", n, c->spec->primaries,
                      victim->pod);
    }
    planner_decision(c, "stopping %s: too many primaries", victim->pod);
}

/* Row 8's stop serves a recovery; one that cannot start is an outage for nothing (the running secondaries
 * still serve reads). A member the recovery would wait for and that cannot report soon (its node judged
 * dead or silent, its pod missing or unscheduled), unless minimumMembers would go on without it or the
 * journal proves it behind: the first such member, or NULL when the recovery could proceed. Held members
 * (rule 14) are never waited for. */
static const struct planner_member *recovery_blocker(const struct planner *c)
{
    int min = c->spec->min_members;
    if (min > 0) {
        int could = 0;
        for (size_t i = 0; i < c->n; i++) {
            const struct planner_member *m = &c->m[i];
            could += !m->left_out && (m->live || (m->current && m->role == RSS_ROLE_STOPPED && m->has_seq &&
                                                  m->node_alive && !m->deleting));
        }
        if (could >= min)
            return NULL;
    }
    for (size_t i = 0; i < c->n && (int)i < c->target; i++) {
        const struct planner_member *m = &c->m[i];
        if (m->live || m->left_out)
            continue;
        if ((m->fenced_dead || m->node_silent || !m->exists || !m->has_node) && !planner_journal_behind(c, m))
            return m;
    }
    return NULL;
}

/* Rule 12: a primary nobody can see is not a stopped primary (a restarted or hung agent, a report from
 * before this epoch). Stopping its secondaries would be an outage made by rssd. */
static void unobserved_wait(struct planner *c, const struct planner_member *unseen)
{
    char why[512];
    planner_unobserved_why(c, unseen, why, sizeof(why));
    planner_wait(c, unseen->node_silent, "PrimaryUnobserved",
                 "no primary observed running; %s was primary and is not observed stopped (%s): waiting for "
                 "it, the other members are not stopped",
                 unseen->pod, why);
}

void planner_running_cluster(struct planner *c)
{
    planner_failover_load(c);
    bool diverged = stop_diverged(c);
    planner_rollout_halted(c);
    bool inflight = false;
    size_t n_inflight = 0;
    const struct planner_member *starting = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].start_inflight) {
            inflight = true;
            n_inflight++;
            if (!starting)
                starting = &c->m[i];
        }
    /* spec.joinConcurrency: joins in flight at once (1, the safe default: one at a time). */
    size_t slots =
        (size_t)c->spec->join_concurrency > n_inflight ? (size_t)c->spec->join_concurrency - n_inflight : 0;
    if (c->n_primaries_up == 0) {
        /* Rule 6.1 trace 4: never start a member into a cluster whose primaries are gone. */
        if (inflight) {
            planner_wait(c, false, "WaitingForStart", "waiting for %s to finish starting", starting->pod);
            return;
        }
        /* Nothing is promoted or recovered while a diverged primary may still take writes. */
        if (diverged)
            return;
        /* Rule 12 (unobserved_wait()), but one on a silent node is replaced at once under silentNodePolicy
         * Promote, where the standbys detach first (rule 19): that stops none. */
        const struct planner_member *unseen = planner_unobserved_primary(c);
        if (unseen && !planner_failover_early(c, unseen)) {
            unobserved_wait(c, unseen);
            return;
        }
        char fo[512];
        size_t before = c->out->n_patches;
        if (planner_failover_promote(c, fo, sizeof(fo))) { /* rule 15 */
            if (c->out->n_patches > before)
                planner_decision(c, "%s", fo);
            else
                planner_wait(c, false, "Failover", "%s", fo);
            return;
        }
        if (unseen) { /* the failover without the dead window fell back: rule 12 again */
            unobserved_wait(c, unseen);
            return;
        }
        const struct planner_member *b = recovery_blocker(c);
        if (b) {
            planner_wait(c, false, "WaitingForMembers",
                         "no primary runs; a recovery would wait for %s (%s): the running members are not "
                         "stopped until it can start",
                         b->pod,
                         b->fenced_dead   ? "its node is down"
                         : b->node_silent ? "its node is silent"
                         : !b->exists     ? "its pod does not exist"
                                          : "its pod is not scheduled");
            return;
        }
        bool acted = false;
        for (size_t i = 0; i < c->n; i++) {
            struct planner_member *m = &c->m[i];
            if (!m->live)
                continue;
            if (m->actionable && m->running && !m->decided) {
                planner_issue(c, m, RSS_ACTION_STOP, NULL, 0,
                              "no primary runs: stop so that a new recovery can start");
                planner_event(
                    c, RSS_EVENT_WARNING, "NoPrimary", m,
                    "no primary is running; stopping %s (%s) so that a new recovery can seed the highest "
                    "sequence",
                    m->pod, rss_role_name(m->role));
                acted = true;
            } else if (!m->decided) {
                planner_wait(c, false, "WaitingForMembers", "no primary runs; waiting for %s (%s%s)", m->pod,
                             rss_role_name(m->role), m->node_silent ? ", node silent" : "");
            }
        }
        if (acted)
            planner_decision(c, "no primary runs: stopping the remaining members for a new recovery");
        return;
    }
    planner_replace_lost(c);
    /* After a leader change every agent re-probes within moments; joining before they did would pick
     * the order (highest sequence first) from the members that happened to answer first. A member on a
     * node that went silent does not hold anyone up. */
    struct planner_member *stale = NULL;
    for (size_t i = 0; i < c->n && !stale; i++) {
        struct planner_member *m = &c->m[i];
        if (m->exists && !m->deleting && m->node_alive && m->obs && !m->fresh && (int)m->ordinal < c->target)
            stale = m;
    }
    bool joined = false;
    if (!slots)
        planner_wait(c, false, "WaitingForStart", "waiting for %s to finish starting before the next one",
                     starting->pod);
    else if (stale && stale->in->observed_superseded)
        planner_wait(c, false, "WaitingForMembers", "waiting for %s to report from node %s's new rssd",
                     stale->pod, stale->in->node);
    else if (stale)
        planner_wait(c, false, "WaitingForMembers", "waiting for %s to report under epoch %" PRIu64,
                     stale->pod, c->in->epoch);
    else
        joined = planner_failover_repoint(c) || planner_failover_reattach(c) || joins(c, slots);
    if (!inflight && !stale && !joined)
        too_many_primaries(c);
    bool decided = false;
    for (size_t i = 0; i < c->n; i++)
        decided |= c->m[i].decided;
    /* The admin's switchover before the rollout's next step: it waits for the same quiet. */
    bool busy = inflight || stale || joined || decided;
    if (!planner_switchover(c, busy) && !busy)
        planner_rollout_step(c);
    planner_scale_down(c);
}
