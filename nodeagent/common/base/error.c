/* error.c -- the rss_error_t chain: make, wrap, format, release. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/error.h"

__attribute__((format(printf, 1, 0))) static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    return s;
}

static int push(rss_error_t *err, enum rss_errc code, int detail, char *msg, struct rss_error *cause)
{
    struct rss_error *e = rss_xcalloc(1, sizeof(*e));
    e->code = code;
    e->detail = detail;
    e->msg = msg;
    e->cause = cause;
    *err = e;
    /* Negative even when code is 0, like crun's libcrun_make_error. */
    return -(int)code - 1;
}

int rss_error_make(rss_error_t *err, enum rss_errc code, int detail, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(fmt, ap);
    va_end(ap);
    /* A caller that forgot to release keeps the older error as the cause rather than leaking it. */
    return push(err, code, detail, msg, *err);
}

int rss_error_errno(rss_error_t *err, int errno_value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    _cleanup_free_ char *ctx = vformat(fmt, ap);
    va_end(ap);
    char *msg = rss_xasprintf("%s: %s", ctx, strerror(errno_value));
    return push(err, RSS_E_SYSTEM, errno_value, msg, *err);
}

int rss_error_wrap(rss_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(fmt, ap);
    va_end(ap);
    if (*err == NULL)
        return push(err, RSS_E_INTERNAL, 0, msg, NULL);
    return push(err, (*err)->code, (*err)->detail, msg, *err);
}

enum rss_errc rss_error_code(const rss_error_t err)
{
    return err ? err->code : 0;
}

char *rss_error_string(const rss_error_t err)
{
    size_t len = 1;
    for (const struct rss_error *e = err; e; e = e->cause)
        len += strlen(e->msg) + 2;
    char *s = rss_xmalloc(len), *w = s;
    for (const struct rss_error *e = err; e; e = e->cause)
        w = stpcpy(stpcpy(w, e->msg), e->cause ? ": " : "");
    *w = '\0';
    return s;
}

const char *rss_errc_name(enum rss_errc code)
{
    static const char *const names[] = {
        [RSS_E_INTERNAL] = "INTERNAL",
        [RSS_E_SYSTEM] = "SYSTEM",
        [RSS_E_INVALID] = "INVALID",
        [RSS_E_NOT_FOUND] = "NOT_FOUND",
        [RSS_E_CONFLICT] = "CONFLICT",
        [RSS_E_EXISTS] = "EXISTS",
        [RSS_E_GONE] = "GONE",
        [RSS_E_UNAUTHORIZED] = "UNAUTHORIZED",
        [RSS_E_TIMEOUT] = "TIMEOUT",
        [RSS_E_UNAVAILABLE] = "UNAVAILABLE",
        [RSS_E_NOT_RUNNING] = "NOT_RUNNING",
        [RSS_E_TOO_LARGE] = "TOO_LARGE",
        [RSS_E_CANCELLED] = "CANCELLED",
        [RSS_E_UNSUPPORTED] = "UNSUPPORTED",
    };
    if ((size_t)code < sizeof(names) / sizeof(names[0]) && names[code])
        return names[code];
    return "UNKNOWN";
}

void rss_error_release(rss_error_t *err)
{
    if (!err)
        return;
    struct rss_error *e = *err;
    while (e) {
        struct rss_error *next = e->cause;
        free(e->msg);
        free(e);
        e = next;
    }
    *err = NULL;
}
