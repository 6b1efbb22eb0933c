/* planner_recovery.c -- rows 9 and 10: the lights-out recovery seeds the highest sequence once every
 * member reported (or spec.recovery.minimumMembers did), and waits while anything is unclear. */
#include "rss/clock.h"
#include "planner_internal.h"

#define WHY_LEN 512

/* One recovery's view of its members: who can seed, who is waited for or left out, and the texts that
 * say so in the status message and the Events. */
struct tally {
    int w;                 /* members considered: ordinals 0 .. w-1 */
    char (*whys)[WHY_LEN]; /* why each is not a seed candidate ("" when it is one) */
    struct rss_strbuf missing, lost, all, behind, diverged;
    size_t n_missing, n_cand, n_behind;
    bool warn; /* a sequence error among the missing: the wait is a Warning */
    struct planner_member *best, *tie, *repl;
};

/* Every member the RSS should have, and every existing pod above that (a StatefulSet scaled out of band,
 * or a scale down not finished): any of them may hold the newest data. Members the StatefulSet has not
 * created yet are waited for, so a scale up never seeds in the plan that raises replicas. */
static int width(const struct planner *c)
{
    int w = c->target;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].exists && (int)c->m[i].ordinal >= w)
            w = (int)c->m[i].ordinal + 1;
    return w;
}

/* Why m cannot seed now (left empty when it can); *warn is set for a sequence error. No running count of
 * seconds here: this text is the status message and the wait Event, which must not change (and be sent
 * again) on every plan. */
static void not_candidate_why(const struct planner *c, const struct planner_member *m, char *why, bool *warn)
{
    if (m->fenced_dead)
        snprintf(why, WHY_LEN,
                 "node %s is down (silent past the fence timeout and the stop timeout as this leader saw "
                 "it); its data may be "
                 "the newest%s",
                 m->in->node,
                 c->spec->node_loss_replace ? "; spec.nodeLossPolicy Replace replaces a member only while "
                                              "a primary runs"
                                            : "");
    else if (!m->exists)
        snprintf(why, WHY_LEN, "pod does not exist");
    else if (m->deleting)
        snprintf(why, WHY_LEN, "pod is being deleted");
    else if (!m->has_node)
        snprintf(why, WHY_LEN, "pod is not scheduled");
    else if (m->node_silent)
        snprintf(why, WHY_LEN, "node %s silent", m->in->node);
    else if (!m->obs)
        snprintf(why, WHY_LEN, "%s%.400s",
                 m->in->observed_error ? "unreadable report: " : "no report from its agent yet",
                 m->in->observed_error ? m->in->observed_error : "");
    else if (m->in->observed_superseded)
        snprintf(why, WHY_LEN,
                 "report is from the rssd node %s ran before; waiting for its new agent to probe",
                 m->in->node);
    else if (!m->fresh)
        snprintf(why, WHY_LEN, "report predates epoch %" PRIu64 "; waiting for its agent to re-probe",
                 c->in->epoch);
    else if (!m->current)
        snprintf(why, WHY_LEN, "report is for an older container");
    else if (m->role != RSS_ROLE_STOPPED)
        snprintf(why, WHY_LEN, "role %s", rss_role_name(m->role));
    else if (m->failures >= (unsigned)c->spec->max_failures)
        snprintf(why, WHY_LEN, "failed %u times; being replaced", m->failures);
    else if (m->seq_error) {
        snprintf(why, WHY_LEN, "sequence error: %.400s", m->seq_error);
        *warn = true;
    } else if (!m->has_seq)
        snprintf(why, WHY_LEN, "no sequence reported yet");
}

/* First pass: each member is diverged (rule 14: neither a candidate nor waited for), not a candidate
 * (marked missing), a replacement that has not run yet (never seeds, blocks no one), or a candidate. The
 * best candidate has the highest sequence; ties go to the lowest ordinal (an ascending loop). */
static void candidates(struct planner *c, struct tally *t)
{
    for (int i = 0; i < t->w; i++) {
        struct planner_member *m = &c->m[i];
        if (planner_hold_diverged(c, m, &t->diverged))
            continue;
        not_candidate_why(c, m, t->whys[i], &t->warn);
        if (t->whys[i][0]) {
            m->missing = true;
            continue;
        }
        if (m->repl_pending) {
            /* docs/node-loss.md: a replacement holds no data of its own until it has joined; it never
             * seeds, and does not block the others either. */
            rss_strbuf_item(&m->note, "a replacement that has not run yet: never seeds");
            rss_strbuf_item(&t->missing,
                            "%s (replaced a member lost with its node and has not run yet: never seeds)",
                            m->pod);
            if (!t->repl || m->seq > t->repl->seq)
                t->repl = m;
            continue;
        }
        t->n_cand++;
        char s[24];
        fmt_seq(m->seq, s, sizeof(s));
        rss_strbuf_item(&t->all, "%s=%s", m->pod, s);
        if (!t->best || m->seq > t->best->seq) {
            t->best = m;
            t->tie = NULL;
        } else if (m->seq == t->best->seq && !t->tie) {
            t->tie = m;
        }
    }
}

