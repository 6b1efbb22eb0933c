/* planner.c -- the pure planner's decisions: snapshot of one RSS in, actions and Events out
 * (docs/planner.md). The status it writes is rendered in planner_status.c. */
#include <stdarg.h>

#include "rss/clock.h"
#include "rss/cleanup.h"
#include "rss/forceseed.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "planner_internal.h"

/* ---- output helpers ---- */

__attribute__((format(printf, 5, 0))) void planner_eventv(struct ctx *c, enum rss_event_type type,
                                                          const char *reason, const struct member *m,
                                                          const char *fmt, va_list ap)
{
    struct rss_plan *o = c->out;
    if (o->n_events == c->cap_events) {
        c->cap_events = c->cap_events ? c->cap_events * 2 : 8;
        o->events = rss_xrealloc(o->events, c->cap_events * sizeof(*o->events));
    }
    struct rss_strbuf b = {0};
    rss_strbuf_vprintf(&b, fmt, ap);
    o->events[o->n_events++] = (struct rss_plan_event){.type = type,
                                                       .reason = rss_xstrdup(reason),
                                                       .message = b.s ? b.s : rss_xstrdup(""),
                                                       .pod = m ? rss_xstrdup(m->pod) : NULL};
}

__attribute__((format(printf, 5, 6))) static void event(struct ctx *c, enum rss_event_type type,
                                                        const char *reason, const struct member *m,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    planner_eventv(c, type, reason, m, fmt, ap);
    va_end(ap);
}

struct rss_plan_patch *planner_patch_for(struct ctx *c, struct member *m)
{
    struct rss_plan *o = c->out;
    for (size_t i = 0; i < o->n_patches; i++)
        if (o->patches[i].ordinal == m->ordinal)
            return &o->patches[i];
    if (o->n_patches == c->cap_patches) {
        c->cap_patches = c->cap_patches ? c->cap_patches * 2 : 8;
        o->patches = rss_xrealloc(o->patches, c->cap_patches * sizeof(*o->patches));
    }
    struct rss_plan_patch *p = &o->patches[o->n_patches++];
    memset(p, 0, sizeof(*p));
    p->ordinal = m->ordinal;
    p->pod = rss_xstrdup(m->pod);
    p->resource_version = m->in && m->in->resource_version ? rss_xstrdup(m->in->resource_version) : NULL;
    p->pod_uid = m->in && m->in->pod_uid ? rss_xstrdup(m->in->pod_uid) : NULL;
    p->set_active_label = -1;
    return p;
}

/* Writes desired on a member: a fresh id, the member's current generation as target (rule 7). */
static void issue(struct ctx *c, struct member *m, enum rss_action action, char **peers, size_t n_peers,
                  const char *reason)
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
    m->decided = true;
}

void planner_issue(struct ctx *c, struct member *m, enum rss_action action, char **peers, size_t n_peers,
                   const char *reason)
{
    issue(c, m, action, peers, n_peers, reason);
}

static void delete_pod(struct ctx *c, struct member *m)
{
    struct rss_plan *o = c->out;
    if (o->n_deletes == c->cap_deletes) {
        c->cap_deletes = c->cap_deletes ? c->cap_deletes * 2 : 4;
        o->deletes = rss_xrealloc(o->deletes, c->cap_deletes * sizeof(*o->deletes));
    }
    o->deletes[o->n_deletes++] =
        (struct rss_plan_delete){.ordinal = m->ordinal,
                                 .pod = rss_xstrdup(m->pod),
                                 .uid = m->in->pod_uid ? rss_xstrdup(m->in->pod_uid) : NULL};
    m->decided = true;
}

/* spec.nodeLossPolicy Replace: the pod of a member on a dead node, without waiting for its kubelet (grace
 * 0, as the pod GC does on an out-of-service node), and first its claims when their data is node-local:
 * the StatefulSet then recreates pod and claims, and the scheduler places them on a live node. */
static void force_delete_pod(struct ctx *c, struct member *m, bool claims)
{
    delete_pod(c, m);
    struct rss_plan_delete *d = &c->out->deletes[c->out->n_deletes - 1];
    d->force = true;
    const cJSON *tpl;
    size_t n = (size_t)cJSON_GetArraySize(c->spec->volume_claim_templates);
    if (!claims || !n)
        return;
    d->claims = rss_xcalloc(n, sizeof(char *));
    cJSON_ArrayForEach(tpl, c->spec->volume_claim_templates)
    {
        const char *name = rss_json_str(cJSON_GetObjectItemCaseSensitive(tpl, "metadata"), "name");
        if (name)
            d->claims[d->n_claims++] = rss_xasprintf("%s-%s", name, m->pod);
    }
}

