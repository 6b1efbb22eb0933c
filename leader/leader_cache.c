/* leader_cache.c -- a watch-fed store of one collection, ordered by resourceVersion (leader_cache.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "leader_cache.h"
#include "rss/cleanup.h"
#include "rss/clock.h"

struct entry {
    char *key;   /* "ns/name" (or "/name"): the sort key */
    cJSON *obj;  /* NULL: a tombstone (deleted at rv) */
    uint64_t rv; /* 0: not an integer (taken as newer than anything) */
    bool seen;   /* in the List being applied */
};

struct leader_cache {
    pthread_mutex_t mu;
    struct entry *v; /* sorted by key */
    size_t n, cap;
    uint64_t list_rv; /* the resourceVersion of the last List applied */
    char *list_rv_str;
    bool synced;
    int64_t heard_ms;
    /* A watch re-list in progress (SYNC_BEGIN .. SYNC_END): its items, applied at the end. */
    cJSON *pending;
};

struct leader_cache *leader_cache_new(void)
{
    struct leader_cache *c = rss_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void leader_cache_free(struct leader_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].key);
        cJSON_Delete(c->v[i].obj);
    }
    free(c->v);
    free(c->list_rv_str);
    cJSON_Delete(c->pending);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static const char *md(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key));
}

/* A decimal resourceVersion, or 0 when it is anything else (opaque: no order known). */
static uint64_t parse_rv(const char *s)
{
    if (!s || !*s)
        return 0;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

/* True when a version `incoming` is known to be no newer than `held` (both integers). */
static bool not_newer(uint64_t incoming, uint64_t held)
{
    return incoming && held && incoming <= held;
}

bool leader_rv_newer(const cJSON *a, const cJSON *b)
{
    uint64_t ra = parse_rv(md(a, "resourceVersion")), rb = parse_rv(md(b, "resourceVersion"));
    return ra && rb && ra > rb;
}

static char *key_of(const cJSON *obj)
{
    const char *ns = md(obj, "namespace"), *name = md(obj, "name");
    if (!name || !*name)
        return NULL;
    return rss_xasprintf("%s/%s", ns ? ns : "", name);
}

/* Index of key, or of where it would go (*found false). */
static size_t find(const struct leader_cache *c, const char *key, bool *found)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strcmp(c->v[mid].key, key);
        if (!d) {
            *found = true;
            return mid;
        }
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static void put_at(struct leader_cache *c, size_t i, bool found, char *key, cJSON *obj, uint64_t rv)
{
    if (found) {
        free(key);
        cJSON_Delete(c->v[i].obj);
        c->v[i].obj = obj;
        c->v[i].rv = rv;
        return;
    }
    rss_xarray_push(&c->v, &c->n, &c->cap, sizeof(*c->v)); /* kept sorted: make room at i */
    memmove(&c->v[i + 1], &c->v[i], (c->n - 1 - i) * sizeof(*c->v));
    c->v[i] = (struct entry){.key = key, .obj = obj, .rv = rv};
}

static void remove_at(struct leader_cache *c, size_t i)
{
    free(c->v[i].key);
    cJSON_Delete(c->v[i].obj);
    memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof(*c->v));
    c->n--;
}

/* One ADDED/MODIFIED (deleted false) or DELETED event (lock held). */
static void apply_event(struct leader_cache *c, const cJSON *obj, bool deleted)
{
    _cleanup_free_ char *key = key_of(obj);
    if (!key)
        return;
    uint64_t rv = parse_rv(md(obj, "resourceVersion"));
    bool found;
    size_t i = find(c, key, &found);
    if (found ? not_newer(rv, c->v[i].rv) : not_newer(rv, c->list_rv))
        return; /* the store already reflects this or something later */
    put_at(c, i, found, TAKE_PTR(key), deleted ? NULL : cJSON_Duplicate(obj, true), rv);
}

