/* error.h -- the one error type of rssd: a code, a foreign detail, a message and a cause.
 *
 * The model is crun's: a function that can fail takes `rss_error_t *err` as its last
 * parameter. On success it returns >= 0 and leaves *err untouched. On failure it returns a
 * negative value (the result of rss_error_make / rss_error_wrap) and *err owns an error.
 * Callers add context on the way up with rss_error_wrap(); only the top level logs the error
 * (rss_log_error) and then releases it (rss_error_release, or `_cleanup_error_`).
 *
 * Foreign error codes (gRPC status, HTTP status, errno, curl codes) are converted into an
 * `enum rss_errc` in exactly one place per library: cri.c for gRPC, kube_http.c for curl and
 * HTTP. The original value stays available in `detail` for messages and tests.
 */
#ifndef RSS_ERROR_H
#define RSS_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

enum rss_errc {
    RSS_E_INTERNAL = 1, /* a bug or an unexpected library failure */
    RSS_E_SYSTEM,       /* an errno from the C library; detail holds errno */
    RSS_E_INVALID,      /* bad input: malformed JSON, a bad spec, a garbage sequence */
    RSS_E_NOT_FOUND,    /* the object, container or socket does not exist */
    RSS_E_CONFLICT,     /* optimistic concurrency lost (HTTP 409 Conflict) */
    RSS_E_EXISTS,       /* create of an existing object (HTTP 409 AlreadyExists) */
    RSS_E_GONE,         /* watch resourceVersion too old (HTTP 410) */
    RSS_E_UNAUTHORIZED, /* HTTP 401/403 */
    RSS_E_TIMEOUT,      /* a deadline passed: request timeout, hook timeout */
    RSS_E_UNAVAILABLE,  /* the peer cannot be reached now; worth retrying */
    RSS_E_NOT_RUNNING,  /* the container is not running */
    RSS_E_TOO_LARGE,    /* a response over its size cap */
    RSS_E_CANCELLED,    /* stopped on purpose: shutdown or lost leadership */
    RSS_E_UNSUPPORTED,  /* the peer does not offer the call (gRPC UNIMPLEMENTED: no CRI service there) */
};

struct rss_error {
    enum rss_errc code;
    int detail;              /* foreign code: errno, gRPC status, HTTP status; 0 if none */
    char *msg;               /* this level's message */
    struct rss_error *cause; /* the error this one wraps, or NULL */
};

typedef struct rss_error *rss_error_t;

/* Sets *err to a new error and returns a negative value. *err must be NULL. */
int rss_error_make(rss_error_t *err, enum rss_errc code, int detail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Like rss_error_make with RSS_E_SYSTEM and detail = errno_value; appends strerror. */
int rss_error_errno(rss_error_t *err, int errno_value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Wraps *err in a new error carrying context; code and detail are inherited. Returns negative. */
int rss_error_wrap(rss_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The code of the innermost meaningful error (the outermost carries it anyway). */
enum rss_errc rss_error_code(const rss_error_t err);

/* Formats the whole chain as "outer: inner: innermost" into a new string (caller frees). */
char *rss_error_string(const rss_error_t err);

/* Short name of a code, e.g. "NOT_FOUND". */
const char *rss_errc_name(enum rss_errc code);

/* Frees the chain and sets *err to NULL. Accepts NULL and *err == NULL. */
void rss_error_release(rss_error_t *err);

#endif
