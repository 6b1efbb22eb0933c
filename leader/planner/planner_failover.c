/* planner_failover.c -- rule 15: a lost single primary replaced by promoting the most advanced standby.
 *
 * Only under spec.failover: PromoteStandby with spec.primaries 1 (spec.c refuses anything else). Without
 * it, a lost primary makes the planner stop every secondary and recover from the highest sequence (row 8
 * of docs/planner.md): an outage, but one that never loses an acknowledged commit. This path must keep
 * that promise while the standbys run, so each step is the condition under which it holds:
 *
 *   1. The old primary is lost as rule 12 understands it: observed stopped under this epoch on a live
 *      node, or on a node judged dead (its self-fence stopped it within the dead window). A failed one is
 *      stopped first (repairs()); nothing is promoted while it may still accept writes.
 *   2. Positions are read after that: the leader writes a position request (a fresh action id) on every
 *      running standby's record only in a plan that saw the primary lost, and an agent answers with the
 *      `sequence` hook run after it saw the request. A position read earlier could miss commits the
 *      primary acknowledged later.
 *   3. Promote only with answers from S-k+1 of the S standbys (k = spec.synchronousStandbys, the
 *      application's `ANY k`). Every acknowledged commit is on k standbys, so on at least one of any
 *      S-k+1; the log is linear, so the highest answer holds every acknowledged commit. Fewer answers:
 *      back to the lights-out path, with a Warning that says why.
 *   4. The old primary and every standby that did not answer are marked left out (rule 14) with no
 *      sequence bound: they join the new primary (rewinding what was never acknowledged), but none of
 *      them ever seeds over the new history in a later lights-out before it rejoined.
 *   5. The other running standbys are repointed (`secondary` with the new primary as peer) one at a time
 *      once it runs; they are never stopped by this path.
 *
 * The record in status.failover carries the lost primary, the request and the repoint list from plan to
 * plan; any plan outside a running cluster (a lights-out recovery) drops it. */
#include <stdlib.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "planner_internal.h"

__attribute__((format(printf, 5, 6))) static void fo_event(struct planner *c, enum rss_event_type type,
                                                           const char *reason, const struct planner_member *m,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    planner_eventv(c, type, reason, m, fmt, ap);
    va_end(ap);
}

static bool id_after(struct rss_action_id a, struct rss_action_id b)
{
    return a.epoch > b.epoch || (a.epoch == b.epoch && a.seq > b.seq);
}

static bool rec_id(const cJSON *rec, const char *key, struct rss_action_id *out)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, key));
    _cleanup_error_ rss_error_t err = NULL;
    return s && rss_action_id_parse(s, out, &err) == 0;
}

static struct planner_member *by_ordinal(struct planner *c, unsigned ordinal)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].ordinal == ordinal)
            return &c->m[i];
    return NULL;
}

void planner_failover_load(struct planner *c)
{
    if (c->new_failover || !c->spec->promote_standby || !c->in->prev_status)
        return;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "failover");
    if (cJSON_IsObject(rec))
        c->new_failover = cJSON_Duplicate(rec, true);
}

/* The member that was primary and is now lost (step 1), or NULL. The record names it once seen: the next
 * status no longer says it was primary. */
static struct planner_member *lost_primary(struct planner *c)
{
    if (c->new_failover && !cJSON_GetObjectItemCaseSensitive(c->new_failover, "promoted")) {
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(c->new_failover, "lost");
        if (cJSON_IsNumber(lo) && lo->valuedouble >= 0)
            return by_ordinal(c, (unsigned)lo->valuedouble);
    }
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists)
            continue;
        if ((m->prev_known && m->prev_role == RSS_ROLE_PRIMARY) || (m->obs && m->role == RSS_ROLE_PRIMARY))
            return m;
    }
    return NULL;
}

static bool standby_runs(const struct planner_member *m)
{
    return m->running && m->role == RSS_ROLE_SECONDARY && m->node_alive && !m->deleting && !m->unresolved;
}

/* Its answer to request req: true with the position, or false (no answer yet, or no position). */
static bool answered(const struct planner_member *m, struct rss_action_id req, bool *has_pos, uint64_t *pos)
{
    const struct rss_observed *o = &m->in->observed;
    if (!m->current || !rss_action_id_equal(o->position_for, req))
        return false;
    *has_pos = o->has_position;
    *pos = o->position;
    return true;
}

static bool fallback(struct planner *c, const struct planner_member *lost, const char *why)
{
    fo_event(
        c, RSS_EVENT_WARNING, "FailoverFallback", lost,
        "%s%s is lost; spec.failover PromoteStandby cannot promote safely: %s; stopping the standbys for a "
        "lights-out recovery from the highest sequence",
        lost ? lost->pod : "the primary", lost ? " was primary and" : "", why);
    cJSON_Delete(c->new_failover);
    c->new_failover = NULL;
    return false;
}

