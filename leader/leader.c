/* leader.c -- the leader's run loop: watches feed a dirty set, the loop hands each dirty RSS to a worker. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leader_cache.h"
#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "rss/record.h"

#define WAKE_MS     200   /* the loop re-checks stop and the election at least this often */
#define RETRY_MS    1000  /* after an API error, the RSS is tried again this soon */
#define MAX_FULL_MS 60000 /* a full pass over every RSS at least this often */
#define MIN_FULL_MS 500
#define POLL_MS     1000 /* the liveness view is updated from the Lease cache this often */
#define MAX_GAP_MS  5000 /* a longer gap between two good views restarts every node's clock */
/* A Lease watch silent this long no longer vouches for the cache: LIST once (below MAX_GAP_MS, so a
 * working LIST keeps the view gap-free as before the cache). Every live agent renews its heartbeat every
 * few seconds, so in a cluster of more than a handful of nodes the watch is never this quiet. */
#define LEASE_QUIET_MS     3000
#define MAX_DIRTY          4096
#define KUBELET_RECHECK_MS 5000 /* a node read down is read again this often: a rebooted kubelet */
#define MAX_KUBELET_READS  16   /* Node GETs per poll: a rack lost at once is read over a few polls */

struct rss_leader {
    struct rss_kube *kube;
    struct rss_election *election;
    char *ns;
    struct rss_namespaces managed; /* a copy of cfg->namespaces; n == 0: every namespace */
    long fence_ms;
    size_t workers;              /* reconcile workers per term */
    struct leader_events events; /* its own lock */
    pthread_mutex_t lv_mu;       /* guards liveness: the loop polls it, workers read and note into it */
    struct leader_liveness liveness;
    pthread_mutex_t keys_mu;       /* guards the four keysets below: workers test and add */
    struct leader_keyset services; /* Services checked this term */
    struct leader_keyset budgets;  /* PodDisruptionBudgets right this term (leader_budget.c) */
    struct leader_keyset ignored;  /* pods warned about (IgnoredAnnotation) */
    struct leader_keyset floors;   /* RSSs whose epoch floor this term raised */
    /* This term's RSS objects as the RSS watches saw them, one cache per watch (per managed namespace,
     * or one for all): an event-driven reconcile reads its RSS here instead of a GET. Set before the
     * workers start and cleared after they end; each cache has its own lock. */
    struct leader_cache **rss_caches;
    size_t n_rss_caches;
    /* Their StatefulSets, the same way (one cache per StatefulSet watch, n_rss_caches of them): an
     * event-driven reconcile's first round reads its StatefulSet here (leader_reconcile.c). */
    struct leader_cache **sts_caches;
    /* The cordoned Nodes (a watch with fieldSelector spec.unschedulable=true: a handful in any cluster),
     * for the drain's switchover and the primary's own budget (planner_switchover.c, leader_budget.c).
     * NULL between terms. */
    struct leader_cache *cordoned;

    /* Shared with the watch threads, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **dirty; /* "ns/name" of RSSs to reconcile */
    size_t n_dirty, cap_dirty;
    bool all_dirty;
    atomic_bool wstop;
};

int rss_leader_new(const struct rss_leader_config *cfg, struct rss_leader **ret, rss_error_t *err)
{
    if (!cfg || !cfg->kube || !cfg->election || !cfg->ns || !*cfg->ns)
        return rss_error_make(err, RSS_E_INVALID, 0, "leader: kube, election and namespace are required");
    struct rss_leader *l = rss_xcalloc(1, sizeof(*l));
    l->kube = cfg->kube;
    l->election = cfg->election;
    l->ns = rss_xstrdup(cfg->ns);
    if (cfg->namespaces && cfg->namespaces->n) {
        l->managed.names = rss_xcalloc(cfg->namespaces->n, sizeof(char *));
        for (size_t i = 0; i < cfg->namespaces->n; i++)
            l->managed.names[i] = rss_xstrdup(cfg->namespaces->names[i]);
        l->managed.n = cfg->namespaces->n;
    }
    l->fence_ms = cfg->fence_timeout_ms > 0 ? cfg->fence_timeout_ms : 30000;
    if (cfg->workers > RSS_LEADER_MAX_WORKERS) {
        free(l->ns);
        rss_namespaces_clear(&l->managed);
        free(l);
        return rss_error_make(err, RSS_E_INVALID, 0, "leader: %d reconcile workers, at most %d", cfg->workers,
                              RSS_LEADER_MAX_WORKERS);
    }
    l->workers = cfg->workers > 0 ? (size_t)cfg->workers : RSS_LEADER_DEFAULT_WORKERS;
    pthread_mutex_init(&l->lv_mu, NULL);
    pthread_mutex_init(&l->keys_mu, NULL);
    leader_events_init(&l->events, 1024);
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    *ret = l;
    return 0;
}

