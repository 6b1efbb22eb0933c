/* test_agent_reread.c -- the failsafe re-reader (nodeagent/agent_peers_reread.c) against kubesim: which
 * member record reports make this agent GET a peer's heartbeat Lease, counted by kubesim itself.
 *
 * One agent on n1 hosts rss-db-0 of RSS db, whose other members are on n2 and n3 (both peers known, as
 * from the fence state file, without an incarnation), and runs only its re-reader thread; the test feeds
 * the record watch's events by hand (agent_record_ingest + agent_peers_record_changed under the lock, as
 * on_record does) and counts the Lease GETs kubesim served. A report naming the agent incarnation that
 * n2's Lease names (a periodic `status` report) costs no GET; one naming another (a restarted agent) is
 * read within about a second and again every second until n2's Lease names it; a report naming none (an
 * rssd from before observed.agent) is read as before. Past the agent's first 30 s, the heartbeat's reads
 * (agent_peers_refresh) take only the peers it cannot confirm, and none at idle.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "rss/protocol.h"
#include "rss/record.h"
#include "agent_internal.h"
#include "simfix.h"

#define NS "rssd-system"
/* The reader ticks every 200 ms and reads a suspect at once: 2 s is generous on a loaded machine. */
#define READ_WITHIN_MS 2000
/* Long enough for a read the reader would have made (several ticks), to conclude there is none. */
#define QUIET_MS 1500

static struct simfix sim;
static struct rss_kube *kube;

#define create(...) assert_int_equal(simfix_create(kube, __VA_ARGS__), 0)

/* GETs of Leases kubesim served since its last stats-reset (only the re-reader makes any here). */
static int lease_gets(void)
{
    int n = simfix_stats_count(kube, NULL, "GET", "*leases");
    assert_true(n >= 0);
    return n;
}

/* n2's heartbeat Lease as its agent writes it, naming incarnation `agent`. */
static void n2_lease(const char *agent, bool update)
{
    char lease[512];
    snprintf(lease, sizeof(lease),
             "{\"apiVersion\":\"coordination.k8s.io/"
             "v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"" RSS_HEARTBEAT_PREFIX
             "n2\",\"namespace\":\"" NS "\",\"annotations\":{\"" RSS_ANNOTATION_PEER
             "\":\"{\\\"address\\\":\\\"127.0.0.1:1\\\",\\\"key\\\":"
             "\\\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\\\",\\\"agent\\\":\\\"%s\\\"}\"}},"
             "\"spec\":{\"holderIdentity\":\"n2\",\"leaseDurationSeconds\":50}}",
             agent);
    if (!update) {
        create("coordination.k8s.io/v1", NS, "leases", lease);
        return;
    }
    _cleanup_json_ cJSON *obj = cJSON_Parse(lease);
    assert_non_null(obj);
    _cleanup_free_ char *path =
        rss_kube_path("coordination.k8s.io/v1", NS, "leases", RSS_HEARTBEAT_PREFIX "n2", NULL);
    _cleanup_error_ rss_error_t err = NULL;
    SIMFIX_CHECK(rss_kube_merge_patch(kube, path, obj, NULL, &err), &err, "n2's Lease");
}

static struct rss_agent *agent;
static atomic_bool stop_reader;
static pthread_t reader;

static void add_json(bool pod, const char *json)
{
    _cleanup_json_ cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    pthread_mutex_lock(&agent->lock);
    if (pod)
        agent_member_ingest(agent, j);
    else
        agent_spec_set(agent, j);
    pthread_mutex_unlock(&agent->lock);
}

