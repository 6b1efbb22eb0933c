/* agent.c -- the agent role's lifecycle and event loop: starts the watches and the heartbeat, and
 * hands each member that has something to do to its own worker thread. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "agent_internal.h"

#define LOOP_TICK_MS      1000
#define SHUTDOWN_GRACE_MS 2000

/* A new id per process start (observed.agent): only its uniqueness matters, a peer re-reads this node's
 * heartbeat Lease when it changes. Without getrandom the clocks and pid still tell two starts apart. */
static void make_incarnation(char out[RSS_AGENT_INCARNATION_LEN + 1])
{
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
        rnd = (uint64_t)rss_clock_mono_ns() ^ ((uint64_t)rss_clock_wall_ms() << 20) ^ (uint64_t)getpid();
    snprintf(out, RSS_AGENT_INCARNATION_LEN + 1, "%016" PRIx64, rnd);
}

int rss_agent_new(const struct rss_agent_config *cfg, struct rss_agent **ret, rss_error_t *err)
{
    if (!cfg->kube || !cfg->cri)
        return rss_error_make(err, RSS_E_INVALID, 0, "agent: a kube and a CRI client are required");
    if (!cfg->node || !*cfg->node)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "agent: the node name is required (--node or $NODE_NAME)");
    if (!cfg->ns || !*cfg->ns)
        return rss_error_make(err, RSS_E_INVALID, 0, "agent: the namespace is required");
    if (cfg->fence_timeout_ms < 0 || cfg->heartbeat_ms < 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "agent: negative durations");
    if (cfg->heartbeat_misses && (cfg->heartbeat_misses < RSS_AGENT_HEARTBEAT_MISSES_MIN ||
                                  cfg->heartbeat_misses > RSS_AGENT_HEARTBEAT_MISSES_MAX))
        return rss_error_make(err, RSS_E_INVALID, 0, "agent: heartbeat misses %d not in [%d, %d]",
                              cfg->heartbeat_misses, RSS_AGENT_HEARTBEAT_MISSES_MIN,
                              RSS_AGENT_HEARTBEAT_MISSES_MAX);
    if (rss_agent_timing_check(cfg->fence_timeout_ms ? cfg->fence_timeout_ms : 30000,
                               cfg->heartbeat_ms ? cfg->heartbeat_ms : 10000, err) < 0)
        return rss_error_wrap(err, "agent");
    struct rss_agent *a = rss_xcalloc(1, sizeof(*a));
    a->state_lock_fd = -1;
    a->kube = cfg->kube;
    a->cri = cfg->cri;
    a->node = rss_xstrdup(cfg->node);
    a->ns = rss_xstrdup(cfg->ns);
    a->identity = rss_xstrdup(cfg->identity ? cfg->identity : cfg->node);
    make_incarnation(a->incarnation);
    a->started_wall_ms = rss_clock_wall_ms();
    a->fence_timeout_ms = cfg->fence_timeout_ms ? cfg->fence_timeout_ms : 30000;
    a->heartbeat_ms = cfg->heartbeat_ms ? cfg->heartbeat_ms : 10000;
    a->heartbeat_misses = cfg->heartbeat_misses ? cfg->heartbeat_misses : RSS_AGENT_HEARTBEAT_MISSES;
    a->hook_output_max = cfg->hook_output_max;
    a->leader_lease_seen = cfg->leader_lease_seen;
    a->leader_lease_ud = cfg->leader_lease_ud;
    if (cfg->namespaces && cfg->namespaces->n) {
        a->managed.names = rss_xcalloc(cfg->namespaces->n, sizeof(char *));
        for (size_t i = 0; i < cfg->namespaces->n; i++)
            a->managed.names[i] = rss_xstrdup(cfg->namespaces->names[i]);
        a->managed.n = cfg->namespaces->n;
    }
    a->n_scopes = a->managed.n ? a->managed.n : 1;
    a->pod_scopes = rss_xcalloc(a->n_scopes, sizeof(*a->pod_scopes));
    for (size_t i = 0; i < a->n_scopes; i++) {
        const char *ns = a->managed.n ? a->managed.names[i] : NULL;
        a->pod_scopes[i] = (struct agent_scope){.a = a, .ns = ns};
    }
    pthread_mutex_init(&a->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->cond, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&a->api_ok_ms, rss_clock_mono_ms());
    if (cfg->state_dir && *cfg->state_dir)
        a->state_path = rss_xasprintf("%s/fence-%s.json", cfg->state_dir, a->node);
    atomic_store(&a->loop_tick_ms, rss_clock_mono_ms());
    if (agent_peers_init(a, err) < 0) {
        rss_agent_free(a);
        return -1;
    }
    *ret = a;
    return 0;
}

void rss_agent_free(struct rss_agent *a)
{
    if (!a)
        return;
    agent_rss_watch_stop_all(a); /* none left after rss_agent_run */
    while (a->members) {
        struct agent_member *m = a->members;
        a->members = m->next;
        agent_member_free(m);
    }
    agent_records_clear(a);
    for (size_t i = 0; i < a->n_specs; i++)
        agent_spec_put(a, a->specs[i]);
    free(a->specs);
    agent_peers_free(a);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a->node);
    free(a->ns);
    free(a->identity);
    free(a->state_path);
    if (a->state_lock_fd >= 0)
        close(a->state_lock_fd);
    free(a->pod_scopes);
    rss_namespaces_clear(&a->managed);
    free(a);
}

