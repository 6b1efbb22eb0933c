/* planner_history.c -- what the planner remembers between plans, read back from the RSS status. */
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "planner_internal.h"

/* ---- reading the previous status (our own output; lenient) ---- */

static const cJSON *prev_member(const cJSON *status, unsigned ordinal)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(status, "memberStatus");
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (cJSON_IsNumber(o) && o->valuedouble == (double)ordinal)
            return e;
    }
    return NULL;
}

uint64_t planner_json_u64(const cJSON *obj, const char *key)
{
    uint64_t v = 0;
    return rss_json_uint53(cJSON_GetObjectItemCaseSensitive(obj, key), &v) ? v : 0;
}

void planner_load_history(struct planner *c, struct planner_member *m)
{
    const cJSON *p = prev_member(c->in->prev_status, m->ordinal);
    if (!p)
        return;
    _cleanup_error_ rss_error_t ignored = NULL;
    /* Read before the uid check: it is about the incarnations after the one replaced. */
    const cJSON *repl = cJSON_GetObjectItemCaseSensitive(p, "replacement");
    if (cJSON_IsObject(repl))
        m->repl_prev = repl;
    /* Rule 14: the left-out mark is about the data on the member's volume, not the pod: it survives a
     * recreated pod (a rolling update, a delete, a resume). */
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(p, "leftOut");
    const char *loseq = rss_json_str(lo, "seedSequence");
    if (loseq && rss_hook_parse_sequence(loseq, strlen(loseq), &m->left_out_seed_seq, &ignored) == 0) {
        m->left_out = true;
        m->prev_held = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "held"));
        m->released = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "released"));
    }
    const char *uid = rss_json_str(p, "podUID");
    /* A new pod (the StatefulSet recreated it) starts with a clean record. The record of a pod that was
     * absent carries the uid of the last incarnation seen (planner_status.c), so a replacement is
     * recognised even when no plan saw both. */
    if (m->exists && m->in->pod_uid && (!uid || strcmp(uid, m->in->pod_uid) != 0)) {
        m->prev_uid = NULL;
        /* A replacement that kept the claim (docs/node-loss.md) has the lost member's data: if that was
         * left out of a recovery, it still may hold writes the cluster lacks. */
        const char *lseq = rss_json_str(m->repl_prev, "leftOutSeedSequence");
        if (!m->left_out && lseq &&
            rss_hook_parse_sequence(lseq, strlen(lseq), &m->left_out_seed_seq, &ignored) == 0)
            m->left_out = true;
        return;
    }
    m->prev_uid = uid;
    m->failures = (unsigned)planner_json_u64(p, "failures");
    const char *counted = rss_json_str(p, "countedAction");
    if (counted && rss_action_id_parse(counted, &m->counted, &ignored) < 0)
        m->counted = (struct rss_action_id){0, 0};
    const char *role = rss_json_str(p, "role");
    m->prev_known = role && rss_role_parse(role, &m->prev_role) == 0;
    m->prev_gen = planner_json_u64(p, "generation");
    const char *since = rss_json_str(p, "runningSince");
    if (since && rss_time_parse_ms(since, &m->running_since, &ignored) < 0)
        m->running_since = 0;
    m->prev_seq_error = rss_json_str(p, "sequenceError");
    m->node_down = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "nodeDown"));
    const char *last = rss_json_str(p, "lastSequence");
    m->last_seq_known = last && rss_hook_parse_sequence(last, strlen(last), &m->last_seq, &ignored) == 0;
}

void planner_load_journal(struct planner *c, struct planner_member *m)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "journal"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (!cJSON_IsNumber(o) || o->valuedouble != (double)m->ordinal)
            continue;
        _cleanup_error_ rss_error_t ignored = NULL;
        const char *down = rss_json_str(e, "downAt");
        if (!down || rss_time_parse_ms(down, &m->j_down_ms, &ignored) < 0)
            return; /* unreadable: no record, so no proof */
        m->j_has = true;
        const char *seq = rss_json_str(e, "lastSequence");
        m->j_has_seq = seq && rss_hook_parse_sequence(seq, strlen(seq), &m->j_seq, &ignored) == 0;
        const cJSON *w;
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "witnesses"))
        {
            const cJSON *wo = cJSON_GetObjectItemCaseSensitive(w, "ordinal");
            if (m->j_n == PLANNER_JOURNAL_WITNESSES || !cJSON_IsNumber(wo) || wo->valuedouble < 0 ||
                wo->valuedouble >= (double)c->n || wo->valuedouble == (double)m->ordinal)
                continue;
            m->j_w[m->j_n].ordinal = (unsigned)wo->valuedouble;
            m->j_w[m->j_n].generation = planner_json_u64(w, "generation");
            m->j_w[m->j_n].confirmed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "confirmed"));
            m->j_n++;
        }
        return;
    }
}
