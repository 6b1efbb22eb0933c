/* test_agent_fence.c -- the agent's self-fence run in process against kubesim with a fake CRI: rssd stopping
 * (SIGTERM) while a fence runs, and an agent waking up past its fence timeout (rule 18).
 *
 * At exit: an agent woken from a long SIGSTOP starts a fence whose last look finds the API server answering;
 * the kubelet's liveness SIGTERM, sent while it was stopped, arrives during that look. The kill at exit
 * stopped a healthy primary (e2e safety_primary hang_primary_agent, once). The decided fences' containers
 * are killed, a fence still taking its last look only if the API server does not answer.
 *
 * On a wake (issue 35): a node frozen past the leader's dead window thawed, its agent took one look at the
 * API server, got an answer and left its primary running beside the standby the leader had promoted. Now
 * the fence check, called with a jump in time past the fence timeout, stops the member unless this node's
 * Node proves that the leader could not have judged it dead: Ready=True since before the last renewal.
 *
 * Issue 35's suspected items, reproduced here: a member whose RSS spec this agent holds as invalid was never
 * fenced (a spec fixed during a cut, a newer rssd's leader); the failsafe asked only the nodes of the status
 * it held, not a node a member record names (a member placed there just before the cut); the heartbeat
 * Lease did not publish the stop timeout the agent's fence would use (the leader's side:
 * test_leader test_liveness_published_stop).
 *
 * Judged by the fake CRI's counts: the member's `stop` hook is `fail` (exit 3), so a stop that runs is
 * followed by a CRI StopContainer, counted. The API server is kubesim (answers) or a closed loopback port
 * (does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_internal.h"
#include "fake_cri.h"
#include "rss/agent.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/cri.h"
#include "rss/fencestate.h"
#include "rss/kube.h"
#include "rss/protocol.h"
#include "rss/record.h"
#include "simfix.h"

#define NS   "rssd-system"
#define NODE "node-1"

static struct simfix sim;
static struct rss_kube *kube, *dead_kube;
static struct fake_cri *fake;
static struct rss_cri *cri;
static int64_t node_created_ms; /* wall clock */

/* The member's RSS: `stop` fails (exit 3 in the fake CRI), so a stop that runs ends in a counted kill; its
 * only member node is this one, so the failsafe would keep it through any API outage. */
