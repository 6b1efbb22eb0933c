/* test_planner_failover.c -- rule 15 in tables and short simulations: a lost single primary replaced by
 * promoting the most advanced standby (spec.failover PromoteStandby), and every case where the planner must
 * not (too few positions, the primary not lost as rule 12 understands it, no opt-in).
 *
 * Worlds use the one-token-per-member notation of planner_fixture.h; a simulation then changes the
 * members the way their agents would (the primary crashes, the standbys answer the position request) and
 * plans again with the previous plan's status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

#define STR_(x) #x
#define STR(x)  STR_(x)
/* The whole plan, checked as in the tables; a failure names the line of the step. */
#define want(p, s) expect((p), (s), "line " STR(__LINE__))

static const char *g_failover = ""; /* extra spec fields: FAILOVER_SPEC, or "" for no opt-in */

static void init(struct world *w, const char *members)
{
    world_init_with(w, members, 1, true, 0, g_failover);
}

static void no_stop(const struct rss_plan *p)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].set_desired && p->patches[i].desired.action == RSS_ACTION_STOP) {
            _cleanup_free_ char *d = rss_plan_describe(p);
            fail_msg("a stop was issued:\n%s", d);
        }
    assert_null(find_event(p, "NoPrimary"));
}

/* P Y Y, the primary killed: positions asked of both standbys (nobody stopped), the highest promoted, the
 * other repointed without a stop, the old primary joined as a secondary and never seeded. */
static void test_killed_primary_promotes_highest(void **state)
{
    (void)state;
    g_failover = FAILOVER_SPEC;
    struct world w;
    init(&w, "P Y Y");
    struct rss_plan p;
    run(&w, &p);
    want(&p, "");
    apply(&w, &p);

    crash(&w, 0, 130);
    run(&w, &p);
    want(&p, "");
    no_stop(&p);
    assert_non_null(find_event(&p, "FailoverStarted"));
    const struct rss_plan_patch *r1 = desired_patch_of(&p, 1), *r2 = desired_patch_of(&p, 2);
    assert_non_null(r1);
    assert_non_null(r2);
    assert_true(r1->desired.position_request.seq != 0);
    assert_true(rss_action_id_equal(r1->desired.position_request, r2->desired.position_request));
    assert_null(desired_patch_of(&p, 0));
    apply(&w, &p);

    /* One answer of two: S-k+1 = 2 needed. */
    answer_position(&w, 1, true, 100);
    run(&w, &p);
    want(&p, "");
    no_stop(&p);
    assert_non_null(strstr(status_str(&p, "message"), "waiting for the positions of rss-db-2"));
    apply(&w, &p);

    answer_position(&w, 2, true, 120);
    run(&w, &p);
    want(&p, "2:seed");
    no_stop(&p);
    assert_non_null(find_event(&p, "Promoting"));
    apply(&w, &p);

    /* While the promotion runs nothing else starts. */
    run(&w, &p);
    want(&p, "");
    apply(&w, &p);

    ran(&w, 2, RSS_ROLE_PRIMARY);
    run(&w, &p);
    want(&p, "1:secondary(2)");
    no_stop(&p);
    apply(&w, &p);

    ran(&w, 1, RSS_ROLE_SECONDARY);
    run(&w, &p);
    want(&p, "0:secondary(2)");
    apply(&w, &p);
    ran(&w, 0, RSS_ROLE_SECONDARY);
    run(&w, &p);
    want(&p, "");
    assert_null(cJSON_GetObjectItemCaseSensitive(p.status, "failover"));
    rss_plan_free(&p);
    world_free(&w);
}

/* The old primary's log may hold more than the promoted standby's (never acknowledged): a lights-out
 * before it rejoined must not seed it over the new primary's writes (rule 14's mark). */
