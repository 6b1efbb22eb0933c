/* fuzz_duration.c -- rss_spec_parse_duration() (reconcileInterval, hook timeouts) on arbitrary strings.
 * Asserts beyond "no crash": a success is in (0, 366d]; the input is accepted exactly when an independent
 * reference model of the grammar (bare seconds, or number+unit terms with ms, s, m, h, d, D) accepts it,
 * with the same value; and the value printed back as "<n>ms" and as bare/normalised terms parses to
 * itself. */
#include <ctype.h>
#include <inttypes.h>

#include "fuzz.h"
#include "rss/error.h"
#include "rss/spec.h"

#define MAX_MS (366ULL * 86400000ULL)

static bool reference(const char *s, uint64_t *out)
{
    unsigned __int128 total = 0;
    const char *p = s;
    bool first = true;
    if (!*p)
        return false;
    while (*p) {
        if (!isdigit((unsigned char)*p))
            return false;
        unsigned __int128 n = 0;
        while (isdigit((unsigned char)*p)) {
            n = n * 10 + (unsigned)(*p++ - '0');
            if (n > MAX_MS)
                return false;
        }
        uint64_t unit;
        if (!*p && first)
            unit = 1000;
        else if (p[0] == 'm' && p[1] == 's')
            unit = 1, p += 2;
        else if (*p == 's')
            unit = 1000, p++;
        else if (*p == 'm')
            unit = 60000, p++;
        else if (*p == 'h')
            unit = 3600000, p++;
        else if (*p == 'd' || *p == 'D')
            unit = 86400000, p++;
        else
            return false;
        first = false;
        total += n * unit;
        if (total > MAX_MS)
            return false;
    }
    if (total == 0)
        return false;
    *out = (uint64_t)total;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char *s = fuzz_strndup(data, size);
    uint64_t ms = 0, want = 0;
    rss_error_t err = NULL;
    int r = rss_spec_parse_duration(s, &ms, &err);
    bool ok = reference(s, &want);
    if (!ok) {
        FUZZ_CHECK(r < 0 && err && rss_error_code(err) == RSS_E_INVALID);
        rss_error_release(&err);
        free(s);
        return 0;
    }
    FUZZ_CHECK(r == 0 && err == NULL);
    FUZZ_CHECK(ms == want && ms > 0 && ms <= MAX_MS);
    char buf[64];
    uint64_t back = 0;
    snprintf(buf, sizeof(buf), "%" PRIu64 "ms", ms);
    FUZZ_CHECK(rss_spec_parse_duration(buf, &back, &err) == 0 && back == ms);
    /* normalised: d h m s ms terms, zero terms left out */
    uint64_t rest = ms, units[] = {86400000, 3600000, 60000, 1000, 1};
    const char *names[] = {"d", "h", "m", "s", "ms"};
    size_t len = 0;
    for (size_t i = 0; i < 5; i++) {
        if (rest / units[i])
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%" PRIu64 "%s", rest / units[i], names[i]);
        rest %= units[i];
    }
    back = 0;
    FUZZ_CHECK(rss_spec_parse_duration(buf, &back, &err) == 0 && back == ms);
    free(s);
    return 0;
}