static const char db_cr[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\",\"uid\":\"u-"
    "db\"},"
    "\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
    "\"primary\":{\"command\":[\"/start\"]},\"status\":{\"command\":[\"/check\"]},"
    "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}},"
    "\"status\":{\"memberStatus\":[{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":"
    "\"n2\"},{\"name\":\"rss-db-2\",\"node\":\"n3\"}]}}";
static const char db0_pod[] =
    "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"rss-db-0\",\"uid\":\"p0\",\"labels\":{\"" RSS_LABEL_NAME
    "\":\"db\"}},\"spec\":{\"containers\":[{\"name\":\"app\"}]}}";

static int setup(void **state)
{
    (void)state;
    if (simfix_start_kube(&sim, KUBESIM_BIN, &kube) < 0)
        return -1;
    rss_error_t err = NULL;
    create("v1", NULL, "namespaces", "{\"metadata\":{\"name\":\"" NS "\"}}");
    n2_lease("aaaaaaaaaaaaaaaa", false);
    create("coordination.k8s.io/v1", NS, "leases",
           "{\"metadata\":{\"name\":\"" RSS_HEARTBEAT_PREFIX "n3\",\"namespace\":\"" NS
           "\",\"annotations\":{\"" RSS_ANNOTATION_PEER
           "\":\"{\\\"address\\\":\\\"127.0.0.1:1\\\",\\\"key\\\":"
           "\\\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\\\",\\\"agent\\\":\\\"cccccccccccccccc\\\"}\"}},"
           "\"spec\":{\"holderIdentity\":\"n3\",\"leaseDurationSeconds\":50}}");
    struct rss_agent_config cfg = {.kube = kube, .cri = (struct rss_cri *)1, .node = "n1", .ns = NS};
    if (rss_agent_new(&cfg, &agent, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    add_json(false, db_cr);
    add_json(true, db0_pod);
    _cleanup_json_ cJSON *known = cJSON_Parse("[{\"node\":\"n2\",\"address\":\"127.0.0.1:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"},"
                                              "{\"node\":\"n3\",\"address\":\"127.0.0.1:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}]");
    agent_peers_restore(agent, known);
    atomic_store(&stop_reader, false);
    agent->stop = &stop_reader;
    return pthread_create(&reader, NULL, agent_peers_reader, agent) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&stop_reader, true);
    pthread_join(reader, NULL);
    rss_agent_free(agent);
    rss_kube_free(kube);
    simfix_stop(&sim);
    return 0;
}

/* The record watch delivers a new version of rss-db-1's record (its member on n2) with this `observed`
 * (agent NULL: written by an rssd from before observed.agent). */
static void report(int rv, const char *agent_id)
{
    char obs[256];
    snprintf(obs, sizeof(obs),
             "{\"generation\":1,\"role\":\"secondary\",\"status\":0,\"leaseEpoch\":1,"
             "\"time\":\"2026-01-01T00:00:%02dZ\"%s%s%s}",
             rv % 60, agent_id ? ",\"agent\":\"" : "", agent_id ? agent_id : "", agent_id ? "\"" : "");
    _cleanup_json_ cJSON *cm = rss_record_new("ns1", "db", "rss-db-1");
    assert_non_null(cm);
    char rvs[16];
    snprintf(rvs, sizeof(rvs), "%d", rv);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "resourceVersion", rvs);
    cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    if (!data)
        data = cJSON_AddObjectToObject(cm, "data");
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED, obs);
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_FOR, "p1");
    pthread_mutex_lock(&agent->lock);
    const char *ns, *rss, *pod;
    if (agent_record_ingest(agent, cm) && rss_record_member(cm, &ns, &rss, &pod))
        agent_peers_record_changed(agent, ns, rss, pod); /* as on_record does */
    pthread_mutex_unlock(&agent->lock);
}

/* kubesim's counters at zero, the API counted as answering (the reader reads nothing otherwise). */
static void reset_counts(void)
{
    atomic_store(&agent->api_ok_ms, rss_clock_mono_ms());
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stats-reset", NULL, NULL), 0);
}

/* A clean slate between steps: no suspect left over, no read under way, the counters at zero. */
static void settle(void)
{
    pthread_mutex_lock(&agent->peers_lock);
    for (size_t i = 0; i < agent->n_peers; i++)
        agent->peers[i].suspect_ms = 0;
    pthread_mutex_unlock(&agent->peers_lock);
    simfix_sleep_ms(400); /* a read already under way ends */
    reset_counts();
}

/* Polls for the first Lease GET after a report; returns ms until it came, -1 if none in `ms`. */
static long first_get_within(long ms)
{
    int64_t t0 = rss_clock_mono_ms();
    while (rss_clock_mono_ms() - t0 < ms) {
        if (lease_gets() > 0)
            return (long)(rss_clock_mono_ms() - t0);
        simfix_sleep_ms(50);
    }
    return -1;
}

