/* test_agent.c -- table tests of the agent's pure decisions: execute/reject/skip and generation bumps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_cri.h"
#include "rss/action.h"
#include "rss/agent.h"
#include "rss/cri.h"
#include "rss/spec.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/health.h"
#include "rss/metrics.h"
#include "rss/protocol.h"
#include "rss/record.h"
#include "agent_internal.h"

/* A view where everything allows execution of desired {epoch 3, id 3-7, generation 4}. */
static struct rss_agent_view good_view(void)
{
    return (struct rss_agent_view){.lease_known = true,
                                   .lease_epoch = 3,
                                   .probed = true,
                                   .has_container = true,
                                   .generation = 4,
                                   .has_last = true,
                                   .last_id = {3, 6},
                                   .fenced = false};
}

static struct rss_desired desired(enum rss_action action, uint64_t epoch, uint64_t seq, uint64_t gen)
{
    return (struct rss_desired){.epoch = epoch, .action = action, .id = {epoch, seq}, .generation = gen};
}

struct decide_row {
    const char *name;
    enum rss_action action;
    uint64_t epoch, seq, gen;
    void (*tweak)(struct rss_agent_view *v);
    enum rss_agent_verdict want;
    const char *reason_has;
};

static void lease_unknown(struct rss_agent_view *v)
{
    v->lease_known = false;
}
static void lease_newer(struct rss_agent_view *v)
{
    v->lease_epoch = 5;
}
static void lease_older(struct rss_agent_view *v)
{
    v->lease_epoch = 2;
}
static void same_id_done(struct rss_agent_view *v)
{
    v->last_id = (struct rss_action_id){3, 7};
}
static void no_last(struct rss_agent_view *v)
{
    v->has_last = false;
}
static void fenced(struct rss_agent_view *v)
{
    v->fenced = true;
}
static void no_container(struct rss_agent_view *v)
{
    v->has_container = false;
}
static void unprobed(struct rss_agent_view *v)
{
    v->probed = false;
}
static void gen_newer(struct rss_agent_view *v)
{
    v->generation = 5;
}
static void same_id_other_gen(struct rss_agent_view *v)
{
    v->last_id = (struct rss_action_id){3, 7};
    v->generation = 9;
}

static const struct decide_row decide_rows[] = {
    {"primary, all match", RSS_ACTION_PRIMARY, 3, 7, 4, NULL, RSS_AGENT_EXECUTE, "match"},
    {"seed, all match", RSS_ACTION_SEED, 3, 7, 4, NULL, RSS_AGENT_EXECUTE, "match"},
    {"stop, all match", RSS_ACTION_STOP, 3, 7, 4, NULL, RSS_AGENT_EXECUTE, "match"},
    {"secondary, first action ever", RSS_ACTION_SECONDARY, 3, 7, 4, no_last, RSS_AGENT_EXECUTE, "match"},
    {"none is never executed", RSS_ACTION_NONE, 3, 0, 0, NULL, RSS_AGENT_SKIP, "no action"},
    {"Lease not read yet (rule 10)", RSS_ACTION_SEED, 3, 7, 4, lease_unknown, RSS_AGENT_SKIP, "not read"},
    {"deposed leader's epoch (rule 4)", RSS_ACTION_SEED, 3, 7, 4, lease_newer, RSS_AGENT_SKIP, "older"},
    {"epoch ahead of our Lease view", RSS_ACTION_PRIMARY, 3, 7, 4, lease_older, RSS_AGENT_SKIP, "newer"},
    {"same id already taken up", RSS_ACTION_SEED, 3, 7, 4, same_id_done, RSS_AGENT_SKIP, "already"},
    {"same id, even in a new generation", RSS_ACTION_SEED, 3, 7, 4, same_id_other_gen, RSS_AGENT_SKIP,
     "already"},
    {"self-fenced", RSS_ACTION_PRIMARY, 3, 7, 4, fenced, RSS_AGENT_SKIP, "fenced"},
    {"no container", RSS_ACTION_PRIMARY, 3, 7, 4, no_container, RSS_AGENT_SKIP, "no running container"},
    {"not probed (rule 8)", RSS_ACTION_PRIMARY, 3, 7, 4, unprobed, RSS_AGENT_SKIP, "not probed"},
    {"older target generation (rule 7)", RSS_ACTION_SEED, 3, 7, 4, gen_newer, RSS_AGENT_REJECT,
     "stale target"},
    {"newer target generation", RSS_ACTION_PRIMARY, 3, 7, 6, NULL, RSS_AGENT_REJECT, "stale target"},
    {"stop for an old generation", RSS_ACTION_STOP, 3, 7, 3, NULL, RSS_AGENT_REJECT, "generation 3"},
};

static void test_decide_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(decide_rows) / sizeof(decide_rows[0]); i++) {
        const struct decide_row *r = &decide_rows[i];
        struct rss_agent_view v = good_view();
        if (r->tweak)
            r->tweak(&v);
        struct rss_desired d = desired(r->action, r->epoch, r->seq, r->gen);
        char reason[256] = "";
        enum rss_agent_verdict got = rss_agent_decide(&d, &v, reason, sizeof(reason));
        if (got != r->want || !strstr(reason, r->reason_has))
            fail_msg("row '%s': got %s (%s), want %s containing '%s'", r->name, rss_agent_verdict_name(got),
                     reason, rss_agent_verdict_name(r->want), r->reason_has);
    }
}

static void test_decide_no_desired(void **state)
{
    (void)state;
    struct rss_agent_view v = good_view();
    char reason[64];
    assert_int_equal(rss_agent_decide(NULL, &v, reason, sizeof(reason)), RSS_AGENT_SKIP);
    /* a tiny buffer truncates, never overflows */
    struct rss_desired d = desired(RSS_ACTION_SEED, 3, 7, 9);
    char tiny[8];
    assert_int_equal(rss_agent_decide(&d, &v, tiny, sizeof(tiny)), RSS_AGENT_REJECT);
    assert_int_equal(strlen(tiny), 7);
}

struct gen_row {
    bool prev_known;
    uint64_t prev_gen;
    const char *prev_cid, *new_cid;
    uint64_t want;
    const char *why;
};

