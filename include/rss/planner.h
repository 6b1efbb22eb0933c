/* planner.h -- the pure planner: one consistent snapshot of an RSS in, the leader's actions out.
 *
 * rss_planner_plan() does no I/O and reads no clock (time is an input); the same input always gives
 * the same plan, byte for byte. The decision table and the safety rule each branch enforces are in
 * docs/planner.md. In short, in order:
 *
 *   1. epoch claims: a member's desired or observed epoch above ours is invalid (rule 4: the Lease
 *      alone decides who leads): ignored, overwritten by fencing, reported in a Warning Event;
 *   2. fence: members whose desired epoch is older than ours (or absent) get desired {epoch, none}
 *      and nothing else is decided in this plan (rule 9); re-plan from a fresh LIST afterwards;
 *   3. paused -> status only;
 *   4. repairs: a failed member is stopped; a member that failed max_failures times in a row is
 *      stopped and its pod deleted;
 *   5. a running cluster: joins one at a time (primaries up to spec.primaries, highest sequence
 *      first, then secondaries), failover of crashed members, scale down after `stop`, and the rolling
 *      update of members made from an older template (stop, delete the pod, join; one at a time);
 *   6. nothing live, nothing unresolved: lights-out recovery -> at most one seed (rules 1, 2, 3, 8).
 *
 * Ownership: the input is borrowed. The plan owns everything in it; release with rss_plan_free().
 */
#ifndef RSS_PLANNER_H
#define RSS_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/record_codec.h"
#include "rss/error.h"
#include "rss/spec.h"

/* Where a member's data lives, as the leader learned it from its claims' PersistentVolumes
 * (leader_replace.c). NODE_LOCAL: some claim is bound to a `local` or `hostPath` PV, or to one whose
 * required nodeAffinity names kubernetes.io/hostname: the data cannot follow the pod to another node.
 * NETWORK: every claim is bound to a PV with none of these. UNKNOWN: anything else (no claim, an
 * unbound claim, a PV the leader could not read); it is treated as node-local for the decision, but
 * its claims are never deleted. Only filled for members on nodes judged dead. */
enum rss_volume_locality { RSS_VOLUME_UNKNOWN = 0, RSS_VOLUME_NODE_LOCAL, RSS_VOLUME_NETWORK };

/* One member pod as the leader saw it in a single LIST (rule 8). Ordinals without an entry, below
 * max(spec.replicas, statefulset_replicas), are members whose pod does not exist. */