bool planner_failover_promote(struct planner *c, char *msg, size_t size)
{
    const struct rss_spec *sp = c->spec;
    if (!sp->promote_standby || sp->primaries != 1)
        return false;
    struct planner_member *lost = lost_primary(c);
    if (!lost)
        return fallback(c, NULL, "no member is known to have been the primary");
    if (!lost->exists)
        return fallback(c, lost, "its pod is gone");
    /* The next status no longer says it was primary: the record keeps it while it is being stopped. */
    const cJSON *lo = c->new_failover ? cJSON_GetObjectItemCaseSensitive(c->new_failover, "lost") : NULL;
    if (!cJSON_IsNumber(lo) || lo->valuedouble != (double)lost->ordinal) {
        cJSON_Delete(c->new_failover);
        c->new_failover = cJSON_CreateObject();
        cJSON_AddNumberToObject(c->new_failover, "lost", lost->ordinal);
    }
    bool stopped = lost->current && lost->node_alive && lost->role == RSS_ROLE_STOPPED && !lost->unresolved &&
                   !lost->pending;
    if (!lost->fenced_dead && !stopped) {
        /* Failed (repairs() stops it), its stop in flight, or its report after the stop not in yet: wait.
         * A silent node never gets here (rule 12 waits first); a dead one is fenced. */
        snprintf(msg, size,
                 "%s was primary and is %s: waiting for it to be observed stopped before promoting a standby",
                 lost->pod, lost->decided ? "being stopped" : rss_role_name(lost->role));
        return true;
    }

    size_t s_total = 0, n_run = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == lost || (int)m->ordinal >= c->target)
            continue;
        s_total++;
        n_run += m->exists && standby_runs(m);
    }
    size_t k = (size_t)sp->sync_standbys;
    size_t need = s_total >= k ? s_total - k + 1 : s_total + 1;
    char why[256];
    if (n_run < need) {
        snprintf(why, sizeof(why),
                 "%zu of %zu standbys run, and a promotion needs positions from %zu "
                 "(spec.synchronousStandbys %zu: "
                 "an acknowledged commit may be only on the others)",
                 n_run, s_total, need, k);
        return fallback(c, lost, why);
    }

    struct rss_action_id req = {0, 0};
    bool same = rec_id(c->new_failover, "request", &req) && req.epoch == c->in->epoch;
    if (!same) {
        /* Step 2: ask now, after the loss was seen. */
        req = (struct rss_action_id){c->in->epoch, ++c->seq};
        char id[48], when[RSS_TIME_LEN];
        rss_action_id_format(req, id, sizeof(id));
        cJSON_Delete(c->new_failover);
        c->new_failover = cJSON_CreateObject();
        cJSON_AddNumberToObject(c->new_failover, "lost", lost->ordinal);
        cJSON_AddStringToObject(c->new_failover, "request", id);
        cJSON_AddStringToObject(c->new_failover, "since", rss_time_ms(when, c->in->now_ms));
        for (size_t i = 0; i < c->n; i++) {
            struct planner_member *m = &c->m[i];
            if (m == lost || !m->exists || !standby_runs(m) || m->decided || (int)m->ordinal >= c->target)
                continue;
            struct rss_plan_patch *p = planner_patch_for(c, m);
            p->set_desired = true;
            rss_recordcodec_desired_copy(&p->desired, &m->in->desired);
            p->desired.position_request = req;
        }
        fo_event(c, RSS_EVENT_NORMAL, "FailoverStarted", lost,
                 "%s was primary and is %s; asking the %zu running standbys for their positions (request %s)",
                 lost->pod, lost->fenced_dead ? "on a node judged dead" : "stopped", n_run, id);
        snprintf(msg, size, "%s lost: asking the running standbys for their positions", lost->pod);
        return true;
    }

    struct planner_member *best = NULL;
    uint64_t best_pos = 0;
    size_t n_ans = 0, n_pending = 0;
    struct rss_strbuf waiting = {0}, list = {0};
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == lost || !m->exists || (int)m->ordinal >= c->target || !standby_runs(m))
            continue;
        bool has = false;
        uint64_t pos = 0;
        if (!answered(m, req, &has, &pos)) {
            n_pending++;
            rss_strbuf_item(&waiting, "%s", m->pod);
            continue;
        }
        if (!has)
            continue;
        n_ans++;
        rss_strbuf_item(&list, "%s %" PRIu64, m->pod, pos);
        if (!best || pos > best_pos) { /* members are in ordinal order: a tie keeps the lowest */
            best = m;
            best_pos = pos;
        }
    }
    if (n_ans < need) {
        const char *since_s =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->new_failover, "since"));
        int64_t since = 0;
        _cleanup_error_ rss_error_t err = NULL;
        if (!since_s || rss_time_parse_ms(since_s, &since, &err) < 0)
            since = c->in->now_ms;
        int64_t limit = (int64_t)sp->hooks[RSS_HOOK_SEQUENCE].timeout_ms +
                        (int64_t)sp->reconcile_interval_ms + c->in->dead_after_ms;
        if (n_ans + n_pending >= need && c->in->now_ms - since < limit) {
            snprintf(msg, size, "%s lost: waiting for the positions of %s", lost->pod,
                     rss_strbuf_str(&waiting));
            free(waiting.s);
            free(list.s);
            return true;
        }
        snprintf(why, sizeof(why), "%zu of the %zu positions it needs came (%s)%s", n_ans, need,
                 rss_strbuf_str(&list), n_ans + n_pending >= need ? " before the deadline" : "");
        free(waiting.s);
        free(list.s);
        return fallback(c, lost, why);
    }

    /* Step 3: promote. No peers: the seed of a running standby is a promotion. */
    _cleanup_free_ char *reason =
        rss_xasprintf("failover: promote the most advanced standby (position %" PRIu64 "; positions %s; "
                      "%zu needed of %zu standbys, synchronousStandbys %zu)",
                      best_pos, rss_strbuf_str(&list), need, s_total, k);
    planner_issue(c, best, RSS_ACTION_SEED, NULL, 0, reason);
    fo_event(c, RSS_EVENT_NORMAL, "Promoting", best, "%s replaces %s: %s", best->pod, lost->pod, reason);
    snprintf(msg, size, "promoting %s in place of %s", best->pod, lost->pod);
    char pbuf[24];
    fmt_seq(best_pos, pbuf, sizeof(pbuf));
    cJSON_AddNumberToObject(c->new_failover, "promoted", best->ordinal);
    cJSON_AddStringToObject(c->new_failover, "position", pbuf);
    cJSON *rep = cJSON_AddArrayToObject(c->new_failover, "repoint");
    /* Step 4: none of the others may seed over the new history before it rejoined. */
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == best || !m->exists)
            continue;
        /* Every running standby follows the new primary, answered or not (a running one's mark would
         * drop at once: planner_hold_load). */
        if (m != lost && standby_runs(m)) {
            cJSON_AddItemToArray(rep, cJSON_CreateNumber(m->ordinal));
            continue;
        }
        planner_hold_mark(m, UINT64_MAX);
    }
    free(list.s);
    free(waiting.s);
    return true;
}

