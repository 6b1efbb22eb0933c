/* metrics.c -- rssd's Prometheus counters and gauges (atomics), and their text exposition. */
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rss/metrics.h"

static const char *const hooks[] = {"sequence", "seed", "primary", "secondary",
                                    "status",   "stop", "detach",  "other"};
static const char *const results[] = {"ok", "failed", "timeout", "interrupted", "rejected", "other"};
#define N_HOOKS   (sizeof(hooks) / sizeof(hooks[0]))
#define N_RESULTS (sizeof(results) / sizeof(results[0]))
/* Seconds: hooks last from milliseconds (status) to minutes (an SST behind a primary). */
static const double buckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600};
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

static atomic_ullong runs[N_HOOKS][N_RESULTS];
static atomic_ullong bucket_counts[N_HOOKS][N_BUCKETS];
static atomic_ullong duration_us[N_HOOKS]; /* the histogram's sum, in microseconds */
static atomic_ullong counters[RSS_METRIC_COUNTER_COUNT];
static atomic_llong gauges[RSS_METRIC_GAUGE_COUNT];

static size_t index_of(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i + 1 < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return n - 1;
}

void rss_metrics_hook(const char *kind, const char *result, double seconds)
{
    size_t h = index_of(hooks, N_HOOKS, kind), r = index_of(results, N_RESULTS, result);
    atomic_fetch_add(&runs[h][r], 1);
    for (size_t b = 0; b < N_BUCKETS; b++)
        if (seconds <= buckets[b])
            atomic_fetch_add(&bucket_counts[h][b], 1);
    atomic_fetch_add(&duration_us[h], (unsigned long long)(seconds > 0 ? seconds * 1e6 : 0));
}

void rss_metrics_inc(enum rss_metric_counter c)
{
    rss_metrics_add(c, 1);
}

void rss_metrics_add(enum rss_metric_counter c, uint64_t n)
{
    if (c < RSS_METRIC_COUNTER_COUNT)
        atomic_fetch_add(&counters[c], n);
}

void rss_metrics_set(enum rss_metric_gauge g, int64_t value)
{
    if (g < RSS_METRIC_GAUGE_COUNT)
        atomic_store(&gauges[g], value);
}

