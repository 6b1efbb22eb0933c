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
 * What a later plan must know lives in the member records (rule 16), never only in the status: which
 * member is the primary is the newest primary mark (planner_lineage.c), so a new term's fencing plan, a
 * paused plan or a lost status write cannot make rssd forget whom it replaces; the request is on the
 * standbys' records (desired.positionRequest; a new term asks again under its epoch); the promotion is the
 * promoted member's mark, written in the same CAS as its `seed`, and the standbys still to repoint are the
 * running ones whose last start predates that mark. status.failover only reports it (lost, request, since,
 * promoted, position), and keeps the answers' deadline. A primary whose pod was deleted (a drain, an
 * eviction) is lost once that incarnation left the API: its kubelet confirmed its containers stopped. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/switchover.h"
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

/* The member that was primary and is now lost (step 1), or NULL: the newest primary mark (rule 16). An RSS
 * from before the marks: the status's record of a failover under way, or the last status's roles. */
static struct planner_member *lost_primary(struct planner *c)
{
    if (c->top)
        return c->top;
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

bool planner_standby_runs(const struct planner_member *m)
{
    return m->running && m->role == RSS_ROLE_SECONDARY && m->node_alive && !m->deleting && !m->unresolved;
}

/* It follows the lost primary's history: started (joined, repointed) after the lost one was made primary.
 * A standby still following an earlier primary (a repoint not done yet when this one was lost too) holds
 * positions of another history (another timeline): its answer proves nothing about the lost one's commits.
 * Without a mark (an RSS from before them) every running standby counts, as before. */
bool planner_follows(const struct planner_member *m, const struct planner_member *lost)
{
    return !lost->mark || planner_lineage_started_after(m, lost->mark_at);
}

size_t planner_failover_need(const struct planner *c, const struct planner_member *lost, size_t *s_total,
                             size_t *n_run)
{
    /* S: every standby the application's `ANY k` may have counted: each member below spec.replicas, and
     * each pod above it still there (a scale-down under way: it is connected until it stops). */
    *s_total = *n_run = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (m == lost || (!m->exists && (int)m->ordinal >= c->target))
            continue;
        (*s_total)++;
        *n_run += m->exists && planner_standby_runs(m) && planner_follows(m, lost);
    }
    return rss_switchover_need(*s_total, c->spec->sync_standbys);
}

/* Its answer to request req: true once it answered, *has_pos with a position that counts. With a
 * `detach` hook in the spec only a detached standby's position counts (rule 19): one that still follows
 * the old primary may acknowledge its commits if it comes back (model finding L3); *undetached says so. */
static bool answered(const struct planner *c, const struct planner_member *m, struct rss_action_id req,
                     bool *has_pos, bool *undetached, uint64_t *pos)
{
    const struct rss_observed *o = &m->in->observed;
    /* A start after the request (a re-attach, planner_failover_reattach()) made the answer old news: the
     * member follows a primary again, and the report keeps the position it gave before. */
    if (!m->current || !rss_action_id_equal(o->position_for, req) || planner_lineage_started_after(m, req))
        return false;
    *undetached = o->has_position && c->spec->hooks[RSS_HOOK_DETACH].present && !o->detached;
    *has_pos = o->has_position && !*undetached;
    *pos = o->position;
    return true;
}

/* A request is still the one to wait for while each running standby that follows lost carries it on its
 * record or answered it, and none started since: a re-attach (planner_failover_reattach()) retired it,
 * or its record never got it (its node was silent then). Otherwise ask again: an answer that will never
 * come would make the failover fall back, and one given before a re-attach proves nothing now. */
static bool request_live(const struct planner *c, const struct planner_member *lost, struct rss_action_id req)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        if (m == lost || !m->exists || !planner_standby_runs(m) || !planner_follows(m, lost))
            continue;
        bool asked = m->in->has_desired && rss_action_id_equal(m->in->desired.position_request, req);
        bool told = m->current && rss_action_id_equal(m->in->observed.position_for, req);
        if (planner_lineage_started_after(m, req) || (!asked && !told))
            return false;
    }
    return true;
}

