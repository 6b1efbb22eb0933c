/* controllers.h -- internal API of world-controllers: the test world's control plane stand-ins.
 *
 * world-controllers replaces kube-controller-manager and kube-scheduler in the test world:
 * a StatefulSet controller, a DaemonSet controller, a scheduler, a node-lifecycle controller and a
 * disruption controller (PodDisruptionBudget status).
 * Every controller is split in two halves:
 *   - a pure half (plan/build/status functions) that takes cJSON objects as the API returns them
 *     and decides what should happen; unit-tested without a server;
 *   - a sync half (ctl_*_sync) that runs the plan against the API server with rss_kube.
 * The sync functions work on a `struct ctl_snapshot`: deep copies of the watch-fed caches, taken
 * at the start of every reconcile pass, so a pass sees one consistent picture and may mutate it.
 *
 * Names are ctl_<file>_<verb>; nothing here is part of rssd's public API.
 */
#ifndef RSS_WORLD_CONTROLLERS_H
#define RSS_WORLD_CONTROLLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/error.h"
#include "rss/json.h" /* rss_json_path/str/obj/long */
#include "rss/kube.h"

/* ---------------------------------------------------------------- objutil.c: JSON helpers */

const char *ctl_name(const cJSON *obj);      /* metadata.name or "" */
const char *ctl_namespace(const cJSON *obj); /* metadata.namespace or "" */
const char *ctl_uid(const cJSON *obj);       /* metadata.uid or "" */
bool ctl_is_terminating(const cJSON *obj);   /* metadata.deletionTimestamp is set */

/* Whether `labels` (a JSON object of strings, may be NULL) satisfies a metav1.LabelSelector
 * (matchLabels + matchExpressions In/NotIn/Exists/DoesNotExist). A NULL selector matches nothing
 * and an empty one everything, as in Kubernetes. An unknown operator matches nothing. */
bool ctl_selector_matches(const cJSON *selector, const cJSON *labels);

/* Whether every key=value of a pod's spec.nodeSelector (may be NULL) is among `labels`. */
bool ctl_node_selector_matches(const cJSON *node_selector, const cJSON *labels);

/* The uid of the controller ownerReference of `obj` whose kind is `kind`, or NULL. */
const char *ctl_controller_uid(const cJSON *obj, const char *kind);

/* A new ownerReferences array naming `owner` (apiVersion/kind given) as controller. */
cJSON *ctl_owner_refs(const cJSON *owner, const char *api_version, const char *kind);

/* The condition of `type` in obj.status.conditions, or NULL. */
const cJSON *ctl_condition(const cJSON *obj, const char *type);
/* Its status string ("True", "False", "Unknown"), or NULL. */
const char *ctl_condition_status(const cJSON *obj, const char *type);

/* phase Running and condition Ready True, and not terminating: what StatefulSets wait for. */
bool ctl_pod_running_ready(const cJSON *pod);
/* phase Succeeded or Failed. */
bool ctl_pod_terminated(const cJSON *pod);

/* Parses the ordinal of a pod named "<parent>-<ordinal>": decimal digits without a leading zero
 * (except "0") and below 2^31. Returns the ordinal, or -1 if the name does not have that shape. */
long ctl_parse_ordinal(const char *parent, const char *pod_name);

/* Compares two resourceVersions: <0, 0, >0. Kubernetes calls them opaque, but both kubesim and
 * etcd use increasing integers; non-numeric values compare as "b is newer" (returns -1) so the
 * caller takes the newer-looking copy. */
int ctl_rv_compare(const char *a, const char *b);

/* A short stable hash of the JSON text of `obj` (FNV-1a 32, 8 hex digits + NUL). */
void ctl_json_hash(const cJSON *obj, char out[9]);

/* Collects the objects of `arr` into a new array of pointers (caller frees the array only). */
const cJSON **ctl_items(const cJSON *arr, size_t *n);

/* The object of `arr` with that namespace ("" for cluster-scoped) and name, or NULL. */
const cJSON *ctl_find(const cJSON *arr, const char *ns, const char *name);

/* Sorts a small array of objects in place by creationTimestamp, then namespace, then name. */
void ctl_sort_by_age(const cJSON **objs, size_t n);

/* ---------------------------------------------------------------- the per-pass view */

struct ctl_nodelc;

/* Deep copies of the caches (JSON arrays of objects); owned by the pass and freely mutated. */
struct ctl_snapshot {
    cJSON *statefulsets;
    cJSON *daemonsets;
    cJSON *pods;
    cJSON *nodes;
    cJSON *leases; /* namespace kube-node-lease only */
    cJSON *pvcs;
    cJSON *pdbs; /* policy/v1 poddisruptionbudgets */
    double now;  /* CLOCK_MONOTONIC seconds at the start of the pass */
    /* Node freshness, filled by the node-lifecycle controller before the others run. */
    struct ctl_nodelc *nodelc;
};

