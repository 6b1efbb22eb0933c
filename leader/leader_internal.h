/* leader_internal.h -- functions shared by the leader_*.c files (not public API; unit tests use it). */
#ifndef RSS_LEADER_INTERNAL_H
#define RSS_LEADER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/election.h"
#include "rss/error.h"
#include "rss/leader.h"
#include "rss/planner.h"
#include "rss/protocol.h"
#include "rss/spec.h"

#define LEADER_FENCE_MARGIN 5000 /* ms added to the fence timeout before a silent node is dead */
/* ms allowed, past the `stop` hook's timeout, for a node's self-fence to be over: the runtime returning
 * the timed-out ExecSync, the agent's CRI StopContainer with timeout 0 (SIGKILL; containerd answers once
 * the container exited, well under a second) and the hook timeout's rounding up to whole seconds. */
#define LEADER_KILL_MS 5000

/* --- leader_objects.c: pure builders of the objects the leader owns --- */

/* The controller ownerReference to the RSS (needs metadata.uid). */
cJSON *leader_owner_ref(const struct rss_spec *spec);

/* Own before touching: an object of a name rssd would use (StatefulSet, Service, PodDisruptionBudget) but
 * without a controller ownerReference to this RSS (by uid) belongs to someone else. Taking it over would
 * hand its pods and volumes to whoever can create an RSS. */
bool leader_owned_by(const cJSON *obj, const struct rss_spec *spec);

/* The headless Service <name>-svc. `cr` is the raw RSS (for spec.servicePorts); may be NULL. */
cJSON *leader_build_service(const struct rss_spec *spec, const cJSON *cr);

/* The StatefulSet rss-<name> with `replicas`. `cr` is the raw RSS (for optional pod-level fields:
 * nodeSelector, tolerations, serviceAccountName, imagePullSecrets, securityContext); may be NULL.
 * metadata.annotations[RSS_ANNOTATION_SPEC_HASH] is a hash of everything built from the spec, so a
 * changed spec can be detected without comparing against server-defaulted fields. */
cJSON *leader_build_statefulset(const struct rss_spec *spec, const cJSON *cr, int replicas);

/* The label the StatefulSet controller puts on each of its pods, with the pod's name. */
#define RSS_LABEL_POD_NAME           "statefulset.kubernetes.io/pod-name"
#define LEADER_PRIMARY_BUDGET_SUFFIX "-primary"

/* The PodDisruptionBudget of the RSS's member pods (named like the StatefulSet): at most
 * max_unavailable members evicted at a time (leader_budget.c says when it is 0); primary non-NULL: all
 * but that pod, which has a budget of its own (leader_build_primary_budget). */
cJSON *leader_build_budget(const struct rss_spec *spec, int max_unavailable, const char *primary);

/* The single primary's own budget (leader_primary_budget_name()): that pod never evicted, so that a drain
 * waits for its handover. */
cJSON *leader_build_primary_budget(const struct rss_spec *spec, const char *primary);

/* The primary's budget's name: the StatefulSet's + "-primary" (owned by the caller). */
char *leader_primary_budget_name(const struct rss_spec *spec);

/* --- leader_liveness.c: node liveness as this leader observed it (monotonic ms throughout) --- */

#define LEADER_MAX_NODES 4096

enum leader_kubelet {
    LEADER_KUBELET_UNKNOWN = 0, /* not read (yet), or unreadable: counts as possibly alive */
    LEADER_KUBELET_READY,       /* Ready=True: the kubelet posts status, the node runs */
    LEADER_KUBELET_DOWN,        /* Ready False/Unknown, or no Node object any more */
};

