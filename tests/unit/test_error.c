/* test_error.c -- the error chain: codes survive wrapping, messages join outer to inner. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/error.h"

static int fail_open(rss_error_t *err)
{
    return rss_error_errno(err, ENOENT, "opening '%s'", "/nope");
}

static void test_make_and_wrap(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    int r = rss_error_make(&err, RSS_E_NOT_FOUND, 404, "pod '%s' not found", "a-0");
    assert_true(r < 0);
    r = rss_error_wrap(&err, "reading member %d", 0);
    assert_true(r < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    assert_int_equal(err->detail, 404);
    _cleanup_free_ char *s = rss_error_string(err);
    assert_string_equal(s, "reading member 0: pod 'a-0' not found");
    assert_string_equal(rss_errc_name(rss_error_code(err)), "NOT_FOUND");
}

static void test_errno(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(fail_open(&err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_SYSTEM);
    assert_int_equal(err->detail, ENOENT);
    _cleanup_free_ char *s = rss_error_string(err);
    assert_non_null(strstr(s, "opening '/nope': "));
    assert_non_null(strstr(s, strerror(ENOENT)));
}

static void test_release_null(void **state)
{
    (void)state;
    rss_error_t err = NULL;
    rss_error_release(&err);
    rss_error_release(NULL);
    assert_null(err);
    assert_int_equal(rss_error_code(NULL), 0);
    assert_string_equal(rss_errc_name(999), "UNKNOWN");
}

static void test_take_ptr(void **state)
{
    (void)state;
    _cleanup_free_ char *p = rss_xstrdup("x");
    char *q = TAKE_PTR(p);
    assert_null(p);
    assert_string_equal(q, "x");
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_make_and_wrap),
        cmocka_unit_test(test_errno),
        cmocka_unit_test(test_release_null),
        cmocka_unit_test(test_take_ptr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