/* A write the sync halves made; the main loop feeds the answer back into its caches so the next
 * pass does not act on a stale copy. */
typedef void (*ctl_written_fn)(void *userdata, const char *resource, const cJSON *obj);

struct ctl_ctx {
    struct rss_kube *kube;
    ctl_written_fn written; /* may be NULL */
    void *userdata;
};

/* ---------------------------------------------------------------- cache.c */

struct ctl_cache;

/* An empty cache for `resource` (a plural, e.g. "pods"; kept for the owner's bookkeeping). */
struct ctl_cache *ctl_cache_new(const char *resource);
void ctl_cache_free(struct ctl_cache *c);
const char *ctl_cache_resource(const struct ctl_cache *c);
/* Applies one event of rss_kube_watch (thread-safe). SYNC_BEGIN..SYNC_END replace the contents. */
void ctl_cache_event(struct ctl_cache *c, enum rss_kube_event ev, const cJSON *obj);
/* Puts the server's answer to our own write (copied) if the watch has not passed it yet. */
void ctl_cache_put(struct ctl_cache *c, const cJSON *obj);
/* Whether a first list has completed. */
bool ctl_cache_synced(struct ctl_cache *c);
/* A deep copy of the contents: an array of objects (caller frees). */
cJSON *ctl_cache_snapshot(struct ctl_cache *c);

/* ---------------------------------------------------------------- nodelifecycle.c */

/* Tracks, per node, the local (monotonic) time at which its heartbeat was last seen to advance:
 * the Lease kube-node-lease/<node> renewTime or the Ready condition's lastHeartbeatTime. Like
 * kube-controller-manager it trusts its own clock, not the timestamps' values. */
struct ctl_nodelc *ctl_nodelc_new(double grace_seconds);
void ctl_nodelc_free(struct ctl_nodelc *lc);

/* Records the heartbeats in `nodes` and `leases` as observed at `now`. A node seen for the first
 * time counts as just renewed. Forgets nodes that are gone. */
void ctl_nodelc_observe(struct ctl_nodelc *lc, const cJSON *nodes, const cJSON *leases, double now);

/* Whether the node's heartbeat advanced within the grace period before `now`. Unknown: false. */
bool ctl_nodelc_fresh(const struct ctl_nodelc *lc, const char *node, double now);

/* Whether the node may get new pods: Ready condition True, heartbeat fresh, and, if
 * `check_unschedulable`, not spec.unschedulable. */
bool ctl_node_usable(const struct ctl_nodelc *lc, const cJSON *node, double now, bool check_unschedulable);

/* If `node` is stale at `now` and its Ready condition is not already Unknown, returns a copy of
 * it whose status.conditions are all Unknown (reason NodeStatusUnknown, lastTransitionTime
 * `wall_time`, heartbeat kept); otherwise NULL. */
cJSON *ctl_nodelc_mark_unknown(const struct ctl_nodelc *lc, const cJSON *node, double now,
                               const char *wall_time);

/* Marks stale nodes Ready=Unknown on the server (GET, modify, PUT status, retry on conflict). */
int ctl_nodelc_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err);

/* ---------------------------------------------------------------- statefulset.c */

struct ctl_sts_plan {
    long *create; /* ordinals to create, ascending */
    size_t ncreate;
    const cJSON **remove; /* pods (pointers into the input) to delete, in this order */
    size_t nremove;
};
void ctl_sts_plan_clear(struct ctl_sts_plan *plan);

/* The controller-revision-hash label value of the set's current template: "<sts>-<hash>". */
char *ctl_sts_revision(const cJSON *sts);

/* Decides, from the set and the pods it owns, which ordinals to create and which pods to delete
 * this pass: missing replicas, failed pods (deleted to be recreated), condemned pods of a
 * scale-down (highest ordinal first) and, for the RollingUpdate strategy, one outdated pod at a
 * time. OrderedReady creates ordinal N+1 only once N is Running and Ready, deletes one pod at a
 * time and waits for terminating pods; Parallel does everything at once. */
void ctl_sts_plan(const cJSON *sts, const cJSON **pods, size_t npods, struct ctl_sts_plan *plan);

/* The pod for `ordinal`: name <sts>-<ordinal>, the template's labels plus
 * statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and controller-revision-hash,
 * hostname and subdomain (spec.serviceName), one persistentVolumeClaim volume per
 * volumeClaimTemplate (claim <template>-<pod>), and a controller ownerReference. */
cJSON *ctl_sts_build_pod(const cJSON *sts, long ordinal);

/* The claims of pod `pod_name`: one per volumeClaimTemplate, named <template>-<pod>, labelled
 * with the set's matchLabels, without ownerReferences (retention policy Retain). Returns an array. */
cJSON *ctl_sts_build_pvcs(const cJSON *sts, const char *pod_name);