static void test_old_primary_never_seeds(void **state)
{
    (void)state;
    g_failover = FAILOVER_SPEC;
    struct world w;
    init(&w, "P Y Y");
    struct rss_plan p;
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 0, 130);
    run(&w, &p);
    apply(&w, &p);
    answer_position(&w, 1, true, 100);
    answer_position(&w, 2, true, 120);
    run(&w, &p);
    want(&p, "2:seed");
    bool marked = false;
    for (size_t i = 0; i < p.n_patches; i++)
        marked |= p.patches[i].ordinal == 0 && p.patches[i].set_hold && p.patches[i].hold;
    assert_true(marked);
    apply(&w, &p);
    ran(&w, 2, RSS_ROLE_PRIMARY);
    run(&w, &p);
    apply(&w, &p);
    /* power cut: every member stopped; the new primary wrote up to 125 */
    set_observed(find(&w, 0), RSS_ROLE_STOPPED, GEN + 2, true, 130, NULL);
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN + 2, true, 121, NULL);
    set_observed(find(&w, 2), RSS_ROLE_STOPPED, GEN + 2, true, 125, NULL);
    run(&w, &p);
    want(&p, "2:seed");
    rss_plan_free(&p);
    world_free(&w);
}

/* Ties go to the lowest ordinal; a standby's answer to an older request does not count. */
static void test_tie_and_old_answer(void **state)
{
    (void)state;
    g_failover = FAILOVER_SPEC;
    struct world w;
    init(&w, "Y P Y");
    struct rss_plan p;
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 1, 90);
    run(&w, &p);
    apply(&w, &p);
    answer_position(&w, 0, true, 100);
    answer_position(&w, 2, true, 100);
    /* member 2 answered an earlier request: it must be asked again, not believed */
    find(&w, 2)->observed.position_for.seq -= 1;
    run(&w, &p);
    want(&p, "");
    apply(&w, &p);
    answer_position(&w, 2, true, 100);
    run(&w, &p);
    want(&p, "0:seed");
    rss_plan_free(&p);
    world_free(&w);
}

/* Too few positions (one standby down, or a standby with no position): the lights-out path, with a
 * Warning that says why. A promotion on k = 1 answer of 2 could promote a standby missing an
 * acknowledged commit that only the other holds. */
static void test_fallback(void **state)
{
    (void)state;
    g_failover = FAILOVER_SPEC;
    struct world w;
    init(&w, "P Y ?"); /* member 2: no report (its agent is away) */
    struct rss_plan p;
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 0, 130);
    run(&w, &p);
    want(&p, "1:stop");
    assert_non_null(find_event(&p, "FailoverFallback"));
    rss_plan_free(&p);
    world_free(&w);

    init(&w, "P Y Y");
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 0, 130);
    run(&w, &p);
    apply(&w, &p);
    answer_position(&w, 1, true, 100);
    answer_position(&w, 2, false, 0); /* its sequence hook gave nothing */
    run(&w, &p);
    want(&p, "1:stop 2:stop");
    assert_non_null(find_event(&p, "FailoverFallback"));
    rss_plan_free(&p);
    world_free(&w);

    /* No answer before the deadline (an agent that does not know the request). */
    init(&w, "P Y Y");
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 0, 130);
    run(&w, &p);
    apply(&w, &p);
    answer_position(&w, 1, true, 100);
    w.now += 3600000;
    run(&w, &p);
    want(&p, "1:stop 2:stop");
    assert_non_null(find_event(&p, "FailoverFallback"));
    rss_plan_free(&p);
    world_free(&w);
}

/* The trigger is rule 12's: a primary on a node judged dead is lost; a failed one is stopped first; one
 * whose report predates the epoch or whose node is silent is waited for; without the opt-in, the standbys
 * are stopped as before. */