/* status.failover for a request req about lost, asked now (or, its status write lost, found now). */
static void fo_record(struct planner *c, const struct planner_member *lost, struct rss_action_id req)
{
    char id[48], when[RSS_TIME_LEN];
    rss_action_id_format(req, id, sizeof(id));
    /* A switchover's request stays with the failover it started (the same lost primary). */
    const cJSON *lo = c->new_failover ? cJSON_GetObjectItemCaseSensitive(c->new_failover, "lost") : NULL;
    cJSON *sw = cJSON_IsNumber(lo) && lo->valuedouble == (double)lost->ordinal
                    ? cJSON_DetachItemFromObjectCaseSensitive(c->new_failover, "switchover")
                    : NULL;
    cJSON_Delete(c->new_failover);
    c->new_failover = cJSON_CreateObject();
    cJSON_AddNumberToObject(c->new_failover, "lost", lost->ordinal);
    if (sw)
        cJSON_AddItemToObject(c->new_failover, "switchover", sw);
    cJSON_AddStringToObject(c->new_failover, "request", id);
    cJSON_AddStringToObject(c->new_failover, "since", rss_time_ms(when, c->in->now_ms));
}

static bool fallback(struct planner *c, const struct planner_member *lost, const char *why)
{
    fo_event(
        c, RSS_EVENT_WARNING, "FailoverFallback", lost,
        "%s%s is lost; spec.failover PromoteStandby cannot promote safely: %s; falling back to a lights-out "
        "recovery from the highest sequence (the standbys are stopped once it can start)",
        lost ? lost->pod : "the primary", lost ? " was primary and" : "", why);
    if (lost && c->new_failover && cJSON_GetObjectItemCaseSensitive(c->new_failover, "switchover")) {
        char when[RSS_TIME_LEN];
        cJSON_Delete(c->new_sw_fallback);
        c->new_sw_fallback = cJSON_CreateObject();
        cJSON_AddStringToObject(c->new_sw_fallback, "from", lost->pod);
        cJSON_AddStringToObject(c->new_sw_fallback, "at", rss_time_ms(when, c->in->now_ms));
    }
    cJSON_Delete(c->new_failover);
    c->new_failover = NULL;
    return false;
}

bool planner_failover_early(const struct planner *c, const struct planner_member *lost)
{
    const struct rss_spec *sp = c->spec;
    return sp->silent_promote && sp->promote_standby && sp->primaries == 1 &&
           sp->hooks[RSS_HOOK_DETACH].present && lost && lost->exists && lost->node_silent;
}

