/* test_agent_narrow.c -- the agent's narrow watches against kubesim (a fake CRI, no world): an agent with
 * no member opens no RSS or record watch; it gets watch events only for the RSS objects and records of
 * RSSs with a member on its node; a member pod moving in starts them, the last leaving stops them; a
 * member is not dispatched (no CRI call) before its RSS's record watch listed.
 *
 * The judge is kubesim's own request and watch-event counts per client (/_sim/stats `by`, `watchEvents`),
 * the agent running with its own User-Agent; the test writes every object itself. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_cri.h"
#include "rss/agent.h"
#include "rss/cleanup.h"
#include "rss/cri.h"
#include "rss/kube.h"
#include "rss/record.h"
#include "simfix.h"

#define NS      "rssd-system"
#define APP_NS  "prod"
#define NODE    "node-1"
#define AGENT   "agent-under-test"
#define RSS_GV  "clusterlabs.org/v1alpha1"
#define WAIT_MS 30000

static struct simfix sim;
static struct rss_kube *kube;  /* the test's */
static struct rss_kube *akube; /* the agent's (User-Agent AGENT) */
static struct fake_cri *fake;
static struct rss_cri *cri;
static struct rss_agent *agent;
static atomic_bool stop;
static pthread_t agent_thread;
static char *tmpdir;

#define create(...) assert_int_equal(simfix_create(kube, __VA_ARGS__), 0)

static void create_rss(const char *name)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"apiVersion\":\"" RSS_GV "\",\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"%s\"},"
        "\"spec\":{\"replicas\":3,\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"echo\",\"5\"]},"
        "\"primary\":{\"command\":[\"echo\"]},\"status\":{\"command\":[\"echo\"]},"
        "\"stop\":{\"command\":[\"echo\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        name);
    create(RSS_GV, APP_NS, "replicatedstatefulsets", json);
}

static void create_pod(const char *name, const char *rss, const char *node)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"rss.clusterlabs.org/name\":\"%s\"}},"
        "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}",
        name, rss, node);
    create("v1", APP_NS, "pods", json);
}

static void delete_pod(const char *name)
{
    _cleanup_free_ char *path = rss_kube_path("v1", APP_NS, "pods", name, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_kube_delete_opts o = {.set_grace = true, .grace_period_seconds = 0}; /* gone at once */
    SIMFIX_CHECK(rss_kube_delete(kube, path, &o, NULL, &err), &err, "delete pod");
}

/* A status write, as the leader's of each reconcile. */
static void write_status(const char *rss, int n)
{
    _cleanup_free_ char *path = rss_kube_path(RSS_GV, APP_NS, "replicatedstatefulsets", rss, "status");
    _cleanup_free_ char *json = rss_xasprintf("{\"status\":{\"observedGeneration\":%d}}", n);
    _cleanup_json_ cJSON *patch = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_kube_merge_patch(kube, path, patch, NULL, &err), &err, "status write");
}

/* Creates or rewrites the record of APP_NS/pod of RSS rss (its `leftOut`-free data: a changing key). */
static void write_record(const char *rss, const char *pod, int n)
{
    _cleanup_free_ char *path = rss_record_path(NS, APP_NS, pod);
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    _cleanup_free_ char *v = rss_xasprintf("%d", n);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "data"), "test", v);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_merge_patch(kube, path, patch, NULL, &err) == 0)
        return;
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    rss_error_release(&err);
    _cleanup_json_ cJSON *cm = rss_record_new(APP_NS, rss, pod);
    cJSON_ReplaceItemInObjectCaseSensitive(cm, "data",
                                           cJSON_Duplicate(cJSON_GetObjectItem(patch, "data"), true));
    _cleanup_free_ char *coll = rss_kube_path("v1", NS, "configmaps", NULL, NULL);
    SIMFIX_CHECK(rss_kube_create(kube, coll, cm, NULL, &err), &err, "create record");
}

/* kubesim's count of the agent's `verb` requests (or, verb "EVENT", watch events sent to it) on resource. */
static long agent_count(const char *verb, const char *resource)
{
    _cleanup_json_ cJSON *st = NULL;
    assert_int_equal(simfix_ctl(kube, "GET", "/_sim/stats", NULL, &st), 0);
    long n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(st, strcmp(verb, "EVENT") ? "by" : "watchEvents"))
    {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(e, "client"));
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(e, "verb"));
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(e, "resource"));
        if (c && v && r && !strcmp(c, AGENT) && !strcmp(v, verb) && !strcmp(r, resource))
            n += (long)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "count"));
    }
    return n;
}