bool planner_failover_repoint(struct planner *c)
{
    if (!c->new_failover)
        return false;
    struct rss_action_id req;
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(c->new_failover, "promoted");
    cJSON *rep = cJSON_GetObjectItemCaseSensitive(c->new_failover, "repoint");
    if (!cJSON_IsNumber(pr) || !cJSON_IsArray(rep) || !rec_id(c->new_failover, "request", &req))
        return false;
    struct planner_member *np = by_ordinal(c, (unsigned)pr->valuedouble);
    if (!np || !np->primary_up)
        return false;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].start_inflight)
            return false;
    bool issued = false;
    cJSON *it = rep->child;
    while (it) {
        cJSON *next = it->next;
        struct planner_member *m = cJSON_IsNumber(it) ? by_ordinal(c, (unsigned)it->valuedouble) : NULL;
        const struct rss_last_action *la = m && m->exists && m->obs ? &m->in->observed.last : NULL;
        bool done = la && la->present && la->action == RSS_ACTION_SECONDARY && la->result == RSS_RESULT_OK &&
                    id_after(la->id, req);
        /* Repointed, or no longer a running standby (a stopped one joins the new primary like any other). */
        if (!m || done || !m->exists || !standby_runs(m)) {
            cJSON_DetachItemViaPointer(rep, it);
            cJSON_Delete(it);
        } else if (!issued && m->actionable && !m->decided) {
            char **peers = rss_xcalloc(1, sizeof(char *));
            peers[0] = rss_spec_peer_dns(c->spec, np->ordinal);
            _cleanup_free_ char *why =
                rss_xasprintf("failover: follow the promoted primary %s without a stop", np->pod);
            planner_issue(c, m, RSS_ACTION_SECONDARY, peers, 1, why);
            fo_event(c, RSS_EVENT_NORMAL, "Repointing", m, "%s: %s", m->pod, why);
            free(peers[0]);
            free(peers);
            issued = true;
        }
        it = next;
    }
    if (!cJSON_GetArraySize(rep)) {
        cJSON_Delete(c->new_failover);
        c->new_failover = NULL;
    }
    return issued;
}
