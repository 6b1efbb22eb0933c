/* planner_recovery.c -- rows 9 and 10: the lights-out recovery seeds the highest sequence once every
 * member reported (or spec.recovery.minimumMembers did), and waits while anything is unclear. */
#include "rss/clock.h"
#include "planner_internal.h"

/* Lights-out recovery (rules 1, 2, 3, 6, 8): nothing is live and nothing issued is unresolved. */
void planner_recovery(struct planner *c)
{
    if (c->target == 0) {
        planner_scale_down(c);
        return;
    }
    /* Every member the RSS should have, and every existing pod above that (a StatefulSet scaled out of
     * band, or a scale down not finished): any of them may hold the newest data. Members the StatefulSet
     * has not created yet are waited for, so a scale up never seeds in the plan that raises replicas. */
    int w = c->target;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].exists && (int)c->m[i].ordinal >= w)
            w = (int)c->m[i].ordinal + 1;
    if (c->sts <= 0) {
        planner_wait(c, false, "WaitingForMembers", "waiting for the StatefulSet to create the member pods");
        return;
    }
    struct rss_strbuf missing = {0}, lost = {0}, all = {0}, behind = {0}, diverged = {0};
    size_t n_missing = 0, n_cand = 0, n_behind = 0;
    bool warn = false;
    struct planner_member *best = NULL, *tie = NULL, *repl = NULL;
    _cleanup_free_ char(*whys)[512] = rss_xcalloc((size_t)w + 1, sizeof(*whys));
    for (int i = 0; i < w; i++) {
        struct planner_member *m = &c->m[i];
        char *why = whys[i];
        /* Rule 14: its history diverged from the cluster's; neither a candidate nor waited for. */
        if (planner_hold_diverged(c, m, &diverged))
            continue;
        /* No running count of seconds here: this text is the status message and the wait Event,
         * which must not change (and be sent again) on every plan. */
        if (m->fenced_dead)
            snprintf(why, 512,
                     "node %s is down (silent past the fence timeout and the stop timeout as this leader saw "
                     "it); its data may be "
                     "the newest%s",
                     m->in->node,
                     c->spec->node_loss_replace
                         ? "; spec.nodeLossPolicy Replace replaces a member only while "
                           "a primary runs"
                         : "");
        else if (!m->exists)
            snprintf(why, 512, "pod does not exist");
        else if (m->deleting)
            snprintf(why, 512, "pod is being deleted");
        else if (!m->has_node)
            snprintf(why, 512, "pod is not scheduled");
        else if (m->node_silent)
            snprintf(why, 512, "node %s silent", m->in->node);
        else if (!m->obs)
            snprintf(why, 512, "%s%.400s",
                     m->in->observed_error ? "unreadable report: " : "no report from its agent yet",
                     m->in->observed_error ? m->in->observed_error : "");
        else if (!m->fresh)
            snprintf(why, 512, "report predates epoch %" PRIu64 "; waiting for its agent to re-probe",
                     c->in->epoch);
        else if (!m->current)
            snprintf(why, 512, "report is for an older container");
        else if (m->role != RSS_ROLE_STOPPED)
            snprintf(why, 512, "role %s", rss_role_name(m->role));
        else if (m->failures >= (unsigned)c->spec->max_failures)
            snprintf(why, 512, "failed %u times; being replaced", m->failures);
        else if (m->seq_error) {
            snprintf(why, 512, "sequence error: %.400s", m->seq_error);
            warn = true;
        } else if (!m->has_seq)
            snprintf(why, 512, "no sequence reported yet");
        if (why[0]) {
            m->missing = true;
            continue;
        }
        if (m->repl_pending) {
            /* docs/node-loss.md: a replacement holds no data of its own until it has joined; it never
             * seeds, and does not block the others either. */
            rss_strbuf_item(&m->note, "a replacement that has not run yet: never seeds");
            rss_strbuf_item(&missing,
                            "%s (replaced a member lost with its node and has not run yet: never seeds)",
                            m->pod);
            if (!repl || m->seq > repl->seq)
                repl = m;
            continue;
        }
        n_cand++;
        char s[24];
        fmt_seq(m->seq, s, sizeof(s));
        rss_strbuf_item(&all, "%s=%s", m->pod, s);
        /* Highest sequence; ties go to the lowest ordinal (compared as numbers: ascending loop). */
        if (!best || m->seq > best->seq) {
            best = m;
            tie = NULL;
        } else if (m->seq == best->seq && !tie) {
            tie = m;
        }
    }
    /* Second pass, once every candidate is known: a missing member is waited for unless the journal
     * proves it behind a member that reported (spec.recovery.replication: Synchronous). */
    for (int i = 0; i < w; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->missing)
            continue;
        const struct planner_member *y = planner_journal_behind(c, m);
        char when[RSS_TIME_LEN], ys[24], ms[24];
        if (y) {
            m->behind = true;
            n_behind++;
            fmt_seq(y->seq, ys, sizeof(ys));
            fmt_seq(m->j_seq, ms, sizeof(ms));
            rss_strbuf_item(&behind,
                            "%s (it went down at %s while %s ran on as primary; %s now has sequence %s, past "
                            "its last sequence %s)",
                            m->pod, rss_time_ms(when, m->j_down_ms), y->pod, y->pod, ys, ms);
            rss_strbuf_item(&m->note, "not a seed candidate: %s; proven behind %s by the journal", whys[i],
                            y->pod);
            continue;
        }
        n_missing++;
        rss_strbuf_item(&missing, "%s (%s)", m->pod, whys[i]);
        rss_strbuf_item(&m->note, "not a seed candidate: %s", whys[i]);
        /* What going on without it may lose: its last sequence, if it ever reported one. */
        if (m->exists && m->obs && m->in->observed.has_sequence) {
            char ls[24];
            fmt_seq(m->in->observed.sequence, ls, sizeof(ls));
            rss_strbuf_item(&lost, "%s (last reported sequence %s)", m->pod, ls);
        } else {
            rss_strbuf_item(&lost, "%s (sequence never reported)", m->pod);
        }
    }
    int min = c->spec->min_members;
    bool policy = min > 0 && n_cand >= (size_t)min && !planner_new_member_grace(c, w);
    const char *what = c->last_recovery ? "lights-out recovery" : "new cluster";
    char bs[24] = "", ps[24];
    if (best)
        fmt_seq(best->seq, bs, sizeof(bs));
    fmt_seq(c->pin_seq, ps, sizeof(ps));
    if (n_missing && !policy) {
        planner_wait(c, warn, warn ? "SequenceError" : "WaitingForMembers",
                     "%s: waiting for %zu of %d member(s) to report a sequence: %s", what, n_missing, w,
                     rss_strbuf_str(&missing));
    } else if (!best) {
        planner_wait(c, true, "WaitingForMembers", "%s: no member can seed: %s%s%s", what,
                     rss_strbuf_str(&missing), diverged.len ? "; never seeds (rule 14): " : "",
                     diverged.len ? diverged.s : "");
    } else if (repl && repl->seq > best->seq) {
        /* Its volume followed it (not node-local): it may hold the newest data. Never a lower seed. */
        char rs[24];
        fmt_seq(repl->seq, rs, sizeof(rs));
        planner_wait(
            c, true, "WaitingForMembers",
            "%s: %s (a replacement, never seeds) reports sequence %s above the best other member's %s "
            "(%s): refusing to seed the lower sequence; force-seed decides",
            what, repl->pod, rs, bs, best->pod);
    } else if (c->pin && best->seq < c->pin_seq) {
        /* Rule 2: a failed seed is retried on its member; never an automatic fallback to less data. */
        planner_wait(
            c, true, "SeedFallbackRefused",
            "lights-out recovery: the previous seed rss-%s-%u had sequence %s; refusing to seed lower "
            "sequence %s "
            "from %s",
            c->spec->name, c->pin_ordinal, ps, bs, best->pod);
    } else {
        struct rss_strbuf why = {0};
        /* A cluster that never started and whose members are all empty is being created, not
         * recovered: say so rather than "seeds with the highest sequence 0". */
        bool bootstrap = !c->last_recovery && !n_missing && best->seq == 0;
        if (bootstrap)
            rss_strbuf_printf(&why, "new cluster: %s bootstraps, all %zu members empty", best->pod, n_cand);
        else
            rss_strbuf_printf(&why, "lights-out recovery: %s seeds with the highest sequence %s among %s",
                              best->pod, bs, rss_strbuf_str(&all));
        if (tie && !bootstrap)
            rss_strbuf_printf(&why, " (tied with %s; the lowest ordinal wins)", tie->pod);
        if (n_behind)
            rss_strbuf_printf(&why, "; left out, proven behind by the journal: %s", rss_strbuf_str(&behind));
        if (diverged.len)
            rss_strbuf_printf(&why, "; not compared, diverged since an earlier recovery: %s", diverged.s);
        planner_issue(c, best, RSS_ACTION_SEED, NULL, 0, why.s);
        planner_event(c, RSS_EVENT_NORMAL, bootstrap ? "Bootstrap" : "SeedChosen", best, "%s", why.s);
        cJSON_Delete(c->new_recovery);
        c->new_recovery = cJSON_CreateObject();
        cJSON_AddStringToObject(c->new_recovery, "kind", bootstrap ? "Bootstrap" : "LightsOut");
        cJSON_AddStringToObject(c->new_recovery, "seed", best->pod);
        cJSON_AddStringToObject(c->new_recovery, "sequence", bs);
        char when[RSS_TIME_LEN];
        cJSON_AddStringToObject(c->new_recovery, "time", rss_time_ms(when, c->in->now_ms));
        if (n_missing)
            cJSON_AddNumberToObject(c->new_recovery, "membersLeftOut", (double)n_missing);
        if (n_behind)
            cJSON_AddNumberToObject(c->new_recovery, "membersBehind", (double)n_behind);
        planner_decision(c, "%s", why.s);
        for (int i = 0; i < w; i++) {
            struct planner_member *m = &c->m[i];
            if (!m->behind)
                continue;
            char when[RSS_TIME_LEN], js[24], ys[24];
            fmt_seq(m->j_seq, js, sizeof(js));
            const struct planner_member *y = planner_journal_behind(c, m);
            fmt_seq(y->seq, ys, sizeof(ys));
            planner_event(
                c, RSS_EVENT_NORMAL, "LeftOutBehind", m,
                "%s is left out of the recovery: it went down at %s while %s ran on as primary (confirmed "
                "later in the same generation); with synchronous replication (spec.recovery.replication) "
                "every commit of %s is on %s, whose sequence %s is past %s's last sequence %s",
                m->pod, rss_time_ms(when, m->j_down_ms), y->pod, m->pod, y->pod, ys, m->pod, js);
            planner_hold_mark(m, best->seq);
        }
        if (n_missing) {
            /* Rule 3: the admin's opt-in, never a dead node by itself; say what may be lost. */
            planner_event(
                c, RSS_EVENT_WARNING, "MemberSkipped", NULL,
                "seeding %s (sequence %s) without %zu member(s) under spec.recovery.minimumMembers %d; "
                "writes that only they hold may be lost: %s",
                best->pod, bs, n_missing, min, rss_strbuf_str(&lost));
            for (int i = 0; i < w; i++)
                if (c->m[i].missing)
                    planner_hold_mark(&c->m[i], best->seq);
        }
        c->pin = true;
        c->pin_ordinal = best->ordinal;
        c->pin_seq = best->seq;
        free(why.s);
    }
    free(missing.s);
    free(lost.s);
    free(all.s);
    free(behind.s);
    free(diverged.s);
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
