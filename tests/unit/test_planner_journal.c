/* test_planner_journal.c -- the journal: a missing member proven behind by a confirmed witness
 * (spec.recovery.replication: Synchronous).
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

/* ---- the journal: a missing member proven behind (spec.recovery.replication: Synchronous) ---- */

/* Plans a series of worlds, each against the status the previous one wrote, at the given times (s after
 * NOW); returns the last plan (caller frees). The spec's status timeout is 60 s and its reconcile interval
 * 1 m: the witness window is 15 + 120 + 60 = 195 s. */
struct jstep {
    const char *members;
    int64_t at_s;
};

static void journal_run(const struct jstep *steps, size_t n, bool sync, struct rss_plan *last)
{
    cJSON *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        struct world w;
        world_init(&w, steps[i].members, 0, false, 0);
        w.spec.replication_sync = sync;
        w.now = NOW + steps[i].at_s * 1000;
        w.prev = prev;
        struct rss_plan p;
        run(&w, &p);
        if (i + 1 == n) {
            *last = p;
            world_free(&w);
            return;
        }
        prev = cJSON_Duplicate(p.status, true);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static const cJSON *journal_of(const struct rss_plan *p, unsigned ordinal)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(p->status, "journal"))
    {
        if (cJSON_GetObjectItem(e, "ordinal")->valuedouble == ordinal)
            return e;
    }
    return NULL;
}

static void test_journal_proves_behind(void **state)
{
    (void)state;
    /* Member 2 joined with sequence 40, ran, and its node died while 0 and 1 ran on (confirmed well
     * after); then the rest went dark and reported 50 and 45: 2 is left out, 0 seeds. */
    const struct jstep early[] = {
        {"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}};
    struct rss_plan p;
    journal_run(early, 5, true, &p);
    expect(&p, "0:seed", "lost early, synchronous");
    const struct rss_plan_event *e = find_event(&p, "LeftOutBehind");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_NORMAL);
    assert_non_null(strstr(e->message, "rss-db-2 is left out"));
    assert_non_null(strstr(e->message, "last sequence 40"));
    assert_null(find_event(&p, "MemberSkipped"));
    const cJSON *j = journal_of(&p, 2);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "lastSequence")->valuestring, "40");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "witnesses")), 2);
    rss_plan_free(&p);

    /* Refusals: each row must wait (no seed). */
    static const struct {
        const char *why;
        struct jstep steps[5];
        size_t n;
        bool sync;
    } waits[] = {
        {"asynchronous replication: nothing proves it",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}},
         5,
         false},
        {"witnesses never confirmed (dark too soon)",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"S50 S45 D", 60}},
         4,
         true},
        {"no witness committed past its last sequence",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S40 S39 D", 300}},
         5,
         true},
        {"lost last: nobody ran on after it",
         {{"P P S40", 0}, {"P P P", 10}, {"S50 S45 P", 20}, {"S50 S45 P", 230}, {"S50 S45 D", 300}},
         5,
         true},
        {"its last sequence was never known",
         {{"P P P", 0}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}},
         4,
         true},
    };
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
        journal_run(waits[i].steps, waits[i].n, waits[i].sync, &p);
        expect(&p, "", waits[i].why);
        assert_null(find_event(&p, "LeftOutBehind"));
        rss_plan_free(&p);
    }
    /* A witness that crashed before it was confirmed (new generation) is dropped; the other suffices. */
    const struct jstep one[] = {
        {"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P S45 D", 100}, {"P S45 D", 230}};
    journal_run(one, 5, true, &p);
    j = journal_of(&p, 2);
    const cJSON *ws = cJSON_GetObjectItem(j, "witnesses");
    assert_int_equal(cJSON_GetArraySize(ws), 1);
    assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(ws, 0), "ordinal")->valuedouble, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(ws, 0), "confirmed")));
    rss_plan_free(&p);
}

/* The leader of the next epoch, its wall clock an hour ahead of the one that wrote downAt: by its clock the
 * witness window passed long ago. It still confirms no witness: a witness counts only once it reported
 * running in the recorded generation under this leader's epoch, and the reports here are the old epoch's
 * (then the cluster goes dark): rss-db-2 is waited for, not left out. Clock skew between leaders does not
 * enter the journal's proof (planner_journal.c). */
static void test_journal_new_leader_clock_ahead(void **state)
{
    (void)state;
    const struct jstep before[] = {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}};
    struct rss_plan p;
    journal_run(before, 3, true, &p);
    cJSON *prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    const char *worlds[] = {"P P D", "S50 S45 D"};
    for (size_t k = 0; k < 2; k++) {
        struct world w;
        world_init(&w, worlds[k], 0, false, 0);
        w.spec.replication_sync = true;
        w.epoch = EPOCH + 1;
        w.now = NOW + (30 + 3600 + 10 * (int64_t)k) * 1000;
        w.prev = prev;
        for (size_t i = 0; k && i < w.n; i++) { /* the dark members re-probed under the new epoch */
            w.m[i].observed.lease_epoch = EPOCH + 1;
            set_desired(&w.m[i], EPOCH + 1, RSS_ACTION_NONE, 0, 0);
        }
        run(&w, &p);
        const cJSON *j = journal_of(&p, 2);
        assert_non_null(j);
        const cJSON *wit;
        cJSON_ArrayForEach(wit, cJSON_GetObjectItem(j, "witnesses"))
        {
            if (cJSON_IsTrue(cJSON_GetObjectItem(wit, "confirmed")))
                fail_msg("world %zu: witness %d confirmed by the new leader's clock alone", k,
                         (int)cJSON_GetObjectItem(wit, "ordinal")->valuedouble);
        }
        if (k) {
            expect(&p, "", "rss-db-2 is waited for");
            assert_null(find_event(&p, "LeftOutBehind"));
        }
        prev = cJSON_Duplicate(p.status, true);
        rss_plan_free(&p);
        world_free(&w);
    }
    cJSON_Delete(prev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_journal_proves_behind),
        cmocka_unit_test(test_journal_new_leader_clock_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
