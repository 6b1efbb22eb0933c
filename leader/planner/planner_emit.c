/* planner_emit.c -- the plan's output: Events, record patches, pod deletions, the status message, the
 * active label; and the plan's own free and describe. */
#include <stdarg.h>
#include "planner_internal.h"

__attribute__((format(printf, 5, 0))) void planner_eventv(struct planner *c, enum rss_event_type type,
                                                          const char *reason, const struct planner_member *m,
                                                          const char *fmt, va_list ap)
{
    struct rss_plan *o = c->out;
    struct rss_strbuf b = {0};
    rss_strbuf_vprintf(&b, fmt, ap);
    *(struct rss_plan_event *)rss_xarray_push(&o->events, &o->n_events, &c->cap_events, sizeof(*o->events)) =
        (struct rss_plan_event){.type = type,
                                .reason = rss_xstrdup(reason),
                                .message = b.s ? b.s : rss_xstrdup(""),
                                .pod = m ? rss_xstrdup(m->pod) : NULL};
}

__attribute__((format(printf, 5, 6))) void planner_event(struct planner *c, enum rss_event_type type,
                                                         const char *reason, const struct planner_member *m,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    planner_eventv(c, type, reason, m, fmt, ap);
    va_end(ap);
}

struct rss_plan_patch *planner_patch_for(struct planner *c, struct planner_member *m)
{
    struct rss_plan *o = c->out;
    for (size_t i = 0; i < o->n_patches; i++)
        if (o->patches[i].ordinal == m->ordinal)
            return &o->patches[i];
    struct rss_plan_patch *p =
        rss_xarray_push(&o->patches, &o->n_patches, &c->cap_patches, sizeof(*o->patches));
    p->ordinal = m->ordinal;
    p->pod = rss_xstrdup(m->pod);
    p->resource_version = m->in && m->in->resource_version ? rss_xstrdup(m->in->resource_version) : NULL;
    p->pod_uid = m->in && m->in->pod_uid ? rss_xstrdup(m->in->pod_uid) : NULL;
    p->set_active_label = -1;
    return p;
}

/* Writes desired on a member: a fresh id, the member's current generation as target (rule 7). */
void planner_issue(struct planner *c, struct planner_member *m, enum rss_action action, char **peers,
                   size_t n_peers, const char *reason)
{
    struct rss_plan_patch *p = planner_patch_for(c, m);
    p->set_desired = true;
    p->desired.epoch = c->in->epoch;
    p->desired.action = action;
    p->desired.id = (struct rss_action_id){c->in->epoch, ++c->seq};
    p->desired.generation = m->in->observed.generation;
    p->desired.reason = rss_xstrdup(reason);
    if (n_peers) {
        p->desired.peers = rss_xcalloc(n_peers, sizeof(char *));
        for (size_t i = 0; i < n_peers; i++)
            p->desired.peers[i] = rss_xstrdup(peers[i]);
        p->desired.n_peers = n_peers;
    }
    planner_lineage_issue(m, p);
    m->decided = true;
}

void planner_delete_pod(struct planner *c, struct planner_member *m)
{
    struct rss_plan *o = c->out;
    *(struct rss_plan_delete *)rss_xarray_push(&o->deletes, &o->n_deletes, &c->cap_deletes,
                                               sizeof(*o->deletes)) =
        (struct rss_plan_delete){.ordinal = m->ordinal,
                                 .pod = rss_xstrdup(m->pod),
                                 .uid = m->in->pod_uid ? rss_xstrdup(m->in->pod_uid) : NULL};
    m->decided = true;
}

__attribute__((format(printf, 4, 5))) void planner_wait(struct planner *c, bool warning, const char *reason,
                                                        const char *fmt, ...)
{
    if (c->msg.len && !c->waiting)
        return; /* a decision was made; its message wins */
    c->waiting = true;
    c->wait_warning |= warning;
    if (!c->wait_reason || warning)
        c->wait_reason = reason;
    if (c->msg.len)
        rss_strbuf_printf(&c->msg, "; ");
    va_list ap;
    va_start(ap, fmt);
    rss_strbuf_vprintf(&c->msg, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) void planner_decision(struct planner *c, const char *fmt, ...)
{
    if (c->waiting) {
        free(c->msg.s);
        c->msg = (struct rss_strbuf){0};
        c->waiting = false;
    }
    if (c->msg.len)
        rss_strbuf_printf(&c->msg, "; ");
    va_list ap;
    va_start(ap, fmt);
    rss_strbuf_vprintf(&c->msg, fmt, ap);
    va_end(ap);
}

void planner_labels(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        /* A report that is not current for this epoch or this node's rssd (a leader change, an rssd
         * restart, a power-on, before the agent re-probed) says nothing either way: the label stays as the
         * last current report set it until the agent reports again. Flipping it to "false" took every
         * running member out of the client Services for the moments after each leader change. A node
         * judged dead is news either way: its members are stopped. */
        if (!m->exists || m->deleting || (m->obs && !m->fresh && !m->fenced_dead))
            continue;
        /* A diverged primary (rule 17) serves a history the cluster gave up: no client is sent there. */
        int want = m->running && !m->diverged ? 1 : 0;
        if (m->in->active_label != want)
            planner_patch_for(c, m)->set_active_label = want;
    }
}

