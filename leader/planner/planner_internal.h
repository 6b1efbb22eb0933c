/* planner_internal.h -- the planner's working state and its files' functions, shared by leader/planner/
 * (not public API). */
#ifndef RSS_PLANNER_INTERNAL_H
#define RSS_PLANNER_INTERNAL_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rss/action.h"
#include "rss/cleanup.h"
#include "rss/error.h"
#include "rss/planner.h"
#include "rss/strbuf.h"

/* ---- the derived view of one member ---- */

/* Witnesses kept per journal record: any one suffices as proof. */
#define PLANNER_JOURNAL_WITNESSES 8

/* How long after a switchover fell back a drain or a rolling update may not start another from the same
 * primary. */
#define PLANNER_SWITCHOVER_RETRY_MS (10 * 60 * 1000)

struct planner_member {
    unsigned ordinal;
    const struct rss_member_input *in; /* NULL: no entry in the LIST */
    char *pod;

    bool exists, deleting, has_node, node_alive, fenced_dead, node_silent, fresh;
    bool obs;     /* the record's observed part was decoded */
    bool current; /* ... and it describes the pod's current container */
    enum rss_role role;
    bool pending; /* observed last action written ahead, not finished */
    bool live;    /* counts as running: blocks any seed (rules 1, 8) */
    bool unclear; /* failed or unknown: blocks a seed until made clear */
    bool unresolved;
    bool stale_start; /* an unresolved start on a node judged dead: retracted before anything else */
    bool start_inflight;
    /* A start written ahead (observed {starting, pending}) when its node was judged dead: its hook may
     * still run there (finding F4, docs/model.md). No seed elsewhere before dead_start_until (wall ms,
     * INT64_MAX when the write-ahead has no time): the hook's timeout and the stop's after it. */
    bool dead_start;
    int64_t dead_start_until;
    bool running;    /* primary or secondary on the current container */
    bool primary_up; /* running primary on a live node: a valid peer */
    bool actionable; /* may receive a new action now */
    bool outdated;   /* made from an older StatefulSet template than update_revision: to be rolled */
    bool has_seq;
    uint64_t seq;
    const char *seq_error;

    /* history carried in status.memberStatus */
    unsigned failures;
    struct rss_action_id counted;
    int64_t running_since;
    enum rss_role prev_role;
    uint64_t prev_gen;
    bool prev_known;
    const char *prev_uid; /* podUID of the incarnation the history belongs to (borrowed) */
    const char *prev_seq_error;
    bool crashed;     /* detected in this plan */
    bool new_failure; /* a failure was counted in this plan */
    bool node_down;   /* its node went away while it ran (history "nodeDown"): not its fault */
    /* Left out of a recovery that seeded without it (minimumMembers): until it rejoins, it may hold
     * writes the seed lacked, so it is not joined over them when its sequence is higher. */
    bool left_out;
    uint64_t left_out_seed_seq;
    bool prev_held;      /* the previous plan held it back (its Warning was given then) */
    bool released;       /* the admin released the hold (rule 14): it joins, still never seeds until then */
    bool last_seq_known; /* the last sequence it reported, kept while it runs (memberStatus.lastSequence) */
    uint64_t last_seq;
    /* The hold's mark: the last action id of the plan that marked it. A start of the member after it ends
     * the hold (it joined: its data was replaced); running on from before it (a node that froze and
     * thawed) does not. Unknown for a hold written before the mark was kept: running ends it. */
    bool left_out_at_known;
    struct rss_action_id left_out_at;
    /* Rule 17: it runs as a primary while held (left out, not released): a history the cluster gave up,
     * never a valid peer, stopped. */
    bool diverged;
    bool held;    /* held back in this plan */
    bool missing; /* planner_recovery(): not a seed candidate in this plan */

