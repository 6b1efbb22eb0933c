/* planner_switchover_check.c -- the pure check of a switchover request that the planner and `kubectl rss`
 * share, and the annotation's value. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/switchover.h"

/* A pod name as Kubernetes allows it (a DNS label or subdomain): nothing that could split the value. */
static bool pod_name(const char *s, size_t len)
{
    if (!len || len > 253)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
            return false;
    return true;
}

int rss_switchover_parse(const char *value, char **from, char **to, rss_error_t *err)
{
    *from = *to = NULL;
    if (!value || strncmp(value, "from=", 5))
        return rss_error_make(err, RSS_E_INVALID, 0, "\"%s\" is not from=POD or from=POD,to=POD",
                              value ? value : "");
    const char *f = value + 5, *comma = strchr(f, ',');
    size_t flen = comma ? (size_t)(comma - f) : strlen(f);
    const char *t = comma && !strncmp(comma + 1, "to=", 3) ? comma + 4 : NULL;
    if (!pod_name(f, flen) || (comma && (!t || !pod_name(t, strlen(t)))))
        return rss_error_make(err, RSS_E_INVALID, 0, "\"%s\" is not from=POD or from=POD,to=POD", value);
    *from = rss_xstrndup(f, flen);
    *to = t ? rss_xstrdup(t) : NULL;
    return 0;
}

char *rss_switchover_format(const char *from, const char *to)
{
    return to ? rss_xasprintf("from=%s,to=%s", from, to) : rss_xasprintf("from=%s", from);
}

size_t rss_switchover_need(size_t s_total, int k)
{
    size_t kk = k > 0 ? (size_t)k : 0;
    return s_total >= kk ? s_total - kk + 1 : s_total + 1;
}

enum rss_switchover_verdict rss_switchover_check(const char *from, const char *to, bool promote,
                                                 const struct rss_switchover_member *members, size_t n,
                                                 size_t need)
{
    if (!promote)
        return RSS_SWITCHOVER_NOT_PROMOTE;
    const struct rss_switchover_member *primary = NULL, *target = NULL;
    size_t standbys = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rss_switchover_member *m = &members[i];
        if (m->primary && !primary)
            primary = m;
        standbys += m->standby;
        if (to && m->pod && !strcmp(m->pod, to))
            target = m;
    }
    if (!primary)
        return RSS_SWITCHOVER_NO_PRIMARY;
    if (!from || !primary->pod || strcmp(primary->pod, from))
        return RSS_SWITCHOVER_STALE;
    if (to && (!target || !target->standby || target->leaving))
        return RSS_SWITCHOVER_NO_TARGET;
    return standbys < need || !standbys ? RSS_SWITCHOVER_TOO_FEW : RSS_SWITCHOVER_ALLOWED;
}

const char *rss_switchover_reason(enum rss_switchover_verdict v)
{
    switch (v) {
    case RSS_SWITCHOVER_NOT_PROMOTE:
        return "a switchover needs spec.failover PromoteStandby and spec.primaries 1";
    case RSS_SWITCHOVER_NO_PRIMARY:
        return "no primary runs";
    case RSS_SWITCHOVER_STALE:
        return "the member named as from is not the running primary (a switchover or failover happened since "
               "the request)";
    case RSS_SWITCHOVER_NO_TARGET:
        return "the member named as to is not a running standby of the primary (or a scale-down removes it)";
    case RSS_SWITCHOVER_TOO_FEW:
        return "too few standbys run and follow the primary for a promotion that keeps every acknowledged "
               "commit (spec.synchronousStandbys)";
    case RSS_SWITCHOVER_ALLOWED:
        break;
    }
    return "";
}
