/* fence_persist.c -- the agent's fence state across an rssd restart: what it saves after each
 * acknowledged heartbeat and restores at start (rss/fencestate.h says why; finding F3, docs/model.md). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/protocol.h"
#include "agent_internal.h"

/* After a restart that resumed an old fence clock: one probe round of the restored peers (their
 * probes time out after 800 ms each, agent_peers.c) before the failsafe may decide. Within the
 * leader's margin (5 s) past the fence timeout: the verdict still comes after the stop. */
#define RESTORE_GRACE_MS 3000

/* The least of a pod the pod watch needs to make it a member again (agent_member_ingest). */
static cJSON *pod_of(const struct agent_member *m)
{
    cJSON *pod = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(pod, "metadata");
    cJSON_AddStringToObject(meta, "namespace", m->ns);
    cJSON_AddStringToObject(meta, "name", m->pod);
    cJSON_AddStringToObject(meta, "uid", m->uid);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), RSS_LABEL_NAME, m->rss);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", m->container_name);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(pod, "spec"), "containers"), c);
    return pod;
}

void agent_fence_state_save(struct rss_agent *a, int64_t api_ok_mono_ms)
{
    if (!a->state_path || !a->boot_id[0])
        return;
    struct rss_fencestate s = {.pods = cJSON_CreateArray(), .rss = cJSON_CreateArray()};
    snprintf(s.boot_id, sizeof(s.boot_id), "%s", a->boot_id);
    s.api_ok_boot_ms = rss_fencestate_boot_stamp(api_ok_mono_ms, rss_clock_boot_ms(), rss_clock_mono_ms());
    /* The RSS objects go in by reference (no copy of a possibly 1.5 MB object every heartbeat): each
     * one's spec is held (+1 ref) until the file is written, and spec->obj never changes once set. */
    struct agent_spec **held = NULL;
    size_t n_held = 0, cap_held = 0;
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next) {
        if (!m->rss || !m->container_name || !m->uid)
            continue;
        /* Valid or not: a restarted agent fences the members of an invalid one too (fence.c). */
        struct agent_spec *spec = agent_spec_hold(a, m->ns, m->rss);
        if (!spec || !spec->obj) {
            agent_spec_put(a, spec);
            continue; /* fence.c leaves a member without an RSS object alone */
        }
        cJSON_AddItemToArray(s.pods, pod_of(m));
        bool dup = false;
        const cJSON *it;
        cJSON_ArrayForEach(it, s.rss)
        {
            const cJSON *md = rss_json_obj(it, "metadata");
            dup |= !strcmp(rss_json_str(md, "namespace") ?: "", m->ns) &&
                   !strcmp(rss_json_str(md, "name") ?: "", m->rss);
        }
        if (dup) {
            agent_spec_put(a, spec);
            continue;
        }
        cJSON_AddItemReferenceToArray(s.rss, spec->obj);
        *(struct agent_spec **)rss_xarray_push(&held, &n_held, &cap_held, sizeof(*held)) = spec;
    }
    pthread_mutex_unlock(&a->lock);
    s.peers = agent_peers_snapshot(a);
    _cleanup_free_ char *key = agent_peers_private(a);
    if (key)
        snprintf(s.key, sizeof(s.key), "%s", key);
    _cleanup_error_ rss_error_t err = NULL;
    /* A tmpfs write of a few KiB: it cannot hold up the next renewal for long. A failure only costs the
     * restart case (the fence clock then starts at the new process's start, as before). */
    if (rss_fencestate_save(a->state_path, &s, &err) < 0) {
        if (!a->state_failing)
            rss_log_error(RSS_LOG_WARN, &err, "fence state (a restart while cut off would fence late)");
        a->state_failing = true;
    } else if (a->state_failing) {
        rss_log_info("fence state %s written again", a->state_path);
        a->state_failing = false;
    }
    rss_fencestate_clear(&s); /* frees the references, not the objects */
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < n_held; i++)
        agent_spec_put(a, held[i]);
    pthread_mutex_unlock(&a->lock);
    free(held);
}

/* Why one agent per node: two rssd processes on one node (a DaemonSet with maxSurge, two installs
 * sharing the hostPath) each count their own member generations, take actions for the same pods and
 * overwrite each other's fence state (and, since the file keeps it, signing key). The second one waits
 * here until the first exits; the kernel drops the lock with the process, so a killed rssd never
 * leaves a stale one. */
