/* log.h -- leveled logging to stderr, one line per event, with a UTC timestamp.
 *
 * Library code returns errors and logs at most at debug level; the top level of each program
 * logs an error once with rss_log_error(). The level comes from RSS_LOG_LEVEL (error, warn,
 * info, debug; default info) or rss_log_set_level(). The component (e.g. "agent", "leader",
 * "kubesim") prefixes every line; set it once per process with rss_log_set_component().
 */
#ifndef RSS_LOG_H
#define RSS_LOG_H

#include "rss/error.h"

enum rss_log_level { RSS_LOG_ERROR = 0, RSS_LOG_WARN, RSS_LOG_INFO, RSS_LOG_DEBUG };

void rss_log_set_level(enum rss_log_level level);
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
