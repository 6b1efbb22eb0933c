/* test_election_boot.c -- the reboot shortcut's pure decisions in tables: which boot record names the
 * holder, and which pair of boot ids proves that the holder's node rebooted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/election.h"

static void test_boot_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *annotation, *holder;
        bool ok;
        const char *node, *boot;
    } rows[] = {
        {"n1 b-1 n1_aaaaaaaa_1_00000000", "n1_aaaaaaaa_1_00000000", true, "n1", "b-1"},
        {"n1 0f7c2d0e-1111-2222-3333-444455556666 id", "id", true, "n1",
         "0f7c2d0e-1111-2222-3333-444455556666"},
        /* a record left by an earlier holder says nothing about this one */
        {"n1 b-1 other", "id", false, NULL, NULL},
        {"n1 b-1 id", "id2", false, NULL, NULL},
        {"n1 b-1 id2", "id", false, NULL, NULL},
        /* malformed: missing or extra fields, empty fields, odd characters */
        {"n1 b-1", "b-1", false, NULL, NULL},
        {"n1 b-1 id extra", "id extra", false, NULL, NULL},
        {" b-1 id", "id", false, NULL, NULL},
        {"n1  id", "id", false, NULL, NULL},
        {"n1 b-1 ", "", false, NULL, NULL},
        {"n/1 b-1 id", "id", false, NULL, NULL},
        {"n1 b\t1 id", "id", false, NULL, NULL},
        {"", "id", false, NULL, NULL},
        {NULL, "id", false, NULL, NULL},
        {"n1 b-1 id", NULL, false, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *node = NULL, *boot = NULL;
        bool ok = rss_election_boot_parse(rows[i].annotation, rows[i].holder, &node, &boot);
        if (ok != rows[i].ok)
            fail_msg("row %zu: %s, want %s", i, ok ? "parsed" : "rejected",
                     rows[i].ok ? "parsed" : "rejected");
        if (ok) {
            assert_string_equal(node, rows[i].node);
            assert_string_equal(boot, rows[i].boot);
        } else {
            assert_null(node);
            assert_null(boot);
        }
        free(node);
        free(boot);
    }
}

static void test_boot_changed_table(void **state)
{
    (void)state;
    static const struct {
        const char *recorded, *reported;
        bool changed;
    } rows[] = {
        {"b-1", "b-2", true},
        {"0f7c2d0e-1111-2222-3333-444455556666", "9a7c2d0e-1111-2222-3333-444455556666", true},
        /* same boot: the holder may be alive */
        {"b-1", "b-1", false},
        /* unknown on either side: no proof, wait as before */
        {"b-1", NULL, false},
        {"b-1", "", false},
        {NULL, "b-2", false},
        {"", "b-2", false},
        {NULL, NULL, false},
        /* garbage is not a boot id */
        {"b-1", "b 2", false},
        {"b-1", "b\n2", false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rss_election_boot_changed(rows[i].recorded, rows[i].reported) != rows[i].changed)
            fail_msg("row %zu: want %s", i, rows[i].changed ? "changed" : "no proof");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boot_parse_table),
        cmocka_unit_test(test_boot_changed_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