struct leader_node_obs {
    char *node;
    char *renew;        /* renewTime as last seen: only whether it changes matters */
    int64_t changed_ms; /* when this leader saw it change (or first saw it) */
    int64_t duration_ms;
    int64_t fence_ms; /* the fence timeout the node's agent published (0: none, an older rssd) */
    int64_t stop_ms;  /* the longest fence `stop` timeout it published (0: none; leader_liveness.c) */
    /* The peer annotation as last parsed, and from it the incarnation of the agent process that renews
     * the Lease and when that process started (its node's wall clock; "" and 0: not published). */
    char *peer;
    char agent[33];
    int64_t agent_since_ms;
    /* The boot that agent runs in (its peer annotation's "boot"; "": not published), and the Node's bootID
     * as read with the kubelet's view after the heartbeat went silent ("": not read since it last changed).
     * Different: the node rebooted after that agent started, so it and its members' containers are gone. */
    char agent_boot[40];
    char node_boot[40];
    bool was_alive, was_dead; /* the verdict at the last update */
    /* The kubelet's view of the node (its Node's Ready condition), read by this leader after the
     * heartbeat went silent past the dead window: an agent that is absent (crashed, evicted, hung) has
     * fenced nothing, so only a node whose kubelet is down too is dead (rule 13). */
    enum leader_kubelet kubelet;
    int64_t kubelet_ms; /* when it was read (0: not since the heartbeat last changed) */
};

/* A member pod's last `observed` report as this leader saw it (by pod uid), to tell a new report. */
struct leader_report_obs {
    char *uid;
    uint64_t hash;   /* FNV-1a of the record's `observed` value */
    int64_t seen_ms; /* the last LIST that had this pod: entries of deleted pods age out */
};

#define LEADER_MAX_REPORTS 65536

struct leader_liveness {
    struct leader_node_obs *v;
    size_t n, cap;
    struct leader_report_obs *r;
    size_t n_r, cap_r;
    int64_t clock_start_ms; /* the term's start, or the end of the last gap in this leader's view */
    int64_t last_ok_ms;     /* the last successful heartbeat LIST; 0 = none in this term */
    bool gap;               /* a LIST failed since */
    /* This leader's own --fence-timeout: a node that published a longer one gets the difference added
     * to its dead window (set after leader_liveness_start; 0: published values are ignored). */
    int64_t own_fence_ms;
    /* Monotonic ms when a silent node's dead verdict for some RSS starts (the per-RSS windows end
     * apart from the one leader_liveness_update reports), for a new pass then; 0: none. */
    int64_t replan_at_ms;
};

void leader_liveness_init(struct leader_liveness *lv);
void leader_liveness_clear(struct leader_liveness *lv);
/* A new term: nothing observed yet, every clock starts now. */
void leader_liveness_start(struct leader_liveness *lv, int64_t now_ms);
/* A heartbeat LIST failed: the next successful one restarts every node's clock. */
void leader_liveness_failed(struct leader_liveness *lv);
/* A successful LIST of the Leases in rssd's namespace at now_ms. A gap since the previous one longer
 * than max_gap_ms (or a failure, or none yet) restarts every clock. Returns true when some node's
 * alive/dead verdict changed since the previous update. */
bool leader_liveness_update(struct leader_liveness *lv, const cJSON *leases, int64_t now_ms,
                            int64_t max_gap_ms, int64_t dead_after_ms);
/* A LIST of member pods and one of their records at now_ms: a pod whose `observed` report (in its
 * record, for its uid) changed since this leader last saw it
 * was written by its node's agent just now, which is a sign of life as good as a heartbeat change (the
 * node's clock restarts). Without it, a node back from a partition whose agent reported before its next
 * heartbeat still looked dead, and its member's fresh report was ignored (model trace F2). A pod seen
 * for the first time proves nothing: its report may be old. */
void leader_liveness_reports(struct leader_liveness *lv, const cJSON *pods, const cJSON *records,
                             int64_t now_ms);
/* The verdict for `node` at now_ms: alive = its heartbeat changed within its lease duration as
 * observed; dead = unchanged for dead_after_ms as observed AND its kubelet was read down since
 * (leader_liveness_kubelet); *silent_ms = how long (0 when alive). A node never seen is neither alive
 * nor dead; so is a node whose agent is silent past the dead window while its kubelet is Ready or
 * unread: an absent agent, not a dead node (rule 13). */