static void test_generation_for_container(void **state)
{
    (void)state;
    static const struct gen_row rows[] = {
        {false, 0, NULL, "c1", 1, "first"},        {false, 0, "", "c1", 1, "first"},
        {true, 4, "c1", "c1", 4, "same"},          {true, 4, "c1", "c2", 5, "new container"},
        {true, 4, "", "c2", 5, "new container"},   {true, 4, NULL, "c2", 5, "new container"},
        {true, 0, "c1", "c2", 1, "new container"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const char *why = NULL;
        uint64_t g = rss_agent_generation_for_container(rows[i].prev_known, rows[i].prev_gen,
                                                        rows[i].prev_cid, rows[i].new_cid, &why);
        if (g != rows[i].want || !why || !strstr(why, rows[i].why))
            fail_msg("row %zu: got %llu (%s), want %llu (%s)", i, (unsigned long long)g, why ? why : "(null)",
                     (unsigned long long)rows[i].want, rows[i].why);
    }
}

static void test_status_is_crash(void **state)
{
    (void)state;
    static const struct {
        enum rss_role before, after;
        bool we_stopped, want;
    } rows[] = {
        {RSS_ROLE_PRIMARY, RSS_ROLE_STOPPED, false, true},
        {RSS_ROLE_PRIMARY, RSS_ROLE_FAILED, false, true},
        {RSS_ROLE_SECONDARY, RSS_ROLE_STOPPED, false, true},
        {RSS_ROLE_STARTING, RSS_ROLE_FAILED, false, true},
        {RSS_ROLE_PRIMARY, RSS_ROLE_STOPPED, true, false}, /* our own stop: no bump */
        {RSS_ROLE_PRIMARY, RSS_ROLE_PRIMARY, false, false},
        {RSS_ROLE_PRIMARY, RSS_ROLE_SECONDARY, false, false},
        {RSS_ROLE_PRIMARY, RSS_ROLE_UNKNOWN, false, false}, /* a timed-out status is not a crash */
        {RSS_ROLE_STOPPED, RSS_ROLE_STOPPED, false, false},
        {RSS_ROLE_STOPPED, RSS_ROLE_FAILED, false, false},
        {RSS_ROLE_UNKNOWN, RSS_ROLE_STOPPED, false, false},
        {RSS_ROLE_FAILED, RSS_ROLE_STOPPED, false, false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rss_agent_status_is_crash(rows[i].before, rows[i].after, rows[i].we_stopped) != rows[i].want)
            fail_msg("row %zu: %s -> %s (we_stopped %d): want %d", i, rss_role_name(rows[i].before),
                     rss_role_name(rows[i].after), rows[i].we_stopped, rows[i].want);
}

static void test_action_starts(void **state)
{
    (void)state;
    assert_true(rss_action_starts(RSS_ACTION_SEED));
    assert_true(rss_action_starts(RSS_ACTION_PRIMARY));
    assert_true(rss_action_starts(RSS_ACTION_SECONDARY));
    assert_false(rss_action_starts(RSS_ACTION_STOP));
    assert_false(rss_action_starts(RSS_ACTION_NONE));
    /* Running is serving: a member still starting is not (the planner's peers, its failover count). */
    assert_true(rss_role_running(RSS_ROLE_PRIMARY));
    assert_true(rss_role_running(RSS_ROLE_SECONDARY));
    assert_false(rss_role_running(RSS_ROLE_STARTING));
    assert_false(rss_role_running(RSS_ROLE_STOPPED));
    assert_false(rss_role_running(RSS_ROLE_FAILED));
    assert_false(rss_role_running(RSS_ROLE_UNKNOWN));
}

static void test_hook_result(void **state)
{
    (void)state;
    assert_int_equal(rss_agent_hook_result(0, 0), RSS_RESULT_OK);
    assert_int_equal(rss_agent_hook_result(0, 1), RSS_RESULT_FAILED);
    assert_int_equal(rss_agent_hook_result(0, 137), RSS_RESULT_FAILED);
    assert_int_equal(rss_agent_hook_result(0, -1), RSS_RESULT_FAILED);
    assert_int_equal(rss_agent_hook_result(RSS_E_TIMEOUT, 0), RSS_RESULT_TIMEOUT);
    assert_int_equal(rss_agent_hook_result(RSS_E_NOT_RUNNING, 0), RSS_RESULT_INTERRUPTED);
    assert_int_equal(rss_agent_hook_result(RSS_E_NOT_FOUND, 0), RSS_RESULT_INTERRUPTED);
    assert_int_equal(rss_agent_hook_result(RSS_E_INVALID, 0), RSS_RESULT_FAILED);
    assert_int_equal(rss_agent_hook_result(RSS_E_UNAVAILABLE, 0), RSS_RESULT_FAILED);
}

/* The failsafe rule (docs/design.md): keep running through an API outage only with every agent hosting
 * the RSS reached, and none of them reaching the API server. A majority is not enough: a leader on the
 * minority side with the API server takes the majority's silence for fenced members and fails over. */
static void test_failsafe_keep(void **state)
{
    (void)state;
    static const struct {
        size_t hosting, reached;
        bool peer_has_api, keep;
    } rows[] = {
        {1, 1, false, true},  /* every member on this node: nobody else could take over */
        {2, 1, false, false}, /* half: the other half may be the live side */
        {2, 2, false, true},  {3, 1, false, false}, /* alone: isolated, fence */
        {3, 2, false, false}, /* a majority: the missing one may be with the leader and the API server */
        {3, 3, false, true},  {5, 2, false, false}, {5, 3, false, false}, {5, 4, false, false},
        {5, 5, false, true},  {3, 3, true, false},  /* a peer reaches the API: this node is the one cut off */
        {3, 2, true, false},  {0, 0, false, false}, /* nothing known about the RSS: fence, as before */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rss_agent_failsafe_keep(rows[i].hosting, rows[i].reached, rows[i].peer_has_api) != rows[i].keep)
            fail_msg("row %zu: hosting %zu reached %zu api %d: want keep=%d", i, rows[i].hosting,
                     rows[i].reached, rows[i].peer_has_api, rows[i].keep);
}

static void replace_field(char *json, const char *field, const char *value)
{
    _cleanup_json_ cJSON *j = cJSON_Parse(json);
    cJSON_ReplaceItemInObject(j, field, cJSON_Parse(value));
    _cleanup_free_ char *s = cJSON_PrintUnformatted(j);
    snprintf(json, 1024, "%s", s);
}

/* An agent on n1 that never reaches a server: no kube client, no CRI (the tables are all it needs). */
static struct rss_agent *offline_agent_on(const char *node)
{
    struct rss_agent_config cfg = {
        .kube = (struct rss_kube *)1, .cri = (struct rss_cri *)1, .node = node, .ns = "x"};
    struct rss_agent *a = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_agent_new(&cfg, &a, &err), 0);
    return a;
}

static struct rss_agent *offline_agent(void)
{
    return offline_agent_on("n1");
}

/* A peer's answer is signed: a forged, altered or replayed one never vouches. */
static void test_failsafe_answers_signed(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent(), *other = offline_agent();
    unsigned char key[32], other_key[32];
    assert_true(EVP_DecodeBlock(key, (const unsigned char *)a->peer_pub, 44) >= 32);
    assert_true(EVP_DecodeBlock(other_key, (const unsigned char *)other->peer_pub, 44) >= 32);
    const char *nonce = "00112233445566778899aabbccddeeff";
    _cleanup_free_ char *ans = rss_agent_peer_answer(a, nonce);
    assert_non_null(ans);
    long long age = -1;
    assert_true(agent_peers_verify(key, "n1", nonce, ans, &age));
    assert_true(age >= 0);
    /* another nonce: an old answer replayed */
    assert_false(agent_peers_verify(key, "n1", "ffeeddccbbaa99887766554433221100", ans, &age));
    /* another node's name, another key */
    assert_false(agent_peers_verify(key, "n2", nonce, ans, &age));
    assert_false(agent_peers_verify(other_key, "n1", nonce, ans, &age));
    /* an altered API age ("I have no API either") */
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", ans);
    replace_field(buf, "apiOkAgeMs", "999999");
    assert_false(agent_peers_verify(key, "n1", nonce, buf, &age));
    /* garbage */
    assert_false(agent_peers_verify(key, "n1", nonce, "{}", &age));
    assert_false(agent_peers_verify(key, "n1", nonce, "not json", &age));
    /* malformed nonces get no answer at all */
    assert_null(rss_agent_peer_answer(a, "short"));
    assert_null(rss_agent_peer_answer(a, "0011223344556677889900112233445Z"));
    assert_null(rss_agent_peer_answer(a, NULL));
    rss_agent_free(a);
    rss_agent_free(other);
}

/* The failsafe reads only the heartbeat Leases of the peers it needs, each once: the other nodes of the
 * RSS that have members here, not every node of the cluster. */
static const char wanted_cr[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"u-%"
    "s\"},"
    "\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
    "\"primary\":{\"command\":[\"/start\"]},\"status\":{\"command\":[\"/check\"]},"
    "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}},"
    "\"status\":{\"memberStatus\":[%s]}}";
static const char wanted_pod[] =
    "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"%s\",\"uid\":\"%s\",\"labels\":{\"" RSS_LABEL_NAME
    "\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"app\"}]}}";

static void add_json(struct rss_agent *a, bool pod, const char *fmt, const char *x, const char *y,
                     const char *z)
{
    char buf[2048];
    snprintf(buf, sizeof(buf), fmt, x, y, z);
    _cleanup_json_ cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    if (pod)
        agent_member_ingest(a, j);
    else
        agent_spec_set(a, j);
}

static void test_peers_wanted(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    char **nodes = NULL;
    assert_int_equal(agent_peers_wanted(a, &nodes), 0); /* no member here: no peer to read */
    free(nodes);
    add_json(a, false, wanted_cr, "db", "db",
             "{\"node\":\"n3\"},{\"node\":\"n1\"},{\"node\":\"n2\"},{\"node\":\"n3\"},{\"node\":\"\"}");
    add_json(a, false, wanted_cr, "web", "web", "{\"node\":\"n9\"},{\"node\":\"n8\"}");
    add_json(a, false, wanted_cr, "kv", "kv", "{\"node\":\"n2\"},{\"node\":\"n4\"}");
    assert_int_equal(agent_peers_wanted(a, &nodes), 0); /* specs, but still no member here */
    free(nodes);
    add_json(a, true, wanted_pod, "rss-db-0", "p0", "db");
    add_json(a, true, wanted_pod, "rss-db-2", "p2", "db");
    add_json(a, true, wanted_pod, "rss-kv-1", "p3", "kv");
    size_t n = agent_peers_wanted(a, &nodes);
    assert_int_equal(n, 3);
    assert_string_equal(nodes[0], "n2");
    assert_string_equal(nodes[1], "n3");
    assert_string_equal(nodes[2], "n4");
    for (size_t i = 0; i < n; i++)
        free(nodes[i]);
    free(nodes);
    rss_agent_free(a);
}

/* When a peer's Lease is read again between the periodic reads: once as soon as a record said its agent
 * may be new, then once a second while the suspect's window runs (4 s for a report naming no incarnation,
 * 30 s while waiting for the Lease to show the one a report named), never more than once a second, and
 * not at all without a reason. And when a read settles a suspect. */
static void test_peer_reread_due(void **state)
{
    (void)state;
    static const struct {
        int64_t now, read, suspect, window;
        bool due;
    } rows[] = {
        {50000, 45000, 0, 4000, false},      /* no reason */
        {50000, 0, 49900, 4000, true},       /* never read (known from the fence state file) */
        {50000, 45000, 49900, 4000, true},   /* suspect since the last read */
        {50000, 49500, 49900, 4000, false},  /* read 0.5 s ago: at most once a second */
        {50000, 49000, 48500, 4000, true},   /* read once after, unchanged: again while the window runs */
        {54000, 53000, 50000, 4000, true},   /* ...up to its end */
        {54600, 53500, 50000, 4000, false},  /* ...not after: not a new agent after all */
        {54600, 53500, 50000, 30000, true},  /* waiting for a named incarnation: on */
        {80000, 79000, 50000, 30000, true},  /* ...to the end of its window */
        {80100, 79000, 50000, 30000, false}, /* ...not after: agent_peers_due goes on */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (agent_peers_reread_due(rows[i].now, rows[i].read, rows[i].suspect, rows[i].window) != rows[i].due)
            fail_msg("row %zu: now %lld read %lld suspect %lld window %lld: want due=%d", i,
                     (long long)rows[i].now, (long long)rows[i].read, (long long)rows[i].suspect,
                     (long long)rows[i].window, rows[i].due);
    /* A report naming no incarnation: a new address or key settles it. */
    struct agent_peer p = {.read_ms = 1000, .suspect_ms = 5000};
    assert_int_equal(agent_peers_window(&p), 4000);
    agent_peers_was_read(&p, 6000, true);
    assert_int_equal(p.suspect_ms, 0);
    assert_int_equal(p.read_ms, 6000);
    p.suspect_ms = 5000;
    agent_peers_was_read(&p, 7000, false); /* unchanged: keep looking */
    assert_int_equal(p.suspect_ms, 5000);
    assert_false(agent_peers_reread_due(7500, p.read_ms, p.suspect_ms, agent_peers_window(&p)));
    assert_true(agent_peers_reread_due(8000, p.read_ms, p.suspect_ms, agent_peers_window(&p)));
    /* A report naming incarnation b: only a Lease naming b settles it, not a new address of a. */
    struct agent_peer q = {.read_ms = 1000, .suspect_ms = 5000, .agent = "aaaa", .want = "bbbb"};
    assert_int_equal(agent_peers_window(&q), 30000);
    agent_peers_was_read(&q, 6000, true);
    assert_int_equal(q.suspect_ms, 5000);
    agent_peers_was_read(&q, 20000, false);
    assert_int_equal(q.suspect_ms, 5000);
    strcpy(q.agent, "bbbb"); /* what set_peer stores from the Lease */
    agent_peers_was_read(&q, 21000, false);
    assert_int_equal(q.suspect_ms, 0);
    assert_string_equal(q.want, "");
    struct agent_peer r = {.read_ms = 1000, .suspect_ms = 5000, .agent = "aaaa", .want = "bbbb"};
    agent_peers_was_read(&r, 35001, false); /* never shown in 30 s: given up here, agent_peers_due goes on */
    assert_int_equal(r.suspect_ms, 0);
}

/* Which record changes make a peer a suspect: a new `observed` of a member of an RSS with a member here,
 * and only its node's agent (from status.memberStatus); not a record of an RSS foreign to this node, not
 * a record written again with the same `observed` (the leader's `desired`), not this node itself. */
static const char suspect_record[] =
    "{\"metadata\":{\"name\":\"ns1.%s\",\"resourceVersion\":\"%s\",\"labels\":{"
    "\"" RSS_LABEL_RECORD_NS "\":\"ns1\",\"" RSS_LABEL_RECORD_RSS "\":\"%s\",\"" RSS_LABEL_RECORD_MEMBER
    "\":\"%s\"}},"
    "\"data\":{\"observed\":\"%s\",\"desired\":\"%s\"}}";

static int64_t suspect_of(struct rss_agent *a, const char *node)
{
    for (size_t i = 0; i < a->n_peers; i++)
        if (!strcmp(a->peers[i].node, node))
            return a->peers[i].suspect_ms;
    fail_msg("no peer %s", node);
    return 0;
}

static void clear_suspects(struct rss_agent *a);

static void ingest_record(struct rss_agent *a, const char *pod, const char *rv, const char *rss,
                          const char *observed, const char *desired)
{
    char buf[2048];
    snprintf(buf, sizeof(buf), suspect_record, pod, rv, rss, pod, observed, desired);
    _cleanup_json_ cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    if (agent_record_ingest(a, j)) /* as the record watch does */
        agent_peers_record_changed(a, "ns1", rss, pod);
}

static void test_peer_suspect_from_record(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    add_json(a, false, wanted_cr, "db", "db",
             "{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":\"n2\"},"
             "{\"name\":\"rss-db-2\",\"node\":\"n3\"}");
    add_json(a, false, wanted_cr, "web", "web", "{\"name\":\"rss-web-0\",\"node\":\"n4\"}");
    add_json(a, true, wanted_pod, "rss-db-0", "p0", "db");
    _cleanup_json_ cJSON *known = cJSON_Parse("[{\"node\":\"n2\",\"address\":\"10.0.0.2:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"},"
                                              "{\"node\":\"n3\",\"address\":\"10.0.0.3:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"},"
                                              "{\"node\":\"n4\",\"address\":\"10.0.0.4:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}]");
    agent_peers_restore(a, known);
    assert_int_equal(a->n_peers, 3);
    ingest_record(a, "rss-db-1", "1", "db", "o1", "d1"); /* a new record of a member on n2 */
    assert_true(suspect_of(a, "n2") > 0);
    assert_int_equal(suspect_of(a, "n3"), 0);
    a->peers[0].suspect_ms = a->peers[1].suspect_ms = 0;
    ingest_record(a, "rss-db-1", "2", "db", "o1", "d2"); /* the leader's desired: same observed */
    assert_int_equal(suspect_of(a, "n2"), 0);
    ingest_record(a, "rss-db-2", "3", "db", "o2", "d2"); /* n3's agent reported */
    assert_int_equal(suspect_of(a, "n2"), 0);
    assert_true(suspect_of(a, "n3") > 0);
    ingest_record(a, "rss-web-0", "4", "web", "o3", "d3"); /* no member of web here: none of ours */
    assert_int_equal(suspect_of(a, "n4"), 0);
    ingest_record(a, "rss-db-0", "5", "db", "o4", "d3"); /* our own member: nobody else */
    assert_int_equal(suspect_of(a, "n2"), 0);
    /* A member the status places nowhere yet, whose report was written on n4 (observedNode): n4 alone. */
    clear_suspects(a);
    char buf[2048];
    snprintf(buf, sizeof(buf), suspect_record, "rss-db-3", "6", "db", "rss-db-3", "o5", "d3");
    _cleanup_json_ cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(j, "data"), RSS_RECORD_OBSERVED_NODE, "n4");
    assert_true(agent_record_ingest(a, j));
    agent_peers_record_changed(a, "ns1", "db", "rss-db-3");
    assert_true(suspect_of(a, "n4") > 0);
    assert_int_equal(suspect_of(a, "n2"), 0);
    assert_int_equal(suspect_of(a, "n3"), 0);
    rss_agent_free(a);
}

