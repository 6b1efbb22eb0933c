/* test_hook.c -- hook argv (rule 5), strict sequence parsing (rule 6) and OCF status mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/hook.h"

static const char cr_json[] =
    "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"pod\":{\"commands\":{"
    "\"sequence\":{\"command\":[\"/seq.sh\"]},"
    "\"primary\":{\"command\":[\"/start.sh\",\"--mode\",\"a b; rm -rf /\"]},"
    "\"status\":{\"command\":[\"/check.sh\"]},\"stop\":{\"command\":[\"/stop.sh\"]}},"
    "\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}";

static void load(struct rss_spec *s, bool with_seed_and_secondary)
{
    _cleanup_json_ cJSON *cr = cJSON_Parse(cr_json);
    assert_non_null(cr);
    if (with_seed_and_secondary) {
        cJSON *cmds =
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cr, "spec"), "pod"), "commands");
        cJSON_AddItemToObject(cmds, "seed", cJSON_Parse("{\"command\":[\"/seed.sh\"]}"));
        cJSON_AddItemToObject(cmds, "secondary", cJSON_Parse("{\"command\":[\"/replica.sh\"]}"));
    }
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_spec_parse(cr, s, &err), 0);
}

static void test_argv_peers_appended(void **state)
{
    (void)state;
    struct rss_spec s;
    load(&s, false);
    char *peers[] = {"rss-db-0.db-svc", "rss-db-10.db-svc"};
    char **argv = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_hook_argv(&s, RSS_HOOK_PRIMARY, peers, 2, &argv, &err), 0);
    /* Exactly the spec's argv, untouched (no shell, no splitting), then one entry per peer. */
    const char *want[] = {"/start.sh", "--mode", "a b; rm -rf /", "rss-db-0.db-svc", "rss-db-10.db-svc"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(argv[i], want[i]);
    assert_null(argv[5]);
    rss_hook_argv_free(argv);
    /* No peers: the command alone. */
    assert_int_equal(rss_hook_argv(&s, RSS_HOOK_STATUS, NULL, 0, &argv, &err), 0);
    assert_string_equal(argv[0], "/check.sh");
    assert_null(argv[1]);
    rss_hook_argv_free(argv);
    rss_hook_argv_free(NULL);
    rss_spec_clear(&s);
}

