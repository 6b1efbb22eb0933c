/* planner_lineage.c -- rules 16 and 17: which member holds the cluster's newest history, from the primary
 * marks the leader writes into the member records with every start that makes a primary.
 *
 * A mark says "the leader made this member a primary by action A, for pod incarnation U, holding sequence
 * N then" (rss/record.h). It is written in the same patch (one CAS) as the seed, promotion or primary join
 * it describes, and removed by the patch that starts the member as a secondary; a fencing plan, a lost
 * status write, a recreated pod or a new term leaves it. So every plan, whatever path it takes, can tell:
 *   - the newest mark's member holds the newest history: under one primary it is THE primary, the one a
 *     failover replaces when it is lost, and the one kept when two primaries run (a node frozen past the
 *     dead window thawed beside the standby promoted meanwhile);
 *   - a mark whose incarnation is gone (the pod deleted or recreated: a drain) says that primary's
 *     container has stopped: the pod leaves the API only once its kubelet confirmed its containers ended;
 *   - the marks' sequences are a floor: the history rssd itself started from. A seed that goes on without
 *     some members may not go below it (planner_recovery.c).
 * Before this, the same facts lived only in status.memberStatus and status.failover, which a new term's
 * fencing plan, a paused plan or one failed status PATCH dropped (issue faults 1-3). */
#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "planner_internal.h"

bool planner_id_after(struct rss_action_id a, struct rss_action_id b)
{
    return a.epoch > b.epoch || (a.epoch == b.epoch && a.seq > b.seq);
}

static void parse(struct planner_member *m, const char *doc)
{
    _cleanup_json_ cJSON *j = cJSON_Parse(doc);
    const char *at = rss_json_str(j, "action");
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_action_id id;
    /* Only rssd writes there; an unreadable mark names no action, so it is older than any readable one,
     * but it still says the member was a primary. */
    m->mark = true;
    if (at && rss_action_id_parse(at, &id, &err) == 0)
        m->mark_at = id;
    const char *uid = rss_json_str(j, "podUID");
    m->mark_uid = uid ? rss_xstrdup(uid) : NULL;
    const char *seq = rss_json_str(j, "sequence");
    rss_error_release(&err);
    m->mark_has_seq = seq && rss_hook_parse_sequence(seq, strlen(seq), &m->mark_seq, &err) == 0;
    const cJSON *over = cJSON_GetObjectItemCaseSensitive(j, "promotedOver");
    m->mark_promoted = cJSON_IsNumber(over);
    /* The incarnation it was made primary in is gone: the pod left the API (its kubelet confirmed its
     * containers stopped), or the StatefulSet made a new one. */
    m->mark_gone = !m->exists || (m->mark_uid && m->in->pod_uid && strcmp(m->mark_uid, m->in->pod_uid) != 0);
    /* Unreadable counts as unknown: a promotion then falls back rather than guess below it. */
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(j, "scaledAway");
    if (sa) {
        const char *ss = rss_json_str(sa, "sequence"), *pod = rss_json_str(sa, "pod");
        rss_error_release(&err);
        m->mark_scaled = true;
        m->mark_scaled_known = ss && rss_hook_parse_sequence(ss, strlen(ss), &m->mark_scaled_seq, &err) == 0;
        m->mark_scaled_pod = rss_xstrdup(pod ? pod : "a member removed by a scale-down");
    }
}

/* A mark whose start never made its member a primary names no primary (model finding L1): the start was
 * fenced by a new term before the agent took it up (its desired is gone and its last action is older), or
 * it failed. Otherwise a fenced promotion would leave the standby it named taken for the lost primary, for
 * good. A mark of an incarnation that is gone stays (a drain: its last word is lost with the pod). */
static bool mark_void(const struct planner *c, const struct planner_member *m)
{
    if (m->mark_gone)
        return false;
    const struct rss_member_input *in = m->in;
    if (in->has_desired && in->desired.epoch == c->in->epoch &&
        rss_action_id_equal(in->desired.id, m->mark_at))
        return false; /* issued by this term, not taken up yet */
    const struct rss_last_action *la = &in->observed.last;
    if (!in->has_observed || !la->present)
        return true;
    if (planner_id_after(la->id, m->mark_at))
        return false; /* it ran, and something after it */
    return !rss_action_id_equal(la->id, m->mark_at) ||
           (la->result != RSS_RESULT_OK && la->result != RSS_RESULT_PENDING);
}