/* A report naming the agent incarnation (observed.agent) that its node's heartbeat Lease names makes no
 * suspect: the agent this one knows. A report naming another one does, waiting for the Lease to show it,
 * also one this agent has not seen any Lease name yet; so does one of a member the leader now places on
 * another node, for that node; and a report without one (an older rssd) every time. */
static void ingest_obs(struct rss_agent *a, const char *rv, int sec, const char *agent)
{
    char obs[512];
    snprintf(obs, sizeof(obs),
             "{\\\"generation\\\":1,\\\"role\\\":\\\"secondary\\\",\\\"leaseEpoch\\\":1,"
             "\\\"time\\\":\\\"2026-01-01T00:00:%02dZ\\\"%s%s%s}",
             sec, agent ? ",\\\"agent\\\":\\\"" : "", agent ? agent : "", agent ? "\\\"" : "");
    ingest_record(a, "rss-db-1", rv, "db", obs, "d");
}

static void clear_suspects(struct rss_agent *a)
{
    for (size_t i = 0; i < a->n_peers; i++)
        a->peers[i].suspect_ms = 0;
}

static const char *want_of(struct rss_agent *a, const char *node)
{
    for (size_t i = 0; i < a->n_peers; i++)
        if (!strcmp(a->peers[i].node, node))
            return a->peers[i].want;
    fail_msg("no peer %s", node);
    return NULL;
}

