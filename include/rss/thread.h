/* thread.h -- starting detached threads, with the failure converted to rss_error_t. */
#ifndef RSS_THREAD_H
#define RSS_THREAD_H

#include "rss/error.h"

/* Starts fn(arg) on a detached thread. On failure fn never runs and arg is still the caller's;
 * returns negative with an errno-coded error. */
int rss_thread_start_detached(void *(*fn)(void *), void *arg, rss_error_t *err);

#endif
