/* agent_rss_watch.c -- the narrow watches: for each RSS with a member pod on this node, a watch of that
 * RSS object alone and one of its member records, started when its first member appears and stopped when
 * the last one leaves (docs/agent.md).
 *
 * Why per RSS and not cluster-wide: every status write of every RSS reached every agent, O(nodes x
 * members) events in a lights-out (docs/scale.md). Why selectors on the name and on the records' labels,
 * never a label on the user's RSS: a namespace user could edit such a label and hide an RSS from the agents
 * of its members, which would then not fence them. The records' labels are written only by rssd, in
 * rssd's namespace, and name the RSS, not the node: a record stays in the selector when its pod moves. */
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/record.h"
#include "agent_internal.h"

enum { W_SPEC, W_RECORDS };

/* Lock held. True when this watch's events may still change the tables: once its RSS left the node (or
 * the agent stops), a late event must not bring back a spec or a record the retirement dropped. */
static bool live(const struct agent_rss_watch *w)
{
    return !atomic_load(&w->stop);
}

static bool is_ours(const struct agent_rss_watch *w, const char *ns, const char *name)
{
    return ns && name && !strcmp(ns, w->ns) && !strcmp(name, w->name);
}

static int on_spec(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct agent_rss_watch *w = ud;
    struct rss_agent *a = w->a;
    (void)err;
    pthread_mutex_lock(&a->lock);
    const cJSON *meta = rss_json_obj(obj, "metadata");
    const char *ns = rss_json_str(meta, "namespace"), *name = rss_json_str(meta, "name");
    struct agent_spec *s;
    if (!live(w)) {
        /* retired: changes nothing */
    } else if (ev == RSS_KUBE_SYNC_BEGIN) {
        if ((s = agent_spec_find(a, w->key)))
            s->seen = false;
    } else if (ev == RSS_KUBE_SYNC_END) {
        /* Only this RSS is judged gone by this relist (rule 5: its pods are then no members). */
        if ((s = agent_spec_find(a, w->key)) && !s->seen)
            agent_spec_delete(a, w->ns, w->name);
        w->spec_synced = true;
    } else if (!is_ours(w, ns, name)) {
        /* A server that ignored the field selector: the other RSS objects are none of ours. */
    } else if (ev == RSS_KUBE_DELETED) {
        agent_spec_delete(a, ns, name);
    } else {
        agent_spec_set(a, obj);
    }
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    return 0;
}

static int on_record(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct agent_rss_watch *w = ud;
    struct rss_agent *a = w->a;
    (void)err;
    const char *ns = NULL, *rss = NULL, *pod = NULL;
    bool member = obj && rss_record_member(obj, &ns, &rss, &pod);
    pthread_mutex_lock(&a->lock);
    if (!live(w)) {
        /* retired: changes nothing */
    } else if (ev == RSS_KUBE_SYNC_BEGIN) {
        agent_records_mark(a, w->ns, w->name);
    } else if (ev == RSS_KUBE_SYNC_END) {
        agent_records_sweep(a, w->ns, w->name);
        w->records_synced = true;
    } else if (!member || !is_ours(w, ns, rss)) {
        /* not a record of this RSS's members */
    } else if (ev == RSS_KUBE_DELETED) {
        agent_record_delete(a, obj);
    } else if (agent_record_ingest(a, obj)) {
        /* A member's agent writes `observed` when it (re)probes or its member changes: a new agent on
         * that node may have a new failsafe address and key (agent_peers_reread.c). */
        agent_peers_record_changed(a, ns, rss, pod);
    }
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    return 0;
}

/* Runs one watch until its RSS leaves the node or the agent stops; a watch that gives up (the CRD is not
 * installed yet, an API error) is retried, since rssd can do nothing better than wait. */
static void run(struct agent_rss_watch *w, int which, const char *what, const char *path,
                struct rss_kube_watch_opts *o, rss_kube_watch_fn fn)
{
    while (!atomic_load(&w->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_watch(w->a->kube, path, o, fn, w, &err) == 0)
            break;
        rss_log_error(RSS_LOG_WARN, &err, "watch of %s of RSS %s failed, retrying in 2 s", what, w->key);
        for (int t = 0; t < 2000 && !atomic_load(&w->stop); t += 100)
            usleep(100 * 1000);
        o->resource_version = NULL; /* list afresh */
    }
    pthread_mutex_lock(&w->a->lock);
    w->done[which] = true; /* the thread's last act: it may be joined under the lock from now on */
    pthread_mutex_unlock(&w->a->lock);
}

static void *watch_spec(void *arg)
{
    struct agent_rss_watch *w = arg;
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, w->ns, RSS_CRD_PLURAL, NULL, NULL);
    _cleanup_free_ char *fs = rss_xasprintf("metadata.name=%s", w->name);
    struct rss_kube_watch_opts o = {.field_selector = fs, .stop = &w->stop};
    run(w, W_SPEC, "the object", path, &o, on_spec);
    return NULL;
}

static void *watch_records(void *arg)
{
    struct agent_rss_watch *w = arg;
    struct rss_agent *a = w->a;
    _cleanup_free_ char *path = rss_kube_path("v1", a->ns, "configmaps", NULL, NULL);
    /* The labels the leader and the agents put on every record (rss_record_new); peers' records of the
     * same RSS are seen too (agent_peers_reread.c needs them). */
    _cleanup_free_ char *ls =
        rss_xasprintf("%s=%s,%s=%s", RSS_LABEL_RECORD_NS, w->ns, RSS_LABEL_RECORD_RSS, w->name);
    struct rss_kube_watch_opts o = {.label_selector = ls, .stop = &w->stop};
    run(w, W_RECORDS, "the member records", path, &o, on_record);
    return NULL;
}