bool rss_agent_ready(struct rss_agent *a)
{
    pthread_mutex_lock(&a->lock);
    /* Every RSS with a member here has its object and its records listed (none: nothing to wait for). */
    bool r = a->lease_read && a->pods_synced && agent_rss_watch_all_synced(a) && !a->fenced;
    pthread_mutex_unlock(&a->lock);
    return r;
}

int64_t rss_agent_loop_age_ms(struct rss_agent *a)
{
    return rss_clock_mono_ms() - atomic_load(&a->loop_tick_ms);
}

static char *dup_or_null(const char *s)
{
    return s ? rss_xstrdup(s) : NULL;
}

/* Lock held. Starts a worker for m if it has something to do; one job at a time per member. */
static void dispatch(struct rss_agent *a, struct agent_member *m, int64_t now)
{
    if (m->busy || !(m->wake || now >= m->next_due_ms))
        return;
    struct agent_spec *spec = agent_spec_get(a, m->ns, m->rss);
    m->wake = false;
    if (!spec) {
        /* No (valid) RSS of that name in the pod's namespace: not a member (rule 5). A new RSS wakes it. */
        m->next_due_ms = INT64_MAX;
        return;
    }
    struct agent_job *j = rss_xcalloc(1, sizeof(*j));
    *j = (struct agent_job){.a = a,
                            .m = m,
                            .spec = spec,
                            .rv = dup_or_null(m->rv),
                            .desired_json = dup_or_null(m->desired_json),
                            .observed_json = dup_or_null(m->observed_json),
                            .uid = rss_xstrdup(m->uid),
                            .rss = rss_xstrdup(m->rss),
                            .cname = rss_xstrdup(m->container_name),
                            .lease_known = a->lease_known,
                            .lease_epoch = a->lease_epoch,
                            .fenced = a->fenced,
                            .fence_done = m->fence_done};
    m->fence_done = false;
    m->busy = true;
    _cleanup_error_ rss_error_t err = NULL;
    if (agent_worker_start(a, agent_job_run, j, &err) < 0) {
        rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: no worker; retrying", m->ns, m->pod);
        m->busy = false;
        m->next_due_ms = now + 1000;
        agent_spec_put(a, spec);
        agent_job_free(j);
    }
}

int rss_agent_run(struct rss_agent *a, const atomic_bool *stop, rss_error_t *err)
{
    a->stop = stop;
    if (!agent_state_lock(a, stop))
        return 0; /* asked to stop while another rssd of this node still ran */
    agent_fence_state_restore(a);
    /* The pod watches: one per managed namespace (or one cluster-wide); the RSS objects and the member
     * records are watched per RSS with a member here, from the loop (agent_rss_watch.c). */
    const size_t n_fixed = 4;
    size_t n = n_fixed + a->n_scopes;
    void *(**fns)(void *) = rss_xcalloc(n, sizeof(*fns));
    void **args = rss_xcalloc(n, sizeof(*args));
    void *(*fixed[])(void *) = {agent_watch_lease, agent_heartbeat, agent_peers_prober, agent_peers_reader};
    for (size_t i = 0; i < n_fixed; i++) {
        fns[i] = fixed[i];
        args[i] = a;
    }
    for (size_t i = 0; i < a->n_scopes; i++) {
        fns[n_fixed + i] = agent_watch_pods;
        args[n_fixed + i] = &a->pod_scopes[i];
    }
    pthread_t *th = rss_xcalloc(n, sizeof(*th));
    size_t started = 0;
    int r = 0;
    for (; started < n; started++) {
        int e = pthread_create(&th[started], NULL, fns[started], args[started]);
        if (e != 0) {
            r = rss_error_errno(err, e, "agent: starting a thread");
            break;
        }
    }
    rss_log_info("agent on node %s started (namespace %s, fence timeout %ld ms, incarnation %s)", a->node,
                 a->ns, a->fence_timeout_ms, a->incarnation);
    pthread_mutex_lock(&a->lock);
    while (r == 0 && !atomic_load(stop)) {
        int64_t now = rss_clock_mono_ms();
        atomic_store(&a->loop_tick_ms, now);
        agent_fence_check(a, now);
        int64_t n_members = 0;
        for (struct agent_member *m = a->members; m; m = m->next)
            n_members++;
        rss_metrics_set(RSS_METRIC_MEMBERS, n_members);
        agent_rss_watch_update(a);
        /* Rule 10: nothing is dispatched before the Lease GET answered, the pod list arrived and the
         * member's RSS and its records were listed (a member without its record would probe as if it had
         * never reported). */
        if (a->lease_read && a->pods_synced)
            for (struct agent_member *m = a->members; m; m = m->next)
                if (agent_rss_watch_synced(a, m->ns, m->rss))
                    dispatch(a, m, now);
        struct timespec ts = rss_clock_mono_after(LOOP_TICK_MS);
        pthread_cond_timedwait(&a->cond, &a->lock, &ts);
    }
    pthread_mutex_unlock(&a->lock);
    /* First, before joining threads that may wait out a request to an API server we cannot reach: a fence
     * in flight ends now, the leader's dead window does not wait for us. */
    agent_fence_finish(a);
    agent_rss_watch_stop_all(a);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(fns);
    free(args);
    /* Members keep running; only wait briefly for hooks in flight so their results get published. */
    int64_t end = rss_clock_mono_ms() + SHUTDOWN_GRACE_MS;
    int busy;
    while ((busy = rss_agent_busy_workers(a)) > 0 && rss_clock_mono_ms() < end)
        usleep(50 * 1000);
    if (busy > 0)
        rss_log_info("agent stopping with %d hook(s) still running: the next agent reports them interrupted",
                     busy);
    rss_log_info("agent on node %s stopped", a->node);
    return r;
}
