/* agent_worker.c -- the agent's worker threads, counted: the loop's member jobs and the fence's stops
 * both run on them, and shutdown waits for the hooks in flight. Below the loop and the fence, so that
 * neither reaches up into the other to start a thread. */
#include "rss/thread.h"
#include "agent_internal.h"

int agent_worker_start(struct rss_agent *a, void *(*fn)(void *), void *arg, rss_error_t *err)
{
    a->workers++;
    if (rss_thread_start_detached(fn, arg, err) < 0) {
        a->workers--;
        return -1;
    }
    return 0;
}

void agent_worker_done(struct rss_agent *a)
{
    a->workers--;
    /* The loop waits on the condition: the member this worker held may be due again at once. */
    pthread_cond_broadcast(&a->cond);
}

int rss_agent_busy_workers(struct rss_agent *a)
{
    pthread_mutex_lock(&a->lock);
    int n = a->workers;
    pthread_mutex_unlock(&a->lock);
    return n;
}
