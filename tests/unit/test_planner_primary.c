/* test_planner_primary.c -- the planner in tables for one primary with secondaries and absent agents:
 * rule 12 (unobserved is not stopped), rule 13 (an absent agent is not a dead node) and a new cluster's
 * moment to report under minimumMembers.
 *
 * A world is written as one token per member, ordinal 0 first, as in test_planner.c:
 *   S<n> stopped, sequence n        ?  pod, no report               -  no pod
 *   P    running primary            Y  running secondary            F  failed (status exit 1)
 *   O    primary, its report from the previous epoch (its agent restarted, not re-probed yet)
 *   Q    primary on a node whose heartbeat is silent (not yet past the dead window)
 *   A    primary on a node whose agent is absent: silent past the dead window, kubelet not down
 *   K    primary on a node judged dead (agent silent past the window and kubelet down)
 *   Z    secondary, its report from the previous epoch
 *   U    role unknown (its status hook said neither running nor stopped)
 *   D<n> stopped, sequence n, on a node judged dead
 *   J    on a node judged dead, its last report the write-ahead of a `secondary` an hour ago (hook and
 *        stop timed out there: fenced); j the same a minute ago (the hook may still run)
 * Plans are summarised as "<ordinal>:<action>" tokens, then "<ordinal>:delete", then "replicas=N".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/planner.h"

#define MAXM   16
#define EPOCH  5
#define NOW    1700000000000LL
#define GEN    3
#define NO_PIN -1

struct mstore {
    char uid[32], rv[32], node[32], cid[48], obs_err[64];
};

struct world {
    struct rss_spec spec;
    struct rss_member_input m[MAXM];
    struct mstore s[MAXM];
    size_t n;
    int sts;
    int64_t now;
    uint64_t epoch;
    cJSON *prev;
    int uid_counter;
    const char *force_seed; /* the RSS's force-seed annotation */
    const char *update_revision;
    int64_t dead_after; /* the leader's dead-node window */
};

/* ---- building worlds ---- */

static void spec_init(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"generation\":2},\"spec\":{\"replicas\":%d,\"primaries\":%d,"
        "\"recovery\":{\"minimumMembers\":%d},\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/seq\"]},\"seed\":{\"command\":[\"/seed\"]},"
        "\"primary\":{\"command\":[\"/start\"]},%s\"status\":{\"command\":[\"/check\"]},"
        "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        replicas,
        primaries > 0  ? primaries
        : replicas > 0 ? replicas
                       : 1,
        min_members, secondary ? "\"secondary\":{\"command\":[\"/replica\"]}," : "");
    _cleanup_json_ cJSON *cr = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    assert_non_null(cr);
    assert_int_equal(rss_spec_parse(cr, spec, &err), 0);
}

static struct rss_member_input *find(struct world *w, unsigned ordinal)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->m[i].ordinal == ordinal)
            return &w->m[i];
    return NULL;
}

static void set_observed(struct rss_member_input *m, enum rss_role role, uint64_t gen, bool has_seq,
                         uint64_t seq, const char *seq_err)
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

static void set_desired(struct rss_member_input *m, uint64_t epoch, enum rss_action a, uint64_t seq,
                        uint64_t gen)
{
    rss_recordcodec_desired_clear(&m->desired);
    m->has_desired = true;
    m->desired.epoch = epoch;
    m->desired.action = a;
    if (a != RSS_ACTION_NONE)
        m->desired.id = (struct rss_action_id){epoch, seq};
    m->desired.generation = gen;
}

/* A fresh pod: running phase, own node alive, fenced by this leader (desired none). */
static struct rss_member_input *add_pod(struct world *w, unsigned ordinal)
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

static void member_token(struct world *w, unsigned ordinal, const char *tok)
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
    case 'F':
        set_observed(m, RSS_ROLE_FAILED, GEN, false, 0, NULL);
        m->observed.status_code = 1;
        break;
    case 'P':
    case 'O':
    case 'Q':
    case 'A':
    case 'K':
        set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = kind == 'O' ? EPOCH - 1 : EPOCH;
        m->node_alive = kind == 'P' || kind == 'O';
        m->node_dead = kind == 'K';
        m->agent_absent = kind == 'A';
        break;
    case 'U':
        set_observed(m, RSS_ROLE_UNKNOWN, GEN, false, 0, NULL);
        break;
    case 'D':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        m->node_alive = false;
        m->node_dead = true;
        break;
    case 'J':
    case 'j':
        set_observed(m, RSS_ROLE_STARTING, GEN, false, 0, NULL);
        free(m->observed.last.message);
        m->observed.last = (struct rss_last_action){.present = true,
                                                    .id = {EPOCH, 900 + ordinal},
                                                    .action = RSS_ACTION_SECONDARY,
                                                    .result = RSS_RESULT_PENDING};
        m->observed.time_ms = NOW - (kind == 'J' ? 3600000 : 60000);
        m->node_alive = false;
        m->node_dead = true;
        break;
    case 'Y':
    case 'Z':
        set_observed(m, RSS_ROLE_SECONDARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = kind == 'Z' ? EPOCH - 1 : EPOCH;
        break;
    default:
        fail_msg("bad token '%s'", tok);
    }
}

