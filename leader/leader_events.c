/* leader_events.c -- core/v1 Events about an RSS: repeats and bursts of one kind folded into one Event. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leader_internal.h"
#include "rss/record_codec.h"
#include "rss/cleanup.h"
#include "rss/kube.h"

void leader_events_init(struct leader_events *ev, size_t cap)
{
    memset(ev, 0, sizeof(*ev));
    pthread_mutex_init(&ev->lock, NULL);
    ev->cap = cap ? cap : 1;
    ev->v = rss_xcalloc(ev->cap, sizeof(*ev->v));
}

void leader_events_clear(struct leader_events *ev)
{
    if (!ev || !ev->v)
        return;
    for (size_t i = 0; i < ev->n; i++) {
        free(ev->v[i].key);
        free(ev->v[i].name);
        free(ev->v[i].message);
    }
    free(ev->v);
    pthread_mutex_destroy(&ev->lock);
    memset(ev, 0, sizeof(*ev));
}

/* The group of client-go's aggregator, minus the source (always us): object, member, type, reason.
 * Unit-separator characters keep distinct tuples distinct. */
static char *join_key(const struct leader_event_key *k)
{
    return rss_xasprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s", k->ns ? k->ns : "", k->rss_uid ? k->rss_uid : "",
                         k->pod ? k->pod : "", k->type ? k->type : "", k->reason ? k->reason : "");
}

static struct leader_event_entry *find(struct leader_events *ev, const char *key)
{
    for (size_t i = 0; i < ev->n; i++)
        if (!strcmp(ev->v[i].key, key))
            return &ev->v[i];
    return NULL;
}

int leader_events_note(struct leader_events *ev, const struct leader_event_key *key, const char *rss_name,
                       int64_t now_ms, char **name, int64_t *first_ms)
{
    _cleanup_free_ char *k = join_key(key);
    const char *msg = key->message ? key->message : "";
    pthread_mutex_lock(&ev->lock);
    ev->tick++;
    struct leader_event_entry *e = find(ev, k);
    int ret;
    if (e && (!strcmp(e->message, msg) || now_ms - e->created_ms < LEADER_EVENT_FOLD_MS)) {
        e->count++;
        e->last_ms = now_ms;
        e->used = ev->tick;
        if (strcmp(e->message, msg)) {
            free(e->message);
            e->message = rss_xstrdup(msg);
        }
        ret = e->count;
    } else {
        if (!e && ev->n == ev->cap) {
            size_t lru = 0;
            for (size_t i = 1; i < ev->n; i++)
                if (ev->v[i].used < ev->v[lru].used)
                    lru = i;
            free(ev->v[lru].key);
            free(ev->v[lru].name);
            free(ev->v[lru].message);
            ev->v[lru] = ev->v[--ev->n];
        }
        if (e) { /* a new Event of the same group: the old one keeps its last state */
            free(e->name);
            free(e->message);
        } else {
            e = &ev->v[ev->n++];
            e->key = TAKE_PTR(k);
        }
        /* client-go's GenerateEventName: "<object>.<hex unix nanos>"; the tick keeps two events
         * of the same millisecond apart. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t nanos = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + ev->tick;
        e->name = rss_xasprintf("%s.%" PRIx64, rss_name, nanos);
        e->message = rss_xstrdup(msg);
        e->count = 1;
        e->first_ms = e->last_ms = e->created_ms = now_ms;
        e->used = ev->tick;
        ret = 0;
    }
    *name = rss_xstrdup(e->name);
    *first_ms = e->first_ms;
    pthread_mutex_unlock(&ev->lock);
    return ret;
}

void leader_events_forget(struct leader_events *ev, const struct leader_event_key *key)
{
    _cleanup_free_ char *k = join_key(key);
    pthread_mutex_lock(&ev->lock);
    struct leader_event_entry *e = find(ev, k);
    if (e) {
        free(e->key);
        free(e->name);
        free(e->message);
        *e = ev->v[--ev->n];
    }
    pthread_mutex_unlock(&ev->lock);
}

static void k8s_time(int64_t ms, char buf[RSS_TIME_LEN])
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};
    rss_time_seconds(buf, &ts);
}

cJSON *leader_build_event(const struct rss_spec *spec, const char *name, const char *type, const char *reason,
                          const char *message, const char *pod, const char *instance, int64_t now_ms)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "apiVersion", "v1");
    cJSON_AddStringToObject(e, "kind", "Event");
    cJSON *md = cJSON_AddObjectToObject(e, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", spec->ns);
    /* The RSS is the object: `kubectl describe rss` filters events by its uid and kind. */
    cJSON *io = cJSON_AddObjectToObject(e, "involvedObject");
    cJSON_AddStringToObject(io, "apiVersion", RSS_CRD_GROUP_VERSION);
    cJSON_AddStringToObject(io, "kind", RSS_CRD_KIND);
    cJSON_AddStringToObject(io, "name", spec->name);
    cJSON_AddStringToObject(io, "namespace", spec->ns);
    cJSON_AddStringToObject(io, "uid", spec->uid);
    if (pod) {
        /* The member concerned, for tools that follow it (kubectl shows involvedObject only). */
        cJSON *rel = cJSON_AddObjectToObject(e, "related");
        cJSON_AddStringToObject(rel, "apiVersion", "v1");
        cJSON_AddStringToObject(rel, "kind", "Pod");
        cJSON_AddStringToObject(rel, "name", pod);
        cJSON_AddStringToObject(rel, "namespace", spec->ns);
    }
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON_AddStringToObject(e, "message", message ? message : "");
    cJSON_AddNumberToObject(e, "count", 1);
    char buf[RSS_TIME_LEN];
    k8s_time(now_ms, buf);
    cJSON_AddStringToObject(e, "firstTimestamp", buf);
    cJSON_AddStringToObject(e, "lastTimestamp", buf);
    cJSON *src = cJSON_AddObjectToObject(e, "source");
    cJSON_AddStringToObject(src, "component", "rssd");
    cJSON_AddStringToObject(e, "reportingComponent", RSS_EVENT_COMPONENT);
    cJSON_AddStringToObject(e, "reportingInstance", instance ? instance : "");
    return e;
}
