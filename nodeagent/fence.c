/* fence.c -- self-fencing: an agent cut off from the API server that cannot hear every peer hosting the same
 * RSS vouch for it stops its members. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "agent_internal.h"

struct fence_job {
    struct rss_agent *a;
    char *ns, *pod, *uid, *cname;
    struct agent_spec *spec;
    bool may_call_off; /* a shared outage just ended: a last look at the API server may call it off */
};

static void fence_job_free(struct fence_job *f)
{
    free(f->ns);
    free(f->pod);
    free(f->uid);
    free(f->cname);
    free(f);
}

/* How long the last look at the API server before a stop may take: it delays a true self-fence by at
 * most this (plus the loop's 1 s tick), within the leader's margin (LEADER_FENCE_MARGIN, 5 s) past the
 * fence timeout. One request may take FENCE_PROBE_MS; a failed one is tried again while the look lasts
 * (right after an outage the first request can meet a connection the outage left hung). At rssd's exit
 * the look is one request: the kubelet's grace period is short. */
#define FENCE_LOOK_MS  2500
#define FENCE_PROBE_MS 1000

/* The agent's loop checks every second; a longer gap means the agent itself was not running. */
#define FENCE_STALL_MS 5000

/* The end of an API outage races the fence decision: a peer may renew its heartbeat a moment before us,
 * and then vouches "a peer reaches the API server, so this node is the one cut off" while our own
 * renewal still waits out a retry. The 100-cycle chaos run (seed 20261125, cycles 35 and 83) stopped a
 * healthy member 0.2-1.2 s after the thaw that way. So when the failsafe had kept the member in this
 * cut-off period (a shared outage) and the peers only just stopped vouching, the last word is ours: one
 * quorum read of our own heartbeat Lease, tried again for FENCE_LOOK_MS at most (the 100-cycle run of
 * seed 2026, cycle 28, stopped a primary 2.8 s after the thaw with one 1 s request). An answer means the API
 * server is back for us too; the heartbeat renews on its own. Only for half a fence timeout after the
 * vouching stopped: the leader counts our silence from its own return, and a node whose heartbeat still
 * does not renew by then must stop its members before the leader's dead verdict (fence timeout + 5 s,
 * plus the stop timeout and LEADER_KILL_MS for the stop itself). */
static bool api_answers(struct rss_agent *a, long look_ms)
{
    _cleanup_free_ char *name = rss_xasprintf("%s%s", RSS_HEARTBEAT_PREFIX, a->node);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", name, NULL);
    int64_t end = rss_clock_mono_ms() + look_ms;
    for (int tries = 1;; tries++) {
        int64_t left = end - rss_clock_mono_ms();
        struct rss_kube_request req = {.method = "GET",
                                       .path = path,
                                       .timeout_ms = left < FENCE_PROBE_MS ? left : FENCE_PROBE_MS,
                                       .attempts = 1};
        _cleanup_json_ cJSON *out = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_call(a->kube, &req, &out, &err) == 0)
            return true;
        if (end - rss_clock_mono_ms() < 200 || (a->stop && atomic_load(a->stop))) {
            rss_log_error(RSS_LOG_WARN, &err, "the last look at the API server (%d request(s) in %ld ms)",
                          tries, look_ms);
            return false;
        }
        usleep(100 * 1000);
    }
}

/* Why the kill: the leader judges this node's members stopped once it has seen the node silent for the
 * fence timeout, the stop timeout, LEADER_KILL_MS and its margin, and then seeds or promotes elsewhere.
 * A `stop` that failed or timed out leaves the application possibly running past that verdict: two
 * primaries. The member container's own command only idles in an RSS pod (hooks start the
 * application), so killing it loses nothing the kubelet's restart does not bring back, idle. */
bool agent_fence_stop(struct rss_agent *a, const struct rss_spec *spec, const char *ns, const char *pod,
                      const char *cid, const char *why)
{
    struct agent_hook_out h;
    agent_hook_run(a, spec, ns, pod, cid, RSS_HOOK_STOP, NULL, NULL, 0, why, &h);
    enum rss_result res = h.result;
    _cleanup_free_ char *msg = rss_xstrdup(h.msg ? h.msg : "");
    agent_hook_out_clear(&h);
    /* Interrupted: the container is not running (or gone), nothing is left to stop. */
    if (res == RSS_RESULT_OK || res == RSS_RESULT_INTERRUPTED)
        return false;
    rss_log_warn("self-fencing: pod %s/%s: stop %s%s%s; killing container %.12s (CRI StopContainer, "
                 "timeout 0) so that the application is not running when the leader counts it stopped",
                 ns, pod, rss_result_name(res), *msg ? ": " : "", msg, cid);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_cri_stop_container(a->cri, cid, 0, &err) < 0) {
        if (rss_error_code(err) == RSS_E_NOT_FOUND) {
            rss_log_info("self-fencing: pod %s/%s: container %.12s is already gone", ns, pod, cid);
            return false;
        }
        rss_log_error(RSS_LOG_ERROR, &err,
                      "self-fencing: pod %s/%s: cannot kill container %.12s; the application may still run",
                      ns, pod, cid);
        return false;
    }
    rss_metrics_inc(RSS_METRIC_FENCE_KILLS);
    rss_log_warn("self-fencing: pod %s/%s: container %.12s killed; the kubelet restarts it idle", ns, pod,
                 cid);
    return true;
}