__attribute__((format(printf, 4, 5))) static void wait_msg(struct ctx *c, bool warning, const char *reason,
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

__attribute__((format(printf, 2, 3))) static void decision_msg(struct ctx *c, const char *fmt, ...)
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

/* ---- deriving each member's state ---- */

static void derive(struct ctx *c, struct member *m)
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
     * newest, so recovery() still waits for them (rule 3). */
    m->fenced_dead = m->has_node && !in->node_alive && in->node_dead;
    m->node_silent = m->has_node && !in->node_alive && !m->fenced_dead;
    m->obs = in->has_observed;
    const struct rss_observed *o = &in->observed;
    /* Only a report made after its agent saw this leader's Lease is current. An older one may come
     * from before a power cut: its node's heartbeat can still look alive for a lease duration, or a new
     * agent may not have probed yet. Trusting it let a member join "running" peers that were dead, and a
     * low sequence ran while the newest copy never seeded (e2e scenario `blip`). Agents re-probe and
     * republish when they see a new epoch, so this only waits for them. */
    m->fresh = m->obs && o->lease_epoch == pi->epoch;
    m->current = m->fresh && (!in->container_id || same_container(in->container_id, o->container_id));
    m->role = m->obs ? o->role : RSS_ROLE_UNKNOWN;
    m->pending = m->obs && o->last.present && o->last.result == RSS_RESULT_PENDING;
    /* Live and unclear use the observation even when it is for an older container: until the agent
     * reports the new one, what it last said is the best knowledge, and blocking is the safe side. */
    m->live =
        m->obs && !m->fenced_dead && (m->role == RSS_ROLE_STARTING || role_running(m->role) || m->pending);
    m->unclear =
        m->obs && !m->fenced_dead && !m->live && (m->role == RSS_ROLE_FAILED || m->role == RSS_ROLE_UNKNOWN);
    if (in->has_desired && in->desired.epoch == pi->epoch && in->desired.action != RSS_ACTION_NONE) {
        const struct rss_desired *d = &in->desired;
        bool acked = m->obs && o->last.present && rss_action_id_equal(o->last.id, d->id) &&
                     o->last.result != RSS_RESULT_PENDING;
        bool voided = m->obs && o->generation > d->generation; /* rule 7 */
        /* On a dead node an unresolved action is still on the pod: its agent would execute it when the
         * node comes back. A start there, after another member was seeded without it (minimumMembers),
         * was a second bootstrap (model trace F1), so it is retracted first (retract()). Other actions
         * of a dead node's member do no harm later and do not block (its members count as stopped). */
        if (!acked && !voided && m->fenced_dead)
            m->stale_start = is_start(d->action);
        else
            m->unresolved = !acked && !voided;
    }
    /* Finding F4: the last report is the write-ahead of a start, and then the node was judged dead (cut
     * off while the hook ran). Retracting the desired (retract()) does not stop a hook already running:
     * a seed hook there would bootstrap a second cluster beside one seeded elsewhere. Its agent fences
     * and stops the member once the hook returns, so after the hook's timeout and the dead window (from
     * the write-ahead's time; the window holds the stop's timeout, the kill and the margin for clock
     * skew between nodes) the member is stopped for sure; until then no seed goes ahead without it. */
    if (m->fenced_dead && m->pending && is_start(o->last.action)) {
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
    m->start_inflight = (m->unresolved && is_start(in->desired.action)) ||
                        (m->live && m->role == RSS_ROLE_STARTING) ||
                        (m->pending && is_start(o->last.action) && (!m->fenced_dead || m->dead_start));
    m->running = m->current && !m->fenced_dead && role_running(m->role) && !m->pending;
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
static void account(struct ctx *c, struct member *m)
{
    /* A member whose node went away while it ran was not at fault: when it comes back (a new container,
     * a new generation, stopped) that is a node outage, not a crash (no failure counted, no Failover). */
    if (m->exists && m->has_node && !m->node_alive && m->prev_known && role_running(m->prev_role))
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
        event(c, RSS_EVENT_WARNING, "ActionFailed", m,
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
    bool went_down = m->prev_known && role_running(m->prev_role) && o->generation > m->prev_gen &&
                     (m->role == RSS_ROLE_STOPPED || m->role == RSS_ROLE_FAILED);
    if (went_down && m->node_down) {
        rss_strbuf_item(&m->note, "its node was down while it ran: not counted as a failure");
    } else if (went_down && !outage) {
        m->failures++;
        m->new_failure = true;
        m->crashed = true;
        event(c, RSS_EVENT_WARNING, "MemberCrashed", m,
              "%s was %s in generation %" PRIu64 " and is %s in generation %" PRIu64
              "; %u failure(s) in a row",
              m->pod, rss_role_name(m->prev_role), m->prev_gen, rss_role_name(m->role), o->generation,
              m->failures);
    } else if (!went_down && m->role == RSS_ROLE_FAILED &&
               !(m->prev_known && m->prev_role == RSS_ROLE_FAILED && m->prev_gen == o->generation)) {
        m->failures++;
        m->new_failure = true;
        event(c, RSS_EVENT_WARNING, "MemberFailed", m,
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

/* ---- the journal: who went down while others ran on ---- */

/* A member that stops running while others run on as primaries gets a record: when, its last known
 * sequence, and who ran on, in which generation (they ran in the same generation at the previous plan
 * too, so they were up when it went down). A witness is confirmed when it still runs as primary in that
 * generation on a live node once the dead-node window, two status rounds and a status timeout have
 * passed: a witness whose node had died, or whose application had crashed, before the member went down
 * would show it by then (a dead node, a new generation). A witness that stops being so before it is
 * confirmed is dropped; a confirmed one stays (its own later stop is the lights-out). A running member
 * has no record. Reports from before this leader (not current) count as not running: a new leader may
 * drop witnesses, never add one. */
static void journal_update(struct ctx *c)
{
    const struct rss_spec *sp = c->spec;
    int64_t window = c->in->dead_after_ms + 2 * (int64_t)sp->reconcile_interval_ms +
                     (int64_t)sp->hooks[RSS_HOOK_STATUS].timeout_ms;
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
        if (m->running) {
            m->j_has = false;
            m->j_n = 0;
            continue;
        }
        if (m->j_has) {
            size_t k = 0;
            for (size_t j = 0; j < m->j_n; j++) {
                const struct member *y = &c->m[m->j_w[j].ordinal];
                bool same = y->primary_up && y->in->observed.generation == m->j_w[j].generation;
                if (!m->j_w[j].confirmed && !same)
                    continue;
                if (!m->j_w[j].confirmed && c->in->now_ms - m->j_down_ms >= window)
                    m->j_w[j].confirmed = true;
                m->j_w[k++] = m->j_w[j];
            }
            m->j_n = k;
            continue;
        }
        if (!(m->prev_known && role_running(m->prev_role)))
            continue;
        m->j_has = true;
        m->j_down_ms = c->in->now_ms;
        m->j_has_seq = m->last_seq_known;
        m->j_seq = m->last_seq;
        m->j_n = 0;
        for (size_t j = 0; j < c->n && m->j_n < PLANNER_JOURNAL_WITNESSES; j++) {
            const struct member *y = &c->m[j];
            if (y == m || !y->primary_up || !y->prev_known || !role_running(y->prev_role) ||
                y->prev_gen != y->in->observed.generation)
                continue;
            m->j_w[m->j_n].ordinal = y->ordinal;
            m->j_w[m->j_n].generation = y->prev_gen;
            m->j_w[m->j_n].confirmed = false;
            m->j_n++;
        }
    }
}

/* The journal's proof that a missing member is behind (docs/planner.md): the admin declared synchronous
 * replication, the member went down while a confirmed witness ran on as primary, and that witness has
 * reported in this recovery a sequence above the member's last known one. With synchronous replication
 * every commit the member made was on the witness before the member went down, and the witness committed
 * past it since. Returns the witness, or NULL. */
static const struct member *proven_behind(const struct ctx *c, const struct member *m)
{
    if (!c->spec->replication_sync || !m->j_has || !m->j_has_seq)
        return NULL;
    for (size_t k = 0; k < m->j_n; k++) {
        const struct member *y = &c->m[m->j_w[k].ordinal];
        if (m->j_w[k].confirmed && !y->missing && y->has_seq && y->seq > m->j_seq)
            return y;
    }
    return NULL;
}

/* ---- decisions ---- */

static void peers_up(struct ctx *c, char ***peers, size_t *n)
{
    *peers = rss_xcalloc(c->n + 1, sizeof(char *));
    *n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].primary_up)
            (*peers)[(*n)++] = rss_spec_peer_dns(c->spec, c->m[i].ordinal);
}

static void free_peers(char **peers, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(peers[i]);
    free(peers);
}

static void repairs(struct ctx *c)
{
    int max = c->spec->max_failures;
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
        if (!m->exists || !m->actionable || m->decided)
            continue;
        const struct rss_last_action *last = &m->in->observed.last;
        bool stop_failed = last->present && last->action == RSS_ACTION_STOP &&
                           (last->result == RSS_RESULT_FAILED || last->result == RSS_RESULT_TIMEOUT);
        if (m->role == RSS_ROLE_FAILED && m->failures >= (unsigned)max && !stop_failed) {
            /* docs/planner.md: a member at the limit is stopped first (its data stays consistent);
             * only a stopped one, or one whose stop failed, is deleted. */
            _cleanup_free_ char *why =
                rss_xasprintf("failed %u times (spec.recovery.maxFailures %d): stop, then replace the pod",
                              m->failures, max);
            issue(c, m, RSS_ACTION_STOP, NULL, 0, why);
            event(c, RSS_EVENT_WARNING, "StoppingFailedMember", m, "%s: %s", m->pod, why);
            decision_msg(c, "stopping %s before replacing it", m->pod);
        } else if ((m->role == RSS_ROLE_FAILED || m->role == RSS_ROLE_STOPPED) &&
                   m->failures >= (unsigned)max) {
            delete_pod(c, m);
            event(c, RSS_EVENT_WARNING, "DeletingPod", m,
                  "%s failed %u times in a row (spec.recovery.maxFailures %d); deleting the pod so the "
                  "StatefulSet recreates it",
                  m->pod, m->failures, max);
            decision_msg(c, "deleting %s after %u failures", m->pod, m->failures);
            rss_strbuf_item(&m->note, "pod deleted after %u failures", m->failures);
        } else if (m->role == RSS_ROLE_FAILED) {
            _cleanup_free_ char *why =
                rss_xasprintf("status reported failed (exit code %d); stopping", m->in->observed.status_code);
            issue(c, m, RSS_ACTION_STOP, NULL, 0, why);
            event(c, RSS_EVENT_WARNING, "StoppingFailedMember", m, "%s: %s", m->pod, why);
            decision_msg(c, "stopping failed member %s", m->pod);
        }
    }
}

static int cmp_join(const void *a, const void *b)
{
    const struct member *x = *(const struct member *const *)a, *y = *(const struct member *const *)b;
    if (x->has_seq != y->has_seq)
        return x->has_seq ? -1 : 1;
    if (x->has_seq && x->seq != y->seq)
        return x->seq > y->seq ? -1 : 1;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Stopped members below the target are started one at a time, highest sequence first, as primaries up to
 * spec.primaries with the running primaries as peers, then as secondaries when the spec has that hook. */
static bool joins(struct ctx *c, size_t slots)
{
    _cleanup_free_ struct member **cand = rss_xcalloc(c->n + 1, sizeof(*cand));
    size_t nc = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
        /* A stopped member made from an older template is recreated first (rollout()), not started. */
        if (m->exists && m->actionable && !m->decided && m->role == RSS_ROLE_STOPPED && !m->outdated &&
            (int)m->ordinal < c->target && m->failures < (unsigned)c->spec->max_failures &&
            !planner_hold_newer(c, m))
            cand[nc++] = m;
    }
    if (!nc)
        return false;
    qsort(cand, nc, sizeof(*cand), cmp_join);
    /* Primaries now, counting starts in flight (with joinConcurrency > 1 several are). */
    size_t n_primary = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct member *o = &c->m[i];
        bool starting_primary = o->start_inflight && o->in && o->in->desired.action == RSS_ACTION_PRIMARY;
        if ((o->live && o->role == RSS_ROLE_PRIMARY) || starting_primary)
            n_primary++;
    }
    char **peers;
    size_t np;
    peers_up(c, &peers, &np);
    struct rss_strbuf list = {0};
    for (size_t i = 0; i < np; i++)
        rss_strbuf_printf(&list, "%s%s", i ? " " : "", peers[i]);
    size_t started = 0;
    for (size_t k = 0; k < nc && started < slots; k++) {
        struct member *m = cand[k];
        enum rss_action action;
        if (n_primary < (size_t)c->spec->primaries) {
            action = RSS_ACTION_PRIMARY;
            n_primary++;
        } else if (c->spec->hooks[RSS_HOOK_SECONDARY].present) {
            action = RSS_ACTION_SECONDARY;
        } else {
            for (size_t i = k; i < nc; i++)
                rss_strbuf_item(
                    &cand[i]->note,
                    "standby: %zu primaries run (spec.primaries %d) and there is no secondary hook",
                    n_primary, c->spec->primaries);
            break;
        }
        char seqbuf[24] = "none";
        if (m->has_seq)
            fmt_seq(m->seq, seqbuf, sizeof(seqbuf));
        bool failover = m->crashed || (m->prev_known && role_running(m->prev_role) && !m->node_down);
        _cleanup_free_ char *why =
            rss_xasprintf("%s as %s (sequence %s) with peers [%s]", failover ? "failover: restart" : "join",
                          rss_action_name(action), seqbuf, rss_strbuf_str(&list));
        issue(c, m, action, peers, np, why);
        event(c, RSS_EVENT_NORMAL, failover ? "Failover" : "Joining", m,
              "%s %s; %zu more stopped member(s) to start after it", m->pod, why, nc - k - 1);
        decision_msg(c, "%s: %s", m->pod, why);
        started++;
    }
    free(list.s);
    free_peers(peers, np);
    return started > 0;
}

static bool confirmed_stopped(const struct member *m)
{
    return !m->exists || m->fenced_dead ||
           (m->current && m->role == RSS_ROLE_STOPPED && !m->unresolved && !m->pending);
}

/* Shrinks from the highest ordinal: `stop` first, replicas lowered only past confirmed-stopped members. */
static void scale_down(struct ctx *c)
{
    if (c->sts <= c->target)
        return;
    int next = c->sts;
    while (next > c->target && confirmed_stopped(&c->m[next - 1]))
        next--;
    if (next < c->sts) {
        c->out->set_replicas = next;
        event(c, RSS_EVENT_NORMAL, "ScalingDown", NULL,
              "lowering StatefulSet replicas from %d to %d: members %d..%d are stopped", c->sts, next, next,
              c->sts - 1);
        decision_msg(c, "scaling down to %d", next);
    }
    if (next == c->target)
        return;
    struct member *v = &c->m[next - 1];
    if (v->decided)
        return;
    if (!v->actionable || !v->running) {
        wait_msg(c, false, "ScalingDown", "scale down waits for %s (%s) before it can be stopped", v->pod,
                 v->node_silent ? "its node is silent" : rss_role_name(v->role));
        return;
    }
    bool other_primary = false;
    for (size_t i = 0; i < c->n && (int)i < c->target; i++)
        other_primary |= c->m[i].primary_up;
    if (c->target > 0 && !other_primary) {
        wait_msg(c, false, "ScalingDown", "scale down waits: no primary runs among the members that stay");
        return;
    }
    issue(c, v, RSS_ACTION_STOP, NULL, 0, "scale down: stop before the StatefulSet removes the pod");
    event(c, RSS_EVENT_NORMAL, "ScalingDown", v,
          "stopping %s before lowering replicas (highest ordinal first)", v->pod);
    decision_msg(c, "stopping %s for scale down", v->pod);
}

/* The members a rolling update still has to replace: 0 when none runs (no new revision known yet, or
 * the StatefulSet is being scaled). */
static size_t rolling(const struct ctx *c)
{
    if (!c->in->update_revision || c->sts != c->target)
        return 0;
    size_t n = 0;
    for (int i = 0; i < c->target; i++)
        n += c->m[i].exists && c->m[i].outdated;
    return n;
}

/* An updated member that failed halts the rollout (rollout() stops no one while it is down): said once
 * per failure, with the reason, so the admin sees why the other members stay on the old revision. */
static void rollout_halted(struct ctx *c)
{
    const char *rev = c->in->update_revision;
    size_t n_outdated = rolling(c);
    for (int i = 0; i < c->target && n_outdated; i++) {
        struct member *m = &c->m[i];
        if (!m->exists || m->outdated || !m->in->revision || !m->new_failure)
            continue;
        event(c, RSS_EVENT_WARNING, "RolloutHalted", m,
              "rolling update to revision %s halted: %s failed after its update (%u failure(s) in a row); "
              "%zu member(s) stay on their revision until it runs again",
              rev, m->pod, m->failures, n_outdated);
        wait_msg(c, true, "RolloutHalted", "rolling update to revision %s halted: %s failed after its update",
                 rev, m->pod);
    }
}

/* Rolling update of the application (the StatefulSet is OnDelete, so only rssd replaces pods): one
 * member at a time, secondaries first, then primaries, highest ordinal first. A member is stopped with
 * its hook, then its pod is deleted (this incarnation only) and the StatefulSet recreates it from the new
 * template; it then joins like any stopped member. Nothing is stopped unless every other member runs, so
 * never more than one member is down, and another primary must stay up. An updated member that does not
 * come back halts the rollout with a Warning until it runs again. */
static void rollout(struct ctx *c)
{
    const char *rev = c->in->update_revision;
    size_t n_outdated = rolling(c);
    if (!n_outdated)
        return;
    struct member *down = NULL, *halted = NULL, *next = NULL, *unstarted = NULL;
    for (int i = 0; i < c->target; i++) {
        struct member *m = &c->m[i];
        if (m->exists && m->outdated && !m->decided && m->actionable && confirmed_stopped(m)) {
            if (!down)
                down = m;
        } else if (planner_rollout_recreatable(m)) {
            if (!unstarted)
                unstarted = m;
        } else if (!m->exists || m->deleting || !m->running || m->unresolved || m->pending) {
            if (!halted)
                halted = m;
        }
    }
    if (down) { /* stopped already (by us, or it crashed): recreating it takes no one else down */
        delete_pod(c, down);
        event(c, RSS_EVENT_NORMAL, "RollingUpdate", down,
              "%s is stopped; deleting its pod so that the StatefulSet recreates it from revision %s "
              "(%zu member(s) still on an older revision)",
              down->pod, rev, n_outdated);
        decision_msg(c, "rolling update: recreating %s from revision %s", down->pod, rev);
        return;
    }
    if (unstarted) { /* a pod of an older template that never started (a fixed typo): see planner_rollout.c */
        const char *why = planner_rollout_stuck(unstarted);
        delete_pod(c, unstarted);
        event(
            c, RSS_EVENT_NORMAL, "RollingUpdate", unstarted,
            "%s never started a container (%s) and its template changed since; deleting its pod so that the "
            "StatefulSet recreates it from revision %s",
            unstarted->pod, why ? why : "Pending", rev);
        decision_msg(c, "rolling update: recreating %s (never started) from revision %s", unstarted->pod,
                     rev);
        return;
    }
    const char *stuck = halted && !halted->outdated ? planner_rollout_stuck(halted) : NULL;
    if (stuck) {
        wait_msg(c, true, "RolloutHalted",
                 "rolling update to revision %s halted: the pod of %s cannot start (%s); fix the template "
                 "(spec.pod), and rssd recreates the pod from the fixed one",
                 rev, halted->pod, stuck);
        return;
    }
    if (halted) {
        bool failed =
            halted->exists && !halted->outdated && (halted->failures > 0 || halted->role == RSS_ROLE_FAILED);
        wait_msg(c, failed, failed ? "RolloutHalted" : "RollingUpdate",
                 "rolling update to revision %s%s: waiting for %s (%s)", rev, failed ? " halted" : "",
                 halted->pod,
                 !halted->exists       ? "no pod yet"
                 : halted->node_silent ? "its node is silent"
                 : failed ? "it failed after the update; fix the template or the member, the rollout resumes "
                            "once it runs"
                 : halted->held ? "held back: left out of a recovery, it may hold writes the cluster lacks; "
                                  "its NewerThanSeed Warning says how to release it"
                                : rss_role_name(halted->role));
        return;
    }
    for (int pass = 0; pass < 2 && !next; pass++)
        for (int i = c->target - 1; i >= 0 && !next; i--) {
            struct member *m = &c->m[i];
            if (m->outdated && (pass == 1 || m->role == RSS_ROLE_SECONDARY))
                next = m;
        }
    if (!next->actionable || next->decided)
        return;
    if (next->role == RSS_ROLE_PRIMARY && c->n_primaries_up < 2) {
        wait_msg(
            c, false, "RollingUpdate",
            "rolling update to revision %s waits: stopping %s would leave no primary running (delete the "
            "pod by hand to update a single-primary RSS)",
            rev, next->pod);
        return;
    }
    _cleanup_free_ char *why =
        rss_xasprintf("rolling update to revision %s: stop before the pod is recreated", rev);
    issue(c, next, RSS_ACTION_STOP, NULL, 0, why);
    event(c, RSS_EVENT_NORMAL, "RollingUpdate", next,
          "stopping %s (%s) to recreate it from revision %s; %zu member(s) to go", next->pod,
          rss_role_name(next->role), rev, n_outdated);
    decision_msg(c, "rolling update: stopping %s", next->pod);
}

/* spec.nodeLossPolicy (docs/node-loss.md). Only here, while a primary runs on a live node: the replacement
 * joins with `primary` and copies the data from the running members, so it never seeds, and what the lost
 * member held is not needed (in a lights-out its data may be the newest: recovery() waits for it). The
 * leader's own dead verdict (rule 3's clock) is necessary; sufficient only with the admin's taint
 * node.kubernetes.io/out-of-service (the node is off: its volumes may move) or a volume that is known not
 * to be node-local. One replacement at a time: the next waits until the previous one has run. */
static void replace_lost(struct ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
        if (!m->exists || !m->fenced_dead || m->decided || (int)m->ordinal >= c->target)
            continue;
        const char *node = m->in->node;
        if (!c->spec->node_loss_replace) {
            rss_strbuf_item(&m->note, "node %s is dead: not replaced (spec.nodeLossPolicy: Wait)", node);
            wait_msg(c, false, "MemberOnDeadNode",
                     "%s: node %s is dead; waiting for it to come back (spec.nodeLossPolicy: Wait)", m->pod,
                     node);
            continue;
        }
        bool oos = m->in->node_out_of_service;
        enum rss_volume_locality vol = m->in->volume;
        if (!oos && vol != RSS_VOLUME_NETWORK) {
            const char *what = vol == RSS_VOLUME_NODE_LOCAL ? "node-local" : "of unknown locality";
            rss_strbuf_item(
                &m->note,
                "node %s is dead: replaced once it carries the taint node.kubernetes.io/out-of-service "
                "(its volume is %s)",
                node, what);
            wait_msg(c, false, "MemberOnDeadNode",
                     "%s: node %s is dead; spec.nodeLossPolicy Replace waits for the taint "
                     "node.kubernetes.io/out-of-service on it (the volume is %s)",
                     m->pod, node, what);
            continue;
        }
        struct member *busy = NULL;
        for (size_t k = 0; k < c->n && !busy; k++)
            if (&c->m[k] != m && c->m[k].repl_pending && (int)k < c->target)
                busy = &c->m[k];
        if (busy) {
            wait_msg(c, false, "MemberOnDeadNode",
                     "%s: node %s is dead; replacing one member at a time, %s (replaced) has not run yet",
                     m->pod, node, busy->pod);
            continue;
        }
        bool claims = vol == RSS_VOLUME_NODE_LOCAL && cJSON_GetArraySize(c->spec->volume_claim_templates) > 0;
        force_delete_pod(c, m, claims);
        struct rss_plan_delete *d = &c->out->deletes[c->out->n_deletes - 1];
        struct rss_strbuf cl = {0};
        for (size_t k = 0; k < d->n_claims; k++)
            rss_strbuf_item(&cl, "%s", d->claims[k]);
        char ls[24] = "never reported";
        if (m->obs && m->in->observed.has_sequence)
            fmt_seq(m->in->observed.sequence, ls, sizeof(ls));
        /* Left out of a recovery with a higher sequence than the seed: with its claim deleted the writes
         * beyond the seed go; with the claim kept the replacement has them and is held back like any
         * late member newer than the seed (spec.recovery.onNewerLateMember). */
        bool newer = m->left_out && m->obs && m->in->observed.has_sequence &&
                     m->in->observed.sequence > m->left_out_seed_seq;
        bool loses = newer && claims;
        event(c, RSS_EVENT_WARNING, "ReplacingMember", m,
              "%s: node %s judged dead by the leader and %s; spec.nodeLossPolicy Replace: force-deleting the "
              "pod%s%s%s so that the StatefulSet recreates it on a live node, where it joins with `primary` "
              "(it never seeds); its last reported sequence: %s%s",
              m->pod, node,
              oos ? "tainted node.kubernetes.io/out-of-service" : "the member's volume is not node-local",
              claims ? " and its node-local claim(s) " : "", claims ? rss_strbuf_str(&cl) : "",
              claims ? " (what happens to their volumes follows the PVs' reclaim policy)" : "", ls,
              loses   ? "; the writes it held beyond the running cluster's seed are lost"
              : newer ? "; it holds writes beyond the running cluster's seed and is held back like any late "
                        "member (spec.recovery.onNewerLateMember)"
                      : "");
        decision_msg(c, "replacing %s: node %s is dead", m->pod, node);
        if (claims)
            m->left_out = false; /* its data is deleted: nothing diverged is left to hold */
        rss_strbuf_item(&m->note, "replaced: node %s is dead", node);
        char when[RSS_TIME_LEN];
        rss_time_ms(when, c->in->now_ms);
        cJSON_Delete(m->repl_new);
        m->repl_new = cJSON_CreateObject();
        cJSON_AddStringToObject(m->repl_new, "fromNode", node);
        cJSON_AddStringToObject(m->repl_new, "reason", oos ? "OutOfService" : "NetworkVolume");
        if (m->in->pod_uid)
            cJSON_AddStringToObject(m->repl_new, "podUID", m->in->pod_uid);
        if (claims)
            cJSON_AddStringToObject(m->repl_new, "claimsDeleted", rss_strbuf_str(&cl));
        cJSON_AddStringToObject(m->repl_new, "lastSequence", ls);
        if (m->left_out && !claims) {
            char ss[24];
            fmt_seq(m->left_out_seed_seq, ss, sizeof(ss));
            cJSON_AddStringToObject(m->repl_new, "leftOutSeedSequence", ss);
        }
        cJSON_AddStringToObject(m->repl_new, "time", when);
        m->repl_pending = true;
        cJSON_Delete(c->new_replacement);
        c->new_replacement = cJSON_Duplicate(m->repl_new, true);
        cJSON_AddStringToObject(c->new_replacement, "member", m->pod);
        free(cl.s);
    }
}

