/* test_log.c -- the log's two formats: text lines as before, and one JSON object per line whose
 * rss/member/action/epoch come from the thread's scope. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"

/* stderr goes to a temporary file for the test; captured() returns what was written since. */
static int saved_fd = -1;
static FILE *cap;

static int capture_start(void **state)
{
    (void)state;
    fflush(stderr);
    cap = tmpfile();
    assert_non_null(cap);
    saved_fd = dup(STDERR_FILENO);
    assert_true(saved_fd >= 0);
    assert_true(dup2(fileno(cap), STDERR_FILENO) >= 0);
    rss_log_set_level(RSS_LOG_INFO);
    rss_log_set_component("unit");
    return 0;
}

static int capture_stop(void **state)
{
    (void)state;
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    fclose(cap);
    rss_log_set_format(RSS_LOG_TEXT);
    return 0;
}

static char *captured(void)
{
    fflush(stderr);
    long n = ftell(cap);
    assert_true(n >= 0);
    char *s = calloc(1, (size_t)n + 1);
    assert_non_null(s);
    rewind(cap);
    assert_int_equal(fread(s, 1, (size_t)n, cap), (size_t)n);
    assert_int_equal(ftruncate(fileno(cap), 0), 0);
    rewind(cap);
    return s;
}

/* The n-th (0-based) line of s, parsed as JSON; fails the test when it is not one object. */
static cJSON *json_line(const char *s, int n)
{
    for (int i = 0; i < n; i++) {
        s = strchr(s, '\n');
        assert_non_null(s);
        s++;
    }
    const char *end = strchr(s, '\n');
    assert_non_null(end);
    _cleanup_free_ char *line = strndup(s, (size_t)(end - s));
    cJSON *o = cJSON_Parse(line);
    if (!o || !cJSON_IsObject(o))
        fail_msg("not a JSON object: %s", line);
    return o;
}

static void test_text_unchanged(void **state)
{
    (void)state;
    _cleanup_log_scope_ struct rss_log_fields outer =
        rss_log_scope((struct rss_log_fields){.ns = "db", .rss = "galera", .member = "galera-0"});
    rss_log_info("hello %d", 7);
    _cleanup_free_ char *s = captured();
    /* 2026-12-07T04:43:45.123Z INFO  [unit] hello 7 -- the scope adds nothing to the text form */
    assert_int_equal(strlen(s), strlen("2026-12-07T04:43:45.123Z INFO  [unit] hello 7\n"));
    assert_int_equal(s[10], 'T');
    assert_string_equal(s + 23, "Z INFO  [unit] hello 7\n");
}