/* Second pass, once every candidate is known: a missing member is waited for unless the journal proves
 * it behind a member that reported (spec.recovery.replication: Synchronous). Also says what going on
 * without the waited-for ones may lose: their last sequence, if they ever reported one. */
static void waited_for(struct planner *c, struct tally *t)
{
    for (int i = 0; i < t->w; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->missing)
            continue;
        const struct planner_member *y = planner_journal_behind(c, m);
        char when[RSS_TIME_LEN], ys[24], ms[24];
        if (y) {
            m->behind = true;
            t->n_behind++;
            fmt_seq(y->seq, ys, sizeof(ys));
            fmt_seq(m->j_seq, ms, sizeof(ms));
            rss_strbuf_item(&t->behind,
                            "%s (it went down at %s while %s ran on as primary; %s now has sequence %s, past "
                            "its last sequence %s)",
                            m->pod, rss_time_ms(when, m->j_down_ms), y->pod, y->pod, ys, ms);
            rss_strbuf_item(&m->note, "not a seed candidate: %s; proven behind %s by the journal", t->whys[i],
                            y->pod);
            continue;
        }
        t->n_missing++;
        rss_strbuf_item(&t->missing, "%s (%s)", m->pod, t->whys[i]);
        rss_strbuf_item(&m->note, "not a seed candidate: %s", t->whys[i]);
        if (m->exists && m->obs && m->in->observed.has_sequence) {
            char ls[24];
            fmt_seq(m->in->observed.sequence, ls, sizeof(ls));
            rss_strbuf_item(&t->lost, "%s (last reported sequence %s)", m->pod, ls);
        } else {
            rss_strbuf_item(&t->lost, "%s (sequence never reported)", m->pod);
        }
    }
}

/* The members the seed goes on without are marked (rule 14: they may hold a diverged history), each with
 * what it means: proven behind by the journal (Normal), or left out under minimumMembers (rule 3, the
 * admin's opt-in, never a dead node by itself: a Warning that says what may be lost). */
static void left_out(struct planner *c, const struct tally *t, const char *bs)
{
    const struct planner_member *best = t->best;
    for (int i = 0; i < t->w; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->behind)
            continue;
        char when[RSS_TIME_LEN], js[24], ys[24];
        fmt_seq(m->j_seq, js, sizeof(js));
        const struct planner_member *y = planner_journal_behind(c, m);
        fmt_seq(y->seq, ys, sizeof(ys));
        planner_event(c, RSS_EVENT_NORMAL, "LeftOutBehind", m,
                      "%s is left out of the recovery: it went down at %s while %s ran on as primary "
                      "(confirmed later in the same generation); with synchronous replication "
                      "(spec.recovery.replication) every commit of %s is on %s, whose sequence %s is past "
                      "%s's last sequence %s",
                      m->pod, rss_time_ms(when, m->j_down_ms), y->pod, m->pod, y->pod, ys, m->pod, js);
        planner_hold_mark(m, best->seq);
    }
    if (t->n_missing) {
        planner_event(c, RSS_EVENT_WARNING, "MemberSkipped", NULL,
                      "seeding %s (sequence %s) without %zu member(s) under spec.recovery.minimumMembers %d; "
                      "writes that only they hold may be lost: %s",
                      best->pod, bs, t->n_missing, c->spec->min_members, rss_strbuf_str(&t->lost));
        for (int i = 0; i < t->w; i++)
            if (c->m[i].missing)
                planner_hold_mark(&c->m[i], best->seq);
    }
}

/* The seed: `seed` issued on the best candidate, said in an Event and status.lastRecovery, and pinned
 * (its record, in the seed's own write, and status.recovery) so that a failed seed is retried on its member,
 * never a lower one (rule 2). */
