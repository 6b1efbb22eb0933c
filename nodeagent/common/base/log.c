/* log.c -- leveled, timestamped, line-atomic logging to stderr. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/log.h"

/* Every thread logs (agent, election, leader workers): the level is atomic and $RSS_LOG_LEVEL is read
 * once, before any set_level can be overwritten by it. */
static atomic_int level = RSS_LOG_INFO;
static char component[32] = "rss";
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env_level(void)
{
    const char *v = getenv("RSS_LOG_LEVEL");
    if (!v)
        return;
    if (!strcasecmp(v, "error"))
        atomic_store(&level, RSS_LOG_ERROR);
    else if (!strcasecmp(v, "warn"))
        atomic_store(&level, RSS_LOG_WARN);
    else if (!strcasecmp(v, "debug"))
        atomic_store(&level, RSS_LOG_DEBUG);
}

static void level_from_env(void)
{
    pthread_once(&env_once, read_env_level);
}

void rss_log_set_level(enum rss_log_level l)
{
    level_from_env(); /* an explicit level wins over the environment's, whenever that is read */
    atomic_store(&level, (int)l);
}

void rss_log_set_component(const char *c)
{
    snprintf(component, sizeof(component), "%s", c);
}

bool rss_log_enabled(enum rss_log_level l)
{
    level_from_env();
    return (int)l <= atomic_load(&level);
}

__attribute__((format(printf, 2, 0))) static void vlog(enum rss_log_level l, const char *fmt, va_list ap)
{
    static const char *const names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    struct timespec ts;
    struct tm tm;
    char when[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    _cleanup_free_ char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return;
    /* One fprintf per line under a lock, so lines of threads never interleave. */
    pthread_mutex_lock(&lock);
    fprintf(stderr, "%s.%03ldZ %-5s [%s] %s\n", when, ts.tv_nsec / 1000000, names[l], component, msg);
    pthread_mutex_unlock(&lock);
}

void rss_log(enum rss_log_level l, const char *fmt, ...)
{
    if (!rss_log_enabled(l))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(l, fmt, ap);
    va_end(ap);
}

void rss_log_error(enum rss_log_level l, rss_error_t *err, const char *fmt, ...)
{
    if (rss_log_enabled(l)) {
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *ctx = NULL;
        if (vasprintf(&ctx, fmt, ap) < 0)
            ctx = NULL;
        va_end(ap);
        _cleanup_free_ char *chain = rss_error_string(err ? *err : NULL);
        rss_log(l, "%s: %s (%s)", ctx ? ctx : "error", chain,
                rss_errc_name(rss_error_code(err ? *err : NULL)));
    }
    rss_error_release(err);
}
