/* test_planner_scale.c -- row 4 and the scale down, row 2 (paused) and row 2b (spec.suspend).
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

/* ---- scale up / down, create, paused, labels, status ---- */

static void test_create_and_scale_up(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "- - -", 0, false, 0);
    w.sts = -1;
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.create_statefulset);
    expect(&p, "replicas=3", "create");
    assert_string_equal(p.phase, "Recovering");
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "P P P - -", 0, false, 0);
    w.sts = 3;
    run(&w, &p);
    expect(&p, "replicas=5", "scale up");
    assert_false(p.create_statefulset);
    assert_non_null(find_event(&p, "ScalingUp"));
    assert_string_equal(p.phase, "Scaling");
    rss_plan_free(&p);
    world_free(&w);
}

struct scale_row {
    const char *members;
    int sts, replicas;
    const char *want;
};

static void test_scale_down_table(void **state)
{
    (void)state;
    static const struct scale_row rows[] = {
        {"P P P P P", 5, 3, "4:stop"},             /* highest ordinal first, replicas untouched */
        {"P P P P S1", 5, 3, "3:stop replicas=4"}, /* 4 stopped: lower past it, stop the next */
        {"P P P S1 S1", 5, 3, "replicas=3"},
        {"P P P S1 -", 5, 3, "replicas=3"},
        {"P P P T P", 5, 3, "4:stop"},            /* a starting member below does not block the stop of 4 */
        {"P P P P T", 5, 3, ""},                  /* 4 is starting: wait */
        {"S1 P P P P", 5, 3, "4:stop"},           /* joins of members that stay happen too... */
        {"S1 S1 S1 P P", 5, 3, "0:primary(3,4)"}, /* ...and with no primary among those that stay, no stop */
        {"P P P", 3, 0, "2:stop"},                /* scale to zero */
        {"S1 S1 S1", 3, 0, "replicas=0"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].members, 0, false, 0);
        rss_spec_clear(&w.spec);
        spec_init(&w.spec, rows[i].replicas, 0, false, 0);
        w.sts = rows[i].sts;
        struct rss_plan p;
        run(&w, &p);
        char name[64];
        snprintf(name, sizeof(name), "scale row %zu '%s'", i, rows[i].members);
        expect(&p, rows[i].want, name);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static void test_paused(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    w.spec.paused = true;
    w.epoch = EPOCH + 1; /* even fencing waits */
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(p.n_patches, 0);
    assert_int_equal(p.set_replicas, -1);
    assert_string_equal(p.phase, "Paused");
    rss_plan_free(&p);
    world_free(&w);
}

/* spec.suspend: one stop at a time, secondaries first, the last primary last; then replicas 0 with
 * the sequences at stop kept in status; resuming scales up and recovers the usual way. */
static void test_suspend(void **state)
{
    (void)state;
    static const struct {
        const char *members, *want;
    } steps[] = {
        {"P Y P", "1:stop"},       /* the secondary first */
        {"P S5 P", "2:stop"},      /* then the primaries, highest ordinal first */
        {"P S5 S7", "0:stop"},     /* the last primary last */
        {"S3 S5 S7", "replicas=0"} /* every member stopped and reported: the StatefulSet goes to 0 */
    };
    struct world w;
    cJSON *prev = NULL;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        world_init(&w, steps[i].members, 2, true, 0);
        w.spec.suspend = true;
        w.prev = prev;
        struct rss_plan p;
        run(&w, &p);
        expect(&p, steps[i].want, steps[i].members);
        assert_string_equal(p.phase, "Suspending");
        prev = cJSON_Duplicate(p.status, true);
        rss_plan_free(&p);
        world_free(&w);
    }
    const cJSON *seqs = cJSON_GetObjectItem(cJSON_GetObjectItem(prev, "suspended"), "sequences");
    assert_string_equal(cJSON_GetObjectItem(seqs, "rss-db-2")->valuestring, "7");
    assert_int_equal(cJSON_GetArraySize(seqs), 3);
    /* Scaled to 0: nothing to do; the record stays. */
    world_init(&w, "- - -", 2, true, 0);
    w.spec.suspend = true;
    w.sts = 0;
    w.prev = prev;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "suspended");
    assert_string_equal(p.phase, "Suspended");
    assert_non_null(cJSON_GetObjectItem(p.status, "suspended"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Resume: the StatefulSet comes back; the recovery then waits for every member as usual. */
    w.spec.suspend = false;
    run(&w, &p);
    expect(&p, "replicas=3", "resume");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suspend),
        cmocka_unit_test(test_create_and_scale_up),
        cmocka_unit_test(test_scale_down_table),
        cmocka_unit_test(test_paused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
