/* test_planner_running.c -- rows 7 and 8 in tables: the running cluster (joins, failover, primaries and
 * secondaries), stale reports that are no peers, joinConcurrency, a late member newer than the seed held
 * back. Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- table 2: a running cluster (joins, failover, primaries/secondaries, repairs) ---- */

static const struct plan_row running_rows[] = {
    /* after the seed runs, the others join one at a time, highest sequence first, with the primaries as peers
     */
    {"join", "P S10 S30", 0, false, 0, NO_PIN, 0, "2:primary(0)", "Joining", false},
    {"join", "P S30 S10", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P S10 S10", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P P S10", 0, false, 0, NO_PIN, 0, "2:primary(0,1)", "Joining", false},
    {"join", "S10 P S30 P", 0, false, 0, NO_PIN, 0, "2:primary(1,3)", "Joining", false},
    {"join", "P S10 E", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P E N", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    /* one at a time: nothing new while a start is in flight (rule 8 "starting counts as running") */
    {"8", "P T S30", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    /* primaries up to spec.primaries, then secondaries when the hook exists, else standby */
    {"join", "P P S1", 2, true, 0, NO_PIN, 0, "2:secondary(0,1)", "Joining", false},
    {"join", "P Y S1", 1, true, 0, NO_PIN, 0, "2:secondary(0)", "Joining", false},
    {"join", "P S1 S2", 1, false, 0, NO_PIN, 0, "", NULL, false},
    /* members on silent or dead nodes, stale reports, deleting pods are never started */
    {"join", "P L5 D5", 0, false, 0, NO_PIN, 0, "", NULL, false},
    {"join", "P C5 X5", 0, false, 0, NO_PIN, 0, "", NULL, false},
    /* trace 4: a primary is never started into a cluster whose primaries are gone */
    {"6.1", "Y S1 S2", 0, true, 0, NO_PIN, 0, "0:stop", "NoPrimary", true},
    {"6.1", "T S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    {"6.1", "L S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    /* repairs run alongside: a failed member is stopped while another joins */
    {"repair", "P F S1", 0, false, 0, NO_PIN, 0, "1:stop 2:primary(0)", "StoppingFailedMember", true},
    {"repair", "P U S1", 0, false, 0, NO_PIN, 0, "2:primary(0)", NULL, false},
    /* too many primaries (spec.primaries lowered): the highest ordinal is stopped */
    {"demote", "P P P", 2, true, 0, NO_PIN, 0, "2:stop", "Demoting", false},
    {"demote", "P P Y", 2, true, 0, NO_PIN, 0, "", NULL, false},
};

static void test_running_table(void **state)
{
    (void)state;
    plan_rows_run(running_rows, sizeof(running_rows) / sizeof(running_rows[0]), "running");
}

/* The e2e `blip` trace: every node lost power; the leader came back on the node of the lowest sequence.
 * Two members still carry "primary" from before the cut, written under the previous epoch, and their
 * nodes' heartbeats still look alive. They are no running peers: no member may join them, and no seed
 * may run while they might still run (rules 1, 2; trace 4). */
static void test_stale_running_reports_are_no_peers(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 S20 S60", 0, false, 0);
    for (unsigned i = 1; i < 3; i++) {
        struct rss_member_input *m = find(&w, i);
        set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = EPOCH - 1;
    }
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "stale primaries");
    for (size_t i = 0; i < p.n_patches; i++)
        assert_false(p.patches[i].set_desired && p.patches[i].desired.action != RSS_ACTION_NONE);
    rss_plan_free(&p);
    /* Their agents re-probe under this epoch: stopped, with their sequences. The newest copy seeds. */
    for (unsigned i = 1; i < 3; i++)
        set_observed(find(&w, i), RSS_ROLE_STOPPED, GEN, true, i == 1 ? 20 : 60, NULL);
    run(&w, &p);
    expect(&p, "2:seed", "after the re-probe");
    rss_plan_free(&p);
    world_free(&w);
}

/* Joins wait until every member on a live node reported under this epoch, so that the order stays
 * "highest sequence first" right after a leader change. */
static void test_joins_wait_for_stale_reports(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S90 S50 S10", 0, false, 0);
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, true, 90, NULL);
    find(&w, 1)->observed.lease_epoch = EPOCH - 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "member 1 not re-probed yet");
    rss_plan_free(&p);
    find(&w, 1)->observed.lease_epoch = EPOCH;
    run(&w, &p);
    expect(&p, "1:primary(0)", "after the re-probe");
    rss_plan_free(&p);
    world_free(&w);
}

