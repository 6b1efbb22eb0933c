/* planner_repair.c -- rows 5 and 6: a failed member is stopped; one at the failure limit is stopped,
 * then its pod deleted. */
#include "planner_internal.h"

void planner_repairs(struct planner *c)
{
    int max = c->spec->max_failures;
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || !m->actionable || m->decided)
            continue;
        const struct rss_last_action *last = &m->in->observed.last;
        bool stop_failed = last->present && last->action == RSS_ACTION_STOP &&
                           (last->result == RSS_RESULT_FAILED || last->result == RSS_RESULT_TIMEOUT);
        if (m->role == RSS_ROLE_FAILED && m->failures >= (unsigned)max && !stop_failed) {
            /* docs/planner.md: a member at the limit is stopped first (its data stays consistent);
             * only a stopped one, or one whose stop failed, is deleted. */
            _cleanup_free_ char *why =
                rss_xasprintf("failed %u times (spec.recovery.maxFailures %d): stop, then replace the pod",
                              m->failures, max);
            planner_issue(c, m, RSS_ACTION_STOP, NULL, 0, why);
            planner_event(c, RSS_EVENT_WARNING, "StoppingFailedMember", m, "%s: %s", m->pod, why);
            planner_decision(c, "stopping %s before replacing it", m->pod);
        } else if ((m->role == RSS_ROLE_FAILED || m->role == RSS_ROLE_STOPPED) &&
                   m->failures >= (unsigned)max) {
            planner_delete_pod(c, m);
            planner_event(
                c, RSS_EVENT_WARNING, "DeletingPod", m,
                "%s failed %u times in a row (spec.recovery.maxFailures %d); deleting the pod so the "
                "StatefulSet recreates it",
                m->pod, m->failures, max);
            planner_decision(c, "deleting %s after %u failures", m->pod, m->failures);
            rss_strbuf_item(&m->note, "pod deleted after %u failures", m->failures);
        } else if (m->role == RSS_ROLE_FAILED) {
            _cleanup_free_ char *why =
                rss_xasprintf("status reported failed (exit code %d); stopping", m->in->observed.status_code);
            planner_issue(c, m, RSS_ACTION_STOP, NULL, 0, why);
            planner_event(c, RSS_EVENT_WARNING, "StoppingFailedMember", m, "%s: %s", m->pod, why);
            planner_decision(c, "stopping failed member %s", m->pod);
        }
    }
}