static void running_cluster(struct ctx *c)
{
    planner_failover_load(c);
    rollout_halted(c);
    bool inflight = false;
    size_t n_inflight = 0;
    const struct member *starting = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].start_inflight) {
            inflight = true;
            n_inflight++;
            if (!starting)
                starting = &c->m[i];
        }
    /* spec.joinConcurrency: joins in flight at once (1, the safe default: one at a time). */
    size_t slots =
        (size_t)c->spec->join_concurrency > n_inflight ? (size_t)c->spec->join_concurrency - n_inflight : 0;
    if (c->n_primaries_up == 0) {
        /* Rule 6.1 trace 4: never start a member into a cluster whose primaries are gone. */
        if (inflight) {
            wait_msg(c, false, "WaitingForStart", "waiting for %s to finish starting", starting->pod);
            return;
        }
        /* Rule 12: a primary nobody can see is not a stopped primary (a restarted or hung agent, a
         * report from before this epoch). Stopping its secondaries would be an outage made by rssd. */
        const struct member *unseen = planner_unobserved_primary(c);
        if (unseen) {
            char why[512];
            planner_unobserved_why(c, unseen, why, sizeof(why));
            wait_msg(c, unseen->node_silent, "PrimaryUnobserved",
                     "no primary observed running; %s was primary and is not observed stopped (%s): waiting "
                     "for it, the other members are not stopped",
                     unseen->pod, why);
            return;
        }
        char fo[512];
        size_t before = c->out->n_patches;
        if (planner_failover_promote(c, fo, sizeof(fo))) { /* rule 15 */
            if (c->out->n_patches > before)
                decision_msg(c, "%s", fo);
            else
                wait_msg(c, false, "Failover", "%s", fo);
            return;
        }
        bool acted = false;
        for (size_t i = 0; i < c->n; i++) {
            struct member *m = &c->m[i];
            if (!m->live)
                continue;
            if (m->actionable && m->running && !m->decided) {
                issue(c, m, RSS_ACTION_STOP, NULL, 0,
                      "no primary runs: stop so that a new recovery can start");
                event(c, RSS_EVENT_WARNING, "NoPrimary", m,
                      "no primary is running; stopping %s (%s) so that a new recovery can seed the highest "
                      "sequence",
                      m->pod, rss_role_name(m->role));
                acted = true;
            } else if (!m->decided) {
                wait_msg(c, false, "WaitingForMembers", "no primary runs; waiting for %s (%s%s)", m->pod,
                         rss_role_name(m->role), m->node_silent ? ", node silent" : "");
            }
        }
        if (acted)
            decision_msg(c, "no primary runs: stopping the remaining members for a new recovery");
        return;
    }
    replace_lost(c);
    /* After a leader change every agent re-probes within moments; joining before they did would pick
     * the order (highest sequence first) from the members that happened to answer first. A member on a
     * node that went silent does not hold anyone up. */
    struct member *stale = NULL;
    for (size_t i = 0; i < c->n && !stale; i++) {
        struct member *m = &c->m[i];
        if (m->exists && !m->deleting && m->node_alive && m->obs && !m->fresh && (int)m->ordinal < c->target)
            stale = m;
    }
    bool joined = false;
    if (!slots)
        wait_msg(c, false, "WaitingForStart", "waiting for %s to finish starting before the next one",
                 starting->pod);
    else if (stale)
        wait_msg(c, false, "WaitingForMembers", "waiting for %s to report under epoch %" PRIu64, stale->pod,
                 c->in->epoch);
    else
        joined = planner_failover_repoint(c) || joins(c, slots);
    if (!inflight && !stale && !joined) {
        /* Too many primaries (spec.primaries lowered): stop the highest ordinal; it rejoins as secondary. */
        size_t n = 0;
        struct member *last = NULL;
        bool unresolved = false;
        for (size_t i = 0; i < c->n; i++) {
            unresolved |= c->m[i].unresolved;
            if (c->m[i].running && c->m[i].role == RSS_ROLE_PRIMARY && (int)i < c->target) {
                n++;
                last = &c->m[i];
            }
        }
        if (n > (size_t)c->spec->primaries && !unresolved && last->actionable && !last->decided) {
            issue(c, last, RSS_ACTION_STOP, NULL, 0, "more primaries than spec.primaries");
            event(c, RSS_EVENT_NORMAL, "Demoting", last,
                  "%zu primaries run but spec.primaries is %d; stopping %s", n, c->spec->primaries,
                  last->pod);
            decision_msg(c, "stopping %s: too many primaries", last->pod);
        }
    }
    bool decided = false;
    for (size_t i = 0; i < c->n; i++)
        decided |= c->m[i].decided;
    if (!inflight && !stale && !joined && !decided)
        rollout(c);
    scale_down(c);
}