/* The two shapes of a running cluster of 3: all primaries, and one primary with read-only secondaries. */
static const struct {
    const char *world;
    int primaries;
    bool secondary;
} shapes[] = {{"P P P", 0, false}, {"P Y Y", 1, true}};

/* A node back from a power cut (or its rssd restarted): until its new agent reports, the member's last
 * report is from the rssd that ran there before, and the pod may still name that container. The status
 * does not count it ready (it did: "3 of 3 ready" for seconds after a power-on), no action targets it,
 * and it still blocks what a running member blocks: it is waited for, never counted stopped. Both
 * shapes: all primaries, and one primary with secondaries. */
static void test_superseded_report_not_ready(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        for (unsigned who = 0; who < 3; who++) {
            struct world w;
            world_init(&w, shapes[k].world, shapes[k].primaries, shapes[k].secondary, 0);
            struct rss_plan p;
            run(&w, &p);
            expect(&p, "", "steady");
            assert_int_equal((int)cJSON_GetObjectItem(p.status, "readyReplicas")->valuedouble, 3);
            w.prev = cJSON_Duplicate(p.status, true);
            rss_plan_free(&p);
            find(&w, who)->observed_superseded = true;
            run(&w, &p);
            expect(&p, "", "superseded");
            const struct rss_plan_patch *pp = patch_of(&p, who);
            assert_true(!pp || (!pp->set_desired && pp->set_active_label < 0)); /* its label left alone */
            assert_int_equal((int)cJSON_GetObjectItem(p.status, "readyReplicas")->valuedouble, 2);
            assert_null(find_event(&p, "Failover"));
            assert_null(find_event(&p, "MemberCrashed"));
            rss_plan_free(&p);
            find(&w, who)->observed_superseded = false; /* the new agent reported: running */
            run(&w, &p);
            expect(&p, "", "reported again");
            assert_int_equal((int)cJSON_GetObjectItem(p.status, "readyReplicas")->valuedouble, 3);
            rss_plan_free(&p);
            world_free(&w);
        }
    }
}

/* The rss-active-member label (client Services) follows current reports only: after a leader change,
 * before the agents re-probed under the new epoch, the running members keep "true" (a plan then set every
 * one to "false", taking all of them out of the Services for those moments); a member observed stopped
 * under this epoch gets "false". Both shapes. */
