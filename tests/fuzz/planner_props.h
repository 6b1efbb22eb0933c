/* planner_props.h -- the ARCHITECTURE section 6 safety rules as properties of one plan, written from the
 * planner's INPUT only (public types of rss/planner.h), not from its internal state. Shared by
 * fuzz_planner.c and fuzz_snapshot.c. Each violated rule aborts with the rule's number. */
#ifndef RSS_FUZZ_PLANNER_PROPS_H
#define RSS_FUZZ_PLANNER_PROPS_H

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "rss/planner.h"

#define RULE(n, cond)                                                                                        \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "safety rule %s violated: %s\n", n, #cond);                                      \
            char *d_ = rss_plan_describe(plan);                                                              \
            fprintf(stderr, "plan:\n%s\n", d_ ? d_ : "?");                                                   \
            free(d_);                                                                                        \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

static inline bool prop_same_container(const char *a, const char *b)
{
    const char *p = strstr(a, "://"), *q = strstr(b, "://");
    return strcmp(p ? p + 3 : a, q ? q + 3 : b) == 0;
}

static inline bool prop_fenced_dead(const struct rss_member_input *m)
{
    return m->node && m->node[0] && !m->node_alive && m->node_dead;
}

/* Counts as running (rules 1, 8): a report of starting/primary/secondary or an action written ahead. */
static inline bool prop_live(const struct rss_member_input *m)
{
    const struct rss_observed *o = &m->observed;
    return m->pod_exists && m->has_observed && !prop_fenced_dead(m) &&
           (o->role == RSS_ROLE_STARTING || o->role == RSS_ROLE_PRIMARY || o->role == RSS_ROLE_SECONDARY ||
            (o->last.present && o->last.result == RSS_RESULT_PENDING));
}

/* Our epoch's action neither acknowledged nor voided by a newer generation (rule 8). */
static inline bool prop_unresolved(const struct rss_member_input *m, uint64_t epoch)
{
    const struct rss_desired *d = &m->desired;
    const struct rss_observed *o = &m->observed;
    if (!m->pod_exists || !m->has_desired || d->epoch != epoch || d->action == RSS_ACTION_NONE ||
        prop_fenced_dead(m))
        return false;
    bool acked = m->has_observed && o->last.present && rss_action_id_equal(o->last.id, d->id) &&
                 o->last.result != RSS_RESULT_PENDING;
    bool voided = m->has_observed && o->generation > d->generation;
    return !acked && !voided;
}

/* "Reported": a report of this epoch for the pod's current container, stopped, with a valid sequence,
 * from a live node, pod not being deleted (rule 3's "every member reported"), by the agent process that
 * node runs now (a report of the one it ran before is not current: rule 12). */
static inline bool prop_reported(const struct rss_member_input *m, uint64_t epoch)
{
    const struct rss_observed *o = &m->observed;
    return m->pod_exists && !m->deleting && m->node && m->node[0] && m->node_alive && m->has_observed &&
           !m->observed_superseded && o->lease_epoch == epoch &&
           (!m->container_id || prop_same_container(m->container_id, o->container_id)) &&
           o->role == RSS_ROLE_STOPPED && o->has_sequence && !o->sequence_error;
}

static inline const struct rss_member_input *prop_member(const struct rss_plan_input *in, unsigned ordinal)
{
    for (size_t i = 0; i < in->n_members; i++)
        if (in->members[i].ordinal == ordinal)
            return &in->members[i];
    return NULL;
}

/* The recovery pin of a previous status (rule 2), as documented: recovery.{seedOrdinal, seedSequence}. */
static inline bool prop_pin(const cJSON *prev, uint64_t *seq)
{
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(prev, "recovery");
    const char *s = rss_json_str(rec, "seedSequence");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(rec, "seedOrdinal");
    rss_error_t err = NULL;
    if (!s || !cJSON_IsNumber(o) || o->valuedouble < 0 || o->valuedouble > RSS_SPEC_ORDINAL_MAX)
        return false;
    if (rss_hook_parse_sequence(s, strlen(s), seq, &err) < 0) {
        rss_error_release(&err);
        return false;
    }
    return true;
}

