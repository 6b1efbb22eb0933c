/* forceseed.h -- when a force-seed request (the rss.clusterlabs.org/force-seed annotation) is refused.
 *
 * One pure check, shared by the leader's planner (which refuses the annotation with a Warning
 * ForceSeedRefused and removes it) and by `kubectl rss force-seed` (which shows the same refusal before
 * it sets the annotation). A request that is not refused may still wait: the planner seeds only once
 * the member reported as stopped and nothing it issued is in flight.
 */
#ifndef RSS_FORCESEED_H
#define RSS_FORCESEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is known of a member's node, as the leader's liveness view judges it (leader_liveness.c). */
enum rss_forceseed_node {
    RSS_FORCESEED_NODE_UNKNOWN = 0, /* nothing said (the node is not known to the caller) */
    RSS_FORCESEED_NODE_ALIVE,       /* its agent's heartbeat changes */
    RSS_FORCESEED_NODE_SILENT,      /* its heartbeat stopped, the dead window has not ended (dead_at_ms) */
    /* Silent past the dead window, and the kubelet was not seen down: an absent agent, not a dead node
     * (rule 13); the leader will not judge it dead while its kubelet stays Ready. */
    RSS_FORCESEED_NODE_ABSENT,
    /* Silent past the dead window with the kubelet down: the leader judges it dead at its next plan. Only
     * `kubectl rss` sees this (the status it reads was written before); the planner's member is then
     * fenced, not live. */
    RSS_FORCESEED_NODE_DOWN,
    RSS_FORCESEED_NODE_NO_HEARTBEAT, /* no heartbeat Lease of that node: the leader cannot judge it */
};

/* What the check needs to know of each member; the fields after `live` only give the refusal its words
 * (zero: nothing known). */
struct rss_forceseed_member {
    const char *pod;    /* the member pod's name */
    bool exists;        /* the pod exists now */
    bool live;          /* it runs, is starting, or has an action in flight (as last reported, not fenced) */
    const char *role;   /* its last report's role ("primary", "starting", ...), NULL: none */
    const char *action; /* an action written ahead and not finished ("seed", ...), NULL: none */
    bool stale;         /* that report predates this leader (another epoch, or its node's previous rssd) */
    const char *node;   /* its node, NULL: unscheduled or unknown */
    enum rss_forceseed_node node_state;
    int64_t silent_since_ms; /* SILENT, ABSENT, DOWN: since when the heartbeat has not changed (wall ms since
                                the Unix epoch), 0: unknown */
    int64_t dead_at_ms;      /* SILENT, ABSENT, DOWN: when the leader's dead window for the node ends (wall
                                ms), 0: unknown */
};

enum rss_forceseed_verdict {
    RSS_FORCESEED_ALLOWED = 0,
    RSS_FORCESEED_NO_MEMBER, /* `want` is not an existing member pod of this RSS */
    RSS_FORCESEED_RUNNING,   /* a member runs or may run: seeding now would make a second cluster */
};

/* Checks a request to seed `want` among members[0..n). *index (may be NULL) gets want's index, or n when
 * it is no existing member; *runner (may be NULL) the first live member's pod, or NULL. A missing
 * member is reported before a running one. */
enum rss_forceseed_verdict rss_forceseed_check(const char *want, const struct rss_forceseed_member *members,
                                               size_t n, size_t *index, const char **runner);

/* The refusal in short words ("no such member pod", "a member runs or may run"); "" for
 * RSS_FORCESEED_ALLOWED. */
const char *rss_forceseed_reason(enum rss_forceseed_verdict v);

/* The refusal as the admin reads it, the same in the Warning and in `kubectl rss force-seed`:
 * "force-seed of WANT refused: ..." naming the first live member, why it may run (its report, an action
 * in flight, its node silent since when or its agent absent) and when the leader will know (the end of
 * the node's dead window, at now_ms's scale, with the seconds left), then how many others are live too;
 * for a missing member, that WANT is no member pod. NULL for RSS_FORCESEED_ALLOWED. Free the result. */
char *rss_forceseed_explain(const char *want, enum rss_forceseed_verdict v,
                            const struct rss_forceseed_member *members, size_t n, int64_t now_ms);

#endif