static void seed(struct planner *c, const struct tally *t, const char *bs)
{
    struct planner_member *best = t->best;
    struct rss_strbuf why = {0};
    /* A cluster that never started and whose members are all empty is being created, not recovered: say
     * so rather than "seeds with the highest sequence 0". */
    bool bootstrap = !c->last_recovery && !t->n_missing && best->seq == 0;
    if (bootstrap)
        rss_strbuf_printf(&why, "new cluster: %s bootstraps, all %zu members empty", best->pod, t->n_cand);
    else
        rss_strbuf_printf(&why, "lights-out recovery: %s seeds with the highest sequence %s among %s",
                          best->pod, bs, rss_strbuf_str(&t->all));
    if (t->tie && !bootstrap)
        rss_strbuf_printf(&why, " (tied with %s; the lowest ordinal wins)", t->tie->pod);
    if (t->n_behind)
        rss_strbuf_printf(&why, "; left out, proven behind by the journal: %s", rss_strbuf_str(&t->behind));
    if (t->diverged.len)
        rss_strbuf_printf(&why, "; not compared, diverged since an earlier recovery: %s", t->diverged.s);
    planner_issue(c, best, RSS_ACTION_SEED, NULL, 0, why.s);
    planner_event(c, RSS_EVENT_NORMAL, bootstrap ? "Bootstrap" : "SeedChosen", best, "%s", why.s);
    cJSON_Delete(c->new_recovery);
    c->new_recovery = cJSON_CreateObject();
    cJSON_AddStringToObject(c->new_recovery, "kind", bootstrap ? "Bootstrap" : "LightsOut");
    cJSON_AddStringToObject(c->new_recovery, "seed", best->pod);
    cJSON_AddStringToObject(c->new_recovery, "sequence", bs);
    char when[RSS_TIME_LEN];
    cJSON_AddStringToObject(c->new_recovery, "time", rss_time_ms(when, c->in->now_ms));
    if (t->n_missing)
        cJSON_AddNumberToObject(c->new_recovery, "membersLeftOut", (double)t->n_missing);
    if (t->n_behind)
        cJSON_AddNumberToObject(c->new_recovery, "membersBehind", (double)t->n_behind);
    planner_decision(c, "%s", why.s);
    left_out(c, t, bs);
    planner_pin_issue(c, best, true, best->seq, false);
    free(why.s);
}

/* Lights-out recovery (rules 1, 2, 3, 6, 8): nothing is live and nothing issued is unresolved. Seeds the
 * best candidate once every member is a candidate (or proven behind), or minimumMembers of them are;
 * never a lower sequence than a replacement reports or than the previous seed had. */
