/* planner_forceseed_plan.c -- row 6b: the admin's force-seed as the planner carries it out (the check
 * it shares with `kubectl rss` is planner_forceseed.c). */
#include "rss/clock.h"
#include "rss/forceseed.h"
#include "planner_internal.h"

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
        fm[i] = (struct rss_forceseed_member){c->m[i].pod, c->m[i].exists, c->m[i].live};
    size_t at;
    const char *who;
    enum rss_forceseed_verdict v = rss_forceseed_check(want, fm, c->n, &at, &who);
    struct planner_member *m = at < c->n ? &c->m[at] : NULL;
    bool running = who != NULL;
    if (v != RSS_FORCESEED_ALLOWED) {
        c->out->clear_force_seed = true;
        planner_event(c, RSS_EVENT_WARNING, "ForceSeedRefused", m,
                      "force-seed of %s refused: %s; the annotation is removed", want,
                      rss_forceseed_reason(v));
        if (running)
            planner_decision(c, "force-seed of %s refused: %s runs", want, who);
        else
            planner_decision(c, "force-seed of %s refused: no such member pod", want);
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
