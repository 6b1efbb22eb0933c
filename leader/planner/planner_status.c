/* planner_status.c -- renders the RSS .status from the planner's decisions (pure, like the planner). */
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/condition.h"
#include "rss/json.h"
#include "planner_internal.h"

/* ---- status ---- */

static cJSON *name_list(struct planner *c,
                        bool (*pick)(const struct planner *, const struct planner_member *))
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < c->n; i++)
        if (pick(c, &c->m[i]))
            cJSON_AddItemToArray(a, cJSON_CreateString(c->m[i].pod));
    return a;
}

static bool in_scope(const struct planner *c, const struct planner_member *m)
{
    int w = c->sts > c->target ? c->sts : c->target;
    return (int)m->ordinal < w || m->exists;
}

static bool pick_ready(const struct planner *c, const struct planner_member *m)
{
    return in_scope(c, m) && m->running;
}

static bool pick_unready(const struct planner *c, const struct planner_member *m)
{
    return in_scope(c, m) && !m->running;
}

static bool pick_primary(const struct planner *c, const struct planner_member *m)
{
    return in_scope(c, m) && m->running && m->role == RSS_ROLE_PRIMARY;
}

static bool pick_secondary(const struct planner *c, const struct planner_member *m)
{
    return in_scope(c, m) && m->running && m->role == RSS_ROLE_SECONDARY;
}

static bool pick_failed(const struct planner *c, const struct planner_member *m)
{
    return in_scope(c, m) &&
           ((m->current && m->role == RSS_ROLE_FAILED) || m->failures >= (unsigned)c->spec->max_failures);
}

/* status.journal: one record per member that went down while others ran on (planner_journal_update()). */
static void journal(const struct planner *c, cJSON *s)
{
    cJSON *arr = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (!m->j_has)
            continue;
        if (!arr)
            arr = cJSON_AddArrayToObject(s, "journal");
        cJSON *e = cJSON_CreateObject();
        char buf[RSS_TIME_LEN > 24 ? RSS_TIME_LEN : 24];
        cJSON_AddStringToObject(e, "member", m->pod);
        cJSON_AddNumberToObject(e, "ordinal", m->ordinal);
        cJSON_AddStringToObject(e, "downAt", rss_time_ms(buf, m->j_down_ms));
        if (m->j_has_seq) {
            fmt_seq(m->j_seq, buf, sizeof(buf));
            cJSON_AddStringToObject(e, "lastSequence", buf);
        }
        cJSON *ws = cJSON_AddArrayToObject(e, "witnesses");
        for (size_t k = 0; k < m->j_n; k++) {
            cJSON *w = cJSON_CreateObject();
            cJSON_AddStringToObject(w, "member", c->m[m->j_w[k].ordinal].pod);
            cJSON_AddNumberToObject(w, "ordinal", m->j_w[k].ordinal);
            cJSON_AddNumberToObject(w, "generation", (double)m->j_w[k].generation);
            cJSON_AddBoolToObject(w, "confirmed", m->j_w[k].confirmed);
            cJSON_AddItemToArray(ws, w);
        }
        cJSON_AddItemToArray(arr, e);
    }
}

