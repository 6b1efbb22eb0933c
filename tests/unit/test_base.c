/* test_base.c -- the small shared helpers of rss_base: base64, FNV-1a, the JSON integer below 2^53, the
 * growable array and the deadline that stays passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include <cmocka.h>

#include "rss/base64.h"
#include "rss/cleanup.h"
#include "rss/deadline.h"
#include "rss/hash.h"
#include "rss/json.h"

/* --- base64 ---------------------------------------------------------------------------------------- */

static void test_base64_vectors(void **state)
{
    (void)state;
    /* RFC 4648 section 10, both ways. */
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
        _cleanup_free_ char *e = rss_base64_encode(plain[i], strlen(plain[i]));
        assert_string_equal(e, coded[i]);
        size_t n = 99;
        _cleanup_free_ char *d = rss_base64_decode(coded[i], &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(d, plain[i], n);
        assert_int_equal(d[n], '\0');
    }
}

static void test_base64_binary_roundtrip(void **state)
{
    (void)state;
    /* Every byte value and every length modulo 3, as keys and signatures are raw bytes. */
    unsigned char raw[259];
    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof(raw); len++) {
        _cleanup_free_ char *e = rss_base64_encode(raw, len);
        assert_int_equal(strlen(e), 4 * ((len + 2) / 3));
        size_t n = 0;
        _cleanup_free_ char *d = rss_base64_decode(e, &n);
        assert_non_null(d);
        assert_int_equal(n, len);
        assert_memory_equal(d, raw, len);
    }
}

static void test_base64_rejects(void **state)
{
    (void)state;
    size_t n = 7;
    static const char *const bad[] = {
        "aGVsbG8",      /* length not a multiple of 4 */
        "aG!sbG8=",     /* a character outside the alphabet */
        "aG==bG8=",     /* data after padding */
        "aGVsbG8==",    /* padding beyond the quantum */
        "a===",         /* three padding characters */
        "====",         /* padding only */
        "=aGV",         /* padding first */
        "aGVsbG8=\x01", /* a control character after the padding */
        "aGVs-G8=",     /* the URL-safe alphabet is another alphabet */
        "aGVs_G8=",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        char *d = rss_base64_decode(bad[i], &n);
        if (d)
            fail_msg("'%s' decoded", bad[i]);
        assert_int_equal(n, 7); /* untouched */
    }
}

static void test_base64_whitespace(void **state)
{
    (void)state;
    /* Wrapped kubeconfig data: white space anywhere, also after the padding. */
    size_t n;
    _cleanup_free_ char *a = rss_base64_decode("aGVsbG8gd29ybGQ=", &n);
    assert_string_equal(a, "hello world");
    assert_int_equal(n, 11);
    _cleanup_free_ char *b = rss_base64_decode("aGVs\nbG8=\n", &n);
    assert_string_equal(b, "hello");
    _cleanup_free_ char *c = rss_base64_decode(" a G V s\r\n\tb G 8 = ", &n);
    assert_string_equal(c, "hello");
    _cleanup_free_ char *d = rss_base64_decode("\n", &n);
    assert_non_null(d);
    assert_int_equal(n, 0);
}

/* --- FNV-1a ---------------------------------------------------------------------------------------- */

static void test_fnv1a_vectors(void **state)
{
    (void)state;
    /* The reference values of FNV-1a 64 (the offset basis alone for ""). The StatefulSet's spec-hash
     * annotation stores this hash: a changed value would make every leader rewrite every StatefulSet. */
    assert_true(rss_hash_fnv1a("") == 0xcbf29ce484222325ULL);
    assert_true(rss_hash_fnv1a("a") == 0xaf63dc4c8601ec8cULL);
    assert_true(rss_hash_fnv1a("foobar") == 0x85944171f73967e8ULL);
    /* Bytes above 127 count as unsigned. */
    assert_true(rss_hash_fnv1a("\xff") != rss_hash_fnv1a("\x7f"));
}

/* --- JSON integers --------------------------------------------------------------------------------- */

