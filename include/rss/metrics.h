/* metrics.h -- rssd's Prometheus metrics: process-wide counters and gauges, rendered for GET /metrics.
 *
 * Every function is thread-safe and cheap (atomics); nothing allocates except rendering. Names follow
 * Prometheus conventions: the rssd_ prefix, _total for counters, _seconds and _bytes for units.
 */
#ifndef RSS_METRICS_H
#define RSS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "rss/strbuf.h"

/* A hook run: kind is a hook name (sequence, seed, ...), result a result name (ok, failed, timeout,
 * interrupted, ...), seconds how long it took. Feeds rssd_hook_runs_total{hook,result} and the
 * rssd_hook_duration_seconds{hook} histogram. Unknown names are counted under "other". */
void rss_metrics_hook(const char *kind, const char *result, double seconds);

enum rss_metric_counter {
    RSS_METRIC_API_ERRORS,     /* rssd_api_errors_total: Kubernetes API calls that failed */
    RSS_METRIC_WATCH_RESTARTS, /* rssd_watch_restarts_total: watches re-listed or re-opened */
    RSS_METRIC_SEEDS,       /* rssd_seeds_total: seeds (bootstrap, recovery, force-seed) issued as leader */
    RSS_METRIC_FENCE_STOPS, /* rssd_fence_stops_total: members stopped by self-fencing */
    RSS_METRIC_FENCE_KILLS, /* rssd_fence_kills_total: member containers killed (CRI StopContainer) after
                               a self-fencing `stop` failed or timed out */
    RSS_METRIC_PROBES,      /* rssd_failsafe_probes_total: peers asked to vouch (the API server silent) */
    RSS_METRIC_PROBE_CONNS, /* rssd_failsafe_probe_connections_total: connections those probes opened */
    RSS_METRIC_COUNTER_COUNT,
};
void rss_metrics_inc(enum rss_metric_counter c);
void rss_metrics_add(enum rss_metric_counter c, uint64_t n);

enum rss_metric_gauge {
    RSS_METRIC_LEADING, /* rssd_leader: 1 while this process leads */
    RSS_METRIC_EPOCH,   /* rssd_leader_epoch: the epoch it leads with (0 when not leading) */
    RSS_METRIC_CUT_OFF, /* rssd_api_cut_off: 1 while the API server has been unreachable past the fence
                           timeout */
    RSS_METRIC_MEMBERS, /* rssd_members: member pods on this node */
    RSS_METRIC_GAUGE_COUNT,
};
void rss_metrics_set(enum rss_metric_gauge g, int64_t value);

/* The leader's per-RSS gauges (metrics_rss.c), taken from the status it computed for ns/name: rssd_rss_phase{
 * rss_namespace,rss,phase} (status.phase), rssd_rss_waiting{rss_namespace,rss,reason} (present while the
 * WaitingForMembers condition is True; reason is its reason: WaitingForMembers, WaitingForStart,
 * RolloutHalted, SequenceError, ...), rssd_rss_members_held{rss_namespace,rss} (members with
 * leftOut.held). Not `namespace`: Prometheus sets that target label to the
 * scraped pod's namespace and would rename ours. Only the leader exports them: forget drops one RSS
 * (deleted), clear all (term ended). */
void rss_metrics_rss_status(const char *ns, const char *name, const cJSON *status);
void rss_metrics_rss_forget(const char *ns, const char *name);
void rss_metrics_rss_clear(void);
/* Appends the exposition of the per-RSS gauges; rss_metrics_render calls it. */
void rss_metrics_rss_render(struct rss_strbuf *out);

/* Appends the Prometheus text exposition (format 0.0.4) of every metric, plus the process's resident
 * memory (rssd_resident_memory_bytes, from /proc/self/statm). */
void rss_metrics_render(struct rss_strbuf *out);

#endif
