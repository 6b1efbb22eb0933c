/* bench_kube.c -- prints the Kubernetes client's figures against kubesim (GET, merge PATCH, watch-event
 * delivery: requests/s, p50/p99) and the election's failover time after a SIGKILLed or SIGTERMed leader.
 *
 *   bench_kube --kubesim PATH --candidate PATH [-n N] [--runs R] [--durations LEASE,RENEW,RETRY]
 *
 * Figures only: nothing here asserts a time (the machine is shared and noisy).
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "simfix.h"

static struct simfix sim;
static struct rss_kube *kube;

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, int64_t *lat, int n, int64_t wall_ns)
{
    qsort(lat, (size_t)n, sizeof(*lat), cmp64);
    printf("%-28s n=%-6d %9.0f /s   p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms\n", what, n,
           n / ((double)wall_ns / 1e9), lat[n / 2] / 1e6,
           lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e6, lat[n - 1] / 1e6);
}

static void die(const char *what, rss_error_t *err)
{
    _cleanup_free_ char *s = rss_error_string(*err);
    fprintf(stderr, "bench_kube: %s: %s\n", what, s);
    simfix_stop(&sim);
    exit(1);
}

static void bench_get_patch(int n)
{
    _cleanup_error_ rss_error_t err = NULL;
    char data[1024];
    memset(data, 'x', sizeof(data) - 1);
    data[sizeof(data) - 1] = '\0';
    _cleanup_json_ cJSON *cm = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(cm, "metadata");
    cJSON_AddStringToObject(meta, "name", "bench");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cm, "data"), "blob", data);
    if (rss_kube_create(kube, "/api/v1/namespaces/default/configmaps", cm, NULL, &err) < 0)
        die("create", &err);
    const char *path = "/api/v1/namespaces/default/configmaps/bench";
    int64_t *lat = rss_xcalloc((size_t)n, sizeof(int64_t));

    int64_t t0 = simfix_mono_ns();
    for (int i = 0; i < n; i++) {
        int64_t s = simfix_mono_ns();
        _cleanup_json_ cJSON *got = NULL;
        if (rss_kube_get(kube, path, &got, &err) < 0)
            die("get", &err);
        lat[i] = simfix_mono_ns() - s;
    }
    report("GET (1 KiB object)", lat, n, simfix_mono_ns() - t0);

    t0 = simfix_mono_ns();
    for (int i = 0; i < n; i++) {
        _cleanup_json_ cJSON *p = cJSON_CreateObject();
        char v[32];
        snprintf(v, sizeof(v), "%d", i);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "data"), "v", v);
        int64_t s = simfix_mono_ns();
        if (rss_kube_merge_patch(kube, path, p, NULL, &err) < 0)
            die("patch", &err);
        lat[i] = simfix_mono_ns() - s;
    }
    report("merge PATCH", lat, n, simfix_mono_ns() - t0);
    free(lat);
}

struct par {
    int n;
    int64_t *lat;
};

static void *par_get(void *arg)
{
    struct par *p = arg;
    for (int i = 0; i < p->n; i++) {
        _cleanup_error_ rss_error_t err = NULL;
        _cleanup_json_ cJSON *got = NULL;
        int64_t s = simfix_mono_ns();
        if (rss_kube_get(kube, "/api/v1/namespaces/default/configmaps/bench", &got, &err) < 0)
            die("get", &err);
        p->lat[i] = simfix_mono_ns() - s;
    }
    return NULL;
}

static void bench_parallel_get(int n, int threads)
{
    int per = n / threads;
    int64_t *lat = rss_xcalloc((size_t)per * (size_t)threads, sizeof(int64_t));
    struct par ps[16];
    pthread_t th[16];
    int64_t t0 = simfix_mono_ns();
    for (int i = 0; i < threads; i++) {
        ps[i] = (struct par){.n = per, .lat = lat + i * per};
        pthread_create(&th[i], NULL, par_get, &ps[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    char what[64];
    snprintf(what, sizeof(what), "GET, %d threads, 1 client", threads);
    report(what, lat, per * threads, simfix_mono_ns() - t0);
    free(lat);
}

struct watchbench {
    int n;
    int64_t *sent, *recv;
    atomic_int got;
    atomic_bool synced, stop;
};

static int on_event(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct watchbench *w = ud;
    int64_t now = simfix_mono_ns();
    if (ev == RSS_KUBE_SYNC_END)
        atomic_store(&w->synced, true);
    if (ev != RSS_KUBE_MODIFIED)
        return 0;
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "data"), "v");
    if (!cJSON_IsString(v))
        return 0;
    int i = atoi(v->valuestring);
    if (i >= 0 && i < w->n && !w->recv[i]) {
        w->recv[i] = now;
        atomic_fetch_add(&w->got, 1);
    }
    return 0;
}

static void *watch_main(void *arg)
{
    struct watchbench *w = arg;
    struct rss_kube_watch_opts o = {.field_selector = "metadata.name=bench-watch", .stop = &w->stop};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_watch(kube, "/api/v1/namespaces/default/configmaps", &o, on_event, w, &err) < 0)
        die("watch", &err);
    return NULL;
}

static void bench_watch(int n)
{
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *cm =
        cJSON_Parse("{\"metadata\":{\"name\":\"bench-watch\"},\"data\":{\"v\":\"-1\"}}");
    if (rss_kube_create(kube, "/api/v1/namespaces/default/configmaps", cm, NULL, &err) < 0)
        die("create", &err);
    struct watchbench w = {.n = n};
    w.sent = rss_xcalloc((size_t)n, sizeof(int64_t));
    w.recv = rss_xcalloc((size_t)n, sizeof(int64_t));
    atomic_init(&w.got, 0);
    atomic_init(&w.synced, false);
    atomic_init(&w.stop, false);
    pthread_t th;
    pthread_create(&th, NULL, watch_main, &w);
    while (!atomic_load(&w.synced))
        simfix_sleep_ms(5);
    const char *path = "/api/v1/namespaces/default/configmaps/bench-watch";
    int64_t t0 = simfix_mono_ns();
    for (int i = 0; i < n; i++) {
        _cleanup_json_ cJSON *p = cJSON_CreateObject();
        char v[32];
        snprintf(v, sizeof(v), "%d", i);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "data"), "v", v);
        w.sent[i] = simfix_mono_ns();
        if (rss_kube_merge_patch(kube, path, p, NULL, &err) < 0)
            die("patch", &err);
    }
    for (int i = 0; i < 3000 && atomic_load(&w.got) < n; i++)
        simfix_sleep_ms(10);
    int64_t wall = simfix_mono_ns() - t0;
    atomic_store(&w.stop, true);
    pthread_join(th, NULL);
    int got = atomic_load(&w.got);
    int64_t *lat = rss_xcalloc((size_t)n, sizeof(int64_t));
    int k = 0;
    int64_t last = t0;
    for (int i = 0; i < n; i++)
        if (w.recv[i]) {
            lat[k++] = w.recv[i] - w.sent[i];
            if (w.recv[i] > last)
                last = w.recv[i];
        }
    if (got < n)
        printf("watch: only %d of %d events arrived\n", got, n);
    if (k > 0)
        report("watch event (PATCH->callback)", lat, k, last - t0);
    (void)wall;
    free(lat);
    free(w.sent);
    free(w.recv);
}

/* --- failover --- */