static void clear_dirty(struct rss_leader *l)
{
    for (size_t i = 0; i < l->n_dirty; i++)
        free(l->dirty[i]);
    free(l->dirty);
    l->dirty = NULL;
    l->n_dirty = l->cap_dirty = 0;
}

void rss_leader_free(struct rss_leader *l)
{
    if (!l)
        return;
    clear_dirty(l);
    leader_liveness_clear(&l->liveness);
    leader_events_clear(&l->events);
    leader_keyset_clear(&l->services);
    leader_keyset_clear(&l->budgets);
    leader_keyset_clear(&l->ignored);
    leader_keyset_clear(&l->floors);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->lv_mu);
    pthread_mutex_destroy(&l->keys_mu);
    free(l->ns);
    rss_namespaces_clear(&l->managed);
    free(l);
}

/* Marks one RSS dirty (lock held). A flood beyond MAX_DIRTY degrades to a full pass. */
static void mark_locked(struct rss_leader *l, const char *ns, const char *name)
{
    /* A record in rssd's namespace may name an RSS of a namespace this leader does not manage (left by a
     * cluster-wide install): not ours to read, not even with a GET. */
    if (!ns || !name || !rss_namespaces_contains(&l->managed, ns))
        return;
    _cleanup_free_ char *key = rss_xasprintf("%s/%s", ns, name);
    for (size_t i = 0; i < l->n_dirty; i++)
        if (!strcmp(l->dirty[i], key))
            return;
    if (l->n_dirty >= MAX_DIRTY) {
        l->all_dirty = true;
        return;
    }
    *(char **)rss_xarray_push(&l->dirty, &l->n_dirty, &l->cap_dirty, sizeof(*l->dirty)) = TAKE_PTR(key);
}

static const char *md_str(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key));
}

static const char *owner_label(const cJSON *obj)
{
    const cJSON *labels =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, RSS_LABEL_NAME));
}

