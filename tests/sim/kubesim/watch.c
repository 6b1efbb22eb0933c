/* watch.c -- chunked watch streams: synthetic ADDED events, replay from the history, selector
 * transitions (ADDED/DELETED when an object starts/stops matching), bookmarks, 410 ERROR events,
 * timeouts, and the /_sim pause and watch-cut faults. Each stream blocks only its own thread. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

#define BOOKMARK_NS     1000000000LL /* the brief asks for a bookmark every second */
#define MAX_BATCH_BYTES (256 * 1024)

struct ks_watch {
    struct ks_watch_opts o;
    char *api_version;
    char *buf;
    size_t len, off, cap;
    struct ks_snap **init;
    size_t ninit, iinit;
    uint64_t pos; /* the last resourceVersion this stream has dealt with */
    int64_t deadline_ns, next_bookmark_ns;
    unsigned cut_gen;
    bool header_sent;
    bool finish; /* end cleanly once the buffer is flushed */
    bool abort;  /* close without the final chunk once the buffer is flushed */
    int fd;
};

static void append(struct ks_watch *w, const char *s, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->buf = rss_xrealloc(w->buf, w->cap);
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void emit(struct ks_watch *w, const char *type, cJSON *object)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", type);
    cJSON_AddItemToObject(ev, "object", object);
    char *s = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    append(w, s, strlen(s));
    append(w, "\n", 1);
    free(s);
}

static void emit_obj(struct ks_watch *w, const char *type, const cJSON *obj)
{
    ks_sim_count_event(w->o.client ? w->o.client : "-", w->o.res->plural);
    cJSON *o = cJSON_Duplicate(obj, true);
    if (w->o.res->flags & KS_CUSTOM)
        ks_json_set_str(o, "apiVersion", w->api_version);
    if (w->o.table) {
        /* One-row Tables; only the first carries the column definitions (response.go). */
        const char *rv = ks_json_str(o, "metadata.resourceVersion");
        cJSON *t = ks_table(w->o.res, &o, 1, rv, !w->header_sent, false);
        w->header_sent = true;
        cJSON_Delete(o);
        o = t;
    }
    emit(w, type, o);
}

static void emit_bookmark(struct ks_watch *w, bool initial_end)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", w->o.res->kind);
    cJSON_AddStringToObject(o, "apiVersion", w->api_version);
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    char rv[32];
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)w->pos);
    cJSON_AddStringToObject(md, "resourceVersion", rv);
    if (initial_end)
        cJSON_AddItemToObject(md, "annotations", cJSON_Parse("{\"k8s.io/initial-events-end\":\"true\"}"));
    emit(w, "BOOKMARK", o);
}

static void emit_expired(struct ks_watch *w, uint64_t rv)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)", (unsigned long long)rv,
             (unsigned long long)ks_store_rv());
    emit(w, "ERROR", ks_status_new(410, "Expired", msg));
    w->finish = true;
}

static bool matches(const struct ks_watch *w, const cJSON *obj)
{
    return ks_selector_match(w->o.labels, obj) && ks_selector_match(w->o.fields, obj);
}

struct ks_watch *ks_watch_new(struct ks_watch_opts *opts)
{
    struct ks_watch *w = rss_xcalloc(1, sizeof(*w));
    w->o = *opts;
    w->api_version = ks_resource_api_version(opts->res);
    w->fd = -1;
    w->pos = opts->from_rv;
    w->cut_gen = ks_sim_cut_gen();
    int64_t now = ks_mono_ns();
    w->deadline_ns = now + (int64_t)opts->timeout_s * 1000000000LL;
    w->next_bookmark_ns = now + BOOKMARK_NS;
    if (opts->expired) {
        emit_expired(w, opts->expired_rv);
    } else if (opts->send_initial) {
        w->init = ks_store_list(opts->res->group, opts->res->plural, opts->ns, &w->ninit);
    }
    return w;
}

void ks_watch_set_fd(struct ks_watch *w, int fd)
{
    w->fd = fd;
}