    /* The journal (status.journal): it went down at j_down_ms, when these members ran on as primaries in
     * these generations; a witness is confirmed once it was still so well after (planner_journal_update()).
     */
    bool j_has;
    int64_t j_down_ms;
    bool j_has_seq;
    uint64_t j_seq; /* its last known sequence then */
    size_t j_n;
    struct {
        unsigned ordinal;
        uint64_t generation;
        bool confirmed;
    } j_w[PLANNER_JOURNAL_WITNESSES];
    bool behind; /* planner_recovery(): missing, and proven behind by the journal */
    /* spec.nodeLossPolicy Replace: status.memberStatus[].replacement, from the plan that deleted the
     * lost incarnation until a later one runs (it joined and copied the data). While it is pending
     * the member never seeds (docs/node-loss.md). The record survives the pod's new uid. */
    const cJSON *repl_prev; /* borrowed from the previous status */
    cJSON *repl_new;        /* owned: recorded in this plan */
    bool repl_pending;

    /* Rules 16, 17: its record's primary mark (planner_lineage.c): made primary by mark_at, for pod
     * incarnation mark_uid (owned), holding mark_seq then; mark_promoted: by a failover's promotion;
     * mark_gone: that incarnation has left the API (its containers stopped). */
    bool mark, mark_has_seq, mark_promoted, mark_gone;
    struct rss_action_id mark_at;
    char *mark_uid;
    uint64_t mark_seq;
    /* The mark's scaledAway (model finding L4): a standby a scale-down removed while this member was
     * primary held sequence mark_scaled_seq (mark_scaled_known false: unknown) on pod mark_scaled_pod
     * (owned). While it streamed, the primary's `ANY k` could count it alone: a promotion below it may lack
     * an acknowledged commit. */
    bool mark_scaled, mark_scaled_known;
    uint64_t mark_scaled_seq;
    char *mark_scaled_pod;

    bool decided; /* a desired action or delete was issued to it in this plan */
    struct rss_strbuf note;
};

struct planner {
    const struct rss_plan_input *in;
    const struct rss_spec *spec;
    struct rss_plan *out;
    struct planner_member *m;
    size_t n;
    int target; /* spec.replicas */
    int sts;    /* StatefulSet replicas, -1 missing */
    uint64_t seq;
    uint64_t seq0; /* seq before this plan issued anything */
    size_t cap_patches, cap_deletes, cap_events;
    struct rss_strbuf msg; /* status message */
    bool waiting;          /* msg is a wait, not a decision */
    bool wait_warning;
    const char *wait_reason;
    const char *prev_message;
    /* Rule 2's recovery pin: the highest of status.recovery and the records' recoveryPin (planner_pin.c). */
    bool pin;
    unsigned pin_ordinal;
    bool pin_issued;            /* this plan issued a seed: its member's record gets the pin with it */
    bool pin_forced;            /* ... the admin's force-seed */
    bool pin_bad;               /* a record's recoveryPin is unreadable: a seed at an unknown sequence */
    unsigned pin_bad_ordinal;   /* ... in the record of this member */
    const cJSON *last_recovery; /* status.lastRecovery as last written (NULL: never seeded: a new cluster) */
    cJSON *new_recovery;        /* set when this plan seeds */
    cJSON *suspended;           /* status.suspended, written once every member stopped (spec.suspend) */
    uint64_t pin_seq;
    size_t n_primaries_up;
    const cJSON *last_replacement; /* status.lastReplacement as last written */
    cJSON *new_replacement;        /* set when this plan replaces a member */
    cJSON *new_failover;           /* status.failover: a promotion of a standby under way (rule 15) */
    /* status.switchoverFallback {from, at}: a switchover of this primary fell back to the lights-out path;
     * neither a drain nor a rolling update starts another from it for PLANNER_SWITCHOVER_RETRY_MS (each
     * try is an outage; planner_switchover.c). Set by this plan, else NULL (the status's is carried). */
    cJSON *new_sw_fallback;
    /* Rules 16, 17 (planner_lineage.c): the member with the newest primary mark, or NULL (none: an RSS
     * from before the marks); the highest sequence rssd itself started a primary from (marks and
     * status.lastRecovery), which a seed without every member may not go below; UINT32_MAX: from the
     * status. */
    struct planner_member *top;
    bool floor;
    uint64_t floor_seq;
    unsigned floor_ordinal;
    const char *floor_scaled_pod; /* the floor is a scaled-away standby's (this pod), not a mark's sequence */
};