/* node's heartbeat Lease, as a read returns it, naming incarnation `agent` (NULL: none). */
static void learn_lease(struct rss_agent *a, const char *node, const char *addr, const char *agent)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"" RSS_HEARTBEAT_PREFIX "%s\",\"annotations\":{\"" RSS_ANNOTATION_PEER
             "\":\"{\\\"address\\\":\\\"%s\\\",\\\"key\\\":\\\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
             "\\\"%s%s%s}\"}}}",
             node, addr, agent ? ",\\\"agent\\\":\\\"" : "", agent ? agent : "", agent ? "\\\"" : "");
    _cleanup_json_ cJSON *lease = cJSON_Parse(buf);
    assert_non_null(lease);
    agent_peers_learn(a, lease);
}

static void test_peer_suspect_same_agent(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    assert_int_equal(strlen(a->incarnation), RSS_AGENT_INCARNATION_LEN);
    struct rss_agent *b = offline_agent();
    assert_string_not_equal(a->incarnation, b->incarnation); /* every start a new one */
    rss_agent_free(b);
    const char *ms2 = "{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":\"n2\"}";
    const char *ms3 = "{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":\"n3\"}";
    add_json(a, false, wanted_cr, "db", "db", ms2);
    add_json(a, true, wanted_pod, "rss-db-0", "p0", "db");
    _cleanup_json_ cJSON *known = cJSON_Parse("[{\"node\":\"n2\",\"address\":\"10.0.0.2:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"},"
                                              "{\"node\":\"n3\",\"address\":\"10.0.0.3:1\",\"key\":"
                                              "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}]");
    agent_peers_restore(a, known);             /* from the fence state file: no incarnation known */
    ingest_obs(a, "1", 1, "aaaaaaaaaaaaaaaa"); /* no Lease read yet names it: a suspect */
    assert_true(suspect_of(a, "n2") > 0);
    assert_string_equal(want_of(a, "n2"), "aaaaaaaaaaaaaaaa");
    learn_lease(a, "n2", "10.0.0.2:1", "aaaaaaaaaaaaaaaa"); /* the read: the Lease names it */
    assert_int_equal(suspect_of(a, "n2"), 0);
    ingest_obs(a, "2", 2, "aaaaaaaaaaaaaaaa"); /* a periodic report of the same agent */
    assert_int_equal(suspect_of(a, "n2"), 0);
    ingest_obs(a, "3", 3, "bbbbbbbbbbbbbbbb"); /* n2's rssd restarted, its Lease not renewed yet */
    assert_true(suspect_of(a, "n2") > 0);
    learn_lease(a, "n2", "10.0.0.2:1", "aaaaaaaaaaaaaaaa"); /* still the old agent's Lease */
    assert_true(suspect_of(a, "n2") > 0);
    learn_lease(a, "n2", "10.0.0.2:2", "aaaaaaaaaaaaaaaa"); /* a new address, but not of b */
    assert_true(suspect_of(a, "n2") > 0);
    learn_lease(a, "n2", "10.0.0.2:2", "bbbbbbbbbbbbbbbb"); /* b renewed: settled */
    assert_int_equal(suspect_of(a, "n2"), 0);
    ingest_obs(a, "4", 4, "bbbbbbbbbbbbbbbb");
    assert_int_equal(suspect_of(a, "n2"), 0);
    add_json(a, false, wanted_cr, "db", "db", ms3); /* the leader now places rss-db-1 on n3 */
    ingest_obs(a, "5", 5, "bbbbbbbbbbbbbbbb");      /* n3's Lease names no b */
    assert_true(suspect_of(a, "n3") > 0);
    assert_int_equal(suspect_of(a, "n2"), 0);
    clear_suspects(a);
    learn_lease(a, "n3", "10.0.0.3:1", NULL); /* n3 runs an rssd from before the incarnation */
    ingest_obs(a, "6", 6, NULL);              /* ...whose reports name none: every changed report */
    assert_true(suspect_of(a, "n3") > 0);
    assert_string_equal(want_of(a, "n3"), "");
    clear_suspects(a);
    ingest_obs(a, "7", 7, NULL);
    assert_true(suspect_of(a, "n3") > 0);
    clear_suspects(a);
    ingest_obs(a, "8", 8, ""); /* an empty one names none either */
    assert_true(suspect_of(a, "n3") > 0);
    rss_agent_free(a);
}

/* The heartbeat Lease's peer annotation: how peers reach this agent, which process renews it, and since
 * when (the leader judges a report of another incarnation written before that superseded). None before
 * the agent has an address. */