static void test_json_uint53(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool ok;
        uint64_t want;
    } rows[] = {
        {"0", true, 0},
        {"1", true, 1},
        {"42.0", true, 42},
        {"9007199254740992", true, 9007199254740992ULL}, /* 2^53 itself */
        {"9007199254740993", true, 9007199254740992ULL}, /* parsed as 2^53 by the double already */
        {"9007199254740994", false, 0},                  /* above 2^53 */
        {"1e300", false, 0},                             /* its cast to uint64_t would be undefined */
        {"-1", false, 0},
        {"-0.5", false, 0},
        {"0.5", false, 0},
        {"1.5", false, 0},
        {"\"5\"", false, 0},
        {"true", false, 0},
        {"null", false, 0},
        {"[1]", false, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        _cleanup_json_ cJSON *j = cJSON_Parse(rows[i].json);
        assert_non_null(j);
        uint64_t v = 77;
        if (rss_json_uint53(j, &v) != rows[i].ok)
            fail_msg("%s: expected %s", rows[i].json, rows[i].ok ? "accepted" : "refused");
        assert_true(v == (rows[i].ok ? rows[i].want : 77));
    }
    uint64_t v = 77;
    assert_false(rss_json_uint53(NULL, &v));
    /* NaN and infinities are not JSON, but a number node may still hold them. */
    _cleanup_json_ cJSON *nan = cJSON_CreateNumber(0.0 / 0.0);
    _cleanup_json_ cJSON *inf = cJSON_CreateNumber(1.0 / 0.0);
    assert_false(rss_json_uint53(nan, &v));
    assert_false(rss_json_uint53(inf, &v));
    assert_true(v == 77);
}

/* --- the growable array ---------------------------------------------------------------------------- */

struct item {
    int a;
    char *s;
};

static void test_xarray_push(void **state)
{
    (void)state;
    struct item *items = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        struct item *it = rss_xarray_push(&items, &n, &cap, sizeof(*items));
        assert_ptr_equal(it, &items[i]);
        assert_int_equal(it->a, 0); /* zeroed */
        assert_null(it->s);
        it->a = i;
        assert_int_equal(n, (size_t)i + 1);
        assert_true(cap >= n);
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(items[i].a, i); /* kept across every growth */
    /* Doubling: 1000 elements in at most 1024 places. */
    assert_true(cap <= 1024);
    free(items);

    /* An array built elsewhere without a capacity (cap 0 < n) keeps its elements. */
    int *ints = rss_xcalloc(3, sizeof(*ints));
    ints[0] = 10, ints[1] = 11, ints[2] = 12;
    size_t k = 3, kc = 0;
    *(int *)rss_xarray_push(&ints, &k, &kc, sizeof(*ints)) = 13;
    assert_int_equal(k, 4);
    assert_true(kc >= 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ints[i], 10 + i);
    free(ints);
}

/* --- the deadline ------------------------------------------------------------------------------------ */

static void test_deadline_sticky(void **state)
{
    (void)state;
    rss_deadline_t d;
    rss_deadline_set(&d, 100);
    assert_true(rss_deadline_alive(&d, 99));
    /* The renewal's owner read 100, then the deadline passed and a reader saw it: the late renewal
     * must not move it (the term ended for that reader), and every later look sees it ended. */
    assert_false(rss_deadline_alive(&d, 100));
    assert_false(rss_deadline_move(&d, 100, 500));
    assert_false(rss_deadline_alive(&d, 101));
    assert_int_equal(rss_deadline_peek(&d), 0);
    /* A renewal that lands late, but before any reader looked, moves it: nobody saw the term end. */
    rss_deadline_set(&d, 100);
    assert_true(rss_deadline_move(&d, 100, 500));
    assert_true(rss_deadline_alive(&d, 200));
    /* A move from a stale value (a resign cleared it, or another move came first) fails. */
    assert_false(rss_deadline_move(&d, 100, 900));
    rss_deadline_clear(&d);
    assert_false(rss_deadline_move(&d, 0, 900));
    assert_false(rss_deadline_alive(&d, 0));
}

/* Readers and a mover race on one passed deadline: whatever the interleaving, a reader's false answer
 * and a successful move never both happen. */
struct race {
    rss_deadline_t d;
    atomic_int readers_false;
};

static void *race_reader(void *arg)
{
    struct race *r = arg;
    if (!rss_deadline_alive(&r->d, 150))
        atomic_fetch_add(&r->readers_false, 1);
    return NULL;
}

static void test_deadline_race(void **state)
{
    (void)state;
    for (int round = 0; round < 2000; round++) {
        struct race r;
        rss_deadline_set(&r.d, 100);
        atomic_init(&r.readers_false, 0);
        pthread_t t[3];
        for (int i = 0; i < 3; i++)
            assert_int_equal(pthread_create(&t[i], NULL, race_reader, &r), 0);
        bool moved = rss_deadline_move(&r.d, 100, 1000);
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], NULL);
        if (moved)
            assert_int_equal(atomic_load(&r.readers_false), 0);
        else
            assert_int_equal(rss_deadline_peek(&r.d), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_vectors), cmocka_unit_test(test_base64_binary_roundtrip),
        cmocka_unit_test(test_base64_rejects), cmocka_unit_test(test_base64_whitespace),
        cmocka_unit_test(test_fnv1a_vectors),  cmocka_unit_test(test_json_uint53),
        cmocka_unit_test(test_xarray_push),    cmocka_unit_test(test_deadline_sticky),
        cmocka_unit_test(test_deadline_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
