/* log.h -- leveled logging to stderr, one line per event, with a UTC timestamp.
 *
 * Library code returns errors and logs at most at debug level; the top level of each program
 * logs an error once with rss_log_error(). The level comes from RSS_LOG_LEVEL (error, warn,
 * info, debug; default info) or rss_log_set_level(). The component (e.g. "agent", "leader",
 * "kubesim") prefixes every line; set it once per process with rss_log_set_component().
 *
 * Two formats (rss_log_set_format()): text, one human line per event, and json, one object per line
 * for a log pipeline: {"time", "level", "component", "msg"} and, when the line is about them, "rss"
 * ("namespace/name"), "member" (a pod), "action" (a hook or a plan's step) and "epoch". Those four come
 * from the thread's scope, set where the code knows them, never parsed out of the message:
 *
 *   _cleanup_log_scope_ struct rss_log_fields outer =
 *       rss_log_scope((struct rss_log_fields){.ns = ns, .rss = name, .epoch = epoch});
 *
 * A scope adds its non-empty fields to the enclosing one's until it ends; its strings are borrowed and
 * must outlive it. The text format ignores the scope (its messages already name what they are about).
 */
#ifndef RSS_LOG_H
#define RSS_LOG_H

#include "rss/error.h"

enum rss_log_level { RSS_LOG_ERROR = 0, RSS_LOG_WARN, RSS_LOG_INFO, RSS_LOG_DEBUG };

enum rss_log_format { RSS_LOG_TEXT = 0, RSS_LOG_JSON };

/* What one line is about; NULL and 0 mean "not known here". */
struct rss_log_fields {
    const char *ns; /* with rss, printed as "rss": "ns/name" */
    const char *rss;
    const char *member;
    const char *action;
    unsigned long long epoch;
};

void rss_log_set_level(enum rss_log_level level);
void rss_log_set_format(enum rss_log_format format);
/* "text" or "json" -> 0 and *format; anything else -> -1. */
int rss_log_parse_format(const char *name, enum rss_log_format *format);

/* Adds f's non-empty fields to this thread's scope; returns the scope to restore at its end. */
struct rss_log_fields rss_log_scope(struct rss_log_fields f);
void rss_log_scope_end(struct rss_log_fields *outer);
#define _cleanup_log_scope_ __attribute__((cleanup(rss_log_scope_end)))
void rss_log_set_component(const char *component);
bool rss_log_enabled(enum rss_log_level level);
void rss_log(enum rss_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs "<context>: <error chain>" at `level`, then releases *err. */
void rss_log_error(enum rss_log_level level, rss_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define rss_log_err(...)   rss_log(RSS_LOG_ERROR, __VA_ARGS__)
#define rss_log_warn(...)  rss_log(RSS_LOG_WARN, __VA_ARGS__)
#define rss_log_info(...)  rss_log(RSS_LOG_INFO, __VA_ARGS__)
#define rss_log_debug(...) rss_log(RSS_LOG_DEBUG, __VA_ARGS__)

#endif
