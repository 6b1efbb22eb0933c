/* store.c -- kubesim's object store: one global resourceVersion, immutable snapshots, a bounded
 * event history for watches, and the Lease write log. Every function runs under ks_lock(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "kubesim.h"

#define HISTORY_MAX 10000
#define NBUCKETS    4096

struct entry {
    char *group, *plural, *ns, *name;
    struct ks_snap *snap;
    struct entry *next;
};

struct lease_write {
    uint64_t rv;
    char *ns, *name, *verb, *holder, *renew;
    long transitions;
    int64_t mono_ns;
};

static struct {
    struct entry *buckets[NBUCKETS];
    uint64_t rv;
    uint64_t compacted;
    /* The history is a ring of the last HISTORY_MAX events; every rv bump is exactly one
     * event, so event rv maps to a slot directly. */
    struct ks_event ring[HISTORY_MAX];
    uint64_t oldest; /* rv of the oldest kept event (0: none yet) */
    struct lease_write *leases;
    size_t nleases, capleases;
} st;

struct ks_snap *ks_snap_new(cJSON *obj)
{
    struct ks_snap *s = rss_xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    s->obj = obj;
    return s;
}

struct ks_snap *ks_snap_ref(struct ks_snap *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void ks_snap_unref(struct ks_snap *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        cJSON_Delete(s->obj);
        free(s);
    }
}

const char *ks_event_name(enum ks_event_type t)
{
    switch (t) {
    case KS_ADDED:
        return "ADDED";
    case KS_MODIFIED:
        return "MODIFIED";
    case KS_DELETED:
        return "DELETED";
    }
    return "ERROR";
}

static unsigned hash(const char *group, const char *plural, const char *ns, const char *name)
{
    unsigned h = 5381;
    const char *parts[] = {group, plural, ns, name};
    for (int i = 0; i < 4; i++) {
        for (const char *p = parts[i]; *p; p++)
            h = h * 33 + (unsigned char)*p;
        h = h * 33 + '/';
    }
    return h % NBUCKETS;
}

static struct entry **find(const char *group, const char *plural, const char *ns, const char *name)
{
    struct entry **e = &st.buckets[hash(group, plural, ns, name)];
    for (; *e; e = &(*e)->next) {
        if (!strcmp((*e)->name, name) && !strcmp((*e)->ns, ns) && !strcmp((*e)->plural, plural) &&
            !strcmp((*e)->group, group))
            return e;
    }
    return e;
}

void ks_store_init(void)
{
    st.rv = 1; /* like etcd, never start at 0: "0" means "any" to clients */
}

static void event_clear(struct ks_event *ev)
{
    free(ev->group);
    free(ev->plural);
    free(ev->ns);
    ks_snap_unref(ev->snap);
    ks_snap_unref(ev->prev);
    memset(ev, 0, sizeof(*ev));
}

void ks_store_free(void)
{
    for (size_t b = 0; b < NBUCKETS; b++) {
        struct entry *e = st.buckets[b];
        while (e) {
            struct entry *next = e->next;
            free(e->group);
            free(e->plural);
            free(e->ns);
            free(e->name);
            ks_snap_unref(e->snap);
            free(e);
            e = next;
        }
        st.buckets[b] = NULL;
    }
    for (size_t i = 0; i < HISTORY_MAX; i++)
        event_clear(&st.ring[i]);
    for (size_t i = 0; i < st.nleases; i++) {
        struct lease_write *l = &st.leases[i];
        free(l->ns);
        free(l->name);
        free(l->verb);
        free(l->holder);
        free(l->renew);
    }
    free(st.leases);
    memset(&st, 0, sizeof(st));
}

uint64_t ks_store_rv(void)
{
    return st.rv;
}

uint64_t ks_store_compacted(void)
{
    return st.compacted;
}

void ks_store_compact(void)
{
    st.compacted = st.rv;
}

uint64_t ks_history_oldest(void)
{
    return st.oldest ? st.oldest : st.rv + 1;
}

const struct ks_event *ks_history_at(uint64_t rv)
{
    if (!st.oldest || rv < st.oldest || rv > st.rv)
        return NULL;
    const struct ks_event *ev = &st.ring[rv % HISTORY_MAX];
    return ev->rv == rv ? ev : NULL;
}

struct ks_snap *ks_store_get(const char *group, const char *plural, const char *ns, const char *name)
{
    struct entry **e = find(group, plural, ns ? ns : "", name);
    return *e ? (*e)->snap : NULL;
}

static void log_lease(const char *verb, const char *ns, const char *name, const cJSON *obj)
{
    if (st.nleases == st.capleases) {
        st.capleases = st.capleases ? st.capleases * 2 : 64;
        st.leases = rss_xrealloc(st.leases, st.capleases * sizeof(*st.leases));
    }
    struct lease_write *l = &st.leases[st.nleases++];
    const char *holder = ks_json_str(obj, "spec.holderIdentity");
    const char *renew = ks_json_str(obj, "spec.renewTime");
    const cJSON *tr = ks_json_path(obj, "spec.leaseTransitions");
    l->rv = st.rv;
    l->ns = rss_xstrdup(ns);
    l->name = rss_xstrdup(name);
    l->verb = rss_xstrdup(verb);
    l->holder = holder ? rss_xstrdup(holder) : NULL;
    l->renew = renew ? rss_xstrdup(renew) : NULL;
    l->transitions = cJSON_IsNumber(tr) ? (long)tr->valuedouble : 0;
    l->mono_ns = ks_mono_ns();
}