void planner_recovery(struct planner *c)
{
    if (c->target == 0) {
        planner_scale_down(c);
        return;
    }
    int w = width(c);
    if (c->sts <= 0) {
        planner_wait(c, false, "WaitingForMembers", "waiting for the StatefulSet to create the member pods");
        return;
    }
    struct tally t = {.w = w, .whys = rss_xcalloc((size_t)w + 1, sizeof(*t.whys))};
    candidates(c, &t);
    waited_for(c, &t);
    int min = c->spec->min_members;
    bool policy = min > 0 && t.n_cand >= (size_t)min && !planner_new_member_grace(c, w);
    const char *what = c->last_recovery ? "lights-out recovery" : "new cluster";
    char bs[24] = "", ps[24];
    if (t.best)
        fmt_seq(t.best->seq, bs, sizeof(bs));
    fmt_seq(c->pin_seq, ps, sizeof(ps));
    if (t.n_missing && !policy) {
        planner_wait(c, t.warn, t.warn ? "SequenceError" : "WaitingForMembers",
                     "%s: waiting for %zu of %d member(s) to report a sequence: %s", what, t.n_missing, w,
                     rss_strbuf_str(&t.missing));
    } else if (!t.best) {
        planner_wait(c, true, "WaitingForMembers", "%s: no member can seed: %s%s%s", what,
                     rss_strbuf_str(&t.missing), t.diverged.len ? "; never seeds (rule 14): " : "",
                     t.diverged.len ? t.diverged.s : "");
    } else if (t.repl && t.repl->seq > t.best->seq) {
        /* Its volume followed it (not node-local): it may hold the newest data. Never a lower seed. */
        char rs[24];
        fmt_seq(t.repl->seq, rs, sizeof(rs));
        planner_wait(c, true, "WaitingForMembers",
                     "%s: %s (a replacement, never seeds) reports sequence %s above the best other member's "
                     "%s (%s): refusing to seed the lower sequence; force-seed decides",
                     what, t.repl->pod, rs, bs, t.best->pod);
    } else if (c->pin_bad) {
        /* Rule 2 (docs/rules.md): a seed was issued at a sequence nobody can read now; any automatic choice
         * could go below it. The admin's force-seed decides (and its pin replaces the unreadable one). */
        planner_wait(c, true, "SeedFallbackRefused",
                     "lights-out recovery: the recovery pin in the record of %s is unreadable, so the "
                     "sequence of the seed issued to it is unknown; refusing to seed %s (sequence %s) or any "
                     "other member automatically; force-seed decides",
                     c->m[c->pin_bad_ordinal].pod, t.best->pod, bs);
    } else if (c->pin && t.best->seq < c->pin_seq) {
        /* Rule 2: a failed seed is retried on its member; never an automatic fallback to less data. */
        planner_wait(
            c, true, "SeedFallbackRefused",
            "lights-out recovery: the previous seed rss-%s-%u had sequence %s; refusing to seed lower "
            "sequence %s "
            "from %s",
            c->spec->name, c->pin_ordinal, ps, bs, t.best->pod);
    } else if ((t.n_missing || t.n_behind || t.diverged.len) && c->floor &&
               (t.best->seq < c->floor_seq || t.best->seq == 0)) {
        /* The opt-in (minimumMembers, the journal's proof) accepts losing what only the absent members
         * hold; it never meant starting an older history (an emptied volume, a re-created one) in place of
         * one rssd itself started: the admin's force-seed decides. So for a member held out as diverged
         * (rule 14; after a promotion, the old primary): going on without it is not a licence to go below.
         * Sequence 0 is an empty volume (the hook contract; what a bootstrap starts from): once the cluster
         * has run, a floor of 0 (bootstrapped, never recovered since) says nothing of the writes made since,
         * so an empty member never seeds without every member either. */
        char fs[24], from[256];
        fmt_seq(c->floor_seq, fs, sizeof(fs));
        if (c->floor_ordinal == UINT32_MAX)
            snprintf(from, sizeof(from), "the last recovery seeded sequence %s", fs);
        else if (c->floor_scaled_pod)
            snprintf(from, sizeof(from), "%s held sequence %s when a scale-down removed it, %s primary",
                     c->floor_scaled_pod, fs, c->m[c->floor_ordinal].pod);
        else
            snprintf(from, sizeof(from), "%s was made primary with sequence %s", c->m[c->floor_ordinal].pod,
                     fs);
        planner_wait(c, true, "SeedBelowHistory",
                     "%s: %s has the highest sequence (%s) of the members that reported, %s (%s): going on "
                     "without %s would start an older history in its place; waiting for them (force-seed "
                     "decides)",
                     what, t.best->pod, bs,
                     t.best->seq < c->floor_seq
                         ? "below the history rssd already started from"
                         : "an empty volume, and the cluster has run since rssd started it",
                     from,
                     rss_strbuf_str(t.n_missing  ? &t.missing
                                    : t.n_behind ? &t.behind
                                                 : &t.diverged));
    } else {
        seed(c, &t, bs);
    }
    free(t.whys);
    free(t.missing.s);
    free(t.lost.s);
    free(t.all.s);
    free(t.behind.s);
    free(t.diverged.s);
}

/* Row 9. Rule 8: no seed while anything issued is unresolved or any member's state is unclear; nor while a
 * start may still run on a dead node (finding F4). The message names each blocker. */
void planner_recovery_blocked(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m->decided)
            continue;
        if (m->unresolved) {
            char id[48];
            rss_action_id_format(m->in->desired.id, id, sizeof(id));
            planner_wait(c, false, "WaitingForMembers", "waiting for %s to resolve %s (%s)", m->pod,
                         rss_action_name(m->in->desired.action), id);
        } else if (m->unclear) {
            planner_wait(c, m->role == RSS_ROLE_UNKNOWN, "WaitingForMembers", "waiting for %s: role %s",
                         m->pod, rss_role_name(m->role));
        } else if (m->dead_start) {
            char id[48], until[RSS_TIME_LEN];
            rss_action_id_format(m->in->observed.last.id, id, sizeof(id));
            if (m->dead_start_until == INT64_MAX)
                snprintf(until, sizeof(until), "it reports again");
            else
                rss_time_ms(until, m->dead_start_until);
            planner_wait(c, true, "WaitingForStart",
                         "%s's %s (%s) may still be running on node %s, judged dead while it started: no "
                         "seed before %s (its hook timeout and the stop timeout after the write-ahead)",
                         m->pod, rss_action_name(m->in->observed.last.action), id, m->in->node, until);
        }
    }
}
