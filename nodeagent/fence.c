/* fence.c -- self-fencing: an agent cut off from the API server that cannot hear every peer hosting the same
 * RSS vouch for it, or that wakes up past its fence timeout without its Node proving that the leader cannot
 * have judged it dead (rule 18), stops its members. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "agent_internal.h"

struct fence_job {
    struct rss_agent *a;
    char *ns, *pod, *uid, *cname;
    struct agent_spec *spec;
    bool may_call_off; /* a shared outage just ended: a last look at the API server may call it off */
    /* A wake's (rule 18): the wall time of the last acknowledged renewal before the gap, which the Node
     * must prove the leader could not have judged past; 0 = an ordinary fence. */
    int64_t wake_ok_wall_ms;
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
/* A bounded look: GET path, each request FENCE_PROBE_MS at most, tried again while look_ms lasts (a
 * connection an outage or a gap left hung may fail the first one). With `refusals`, a refusal (404,
 * 401/403, an unreadable answer) ends it at once. 0 with *out, or -1 with *err and *tries. */
static int look(struct rss_agent *a, const char *path, long look_ms, bool refusals, cJSON **out,
                rss_error_t *err, int *tries)
{
    int64_t end = rss_clock_mono_ms() + look_ms;
    for (*tries = 1;; (*tries)++) {
        int64_t left = end - rss_clock_mono_ms();
        struct rss_kube_request req = {.method = "GET",
                                       .path = path,
                                       .timeout_ms = left < FENCE_PROBE_MS ? left : FENCE_PROBE_MS,
                                       .attempts = 1};
        rss_error_release(err);
        if (rss_kube_call(a->kube, &req, out, err) == 0)
            return 0;
        enum rss_errc c = rss_error_code(*err);
        bool final = refusals && (c == RSS_E_NOT_FOUND || c == RSS_E_UNAUTHORIZED || c == RSS_E_INVALID);
        if (final || end - rss_clock_mono_ms() < 200 || (a->stop && atomic_load(a->stop)))
            return -1;
        usleep(100 * 1000);
    }
}

static bool api_answers(struct rss_agent *a, long look_ms)
{
    _cleanup_free_ char *name = rss_xasprintf("%s%s", RSS_HEARTBEAT_PREFIX, a->node);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", name, NULL);
    _cleanup_json_ cJSON *out = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    int tries;
    if (look(a, path, look_ms, false, &out, &err, &tries) == 0)
        return true;
    rss_log_error(RSS_LOG_WARN, &err, "the last look at the API server (%d request(s) in %ld ms)", tries,
                  look_ms);
    return false;
}

/* Rule 18's look: this node's Node read fresh (a quorum GET) and judged by rss_agent_wake_keep. A request
 * that may succeed if tried again (a timeout, a connection the gap left hung, a 5xx) is, while the look
 * lasts; a refusal (401/403: the leader reads Nodes with the same identity, but not necessarily with the same
 * rights while this agent slept), no Node or an unreadable answer is no proof. */
static bool node_proves_alive(struct rss_agent *a, int64_t ok_wall_ms, long look_ms, char *why, size_t size)
{
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", a->node, NULL);
    _cleanup_json_ cJSON *out = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    int tries;
    if (look(a, path, look_ms, true, &out, &err, &tries) == 0)
        return rss_agent_wake_keep(out, ok_wall_ms, why, size);
    _cleanup_free_ char *msg = rss_error_string(err);
    snprintf(why, size, "Node %s not read (%d request(s) in %ld ms at most): %s", a->node, tries, look_ms,
             msg);
    return false;
}

/* Why the kill: the leader judges this node's members stopped once it has seen the node silent for the
 * fence timeout, the stop timeout, LEADER_KILL_MS and its margin, and then seeds or promotes elsewhere.
 * A `stop` that failed or timed out leaves the application possibly running past that verdict: two
 * primaries. The member container's own command only idles in an RSS pod (hooks start the
 * application), so killing it loses nothing the kubelet's restart does not bring back, idle. */
