/* planner_suspend.c -- row 2b: spec.suspend, a planned full stop. */
#include "planner_internal.h"

/* The member's own `stop` said it stopped (exit 0): the stop this leader issued to its current
 * generation, and its `status` has not said otherwise since (no answer: it hung or could not run; or
 * "failed"). The hook contract makes a `stop` that returned 0 the member's word that it stopped, so it
 * counts as stopped for the suspend. Asking again only repeated the same stop and the same silent status,
 * and the suspend never completed while one member's status hung. A `stop` that failed or timed out is
 * not this, nor a stop of an older generation (a container restart since) or of another leader's desired;
 * a status that says it runs wins over the stop (the member is live then, and is stopped again). */
static bool stopped_by_its_stop(const struct planner *c, const struct planner_member *m)
{
    if (!m->current || !m->unclear)
        return false;
    const struct rss_member_input *in = m->in;
    const struct rss_observed *o = &in->observed;
    const struct rss_desired *d = &in->desired;
    return o->last.present && o->last.action == RSS_ACTION_STOP && o->last.result == RSS_RESULT_OK &&
           in->has_desired && d->epoch == c->in->epoch && d->action == RSS_ACTION_STOP &&
           rss_action_id_equal(d->id, o->last.id) && d->generation == o->generation;
}

/* spec.suspend: a planned full stop. One member at a time (secondaries first, then primaries from
 * the highest ordinal, so the last primary, whose data is the newest where replication lags, stops
 * last); once every member is confirmed stopped with its sequence reported (or its own `stop` returned 0,
 * stopped_by_its_stop()), replicas go to 0 and the volumes stay. The sequences at stop are kept in
 * status.suspended. Resuming is the normal path: the StatefulSet scales up, every member reports, the highest
 * seeds. */
void planner_suspend(struct planner *c)
{
    if (c->sts == 0) { /* done: status.suspended was recorded before the pods went */
        planner_decision(c,
                         "suspended: replicas 0, volumes kept (spec.suspend: false brings the members back)");
        return;
    }
    int w = c->sts > c->target ? c->sts : c->target;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].unresolved || (c->m[i].pending && (!c->m[i].fenced_dead || c->m[i].dead_start))) {
            planner_wait(c, false, "Suspending", "suspending: waiting for %s to finish its action",
                         c->m[i].pod);
            return;
        }
    struct planner_member *next = NULL;
    for (int pass = 0; pass < 2 && !next; pass++)
        for (int i = w - 1; i >= 0 && !next; i--) {
            struct planner_member *m = &c->m[i];
            if (!m->live || (pass == 0 && m->role != RSS_ROLE_SECONDARY))
                continue;
            next = m;
        }
    /* Then a member that is failed or unknown (its status hook says neither running nor stopped): `stop`
     * makes it clear. Waiting for it to report stopped by itself never completed the suspend. */
    for (int i = w - 1; i >= 0 && !next; i--)
        if (c->m[i].unclear && c->m[i].current && !stopped_by_its_stop(c, &c->m[i]))
            next = &c->m[i];
    if (next) {
        if (!next->actionable) {
            planner_wait(c, false, "Suspending", "suspending: waiting for %s (%s) to be reachable", next->pod,
                         next->node_silent ? "node silent" : rss_role_name(next->role));
            return;
        }
        planner_issue(c, next, RSS_ACTION_STOP, NULL, 0, "spec.suspend: planned full stop");
        planner_event(c, RSS_EVENT_NORMAL, "Suspending", next, "spec.suspend: stopping %s (%s)", next->pod,
                      rss_role_name(next->role));
        planner_decision(c, "suspending: stopping %s", next->pod);
        return;
    }
    /* Everything stopped: record what each member holds, then let the StatefulSet go to 0. */
    cJSON_Delete(c->suspended);
    c->suspended = cJSON_CreateObject();
    cJSON *seqs = cJSON_AddObjectToObject(c->suspended, "sequences");
    for (int i = 0; i < w; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists)
            continue;
        if (m->fenced_dead) {
            /* Its node is dead (agent silent and kubelet down): its members are stopped; what its volume
             * holds is asked again at resume, where planner_recovery() waits for it like any member. */
            cJSON_AddStringToObject(seqs, m->pod, "unknown");
            continue;
        }
        bool by_stop = stopped_by_its_stop(c, m);
        if (by_stop) {
            /* Its sequence is what `sequence` said after the stop (the agent asks even when status gave
             * no answer), else "unknown": the resume asks again and the recovery waits for it. */
            rss_strbuf_item(&m->note, "stopped by its stop hook (exit 0); its status hook said %s",
                            m->role == RSS_ROLE_FAILED ? "failed" : "nothing");
        } else if (!m->current || m->role != RSS_ROLE_STOPPED || (!m->has_seq && !m->seq_error)) {
            cJSON_Delete(c->suspended);
            c->suspended = NULL;
            planner_wait(c, false, "Suspending",
                         "suspending: waiting for %s to report as stopped with its sequence", m->pod);
            return;
        }
        char buf[24];
        fmt_seq(m->seq, buf, sizeof(buf));
        cJSON_AddStringToObject(seqs, m->pod, m->has_seq ? buf : "unknown");
    }
    if (c->sts > 0) {
        c->out->set_replicas = 0;
        planner_event(c, RSS_EVENT_NORMAL, "Suspended", NULL,
                      "every member stopped; StatefulSet replicas 0, volumes kept; sequences at stop in "
                      "status.suspended");
    }
    planner_decision(c, "suspended: every member stopped, replicas 0, volumes kept");
}