static void reset_stats(void)
{
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stats-reset", NULL, NULL), 0);
}

typedef bool (*cond_fn)(void *);
static void wait_for(cond_fn fn, void *arg, const char *what)
{
    int64_t end = simfix_mono_ns() / 1000000 + WAIT_MS;
    while (!fn(arg)) {
        if (simfix_mono_ns() / 1000000 > end)
            fail_msg("gave up waiting for %s", what);
        simfix_sleep_ms(50);
    }
}

static bool ready(void *p)
{
    (void)p;
    return rss_agent_ready(agent);
}

/* Both narrow watches of one RSS opened (a WATCH of each resource since the last reset). */
static bool watching(void *p)
{
    (void)p;
    return agent_count("WATCH", "replicatedstatefulsets") >= 1 && agent_count("WATCH", "configmaps") >= 1;
}

/* Once a status write and a record write of `rss` reach the agent no more, its watches are closed. */
static bool deaf_to(void *p)
{
    const char *rss = p;
    static int n = 1000;
    reset_stats();
    write_status(rss, ++n);
    write_record(rss, "a-1", n);
    simfix_sleep_ms(600);
    return agent_count("EVENT", "replicatedstatefulsets") == 0 && agent_count("EVENT", "configmaps") == 0;
}

static bool reported(void *p)
{
    _cleanup_free_ char *path = rss_record_path(NS, APP_NS, p);
    _cleanup_json_ cJSON *cm = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_get(kube, path, &cm, &err) < 0)
        return false;
    return cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "data"), RSS_RECORD_OBSERVED) != NULL;
}

static bool cri_called(void *p)
{
    return fake_cri_calls(fake) > *(int *)p;
}

