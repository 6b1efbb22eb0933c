/* planner_rollout.c -- the rolling update's pods that cannot start: why a pod of the new revision is stuck,
 * and when a pod of an older revision may be deleted without stopping anything. */
#include "planner_internal.h"

/* Waiting reasons a kubelet gives a container that will not start without a change: a missing image
 * (a typo in the tag), a pull that is refused, a reference that cannot be parsed, a configuration that
 * cannot be built. ContainerCreating and PodInitializing are the normal way to start. */
static const char *const STUCK_REASONS[] = {
    "ErrImagePull",        "ImagePullBackOff",           "ErrImageNeverPull",    "InvalidImageName",
    "RegistryUnavailable", "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
};

const char *planner_rollout_stuck(const struct planner_member *m)
{
    if (!m->exists || !m->in || m->deleting || !m->in->never_started)
        return NULL;
    if (m->in->unschedulable)
        return "Unschedulable";
    const char *r = m->in->waiting_reason;
    for (size_t i = 0; r && i < sizeof(STUCK_REASONS) / sizeof(STUCK_REASONS[0]); i++)
        if (!strcmp(r, STUCK_REASONS[i]))
            return r;
    return NULL;
}

/* Why deleting such a pod is safe: the application runs only when a hook started it, and hooks run only
 * in a running container of the pod. No container of this pod was ever created (its status says so),
 * and the leader never issued it a start that is still open (not live, not unresolved, nothing written
 * ahead): nothing of this incarnation runs or ever ran, and its volume is the claim's, which the
 * deletion keeps. Deleting it is what the StatefulSet controller would do itself under RollingUpdate;
 * rssd's StatefulSet is OnDelete, so without this a pod stuck on a broken template (an image tag that
 * does not exist) stays Pending for good after the template is fixed. A kubelet cut off from the API
 * server may have created a container since, unreported: no hook runs in it all the same, since the
 * leader starts a member only after its agent reported it, and the deletion stops it. */
bool planner_rollout_recreatable(const struct planner_member *m)
{
    return m->exists && m->in && !m->deleting && m->outdated && !m->decided && m->in->never_started &&
           !m->live && !m->unresolved && !m->pending && !m->start_inflight && !m->running;
}

/* The members a rolling update still has to replace: 0 when none runs (no new revision known yet, or
 * the StatefulSet is being scaled). */
static size_t rolling(const struct planner *c)
{
    if (!c->in->update_revision || c->sts != c->target)
        return 0;
    size_t n = 0;
    for (int i = 0; i < c->target; i++)
        n += c->m[i].exists && c->m[i].outdated;
    return n;
}

/* An updated member that failed halts the rollout (planner_rollout_step() stops no one while it is down):
 * said once per failure, with the reason, so the admin sees why the other members stay on the old revision.
 */
void planner_rollout_halted(struct planner *c)
{
    const char *rev = c->in->update_revision;
    size_t n_outdated = rolling(c);
    for (int i = 0; i < c->target && n_outdated; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || m->outdated || !m->in->revision || !m->new_failure)
            continue;
        planner_event(
            c, RSS_EVENT_WARNING, "RolloutHalted", m,
            "rolling update to revision %s halted: %s failed after its update (%u failure(s) in a row); "
            "%zu member(s) stay on their revision until it runs again",
            rev, m->pod, m->failures, n_outdated);
        planner_wait(c, true, "RolloutHalted",
                     "rolling update to revision %s halted: %s failed after its update", rev, m->pod);
    }
}

/* Rolling update of the application (the StatefulSet is OnDelete, so only rssd replaces pods): one
 * member at a time, secondaries first, then primaries, highest ordinal first. A member is stopped with
 * its hook, then its pod is deleted (this incarnation only) and the StatefulSet recreates it from the new
 * template; it then joins like any stopped member. Nothing is stopped unless every other member runs, so
 * never more than one member is down, and another primary must stay up. An updated member that does not
 * come back halts the rollout with a Warning until it runs again. */
