/* planner_derive.c -- each member's state derived from the LIST (live, unclear, unresolved, actionable,
 * ...), the failure accounting, and the plan's setup (docs/planner.md, "Inputs worth knowing"). */
#include "rss/hook.h"
#include "rss/json.h"
#include "planner_internal.h"

static void max_seq(struct planner *c, struct rss_action_id id)
{
    if (id.epoch == c->in->epoch && id.seq > c->seq)
        c->seq = id.seq;
}

static void derive(struct planner *c, struct planner_member *m)
{
    const struct rss_member_input *in = m->in;
    const struct rss_plan_input *pi = c->in;
    m->exists = in && in->pod_exists;
    if (!m->exists)
        return;
    m->deleting = in->deleting;
    m->has_node = in->node && in->node[0];
    m->node_alive = m->has_node && in->node_alive;
    /* A node the leader saw silent for the fence timeout + margin has self-fenced: its members are
     * stopped (they count as not running, for failover). That says nothing about whose data is
     * newest, so planner_recovery() still waits for them (rule 3). */
    m->fenced_dead = m->has_node && !in->node_alive && in->node_dead;
    m->node_silent = m->has_node && !in->node_alive && !m->fenced_dead;
    m->obs = in->has_observed;
    const struct rss_observed *o = &in->observed;
    /* Only a report made after its agent saw this leader's Lease is current. An older one may come
     * from before a power cut: its node's heartbeat can still look alive for a lease duration, or a new
     * agent may not have probed yet. Trusting it let a member join "running" peers that were dead, and a
     * low sequence ran while the newest copy never seeded (e2e scenario `blip`). Agents re-probe and
     * republish when they see a new epoch, so this only waits for them. Likewise a report of an agent
     * process that its node's current one replaced (a reboot, an rssd restart): until the pod names the
     * new container it still looked current, and the status counted a member ready that was not running. */
    m->fresh = m->obs && o->lease_epoch == pi->epoch && !in->observed_superseded;
    m->current = m->fresh && (!in->container_id || same_container(in->container_id, o->container_id));
    m->role = m->obs ? o->role : RSS_ROLE_UNKNOWN;
    m->pending = m->obs && o->last.present && o->last.result == RSS_RESULT_PENDING;
    /* Live and unclear use the observation even when it is for an older container: until the agent
     * reports the new one, what it last said is the best knowledge, and blocking is the safe side. */
    m->live = m->obs && !m->fenced_dead &&
              (m->role == RSS_ROLE_STARTING || rss_role_running(m->role) || m->pending);
    m->unclear =
        m->obs && !m->fenced_dead && !m->live && (m->role == RSS_ROLE_FAILED || m->role == RSS_ROLE_UNKNOWN);
    if (in->has_desired && in->desired.epoch == pi->epoch && in->desired.action != RSS_ACTION_NONE) {
        const struct rss_desired *d = &in->desired;
        bool acked = m->obs && o->last.present && rss_action_id_equal(o->last.id, d->id) &&
                     o->last.result != RSS_RESULT_PENDING;
        bool voided = m->obs && o->generation > d->generation; /* rule 7 */
        /* On a dead node an unresolved action is still in the record: its agent would execute it when the
         * node comes back. A start there, after another member was seeded without it (minimumMembers),
         * was a second bootstrap (model trace F1), so it is retracted first (planner_retract()). Other
         * actions of a dead node's member do no harm later and do not block (its members count as stopped).
         */
        if (!acked && !voided && m->fenced_dead)
            m->stale_start = rss_action_starts(d->action);
        else
            m->unresolved = !acked && !voided;
    }
    /* Finding F4: the last report is the write-ahead of a start, and then the node was judged dead (cut
     * off while the hook ran). Retracting the desired (planner_retract()) does not stop a hook already
     * running: a seed hook there would bootstrap a second cluster beside one seeded elsewhere. Its agent
     * fences and stops the member once the hook returns, so after the hook's timeout and the dead window
     * (from the write-ahead's time; the window holds the stop's timeout and the kill) the member is stopped
     * for sure; until then no seed goes ahead without it. The write-ahead's time is the agent's wall clock
     * and now_ms this leader's: a leader clock ahead by X ends the wait X early. The window also holds the
     * fence timeout F and the 5 s margin, which this bound does not need (a fence due before the hook
     * returns waits for it; one due after is the dead verdict's own wait, on this leader's monotonic
     * clock), so the member is stopped with F + 5 s - the fence check's second to spare: more than the
     * skew rssd assumes (RSS_CLOCK_SKEW_MAX_MS, rss/clock.h). */
    if (m->fenced_dead && m->pending && rss_action_starts(o->last.action)) {
        const struct rss_spec *sp = c->spec;
        enum rss_hook_kind k = rss_hook_for_action(sp, o->last.action);
        int64_t hook = k < RSS_HOOK_KIND_COUNT ? (int64_t)sp->hooks[k].timeout_ms : 0;
        m->dead_start = true;
        m->dead_start_until = o->time_ms > 0 ? o->time_ms + hook + pi->dead_after_ms : INT64_MAX;
        if (pi->now_ms >= m->dead_start_until)
            m->dead_start = false;
    }
    /* A start written ahead on a node judged dead holds the next join and the rollout only while its hook
     * may still run there (dead_start): past its hook and stop timeouts the agent has fenced it, and
     * waiting on longer blocked every later join until the node came back. */
    m->start_inflight =
        (m->unresolved && rss_action_starts(in->desired.action)) ||
        (m->live && m->role == RSS_ROLE_STARTING) ||
        (m->pending && rss_action_starts(o->last.action) && (!m->fenced_dead || m->dead_start));
    m->running = m->current && !m->fenced_dead && rss_role_running(m->role) && !m->pending;
    m->primary_up = m->running && m->role == RSS_ROLE_PRIMARY && m->node_alive;
    m->actionable = !m->deleting && m->node_alive && m->current && !m->unresolved && !m->pending;
    m->outdated = pi->update_revision && in->revision && strcmp(in->revision, pi->update_revision) != 0;
    if (m->current) {
        m->has_seq = o->has_sequence;
        m->seq = o->sequence;
        m->seq_error = o->sequence_error;
    }
}