static void test_peer_annotation(void **state)
{
    (void)state;
    int64_t before = rss_clock_wall_ms();
    struct rss_agent *a = offline_agent();
    int64_t after = rss_clock_wall_ms();
    assert_null(agent_peers_annotation(a));
    rss_agent_set_peer_address(a, "10.0.0.1", 9090);
    _cleanup_free_ char *ann = agent_peers_annotation(a);
    _cleanup_json_ cJSON *j = cJSON_Parse(ann);
    assert_non_null(j);
    assert_string_equal(rss_json_str(j, "address"), "10.0.0.1:9090");
    assert_string_equal(rss_json_str(j, "agent"), a->incarnation);
    const cJSON *since = cJSON_GetObjectItemCaseSensitive(j, "since");
    assert_true(cJSON_IsNumber(since));
    assert_true((int64_t)since->valuedouble >= before && (int64_t)since->valuedouble <= after);
    rss_agent_free(a);
}

/* Which peers' Leases the heartbeat reads. While settling (the first 30 s): all of them every 2 s. After:
 * none while every peer is confirmed (its Lease named an incarnation, and every record of a member the
 * leader places there names that one), which is the idle steady state; a peer that is not, once a minute:
 * a record naming another incarnation (its agent restarted and the suspect's window passed), a member the
 * leader now places on a node whose Lease names another writer, a Lease from an rssd that names none. */
static size_t due_at(struct rss_agent *a, int64_t now, const char *want)
{
    struct agent_peers_due due;
    size_t n = agent_peers_due(a, now, &due);
    char got[256] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", due.nodes[i]);
    if (strcmp(got, want))
        fail_msg("at %lld: due [%s], want [%s]", (long long)now, got, want);
    if (n) { /* as a successful refresh does */
        if (due.all || due.unconfirmed)
            a->peers_listed_ms = now;
        if (due.all || due.missing)
            a->peers_missing_ms = now;
    }
    agent_peers_due_clear(&due);
    return n;
}

static void test_peers_due(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    const char *ms = "{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":\"n2\"},"
                     "{\"name\":\"rss-db-2\",\"node\":\"n3\"}";
    add_json(a, false, wanted_cr, "db", "db", ms);
    add_json(a, true, wanted_pod, "rss-db-0", "p0", "db");
    /* Settling: all wanted peers, known or not, every 2 s. */
    due_at(a, 1000, "n2,n3");
    due_at(a, 2000, "");
    learn_lease(a, "n2", "10.0.0.2:1", "aaaaaaaaaaaaaaaa");
    learn_lease(a, "n3", "10.0.0.3:1", "cccccccccccccccc");
    due_at(a, 3000, "n2,n3");
    /* Settled, every peer confirmed: nothing, however long. */
    ingest_obs(a, "1", 1, "aaaaaaaaaaaaaaaa");
    clear_suspects(a);
    due_at(a, 40000, "");
    due_at(a, 200000, "");
    assert_true(agent_peers_confirmed(a, "n2"));
    /* n2's agent restarted: its report names b, its Lease still a (the suspect's window passed). */
    ingest_obs(a, "2", 2, "bbbbbbbbbbbbbbbb");
    clear_suspects(a);
    assert_false(agent_peers_confirmed(a, "n2"));
    assert_true(agent_peers_confirmed(a, "n3"));
    due_at(a, 260000, "n2");
    due_at(a, 300000, ""); /* once a minute */
    due_at(a, 320000, "n2");
    learn_lease(a, "n2", "10.0.0.2:2", "bbbbbbbbbbbbbbbb"); /* b renewed */
    due_at(a, 400000, "");
    /* The leader places rss-db-1 on n3 now; its record (written by b on n2) names b: n3 is unconfirmed,
     * with no new record event to make it a suspect. */
    const char *moved = "{\"name\":\"rss-db-0\",\"node\":\"n1\"},{\"name\":\"rss-db-1\",\"node\":\"n3\"},"
                        "{\"name\":\"rss-db-2\",\"node\":\"n3\"}";
    add_json(a, false, wanted_cr, "db", "db", moved);
    due_at(a, 470000, "n3");
    learn_lease(a, "n3", "10.0.0.3:2", "bbbbbbbbbbbbbbbb"); /* it moved with its pod */
    due_at(a, 540000, "");
    /* A Lease from an rssd that names no incarnation: unconfirmed, even with no record to compare
     * (rss-db-1 back on n2, whose Lease names its writer). */
    add_json(a, false, wanted_cr, "db", "db", ms);
    learn_lease(a, "n2", "10.0.0.2:2", "bbbbbbbbbbbbbbbb");
    learn_lease(a, "n3", "10.0.0.3:3", NULL);
    due_at(a, 600000, "n3");
    rss_agent_free(a);
}

/* The self-fence's last resort: a `stop` that failed or timed out is followed by a CRI StopContainer
 * (kill) of the member's container, because the leader counts the member stopped once the node's dead
 * window (stop timeout included) ended; a stop that worked, or a container that is gone, is left alone. */
static const char fence_cr[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\",\"uid\":\"u1\"},"
    "\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
    "\"primary\":{\"command\":[\"/start\"]},\"status\":{\"command\":[\"/check\"]},"
    "\"stop\":{\"command\":%s,\"timeout\":\"2s\"}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}"
    "}}";

static void test_fence_stop_kills(void **state)
{
    (void)state;
    char dir[] = "/tmp/rss-fence-XXXXXX";
    assert_non_null(mkdtemp(dir));
    _cleanup_free_ char *sock = rss_xasprintf("%s/cri.sock", dir);
    struct fake_cri *fake = fake_cri_start(sock);
    assert_non_null(fake);
    struct rss_cri *cri = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_options opts = {.call_timeout_ms = 2000};
    assert_int_equal(rss_cri_new(sock, &opts, &cri, &err), 0);
    struct rss_agent_config cfg = {.kube = (struct rss_kube *)1, .cri = cri, .node = "n1", .ns = "x"};
    struct rss_agent *a = NULL;
    assert_int_equal(rss_agent_new(&cfg, &a, &err), 0);
    static const struct {
        const char *stop, *cid;
        bool killed;
    } rows[] = {
        {"[\"echo\",\"stopped\"]", "c1", false}, /* exit 0: stopped, nothing to kill */
        {"[\"fail\"]", "c1", true},              /* exit 3: the application may run */
        {"[\"crio-timeout\"]", "c1", true},      /* timed out: it may run */
        {"[\"nosuch\"]", "c1", true},            /* could not run at all */
        {"[\"fail\"]", "missing", false},        /* the container is gone: nothing left */
    };
    int kills = 0;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[1024];
        snprintf(buf, sizeof(buf), fence_cr, rows[i].stop);
        _cleanup_json_ cJSON *cr = cJSON_Parse(buf);
        assert_non_null(cr);
        struct rss_spec spec;
        assert_int_equal(rss_spec_parse(cr, &spec, &err), 0);
        bool killed = agent_fence_stop(a, &spec, "ns1", "rss-db-0", rows[i].cid, "a test");
        rss_spec_clear(&spec);
        if (killed != rows[i].killed)
            fail_msg("row %zu (stop %s in %s): killed %d", i, rows[i].stop, rows[i].cid, killed);
        kills += rows[i].killed;
        assert_int_equal(fake_cri_stops(fake), kills);
    }
    rss_agent_free(a);
    rss_cri_free(cri);
    fake_cri_stop(fake);
    rmdir(dir);
}