static const char rss_obj[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"prod\",\"uid\":\"r1\"}"
    ","
    "\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"echo\",\"5\"]},"
    "\"primary\":{\"command\":[\"echo\",\"up\"]},\"status\":{\"command\":[\"echo\"]},"
    "\"stop\":{\"command\":[\"fail\"],\"timeout\":\"2s\"}},\"containers\":[{\"name\":\"app\",\"image\":"
    "\"busybox\"}]}},"
    "\"status\":{\"memberStatus\":[{\"node\":\"" NODE "\"}]}}";

static const char pod_obj[] =
    "{\"metadata\":{\"name\":\"rss-db-0\",\"namespace\":\"prod\",\"uid\":\"u0\","
    "\"labels\":{\"rss.clusterlabs.org/name\":\"db\"}},"
    "\"spec\":{\"nodeName\":\"" NODE "\",\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}";

/* The same RSS as this agent's rssd cannot use it (a field from a newer rssd), with a second member node
 * (node-2, whose agent never answers: the failsafe cannot keep it). */
static const char rss_invalid_obj[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"prod\",\"uid\":\"r1\"}"
    ",\"spec\":{\"failover\":\"FromANewerRssd\",\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"echo\","
    "\"5\"]},"
    "\"primary\":{\"command\":[\"echo\",\"up\"]},\"status\":{\"command\":[\"echo\"]},"
    "\"stop\":{\"command\":[\"echo\",\"stopped\"],\"timeout\":\"30s\"}},\"containers\":[{\"name\":\"app\","
    "\"image\":\"busybox\"}]}},"
    "\"status\":{\"memberStatus\":[{\"node\":\"" NODE "\"},{\"node\":\"node-2\"}]}}";

/* An agent with the member pod rss-db-0 of RSS prod/db as `rss` (state_dir: its fence state, NULL none). */
static struct rss_agent *agent_with_rss(struct rss_kube *k, const char *state_dir, const char *rss)
{
    struct rss_agent_config cfg = {.kube = k, .cri = cri, .node = NODE, .ns = NS, .state_dir = state_dir};
    struct rss_agent *a = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_agent_new(&cfg, &a, &err), &err, "rss_agent_new");
    _cleanup_json_ cJSON *pod = cJSON_Parse(pod_obj);
    _cleanup_json_ cJSON *cr = cJSON_Parse(rss);
    assert_non_null(pod);
    assert_non_null(cr);
    pthread_mutex_lock(&a->lock);
    agent_spec_set(a, cr);
    agent_member_ingest(a, pod);
    assert_non_null(a->members);
    pthread_mutex_unlock(&a->lock);
    return a;
}

static struct rss_agent *agent_with_member(struct rss_kube *k, const char *state_dir)
{
    return agent_with_rss(k, state_dir, rss_obj);
}

/* An agent with one member pod whose fence started; committed = its decision is taken. */
static struct rss_agent *agent_with_fence(struct rss_kube *k, bool committed)
{
    struct rss_agent *a = agent_with_member(k, NULL);
    pthread_mutex_lock(&a->lock);
    a->members->fence_started = true;
    a->members->fence_committed = committed;
    pthread_mutex_unlock(&a->lock);
    return a;
}

static int finish_kills(struct rss_kube *k, bool committed)
{
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_fence(k, committed);
    agent_fence_finish(a);
    rss_agent_free(a);
    return fake_cri_stops(fake) - before;
}

static void test_finish_decided_kills(void **state)
{
    (void)state;
    assert_int_equal(finish_kills(kube, true), 1); /* decided: killed, whatever the API server says */
    assert_int_equal(finish_kills(dead_kube, true), 1);
}

static void test_finish_looking_api_answers(void **state)
{
    (void)state;
    assert_int_equal(finish_kills(kube, false), 0); /* the look would call it off: left running */
}

static void test_finish_looking_api_silent(void **state)
{
    (void)state;
    assert_int_equal(finish_kills(dead_kube, false), 1); /* cut off indeed: killed */
}

/* This node's Node: Ready=True since `since` (NULL: now, as the kubelet writes it when Ready comes back). */
static void node_ready_since(const char *since)
{
    char now[RSS_TIME_LEN];
    rss_time_seconds(now, NULL);
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", NODE, NULL);
    _cleanup_free_ char *text =
        rss_xasprintf("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
                      "\"KubeletReady\",\"lastTransitionTime\":\"%s\"}]}}",
                      since ? since : now);
    _cleanup_json_ cJSON *patch = cJSON_Parse(text);
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_kube_merge_patch_status(kube, path, patch, NULL, &err), &err, "the Node's status");
}

#define LONG_AGO "2020-01-01T00:00:00Z"

static void wait_workers(struct rss_agent *a)
{
    for (int i = 0; i < 200 && rss_agent_busy_workers(a) > 0; i++)
        usleep(50 * 1000);
    assert_int_equal(rss_agent_busy_workers(a), 0);
}

/* The agent checks, then does not run for its fence timeout + 5 s (the leader may have judged its node dead
 * meanwhile); at the next check its heartbeat has renewed since the thaw (`renewed`: the heartbeat thread
 * ran first) or not yet. Returns how many times the member's `stop` ran (each ends in a counted kill). */
static int wake(const char *since, bool renewed)
{
    node_ready_since(since);
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_member(kube, NULL);
    pthread_mutex_lock(&a->lock);
    int64_t t0 = rss_clock_mono_ms();
    agent_fence_check(a, t0);
    int64_t thaw = t0 + a->fence_timeout_ms + 5000;
    if (renewed)
        atomic_store(&a->api_ok_ms, thaw - 100);
    agent_fence_check(a, thaw);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
    return fake_cri_stops(fake) - before;
}

/* rule 12: rssd alone hung, its kubelet fine: the leader never judged the node dead, nothing is stopped. */
static void test_wake_node_ready_keeps(void **state)
{
    (void)state;
    assert_int_equal(wake(LONG_AGO, true), 0);
    assert_int_equal(wake(LONG_AGO, false), 0);
}