/* Failure accounting: each failed/timed-out action once (by id), each crash once (by generation). */
static void account(struct planner *c, struct planner_member *m)
{
    /* A member whose node went away while it ran was not at fault: when it comes back (a new container,
     * a new generation, stopped) that is a node outage, not a crash (no failure counted, no Failover). */
    if (m->exists && m->has_node && !m->node_alive && m->prev_known && rss_role_running(m->prev_role))
        m->node_down = true;
    if (!m->exists || !m->obs || m->fenced_dead)
        return;
    const struct rss_observed *o = &m->in->observed;
    if (o->last.present && (o->last.result == RSS_RESULT_FAILED || o->last.result == RSS_RESULT_TIMEOUT) &&
        !rss_action_id_equal(o->last.id, m->counted)) {
        char id[48];
        rss_action_id_format(o->last.id, id, sizeof(id));
        m->failures++;
        m->new_failure = true;
        m->counted = o->last.id;
        planner_event(c, RSS_EVENT_WARNING, "ActionFailed", m,
                      "%s: %s (action %s) %s, exit code %d%s%s; %u failure(s) in a row", m->pod,
                      rss_action_name(o->last.action), id,
                      o->last.result == RSS_RESULT_TIMEOUT ? "timed out" : "failed", o->last.exit_code,
                      o->last.message ? ": " : "", o->last.message ? o->last.message : "", m->failures);
    }
    if (!m->current)
        return;
    /* `stop` never bumps the generation (docs/protocol.md), so a newer generation that is no longer
     * running after a running one is a crash or a container restart. It counts against the member only
     * while another primary runs: when every member went down together (a lights-out, a power cut),
     * the cause was not this member, and deleting pods would only slow the recovery down. */
    bool outage = true;
    for (size_t i = 0; i < c->n && outage; i++)
        outage = &c->m[i] == m || !c->m[i].primary_up;
    bool went_down = m->prev_known && rss_role_running(m->prev_role) && o->generation > m->prev_gen &&
                     (m->role == RSS_ROLE_STOPPED || m->role == RSS_ROLE_FAILED);
    if (went_down && m->node_down) {
        rss_strbuf_item(&m->note, "its node was down while it ran: not counted as a failure");
    } else if (went_down && !outage) {
        m->failures++;
        m->new_failure = true;
        m->crashed = true;
        planner_event(c, RSS_EVENT_WARNING, "MemberCrashed", m,
                      "%s was %s in generation %" PRIu64 " and is %s in generation %" PRIu64
                      "; %u failure(s) in a row",
                      m->pod, rss_role_name(m->prev_role), m->prev_gen, rss_role_name(m->role), o->generation,
                      m->failures);
    } else if (!went_down && m->role == RSS_ROLE_FAILED &&
               !(m->prev_known && m->prev_role == RSS_ROLE_FAILED && m->prev_gen == o->generation)) {
        m->failures++;
        m->new_failure = true;
        planner_event(c, RSS_EVENT_WARNING, "MemberFailed", m,
                      "%s: status hook exit code %d (failed); %u failure(s) in a row", m->pod, o->status_code,
                      m->failures);
    }
    if (m->running) {
        m->node_down = false;
        if (!(m->prev_known && m->prev_role == m->role && m->prev_gen == o->generation &&
              m->running_since > 0))
            m->running_since = c->in->now_ms;
        /* Stable for two status rounds: the failure streak is over. */
        int64_t stable = 2 * (int64_t)c->spec->reconcile_interval_ms;
        if (m->failures && c->in->now_ms - m->running_since >= stable)
            m->failures = 0;
    } else {
        m->running_since = 0;
    }
}