bool agent_state_lock(struct rss_agent *a, const atomic_bool *stop)
{
    if (!a->state_path)
        return true;
    _cleanup_free_ char *path = rss_xstrdup(a->state_path);
    size_t n = strlen(path);
    if (n > 5 && !strcmp(path + n - 5, ".json"))
        path[n - 5] = '\0';
    _cleanup_free_ char *lock = rss_xasprintf("%s.lock", path);
    _cleanup_free_ char *dir = rss_xstrdup(lock);
    *strrchr(dir, '/') = '\0';
    if (*dir && mkdir(dir, 0700) < 0 && errno != EEXIST)
        rss_log_warn("agent lock: cannot create %s: %s", dir, strerror(errno));
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        /* A directory we cannot write: the fence state fails the same way and says so; not a reason to
         * stay down. */
        rss_log_warn("agent lock %s: %s; not checking for another rssd on this node", lock, strerror(errno));
        return true;
    }
    bool said = false;
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            rss_log_warn("agent lock %s: %s; not checking for another rssd on this node", lock,
                         strerror(errno));
            close(fd);
            return true;
        }
        if (!said)
            rss_log_warn("another rssd on this node holds %s: waiting for it to exit before acting", lock);
        said = true;
        if (atomic_load(stop)) {
            close(fd);
            return false;
        }
        atomic_store(&a->loop_tick_ms, rss_clock_mono_ms());
        usleep(500 * 1000);
    }
    if (said)
        rss_log_info("the other rssd on this node is gone: this one takes over");
    a->state_lock_fd = fd;
    return true;
}

void agent_fence_state_restore(struct rss_agent *a)
{
    if (!a->state_path) {
        rss_log_info("no --state-dir: a restart of rssd while this node is cut off starts a new fence clock");
        return;
    }
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_fencestate_boot_id(a->boot_id, &err) < 0) {
        rss_log_error(RSS_LOG_WARN, &err, "fence state not kept (no boot id)");
        a->boot_id[0] = '\0';
        return;
    }
    _cleanup_free_ char *dir = rss_xstrdup(a->state_path);
    *strrchr(dir, '/') = '\0';
    if (*dir && mkdir(dir, 0700) < 0 && errno != EEXIST)
        rss_log_warn("fence state: cannot create %s: %s", dir, strerror(errno));
    struct rss_fencestate s = {0};
    bool have = rss_fencestate_load(a->state_path, &s, &err) == 0;
    if (!have) {
        /* Missing is the normal first start of this boot; garbled is logged and ignored (safe: the
         * clock starts now, the rule before the file). */
        if (rss_error_code(err) != RSS_E_NOT_FOUND)
            rss_log_error(RSS_LOG_WARN, &err, "fence state ignored");
        rss_error_release(&err);
    }
    /* The failsafe's key of this boot's previous process: its public half is what the peers read from
     * our heartbeat Lease, and a process restarted while the API server is gone cannot publish a new
     * one; with a new key no peer could verify it, and every agent of its RSSs would fence. */
    if (have && s.key[0] && !strcmp(s.boot_id, a->boot_id)) {
        if (agent_peers_adopt(a, s.key))
            rss_log_info("failsafe: the signing key of this node's previous rssd is kept (same boot)");
        else
            rss_log_warn("fence state: its signing key is not valid; a new one is used");
    }
    int64_t mono = rss_clock_mono_ms();
    const char *why;
    int64_t ok = rss_fencestate_resume(have ? &s : NULL, a->boot_id, rss_clock_boot_ms(), mono, &why);
    atomic_store(&a->api_ok_ms, ok);
    /* The first fence check judges this start as a wake from ok (rule 18, fence.c wake_check): a
     * predecessor's last renewal older than the fence timeout means no rssd may have run here while the
     * leader judged this node dead (an rssd killed during a partition, restarted after the verdict). The
     * heartbeat thread may renew before that check, so the check gets the restored value, not the current. */
    pthread_mutex_lock(&a->lock);
    a->fence_seen_ok_ms = ok;
    a->fence_seen_off_ms = rss_clock_boot_ms() - mono;
    a->fence_seen_ok_wall_ms = rss_clock_wall_ms() - (mono - ok);
    pthread_mutex_unlock(&a->lock);
    if (ok < mono) {
        pthread_mutex_lock(&a->lock);
        const cJSON *it;
        cJSON_ArrayForEach(it, s.rss) agent_spec_set(a, it);
        cJSON_ArrayForEach(it, s.pods) agent_member_ingest(a, it);
        size_t n = 0;
        for (struct agent_member *m = a->members; m; m = m->next)
            n++;
        pthread_mutex_unlock(&a->lock);
        agent_peers_restore(a, s.peers);
        a->fence_from_ms = mono + RESTORE_GRACE_MS;
        rss_log_info("%s (%lld ms ago; %zu member(s), %d peer(s) restored until the API answers)", why,
                     (long long)(mono - ok), n, cJSON_GetArraySize(s.peers));
    } else {
        rss_log_info("%s", why);
    }
    rss_fencestate_clear(&s);
}