static void watch_free(struct agent_rss_watch *w)
{
    free(w->ns);
    free(w->name);
    free(w->key);
    free(w);
}

/* Lock held: starts the threads not running yet (a failed start is retried at the next update). */
static void start_threads(struct agent_rss_watch *w)
{
    void *(*fns[2])(void *) = {watch_spec, watch_records};
    for (int i = 0; i < 2; i++) {
        if (w->started[i])
            continue;
        int e = pthread_create(&w->th[i], NULL, fns[i], w);
        if (e == 0)
            w->started[i] = true;
        else
            rss_log_warn("RSS %s: cannot start its watch thread (%s); retrying", w->key, strerror(e));
    }
}

/* Lock held: is RSS ns/name wanted, i.e. has it a member pod on this node in a managed namespace? */
static bool wanted(struct rss_agent *a, const char *ns, const char *name)
{
    if (!rss_namespaces_contains(&a->managed, ns))
        return false;
    for (struct agent_member *m = a->members; m; m = m->next)
        if (m->rss && !strcmp(m->ns, ns) && !strcmp(m->rss, name))
            return true;
    return false;
}

static struct agent_rss_watch *find(struct rss_agent *a, const char *ns, const char *name)
{
    for (struct agent_rss_watch *w = a->rss_watches; w; w = w->next)
        if (!strcmp(w->ns, ns) && !strcmp(w->name, name))
            return w;
    return NULL;
}

/* Lock held: the RSS left the node. Its spec and records go too (a watch started again later lists them
 * afresh); only the last member's departure gets here, so no member on the node loses its spec. */
static void retire(struct rss_agent *a, struct agent_rss_watch *w)
{
    atomic_store(&w->stop, true);
    agent_spec_drop(a, w->key);
    agent_records_mark(a, w->ns, w->name);
    agent_records_sweep(a, w->ns, w->name);
    rss_log_info("RSS %s has no member on this node any more: its watches stop", w->key);
    w->next = a->rss_retired;
    a->rss_retired = w;
}

/* Lock held: joins and frees the retired watches whose threads have ended (a join never waits long:
 * the thread's last act was under this lock). */
static void reap(struct rss_agent *a)
{
    struct agent_rss_watch **p = &a->rss_retired;
    while (*p) {
        struct agent_rss_watch *w = *p;
        bool ended =
            (!w->started[W_SPEC] || w->done[W_SPEC]) && (!w->started[W_RECORDS] || w->done[W_RECORDS]);
        if (!ended) {
            p = &w->next;
            continue;
        }
        for (int i = 0; i < 2; i++)
            if (w->started[i])
                pthread_join(w->th[i], NULL);
        *p = w->next;
        watch_free(w);
    }
}

void agent_rss_watch_update(struct rss_agent *a)
{
    struct agent_rss_watch **p = &a->rss_watches;
    while (*p) {
        struct agent_rss_watch *w = *p;
        if (wanted(a, w->ns, w->name)) {
            start_threads(w);
            p = &w->next;
        } else {
            *p = w->next;
            retire(a, w);
        }
    }
    for (struct agent_member *m = a->members; m; m = m->next) {
        if (!m->rss || !*m->rss || !rss_namespaces_contains(&a->managed, m->ns) || find(a, m->ns, m->rss))
            continue;
        struct agent_rss_watch *w = rss_xcalloc(1, sizeof(*w));
        w->a = a;
        w->ns = rss_xstrdup(m->ns);
        w->name = rss_xstrdup(m->rss);
        w->key = rss_xasprintf("%s/%s", m->ns, m->rss);
        atomic_init(&w->stop, false);
        w->next = a->rss_watches;
        a->rss_watches = w;
        rss_log_info("RSS %s has a member on this node: watching it and its member records", w->key);
        start_threads(w);
    }
    reap(a);
}

bool agent_rss_watch_synced(struct rss_agent *a, const char *ns, const char *name)
{
    const struct agent_rss_watch *w = ns && name ? find(a, ns, name) : NULL;
    return w && w->spec_synced && w->records_synced;
}

bool agent_rss_watch_all_synced(struct rss_agent *a)
{
    for (const struct agent_rss_watch *w = a->rss_watches; w; w = w->next)
        if (!w->spec_synced || !w->records_synced)
            return false;
    return true;
}

void agent_rss_watch_stop_all(struct rss_agent *a)
{
    pthread_mutex_lock(&a->lock);
    while (a->rss_watches) {
        struct agent_rss_watch *w = a->rss_watches;
        a->rss_watches = w->next;
        atomic_store(&w->stop, true); /* the tables stay: the fence state was saved from them */
        w->next = a->rss_retired;
        a->rss_retired = w;
    }
    struct agent_rss_watch *all = a->rss_retired;
    a->rss_retired = NULL;
    pthread_mutex_unlock(&a->lock);
    /* Joined without the lock: a thread may be waiting for it in a callback. */
    while (all) {
        struct agent_rss_watch *w = all;
        all = w->next;
        atomic_store(&w->stop, true);
        for (int i = 0; i < 2; i++)
            if (w->started[i])
                pthread_join(w->th[i], NULL);
        watch_free(w);
    }
}
