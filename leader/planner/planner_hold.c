/* planner_hold.c -- rule 14: a member left out of a recovery holds a diverged history; it never seeds and
 * is not joined over its writes until it has rejoined or the admin released it. */
#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "planner_internal.h"

void planner_hold_mark(struct planner_member *m, uint64_t seed_seq)
{
    if (m->left_out)
        return;
    m->left_out = true;
    m->left_out_seed_seq = seed_seq;
    m->released = false;
}

void planner_hold_load(struct planner *c, struct planner_member *m)
{
    (void)c;
    const char *rec = m->in ? m->in->hold_record : NULL;
    if (rec) {
        /* The record is the copy written ahead of the seed; the status may be gone (a re-created RSS)
         * or behind (its write was lost with the Lease). Where both speak, the older divergence point
         * wins: it holds back more. */
        _cleanup_json_ cJSON *j = cJSON_Parse(rec);
        const char *s = rss_json_str(j, "seedSequence");
        uint64_t seq = 0;
        _cleanup_error_ rss_error_t ignored = NULL;
        /* Unreadable (only rssd writes it): held against any sequence rather than forgotten. */
        if (!s || rss_hook_parse_sequence(s, strlen(s), &seq, &ignored) < 0)
            seq = 0;
        if (!m->left_out || seq < m->left_out_seed_seq)
            m->left_out_seed_seq = seq;
        m->left_out = true;
        m->released |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "released"));
        const char *at = rss_json_str(j, "at");
        rss_error_release(&ignored);
        m->left_out_at_known = at && rss_action_id_parse(at, &m->left_out_at, &ignored) == 0;
    }
    /* Started by a join after the mark: the join replaced its data with the cluster's, the histories are
     * one again. Running on from before the mark is not that (rule 17): a primary whose node froze past
     * the dead window and thawed after a promotion still holds the history the cluster gave up. A hold
     * without its mark (written before it was kept) ends when the member runs, as it always did. */
    if (m->left_out && m->running &&
        (!m->left_out_at_known || planner_lineage_started_after(m, m->left_out_at))) {
        m->left_out = false;
        m->released = false;
    }
}

bool planner_hold_newer(struct planner *c, struct planner_member *m)
{
    /* No bound (a promotion's mark, rule 15): its tail was never acknowledged, and the join rewinds it. */
    if (!m->left_out || !m->current || m->released || c->spec->join_newer_late_members ||
        m->left_out_seed_seq == UINT64_MAX)
        return false;
    if (m->has_seq && m->seq <= m->left_out_seed_seq)
        return false;
    char ms[24] = "unknown", ss[24];
    if (m->has_seq)
        fmt_seq(m->seq, ms, sizeof(ms));
    fmt_seq(m->left_out_seed_seq, ss, sizeof(ss));
    m->held = true;
    /* Without a sequence its data is unknown, so possibly newer: held like a higher one. */
    if (m->has_seq)
        rss_strbuf_item(&m->note,
                        "held back: sequence %s is above the %s the running cluster was seeded with; joining "
                        "would discard its newer writes",
                        ms, ss);
    else
        rss_strbuf_item(&m->note,
                        "held back: its sequence is unknown (%s) and it was left out of the recovery that "
                        "seeded %s; joining could discard newer writes",
                        m->seq_error ? m->seq_error : "not reported", ss);
    if (!m->prev_held)
        planner_event(
            c, RSS_EVENT_WARNING, "NewerThanSeed", m,
            "%s came back with sequence %s, %s the %s the running cluster was seeded with while it was "
            "missing: it is not joined over writes the cluster may lack, and it is never a seed candidate. "
            "Recover its writes by hand, then release it with the annotation " RSS_ANNOTATION_RELEASE_HOLD
            "=%s on the RSS (it joins; its writes beyond %s are replaced), or set "
            "spec.recovery.onNewerLateMember: Join to let every such member join",
            m->pod, ms, m->has_seq ? "above" : "possibly above", ss, m->pod, ss);
    return true;
}

bool planner_hold_diverged(struct planner *c, struct planner_member *m, struct rss_strbuf *list)
{
    (void)c;
    if (!m->left_out)
        return false;
    char ss[24];
    fmt_seq(m->left_out_seed_seq, ss, sizeof(ss));
    rss_strbuf_item(list, "%s (left out of the recovery that seeded sequence %s and not rejoined since)",
                    m->pod, ss);
    rss_strbuf_item(&m->note,
                    "not a seed candidate: left out of the recovery that seeded sequence %s and not rejoined "
                    "since, its history is not comparable by sequence with the cluster's",
                    ss);
    return true;
}

void planner_hold_release(struct planner *c)
{
    const char *want = c->in->release_hold;
    if (!want)
        return;
    c->out->clear_release_hold = true;
    struct planner_member *m = NULL;
    for (size_t i = 0; i < c->n && !m; i++)
        if (c->m[i].pod && !strcmp(c->m[i].pod, want))
            m = &c->m[i];
    if (!m || !m->left_out) {
        planner_event(c, RSS_EVENT_WARNING, "ReleaseHoldRefused", m,
                      "release-hold of %s refused: %s; the annotation is removed", want,
                      !m ? "no such member"
                         : "it is not held (not left out of a recovery, or it has rejoined since)");
        return;
    }
    if (m->released)
        return;
    m->released = true;
    char ss[24];
    fmt_seq(m->left_out_seed_seq, ss, sizeof(ss));
    planner_event(
        c, RSS_EVENT_WARNING, "HoldReleased", m,
        "%s released by the admin (" RSS_ANNOTATION_RELEASE_HOLD
        "): it joins the running cluster, which replaces its writes beyond sequence %s; until it has joined "
        "it is still never a seed candidate",
        m->pod, ss);
}

static char *hold_doc(const struct planner_member *m)
{
    if (!m->left_out)
        return NULL;
    char at[64] = "";
    if (m->left_out_at_known) {
        char id[48];
        rss_action_id_format(m->left_out_at, id, sizeof(id));
        snprintf(at, sizeof(at), ",\"at\":\"%s\"", id);
    }
    return rss_xasprintf("{\"seedSequence\":\"%" PRIu64 "\"%s%s}", m->left_out_seed_seq, at,
                         m->released ? ",\"released\":true" : "");
}

void planner_hold_persist(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        /* A member without a pod has no record this plan can see: its status entry carries the hold
         * until the pod exists again. */
        if (!m->exists || !m->in)
            continue;
        /* A new mark's action: the last id before this plan issued any; every start from this plan on
         * has a higher one. */
        if (m->left_out && !m->left_out_at_known) {
            m->left_out_at_known = true;
            m->left_out_at = (struct rss_action_id){c->in->epoch, c->seq0};
        }
        char *want = hold_doc(m);
        const char *have = m->in->hold_record;
        if ((!want && (!have || !m->in->resource_version)) || (want && have && !strcmp(want, have))) {
            free(want);
            continue;
        }
        struct rss_plan_patch *p = planner_patch_for(c, m);
        p->set_hold = true;
        free(p->hold);
        p->hold = want;
    }
}
