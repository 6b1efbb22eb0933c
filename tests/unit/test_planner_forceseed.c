/* test_planner_forceseed.c -- row 6b: the force-seed check the planner and `kubectl rss force-seed` share,
 * as a table, and the planner carrying out the admin's force-seed (worlds in planner_fixture.h tokens). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rss/forceseed.h"
#include "planner_fixture.h"

#define M(p, e, l)                                                                                           \
    {                                                                                                        \
        .pod = (p), .exists = (e), .live = (l)                                                               \
    }

static void test_table(void **state)
{
    (void)state;
    static const struct rss_forceseed_member stopped[] = {M("db-0", true, false), M("db-1", true, false),
                                                          M("db-2", true, false)};
    static const struct rss_forceseed_member one_runs[] = {M("db-0", true, false), M("db-1", true, true),
                                                           M("db-2", true, false)};
    static const struct rss_forceseed_member gone[] = {M("db-0", true, false), M("db-1", false, false),
                                                       M("db-2", true, true)};
    static const struct {
        const char *want;
        const struct rss_forceseed_member *m;
        size_t n;
        enum rss_forceseed_verdict v;
        size_t index;
        const char *runner;
    } rows[] = {
        {"db-1", stopped, 3, RSS_FORCESEED_ALLOWED, 1, NULL},
        {"db-9", stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL},
        {"db-", stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL}, /* a prefix is not the pod */
        {"db-0", one_runs, 3, RSS_FORCESEED_RUNNING, 0, "db-1"},
        {"db-1", one_runs, 3, RSS_FORCESEED_RUNNING, 1, "db-1"}, /* the running member itself too */
        {"db-1", gone, 3, RSS_FORCESEED_NO_MEMBER, 3, "db-2"},   /* its pod is gone: missing comes first */
        {"db-0", gone, 3, RSS_FORCESEED_RUNNING, 0, "db-2"},
        {"db-0", stopped, 0, RSS_FORCESEED_NO_MEMBER, 0, NULL},
        {NULL, stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t at = 99;
        const char *who = "x";
        enum rss_forceseed_verdict v = rss_forceseed_check(rows[i].want, rows[i].m, rows[i].n, &at, &who);
        assert_int_equal(v, rows[i].v);
        assert_int_equal(at, rows[i].index);
        if (rows[i].runner)
            assert_string_equal(who, rows[i].runner);
        else
            assert_null(who);
        assert_int_equal(rss_forceseed_check(rows[i].want, rows[i].m, rows[i].n, NULL, NULL), rows[i].v);
    }
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_NO_MEMBER), "no such member pod");
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_RUNNING), "a member runs or may run");
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_ALLOWED), "");
}

/* NOW is 2023-11-14T22:13:20Z. */
#define SINCE   (NOW - 20400) /* 22:12:59.6: said as 22:12:59, rounded down */
#define DEAD_AT (NOW + 35500) /* 22:13:55.5: said as 22:13:56, rounded up (a retry then is not early) */

/* The refusal in words (issue 35, fault 6): the member that may run, why (its report, an action in
 * flight, its node's silence and since when, an absent agent), and when the leader will know (the end of
 * the node's dead window). Each row is one whole member list; every row's words must hold each of its
 * phrases. */