/* The whole node froze: Ready was Unknown meanwhile and is True again since the thaw. The API server
 * answers (kubesim), and the failsafe would keep the member (its RSS has no other node): stopped anyway. */
static void test_wake_node_transition_fences(void **state)
{
    (void)state;
    assert_int_equal(wake(NULL, true), 1);
    assert_int_equal(wake(NULL, false), 1);
}

/* No Node to read (an API server that does not answer): no proof, stopped. */
static void test_wake_no_node_fences(void **state)
{
    (void)state;
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_member(dead_kube, NULL);
    pthread_mutex_lock(&a->lock);
    int64_t t0 = rss_clock_mono_ms();
    agent_fence_check(a, t0);
    agent_fence_check(a, t0 + a->fence_timeout_ms + 5000);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
    assert_int_equal(fake_cri_stops(fake) - before, 1);
}

/* A gap shorter than the fence timeout is no wake: the leader's window is longer still. */
static void test_short_gap_no_wake(void **state)
{
    (void)state;
    node_ready_since(NULL);
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_member(kube, NULL);
    pthread_mutex_lock(&a->lock);
    int64_t t0 = rss_clock_mono_ms();
    agent_fence_check(a, t0);
    atomic_store(&a->api_ok_ms, t0 + a->fence_timeout_ms - 2000);
    agent_fence_check(a, t0 + a->fence_timeout_ms - 1000);
    assert_false(a->members->fence_started);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
    assert_int_equal(fake_cri_stops(fake) - before, 0);
}

/* A new rssd process resumes its predecessor's fence clock (fence_persist.c), whose last renewal was
 * `age_ms` ago: past the fence timeout that is a wake too (an rssd killed during a partition and restarted
 * after the leader's verdict, the API server answering again; or the liveness probe's restart of a hung one).
 */
static int restart(const char *since, int64_t age_ms)
{
    node_ready_since(since);
    /* The predecessor's renewal comes after the Node's creation, by more than its second. */
    int64_t early = node_created_ms + 2000 - (rss_clock_wall_ms() - age_ms);
    if (early > 0)
        usleep((useconds_t)early * 1000);
    setenv("RSS_BOOT_ID", "boot-h2-test", 1);
    static int n;
    _cleanup_free_ char *dir = rss_xasprintf("%s/state-%d", sim.dir, n++);
    _cleanup_free_ char *file = rss_xasprintf("%s/fence-" NODE ".json", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    struct rss_fencestate s = {.api_ok_boot_ms = rss_clock_boot_ms() - age_ms,
                               .pods = cJSON_CreateArray(),
                               .rss = cJSON_CreateArray(),
                               .peers = cJSON_CreateArray()};
    snprintf(s.boot_id, sizeof(s.boot_id), "boot-h2-test");
    cJSON_AddItemToArray(s.pods, cJSON_Parse(pod_obj));
    cJSON_AddItemToArray(s.rss, cJSON_Parse(rss_obj));
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_fencestate_save(file, &s, &err), &err, "the fence state");
    rss_fencestate_clear(&s);
    int before = fake_cri_stops(fake);
    struct rss_agent_config cfg = {.kube = kube,
                                   .cri = cri,
                                   .node = NODE,
                                   .ns = NS,
                                   .state_dir = dir,
                                   .fence_timeout_ms = 3000,
                                   .heartbeat_ms = 1000};
    struct rss_agent *a = NULL;
    SIMFIX_CHECK(rss_agent_new(&cfg, &a, &err), &err, "rss_agent_new");
    agent_fence_state_restore(a);
    pthread_mutex_lock(&a->lock);
    assert_non_null(a->members);
    atomic_store(&a->api_ok_ms, rss_clock_mono_ms()); /* the new heartbeat renewed before the first check */
    agent_fence_check(a, rss_clock_mono_ms());
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
    unsetenv("RSS_BOOT_ID");
    return fake_cri_stops(fake) - before;
}