/* The status the set should have given its pods. */
cJSON *ctl_sts_status(const cJSON *sts, const cJSON **pods, size_t npods);

/* Whether the status fields ctl_sts_status writes differ from `sts`'s current status. */
bool ctl_status_differs(const cJSON *current_status, const cJSON *want);

/* Reconciles every StatefulSet, and deletes pods whose StatefulSet is gone. */
int ctl_sts_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err);

/* ---------------------------------------------------------------- daemonset.c */

struct ctl_ds_plan {
    const cJSON **create_on; /* nodes (pointers into the input) that need a pod */
    size_t ncreate;
    const cJSON **remove; /* pods to delete: node gone or no longer selected, or duplicates */
    size_t nremove;
};
void ctl_ds_plan_clear(struct ctl_ds_plan *plan);

/* usable[i] says whether nodes[i] may get a new pod (Ready and fresh). A pod is kept on a node
 * that exists and matches the template's nodeSelector even if it is not Ready, as DaemonSet pods
 * tolerate NotReady. */
void ctl_ds_plan(const cJSON *ds, const cJSON **nodes, const bool *usable, size_t nnodes, const cJSON **pods,
                 size_t npods, struct ctl_ds_plan *plan);

/* The pod for `node`: name <ds>-<node>, spec.nodeName set directly (the simplification: real
 * DaemonSets go through the scheduler with a node affinity), controller ownerReference. */
cJSON *ctl_ds_build_pod(const cJSON *ds, const char *node);

cJSON *ctl_ds_status(const cJSON *ds, const cJSON **nodes, size_t nnodes, const cJSON **pods, size_t npods);

int ctl_ds_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err);

/* ---------------------------------------------------------------- scheduler.c */

/* Whether the scheduler should place this pod: no nodeName, not terminating, not terminated,
 * schedulerName empty or default-scheduler. */
bool ctl_sched_wants(const cJSON *pod);

/* Picks a node for `pod` among nodes[] (usable[i]: Ready and fresh), given every pod `pods`
 * already bound (spec.nodeName set). Honours spec.nodeSelector and required pod anti-affinity
 * (any topologyKey; kubernetes.io/hostname falls back to the node name), both the pod's own
 * terms and those of pods already placed. Among the feasible nodes it takes the one with the
 * fewest pods, then the first by name. Returns the index, or -1 and *why = a message in
 * kube-scheduler's style ("0/3 nodes are available: ..."; caller frees). */
long ctl_sched_pick(const cJSON *pod, const cJSON **nodes, const bool *usable, size_t nnodes,
                    const cJSON **pods, size_t npods, char **why);

/* Binds pending pods to nodes, marks the others PodScheduled=False/Unschedulable. */
int ctl_sched_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err);

/* ---------------------------------------------------------------- disruption.c */

/* The status the disruption controller gives `pdb` at wall time `now` (seconds since the epoch;
 * `now_str` the same as RFC 3339), from every pod (`pods`, all namespaces) and StatefulSet:
 * expectedPods (the owning sets' spec.replicas for maxUnavailable or a percentage minAvailable,
 * the matching pods for an integer minAvailable), currentHealthy (Ready, not being deleted, not in
 * disruptedPods), desiredHealthy, disruptionsAllowed = max(0, currentHealthy - desiredHealthy)
 * (0 without expected pods), disruptedPods without entries whose pod is gone, being deleted or
 * older than 2 minutes, observedGeneration and the DisruptionAllowed condition (SufficientPods /
 * InsufficientPods). A pod whose controller is not a known StatefulSet makes it the fail-safe
 * status: disruptionsAllowed 0, condition SyncFailed, observedGeneration kept. Caller frees. */
cJSON *ctl_pdb_status(const cJSON *pdb, const cJSON *pods, const cJSON *statefulsets, double now,
                      const char *now_str);

/* Writes every budget's status that differs (PUT of /status with the resourceVersion). */
int ctl_pdb_sync(struct ctl_ctx *ctx, struct ctl_snapshot *snap, rss_error_t *err);

/* ---------------------------------------------------------------- writes.c: shared writes */

/* DELETE of a pod with its uid as precondition; gone or replaced already is not an error. Logs. */
void ctl_sync_delete_pod(struct ctl_ctx *ctx, const cJSON *pod, const char *why);
/* POST of a pod; AlreadyExists is not an error (a stale cache, or the old incarnation terminating). */
void ctl_sync_create_pod(struct ctl_ctx *ctx, const cJSON *pod, const char *owner_kind, const char *owner);
/* Merge-patches obj's status subresource to `status` (taken) when it differs. Without a
 * resourceVersion: the status is recomputed from scratch every pass, so the last writer is right. */
void ctl_sync_patch_status(struct ctl_ctx *ctx, const char *group_version, const char *plural,
                           const cJSON *obj, cJSON *status);

#endif