/* Whether a report on `node` by agent incarnation `agent`, written at `time_ms` (its node's wall clock),
 * comes from a process that the one now renewing the node's heartbeat replaced: another incarnation, and
 * written before the current one started, or less than RSS_CLOCK_SKEW_MAX_MS after (both times from the
 * node's clock, but across a reboot it may have been set differently). Such a report is from before a
 * reboot or an rssd restart, and says nothing about the container now (it may still look like the pod's,
 * until the kubelet updates the pod). False when anything is unknown, as from an older rssd. */
bool leader_liveness_superseded(const struct leader_liveness *lv, const char *node, const char *agent,
                                int64_t time_ms);
void leader_liveness_node(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                          int64_t dead_after_ms, bool *alive, bool *dead, int64_t *silent_ms);
/* When (monotonic ms) a silent, not yet dead `node` becomes dead under dead_after_ms if it stays
 * silent; 0 when it is alive, already dead or unknown. leader_liveness_node, _dead_at and _agent_absent take
 * a member's window (leader_dead_window: it holds its RSS's stop timeout), and lengthen it to the node's
 * fence timeout + margin + the stop timeout its agent published + LEADER_KILL_MS when that is longer; the
 * other functions take the node's fence timeout + margin alone. */
int64_t leader_liveness_dead_at(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                                int64_t dead_after_ms);
/* The dead window of the members of one RSS: the node's fence timeout and margin (dead_after_ms), its
 * fence `stop` running to the spec's stop timeout, then the kill (LEADER_KILL_MS). */
int64_t leader_dead_window(int64_t dead_after_ms, const struct rss_spec *spec);
/* True when `node`'s agent has been silent for dead_after_ms but the node does not count as dead
 * because its kubelet was not read down: the planner says "agent absent" rather than "node silent". */
bool leader_liveness_agent_absent(const struct leader_liveness *lv, const char *node, int64_t now_ms,
                                  int64_t dead_after_ms);
/* The nodes whose kubelet the leader should read now (the i-th such node, NULL past the last): silent
 * past the dead window and not read down within recheck_ms. */
const char *leader_liveness_suspect(const struct leader_liveness *lv, size_t i, int64_t now_ms,
                                    int64_t dead_after_ms, int64_t recheck_ms);
/* Records the kubelet's view of `node` read at now_ms. Returns true when the node's dead verdict
 * changed (plan again). */
bool leader_liveness_kubelet(struct leader_liveness *lv, const char *node, enum leader_kubelet k,
                             const char *boot_id, int64_t now_ms, int64_t dead_after_ms);

/* The kubelet's view in a Node object: its Ready condition (the kubelet posts True; the node lifecycle
 * controller sets Unknown once the kubelet stops posting, on its own clock). */
enum leader_kubelet leader_node_kubelet(const cJSON *node);
/* The Node's status.nodeInfo.bootID, or NULL. */
const char *leader_node_boot_id(const cJSON *node);

struct leader_ctx;

/* --- leader_records.c: the member records (rss/record.h) as the leader reads and collects them --- */

/* The record in a ConfigMap List (items[]) whose member label is `pod`, or NULL. */
const cJSON *leader_record_find(const cJSON *records, const char *pod);
/* Deletes one member record (a ConfigMap of the list in rssd's namespace NS) with
 * its uid and resourceVersion as preconditions, so a record written meanwhile waits for the next round.
 * WHY says whose record it was and why it goes, for the log. Best effort: a failure is logged (a
 * conflict or a record already gone silently). */
void leader_record_drop(struct rss_kube *kube, const char *ns, const cJSON *cm, const char *why);
/* True when a record carries rule 14's hold (data.leftOut) or rule 2's recovery pin (data.recoveryPin): it is
 * never dropped with its pod or RSS. */
bool leader_record_holds(const cJSON *cm);
/* leader_records_gc.c. A full pass saw `rsss`, every RSS of the managed namespaces: deletes the records of
 * RSSs not in it, each only at the version listed. The per-RSS reconcile drops those of gone pods; this
 * catches a deleted RSS. A held record (rule 14) and one of a namespace rssd does not manage stay. Best
 * effort: errors are logged. Returns DONE or LOST. */
int leader_records_drop_deleted(const struct leader_ctx *ctx, const struct rss_namespaces *managed,
                                const cJSON *rsss);

