/* planner_scale.c -- row 4, the StatefulSet created or scaled up; and the scale down: `stop` from the highest
 * ordinal, replicas lowered only past members confirmed stopped (under PromoteStandby, once their last
 * sequence is in the primary's mark: scaled_away()). */
#include "rss/cleanup.h"
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

/* Model finding L4 (docs/model.md): while a scale-down's `stop` of a standby is under way, the primary's
 * `ANY k` may acknowledge a commit on that standby alone; once the pod is removed the promotion quorum S no
 * longer counts it, and the most advanced answer of the standbys that stay may lack the commit. The
 * removed standby's last sequence is kept in the primary's own mark, so the failover that replaces that
 * primary falls back rather than promote below it (and a seed without every member does not go below it:
 * the floor). A later primary writes a mark of its own, without it: it was promoted at or above it. */
static bool scaled_away(struct planner *c, int next, const struct planner_member **who)
{
    struct planner_member *top = c->top;
    if (!c->spec->promote_standby || !top || !top->in || (int)top->ordinal >= next)
        return true;
    bool any = false, known = true;
    uint64_t hi = 0;
    const struct planner_member *hi_m = NULL;
    for (int i = next; i < c->sts && (size_t)i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        /* Gone already: recorded by the plan that removed it. */
        if (!m->exists)
            continue;
        /* On a node judged dead: fenced, and its sequence cannot be read. It may hold the last commit the
         * primary acknowledged before the node died, which a standby that stays has only once it acked a
         * later one: unknown, so a failover of this primary falls back. */
        if (!m->fenced_dead && !m->has_seq && !m->seq_error) {
            *who = m;
            return false;
        }
        any = true;
        if (m->fenced_dead || !m->has_seq) {
            if (known)
                hi_m = m;
            known = false;
        } else if (known && (!hi_m || m->seq > hi)) {
            hi = m->seq;
            hi_m = m;
        }
    }
    if (!any || (top->mark_scaled && (!top->mark_scaled_known || (known && top->mark_scaled_seq >= hi))))
        return true;
    struct rss_plan_patch *p = planner_patch_for(c, top);
    const char *base = p->set_primary ? p->primary : top->in->primary_record;
    if (!base)
        return true; /* its mark is removed in this plan: it follows another primary now */
    _cleanup_json_ cJSON *j = cJSON_Parse(base);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        j = cJSON_CreateObject();
    }
    cJSON_DeleteItemFromObjectCaseSensitive(j, "scaledAway");
    cJSON *sa = cJSON_AddObjectToObject(j, "scaledAway");
    cJSON_AddStringToObject(sa, "pod", hi_m->pod);
    char s[24] = "unknown";
    if (known) {
        fmt_seq(hi, s, sizeof(s));
        cJSON_AddStringToObject(sa, "sequence", s);
    }
    free(p->primary);
    p->set_primary = true;
    p->primary = cJSON_PrintUnformatted(j);
    planner_event(
        c, RSS_EVENT_NORMAL, "ScalingDown", top,
        "%s leaves with sequence %s while %s is primary: a failover of %s will not promote a standby "
        "below it",
        hi_m->pod, s, top->pod, top->pod);
    return true;
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
    if (next < c->sts && !scaled_away(c, next, &who)) {
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