/* Lights-out recovery (rules 1, 2, 3, 6, 8): nothing is live and nothing issued is unresolved. */
static void recovery(struct ctx *c)
{
    if (c->target == 0) {
        scale_down(c);
        return;
    }
    /* Every member the RSS should have, and every existing pod above that (a StatefulSet scaled out of
     * band, or a scale down not finished): any of them may hold the newest data. Members the StatefulSet
     * has not created yet are waited for, so a scale up never seeds in the plan that raises replicas. */
    int w = c->target;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].exists && (int)c->m[i].ordinal >= w)
            w = (int)c->m[i].ordinal + 1;
    if (c->sts <= 0) {
        wait_msg(c, false, "WaitingForMembers", "waiting for the StatefulSet to create the member pods");
        return;
    }
    struct rss_strbuf missing = {0}, lost = {0}, all = {0}, behind = {0}, diverged = {0};
    size_t n_missing = 0, n_cand = 0, n_behind = 0;
    bool warn = false;
    struct member *best = NULL, *tie = NULL, *repl = NULL;
    _cleanup_free_ char(*whys)[512] = rss_xcalloc((size_t)w + 1, sizeof(*whys));
    for (int i = 0; i < w; i++) {
        struct member *m = &c->m[i];
        char *why = whys[i];
        /* Rule 14: its history diverged from the cluster's; neither a candidate nor waited for. */
        if (planner_hold_diverged(c, m, &diverged))
            continue;
        /* No running count of seconds here: this text is the status message and the wait Event,
         * which must not change (and be sent again) on every plan. */
        if (m->fenced_dead)
            snprintf(why, 512,
                     "node %s is down (silent past the fence timeout and the stop timeout as this leader saw "
                     "it); its data may be "
                     "the newest%s",
                     m->in->node,
                     c->spec->node_loss_replace
                         ? "; spec.nodeLossPolicy Replace replaces a member only while "
                           "a primary runs"
                         : "");
        else if (!m->exists)
            snprintf(why, 512, "pod does not exist");
        else if (m->deleting)
            snprintf(why, 512, "pod is being deleted");
        else if (!m->has_node)
            snprintf(why, 512, "pod is not scheduled");
        else if (m->node_silent)
            snprintf(why, 512, "node %s silent", m->in->node);
        else if (!m->obs)
            snprintf(why, 512, "%s%.400s",
                     m->in->observed_error ? "unreadable report: " : "no report from its agent yet",
                     m->in->observed_error ? m->in->observed_error : "");
        else if (!m->fresh)
            snprintf(why, 512, "report predates epoch %" PRIu64 "; waiting for its agent to re-probe",
                     c->in->epoch);
        else if (!m->current)
            snprintf(why, 512, "report is for an older container");
        else if (m->role != RSS_ROLE_STOPPED)
            snprintf(why, 512, "role %s", rss_role_name(m->role));
        else if (m->failures >= (unsigned)c->spec->max_failures)
            snprintf(why, 512, "failed %u times; being replaced", m->failures);
        else if (m->seq_error) {
            snprintf(why, 512, "sequence error: %.400s", m->seq_error);
            warn = true;
        } else if (!m->has_seq)
            snprintf(why, 512, "no sequence reported yet");
        if (why[0]) {
            m->missing = true;
            continue;
        }
        if (m->repl_pending) {
            /* docs/node-loss.md: a replacement holds no data of its own until it has joined; it never
             * seeds, and does not block the others either. */
            rss_strbuf_item(&m->note, "a replacement that has not run yet: never seeds");
            rss_strbuf_item(&missing,
                            "%s (replaced a member lost with its node and has not run yet: never seeds)",
                            m->pod);
            if (!repl || m->seq > repl->seq)
                repl = m;
            continue;
        }
        n_cand++;
        char s[24];
        fmt_seq(m->seq, s, sizeof(s));
        rss_strbuf_item(&all, "%s=%s", m->pod, s);
        /* Highest sequence; ties go to the lowest ordinal (compared as numbers: ascending loop). */
        if (!best || m->seq > best->seq) {
            best = m;
            tie = NULL;
        } else if (m->seq == best->seq && !tie) {
            tie = m;
        }
    }
    /* Second pass, once every candidate is known: a missing member is waited for unless the journal
     * proves it behind a member that reported (spec.recovery.replication: Synchronous). */
    for (int i = 0; i < w; i++) {
        struct member *m = &c->m[i];
        if (!m->missing)
            continue;
        const struct member *y = proven_behind(c, m);
        char when[RSS_TIME_LEN], ys[24], ms[24];
        if (y) {
            m->behind = true;
            n_behind++;
            fmt_seq(y->seq, ys, sizeof(ys));
            fmt_seq(m->j_seq, ms, sizeof(ms));
            rss_strbuf_item(&behind,
                            "%s (it went down at %s while %s ran on as primary; %s now has sequence %s, past "
                            "its last sequence %s)",
                            m->pod, rss_time_ms(when, m->j_down_ms), y->pod, y->pod, ys, ms);
            rss_strbuf_item(&m->note, "not a seed candidate: %s; proven behind %s by the journal", whys[i],
                            y->pod);
            continue;
        }
        n_missing++;
        rss_strbuf_item(&missing, "%s (%s)", m->pod, whys[i]);
        rss_strbuf_item(&m->note, "not a seed candidate: %s", whys[i]);
        /* What going on without it may lose: its last sequence, if it ever reported one. */
        if (m->exists && m->obs && m->in->observed.has_sequence) {
            char ls[24];
            fmt_seq(m->in->observed.sequence, ls, sizeof(ls));
            rss_strbuf_item(&lost, "%s (last reported sequence %s)", m->pod, ls);
        } else {
            rss_strbuf_item(&lost, "%s (sequence never reported)", m->pod);
        }
    }
    int min = c->spec->min_members;
    bool policy = min > 0 && n_cand >= (size_t)min && !planner_new_member_grace(c, w);
    const char *what = c->last_recovery ? "lights-out recovery" : "new cluster";
    char bs[24] = "", ps[24];
    if (best)
        fmt_seq(best->seq, bs, sizeof(bs));
    fmt_seq(c->pin_seq, ps, sizeof(ps));
    if (n_missing && !policy) {
        wait_msg(c, warn, warn ? "SequenceError" : "WaitingForMembers",
                 "%s: waiting for %zu of %d member(s) to report a sequence: %s", what, n_missing, w,
                 rss_strbuf_str(&missing));
    } else if (!best) {
        wait_msg(c, true, "WaitingForMembers", "%s: no member can seed: %s%s%s", what,
                 rss_strbuf_str(&missing), diverged.len ? "; never seeds (rule 14): " : "",
                 diverged.len ? diverged.s : "");
    } else if (repl && repl->seq > best->seq) {
        /* Its volume followed it (not node-local): it may hold the newest data. Never a lower seed. */
        char rs[24];
        fmt_seq(repl->seq, rs, sizeof(rs));
        wait_msg(c, true, "WaitingForMembers",
                 "%s: %s (a replacement, never seeds) reports sequence %s above the best other member's %s "
                 "(%s): refusing to seed the lower sequence; force-seed decides",
                 what, repl->pod, rs, bs, best->pod);
    } else if (c->pin && best->seq < c->pin_seq) {
        /* Rule 2: a failed seed is retried on its member; never an automatic fallback to less data. */
        wait_msg(c, true, "SeedFallbackRefused",
                 "lights-out recovery: the previous seed rss-%s-%u had sequence %s; refusing to seed lower "
                 "sequence %s "
                 "from %s",
                 c->spec->name, c->pin_ordinal, ps, bs, best->pod);
    } else {
        struct rss_strbuf why = {0};
        /* A cluster that never started and whose members are all empty is being created, not
         * recovered: say so rather than "seeds with the highest sequence 0". */
        bool bootstrap = !c->last_recovery && !n_missing && best->seq == 0;
        if (bootstrap)
            rss_strbuf_printf(&why, "new cluster: %s bootstraps, all %zu members empty", best->pod, n_cand);
        else
            rss_strbuf_printf(&why, "lights-out recovery: %s seeds with the highest sequence %s among %s",
                              best->pod, bs, rss_strbuf_str(&all));
        if (tie && !bootstrap)
            rss_strbuf_printf(&why, " (tied with %s; the lowest ordinal wins)", tie->pod);
        if (n_behind)
            rss_strbuf_printf(&why, "; left out, proven behind by the journal: %s", rss_strbuf_str(&behind));
        if (diverged.len)
            rss_strbuf_printf(&why, "; not compared, diverged since an earlier recovery: %s", diverged.s);
        issue(c, best, RSS_ACTION_SEED, NULL, 0, why.s);
        event(c, RSS_EVENT_NORMAL, bootstrap ? "Bootstrap" : "SeedChosen", best, "%s", why.s);
        cJSON_Delete(c->new_recovery);
        c->new_recovery = cJSON_CreateObject();
        cJSON_AddStringToObject(c->new_recovery, "kind", bootstrap ? "Bootstrap" : "LightsOut");
        cJSON_AddStringToObject(c->new_recovery, "seed", best->pod);
        cJSON_AddStringToObject(c->new_recovery, "sequence", bs);
        char when[RSS_TIME_LEN];
        cJSON_AddStringToObject(c->new_recovery, "time", rss_time_ms(when, c->in->now_ms));
        if (n_missing)
            cJSON_AddNumberToObject(c->new_recovery, "membersLeftOut", (double)n_missing);
        if (n_behind)
            cJSON_AddNumberToObject(c->new_recovery, "membersBehind", (double)n_behind);
        decision_msg(c, "%s", why.s);
        for (int i = 0; i < w; i++) {
            struct member *m = &c->m[i];
            if (!m->behind)
                continue;
            char when[RSS_TIME_LEN], js[24], ys[24];
            fmt_seq(m->j_seq, js, sizeof(js));
            const struct member *y = proven_behind(c, m);
            fmt_seq(y->seq, ys, sizeof(ys));
            event(c, RSS_EVENT_NORMAL, "LeftOutBehind", m,
                  "%s is left out of the recovery: it went down at %s while %s ran on as primary (confirmed "
                  "later in the same generation); with synchronous replication (spec.recovery.replication) "
                  "every commit of %s is on %s, whose sequence %s is past %s's last sequence %s",
                  m->pod, rss_time_ms(when, m->j_down_ms), y->pod, m->pod, y->pod, ys, m->pod, js);
            planner_hold_mark(m, best->seq);
        }
        if (n_missing) {
            /* Rule 3: the admin's opt-in, never a dead node by itself; say what may be lost. */
            event(c, RSS_EVENT_WARNING, "MemberSkipped", NULL,
                  "seeding %s (sequence %s) without %zu member(s) under spec.recovery.minimumMembers %d; "
                  "writes that only they hold may be lost: %s",
                  best->pod, bs, n_missing, min, rss_strbuf_str(&lost));
            for (int i = 0; i < w; i++)
                if (c->m[i].missing)
                    planner_hold_mark(&c->m[i], best->seq);
        }
        c->pin = true;
        c->pin_ordinal = best->ordinal;
        c->pin_seq = best->seq;
        free(why.s);
    }
    free(missing.s);
    free(lost.s);
    free(all.s);
    free(behind.s);
    free(diverged.s);
}