/* RSS objects: the object itself. Pods and StatefulSets: the RSS named by their label. */
static int on_rss(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct rss_leader *l = ud;
    pthread_mutex_lock(&l->mu);
    if (ev == RSS_KUBE_SYNC_END)
        l->all_dirty = true; /* a re-list may have missed deletions and changes */
    else if (obj && ev != RSS_KUBE_SYNC_BEGIN)
        mark_locked(l, md_str(obj, "namespace"), md_str(obj, "name"));
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static int on_member(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct rss_leader *l = ud;
    pthread_mutex_lock(&l->mu);
    if (ev == RSS_KUBE_SYNC_END)
        l->all_dirty = true;
    else if (obj && ev != RSS_KUBE_SYNC_BEGIN)
        mark_locked(l, md_str(obj, "namespace"), owner_label(obj));
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* Member records: the RSS named by their labels (a new `observed` is news for the plan). */
static int on_record(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct rss_leader *l = ud;
    const char *ns, *rss, *pod;
    pthread_mutex_lock(&l->mu);
    if (ev == RSS_KUBE_SYNC_END)
        l->all_dirty = true;
    else if (obj && ev != RSS_KUBE_SYNC_BEGIN && rss_record_member(obj, &ns, &rss, &pod))
        mark_locked(l, ns, rss);
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* A Node's cordon came or went: every RSS is planned again (a drain is rare; which RSS has a member
 * there is the plan's to find out). */
static int on_node(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)obj;
    (void)err;
    struct rss_leader *l = ud;
    if (ev == RSS_KUBE_SYNC_BEGIN)
        return 0;
    pthread_mutex_lock(&l->mu);
    l->all_dirty = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

struct watch_arg {
    struct rss_leader *l;
    char *path;
    const char *label_selector;
    const char *field_selector;
    /* Optional: its failure (RBAC from before it) is said once, then retried every 10 s. */
    bool optional;
    rss_kube_watch_fn fn;
    void *ud;                   /* fn's userdata; NULL: the leader */
    struct leader_cache *cache; /* fed before fn sees the event (fn is then called with the leader) */
    pthread_t thread;
    bool started;
};

/* The cache first, then the dirty mark: the reconcile that mark wakes reads at least this version. */
static int feed_then(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct watch_arg *w = ud;
    leader_cache_feed(w->cache, ev, obj, err);
    return w->fn(w->l, ev, obj, err);
}

static void *watch_main(void *p)
{
    struct watch_arg *w = p;
    bool said = false;
    while (!atomic_load(&w->l->wstop)) {
        struct rss_kube_watch_opts o = {
            .label_selector = w->label_selector, .field_selector = w->field_selector, .stop = &w->l->wstop};
        _cleanup_error_ rss_error_t err = NULL;
        rss_kube_watch_fn fn = w->cache ? feed_then : w->fn;
        void *ud = w->cache ? w : w->ud ? w->ud : w->l;
        if (rss_kube_watch(w->l->kube, w->path, &o, fn, ud, &err) < 0) {
            /* E.g. the CRD is not installed yet: keep trying, the periodic pass covers the gap. */
            rss_log_error(w->optional && said ? RSS_LOG_DEBUG : RSS_LOG_WARN, &err, "leader watch %s%s%s",
                          w->path, w->field_selector ? "?fieldSelector=" : "",
                          w->field_selector ? w->field_selector : "");
            said = true;
            for (int i = 0; i < (w->optional ? 100 : 10) && !atomic_load(&w->l->wstop); i++)
                nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
        }
    }
    return NULL;
}

/* What the workers of one term share with the loop; ctx is read-only while they run. */
struct term {
    struct rss_leader *l;
    struct leader_ctx ctx;
    atomic_bool lost;  /* a worker saw the term end: the loop ends it */
    atomic_bool retry; /* something failed or did not settle: a full pass soon */
};

/* spec.reconcileInterval in ms (60 s when absent or unreadable). */
static int64_t interval_ms(const cJSON *cr)
{
    const cJSON *ri =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "spec"), "reconcileInterval");
    uint64_t iv = 60000;
    rss_error_t perr = NULL;
    if (cJSON_IsString(ri) && rss_spec_parse_duration(ri->valuestring, &iv, &perr) < 0)
        iv = 60000;
    else if (cJSON_IsNumber(ri) && ri->valuedouble > 0)
        iv = (uint64_t)(ri->valuedouble * 1000);
    rss_error_release(&perr);
    return (int64_t)iv;
}

static void term_lost(struct term *t)
{
    atomic_store(&t->lost, true);
    pthread_mutex_lock(&t->l->mu);
    pthread_cond_signal(&t->l->cv); /* the loop ends the term now, not at its next wake */
    pthread_mutex_unlock(&t->l->mu);
}

static int list_leases(struct rss_leader *l, cJSON **leases, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", l->ns, "leases", NULL, NULL);
    return rss_kube_list(l->kube, path, NULL, leases, err);
}

/* The cache in `caches` (rss_caches or sts_caches) of the watch that covers namespace ns, or NULL. */
static struct leader_cache *cache_for(const struct rss_leader *l, struct leader_cache *const *caches,
                                      const char *ns)
{
    if (!l->n_rss_caches || !caches || !ns)
        return NULL;
    if (!l->managed.n)
        return caches[0];
    for (size_t i = 0; i < l->managed.n && i < l->n_rss_caches; i++)
        if (!strcmp(l->managed.names[i], ns))
            return caches[i];
    return NULL;
}

static struct leader_cache *rss_cache_for(const struct rss_leader *l, const char *ns)
{
    return cache_for(l, l->rss_caches, ns);
}

/* ctx->rss_written: our own write's result into the cache, so the next plan sees at least it. */
static void rss_written(void *ud, const cJSON *obj)
{
    struct leader_cache *c = rss_cache_for(ud, md_str(obj, "namespace"));
    if (c)
        leader_cache_feed(c, RSS_KUBE_MODIFIED, obj, NULL);
}

/* ctx->sts_written and ctx->sts_cached: the same for the StatefulSets. A cache that has not listed yet
 * has nothing to say. */
static void sts_written(void *ud, const cJSON *obj)
{
    struct rss_leader *l = ud;
    struct leader_cache *c = cache_for(l, l->sts_caches, md_str(obj, "namespace"));
    if (c)
        leader_cache_feed(c, RSS_KUBE_MODIFIED, obj, NULL);
}

static cJSON *sts_cached(void *ud, const char *ns, const char *name)
{
    struct rss_leader *l = ud;
    struct leader_cache *c = cache_for(l, l->sts_caches, ns);
    return c && leader_cache_synced(c) ? leader_cache_get(c, ns, name) : NULL;
}

/* ctx->node_cordoned: -1 while the cordoned Nodes are not known (no List yet: no RBAC to list them, an
 * API error), else whether node is one of them. */
static int node_cordoned(void *ud, const char *node)
{
    struct rss_leader *l = ud;
    if (!l->cordoned || !leader_cache_synced(l->cordoned))
        return -1;
    if (!node)
        return 0;
    _cleanup_json_ cJSON *n = leader_cache_get(l->cordoned, NULL, node);
    return cJSON_IsTrue(rss_json_path(n, "spec.unschedulable"));
}

/* The RSS object of a work item: the listed copy, else the watch's cache, else a GET. NULL when it is
 * gone (its metrics series go with it) or cannot be read (a retry is asked for). */
static cJSON *work_object(struct term *t, struct leader_work *w)
{
    char *slash = strchr(w->key, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, w->key, RSS_CRD_PLURAL, slash + 1, NULL);
    /* The RSS from the watch's cache when it has it: its spec and annotations are as new as the event
     * that marked it dirty, its status at least our own last write (rss_written). A plan that wants a
     * fresher one (after fencing, a lost CAS) GETs it (leader_reconcile). Absent from the cache
     * (deleted, or the cache not synced yet): the API says. */
    struct leader_cache *rc = rss_cache_for(t->l, w->key);
    cJSON *cr = rc && leader_cache_synced(rc) ? leader_cache_get(rc, w->key, slash + 1) : NULL;
    /* A full pass's listed copy, unless the cache holds a newer one: a worker of this RSS may have
     * written its status after the LIST, and a plan must never read a status older than our own last
     * write (the planner's memory is there). */
    if (w->obj && !(cr && leader_rv_newer(cr, w->obj))) {
        cJSON_Delete(cr);
        cr = TAKE_PTR(w->obj);
    }
    _cleanup_error_ rss_error_t err = NULL;
    if (!cr && rss_kube_get(t->l->kube, path, &cr, &err) < 0) {
        if (rss_error_code(err) != RSS_E_NOT_FOUND) {
            rss_log_error(RSS_LOG_WARN, &err, "get %s", path);
            atomic_store(&t->retry, true);
        } else {
            rss_metrics_rss_forget(w->key, slash + 1); /* deleted: its rssd_rss_* series go with it */
        }
        cr = NULL;
    }
    *slash = '/';
    return cr;
}

/* A worker's one RSS. The queue never hands one key to two workers, so everything per RSS (its
 * objects, its keyset entries, its Events' group) has one writer at a time. */
static void reconcile_work(void *ud, struct leader_work *w)
{
    struct term *t = ud;
    /* The term is over: no new reconcile starts (the loop joins the workers next). */
    if (atomic_load(&t->lost) || !leader_still_leading(&t->ctx)) {
        term_lost(t);
        return;
    }
    struct leader_ctx c = t->ctx;
    c.full = w->full;
    _cleanup_json_ cJSON *cr = work_object(t, w);
    if (!cr)
        return;
    _cleanup_error_ rss_error_t err = NULL;
    int r = leader_reconcile(&c, cr, &err);
    if (r < 0) {
        rss_log_error(RSS_LOG_WARN, &err, "reconcile %s (will retry)", w->key);
        atomic_store(&t->retry, true);
    } else if (r == LEADER_REPLAN) {
        atomic_store(&t->retry, true);
    } else if (r == LEADER_LOST) {
        term_lost(t);
    }
}

/* A full pass: every listed RSS to the workers, then the records of deleted RSSs. *min_iv gets the
 * smallest reconcileInterval; *listed whether the LIST worked. Returns DONE or LOST. */
static int full_pass(struct term *t, struct leader_queue *q, int64_t *min_iv, bool *listed)
{
    struct rss_leader *l = t->l;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *list = NULL;
    if (rss_namespaces_list(l->kube, &l->managed, RSS_CRD_GROUP_VERSION, RSS_CRD_PLURAL, NULL, &list, &err) <
        0) {
        rss_log_error(RSS_LOG_WARN, &err, "list replicatedstatefulsets");
        atomic_store(&t->retry, true);
        *listed = false;
        return LEADER_DONE;
    }
    *listed = true;
    pthread_mutex_lock(&l->keys_mu);
    leader_keyset_clear(&l->services); /* refilled by this pass: deleted RSSs drop out */
    leader_keyset_clear(&l->budgets);
    pthread_mutex_unlock(&l->keys_mu);
    const cJSON *cr;
    cJSON_ArrayForEach(cr, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *ns = md_str(cr, "namespace"), *name = md_str(cr, "name");
        if (!ns || !name)
            continue;
        int64_t iv = interval_ms(cr);
        if (iv < *min_iv)
            *min_iv = iv;
        _cleanup_free_ char *key = rss_xasprintf("%s/%s", ns, name);
        leader_queue_add(q, key, cr, true);
    }
    /* The list is as fresh here as it will ever be: an RSS created after it is not in it, and the sooner
     * its records are judged the smaller that window. Their reconciles need not be over: a record is
     * dropped only when its RSS is not in the list. */
    return leader_records_drop_deleted(&t->ctx, &l->managed, list);
}

/* The heartbeat Leases from the watch-fed cache into the liveness view; true when a node's verdict
 * changed. A watch is only as good as its last word: a stream cut, stalled or hung sends nothing and
 * every heartbeat in the cache would look unchanged, the view of a dead cluster. So a cache that heard
 * nothing for LEASE_QUIET_MS (or never synced) is vouched for by one LIST, which also brings it up to
 * date; a failed LIST is a gap in the view as it always was. */
static bool poll_liveness(struct rss_leader *l, struct leader_cache *cache, int64_t dead_after)
{
    _cleanup_error_ rss_error_t err = NULL;
    int64_t heard = leader_cache_heard_ms(cache);
    if (!leader_cache_synced(cache) || heard == 0 || rss_clock_mono_ms() - heard > LEASE_QUIET_MS) {
        _cleanup_json_ cJSON *list = NULL;
        if (list_leases(l, &list, &err) < 0) {
            /* Our own view has a gap: no node is judged dead from it (every clock restarts). */
            rss_log_error(RSS_LOG_WARN, &err, "list heartbeat leases in %s", l->ns);
            pthread_mutex_lock(&l->lv_mu);
            leader_liveness_failed(&l->liveness);
            pthread_mutex_unlock(&l->lv_mu);
            return false;
        }
        leader_cache_replace(cache, list, rss_clock_mono_ms());
    }
    _cleanup_json_ cJSON *leases = leader_cache_list(cache);
    pthread_mutex_lock(&l->lv_mu);
    bool changed = leader_liveness_update(&l->liveness, leases, rss_clock_mono_ms(), MAX_GAP_MS, dead_after);
    /* Rule 13: the agent's silence says nothing about the members of its node (an absent agent fenced
     * nothing); the node counts as dead only once its kubelet is seen down too. Read only for nodes whose
     * agent is silent past the dead window, so a healthy cluster costs no extra requests. A Node we
     * cannot read (no RBAC, an error) stays unknown: its members count as possibly running. */
    int64_t now = rss_clock_mono_ms();
    char *batch[MAX_KUBELET_READS];
    size_t n = 0;
    for (const char *node;
         n < MAX_KUBELET_READS &&
         (node = leader_liveness_suspect(&l->liveness, n, now, dead_after, KUBELET_RECHECK_MS));)
        batch[n++] = rss_xstrdup(node); /* copies: the Node GETs below are made without the lock */
    pthread_mutex_unlock(&l->lv_mu);
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *node = batch[i];
        _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", node, NULL);
        _cleanup_json_ cJSON *obj = NULL;
        enum leader_kubelet k = LEADER_KUBELET_UNKNOWN;
        const char *boot = NULL;
        if (rss_kube_get(l->kube, path, &obj, &err) == 0) {
            k = leader_node_kubelet(obj);
            boot = leader_node_boot_id(obj);
        } else if (rss_error_code(err) == RSS_E_NOT_FOUND) {
            k = LEADER_KUBELET_DOWN; /* the Node was deleted: no kubelet runs it */
            rss_error_release(&err);
        } else {
            rss_log_error(RSS_LOG_WARN, &err,
                          "node %s: its rssd is silent and its kubelet's view cannot be read; its members "
                          "count as possibly running",
                          node);
        }
        pthread_mutex_lock(&l->lv_mu);
        changed |= leader_liveness_kubelet(&l->liveness, node, k, boot, rss_clock_mono_ms(), dead_after);
        pthread_mutex_unlock(&l->lv_mu);
    }
    return changed;
}

