/* planner_journal.c -- the journal: who went down while others ran on, and the proof that a missing
 * member is behind (spec.recovery.replication: Synchronous). */
#include "planner_internal.h"

/* A member that stops running while others run on as primaries gets a record: when, its last known
 * sequence, and who ran on, in which generation (they ran in the same generation at the previous plan
 * too, so they were up when it went down). A witness is confirmed when it still runs as primary in that
 * generation on a live node once the dead-node window, two status rounds and a status timeout have
 * passed: a witness whose node had died, or whose application had crashed, before the member went down
 * would show it by then (a dead node, a new generation). A witness that stops being so before it is
 * confirmed is dropped; a confirmed one stays (its own later stop is the lights-out). A running member
 * has no record. Reports from before this leader (not current) count as not running: a new leader may
 * drop witnesses, never add one.
 *
 * downAt is the wall clock of the leader that wrote the record, now_ms this one's. Another leader's clock
 * ahead of it ends the window early, which does not matter: to be confirmed, a witness must be `same` in a
 * plan of the confirming leader, so running as primary in the recorded generation in a report made under
 * that leader's epoch, after its agent saw that epoch: later than the LIST the record was made from (its
 * leader still led then), and that generation's report in that LIST brackets the stop with it (a restart,
 * even of the container alone, is a new generation). What
 * the window waits out is a stale report that the recording leader itself trusted, and it runs on that
 * leader's one clock. */
void planner_journal_update(struct planner *c)
{
    const struct rss_spec *sp = c->spec;
    int64_t window = c->in->dead_after_ms + 2 * (int64_t)sp->reconcile_interval_ms +
                     (int64_t)sp->hooks[RSS_HOOK_STATUS].timeout_ms;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m->running) {
            m->j_has = false;
            m->j_n = 0;
            continue;
        }
        if (m->j_has) {
            size_t k = 0;
            for (size_t j = 0; j < m->j_n; j++) {
                const struct planner_member *y = &c->m[m->j_w[j].ordinal];
                bool same = y->primary_up && y->in->observed.generation == m->j_w[j].generation;
                if (!m->j_w[j].confirmed && !same)
                    continue;
                if (!m->j_w[j].confirmed && c->in->now_ms - m->j_down_ms >= window)
                    m->j_w[j].confirmed = true;
                m->j_w[k++] = m->j_w[j];
            }
            m->j_n = k;
            continue;
        }
        if (!(m->prev_known && rss_role_running(m->prev_role)))
            continue;
        m->j_has = true;
        m->j_down_ms = c->in->now_ms;
        m->j_has_seq = m->last_seq_known;
        m->j_seq = m->last_seq;
        m->j_n = 0;
        for (size_t j = 0; j < c->n && m->j_n < PLANNER_JOURNAL_WITNESSES; j++) {
            const struct planner_member *y = &c->m[j];
            if (y == m || !y->primary_up || !y->prev_known || !rss_role_running(y->prev_role) ||
                y->prev_gen != y->in->observed.generation)
                continue;
            m->j_w[m->j_n].ordinal = y->ordinal;
            m->j_w[m->j_n].generation = y->prev_gen;
            m->j_w[m->j_n].confirmed = false;
            m->j_n++;
        }
    }
}

/* The journal's proof that a missing member is behind (docs/planner.md): the admin declared synchronous
 * replication, the member went down while a confirmed witness ran on as primary, and that witness has
 * reported in this recovery a sequence above the member's last known one. With synchronous replication
 * every commit the member made was on the witness before the member went down, and the witness committed
 * past it since. Returns the witness, or NULL. */
const struct planner_member *planner_journal_behind(const struct planner *c, const struct planner_member *m)
{
    if (!c->spec->replication_sync || !m->j_has || !m->j_has_seq)
        return NULL;
    for (size_t k = 0; k < m->j_n; k++) {
        const struct planner_member *y = &c->m[m->j_w[k].ordinal];
        if (m->j_w[k].confirmed && !y->missing && y->has_seq && y->seq > m->j_seq)
            return y;
    }
    return NULL;
}