static void test_label_kept_across_leader_change(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        struct world w;
        world_init(&w, shapes[k].world, shapes[k].primaries, shapes[k].secondary, 0);
        for (unsigned i = 0; i < 3; i++) {
            find(&w, i)->active_label = 1;
            find(&w, i)->observed.lease_epoch = EPOCH - 1; /* a new leader: nobody re-probed yet */
        }
        struct rss_plan p;
        run(&w, &p);
        for (unsigned i = 0; i < 3; i++) {
            const struct rss_plan_patch *pp = patch_of(&p, i);
            if (pp && pp->set_active_label >= 0)
                fail_msg("%s: member %u's label set to %d before its agent re-probed", shapes[k].world, i,
                         pp->set_active_label);
        }
        rss_plan_free(&p);
        /* Member 1's node is judged dead (silent past the window, kubelet down) before it re-probed: its
         * member is stopped, whatever its last report says. Its label goes. */
        find(&w, 1)->node_alive = false;
        find(&w, 1)->node_dead = true;
        run(&w, &p);
        assert_non_null(patch_of(&p, 1));
        assert_int_equal(patch_of(&p, 1)->set_active_label, 0);
        rss_plan_free(&p);
        find(&w, 1)->node_alive = true;
        find(&w, 1)->node_dead = false;
        /* Member 2 re-probed: stopped (its application crashed meanwhile). Its label goes. */
        set_observed(find(&w, 2), RSS_ROLE_STOPPED, GEN + 1, true, 7, NULL);
        run(&w, &p);
        const struct rss_plan_patch *pp = patch_of(&p, 2);
        assert_non_null(pp);
        assert_int_equal(pp->set_active_label, 0);
        assert_true(!patch_of(&p, 0) || patch_of(&p, 0)->set_active_label < 0);
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* ---- failover and repeated failure ---- */

static void test_failover_after_crash(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "steady");
    assert_string_equal(p.phase, "Running");
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Member 1's application crashes: a new generation, stopped. */
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN + 1, true, 77, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "failover");
    assert_non_null(find_event(&p, "MemberCrashed"));
    assert_non_null(find_event(&p, "Failover"));
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 1);
    assert_string_equal(p.phase, "Degraded");
    rss_plan_free(&p);
    world_free(&w);
}

/* A member left out of a recovery (minimumMembers) that comes back with a higher sequence than the
 * seed had is held back with a Warning, not joined over its newer writes; Join lets it join. */
static void test_newer_late_member_held(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S20 D60 S10", 0, false, 2);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "0:seed", "seed without the dead member (opt-in)");
    const struct rss_plan_event *e = find_event(&p, "MemberSkipped");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "rss-db-1 (last reported sequence 60)"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The cluster runs; member 1's node comes back with its newer data. */
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    set_observed(find(&w, 2), RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    find(&w, 1)->node_alive = true;
    find(&w, 1)->node_dead = false;
    run(&w, &p);
    expect(&p, "", "held back");
    e = find_event(&p, "NewerThanSeed");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Still held on the next plan, without a second Warning. */
    run(&w, &p);
    expect(&p, "", "still held");
    assert_null(find_event(&p, "NewerThanSeed"));
    rss_plan_free(&p);
    /* The admin lets it join. */
    w.spec.join_newer_late_members = true;
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "joins with Join");
    rss_plan_free(&p);
    /* A late member that is behind the seed just joins. */
    w.spec.join_newer_late_members = false;
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN, true, 15, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "behind the seed: joins");
    rss_plan_free(&p);
    world_free(&w);
}

/* spec.joinConcurrency: up to K members start at once after the seed (1 keeps the one-at-a-time
 * default), highest sequence first, never more primaries than spec.primaries. */
static void test_join_concurrency(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 S7 S3", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=1: one join");
    rss_plan_free(&p);
    w.spec.join_concurrency = 2;
    run(&w, &p);
    expect(&p, "1:primary(0) 2:primary(0)", "K=2: the two highest at once");
    rss_plan_free(&p);
    world_free(&w);
    /* One start in flight: one slot left. */
    world_init(&w, "P T S5 S3", 0, false, 0);
    w.spec.join_concurrency = 2;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=2 with one in flight");
    rss_plan_free(&p);
    world_free(&w);
    /* spec.primaries 2: the second slot may not make a third primary (no secondary hook: standby). */
    world_init(&w, "P S5 S7", 2, false, 0);
    w.spec.join_concurrency = 3;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=3, primaries 2");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_table),
        cmocka_unit_test(test_stale_running_reports_are_no_peers),
        cmocka_unit_test(test_joins_wait_for_stale_reports),
        cmocka_unit_test(test_superseded_report_not_ready),
        cmocka_unit_test(test_label_kept_across_leader_change),
        cmocka_unit_test(test_failover_after_crash),
        cmocka_unit_test(test_newer_late_member_held),
        cmocka_unit_test(test_join_concurrency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
