/* util.c -- kubesim's global lock, clocks, time formats, random names, JSON helpers, Status replies. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "kubesim.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

static void cond_init(void)
{
    /* Waits use CLOCK_MONOTONIC deadlines so wall-clock jumps never stall watchers. */
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&cond, &a);
    pthread_condattr_destroy(&a);
}

void ks_lock(void)
{
    pthread_once(&cond_once, cond_init);
    pthread_mutex_lock(&mu);
}

void ks_unlock(void)
{
    pthread_mutex_unlock(&mu);
}

void ks_wait(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    pthread_cond_timedwait(&cond, &mu, &ts);
}

void ks_broadcast(void)
{
    pthread_once(&cond_once, cond_init);
    pthread_cond_broadcast(&cond);
}

int64_t ks_mono_ns(void)
{
    return rss_clock_mono_ns();
}

char *ks_time_now(long offset_s)
{
    struct timespec ts = {.tv_sec = time(NULL) + offset_s};
    char buf[RSS_TIME_LEN];
    return rss_xstrdup(rss_time_seconds(buf, &ts));
}

long ks_time_parse(const char *s)
{
    struct timespec ts;
    _cleanup_error_ rss_error_t err = NULL;
    if (!s || rss_time_parse(s, &ts, &err) < 0)
        return -1;
    return (long)ts.tv_sec;
}

void ks_human_duration(long d, char *buf, size_t n)
{
    /* apimachinery pkg/util/duration HumanDuration */
    if (d < 0)
        d = 0;
    if (d < 60 * 2) {
        snprintf(buf, n, "%lds", d);
        return;
    }
    long m = d / 60;
    if (m < 10) {
        long s = d % 60;
        if (s == 0)
            snprintf(buf, n, "%ldm", m);
        else
            snprintf(buf, n, "%ldm%lds", m, s);
        return;
    }
    if (m < 60 * 3) {
        snprintf(buf, n, "%ldm", m);
        return;
    }
    long h = d / 3600;
    if (h < 8) {
        long mm = (d / 60) % 60;
        if (mm == 0)
            snprintf(buf, n, "%ldh", h);
        else
            snprintf(buf, n, "%ldh%ldm", h, mm);
        return;
    }
    if (h < 48) {
        snprintf(buf, n, "%ldh", h);
        return;
    }
    if (h < 24 * 8) {
        long hh = h % 24;
        if (hh == 0)
            snprintf(buf, n, "%ldd", h / 24);
        else
            snprintf(buf, n, "%ldd%ldh", h / 24, hh);
        return;
    }
    if (h < 24 * 365 * 2) {
        snprintf(buf, n, "%ldd", h / 24);
        return;
    }
    snprintf(buf, n, "%ldy", h / 24 / 365);
}

char *ks_uuid(void)
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof(b)) != 1) {
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (unsigned char)rand();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    return rss_xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                         b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                         b[15]);
}

void ks_random_suffix(char *buf, size_t n)
{
    /* apimachinery util/rand: no vowels, no confusable digits */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[64];
    if (n > sizeof(r))
        n = sizeof(r);
    if (RAND_bytes(r, (int)n) != 1) {
        for (size_t i = 0; i < n; i++)
            r[i] = (unsigned char)rand();
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
}

cJSON *ks_json_path(const cJSON *obj, const char *dotted)
{
    char part[256];
    const cJSON *cur = obj;
    while (cur && *dotted) {
        const char *dot = strchr(dotted, '.');
        size_t len = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (len >= sizeof(part))
            return NULL;
        memcpy(part, dotted, len);
        part[len] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, part) : NULL;
        dotted += len + (dot ? 1 : 0);
    }
    return (cJSON *)cur;
}

const char *ks_json_str(const cJSON *obj, const char *dotted)
{
    const cJSON *v = ks_json_path(obj, dotted);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void ks_json_set(cJSON *obj, const char *key, cJSON *item)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else
        cJSON_AddItemToObject(obj, key, item);
}

void ks_json_set_str(cJSON *obj, const char *key, const char *value)
{
    ks_json_set(obj, key, cJSON_CreateString(value));
}

void ks_json_set_num(cJSON *obj, const char *key, double value)
{
    ks_json_set(obj, key, cJSON_CreateNumber(value));
}

cJSON *ks_json_obj(cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(v))
        return v;
    v = cJSON_CreateObject();
    ks_json_set(obj, key, v);
    return v;
}

cJSON *ks_status_new(int code, const char *reason, const char *msg)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "kind", "Status");
    cJSON_AddStringToObject(st, "apiVersion", "v1");
    cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
    cJSON_AddStringToObject(st, "status", code < 300 ? "Success" : "Failure");
    if (msg)
        cJSON_AddStringToObject(st, "message", msg);
    if (reason && *reason)
        cJSON_AddStringToObject(st, "reason", reason);
    cJSON_AddNumberToObject(st, "code", code);
    return st;
}

void ks_reply_json(struct ks_reply *r, int code, cJSON *body)
{
    free(r->body);
    r->code = code;
    r->body = cJSON_PrintUnformatted(body);
    if (!r->content_type)
        r->content_type = "application/json";
    cJSON_Delete(body);
}

void ks_reply_status(struct ks_reply *r, int code, const char *reason, const char *fmt, ...)
{
    _cleanup_free_ char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    r->content_type = "application/json";
    ks_reply_json(r, code, ks_status_new(code, reason, msg));
}

void ks_reply_free(struct ks_reply *r)
{
    free(r->body);
    free(r->warning);
    r->body = NULL;
    r->warning = NULL;
}