static void apply_list(struct leader_cache *c, const cJSON *items, const char *list_rv_str, int64_t now_ms)
{
    uint64_t list_rv = parse_rv(list_rv_str);
    for (size_t i = 0; i < c->n; i++)
        c->v[i].seen = false;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        _cleanup_free_ char *key = key_of(it);
        if (!key)
            continue;
        uint64_t rv = parse_rv(md(it, "resourceVersion"));
        bool found;
        size_t i = find(c, key, &found);
        /* An event newer than the List already came (or its tombstone): keep it. */
        if (!(found && not_newer(rv, c->v[i].rv) && list_rv && c->v[i].rv > list_rv))
            put_at(c, i, found, TAKE_PTR(key), cJSON_Duplicate(it, true), rv);
        c->v[i].seen = true;
    }
    /* Objects (and tombstones) the List lacks: gone, unless written after it. */
    for (size_t i = c->n; i-- > 0;)
        if (!c->v[i].seen && !(c->v[i].rv && list_rv && c->v[i].rv > list_rv))
            remove_at(c, i);
    if (!list_rv || list_rv >= c->list_rv) {
        c->list_rv = list_rv;
        free(c->list_rv_str);
        c->list_rv_str = list_rv_str ? rss_xstrdup(list_rv_str) : NULL;
    }
    c->synced = true;
    c->heard_ms = now_ms;
}

int leader_cache_feed(void *cache, enum rss_kube_event event, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct leader_cache *c = cache;
    pthread_mutex_lock(&c->mu);
    switch (event) {
    case RSS_KUBE_SYNC_BEGIN:
        cJSON_Delete(c->pending);
        c->pending = cJSON_CreateArray();
        c->synced = false;
        break;
    case RSS_KUBE_SYNC_END:
        if (c->pending)
            apply_list(c, c->pending,
                       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "resourceVersion")),
                       rss_clock_mono_ms());
        cJSON_Delete(c->pending);
        c->pending = NULL;
        break;
    case RSS_KUBE_ADDED:
    case RSS_KUBE_MODIFIED:
    case RSS_KUBE_DELETED:
        if (!obj)
            break;
        if (c->pending && event == RSS_KUBE_ADDED) {
            cJSON_AddItemToArray(c->pending, cJSON_Duplicate(obj, true));
            break;
        }
        apply_event(c, obj, event == RSS_KUBE_DELETED);
        c->heard_ms = rss_clock_mono_ms();
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return 0;
}

void leader_cache_replace(struct leader_cache *c, const cJSON *list, int64_t now_ms)
{
    pthread_mutex_lock(&c->mu);
    const char *rv = md(list, "resourceVersion");
    apply_list(c, cJSON_GetObjectItemCaseSensitive(list, "items"), rv, now_ms);
    pthread_mutex_unlock(&c->mu);
}

bool leader_cache_synced(const struct leader_cache *c)
{
    struct leader_cache *m = (struct leader_cache *)c;
    pthread_mutex_lock(&m->mu);
    bool s = c->synced;
    pthread_mutex_unlock(&m->mu);
    return s;
}

int64_t leader_cache_heard_ms(const struct leader_cache *c)
{
    struct leader_cache *m = (struct leader_cache *)c;
    pthread_mutex_lock(&m->mu);
    int64_t h = c->heard_ms;
    pthread_mutex_unlock(&m->mu);
    return h;
}

cJSON *leader_cache_list(const struct leader_cache *c)
{
    struct leader_cache *m = (struct leader_cache *)c;
    cJSON *list = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(list, "metadata");
    cJSON *items = cJSON_AddArrayToObject(list, "items");
    pthread_mutex_lock(&m->mu);
    if (c->list_rv_str)
        cJSON_AddStringToObject(meta, "resourceVersion", c->list_rv_str);
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].obj)
            cJSON_AddItemToArray(items, cJSON_Duplicate(c->v[i].obj, true));
    pthread_mutex_unlock(&m->mu);
    return list;
}

cJSON *leader_cache_get(const struct leader_cache *c, const char *ns, const char *name)
{
    struct leader_cache *m = (struct leader_cache *)c;
    _cleanup_free_ char *key = rss_xasprintf("%s/%s", ns ? ns : "", name ? name : "");
    pthread_mutex_lock(&m->mu);
    bool found;
    size_t i = find(c, key, &found);
    cJSON *o = found && c->v[i].obj ? cJSON_Duplicate(c->v[i].obj, true) : NULL;
    pthread_mutex_unlock(&m->mu);
    return o;
}

size_t leader_cache_size(const struct leader_cache *c)
{
    struct leader_cache *m = (struct leader_cache *)c;
    pthread_mutex_lock(&m->mu);
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        k += c->v[i].obj != NULL;
    pthread_mutex_unlock(&m->mu);
    return k;
}
