/* test_namespaces.c -- the --namespaces list: what parses, what is refused and why, membership. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/namespaces.h"

static void test_parse_good(void **state)
{
    (void)state;
    static const struct {
        const char *csv;
        size_t n;
        const char *first, *last;
    } rows[] = {
        {"rss-apps", 1, "rss-apps", "rss-apps"},
        {"a,b-2,c", 3, "a", "c"},
        {"0", 1, "0", "0"},
        /* 63 characters: the longest DNS label */
        {"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh", 1,
         "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh",
         "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rss_namespaces nss;
        _cleanup_error_ rss_error_t err = NULL;
        assert_int_equal(rss_namespaces_parse(rows[i].csv, &nss, &err), 0);
        assert_int_equal(nss.n, rows[i].n);
        assert_string_equal(nss.names[0], rows[i].first);
        assert_string_equal(nss.names[nss.n - 1], rows[i].last);
        rss_namespaces_clear(&nss);
        assert_int_equal(nss.n, 0);
        assert_null(nss.names);
    }
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *csv;
        const char *says; /* a piece of the message */
    } rows[] = {
        {NULL, "empty"},
        {"", "empty"},
        {",", "empty name"},
        {"a,", "empty name"},
        {",a", "empty name"},
        {"a,,b", "empty name"},
        {"Apps", "'Apps' is not a namespace name"},
        {"a_b", "'a_b' is not"},
        {"-a", "'-a' is not"},
        {"a-", "'a-' is not"},
        {"a.b", "'a.b' is not"},
        {"a b", "'a b' is not"},
        {"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghi", "is not a namespace name"},
        {"a,b,a", "'a' is given twice"},
        {"x,x", "'x' is given twice"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rss_namespaces nss = {.n = 99};
        _cleanup_error_ rss_error_t err = NULL;
        assert_true(rss_namespaces_parse(rows[i].csv, &nss, &err) < 0);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        _cleanup_free_ char *msg = rss_error_string(err);
        if (!strstr(msg, rows[i].says))
            fail_msg("'%s': message '%s' lacks '%s'", rows[i].csv ? rows[i].csv : "(null)", msg,
                     rows[i].says);
        assert_int_equal(nss.n, 0); /* nothing half-parsed is left to the caller */
        assert_null(nss.names);
    }
}

static void test_contains(void **state)
{
    (void)state;
    struct rss_namespaces nss;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_namespaces_parse("rss-apps,db", &nss, &err), 0);
    assert_true(rss_namespaces_contains(&nss, "rss-apps"));
    assert_true(rss_namespaces_contains(&nss, "db"));
    assert_false(rss_namespaces_contains(&nss, "rss"));
    assert_false(rss_namespaces_contains(&nss, "rss-apps2"));
    assert_false(rss_namespaces_contains(&nss, "default"));
    assert_false(rss_namespaces_contains(&nss, NULL));
    rss_namespaces_clear(&nss);
    /* Unset: every namespace is managed. */
    struct rss_namespaces all = {0};
    assert_true(rss_namespaces_contains(&all, "default"));
    assert_true(rss_namespaces_contains(NULL, "default"));
    rss_namespaces_clear(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_contains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
