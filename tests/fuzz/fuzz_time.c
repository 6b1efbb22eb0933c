/* fuzz_time.c -- RFC 3339 times of the Kubernetes API (rss_time_parse, rss_time_parse_ms): renewTime,
 * observed.time, status times. Asserts beyond "no crash": a rejection is RSS_E_INVALID with a message and
 * leaves the result untouched; a success has 0 <= tv_nsec < 1e9 and agrees with rss_time_parse_ms; and
 * for years 0001-9998 the value formatted by rss_time_micro / rss_time_seconds / rss_time_ms parses back
 * to the same instant (at that precision) and formats to the same text again. */
#include <time.h>

#include "fuzz.h"
#include "rss/clock.h"
#include "rss/error.h"

#define YEAR_1    (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define YEAR_9999 253370764800LL   /* 9999-01-01T00:00:00Z */

static void round_trip(const struct timespec *ts)
{
    char buf[RSS_TIME_LEN], buf2[RSS_TIME_LEN];
    struct timespec back;
    rss_error_t err = NULL;
    rss_time_micro(buf, ts);
    FUZZ_CHECK(rss_time_parse(buf, &back, &err) == 0);
    FUZZ_CHECK(back.tv_sec == ts->tv_sec && back.tv_nsec == ts->tv_nsec / 1000 * 1000);
    FUZZ_CHECK(!strcmp(rss_time_micro(buf2, &back), buf));
    rss_time_seconds(buf, ts);
    FUZZ_CHECK(rss_time_parse(buf, &back, &err) == 0 && back.tv_sec == ts->tv_sec && back.tv_nsec == 0);
    int64_t ms = (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000, ms2 = 0;
    rss_time_ms(buf, ms);
    FUZZ_CHECK(rss_time_parse_ms(buf, &ms2, &err) == 0 && ms2 == ms);
    FUZZ_CHECK(!strcmp(rss_time_ms(buf2, ms2), buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 128)
        return 0;
    char *s = fuzz_strndup(data, size);
    struct timespec ts = {12345, 678};
    int64_t ms = 42;
    rss_error_t err = NULL, err2 = NULL;
    int r = rss_time_parse(s, &ts, &err);
    int r2 = rss_time_parse_ms(s, &ms, &err2);
    if (r < 0) {
        FUZZ_CHECK(r2 < 0 && err && rss_error_code(err) == RSS_E_INVALID && err->msg && err2);
        FUZZ_CHECK(ts.tv_sec == 12345 && ts.tv_nsec == 678 && ms == 42);
        rss_error_release(&err);
        rss_error_release(&err2);
        free(s);
        return 0;
    }
    FUZZ_CHECK(r2 == 0 && err == NULL && err2 == NULL);
    FUZZ_CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    FUZZ_CHECK(ms == (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    if (ts.tv_sec >= YEAR_1 && ts.tv_sec < YEAR_9999)
        round_trip(&ts);
    free(s);
    return 0;
}