static void expect_read(const char *what)
{
    long ms = first_get_within(READ_WITHIN_MS);
    if (ms < 0)
        fail_msg("%s: no GET of the peer's heartbeat Lease within %d ms", what, READ_WITHIN_MS);
    print_message("%s: the peer's Lease read after %ld ms\n", what, ms);
}

static void expect_quiet(const char *what)
{
    simfix_sleep_ms(QUIET_MS);
    int n = lease_gets();
    if (n)
        fail_msg("%s: %d GET(s) of a Lease in %d ms, want none", what, n, QUIET_MS);
}

static void test_reread_until_the_lease_shows_it(void **state)
{
    (void)state;
    settle();
    report(1, "aaaaaaaaaaaaaaaa"); /* no Lease read yet named it (the peers came from the state file) */
    expect_read("a report of an agent not seen in a Lease yet");
    settle();
    report(2, "aaaaaaaaaaaaaaaa"); /* the same agent's periodic status report: n2's Lease names it */
    expect_quiet("a status report of the agent n2's Lease names");
    report(3, "aaaaaaaaaaaaaaaa");
    expect_quiet("another one");

    settle();
    report(4, "bbbbbbbbbbbbbbbb"); /* n2's rssd restarted: its probe reports before its first heartbeat */
    expect_read("a new incarnation");
    simfix_sleep_ms(2500);
    int n = lease_gets();
    print_message("reads of n2's Lease while it still names the old agent, in about 2.5 s: %d\n", n);
    assert_true(n >= 2);                /* once a second while it does not show the new one */
    n2_lease("bbbbbbbbbbbbbbbb", true); /* the new agent's first renewal */
    simfix_sleep_ms(2000);              /* the next read (once a second) sees it */
    reset_counts();
    expect_quiet("once n2's Lease names the new agent");
    report(5, "bbbbbbbbbbbbbbbb");
    expect_quiet("the new agent's next report");

    settle();
    report(6, NULL); /* n2 runs an rssd from before observed.agent (a rollout): every report, as before */
    expect_read("a report without an incarnation");
    settle();
    report(7, NULL);
    expect_read("the next report without one");
}

/* The heartbeat's reads past the agent's first 30 s (agent_peers_refresh), counted by kubesim: a peer is
 * read while its copy cannot be confirmed, and an idle agent whose peers are all confirmed reads nothing,
 * however many minutes pass (the 60 s read of every peer was most of an idle agent's requests). */
static int refresh_gets(void)
{
    int64_t now = rss_clock_mono_ms();
    agent->peers_first_ms = now - 60000;  /* settled */
    agent->peers_listed_ms = now - 61000; /* a minute since the last reads */
    agent->peers_missing_ms = now;
    settle();
    agent_peers_refresh(agent);
    return lease_gets();
}

static void test_refresh_reads_only_unconfirmed(void **state)
{
    (void)state;
    settle();
    report(8, "bbbbbbbbbbbbbbbb"); /* n2's agent, the one its Lease names (the test above) */
    simfix_sleep_ms(400);
    /* n3 is known from the state file, without an incarnation: read. */
    assert_false(agent_peers_confirmed(agent, "n3"));
    assert_int_equal(refresh_gets(), 1);
    assert_true(agent_peers_confirmed(agent, "n2"));
    assert_true(agent_peers_confirmed(agent, "n3"));
    /* Idle: nothing, minute after minute. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(refresh_gets(), 0);
    /* The leader places rss-db-1 on n3 now; its record names b, n3's Lease c: n3 is read again, with no
     * record event to make it a suspect. */
    add_json(false,
             "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\","
             "\"uid\":\"u-db\"},\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
             "\"primary\":{\"command\":[\"/start\"]},\"status\":{\"command\":[\"/check\"]},"
             "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":"
             "\"busybox\"}]}},\"status\":{\"memberStatus\":[{\"name\":\"rss-db-0\",\"node\":\"n1\"},"
             "{\"name\":\"rss-db-1\",\"node\":\"n3\"}]}}");
    assert_false(agent_peers_confirmed(agent, "n3"));
    assert_int_equal(refresh_gets(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reread_until_the_lease_shows_it),
        cmocka_unit_test(test_refresh_reads_only_unconfirmed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