static pid_t candidate(const char *bin, const char *lease, const char *log, const char *durations)
{
    _cleanup_free_ char *err = rss_xasprintf("%s.err", log);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(err, "w", stderr);
        (void)f;
        execl(bin, bin, "--kubeconfig", sim.kubeconfig, "--lease", lease, "--log", log, "--durations",
              durations, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Time of the candidate's first "leading" line at or after `after`, or -1. */
static int64_t leading_after(const char *log, int64_t after)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return -1;
    char line[256];
    int64_t t, found = -1;
    char what[32];
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%" SCNd64 " %31s", &t, what) == 2 && !strcmp(what, "leading") && t >= after) {
            found = t;
            break;
        }
    fclose(f);
    return found;
}

static void bench_failover(const char *bin, int runs, const char *durations, int sig)
{
    long lease_ms = 0, renew_ms = 0, retry_ms = 0;
    sscanf(durations, "%ld,%ld,%ld", &lease_ms, &renew_ms, &retry_ms);
    int64_t *lat = rss_xcalloc((size_t)runs, sizeof(int64_t));
    int ok = 0;
    for (int r = 0; r < runs; r++) {
        char lease[64];
        snprintf(lease, sizeof(lease), "bench-%s-%d", sig == SIGKILL ? "kill" : "term", r);
        _cleanup_free_ char *la = rss_xasprintf("%s/%s-a.log", sim.dir, lease);
        _cleanup_free_ char *lb = rss_xasprintf("%s/%s-b.log", sim.dir, lease);
        pid_t pa = candidate(bin, lease, la, durations);
        pid_t pb = candidate(bin, lease, lb, durations);
        int leader = -1;
        for (int i = 0; i < 3000 && leader < 0; i++) {
            if (leading_after(la, 0) >= 0)
                leader = 0;
            else if (leading_after(lb, 0) >= 0)
                leader = 1;
            else
                simfix_sleep_ms(10);
        }
        if (leader >= 0) {
            simfix_sleep_ms(1000);
            int64_t t = simfix_mono_ns();
            pid_t victim = leader ? pb : pa;
            kill(victim, sig);
            waitpid(victim, NULL, 0);
            if (leader)
                pb = 0;
            else
                pa = 0;
            const char *other = leader ? la : lb;
            int64_t took = -1;
            for (int i = 0; i < 6000 && took < 0; i++) {
                took = leading_after(other, t);
                if (took < 0)
                    simfix_sleep_ms(5);
            }
            if (took >= 0) {
                lat[ok++] = took - t;
                printf("  %s run %d: new leader after %.3f s\n", sig == SIGKILL ? "SIGKILL" : "SIGTERM", r,
                       (double)(took - t) / 1e9);
            }
        }
        if (pa > 0) {
            kill(pa, SIGTERM);
            waitpid(pa, NULL, 0);
        }
        if (pb > 0) {
            kill(pb, SIGTERM);
            waitpid(pb, NULL, 0);
        }
    }
    if (ok > 0) {
        qsort(lat, (size_t)ok, sizeof(*lat), cmp64);
        printf(
            "failover after %s: %d runs, median %.3f s, max %.3f s   (lease %.1f s, renew deadline %.1f s, "
            "retry %.1f s)\n",
            sig == SIGKILL ? "SIGKILL" : "SIGTERM (release)", ok, lat[ok / 2] / 1e9, lat[ok - 1] / 1e9,
            lease_ms / 1e3, renew_ms / 1e3, retry_ms / 1e3);
    } else {
        printf("failover after %s: no successful run\n", sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    }
    free(lat);
}

int main(int argc, char **argv)
{
    const char *kubesim = NULL, *cand = NULL, *durations = "2000,1500,300";
    int n = 2000, runs = 3;
    static const struct option opts[] = {
        {"kubesim", required_argument, NULL, 'k'},
        {"candidate", required_argument, NULL, 'c'},
        {"runs", required_argument, NULL, 'r'},
        {"durations", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kubesim = optarg;
            break;
        case 'c':
            cand = optarg;
            break;
        case 'r':
            runs = atoi(optarg);
            break;
        case 'd':
            durations = optarg;
            break;
        case 'n':
            n = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (!kubesim || !cand || n < 10 || runs < 1) {
        fprintf(stderr, "usage: bench_kube --kubesim PATH --candidate PATH [-n N>=10] [--runs R] "
                        "[--durations L,R,P]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (simfix_start(&sim, kubesim) < 0)
        return 1;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(sim.kubeconfig, &kube, &err) < 0)
        die("client", &err);
    printf("rss kube client against kubesim (HTTPS, loopback, 1 connection per thread reused)\n");
    bench_get_patch(n);
    bench_parallel_get(n, 4);
    bench_watch(n / 2 > 10 ? n / 2 : 10);
    bench_failover(cand, runs, durations, SIGKILL);
    bench_failover(cand, runs, durations, SIGTERM);
    rss_kube_free(kube);
    simfix_stop(&sim);
    return 0;
}
