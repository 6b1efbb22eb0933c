/* agent_watch.c -- the agent's fixed watches: the leader Lease (rule 10) and the pods on this node (the RSS
 * objects and member records are watched per RSS, agent_rss_watch.c). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "agent_internal.h"

static void sleep_unless_stopped(struct rss_agent *a, long ms)
{
    for (long t = 0; t < ms && !atomic_load(a->stop); t += 100)
        usleep(100 * 1000);
}

/* Runs one watch until stop; a watch that gives up (bad request: e.g. the CRD is not installed yet)
 * is retried, since rssd can do nothing better than wait for the cluster to be set up. */
static void watch_forever(struct rss_agent *a, void *ud, const char *what, const char *path,
                          struct rss_kube_watch_opts *o, rss_kube_watch_fn fn)
{
    while (!atomic_load(a->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_watch(a->kube, path, o, fn, ud, &err) == 0)
            break;
        rss_log_error(RSS_LOG_WARN, &err, "watch of %s failed, retrying in 2 s", what);
        sleep_unless_stopped(a, 2000);
        o->resource_version = NULL; /* list afresh */
    }
}

/* --- pods ---------------------------------------------------------------------------------------- */

/* True when namespace ns belongs to the watch of scope sc. */
static bool in_scope(const struct agent_scope *sc, const char *ns)
{
    return !sc->ns || (ns && !strcmp(sc->ns, ns));
}

/* Every scope listed once (lock held). */
static bool all_synced(const struct agent_scope *scopes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!scopes[i].synced)
            return false;
    return true;
}

static int on_pod(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct agent_scope *sc = ud;
    struct rss_agent *a = sc->a;
    (void)err;
    pthread_mutex_lock(&a->lock);
    switch (ev) {
    case RSS_KUBE_SYNC_BEGIN:
        for (struct agent_member *m = a->members; m; m = m->next)
            if (in_scope(sc, m->ns))
                m->seen = false;
        break;
    case RSS_KUBE_SYNC_END: {
        struct agent_member *m = a->members;
        while (m) {
            struct agent_member *next = m->next;
            if (!m->seen && in_scope(sc, m->ns))
                agent_member_delete(a, m->ns, m->pod);
            m = next;
        }
        sc->synced = true;
        a->pods_synced = all_synced(a->pod_scopes, a->n_scopes);
        break;
    }
    case RSS_KUBE_ADDED:
    case RSS_KUBE_MODIFIED:
        agent_member_ingest(a, obj);
        break;
    case RSS_KUBE_DELETED: {
        const cJSON *meta = rss_json_obj(obj, "metadata");
        const char *ns = rss_json_str(meta, "namespace"), *name = rss_json_str(meta, "name");
        if (ns && name)
            agent_member_delete(a, ns, name);
        break;
    }
    }
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    return 0;
}

void *agent_watch_pods(void *arg)
{
    struct agent_scope *sc = arg;
    struct rss_agent *a = sc->a;
    _cleanup_free_ char *fs = rss_xasprintf("spec.nodeName=%s", a->node);
    _cleanup_free_ char *path = rss_kube_path("v1", sc->ns, "pods", NULL, NULL);
    struct rss_kube_watch_opts o = {.field_selector = fs, .label_selector = RSS_LABEL_NAME, .stop = a->stop};
    watch_forever(a, sc, "pods", path, &o, on_pod);
    return NULL;
}

/* --- the leader Lease (rule 10) -------------------------------------------------------------------- */

/* Raises the observed epoch; it never goes backwards, whatever order views arrive in. */
static void see_lease(struct rss_agent *a, const cJSON *lease)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rss_json_obj(lease, "spec"), "leaseTransitions");
    /* A number no uint64_t holds would be an undefined cast: such an epoch counts as 0 (never raises). */
    uint64_t epoch = 0;
    if (!rss_json_uint53(t, &epoch))
        epoch = 0;
    pthread_mutex_lock(&a->lock);
    if (!a->lease_known || epoch > a->lease_epoch) {
        rss_log_info("leader Lease: epoch %llu (was %s%llu)", (unsigned long long)epoch,
                     a->lease_known ? "" : "unknown ", (unsigned long long)a->lease_epoch);
        a->lease_epoch = epoch;
        a->lease_known = true;
        /* Publish the new epoch (a deposed leader learns from it) and re-decide every member. */
        for (struct agent_member *m = a->members; m; m = m->next)
            m->wake = true;
        pthread_cond_broadcast(&a->cond);
    }
    pthread_mutex_unlock(&a->lock);
}

static int on_lease(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct rss_agent *a = ud;
    (void)err;
    const char *name = rss_json_str(rss_json_obj(obj, "metadata"), "name");
    if ((ev == RSS_KUBE_ADDED || ev == RSS_KUBE_MODIFIED) && name && strcmp(name, RSS_LEADER_LEASE) == 0) {
        see_lease(a, obj);
        if (a->leader_lease_seen)
            a->leader_lease_seen(a->leader_lease_ud, obj);
    }
    return 0;
}

void *agent_watch_lease(void *arg)
{
    struct rss_agent *a = arg;
    _cleanup_free_ char *coll = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", NULL, NULL);
    _cleanup_free_ char *item =
        rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", RSS_LEADER_LEASE, NULL);
    _cleanup_free_ char *rv = NULL;
    /* A quorum GET first: a watch cache may serve an older Lease than one we saw before a restart. */
    while (!atomic_load(a->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        _cleanup_json_ cJSON *lease = NULL;
        if (rss_kube_get(a->kube, item, &lease, &err) == 0) {
            see_lease(a, lease);
            if (a->leader_lease_seen)
                a->leader_lease_seen(a->leader_lease_ud, lease);
            pthread_mutex_lock(&a->lock);
            a->lease_read = true;
            pthread_mutex_unlock(&a->lock);
            const char *r = rss_json_str(rss_json_obj(lease, "metadata"), "resourceVersion");
            rv = r ? rss_xstrdup(r) : NULL;
            break;
        }
        if (rss_error_code(err) == RSS_E_NOT_FOUND) {
            pthread_mutex_lock(&a->lock);
            a->lease_read = true;
            pthread_mutex_unlock(&a->lock);
            rss_log_info("leader Lease %s/%s does not exist yet: no action can be executed until it does",
                         a->ns, RSS_LEADER_LEASE);
            break;
        }
        rss_log_error(RSS_LOG_WARN, &err, "reading the leader Lease, retrying in 1 s");
        sleep_unless_stopped(a, 1000);
    }
    _cleanup_free_ char *fs = rss_xasprintf("metadata.name=%s", RSS_LEADER_LEASE);
    struct rss_kube_watch_opts o = {.field_selector = fs, .resource_version = rv, .stop = a->stop};
    watch_forever(a, a, "the leader Lease", coll, &o, on_lease);
    return NULL;
}