/* A member record's recoveryPin, as documented: {"seedSequence":"<decimal>"}. */
static inline bool prop_record_pin(const char *doc, uint64_t *seq)
{
    cJSON *j = cJSON_Parse(doc);
    const char *s = rss_json_str(j, "seedSequence");
    rss_error_t err = NULL;
    bool ok = s && rss_hook_parse_sequence(s, strlen(s), seq, &err) == 0;
    rss_error_release(&err);
    cJSON_Delete(j);
    return ok;
}

/* The previous status records a replacement (nodeLossPolicy Replace) for this ordinal. */
static inline bool prop_replacement(const cJSON *prev, unsigned ordinal)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(prev, "memberStatus"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (cJSON_IsNumber(o) && o->valuedouble == (double)ordinal)
            return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "replacement"));
    }
    return false;
}

/* Rule 14: a member marked left out of an earlier recovery (its record's hold, its status leftOut, or for
 * a new pod the replacement record's leftOutSeedSequence) holds a diverged history: it never seeds and is
 * neither compared with the others nor waited for. */
static inline bool prop_diverged(const struct rss_plan_input *in, unsigned ordinal)
{
    const struct rss_member_input *m = prop_member(in, ordinal);
    if (m && m->hold_record)
        return true;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(in->prev_status, "memberStatus"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (!cJSON_IsNumber(o) || o->valuedouble != (double)ordinal)
            continue;
        uint64_t v;
        rss_error_t err = NULL;
        const char *s = rss_json_str(cJSON_GetObjectItemCaseSensitive(e, "leftOut"), "seedSequence");
        bool lo = s && rss_hook_parse_sequence(s, strlen(s), &v, &err) == 0;
        rss_error_release(&err);
        const char *uid = rss_json_str(e, "podUID");
        const char *r =
            rss_json_str(cJSON_GetObjectItemCaseSensitive(e, "replacement"), "leftOutSeedSequence");
        if (!lo && r && m && m->pod_exists && m->pod_uid && (!uid || strcmp(uid, m->pod_uid) != 0)) {
            lo = rss_hook_parse_sequence(r, strlen(r), &v, &err) == 0;
            rss_error_release(&err);
        }
        return lo;
    }
    return false;
}

static inline bool prop_is_start(enum rss_action a)
{
    return a == RSS_ACTION_SEED || a == RSS_ACTION_PRIMARY || a == RSS_ACTION_SECONDARY;
}

/* Model trace F1: a start of this epoch, neither acknowledged nor voided, on a node judged dead. Its agent
 * would run it when the node came back, so nothing may be seeded while it is on the pod. */
static inline bool prop_stale_start(const struct rss_member_input *m, uint64_t epoch)
{
    const struct rss_desired *d = &m->desired;
    const struct rss_observed *o = &m->observed;
    if (!m->pod_exists || !m->has_desired || d->epoch != epoch || !prop_is_start(d->action) ||
        !prop_fenced_dead(m))
        return false;
    bool acked = m->has_observed && o->last.present && rss_action_id_equal(o->last.id, d->id) &&
                 o->last.result != RSS_RESULT_PENDING;
    bool voided = m->has_observed && o->generation > d->generation;
    return !acked && !voided;
}

/* Model trace F4: the member's last report is the write-ahead of a start and its node was judged dead
 * (cut off while the hook ran). The hook may still run there until its timeout and the stop's after the
 * write-ahead, plus the dead-node margin; forever when the report has no time. */
static inline bool prop_dead_start(const struct rss_plan_input *in, const struct rss_member_input *m)
{
    const struct rss_observed *o = &m->observed;
    if (!m->pod_exists || !m->has_observed || !prop_fenced_dead(m) || !o->last.present ||
        o->last.result != RSS_RESULT_PENDING || !prop_is_start(o->last.action))
        return false;
    if (o->time_ms <= 0)
        return true;
    enum rss_hook_kind k = rss_hook_for_action(in->spec, o->last.action);
    /* dead_after_ms already holds the stop timeout (the per-RSS dead window). */
    int64_t until = o->time_ms + (int64_t)in->spec->hooks[k].timeout_ms + in->dead_after_ms;
    return in->now_ms < until;
}

