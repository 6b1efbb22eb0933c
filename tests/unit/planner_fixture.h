/* planner_fixture.h -- the world the planner's table tests write (test_planner_*.c): not product code.
 *
 * A world is written as one token per member, ordinal 0 first:
 *   S<n> stopped, sequence n        N  stopped, no sequence yet     E  stopped, sequence error (garbage)
 *   P    running primary            Y  running secondary            T  starting (written ahead, pending)
 *   F    failed (status exit 1)     U  role unknown                 -  no pod               ?  pod, no report
 *   C<n> report for an older container (stale)    X<n> pod being deleted
 *   D<n> node dead (as the leader observed it)    L<n> node silent, not yet dead      H<n> no heartbeat ever
 *   W<n> node dead, its last report the write-ahead of a seed a minute ago (the hook may still run; the
 *        desired already retracted)     V<n> the same, the write-ahead an hour ago (hook and stop timed out)
 *   O    primary, its report from the previous epoch (its agent restarted, not re-probed yet)
 *   R    primary, its report (this epoch) from the rssd its node ran before: a power-on or an rssd restart,
 *        the new agent not reported yet (observed_superseded)
 *   Q    primary on a node whose heartbeat is silent (not yet past the dead window)
 *   A    primary on a node whose agent is absent: silent past the dead window, kubelet not down
 *   K    primary on a node judged dead (agent silent past the window and kubelet down)
 *   Z    secondary, its report from the previous epoch
 *   J    on a node judged dead, its last report the write-ahead of a `secondary` an hour ago (hook and
 *        stop timed out there: fenced); j the same a minute ago (the hook may still run)
 * (D/L/H without a number: no sequence.) Plans are summarised as "<ordinal>:<action>(<peer ordinals>)"
 * tokens, then "<ordinal>:delete", then "replicas=N", so a row pins down the WHOLE set of actions.
 */

#ifndef RSS_TEST_PLANNER_FIXTURE_H
#define RSS_TEST_PLANNER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "rss/cleanup.h"
#include "rss/planner.h"

#define MAXM   16
#define EPOCH  5
#define NOW    1700000000000LL
#define GEN    3
#define NO_PIN -1

/* spec fields for world_init_with: rule 15's opt-in, an `ANY 1` synchronous quorum */
#define FAILOVER_SPEC "\"failover\":\"PromoteStandby\",\"synchronousStandbys\":1,"

struct mstore {
    char uid[32], rv[32], node[32], cid[48], obs_err[64], pin[80], primary[256], hold[128];
};

struct world {
    struct rss_spec spec;
    struct rss_member_input m[MAXM];
    struct mstore s[MAXM];
    size_t n;
    int sts;
    int64_t now;
    uint64_t epoch;
    cJSON *prev;
    int uid_counter;
    const char *force_seed;   /* the RSS's force-seed annotation */
    const char *release_hold; /* the RSS's release-hold annotation */
    const char *switchover;   /* the RSS's switchover annotation */
    const char *update_revision;
    int64_t dead_after; /* the leader's dead-node window */
};

/* ---- building worlds ---- */

void spec_init(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members);
/* spec_extra: more spec fields, each followed by a comma (e.g. FAILOVER_SPEC), "" for none */
void spec_init_with(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members,
                    const char *spec_extra);
struct rss_member_input *find(struct world *w, unsigned ordinal);
struct mstore *store(struct world *w, const struct rss_member_input *m);
void set_observed(struct rss_member_input *m, enum rss_role role, uint64_t gen, bool has_seq, uint64_t seq,
                  const char *seq_err);
void set_desired(struct rss_member_input *m, uint64_t epoch, enum rss_action a, uint64_t seq, uint64_t gen);
void set_last(struct rss_member_input *m, enum rss_action a, uint64_t epoch, uint64_t seq, enum rss_result r);
/* A fresh pod: running phase, own node alive, fenced by this leader (desired none). */
struct rss_member_input *add_pod(struct world *w, unsigned ordinal);
void remove_pod(struct world *w, unsigned ordinal);
void member_token(struct world *w, unsigned ordinal, const char *tok);
void world_init(struct world *w, const char *members, int primaries, bool secondary, int min_members);
void world_init_with(struct world *w, const char *members, int primaries, bool secondary, int min_members,
                     const char *spec_extra);