static void *agent_main(void *p)
{
    (void)p;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_agent_run(agent, &stop, &err) < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fprintf(stderr, "agent: %s\n", s);
    }
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    if (simfix_start(&sim, KUBESIM_BIN) < 0)
        return -1;
    rss_error_t err = NULL;
    if (rss_kube_new(sim.kubeconfig, &kube, &err) < 0 || rss_kube_new(sim.kubeconfig, &akube, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    rss_kube_set_user_agent(akube, AGENT);
    tmpdir = rss_xasprintf("%s/cri", sim.dir);
    if (mkdir(tmpdir, 0700) < 0)
        return -1;
    _cleanup_free_ char *sock = rss_xasprintf("%s/cri.sock", tmpdir);
    fake = fake_cri_start(sock);
    struct rss_cri_options opts = {.call_timeout_ms = 2000};
    if (!fake || rss_cri_new(sock, &opts, &cri, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    create("v1", NULL, "namespaces", "{\"metadata\":{\"name\":\"" NS "\"}}");
    create("v1", NULL, "namespaces", "{\"metadata\":{\"name\":\"" APP_NS "\"}}");
    _cleanup_free_ char *cmd = rss_xasprintf("KUBECONFIG=%s kubectl --cache-dir %s/kubectl-cache apply -f "
                                             "%s/deploy/crd.yaml >%s/kubectl.log 2>&1",
                                             sim.kubeconfig, sim.dir, SOURCE_DIR, sim.dir);
    if (system(cmd) != 0)
        return -1;
    /* A leader Lease the agent reads (rule 10); nobody renews it, nobody needs to. */
    create("coordination.k8s.io/v1", NS, "leases",
           "{\"metadata\":{\"name\":\"rssd-leader\"},\"spec\":{\"holderIdentity\":\"someone\","
           "\"leaseDurationSeconds\":3600,\"leaseTransitions\":3}}");
    struct rss_agent_config cfg = {.kube = akube, .cri = cri, .node = NODE, .ns = NS};
    if (rss_agent_new(&cfg, &agent, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    return pthread_create(&agent_thread, NULL, agent_main, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&stop, true);
    pthread_join(agent_thread, NULL);
    while (rss_agent_busy_workers(agent) > 0)
        simfix_sleep_ms(50);
    rss_agent_free(agent);
    rss_cri_free(cri);
    fake_cri_stop(fake);
    rss_kube_free(akube);
    rss_kube_free(kube);
    free(tmpdir);
    simfix_stop(&sim);
    return 0;
}

/* Runs first: no pod on the node yet. */
static void test_no_member_no_watch(void **state)
{
    (void)state;
    create_rss("a");
    create_rss("b");
    wait_for(ready, NULL, "the agent ready");
    reset_stats();
    for (int i = 0; i < 5; i++) {
        write_status("a", i);
        write_status("b", i);
        write_record("b", "b-0", i);
    }
    create_pod("b-0", "b", "node-2"); /* another node's member */
    simfix_sleep_ms(1500);
    assert_int_equal(agent_count("EVENT", "replicatedstatefulsets"), 0);
    assert_int_equal(agent_count("EVENT", "configmaps"), 0);
    /* Nor a request about them: the agent's watches are the leader Lease's and its node's pods. */
    assert_int_equal(
        agent_count("WATCH", "replicatedstatefulsets") + agent_count("LIST", "replicatedstatefulsets"), 0);
    assert_int_equal(agent_count("WATCH", "configmaps") + agent_count("LIST", "configmaps"), 0);
    wait_for(ready, NULL, "the agent ready");
}

/* Waits until a status write of `a` reaches the agent (the counts were reset before). */
static void wait_event_of_a(const char *what)
{
    int64_t end = simfix_mono_ns() / 1000000 + WAIT_MS;
    while (agent_count("EVENT", "replicatedstatefulsets") < 1) {
        if (simfix_mono_ns() / 1000000 > end)
            fail_msg("%s", what);
        simfix_sleep_ms(50);
    }
}

/* Member pods of `a` arrive: the watches of `a` open; writes of `b` never reach the agent, those of `a`
 * (its object, its peers' records) do; the first pod leaving keeps them, the last closes them. */
static void test_member_moves_in_and_out(void **state)
{
    (void)state;
    reset_stats();
    create_pod("a-0", "a", NODE);
    create_pod("a-2", "a", NODE);
    wait_for(watching, NULL, "the watches of RSS a");
    wait_for(ready, NULL, "the agent ready with RSS a listed");
    /* Their first reports written (the agent's own record writes are events of its watch too), then quiet. */
    wait_for(reported, "a-0", "the first report of a-0");
    wait_for(reported, "a-2", "the first report of a-2");
    simfix_sleep_ms(500);
    reset_stats();
    for (int i = 10; i < 15; i++) {
        write_status("b", i);
        write_record("b", "b-0", i);
    }
    write_status("a", 20);
    write_record("a", "a-1", 20); /* a peer's record, on another node */
    int64_t end = simfix_mono_ns() / 1000000 + WAIT_MS;
    while (agent_count("EVENT", "replicatedstatefulsets") < 1 || agent_count("EVENT", "configmaps") < 1) {
        if (simfix_mono_ns() / 1000000 > end)
            fail_msg("the writes of RSS a never reached the agent");
        simfix_sleep_ms(50);
    }
    simfix_sleep_ms(500);
    /* One status write of a, and one record write of a (not b's five of each). */
    assert_int_equal(agent_count("EVENT", "replicatedstatefulsets"), 1);
    assert_int_equal(agent_count("EVENT", "configmaps"), 1);

    /* One of its two members leaves: the spec and the watches of `a` stay for the other. */
    delete_pod("a-0");
    simfix_sleep_ms(1500);
    reset_stats();
    write_status("a", 21);
    wait_event_of_a("a's status write did not reach the agent with a-2 still here");
    assert_int_equal(
        agent_count("WATCH", "replicatedstatefulsets") + agent_count("LIST", "replicatedstatefulsets"), 0);

    delete_pod("a-2");
    wait_for(deaf_to, "a", "the watches of RSS a to close");
    /* And they stay closed: no request reopens them. */
    reset_stats();
    simfix_sleep_ms(2500);
    assert_int_equal(
        agent_count("WATCH", "replicatedstatefulsets") + agent_count("LIST", "replicatedstatefulsets"), 0);
    assert_int_equal(agent_count("WATCH", "configmaps") + agent_count("LIST", "configmaps"), 0);
    wait_for(ready, NULL, "the agent ready");
}

/* Rule 10: a member whose records are not listed yet is not dispatched (its job's first act is a CRI
 * lookup of its container), and the agent is not ready meanwhile. */
static void test_no_dispatch_before_records(void **state)
{
    (void)state;
    create_rss("c");
    wait_for(ready, NULL, "the agent ready");
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stall",
                                "count=1&ms=4000&verb=GET&path=/api/v1/namespaces/" NS "/configmaps", NULL),
                     0);
    int calls = fake_cri_calls(fake);
    create_pod("c-0", "c", NODE);
    simfix_sleep_ms(2500);
    assert_int_equal(fake_cri_calls(fake), calls);
    assert_false(rss_agent_ready(agent));
    wait_for(cri_called, &calls, "the member of c dispatched once its records were listed");
    wait_for(ready, NULL, "the agent ready with RSS c listed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_member_no_watch),
        cmocka_unit_test(test_member_moves_in_and_out),
        cmocka_unit_test(test_no_dispatch_before_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
