/* kube_watch.c -- list+watch: an informer without a cache (resume, re-list on 410, stall detection, line
 * framing). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kube_internal.h"
#include "rss/metrics.h"

/* --- line framing --- */

int kube_framer_feed(struct kube_framer *f, const char *data, size_t len, rss_kube_line_fn fn, void *userdata,
                     rss_error_t *err)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) : len;
        if (!kube_buf_append(&f->buf, &f->len, &f->cap, f->max, data, take))
            return rss_error_make(err, RSS_E_TOO_LARGE, 0, "watch event over %zu bytes", f->max);
        if (!nl)
            return 0;
        data += take + 1;
        len -= take + 1;
        size_t l = f->len;
        f->len = 0;
        /* Skip blank keep-alive lines. */
        size_t s = 0;
        while (s < l && (f->buf[s] == ' ' || f->buf[s] == '\r' || f->buf[s] == '\t'))
            s++;
        if (s == l)
            continue;
        if (fn(userdata, f->buf, l, err) < 0)
            return -1;
    }
    return 0;
}

void kube_framer_reset(struct kube_framer *f)
{
    f->len = 0;
}

void kube_framer_free(struct kube_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
}

/* --- the loop --- */

struct watcher {
    struct rss_kube *kube;
    const char *path;
    const struct rss_kube_watch_opts *opts;
    rss_kube_watch_fn fn;
    void *ud;
    char *rv;      /* resume point */
    bool gone;     /* the server said 410: re-list */
    bool cb_error; /* the consumer's callback failed: give up */
    int events;    /* events (bookmarks included) of the current stream */
    struct kube_framer framer;
};

static void set_rv(struct watcher *w, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    if (cJSON_IsString(rv) && rv->valuestring[0]) {
        free(w->rv);
        w->rv = rss_xstrdup(rv->valuestring);
    }
}

