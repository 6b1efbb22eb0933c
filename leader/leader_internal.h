/* leader_internal.h -- functions shared by the leader_*.c files (not public API; unit tests use it). */
#ifndef RSS_LEADER_INTERNAL_H
#define RSS_LEADER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/error.h"
#include "rss/leader.h"
#include "rss/planner.h"
#include "rss/protocol.h"
#include "rss/spec.h"

#define LEADER_FENCE_MARGIN 5000 /* ms added to the fence timeout before a silent node is dead */

/* --- leader_objects.c: pure builders of the objects the leader owns --- */

/* The controller ownerReference to the RSS (needs metadata.uid). */
cJSON *leader_owner_ref(const struct rss_spec *spec);

/* The headless Service <name>-svc. `cr` is the raw RSS (for spec.servicePorts); may be NULL. */
cJSON *leader_build_service(const struct rss_spec *spec, const cJSON *cr);

/* The StatefulSet rss-<name> with `replicas`. `cr` is the raw RSS (for optional pod-level fields:
 * nodeSelector, tolerations, serviceAccountName, imagePullSecrets, securityContext); may be NULL.
 * metadata.annotations[RSS_ANNOTATION_SPEC_HASH] is a hash of everything built from the spec, so a
 * changed spec can be detected without comparing against server-defaulted fields. */
cJSON *leader_build_statefulset(const struct rss_spec *spec, const cJSON *cr, int replicas);

/* --- leader_snapshot.c: one LIST of pods + heartbeat Leases -> planner input --- */

struct leader_snapshot {
    struct rss_member_input *members; /* borrow strings from the pod list; decoded annotations owned */
    size_t n_members;
    char **errors; /* why pods were skipped (not a member name, duplicate), for logs */
    size_t n_errors;
};

/* Fills *snap from a pod List (items[]) and a Lease List (items[]; may be NULL), at wall clock
 * now_ms. Pods whose name is not rss-<name>-<ordinal> are skipped (noted in errors). Strings point
 * into `pods`, which must outlive the snapshot. Never fails. */
void leader_snapshot_build(const struct rss_spec *spec, const cJSON *pods, const cJSON *leases,
                           int64_t now_ms, struct leader_snapshot *snap);
void leader_snapshot_clear(struct leader_snapshot *snap);

/* The liveness of `node` from the heartbeat Leases: *alive when renewTime + leaseDurationSeconds is
 * after now_ms; *renew_ms = renewTime (0 when no Lease or no renewTime). */
void leader_node_liveness(const cJSON *leases, const char *node, int64_t now_ms, bool *alive,
                          int64_t *renew_ms);

/* --- leader_events.c: Event building and per-RSS dedupe --- */

struct leader_event_key {
    const char *ns, *rss_uid, *type, *reason, *message, *pod;
};

struct leader_event_entry {
    char *key;  /* the joined key */
    char *name; /* the Event object's name */
    int count;
    int64_t first_ms, last_ms;
    uint64_t used; /* LRU tick */
};

struct leader_events {
    pthread_mutex_t lock;
    struct leader_event_entry *v;
    size_t n, cap;
    uint64_t tick;
};

void leader_events_init(struct leader_events *ev, size_t cap);
void leader_events_clear(struct leader_events *ev);

/* Records one occurrence. Returns 0 when it is new (*name = a fresh Event name "<rss>.<hex>", the
 * caller POSTs it), or the repeat count (>= 2) when an identical event exists (*name = its name, the
 * caller PATCHes count and lastTimestamp). *first_ms gets the first occurrence. Evicts the least
 * recently used entry when full. *name is a new string the caller frees. */
int leader_events_note(struct leader_events *ev, const struct leader_event_key *key, const char *rss_name,
                       int64_t now_ms, char **name, int64_t *first_ms);

/* Forgets an entry (after its Event vanished: a PATCH got 404). */
void leader_events_forget(struct leader_events *ev, const struct leader_event_key *key);

/* The core/v1 Event object for a new occurrence; involvedObject = the RSS. */
cJSON *leader_build_event(const struct rss_spec *spec, const char *name, const char *type, const char *reason,
                          const char *message, const char *pod, const char *instance, int64_t now_ms);

/* --- leader_apply.c --- */

struct leader_ctx {
    struct rss_kube *kube;
    struct rss_election *election;
    int64_t epoch;
    const char *identity;
    struct leader_events *events;
};

enum leader_outcome {
    LEADER_DONE = 0, /* the plan was applied */
    LEADER_REPLAN,   /* fencing applied, or a CAS lost: take a fresh LIST and plan again */
    LEADER_DEPOSED,  /* a newer leader exists: stop leading */
    LEADER_LOST,     /* rss_election_leading() turned false or changed epoch: nothing more written */
};

/* True while the election says we lead this epoch (the check before every write). */
bool leader_still_leading(const struct leader_ctx *ctx);

/* Applies `plan` for the RSS (`cr` its raw object) in order: pod patches, StatefulSet create or
 * replicas, pod deletes, Events, /status. Returns an outcome >= 0, or negative on an API error
 * (the caller retries later). */
int leader_apply(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                 const struct rss_plan *plan, rss_error_t *err);

/* The merge patch of one pod for a plan patch (CAS on its resourceVersion). */
cJSON *leader_pod_patch(const struct rss_plan_patch *p);

/* The /status merge patch: the planner's status, plus `primaries` (the count of members.primary,
 * for the printer column), plus null for every top-level key of prev that the new status lacks
 * (a merge patch would keep them otherwise). NULL when nothing would change. */
cJSON *leader_status_patch(const cJSON *status, const cJSON *prev);

/* --- leader_reconcile.c: one RSS, from GET to applied plan --- */

/* Reconciles one RSS (raw object `cr`), given the heartbeat Lease list. Returns an outcome (DONE,
 * DEPOSED, LOST) or negative on API errors. */
int leader_reconcile(const struct leader_ctx *ctx, const cJSON *cr, const cJSON *leases,
                     int64_t dead_after_ms, rss_error_t *err);

int64_t rss_clock_wall_ms(void);

#endif
