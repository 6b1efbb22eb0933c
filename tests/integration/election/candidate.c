/* candidate.c -- one leader-election candidate process for the election tests and benchmark.
 *
 *   candidate --kubeconfig PATH --lease NAME --log FILE [--id IDENTITY] [--durations LEASE,RENEW,RETRY ms]
 *             [--no-release] [--node NODE --boot-id ID] [--watch]
 *
 * --watch: a thread watches the Lease and feeds the election with it (rss_election_observe), as rssd's
 * agent does.
 * Runs rss_election until SIGTERM/SIGINT and logs, one line each, "<CLOCK_MONOTONIC ns> <event> [arg]":
 *   start <identity> | leading <epoch> | stopped | newleader <identity> | act <epoch> | exit
 * "act" lines come from a worker thread that stands for leader work: every 20 ms it does one unit of
 * work if and only if rss_election_leading() says so, so they show when this process really acted.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/election.h"
#include "rss/kube.h"
#include "rss/log.h"

static FILE *logf_;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rss_election *election;
static atomic_bool done;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void logline(const char *event, const char *arg)
{
    pthread_mutex_lock(&log_mu);
    fprintf(logf_, "%" PRId64 " %s%s%s\n", mono_ns(), event, arg ? " " : "", arg ? arg : "");
    fflush(logf_);
    pthread_mutex_unlock(&log_mu);
}

static void on_started(void *ud, int64_t epoch)
{
    (void)ud;
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, epoch);
    logline("leading", buf);
}

static void on_stopped(void *ud)
{
    (void)ud;
    logline("stopped", NULL);
}

static void on_new_leader(void *ud, const char *id)
{
    (void)ud;
    logline("newleader", id[0] ? id : "-");
}

static void *worker(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        int64_t epoch;
        if (rss_election_leading(election, &epoch)) {
            char buf[32];
            snprintf(buf, sizeof(buf), "%" PRId64, epoch);
            logline("act", buf);
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static const char *watch_ns, *watch_name;
static struct rss_kube *watch_kube;

static int on_watch(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)ud;
    (void)err;
    if (ev == RSS_KUBE_ADDED || ev == RSS_KUBE_MODIFIED)
        rss_election_observe(election, obj);
    return 0;
}

static void *watcher(void *arg)
{
    (void)arg;
    _cleanup_free_ char *coll = rss_kube_path("coordination.k8s.io/v1", watch_ns, "leases", NULL, NULL);
    _cleanup_free_ char *fs = rss_xasprintf("metadata.name=%s", watch_name);
    while (!atomic_load(&done)) {
        _cleanup_error_ rss_error_t err = NULL;
        struct rss_kube_watch_opts o = {.field_selector = fs, .stop = &done};
        if (rss_kube_watch(watch_kube, coll, &o, on_watch, NULL, &err) < 0) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 200 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    rss_election_stop(election);
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *lease = NULL, *logpath = NULL, *id = NULL, *node = NULL, *boot = NULL;
    long dur[3] = {0, 0, 0};
    bool no_release = false, watch = false;
    static const struct option opts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"lease", required_argument, NULL, 'l'},
        {"log", required_argument, NULL, 'o'},
        {"id", required_argument, NULL, 'i'},
        {"durations", required_argument, NULL, 'd'},
        {"no-release", no_argument, NULL, 'n'},
        {"node", required_argument, NULL, 'N'},
        {"boot-id", required_argument, NULL, 'b'},
        {"watch", no_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kubeconfig = optarg;
            break;
        case 'l':
            lease = optarg;
            break;
        case 'o':
            logpath = optarg;
            break;
        case 'i':
            id = optarg;
            break;
        case 'd':
            if (sscanf(optarg, "%ld,%ld,%ld", &dur[0], &dur[1], &dur[2]) != 3) {
                fprintf(stderr, "candidate: --durations LEASE,RENEW,RETRY (ms)\n");
                return 2;
            }
            break;
        case 'n':
            no_release = true;
            break;
        case 'N':
            node = optarg;
            break;
        case 'b':
            boot = optarg;
            break;
        case 'w':
            watch = true;
            break;
        default:
            return 2;
        }
    }
    if (!kubeconfig || !lease || !logpath) {
        fprintf(stderr, "usage: candidate --kubeconfig PATH --lease NAME --log FILE [--id ID] "
                        "[--durations L,R,P] [--no-release] [--node NODE --boot-id ID] [--watch]\n");
        return 2;
    }
    rss_log_set_component("candidate");
    logf_ = fopen(logpath, "a");
    if (!logf_) {
        perror(logpath);
        return 1;
    }
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_kube *kube = NULL;
    if (rss_kube_new(kubeconfig, &kube, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "kube client");
        return 1;
    }
    struct rss_election_config cfg = {
        .kube = kube,
        .name = lease,
        .identity = id,
        .lease_duration_ms = dur[0],
        .renew_deadline_ms = dur[1],
        .retry_period_ms = dur[2],
        .no_release = no_release,
        .on_started_leading = on_started,
        .on_stopped_leading = on_stopped,
        .on_new_leader = on_new_leader,
        .node = node,
        .boot_id = boot,
    };
    if (rss_election_new(&cfg, &election, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "election");
        rss_kube_free(kube);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    logline("start", rss_election_identity(election));
    pthread_t th, tw;
    pthread_create(&th, NULL, worker, NULL);
    if (watch) {
        watch_kube = kube;
        watch_ns = rss_kube_namespace(kube);
        watch_name = lease;
        pthread_create(&tw, NULL, watcher, NULL);
    }
    int r = rss_election_run(election, &err);
    atomic_store(&done, true);
    pthread_join(th, NULL);
    if (watch)
        pthread_join(tw, NULL);
    if (r < 0)
        rss_log_error(RSS_LOG_ERROR, &err, "election");
    logline("exit", NULL);
    rss_election_free(election);
    rss_kube_free(kube);
    fclose(logf_);
    return r < 0 ? 1 : 0;
}
