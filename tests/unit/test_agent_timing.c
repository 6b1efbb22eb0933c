/* test_agent_timing.c -- the heartbeat and fence timing arithmetic in tables: which fence timeouts a
 * heartbeat period allows, and how soon a failed renewal is retried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rss/agent.h"
#include "rss/cleanup.h"

static void test_timing_check_table(void **state)
{
    (void)state;
    static const struct {
        long fence_ms, heartbeat_ms;
        bool ok;
    } rows[] = {
        {30000, 10000, true}, /* the defaults: exactly 3 periods */
        {30000, 10001, false},  {29999, 10000, false},
        {10000, 2000, true},                         /* the test world's */
        {4000, 1000, true},     {4000, 2000, false}, /* a live agent could fence after one slow renewal */
        {10000, 10000, false},  {300, 100, true},
        {300, 99, false}, /* below 100 ms is a busy loop against the API server */
        {3600000, 10000, true},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        rss_error_t err = NULL;
        int r = rss_agent_timing_check(rows[i].fence_ms, rows[i].heartbeat_ms, &err);
        if ((r == 0) != rows[i].ok)
            fail_msg("row %zu (fence %ld, heartbeat %ld): %s", i, rows[i].fence_ms, rows[i].heartbeat_ms,
                     r == 0 ? "accepted" : "rejected");
        if (r < 0)
            assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        rss_error_release(&err);
    }
}

static void test_retry_table(void **state)
{
    (void)state;
    static const long rows[][2] = {{10000, 2000}, {2000, 2000}, {1000, 1000}, {60000, 2000}, {100, 100}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(rss_agent_heartbeat_retry_ms(rows[i][0]), rows[i][1]);
}

/* The heartbeat Lease's duration: misses periods rounded up to a second, never under 2 s (the defaults
 * keep their 50 s; the test worlds' 2 s period their 10 s). */
static void test_lease_table(void **state)
{
    (void)state;
    static const long rows[][3] = {{10000, 5, 50}, {2000, 5, 10}, {2000, 3, 6},     {1000, 2, 2},
                                   {100, 2, 2},    {1500, 3, 5},  {60000, 60, 3600}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(rss_agent_heartbeat_lease_s(rows[i][0], (int)rows[i][1]), rows[i][2]);
}

/* The failsafe starts probing half a period past the renewal that should have come (a healthy agent's
 * silence reaches a period plus two requests at every renewal: at fence/3 the defaults probed every
 * heartbeat), and never later than fence/2, which leaves the probes half the fence timeout. */
static void test_probe_after_table(void **state)
{
    (void)state;
    static const long rows[][3] = {
        {30000, 10000, 15000}, /* the defaults: 5 s past the next renewal */
        {10000, 2000, 3666},   /* the test world's */
        {4000, 1000, 1666},        {300, 100, 150},
        {3600000, 10000, 1200000}, /* a long fence: its third is later than a period and a sixth */
        {60000, 10000, 20000},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(rss_agent_probe_after_ms(rows[i][0], rows[i][1]), rows[i][2]);
    /* every valid pair: after the next renewal is due, and no later than half the fence timeout */
    for (long hb = 100; hb <= 20000; hb += 700)
        for (long fence = 3 * hb; fence <= 40 * hb; fence += hb / 2 + 1) {
            rss_error_t err = NULL;
            if (rss_agent_timing_check(fence, hb, &err) < 0) {
                rss_error_release(&err);
                continue;
            }
            long after = rss_agent_probe_after_ms(fence, hb);
            if (after <= hb || after > fence / 2 + 1)
                fail_msg("fence %ld, heartbeat %ld: probes after %ld ms", fence, hb, after);
        }
}

/* The defaults an install gets without overrides are a valid pair. */
static void test_agent_defaults(void **state)
{
    (void)state;
    struct rss_agent_config cfg = {
        .kube = (struct rss_kube *)1, .cri = (struct rss_cri *)1, .node = "n1", .ns = "x"};
    struct rss_agent *a = NULL;
    rss_error_t err = NULL;
    assert_int_equal(rss_agent_new(&cfg, &a, &err), 0);
    rss_agent_free(a);
    cfg.fence_timeout_ms = 10000; /* a short fence with the default 10 s heartbeat: refused */
    assert_true(rss_agent_new(&cfg, &a, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    cfg.heartbeat_ms = 2000;
    assert_int_equal(rss_agent_new(&cfg, &a, &err), 0);
    rss_agent_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timing_check_table), cmocka_unit_test(test_retry_table),
        cmocka_unit_test(test_lease_table),        cmocka_unit_test(test_probe_after_table),
        cmocka_unit_test(test_agent_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