static void test_trigger(void **state)
{
    (void)state;
    struct world w;
    struct rss_plan p;
    g_failover = FAILOVER_SPEC;
    init(&w, "K Y Y");
    run(&w, &p);
    want(&p, "");
    no_stop(&p);
    assert_non_null(find_event(&p, "FailoverStarted"));
    rss_plan_free(&p);
    world_free(&w);

    init(&w, "P Y Y");
    run(&w, &p);
    apply(&w, &p);
    set_observed(find(&w, 0), RSS_ROLE_FAILED, GEN, false, 0, NULL);
    find(&w, 0)->observed.status_code = 1;
    run(&w, &p);
    want(&p, "0:stop");
    assert_null(find_event(&p, "FailoverStarted"));
    assert_null(find_event(&p, "NoPrimary"));
    apply(&w, &p);
    /* its stop ran, the report after it (status: stopped) is not in yet: still wait, stop nobody (found
     * by e2e postgres_killed_promote: the status no longer said it was primary, and the standbys were
     * stopped) */
    {
        struct rss_member_input *m0 = find(&w, 0);
        m0->observed.last = (struct rss_last_action){
            .present = true, .id = m0->desired.id, .action = RSS_ACTION_STOP, .result = RSS_RESULT_OK};
    }
    run(&w, &p);
    want(&p, "0:stop"); /* still reported failed: stopped again, the standbys are not */
    assert_null(find_event(&p, "NoPrimary"));
    assert_null(find_event(&p, "FailoverFallback"));
    apply(&w, &p);
    ran(&w, 0, RSS_ROLE_STOPPED);
    run(&w, &p);
    want(&p, "");
    no_stop(&p);
    assert_non_null(find_event(&p, "FailoverStarted"));
    rss_plan_free(&p);
    world_free(&w);

    init(&w, "O Y Y");
    run(&w, &p);
    want(&p, "");
    assert_null(find_event(&p, "FailoverStarted"));
    rss_plan_free(&p);
    world_free(&w);

    init(&w, "Q Y Y");
    run(&w, &p);
    want(&p, "");
    assert_null(find_event(&p, "FailoverStarted"));
    rss_plan_free(&p);
    world_free(&w);

    g_failover = "";
    init(&w, "P Y Y");
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 0, 130);
    run(&w, &p);
    want(&p, "1:stop 2:stop");
    rss_plan_free(&p);
    world_free(&w);
}

/* The spec: the opt-in needs one primary, the seed and secondary hooks, and k in 1..replicas-1. */
static void test_spec(void **state)
{
    (void)state;
    static const char *bad[] = {
        "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"failover\":\"Promote\",\"primaries\":1,\"pod\":{"
        "\"commands\":{\"sequence\":{\"command\":[\"/s\"]},\"primary\":{\"command\":[\"/"
        "p\"]},\"status\":{\"command\":[\"/t\"]},\"stop\":{\"command\":[\"/"
        "x\"]}},\"containers\":[{\"name\":\"a\"}]}}}",
        "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"failover\":\"PromoteStandby\",\"synchronousStandbys\":1,"
        "\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/s\"]},\"seed\":{\"command\":[\"/"
        "e\"]},\"secondary\":{\"command\":[\"/y\"]},\"primary\":{\"command\":[\"/"
        "p\"]},\"status\":{\"command\":[\"/t\"]},\"stop\":{\"command\":[\"/"
        "x\"]}},\"containers\":[{\"name\":\"a\"}]}}}",
        "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"failover\":\"PromoteStandby\",\"primaries\":1,"
        "\"synchronousStandbys\":3,\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/"
        "s\"]},\"seed\":{\"command\":[\"/e\"]},\"secondary\":{\"command\":[\"/"
        "y\"]},\"primary\":{\"command\":[\"/p\"]},\"status\":{\"command\":[\"/"
        "t\"]},\"stop\":{\"command\":[\"/x\"]}},\"containers\":[{\"name\":\"a\"}]}}}",
        "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"failover\":\"PromoteStandby\",\"primaries\":1,"
        "\"synchronousStandbys\":1,\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/"
        "s\"]},\"primary\":{\"command\":[\"/p\"]},\"status\":{\"command\":[\"/"
        "t\"]},\"stop\":{\"command\":[\"/x\"]}},\"containers\":[{\"name\":\"a\"}]}}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        _cleanup_json_ cJSON *cr = cJSON_Parse(bad[i]);
        struct rss_spec s;
        _cleanup_error_ rss_error_t err = NULL;
        assert_non_null(cr);
        if (rss_spec_parse(cr, &s, &err) == 0) {
            rss_spec_clear(&s);
            fail_msg("spec %zu accepted", i);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_primary_promotes_highest),
        cmocka_unit_test(test_tie_and_old_answer),
        cmocka_unit_test(test_old_primary_never_seeds),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_trigger),
        cmocka_unit_test(test_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