/* --- leader_snapshot.c: one LIST of pods + the liveness view -> planner input --- */

struct leader_snapshot {
    struct rss_member_input *members; /* borrow strings from the lists; decoded records owned */
    size_t n_members;
    char **errors; /* why pods were skipped (not a member name, duplicate), for logs */
    size_t n_errors, cap_errors;
    const cJSON **ignored; /* member pods that carry a desired/observed annotation (ignored) */
    size_t n_ignored, cap_ignored;
    int64_t replan_at_ms; /* the earliest leader_liveness_dead_at() of a member's node; 0: none */
};

/* Fills *snap from a pod List (items[]), the List of the RSS's member records (rss/record.h; NULL =
 * none) and the liveness view at monotonic now_ms. Pods whose name is not rss-<name>-<ordinal> are
 * skipped (noted in errors). desired/observed come from the pod's record, only when written for the
 * pod's uid; its resourceVersion is the CAS precondition. The pods' own annotations are never read as
 * protocol (they are listed in `ignored`). Strings point into the lists, which must outlive the
 * snapshot. Never fails. */
void leader_snapshot_build(const struct rss_spec *spec, const cJSON *pods, const cJSON *records,
                           const struct leader_liveness *lv, int64_t now_ms, int64_t dead_after_ms,
                           struct leader_snapshot *snap);
void leader_snapshot_clear(struct leader_snapshot *snap);

/* --- leader_events.c: Event building and per-RSS dedupe --- */

struct leader_event_key {
    const char *ns, *rss_uid, *type, *reason, *message, *pod;
};

struct leader_event_entry {
    char *key;     /* the group: namespace, RSS uid, member, type, reason */
    char *name;    /* the Event object's name */
    char *message; /* its current message */
    int count;
    int64_t first_ms, last_ms, created_ms;
    uint64_t used; /* LRU tick */
};

struct leader_events {
    pthread_mutex_t lock;
    struct leader_event_entry *v;
    size_t n, cap;
    uint64_t tick;
};

/* Messages of one group that change within this long of its Event's creation update that Event
 * rather than create another (a series of waits while an RSS starts up, a flapping member). */
#define LEADER_EVENT_FOLD_MS 10000

void leader_events_init(struct leader_events *ev, size_t cap);
void leader_events_clear(struct leader_events *ev);

/* Records one occurrence, like client-go's recorder correlates them: an identical event (same group,
 * same message) is a repeat of the group's Event; a different message within LEADER_EVENT_FOLD_MS of
 * that Event's creation is folded into it (its message becomes the new one); anything else is a new
 * Event. Returns 0 when the caller must POST a new Event (*name = a fresh name "<rss>.<hex>"), or the
 * count (>= 2) when it must PATCH the Event *name with that count, lastTimestamp and the message.
 * *first_ms gets the group's first occurrence. Evicts the least recently used group when full. *name is
 * a new string the caller frees. */
int leader_events_note(struct leader_events *ev, const struct leader_event_key *key, const char *rss_name,
                       int64_t now_ms, char **name, int64_t *first_ms);

/* Forgets an entry (after its Event vanished: a PATCH got 404). */
void leader_events_forget(struct leader_events *ev, const struct leader_event_key *key);

/* The core/v1 Event object for a new occurrence; involvedObject = the RSS. */
cJSON *leader_build_event(const struct rss_spec *spec, const char *name, const char *type, const char *reason,
                          const char *message, const char *pod, const char *instance, int64_t now_ms);

/* --- leader_apply.c --- */

/* election.c: when a candidate that did not acquire looks at the Lease again (monotonic ns): after the
 * retry period, or, when another holder's Lease is valid (held), at its expiry on our clock (expiry_ns)
 * but at least every half lease duration. */
int64_t election_candidate_wake(int64_t start_ns, long retry_ms, long lease_ms, bool held, int64_t expiry_ns);

/* --- leader_keyset.c --- */

