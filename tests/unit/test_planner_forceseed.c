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

static void test_table(void **state)
{
    (void)state;
    static const struct rss_forceseed_member stopped[] = {
        {"db-0", true, false}, {"db-1", true, false}, {"db-2", true, false}};
    static const struct rss_forceseed_member one_runs[] = {
        {"db-0", true, false}, {"db-1", true, true}, {"db-2", true, false}};
    static const struct rss_forceseed_member gone[] = {
        {"db-0", true, false}, {"db-1", false, false}, {"db-2", true, true}};
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
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_RUNNING), "a member runs or is starting");
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_ALLOWED), "");
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table), cmocka_unit_test(test_force_seed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
