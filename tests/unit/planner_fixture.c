/* planner_fixture.c -- the planner's table-test world: members written as tokens, the plan input built
 * from them, plans summarised and read back (tokens in planner_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- building worlds ---- */

void spec_init(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members)
{
    spec_init_with(spec, replicas, primaries, secondary, min_members, "");
}

void spec_init_with(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members,
                    const char *spec_extra)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"generation\":2},\"spec\":{%s\"replicas\":%d,\"primaries\":%d,"
        "\"recovery\":{\"minimumMembers\":%d},\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/seq\"]},\"seed\":{\"command\":[\"/seed\"]},"
        "\"primary\":{\"command\":[\"/start\"]},%s\"status\":{\"command\":[\"/check\"]},"
        "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        spec_extra, replicas,
        primaries > 0  ? primaries
        : replicas > 0 ? replicas
                       : 1,
        min_members, secondary ? "\"secondary\":{\"command\":[\"/replica\"]}," : "");
    _cleanup_json_ cJSON *cr = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    assert_non_null(cr);
    assert_int_equal(rss_spec_parse(cr, spec, &err), 0);
}

struct rss_member_input *find(struct world *w, unsigned ordinal)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->m[i].ordinal == ordinal)
            return &w->m[i];
    return NULL;
}

struct mstore *store(struct world *w, const struct rss_member_input *m)
{
    return &w->s[m - w->m];
}

void set_observed(struct rss_member_input *m, enum rss_role role, uint64_t gen, bool has_seq, uint64_t seq,
                  const char *seq_err)
{
    rss_recordcodec_observed_clear(&m->observed);
    m->has_observed = true;
    m->observed.container_id = rss_xstrdup(m->container_id);
    m->observed.generation = gen;
    m->observed.role = role;
    m->observed.status_code = role == RSS_ROLE_STOPPED ? 7 : role == RSS_ROLE_PRIMARY ? 8 : 0;
    m->observed.has_sequence = has_seq;
    m->observed.sequence = seq;
    m->observed.sequence_error = seq_err ? rss_xstrdup(seq_err) : NULL;
    m->observed.lease_epoch = EPOCH;
    m->observed.time_ms = NOW;
}

void set_desired(struct rss_member_input *m, uint64_t epoch, enum rss_action a, uint64_t seq, uint64_t gen)
{
    rss_recordcodec_desired_clear(&m->desired);
    m->has_desired = true;
    m->desired.epoch = epoch;
    m->desired.action = a;
    if (a != RSS_ACTION_NONE)
        m->desired.id = (struct rss_action_id){epoch, seq};
    m->desired.generation = gen;
}

void set_last(struct rss_member_input *m, enum rss_action a, uint64_t epoch, uint64_t seq, enum rss_result r)
{
    free(m->observed.last.message);
    m->observed.last = (struct rss_last_action){.present = true,
                                                .id = {epoch, seq},
                                                .action = a,
                                                .result = r,
                                                .exit_code = r == RSS_RESULT_OK ? 0 : 1};
}

/* A fresh pod: running phase, own node alive, fenced by this leader (desired none). */
struct rss_member_input *add_pod(struct world *w, unsigned ordinal)
{
    assert_true(w->n < MAXM);
    struct rss_member_input *m = &w->m[w->n];
    struct mstore *s = &w->s[w->n];
    w->n++;
    memset(m, 0, sizeof(*m));
    int k = w->uid_counter++;
    snprintf(s->uid, sizeof(s->uid), "uid-%u-%d", ordinal, k);
    snprintf(s->rv, sizeof(s->rv), "rv-%u", ordinal);
    snprintf(s->node, sizeof(s->node), "node-%u", ordinal);
    snprintf(s->cid, sizeof(s->cid), "containerd://cid-uid-%u-%d", ordinal, k);
    s->pin[0] = s->primary[0] = s->hold[0] = '\0';
    m->ordinal = ordinal;
    m->pod_exists = true;
    m->pod_uid = s->uid;
    m->resource_version = s->rv;
    m->phase = "Running";
    m->node = s->node;
    m->node_alive = true;
    m->container_id = s->cid;
    m->active_label = -1;
    set_desired(m, w->epoch, RSS_ACTION_NONE, 0, 0);
    return m;
}