int rss_leader_epoch_floor(void *scope, int64_t *floor, rss_error_t *err)
{
    const struct rss_leader_scope *sc = scope;
    _cleanup_json_ cJSON *list = NULL;
    if (rss_namespaces_list(sc->kube, sc->namespaces, RSS_CRD_GROUP_VERSION, RSS_CRD_PLURAL, NULL, &list,
                            err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "reading the epoch floor from the RSS status");
        rss_error_release(err); /* no CRD yet: no RSS, no floor */
    }
    *floor = 0;
    const cJSON *cr;
    cJSON_ArrayForEach(cr, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *e =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "status"), "epoch");
        if (!cJSON_IsNumber(e) || e->valuedouble <= (double)*floor)
            continue;
        /* Epochs are leaseTransitions (int32): a floor the Lease cannot go above was never written by a
         * leader, it is forged or corrupt. Taken as a floor it would make every acquisition fail, for
         * good; no pod holds such an epoch either (desired epochs above int32 are invalid). */
        if (!leader_epoch_valid(e->valuedouble)) {
            rss_log_warn("epoch floor: status.epoch %.0f of RSS %s/%s is not an epoch any Lease can carry; "
                         "ignored (the next leader overwrites it)",
                         e->valuedouble, md_str(cr, "namespace") ? md_str(cr, "namespace") : "?",
                         md_str(cr, "name") ? md_str(cr, "name") : "?");
            continue;
        }
        *floor = (int64_t)e->valuedouble;
    }
    return 0;
}