struct rss_member_input {
    unsigned ordinal;
    bool pod_exists;
    const char *pod_uid;          /* metadata.uid */
    const char *resource_version; /* the member record's resourceVersion (rss/record.h): the CAS
                                     precondition of every desired write (rule 9); NULL = no record
                                     yet, the write creates it (and fails if one appeared) */
    /* The record's leftOut document (rss/record.h), or NULL: rule 14's hold, about the data on the
     * member's volume, so it is not tied to a pod incarnation and survives the RSS's status. */
    const char *hold_record;
    /* The record's recoveryPin document (rss/record.h), or NULL: rule 2's pin of a seed issued to this
     * member, read whatever the pod uid (it is about the data too). The planner takes the highest of
     * these and status.recovery: a status write lost with the Lease leaves the record's copy. */
    const char *pin_record;
    /* The record's primary mark (rss/record.h), or NULL: who was made primary by which action, read
     * whatever the pod uid (rules 16, 17). A member whose pod is gone (pod_exists false) is in the input
     * only for this: its record outlives a drained or deleted pod. */
    const char *primary_record;
    const char *phase; /* status.phase: "Pending", "Running", ... (NULL = unknown) */
    bool deleting;     /* metadata.deletionTimestamp is set */
    const char *node;  /* spec.nodeName, NULL when unscheduled */
    /* The node's liveness as the LEADER observed it (leader_liveness.c): alive = its heartbeat
     * changed within its lease duration; dead = unchanged for the fence timeout + margin, counted on
     * the leader's monotonic clock only while the leader's own API access worked. Neither: silent.
     * Dead is used for failover while others run, never to seed without the member (rule 3). */
    bool node_alive;
    bool node_dead;
    /* Its agent has been silent for the dead window but its kubelet was not seen down (Node Ready, or
     * unreadable): an absent agent (crashed, evicted, hung), not a dead node. node_dead stays false and
     * its members count as possibly running (rule 13); only the messages differ. */
    bool agent_absent;
    /* For the words of a refused force-seed (rss/forceseed.h): how long the leader has seen the node's
     * heartbeat unchanged (0: alive, or no heartbeat Lease), and how long until its dead window ends (0:
     * alive, past the window, or no Lease), on the leader's own clock as of this snapshot. */
    int64_t node_silent_ms;
    int64_t node_dead_in_ms;
    /* metadata.creationTimestamp, ms since the Unix epoch (0 = unknown): a new cluster gives members
     * created moments ago time to report before minimumMembers goes on without them. */
    int64_t created_ms;
    const char *container_id; /* the hook container's id from pod status ("containerd://..." is fine);
                                 NULL = unknown, then observed is not checked against it */
    int active_label;         /* current rss-active-member label: -1 absent, 0 "false", 1 "true" */
    const char *revision;     /* the controller-revision-hash label: the StatefulSet template it was made
                                 from (NULL = unknown: never rolled) */
    /* From the pod's status (leader_snapshot.c), for a rollout's pods that cannot start
     * (planner_rollout.c): never_started = Pending (or no phase) and no container of it was ever
     * created; waiting_reason = a container's waiting reason other than ContainerCreating /
     * PodInitializing (ErrImagePull, ImagePullBackOff, ...; NULL: none); unschedulable = its
     * PodScheduled condition is False with reason Unschedulable. */
    bool never_started;
    const char *waiting_reason;
    bool unschedulable;

    bool has_desired; /* the record's desired decoded (for this pod uid) */
    struct rss_desired desired;
    bool has_observed; /* the record's observed decoded (for this pod uid) */
    struct rss_observed observed;
    const char *observed_error; /* observed present but undecodable: why (the member counts as silent) */
    /* observed was written by an agent process that the one now renewing the node's heartbeat replaced
     * (a reboot, an rssd restart): not current, like a report from before this epoch, until the new
     * agent reports (the leader's liveness view, leader/leader_liveness.c). */
    bool observed_superseded;

    /* spec.nodeLossPolicy Replace only (docs/node-loss.md); the leader fills them for members on dead
     * nodes. The node carries the node.kubernetes.io/out-of-service taint (the admin's word that it
     * is shut down), and where the member's data lives. */
    bool node_out_of_service;
    enum rss_volume_locality volume;
    /* Its node is cordoned (spec.unschedulable: `kubectl drain`, a node upgrade), as the leader's watch
     * of cordoned Nodes last saw it; false when unknown. A single primary there hands over first (a
     * switchover, docs/planner.md row 7s). */
    bool node_cordoned;
};

struct rss_plan_input {
    const struct rss_spec *spec;
    uint64_t epoch;           /* this leader's epoch (Lease leaseTransitions at acquisition) */
    int64_t now_ms;           /* wall clock, ms since the Unix epoch */
    int statefulset_replicas; /* -1: the StatefulSet does not exist yet */
    const cJSON *prev_status; /* the RSS .status as last written (NULL on creation) */
    const char *force_seed;   /* the RSS's rss.clusterlabs.org/force-seed annotation (a pod name), or NULL */
    const char
        *release_hold; /* the RSS's rss.clusterlabs.org/release-hold annotation (a pod name), or NULL */
    const char
        *switchover; /* the RSS's rss.clusterlabs.org/switchover annotation (rss/switchover.h), or NULL */
    int64_t dead_after_ms;       /* the leader's dead-node window for this RSS's members: fence timeout + the
                                    `stop` hook's timeout + the kill + margin, so a member on a node judged dead
                                    (node_dead) has been stopped by its node's self-fence; a node's heartbeat can
                                    look alive for at most this long after it died (the journal's bound) */
    const char *update_revision; /* StatefulSet status.updateRevision once the controller has observed the
                                    current template (status.observedGeneration == metadata.generation),
                                    else NULL: members whose revision differs are rolled one at a time */
    const struct rss_member_input *members;
    size_t n_members;
};