bool planner_failover_promote(struct planner *c, char *msg, size_t size)
{
    const struct rss_spec *sp = c->spec;
    if (!sp->promote_standby || sp->primaries != 1)
        return false;
    struct planner_member *lost = lost_primary(c);
    if (!lost)
        return fallback(c, NULL, "no member is known to have been the primary");
    /* The incarnation it was made primary in has left the API (a drain, a deleted pod): its kubelet
     * confirmed its containers ended, so it takes no more writes. Without a mark nothing says so. The pod
     * made again must be quiet too: nothing started or issued there. */
    bool gone = lost->mark && lost->mark_gone && !lost->live && !lost->unresolved && !lost->pending;
    if (!lost->exists && !gone)
        return fallback(c, lost, "its pod is gone");
    /* The next status no longer says it was primary: the record keeps it while it is being stopped. */
    const cJSON *lo = c->new_failover ? cJSON_GetObjectItemCaseSensitive(c->new_failover, "lost") : NULL;
    if (!cJSON_IsNumber(lo) || lo->valuedouble != (double)lost->ordinal) {
        cJSON_Delete(c->new_failover);
        c->new_failover = cJSON_CreateObject();
        cJSON_AddNumberToObject(c->new_failover, "lost", lost->ordinal);
    }
    bool stopped = gone || (lost->current && lost->node_alive && lost->role == RSS_ROLE_STOPPED &&
                            !lost->unresolved && !lost->pending);
    /* Rule 19: its state does not matter once S-k+1 standbys detached (below), so under silentNodePolicy
     * Promote a primary on a silent node is replaced without waiting out the dead window. */
    bool early = planner_failover_early(c, lost);
    if (!lost->fenced_dead && !stopped && !early && lost->current && lost->actionable && !lost->decided &&
        lost->role == RSS_ROLE_SECONDARY) {
        /* Marked primary (the newest mark) yet a standby: its promotion failed, or a stop after it did, and
         * `status` says secondary (tests/sim/proto found the failover waiting here for good: repairs()
         * stops only what `status` calls failed). The hook may have got as far as taking writes, so it is
         * stopped like a primary (rule 17) and the failover goes on without it. */
        planner_issue(c, lost, RSS_ACTION_STOP, NULL, 0,
                      "rule 17: made primary (its mark), yet a standby: its promotion failed");
        fo_event(c, RSS_EVENT_WARNING, "PromotionFailed", lost,
                 "%s was made primary but runs as a standby (its promotion failed); stopping it before the "
                 "failover goes on",
                 lost->pod);
        snprintf(msg, size, "%s: its promotion failed; stopping it before the failover goes on", lost->pod);
        return true;
    }
    if (!lost->fenced_dead && !stopped && !early) {
        /* Failed (repairs() stops it), its stop in flight, or its report after the stop not in yet: wait.
         * A silent node gets here only under silentNodePolicy Promote (rule 12 waits first); a dead one is
         * fenced. */
        snprintf(msg, size,
                 "%s was primary and is %s: waiting for it to be observed stopped before promoting a standby",
                 lost->pod, lost->decided ? "being stopped" : rss_role_name(lost->role));
        return true;
    }

    /* Rule 1's only exception is a promotion next to running standbys: nothing else may run or start, and
     * no action of this term is unresolved (rule 8). */
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        /* A standby on a silent node (not asked, not counted) may keep following the old primary. One whose
         * report only predates this term is waited for: it re-probes in moments, and counting it out made
         * a new term fall back and stop the other standby (model finding L2). */
        bool standby = m->role == RSS_ROLE_SECONDARY && !m->pending && m->node_silent;
        if (m != lost && (m->unresolved || (m->live && !planner_standby_runs(m) && !standby))) {
            snprintf(msg, size, "%s lost: waiting for %s (%s%s) before promoting a standby", lost->pod,
                     m->pod, rss_role_name(m->role),
                     m->pending || m->unresolved ? ", an action in flight" : "");
            return true;
        }
    }
    size_t s_total, n_run;
    size_t need = planner_failover_need(c, lost, &s_total, &n_run);
    size_t k = (size_t)sp->sync_standbys;
    char why[512];
    if (n_run < need) {
        snprintf(why, sizeof(why),
                 "%zu of %zu standbys run, and a promotion needs positions from %zu "
                 "(spec.synchronousStandbys %zu: "
                 "an acknowledged commit may be only on the others)",
                 n_run, s_total, need, k);
        return fallback(c, lost, why);
    }

    /* The request of this term: the status's, or (its write lost) the newest one on a running standby's
     * record; a request of an older term is not answered any more (fencing cleared it): ask again. Either
     * way one for this lost primary (the record was reset above when another one was lost), made after it
     * became primary (a request of an earlier failover, still on a record in the repoint window of this
     * one, was answered about another primary). */
    struct rss_action_id req = {0, 0}, floor = lost->mark ? lost->mark_at : (struct rss_action_id){0, 0};
    bool same =
        rec_id(c->new_failover, "request", &req) && req.epoch == c->in->epoch && planner_id_after(req, floor);
    if (!same)
        req = (struct rss_action_id){0, 0};
    for (size_t i = 0; i < c->n && !same; i++) {
        const struct planner_member *m = &c->m[i];
        if (m == lost || !m->exists || !planner_standby_runs(m) || !planner_follows(m, lost) ||
            !m->in->has_desired)
            continue;
        struct rss_action_id r = m->in->desired.position_request;
        if (r.epoch == c->in->epoch && planner_id_after(r, floor) && (!req.seq || planner_id_after(r, req)))
            req = r;
    }
    if (!same && req.seq) {
        fo_record(c, lost, req);
        same = true;
    }
    if (same && !request_live(c, lost, req))
        same = false; /* fo_record() below keeps a switchover's part */
    if (!same) {
        /* Step 2: ask now, after the loss was seen. */
        req = (struct rss_action_id){c->in->epoch, ++c->seq};
        fo_record(c, lost, req);
        char id[48];
        rss_action_id_format(req, id, sizeof(id));
        for (size_t i = 0; i < c->n; i++) {
            struct planner_member *m = &c->m[i];
            if (m == lost || !m->exists || !planner_standby_runs(m) || !planner_follows(m, lost) ||
                m->decided)
                continue;
            struct rss_plan_patch *p = planner_patch_for(c, m);
            p->set_desired = true;
            rss_recordcodec_desired_copy(&p->desired, &m->in->desired);
            p->desired.position_request = req;
        }
        fo_event(c, RSS_EVENT_NORMAL, "FailoverStarted", lost,
                 "%s was primary and is %s; asking the %zu running standbys for their positions (request %s)",
                 lost->pod,
                 lost->fenced_dead ? "on a node judged dead"
                 : gone            ? "gone (its pod left the API)"
                 : early ? "on a silent node (rule 19: each standby detaches before it answers, so whatever "
                           "that primary still does, it acknowledges nothing more)"
                         : "stopped",
                 n_run, id);
        snprintf(msg, size, "%s lost: asking the running standbys for their positions", lost->pod);
        return true;
    }

    /* A switchover's named standby, promoted when no answer is above its own. */
    const char *to = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(c->new_failover, "switchover"), "to"));
    bool switchover = cJSON_GetObjectItemCaseSensitive(c->new_failover, "switchover") != NULL;
    struct planner_member *best = NULL, *named = NULL;
    uint64_t best_pos = 0, named_pos = 0;
    size_t n_ans = 0, n_pending = 0;
    struct rss_strbuf waiting = {0}, list = {0};
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == lost || !m->exists || !planner_standby_runs(m) || !planner_follows(m, lost))
            continue;
        bool has = false, undetached = false;
        uint64_t pos = 0;
        if (!answered(c, m, req, &has, &undetached, &pos)) {
            n_pending++;
            rss_strbuf_item(&waiting, "%s", m->pod);
            continue;
        }
        if (undetached)
            rss_strbuf_item(&list, "%s %" PRIu64 " not detached", m->pod, pos);
        if (!has)
            continue;
        n_ans++;
        rss_strbuf_item(&list, "%s %" PRIu64, m->pod, pos);
        if (to && !strcmp(m->pod, to)) {
            named = m;
            named_pos = pos;
        }
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
        /* An agent runs `detach` (when the spec has it) and then `sequence`, each within its timeout. */
        int64_t limit =
            (int64_t)sp->hooks[RSS_HOOK_SEQUENCE].timeout_ms +
            (sp->hooks[RSS_HOOK_DETACH].present ? (int64_t)sp->hooks[RSS_HOOK_DETACH].timeout_ms : 0) +
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

    if ((int)best->ordinal >= c->target) {
        /* Never promote a member the scale-down removes; a lower answer may lack acknowledged commits. */
        snprintf(why, sizeof(why), "the most advanced standby %s (position %" PRIu64 ") is being scaled away",
                 best->pod, best_pos);
        free(waiting.s);
        free(list.s);
        return fallback(c, lost, why);
    }
    if (lost->mark_scaled && (!lost->mark_scaled_known || best_pos < lost->mark_scaled_seq)) {
        /* Model finding L4: a standby removed by a scale-down while lost was primary may have been the only
         * one to acknowledge a commit (scaled_away() in planner_scale.c). */
        char ss[80] = "an unknown sequence (its `sequence` hook failed, or its node was dead)";
        if (lost->mark_scaled_known)
            snprintf(ss, sizeof(ss), "sequence %" PRIu64, lost->mark_scaled_seq);
        snprintf(why, sizeof(why),
                 "%s, removed by a scale-down while %s was primary, held %s, above the most advanced standby "
                 "%s (position %" PRIu64 "): an acknowledged commit may be only on %s and its volume",
                 lost->mark_scaled_pod, lost->pod, ss, best->pod, best_pos, lost->pod);
        free(waiting.s);
        free(list.s);
        return fallback(c, lost, why);
    }
    /* Step 3: promote. No peers: the seed of a running standby is a promotion. */
    char choice[160] = "";
    if (named && named_pos == best_pos)
        best = named;
    else if (to)
        snprintf(choice, sizeof(choice), "; %s, named by the switchover, %s", to,
                 named ? "is behind" : "gave no position");
    _cleanup_free_ char *reason = rss_xasprintf(
        "%s: promote the most advanced standby (position %" PRIu64 "; positions %s; "
        "%zu needed of %zu standbys, synchronousStandbys %zu%s)",
        switchover ? "switchover" : "failover", best_pos, rss_strbuf_str(&list), need, s_total, k, choice);
    planner_issue(c, best, RSS_ACTION_SEED, NULL, 0, reason);
    /* Rule 16: the promotion's mark, in the promotion's own CAS. */
    planner_lineage_promoted(planner_patch_for(c, best), best, lost, req, best_pos);
    fo_event(c, RSS_EVENT_NORMAL, "Promoting", best, "%s replaces %s: %s", best->pod, lost->pod, reason);
    snprintf(msg, size, "promoting %s in place of %s", best->pod, lost->pod);
    char pbuf[24];
    fmt_seq(best_pos, pbuf, sizeof(pbuf));
    cJSON_AddNumberToObject(c->new_failover, "promoted", best->ordinal);
    cJSON_AddStringToObject(c->new_failover, "position", pbuf);
    /* Step 4: none of the others may seed over the new history before it rejoined. The running standbys
     * follow the new primary (planner_failover_repoint()); a mark on them would end at their repoint. */
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == best || (m != lost && !m->exists) || (m != lost && planner_standby_runs(m)))
            continue;
        planner_hold_mark(m, UINT64_MAX);
    }
    free(list.s);
    free(waiting.s);
    return true;
}