/* Rule 18: a Node with status.conditions `conds` (JSON, ' for "), created at `created` (NULL: no time). */
static cJSON *wake_node(const char *created, const char *conds)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "{'metadata':{'name':'n1'%s%s%s},'status':{'conditions':%s}}",
             created ? ",'creationTimestamp':'" : "", created ? created : "", created ? "'" : "", conds);
    for (char *c = buf; *c; c++)
        if (*c == '\'')
            *c = '"';
    cJSON *node = cJSON_Parse(buf);
    if (!node)
        fail_msg("bad test JSON: %s", buf);
    return node;
}

#define OLD_READY "[{'type':'Ready','status':'True','lastTransitionTime':'2025-01-01T00:00:00Z'}]"
#define CREATED   "2024-12-01T00:00:00Z"

/* The renewal before the gap at 12:00:10.500; the leader's dead verdict needs Ready read not True after it.
 */
static const struct wake_row {
    const char *name, *created, *conds, *renewed;
    bool keep;
    const char *why_has;
} wake_rows[] = {
    {"Ready since long before, created long before", CREATED, OLD_READY, "2025-06-01T12:00:10.500Z", true,
     "Ready since 2025-01-01T00:00:00Z"},
    {"Ready again after the renewal (Unknown while frozen)", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-06-01T12:00:40Z'}]",
     "2025-06-01T12:00:10.500Z", false, "Ready only since 2025-06-01T12:00:40Z"},
    {"Ready Unknown (the node controller's)", CREATED,
     "[{'type':'Ready','status':'Unknown','reason':'NodeStatusUnknown','lastTransitionTime':"
     "'2025-06-01T12:00:30Z'}]",
     "2025-06-01T12:00:10.500Z", false, "Ready condition is Unknown (NodeStatusUnknown)"},
    {"Ready False", CREATED,
     "[{'type':'Ready','status':'False','reason':'KubeletNotReady','lastTransitionTime':'2025-01-01T00:00:"
     "00Z'}]",
     "2025-06-01T12:00:10.500Z", false, "is False"},
    {"Ready without a status", CREATED, "[{'type':'Ready','lastTransitionTime':'2025-01-01T00:00:00Z'}]",
     "2025-06-01T12:00:10.500Z", false, "without a status"},
    {"status 'true' is not 'True'", CREATED,
     "[{'type':'Ready','status':'true','lastTransitionTime':'2025-01-01T00:00:00Z'}]",
     "2025-06-01T12:00:10.500Z", false, "is true"},
    {"no conditions", CREATED, "[]", "2025-06-01T12:00:10.500Z", false, "no Ready condition"},
    {"conditions not a list", CREATED, "{'Ready':'True'}", "2025-06-01T12:00:10.500Z", false,
     "no Ready condition"},
    {"only other conditions", CREATED,
     "[{'type':'DiskPressure','status':'False','lastTransitionTime':'2025-01-01T00:00:00Z'},"
     "{'type':'ready','status':'True','lastTransitionTime':'2025-01-01T00:00:00Z'}]",
     "2025-06-01T12:00:10.500Z", false, "no Ready condition"},
    {"a second Ready condition not True", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-01-01T00:00:00Z'},"
     "{'type':'Ready','status':'Unknown','lastTransitionTime':'2025-06-01T12:00:30Z'}]",
     "2025-06-01T12:00:10.500Z", false, "Unknown"},
    {"no lastTransitionTime", CREATED, "[{'type':'Ready','status':'True'}]", "2025-06-01T12:00:10.500Z",
     false, "an unknown time"},
    {"garbage lastTransitionTime", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'yesterday'}]", "2025-06-01T12:00:10.500Z", false,
     "since yesterday"},
    {"lastTransitionTime not a string", CREATED, "[{'type':'Ready','status':'True','lastTransitionTime':1}]",
     "2025-06-01T12:00:10.500Z", false, "an unknown time"},
    {"no creationTimestamp", NULL, OLD_READY, "2025-06-01T12:00:10.500Z", false, "creationTimestamp (none)"},
    {"garbage creationTimestamp", "then", OLD_READY, "2025-06-01T12:00:10.500Z", false,
     "creationTimestamp (then)"},
    {"created after the renewal (deleted and registered again)", "2025-06-01T12:00:20Z", OLD_READY,
     "2025-06-01T12:00:10.500Z", false, "creationTimestamp (2025-06-01T12:00:20Z)"},
    {"no renewal time known", CREATED, OLD_READY, NULL, false, "unknown"},
    /* The granularity: "12:00:09Z" is an instant before 12:00:10.000; "12:00:10Z" may be up to 12:00:10.999.
     */
    {"a second before the renewal: keep", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-06-01T12:00:09Z'}]", "2025-06-01T12:00:10Z",
     true, "Ready since 2025-06-01T12:00:09Z"},
    {"the renewal's own second: fence", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-06-01T12:00:10Z'}]",
     "2025-06-01T12:00:10.999Z", false, "Ready only since 2025-06-01T12:00:10Z"},
    {"the next second: keep", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-06-01T12:00:10Z'}]", "2025-06-01T12:00:11Z",
     true, "Ready since"},
    {"created in the renewal's own second: fence", "2025-06-01T12:00:10Z", OLD_READY,
     "2025-06-01T12:00:10.999Z", false, "creationTimestamp"},
    {"a fraction counts only to a whole second more", CREATED,
     "[{'type':'Ready','status':'True','lastTransitionTime':'2025-06-01T12:00:09.500Z'}]",
     "2025-06-01T12:00:10Z", false, "Ready only since"},
};

static void test_wake_keep_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(wake_rows) / sizeof(wake_rows[0]); i++) {
        const struct wake_row *r = &wake_rows[i];
        _cleanup_json_ cJSON *node = wake_node(r->created, r->conds);
        int64_t renewed = 0;
        _cleanup_error_ rss_error_t err = NULL;
        if (r->renewed)
            assert_int_equal(rss_time_parse_ms(r->renewed, &renewed, &err), 0);
        char why[768] = "";
        bool keep = rss_agent_wake_keep(node, renewed, why, sizeof(why));
        if (keep != r->keep || !strstr(why, r->why_has))
            fail_msg("row '%s': %s (%s), want %s with '%s'", r->name, keep ? "keep" : "fence", why,
                     r->keep ? "keep" : "fence", r->why_has);
    }
    /* No Node at all, or not an object. */
    char why[768] = "";
    assert_false(rss_agent_wake_keep(NULL, 1748779210500, why, sizeof(why)));
    assert_non_null(strstr(why, "no Node"));
    _cleanup_json_ cJSON *list = cJSON_Parse("[]");
    assert_false(rss_agent_wake_keep(list, 1748779210500, why, sizeof(why)));
}

/* Rule 18's trigger: a gap in the agent's loop past the stall limit, judged by the silence since the last
 * acknowledged renewal against the fence timeout (30 s here). */
static void test_wake_verdict_table(void **state)
{
    (void)state;
    static const struct {
        bool first;
        int64_t gap, silence;
        enum rss_agent_wake want;
    } rows[] = {
        {false, 1000, 31000, RSS_AGENT_WAKE_NONE},  /* the loop ran: whatever the silence, no wake */
        {false, 5000, 31000, RSS_AGENT_WAKE_NONE},  /* at the stall limit */
        {false, 5001, 30000, RSS_AGENT_WAKE_LOOK},  /* a gap; the silence at the fence timeout */
        {false, 5001, 30001, RSS_AGENT_WAKE_FENCE}, /* past it: the leader may have judged the node dead */
        {false, 60000, 0, RSS_AGENT_WAKE_LOOK},     /* no renewal acknowledged yet */
        {true, 0, 10000, RSS_AGENT_WAKE_LOOK},      /* a start soon after the last renewal */
        {true, 0, 45000, RSS_AGENT_WAKE_FENCE},     /* a start past the fence timeout */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rss_agent_wake_verdict(rows[i].first, rows[i].gap, rows[i].silence, 30000) != rows[i].want)
            fail_msg("row %zu: got %d, want %d", i,
                     rss_agent_wake_verdict(rows[i].first, rows[i].gap, rows[i].silence, 30000),
                     rows[i].want);
}