bool agent_fence_stop(struct rss_agent *a, const struct rss_spec *spec, const char *ns, const char *pod,
                      const char *cid, const char *why)
{
    if (spec) {
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
    } else {
        rss_log_warn("self-fencing: pod %s/%s: %s; its RSS's spec is invalid here, so it has no `stop` "
                     "hook to run: killing container %.12s (CRI StopContainer, timeout 0)",
                     ns, pod, why, cid);
    }
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
    _cleanup_log_scope_ struct rss_log_fields outer =
        rss_log_scope((struct rss_log_fields){.ns = f->ns, .member = f->pod, .action = "fence"});
    _cleanup_free_ char *cid = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    char node_why[768] = "";
    bool called_off = f->wake_ok_wall_ms ? node_proves_alive(a, f->wake_ok_wall_ms, FENCE_LOOK_MS, node_why,
                                                             sizeof(node_why))
                                         : f->may_call_off && api_answers(a, FENCE_LOOK_MS);
    if ((f->may_call_off || f->wake_ok_wall_ms) && !called_off)
        commit(a, f);
    if (called_off && f->wake_ok_wall_ms) {
        rss_log_info("pod %s/%s keeps running after this agent's wake: %s", f->ns, f->pod, node_why);
    } else if (called_off) {
        rss_log_info("self-fencing of pod %s/%s called off: the API server answers this node again", f->ns,
                     f->pod);
    } else if (agent_find_container(a, f->uid, f->cname, &cid, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s: cannot find its container", f->ns,
                      f->pod);
    } else if (!cid) {
        rss_log_info("self-fencing: pod %s/%s has no running container, nothing to stop", f->ns, f->pod);
    } else {
        rss_metrics_inc(RSS_METRIC_FENCE_STOPS);
        _cleanup_free_ char *why =
            f->wake_ok_wall_ms
                ? rss_xasprintf(
                      "self-fencing (rule 18): this agent did not run past its fence timeout (%ld ms) "
                      "and its Node does not prove that the leader could not judge it dead meanwhile: %s",
                      a->fence_timeout_ms, node_why)
                : rss_xasprintf(
                      "self-fencing: the API server has been unreachable for more than %ld ms and this "
                      "agent is isolated from its peers",
                      a->fence_timeout_ms);
        if (f->wake_ok_wall_ms)
            rss_log_warn("self-fencing pod %s/%s after this agent's wake: %s", f->ns, f->pod, node_why);
        /* An invalid spec (rule 6 leaves its members alone while the API server answers) is still the RSS
         * of a member that may run: a spec fixed during the cut, or one a newer rssd's leader can use, has
         * the leader fail over after its dead window all the same (issue 35). Its hooks cannot be trusted
         * (the hook commands may be what is invalid), the kill through CRI can. */
        agent_fence_stop(a, f->spec->valid ? &f->spec->spec : NULL, f->ns, f->pod, cid, why);
    }
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next)
        if (strcmp(m->ns, f->ns) == 0 && strcmp(m->pod, f->pod) == 0 && strcmp(m->uid, f->uid) == 0) {
            if (f->wake_ok_wall_ms)
                m->fence_wake = false;
            if (called_off) {
                m->fence_started = m->fence_committed = false; /* decided again at the next check */
            } else {
                m->fence_done = true;
                /* A wake's fence outside a cut-off period is over: nothing is left for the exit to kill,
                 * and the next cut-off period decides afresh. */
                if (f->wake_ok_wall_ms && !a->fenced)
                    m->fence_started = m->fence_committed = false;
            }
            m->wake = true;
        }
    agent_spec_put(a, f->spec);
    agent_worker_done(a);
    pthread_mutex_unlock(&a->lock);
    fence_job_free(f);
    return NULL;
}

/* Lock held. Starts `stop` for one member on a thread of its own; wake_ok_wall_ms != 0: a wake's fence,
 * which the Node decides (rule 18). */
