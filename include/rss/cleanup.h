/* cleanup.h -- scope-bound freeing with the cleanup attribute (systemd's model).
 *
 *   _cleanup_free_ char *s = NULL;        freed with free() when s leaves scope
 *   _cleanup_close_ int fd = -1;          closed when >= 0
 *   _cleanup_json_ cJSON *obj = NULL;     cJSON_Delete
 *   _cleanup_error_ rss_error_t err = NULL;
 *   return TAKE_PTR(s);                   hands ownership out and leaves NULL behind
 */
#ifndef RSS_CLEANUP_H
#define RSS_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "rss/error.h"

#define _cleanup_(f) __attribute__((cleanup(f)))

#define TAKE_PTR(p)                                                                                          \
    ({                                                                                                       \
        __typeof__(p) _tp = (p);                                                                             \
        (p) = NULL;                                                                                          \
        _tp;                                                                                                 \
    })

#define TAKE_FD(fd)                                                                                          \
    ({                                                                                                       \
        int _tf = (fd);                                                                                      \
        (fd) = -1;                                                                                           \
        _tf;                                                                                                 \
    })

/* Defines `static inline void func##p(type **p)` calling func(*p) when *p is not NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                              \
    static inline void func##p(type **p)                                                                     \
    {                                                                                                        \
        if (*p)                                                                                              \
            func(*p);                                                                                        \
    }

static inline void rss_freep(void *p)
{
    free(*(void **)p);
}

static inline void rss_closep(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}

static inline void rss_fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}

static inline void rss_json_deletep(cJSON **j)
{
    if (*j)
        cJSON_Delete(*j);
}

static inline void rss_error_releasep(rss_error_t *e)
{
    rss_error_release(e);
}

#define _cleanup_free_   _cleanup_(rss_freep)
#define _cleanup_close_  _cleanup_(rss_closep)
#define _cleanup_fclose_ _cleanup_(rss_fclosep)
#define _cleanup_json_   _cleanup_(rss_json_deletep)
#define _cleanup_error_  _cleanup_(rss_error_releasep)

/* Allocation that cannot fail: aborts on OOM (crun, conmon). The DaemonSet restarts us. */
void *rss_xmalloc(size_t n);
void *rss_xcalloc(size_t nmemb, size_t n);
void *rss_xrealloc(void *p, size_t n);
char *rss_xstrdup(const char *s);
char *rss_xstrndup(const char *s, size_t n); /* at most n bytes of s, NUL-terminated */
char *rss_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The one growable array: appends one zeroed element of `size` bytes to the array *(void **)arrayp of
 * *n elements, doubling its capacity *cap when full (start from NULL, 0, 0), and returns the new
 * element. Aborts on OOM or when the size would overflow, like the calls above:
 *   struct peer *p = rss_xarray_push(&a->peers, &a->n_peers, &a->cap_peers, sizeof(*a->peers)); */
void *rss_xarray_push(void *arrayp, size_t *n, size_t *cap, size_t size);

#endif