/* The admin's override (rss.clusterlabs.org/force-seed=<pod>): seed that member although the policy
 * waits. Refused, and the annotation removed, when a member runs or the pod is not a member; it waits
 * (annotation kept) until the member reported as stopped and nothing issued is unresolved. Returns true
 * when it decided (seeded, refused or waits). Never automatic: it only ever seeds the named member. */
static bool force_seed(struct ctx *c, bool busy)
{
    const char *want = c->in->force_seed;
    /* The check `kubectl rss force-seed` shows before it sets the annotation (planner_forceseed.c). */
    _cleanup_free_ struct rss_forceseed_member *fm = rss_xcalloc(c->n ? c->n : 1, sizeof(*fm));
    for (size_t i = 0; i < c->n; i++)
        fm[i] = (struct rss_forceseed_member){c->m[i].pod, c->m[i].exists, c->m[i].live};
    size_t at;
    const char *who;
    enum rss_forceseed_verdict v = rss_forceseed_check(want, fm, c->n, &at, &who);
    struct member *m = at < c->n ? &c->m[at] : NULL;
    bool running = who != NULL;
    if (v != RSS_FORCESEED_ALLOWED) {
        c->out->clear_force_seed = true;
        event(c, RSS_EVENT_WARNING, "ForceSeedRefused", m,
              "force-seed of %s refused: %s; the annotation is removed", want, rss_forceseed_reason(v));
        if (running)
            decision_msg(c, "force-seed of %s refused: %s runs", want, who);
        else
            decision_msg(c, "force-seed of %s refused: no such member pod", want);
        return !m; /* a refusal while members run leaves the running cluster to its usual path */
    }
    if (busy || !m->actionable || m->role != RSS_ROLE_STOPPED) {
        wait_msg(c, false, "WaitingForMembers", "force-seed of %s waits until it reports as stopped", want);
        return true;
    }
    struct rss_strbuf others = {0};
    for (size_t i = 0; i < c->n; i++) {
        const struct member *o = &c->m[i];
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
    issue(c, m, RSS_ACTION_SEED, NULL, 0, why);
    event(c, RSS_EVENT_WARNING, "ForceSeed", m, "%s; writes only they hold may be lost", why);
    decision_msg(c, "%s", why);
    cJSON_Delete(c->new_recovery);
    c->new_recovery = cJSON_CreateObject();
    cJSON_AddStringToObject(c->new_recovery, "kind", "ForceSeed");
    cJSON_AddStringToObject(c->new_recovery, "seed", m->pod);
    cJSON_AddStringToObject(c->new_recovery, "sequence", ms);
    char when[RSS_TIME_LEN];
    cJSON_AddStringToObject(c->new_recovery, "time", rss_time_ms(when, c->in->now_ms));
    c->pin = m->has_seq;
    c->pin_ordinal = m->ordinal;
    c->pin_seq = m->seq;
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

/* spec.suspend: a planned full stop. One member at a time (secondaries first, then primaries from
 * the highest ordinal, so the last primary, whose data is the newest where replication lags, stops
 * last); once every member is confirmed stopped with its sequence reported, replicas go to 0 and the
 * volumes stay. The sequences at stop are kept in status.suspended. Resuming is the normal path: the
 * StatefulSet scales up, every member reports, the highest seeds. */
static void suspend(struct ctx *c)
{
    if (c->sts == 0) { /* done: status.suspended was recorded before the pods went */
        decision_msg(c, "suspended: replicas 0, volumes kept (spec.suspend: false brings the members back)");
        return;
    }
    int w = c->sts > c->target ? c->sts : c->target;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].unresolved || (c->m[i].pending && (!c->m[i].fenced_dead || c->m[i].dead_start))) {
            wait_msg(c, false, "Suspending", "suspending: waiting for %s to finish its action", c->m[i].pod);
            return;
        }
    struct member *next = NULL;
    for (int pass = 0; pass < 2 && !next; pass++)
        for (int i = w - 1; i >= 0 && !next; i--) {
            struct member *m = &c->m[i];
            if (!m->live || (pass == 0 && m->role != RSS_ROLE_SECONDARY))
                continue;
            next = m;
        }
    /* Then a member that is failed or unknown (its status hook says neither running nor stopped): `stop`
     * makes it clear. Waiting for it to report stopped by itself never completed the suspend. */
    for (int i = w - 1; i >= 0 && !next; i--)
        if (c->m[i].unclear && c->m[i].current)
            next = &c->m[i];
    if (next) {
        if (!next->actionable) {
            wait_msg(c, false, "Suspending", "suspending: waiting for %s (%s) to be reachable", next->pod,
                     next->node_silent ? "node silent" : rss_role_name(next->role));
            return;
        }
        issue(c, next, RSS_ACTION_STOP, NULL, 0, "spec.suspend: planned full stop");
        event(c, RSS_EVENT_NORMAL, "Suspending", next, "spec.suspend: stopping %s (%s)", next->pod,
              rss_role_name(next->role));
        decision_msg(c, "suspending: stopping %s", next->pod);
        return;
    }
    /* Everything stopped: record what each member holds, then let the StatefulSet go to 0. */
    cJSON_Delete(c->suspended);
    c->suspended = cJSON_CreateObject();
    cJSON *seqs = cJSON_AddObjectToObject(c->suspended, "sequences");
    for (int i = 0; i < w; i++) {
        struct member *m = &c->m[i];
        if (!m->exists)
            continue;
        if (m->fenced_dead) {
            /* Its node is dead (agent silent and kubelet down): its members are stopped; what its volume
             * holds is asked again at resume, where recovery() waits for it like any member. */
            cJSON_AddStringToObject(seqs, m->pod, "unknown");
            continue;
        }
        if (!m->current || m->role != RSS_ROLE_STOPPED || (!m->has_seq && !m->seq_error)) {
            cJSON_Delete(c->suspended);
            c->suspended = NULL;
            wait_msg(c, false, "Suspending",
                     "suspending: waiting for %s to report as stopped with its sequence", m->pod);
            return;
        }
        char buf[24];
        fmt_seq(m->seq, buf, sizeof(buf));
        cJSON_AddStringToObject(seqs, m->pod, m->has_seq ? buf : "unknown");
    }
    if (c->sts > 0) {
        c->out->set_replicas = 0;
        event(c, RSS_EVENT_NORMAL, "Suspended", NULL,
              "every member stopped; StatefulSet replicas 0, volumes kept; sequences at stop in "
              "status.suspended");
    }
    decision_msg(c, "suspended: every member stopped, replicas 0, volumes kept");
}

