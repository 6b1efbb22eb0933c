/* test_planner_forceseed.c -- the force-seed check the planner and `kubectl rss force-seed` share, as a
 * table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rss/forceseed.h"

static void test_table(void **state)
{
    (void)state;
    static const struct rss_forceseed_member stopped[] = {
        {"db-0", true, false}, {"db-1", true, false}, {"db-2", true, false}};
    static const struct rss_forceseed_member one_runs[] = {
        {"db-0", true, false}, {"db-1", true, true}, {"db-2", true, false}};
    static const struct rss_forceseed_member gone[] = {
        {"db-0", true, false}, {"db-1", false, false}, {"db-2", true, true}};
    static const struct {
        const char *want;
        const struct rss_forceseed_member *m;
        size_t n;
        enum rss_forceseed_verdict v;
        size_t index;
        const char *runner;
    } rows[] = {
        {"db-1", stopped, 3, RSS_FORCESEED_ALLOWED, 1, NULL},
        {"db-9", stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL},
        {"db-", stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL}, /* a prefix is not the pod */
        {"db-0", one_runs, 3, RSS_FORCESEED_RUNNING, 0, "db-1"},
        {"db-1", one_runs, 3, RSS_FORCESEED_RUNNING, 1, "db-1"}, /* the running member itself too */
        {"db-1", gone, 3, RSS_FORCESEED_NO_MEMBER, 3, "db-2"},   /* its pod is gone: missing comes first */
        {"db-0", gone, 3, RSS_FORCESEED_RUNNING, 0, "db-2"},
        {"db-0", stopped, 0, RSS_FORCESEED_NO_MEMBER, 0, NULL},
        {NULL, stopped, 3, RSS_FORCESEED_NO_MEMBER, 3, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t at = 99;
        const char *who = "x";
        enum rss_forceseed_verdict v = rss_forceseed_check(rows[i].want, rows[i].m, rows[i].n, &at, &who);
        assert_int_equal(v, rows[i].v);
        assert_int_equal(at, rows[i].index);
        if (rows[i].runner)
            assert_string_equal(who, rows[i].runner);
        else
            assert_null(who);
        assert_int_equal(rss_forceseed_check(rows[i].want, rows[i].m, rows[i].n, NULL, NULL), rows[i].v);
    }
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_NO_MEMBER), "no such member pod");
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_RUNNING), "a member runs or is starting");
    assert_string_equal(rss_forceseed_reason(RSS_FORCESEED_ALLOWED), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