static cJSON *member_status(const struct planner_member *m)
{
    cJSON *j = cJSON_CreateObject();
    char buf[48];
    cJSON_AddStringToObject(j, "name", m->pod);
    cJSON_AddNumberToObject(j, "ordinal", m->ordinal);
    if (m->exists && m->in->pod_uid)
        cJSON_AddStringToObject(j, "podUID", m->in->pod_uid);
    else if (m->prev_uid)
        cJSON_AddStringToObject(j, "podUID", m->prev_uid);
    if (m->has_node)
        cJSON_AddStringToObject(j, "node", m->in->node);
    const char *role = !m->exists ? "absent" : m->fenced_dead ? "fenced" : !m->obs ? "unreported" : NULL;
    /* role/generation describe the last current observation: crash detection compares against them. */
    if (m->exists && m->current && !m->fenced_dead) {
        cJSON_AddStringToObject(j, "role", rss_role_name(m->role));
        cJSON_AddNumberToObject(j, "generation", (double)m->in->observed.generation);
    } else {
        if (role)
            cJSON_AddStringToObject(j, "state", role);
        else
            cJSON_AddStringToObject(j, "state", "stale");
        if (m->prev_known) {
            cJSON_AddStringToObject(j, "role", rss_role_name(m->prev_role));
            cJSON_AddNumberToObject(j, "generation", (double)m->prev_gen);
        }
    }
    if (m->has_seq) {
        fmt_seq(m->seq, buf, sizeof(buf));
        cJSON_AddStringToObject(j, "sequence", buf);
    } else if (m->seq_error) {
        cJSON_AddStringToObject(j, "sequenceError", m->seq_error);
    }
    if (m->obs && m->in->observed.last.present) {
        const struct rss_last_action *l = &m->in->observed.last;
        cJSON_AddStringToObject(j, "lastHook", rss_action_name(l->action));
        cJSON_AddStringToObject(j, "lastResult", rss_result_name(l->result));
        cJSON_AddNumberToObject(j, "lastExitCode", l->exit_code);
        rss_action_id_format(l->id, buf, sizeof(buf));
        cJSON_AddStringToObject(j, "lastActionId", buf);
    }
    if (m->last_seq_known) {
        fmt_seq(m->last_seq, buf, sizeof(buf));
        cJSON_AddStringToObject(j, "lastSequence", buf);
    }
    cJSON_AddNumberToObject(j, "failures", m->failures);
    if (m->counted.epoch || m->counted.seq) {
        rss_action_id_format(m->counted, buf, sizeof(buf));
        cJSON_AddStringToObject(j, "countedAction", buf);
    }
    if (m->running_since > 0) {
        rss_time_ms(buf, m->running_since);
        cJSON_AddStringToObject(j, "runningSince", buf);
    }
    if (m->node_down)
        cJSON_AddTrueToObject(j, "nodeDown");
    if (m->left_out) {
        cJSON *lo = cJSON_AddObjectToObject(j, "leftOut");
        fmt_seq(m->left_out_seed_seq, buf, sizeof(buf));
        cJSON_AddStringToObject(lo, "seedSequence", buf);
        if (m->held)
            cJSON_AddTrueToObject(lo, "held");
        if (m->released)
            cJSON_AddTrueToObject(lo, "released");
    }
    /* Kept until an incarnation after the replacement runs: until then it never seeds. */
    if (m->repl_new)
        cJSON_AddItemToObject(j, "replacement", cJSON_Duplicate(m->repl_new, true));
    else if (m->repl_prev && m->repl_pending)
        cJSON_AddItemToObject(j, "replacement", cJSON_Duplicate(m->repl_prev, true));
    if (m->note.len)
        cJSON_AddStringToObject(j, "message", m->note.s);
    return j;
}

static void condition(struct planner *c, cJSON *arr, const char *type, bool status, const char *reason,
                      const char *message)
{
    rss_condition_add(arr, cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "conditions"), type, status,
                      reason, message, c->spec->generation, c->in->now_ms);
}

/* A cluster being created rather than recovered: this plan bootstraps it, or it never seeded yet. */
static bool is_new(const struct planner *c)
{
    if (c->new_recovery) {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->new_recovery, "kind"));
        return kind && !strcmp(kind, "Bootstrap");
    }
    return !c->last_recovery;
}

static const char *phase(struct planner *c)
{
    if (c->spec->paused)
        return "Paused";
    if (c->spec->suspend)
        return c->sts == 0 ? "Suspended" : "Suspending";
    bool live = false, all = c->target > 0;
    for (size_t i = 0; i < c->n; i++) {
        live |= c->m[i].live;
        if ((int)i < c->target && !c->m[i].running)
            all = false;
    }
    if (c->target == 0)
        return live || c->sts > 0 ? "Scaling" : "Stopped";
    if (c->n_primaries_up == 0)
        return "Recovering";
    if (c->sts != c->target)
        return "Scaling";
    return all ? "Running" : "Degraded";
}

