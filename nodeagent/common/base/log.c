/* log.c -- leveled, timestamped, line-atomic logging to stderr, as text or one JSON object per line. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "rss/cleanup.h"
#include "rss/log.h"

/* Every thread logs (agent, election, leader workers): the level is atomic and $RSS_LOG_LEVEL is read
 * once, before any set_level can be overwritten by it. */
static atomic_int level = RSS_LOG_INFO;
static atomic_int format = RSS_LOG_TEXT;
static _Thread_local struct rss_log_fields scope;
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

void rss_log_set_format(enum rss_log_format f)
{
    atomic_store(&format, (int)f);
}

int rss_log_parse_format(const char *name, enum rss_log_format *f)
{
    if (!strcmp(name, "text"))
        *f = RSS_LOG_TEXT;
    else if (!strcmp(name, "json"))
        *f = RSS_LOG_JSON;
    else
        return -1;
    return 0;
}

struct rss_log_fields rss_log_scope(struct rss_log_fields f)
{
    struct rss_log_fields outer = scope;
    if (f.ns && *f.ns)
        scope.ns = f.ns;
    if (f.rss && *f.rss)
        scope.rss = f.rss;
    if (f.member && *f.member)
        scope.member = f.member;
    if (f.action && *f.action)
        scope.action = f.action;
    if (f.epoch)
        scope.epoch = f.epoch;
    return outer;
}

void rss_log_scope_end(struct rss_log_fields *outer)
{
    scope = *outer;
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

/* One JSON object, no newline inside: cJSON escapes the message's quotes, newlines and control bytes
 * (a hook's output quoted in a message may hold any of them). NULL when out of memory. */
static char *json_line(const char *stamp, const char *lvl, const char *msg)
{
    _cleanup_json_ cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "time", stamp) || !cJSON_AddStringToObject(o, "level", lvl) ||
        !cJSON_AddStringToObject(o, "component", component) || !cJSON_AddStringToObject(o, "msg", msg))
        return NULL;
    if (scope.rss) {
        _cleanup_free_ char *rss = NULL;
        if (asprintf(&rss, "%s%s%s", scope.ns ? scope.ns : "", scope.ns ? "/" : "", scope.rss) < 0 ||
            !cJSON_AddStringToObject(o, "rss", rss))
            return NULL;
    } else if (scope.ns && !cJSON_AddStringToObject(o, "namespace", scope.ns)) {
        return NULL;
    }
    if (scope.member && !cJSON_AddStringToObject(o, "member", scope.member))
        return NULL;
    if (scope.action && !cJSON_AddStringToObject(o, "action", scope.action))
        return NULL;
    /* An epoch is a counter far below 2^53, so a JSON number holds it exactly. */
    if (scope.epoch && !cJSON_AddNumberToObject(o, "epoch", (double)scope.epoch))
        return NULL;
    return cJSON_PrintUnformatted(o);
}

__attribute__((format(printf, 2, 0))) static void vlog(enum rss_log_level l, const char *fmt, va_list ap)
{
    static const char *const names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    static const char *const json_names[] = {"error", "warn", "info", "debug"};
    struct timespec ts;
    struct tm tm;
    char when[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    _cleanup_free_ char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return;
    _cleanup_free_ char *line = NULL;
    if (atomic_load(&format) == RSS_LOG_JSON) {
        char stamp[48];
        snprintf(stamp, sizeof(stamp), "%s.%03ldZ", when, ts.tv_nsec / 1000000);
        line = json_line(stamp, json_names[l], msg);
        if (!line)
            return;
    }
    /* One fprintf per line under a lock, so lines of threads never interleave. */
    pthread_mutex_lock(&lock);
    if (line)
        fprintf(stderr, "%s\n", line);
    else
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