void remove_pod(struct world *w, unsigned ordinal)
{
    struct rss_member_input *m = find(w, ordinal);
    if (!m)
        return;
    rss_recordcodec_desired_clear(&m->desired);
    rss_recordcodec_observed_clear(&m->observed);
    size_t i = (size_t)(m - w->m);
    memmove(&w->m[i], &w->m[i + 1], (w->n - i - 1) * sizeof(w->m[0]));
    memmove(&w->s[i], &w->s[i + 1], (w->n - i - 1) * sizeof(w->s[0]));
    w->n--;
    /* The pointers into w->s moved with their rows: re-aim them. */
    for (size_t k = 0; k < w->n; k++) {
        w->m[k].pod_uid = w->s[k].uid;
        w->m[k].resource_version = w->s[k].rv;
        w->m[k].node = w->s[k].node;
        w->m[k].container_id = w->s[k].cid;
        w->m[k].pin_record = w->s[k].pin[0] ? w->s[k].pin : NULL;
        w->m[k].primary_record = w->s[k].primary[0] ? w->s[k].primary : NULL;
        if (w->m[k].hold_record)
            w->m[k].hold_record = w->s[k].hold[0] ? w->s[k].hold : w->m[k].hold_record;
        if (w->m[k].observed_error)
            w->m[k].observed_error = w->s[k].obs_err;
    }
}