static int on_line(void *ud, char *line, size_t len, rss_error_t *err)
{
    struct watcher *w = ud;
    _cleanup_json_ cJSON *ev = cJSON_ParseWithLength(line, len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    if (!cJSON_IsString(type) || !cJSON_IsObject(obj))
        return rss_error_make(err, RSS_E_INVALID, 0, "malformed watch event");
    const char *t = type->valuestring;
    w->events++;
    if (!strcmp(t, "ERROR")) {
        /* A Status; 410 Expired means our resourceVersion is older than the server's history. */
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        _cleanup_free_ char *text = cJSON_PrintUnformatted(obj);
        int r = kube_http_error(cJSON_IsNumber(code) ? code->valueint : 500, text, text ? strlen(text) : 0,
                                "watch ERROR event", err);
        if (rss_error_code(*err) == RSS_E_GONE)
            w->gone = true;
        return r;
    }
    if (!strcmp(t, "BOOKMARK")) {
        set_rv(w, obj);
        return 0;
    }
    enum rss_kube_event e;
    if (!strcmp(t, "ADDED"))
        e = RSS_KUBE_ADDED;
    else if (!strcmp(t, "MODIFIED"))
        e = RSS_KUBE_MODIFIED;
    else if (!strcmp(t, "DELETED"))
        e = RSS_KUBE_DELETED;
    else
        return 0; /* unknown types are skipped, as client-go does */
    set_rv(w, obj);
    if (w->fn(w->ud, e, obj, err) < 0) {
        w->cb_error = true;
        return -1;
    }
    return 0;
}

static int on_data(void *ud, const char *data, size_t len, rss_error_t *err)
{
    struct watcher *w = ud;
    return kube_framer_feed(&w->framer, data, len, on_line, w, err);
}

/* Sleeps up to ms, waking early when stop is set. Returns true if stopped. */
static bool nap(const atomic_bool *stop, long ms)
{
    while (ms > 0 && !atomic_load(stop)) {
        long step = ms < 100 ? ms : 100;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return atomic_load(stop);
}

static int relist(struct watcher *w, rss_error_t *err)
{
    rss_metrics_inc(RSS_METRIC_WATCH_RESTARTS);
    struct rss_kube_list_opts lo = {.label_selector = w->opts->label_selector,
                                    .field_selector = w->opts->field_selector};
    _cleanup_json_ cJSON *list = NULL;
    if (rss_kube_list(w->kube, w->path, &lo, &list, err) < 0)
        return -1;
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
    set_rv(w, list);
    if (w->fn(w->ud, RSS_KUBE_SYNC_BEGIN, NULL, err) < 0)
        goto cb_fail;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        if (w->fn(w->ud, RSS_KUBE_ADDED, it, err) < 0)
            goto cb_fail;
    }
    if (w->fn(w->ud, RSS_KUBE_SYNC_END, meta, err) < 0)
        goto cb_fail;
    return 0;
cb_fail:
    w->cb_error = true;
    return -1;
}

int rss_kube_watch(struct rss_kube *kube, const char *collection_path, const struct rss_kube_watch_opts *opts,
                   rss_kube_watch_fn fn, void *userdata, rss_error_t *err)
{
    struct watcher w = {.kube = kube, .path = collection_path, .opts = opts, .fn = fn, .ud = userdata};
    w.framer.max = kube->max_body;
    long stall_ms = opts->stall_ms > 0 ? opts->stall_ms : 90000;
    bool need_list = !opts->resource_version || !*opts->resource_version;
    if (!need_list)
        w.rv = rss_xstrdup(opts->resource_version);
    long backoff = 0;
    int r = 0;
    unsigned seed = (unsigned)rss_clock_mono_ns();

    while (!atomic_load(opts->stop)) {
        if (backoff > 0 && nap(opts->stop, kube_jitter_ms(backoff)))
            break;
        if (need_list) {
            _cleanup_error_ rss_error_t e = NULL;
            if (relist(&w, &e) < 0) {
                enum rss_errc c = rss_error_code(e);
                if (w.cb_error || c == RSS_E_INVALID || c == RSS_E_NOT_FOUND) {
                    /* A bad path or selector will not heal; a failing consumer wants out. */
                    *err = TAKE_PTR(e);
                    r = rss_error_wrap(err, "watching %s", collection_path);
                    goto out;
                }
                rss_log_error(RSS_LOG_DEBUG, &e, "kube: list %s", collection_path);
                backoff = backoff ? (backoff * 2 > 30000 ? 30000 : backoff * 2) : 1000;
                continue;
            }
            need_list = false;
            backoff = 0;
        }

        _cleanup_free_ char *q = NULL;
        char num[32];
        kube_query_add(&q, "watch", "1");
        kube_query_add(&q, "resourceVersion", w.rv ? w.rv : "");
        kube_query_add(&q, "allowWatchBookmarks", "true");
        long to = opts->watch_timeout_s > 0 ? opts->watch_timeout_s : 300 + (long)(rand_r(&seed) % 300);
        snprintf(num, sizeof(num), "%ld", to);
        kube_query_add(&q, "timeoutSeconds", num);
        if (opts->label_selector && *opts->label_selector)
            kube_query_add(&q, "labelSelector", opts->label_selector);
        if (opts->field_selector && *opts->field_selector)
            kube_query_add(&q, "fieldSelector", opts->field_selector);

        w.gone = false;
        w.events = 0;
        kube_framer_reset(&w.framer);
        int64_t started = rss_clock_mono_ns();
        _cleanup_error_ rss_error_t e = NULL;
        bool got = false;
        int s = kube_stream(kube, collection_path, q, opts->stop, stall_ms, on_data, &w, &got, &e);
        if (w.cb_error) {
            *err = TAKE_PTR(e);
            r = rss_error_wrap(err, "watching %s", collection_path);
            goto out;
        }
        if (atomic_load(opts->stop))
            break;
        if (w.gone || rss_error_code(e) == RSS_E_GONE) {
            /* Both forms of 410: an ERROR event in a 200 stream and a plain HTTP 410. */
            rss_log_debug("kube: watch %s: resourceVersion %s expired, re-listing", collection_path,
                          w.rv ? w.rv : "");
            need_list = true;
            backoff = 0;
            continue;
        }
        if (s < 0) {
            /* Cut, stalled, refused, 5xx, 401...: resume from the last resourceVersion. A partial line
             * left in the framer was never delivered, so its event comes again. */
            enum rss_errc c = rss_error_code(e);
            rss_log_error(RSS_LOG_DEBUG, &e, "kube: watch %s", collection_path);
            if (c == RSS_E_INVALID || c == RSS_E_NOT_FOUND) {
                need_list = true; /* e.g. a resource that went away: let the list decide */
            }
            if (w.events > 0 || c == RSS_E_TIMEOUT)
                backoff = 0;
            else
                backoff = backoff ? (backoff * 2 > 30000 ? 30000 : backoff * 2) : 200;
            continue;
        }
        /* A clean end at timeoutSeconds: re-watch at once; but do not spin on a server that ends
         * empty watches immediately. */
        if (w.events == 0 && rss_clock_mono_ns() - started < 1000000000LL)
            backoff = backoff ? (backoff * 2 > 30000 ? 30000 : backoff * 2) : 200;
        else
            backoff = 0;
        (void)got;
    }
out:
    free(w.rv);
    kube_framer_free(&w.framer);
    return r;
}
