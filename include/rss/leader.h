/* leader.h -- the leader role: owns each RSS's Service and StatefulSet, plans and applies.
 *
 * While this instance leads (rss_election_leading() true with the same epoch) the leader watches
 * RSS objects, member pods and StatefulSets cluster-wide (or in each managed namespace only, with
 * rss_leader_config.namespaces), and the node heartbeat Leases
 * `rssd-node-<node>` in `ns`. On every relevant event (and at least every spec.reconcileInterval)
 * it takes one consistent LIST of the member pods of each RSS, runs the pure planner
 * (rss_planner_plan) and applies the plan in order: fencing first (rule 9), then `desired` in the
 * member records (rss/record.h) as CAS writes, labels, StatefulSet replicas, pod deletes, /status, Events.
 * Before EVERY write it re-checks rss_election_leading() with the same epoch and stops at once
 * otherwise (rule 4). See docs/leader.md.
 */
#ifndef RSS_LEADER_H
#define RSS_LEADER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rss/election.h"
#include "rss/error.h"
#include "rss/kube.h"
#include "rss/namespaces.h"

struct rss_leader;

struct rss_leader_config {
    struct rss_kube *kube;                   /* borrowed; must outlive the leader */
    struct rss_election *election;           /* borrowed; consulted before every write */
    const char *ns;                          /* rssd's own namespace: node heartbeat Leases live here */
    const struct rss_namespaces *namespaces; /* borrowed; the managed namespaces (--namespaces);
                                                NULL or empty = every namespace */
    long fence_timeout_ms;                   /* the agents' self-fencing timeout; 0 = 30000. A node whose
                                                heartbeat expired longer ago than this plus a margin counts as
                                                dead (its members must have self-fenced). */
    int workers;                             /* reconcile workers (--reconcile-workers): different RSSs
                                                are reconciled concurrently, one RSS never by two at once;
                                                0 = RSS_LEADER_DEFAULT_WORKERS, 1 = one RSS at a time;
                                                above RSS_LEADER_MAX_WORKERS: RSS_E_INVALID */
};

#define RSS_LEADER_DEFAULT_WORKERS 4
#define RSS_LEADER_MAX_WORKERS     64

/* Creates a leader (copies the strings). Does no I/O. Errors: RSS_E_INVALID (missing kube,
 * election or ns). */
int rss_leader_new(const struct rss_leader_config *cfg, struct rss_leader **ret, rss_error_t *err);

/* Leads term `epoch`: blocks, watching and reconciling every RSS, until *stop becomes true, or
 * rss_election_leading() turns false or reports another epoch (a pod
 * carries a newer epoch). Returns 0 in all those cases; negative only for errors that make leading
 * impossible (e.g. RSS_E_INVALID for epoch < 0). API errors are retried, never returned. No write is
 * sent once leadership is lost. Call again for a new term. */
int rss_leader_run(struct rss_leader *l, int64_t epoch, const atomic_bool *stop, rss_error_t *err);

/* What rss_leader_epoch_floor reads: the client and the managed namespaces (NULL = every one). */
struct rss_leader_scope {
    struct rss_kube *kube;
    const struct rss_namespaces *namespaces;
};

/* The epoch floor for rss_election_config.epoch_floor (floor_userdata = a struct rss_leader_scope *):
 * the highest status.epoch of any RSS rssd manages (0 when none). The status subresource survives a
 * deleted Lease and a reinstall of rssd, and namespace users cannot write it with the built-in roles;
 * pods' annotations are not consulted (they can be forged, rule 4). */
int rss_leader_epoch_floor(void *scope, int64_t *floor, rss_error_t *err);

/* Frees it. Accepts NULL. rss_leader_run must have returned. */
void rss_leader_free(struct rss_leader *l);

/* --- terms (leader_term.c): one thread that leads each term the election announces ----------- */

struct rss_leader_terms;

/* Creates the term runner (no thread yet). Pass rss_leader_terms_on_started/_on_stopped as the
 * election's callbacks with the runner as userdata; a term announced before _start waits for it. */
struct rss_leader_terms *rss_leader_terms_new(void);
/* Election callbacks: a new term begins with `epoch` / the current term ends (the Lease is lost;
 * the leader also checks rss_election_leading() before every write, this only ends its loop). */
void rss_leader_terms_on_started(void *terms, int64_t epoch);
void rss_leader_terms_on_stopped(void *terms);
/* Starts the thread that runs rss_leader_run(leader, epoch) for each announced term. */
int rss_leader_terms_start(struct rss_leader_terms *t, struct rss_leader *leader, rss_error_t *err);
/* Ends the current term and the thread, waits for it, and frees the runner. Accepts NULL. */
void rss_leader_terms_stop(struct rss_leader_terms *t);

#endif