static void test_json_fields_from_scopes(void **state)
{
    (void)state;
    rss_log_set_format(RSS_LOG_JSON);
    rss_log_info("no scope");
    {
        _cleanup_log_scope_ struct rss_log_fields a =
            rss_log_scope((struct rss_log_fields){.ns = "db", .rss = "galera", .epoch = 42});
        {
            _cleanup_log_scope_ struct rss_log_fields b =
                rss_log_scope((struct rss_log_fields){.member = "galera-1", .action = "seed", .rss = ""});
            rss_log_warn("inner");
        }
        rss_log_info("outer");
    }
    rss_log_debug("below the level: not written");
    rss_log_err("after");
    _cleanup_free_ char *s = captured();

    _cleanup_json_ cJSON *l0 = json_line(s, 0);
    assert_string_equal(rss_json_str(l0, "msg"), "no scope");
    assert_string_equal(rss_json_str(l0, "level"), "info");
    assert_string_equal(rss_json_str(l0, "component"), "unit");
    assert_int_equal(strlen(rss_json_str(l0, "time")), strlen("2026-12-07T04:43:45.123Z"));
    assert_null(rss_json_path(l0, "rss"));
    assert_null(rss_json_path(l0, "member"));
    assert_null(rss_json_path(l0, "epoch"));

    _cleanup_json_ cJSON *l1 = json_line(s, 1);
    assert_string_equal(rss_json_str(l1, "msg"), "inner");
    assert_string_equal(rss_json_str(l1, "level"), "warn");
    assert_string_equal(rss_json_str(l1, "rss"), "db/galera"); /* an empty field keeps the outer one */
    assert_string_equal(rss_json_str(l1, "member"), "galera-1");
    assert_string_equal(rss_json_str(l1, "action"), "seed");
    assert_int_equal(rss_json_long(l1, "epoch", 0), 42);

    _cleanup_json_ cJSON *l2 = json_line(s, 2);
    assert_string_equal(rss_json_str(l2, "msg"), "outer");
    assert_string_equal(rss_json_str(l2, "rss"), "db/galera");
    assert_null(rss_json_path(l2, "member"));
    assert_null(rss_json_path(l2, "action"));

    _cleanup_json_ cJSON *l3 = json_line(s, 3);
    assert_string_equal(rss_json_str(l3, "msg"), "after");
    assert_string_equal(rss_json_str(l3, "level"), "error");
    assert_null(rss_json_path(l3, "rss"));
    assert_null(strstr(s, "below the level"));
    /* Four lines, nothing else. */
    int lines = 0;
    for (const char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
}

/* A hook's output quoted in a message may hold quotes, newlines and control bytes: still one line,
 * and the message comes back byte for byte. */
static void test_json_escapes(void **state)
{
    (void)state;
    rss_log_set_format(RSS_LOG_JSON);
    const char *nasty = "say \"hi\"\\ \n second line\r\t\x01\x1f end {\"x\":1}";
    _cleanup_log_scope_ struct rss_log_fields a =
        rss_log_scope((struct rss_log_fields){.member = "m\"\n", .ns = "only-ns"});
    rss_log_info("%s", nasty);
    _cleanup_free_ char *s = captured();
    assert_non_null(strchr(s, '\n'));
    assert_int_equal(strchr(s, '\n') - s + 1, (long)strlen(s)); /* exactly one line */
    _cleanup_json_ cJSON *l = json_line(s, 0);
    assert_string_equal(rss_json_str(l, "msg"), nasty);
    assert_string_equal(rss_json_str(l, "member"), "m\"\n");
    assert_string_equal(rss_json_str(l, "namespace"), "only-ns"); /* no rss: the namespace alone */
    assert_null(rss_json_path(l, "rss"));
}

static void *other_thread(void *arg)
{
    (void)arg;
    rss_log_info("from another thread");
    return NULL;
}

/* The scope is the thread's own: a worker about another RSS does not inherit it. */
static void test_scope_per_thread(void **state)
{
    (void)state;
    rss_log_set_format(RSS_LOG_JSON);
    _cleanup_log_scope_ struct rss_log_fields a =
        rss_log_scope((struct rss_log_fields){.ns = "db", .rss = "galera", .member = "galera-0"});
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    _cleanup_free_ char *s = captured();
    _cleanup_json_ cJSON *l = json_line(s, 0);
    assert_string_equal(rss_json_str(l, "msg"), "from another thread");
    assert_null(rss_json_path(l, "rss"));
    assert_null(rss_json_path(l, "member"));
}

static void test_parse_format(void **state)
{
    (void)state;
    enum rss_log_format f = RSS_LOG_TEXT;
    assert_int_equal(rss_log_parse_format("json", &f), 0);
    assert_int_equal(f, RSS_LOG_JSON);
    assert_int_equal(rss_log_parse_format("text", &f), 0);
    assert_int_equal(f, RSS_LOG_TEXT);
    assert_int_equal(rss_log_parse_format("JSON", &f), -1);
    assert_int_equal(rss_log_parse_format("", &f), -1);
    assert_int_equal(rss_log_parse_format("logfmt", &f), -1);
    assert_int_equal(f, RSS_LOG_TEXT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text_unchanged, capture_start, capture_stop),
        cmocka_unit_test_setup_teardown(test_json_fields_from_scopes, capture_start, capture_stop),
        cmocka_unit_test_setup_teardown(test_json_escapes, capture_start, capture_stop),
        cmocka_unit_test_setup_teardown(test_scope_per_thread, capture_start, capture_stop),
        cmocka_unit_test(test_parse_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
