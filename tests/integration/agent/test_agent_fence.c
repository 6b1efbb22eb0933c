/* test_agent_fence.c -- rssd stopping (SIGTERM) while a self-fence runs: the decided fences' containers are
 * killed, a fence still taking its last look at the API server only if the API server does not answer.
 *
 * The case: an agent woken from a long SIGSTOP starts a fence whose last look finds the API server answering;
 * the kubelet's liveness SIGTERM, sent while it was stopped, arrives during that look. The kill at exit
 * stopped a healthy primary (e2e safety_primary hang_primary_agent, once). Judged by the fake CRI's count of
 * StopContainer calls; the API server is kubesim (answers) or a closed loopback port (does not). */
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
#include "rss/cri.h"
#include "rss/kube.h"
#include "simfix.h"

#define NS   "rssd-system"
#define NODE "node-1"

static struct simfix sim;
static struct rss_kube *kube, *dead_kube;
static struct fake_cri *fake;
static struct rss_cri *cri;

/* An agent with one member pod whose fence started; committed = its decision is taken. */
static struct rss_agent *agent_with_fence(struct rss_kube *k, bool committed)
{
    struct rss_agent_config cfg = {.kube = k, .cri = cri, .node = NODE, .ns = NS};
    struct rss_agent *a = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_agent_new(&cfg, &a, &err), &err, "rss_agent_new");
    _cleanup_json_ cJSON *pod = cJSON_Parse(
        "{\"metadata\":{\"name\":\"rss-db-0\",\"namespace\":\"prod\",\"uid\":\"u0\","
        "\"labels\":{\"rss.clusterlabs.org/name\":\"db\"}},"
        "\"spec\":{\"nodeName\":\"" NODE "\",\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}");
    assert_non_null(pod);
    pthread_mutex_lock(&a->lock);
    agent_member_ingest(a, pod);
    assert_non_null(a->members);
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