/* Pod status says "containerd://<id>", CRI says "<id>": compare the ids. */
static inline bool same_container(const char *a, const char *b)
{
    const char *p = strstr(a, "://");
    const char *q = strstr(b, "://");
    return strcmp(p ? p + 3 : a, q ? q + 3 : b) == 0;
}

static inline void fmt_seq(uint64_t v, char *buf, size_t size)
{
    snprintf(buf, size, "%" PRIu64, v);
}

/* planner_history.c: the previous status (our own output) read back leniently. */
uint64_t planner_json_u64(const cJSON *obj, const char *key);
/* Fills m's history fields (failures, counted action, runningSince, previous role/generation/sequence
 * error) from c->in->prev_status. */
void planner_load_history(struct planner *c, struct planner_member *m);
/* Fills m's journal record (j_*) from c->in->prev_status.journal; kept across pod incarnations (it is
 * about the data on the member's volume). */
void planner_load_journal(struct planner *c, struct planner_member *m);

/* planner_derive.c: the plan's working state from its input (each member derived: live, unclear,
 * unresolved, actionable, ...); then what the previous plans left, and this plan's failures counted. */
int planner_setup(struct planner *c, const struct rss_plan_input *in, rss_error_t *err);
void planner_load(struct planner *c);
void planner_teardown(struct planner *c);

/* planner_emit.c: the plan's output. An Event; the patch of m's record in this plan (created on first
 * use); desired written on m (a fresh id, m's current generation as target: rule 7); m's pod deleted
 * (uid precondition). */
__attribute__((format(printf, 5, 0))) void planner_eventv(struct planner *c, enum rss_event_type type,
                                                          const char *reason, const struct planner_member *m,
                                                          const char *fmt, va_list ap);
__attribute__((format(printf, 5, 6))) void planner_event(struct planner *c, enum rss_event_type type,
                                                         const char *reason, const struct planner_member *m,
                                                         const char *fmt, ...);
struct rss_plan_patch *planner_patch_for(struct planner *c, struct planner_member *m);
void planner_issue(struct planner *c, struct planner_member *m, enum rss_action action, char **peers,
                   size_t n_peers, const char *reason);
void planner_delete_pod(struct planner *c, struct planner_member *m);
/* The status message. A wait is added to other waits (a Warning's reason wins); a decision replaces
 * any wait, and a wait after a decision is dropped. */