/* The journal's proof, from the input (docs/planner.md): replication declared Synchronous; the previous
 * status journals the member with a last sequence and a witness confirmed before this plan that reported in
 * this one with a higher sequence. */
static inline bool prop_journal_behind(const struct rss_plan_input *in, unsigned ordinal)
{
    if (!in->spec->replication_sync)
        return false;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(in->prev_status, "journal"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        const char *ls = rss_json_str(e, "lastSequence");
        uint64_t last;
        rss_error_t err = NULL;
        if (!cJSON_IsNumber(o) || o->valuedouble != (double)ordinal || !ls ||
            rss_hook_parse_sequence(ls, strlen(ls), &last, &err) < 0) {
            rss_error_release(&err);
            continue;
        }
        const cJSON *w;
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "witnesses"))
        {
            const cJSON *wo = cJSON_GetObjectItemCaseSensitive(w, "ordinal");
            if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "confirmed")) || !cJSON_IsNumber(wo) ||
                wo->valuedouble == (double)ordinal)
                continue;
            const struct rss_member_input *y = prop_member(in, (unsigned)wo->valuedouble);
            if (y && prop_reported(y, in->epoch) && y->observed.sequence > last)
                return true;
        }
    }
    return false;
}

/* Rule 15: under spec.failover PromoteStandby a seed of a member that runs is a promotion, rule 1's one
 * exception (no seed while any member runs). */
static inline bool prop_promotion(const struct rss_plan_input *in, const struct rss_member_input *m)
{
    return in->spec->promote_standby && m && prop_live(m);
}

/* A report of this epoch for the pod's current container. */
static inline bool prop_current(const struct rss_member_input *m, uint64_t epoch)
{
    return m->pod_exists && m->has_observed && m->observed.lease_epoch == epoch &&
           (!m->container_id || prop_same_container(m->container_id, m->observed.container_id));
}

/* Rules 16 and 17: the member whose record's primary mark names the newest action (an unreadable mark or
 * action counts as the oldest; ties: the lowest ordinal), or NULL when no record carries one. *gone: the
 * incarnation the mark was written for has left the API (no pod, or a pod with another uid). */
static inline const struct rss_member_input *prop_newest_mark(const struct rss_plan_input *in, bool *gone)
{
    const struct rss_member_input *top = NULL;
    struct rss_action_id best = {0, 0};
    for (size_t i = 0; i < in->n_members; i++) {
        const struct rss_member_input *m = &in->members[i];
        if (!m->primary_record)
            continue;
        cJSON *j = cJSON_Parse(m->primary_record);
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "action"));
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "podUID"));
        struct rss_action_id id = {0, 0};
        rss_error_t err = NULL;
        if (!a || rss_action_id_parse(a, &id, &err) < 0)
            id = (struct rss_action_id){0, 0};
        rss_error_release(&err);
        bool same_pod = m->pod_exists && !(uid && m->pod_uid && strcmp(uid, m->pod_uid) != 0);
        /* A mark whose start never made the member a primary names none: not issued by this term and not
         * taken up (its last action older), or failed. */
        const struct rss_last_action *la = &m->observed.last;
        bool issued =
            m->has_desired && m->desired.epoch == in->epoch && rss_action_id_equal(m->desired.id, id);
        bool ran = m->has_observed && la->present &&
                   (la->id.epoch > id.epoch || (la->id.epoch == id.epoch && la->id.seq > id.seq) ||
                    (rss_action_id_equal(la->id, id) &&
                     (la->result == RSS_RESULT_OK || la->result == RSS_RESULT_PENDING)));
        if (same_pod && !issued && !ran) {
            cJSON_Delete(j);
            continue;
        }
        if (!top || id.epoch > best.epoch || (id.epoch == best.epoch && id.seq > best.seq)) {
            top = m;
            best = id;
            *gone = !m->pod_exists || (uid && m->pod_uid && strcmp(uid, m->pod_uid) != 0 && !prop_live(m) &&
                                       !prop_unresolved(m, in->epoch));
        }
        cJSON_Delete(j);
    }
    return top;
}

