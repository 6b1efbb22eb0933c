/* cache.c -- the controllers' object caches: fed by watch events and by the answers to our own writes.
 *
 * A cache is an informer's store: a map from namespace/name to the newest object seen. Our own
 * writes are put in as soon as the server answers (so the next pass does not redo them), but only
 * when they are newer than everything the watch delivered: an answer that the watch already passed
 * is old news, possibly of an object deleted since. That comparison needs numeric
 * resourceVersions, which kubesim and etcd both use; with opaque ones the write-through is skipped. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "controllers.h"

struct ctl_cache {
    pthread_mutex_t mu;
    char *resource;
    cJSON *items;               /* array of objects */
    cJSON *pending;             /* during a (re)list: the listed objects */
    unsigned long long seen_rv; /* highest resourceVersion the watch delivered */
    bool synced;
};

struct ctl_cache *ctl_cache_new(const char *resource)
{
    struct ctl_cache *c = rss_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->resource = rss_xstrdup(resource);
    c->items = cJSON_CreateArray();
    return c;
}

void ctl_cache_free(struct ctl_cache *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->mu);
    cJSON_Delete(c->items);
    cJSON_Delete(c->pending);
    free(c->resource);
    free(c);
}

const char *ctl_cache_resource(const struct ctl_cache *c)
{
    return c->resource;
}

/* 0 when absent or not a plain decimal number. */
static unsigned long long rv_parse(const char *s)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
    }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    return errno ? 0 : v;
}

static unsigned long long rv_of(const cJSON *obj)
{
    return rv_parse(rss_json_str(obj, "metadata.resourceVersion"));
}

static int index_of(const cJSON *arr, const cJSON *obj)
{
    const char *ns = ctl_namespace(obj), *name = ctl_name(obj);
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        if (strcmp(ctl_namespace(o), ns) == 0 && strcmp(ctl_name(o), name) == 0)
            return i;
        i++;
    }
    return -1;
}

/* Stores a copy of obj unless the stored one is known to be newer. */
static void store(cJSON *arr, const cJSON *obj)
{
    int i = index_of(arr, obj);
    if (i < 0) {
        cJSON_AddItemToArray(arr, cJSON_Duplicate(obj, true));
        return;
    }
    unsigned long long have = rv_of(cJSON_GetArrayItem(arr, i)), got = rv_of(obj);
    if (have && got && got < have)
        return;
    cJSON_ReplaceItemInArray(arr, i, cJSON_Duplicate(obj, true));
}

static void remove_obj(cJSON *arr, const cJSON *obj)
{
    int i = index_of(arr, obj);
    if (i < 0)
        return;
    unsigned long long have = rv_of(cJSON_GetArrayItem(arr, i)), got = rv_of(obj);
    if (have && got && got < have)
        return;
    cJSON_DeleteItemFromArray(arr, i);
}

static void saw(struct ctl_cache *c, const cJSON *obj)
{
    unsigned long long rv = rv_of(obj);
    if (rv > c->seen_rv)
        c->seen_rv = rv;
}

void ctl_cache_event(struct ctl_cache *c, enum rss_kube_event ev, const cJSON *obj)
{
    pthread_mutex_lock(&c->mu);
    switch (ev) {
    case RSS_KUBE_SYNC_BEGIN:
        cJSON_Delete(c->pending);
        c->pending = cJSON_CreateArray();
        break;
    case RSS_KUBE_SYNC_END: {
        /* obj is the List's metadata. */
        unsigned long long list_rv = rv_parse(rss_json_str(obj, "resourceVersion"));
        cJSON *fresh = c->pending ? c->pending : cJSON_CreateArray();
        c->pending = NULL;
        /* Our writes answered after the list's snapshot are not in it but are real. */
        const cJSON *o;
        cJSON_ArrayForEach(o, c->items)
        {
            if (list_rv && rv_of(o) > list_rv && index_of(fresh, o) < 0)
                cJSON_AddItemToArray(fresh, cJSON_Duplicate(o, true));
        }
        cJSON_Delete(c->items);
        c->items = fresh;
        if (list_rv > c->seen_rv)
            c->seen_rv = list_rv;
        c->synced = true;
        break;
    }
    case RSS_KUBE_ADDED:
    case RSS_KUBE_MODIFIED:
        if (obj) {
            store(c->pending ? c->pending : c->items, obj);
            saw(c, obj);
        }
        break;
    case RSS_KUBE_DELETED:
        if (obj) {
            remove_obj(c->pending ? c->pending : c->items, obj);
            saw(c, obj);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
}

void ctl_cache_put(struct ctl_cache *c, const cJSON *obj)
{
    pthread_mutex_lock(&c->mu);
    unsigned long long rv = rv_of(obj);
    if (rv && rv > c->seen_rv)
        store(c->items, obj);
    pthread_mutex_unlock(&c->mu);
}

bool ctl_cache_synced(struct ctl_cache *c)
{
    pthread_mutex_lock(&c->mu);
    bool s = c->synced;
    pthread_mutex_unlock(&c->mu);
    return s;
}

cJSON *ctl_cache_snapshot(struct ctl_cache *c)
{
    pthread_mutex_lock(&c->mu);
    cJSON *copy = cJSON_Duplicate(c->items, true);
    pthread_mutex_unlock(&c->mu);
    return copy;
}