static void fence_member_start(struct rss_agent *a, struct agent_member *m, struct agent_spec *spec,
                               int64_t now_ms, int64_t wake_ok_wall_ms)
{
    struct fence_job *f = rss_xcalloc(1, sizeof(*f));
    *f = (struct fence_job){
        .a = a,
        .ns = rss_xstrdup(m->ns),
        .pod = rss_xstrdup(m->pod),
        .uid = rss_xstrdup(m->uid),
        .cname = rss_xstrdup(m->container_name),
        .spec = spec,
        .wake_ok_wall_ms = wake_ok_wall_ms,
        .may_call_off =
            !wake_ok_wall_ms &&
            ((m->failsafe_kept && m->vouch_lost_ms && now_ms - m->vouch_lost_ms < a->fence_timeout_ms / 2) ||
             (a->stalled_ms && now_ms - a->stalled_ms < a->fence_timeout_ms / 2))};
    _cleanup_error_ rss_error_t err = NULL;
    if (agent_worker_start(a, fence_member, f, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s", m->ns, m->pod);
        agent_spec_put(a, spec);
        fence_job_free(f);
        return;
    }
    m->fence_started = true;
    m->fence_wake = wake_ok_wall_ms != 0;
    m->fence_committed = !f->may_call_off && !wake_ok_wall_ms;
}

/* How long after a wake a member still waiting for its wake's fence gets one: one whose RSS is not known
 * by then is left alone (rule 5: nothing says it is a member; one whose RSS is invalid is fenced). */
static int64_t wake_pending_ms(const struct rss_agent *a)
{
    return a->fence_timeout_ms > 10000 ? a->fence_timeout_ms : 10000;
}

/* Rule 18. Lock held. Did the fence deadline pass while this agent did not run (SIGSTOP, a frozen cgroup, a
 * paused or suspended VM, a starved CPU), or while no rssd ran (a process that resumed its predecessor's
 * fence clock, fence_persist.c)? Judged by the previous check's copy of the last acknowledged renewal:
 * the heartbeat thread may have renewed since the thaw, before this check, and the current value would
 * hide the gap. Counted on CLOCK_BOOTTIME through `off` (CLOCK_BOOTTIME - CLOCK_MONOTONIC): a suspend
 * stops CLOCK_MONOTONIC, not the leader's clock. The last look at the API server used to decide such a
 * wake, and its answer called the fence off: a node frozen past the leader's dead window thawed with its
 * primary running beside the standby the leader had promoted (issue 35). An answer says nothing about
 * what the leader did while this node slept; only the Node can (rss_agent_wake_keep). */
static void wake_check(struct rss_agent *a, int64_t now_ms, int64_t off)
{
    bool first = !a->fence_check_ms;
    int64_t gap = first ? 0 : now_ms - a->fence_check_ms + (off - a->fence_seen_off_ms);
    int64_t silence = a->fence_seen_ok_ms ? now_ms - a->fence_seen_ok_ms + (off - a->fence_seen_off_ms) : 0;
    enum rss_agent_wake wake = rss_agent_wake_verdict(first, gap, silence, a->fence_timeout_ms);
    if (wake == RSS_AGENT_WAKE_NONE)
        return;
    a->stalled_ms = now_ms;
    if (wake == RSS_AGENT_WAKE_LOOK) {
        /* Shorter than the fence timeout: the leader cannot have judged this node dead (its window is longer
         * still); a fence that comes due soon takes the last look (fence_member_start, may_call_off). */
        if (!first)
            rss_log_warn("this agent did not run for %lld ms (stopped or starved): a last look at the API "
                         "server decides before any self-fencing in the next %ld ms",
                         (long long)gap, a->fence_timeout_ms / 2);
        return;
    }
    char ok[RSS_TIME_LEN];
    rss_time_ms(ok, a->fence_seen_ok_wall_ms);
    if (first)
        rss_log_warn(
            "rssd starts %lld ms after this node's last acknowledged heartbeat renewal (%s), past its "
            "fence timeout (%ld ms): the leader may have judged this node dead while no rssd ran; its "
            "members are stopped unless its Node proves otherwise (rule 18)",
            (long long)silence, ok, a->fence_timeout_ms);
    else
        rss_log_warn(
            "this agent did not run for %lld ms (stopped, starved or frozen) and its last acknowledged "
            "heartbeat renewal (%s) is %lld ms old, past its fence timeout (%ld ms): the leader may "
            "have judged this node dead meanwhile; its members are stopped unless its Node proves "
            "otherwise (rule 18)",
            (long long)gap, ok, (long long)silence, a->fence_timeout_ms);
    a->woke_ms = now_ms;
    a->woke_ok_wall_ms = a->fence_seen_ok_wall_ms;
    for (struct agent_member *m = a->members; m; m = m->next)
        m->wake_pending = true;
}

/* Lock held. Starts the wake's fence of every member waiting for one. A member whose ordinary fence job
 * still takes its last look gets its own once that ended (the look may call the stop off); one whose
 * ordinary fence is decided is being stopped already. */
static void wake_start(struct rss_agent *a, int64_t now_ms)
{
    if (!a->woke_ms)
        return;
    bool expired = now_ms - a->woke_ms > wake_pending_ms(a), waiting = false;
    for (struct agent_member *m = a->members; m; m = m->next) {
        if (!m->wake_pending)
            continue;
        if (m->fence_started && m->fence_committed) {
            m->wake_pending = false;
            continue;
        }
        struct agent_spec *spec = m->fence_started ? NULL : agent_spec_hold(a, m->ns, m->rss);
        if (!spec) {
            if (expired) {
                rss_log_warn("pod %s/%s: no wake's fence %lld ms after the wake (%s): left alone", m->ns,
                             m->pod, (long long)(now_ms - a->woke_ms),
                             m->fence_started ? "its fence still runs" : "no RSS object known");
                m->wake_pending = false;
            }
            waiting |= m->wake_pending;
            continue;
        }
        m->wake_pending = false;
        fence_member_start(a, m, spec, now_ms, a->woke_ok_wall_ms); /* the job keeps the spec reference */
    }
    if (!waiting)
        a->woke_ms = 0;
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
    int64_t off = rss_clock_boot_ms() - rss_clock_mono_ms();
    wake_check(a, now_ms, off);
    a->fence_check_ms = now_ms;
    a->fence_seen_off_ms = off;
    int64_t ok = atomic_load(&a->api_ok_ms);
    a->fence_seen_ok_ms = ok;
    a->fence_seen_ok_wall_ms = rss_clock_wall_ms() - (rss_clock_mono_ms() - ok);
    int64_t silent = now_ms - ok;
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
            if (!m->fence_wake) /* a wake's fence is not about this cut-off period: it runs on */
                m->fence_started = m->fence_committed = false;
            m->failsafe_kept = false;
            m->vouch_lost_ms = 0;
        }
    }
    wake_start(a, now_ms);
    if (!cut_off)
        return;
    for (struct agent_member *m = a->members; m; m = m->next) {
        /* A member whose wake's fence is pending: neither the failsafe nor the API server calls it off. */
        if (m->fence_started || m->wake_pending)
            continue;
        /* Valid or not: see fence_member. No RSS object at all: nothing says the pod is a member (rule 5). */
        struct agent_spec *spec = agent_spec_hold(a, m->ns, m->rss);
        if (!spec)
            continue;
        char why[512], **nodes;
        size_t n_nodes = agent_spec_nodes(a, spec, &nodes);
        bool vouched = agent_peers_vouch(a, nodes, n_nodes, why, sizeof(why));
        agent_nodes_free(nodes, n_nodes);
        if (vouched) {
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
        fence_member_start(a, m, spec, now_ms, 0); /* the job keeps the spec reference */
    }
}

