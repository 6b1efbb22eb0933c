/* leader_term.c -- runs the leader role for each term the election announces, on one thread. */
#include <pthread.h>
#include <stdlib.h>

#include "rss/cleanup.h"
#include "rss/leader.h"
#include "rss/log.h"
#include "rss/metrics.h"

struct rss_leader_terms {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int64_t pending_epoch; /* -1: none */
    atomic_bool stop;      /* the current term ends (lost Lease, or shutdown) */
    bool quit;             /* under lock */
    bool started;
    pthread_t thread;
    struct rss_leader *leader;
};

struct rss_leader_terms *rss_leader_terms_new(void)
{
    struct rss_leader_terms *t = rss_xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    t->pending_epoch = -1;
    return t;
}

void rss_leader_terms_on_started(void *terms, int64_t epoch)
{
    struct rss_leader_terms *t = terms;
    rss_log_info("leading with epoch %lld", (long long)epoch);
    rss_metrics_set(RSS_METRIC_LEADING, 1);
    rss_metrics_set(RSS_METRIC_EPOCH, epoch);
    pthread_mutex_lock(&t->lock);
    t->pending_epoch = epoch;
    atomic_store(&t->stop, false);
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

void rss_leader_terms_on_stopped(void *terms)
{
    struct rss_leader_terms *t = terms;
    atomic_store(&t->stop, true);
    rss_metrics_set(RSS_METRIC_LEADING, 0);
    rss_metrics_set(RSS_METRIC_EPOCH, 0);
    rss_metrics_rss_clear(); /* another leader reports the RSSs now: no stale series from this one */
    rss_log_info("no longer leading");
}

static void *term_thread(void *arg)
{
    struct rss_leader_terms *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->quit) {
        if (t->pending_epoch < 0) {
            pthread_cond_wait(&t->cond, &t->lock);
            continue;
        }
        int64_t epoch = t->pending_epoch;
        t->pending_epoch = -1;
        pthread_mutex_unlock(&t->lock);
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_leader_run(t->leader, epoch, &t->stop, &err) < 0)
            rss_log_error(RSS_LOG_ERROR, &err, "leader term %lld", (long long)epoch);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int rss_leader_terms_start(struct rss_leader_terms *t, struct rss_leader *leader, rss_error_t *err)
{
    t->leader = leader;
    int r = pthread_create(&t->thread, NULL, term_thread, t);
    if (r != 0)
        return rss_error_errno(err, r, "leader: starting the term thread");
    t->started = true;
    return 0;
}

void rss_leader_terms_stop(struct rss_leader_terms *t)
{
    if (!t)
        return;
    atomic_store(&t->stop, true);
    pthread_mutex_lock(&t->lock);
    t->quit = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    if (t->started)
        pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t);
}