void member_token(struct world *w, unsigned ordinal, const char *tok)
{
    char kind = tok[0];
    bool has_num = tok[1] >= '0' && tok[1] <= '9';
    uint64_t n = has_num ? strtoull(tok + 1, NULL, 10) : 0;
    if (kind == '-')
        return;
    struct rss_member_input *m = add_pod(w, ordinal);
    switch (kind) {
    case '?':
        break;
    case 'S':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        break;
    case 'N':
        set_observed(m, RSS_ROLE_STOPPED, GEN, false, 0, NULL);
        break;
    case 'E':
        set_observed(m, RSS_ROLE_STOPPED, GEN, false, 0,
                     "sequence output 'garbage' is not an unsigned decimal integer");
        break;
    case 'P':
    case 'O':
    case 'R':
    case 'Q':
    case 'A':
    case 'K':
        set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = kind == 'O' ? EPOCH - 1 : EPOCH;
        m->observed_superseded = kind == 'R';
        m->node_alive = kind == 'P' || kind == 'O' || kind == 'R';
        m->node_dead = kind == 'K';
        m->agent_absent = kind == 'A';
        break;
    case 'Y':
    case 'Z':
        set_observed(m, RSS_ROLE_SECONDARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = kind == 'Z' ? EPOCH - 1 : EPOCH;
        break;
    case 'J':
    case 'j':
        set_observed(m, RSS_ROLE_STARTING, GEN, false, 0, NULL);
        set_last(m, RSS_ACTION_SECONDARY, EPOCH, 900 + ordinal, RSS_RESULT_PENDING);
        m->observed.last.exit_code = 0;
        m->observed.time_ms = NOW - (kind == 'J' ? 3600000 : 60000);
        m->node_alive = false;
        m->node_dead = true;
        break;
    case 'T':
        set_observed(m, RSS_ROLE_STARTING, GEN, false, 0, NULL);
        set_desired(m, w->epoch, RSS_ACTION_PRIMARY, 900 + ordinal, GEN);
        set_last(m, RSS_ACTION_PRIMARY, w->epoch, 900 + ordinal, RSS_RESULT_PENDING);
        break;
    case 'F':
        set_observed(m, RSS_ROLE_FAILED, GEN, false, 0, NULL);
        m->observed.status_code = 1;
        break;
    case 'U':
        set_observed(m, RSS_ROLE_UNKNOWN, GEN, false, 0, NULL);
        break;
    case 'C':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        snprintf(store(w, m)->cid, sizeof(store(w, m)->cid), "containerd://newer-%u", ordinal);
        break;
    case 'X':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        m->deleting = true;
        break;
    case 'W':
    case 'V':
        set_observed(m, RSS_ROLE_STARTING, GEN, has_num, n, NULL);
        set_desired(m, w->epoch, RSS_ACTION_NONE, 0, 0);
        set_last(m, RSS_ACTION_SEED, w->epoch, 900 + ordinal, RSS_RESULT_PENDING);
        m->observed.time_ms = NOW - (kind == 'W' ? 60000 : 3600000);
        m->node_alive = false;
        m->node_dead = true;
        break;
    case 'D':
    case 'L':
    case 'H':
        set_observed(m, RSS_ROLE_STOPPED, GEN, has_num, n, NULL);
        m->node_alive = false;
        m->node_dead = kind == 'D';
        break;
    default:
        fail_msg("bad token '%s'", tok);
    }
}

void world_init(struct world *w, const char *members, int primaries, bool secondary, int min_members)
{
    world_init_with(w, members, primaries, secondary, min_members, "");
}

void world_init_with(struct world *w, const char *members, int primaries, bool secondary, int min_members,
                     const char *spec_extra)
{
    memset(w, 0, sizeof(*w));
    w->now = NOW;
    w->epoch = EPOCH;
    w->dead_after = 15000;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", members);
    unsigned o = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        member_token(w, o++, t);
    w->sts = (int)o;
    spec_init_with(&w->spec, (int)o, primaries, secondary, min_members, spec_extra);
}

void world_free(struct world *w)
{
    for (size_t i = 0; i < w->n; i++) {
        rss_recordcodec_desired_clear(&w->m[i].desired);
        rss_recordcodec_observed_clear(&w->m[i].observed);
    }
    rss_spec_clear(&w->spec);
    cJSON_Delete(w->prev);
}

void set_pin(struct world *w, unsigned ordinal, uint64_t seq)
{
    _cleanup_free_ char *j = rss_xasprintf("{\"recovery\":{\"seedOrdinal\":%u,\"seedSequence\":\"%llu\"}}",
                                           ordinal, (unsigned long long)seq);
    cJSON_Delete(w->prev);
    w->prev = cJSON_Parse(j);
}

void set_record_pin(struct world *w, unsigned ordinal, const char *doc)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    struct mstore *s = store(w, m);
    snprintf(s->pin, sizeof(s->pin), "%s", doc ? doc : "");
    m->pin_record = doc ? s->pin : NULL;
}

void set_record_primary(struct world *w, unsigned ordinal, const char *doc)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    struct mstore *s = store(w, m);
    assert_true(!doc || strlen(doc) < sizeof(s->primary));
    snprintf(s->primary, sizeof(s->primary), "%s", doc ? doc : "");
    m->primary_record = doc ? s->primary : NULL;
}

void set_record_hold(struct world *w, unsigned ordinal, const char *doc)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    struct mstore *s = store(w, m);
    assert_true(!doc || strlen(doc) < sizeof(s->hold));
    snprintf(s->hold, sizeof(s->hold), "%s", doc ? doc : "");
    m->hold_record = doc ? s->hold : NULL;
}

void pod_gone(struct world *w, unsigned ordinal)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    rss_recordcodec_desired_clear(&m->desired);
    rss_recordcodec_observed_clear(&m->observed);
    m->has_desired = m->has_observed = false;
    m->pod_exists = false;
    m->pod_uid = NULL;
    m->node = NULL;
    m->node_alive = false;
    m->phase = NULL;
    m->container_id = NULL;
    /* leader_snapshot.c gives a gone pod's record only for its primary mark */
    m->hold_record = m->pin_record = NULL;
}

