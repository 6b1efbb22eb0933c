/* clock.c -- monotonic and wall clocks, and RFC 3339 times with glibc's calendar functions. */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "rss/clock.h"

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t rss_clock_mono_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

int64_t rss_clock_boot_ms(void)
{
    return clock_ms(CLOCK_BOOTTIME);
}

int64_t rss_clock_wall_ms(void)
{
    return clock_ms(CLOCK_REALTIME);
}

int64_t rss_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct timespec rss_clock_mono_after(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (ms < 0)
        ms = 0;
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

static struct timespec now_or(const struct timespec *ts)
{
    struct timespec t;
    if (ts)
        return *ts;
    clock_gettime(CLOCK_REALTIME, &t);
    return t;
}

/* Writes "YYYY-MM-DDTHH:MM:SS" and returns its length. The year always has four digits (strftime's %Y
 * writes "506" for the year 506, which rss_time_parse rightly rejects: found by fuzz_record_codec). */
static size_t format_seconds(char buf[RSS_TIME_LEN], time_t secs)
{
    struct tm tm;
    gmtime_r(&secs, &tm);
    int n = snprintf(buf, RSS_TIME_LEN, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return n > 0 && n < RSS_TIME_LEN ? (size_t)n : 0;
}

char *rss_time_micro(char buf[RSS_TIME_LEN], const struct timespec *ts)
{
    struct timespec t = now_or(ts);
    size_t n = format_seconds(buf, t.tv_sec);
    snprintf(buf + n, RSS_TIME_LEN - n, ".%06ldZ", (long)(t.tv_nsec / 1000) % 1000000);
    return buf;
}

char *rss_time_seconds(char buf[RSS_TIME_LEN], const struct timespec *ts)
{
    struct timespec t = now_or(ts);
    size_t n = format_seconds(buf, t.tv_sec);
    snprintf(buf + n, RSS_TIME_LEN - n, "Z");
    return buf;
}

char *rss_time_ms(char buf[RSS_TIME_LEN], int64_t ms)
{
    int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    int frac = (int)(ms - secs * 1000);
    size_t n = format_seconds(buf, (time_t)secs);
    if (frac)
        snprintf(buf + n, RSS_TIME_LEN - n, ".%03dZ", frac);
    else
        snprintf(buf + n, RSS_TIME_LEN - n, "Z");
    return buf;
}

/* strptime() skips spaces and takes one-digit fields; the API's times have fixed-width fields, so the
 * shape is checked first: digits where digits belong, the separators where they belong. */
static bool shaped(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        char c = s[i];
        if (shape[i] == 'd' ? (c < '0' || c > '9') : shape[i] == 'T' ? (c != 'T' && c != 't') : c != shape[i])
            return false;
    }
    return true;
}

int rss_time_parse(const char *s, struct timespec *ts, rss_error_t *err)
{
    if (!s || strnlen(s, 20) < 20 || !shaped(s))
        return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s' is not RFC 3339 (YYYY-MM-DDTHH:MM:SSZ)",
                              s ? s : "");
    struct tm tm = {0};
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p || p != s + 19)
        return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s' is out of range", s);
    int mday = tm.tm_mday, mon = tm.tm_mon;
    long nsec = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if (nd < 9) {
                nsec = nsec * 10 + (*p - '0');
                nd++;
            }
        if (nd == 0)
            return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s': empty fraction", s);
        for (; nd < 9; nd++)
            nsec *= 10;
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && p[1] >= '0' && p[1] <= '2' && p[2] >= '0' && p[2] <= '9' &&
               p[3] == ':' && p[4] >= '0' && p[4] <= '5' && p[5] >= '0' && p[5] <= '9') {
        off = (*p == '-' ? -1 : 1) *
              (((p[1] - '0') * 10 + p[2] - '0') * 3600L + ((p[4] - '0') * 10 + p[5] - '0') * 60L);
        p += 6;
    } else {
        return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s' has no zone ('Z' or +hh:mm)", s);
    }
    if (*p)
        return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s': trailing characters", s);
    if (tm.tm_sec > 59)
        tm.tm_sec = 59; /* a leap second counts as the second before it */
    time_t t = timegm(&tm);
    /* timegm() normalises Feb 30 to Mar 2: such a date was not a date. */
    if (tm.tm_mday != mday || tm.tm_mon != mon)
        return rss_error_make(err, RSS_E_INVALID, 0, "time '%.40s' is not a calendar date", s);
    ts->tv_sec = t - off;
    ts->tv_nsec = nsec;
    return 0;
}

int rss_time_parse_ms(const char *s, int64_t *ms, rss_error_t *err)
{
    struct timespec ts;
    if (rss_time_parse(s, &ts, err) < 0)
        return -1;
    *ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return 0;
}
