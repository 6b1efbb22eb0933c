/* planner_scale.c -- row 4, the StatefulSet created or scaled up; and the scale down: `stop` from the highest
 * ordinal, replicas lowered only past members confirmed stopped (under PromoteStandby, once their last
 * sequence is in the primary's mark: planner_lineage_scaled_away()). */
#include "planner_internal.h"

/* Row 4: the StatefulSet created, or raised to spec.replicas (new pods stay idle until told). */
void planner_scale_up(struct planner *c)
{
    if (c->sts < 0) {
        c->out->create_statefulset = true;
        c->out->set_replicas = c->target;
        planner_event(c, RSS_EVENT_NORMAL, "Creating", NULL, "creating StatefulSet rss-%s with %d replicas",
                      c->spec->name, c->target);
        planner_decision(c, "creating the StatefulSet");
    } else if (c->sts < c->target) {
        c->out->set_replicas = c->target;
        planner_event(c, RSS_EVENT_NORMAL, "ScalingUp", NULL, "raising StatefulSet replicas from %d to %d",
                      c->sts, c->target);
        planner_decision(c, "scaling up to %d", c->target);
    }
}

bool planner_confirmed_stopped(const struct planner_member *m)
{
    return !m->exists || m->fenced_dead ||
           (m->current && m->role == RSS_ROLE_STOPPED && !m->unresolved && !m->pending);
}

/* Shrinks from the highest ordinal: `stop` first, replicas lowered only past confirmed-stopped members. */
void planner_scale_down(struct planner *c)
{
    if (c->sts <= c->target)
        return;
    int next = c->sts;
    while (next > c->target && planner_confirmed_stopped(&c->m[next - 1]))
        next--;
    const struct planner_member *who = NULL;
    if (next < c->sts && !planner_lineage_scaled_away(c, next, &who)) {
        planner_wait(c, false, "ScalingDown",
                     "scale down waits for the sequence of %s before its pod is removed (a failover may not "
                     "promote a standby below it)",
                     who->pod);
        return;
    }
    if (next < c->sts) {
        c->out->set_replicas = next;
        planner_event(c, RSS_EVENT_NORMAL, "ScalingDown", NULL,
                      "lowering StatefulSet replicas from %d to %d: members %d..%d are stopped", c->sts, next,
                      next, c->sts - 1);
        planner_decision(c, "scaling down to %d", next);
    }
    if (next == c->target)
        return;
    struct planner_member *v = &c->m[next - 1];
    if (v->decided)
        return;
    if (!v->actionable || !v->running) {
        planner_wait(c, false, "ScalingDown", "scale down waits for %s (%s) before it can be stopped", v->pod,
                     v->node_silent ? "its node is silent" : rss_role_name(v->role));
        return;
    }
    bool other_primary = false;
    for (size_t i = 0; i < c->n && (int)i < c->target; i++)
        other_primary |= c->m[i].primary_up;
    if (c->target > 0 && !other_primary) {
        planner_wait(c, false, "ScalingDown",
                     "scale down waits: no primary runs among the members that stay");
        return;
    }
    planner_issue(c, v, RSS_ACTION_STOP, NULL, 0, "scale down: stop before the StatefulSet removes the pod");
    planner_event(c, RSS_EVENT_NORMAL, "ScalingDown", v,
                  "stopping %s before lowering replicas (highest ordinal first)", v->pod);
    planner_decision(c, "stopping %s for scale down", v->pod);
}
