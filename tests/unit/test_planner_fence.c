/* test_planner_fence.c -- rows 1 and 3: epoch claims, fencing before deciding (rules 4, 9), and starts on
 * nodes judged dead (retracted; a start in flight there blocks a seed: finding F4). Worlds are written in the
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

/* ---- rules 4 and 9: fencing and deposition ---- */

static void test_fence_before_deciding(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    /* A new leader (epoch 6): the pods carry epoch 5 from its predecessor; one has none at all. */
    w.epoch = EPOCH + 1;
    find(&w, 2)->has_desired = false;
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.fencing);
    expect(&p, "", "fence");
    assert_int_equal(p.n_patches, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(p.patches[i].set_desired);
        assert_int_equal(p.patches[i].desired.action, RSS_ACTION_NONE);
        assert_int_equal(p.patches[i].desired.epoch, EPOCH + 1);
        assert_non_null(p.patches[i].resource_version);
    }
    assert_non_null(find_event(&p, "Fencing"));
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    /* Every pod carries epoch 6, but the reports were made under epoch 5: they may predate a power
     * cut, so it waits for the agents to re-probe instead of deciding on them. */
    for (size_t i = 0; i < w.n; i++)
        set_desired(&w.m[i], EPOCH + 1, RSS_ACTION_NONE, 0, 0);
    run(&w, &p);
    assert_false(p.fencing);
    expect(&p, "", "after fence, stale reports");
    assert_non_null(find_event(&p, "WaitingForMembers"));
    rss_plan_free(&p);
    /* Once the agents republished under epoch 6, it decides. */
    for (size_t i = 0; i < w.n; i++)
        w.m[i].observed.lease_epoch = EPOCH + 1;
    run(&w, &p);
    assert_false(p.fencing);
    expect(&p, "0:seed", "after fence");
    assert_int_equal(patch_of(&p, 0)->desired.epoch, EPOCH + 1);
    rss_plan_free(&p);
    world_free(&w);
}

static void test_fence_keeps_pending_start(void **state)
{
    (void)state;
    /* The old leader's seed was written ahead (starting) before the new leader came: the new leader fences,
     * and afterwards must treat the member as running: no second seed (rule 8, trace 3). */
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    struct rss_member_input *m = find(&w, 0);
    set_desired(m, EPOCH + 1, RSS_ACTION_NONE, 0, 0);
    set_observed(m, RSS_ROLE_STARTING, GEN, true, 9, NULL);
    set_last(m, RSS_ACTION_SEED, EPOCH, 11, RSS_RESULT_PENDING);
    for (size_t i = 0; i < w.n; i++)
        w.m[i].desired.epoch = EPOCH + 1;
    w.epoch = EPOCH + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "pending seed from the old leader");
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    world_free(&w);
}

/* Rule 4 as corrected: a pod's claim of a newer epoch never deposes the leader by itself (any
 * namespace user can annotate a pod). The plan flags it (the leader then re-reads the Lease), says why
 * in a Warning, and overwrites a forged desired by fencing it. */
static void test_epoch_claims(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    set_desired(find(&w, 1), EPOCH + 1000, RSS_ACTION_SEED, 1, GEN);
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.epoch_claims);
    assert_true(p.fencing);
    const struct rss_plan_patch *pt = patch_of(&p, 1);
    assert_non_null(pt);
    assert_true(pt->set_desired);
    assert_int_equal(pt->desired.epoch, EPOCH);
    assert_int_equal(pt->desired.action, RSS_ACTION_NONE);
    const struct rss_plan_event *e = find_event(&p, "InvalidEpoch");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(p.status);
    rss_plan_free(&p);
    /* An observed annotation claiming a newer Lease: flagged, and that report is not trusted. */
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_NONE, 0, 0);
    find(&w, 2)->observed.lease_epoch = EPOCH + 2;
    run(&w, &p);
    assert_true(p.epoch_claims);
    assert_false(p.fencing);
    expect(&p, "", "observed epoch claim");
    assert_non_null(find_event(&p, "InvalidEpoch"));
    rss_plan_free(&p);
    world_free(&w);
}