/* The target answered request req (of this epoch: a leader writes one only in a plan that saw the primary
 * lost; another epoch's may predate the loss), and so did S-k+1 of the S standbys (every ordinal below
 * replicas but the lost one, pod or not, and every other pod above it: PostgreSQL's ANY k counts a standby
 * being scaled away) with a position no higher than the target's. */
static inline bool prop_quorum(const struct rss_plan_input *in, const struct rss_member_input *target,
                               unsigned lost_ord, struct rss_action_id req)
{
    const uint64_t E = in->epoch;
    const struct rss_observed *t = &target->observed;
    if (!(prop_current(target, E) && rss_action_id_equal(t->position_for, req) && t->has_position &&
          (!in->spec->hooks[RSS_HOOK_DETACH].present || t->detached)))
        return false;
    size_t s_total = 0, n_below = 0;
    for (unsigned o = 0; o < (unsigned)in->spec->replicas; o++)
        s_total += o != lost_ord;
    for (size_t i = 0; i < in->n_members; i++) {
        const struct rss_member_input *m = &in->members[i];
        if (m->ordinal == lost_ord)
            continue;
        s_total += (int)m->ordinal >= in->spec->replicas && m->pod_exists;
        /* Rule 19: with a `detach` hook, a standby that did not detach may still follow the old primary. */
        n_below += ((int)m->ordinal < in->spec->replicas || m->pod_exists) && prop_current(m, E) &&
                   rss_action_id_equal(m->observed.position_for, req) && m->observed.has_position &&
                   (!in->spec->hooks[RSS_HOOK_DETACH].present || m->observed.detached) &&
                   m->observed.position <= t->position;
    }
    size_t k = (size_t)in->spec->sync_standbys;
    size_t need = s_total >= k ? s_total - k + 1 : s_total + 1;
    return n_below >= need;
}

/* Whether lost may be the lost primary of this promotion: fenced (on a node judged dead), reported stopped on
 * its live node with nothing in flight, its marked incarnation gone, or (spec.silentNodePolicy Promote)
 * on a silent node; and some position request of this
 * epoch was answered by the target and S-k+1 standbys. */
static inline bool prop_promotion_ok(const struct rss_plan_input *in, const struct rss_member_input *target,
                                     const struct rss_member_input *lost, bool gone)
{
    const uint64_t E = in->epoch;
    if (!lost || lost == target)
        return false;
    const struct rss_observed *lo_o = &lost->observed;
    /* Rule 19: with a `detach` hook only detached answers count (prop_quorum()), and then the old primary
     * acknowledges nothing more whatever it does: under spec.silentNodePolicy Promote one on a silent node
     * may be replaced. */
    bool silent = in->spec->silent_promote && in->spec->hooks[RSS_HOOK_DETACH].present && lost->node &&
                  lost->node[0] && !lost->node_alive && !lost->node_dead;
    bool fenced =
        gone || prop_fenced_dead(lost) || silent ||
        (prop_current(lost, E) && lost->node_alive && lo_o->role == RSS_ROLE_STOPPED &&
         !(lo_o->last.present && lo_o->last.result == RSS_RESULT_PENDING) && !prop_unresolved(lost, E));
    if (!fenced)
        return false;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(in->prev_status, "failover");
    struct rss_action_id req;
    rss_error_t err = NULL;
    const char *rs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "request"));
    bool ok = rs && rss_action_id_parse(rs, &req, &err) == 0 && req.epoch == E &&
              prop_quorum(in, target, lost->ordinal, req);
    rss_error_release(&err);
    for (size_t i = 0; i < in->n_members && !ok; i++) {
        const struct rss_member_input *m = &in->members[i];
        req = m->desired.position_request;
        ok = m->pod_exists && m->has_desired && req.epoch == E && req.seq &&
             prop_quorum(in, target, lost->ordinal, req);
    }
    return ok;
}