static void wait_ms(struct rss_leader *l, int64_t ms)
{
    struct timespec ts = rss_clock_mono_after(ms);
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

int rss_leader_run(struct rss_leader *l, int64_t epoch, const atomic_bool *stop, rss_error_t *err)
{
    if (epoch < 0 || !stop)
        return rss_error_make(err, RSS_E_INVALID, 0, "leader: bad epoch %lld or no stop flag",
                              (long long)epoch);
    int64_t dead_after = l->fence_ms + LEADER_FENCE_MARGIN;
    struct term t = {.l = l,
                     .ctx = {.rss_written = rss_written,
                             .sts_written = sts_written,
                             .sts_cached = sts_cached,
                             .node_cordoned = node_cordoned,
                             .caches_ud = l,
                             .kube = l->kube,
                             .election = l->election,
                             .epoch = epoch,
                             .identity = rss_election_identity(l->election),
                             .events = &l->events,
                             .liveness = &l->liveness,
                             .liveness_mu = &l->lv_mu,
                             .keys_mu = &l->keys_mu,
                             .dead_after_ms = dead_after,
                             .services = &l->services,
                             .budgets = &l->budgets,
                             .rssd_ns = l->ns,
                             .ignored = &l->ignored,
                             .floors = &l->floors,
                             .stop = stop}};
    const struct leader_ctx *ctx = &t.ctx;
    rss_log_info("leading with epoch %lld: fencing every member before deciding (%zu reconcile workers)",
                 (long long)epoch, l->workers);

    /* No worker runs between terms: the term's state is reset without its locks' contention. */
    leader_keyset_clear(&l->services); /* a new term checks every Service and budget again */
    leader_keyset_clear(&l->budgets);
    leader_keyset_clear(&l->ignored);
    leader_keyset_clear(&l->floors); /* a new epoch: every floor is raised again */
    pthread_mutex_lock(&l->mu);
    clear_dirty(l);
    l->all_dirty = true; /* rule 9: every RSS is fenced first, so every RSS is planned at once */
    pthread_mutex_unlock(&l->mu);
    atomic_store(&l->wstop, false);

    /* A new term knows nothing of any node: every node's clock starts now (client-go's rule). */
    leader_liveness_start(&l->liveness, rss_clock_mono_ms());
    l->liveness.own_fence_ms = l->fence_ms;
    /* RSS objects, member pods and StatefulSets: cluster-wide, or one watch each per managed
     * namespace; then the member records in rssd's namespace. */
    size_t n_scopes = l->managed.n ? l->managed.n : 1, n_w = 3 * n_scopes + 3;
    struct leader_cache *leases = leader_cache_new();
    l->cordoned = leader_cache_new();
    l->rss_caches = rss_xcalloc(n_scopes, sizeof(*l->rss_caches));
    l->sts_caches = rss_xcalloc(n_scopes, sizeof(*l->sts_caches));
    l->n_rss_caches = n_scopes;
    struct watch_arg *w = rss_xcalloc(n_w, sizeof(*w));
    for (size_t k = 0; k < n_scopes; k++) {
        const char *sns = l->managed.n ? l->managed.names[k] : NULL;
        w[3 * k] =
            (struct watch_arg){.l = l,
                               .path = rss_kube_path(RSS_CRD_GROUP_VERSION, sns, RSS_CRD_PLURAL, NULL, NULL),
                               .fn = on_rss,
                               .cache = l->rss_caches[k] = leader_cache_new()};
        w[3 * k + 1] = (struct watch_arg){.l = l,
                                          .path = rss_kube_path("v1", sns, "pods", NULL, NULL),
                                          .label_selector = RSS_LABEL_NAME,
                                          .fn = on_member};
        w[3 * k + 2] = (struct watch_arg){.l = l,
                                          .path = rss_kube_path("apps/v1", sns, "statefulsets", NULL, NULL),
                                          .label_selector = RSS_LABEL_NAME,
                                          .fn = on_member,
                                          .cache = l->sts_caches[k] = leader_cache_new()};
    }
    w[n_w - 3] = (struct watch_arg){.l = l,
                                    .path = rss_kube_path("v1", NULL, "nodes", NULL, NULL),
                                    .field_selector = "spec.unschedulable=true",
                                    .optional = true,
                                    .fn = on_node,
                                    .cache = l->cordoned};
    w[n_w - 2] = (struct watch_arg){.l = l,
                                    .path = rss_kube_path("v1", l->ns, "configmaps", NULL, NULL),
                                    .label_selector = RSS_LABEL_RECORD_MEMBER,
                                    .fn = on_record};
    /* The heartbeat Leases: a watch instead of a LIST every second, which grew with the nodes. */
    w[n_w - 1] =
        (struct watch_arg){.l = l,
                           .path = rss_kube_path("coordination.k8s.io/v1", l->ns, "leases", NULL, NULL),
                           .fn = leader_cache_feed,
                           .ud = leases};
    for (size_t i = 0; i < n_w; i++) {
        int e = pthread_create(&w[i].thread, NULL, watch_main, &w[i]);
        if (e)
            rss_log_warn("leader: cannot start a watch thread (%s): periodic passes only", strerror(e));
        w[i].started = e == 0;
    }
    /* Workers per term: they hold this term's epoch and caches, and the term ends only once they have
     * all returned, so no write of theirs outlives it; a new term starts from empty queues. */
    struct leader_queue q;
    leader_queue_init(&q);
    struct leader_pool pool;
    if (!leader_pool_start(&pool, l->workers, &q, reconcile_work, &t))
        rss_log_warn("leader: no reconcile worker started: the loop reconciles itself");

    int64_t next_full = 0, next_poll = 0; /* monotonic ms */
    while (!atomic_load(stop) && !atomic_load(&t.lost)) {
        if (!leader_still_leading(ctx))
            break;
        int64_t now = rss_clock_mono_ms();
        if (now >= next_poll) {
            bool changed = poll_liveness(l, leases, dead_after);
            next_poll = rss_clock_mono_ms() + POLL_MS;
            /* A per-RSS dead window (stop timeout included) ended: plan then, not at the next full pass. */
            pthread_mutex_lock(&l->lv_mu);
            if (l->liveness.replan_at_ms && rss_clock_mono_ms() >= l->liveness.replan_at_ms) {
                l->liveness.replan_at_ms = 0;
                changed = true;
            }
            pthread_mutex_unlock(&l->lv_mu);
            if (changed) {
                pthread_mutex_lock(&l->mu);
                l->all_dirty = true;
                pthread_mutex_unlock(&l->mu);
            }
        }
        if (atomic_exchange(&t.retry, false) && next_full > rss_clock_mono_ms() + RETRY_MS)
            next_full = rss_clock_mono_ms() + RETRY_MS;
        pthread_mutex_lock(&l->mu);
        now = rss_clock_mono_ms();
        if (!l->all_dirty && !l->n_dirty && !atomic_load(&t.lost)) {
            int64_t wake = WAKE_MS;
            if (next_full - now < wake)
                wake = next_full - now;
            if (next_poll - now < wake)
                wake = next_poll - now;
            if (wake > 0)
                wait_ms(l, wake);
            now = rss_clock_mono_ms();
        }
        bool all = l->all_dirty || now >= next_full;
        char **keys = l->dirty;
        size_t n_keys = l->n_dirty;
        l->dirty = NULL;
        l->n_dirty = l->cap_dirty = 0;
        l->all_dirty = false;
        pthread_mutex_unlock(&l->mu);

        int outcome = LEADER_DONE;
        bool listed = false;
        if (all) {
            int64_t iv = MAX_FULL_MS;
            outcome = full_pass(&t, &q, &iv, &listed);
            next_full = rss_clock_mono_ms() + (iv < MIN_FULL_MS ? MIN_FULL_MS : iv);
        }
        for (size_t i = 0; i < n_keys; i++) {
            if (!listed) /* a full pass that listed queued every RSS already */
                leader_queue_add(&q, keys[i], NULL, false);
            free(keys[i]);
        }
        free(keys);
        if (!pool.n) {
            struct leader_work wk;
            while (!atomic_load(&t.lost) && leader_queue_take(&q, &wk, false)) {
                reconcile_work(&t, &wk);
                leader_queue_done(&q, &wk);
            }
        }
        if (outcome == LEADER_LOST)
            break;
    }

    /* The term ends: no worker starts another reconcile, and this returns only after each one's
     * current reconcile is over (it stops at its next write check when the Lease is lost). */
    leader_pool_join(&pool);
    leader_queue_clear(&q);
    atomic_store(&l->wstop, true);
    for (size_t i = 0; i < n_w; i++) {
        if (w[i].started)
            pthread_join(w[i].thread, NULL);
        free(w[i].path);
    }
    free(w);
    leader_cache_free(leases);
    for (size_t i = 0; i < l->n_rss_caches; i++) {
        leader_cache_free(l->rss_caches[i]);
        leader_cache_free(l->sts_caches[i]);
    }
    leader_cache_free(l->cordoned);
    l->cordoned = NULL;
    free(l->rss_caches);
    free(l->sts_caches);
    l->rss_caches = l->sts_caches = NULL;
    l->n_rss_caches = 0;
    rss_log_info("stopped leading epoch %lld (%s)", (long long)epoch,
                 atomic_load(stop) ? "stop requested" : "the Lease is not ours any more");
    return 0;
}
