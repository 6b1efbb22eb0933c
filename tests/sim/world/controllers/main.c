/* main.c -- world-controllers: options, one watch thread per resource, and the reconcile loop.
 *
 * The controllers are level-triggered: any watch event marks the world dirty, and every pass
 * recomputes everything from a snapshot of the caches (also every --resync seconds, which is what
 * notices heartbeats that stop, since a silence sends no event). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "controllers.h"

/* Bursts of events (a kubelet reporting nine pods) become one pass. */
#define MIN_PASS_INTERVAL 0.05

struct world;

struct watched {
    const char *resource; /* plural, also the cache's name */
    const char *group_version;
    const char *ns; /* NULL: all namespaces */
    struct ctl_cache *cache;
    pthread_t thread;
    bool started;
    struct world *w;
};

struct world {
    struct rss_kube *kube;
    atomic_bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool dirty;
    struct watched watched[7];
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void mark_dirty(struct world *w)
{
    pthread_mutex_lock(&w->mu);
    w->dirty = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
}

static int on_event(void *userdata, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct watched *wd = userdata;
    ctl_cache_event(wd->cache, ev, obj);
    if (ev != RSS_KUBE_SYNC_BEGIN)
        mark_dirty(wd->w);
    return 0;
}

static void sleep_unless_stopped(struct world *w, double seconds)
{
    for (double left = seconds; left > 0 && !atomic_load(&w->stop); left -= 0.2) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void *watch_main(void *arg)
{
    struct watched *wd = arg;
    _cleanup_free_ char *path = rss_kube_path(wd->group_version, wd->ns, wd->resource, NULL, NULL);
    struct rss_kube_watch_opts opts = {.stop = &wd->w->stop};
    while (!atomic_load(&wd->w->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_watch(wd->w->kube, path, &opts, on_event, wd, &err) >= 0)
            break;
        /* Only unfixable errors come back (the client retries the rest); keep trying anyway so a
         * world whose server is being set up still converges. */
        rss_log_error(RSS_LOG_WARN, &err, "watching %s", path);
        sleep_unless_stopped(wd->w, 2);
    }
    return NULL;
}

static void on_written(void *userdata, const char *resource, const cJSON *obj)
{
    struct world *w = userdata;
    for (size_t i = 0; i < sizeof(w->watched) / sizeof(w->watched[0]); i++) {
        if (strcmp(w->watched[i].resource, resource) == 0)
            ctl_cache_put(w->watched[i].cache, obj);
    }
}

static void *signal_main(void *arg)
{
    struct world *w = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    rss_log_info("signal %d: stopping", sig);
    atomic_store(&w->stop, true);
    mark_dirty(w);
    return NULL;
}

static bool all_synced(struct world *w)
{
    for (size_t i = 0; i < sizeof(w->watched) / sizeof(w->watched[0]); i++) {
        if (!ctl_cache_synced(w->watched[i].cache))
            return false;
    }
    return true;
}

static void run_pass(struct world *w, struct ctl_nodelc *lc)
{
    struct ctl_snapshot snap = {
        .statefulsets = ctl_cache_snapshot(w->watched[0].cache),
        .daemonsets = ctl_cache_snapshot(w->watched[1].cache),
        .pods = ctl_cache_snapshot(w->watched[2].cache),
        .nodes = ctl_cache_snapshot(w->watched[3].cache),
        .leases = ctl_cache_snapshot(w->watched[4].cache),
        .pvcs = ctl_cache_snapshot(w->watched[5].cache),
        .pdbs = ctl_cache_snapshot(w->watched[6].cache),
        .now = mono_now(),
        .nodelc = lc,
    };
    struct ctl_ctx ctx = {.kube = w->kube, .written = on_written, .userdata = w};
    _cleanup_error_ rss_error_t err = NULL;
    /* Node health first: the others place pods only on nodes it considers alive. */
    if (ctl_nodelc_sync(&ctx, &snap, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "node lifecycle");
    if (ctl_sts_sync(&ctx, &snap, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "statefulsets");
    if (ctl_ds_sync(&ctx, &snap, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "daemonsets");
    if (ctl_sched_sync(&ctx, &snap, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "scheduler");
    /* Budgets last, from the pods as this pass leaves them; a pod event wakes the next pass. */
    if (ctl_pdb_sync(&ctx, &snap, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "disruption");
    cJSON_Delete(snap.statefulsets);
    cJSON_Delete(snap.daemonsets);
    cJSON_Delete(snap.pods);
    cJSON_Delete(snap.nodes);
    cJSON_Delete(snap.leases);
    cJSON_Delete(snap.pvcs);
    cJSON_Delete(snap.pdbs);
}

static void reconcile_loop(struct world *w, double grace, double resync)
{
    struct ctl_nodelc *lc = ctl_nodelc_new(grace);
    double last = 0;
    while (!atomic_load(&w->stop)) {
        pthread_mutex_lock(&w->mu);
        if (!w->dirty) {
            struct timespec deadline;
            clock_gettime(CLOCK_REALTIME, &deadline);
            long long ns = deadline.tv_nsec + (long long)(resync * 1e9);
            deadline.tv_sec += (time_t)(ns / 1000000000LL);
            deadline.tv_nsec = (long)(ns % 1000000000LL);
            while (!w->dirty && !atomic_load(&w->stop)) {
                if (pthread_cond_timedwait(&w->cond, &w->mu, &deadline) == ETIMEDOUT)
                    break;
            }
        }
        w->dirty = false;
        pthread_mutex_unlock(&w->mu);
        if (atomic_load(&w->stop))
            break;
        double since = mono_now() - last;
        if (since < MIN_PASS_INTERVAL) {
            struct timespec ts = {0, (long)((MIN_PASS_INTERVAL - since) * 1e9)};
            nanosleep(&ts, NULL);
        }
        if (!all_synced(w))
            continue;
        last = mono_now();
        run_pass(w, lc);
    }
    ctl_nodelc_free(lc);
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: world-controllers --kubeconfig PATH [--node-grace SECONDS] [--resync SECONDS]\n"
        "  StatefulSet, DaemonSet, scheduler, node-lifecycle and disruption controllers for the test world.\n"
        "  --node-grace  heartbeat silence after which a node goes Ready=Unknown (default 5)\n"
        "  --resync      period of the full reconcile pass without events (default 1)\n");
}

static bool parse_seconds(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 86400)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    rss_log_set_component("controllers");
    const char *kubeconfig = NULL;
    double grace = 5, resync = 1;
    static const struct option longopts[] = {{"kubeconfig", required_argument, NULL, 'k'},
                                             {"node-grace", required_argument, NULL, 'g'},
                                             {"resync", required_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            kubeconfig = optarg;
            break;
        case 'g':
            if (!parse_seconds(optarg, &grace)) {
                fprintf(stderr, "world-controllers: bad --node-grace '%s'\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (!parse_seconds(optarg, &resync)) {
                fprintf(stderr, "world-controllers: bad --resync '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!kubeconfig || optind != argc) {
        usage(stderr);
        return 2;
    }

    /* Signals go to the signal thread only: every thread created below inherits this mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct world w = {
        .watched =
            {
                {"statefulsets", "apps/v1", NULL, NULL, 0, false, NULL},
                {"daemonsets", "apps/v1", NULL, NULL, 0, false, NULL},
                {"pods", "v1", NULL, NULL, 0, false, NULL},
                {"nodes", "v1", NULL, NULL, 0, false, NULL},
                {"leases", "coordination.k8s.io/v1", "kube-node-lease", NULL, 0, false, NULL},
                {"persistentvolumeclaims", "v1", NULL, NULL, 0, false, NULL},
                {"poddisruptionbudgets", "policy/v1", NULL, NULL, 0, false, NULL},
            },
    };
    atomic_init(&w.stop, false);
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cond, NULL);

    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(kubeconfig, &w.kube, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "loading kubeconfig %s", kubeconfig);
        return 1;
    }
    rss_kube_set_user_agent(w.kube, "world-controllers");
    rss_log_info("starting against %s, node grace %.1f s, resync %.1f s", rss_kube_server(w.kube), grace,
                 resync);

    pthread_t sig_thread;
    pthread_create(&sig_thread, NULL, signal_main, &w);
    size_t nw = sizeof(w.watched) / sizeof(w.watched[0]);
    for (size_t i = 0; i < nw; i++) {
        w.watched[i].cache = ctl_cache_new(w.watched[i].resource);
        w.watched[i].w = &w;
    }
    for (size_t i = 0; i < nw; i++)
        w.watched[i].started = pthread_create(&w.watched[i].thread, NULL, watch_main, &w.watched[i]) == 0;

    reconcile_loop(&w, grace, resync);

    for (size_t i = 0; i < nw; i++) {
        if (w.watched[i].started)
            pthread_join(w.watched[i].thread, NULL);
        ctl_cache_free(w.watched[i].cache);
    }
    pthread_join(sig_thread, NULL);
    rss_kube_free(w.kube);
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.mu);
    rss_log_info("stopped");
    return 0;
}