static void test_explain_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        struct rss_forceseed_member runner;
        bool other; /* a second live member after it */
        const char *has[4];
    } rows[] = {
        {"the measured case: the node of a primary is silent, the leader has not judged it yet",
         {.pod = "db-2",
          .exists = true,
          .live = true,
          .role = "primary",
          .node = "node-2",
          .node_state = RSS_FORCESEED_NODE_SILENT,
          .silent_since_ms = SINCE,
          .dead_at_ms = DEAD_AT},
         false,
         {"force-seed of db-0 refused: a member runs or may run: db-2 last reported primary, and its node "
          "node-2 has been silent since 2023-11-14T22:12:59Z; the leader judges node-2 dead (its members "
          "stopped) when its dead window ends at 2023-11-14T22:13:56Z (in 36 s) and node-2's kubelet is "
          "seen down: retry after that"}},
        {"the window has ended, the kubelet is not read down yet",
         {.pod = "db-2",
          .exists = true,
          .live = true,
          .role = "primary",
          .node = "node-2",
          .node_state = RSS_FORCESEED_NODE_SILENT,
          .silent_since_ms = SINCE,
          .dead_at_ms = NOW - 1},
         false,
         {"its dead window has ended, the leader waits to see node-2's kubelet down"}},
        {"an absent agent: the kubelet is Ready",
         {.pod = "db-2",
          .exists = true,
          .live = true,
          .role = "secondary",
          .node = "node-2",
          .node_state = RSS_FORCESEED_NODE_ABSENT,
          .silent_since_ms = SINCE},
         false,
         {"db-2 last reported secondary, and the agent on its node node-2 has been silent since "
          "2023-11-14T22:12:59Z, past its dead window",
          "an absent agent, not a dead node, so the member may run on",
          "once rssd runs on node-2 again or its kubelet is seen down"}},
        {"a start in flight on a live node",
         {.pod = "db-1",
          .exists = true,
          .live = true,
          .role = "starting",
          .action = "seed",
          .node = "node-1",
          .node_state = RSS_FORCESEED_NODE_ALIVE},
         false,
         {"db-1 has its seed in flight (written ahead, not finished), on node node-1 whose agent is alive: "
          "retry once it has finished"}},
        {"it runs on a live node, with another",
         {.pod = "db-1",
          .exists = true,
          .live = true,
          .role = "primary",
          .node = "node-1",
          .node_state = RSS_FORCESEED_NODE_ALIVE},
         true,
         {"it runs, and a force-seed is for a cluster where nothing runs",
          "; 1 other member(s) run or may run too: db-3"}},
        {"an earlier report on a live node",
         {.pod = "db-1",
          .exists = true,
          .live = true,
          .role = "primary",
          .stale = true,
          .node = "node-1",
          .node_state = RSS_FORCESEED_NODE_ALIVE},
         false,
         {"db-1 last reported primary (an earlier report, not confirmed since)",
          "its agent reports again within a reconcileInterval; retry then"}},
        {"kubectl rss only: past the window with the kubelet down",
         {.pod = "db-2",
          .exists = true,
          .live = true,
          .role = "primary",
          .node = "node-2",
          .node_state = RSS_FORCESEED_NODE_DOWN,
          .silent_since_ms = SINCE},
         false,
         {"with its kubelet down: the leader judges it dead (its members stopped) at its next plan; retry in "
          "a "
          "few seconds"}},
        {"no heartbeat Lease",
         {.pod = "db-2",
          .exists = true,
          .live = true,
          .role = "primary",
          .node = "node-2",
          .node_state = RSS_FORCESEED_NODE_NO_HEARTBEAT},
         false,
         {"its node node-2 has no heartbeat Lease: the leader cannot judge it"}},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rss_forceseed_member m[4] = {M("db-0", true, false), rows[i].runner, M("db-2x", true, false),
                                            M("db-3", true, rows[i].other)};
        enum rss_forceseed_verdict v = rss_forceseed_check("db-0", m, 4, NULL, NULL);
        assert_int_equal(v, RSS_FORCESEED_RUNNING);
        _cleanup_free_ char *got = rss_forceseed_explain("db-0", v, m, 4, NOW);
        assert_non_null(got);
        for (size_t k = 0; k < 4 && rows[i].has[k]; k++)
            if (!strstr(got, rows[i].has[k]))
                fail_msg("row %zu (%s): no '%s' in '%s'", i, rows[i].name, rows[i].has[k], got);
        if (!rows[i].other && strstr(got, "other member"))
            fail_msg("row %zu (%s): others named in '%s'", i, rows[i].name, got);
    }
    struct rss_forceseed_member none[] = {M("db-0", true, false)};
    _cleanup_free_ char *missing = rss_forceseed_explain("db-9", RSS_FORCESEED_NO_MEMBER, none, 1, NOW);
    assert_string_equal(missing, "force-seed of db-9 refused: no such member pod");
    assert_null(rss_forceseed_explain("db-0", RSS_FORCESEED_ALLOWED, none, 1, NOW));
}

/* The planner's refusal carries those words, from the leader's liveness view in its input: the node's
 * silence and the time until its dead window ends (leader_snapshot.c), turned into wall times here. */