/* Rule 15's conditions on a promotion of target. The lost primary is the newest primary mark's member (rule
 * 16), or, with no mark anywhere (an RSS from before them), one the previous status or the reports say was
 * primary: the status's failover record, a memberStatus role, an observed role. The promoted answer must be
 * the highest of S-k+1 answers to one request of this epoch: an acknowledged commit is on k standbys, so on
 * one of any S-k+1, and the log is linear. Answers above it from members the planner may not count (stopped
 * since, an action in flight) do not make it unsafe when S-k+1 others are below it. */
static inline void prop_check_promotion(const struct rss_plan_input *in, const struct rss_plan *plan,
                                        const struct rss_member_input *target)
{
    bool gone = false;
    const struct rss_member_input *lost = prop_newest_mark(in, &gone);
    bool ok = false;
    if (lost) {
        ok = prop_promotion_ok(in, target, lost, gone);
    } else {
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(in->prev_status, "failover");
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(rec, "lost");
        if (cJSON_IsNumber(lo) && lo->valuedouble >= 0 && lo->valuedouble <= RSS_SPEC_ORDINAL_MAX)
            ok = prop_promotion_ok(in, target, prop_member(in, (unsigned)lo->valuedouble), false);
        const cJSON *ms;
        cJSON_ArrayForEach(ms, cJSON_GetObjectItemCaseSensitive(in->prev_status, "memberStatus"))
        {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(ms, "ordinal");
            const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ms, "role"));
            if (!ok && cJSON_IsNumber(o) && o->valuedouble >= 0 && o->valuedouble <= RSS_SPEC_ORDINAL_MAX &&
                role && !strcmp(role, "primary"))
                ok = prop_promotion_ok(in, target, prop_member(in, (unsigned)o->valuedouble), false);
        }
        for (size_t i = 0; i < in->n_members && !ok; i++)
            if (in->members[i].pod_exists && in->members[i].has_observed &&
                in->members[i].observed.role == RSS_ROLE_PRIMARY)
                ok = prop_promotion_ok(in, target, &in->members[i], false);
    }
    RULE("15 (a promotion only of the highest of S-k+1 answers to a request of this epoch, with the lost "
         "primary fenced, stopped, its marked incarnation gone, or silent with detached answers)",
         ok);
}

/* check_seq_rule: false when a member's failure history (from prev_status) may exclude it from seeding
 * under minimumMembers, which the input alone cannot tell. */