static void test_restart_wake(void **state)
{
    (void)state;
    /* fence timeout 3 s */
    assert_int_equal(restart(LONG_AGO, 4000), 0); /* the liveness probe's restart of a hung rssd */
    assert_int_equal(restart(NULL, 4000), 1);     /* the node was cut off too: the known gap, closed */
    assert_int_equal(restart(NULL, 1000), 0);     /* within the fence timeout: the ordinary clock runs on */
}

/* rssd stopping while a wake's fence still reads the Node: killed unless the Node proves it alive. */
static int finish_wake(struct rss_kube *k, const char *since)
{
    node_ready_since(since);
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_fence(k, false);
    pthread_mutex_lock(&a->lock);
    a->members->fence_wake = true;
    a->woke_ok_wall_ms = rss_clock_wall_ms() - 2000;
    pthread_mutex_unlock(&a->lock);
    agent_fence_finish(a);
    rss_agent_free(a);
    return fake_cri_stops(fake) - before;
}

static void test_finish_wake(void **state)
{
    (void)state;
    assert_int_equal(finish_wake(kube, LONG_AGO), 0);
    assert_int_equal(finish_wake(kube, NULL), 1);
    assert_int_equal(finish_wake(dead_kube, LONG_AGO), 1);
}

/* The API server unreachable past the fence timeout (dead_kube: the last look finds it silent too): one
 * fence check. Returns how many StopContainer calls (kills) followed, and in *execs how many ExecSync calls
 * (hooks) ran meanwhile. */
static int cut_off(struct rss_agent *a, int *execs)
{
    int before = fake_cri_stops(fake), execs_before = fake_cri_execs(fake);
    pthread_mutex_lock(&a->lock);
    int64_t now = rss_clock_mono_ms();
    atomic_store(&a->api_ok_ms, now - a->fence_timeout_ms - 1000);
    agent_fence_check(a, now);
    assert_true(a->fenced);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    if (execs)
        *execs = fake_cri_execs(fake) - execs_before;
    return fake_cri_stops(fake) - before;
}

/* An RSS this agent holds as invalid (rule 6 leaves its members alone while the API server answers): cut
 * off, its member was never stopped (agent_fence_check skipped it), while the leader, holding a spec it can
 * use, fails over after its dead window. Now its container is killed through CRI, no hook run (the hooks of
 * an invalid spec cannot be trusted): a StopContainer, no ExecSync. */
static void test_invalid_spec_fenced(void **state)
{
    (void)state;
    struct rss_agent *a = agent_with_rss(dead_kube, NULL, rss_invalid_obj);
    pthread_mutex_lock(&a->lock);
    struct agent_spec *held = agent_spec_find(a, "prod/db");
    assert_non_null(held);
    assert_false(held->valid);
    pthread_mutex_unlock(&a->lock);
    assert_int_equal(agent_fence_stop_ms(a), 0); /* killed at once: no stop timeout to publish */
    /* Counted by kind, not in all: another thread of the agent may call CRI meanwhile (a loaded CI
     * rehearsal saw 3 calls where 2 were expected). */
    int execs = -1;
    assert_int_equal(cut_off(a, &execs), 1);
    assert_int_equal(execs, 0);
    rss_agent_free(a);
}

/* The same on a wake past the fence timeout (rule 18): a Node that does not prove it alive, an invalid
 * spec: killed. */
static void test_invalid_spec_wake_fenced(void **state)
{
    (void)state;
    node_ready_since(NULL);
    int before = fake_cri_stops(fake);
    struct rss_agent *a = agent_with_rss(kube, NULL, rss_invalid_obj);
    pthread_mutex_lock(&a->lock);
    int64_t t0 = rss_clock_mono_ms();
    agent_fence_check(a, t0);
    int64_t thaw = t0 + a->fence_timeout_ms + 5000;
    atomic_store(&a->api_ok_ms, thaw - 100);
    agent_fence_check(a, thaw);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
    assert_int_equal(fake_cri_stops(fake) - before, 1);
}