/* Model trace F1: the leader issued `seed` on a member whose node was then cut off before its agent
 * took it up. With minimumMembers the leader may go on without that member, but the seed is still on
 * the pod, and the agent would run it when the node comes back: a second bootstrap. The planner first
 * retracts it (desired none, a CAS), says so, and decides nothing else in that plan. */
static void test_dead_node_start_retracted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 D60 S20", 0, false, 2);
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_SEED, 7, GEN);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "no seed while a dead node still holds an unacknowledged start");
    assert_true(p.retracting && !p.fencing); /* re-plan from a fresh LIST once the retraction is in */
    bool retracted = false;
    for (size_t i = 0; i < p.n_patches; i++)
        retracted |= p.patches[i].ordinal == 1 && p.patches[i].set_desired &&
                     p.patches[i].desired.action == RSS_ACTION_NONE && p.patches[i].resource_version;
    assert_true(retracted);
    const struct rss_plan_event *e = find_event(&p, "ActionRetracted");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    rss_plan_free(&p);
    /* The retraction landed: now the admin's opt-in applies, with its Warning. */
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_NONE, 0, 0);
    run(&w, &p);
    expect(&p, "2:seed", "minimumMembers goes on once the stale start is gone");
    assert_non_null(find_event(&p, "MemberSkipped"));
    rss_plan_free(&p);
    /* Without the opt-in the retraction happens too (the seed will be decided again when it reports). */
    world_free(&w);
    world_init(&w, "S1 D60 S20", 0, false, 0);
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_PRIMARY, 7, GEN);
    run(&w, &p);
    expect(&p, "", "a stale primary is retracted too");
    assert_non_null(find_event(&p, "ActionRetracted"));
    rss_plan_free(&p);
    world_free(&w);
}

/* Finding F4 (docs/model.md): node 1 was cut off while its seed hook ran (its last report is the
 * write-ahead) and judged dead; the unacknowledged seed was retracted. Under minimumMembers the plan
 * seeded member 2 at once, while the hook on node 1 could still bootstrap a second cluster. Now it waits
 * until the seed hook's timeout and the dead window have passed since the write-ahead (the window holds
 * the stop's timeout, the kill and the margin for clock skew between the agent and the leader: counted
 * once), and says so in a Warning. */
static void test_dead_node_start_in_flight(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 W60 S20", 0, false, 2);
    w.dead_after = 35000 + 600000 + 5000; /* fence + margin, the 600 s stop timeout, the kill */
    struct rss_member_input *m = find(&w, 1);
    const int64_t until = m->observed.time_ms + 600000 + w.dead_after;
    struct rss_plan p;
    w.now = until - 1;
    run(&w, &p);
    expect(&p, "", "the seed hook on the dead node may still run");
    const struct rss_plan_event *e = find_event(&p, "WaitingForStart");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    if (!strstr(e->message, "rss-db-1's seed (5-901) may still be running on node") ||
        !strstr(e->message, "no seed before"))
        fail_msg("message: %s", e->message);
    rss_plan_free(&p);
    w.now = until;
    run(&w, &p);
    expect(&p, "2:seed", "the hook and the stop timed out: the admin's opt-in applies");
    assert_non_null(find_event(&p, "MemberSkipped"));
    rss_plan_free(&p);
    /* A write-ahead without a time cannot be bounded: it waits, and so does the admin's force-seed
     * (until the node reports again). */
    m->observed.time_ms = 0;
    w.now = NOW + 36000000;
    run(&w, &p);
    expect(&p, "", "no time: wait");
    assert_non_null(find_event(&p, "WaitingForStart"));
    rss_plan_free(&p);
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "", "no force-seed while the start may run");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_before_deciding),
        cmocka_unit_test(test_fence_keeps_pending_start),
        cmocka_unit_test(test_epoch_claims),
        cmocka_unit_test(test_dead_node_start_retracted),
        cmocka_unit_test(test_dead_node_start_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