static void decide(struct ctx *c)
{
    if (c->spec->suspend) {
        suspend(c);
        return;
    }
    if (c->sts < 0) {
        c->out->create_statefulset = true;
        c->out->set_replicas = c->target;
        event(c, RSS_EVENT_NORMAL, "Creating", NULL, "creating StatefulSet rss-%s with %d replicas",
              c->spec->name, c->target);
        decision_msg(c, "creating the StatefulSet");
    } else if (c->sts < c->target) {
        c->out->set_replicas = c->target;
        event(c, RSS_EVENT_NORMAL, "ScalingUp", NULL, "raising StatefulSet replicas from %d to %d", c->sts,
              c->target);
        decision_msg(c, "scaling up to %d", c->target);
    }
    repairs(c);
    bool live = false, unclear = false, unresolved = false, decided = false, dead_start = false;
    for (size_t i = 0; i < c->n; i++) {
        live |= c->m[i].live;
        unclear |= c->m[i].unclear;
        unresolved |= c->m[i].unresolved;
        decided |= c->m[i].decided;
        dead_start |= c->m[i].dead_start;
    }
    /* Not even the admin's force-seed goes ahead while a start may still run on a dead node (F4). */
    if (c->in->force_seed && force_seed(c, unresolved || decided || dead_start))
        return;
    if (live) {
        running_cluster(c);
        return;
    }
    if (unclear || unresolved || decided || dead_start) {
        /* Rule 8: no seed while anything issued is unresolved or any member's state is unclear; nor
         * while a start may still run on a dead node (finding F4). */
        for (size_t i = 0; i < c->n; i++) {
            struct member *m = &c->m[i];
            if (m->decided)
                continue;
            if (m->unresolved) {
                char id[48];
                rss_action_id_format(m->in->desired.id, id, sizeof(id));
                wait_msg(c, false, "WaitingForMembers", "waiting for %s to resolve %s (%s)", m->pod,
                         rss_action_name(m->in->desired.action), id);
            } else if (m->unclear) {
                wait_msg(c, m->role == RSS_ROLE_UNKNOWN, "WaitingForMembers", "waiting for %s: role %s",
                         m->pod, rss_role_name(m->role));
            } else if (m->dead_start) {
                char id[48], until[RSS_TIME_LEN];
                rss_action_id_format(m->in->observed.last.id, id, sizeof(id));
                if (m->dead_start_until == INT64_MAX)
                    snprintf(until, sizeof(until), "it reports again");
                else
                    rss_time_ms(until, m->dead_start_until);
                wait_msg(c, true, "WaitingForStart",
                         "%s's %s (%s) may still be running on node %s, judged dead while it started: no "
                         "seed before %s (its hook timeout and the stop timeout after the write-ahead)",
                         m->pod, rss_action_name(m->in->observed.last.action), id, m->in->node, until);
            }
        }
        return;
    }
    recovery(c);
}