static void test_verdict_names(void **state)
{
    (void)state;
    assert_string_equal(rss_agent_verdict_name(RSS_AGENT_SKIP), "skip");
    assert_string_equal(rss_agent_verdict_name(RSS_AGENT_EXECUTE), "execute");
    assert_string_equal(rss_agent_verdict_name(RSS_AGENT_REJECT), "reject");
}

/* A relist of one RSS's records (its narrow watch, agent_rss_watch.c) judges only that RSS's records gone:
 * another RSS's records, listed by its own watch, stay. */
static void test_records_sweep_per_rss(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    static const char *const recs[][2] = {{"db", "rss-db-0"}, {"db", "rss-db-1"}, {"kv", "rss-kv-0"}};
    for (size_t i = 0; i < 3; i++) {
        _cleanup_json_ cJSON *cm = rss_record_new("ns1", recs[i][0], recs[i][1]);
        cJSON_AddStringToObject(cJSON_GetObjectItem(cm, "metadata"), "resourceVersion", "7");
        agent_record_ingest(a, cm);
    }
    /* db's relist shows rss-db-1 only; kv's records are none of its business. */
    agent_records_mark(a, "ns1", "db");
    _cleanup_json_ cJSON *again = rss_record_new("ns1", "db", "rss-db-1");
    cJSON_AddStringToObject(cJSON_GetObjectItem(again, "metadata"), "resourceVersion", "8");
    agent_record_ingest(a, again);
    agent_records_sweep(a, "ns1", "db");
    int db0 = 0, db1 = 0, kv0 = 0;
    for (struct agent_record *r = a->records; r; r = r->next) {
        db0 += !strcmp(r->pod, "rss-db-0");
        db1 += !strcmp(r->pod, "rss-db-1");
        kv0 += !strcmp(r->pod, "rss-kv-0") && !strcmp(r->rss, "kv");
    }
    assert_int_equal(db0, 0);
    assert_int_equal(db1, 1);
    assert_int_equal(kv0, 1);
    /* kv left the node: its records go, db's stay. */
    agent_records_mark(a, "ns1", "kv");
    agent_records_sweep(a, "ns1", "kv");
    assert_non_null(a->records);
    assert_string_equal(a->records->pod, "rss-db-1");
    assert_null(a->records->next);
    rss_agent_free(a);
}

/* A counter's value from GET /metrics's rendering (the metrics are process-wide). */
static unsigned long long counter(const char *name)
{
    struct rss_strbuf b = {0};
    rss_metrics_render(&b);
    _cleanup_free_ char *n = rss_xasprintf("\n%s ", name);
    const char *at = strstr(b.s, n);
    unsigned long long v = at ? strtoull(at + strlen(n), NULL, 10) : 0;
    assert_non_null(at);
    free(b.s);
    return v;
}

/* The failsafe's probes keep their connection: 20 rounds probing one peer open 1 (one a probe made the
 * 200-node bench's kernel spend half the CPU in connection setup). And a node keeps every prober's
 * connection: 40 peers probing it at once, three times, all answered on 40 connections (the health server
 * allowed 16, so a node probed by more peers than that would have turned some away, and they would have
 * fenced). */
static void test_probe_keeps_connection(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent(), *b = offline_agent();
    struct rss_health *hs = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_health_start("127.0.0.1", 0, a, &hs, &err), 0);
    _cleanup_free_ char *url = rss_xasprintf("http://127.0.0.1:%d/peer", rss_health_port(hs));
    char n1[] = "n1";
    struct agent_peer peer = {.node = n1, .url = url};
    assert_true(EVP_DecodeBlock(peer.key, (const unsigned char *)a->peer_pub, 44) >= 32);
    unsigned long long probes = counter("rssd_failsafe_probes_total");
    unsigned long long conns = counter("rssd_failsafe_probe_connections_total");
    CURLM *m = agent_peers_probe_multi();
    assert_non_null(m);
    for (int i = 0; i < 20; i++)
        assert_int_equal(agent_peers_probe_round(b, m, &peer, 1), 1);
    assert_int_equal(counter("rssd_failsafe_probes_total") - probes, 20);
    assert_int_equal(counter("rssd_failsafe_probe_connections_total") - conns, 1);
    /* a wrong key: answered, but not a vouch */
    struct agent_peer wrong = peer;
    wrong.key[0] ^= 1;
    assert_int_equal(agent_peers_probe_round(b, m, &wrong, 1), 0);
    curl_multi_cleanup(m);

    enum { PEERS = 40 };
    struct agent_peer many[PEERS];
    for (int i = 0; i < PEERS; i++)
        many[i] = peer;
    CURLM *mp[PEERS];
    conns = counter("rssd_failsafe_probe_connections_total");
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < PEERS; i++) {
            if (!round)
                assert_non_null(mp[i] = agent_peers_probe_multi());
            assert_int_equal(agent_peers_probe_round(b, mp[i], &peer, 1), 1);
        }
    assert_int_equal(counter("rssd_failsafe_probe_connections_total") - conns, PEERS);
    for (int i = 0; i < PEERS; i++)
        curl_multi_cleanup(mp[i]);
    /* one prober asking 40 peers at once (here the same one, so 40 connections to it): all answer, and
     * the later rounds reuse the 40 connections of the first */
    conns = counter("rssd_failsafe_probe_connections_total");
    m = agent_peers_probe_multi();
    for (int round = 0; round < 3; round++)
        assert_int_equal(agent_peers_probe_round(b, m, many, PEERS), PEERS);
    assert_int_equal(counter("rssd_failsafe_probe_connections_total") - conns, PEERS);
    curl_multi_cleanup(m);
    rss_health_stop(hs);
    rss_agent_free(a);
    rss_agent_free(b);
}

/* A peer that accepts a connection and never answers (a hung agent, a black-holed node). */
static int silent_listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Silent peers do not make the answering ones stale. With the API server gone, an agent whose peers
 * include six that never answer (800 ms each) probed them one after the other: the round took ~5 s, the
 * answer of the peer asked first was older than the 3 s an answer counts by its end, and an RSS whose
 * agents had all answered was fenced. The round asks them all at once, so it lasts one probe. */
