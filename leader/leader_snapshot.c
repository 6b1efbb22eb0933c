/* leader_snapshot.c -- turns one LIST of member pods, one of their records and the leader's liveness view
 * into planner input. */
#include <stdlib.h>
#include <string.h>

#include "leader_internal.h"
#include "rss/record_codec.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "rss/record.h"

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b)
        o = cJSON_GetObjectItemCaseSensitive(o, b);
    return cJSON_IsString(o) ? o->valuestring : NULL;
}

/* The pod status' containerID of the hook container (the spec's first container). */
static const char *hook_container_id(const struct rss_spec *spec, const cJSON *pod)
{
    const cJSON *first = cJSON_GetArrayItem(spec->containers, 0);
    const char *want = str_at(first, "name", NULL);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(pod, "status");
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItemCaseSensitive(st, "containerStatuses"))
    {
        const char *name = str_at(cs, "name", NULL);
        if (!name || (want && strcmp(name, want)))
            continue;
        const char *id = str_at(cs, "containerID", NULL);
        return id && *id ? id : NULL;
    }
    return NULL;
}

/* What the pod's status says about starting it (the rollout's Pending pods, planner_rollout.c): whether
 * a container of it was ever created (a containerID, a running or terminated state, a restart), the
 * first waiting reason other than the normal ContainerCreating/PodInitializing, and the scheduler's
 * verdict Unschedulable. */
static void start_facts(const cJSON *pod, struct rss_member_input *m)
{
    static const char *const lists[] = {"status.initContainerStatuses", "status.containerStatuses"};
    bool created = false;
    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
        const cJSON *cs;
        cJSON_ArrayForEach(cs, rss_json_path(pod, lists[l]))
        {
            const char *id = rss_json_str(cs, "containerID");
            const cJSON *restarts = rss_json_path(cs, "restartCount");
            created |= (id && *id) || rss_json_obj(cs, "state.running") ||
                       rss_json_obj(cs, "state.terminated") || rss_json_obj(cs, "lastState.terminated") ||
                       (cJSON_IsNumber(restarts) && restarts->valuedouble > 0);
            const char *r = rss_json_str(cs, "state.waiting.reason");
            if (r && *r && strcmp(r, "ContainerCreating") && strcmp(r, "PodInitializing") &&
                !m->waiting_reason)
                m->waiting_reason = r;
        }
    }
    const cJSON *cond;
    cJSON_ArrayForEach(cond, rss_json_path(pod, "status.conditions"))
    {
        const char *t = rss_json_str(cond, "type"), *st = rss_json_str(cond, "status"),
                   *r = rss_json_str(cond, "reason");
        m->unschedulable |=
            t && st && r && !strcmp(t, "PodScheduled") && !strcmp(st, "False") && !strcmp(r, "Unschedulable");
    }
    m->never_started = !created && (!m->phase || !strcmp(m->phase, "Pending"));
}

static void note(struct leader_snapshot *snap, char *msg)
{
    *(char **)rss_xarray_push(&snap->errors, &snap->n_errors, &snap->cap_errors, sizeof(*snap->errors)) = msg;
}