/* ---- fencing and deposition ---- */

/* A pod whose desired or observed epoch is above ours: either a newer leader wrote it, or someone
 * forged it (pod annotations are writable by namespace users). The leader tells them apart with a fresh
 * read of the Lease before it applies this plan; here such a claim is simply not trusted. */
static bool epoch_claims(struct ctx *c)
{
    bool any = false;
    for (size_t i = 0; i < c->n; i++) {
        const struct member *m = &c->m[i];
        if (!m->exists)
            continue;
        uint64_t d = m->in->has_desired ? m->in->desired.epoch : 0;
        uint64_t o = m->in->has_observed ? m->in->observed.lease_epoch : 0;
        if (d <= c->in->epoch && o <= c->in->epoch)
            continue;
        any = true;
        event(c, RSS_EVENT_WARNING, "InvalidEpoch", m,
              "%s carries %s epoch %" PRIu64 ", above the leader Lease's %" PRIu64
              ": ignored (only the Lease says who leads)%s",
              m->pod, d > c->in->epoch ? "a desired" : "an observed", d > c->in->epoch ? d : o, c->in->epoch,
              d > c->in->epoch ? "; rssd overwrites it" : "");
    }
    return any;
}

/* Rule 9: before deciding anything, every member pod carries this leader's epoch. */
static bool fence(struct ctx *c)
{
    struct rss_strbuf list = {0};
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
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
        event(c, RSS_EVENT_NORMAL, "Fencing", NULL,
              "leader epoch %" PRIu64 " fences %zu member(s) before deciding: %s", c->in->epoch, n, list.s);
        decision_msg(c, "fencing %zu member(s) for leader epoch %" PRIu64, n, c->in->epoch);
    }
    free(list.s);
    return n > 0;
}

