/* test_agent_reread.c -- the failsafe re-reader (nodeagent/agent_peers_reread.c) against kubesim: which
 * member record reports make this agent GET a peer's heartbeat Lease, counted by kubesim itself.
 *
 * One agent on n1 hosts rss-db-0 of RSS db, whose other members are on n2 and n3 (both peers known, as
 * from the fence state file), and runs only its re-reader thread; the test feeds the record watch's
 * events by hand (agent_record_ingest + agent_peers_record_changed under the lock, as on_record does) and
 * counts the Lease GETs kubesim served. A report by the agent incarnation that already made n2 a suspect
 * (a periodic `status` report) costs no GET; a new incarnation (a restarted agent) or a report without one
 * (an rssd from before observed.agent) is read within about a second, as before.
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

static void check(int r, rss_error_t *err, const char *what)
{
    if (r < 0) {
        _cleanup_free_ char *s = rss_error_string(*err);
        fail_msg("%s: %s", what, s);
    }
}

static void create(const char *gv, const char *ns, const char *plural, const char *json)
{
    _cleanup_json_ cJSON *obj = cJSON_Parse(json);
    assert_non_null(obj);
    _cleanup_free_ char *path = rss_kube_path(gv, ns, plural, NULL, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    check(rss_kube_create(kube, path, obj, NULL, &err), &err, json);
}

/* GETs of Leases kubesim served since its last stats-reset (only the re-reader makes any here). */
static int lease_gets(void)
{
    _cleanup_json_ cJSON *st = NULL;
    assert_int_equal(simfix_ctl(kube, "GET", "/_sim/stats", NULL, &st), 0);
    int n = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(st, "by"))
    {
        const char *verb = rss_json_str(b, "verb"), *res = rss_json_str(b, "resource");
        if (verb && !strcmp(verb, "GET") && res && strstr(res, "leases"))
            n += (int)cJSON_GetNumberValue(cJSON_GetObjectItem(b, "count"));
    }
    return n;
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
    if (simfix_start(&sim, KUBESIM_BIN) < 0)
        return -1;
    rss_error_t err = NULL;
    if (rss_kube_new(sim.kubeconfig, &kube, &err) < 0) {
        rss_error_release(&err);
        return -1;
    }
    create("v1", NULL, "namespaces", "{\"metadata\":{\"name\":\"" NS "\"}}");
    for (int i = 2; i <= 3; i++) {
        char lease[256];
        snprintf(lease, sizeof(lease),
                 "{\"metadata\":{\"name\":\"" RSS_HEARTBEAT_PREFIX "n%d\",\"namespace\":\"" NS "\"},"
                 "\"spec\":{\"holderIdentity\":\"n%d\",\"leaseDurationSeconds\":50}}",
                 i, i);
        create("coordination.k8s.io/v1", NS, "leases", lease);
    }
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

/* A clean slate between steps: no suspect left over (its 4 s of re-reads), the API counted as
 * answering (the reader reads nothing otherwise), kubesim's counters at zero. */
static void settle(void)
{
    pthread_mutex_lock(&agent->peers_lock);
    for (size_t i = 0; i < agent->n_peers; i++)
        agent->peers[i].suspect_ms = 0;
    pthread_mutex_unlock(&agent->peers_lock);
    simfix_sleep_ms(400); /* a read already under way ends */
    atomic_store(&agent->api_ok_ms, rss_clock_mono_ms());
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stats-reset", NULL, NULL), 0);
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

static void test_reread_only_for_a_new_incarnation(void **state)
{
    (void)state;
    settle();
    report(1, "aaaaaaaaaaaaaaaa"); /* the first report seen of this record: as before */
    expect_read("a new record");
    settle();
    report(2, "aaaaaaaaaaaaaaaa"); /* the same agent's periodic status report: a new time only */
    expect_quiet("a status report of the same agent");
    report(3, "aaaaaaaaaaaaaaaa");
    expect_quiet("another one");
    settle();
    report(4, "bbbbbbbbbbbbbbbb"); /* n2's rssd restarted: its probe reports the new incarnation */
    expect_read("a new incarnation");
    settle();
    report(5, "bbbbbbbbbbbbbbbb");
    expect_quiet("the new agent's next report");
    settle();
    report(6, NULL); /* n2 runs an rssd from before observed.agent (a rollout): every report, as before */
    expect_read("a report without an incarnation");
    settle();
    report(7, NULL);
    expect_read("the next report without one");
    settle();
    report(8, "bbbbbbbbbbbbbbbb"); /* back to a new rssd after the old one: new to this record */
    expect_read("an incarnation after reports without one");
}

/* The record goes (the member was removed) and comes back: a record never seen is new, whoever wrote it,
 * and nothing is remembered for a record that is gone. */
static void test_forgotten_with_the_record(void **state)
{
    (void)state;
    settle();
    report(20, "cccccccccccccccc");
    expect_read("a new incarnation");
    _cleanup_json_ cJSON *cm = rss_record_new("ns1", "db", "rss-db-1");
    pthread_mutex_lock(&agent->lock);
    agent_record_delete(agent, cm);
    assert_null(agent_record_find(agent, "ns1", "rss-db-1"));
    pthread_mutex_unlock(&agent->lock);
    settle();
    report(21, "cccccccccccccccc");
    expect_read("the same incarnation in a record created anew");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reread_only_for_a_new_incarnation),
        cmocka_unit_test(test_forgotten_with_the_record),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