void pod_recreated(struct world *w, unsigned ordinal)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    struct mstore *s = store(w, m);
    rss_recordcodec_desired_clear(&m->desired);
    rss_recordcodec_observed_clear(&m->observed);
    m->has_desired = m->has_observed = false;
    snprintf(s->uid, sizeof(s->uid), "uid-%u-%d", ordinal, w->uid_counter++);
    m->pod_exists = true;
    m->pod_uid = s->uid;
    m->phase = "Pending";
    m->node = NULL;
    m->node_alive = false;
    m->unschedulable = true;
    m->deleting = false;
    m->container_id = NULL;
    m->pin_record = s->pin[0] ? s->pin : NULL;
    m->hold_record = s->hold[0] ? s->hold : NULL;
}

void run(struct world *w, struct rss_plan *p)
{
    struct rss_plan_input in = {.spec = &w->spec,
                                .epoch = w->epoch,
                                .now_ms = w->now,
                                .statefulset_replicas = w->sts,
                                .prev_status = w->prev,
                                .force_seed = w->force_seed,
                                .release_hold = w->release_hold,
                                .switchover = w->switchover,
                                .update_revision = w->update_revision,
                                .dead_after_ms = w->dead_after,
                                .members = w->m,
                                .n_members = w->n};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_planner_plan(&in, p, &err) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        fail_msg("plan failed: %s", m);
    }
}

/* ---- simulating the agents between two plans ---- */

void apply(struct world *w, struct rss_plan *p)
{
    cJSON_Delete(w->prev);
    w->prev = cJSON_Duplicate(p->status, true);
    for (size_t i = 0; i < p->n_patches; i++) {
        const struct rss_plan_patch *pt = &p->patches[i];
        struct rss_member_input *m = find(w, pt->ordinal);
        if (m && pt->set_pin)
            set_record_pin(w, pt->ordinal, pt->pin);
        if (m && pt->set_primary)
            set_record_primary(w, pt->ordinal, pt->primary);
        if (m && pt->set_hold)
            set_record_hold(w, pt->ordinal, pt->hold);
        if (!m || !pt->set_desired)
            continue;
        rss_recordcodec_desired_clear(&m->desired);
        rss_recordcodec_desired_copy(&m->desired, &pt->desired);
        m->has_desired = true;
    }
    rss_plan_free(p);
}

void crash(struct world *w, unsigned ordinal, uint64_t last_seq)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    /* The agent's report keeps its last action across a crash (it names the start that made it run). */
    struct rss_last_action last = m->observed.last;
    last.message = last.message ? rss_xstrdup(last.message) : NULL;
    set_observed(m, RSS_ROLE_STOPPED, GEN + 1, true, last_seq, NULL);
    m->observed.last = last;
}

void answer_position(struct world *w, unsigned ordinal, bool has, uint64_t pos)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    /* An agent answers only a request it was given: a test answering none is wrong, not the planner. */
    assert_true(m->desired.position_request.seq != 0);
    m->observed.position_for = m->desired.position_request;
    m->observed.has_position = has;
    m->observed.position = pos;
}

void ran(struct world *w, unsigned ordinal, enum rss_role role)
{
    struct rss_member_input *m = find(w, ordinal);
    assert_non_null(m);
    struct rss_action_id id = m->desired.id;
    enum rss_action a = m->desired.action;
    set_observed(m, role, m->desired.generation, false, 0, NULL);
    m->observed.last =
        (struct rss_last_action){.present = true, .id = id, .action = a, .result = RSS_RESULT_OK};
}

/* ---- reading plans ---- */

unsigned peer_ordinal(const char *dns)
{
    /* "rss-db-<N>.db-svc" */
    return (unsigned)strtoul(dns + strlen("rss-db-"), NULL, 10);
}