bool planner_failover_repoint(struct planner *c)
{
    /* Step 5, from the records: the newest mark is a promotion, and a running standby whose last start
     * came before it still follows the primary that was replaced. */
    const struct planner_member *np = c->top;
    if (!c->spec->promote_standby || !np || !np->mark_promoted || np->mark_gone || !np->primary_up)
        return false;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].start_inflight)
            return false;
    bool issued = false, pending = false;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == np || !m->exists || !planner_standby_runs(m) ||
            planner_lineage_started_after(m, np->mark_at))
            continue;
        pending = true;
        if (issued || !m->actionable || m->decided)
            continue;
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
    if (!pending) {
        cJSON_Delete(c->new_failover);
        c->new_failover = NULL;
    }
    return issued;
}

bool planner_failover_reattach(struct planner *c)
{
    /* Rule 19: a standby detached for a failover that promoted nobody (its primary's node came back before
     * S-k+1 answers, or the failover fell back) follows no primary, and under `ANY k` the primary may then
     * acknowledge nothing. Once that primary runs again the failover is over: its record goes (a later
     * loss asks again: answers read before what the primary acknowledged since prove nothing), the
     * request leaves every record, and each detached standby gets `secondary` with it as peer, one at a
     * time. A promotion's repoint (planner_failover_repoint()) covers its own standbys. */
    struct planner_member *np = c->top;
    for (size_t i = 0; i < c->n && !np; i++) /* an RSS from before the marks */
        if (c->m[i].primary_up)
            np = &c->m[i];
    if (!c->spec->promote_standby || c->spec->primaries != 1 || !np || !np->primary_up)
        return false;
    if (c->new_failover) {
        if (cJSON_GetObjectItemCaseSensitive(c->new_failover, "promoted"))
            return false;
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(c->new_failover, "lost");
        if (cJSON_GetObjectItemCaseSensitive(c->new_failover, "request") && cJSON_IsNumber(lo) &&
            lo->valuedouble == (double)np->ordinal) {
            planner_event(c, RSS_EVENT_NORMAL, "FailoverAbandoned", np,
                          "%s runs as primary again before a standby was promoted: the failover is over, "
                          "the detached standbys follow it again",
                          np->pod);
            cJSON_Delete(c->new_failover);
            c->new_failover = NULL;
        }
    }
    bool issued = false;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (m == np || !m->exists || !planner_standby_runs(m) || m->decided)
            continue;
        const struct rss_observed *o = &m->in->observed;
        /* It ran the detach hook for a request (its last answer is about one) and has not been started
         * since. Its answer need not say detached: a detach that worked for one request and failed for
         * the next (a new term, or a status write lost, asks again) leaves it detached all the same, and the
         * answer says only the last (tests/sim/proto, seed 3164). A `secondary` to a standby that still
         * follows costs it a restart; a detached one left alone follows nobody for good. */
        bool detached = m->current && o->position_for.seq != 0 && c->spec->hooks[RSS_HOOK_DETACH].present &&
                        !planner_lineage_started_after(m, o->position_for);
        if (detached && !issued && m->actionable) {
            char **peers = rss_xcalloc(1, sizeof(char *));
            peers[0] = rss_spec_peer_dns(c->spec, np->ordinal);
            _cleanup_free_ char *why = rss_xasprintf(
                "rule 19: it detached for a failover that promoted nobody; follow the primary %s again",
                np->pod);
            planner_issue(c, m, RSS_ACTION_SECONDARY, peers, 1, why);
            planner_event(c, RSS_EVENT_NORMAL, "Reattaching", m, "%s: %s", m->pod, why);
            free(peers[0]);
            free(peers);
            issued = true;
        } else if (m->in->has_desired && m->in->desired.position_request.seq) {
            struct rss_plan_patch *p = planner_patch_for(c, m);
            p->set_desired = true;
            rss_recordcodec_desired_copy(&p->desired, &m->in->desired);
            p->desired.position_request = (struct rss_action_id){0, 0};
        }
    }
    return issued;
}