/* A sorted set of strings (lookup O(log n)): the Services checked this term, as "ns/name/uid". */
struct leader_keyset {
    char **keys;
    size_t n, cap;
};
bool leader_keyset_has(const struct leader_keyset *s, const char *key);
void leader_keyset_add(struct leader_keyset *s, const char *key);           /* no-op when present */
void leader_keyset_del(struct leader_keyset *s, const char *key);           /* no-op when absent */
void leader_keyset_del_prefix(struct leader_keyset *s, const char *prefix); /* every key starting so */
void leader_keyset_clear(struct leader_keyset *s);

/* --- leader_workers.c: the reconcile workqueue and its workers --- */

/* One RSS to reconcile: its key "ns/name"; the object a full pass listed (NULL: read it from the RSS
 * cache, else GET); full: a full pass asked for it (every Service is checked again). */
struct leader_work {
    char *key;
    cJSON *obj;
    bool full;
};

/* client-go's workqueue: pending is the dirty set (one entry per key, oldest first), processing the keys
 * workers hold. A key is never handed to two workers at once; a key marked while it is processed stays
 * pending and is handed out again once its worker is done. All under mu. */
struct leader_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct leader_work *pending;
    size_t n_pending, cap_pending;
    char **processing;
    size_t n_processing, cap_processing;
    bool shutdown;
    unsigned long taken; /* keys handed out so far (tests) */
};

void leader_queue_init(struct leader_queue *q);
void leader_queue_clear(struct leader_queue *q); /* no worker may still use it */
/* Marks key dirty; obj (copied; may be NULL) replaces what a pending entry carried, full is or-ed. */
void leader_queue_add(struct leader_queue *q, const char *key, const cJSON *obj, bool full);
/* Hands out the oldest pending key no worker holds (moved to processing; *w is the caller's until
 * leader_queue_done). block: wait for one. Returns false after leader_queue_shutdown, or when nothing
 * is takeable and !block. */
bool leader_queue_take(struct leader_queue *q, struct leader_work *w, bool block);
/* The worker is done with w's key (frees *w): a mark that came meanwhile is takeable now. */
void leader_queue_done(struct leader_queue *q, struct leader_work *w);
/* No key is handed out any more (pending ones stay, for leader_queue_clear). */
void leader_queue_shutdown(struct leader_queue *q);
/* Nothing pending and nothing processing. */
bool leader_queue_idle(struct leader_queue *q);

typedef void (*leader_work_fn)(void *ud, struct leader_work *w);

struct leader_pool {
    pthread_t *threads;
    size_t n; /* started */
    struct leader_queue *q;
    leader_work_fn fn;
    void *ud;
};

/* Starts n workers that take from q and call fn(ud, work) until q shuts down. Returns how many
 * started (a failed pthread_create is logged). */
size_t leader_pool_start(struct leader_pool *pool, size_t n, struct leader_queue *q, leader_work_fn fn,
                         void *ud);
/* Shuts q down and returns once every worker has finished its current work. */
void leader_pool_join(struct leader_pool *pool);

/* A lock that may be absent (NULL: one thread, as in the unit tests). */
static inline void leader_lock(pthread_mutex_t *mu)
{
    if (mu)
        pthread_mutex_lock(mu);
}
static inline void leader_unlock(pthread_mutex_t *mu)
{
    if (mu)
        pthread_mutex_unlock(mu);
}