/* The job's member: its fence is decided, the last look (if any) found the API server silent. */
static void commit(struct rss_agent *a, const struct fence_job *f)
{
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next)
        if (strcmp(m->ns, f->ns) == 0 && strcmp(m->pod, f->pod) == 0 && strcmp(m->uid, f->uid) == 0)
            m->fence_committed = true;
    pthread_mutex_unlock(&a->lock);
}

/* Runs `stop` in the member's container with CRI only: nothing here may wait for the API server beyond
 * api_answers()' bounded look. */
static void *fence_member(void *arg)
{
    struct fence_job *f = arg;
    struct rss_agent *a = f->a;
    _cleanup_free_ char *cid = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    bool called_off = f->may_call_off && api_answers(a, FENCE_LOOK_MS);
    if (f->may_call_off && !called_off)
        commit(a, f);
    if (called_off) {
        rss_log_info("self-fencing of pod %s/%s called off: the API server answers this node again", f->ns,
                     f->pod);
    } else if (agent_find_container(a, f->uid, f->cname, &cid, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s: cannot find its container", f->ns,
                      f->pod);
    } else if (!cid) {
        rss_log_info("self-fencing: pod %s/%s has no running container, nothing to stop", f->ns, f->pod);
    } else {
        rss_metrics_inc(RSS_METRIC_FENCE_STOPS);
        _cleanup_free_ char *why = rss_xasprintf(
            "self-fencing: the API server has been unreachable for more than %ld ms and this agent is "
            "isolated from its peers",
            a->fence_timeout_ms);
        agent_fence_stop(a, &f->spec->spec, f->ns, f->pod, cid, why);
    }
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next)
        if (strcmp(m->ns, f->ns) == 0 && strcmp(m->pod, f->pod) == 0 && strcmp(m->uid, f->uid) == 0) {
            if (called_off)
                m->fence_started = m->fence_committed = false; /* decided again at the next check */
            else
                m->fence_done = true;
            m->wake = true;
        }
    agent_spec_put(a, f->spec);
    agent_worker_done(a);
    pthread_mutex_unlock(&a->lock);
    fence_job_free(f);
    return NULL;
}

