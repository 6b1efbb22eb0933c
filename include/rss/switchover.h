/* switchover.h -- a planned switchover request (the rss.clusterlabs.org/switchover annotation): its value and
 * when it is refused.
 *
 * One pure check, shared by the leader's planner (which refuses the annotation with a Warning
 * SwitchoverRefused and removes it) and by `kubectl rss switchover` (which shows the same refusal before it
 * sets the annotation). The value names the primary the admin saw ("from=POD") and, optionally, the standby
 * to promote ("from=POD,to=POD"): a request whose primary is no longer the primary is stale (a switchover
 * or a failover happened since) and is refused, never carried out against another primary. A request that
 * is not refused may still wait: the planner stops the primary only once nothing it issued is in flight.
 */
#ifndef RSS_SWITCHOVER_H
#define RSS_SWITCHOVER_H

#include <stdbool.h>
#include <stddef.h>

#include "rss/error.h"

/* A member as the check needs it. */
struct rss_switchover_member {
    const char *pod;
    bool primary; /* the single primary, running (the newest primary mark's member when there is one) */
    bool standby; /* runs as a secondary that follows that primary, on a live node */
    bool leaving; /* its ordinal is at or above spec.replicas: a scale-down removes it */
};

enum rss_switchover_verdict {
    RSS_SWITCHOVER_ALLOWED = 0,
    RSS_SWITCHOVER_NOT_PROMOTE, /* not spec.failover PromoteStandby with spec.primaries 1 */
    RSS_SWITCHOVER_NO_PRIMARY,  /* no primary runs */
    RSS_SWITCHOVER_STALE,       /* `from` is not the running primary */
    RSS_SWITCHOVER_NO_TARGET,   /* `to` is not a running standby of the primary that stays */
    RSS_SWITCHOVER_TOO_FEW,     /* fewer running standbys than the promotion needs answers from */
};

/* Parses "from=POD" or "from=POD,to=POD" (owned strings; *to NULL when absent). RSS_E_INVALID otherwise. */
int rss_switchover_parse(const char *value, char **from, char **to, rss_error_t *err);

/* The annotation's value for from and to (to NULL: the most advanced standby). Caller frees. */
char *rss_switchover_format(const char *from, const char *to);

/* The answers a promotion needs under `ANY k` of s_total standbys: S-k+1, the fewest standbys of which
 * at least one acknowledged every commit the lost primary acknowledged (more than S when k > S: none is
 * enough, only a lights-out could replace that primary). The leader's failover and the plugin count S
 * the same way (planner_failover.c). */
size_t rss_switchover_need(size_t s_total, int k);

/* The verdict on a request from -> to (to NULL: any) given the members. promote: spec.failover
 * PromoteStandby with one primary; need: the answers a promotion needs (S-k+1 of the S standbys,
 * planner_failover.c), so a switchover never stops a primary that only a lights-out could replace. */
enum rss_switchover_verdict rss_switchover_check(const char *from, const char *to, bool promote,
                                                 const struct rss_switchover_member *members, size_t n,
                                                 size_t need);

/* The verdict in words, for a Warning and the plugin's error ("" for ALLOWED). */
const char *rss_switchover_reason(enum rss_switchover_verdict v);

#endif
