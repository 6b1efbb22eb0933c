/* leader_workers.c -- the leader's reconcile workqueue (client-go's semantics) and its worker threads. */
#include <stdlib.h>
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/log.h"

void leader_queue_init(struct leader_queue *q)
{
    memset(q, 0, sizeof(*q));
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
}

static void work_clear(struct leader_work *w)
{
    free(w->key);
    cJSON_Delete(w->obj);
    *w = (struct leader_work){0};
}

void leader_queue_clear(struct leader_queue *q)
{
    for (size_t i = 0; i < q->n_pending; i++)
        work_clear(&q->pending[i]);
    free(q->pending);
    for (size_t i = 0; i < q->n_processing; i++)
        free(q->processing[i]);
    free(q->processing);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    memset(q, 0, sizeof(*q));
}

static bool processing_locked(const struct leader_queue *q, const char *key)
{
    for (size_t i = 0; i < q->n_processing; i++)
        if (!strcmp(q->processing[i], key))
            return true;
    return false;
}

void leader_queue_add(struct leader_queue *q, const char *key, const cJSON *obj, bool full)
{
    pthread_mutex_lock(&q->mu);
    struct leader_work *w = NULL;
    for (size_t i = 0; i < q->n_pending && !w; i++)
        if (!strcmp(q->pending[i].key, key))
            w = &q->pending[i];
    if (!w) {
        w = rss_xarray_push(&q->pending, &q->n_pending, &q->cap_pending, sizeof(*q->pending));
        *w = (struct leader_work){.key = rss_xstrdup(key)};
    }
    /* The newest word wins: a listed copy replaces an older one; a bare mark (the watch saw news) drops
     * a listed copy, so the worker reads the cache, which is at least as new as the event. */
    cJSON_Delete(w->obj);
    w->obj = obj ? cJSON_Duplicate(obj, true) : NULL;
    w->full |= full;
    /* A key being processed waits in pending: leader_queue_done wakes a worker for it. */
    if (!processing_locked(q, key))
        pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* The first pending key no worker holds, or n_pending. */
static size_t takeable_locked(const struct leader_queue *q)
{
    size_t i = 0;
    while (i < q->n_pending && processing_locked(q, q->pending[i].key))
        i++;
    return i;
}

bool leader_queue_take(struct leader_queue *q, struct leader_work *w, bool block)
{
    pthread_mutex_lock(&q->mu);
    size_t i = takeable_locked(q);
    while (!q->shutdown && i == q->n_pending && block) {
        pthread_cond_wait(&q->cv, &q->mu);
        i = takeable_locked(q);
    }
    bool got = !q->shutdown && i < q->n_pending;
    if (got) {
        *w = q->pending[i];
        /* Oldest first: the order keys were marked in. */
        memmove(q->pending + i, q->pending + i + 1, (q->n_pending - i - 1) * sizeof(*q->pending));
        q->n_pending--;
        *(char **)rss_xarray_push(&q->processing, &q->n_processing, &q->cap_processing,
                                  sizeof(*q->processing)) = rss_xstrdup(w->key);
        q->taken++;
    }
    pthread_mutex_unlock(&q->mu);
    return got;
}

void leader_queue_done(struct leader_queue *q, struct leader_work *w)
{
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n_processing; i++) {
        if (strcmp(q->processing[i], w->key))
            continue;
        free(q->processing[i]);
        q->processing[i] = q->processing[--q->n_processing];
        break;
    }
    /* The key may be pending again (marked while it was processed), and leader_queue_idle waiters. */
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    work_clear(w);
}

void leader_queue_shutdown(struct leader_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

bool leader_queue_idle(struct leader_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool idle = !q->n_pending && !q->n_processing;
    pthread_mutex_unlock(&q->mu);
    return idle;
}

static void *worker_main(void *p)
{
    struct leader_pool *pool = p;
    struct leader_work w;
    while (leader_queue_take(pool->q, &w, true)) {
        pool->fn(pool->ud, &w);
        leader_queue_done(pool->q, &w);
    }
    return NULL;
}

size_t leader_pool_start(struct leader_pool *pool, size_t n, struct leader_queue *q, leader_work_fn fn,
                         void *ud)
{
    *pool = (struct leader_pool){.q = q, .fn = fn, .ud = ud};
    pool->threads = rss_xcalloc(n ? n : 1, sizeof(*pool->threads));
    for (size_t i = 0; i < n; i++) {
        int e = pthread_create(&pool->threads[pool->n], NULL, worker_main, pool);
        if (e) {
            rss_log_warn("leader: cannot start reconcile worker %zu of %zu (%s)", i + 1, n, strerror(e));
            continue;
        }
        pool->n++;
    }
    return pool->n;
}

void leader_pool_join(struct leader_pool *pool)
{
    if (pool->q)
        leader_queue_shutdown(pool->q);
    for (size_t i = 0; i < pool->n; i++)
        pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    *pool = (struct leader_pool){0};
}