/* Lock held. Starts `stop` for one member on a thread of its own. */
static void fence_member_start(struct rss_agent *a, struct agent_member *m, struct agent_spec *spec,
                               int64_t now_ms)
{
    struct fence_job *f = rss_xcalloc(1, sizeof(*f));
    *f = (struct fence_job){
        .a = a,
        .ns = rss_xstrdup(m->ns),
        .pod = rss_xstrdup(m->pod),
        .uid = rss_xstrdup(m->uid),
        .cname = rss_xstrdup(m->container_name),
        .spec = spec,
        .may_call_off =
            (m->failsafe_kept && m->vouch_lost_ms && now_ms - m->vouch_lost_ms < a->fence_timeout_ms / 2) ||
            (a->stalled_ms && now_ms - a->stalled_ms < a->fence_timeout_ms / 2)};
    _cleanup_error_ rss_error_t err = NULL;
    if (agent_worker_start(a, fence_member, f, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s", m->ns, m->pod);
        agent_spec_put(a, spec);
        fence_job_free(f);
        return;
    }
    m->fence_started = true;
    m->fence_committed = !f->may_call_off;
}

/* Why: the leader counts a node as dead once it has seen its heartbeat unchanged for the fence timeout
 * plus a margin while the leader's own API access worked, and then fails over. A node cut off from the
 * API server and from its peers must have stopped its members by then, or two copies could serve
 * writes. But a node that only lost the API server, while a majority of the agents hosting the same
 * RSS (none of them with API access either) still reach it, is in a control-plane outage: stopping
 * there would turn an API outage into a database outage (it did: 75 s of frozen API stopped every
 * database). So the decision is per RSS, with the peers' signed answers (agent_peers.c). */
void agent_fence_check(struct rss_agent *a, int64_t now_ms)
{
    /* An agent that did not run (SIGSTOP, a starved CPU, a frozen VM) finds its last renewal old on
     * waking: that silence was its own, not the API server's. Stopping its members then made a hung rssd
     * an outage of healthy members (and, for a primary, of its secondaries). The last look at the API
     * server decides, as at the end of a shared outage; a node truly cut off gets no answer and stops
     * them as before, within the leader's margin. A process that just started (after a crash, an OOM
     * kill, an eviction) resumes its predecessor's fence clock (fence_persist.c): the same holds. */
    if (!a->fence_check_ms || now_ms - a->fence_check_ms > FENCE_STALL_MS) {
        if (a->fence_check_ms)
            rss_log_warn("this agent did not run for %lld ms (stopped or starved): a last look at the API "
                         "server decides before any self-fencing",
                         (long long)(now_ms - a->fence_check_ms));
        a->stalled_ms = now_ms;
    }
    a->fence_check_ms = now_ms;
    int64_t silent = now_ms - atomic_load(&a->api_ok_ms);
    /* fence_from_ms: after a restart that resumed an old fence clock, the restored peers get a probe
     * round first, or a control-plane outage would stop members before anyone could vouch. */
    bool cut_off = silent > a->fence_timeout_ms && now_ms >= a->fence_from_ms;
    if (cut_off != a->fenced) {
        a->fenced = cut_off;
        rss_metrics_set(RSS_METRIC_CUT_OFF, cut_off);
        if (cut_off)
            rss_log_warn("no successful API call for %lld ms (fence timeout %ld ms): asking the other agents "
                         "before stopping anything",
                         (long long)silent, a->fence_timeout_ms);
        else
            rss_log_info("the API server is reachable again: self-fencing ends; members are reported as they "
                         "are, the leader decides what starts");
        for (struct agent_member *m = a->members; m; m = m->next) {
            m->wake = true;
            m->fence_started = m->fence_committed = false;
            m->failsafe_kept = false;
            m->vouch_lost_ms = 0;
        }
    }
    if (!cut_off)
        return;
    for (struct agent_member *m = a->members; m; m = m->next) {
        if (m->fence_started)
            continue;
        struct agent_spec *spec = agent_spec_get(a, m->ns, m->rss);
        if (!spec)
            continue;
        char why[512];
        if (agent_peers_vouch(a, spec->nodes, spec->n_nodes, why, sizeof(why))) {
            if (!m->failsafe_kept)
                rss_log_warn(
                    "pod %s/%s keeps running although the API server has been unreachable for %lld ms "
                    "(failsafe: %s): a control-plane outage, not an isolated node",
                    m->ns, m->pod, (long long)silent, why);
            m->failsafe_kept = true;
            agent_spec_put(a, spec);
            continue;
        }
        if (m->failsafe_kept && !m->vouch_lost_ms)
            m->vouch_lost_ms = now_ms;
        rss_log_warn("self-fencing pod %s/%s: the API server has been unreachable for %lld ms and %s", m->ns,
                     m->pod, (long long)silent, why);
        fence_member_start(a, m, spec, now_ms); /* the job keeps the spec reference */
    }
}

bool agent_fenced(struct rss_agent *a)
{
    pthread_mutex_lock(&a->lock);
    bool f = a->fenced;
    pthread_mutex_unlock(&a->lock);
    return f;
}

/* The agent is stopping (SIGTERM: an eviction, a DaemonSet update, the kubelet's liveness probe) while a
 * fence `stop` still runs: the fence was decided, and the leader will count this node's members stopped
 * once its dead window has passed, whether this process lives to see the `stop` end or not. The next
 * process may come too late (a crash-loop back-off; a CI run saw it start only after the heal, its primary
 * still running beside the one the leader had seeded meanwhile). So the fence ends here: each such
 * member's container is killed before the process exits. */
void agent_fence_finish(struct rss_agent *a)
{
    struct pending {
        char *ns, *pod, *uid, *cname;
        bool committed;
    } *p = NULL;
    size_t n = 0, cap = 0;
    bool looking = false;
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next)
        if (m->fence_started && !m->fence_done) {
            *(struct pending *)rss_xarray_push(&p, &n, &cap, sizeof(*p)) =
                (struct pending){rss_xstrdup(m->ns), rss_xstrdup(m->pod), rss_xstrdup(m->uid),
                                 rss_xstrdup(m->container_name), m->fence_committed};
            looking |= !m->fence_committed;
        }
    pthread_mutex_unlock(&a->lock);
    /* A fence still taking its last look (a stalled or just-started agent) is not decided: the kubelet's
     * SIGTERM of an agent that just woke from a long stop (its liveness probe failed meanwhile) came while
     * that look was finding the API server answering, and the kill stopped a healthy primary. Look once
     * more here: if the API server answers, those members are left running (the next agent decides); if
     * not, they are killed like the decided ones. */
    bool answers = looking && api_answers(a, FENCE_PROBE_MS);
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *cid = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        if (!p[i].committed && answers)
            rss_log_info(
                "self-fencing of pod %s/%s called off as rssd stops: the API server answers this node",
                p[i].ns, p[i].pod);
        else if (agent_find_container(a, p[i].uid, p[i].cname, &cid, &err) < 0)
            rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s: cannot find its container", p[i].ns,
                          p[i].pod);
        else if (cid && rss_cri_stop_container(a->cri, cid, 0, &err) < 0 &&
                 rss_error_code(err) != RSS_E_NOT_FOUND)
            rss_log_error(
                RSS_LOG_ERROR, &err,
                "self-fencing: pod %s/%s: cannot kill container %.12s; the application may still run",
                p[i].ns, p[i].pod, cid);
        else if (cid) {
            rss_metrics_inc(RSS_METRIC_FENCE_KILLS);
            rss_log_warn(
                "self-fencing: pod %s/%s: rssd stops while its fence stop runs: container %.12s killed",
                p[i].ns, p[i].pod, cid);
        }
        free(p[i].ns);
        free(p[i].pod);
        free(p[i].uid);
        free(p[i].cname);
    }
    free(p);
}