static int cmp_patch(const void *a, const void *b)
{
    const struct rss_plan_patch *p = a, *q = b;
    /* Rule 14's write-ahead: every hold set in this plan is in its record before any desired (the
     * seed that made it) is written. */
    bool hp = p->set_hold && p->hold, hq = q->set_hold && q->hold;
    if (hp != hq)
        return hp ? -1 : 1;
    return p->ordinal < q->ordinal ? -1 : p->ordinal > q->ordinal;
}

/* The plan's closing output, whatever was decided: the wait's Event (once per new message), sequence
 * errors, the patches in order (the holds, written by planner_hold_persist just before, ahead of any
 * desired), the status. */
void planner_finish(struct planner *c)
{
    if (c->waiting && (!c->prev_message || strcmp(c->prev_message, c->msg.s) != 0))
        planner_event(c, c->wait_warning ? RSS_EVENT_WARNING : RSS_EVENT_NORMAL, c->wait_reason, NULL, "%s",
                      c->msg.s);
    /* Per-member sequence errors are Warnings once each (rule 6), whatever else happens. */
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m->seq_error && (!m->prev_seq_error || strcmp(m->prev_seq_error, m->seq_error) != 0))
            planner_event(c, RSS_EVENT_WARNING, "SequenceError", m, "%s: %s; it is not a seed candidate",
                          m->pod, m->seq_error);
    }
    if (c->out->n_patches > 1)
        qsort(c->out->patches, c->out->n_patches, sizeof(*c->out->patches), cmp_patch);
    planner_build_status(c);
}

void rss_plan_free(struct rss_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->n_patches; i++) {
        free(plan->patches[i].pod);
        free(plan->patches[i].resource_version);
        free(plan->patches[i].pod_uid);
        free(plan->patches[i].hold);
        free(plan->patches[i].pin);
        free(plan->patches[i].primary);
        rss_recordcodec_desired_clear(&plan->patches[i].desired);
    }
    free(plan->patches);
    for (size_t i = 0; i < plan->n_deletes; i++) {
        free(plan->deletes[i].pod);
        free(plan->deletes[i].uid);
        for (size_t k = 0; k < plan->deletes[i].n_claims; k++)
            free(plan->deletes[i].claims[k]);
        free(plan->deletes[i].claims);
    }
    free(plan->deletes);
    for (size_t i = 0; i < plan->n_events; i++) {
        free(plan->events[i].reason);
        free(plan->events[i].message);
        free(plan->events[i].pod);
    }
    free(plan->events);
    free(plan->phase);
    free(plan->primary);
    cJSON_Delete(plan->status);
    memset(plan, 0, sizeof(*plan));
    plan->set_replicas = -1;
}

char *rss_plan_describe(const struct rss_plan *plan)
{
    struct rss_strbuf b = {0};
    if (plan->epoch_claims)
        rss_strbuf_printf(&b, "epoch claims\n");
    if (plan->clear_force_seed)
        rss_strbuf_printf(&b, "clear force-seed\n");
    if (plan->clear_release_hold)
        rss_strbuf_printf(&b, "clear release-hold\n");
    if (plan->clear_switchover)
        rss_strbuf_printf(&b, "clear switchover\n");
    if (plan->set_replicas >= 0)
        rss_strbuf_printf(&b, "%s replicas=%d\n", plan->create_statefulset ? "create-statefulset" : "set",
                          plan->set_replicas);
    for (size_t i = 0; i < plan->n_patches; i++) {
        const struct rss_plan_patch *p = &plan->patches[i];
        if (p->set_desired) {
            char id[48] = "-";
            if (p->desired.action != RSS_ACTION_NONE)
                rss_action_id_format(p->desired.id, id, sizeof(id));
            rss_strbuf_printf(&b, "desired %s %s id=%s gen=%" PRIu64 " peers=[", p->pod,
                              rss_action_name(p->desired.action), id, p->desired.generation);
            for (size_t k = 0; k < p->desired.n_peers; k++)
                rss_strbuf_printf(&b, "%s%s", k ? " " : "", p->desired.peers[k]);
            rss_strbuf_printf(&b, "]\n");
        }
        if (p->set_hold)
            rss_strbuf_printf(&b, "hold %s %s\n", p->pod, p->hold ? p->hold : "removed");
        if (p->set_pin)
            rss_strbuf_printf(&b, "pin %s %s\n", p->pod, p->pin ? p->pin : "removed");
        if (p->set_primary)
            rss_strbuf_printf(&b, "primary-mark %s %s\n", p->pod, p->primary ? p->primary : "removed");
        if (p->set_active_label >= 0)
            rss_strbuf_printf(&b, "label %s %s=%s\n", p->pod, RSS_LABEL_ACTIVE,
                              p->set_active_label ? "true" : "false");
    }
    for (size_t i = 0; i < plan->n_deletes; i++) {
        const struct rss_plan_delete *d = &plan->deletes[i];
        for (size_t k = 0; k < d->n_claims; k++)
            rss_strbuf_printf(&b, "delete-claim %s\n", d->claims[k]);
        rss_strbuf_printf(&b, "%s %s\n", d->force ? "force-delete" : "delete", d->pod);
    }
    for (size_t i = 0; i < plan->n_events; i++)
        rss_strbuf_printf(&b, "event %s %s: %s\n",
                          plan->events[i].type == RSS_EVENT_WARNING ? "Warning" : "Normal",
                          plan->events[i].reason, plan->events[i].message);
    if (plan->phase)
        rss_strbuf_printf(&b, "phase %s\n", plan->phase);
    return b.s ? b.s : rss_xstrdup("");
}
