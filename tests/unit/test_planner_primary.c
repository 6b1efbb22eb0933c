/* test_planner_primary.c -- the planner in tables for one primary with secondaries and absent agents:
 * rule 12 (unobserved is not stopped), rule 13 (an absent agent is not a dead node) and a new cluster's
 * moment to report under minimumMembers.
 *
 * Worlds are written in the tokens of planner_fixture.h (O, Q, A, K, Z, J and j are this file's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

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
        /* The primary's node came back from a power cut (or its rssd restarted): its report is from the
         * rssd that ran there before, written under this epoch, and the pod may still name that container. */
        {"R Y Y", 1, "", "its last report is from the rssd that node node-0 ran before", "NoPrimary"},
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
        /* ... but a recovery cannot start before the dead node's member reports (rule 3): the
         * secondaries go on serving reads until it can (issue 35: stop only what a recovery that can
         * proceed needs stopped). */
        {"K Y Y", 1, "", "a recovery would wait for rss-db-0 (its node is down)", "NoPrimary"},
        {"S5 D Y", 1, "", "a recovery would wait for rss-db-1 (its node is down)", "NoPrimary"},
        {"S5 - Y", 1, "", "a recovery would wait for rss-db-1 (its pod does not exist)", "NoPrimary"},
        /* All-primary shape: one primary observed running is enough; nobody is stopped. */
        {"O O P", 0, "", NULL, "NoPrimary"},
        {"R R P", 0, "", NULL, "NoPrimary"},
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