void world_free(struct world *w);
/* The previous status of a seed that failed on ordinal with seq (the recovery pin). */
void set_pin(struct world *w, unsigned ordinal, uint64_t seq);
/* The member record's recoveryPin document (rule 2), NULL for none; apply() keeps it as the leader wrote. */
void set_record_pin(struct world *w, unsigned ordinal, const char *doc);
/* The member record's primary mark (rules 16, 17) and leftOut hold (rule 14), NULL for none; apply() keeps
 * both as the leader wrote them. */
void set_record_primary(struct world *w, unsigned ordinal, const char *doc);
void set_record_hold(struct world *w, unsigned ordinal, const char *doc);
/* The member's pod left the API (a drain, a deletion): only its record remains (the input then has the
 * member with pod_exists false and the record's primary mark, as leader_snapshot.c gives it). */
void pod_gone(struct world *w, unsigned ordinal);
/* The StatefulSet made the member's pod again: a new uid, Pending (unschedulable: its node cordoned),
 * no report; the record's marks stay. */
void pod_recreated(struct world *w, unsigned ordinal);
void run(struct world *w, struct rss_plan *p);

/* ---- simulating the agents between two plans ---- */

/* The next plan sees this plan's status and every desired it wrote (the leader applied it); frees p. */
void apply(struct world *w, struct rss_plan *p);
/* The application died in its container: the agent reports it stopped, its last sequence, in a new
 * generation. */
void crash(struct world *w, unsigned ordinal, uint64_t last_seq);
/* The agent answers the position request on its record (rule 15): has = false when its sequence hook
 * gave nothing. */
void answer_position(struct world *w, unsigned ordinal, bool has, uint64_t pos);
/* The member ran its desired action to completion and reports role. */
void ran(struct world *w, unsigned ordinal, enum rss_role role);

/* ---- reading plans ---- */

unsigned peer_ordinal(const char *dns);
/* "<ordinal>:<action>(<peer ordinals>)" tokens, then "<ordinal>:delete", then "replicas=N". */
char *summary(const struct rss_plan *p);
const struct rss_plan_event *find_event(const struct rss_plan *p, const char *reason);
/* the first patch of ordinal (a desired, a hold, ...), or NULL */
const struct rss_plan_patch *patch_of(const struct rss_plan *p, unsigned ordinal);
/* the patch writing ordinal's desired, or NULL */
const struct rss_plan_patch *desired_patch_of(const struct rss_plan *p, unsigned ordinal);
const char *status_str(const struct rss_plan *p, const char *key);
/* status.memberStatus entry of ordinal, or NULL */
const cJSON *member_status(const struct rss_plan *p, unsigned ordinal);
/* Fails the test with the whole plan when its summary is not want. */
void expect(const struct rss_plan *p, const char *want, const char *row);

/* ---- a table of worlds, each row one whole plan ---- */

/* ---- table 1: lights-out recovery (rules 1, 2, 3, 6, 8) ---- */

struct plan_row {
    const char *rule; /* which safety rule the row protects */
    const char *members;
    int primaries;   /* 0 = replicas */
    bool secondary;  /* the spec has a secondary hook */
    int min_members; /* spec.recovery.minimumMembers */
    int pin_ordinal; /* a failed seed recorded in status, NO_PIN for none */
    uint64_t pin_seq;
    const char *want;  /* the whole plan summary */
    const char *event; /* an event reason that must be present (NULL: none required) */
    bool warning;      /* ...and must be a Warning */
};

/* Runs each row; also checks rule 1 (at most one seed, never next to another start) on every plan. */
void plan_rows_run(const struct plan_row *rows, size_t n, const char *table);

#endif
