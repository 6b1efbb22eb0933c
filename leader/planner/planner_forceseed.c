/* planner_forceseed.c -- the pure check of a force-seed request that the planner and `kubectl rss` share. */
#include <string.h>

#include "rss/forceseed.h"

enum rss_forceseed_verdict rss_forceseed_check(const char *want, const struct rss_forceseed_member *members,
                                               size_t n, size_t *index, const char **runner)
{
    size_t at = n;
    const char *who = NULL;
    for (size_t i = 0; i < n; i++) {
        if (at == n && want && members[i].exists && members[i].pod && !strcmp(members[i].pod, want))
            at = i;
        if (!who && members[i].live)
            who = members[i].pod ? members[i].pod : "?";
    }
    if (index)
        *index = at;
    if (runner)
        *runner = who;
    if (at == n)
        return RSS_FORCESEED_NO_MEMBER;
    return who ? RSS_FORCESEED_RUNNING : RSS_FORCESEED_ALLOWED;
}

const char *rss_forceseed_reason(enum rss_forceseed_verdict v)
{
    switch (v) {
    case RSS_FORCESEED_NO_MEMBER:
        return "no such member pod";
    case RSS_FORCESEED_RUNNING:
        return "a member runs or is starting";
    case RSS_FORCESEED_ALLOWED:
        break;
    }
    return "";
}