/* A member record of RSS prod/db's member `pod`, its `observed` written by the agent of `node`. */
static void add_record(struct rss_agent *a, const char *pod, const char *node)
{
    _cleanup_json_ cJSON *cm = rss_record_new("prod", "db", pod);
    assert_non_null(cm);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "resourceVersion", "7");
    cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED,
                            "{\"role\":\"stopped\",\"time\":\"2026-12-06T10:00:00Z\"}");
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_FOR, "u-new");
    if (node)
        cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_NODE, node);
    pthread_mutex_lock(&a->lock);
    agent_record_ingest(a, cm);
    pthread_mutex_unlock(&a->lock);
}

/* The failsafe asked only the nodes of the RSS status this agent held. A member placed on node-4 just before
 * the cut (its record, written by node-4's agent, arrived; the status naming node-4 did not): every node
 * asked (this one alone) vouched, and the member kept running while node-4's member could run beside a
 * promotion. The record's node joins the peers: node-4 does not answer, so the member is stopped. A record
 * of an older rssd (no node) changes nothing: kept, as before. */
static void test_failsafe_asks_record_nodes(void **state)
{
    (void)state;
    struct rss_agent *a = agent_with_member(dead_kube, NULL);
    add_record(a, "rss-db-2", NULL);
    assert_int_equal(cut_off(a, NULL), 0); /* every node of the status (this one) vouches: kept */
    rss_agent_free(a);

    a = agent_with_member(dead_kube, NULL);
    add_record(a, "rss-db-2", "node-4");
    char **nodes = NULL;
    size_t n = agent_peers_wanted(a, &nodes);
    assert_int_equal(n, 1); /* its Lease is read while the API server answers */
    assert_string_equal(nodes[0], "node-4");
    agent_nodes_free(nodes, n);
    assert_true(agent_peer_wanted(a, "node-4")); /* and the prober asks it */
    assert_int_equal(cut_off(a, NULL), 1);
    rss_agent_free(a);
}

/* The heartbeat Lease publishes the longest stop timeout the agent's fence would use (rounded up to whole
 * seconds, as the runtime gets it), over every member's RSS: here 2 s (prod/db) and 25.5 s (prod/kv). */
static void test_publishes_stop_timeout(void **state)
{
    (void)state;
    struct rss_agent *a = agent_with_member(kube, NULL);
    assert_int_equal(agent_fence_stop_ms(a), 2000);
    /* prod/kv: its stop timeout 25.5 s, its member rss-kv-0 here too. */
    static const char kv[] =
        "{\"metadata\":{\"name\":\"kv\",\"namespace\":\"prod\",\"uid\":\"r2\"},\"spec\":{\"pod\":{"
        "\"commands\":"
        "{\"sequence\":{\"command\":[\"echo\",\"5\"]},\"primary\":{\"command\":[\"echo\",\"up\"]},\"status\":"
        "{\"command\":[\"echo\"]},\"stop\":{\"command\":[\"fail\"],\"timeout\":\"25500ms\"}},\"containers\":"
        "[{\"name\":\"app\",\"image\":\"busybox\"}]}}}";
    static const char kv_pod[] =
        "{\"metadata\":{\"name\":\"rss-kv-0\",\"namespace\":\"prod\",\"uid\":\"u9\","
        "\"labels\":{\"rss.clusterlabs.org/name\":\"kv\"}},"
        "\"spec\":{\"nodeName\":\"" NODE "\",\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}";
    _cleanup_json_ cJSON *cr = cJSON_Parse(kv), *pod = cJSON_Parse(kv_pod);
    assert_non_null(cr);
    assert_non_null(pod);
    pthread_mutex_lock(&a->lock);
    agent_spec_set(a, cr);
    agent_member_ingest(a, pod);
    pthread_mutex_unlock(&a->lock);
    assert_int_equal(agent_fence_stop_ms(a), 26000);

    atomic_bool stop = false;
    a->stop = &stop;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, agent_heartbeat, a), 0);
    _cleanup_free_ char *path =
        rss_kube_path("coordination.k8s.io/v1", NS, "leases", "rssd-node-" NODE, NULL);
    const char *got = NULL;
    _cleanup_json_ cJSON *lease = NULL;
    for (int i = 0; i < 50 && !got; i++) {
        usleep(100 * 1000);
        cJSON_Delete(lease);
        lease = NULL;
        _cleanup_error_ rss_error_t err = NULL;
        SIMFIX_CHECK(rss_kube_get(kube, path, &lease, &err), &err, "the heartbeat Lease");
        got = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "metadata"),
                                             "annotations"),
            RSS_ANNOTATION_STOP_TIMEOUT));
    }
    atomic_store(&stop, true);
    pthread_join(th, NULL);
    assert_non_null(got);
    assert_string_equal(got, "26000");
    rss_agent_free(a);
}