__attribute__((format(printf, 4, 5))) void planner_wait(struct planner *c, bool warning, const char *reason,
                                                        const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void planner_decision(struct planner *c, const char *fmt, ...);
/* The rss.clusterlabs.org/active label: true on running members. */
void planner_labels(struct planner *c);
/* The closing output of every plan: the wait's Event, sequence errors, the holds before any desired,
 * the status. */
void planner_finish(struct planner *c);

/* planner_journal.c: the journal brought up to date; the confirmed witness that proves the missing m
 * behind (spec.recovery.replication: Synchronous), or NULL. */
void planner_journal_update(struct planner *c);
const struct planner_member *planner_journal_behind(const struct planner *c, const struct planner_member *m);

/* planner_fence.c. Row 1: true when a record claims an epoch above ours (not trusted; Warned). Row 3:
 * true when records were fenced to our epoch, or starts on dead nodes retracted: nothing else is decided
 * in such a plan. */
bool planner_epoch_claims(struct planner *c);
bool planner_fence(struct planner *c);
bool planner_retract(struct planner *c);

/* planner_suspend.c: row 2b, spec.suspend. */
void planner_suspend(struct planner *c);
/* planner_scale.c: row 4 (create, scale up); the scale down, and the members it may lower replicas past. */
void planner_scale_up(struct planner *c);
void planner_scale_down(struct planner *c);
bool planner_confirmed_stopped(const struct planner_member *m);
/* planner_repair.c: rows 5 and 6, failed members stopped, and at the failure limit replaced. */
void planner_repairs(struct planner *c);
/* planner_forceseed_plan.c: row 6b; true when it decided (seeded, refused or waits). busy: something
 * issued is unresolved, decided in this plan, or a start may still run on a dead node. */
bool planner_force_seed(struct planner *c, bool busy);
/* planner_running.c: rows 7 and 8. */
void planner_running_cluster(struct planner *c);
/* planner_nodeloss.c: a member on a dead node in a running cluster (spec.nodeLossPolicy). */
void planner_replace_lost(struct planner *c);
/* planner_recovery.c: row 9 (waits, naming each blocker) and row 10 (the lights-out recovery). */
void planner_recovery_blocked(struct planner *c);
void planner_recovery(struct planner *c);

/* planner_hold.c: rule 14, a diverged history never seeds. */
/* Completes m's left-out mark from its record (the durable copy: the status may be gone) and drops it
 * once m runs (it joined: its data was replaced). Call after planner_load_history. */
void planner_hold_load(struct planner *c, struct planner_member *m);
/* Marks m left out of a recovery that seeded seed_seq, unless it already is: the first divergence
 * point is kept, a later recovery's sequence says nothing about m's history. */
void planner_hold_mark(struct planner_member *m, uint64_t seed_seq);
/* joins(): true when m is held back (not joined over writes the cluster lacks); notes and warns. */
bool planner_hold_newer(struct planner *c, struct planner_member *m);
/* planner_recovery(): true when m is not a seed candidate because its history diverged; adds it to list. */
bool planner_hold_diverged(struct planner *c, struct planner_member *m, struct rss_strbuf *list);
/* The admin's rss.clusterlabs.org/release-hold annotation on the RSS. */
void planner_hold_release(struct planner *c);
/* Writes each member's hold into its record when it differs (before any desired of the plan). */
void planner_hold_persist(struct planner *c);

/* planner_pin.c: rule 2's recovery pin, durable in the seed member's record. */
/* Reads the records' pins after the status's (the highest wins; an unreadable one is kept apart) and
 * drops them all once a primary runs. Call once every member is loaded. */
void planner_pin_load(struct planner *c);
/* This plan seeds m: the pin goes with the seed's desired (has_seq false: a force-seed of a member
 * without a sequence, no pin; forced: the admin's force-seed, which supersedes every other pin). */
void planner_pin_issue(struct planner *c, struct planner_member *m, bool has_seq, uint64_t seq, bool forced);
/* Writes the pins into the records: the seed's with its desired; removed once a primary runs, and from
 * the other members at a force-seed (the admin's choice supersedes them). */
void planner_pin_persist(struct planner *c);

/* planner_status.c: renders c->out->status (rss-operator's members lists, memberStatus, conditions,
 * phase, recovery) from the decided context. */
void planner_build_status(struct planner *c);
/* status.switchoverFallback as this plan writes it: the one this plan set, else the last status's while
 * its PLANNER_SWITCHOVER_RETRY_MS last; NULL when none. */
const cJSON *planner_switchover_fallback(const struct planner *c);

/* planner_timeline.c: status.history, the previous status's entries with this plan's recovery and failover
 * Events added (once per episode) and a "Running" entry that closes an episode; `ready` members of the
 * target are running. */
void planner_timeline_render(struct planner *c, cJSON *status, const char *phase, size_t ready);

/* planner_rollout.c: the rolling update's pods that cannot start. planner_rollout_stuck: the reason a
 * member's pod will not start without a change of the template (a waiting reason such as ErrImagePull,
 * or "Unschedulable"), NULL when it is not stuck. planner_rollout_recreatable: an outdated member whose
 * pod never started a container and was issued nothing: deleting it stops nothing. */
const char *planner_rollout_stuck(const struct planner_member *m);
bool planner_rollout_recreatable(const struct planner_member *m);
/* The rolling update's Warning for an updated member that failed; the rolling update's next step. */
void planner_rollout_halted(struct planner *c);
void planner_rollout_step(struct planner *c);
/* planner_primary.c. Rule 12: a member that last said primary and is not observed stopped or failed
 * under this epoch on a live node (a stale report, a silent or absent agent), or NULL. Its secondaries
 * are not stopped for it: it is waited for. */
const struct planner_member *planner_unobserved_primary(const struct planner *c);
/* Why m (from planner_unobserved_primary) is not observed, for the status message. */
void planner_unobserved_why(const struct planner *c, const struct planner_member *m, char *buf, size_t size);
/* planner_recovery() of a new cluster (never seeded) under minimumMembers: true while a member of the first w
 * that is not a seed candidate had its pod created moments ago (it has not had time to report). */
bool planner_new_member_grace(const struct planner *c, int w);

/* planner_lineage.c: rules 16, 17. Reads every record's primary mark (after planner_setup); a after b;
 * m's last action a start done after at; the mark written into p with the start planner_issue() put there
 * (removed with a `secondary`); the promotion's mark (over lost, from request, at position). */
void planner_lineage_load(struct planner *c);
bool planner_id_after(struct rss_action_id a, struct rss_action_id b);
bool planner_lineage_started_after(const struct planner_member *m, struct rss_action_id at);
void planner_lineage_issue(const struct planner_member *m, struct rss_plan_patch *p);
void planner_lineage_promoted(struct rss_plan_patch *p, const struct planner_member *m,
                              const struct planner_member *lost, struct rss_action_id request,
                              uint64_t position);

/* planner_failover.c. Rule 15 (spec.failover PromoteStandby, one primary). planner_failover_load carries
 * status.failover into this plan (a running cluster). planner_failover_promote, in row 8 (no primary
 * runs, none unobserved): true when it decided or waits (msg says what), false when the lights-out path
 * goes on (it said why in a Warning). planner_failover_repoint, in row 7: one promoted-over standby gets
 * `secondary` with the new primary as peer; true when it issued one. */
void planner_failover_load(struct planner *c);
bool planner_failover_promote(struct planner *c, char *msg, size_t size);
bool planner_failover_repoint(struct planner *c);
/* Rule 19: whether lost, on a silent node, may be replaced without waiting out the dead window
 * (spec.silentNodePolicy Promote, which needs PromoteStandby, one primary and a `detach` hook).
 * planner_failover_reattach, in row 7 after the repoint: a failover that promoted nobody ends once its
 * primary runs again; one standby that detached for it gets `secondary` with that primary as peer (true when
 * it issued one). */
bool planner_failover_early(const struct planner *c, const struct planner_member *lost);
bool planner_failover_reattach(struct planner *c);
/* A standby that runs (secondary, live node, nothing unresolved); one that follows primary's history
 * (started after primary was made primary; without a mark, every one); the answers a promotion over lost
 * needs (S-k+1), with S (*s_total) and the running standbys that follow lost (*n_run). */
bool planner_standby_runs(const struct planner_member *m);
bool planner_follows(const struct planner_member *m, const struct planner_member *primary);
size_t planner_failover_need(const struct planner *c, const struct planner_member *lost, size_t *s_total,
                             size_t *n_run);
/* planner_switchover.c: the admin's rss.clusterlabs.org/switchover annotation, in row 7 (a primary runs),
 * and without one the handover of a primary whose node is cordoned. busy: something is in flight, stale
 * or decided in this plan. True when it stopped the primary or waits; false when there is nothing to do
 * or the request was refused (a Warning; the annotation is removed). */
bool planner_switchover(struct planner *c, bool busy);
/* The rolling update's last outdated member is the one primary: under PromoteStandby it hands over to the
 * most advanced standby first (then it is a stopped outdated member the rollout recreates). False, with
 * why, when the switchover's check refuses. */
bool planner_switchover_rollout(struct planner *c, struct planner_member *primary, const char *rev, char *why,
                                size_t size);

#endif