struct leader_ctx {
    struct rss_kube *kube;
    struct rss_election *election;
    int64_t epoch;
    const char *identity;
    struct leader_events *events;
    struct leader_liveness *liveness; /* under liveness_mu: the loop polls it, workers read it */
    pthread_mutex_t *liveness_mu;     /* NULL: one thread */
    pthread_mutex_t *keys_mu;         /* guards services, budgets, ignored, floors; NULL: one thread */
    int64_t dead_after_ms;            /* fence timeout + margin (leader_dead_window() adds the stop) */
    /* Services already checked this term: a reconcile woken by an event skips their GET (one per
     * event otherwise); a full pass (full) checks them all again. NULL: always check. */
    struct leader_keyset *services;
    /* PodDisruptionBudgets written or found right this term, as "ns/name/uid=maxUnavailable" (one per
     * RSS): a reconcile whose plan wants the same skips its GET; a full pass checks them all again.
     * NULL: always check. */
    struct leader_keyset *budgets;
    bool full;
    const char *rssd_ns; /* rssd's namespace: the member records live there */
    /* Pod incarnations ("ns/pod/uid") already warned about for carrying the old protocol
     * annotations this term (IgnoredAnnotation, once each). NULL: warn every time. */
    struct leader_keyset *ignored;
    /* RSSs ("ns/name/uid") whose epoch floor this term raised (leader_apply.c raise_epoch_floor). NULL:
     * none remembered, the floor is raised (or found taken) at every plan that acts. */
    struct leader_keyset *floors;
    /* Called with the RSS object a write of ours returned (a status write, the floor), so the RSS cache
     * the next reconcile reads from holds at least our own last write. NULL: none. */
    void (*rss_written)(void *ud, const cJSON *obj);
    /* The StatefulSets as the leader's watch and its own writes last saw them: sts_cached gives a copy of
     * ns/name, NULL when the cache cannot say (not listed yet, absent: the caller GETs); sts_written takes
     * a StatefulSet a write of ours returned. NULL: none (every read a GET). */
    cJSON *(*sts_cached)(void *ud, const char *ns, const char *name);
    void (*sts_written)(void *ud, const cJSON *obj);
    /* Whether a node is cordoned, as the leader's watch of cordoned Nodes saw it: 1 or 0, -1 while that
     * is unknown (no List yet: no RBAC to list Nodes, an API error). NULL: unknown. */
    int (*node_cordoned)(void *ud, const char *node);
    void *caches_ud;         /* the four functions' ud */
    const atomic_bool *stop; /* the term's stop request (rss_leader_run's); NULL: none */
};

enum leader_outcome {
    LEADER_DONE = 0, /* the plan was applied */
    LEADER_REPLAN,   /* fencing applied, or a CAS lost: take a fresh LIST and plan again */
    LEADER_LOST,     /* rss_election_leading() turned false or changed epoch: nothing more written */
    LEADER_FOREIGN,  /* the RSS's StatefulSet or Service belongs to someone else: reported, nothing done */
};

/* An epoch floor (status.epoch) that a leader can have written: epochs are Lease leaseTransitions
 * (int32), and the next leader takes floor + 1, which must fit too. */
static inline bool leader_epoch_valid(double e)
{
    return e >= 0 && e < 2147483647.0;
}

/* Passes the RSS object a write returned on to ctx->rss_written (obj may be NULL). */
static inline void leader_rss_written(const struct leader_ctx *ctx, const cJSON *obj)
{
    if (ctx->rss_written && obj)
        ctx->rss_written(ctx->caches_ud, obj);
}

/* The same for a StatefulSet a write returned. */
static inline void leader_sts_written(const struct leader_ctx *ctx, const cJSON *obj)
{
    if (ctx->sts_written && obj)
        ctx->sts_written(ctx->caches_ud, obj);
}

/* The keysets of ctx (services, ignored, floors) under ctx->keys_mu: workers share them. */
static inline bool leader_ctx_key_has(const struct leader_ctx *ctx, const struct leader_keyset *s,
                                      const char *key)
{
    leader_lock(ctx->keys_mu);
    bool has = leader_keyset_has(s, key);
    leader_unlock(ctx->keys_mu);
    return has;
}
static inline void leader_ctx_key_add(const struct leader_ctx *ctx, struct leader_keyset *s, const char *key)
{
    leader_lock(ctx->keys_mu);
    leader_keyset_add(s, key);
    leader_unlock(ctx->keys_mu);
}

/* True while the election says we hold the Lease at this term's epoch and the term was not asked to
 * stop (the check before every write): a reconcile under way when rssd stops writes nothing more. */
static inline bool leader_still_leading(const struct leader_ctx *ctx)
{
    return (!ctx->stop || !atomic_load(ctx->stop)) && rss_election_holds(ctx->election, ctx->epoch);
}

/* --- leader_budget.c: the RSS's PodDisruptionBudgets --- */

/* The maxUnavailable the members' budget has in a phase (the plan's): 0 while Recovering, else 1. */
int leader_budget_max_unavailable(const char *phase);