static void test_probe_round_parallel(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent(), *b = offline_agent_on("n9");
    struct rss_health *hs = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_health_start("127.0.0.1", 0, a, &hs, &err), 0);
    enum { SILENT = 6 };
    int fds[SILENT], port[SILENT];
    _cleanup_json_ cJSON *known = cJSON_CreateArray();
    struct agent_peer peers[SILENT + 1];
    char *urls[SILENT + 1];
    for (int i = 0; i <= SILENT; i++) {
        int p = i == 0 ? rss_health_port(hs) : (fds[i - 1] = silent_listener(&port[i - 1]), port[i - 1]);
        _cleanup_free_ char *addr = rss_xasprintf("127.0.0.1:%d", p);
        _cleanup_free_ char *node = i == 0 ? rss_xstrdup("n1") : rss_xasprintf("h%d", i);
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "node", node);
        cJSON_AddStringToObject(it, "address", addr);
        cJSON_AddStringToObject(it, "key", a->peer_pub);
        cJSON_AddItemToArray(known, it);
        urls[i] = rss_xasprintf("http://%s/peer", addr);
        peers[i] = (struct agent_peer){.node = rss_xstrdup(node), .url = urls[i]};
        assert_true(EVP_DecodeBlock(peers[i].key, (const unsigned char *)a->peer_pub, 44) >= 32);
    }
    agent_peers_restore(b, known);
    atomic_store(&a->api_ok_ms, rss_clock_mono_ms() - 60000); /* n1 has no API server either */
    CURLM *m = agent_peers_probe_multi();
    /* the answering peer first: one after the other, its answer would be the oldest at the round's end */
    assert_int_equal(agent_peers_probe_round(b, m, peers, SILENT + 1), 1);
    char *const rss_nodes[] = {"n9", "n1"};
    char why[256];
    bool keep = agent_peers_vouch(b, rss_nodes, 2, why, sizeof(why));
    if (!keep)
        fail_msg("an RSS whose agents all answered is not kept: %s", why);
    char *const with_silent[] = {"n9", "n1", "h3"};
    assert_false(agent_peers_vouch(b, with_silent, 3, why, sizeof(why)));
    curl_multi_cleanup(m);
    for (int i = 0; i <= SILENT; i++) {
        free(urls[i]);
        free(peers[i].node);
        if (i)
            close(fds[i - 1]);
    }
    rss_health_stop(hs);
    rss_agent_free(a);
    rss_agent_free(b);
}

static size_t sink(char *d, size_t size, size_t n, void *ud)
{
    (void)d;
    (void)ud;
    return size * n;
}

/* HTTP status of METHOD url with `body` (NULL: none), 0 when no answer came within 3 s. */
static long http_status(const char *method, const char *url, const char *body)
{
    CURL *h = curl_easy_init();
    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 3000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    long code = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code;
}

/* `n` connections to 127.0.0.1:port from source address `from`, opened and left idle (a pod holding the
 * health port's connections). fds[] gets them (-1 for one the kernel refused at once). */
static void hold_connections(const char *from, int port, int *fds, int n)
{
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        struct sockaddr_in src = {.sin_family = AF_INET};
        struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        assert_int_equal(inet_pton(AF_INET, from, &src.sin_addr), 1);
        assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr), 1);
        assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
        if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
            close(fd);
            fd = -1;
        }
        fds[i] = fd;
    }
}

struct body {
    char buf[4096];
    size_t len;
};

static size_t to_body(char *d, size_t size, size_t n, void *ud)
{
    struct body *b = ud;
    size_t k = size * n;
    if (b->len + k >= sizeof(b->buf))
        return 0;
    memcpy(b->buf + b->len, d, k);
    b->len += k;
    b->buf[b->len] = '\0';
    return k;
}

/* One failsafe probe of a's /peer from source address `from`, with the prober's deadline (800 ms): true when
 * a valid signed answer came within it. */
static bool probe_from(struct rss_agent *a, int port, const char *from)
{
    const char *nonce = "0123456789abcdef0123456789abcdef";
    _cleanup_free_ char *url = rss_xasprintf("http://127.0.0.1:%d/peer?nonce=%s", port, nonce);
    struct body b = {.len = 0};
    CURL *h = curl_easy_init();
    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_INTERFACE, from);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 800L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 800L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    unsigned char key[33]; /* 44 base64 characters decode to 33 bytes, the last one padding */
    long long age = 0;
    assert_true(EVP_DecodeBlock(key, (const unsigned char *)a->peer_pub, 44) >= 32);
    return rc == CURLE_OK && agent_peers_verify(key, a->node, nonce, b.buf, &age);
}

/* Issue 35: /metrics, the probes and the failsafe's /peer share one unauthenticated listener. A pod that
 * holds its connections during an API outage made the peers unable to vouch: every new connection past the
 * server's limit (1024) was turned away, the peers' probes failed, and their members were fenced. Now
 * one address may hold a few connections (8, PER_ADDRESS in health.c), and addresses that are neither a known
 * peer's nor this pod's own loopback share at most three quarters of the limit. Here: one address holding
 * 1100 idle connections, then 130 addresses holding 8 each; a probe from an unknown fresh address, from
 * a known peer's address (its heartbeat Lease's) and from loopback is answered within the prober's 800 ms
 * while the first attack lasts; the known peer's and loopback's too during the second. */
static void test_health_held_connections(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    struct rss_health *hs = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_health_start("127.0.0.1", 0, a, &hs, &err), 0);
    int port = rss_health_port(hs);
    _cleanup_json_ cJSON *known = cJSON_Parse("[{\"node\":\"n3\",\"address\":\"127.0.0.3:8476\"}]");
    cJSON_AddStringToObject(cJSON_GetArrayItem(known, 0), "key", a->peer_pub);
    agent_peers_restore(a, known);
    enum { ONE = 1100, ADDRS = 130, EACH = 8 };
    static int fds[ONE + ADDRS * EACH];
    hold_connections("127.0.0.2", port, fds, ONE);
    usleep(500 * 1000); /* the server takes them up */
    assert_true(probe_from(a, port, "127.0.0.4"));
    assert_true(probe_from(a, port, "127.0.0.3"));
    assert_true(probe_from(a, port, "127.0.0.1"));
    for (int i = 0; i < ADDRS; i++) {
        char from[32];
        snprintf(from, sizeof(from), "127.0.%d.%d", 10 + i / 200, 1 + i % 200);
        hold_connections(from, port, fds + ONE + i * EACH, EACH);
    }
    usleep(500 * 1000);
    assert_true(probe_from(a, port, "127.0.0.3"));
    assert_true(probe_from(a, port, "127.0.0.1"));
    for (int i = 0; i < ONE + ADDRS * EACH; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    rss_health_stop(hs);
    rss_agent_free(a);
}

/* The health server answers at the handler's last call (so it keeps connections): a request with a body
 * still gets its answer, not a hang until the idle timeout (a POST to /peer hung 10 s when the body was
 * left unread). */
static void test_health_methods(void **state)
{
    (void)state;
    struct rss_agent *a = offline_agent();
    struct rss_health *hs = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_health_start("127.0.0.1", 0, a, &hs, &err), 0);
    char url[128];
    static const char big[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/peer", rss_health_port(hs));
    assert_int_equal(http_status("POST", url, big), 405);
    assert_int_equal(http_status("PUT", url, NULL), 405);
    assert_int_equal(http_status("GET", url, big), 400); /* no nonce; the body is dropped */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/nope", rss_health_port(hs));
    assert_int_equal(http_status("GET", url, NULL), 404);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", rss_health_port(hs));
    assert_int_equal(http_status("GET", url, NULL), 200);
    rss_health_stop(hs);
    rss_agent_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_decide_no_desired),
        cmocka_unit_test(test_generation_for_container),
        cmocka_unit_test(test_status_is_crash),
        cmocka_unit_test(test_action_starts),
        cmocka_unit_test(test_hook_result),
        cmocka_unit_test(test_verdict_names),
        cmocka_unit_test(test_failsafe_keep),
        cmocka_unit_test(test_failsafe_answers_signed),
        cmocka_unit_test(test_peer_reread_due),
        cmocka_unit_test(test_peer_suspect_from_record),
        cmocka_unit_test(test_peer_suspect_same_agent),
        cmocka_unit_test(test_peers_wanted),
        cmocka_unit_test(test_peers_due),
        cmocka_unit_test(test_peer_annotation),
        cmocka_unit_test(test_fence_stop_kills),
        cmocka_unit_test(test_wake_keep_table),
        cmocka_unit_test(test_wake_verdict_table),
        cmocka_unit_test(test_records_sweep_per_rss),
        cmocka_unit_test(test_probe_keeps_connection),
        cmocka_unit_test(test_probe_round_parallel),
        cmocka_unit_test(test_health_methods),
        cmocka_unit_test(test_health_held_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