static void test_argv_rejects(void **state)
{
    (void)state;
    struct rss_spec s;
    load(&s, false);
    char **argv = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(rss_hook_argv(&s, RSS_HOOK_SECONDARY, NULL, 0, &argv, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    char *bad1[] = {"--help"};
    assert_true(rss_hook_argv(&s, RSS_HOOK_PRIMARY, bad1, 1, &argv, &err) < 0);
    rss_error_release(&err);
    char *bad2[] = {""};
    assert_true(rss_hook_argv(&s, RSS_HOOK_PRIMARY, bad2, 1, &argv, &err) < 0);
    rss_error_release(&err);
    char *bad3[] = {NULL};
    assert_true(rss_hook_argv(&s, RSS_HOOK_PRIMARY, bad3, 1, &argv, &err) < 0);
    assert_null(argv);
    rss_error_release(&err);
    /* findings/desired-none-with-peers.json: a forged decision chose the hooks' arguments. Only the
     * DNS names of this RSS's members pass. */
    const char *forged[] = {"evil.example.com",    "attacker.example.com x;reboot",
                            "rss-db-0.other-svc",  "rss-other-0.db-svc",
                            "rss-db-.db-svc",      "rss-db-01.db-svc",
                            "rss-db-x.db-svc",     "rss-db-0.db-svc.evil.com",
                            "rss-db-12345.db-svc", "rss-db-0",
                            "-rss-db-0.db-svc"};
    for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
        char *one[] = {(char *)forged[i]};
        if (rss_hook_argv(&s, RSS_HOOK_STATUS, one, 1, &argv, &err) == 0)
            fail_msg("peer '%s' was accepted", forged[i]);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        assert_null(argv);
        rss_error_release(&err);
    }
    char *good[] = {"rss-db-0.db-svc", "rss-db-9999.db-svc"};
    assert_int_equal(rss_hook_argv(&s, RSS_HOOK_STATUS, good, 2, &argv, &err), 0);
    rss_hook_argv_free(argv);
    rss_spec_clear(&s);
}

/* spec.pod.commandEnv: the hook's argv and peers unchanged, behind `env NAME=VALUE...`; without it, or
 * without an env, exactly the plain argv (hooks written for rss-operator see no difference). */
static void test_argv_env(void **state)
{
    (void)state;
    struct rss_spec s;
    load(&s, false);
    char *peers[] = {"rss-db-0.db-svc"};
    struct rss_hook_env env = {.epoch = 7, .generation = 3, .action = "primary", .action_id = "7-12"};
    char **argv = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_hook_argv_env(&s, RSS_HOOK_PRIMARY, &env, peers, 1, &argv, &err), 0);
    assert_string_equal(argv[0], s.hooks[RSS_HOOK_PRIMARY].argv[0]); /* off by default */
    rss_hook_argv_free(argv);
    s.command_env = true;
    assert_int_equal(rss_hook_argv_env(&s, RSS_HOOK_PRIMARY, &env, peers, 1, &argv, &err), 0);
    const char *want[] = {"env", "RSS_EPOCH=7", "RSS_GENERATION=3", "RSS_ACTION=primary",
                          "RSS_ACTION_ID=7-12"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(argv[i], want[i]);
    size_t n = s.hooks[RSS_HOOK_PRIMARY].argc;
    for (size_t i = 0; i < n; i++)
        assert_string_equal(argv[5 + i], s.hooks[RSS_HOOK_PRIMARY].argv[i]);
    assert_string_equal(argv[5 + n], "rss-db-0.db-svc");
    assert_null(argv[6 + n]);
    rss_hook_argv_free(argv);
    /* status/sequence: epoch and generation only */
    struct rss_hook_env look = {.epoch = 7, .generation = 3};
    assert_int_equal(rss_hook_argv_env(&s, RSS_HOOK_STATUS, &look, NULL, 0, &argv, &err), 0);
    assert_string_equal(argv[3], s.hooks[RSS_HOOK_STATUS].argv[0]);
    rss_hook_argv_free(argv);
    /* no env given (self-fencing's stop): the plain argv */
    assert_int_equal(rss_hook_argv_env(&s, RSS_HOOK_STOP, NULL, NULL, 0, &argv, &err), 0);
    assert_string_equal(argv[0], s.hooks[RSS_HOOK_STOP].argv[0]);
    rss_hook_argv_free(argv);
    rss_spec_clear(&s);
}

static void test_hook_for_action(void **state)
{
    (void)state;
    struct rss_spec plain, full;
    load(&plain, false);
    load(&full, true);
    /* No seed hook: the seed runs `primary` (with no peers), as rss-operator. */
    assert_int_equal(rss_hook_for_action(&plain, RSS_ACTION_SEED), RSS_HOOK_PRIMARY);
    assert_int_equal(rss_hook_for_action(&full, RSS_ACTION_SEED), RSS_HOOK_SEED);
    assert_int_equal(rss_hook_for_action(&plain, RSS_ACTION_PRIMARY), RSS_HOOK_PRIMARY);
    assert_int_equal(rss_hook_for_action(&full, RSS_ACTION_SECONDARY), RSS_HOOK_SECONDARY);
    assert_int_equal(rss_hook_for_action(&plain, RSS_ACTION_STOP), RSS_HOOK_STOP);
    assert_int_equal(rss_hook_for_action(&plain, RSS_ACTION_NONE), RSS_HOOK_KIND_COUNT);
    rss_spec_clear(&plain);
    rss_spec_clear(&full);
}

struct seq_row {
    const char *out;
    size_t len; /* 0: strlen */
    bool ok;
    uint64_t want;
    const char *msg; /* substring of the error */
};

#define L(s) s, sizeof(s) - 1

static const struct seq_row seq_rows[] = {
    {"0", 0, true, 0, NULL},
    {"42", 0, true, 42, NULL},
    {"42\n", 0, true, 42, NULL},
    {"  \t42 \r\n", 0, true, 42, NULL},
    {"\n\n7\n\n", 0, true, 7, NULL},
    {"007", 0, true, 7, NULL},
    {"18446744073709551615", 0, true, UINT64_MAX, NULL},
    {"18446744073709551615\n", 0, true, UINT64_MAX, NULL},
    {"", 0, false, 0, "empty"},
    {"   \n", 0, false, 0, "empty"},
    {"18446744073709551616", 0, false, 0, "overflows 64 bits"},
    {"99999999999999999999999", 0, false, 0, "overflows 64 bits"},
    {"-1", 0, false, 0, "not an unsigned decimal integer (unexpected '-')"},
    {"-0", 0, false, 0, "unexpected '-'"},
    {"+5", 0, false, 0, "unexpected '+'"},
    {"0x1f", 0, false, 0, "unexpected 'x'"},
    {"1f", 0, false, 0, "unexpected 'f'"},
    {"12.5", 0, false, 0, "unexpected '.'"},
    {"1e3", 0, false, 0, "unexpected 'e'"},
    {"12 13", 0, false, 0, "unexpected ' '"},
    {"12\n13\n", 0, false, 0, "unexpected"},
    {"garbage", 0, false, 0, "sequence output 'garbage' is not an unsigned decimal integer"},
    {"seqno: 5", 0, false, 0, "not an unsigned decimal integer"},
    {"ERROR 2002 (HY000): Can't connect", 0, false, 0, "not an unsigned"},
    {"\xef\xbc\x95", 0, false, 0, "\\xef\\xbc\\x95"}, /* fullwidth digit 5 */
    {L("12\0"), false, 0, "contains a NUL byte"},
    {L("\0"
       "12"),
     false, 0, "NUL"},
    {L("1\0"
       "2"),
     false, 0, "NUL"},
};

static void test_sequence_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(seq_rows) / sizeof(seq_rows[0]); i++) {
        const struct seq_row *r = &seq_rows[i];
        size_t len = r->len ? r->len : strlen(r->out);
        uint64_t v = 12345;
        _cleanup_error_ rss_error_t err = NULL;
        int rc = rss_hook_parse_sequence(r->out, len, &v, &err);
        if (r->ok) {
            if (rc < 0) {
                _cleanup_free_ char *m = rss_error_string(err);
                fail_msg("row %zu rejected: %s", i, m);
            }
            assert_true(v == r->want);
        } else {
            if (rc >= 0)
                fail_msg("row %zu accepted as %llu", i, (unsigned long long)v);
            /* Never taken as 0 (or anything): the output value is untouched. */
            assert_true(v == 12345);
            assert_int_equal(rss_error_code(err), RSS_E_INVALID);
            _cleanup_free_ char *m = rss_error_string(err);
            if (!strstr(m, r->msg))
                fail_msg("row %zu: '%s' lacks '%s'", i, m, r->msg);
        }
    }
}