char *summary(const struct rss_plan *p)
{
    char buf[1024] = "";
    size_t o = 0;
    for (size_t i = 0; i < p->n_patches; i++) {
        const struct rss_plan_patch *pt = &p->patches[i];
        if (!pt->set_desired || pt->desired.action == RSS_ACTION_NONE)
            continue;
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:%s", o ? " " : "", pt->ordinal,
                              rss_action_name(pt->desired.action));
        if (pt->desired.n_peers) {
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "(");
            for (size_t k = 0; k < pt->desired.n_peers; k++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u", k ? "," : "",
                                      peer_ordinal(pt->desired.peers[k]));
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, ")");
        }
    }
    for (size_t i = 0; i < p->n_deletes; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:delete", o ? " " : "", p->deletes[i].ordinal);
    if (p->set_replicas >= 0)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%sreplicas=%d", o ? " " : "", p->set_replicas);
    return rss_xstrdup(buf);
}

const struct rss_plan_event *find_event(const struct rss_plan *p, const char *reason)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (strcmp(p->events[i].reason, reason) == 0)
            return &p->events[i];
    return NULL;
}

const struct rss_plan_patch *patch_of(const struct rss_plan *p, unsigned ordinal)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].ordinal == ordinal)
            return &p->patches[i];
    return NULL;
}

const struct rss_plan_patch *desired_patch_of(const struct rss_plan *p, unsigned ordinal)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].ordinal == ordinal && p->patches[i].set_desired)
            return &p->patches[i];
    return NULL;
}

const char *status_str(const struct rss_plan *p, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p->status, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

const cJSON *member_status(const struct rss_plan *p, unsigned ordinal)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p->status, "memberStatus"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (cJSON_IsNumber(o) && o->valuedouble == (double)ordinal)
            return e;
    }
    return NULL;
}

void expect(const struct rss_plan *p, const char *want, const char *row)
{
    _cleanup_free_ char *got = summary(p);
    if (strcmp(got, want) != 0) {
        _cleanup_free_ char *d = rss_plan_describe(p);
        fail_msg("%s: plan '%s', want '%s'\n%s", row, got, want, d);
    }
}

void plan_rows_run(const struct plan_row *rows, size_t n, const char *table)
{
    for (size_t i = 0; i < n; i++) {
        const struct plan_row *r = &rows[i];
        char name[160];
        snprintf(name, sizeof(name), "%s row %zu (rule %s, '%s')", table, i, r->rule, r->members);
        struct world w;
        world_init(&w, r->members, r->primaries, r->secondary, r->min_members);
        if (r->pin_ordinal != NO_PIN)
            set_pin(&w, (unsigned)r->pin_ordinal, r->pin_seq);
        struct rss_plan p;
        run(&w, &p);
        expect(&p, r->want, name);
        assert_false(p.epoch_claims);
        assert_false(p.fencing);
        if (r->event) {
            const struct rss_plan_event *e = find_event(&p, r->event);
            if (!e) {
                _cleanup_free_ char *d = rss_plan_describe(&p);
                fail_msg("%s: no %s event\n%s", name, r->event, d);
            }
            if (r->warning && e->type != RSS_EVENT_WARNING)
                fail_msg("%s: %s is not a Warning", name, r->event);
        }
        /* Rule 1: never more than one seed in a plan, never a seed next to any other start. */
        size_t seeds = 0, starts = 0;
        for (size_t k = 0; k < p.n_patches; k++) {
            seeds += p.patches[k].set_desired && p.patches[k].desired.action == RSS_ACTION_SEED;
            starts += p.patches[k].set_desired && (p.patches[k].desired.action == RSS_ACTION_PRIMARY ||
                                                   p.patches[k].desired.action == RSS_ACTION_SECONDARY);
        }
        assert_true(seeds <= 1);
        assert_true(seeds == 0 || starts == 0);
        rss_plan_free(&p);
        world_free(&w);
    }
}