static void world_init(struct world *w, const char *members, int primaries, bool secondary, int min_members)
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
    spec_init(&w->spec, (int)o, primaries, secondary, min_members);
}

static void world_free(struct world *w)
{
    for (size_t i = 0; i < w->n; i++) {
        rss_recordcodec_desired_clear(&w->m[i].desired);
        rss_recordcodec_observed_clear(&w->m[i].observed);
    }
    rss_spec_clear(&w->spec);
    cJSON_Delete(w->prev);
}

static void run(struct world *w, struct rss_plan *p)
{
    struct rss_plan_input in = {.spec = &w->spec,
                                .epoch = w->epoch,
                                .now_ms = w->now,
                                .statefulset_replicas = w->sts,
                                .prev_status = w->prev,
                                .force_seed = w->force_seed,
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

/* ---- reading plans ---- */

static unsigned peer_ordinal(const char *dns)
{
    /* "rss-db-<N>.db-svc" */
    return (unsigned)strtoul(dns + strlen("rss-db-"), NULL, 10);
}

static char *summary(const struct rss_plan *p)
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

static const struct rss_plan_event *find_event(const struct rss_plan *p, const char *reason)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (strcmp(p->events[i].reason, reason) == 0)
            return &p->events[i];
    return NULL;
}

static const char *status_str(const struct rss_plan *p, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p->status, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* ---- rows ---- */

struct row {
    const char *world;
    int primaries;        /* 0: every member a primary (all-primary shape) */
    const char *want;     /* the plan's summary */
    const char *message;  /* a substring of status.message, or NULL */
    const char *no_event; /* an Event reason the plan must not carry, or NULL */
};

static void run_rows(const struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct world w;
        world_init(&w, rows[i].world, rows[i].primaries, true, 0);
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *got = summary(&p);
        const char *msg = status_str(&p, "message");
        if (strcmp(got, rows[i].want) || (rows[i].message && !strstr(msg, rows[i].message)) ||
            (rows[i].no_event && find_event(&p, rows[i].no_event))) {
            _cleanup_free_ char *d = rss_plan_describe(&p);
            fail_msg("row %zu '%s': want '%s', got '%s'; message '%s'\n%s", i, rows[i].world, rows[i].want,
                     got, msg, d);
        }
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* Rule 12: the secondaries of a primary that is not observed stopped or failed under this epoch are
 * never stopped for it; it is waited for and the status says why. Only a primary observed stopped or
 * failed, or on a node judged dead (agent silent AND kubelet down), lets the others be stopped for a new
 * recovery. */
static void test_unobserved_primary_table(void **state)
{
    (void)state;
    static const struct row rows[] = {
        /* rssd restarted on the primary's node (and the leader's): its report predates this epoch. */
        {"O Y Y", 1, "", "rss-db-0 was primary and is not observed stopped (its last report predates epoch 5",
         "NoPrimary"},
        /* rssd hung on the primary's node: its heartbeat is silent. */
        {"Q Y Y", 1, "", "rss-db-0 was primary and is not observed stopped (node node-0 is silent)",
         "NoPrimary"},
        /* rssd absent past the dead window, its kubelet Ready: not a dead node. */
        {"A Y Y", 1, "", "an absent agent, not a dead node", "NoPrimary"},
        /* The secondaries' own reports are stale too: nothing is stopped either. */
        {"O Z Z", 1, "", "rss-db-0 was primary", "NoPrimary"},
        /* Controls: observed stopped, observed failed, node judged dead: the others stop for a recovery. */
        {"S5 Y Y", 1, "1:stop 2:stop", "no primary runs", NULL},
        {"F Y Y", 1, "0:stop 1:stop 2:stop", NULL, NULL},
        {"K Y Y", 1, "1:stop 2:stop", "no primary runs", NULL},
        /* All-primary shape: one primary observed running is enough; nobody is stopped. */
        {"O O P", 0, "", NULL, "NoPrimary"},
        {"Q A P", 0, "", NULL, "NoPrimary"},
        /* All-primary, every primary unobserved: waited for. */
        {"O Q A", 0, "", "was primary and is not observed stopped", "NoPrimary"},
    };
    run_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/* The wait for an unobserved primary on a silent node is a Warning (the admin may have to look at rssd on
 * that node); a report that only predates the epoch (seconds after a leader change) is not. */
static void test_unobserved_primary_warning(void **state)
{
    (void)state;
    static const struct {
        const char *world;
        bool warning;
    } rows[] = {{"O Y Y", false}, {"Q Y Y", true}, {"A Y Y", true}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].world, 1, true, 0);
        struct rss_plan p;
        run(&w, &p);
        const struct rss_plan_event *e = find_event(&p, "PrimaryUnobserved");
        if (rows[i].warning) {
            assert_non_null(e);
            assert_int_equal(e->type, RSS_EVENT_WARNING);
        } else {
            assert_true(!e || e->type == RSS_EVENT_NORMAL);
        }
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* Rule 13 in the planner: members of an agent-absent node count as possibly running, so no seed goes on
 * beside them under minimumMembers, and the admin's force-seed is refused. */
static void test_absent_agent_no_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S5 S5 A", 1, true, 1);
    w.prev = cJSON_Parse("{\"lastRecovery\":{\"kind\":\"LightsOut\"}}");
    struct rss_plan p;
    run(&w, &p);
    _cleanup_free_ char *got = summary(&p);
    assert_string_equal(got, "");
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    w.force_seed = "rss-db-0";
    run(&w, &p);
    _cleanup_free_ char *got2 = summary(&p);
    assert_string_equal(got2, "");
    rss_plan_free(&p);
    world_free(&w);
}

/* A new cluster under minimumMembers: a member whose pod was created moments ago has not had time to
 * report; the planner waits for it (no MemberSkipped Warning on every create) until 30 s after its pod
 * was created. A lights-out recovery gets no such grace (the admin's policy applies at once), nor does a
 * member created long ago. */
static void test_new_cluster_grace(void **state)
{
    (void)state;
    static const struct {
        int64_t age_ms; /* how long ago rss-db-2's pod was created (0: unknown) */
        bool recovered; /* status.lastRecovery: a lights-out, not a new cluster */
        const char *want;
    } rows[] = {
        {2000, false, ""},    {29000, false, ""},     {30000, false, "0:seed"},
        {0, false, "0:seed"}, {2000, true, "0:seed"}, {600000, false, "0:seed"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, "S0 S0 ?", 1, true, 2);
        if (rows[i].recovered)
            w.prev = cJSON_Parse("{\"lastRecovery\":{\"kind\":\"Bootstrap\"}}");
        for (size_t k = 0; k < w.n; k++)
            w.m[k].created_ms = NOW - 60000;
        find(&w, 2)->created_ms = rows[i].age_ms ? NOW - rows[i].age_ms : 0;
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *got = summary(&p);
        if (strcmp(got, rows[i].want))
            fail_msg("row %zu: want '%s', got '%s' (%s)", i, rows[i].want, got, status_str(&p, "message"));
        bool skipped = find_event(&p, "MemberSkipped") != NULL;
        assert_int_equal(skipped, rows[i].want[0] != '\0');
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* The member not created yet (the StatefulSet is slow) of a cluster born moments ago is waited for too. */
static void test_new_cluster_grace_no_pod(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S0 S0 -", 1, true, 2);
    for (size_t k = 0; k < w.n; k++)
        w.m[k].created_ms = NOW - 3000;
    struct rss_plan p;
    run(&w, &p);
    _cleanup_free_ char *got = summary(&p);
    assert_string_equal(got, "");
    rss_plan_free(&p);
    w.now = NOW + 40000;
    run(&w, &p);
    _cleanup_free_ char *got2 = summary(&p);
    assert_string_equal(got2, "0:seed");
    rss_plan_free(&p);
    world_free(&w);
}

/* A join written ahead on a node that died holds the next join only while its hook may still run there
 * (its timeout and the stop's after the write-ahead): after that the node's agent has fenced it, and
 * waiting on longer blocked every later join and the rollout until the node came back. */
static void test_dead_join_bounded(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"P j S5", 1, "", "waiting for rss-db-1 to finish starting", NULL},
        {"P J S5", 1, "2:secondary(0)", NULL, NULL},
    };
    run_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/* spec.suspend completes although a member is failed or its role unknown (it is stopped, which makes it
 * clear), or its node is dead (its member is stopped; its sequence is asked again at resume). A silent
 * node's member is still waited for: it may run. */
static void test_suspend_unclear(void **state)
{
    (void)state;
    static const struct {
        const char *world;
        const char *want;
        const char *message;
    } rows[] = {
        {"S5 F S5", "1:stop", NULL},      {"S5 U S5", "1:stop", NULL},    {"Y F P", "0:stop", NULL},
        {"S5 D7 S5", "replicas=0", NULL}, {"S5 Q S5", "", "node silent"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].world, 1, true, 0);
        w.spec.suspend = true;
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *got = summary(&p);
        if (strcmp(got, rows[i].want) ||
            (rows[i].message && !strstr(status_str(&p, "message"), rows[i].message)))
            fail_msg("row %zu '%s': want '%s', got '%s' (%s)", i, rows[i].world, rows[i].want, got,
                     status_str(&p, "message"));
        if (!strcmp(rows[i].want, "replicas=0")) {
            const cJSON *seqs = cJSON_GetObjectItem(cJSON_GetObjectItem(p.status, "suspended"), "sequences");
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(seqs, "rss-db-1")), "unknown");
        }
        rss_plan_free(&p);
        world_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unobserved_primary_table), cmocka_unit_test(test_unobserved_primary_warning),
        cmocka_unit_test(test_absent_agent_no_seed),     cmocka_unit_test(test_new_cluster_grace),
        cmocka_unit_test(test_new_cluster_grace_no_pod), cmocka_unit_test(test_dead_join_bounded),
        cmocka_unit_test(test_suspend_unclear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