/* rss_plan.primary (see there). */
static const char *plan_primary(const struct planner *c)
{
    if (c->top)
        return c->top->pod;
    const char *p = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (m->primary_up && m->role == RSS_ROLE_PRIMARY) {
            if (p)
                return NULL;
            p = m->pod;
        }
    }
    return p;
}

const cJSON *planner_switchover_fallback(const struct planner *c)
{
    if (c->new_sw_fallback)
        return c->new_sw_fallback;
    const cJSON *f = c->in->prev_status
                         ? cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "switchoverFallback")
                         : NULL;
    const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "at"));
    int64_t t;
    _cleanup_error_ rss_error_t err = NULL;
    /* Dropped when its time does not parse, or is more than a retry period away either way (another
     * leader's wrong clock): it only holds automatic switchovers back. */
    if (!at || !cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "from")) ||
        rss_time_parse_ms(at, &t, &err) < 0 || c->in->now_ms - t >= PLANNER_SWITCHOVER_RETRY_MS ||
        t - c->in->now_ms > PLANNER_SWITCHOVER_RETRY_MS)
        return NULL;
    return f;
}

void planner_build_status(struct planner *c)
{
    cJSON *s = cJSON_CreateObject();
    size_t ready = 0;
    for (size_t i = 0; i < c->n; i++)
        ready += (int)i < c->target && c->m[i].running;
    if (!c->msg.len) {
        if (c->spec->paused)
            rss_strbuf_printf(&c->msg, "paused: observing only");
        else
            rss_strbuf_printf(&c->msg, "%zu of %d members ready", ready, c->target);
    }
    const char *ph = phase(c);
    c->out->phase = rss_xstrdup(ph);
    const char *primary = plan_primary(c);
    c->out->primary = primary ? rss_xstrdup(primary) : NULL;
    cJSON_AddNumberToObject(s, "observedGeneration", (double)c->spec->generation);
    cJSON_AddStringToObject(s, "phase", ph);
    cJSON_AddStringToObject(s, "message", c->msg.s);
    cJSON_AddNumberToObject(s, "replicas", c->target);
    cJSON_AddNumberToObject(s, "readyReplicas", (double)ready);
    cJSON *members = cJSON_AddObjectToObject(s, "members");
    cJSON_AddItemToObject(members, "ready", name_list(c, pick_ready));
    cJSON_AddItemToObject(members, "unready", name_list(c, pick_unready));
    cJSON_AddItemToObject(members, "primary", name_list(c, pick_primary));
    cJSON_AddItemToObject(members, "secondary", name_list(c, pick_secondary));
    cJSON_AddItemToObject(members, "failed", name_list(c, pick_failed));
    cJSON *ms = cJSON_AddArrayToObject(s, "memberStatus");
    for (size_t i = 0; i < c->n; i++)
        if (in_scope(c, &c->m[i]))
            cJSON_AddItemToArray(ms, member_status(&c->m[i]));
    /* What `kubectl describe rss` shows first: is it serving, is it whole, is it recovering, what does
     * it wait for. Reasons are CamelCase and stable; messages carry the detail. */
    cJSON *conds = cJSON_AddArrayToObject(s, "conditions");
    bool all_ready = c->target > 0 && (int)ready == c->target;
    _cleanup_free_ char *rm = rss_xasprintf("%zu of %d members ready", ready, c->target);
    condition(c, conds, "Ready", all_ready, all_ready ? "AllMembersReady" : "MembersNotReady", rm);
    bool avail = c->n_primaries_up > 0;
    _cleanup_free_ char *am =
        rss_xasprintf("%zu primar%s running", c->n_primaries_up, c->n_primaries_up == 1 ? "y" : "ies");
    condition(c, conds, "Available", avail, avail ? "PrimaryRunning" : "NoPrimary", am);
    bool degraded = avail && !all_ready && !c->spec->paused;
    condition(c, conds, "Degraded", degraded, degraded ? "MembersDown" : "NotDegraded", degraded ? rm : "");
    bool rec = !avail && c->target > 0 && !c->spec->paused;
    const char *rec_reason = !rec ? "NotRecovering" : is_new(c) ? "Bootstrap" : "LightsOut";
    condition(c, conds, "Recovering", rec, rec_reason, rec ? c->msg.s : "");
    condition(c, conds, "WaitingForMembers", c->waiting, c->waiting ? c->wait_reason : "NotWaiting",
              c->waiting ? c->msg.s : "");
    /* kstatus (Flux, Argo CD, kpt): Stalled when only an admin can move it on (a Warning wait: no member
     * can seed, a seed below the history, a halted rollout, two primaries; or a member held back with
     * newer writes, which takes release-hold), else Reconciling while it is not at rest. */
    bool held = false;
    for (size_t i = 0; i < c->n; i++)
        held |= c->m[i].held;
    bool stalled = !c->spec->paused && ((c->waiting && c->wait_warning) || held);
    const char *stall_reason = c->waiting && c->wait_warning ? c->wait_reason : "MemberHeldNewer";
    condition(c, conds, "Stalled", stalled, stalled ? stall_reason : "NotStalled", stalled ? c->msg.s : "");
    bool at_rest =
        !strcmp(ph, "Running") || !strcmp(ph, "Stopped") || !strcmp(ph, "Suspended") || !strcmp(ph, "Paused");
    bool busy = !stalled && !at_rest;
    condition(c, conds, "Reconciling", busy, busy ? ph : "Reconciled", busy ? c->msg.s : "");
    bool scaling = c->sts >= 0 && c->sts != c->target;
    condition(c, conds, "Scaling", scaling,
              !scaling             ? "AtSize"
              : c->sts < c->target ? "ScalingUp"
                                   : "ScalingDown",
              "");
    journal(c, s);
    planner_timeline_render(c, s, ph, ready);
    if (c->pin) {
        cJSON *r = cJSON_AddObjectToObject(s, "recovery");
        char buf[24];
        cJSON_AddNumberToObject(r, "seedOrdinal", c->pin_ordinal);
        fmt_seq(c->pin_seq, buf, sizeof(buf));
        cJSON_AddStringToObject(r, "seedSequence", buf);
    }
    /* Kept through the resume, until the recovery after it seeded (then lastRecovery says it). */
    const cJSON *prev_susp = cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "suspended");
    if (c->suspended)
        cJSON_AddItemToObject(s, "suspended", cJSON_Duplicate(c->suspended, true));
    else if (cJSON_IsObject(prev_susp) && (c->spec->suspend || !c->new_recovery))
        cJSON_AddItemToObject(s, "suspended", cJSON_Duplicate(prev_susp, true));
    if (c->new_recovery)
        cJSON_AddItemToObject(s, "lastRecovery", cJSON_Duplicate(c->new_recovery, true));
    else if (c->last_recovery)
        cJSON_AddItemToObject(s, "lastRecovery", cJSON_Duplicate(c->last_recovery, true));
    if (c->new_failover)
        cJSON_AddItemToObject(s, "failover", cJSON_Duplicate(c->new_failover, true));
    const cJSON *swf = planner_switchover_fallback(c);
    if (swf)
        cJSON_AddItemToObject(s, "switchoverFallback", cJSON_Duplicate(swf, true));
    if (c->new_replacement)
        cJSON_AddItemToObject(s, "lastReplacement", cJSON_Duplicate(c->new_replacement, true));
    else if (c->last_replacement)
        cJSON_AddItemToObject(s, "lastReplacement", cJSON_Duplicate(c->last_replacement, true));
    cJSON_AddNumberToObject(s, "lastActionSeq", (double)c->seq);
    cJSON_AddNumberToObject(s, "epoch", (double)c->in->epoch);
    c->out->status = s;
    c->out->last_action_seq = c->seq;
}
