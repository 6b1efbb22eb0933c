/* test_planner_actions.c -- the actions themselves: rule 7 (an action targets a generation; a newer one voids
 * it), rule 8 (nothing new while an issued action is unresolved), and action ids (fresh, deterministic, never
 * reused). Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- rule 7: actions target a generation; anything newer voids them ---- */

static void test_seed_targets_generation(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    find(&w, 1)->observed.generation = 42;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "gen");
    const struct rss_plan_patch *pt = patch_of(&p, 1);
    assert_int_equal(pt->desired.generation, 42);
    assert_int_equal(pt->desired.epoch, EPOCH);
    assert_int_equal(pt->desired.id.epoch, EPOCH);
    assert_int_equal(pt->desired.n_peers, 0);
    assert_string_equal(pt->resource_version, "rv-1"); /* a CAS on what the decision saw (rule 9) */
    rss_plan_free(&p);
    world_free(&w);
}

static void test_newer_generation_voids(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    /* A seed issued for generation 3 was never acknowledged, and the member is now in generation 4. */
    struct rss_member_input *m = find(&w, 1);
    set_desired(m, EPOCH, RSS_ACTION_SEED, 7, GEN);
    m->observed.generation = GEN + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "voided");
    assert_int_equal(patch_of(&p, 1)->desired.generation, GEN + 1);
    assert_true(patch_of(&p, 1)->desired.id.seq > 7); /* a fresh id, never a reused one */
    rss_plan_free(&p);
    /* Same generation, not acknowledged: still unresolved, so no seed anywhere (rule 8). */
    m->observed.generation = GEN;
    run(&w, &p);
    expect(&p, "", "unresolved");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_old_seed_not_reexecuted(void **state)
{
    (void)state;
    /* Trace 1: a seed left on a pod whose container restarted. The member must JOIN, never seed again. */
    struct world w;
    world_init(&w, "P S5 S2", 0, false, 0);
    struct rss_member_input *m = find(&w, 1);
    set_desired(m, EPOCH, RSS_ACTION_SEED, 7, GEN);
    m->observed.generation = GEN + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:primary(0)", "trace 1");
    assert_int_equal(patch_of(&p, 1)->desired.generation, GEN + 1);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- rule 8: nothing new while an issued action is unresolved ---- */

struct unresolved_row {
    enum rss_action action;
    enum rss_result ack; /* RSS_RESULT_PENDING with ack=false: no ack at all */
    bool acked;
    const char *want;
};

static void test_unresolved_table(void **state)
{
    (void)state;
    static const struct unresolved_row rows[] = {
        {RSS_ACTION_SEED, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_PRIMARY, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_STOP, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_SEED, RSS_RESULT_PENDING, true, ""}, /* written ahead: starting counts as running */
        {RSS_ACTION_SEED, RSS_RESULT_REJECTED, true, "0:seed"},
        {RSS_ACTION_SEED, RSS_RESULT_INTERRUPTED, true, "0:seed"},
        {RSS_ACTION_STOP, RSS_RESULT_OK, true, "0:seed"},
        {RSS_ACTION_SEED, RSS_RESULT_FAILED, true, "0:seed"}, /* retried on the same member (rule 2) */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, "S9 S5 S2", 0, false, 0);
        struct rss_member_input *m = find(&w, 0);
        set_desired(m, EPOCH, rows[i].action, 3, GEN);
        if (rows[i].acked)
            set_last(m, rows[i].action, EPOCH, 3, rows[i].ack);
        struct rss_plan p;
        run(&w, &p);
        char name[64];
        snprintf(name, sizeof(name), "unresolved row %zu", i);
        expect(&p, rows[i].want, name);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static void test_unresolved_elsewhere_blocks_seed(void **state)
{
    (void)state;
    /* Member 2 holds an unacknowledged stop: member 0 (highest) must not seed yet. */
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    set_desired(find(&w, 2), EPOCH, RSS_ACTION_STOP, 4, GEN);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "unresolved stop");
    assert_non_null(strstr(status_str(&p, "message"), "waiting for rss-db-2 to resolve stop (5-4)"));
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- action ids: fresh, deterministic, never reused ---- */

static void test_action_ids(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    w.prev = cJSON_Parse("{\"lastActionSeq\":41}");
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(patch_of(&p, 1)->desired.id.seq, 42);
    assert_int_equal(p.last_action_seq, 42);
    assert_int_equal(cJSON_GetObjectItem(p.status, "lastActionSeq")->valuedouble, 42);
    rss_plan_free(&p);
    /* The status write was lost but an acknowledged action 5-50 is on a pod: continue after it. */
    set_last(find(&w, 0), RSS_ACTION_STOP, EPOCH, 50, RSS_RESULT_OK);
    run(&w, &p);
    assert_int_equal(patch_of(&p, 1)->desired.id.seq, 51);
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_targets_generation),
        cmocka_unit_test(test_newer_generation_voids),
        cmocka_unit_test(test_old_seed_not_reexecuted),
        cmocka_unit_test(test_unresolved_table),
        cmocka_unit_test(test_unresolved_elsewhere_blocks_seed),
        cmocka_unit_test(test_action_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
