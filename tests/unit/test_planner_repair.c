/* test_planner_repair.c -- rows 5 and 6: failure accounting, a failed member stopped, one at the limit
 * stopped then replaced, an outage or a node outage counted against no one, a streak reset once stable.
 * Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

static void test_repeated_failure_deletes_pod(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-8\",\"role\":\"stopped\",\"generation\":3}]}");
    struct rss_member_input *m = find(&w, 1);
    /* A third failed start (action 5-9): failures reach spec.recovery.maxFailures (3). */
    set_desired(m, EPOCH, RSS_ACTION_PRIMARY, 9, GEN - 1);
    set_last(m, RSS_ACTION_PRIMARY, EPOCH, 9, RSS_RESULT_FAILED);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:delete", "third failure");
    assert_string_equal(p.deletes[0].uid, "uid-1-1");
    assert_non_null(find_event(&p, "ActionFailed"));
    assert_true(find_event(&p, "DeletingPod")->type == RSS_EVENT_WARNING);
    rss_plan_free(&p);
    /* The same failed action seen again is not counted twice: with countedAction 5-9 it stays at 2... */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-9\",\"role\":\"stopped\",\"generation\":3}]}");
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "counted once");
    assert_null(find_event(&p, "ActionFailed"));
    rss_plan_free(&p);
    /* ...and a new pod (new uid) starts with a clean record. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"old-uid\",\"failures\":9,"
                         "\"role\":\"stopped\",\"generation\":3}]}");
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "new pod");
    rss_plan_free(&p);
    world_free(&w);
}

/* Every member went down together (a power cut): nobody's fault. Three cuts in a row must not delete
 * the pods, which only slows the recovery down; the recovery seeds the highest sequence instead. */
static void test_outage_is_no_member_failure(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 S30 S20", 0, false, 0);
    w.prev = cJSON_Parse(
        "{\"memberStatus\":["
        "{\"ordinal\":0,\"podUID\":\"uid-0-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1},"
        "{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1},"
        "{\"ordinal\":2,\"podUID\":\"uid-2-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1}]}");
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "after a power cut");
    assert_null(find_event(&p, "MemberCrashed"));
    assert_null(find_event(&p, "DeletingPod"));
    rss_plan_free(&p);
    /* The same member going down alone while the others run is a crash, and it counts. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":0,"
                         "\"role\":\"primary\",\"generation\":1}]}");
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, true, 10, NULL);
    set_observed(find(&w, 2), RSS_ROLE_PRIMARY, GEN, true, 20, NULL);
    run(&w, &p);
    assert_non_null(find_event(&p, "MemberCrashed"));
    rss_plan_free(&p);
    world_free(&w);
}

static void test_failed_member_stop_then_delete(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P F P", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:stop", "failed -> stop");
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 1);
    rss_plan_free(&p);
    /* The stop fails too, twice more: the pod goes. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-3\",\"role\":\"failed\",\"generation\":3}]}");
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_STOP, 4, GEN);
    set_last(find(&w, 1), RSS_ACTION_STOP, EPOCH, 4, RSS_RESULT_TIMEOUT);
    run(&w, &p);
    expect(&p, "1:delete", "stop timed out");
    assert_non_null(strstr(find_event(&p, "ActionFailed")->message, "timed out"));
    rss_plan_free(&p);
    world_free(&w);
}

/* A member at the failure limit that is still running (failed) is stopped before its pod goes
 * (docs/planner.md); a stopped one is deleted. */
static void test_limit_stops_before_delete(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P F P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":3,"
                         "\"role\":\"failed\",\"generation\":3}]}");
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:stop", "at the limit, failed: stop first");
    rss_plan_free(&p);
    /* The stop succeeded: now the pod is replaced. */
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN, true, 4, NULL);
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_STOP, 4, GEN);
    set_last(find(&w, 1), RSS_ACTION_STOP, EPOCH, 4, RSS_RESULT_OK);
    run(&w, &p);
    expect(&p, "1:delete", "stopped at the limit: delete");
    rss_plan_free(&p);
    world_free(&w);
}

/* The replacement of a pod deleted for failing starts with a clean failure count, even when no plan
 * saw the old and the new pod together (the record of the absent pod keeps the old uid). */
static void test_replacement_starts_clean(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P - P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"old-uid\",\"failures\":3,"
                         "\"role\":\"stopped\",\"generation\":3}]}");
    struct rss_plan p;
    run(&w, &p);
    const cJSON *ms = member_status(&p, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ms, "podUID")), "old-uid");
    assert_int_equal(cJSON_GetObjectItem(ms, "failures")->valuedouble, 3);
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The StatefulSet recreated it: new uid, stopped, with data. */
    remove_pod(&w, 2);
    struct rss_member_input *m = add_pod(&w, 1);
    set_observed(m, RSS_ROLE_STOPPED, GEN, true, 5, NULL);
    m = add_pod(&w, 2);
    set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "replacement joins");
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 0);
    rss_plan_free(&p);
    world_free(&w);
}

static void test_failures_reset_when_stable(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    /* Running in the same generation since long before 2 x reconcileInterval (2 min): streak over. */
    w.prev =
        cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                    "\"role\":\"primary\",\"generation\":3,\"runningSince\":\"2023-11-14T22:00:00Z\"}]}");
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 0);
    rss_plan_free(&p);
    /* Just started: the streak stays. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"role\":\"starting\",\"generation\":3}]}");
    run(&w, &p);
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 2);
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_failure_deletes_pod),
        cmocka_unit_test(test_failed_member_stop_then_delete),
        cmocka_unit_test(test_outage_is_no_member_failure),
        cmocka_unit_test(test_failures_reset_when_stable),
        cmocka_unit_test(test_limit_stops_before_delete),
        cmocka_unit_test(test_replacement_starts_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
