/* planner_forceseed.c -- the pure check of a force-seed request that the planner and `kubectl rss` share,
 * and its refusal in words. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/forceseed.h"
#include "rss/strbuf.h"

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
        return "a member runs or may run";
    case RSS_FORCESEED_ALLOWED:
        break;
    }
    return "";
}

/* Whole seconds: the silence from its start (rounded down), the window to its end (rounded up), so that
 * a retry at the time said is never early. */
static const char *at_second(char buf[RSS_TIME_LEN], int64_t ms, bool up)
{
    int64_t s = ms / 1000 + (up && ms % 1000 > 0);
    return rss_time_ms(buf, s * 1000);
}

/* What the member last said: an action in flight, else its role; and whether this leader has seen that
 * said again since. */
static void report_words(struct rss_strbuf *b, const struct rss_forceseed_member *m)
{
    if (m->action)
        rss_strbuf_printf(b, "has its %s in flight (written ahead, not finished)", m->action);
    else
        rss_strbuf_printf(b, "last reported %s", m->role ? m->role : "running");
    if (m->stale)
        rss_strbuf_printf(b, " (an earlier report, not confirmed since)");
}

/* Where the member is, why that leaves it possibly running, and when the leader will know. */
static void node_words(struct rss_strbuf *b, const struct rss_forceseed_member *m, int64_t now_ms)
{
    char since[RSS_TIME_LEN], end[RSS_TIME_LEN];
    const char *node = m->node ? m->node : "?";
    if (m->silent_since_ms > 0)
        at_second(since, m->silent_since_ms, false);
    switch (m->node_state) {
    case RSS_FORCESEED_NODE_ALIVE:
        rss_strbuf_printf(b, ", on node %s whose agent is alive", node);
        if (m->action || (m->role && !strcmp(m->role, "starting")))
            rss_strbuf_printf(b, ": retry once it has finished");
        else if (m->stale)
            rss_strbuf_printf(b, ": its agent reports again within a reconcileInterval; retry then");
        else
            rss_strbuf_printf(b, ": it runs, and a force-seed is for a cluster where nothing runs (stop it "
                                 "first, e.g. spec.suspend)");
        return;
    case RSS_FORCESEED_NODE_SILENT:
        rss_strbuf_printf(b, ", and its node %s has been silent", node);
        if (m->silent_since_ms > 0)
            rss_strbuf_printf(b, " since %s", since);
        if (m->dead_at_ms > now_ms) {
            int64_t left = (m->dead_at_ms - now_ms + 999) / 1000;
            rss_strbuf_printf(
                b,
                "; the leader judges %s dead (its members stopped) when its dead window ends at "
                "%s (in %lld s) and %s's kubelet is seen down: retry after that",
                node, at_second(end, m->dead_at_ms, true), (long long)left, node);
        } else {
            rss_strbuf_printf(b, "; its dead window has ended, the leader waits to see %s's kubelet down",
                              node);
        }
        return;
    case RSS_FORCESEED_NODE_ABSENT:
        rss_strbuf_printf(b, ", and the agent on its node %s has been silent", node);
        if (m->silent_since_ms > 0)
            rss_strbuf_printf(b, " since %s", since);
        rss_strbuf_printf(b,
                          ", past its dead window, but %s's kubelet is not seen down: an absent agent, not a "
                          "dead node, so the member may run on; the leader knows once rssd runs on %s again "
                          "or its kubelet is seen down (the node powered off)",
                          node, node);
        return;
    case RSS_FORCESEED_NODE_DOWN:
        rss_strbuf_printf(b, ", and its node %s has been silent", node);
        if (m->silent_since_ms > 0)
            rss_strbuf_printf(b, " since %s", since);
        rss_strbuf_printf(b, ", past its dead window, with its kubelet down: the leader judges it dead (its "
                             "members stopped) at its next plan; retry in a few seconds");
        return;
    case RSS_FORCESEED_NODE_NO_HEARTBEAT:
        rss_strbuf_printf(b,
                          ", and its node %s has no heartbeat Lease: the leader cannot judge it; it knows "
                          "once rssd runs on %s",
                          node, node);
        return;
    case RSS_FORCESEED_NODE_UNKNOWN:
        break;
    }
    if (m->node)
        rss_strbuf_printf(b, ", on node %s", m->node);
}

char *rss_forceseed_explain(const char *want, enum rss_forceseed_verdict v,
                            const struct rss_forceseed_member *members, size_t n, int64_t now_ms)
{
    if (v == RSS_FORCESEED_ALLOWED)
        return NULL;
    struct rss_strbuf b = {0};
    rss_strbuf_printf(&b, "force-seed of %s refused: %s", want ? want : "(none)", rss_forceseed_reason(v));
    const struct rss_forceseed_member *r = NULL;
    for (size_t i = 0; i < n && !r; i++)
        if (members[i].live)
            r = &members[i];
    if (v == RSS_FORCESEED_RUNNING && r) {
        rss_strbuf_printf(&b, ": %s ", r->pod ? r->pod : "?");
        report_words(&b, r);
        node_words(&b, r, now_ms);
        struct rss_strbuf others = {0};
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (members[i].live && &members[i] != r) {
                rss_strbuf_printf(&others, "%s%s", k ? ", " : "", members[i].pod ? members[i].pod : "?");
                k++;
            }
        if (k)
            rss_strbuf_printf(&b, "; %zu other member(s) run or may run too: %s", k, rss_strbuf_str(&others));
        free(others.s);
    }
    return b.s;
}