static void test_sequence_limits(void **state)
{
    (void)state;
    uint64_t v = 9;
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(rss_hook_parse_sequence(NULL, 0, &v, &err) < 0);
    assert_true(v == 9);
    rss_error_release(&err);
    /* Whitespace padding beyond the cap is garbage too; the parser must not read past len. */
    size_t n = RSS_HOOK_SEQUENCE_OUTPUT_MAX + 1;
    _cleanup_free_ char *big = rss_xmalloc(n);
    memset(big, ' ', n);
    big[0] = '5';
    assert_true(rss_hook_parse_sequence(big, n, &v, &err) < 0);
    rss_error_release(&err);
    /* Not NUL-terminated: "42" followed by junk outside len. */
    char buf[4] = {'4', '2', 'x', 'x'};
    assert_int_equal(rss_hook_parse_sequence(buf, 2, &v, &err), 0);
    assert_true(v == 42);
    /* A long garbage line is quoted truncated, not whole. */
    char line[200];
    memset(line, 'a', sizeof(line));
    assert_true(rss_hook_parse_sequence(line, sizeof(line), &v, &err) < 0);
    _cleanup_free_ char *m = rss_error_string(err);
    assert_true(strlen(m) < 200);
    assert_non_null(strstr(m, "..."));
}

struct ocf_row {
    int code;
    enum rss_role with_secondary, without_secondary;
};

static const struct ocf_row ocf_rows[] = {
    {0, RSS_ROLE_SECONDARY, RSS_ROLE_PRIMARY}, {7, RSS_ROLE_STOPPED, RSS_ROLE_STOPPED},
    {8, RSS_ROLE_PRIMARY, RSS_ROLE_PRIMARY},   {1, RSS_ROLE_FAILED, RSS_ROLE_FAILED},
    {2, RSS_ROLE_FAILED, RSS_ROLE_FAILED},     {6, RSS_ROLE_FAILED, RSS_ROLE_FAILED},
    {9, RSS_ROLE_FAILED, RSS_ROLE_FAILED},     {-1, RSS_ROLE_FAILED, RSS_ROLE_FAILED},
    {137, RSS_ROLE_FAILED, RSS_ROLE_FAILED},   {255, RSS_ROLE_FAILED, RSS_ROLE_FAILED},
};

static void test_ocf(void **state)
{
    (void)state;
    struct rss_spec plain, full;
    load(&plain, false);
    load(&full, true);
    for (size_t i = 0; i < sizeof(ocf_rows) / sizeof(ocf_rows[0]); i++) {
        assert_int_equal(rss_hook_status_role(&full, ocf_rows[i].code), ocf_rows[i].with_secondary);
        assert_int_equal(rss_hook_status_role(&plain, ocf_rows[i].code), ocf_rows[i].without_secondary);
    }
    rss_spec_clear(&plain);
    rss_spec_clear(&full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv_peers_appended),
        cmocka_unit_test(test_argv_rejects),
        cmocka_unit_test(test_argv_env),
        cmocka_unit_test(test_hook_for_action),
        cmocka_unit_test(test_sequence_rows),
        cmocka_unit_test(test_sequence_limits),
        cmocka_unit_test(test_ocf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
