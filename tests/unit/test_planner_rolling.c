/* test_planner_rolling.c -- the rolling update of the application in a running cluster: one member at a time,
 * and a halted rollout (the pods that cannot start are test_planner_rollout.c's). Worlds are written in the
 * tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* Rolling update (StatefulSet OnDelete): one member at a time, secondaries first, then primaries from the
 * highest ordinal: stop, delete the pod, join the recreated one; never a second member down, never a seed.
 * Revisions: o = made from the old template, n = the StatefulSet's updateRevision, - = no pod. */
static void set_revisions(struct world *w, const char *revs)
{
    for (unsigned i = 0; revs[2 * i]; i++) {
        struct rss_member_input *m = find(w, i);
        if (m)
            m->revision = revs[2 * i] == 'n' ? "rev-new" : "rev-old";
        if (!revs[2 * i + 1])
            break;
    }
    w->update_revision = "rev-new";
}

static void test_rollout(void **state)
{
    (void)state;
    static const struct {
        const char *members, *revs, *want, *event;
    } steps[] = {
        {"P Y P", "o o o", "1:stop", "RollingUpdate"},      /* the secondary first */
        {"P S5 P", "o o o", "1:delete", "RollingUpdate"},   /* stopped: recreated, not restarted */
        {"P - P", "o - o", "", NULL},                       /* waits for the new pod */
        {"P ? P", "o n o", "", NULL},                       /* ... and its first report */
        {"P S5 P", "o n o", "1:secondary(0,2)", "Joining"}, /* it joins like any stopped member */
        {"P T P", "o n o", "", NULL},                       /* one at a time: nothing while it starts */
        {"P Y P", "o n o", "2:stop", "RollingUpdate"},      /* then the primaries, highest ordinal first */
        {"P Y S5", "o n o", "2:delete", "RollingUpdate"},
        {"P Y S5", "o n n", "2:primary(0)", "Joining"},
        {"P Y P", "o n n", "0:stop", "RollingUpdate"}, /* another primary stays up */
        {"S5 Y P", "o n n", "0:delete", "RollingUpdate"},
        {"S5 Y P", "n n n", "0:primary(2)", "Joining"},
        {"P Y P", "n n n", "", NULL},                         /* done: nothing more */
        {"P S5 P", "o n o", "1:secondary(0,2)", "Joining"},   /* an updated member that stopped rejoins */
        {"P F P", "o n o", "1:stop", "StoppingFailedMember"}, /* a failed updated one is repaired first */
        {"S5 Y P", "o n o", "0:delete", "RollingUpdate"},     /* an outdated one already down: recreated */
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct world w;
        world_init(&w, steps[i].members, 2, true, 0);
        set_revisions(&w, steps[i].revs);
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *row = rss_xasprintf("%s [%s]", steps[i].members, steps[i].revs);
        expect(&p, steps[i].want, row);
        if (steps[i].event && !find_event(&p, steps[i].event))
            fail_msg("%s: no %s event", row, steps[i].event);
        for (size_t k = 0; k < p.n_patches; k++)
            assert_int_not_equal(p.patches[k].desired.action, RSS_ACTION_SEED);
        rss_plan_free(&p);
        world_free(&w);
    }
    /* Without a known updateRevision (the controller has not seen the new template yet), nothing rolls. */
    struct world w;
    world_init(&w, "P Y P", 2, true, 0);
    set_revisions(&w, "o o o");
    w.update_revision = NULL;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "no updateRevision");
    rss_plan_free(&p);
    world_free(&w);
    /* A single primary is never stopped for a rollout: the admin deletes its pod. */
    world_init(&w, "P", 1, false, 0);
    set_revisions(&w, "o");
    run(&w, &p);
    expect(&p, "", "single primary");
    assert_non_null(strstr(status_str(&p, "message"), "would leave no primary running"));
    rss_plan_free(&p);
    world_free(&w);
    /* A member silent on its node holds the rollout: no second member goes down. */
    world_init(&w, "P L Y", 2, true, 0);
    set_revisions(&w, "o n o");
    run(&w, &p);
    expect(&p, "", "silent member");
    rss_plan_free(&p);
    world_free(&w);
    /* A member on a dead node (nodeLossPolicy Wait) holds it too, named in the status, whether it is
     * outdated itself or not: its pod is not deleted (its data may be the newest) and no other member
     * goes down beside it. */
    static const char *const dead_revs[] = {"o o o", "n n o", "o o n"};
    for (size_t i = 0; i < 3; i++) {
        world_init(&w, "P Y D5", 2, true, 0);
        set_revisions(&w, dead_revs[i]);
        run(&w, &p);
        expect(&p, "", dead_revs[i]);
        assert_non_null(strstr(status_str(&p, "message"), "rss-db-2"));
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* An updated member that fails halts the rollout with a Warning naming it. */
static void test_rollout_halted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 P", 2, true, 0);
    set_revisions(&w, "o n o");
    struct rss_member_input *m1 = find(&w, 1);
    set_last(m1, RSS_ACTION_SECONDARY, EPOCH, 9, RSS_RESULT_FAILED);
    struct rss_plan p;
    run(&w, &p);
    const struct rss_plan_event *e = find_event(&p, "RolloutHalted");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "rss-db-1 failed after its update"));
    /* No member of the old revision is stopped meanwhile. */
    for (unsigned o = 0; o < 3; o += 2)
        assert_true(!patch_of(&p, o) || !patch_of(&p, o)->set_desired);
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollout),
        cmocka_unit_test(test_rollout_halted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