/* The primary that gets a budget of its own, or NULL: the plan's primary (rss_plan.primary) when a
 * cordon makes it hand over (spec.failover PromoteStandby, one primary) and the leader can see cordons
 * (cordons_known: its watch of cordoned Nodes has listed them). */
const char *leader_budget_primary(const struct rss_spec *spec, const char *plan_primary, bool cordons_known);

/* Creates the budgets or brings them to the plan's phase and primary (a GET each only when this term has
 * not written or found them so: ctx->budgets): the primary's first, then the members', so that a moment
 * between the two writes can only refuse an eviction, never allow the primary's. Without a primary of its
 * own, the members' budget selects them all and the primary's (ours) is deleted. Best effort: a failure
 * is logged, never returned; a budget of the same name that is not ours is left alone. */
void leader_budget_sync(const struct leader_ctx *ctx, const struct rss_spec *spec, const char *phase,
                        const char *plan_primary);

/* Applies `plan` for the RSS (`cr` its raw object) in order: pod patches, StatefulSet create or
 * replicas, pod deletes, Events, /status. Returns an outcome >= 0, or negative on an API error
 * (the caller retries later). */
int leader_apply(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                 const struct rss_plan *plan, rss_error_t *err);

/* Writes the plan's Events only (new ones created, repeats counted, like client-go's recorder). The
 * spec needs only name, ns and uid. Returns DONE or LOST. */
int leader_apply_events(const struct leader_ctx *ctx, const struct rss_spec *spec,
                        const struct rss_plan *plan);

/* The merge patch of a member record for a plan patch: data.desired + data.desiredFor and/or data.leftOut
 * (null removes it), with the CAS on the record's resourceVersion when the plan saw one. NULL when the
 * patch sets neither. */
cJSON *leader_record_patch(const struct rss_plan_patch *p);
/* The merge patch of the pod for a plan patch: the active label only (no CAS: nothing trusts it).
 * NULL when the label does not change. */
cJSON *leader_pod_patch(const struct rss_plan_patch *p);

/* The /status write, a JSON patch (RFC 6902): test that status.epoch (the epoch floor) is `epoch`, then
 * replace the whole status with the planner's, plus `primaries` (the count of members.primary, for the
 * printer column) and `epoch` (the value tested). The API server refuses it (422) once another leader raised
 * the floor (rule 11). NULL when nothing but the epoch would change. */
cJSON *leader_status_patch(const cJSON *status, const cJSON *prev, int64_t epoch);

/* --- leader_replace.c: spec.nodeLossPolicy Replace (docs/node-loss.md) --- */

/* The Node carries node.kubernetes.io/out-of-service with effect NoExecute or NoSchedule. */
bool leader_node_out_of_service(const cJSON *node);
/* A PersistentVolume's locality: `local`/`hostPath`, or a required nodeAffinity on
 * kubernetes.io/hostname (or metadata.name), is node-local; any other PV is network; no spec: unknown. */
enum rss_volume_locality leader_pv_locality(const cJSON *pv);
/* Under nodeLossPolicy Replace, for each member on a node this leader judged dead: reads the Node (its
 * taint) and the member's claims and their PVs (its locality) into the snapshot. A read that fails leaves
 * the safe side: no taint, unknown locality. Does nothing under Wait. */
void leader_replace_facts(const struct leader_ctx *ctx, const struct rss_spec *spec,
                          struct leader_snapshot *snap);
/* Deletes the claims a plan delete names (before its pod); an absent claim is fine. Returns DONE, LOST,
 * or negative on an API error. */
int leader_delete_claims(const struct leader_ctx *ctx, const struct rss_spec *spec,
                         const struct rss_plan_delete *d, rss_error_t *err);

/* --- leader_reconcile.c: one RSS, from GET to applied plan --- */

/* Reconciles one RSS (raw object `cr`) with the liveness view in ctx. Returns an outcome (DONE,
 * LOST) or negative on API errors. */
int leader_reconcile(const struct leader_ctx *ctx, const cJSON *cr, rss_error_t *err);

#endif