void planner_lineage_load(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        const char *doc = m->in ? m->in->primary_record : NULL;
        if (!doc)
            continue;
        parse(m, doc);
        if (mark_void(c, m)) {
            m->mark = m->mark_has_seq = m->mark_promoted = m->mark_scaled = false;
            continue;
        }
        if (!c->top || planner_id_after(m->mark_at, c->top->mark_at))
            c->top = m;
        if (m->mark_has_seq && (!c->floor || m->mark_seq > c->floor_seq)) {
            c->floor = true;
            c->floor_seq = m->mark_seq;
            c->floor_ordinal = m->ordinal;
            c->floor_scaled_pod = NULL;
        }
        /* A standby's last sequence is history the cluster reached as much as a primary's. */
        if (m->mark_scaled && m->mark_scaled_known && (!c->floor || m->mark_scaled_seq > c->floor_seq)) {
            c->floor = true;
            c->floor_seq = m->mark_scaled_seq;
            c->floor_ordinal = m->ordinal;
            c->floor_scaled_pod = m->mark_scaled_pod;
        }
    }
    /* The last recovery's seed, as the status recorded it: the same floor when the marks are gone (an RSS
     * from before the marks). */
    const char *s = rss_json_str(c->last_recovery, "sequence");
    uint64_t v;
    _cleanup_error_ rss_error_t err = NULL;
    if (s && rss_hook_parse_sequence(s, strlen(s), &v, &err) == 0 && (!c->floor || v > c->floor_seq)) {
        c->floor = true;
        c->floor_seq = v;
        c->floor_ordinal = UINT32_MAX;
        c->floor_scaled_pod = NULL;
    }
}

bool planner_lineage_started_after(const struct planner_member *m, struct rss_action_id at)
{
    if (!m->exists || !m->obs)
        return false;
    const struct rss_last_action *la = &m->in->observed.last;
    return la->present && rss_action_starts(la->action) && la->result == RSS_RESULT_OK &&
           planner_id_after(la->id, at);
}

static char *mark_doc(const struct planner_member *m, struct rss_action_id at, bool has_seq, uint64_t seq,
                      int promoted_over, struct rss_action_id request)
{
    char id[48];
    rss_action_id_format(at, id, sizeof(id));
    _cleanup_json_ cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "action", id);
    cJSON_AddStringToObject(j, "podUID", m->in && m->in->pod_uid ? m->in->pod_uid : "");
    if (has_seq) {
        char s[24];
        fmt_seq(seq, s, sizeof(s));
        cJSON_AddStringToObject(j, "sequence", s);
    }
    if (promoted_over >= 0) {
        cJSON_AddNumberToObject(j, "promotedOver", promoted_over);
        rss_action_id_format(request, id, sizeof(id));
        cJSON_AddStringToObject(j, "request", id);
    }
    return cJSON_PrintUnformatted(j);
}

void planner_lineage_issue(const struct planner_member *m, struct rss_plan_patch *p)
{
    enum rss_action a = p->desired.action;
    if (a == RSS_ACTION_SEED || a == RSS_ACTION_PRIMARY) {
        free(p->primary);
        p->set_primary = true;
        p->primary = mark_doc(m, p->desired.id, m->has_seq, m->seq, -1, (struct rss_action_id){0, 0});
    } else if (a == RSS_ACTION_SECONDARY && m->in && m->in->primary_record) {
        /* It follows a primary now: its own history is the primary's. */
        free(p->primary);
        p->set_primary = true;
        p->primary = NULL;
    }
}

void planner_lineage_promoted(struct rss_plan_patch *p, const struct planner_member *m,
                              const struct planner_member *lost, struct rss_action_id request,
                              uint64_t position)
{
    free(p->primary);
    p->set_primary = true;
    p->primary = mark_doc(m, p->desired.id, true, position, (int)lost->ordinal, request);
}
