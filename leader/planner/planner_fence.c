/* planner_fence.c -- rows 1 and 3: epoch claims above ours are not trusted, every member record
 * carries this leader's epoch before anything is decided, and starts on dead nodes are retracted. */
#include "planner_internal.h"

/* A member record whose desired or observed epoch is above ours: either a newer leader wrote it, or
 * something other than rssd did (the records live in rssd's own namespace, but a record is still only
 * data). The leader tells them apart with a fresh read of the Lease before it applies this plan; here
 * such a claim is simply not trusted. */
bool planner_epoch_claims(struct planner *c)
{
    bool any = false;
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (!m->exists)
            continue;
        uint64_t d = m->in->has_desired ? m->in->desired.epoch : 0;
        uint64_t o = m->in->has_observed ? m->in->observed.lease_epoch : 0;
        if (d <= c->in->epoch && o <= c->in->epoch)
            continue;
        any = true;
        planner_event(c, RSS_EVENT_WARNING, "InvalidEpoch", m,
                      "%s carries %s epoch %" PRIu64 ", above the leader Lease's %" PRIu64
                      ": ignored (only the Lease says who leads)%s",
                      m->pod, d > c->in->epoch ? "a desired" : "an observed", d > c->in->epoch ? d : o,
                      c->in->epoch, d > c->in->epoch ? "; rssd overwrites it" : "");
    }
    return any;
}

/* Rule 9: before deciding anything, every member's record carries this leader's epoch. */
bool planner_fence(struct planner *c)
{
    struct rss_strbuf list = {0};
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || (m->in->has_desired && m->in->desired.epoch == c->in->epoch))
            continue;
        struct rss_plan_patch *p = planner_patch_for(c, m);
        p->set_desired = true;
        p->desired.epoch = c->in->epoch;
        p->desired.action = RSS_ACTION_NONE;
        p->desired.reason = rss_xasprintf("fenced by leader epoch %" PRIu64, c->in->epoch);
        rss_strbuf_printf(&list, "%s%s", n++ ? ", " : "", m->pod);
    }
    if (n) {
        planner_event(c, RSS_EVENT_NORMAL, "Fencing", NULL,
                      "leader epoch %" PRIu64 " fences %zu member(s) before deciding: %s", c->in->epoch, n,
                      list.s);
        planner_decision(c, "fencing %zu member(s) for leader epoch %" PRIu64, n, c->in->epoch);
    }
    free(list.s);
    return n > 0;
}

/* Rule 8 for a node judged dead: a start it never acknowledged must not run when the node returns, and
 * nothing else is decided until the retraction (desired `none`, a CAS on the record's version) is in. If
 * the agent wrote its write-ahead first, the CAS fails and the next plan sees that. */
bool planner_retract(struct planner *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || !m->stale_start)
            continue;
        char id[48];
        rss_action_id_format(m->in->desired.id, id, sizeof(id));
        struct rss_plan_patch *p = planner_patch_for(c, m);
        p->set_desired = true;
        p->desired.epoch = c->in->epoch;
        p->desired.action = RSS_ACTION_NONE;
        p->desired.reason = rss_xasprintf("retracted: node %s was judged dead before %s (action %s) was done",
                                          m->in->node, rss_action_name(m->in->desired.action), id);
        planner_event(
            c, RSS_EVENT_WARNING, "ActionRetracted", m,
            "%s: %s (action %s) retracted: node %s was judged dead before its agent acknowledged it, and it "
            "must not run when the node comes back",
            m->pod, rss_action_name(m->in->desired.action), id, m->in->node);
        n++;
    }
    if (n)
        planner_decision(c, "retracting %zu start(s) on dead nodes before deciding", n);
    return n > 0;
}
