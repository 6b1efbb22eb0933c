/* planner_primary.c -- who may still run unseen: the primary a running cluster waits for (rule 12) and
 * the new members a new cluster gives a moment to report. */
#include "planner_internal.h"

/* A new cluster has no data to lose, but going on under minimumMembers without a member whose pod was
 * created moments ago only makes a MemberSkipped Warning on every create: its agent has not had time to
 * probe it. This long after its pod was created a member is left out as before. */
#define NEW_MEMBER_GRACE_MS 30000

const struct planner_member *planner_unobserved_primary(const struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        /* live: it last said primary (or starting) and its node is not judged dead; not primary_up: this
         * leader has not seen it running under its epoch on a live node. Neither is a stop. A diverged
         * primary is seen, and being stopped (rule 17). */
        if (m->exists && m->live && m->role == RSS_ROLE_PRIMARY && !m->primary_up && !m->diverged)
            return m;
    }
    return NULL;
}

void planner_unobserved_why(const struct planner *c, const struct planner_member *m, char *buf, size_t size)
{
    const struct rss_member_input *in = m->in;
    if (m->node_silent && in->agent_absent)
        snprintf(buf, size,
                 "rssd on node %s has been silent past the dead window while the node's kubelet does not "
                 "report it down: an absent agent, not a dead node",
                 in->node);
    else if (m->node_silent)
        snprintf(buf, size, "node %s is silent", in->node);
    else if (in->observed_superseded)
        snprintf(buf, size,
                 "its last report is from the rssd that node %s ran before (its new agent has not "
                 "probed yet)",
                 in->node);
    else if (!m->fresh)
        snprintf(buf, size, "its last report predates epoch %" PRIu64 " (its agent has not re-probed yet)",
                 c->in->epoch);
    else if (!m->current)
        snprintf(buf, size, "its report is for an older container");
    else
        snprintf(buf, size, "not observed running yet");
}

bool planner_new_member_grace(const struct planner *c, int w)
{
    if (c->last_recovery)
        return false;
    int64_t birth = 0;
    for (int i = 0; i < w; i++) {
        const struct planner_member *m = &c->m[i];
        if (m->exists && m->in->created_ms > 0 && (birth == 0 || m->in->created_ms < birth))
            birth = m->in->created_ms;
    }
    for (int i = 0; i < w; i++) {
        const struct planner_member *m = &c->m[i];
        if (!m->missing || m->fenced_dead || m->seq_error)
            continue;
        int64_t since = m->exists ? m->in->created_ms : birth;
        if (since > 0 && c->in->now_ms - since < NEW_MEMBER_GRACE_MS)
            return true;
    }
    return false;
}