/* Rule 8 for a node judged dead: a start it never acknowledged must not run when the node returns, and
 * nothing else is decided until the retraction (desired `none`, a CAS on the pod's version) is in. If
 * the agent wrote its write-ahead first, the CAS fails and the next plan sees that. */
static bool retract(struct ctx *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
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
        event(
            c, RSS_EVENT_WARNING, "ActionRetracted", m,
            "%s: %s (action %s) retracted: node %s was judged dead before its agent acknowledged it, and it "
            "must not run when the node comes back",
            m->pod, rss_action_name(m->in->desired.action), id, m->in->node);
        n++;
    }
    if (n)
        decision_msg(c, "retracting %zu start(s) on dead nodes before deciding", n);
    return n > 0;
}

/* ---- labels ---- */

static void labels(struct ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct member *m = &c->m[i];
        if (!m->exists || m->deleting)
            continue;
        int want = m->running ? 1 : 0;
        if (m->in->active_label != want)
            planner_patch_for(c, m)->set_active_label = want;
    }
}

/* ---- entry point ---- */

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

static void max_seq(struct ctx *c, struct rss_action_id id)
{
    if (id.epoch == c->in->epoch && id.seq > c->seq)
        c->seq = id.seq;
}

static int setup(struct ctx *c, const struct rss_plan_input *in, rss_error_t *err)
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
        struct member *m = &c->m[in->members[i].ordinal];
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
        struct member *m = &c->m[i];
        derive(c, m);
        if (m->exists && m->in->has_desired)
            max_seq(c, m->in->desired.id);
        if (m->exists && m->in->has_observed && m->in->observed.last.present)
            max_seq(c, m->in->observed.last.id);
    }
    return 0;
}

int rss_planner_plan(const struct rss_plan_input *in, struct rss_plan *out, rss_error_t *err)
{
    memset(out, 0, sizeof(*out));
    out->set_replicas = -1;
    struct ctx c = {.out = out};
    int r = setup(&c, in, err);
    if (r >= 0) {
        out->epoch_claims = epoch_claims(&c);
        for (size_t i = 0; i < c.n; i++) {
            struct member *m = &c.m[i];
            planner_load_history(&c, m);
            planner_load_journal(&c, m);
            planner_hold_load(&c, m);
            if (m->has_seq) {
                m->last_seq_known = true;
                m->last_seq = m->seq;
            }
            if (!c.spec->paused)
                account(&c, m);
            m->repl_pending = m->repl_prev && !m->running;
            c.n_primaries_up += m->primary_up;
        }
        if (!c.spec->paused)
            journal_update(&c);
        if (!c.spec->paused) /* paused: status only; the annotation waits */
            planner_hold_release(&c);
        if (c.n_primaries_up)
            c.pin = false; /* the recovery is over: a primary runs */
        if (!c.spec->paused) {
            out->fencing = fence(&c);
            if (!out->fencing)
                out->retracting = retract(&c);
            if (!out->fencing && !out->retracting) {
                decide(&c);
                labels(&c);
            }
        }
        if (c.waiting && (!c.prev_message || strcmp(c.prev_message, c.msg.s) != 0))
            event(&c, c.wait_warning ? RSS_EVENT_WARNING : RSS_EVENT_NORMAL, c.wait_reason, NULL, "%s",
                  c.msg.s);
        /* Per-member sequence errors are Warnings once each (rule 6), whatever else happens. */
        for (size_t i = 0; i < c.n; i++) {
            struct member *m = &c.m[i];
            if (m->seq_error && (!m->prev_seq_error || strcmp(m->prev_seq_error, m->seq_error) != 0))
                event(&c, RSS_EVENT_WARNING, "SequenceError", m, "%s: %s; it is not a seed candidate", m->pod,
                      m->seq_error);
        }
        if (!c.spec->paused)
            planner_hold_persist(&c);
        if (out->n_patches > 1)
            qsort(out->patches, out->n_patches, sizeof(*out->patches), cmp_patch);
        planner_build_status(&c);
    }
    for (size_t i = 0; i < c.n; i++) {
        free(c.m[i].pod);
        free(c.m[i].note.s);
        cJSON_Delete(c.m[i].repl_new);
    }
    cJSON_Delete(c.new_replacement);
    cJSON_Delete(c.new_recovery);
    cJSON_Delete(c.new_failover);
    cJSON_Delete(c.suspended);
    free(c.m);
    free(c.msg.s);
    return r;
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
        rss_annotation_desired_clear(&plan->patches[i].desired);
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