static int by_ordinal(const void *a, const void *b)
{
    const struct rss_member_input *x = a, *y = b;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Rules 16, 17: a member whose pod is gone (drained, deleted, not recreated yet) may be the one that holds
 * the cluster's newest history; its record's primary mark says so. Such a member is in the input with
 * only that mark (pod_exists false), so that no plan in the gap takes an older primary for the newest. */
static void absent_marks(const struct rss_spec *spec, const cJSON *records, struct leader_snapshot *snap)
{
    const cJSON *cm;
    cJSON_ArrayForEach(cm, cJSON_GetObjectItemCaseSensitive(records, "items"))
    {
        const char *ns, *rss, *pod, *mark = str_at(cm, "data", RSS_RECORD_PRIMARY);
        unsigned ord;
        rss_error_t err = NULL;
        if (!mark || !rss_record_member(cm, &ns, &rss, &pod) ||
            rss_spec_pod_ordinal(spec, pod, &ord, &err) < 0) {
            rss_error_release(&err);
            continue;
        }
        bool present = false;
        for (size_t i = 0; i < snap->n_members; i++)
            present |= snap->members[i].ordinal == ord;
        if (present)
            continue;
        snap->members = rss_xrealloc(snap->members, (snap->n_members + 1) * sizeof(*snap->members));
        struct rss_member_input *m = &snap->members[snap->n_members++];
        memset(m, 0, sizeof(*m));
        m->ordinal = ord;
        m->resource_version = str_at(cm, "metadata", "resourceVersion");
        m->primary_record = mark;
        m->active_label = -1;
    }
}

void leader_snapshot_build(const struct rss_spec *spec, const cJSON *pods, const cJSON *records,
                           const struct leader_liveness *lv, int64_t now_ms, int64_t dead_after_ms,
                           struct leader_snapshot *snap)
{
    memset(snap, 0, sizeof(*snap));
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(pods, "items");
    size_t cap = (size_t)cJSON_GetArraySize(items);
    snap->members = rss_xcalloc(cap ? cap : 1, sizeof(*snap->members));
    const cJSON *pod;
    cJSON_ArrayForEach(pod, items)
    {
        const char *name = str_at(pod, "metadata", "name");
        unsigned ord;
        rss_error_t err = NULL;
        if (!name || rss_spec_pod_ordinal(spec, name, &ord, &err) < 0) {
            _cleanup_free_ char *why = err ? rss_error_string(err) : rss_xstrdup("no name");
            rss_error_release(&err);
            note(snap, rss_xasprintf("pod %s skipped: %s", name ? name : "?", why));
            continue;
        }
        bool dup = false;
        for (size_t i = 0; i < snap->n_members; i++)
            dup |= snap->members[i].ordinal == ord;
        if (dup) {
            note(snap, rss_xasprintf("pod %s skipped: duplicate ordinal %u", name, ord));
            continue;
        }
        struct rss_member_input *m = &snap->members[snap->n_members++];
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
        m->ordinal = ord;
        m->pod_exists = true;
        m->pod_uid = str_at(md, "uid", NULL);
        const cJSON *rec = leader_record_find(records, name);
        m->resource_version = rec ? str_at(rec, "metadata", "resourceVersion") : NULL;
        /* Rule 14's hold is about the volume, so it is read whatever incarnation the record last saw. */
        m->hold_record = rec ? str_at(rec, "data", RSS_RECORD_LEFT_OUT) : NULL;
        /* Rule 2's recovery pin likewise: the seed it records may have been issued to another incarnation. */
        m->pin_record = rec ? str_at(rec, "data", RSS_RECORD_RECOVERY_PIN) : NULL;
        /* Rules 16, 17: the primary mark too (it names the incarnation it was written for). */
        m->primary_record = rec ? str_at(rec, "data", RSS_RECORD_PRIMARY) : NULL;
        m->phase = str_at(pod, "status", "phase");
        const cJSON *del = cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp");
        m->deleting = del && !cJSON_IsNull(del);
        m->node = str_at(pod, "spec", "nodeName");
        if (m->node && !*m->node)
            m->node = NULL;
        int64_t silent_ms;
        leader_liveness_node(lv, m->node, now_ms, dead_after_ms, &m->node_alive, &m->node_dead, &silent_ms);
        int64_t dead_at = leader_liveness_dead_at(lv, m->node, now_ms, dead_after_ms);
        if (dead_at && (!snap->replan_at_ms || dead_at < snap->replan_at_ms))
            snap->replan_at_ms = dead_at;
        m->agent_absent = !m->node_alive && leader_liveness_agent_absent(lv, m->node, now_ms, dead_after_ms);
        m->node_silent_ms = silent_ms;
        m->node_dead_in_ms = dead_at ? dead_at - now_ms : 0;
        m->container_id = hook_container_id(spec, pod);
        start_facts(pod, m);
        const char *created = str_at(md, "creationTimestamp", NULL);
        if (created && rss_time_parse_ms(created, &m->created_ms, &err) < 0) {
            rss_error_release(&err);
            m->created_ms = 0;
        }

        const char *active = str_at(cJSON_GetObjectItemCaseSensitive(md, "labels"), RSS_LABEL_ACTIVE, NULL);
        /* Anything but "true"/"false" counts as absent, so the planner rewrites it. */
        m->active_label = !active ? -1 : !strcmp(active, "true") ? 1 : !strcmp(active, "false") ? 0 : -1;
        /* Only compared with the StatefulSet's updateRevision; a forged value can at most get this one
         * member stopped and its pod deleted while all others run, which pods/delete allows anyway. */
        m->revision =
            str_at(cJSON_GetObjectItemCaseSensitive(md, "labels"), "controller-revision-hash", NULL);

        /* The old protocol's annotations: anyone who can patch the pod may have written them. */
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
        if (cJSON_HasObjectItem(ann, RSS_ANNOTATION_DESIRED) ||
            cJSON_HasObjectItem(ann, RSS_ANNOTATION_OBSERVED)) {
            *(const cJSON **)rss_xarray_push(&snap->ignored, &snap->n_ignored, &snap->cap_ignored,
                                             sizeof(*snap->ignored)) = pod;
        }
        const char *d = rss_record_value(rec, RSS_RECORD_DESIRED, RSS_RECORD_DESIRED_FOR, m->pod_uid);
        if (d) {
            if (rss_recordcodec_desired_decode(d, &m->desired, &err) == 0) {
                m->has_desired = true;
            } else {
                /* Undecodable desired counts as none: the fence overwrites it with our epoch. */
                _cleanup_free_ char *why = rss_error_string(err);
                rss_error_release(&err);
                note(snap, rss_xasprintf("pod %s: desired ignored: %s", name, why));
            }
        }
        const char *o = rss_record_value(rec, RSS_RECORD_OBSERVED, RSS_RECORD_OBSERVED_FOR, m->pod_uid);
        if (o) {
            if (rss_recordcodec_observed_decode(o, &m->observed, &err) == 0) {
                m->has_observed = true;
                m->observed_superseded =
                    leader_liveness_superseded(lv, m->node, m->observed.agent, m->observed.time_ms);
            } else {
                char *why = rss_error_string(err);
                rss_error_release(&err);
                note(snap, why); /* owned by snap; the member points at it */
                m->observed_error = why;
            }
        }
    }
    absent_marks(spec, records, snap);
    qsort(snap->members, snap->n_members, sizeof(*snap->members), by_ordinal);
}

void leader_snapshot_clear(struct leader_snapshot *snap)
{
    if (!snap)
        return;
    for (size_t i = 0; i < snap->n_members; i++) {
        if (snap->members[i].has_desired)
            rss_recordcodec_desired_clear(&snap->members[i].desired);
        if (snap->members[i].has_observed)
            rss_recordcodec_observed_clear(&snap->members[i].observed);
    }
    free(snap->members);
    for (size_t i = 0; i < snap->n_errors; i++)
        free(snap->errors[i]);
    free(snap->errors);
    free(snap->ignored);
    memset(snap, 0, sizeof(*snap));
}
