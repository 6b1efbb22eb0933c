/* planner_forceseed_plan.c -- row 6b: the admin's force-seed as the planner carries it out (the check
 * it shares with `kubectl rss` is planner_forceseed.c). */
#include "rss/clock.h"
#include "rss/forceseed.h"
#include "planner_internal.h"

/* What the shared check needs of m, and the words of a refusal: why m may run and when the leader will
 * know (its node's silence and dead window, on this plan's wall clock). */
static void forceseed_member(const struct planner *c, const struct planner_member *m,
                             struct rss_forceseed_member *f)
{
    const struct rss_member_input *in = m->in;
    *f = (struct rss_forceseed_member){.pod = m->pod, .exists = m->exists, .live = m->live};
    if (!m->exists)
        return;
    f->role = m->obs ? rss_role_name(m->role) : NULL;
    f->action = m->pending ? rss_action_name(in->observed.last.action) : NULL;
    f->stale = m->obs && !m->current;
    f->node = m->has_node ? in->node : NULL;
    if (!m->has_node)
        f->node_state = RSS_FORCESEED_NODE_UNKNOWN;
    else if (m->node_alive)
        f->node_state = RSS_FORCESEED_NODE_ALIVE;
    else if (m->fenced_dead)
        f->node_state = RSS_FORCESEED_NODE_DOWN;
    else if (in->agent_absent)
        f->node_state = RSS_FORCESEED_NODE_ABSENT;
    else if (in->node_silent_ms > 0) /* a known heartbeat is silent for at least its lease duration */
        f->node_state = RSS_FORCESEED_NODE_SILENT;
    else
        f->node_state = RSS_FORCESEED_NODE_NO_HEARTBEAT;
    if (in->node_silent_ms > 0)
        f->silent_since_ms = c->in->now_ms - in->node_silent_ms;
    if (in->node_dead_in_ms > 0)
        f->dead_at_ms = c->in->now_ms + in->node_dead_in_ms;
}

/* The admin's override (rss.clusterlabs.org/force-seed=<pod>): seed that member although the policy
 * waits. Refused, and the annotation removed, when a member runs or the pod is not a member; it waits
 * (annotation kept) until the member reported as stopped and nothing issued is unresolved. Returns true
 * when it decided (seeded, refused or waits). Never automatic: it only ever seeds the named member. */
bool planner_force_seed(struct planner *c, bool busy)
{
    const char *want = c->in->force_seed;
    /* The check `kubectl rss force-seed` shows before it sets the annotation (planner_forceseed.c). */
    _cleanup_free_ struct rss_forceseed_member *fm = rss_xcalloc(c->n ? c->n : 1, sizeof(*fm));
    for (size_t i = 0; i < c->n; i++)
        forceseed_member(c, &c->m[i], &fm[i]);
    size_t at;
    enum rss_forceseed_verdict v = rss_forceseed_check(want, fm, c->n, &at, NULL);
    struct planner_member *m = at < c->n ? &c->m[at] : NULL;
    if (v != RSS_FORCESEED_ALLOWED) {
        c->out->clear_force_seed = true;
        _cleanup_free_ char *why = rss_forceseed_explain(want, v, fm, c->n, c->in->now_ms);
        planner_event(c, RSS_EVENT_WARNING, "ForceSeedRefused", m, "%s; the annotation is removed", why);
        planner_decision(c, "%s", why);
        return !m; /* a refusal while members run leaves the running cluster to its usual path */
    }
    if (busy || !m->actionable || m->role != RSS_ROLE_STOPPED) {
        planner_wait(c, false, "WaitingForMembers", "force-seed of %s waits until it reports as stopped",
                     want);
        return true;
    }
    struct rss_strbuf others = {0};
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *o = &c->m[i];
        if (o == m)
            continue;
        if (o->has_seq) {
            char s[24];
            fmt_seq(o->seq, s, sizeof(s));
            rss_strbuf_item(&others, "%s=%s", o->pod, s);
        } else {
            rss_strbuf_item(&others, "%s=%s", o->pod, o->seq_error ? "error" : "unknown");
        }
    }
    char ms[24] = "unknown";
    if (m->has_seq)
        fmt_seq(m->seq, ms, sizeof(ms));
    _cleanup_free_ char *why =
        rss_xasprintf("force-seed by the admin: %s seeds (sequence %s); the others: %s", m->pod, ms,
                      others.len ? others.s : "none");
    planner_issue(c, m, RSS_ACTION_SEED, NULL, 0, why);
    planner_event(c, RSS_EVENT_WARNING, "ForceSeed", m, "%s; writes only they hold may be lost", why);
    planner_decision(c, "%s", why);
    cJSON_Delete(c->new_recovery);
    c->new_recovery = cJSON_CreateObject();
    cJSON_AddStringToObject(c->new_recovery, "kind", "ForceSeed");
    cJSON_AddStringToObject(c->new_recovery, "seed", m->pod);
    cJSON_AddStringToObject(c->new_recovery, "sequence", ms);
    char when[RSS_TIME_LEN];
    cJSON_AddStringToObject(c->new_recovery, "time", rss_time_ms(when, c->in->now_ms));
    planner_pin_issue(c, m, m->has_seq, m->seq, true);
    c->out->clear_force_seed = true;
    /* Those that could not tell their data may hold newer writes: they are not joined over them. */
    for (size_t i = 0; i < c->n && m->has_seq; i++)
        if (&c->m[i] != m && !(c->m[i].current && c->m[i].has_seq))
            planner_hold_mark(&c->m[i], m->seq);
    /* The admin chose its history: it is the cluster's now. */
    m->left_out = false;
    m->released = false;
    free(others.s);
    return true;
}
