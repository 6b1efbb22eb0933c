/* thread.c -- detached thread start, shared by the agent's workers and its self-fencing. */
#include <pthread.h>

#include "rss/thread.h"

int rss_thread_start_detached(void *(*fn)(void *), void *arg, rss_error_t *err)
{
    pthread_attr_t attr;
    int r = pthread_attr_init(&attr);
    if (r != 0)
        return rss_error_errno(err, r, "starting a thread");
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    r = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (r != 0)
        return rss_error_errno(err, r, "starting a thread");
    return 0;
}
