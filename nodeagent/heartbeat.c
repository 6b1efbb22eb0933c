/* heartbeat.c -- the node heartbeat Lease rssd-node-<node>: the leader's evidence that this agent lives,
 * and where the other agents reach it for the failsafe. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "agent_internal.h"

static cJSON *annotations(cJSON *meta)
{
    cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    if (!cJSON_IsObject(ann)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
        ann = cJSON_AddObjectToObject(meta, "annotations");
    }
    return ann;
}

/* How the other agents reach this one for the failsafe (agent_peers.c), and our fence timeout and longest
 * fence `stop`, in our own Lease. Those two are there because the leader's dead verdict must not come
 * before this agent's self-fence is over: a DaemonSet update that raises --fence-timeout runs new agents
 * under the old leader, and a stop timeout lowered while this node is cut off reaches the leader but not
 * us; the leader judges this node with the longer of each (leader_liveness.c). */
static void set_annotations(struct rss_agent *a, cJSON *meta)
{
    char fence[32], stop[32];
    snprintf(fence, sizeof(fence), "%ld", a->fence_timeout_ms);
    snprintf(stop, sizeof(stop), "%lld", agent_fence_stop_ms(a));
    cJSON *ann = annotations(meta);
    cJSON_DeleteItemFromObjectCaseSensitive(ann, RSS_ANNOTATION_FENCE_TIMEOUT);
    cJSON_AddStringToObject(ann, RSS_ANNOTATION_FENCE_TIMEOUT, fence);
    cJSON_DeleteItemFromObjectCaseSensitive(ann, RSS_ANNOTATION_STOP_TIMEOUT);
    cJSON_AddStringToObject(ann, RSS_ANNOTATION_STOP_TIMEOUT, stop);
    cJSON_DeleteItemFromObjectCaseSensitive(ann, RSS_ANNOTATION_VERSION);
    cJSON_AddStringToObject(ann, RSS_ANNOTATION_VERSION, RSS_VERSION);
    _cleanup_free_ char *peer = agent_peers_annotation(a);
    if (!peer)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(ann, RSS_ANNOTATION_PEER);
    cJSON_AddStringToObject(ann, RSS_ANNOTATION_PEER, peer);
}

/* Sets holder, duration, renewTime and our annotations on a Lease object we write. */
static void fill(struct rss_agent *a, cJSON *lease, const char *now, long dur_s)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(lease, "metadata");
    if (cJSON_IsObject(meta))
        set_annotations(a, meta);
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!cJSON_IsObject(spec)) {
        cJSON_DeleteItemFromObjectCaseSensitive(lease, "spec");
        spec = cJSON_AddObjectToObject(lease, "spec");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "holderIdentity");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "leaseDurationSeconds");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "renewTime");
    cJSON_AddStringToObject(spec, "holderIdentity", a->identity);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)dur_s);
    cJSON_AddStringToObject(spec, "renewTime", now);
}

/* One renewal. *last is the Lease as we last wrote it (heartbeat thread only): like the kubelet's node
 * lease, a renewal is one PUT of that object, with its resourceVersion; a GET only comes first when
 * there is none yet or the PUT found the object changed or gone (a conflict). */
static int renew(struct rss_agent *a, const char *coll, const char *item, const char *name, cJSON **last,
                 rss_error_t *err)
{
    char now[RSS_TIME_LEN];
    rss_time_micro(now, NULL);
    long dur_s = rss_agent_heartbeat_lease_s(a->heartbeat_ms, a->heartbeat_misses);
    if (*last) {
        fill(a, *last, now, dur_s);
        cJSON *out = NULL;
        if (rss_kube_update(a->kube, item, *last, &out, err) == 0) {
            cJSON_Delete(*last);
            *last = out;
            return 0;
        }
        cJSON_Delete(*last);
        *last = NULL;
        enum rss_errc c = rss_error_code(*err);
        if (c != RSS_E_CONFLICT && c != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "renewing heartbeat Lease %s/%s", a->ns, name);
        rss_error_release(err); /* changed or deleted meanwhile: read it again */
    }
    _cleanup_json_ cJSON *lease = NULL;
    if (rss_kube_get(a->kube, item, &lease, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return -1;
        rss_error_release(err);
        _cleanup_json_ cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1");
        cJSON_AddStringToObject(obj, "kind", "Lease");
        cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
        cJSON_AddStringToObject(meta, "name", name);
        cJSON_AddStringToObject(meta, "namespace", a->ns);
        fill(a, obj, now, dur_s);
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "acquireTime", now);
        if (rss_kube_create(a->kube, coll, obj, last, err) < 0)
            return rss_error_wrap(err, "creating heartbeat Lease %s/%s", a->ns, name);
        rss_log_info("heartbeat Lease %s/%s created", a->ns, name);
        return 0;
    }
    fill(a, lease, now, dur_s);
    /* PUT with the resourceVersion we read: we are the only writer, a conflict just retries. */
    if (rss_kube_update(a->kube, item, lease, last, err) < 0)
        return rss_error_wrap(err, "renewing heartbeat Lease %s/%s", a->ns, name);
    return 0;
}

int rss_agent_timing_check(long fence_timeout_ms, long heartbeat_ms, rss_error_t *err)
{
    if (heartbeat_ms < 100)
        return rss_error_make(err, RSS_E_INVALID, 0, "heartbeat period %ld ms: at least 100 ms",
                              heartbeat_ms);
    if (fence_timeout_ms / 3 < heartbeat_ms)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "fence timeout %ld ms is under 3 heartbeat periods (%ld ms): a live agent "
                              "would stop its members after a slow renewal",
                              fence_timeout_ms, heartbeat_ms);
    return 0;
}

long rss_agent_heartbeat_lease_s(long heartbeat_ms, int misses)
{
    long s = ((long)misses * heartbeat_ms + 999) / 1000;
    return s < 2 ? 2 : s;
}

long rss_agent_heartbeat_retry_ms(long heartbeat_ms)
{
    return heartbeat_ms < 2000 ? heartbeat_ms : 2000;
}

void *agent_heartbeat(void *arg)
{
    struct rss_agent *a = arg;
    _cleanup_free_ char *name = rss_xasprintf("%s%s", RSS_HEARTBEAT_PREFIX, a->node);
    _cleanup_free_ char *coll = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", NULL, NULL);
    _cleanup_free_ char *item = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", name, NULL);
    _cleanup_json_ cJSON *last = NULL;
    bool failing = false;
    while (!atomic_load(a->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        int64_t sent = rss_clock_mono_ms(); /* see api_ok_ms in agent_internal.h */
        if (renew(a, coll, item, name, &last, &err) == 0) {
            atomic_store(&a->api_ok_ms, sent);
            agent_peers_refresh(a);
            agent_fence_state_save(a, sent);
            if (failing)
                rss_log_info("heartbeat Lease %s/%s renewed again", a->ns, name);
            failing = false;
        } else {
            if (!failing)
                rss_log_error(RSS_LOG_WARN, &err, "heartbeat");
            failing = true;
        }
        long wait = failing ? rss_agent_heartbeat_retry_ms(a->heartbeat_ms) : a->heartbeat_ms;
        for (long t = 0; t < wait && !atomic_load(a->stop); t += 100)
            usleep(100 * 1000);
    }
    return NULL;
}