void ks_watch_free(void *cls)
{
    struct ks_watch *w = cls;
    if (!w)
        return;
    if (w->init) {
        for (size_t i = w->iinit; i < w->ninit; i++)
            ks_snap_unref(w->init[i]);
        free(w->init);
    }
    ks_selector_free(w->o.labels);
    ks_selector_free(w->o.fields);
    free(w->o.ns);
    free(w->o.client);
    free(w->api_version);
    free(w->buf);
    free(w);
}

/* Moves events into the buffer (lock held). */
static void drain(struct ks_watch *w)
{
    while (w->iinit < w->ninit && w->len < MAX_BATCH_BYTES) {
        struct ks_snap *s = w->init[w->iinit++];
        if (matches(w, s->obj))
            emit_obj(w, "ADDED", s->obj);
        ks_snap_unref(s);
        if (w->iinit == w->ninit && w->o.initial_bookmark)
            emit_bookmark(w, true);
    }
    if (w->iinit < w->ninit)
        return;
    const struct ks_resource *r = w->o.res;
    uint64_t last = ks_store_rv();
    while (w->pos < last && w->len < MAX_BATCH_BYTES) {
        const struct ks_event *ev = ks_history_at(w->pos + 1);
        if (!ev) {
            /* This stream fell behind the history ring. */
            emit_expired(w, w->pos);
            return;
        }
        w->pos++;
        if (strcmp(ev->plural, r->plural) || strcmp(ev->group, r->group))
            continue;
        if (w->o.ns && strcmp(ev->ns, w->o.ns))
            continue;
        bool now_m = matches(w, ev->snap->obj);
        bool was_m = ev->prev && matches(w, ev->prev->obj);
        switch (ev->type) {
        case KS_ADDED:
            if (now_m)
                emit_obj(w, "ADDED", ev->snap->obj);
            break;
        case KS_MODIFIED:
            if (now_m && was_m)
                emit_obj(w, "MODIFIED", ev->snap->obj);
            else if (now_m)
                emit_obj(w, "ADDED", ev->snap->obj);
            else if (was_m)
                emit_obj(w, "DELETED", ev->snap->obj);
            break;
        case KS_DELETED:
            if (now_m)
                emit_obj(w, "DELETED", ev->snap->obj);
            break;
        }
    }
}

static bool client_gone(int fd)
{
    if (fd < 0)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static ssize_t flush(struct ks_watch *w, char *buf, size_t max)
{
    size_t n = w->len - w->off;
    if (n > max)
        n = max;
    memcpy(buf, w->buf + w->off, n);
    w->off += n;
    if (w->off == w->len)
        w->off = w->len = 0;
    return (ssize_t)n;
}

ssize_t ks_watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct ks_watch *w = cls;
    (void)pos;
    if (w->len > w->off)
        return flush(w, buf, max);
    if (w->abort)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (w->finish)
        return MHD_CONTENT_READER_END_OF_STREAM;
    ks_lock();
    for (;;) {
        if (atomic_load(&ks_shutting_down)) {
            ks_unlock();
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        int64_t now = ks_mono_ns();
        if (ks_sim_cut_gen() != w->cut_gen) {
            /* Half an event line, then the connection closes without the last chunk. */
            drain(w);
            if (w->len == 0)
                emit_bookmark(w, false);
            w->len = w->len / 2 ? w->len / 2 : 1;
            w->abort = true;
            break;
        }
        if (!ks_sim_paused()) {
            drain(w);
            if (w->len)
                break;
            if (w->finish)
                break;
            if (now >= w->deadline_ns) {
                w->finish = true;
                break;
            }
            if (w->o.bookmarks && now >= w->next_bookmark_ns) {
                w->next_bookmark_ns = now + BOOKMARK_NS;
                emit_bookmark(w, false);
                break;
            }
        }
        int64_t until = now + 500000000LL;
        if (w->o.bookmarks && w->next_bookmark_ns < until)
            until = w->next_bookmark_ns;
        if (w->deadline_ns < until)
            until = w->deadline_ns;
        ks_wait(until);
        if (client_gone(w->fd)) {
            ks_unlock();
            rss_log_debug("watch client went away");
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    ks_unlock();
    if (w->len > w->off)
        return flush(w, buf, max);
    return w->abort ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
}