/* Why published: the leader judges this node's members dead once its window, which counts the stop timeout
 * of the spec it plans with, has passed; this agent's fence runs `stop` with the spec it holds. A spec
 * lowered while this node is cut off reaches the leader, not this agent (issue 35), so the leader takes the
 * longer of the two (leader_liveness.c). The longest over every member's RSS: one number, bounded, and the
 * Lease already carries the fence timeout the same way. */
long long agent_fence_stop_ms(struct rss_agent *a)
{
    long long max = 0;
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next) {
        struct agent_spec *spec = m->rss ? agent_spec_hold(a, m->ns, m->rss) : NULL;
        if (spec && spec->valid) {
            /* At most 366 days (the spec's bound): no overflow. */
            uint64_t ms = (spec->spec.hooks[RSS_HOOK_STOP].timeout_ms + 999) / 1000 * 1000;
            if (ms > (uint64_t)max)
                max = (long long)ms;
        }
        agent_spec_put(a, spec);
    }
    pthread_mutex_unlock(&a->lock);
    return max;
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
        bool committed, wake;
    } *p = NULL;
    size_t n = 0, cap = 0;
    bool looking = false, wake_looking = false;
    pthread_mutex_lock(&a->lock);
    int64_t ok_wall_ms = a->woke_ok_wall_ms;
    for (struct agent_member *m = a->members; m; m = m->next)
        if (m->fence_started && !m->fence_done) {
            *(struct pending *)rss_xarray_push(&p, &n, &cap, sizeof(*p)) = (struct pending){
                rss_xstrdup(m->ns), rss_xstrdup(m->pod), rss_xstrdup(m->uid), rss_xstrdup(m->container_name),
                m->fence_committed, m->fence_wake};
            looking |= !m->fence_committed && !m->fence_wake;
            wake_looking |= !m->fence_committed && m->fence_wake;
        }
    pthread_mutex_unlock(&a->lock);
    /* A fence still taking its last look (a stalled or just-started agent) is not decided: the kubelet's
     * SIGTERM of an agent that just woke from a long stop (its liveness probe failed meanwhile) came while
     * that look was finding the API server answering, and the kill stopped a healthy primary. Look once
     * more here: if the API server answers, those members are left running (the next agent decides); if
     * not, they are killed like the decided ones. A wake's fence (rule 18) looks at the Node instead: only
     * its proof leaves them running. */
    bool answers = looking && api_answers(a, FENCE_PROBE_MS);
    char why[768] = "";
    bool proven = wake_looking && node_proves_alive(a, ok_wall_ms, FENCE_PROBE_MS, why, sizeof(why));
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *cid = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        if (!p[i].committed && p[i].wake && proven)
            rss_log_info("pod %s/%s keeps running as rssd stops after its wake: %s", p[i].ns, p[i].pod, why);
        else if (!p[i].committed && !p[i].wake && answers)
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
            if (p[i].wake && !p[i].committed)
                rss_log_warn("self-fencing: pod %s/%s: rssd stops after its wake: %s: container %.12s killed",
                             p[i].ns, p[i].pod, why, cid);
            else
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
