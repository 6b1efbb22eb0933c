/* test_planner_suspend.c -- row 2b (spec.suspend) when a member's `status` gives no answer after its `stop`
 * returned 0 (issue 35, fault 5). Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

static const char *suspended_seq(const struct rss_plan *p, const char *pod)
{
    const cJSON *seqs = cJSON_GetObjectItem(cJSON_GetObjectItem(p->status, "suspended"), "sequences");
    return cJSON_GetStringValue(cJSON_GetObjectItem(seqs, pod));
}

/* The measured loop: the last primary's `stop` returns 0, then its `status` hangs (the runtime kills it
 * at its timeout: role unknown). rssd issued the same `stop` again, every reconcileInterval, for ever.
 * The stop's 0 is the member's word that it stopped: the suspend completes, with the sequence the agent
 * asked after the stop. */
static void test_stop_zero_status_hangs(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 S7", 0, false, 0);
    w.spec.suspend = true;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "0:stop", "the last primary last");
    apply(&w, &p);
    ran(&w, 0, RSS_ROLE_UNKNOWN); /* stop returned 0; status hung */
    struct rss_member_input *m = find(&w, 0);
    m->observed.status_code = -1;
    m->observed.has_sequence = true;
    m->observed.sequence = 9;
    for (int round = 0; round < 3; round++) { /* and stays so: no second stop in any later plan */
        run(&w, &p);
        expect(&p, "replicas=0", "stopped by its stop: the suspend completes");
        assert_string_equal(p.phase, "Suspending");
        assert_string_equal(suspended_seq(&p, "rss-db-0"), "9");
        assert_string_equal(suspended_seq(&p, "rss-db-2"), "7");
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(member_status(&p, 0), "message"));
        assert_non_null(note);
        assert_non_null(strstr(note, "stopped by its stop hook (exit 0); its status hook said nothing"));
        rss_plan_free(&p);
    }
    world_free(&w);
}

/* One member after the suspend's `stop`, every way its report can look. Only a stop that returned 0, in
 * the generation it was issued for, under this leader, with a status that does not say it runs, counts:
 * a stop that failed or timed out is never taken for stopped (the member is stopped again), nor one a
 * container restart or a new leader has voided since. */
static void test_after_stop_table(void **state)
{
    (void)state;
    enum shape { PLAIN, GEN_BUMPED, FENCED, OLD_EPOCH };
    static const struct {
        const char *name;
        enum rss_result result;
        enum rss_role role;
        enum shape shape;
        bool has_seq;
        const char *seq_error;
        const char *want;
        const char *seq; /* status.suspended.sequences of rss-db-0 when replicas=0 */
    } rows[] = {
        {"status hung, sequence answered", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, PLAIN, true, NULL, "replicas=0",
         "9"},
        {"status and sequence hung", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, PLAIN, false,
         "hook sequence killed by the runtime at its 10 s timeout", "replicas=0", "unknown"},
        {"an older agent that asked no sequence", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, PLAIN, false, NULL,
         "replicas=0", "unknown"},
        {"status says failed", RSS_RESULT_OK, RSS_ROLE_FAILED, PLAIN, true, NULL, "replicas=0", "9"},
        {"status says it still runs", RSS_RESULT_OK, RSS_ROLE_PRIMARY, PLAIN, false, NULL, "0:stop", NULL},
        {"the stop failed", RSS_RESULT_FAILED, RSS_ROLE_UNKNOWN, PLAIN, true, NULL, "0:stop", NULL},
        {"the stop timed out", RSS_RESULT_TIMEOUT, RSS_ROLE_UNKNOWN, PLAIN, true, NULL, "0:stop", NULL},
        {"a container restart since", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, GEN_BUMPED, true, NULL, "0:stop",
         NULL},
        {"a new leader fenced the stop's desired", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, FENCED, true, NULL,
         "0:stop", NULL},
        {"a report from before this leader: waited for", RSS_RESULT_OK, RSS_ROLE_UNKNOWN, OLD_EPOCH, true,
         NULL, "", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, "U S5 S7", 0, false, 0);
        w.spec.suspend = true;
        struct rss_member_input *m = find(&w, 0);
        set_observed(m, rows[i].role, GEN, rows[i].has_seq, 9, rows[i].seq_error);
        if (rows[i].role == RSS_ROLE_UNKNOWN)
            m->observed.status_code = -1;
        set_desired(m, EPOCH, RSS_ACTION_STOP, 42, GEN);
        set_last(m, RSS_ACTION_STOP, EPOCH, 42, rows[i].result);
        if (rows[i].shape == GEN_BUMPED)
            m->observed.generation = GEN + 1;
        if (rows[i].shape == FENCED) {
            set_desired(m, EPOCH, RSS_ACTION_NONE, 0, GEN);
            m->observed.last.id.epoch = EPOCH - 1;
        }
        if (rows[i].shape == OLD_EPOCH)
            m->observed.lease_epoch = EPOCH - 1;
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *got = summary(&p);
        if (strcmp(got, rows[i].want))
            fail_msg("row %zu (%s): want '%s', got '%s' (%s)", i, rows[i].name, rows[i].want, got,
                     status_str(&p, "message"));
        if (rows[i].seq && strcmp(suspended_seq(&p, "rss-db-0"), rows[i].seq))
            fail_msg("row %zu (%s): sequence at stop '%s', want '%s'", i, rows[i].name,
                     suspended_seq(&p, "rss-db-0"), rows[i].seq);
        rss_plan_free(&p);
        world_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_zero_status_hangs),
        cmocka_unit_test(test_after_stop_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