static int setup(void **state)
{
    (void)state;
    if (simfix_start_kube(&sim, KUBESIM_BIN, &kube) < 0)
        return -1;
    rss_error_t err = NULL;
    /* A kubeconfig naming a loopback port nobody listens on: every call fails at once. */
    int port = 0, fd = simfix_listen_loopback(1, &port);
    if (fd < 0)
        return -1;
    close(fd);
    _cleanup_free_ char *dead = rss_xasprintf("%s/dead.kubeconfig", sim.dir);
    _cleanup_free_ char *text = rss_xasprintf(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:%d\n"
        "    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: x\n"
        "  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
        port);
    if (simfix_write(dead, text) < 0 || rss_kube_new(dead, &dead_kube, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    _cleanup_free_ char *dir = rss_xasprintf("%s/cri", sim.dir);
    if (mkdir(dir, 0700) < 0)
        return -1;
    _cleanup_free_ char *sock = rss_xasprintf("%s/cri.sock", dir);
    fake = fake_cri_start(sock);
    struct rss_cri_options opts = {.call_timeout_ms = 2000};
    if (!fake || rss_cri_new(sock, &opts, &cri, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    /* The look reads this node's own heartbeat Lease: it answers only when the Lease is there. */
    _cleanup_json_ cJSON *ns = cJSON_Parse("{\"metadata\":{\"name\":\"" NS "\"}}");
    _cleanup_json_ cJSON *lease = cJSON_Parse("{\"metadata\":{\"name\":\"rssd-node-" NODE "\"},"
                                              "\"spec\":{\"holderIdentity\":\"" NODE "\"}}");
    _cleanup_free_ char *nspath = rss_kube_path("v1", NULL, "namespaces", NULL, NULL);
    _cleanup_free_ char *lpath = rss_kube_path("coordination.k8s.io/v1", NS, "leases", NULL, NULL);
    if (rss_kube_create(kube, nspath, ns, NULL, &err) < 0 ||
        rss_kube_create(kube, lpath, lease, NULL, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    /* This node's Node, created more than a second (its creationTimestamp's granularity) before any agent
     * here renews or is made. */
    _cleanup_json_ cJSON *node =
        cJSON_Parse("{\"metadata\":{\"name\":\"" NODE "\"},\"status\":{\"conditions\":"
                    "[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":"
                    "\"" LONG_AGO "\"}]}}");
    _cleanup_free_ char *npath = rss_kube_path("v1", NULL, "nodes", NULL, NULL);
    if (rss_kube_create(kube, npath, node, NULL, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    node_created_ms = rss_clock_wall_ms();
    usleep(1100 * 1000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rss_cri_free(cri);
    fake_cri_stop(fake);
    rss_kube_free(kube);
    rss_kube_free(dead_kube);
    simfix_stop(&sim);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_decided_kills),
        cmocka_unit_test(test_finish_looking_api_answers),
        cmocka_unit_test(test_finish_looking_api_silent),
        cmocka_unit_test(test_wake_node_ready_keeps),
        cmocka_unit_test(test_wake_node_transition_fences),
        cmocka_unit_test(test_wake_no_node_fences),
        cmocka_unit_test(test_short_gap_no_wake),
        cmocka_unit_test(test_restart_wake),
        cmocka_unit_test(test_finish_wake),
        cmocka_unit_test(test_invalid_spec_fenced),
        cmocka_unit_test(test_invalid_spec_wake_fenced),
        cmocka_unit_test(test_failsafe_asks_record_nodes),
        cmocka_unit_test(test_publishes_stop_timeout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