void planner_rollout_step(struct planner *c)
{
    const char *rev = c->in->update_revision;
    size_t n_outdated = rolling(c);
    if (!n_outdated)
        return;
    struct planner_member *down = NULL, *halted = NULL, *next = NULL, *unstarted = NULL;
    for (int i = 0; i < c->target; i++) {
        struct planner_member *m = &c->m[i];
        if (m->exists && m->outdated && !m->decided && m->actionable && planner_confirmed_stopped(m)) {
            if (!down)
                down = m;
        } else if (planner_rollout_recreatable(m)) {
            if (!unstarted)
                unstarted = m;
        } else if (!m->exists || m->deleting || !m->running || m->unresolved || m->pending) {
            if (!halted)
                halted = m;
        }
    }
    if (down) { /* stopped already (by us, or it crashed): recreating it takes no one else down */
        planner_delete_pod(c, down);
        planner_event(c, RSS_EVENT_NORMAL, "RollingUpdate", down,
                      "%s is stopped; deleting its pod so that the StatefulSet recreates it from revision %s "
                      "(%zu member(s) still on an older revision)",
                      down->pod, rev, n_outdated);
        planner_decision(c, "rolling update: recreating %s from revision %s", down->pod, rev);
        return;
    }
    if (unstarted) { /* a pod of an older template that never started (a fixed typo): see planner_rollout.c */
        const char *why = planner_rollout_stuck(unstarted);
        planner_delete_pod(c, unstarted);
        planner_event(
            c, RSS_EVENT_NORMAL, "RollingUpdate", unstarted,
            "%s never started a container (%s) and its template changed since; deleting its pod so that the "
            "StatefulSet recreates it from revision %s",
            unstarted->pod, why ? why : "Pending", rev);
        planner_decision(c, "rolling update: recreating %s (never started) from revision %s", unstarted->pod,
                         rev);
        return;
    }
    const char *stuck = halted && !halted->outdated ? planner_rollout_stuck(halted) : NULL;
    if (stuck) {
        planner_wait(
            c, true, "RolloutHalted",
            "rolling update to revision %s halted: the pod of %s cannot start (%s); fix the template "
            "(spec.pod), and rssd recreates the pod from the fixed one",
            rev, halted->pod, stuck);
        return;
    }
    if (halted) {
        bool failed =
            halted->exists && !halted->outdated && (halted->failures > 0 || halted->role == RSS_ROLE_FAILED);
        planner_wait(
            c, failed, failed ? "RolloutHalted" : "RollingUpdate",
            "rolling update to revision %s%s: waiting for %s (%s)", rev, failed ? " halted" : "", halted->pod,
            !halted->exists       ? "no pod yet"
            : halted->node_silent ? "its node is silent"
            : failed ? "it failed after the update; fix the template or the member, the rollout resumes "
                       "once it runs"
            : halted->held ? "held back: left out of a recovery, it may hold writes the cluster lacks; "
                             "its NewerThanSeed Warning says how to release it"
                           : rss_role_name(halted->role));
        return;
    }
    for (int pass = 0; pass < 2 && !next; pass++)
        for (int i = c->target - 1; i >= 0 && !next; i--) {
            struct planner_member *m = &c->m[i];
            if (m->outdated && (pass == 1 || m->role == RSS_ROLE_SECONDARY))
                next = m;
        }
    if (!next->actionable || next->decided)
        return;
    if (next->role == RSS_ROLE_PRIMARY && c->n_primaries_up < 2) {
        char why[256] = "";
        /* One primary under PromoteStandby: a switchover first (issue 36), no pod deleted by hand. */
        if (c->spec->promote_standby && c->spec->primaries == 1 &&
            planner_switchover_rollout(c, next, rev, why, sizeof(why)))
            return;
        planner_wait(c, false, "RollingUpdate",
                     "rolling update to revision %s waits: stopping %s would leave no primary running (%s%s)",
                     rev, next->pod, *why ? "no switchover: " : "",
                     *why ? why
                          : "delete the pod by hand to update a single-primary RSS, or set spec.failover "
                            "PromoteStandby: the rollout then switches over");
        return;
    }
    _cleanup_free_ char *why =
        rss_xasprintf("rolling update to revision %s: stop before the pod is recreated", rev);
    planner_issue(c, next, RSS_ACTION_STOP, NULL, 0, why);
    planner_event(c, RSS_EVENT_NORMAL, "RollingUpdate", next,
                  "stopping %s (%s) to recreate it from revision %s; %zu member(s) to go", next->pod,
                  rss_role_name(next->role), rev, n_outdated);
    planner_decision(c, "rolling update: stopping %s", next->pod);
}
