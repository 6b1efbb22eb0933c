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
