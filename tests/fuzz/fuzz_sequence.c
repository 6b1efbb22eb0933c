/* fuzz_sequence.c -- rss_hook_parse_sequence() on arbitrary `sequence` hook output. Asserts beyond "no
 * crash": the verdict equals an independent reference model of the documented grammar (whitespace, one
 * unsigned decimal that fits 64 bits, whitespace; no NUL, at most RSS_HOOK_SEQUENCE_OUTPUT_MAX bytes) with
 * the same value; garbage is an error with a message, never 0 (rule 6); and a parsed value printed back in
 * decimal parses to itself. */
#include <inttypes.h>

#include "fuzz.h"
#include "rss/error.h"
#include "rss/hook.h"

static bool ref_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The documented grammar, written again without looking at the parser's loop. */
static bool reference(const uint8_t *d, size_t n, uint64_t *v)
{
    if (n > RSS_HOOK_SEQUENCE_OUTPUT_MAX || memchr(d, 0, n))
        return false;
    size_t i = 0;
    while (i < n && ref_space(d[i]))
        i++;
    size_t start = i;
    unsigned __int128 acc = 0;
    while (i < n && d[i] >= '0' && d[i] <= '9') {
        acc = acc * 10 + (d[i] - '0');
        if (acc > UINT64_MAX)
            return false;
        i++;
    }
    if (i == start)
        return false;
    while (i < n && ref_space(d[i]))
        i++;
    *v = (uint64_t)acc;
    return i == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t got = 12345, want = 0;
    rss_error_t err = NULL;
    int r = rss_hook_parse_sequence((const char *)data, size, &got, &err);
    bool ok = reference(data, size, &want);
    if (!ok) {
        FUZZ_CHECK(r < 0);
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID && err->msg && err->msg[0]);
        FUZZ_CHECK(got == 12345); /* garbage never written as a value */
        rss_error_release(&err);
        return 0;
    }
    FUZZ_CHECK(r == 0 && err == NULL);
    FUZZ_CHECK(got == want);
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", got);
    uint64_t back = 0;
    FUZZ_CHECK(rss_hook_parse_sequence(buf, (size_t)n, &back, &err) == 0 && back == got);
    return 0;
}