int planner_setup(struct planner *c, const struct rss_plan_input *in, rss_error_t *err)
{
    if (!in || !in->spec)
        return rss_error_make(err, RSS_E_INVALID, 0, "planner: no spec");
    c->in = in;
    c->spec = in->spec;
    c->target = in->spec->replicas;
    c->sts = in->statefulset_replicas < 0 ? -1 : in->statefulset_replicas;
    size_t n = (size_t)c->target;
    if (c->sts > (int)n)
        n = (size_t)c->sts;
    for (size_t i = 0; i < in->n_members; i++) {
        if (in->members[i].ordinal > RSS_SPEC_ORDINAL_MAX)
            return rss_error_make(err, RSS_E_INVALID, 0, "planner: ordinal %u is too large",
                                  in->members[i].ordinal);
        if (in->members[i].ordinal + 1 > n)
            n = in->members[i].ordinal + 1;
    }
    if (n > RSS_SPEC_ORDINAL_MAX + 1)
        return rss_error_make(err, RSS_E_INVALID, 0, "planner: %zu members is too many", n);
    c->n = n;
    c->m = rss_xcalloc(n + 1, sizeof(*c->m));
    for (size_t i = 0; i < n; i++) {
        c->m[i].ordinal = (unsigned)i;
        c->m[i].pod = rss_spec_pod_name(c->spec, (unsigned)i);
    }
    for (size_t i = 0; i < in->n_members; i++) {
        struct planner_member *m = &c->m[in->members[i].ordinal];
        if (m->in)
            return rss_error_make(err, RSS_E_INVALID, 0, "planner: two members with ordinal %u", m->ordinal);
        m->in = &in->members[i];
    }
    _cleanup_error_ rss_error_t ignored = NULL;
    const cJSON *ps = in->prev_status;
    c->seq = planner_json_u64(ps, "lastActionSeq");
    c->prev_message = rss_json_str(ps, "message");
    c->last_replacement = cJSON_GetObjectItemCaseSensitive(ps, "lastReplacement");
    if (!cJSON_IsObject(c->last_replacement))
        c->last_replacement = NULL;
    c->last_recovery = cJSON_GetObjectItemCaseSensitive(ps, "lastRecovery");
    if (!cJSON_IsObject(c->last_recovery))
        c->last_recovery = NULL;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ps, "recovery");
    const char *pin_seq = rss_json_str(rec, "seedSequence");
    const cJSON *pin_ord = cJSON_GetObjectItemCaseSensitive(rec, "seedOrdinal");
    if (pin_seq && cJSON_IsNumber(pin_ord) && pin_ord->valuedouble >= 0 &&
        pin_ord->valuedouble <= RSS_SPEC_ORDINAL_MAX &&
        rss_hook_parse_sequence(pin_seq, strlen(pin_seq), &c->pin_seq, &ignored) == 0) {
        c->pin = true;
        c->pin_ordinal = (unsigned)pin_ord->valuedouble;
    }
    for (size_t i = 0; i < n; i++) {
        struct planner_member *m = &c->m[i];
        derive(c, m);
        if (m->exists && m->in->has_desired)
            max_seq(c, m->in->desired.id);
        if (m->exists && m->in->has_observed && m->in->observed.last.present)
            max_seq(c, m->in->observed.last.id);
    }
    c->seq0 = c->seq;
    return 0;
}

/* What the previous plans left (status.memberStatus, the journal, the holds in the records), then the
 * failures of this plan counted and the journal brought up to date. Paused: only read, nothing counted. */
void planner_load(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        planner_load_history(c, m);
        planner_load_journal(c, m);
        planner_hold_load(c, m);
        /* Rule 17: a member running as primary while it is held ran on from before it was left out (a
         * node frozen past the dead window, thawed): not the cluster's primary. */
        m->diverged = m->left_out && !m->released && m->running && m->role == RSS_ROLE_PRIMARY;
        if (m->diverged)
            m->primary_up = false;
        if (m->has_seq) {
            m->last_seq_known = true;
            m->last_seq = m->seq;
        }
        if (!c->spec->paused)
            account(c, m);
        m->repl_pending = m->repl_prev && !m->running;
        c->n_primaries_up += m->primary_up;
    }
    if (!c->spec->paused)
        planner_journal_update(c);
    planner_pin_load(c);
    planner_lineage_load(c);
}

void planner_teardown(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->m[i].pod);
        free(c->m[i].note.s);
        free(c->m[i].mark_uid);
        free(c->m[i].mark_scaled_pod);
        cJSON_Delete(c->m[i].repl_new);
    }
    cJSON_Delete(c->new_replacement);
    cJSON_Delete(c->new_failover);
    cJSON_Delete(c->new_sw_fallback);
    cJSON_Delete(c->new_recovery);
    cJSON_Delete(c->suspended);
    free(c->m);
    free(c->msg.s);
}