/* One change of one member: desired goes to its record, a CAS on resource_version (the leader never
 * blind-writes desired); the active label goes to the pod. */
struct rss_plan_patch {
    unsigned ordinal;
    char *pod;
    char *resource_version; /* NULL when the input had none */
    char *pod_uid;          /* the incarnation desired is written for (desiredFor) */
    bool set_desired;
    struct rss_desired desired; /* valid when set_desired */
    int set_active_label;       /* -1 no change, 0 set "false", 1 set "true" */
    /* Rule 14: write the record's leftOut document (hold; NULL removes it). A hold that is set is
     * written before any desired of the same plan (patches with set_hold && hold come first). */
    bool set_hold;
    char *hold;
    /* Rule 2: write the record's recoveryPin document (pin; NULL removes it). A seed's pin is in the same
     * patch as the seed's desired: one write, one CAS. */
    bool set_pin;
    char *pin;
    /* Rules 16, 17: write the record's primary mark (primary; NULL removes it), always in the patch of the
     * desired that makes (or stops making) the member a primary. */
    bool set_primary;
    char *primary;
};

struct rss_plan_delete {
    unsigned ordinal;
    char *pod;
    char *uid;     /* delete precondition: only this incarnation of the pod */
    bool force;    /* gracePeriodSeconds 0: the pod is on a dead node whose kubelet never confirms */
    char **claims; /* PersistentVolumeClaims to delete first (node-local data of a lost node) */
    size_t n_claims;
};

enum rss_event_type { RSS_EVENT_NORMAL = 0, RSS_EVENT_WARNING };

struct rss_plan_event {
    enum rss_event_type type;
    char *reason; /* CamelCase, e.g. "SeedChosen" */
    char *message;
    char *pod; /* the member concerned, or NULL for the RSS as a whole */
};

struct rss_plan {
    bool epoch_claims;       /* a pod claims an epoch above ours: it is ignored and overwritten (Warning),
                                but the leader first re-reads the Lease: only the Lease says who leads */
    bool fencing;            /* this plan only fences; re-plan from a fresh LIST once applied */
    bool retracting;         /* this plan only retracts unacknowledged starts on nodes judged dead
                                (desired none); re-plan from a fresh LIST once applied */
    bool create_statefulset; /* the StatefulSet is missing: create it with set_replicas */
    bool clear_force_seed;   /* the force-seed annotation was used or refused: remove it */
    bool clear_release_hold; /* the release-hold annotation was used or refused: remove it */
    bool clear_switchover;   /* the switchover annotation was used or refused: remove it */
    int set_replicas;        /* -1: leave StatefulSet replicas alone */
    struct rss_plan_patch *patches;
    size_t n_patches;
    struct rss_plan_delete *deletes;
    size_t n_deletes;
    struct rss_plan_event *events;
    size_t n_events;
    uint64_t last_action_seq; /* the highest action sequence used; also in status.lastActionSeq */
    char *phase;              /* also in status.phase */
    cJSON *status;            /* the whole .status to write */
    /* The primary as the plan knows it, for the leader's budgets: the member the newest primary mark
     * names (it stays that through a switchover or failover until another is promoted), else the one
     * running primary; NULL when neither (a new RSS, or several running without marks). */
    char *primary;
};

/* Computes the plan. Fails (RSS_E_INVALID) only on inconsistent input: no spec, two members with
 * the same ordinal, an ordinal above RSS_SPEC_ORDINAL_MAX. *out is always initialised; free it. */
int rss_planner_plan(const struct rss_plan_input *in, struct rss_plan *out, rss_error_t *err);

void rss_plan_free(struct rss_plan *plan);

/* Renders a plan as one line per item, for logs and test diagnostics (caller frees). */
char *rss_plan_describe(const struct rss_plan *plan);

#endif