static void family(struct rss_strbuf *o, const char *name, const char *type, const char *help)
{
    rss_strbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The process_* metrics every Prometheus client library exports (its process collector), from /proc. */
static void process_render(struct rss_strbuf *o, long long vsize, long long rss)
{
    long tck = sysconf(_SC_CLK_TCK);
    unsigned long long utime = 0, stime = 0, start = 0, btime = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    if (f) {
        char buf[1024];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        /* After the command's ")": state is field 3; utime 14, stime 15, starttime 22. */
        const char *p = strrchr(buf, ')');
        if (p && sscanf(p + 2,
                        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
                        &utime, &stime, &start) != 3)
            utime = stime = start = 0;
    }
    f = fopen("/proc/stat", "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "btime %llu", &btime) == 1)
                break;
        fclose(f);
    }
    int fds = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            fds += e->d_name[0] != '.';
        closedir(d);
        fds--; /* the directory's own descriptor */
    }
    struct rlimit rl = {0};
    getrlimit(RLIMIT_NOFILE, &rl);
    family(o, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
    rss_strbuf_printf(o, "process_cpu_seconds_total %.2f\n",
                      tck > 0 ? (double)(utime + stime) / (double)tck : 0);
    family(o, "process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.");
    rss_strbuf_printf(o, "process_start_time_seconds %.2f\n",
                      tck > 0 ? (double)btime + (double)start / (double)tck : 0);
    family(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    rss_strbuf_printf(o, "process_resident_memory_bytes %lld\n", rss);
    family(o, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    rss_strbuf_printf(o, "process_virtual_memory_bytes %lld\n", vsize);
    family(o, "process_open_fds", "gauge", "Number of open file descriptors.");
    rss_strbuf_printf(o, "process_open_fds %d\n", fds < 0 ? 0 : fds);
    family(o, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
    rss_strbuf_printf(o, "process_max_fds %lld\n", (long long)rl.rlim_cur);
}

void rss_metrics_render(struct rss_strbuf *o)
{
    family(o, "rssd_hook_runs_total", "counter", "Hook runs by hook and result.");
    for (size_t h = 0; h < N_HOOKS; h++)
        for (size_t r = 0; r < N_RESULTS; r++) {
            unsigned long long v = atomic_load(&runs[h][r]);
            if (v)
                rss_strbuf_printf(o, "rssd_hook_runs_total{hook=\"%s\",result=\"%s\"} %llu\n", hooks[h],
                                  results[r], v);
        }
    family(o, "rssd_hook_duration_seconds", "histogram", "How long hooks ran, by hook.");
    for (size_t h = 0; h < N_HOOKS; h++) {
        unsigned long long total = 0;
        for (size_t r = 0; r < N_RESULTS; r++)
            total += atomic_load(&runs[h][r]);
        if (!total)
            continue;
        for (size_t b = 0; b < N_BUCKETS; b++)
            rss_strbuf_printf(o, "rssd_hook_duration_seconds_bucket{hook=\"%s\",le=\"%g\"} %llu\n", hooks[h],
                              buckets[b], atomic_load(&bucket_counts[h][b]));
        rss_strbuf_printf(o, "rssd_hook_duration_seconds_bucket{hook=\"%s\",le=\"+Inf\"} %llu\n", hooks[h],
                          total);
        rss_strbuf_printf(o, "rssd_hook_duration_seconds_sum{hook=\"%s\"} %.6f\n", hooks[h],
                          (double)atomic_load(&duration_us[h]) / 1e6);
        rss_strbuf_printf(o, "rssd_hook_duration_seconds_count{hook=\"%s\"} %llu\n", hooks[h], total);
    }
    static const struct {
        const char *name, *help;
    } cn[RSS_METRIC_COUNTER_COUNT] = {
        {"rssd_api_errors_total", "Kubernetes API calls that failed."},
        {"rssd_watch_restarts_total", "Watches re-listed or re-opened."},
        {"rssd_seeds_total", "Seeds this process issued as leader."},
        {"rssd_fence_stops_total", "Members stopped by self-fencing."},
        {"rssd_fence_kills_total", "Member containers killed after a self-fencing stop failed."},
        {"rssd_failsafe_probes_total", "Peers asked to vouch while the API server was silent."},
        {"rssd_failsafe_probe_connections_total", "Connections the failsafe's probes opened."},
    };
    for (int c = 0; c < RSS_METRIC_COUNTER_COUNT; c++) {
        family(o, cn[c].name, "counter", cn[c].help);
        rss_strbuf_printf(o, "%s %llu\n", cn[c].name, atomic_load(&counters[c]));
    }
    static const struct {
        const char *name, *help;
    } gn[RSS_METRIC_GAUGE_COUNT] = {
        {"rssd_leader", "1 while this process leads."},
        {"rssd_leader_epoch", "The epoch this process leads with; 0 when it does not lead."},
        {"rssd_api_cut_off", "1 while the API server has been unreachable past the fence timeout."},
        {"rssd_members", "Member pods on this node."},
    };
    for (int g = 0; g < RSS_METRIC_GAUGE_COUNT; g++) {
        family(o, gn[g].name, "gauge", gn[g].help);
        rss_strbuf_printf(o, "%s %lld\n", gn[g].name, (long long)atomic_load(&gauges[g]));
    }
    rss_metrics_rss_render(o);
    long pages = 0, size = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &pages) != 2)
            size = pages = 0;
        fclose(f);
    }
    long long page = sysconf(_SC_PAGESIZE);
    family(o, "rssd_resident_memory_bytes", "gauge", "Resident memory of this process.");
    rss_strbuf_printf(o, "rssd_resident_memory_bytes %lld\n", (long long)pages * page);
    family(o, "rssd_build_info", "gauge", "1, labelled with the version of this rssd.");
    rss_strbuf_printf(o, "rssd_build_info{version=\"%s\"} 1\n", RSS_VERSION);
    process_render(o, size * page, pages * page);
}