static inline void prop_check_plan(const struct rss_plan_input *in, const struct rss_plan *plan,
                                   bool check_seq_rule)
{
    const struct rss_spec *spec = in->spec;
    const uint64_t E = in->epoch;

    /* Highest action id already used in our epoch: new ids must be above it. */
    uint64_t used = 0;
    const cJSON *las = cJSON_GetObjectItemCaseSensitive(in->prev_status, "lastActionSeq");
    if (cJSON_IsNumber(las) && las->valuedouble >= 0 && las->valuedouble <= 9007199254740992.0)
        used = (uint64_t)las->valuedouble;
    bool fence_needed = false, claims = false;
    for (size_t i = 0; i < in->n_members; i++) {
        const struct rss_member_input *m = &in->members[i];
        if (!m->pod_exists)
            continue;
        if (m->has_desired && m->desired.id.epoch == E && m->desired.id.seq > used)
            used = m->desired.id.seq;
        if (m->has_observed && m->observed.last.present && m->observed.last.id.epoch == E &&
            m->observed.last.id.seq > used)
            used = m->observed.last.id.seq;
        fence_needed |= !(m->has_desired && m->desired.epoch == E);
        claims |=
            (m->has_desired && m->desired.epoch > E) || (m->has_observed && m->observed.lease_epoch > E);
    }
    RULE("4 (a higher epoch on a pod is reported)", plan->epoch_claims == claims);

    if (spec->paused) {
        RULE("paused: status only", plan->n_patches == 0 && plan->n_deletes == 0 && plan->set_replicas == -1);
        return;
    }
    RULE("9 (fence before deciding)", plan->fencing == fence_needed);
    bool stale = false;
    for (size_t i = 0; i < in->n_members; i++)
        stale |= prop_stale_start(&in->members[i], E);
    RULE("8 (a start left on a dead node is retracted before anything else: trace F1)",
         plan->retracting == (!fence_needed && stale));

    const struct rss_plan_patch *seed = NULL;
    size_t n_seeds = 0, n_starts = 0;
    for (size_t i = 0; i < plan->n_patches; i++) {
        const struct rss_plan_patch *p = &plan->patches[i];
        const struct rss_member_input *m = prop_member(in, p->ordinal);
        RULE("no write to a pod that does not exist", m && m->pod_exists);
        RULE("every pod write is a CAS on the LISTed resourceVersion",
             (!p->resource_version && !m->resource_version) ||
                 (p->resource_version && m->resource_version &&
                  !strcmp(p->resource_version, m->resource_version)));
        if (!p->set_desired)
            continue;
        const struct rss_desired *d = &p->desired;
        RULE("4 (every desired carries our epoch)", d->epoch == E);
        if (plan->fencing || plan->retracting) {
            RULE("9 (a fencing or retracting plan writes only none)", d->action == RSS_ACTION_NONE);
            continue;
        }
        if (d->action == RSS_ACTION_NONE)
            continue;
        /* The member's own desired written again to carry (or clear) a position request (rules 15, 19):
         * the same id, which its agent ran or voided already; it issues nothing. */
        if (m->has_desired && rss_action_id_equal(d->id, m->desired.id) && d->action == m->desired.action &&
            d->generation == m->desired.generation)
            continue;
        RULE("7 (an action targets the member's reported generation)",
             m->has_observed && d->generation == m->observed.generation);
        RULE("action ids are new",
             d->id.epoch == E && d->id.seq > used && d->id.seq <= plan->last_action_seq);
        for (size_t j = 0; j < i; j++)
            RULE("action ids are unique", !plan->patches[j].set_desired ||
                                              plan->patches[j].desired.action == RSS_ACTION_NONE ||
                                              !rss_action_id_equal(plan->patches[j].desired.id, d->id));
        if (d->action == RSS_ACTION_SEED && prop_promotion(in, m)) {
            n_starts++;
            const struct rss_observed *o = &m->observed;
            RULE("15 (a promotion targets a standby running on its current container, on a live node)",
                 prop_current(m, E) && o->role == RSS_ROLE_SECONDARY && !m->deleting && m->node &&
                     m->node[0] && m->node_alive &&
                     !(o->last.present && o->last.result == RSS_RESULT_PENDING));
            RULE("15 (a promotion only for an ordinal < replicas)", (int)p->ordinal < spec->replicas);
            RULE("1 (no promotion of a member whose action is unresolved)", !prop_unresolved(m, E));
        } else if (d->action == RSS_ACTION_SECONDARY && spec->promote_standby && prop_current(m, E) &&
                   m->observed.role == RSS_ROLE_SECONDARY) {
            /* Rule 15 step 5, a repoint: a running standby follows the promoted primary without a stop. */
            const struct rss_observed *o = &m->observed;
            RULE("15 (a repoint of a standby on a live node, nothing in flight)",
                 !m->deleting && m->node && m->node[0] && m->node_alive && !prop_unresolved(m, E) &&
                     !(o->last.present && o->last.result == RSS_RESULT_PENDING));
            _cleanup_free_ char *want = NULL;
            const struct rss_member_input *np = NULL;
            bool gone = false;
            np = prop_newest_mark(in, &gone);
            if (np)
                want = rss_spec_peer_dns(spec, np->ordinal);
            bool repoint = np && np != m && !gone && np->primary_record &&
                           strstr(np->primary_record, "\"promotedOver\"") && prop_current(np, E) &&
                           np->observed.role == RSS_ROLE_PRIMARY && np->node_alive && d->n_peers == 1 &&
                           !strcmp(d->peers[0], want);
            /* Rule 19, a re-attach: a standby that ran the detach hook for a failover's request (its answer
             * need not say detached: a later answer's failed detach does not undo an earlier one) and has
             * not started since follows the primary that runs: the newest mark's member, or (no mark) one
             * running as primary. */
            const struct rss_last_action *la = &o->last;
            bool started = la->present && prop_is_start(la->action) && la->result == RSS_RESULT_OK &&
                           (la->id.epoch > o->position_for.epoch ||
                            (la->id.epoch == o->position_for.epoch && la->id.seq > o->position_for.seq));
            bool reattach = false;
            for (size_t k = 0;
                 k < in->n_members && o->position_for.seq && spec->hooks[RSS_HOOK_DETACH].present && !started;
                 k++) {
                const struct rss_member_input *pp = &in->members[k];
                if (pp == m || (np && pp != np) || !pp->pod_exists || !prop_current(pp, E) ||
                    pp->observed.role != RSS_ROLE_PRIMARY || !pp->node_alive || d->n_peers != 1)
                    continue;
                _cleanup_free_ char *dns = rss_spec_peer_dns(spec, pp->ordinal);
                reattach |= !strcmp(d->peers[0], dns);
            }
            RULE("15 (a repoint follows the newest mark's member, promoted, running as primary on a live "
                 "node), or 19 (a re-attach of a detached standby follows the primary that runs)",
                 repoint || reattach);
        } else if (prop_is_start(d->action)) {
            n_starts++;
            const struct rss_observed *o = &m->observed;
            RULE("8 (start only a member that reported stopped for its current container, on a live node)",
                 m->has_observed && o->role == RSS_ROLE_STOPPED && o->lease_epoch == E && !m->deleting &&
                     m->node && m->node[0] && m->node_alive &&
                     (!m->container_id || prop_same_container(m->container_id, o->container_id)) &&
                     !(o->last.present && o->last.result == RSS_RESULT_PENDING));
            RULE("no action for an ordinal >= replicas but seed or stop",
                 d->action == RSS_ACTION_SEED || (int)p->ordinal < spec->replicas);
            RULE("1 (no start of a member whose action is unresolved)", !prop_unresolved(m, E));
        }
        if (d->action == RSS_ACTION_SEED) {
            n_seeds++;
            seed = p;
        }
    }
    size_t n_forced = 0;
    for (size_t i = 0; i < plan->n_deletes; i++) {
        const struct rss_plan_delete *d = &plan->deletes[i];
        const struct rss_member_input *m = prop_member(in, d->ordinal);
        RULE("a delete names an existing pod by uid",
             m && m->pod_exists && !plan->fencing && !plan->retracting &&
                 ((!m->pod_uid && !d->uid) || (m->pod_uid && d->uid && !strcmp(m->pod_uid, d->uid))));
        if (d->force) {
            n_forced++;
            RULE("node loss: a forced delete only under Replace, of a member on a dead node, tainted "
                 "out-of-service or on a network volume",
                 spec->node_loss_replace && prop_fenced_dead(m) && (int)m->ordinal < spec->replicas &&
                     (m->node_out_of_service || m->volume == RSS_VOLUME_NETWORK));
        }
        RULE("node loss: claims deleted only for a node-local volume",
             d->n_claims == 0 || (d->force && m->volume == RSS_VOLUME_NODE_LOCAL));
        /* Deleting a pod kills whatever runs in it: only stopped, failed or unknown members (a repair, a
         * rolling update after `stop`), or one on a node judged dead (node loss). */
        RULE("no delete of a member that runs or starts", !prop_live(m));
    }
    RULE("1 (at most one seed)", n_seeds <= 1);
    if (!seed)
        return;
    RULE("node loss: never a replacement in a plan that seeds (it needs a running primary)", n_forced == 0);
    RULE("1 (a seed is never next to another start)", n_starts == 1);
    const struct rss_member_input *s = prop_member(in, seed->ordinal);
    bool promotion = prop_promotion(in, s);
    for (size_t i = 0; i < in->n_members; i++) {
        const struct rss_member_input *m = &in->members[i];
        if (!promotion)
            RULE("1 (no seed while any member runs or starts)", !prop_live(m));
        else if (m != s)
            RULE("15 (a promotion is rule 1's only exception: next to running standbys, nothing else runs or "
                 "starts)",
                 !prop_live(m) ||
                     (m->observed.role == RSS_ROLE_SECONDARY &&
                      !(m->observed.last.present && m->observed.last.result == RSS_RESULT_PENDING)));
        RULE("8 (no seed while any action is unresolved)", !prop_unresolved(&in->members[i], E));
        RULE("8 (no seed while a dead node holds an unacknowledged start: trace F1)",
             !prop_stale_start(&in->members[i], E));
        RULE("1 (no seed while a start written ahead may still run on a dead node: trace F4)",
             !prop_dead_start(in, &in->members[i]));
    }
    if (promotion) { /* rules 2 and 3 judge stopped copies; rule 15 judges a promotion */
        prop_check_promotion(in, plan, s);
        return;
    }
    if (in->force_seed) /* the admin's explicit exception to rules 2 and 3 */
        return;
    RULE("node loss: a replacement that has not run never seeds",
         !prop_replacement(in->prev_status, seed->ordinal));
    RULE("14 (a member left out of an earlier recovery never seeds)", !prop_diverged(in, seed->ordinal));
    RULE("2 (the seed reported a sequence)", prop_reported(s, E));
    RULE("seed has no peers", seed->desired.n_peers == 0);
    RULE("no seed before the StatefulSet exists", in->statefulset_replicas > 0);
    int w = spec->replicas;
    size_t reported = 0;
    for (size_t i = 0; i < in->n_members; i++) {
        const struct rss_member_input *m = &in->members[i];
        if (m->pod_exists && (int)m->ordinal >= w)
            w = (int)m->ordinal + 1;
        if (!prop_reported(m, E) || prop_diverged(in, m->ordinal))
            continue;
        reported++;
        if (check_seq_rule || spec->min_members == 0)
            RULE("2 (the seed has the highest sequence among members that reported)",
                 m->observed.sequence <= s->observed.sequence);
    }
    RULE("no seed of an ordinal above every member", (int)seed->ordinal < w);
    /* Every member accounted for: reported, proven behind by the journal, or held (rule 14: a held
     * member lacks the cluster's later history, so it is never what the seed waits for). minimumMembers
     * is the opt-in to seed with fewer than that, never a requirement on top of it. */
    bool all_accounted = true;
    for (int o = 0; o < w; o++) {
        const struct rss_member_input *m = prop_member(in, (unsigned)o);
        if (!((m && prop_reported(m, E)) || prop_journal_behind(in, (unsigned)o) ||
              prop_diverged(in, (unsigned)o)))
            all_accounted = false;
    }
    if (spec->min_members == 0)
        RULE("3 (no seed before every member reported, or proven behind by the journal)", all_accounted);
    else
        RULE("3 (minimumMembers reported before a seed, unless every member is accounted for)",
             all_accounted || reported >= (size_t)spec->min_members);
    uint64_t pin;
    if (prop_pin(in->prev_status, &pin))
        RULE("2 (no automatic fallback below the pinned seed sequence)", s->observed.sequence >= pin);
    /* The pin in a member's record (written with the seed's desired; the status may have lost it). */
    for (size_t i = 0; i < in->n_members; i++) {
        const char *doc = in->members[i].pin_record;
        if (!doc)
            continue;
        if (prop_record_pin(doc, &pin))
            RULE("2 (no automatic fallback below a record's pinned seed sequence)",
                 s->observed.sequence >= pin);
        else
            RULE("2 (no automatic seed while a record's pin is unreadable)", false);
    }
}

#endif