cJSON *ks_store_leases_log(void)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < st.nleases; i++) {
        const struct lease_write *l = &st.leases[i];
        cJSON *o = cJSON_CreateObject();
        char rv[32];
        snprintf(rv, sizeof(rv), "%llu", (unsigned long long)l->rv);
        cJSON_AddNumberToObject(o, "seq", (double)i + 1);
        cJSON_AddStringToObject(o, "rv", rv);
        cJSON_AddStringToObject(o, "namespace", l->ns);
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddStringToObject(o, "verb", l->verb);
        if (l->holder)
            cJSON_AddStringToObject(o, "holderIdentity", l->holder);
        else
            cJSON_AddNullToObject(o, "holderIdentity");
        cJSON_AddNumberToObject(o, "leaseTransitions", (double)l->transitions);
        if (l->renew)
            cJSON_AddStringToObject(o, "renewTime", l->renew);
        else
            cJSON_AddNullToObject(o, "renewTime");
        cJSON_AddNumberToObject(o, "monoNs", (double)l->mono_ns);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void record(enum ks_event_type type, const char *group, const char *plural, const char *ns,
                   struct ks_snap *snap, struct ks_snap *prev)
{
    struct ks_event *ev = &st.ring[st.rv % HISTORY_MAX];
    event_clear(ev);
    ev->rv = st.rv;
    ev->type = type;
    ev->group = rss_xstrdup(group);
    ev->plural = rss_xstrdup(plural);
    ev->ns = rss_xstrdup(ns);
    ev->snap = ks_snap_ref(snap);
    ev->prev = ks_snap_ref(prev);
    if (!st.oldest)
        st.oldest = st.rv;
    else if (st.rv - st.oldest >= HISTORY_MAX)
        st.oldest = st.rv - HISTORY_MAX + 1;
    ks_broadcast();
}

static void set_rv(cJSON *obj)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)st.rv);
    ks_json_set_str(ks_json_obj(obj, "metadata"), "resourceVersion", rv);
}

struct ks_snap *ks_store_put(const char *group, const char *plural, const char *ns, cJSON *obj,
                             const char *verb)
{
    ns = ns ? ns : "";
    const char *name = ks_json_str(obj, "metadata.name");
    st.rv++;
    set_rv(obj);
    struct entry **e = find(group, plural, ns, name);
    struct ks_snap *snap = ks_snap_new(obj);
    struct ks_snap *prev = NULL;
    if (*e) {
        prev = (*e)->snap;
        (*e)->snap = snap;
    } else {
        struct entry *n = rss_xcalloc(1, sizeof(*n));
        n->group = rss_xstrdup(group);
        n->plural = rss_xstrdup(plural);
        n->ns = rss_xstrdup(ns);
        n->name = rss_xstrdup(name);
        n->snap = snap;
        *e = n;
    }
    record(prev ? KS_MODIFIED : KS_ADDED, group, plural, ns, snap, prev);
    if (!strcmp(group, "coordination.k8s.io") && !strcmp(plural, "leases"))
        log_lease(verb, ns, name, obj);
    ks_snap_unref(prev);
    return snap;
}

struct ks_snap *ks_store_remove(const char *group, const char *plural, const char *ns, const char *name,
                                const char *verb)
{
    ns = ns ? ns : "";
    struct entry **e = find(group, plural, ns, name);
    if (!*e)
        return NULL;
    struct entry *old = *e;
    *e = old->next;
    /* The DELETED event carries the last state at a new resourceVersion, like etcd3's watch. */
    st.rv++;
    cJSON *last = cJSON_Duplicate(old->snap->obj, true);
    set_rv(last);
    struct ks_snap *gone = ks_snap_new(last);
    record(KS_DELETED, group, plural, ns, gone, old->snap);
    if (!strcmp(group, "coordination.k8s.io") && !strcmp(plural, "leases"))
        log_lease(verb, ns, name, last);
    free(old->group);
    free(old->plural);
    free(old->ns);
    free(old->name);
    ks_snap_unref(old->snap);
    free(old);
    return gone;
}

static int cmp_snap(const void *a, const void *b)
{
    const cJSON *x = (*(struct ks_snap *const *)a)->obj;
    const cJSON *y = (*(struct ks_snap *const *)b)->obj;
    const char *nx = ks_json_str(x, "metadata.namespace"), *ny = ks_json_str(y, "metadata.namespace");
    int c = strcmp(nx ? nx : "", ny ? ny : "");
    if (c)
        return c;
    return strcmp(ks_json_str(x, "metadata.name"), ks_json_str(y, "metadata.name"));
}

struct ks_snap **ks_store_list(const char *group, const char *plural, const char *ns, size_t *n)
{
    size_t cap = 16, cnt = 0;
    struct ks_snap **v = rss_xmalloc(cap * sizeof(*v));
    for (size_t b = 0; b < NBUCKETS; b++) {
        for (struct entry *e = st.buckets[b]; e; e = e->next) {
            if (strcmp(e->plural, plural) || strcmp(e->group, group))
                continue;
            if (ns && strcmp(e->ns, ns))
                continue;
            if (cnt == cap) {
                cap *= 2;
                v = rss_xrealloc(v, cap * sizeof(*v));
            }
            v[cnt++] = ks_snap_ref(e->snap);
        }
    }
    qsort(v, cnt, sizeof(*v), cmp_snap);
    *n = cnt;
    return v;
}

void ks_snaps_free(struct ks_snap **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ks_snap_unref(v[i]);
    free(v);
}
