/* clock.h -- clocks and the RFC 3339 times of the Kubernetes API, in one place.
 *
 * Durations and deadlines use the monotonic clock (rss_clock_mono_ms): wall-clock jumps must never
 * make a lease look expired or a node look dead. The wall clock is only for times written into
 * objects (renewTime, Event timestamps, `observed.time`).
 */
#ifndef RSS_CLOCK_H
#define RSS_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rss/error.h"

/* The most two machines' wall clocks may differ (NTP-synchronised nodes; a node's own clock across a reboot,
 * before NTP has stepped it, counts as another machine's). Every safety decision that compares a wall time
 * one machine wrote with another machine's clock stays safe up to this (docs/leader.md, "Clocks"). */
#define RSS_CLOCK_SKEW_MAX_MS 5000

/* Milliseconds of CLOCK_MONOTONIC (for durations) and of CLOCK_REALTIME (for timestamps). */
int64_t rss_clock_mono_ms(void);
int64_t rss_clock_wall_ms(void);
/* Milliseconds of CLOCK_BOOTTIME: like CLOCK_MONOTONIC, plus time suspended. The one clock the same
 * across processes of one boot that also counts a suspend, for stamps that outlive a process
 * (rss/fencestate.h). */
int64_t rss_clock_boot_ms(void);
/* CLOCK_MONOTONIC in nanoseconds (stall detectors, jitter seeds). */
int64_t rss_clock_mono_ns(void);

/* The same clocks as a timespec `ms` milliseconds from now (for pthread_cond_timedwait on a
 * condition variable bound to CLOCK_MONOTONIC, and for time-outs). */
struct timespec rss_clock_mono_after(int64_t ms);

/* Big enough for every format below. */
#define RSS_TIME_LEN 40

/* metav1.MicroTime: "2025-01-02T03:04:05.123456Z", always exactly six digits (the API server
 * parses it with a fixed layout). ts NULL = now. Returns buf. */
char *rss_time_micro(char buf[RSS_TIME_LEN], const struct timespec *ts);
/* metav1.Time: "2025-01-02T03:04:05Z". ts NULL = now. Returns buf. */
char *rss_time_seconds(char buf[RSS_TIME_LEN], const struct timespec *ts);
/* Milliseconds since the epoch: "2025-01-02T03:04:05.123Z", or without a fraction when it is 0. */
char *rss_time_ms(char buf[RSS_TIME_LEN], int64_t ms);

/* Parses RFC 3339: date 'T' time, optional fraction (up to 9 digits kept), then 'Z' or +hh:mm /
 * -hh:mm. Anything else, or an impossible date (Feb 30), is RSS_E_INVALID. */
int rss_time_parse(const char *s, struct timespec *ts, rss_error_t *err);
/* The same, to milliseconds since the epoch (fraction truncated). */
int rss_time_parse_ms(const char *s, int64_t *ms, rss_error_t *err);

#endif
