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

/* What the check needs to know of each member. */
struct rss_forceseed_member {
    const char *pod; /* the member pod's name */
    bool exists;     /* the pod exists now */
    bool live;       /* it runs, is starting, or has an action in flight (as last reported, not fenced) */
};

enum rss_forceseed_verdict {
    RSS_FORCESEED_ALLOWED = 0,
    RSS_FORCESEED_NO_MEMBER, /* `want` is not an existing member pod of this RSS */
    RSS_FORCESEED_RUNNING,   /* a member runs or is starting: seeding now would make a second cluster */
};

/* Checks a request to seed `want` among members[0..n). *index (may be NULL) gets want's index, or n when
 * it is no existing member; *runner (may be NULL) the first live member's pod, or NULL. A missing
 * member is reported before a running one. */
enum rss_forceseed_verdict rss_forceseed_check(const char *want, const struct rss_forceseed_member *members,
                                               size_t n, size_t *index, const char **runner);

/* The refusal in words, as the Warning Event says it ("no such member pod", "a member runs or is
 * starting"); "" for RSS_FORCESEED_ALLOWED. */
const char *rss_forceseed_reason(enum rss_forceseed_verdict v);

#endif