static void test_refusal_words(void **state)
{
    (void)state;
    static const struct {
        const char *world;
        const char *has;
    } rows[] = {
        /* One node off after a lights-out; the admin's force-seed comes before the leader judged it. */
        {"S10 S20 Q",
         "force-seed of rss-db-0 refused: a member runs or may run: rss-db-2 last reported primary, and its "
         "node node-2 has been silent since 2023-11-14T22:12:59Z; the leader judges node-2 dead (its members "
         "stopped) when its dead window ends at 2023-11-14T22:13:56Z (in 36 s) and node-2's kubelet is seen "
         "down: retry after that"},
        {"S10 S20 A",
         "the agent on its node node-2 has been silent since 2023-11-14T22:12:59Z, past its dead "
         "window, but node-2's kubelet is not seen down: an absent agent, not a dead node"},
        {"S10 T S20",
         "rss-db-1 has its primary in flight (written ahead, not finished), on node node-1 whose "
         "agent is alive: retry once it has finished"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].world, 0, false, 0);
        struct rss_member_input *q = find(&w, 2);
        if (!q->node_alive) {
            q->node_silent_ms = NOW - SINCE;
            q->node_dead_in_ms = q->agent_absent ? 0 : DEAD_AT - NOW;
        }
        w.force_seed = "rss-db-0";
        struct rss_plan p;
        run(&w, &p);
        assert_true(p.clear_force_seed);
        const struct rss_plan_event *e = find_event(&p, "ForceSeedRefused");
        assert_non_null(e);
        assert_int_equal(e->type, RSS_EVENT_WARNING);
        if (!strstr(e->message, rows[i].has) || !strstr(e->message, "; the annotation is removed"))
            fail_msg("row %zu '%s': Warning '%s'", i, rows[i].world, e->message);
        /* The status says the same, for `kubectl rss status`. */
        if (!strstr(status_str(&p, "message"), rows[i].has))
            fail_msg("row %zu '%s': status message '%s'", i, rows[i].world, status_str(&p, "message"));
        assert_null(find_event(&p, "ForceSeed"));
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* The admin's override: seeds the named member although the policy waits; refused (and removed) while a
 * member runs or for a pod that is not a member; waits (kept) until the member reported as stopped. */
static void test_force_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 D60 E", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "the policy waits for the down member and the garbage sequence");
    assert_false(p.clear_force_seed);
    rss_plan_free(&p);
    w.force_seed = "rss-db-0";
    run(&w, &p);
    expect(&p, "0:seed", "force-seed");
    assert_true(p.clear_force_seed);
    const struct rss_plan_event *e = find_event(&p, "ForceSeed");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "rss-db-0 seeds (sequence 10)"));
    const cJSON *lr = cJSON_GetObjectItem(p.status, "lastRecovery");
    assert_string_equal(cJSON_GetObjectItem(lr, "kind")->valuestring, "ForceSeed");
    rss_plan_free(&p);
    /* Not a member: refused, removed, nothing else decided in that plan. */
    w.force_seed = "rss-db-7";
    run(&w, &p);
    expect(&p, "", "no such member");
    assert_true(p.clear_force_seed);
    assert_non_null(find_event(&p, "ForceSeedRefused"));
    rss_plan_free(&p);
    world_free(&w);
    /* A member runs: refused, removed, the running cluster goes on as usual. */
    world_init(&w, "P P S5", 0, false, 0);
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "2:primary(0,1)", "refused while running");
    assert_true(p.clear_force_seed);
    assert_non_null(find_event(&p, "ForceSeedRefused"));
    assert_null(find_event(&p, "ForceSeed"));
    rss_plan_free(&p);
    world_free(&w);
    /* The named member has not reported yet: wait, keep the annotation. */
    world_init(&w, "? S1 S2", 0, false, 0);
    w.force_seed = "rss-db-0";
    run(&w, &p);
    expect(&p, "", "waits for the named member");
    assert_false(p.clear_force_seed);
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table), cmocka_unit_test(test_explain_table),
                                       cmocka_unit_test(test_refusal_words),
                                       cmocka_unit_test(test_force_seed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
