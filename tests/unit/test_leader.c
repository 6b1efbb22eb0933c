/* test_leader.c -- the leader's pure parts in tables: object builders, snapshot, liveness, event dedupe,
 * patches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "leader_internal.h"
#include "rss/election.h"
#include "rss/kube.h"
#include "rss/cleanup.h"
#include "rss/record.h"

#define NOW 1700000000000LL /* 2023-11-14T22:13:20Z */

/* ---- helpers ---- */

static void parse_spec(const char *extra_spec, const char *extra_pod, struct rss_spec *spec, cJSON **cr)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"namespace\":\"prod\",\"uid\":\"u-1\"},\"spec\":{\"replicas\":3%s,"
        "\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},\"primary\":{\"command\":[\"/start\"]},"
        "\"status\":{\"command\":[\"/check\"]},\"stop\":{\"command\":[\"/stop\"]}},"
        "\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"},{\"name\":\"side\",\"image\":\"x\"}]%s}}}",
        extra_spec, extra_pod);
    *cr = cJSON_Parse(json);
    assert_non_null(*cr);
    rss_error_t err = NULL;
    int r = rss_spec_parse(*cr, spec, &err);
    if (r < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fail_msg("spec: %s", s);
    }
}

/* Resolves a dotted path with [n] indexes, e.g. "spec.template.spec.containers[0].env[1].name". */
static const cJSON *at(const cJSON *j, const char *path)
{
    _cleanup_free_ char *p = rss_xstrdup(path);
    char *save = NULL;
    for (char *tok = strtok_r(p, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
        char *br = strchr(tok, '[');
        if (br)
            *br = '\0';
        /* Keys with dots ("rss.clusterlabs.org/name") are written with '|' instead. */
        for (char *c = tok; *c; c++)
            if (*c == '|')
                *c = '.';
        if (*tok)
            j = cJSON_GetObjectItemCaseSensitive(j, tok);
        while (br && j) {
            j = cJSON_GetArrayItem(j, atoi(br + 1));
            br = strchr(br + 1, '[');
        }
    }
    return j;
}

/* Compares the compact JSON at path with want ("<absent>" when it must not exist). */
static void expect_at(const cJSON *j, const char *path, const char *want, const char *row)
{
    const cJSON *v = at(j, path);
    if (!strcmp(want, "<absent>")) {
        if (v)
            fail_msg("%s: %s should be absent", row, path);
        return;
    }
    if (!v)
        fail_msg("%s: %s missing (want %s)", row, path, want);
    _cleanup_free_ char *got = cJSON_PrintUnformatted(v);
    if (strcmp(got, want))
        fail_msg("%s: %s = %s, want %s", row, path, got, want);
}

/* ---- StatefulSet and Service builders ---- */

struct obj_row {
    const char *name, *extra_spec, *extra_pod;
    int replicas;
    const char *path, *want;
};

static const struct obj_row sts_rows[] = {
    {"name", "", "", 3, "metadata.name", "\"rss-db\""},
    {"namespace", "", "", 3, "metadata.namespace", "\"prod\""},
    {"replicas from the plan", "", "", 7, "spec.replicas", "7"},
    {"serviceName", "", "", 3, "spec.serviceName", "\"db-svc\""},
    {"parallel", "", "", 3, "spec.podManagementPolicy", "\"Parallel\""},
    {"OnDelete: rssd rolls the members", "", "", 3, "spec.updateStrategy", "{\"type\":\"OnDelete\"}"},
    {"selector", "", "", 3, "spec.selector.matchLabels", "{\"rss.clusterlabs.org/name\":\"db\"}"},
    {"template labels", "", "", 3, "spec.template.metadata.labels", "{\"rss.clusterlabs.org/name\":\"db\"}"},
    {"owner kind", "", "", 3, "metadata.ownerReferences[0].kind", "\"ReplicatedStatefulSet\""},
    {"owner uid", "", "", 3, "metadata.ownerReferences[0].uid", "\"u-1\""},
    {"owner controller", "", "", 3, "metadata.ownerReferences[0].controller", "true"},
    {"owner apiVersion", "", "", 3, "metadata.ownerReferences[0].apiVersion", "\"clusterlabs.org/v1alpha1\""},
    {"first container kept", "", "", 3, "spec.template.spec.containers[0].image", "\"busybox\""},
    {"second container kept", "", "", 3, "spec.template.spec.containers[1].name", "\"side\""},
    {"POD_NAME", "", "", 3, "spec.template.spec.containers[0].env[0]",
     "{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}"},
    {"POD_NAMESPACE", "", "", 3, "spec.template.spec.containers[0].env[1].valueFrom.fieldRef.fieldPath",
     "\"metadata.namespace\""},
    {"SERVICE_NAME", "", "", 3, "spec.template.spec.containers[1].env[2]",
     "{\"name\":\"SERVICE_NAME\",\"value\":\"db-svc\"}"},
    {"no affinity by default", "", "", 3, "spec.template.spec.affinity", "<absent>"},
    {"anti-affinity", "", ",\"antiAffinity\":true", 3,
     "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]",
     "{\"labelSelector\":{\"matchLabels\":{\"rss.clusterlabs.org/"
     "name\":\"db\"}},\"topologyKey\":\"kubernetes.io/"
     "hostname\"}"},
    {"volumes", "", ",\"volumes\":[{\"name\":\"cfg\",\"emptyDir\":{}}]", 3,
     "spec.template.spec.volumes[0].name", "\"cfg\""},
    {"no volumes", "", "", 3, "spec.template.spec.volumes", "<absent>"},
    {"claim templates", "",
     ",\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"},\"spec\":{\"accessModes\":["
     "\"ReadWriteOnce\"]}}]",
     3, "spec.volumeClaimTemplates[0].metadata.name", "\"data\""},
    {"nodeSelector", ",\"nodeSelector\":{\"disk\":\"ssd\"}", "", 3, "spec.template.spec.nodeSelector",
     "{\"disk\":\"ssd\"}"},
    {"admin env kept, ours after", "", "", 3, "spec.template.spec.containers[0].env[3]", "<absent>"},
};

static void test_statefulset_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(sts_rows) / sizeof(sts_rows[0]); i++) {
        const struct obj_row *r = &sts_rows[i];
        struct rss_spec spec;
        _cleanup_json_ cJSON *cr = NULL;
        parse_spec(r->extra_spec, r->extra_pod, &spec, &cr);
        _cleanup_json_ cJSON *sts = leader_build_statefulset(&spec, cr, r->replicas);
        expect_at(sts, r->path, r->want, r->name);
        rss_spec_clear(&spec);
    }
}

static void test_statefulset_env_not_overridden(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    const char *pod = "";
    parse_spec("", pod, &spec, &cr);
    /* The admin's own POD_NAME wins; ours is not added twice. */
    cJSON *c0 = cJSON_GetArrayItem(spec.containers, 0);
    cJSON_AddItemToObject(c0, "env", cJSON_Parse("[{\"name\":\"POD_NAME\",\"value\":\"mine\"}]"));
    _cleanup_json_ cJSON *sts = leader_build_statefulset(&spec, cr, 3);
    expect_at(sts, "spec.template.spec.containers[0].env[0]", "{\"name\":\"POD_NAME\",\"value\":\"mine\"}",
              "env");
    expect_at(sts, "spec.template.spec.containers[0].env[1].name", "\"POD_NAMESPACE\"", "env");
    expect_at(sts, "spec.template.spec.containers[0].env[3]", "<absent>", "env");
    rss_spec_clear(&spec);
}

static const char *hash_of(const cJSON *sts)
{
    return cJSON_GetStringValue(at(sts, "metadata.annotations.rss|clusterlabs|org/spec-hash"));
}

static void test_statefulset_hash(void **state)
{
    (void)state;
    struct rss_spec a, b;
    _cleanup_json_ cJSON *cra = NULL, *crb = NULL;
    parse_spec("", "", &a, &cra);
    parse_spec("", ",\"antiAffinity\":true", &b, &crb);
    _cleanup_json_ cJSON *s1 = leader_build_statefulset(&a, cra, 3);
    _cleanup_json_ cJSON *s2 = leader_build_statefulset(&a, cra, 5);
    _cleanup_json_ cJSON *s3 = leader_build_statefulset(&b, crb, 3);
    assert_non_null(hash_of(s1));
    assert_string_equal(hash_of(s1), hash_of(s2)); /* replicas are not part of the template */
    assert_string_not_equal(hash_of(s1), hash_of(s3));
    rss_spec_clear(&a);
    rss_spec_clear(&b);
}

static const struct obj_row svc_rows[] = {
    {"name", "", "", 0, "metadata.name", "\"db-svc\""},
    {"headless", "", "", 0, "spec.clusterIP", "\"None\""},
    {"not-ready addresses", "", "", 0, "spec.publishNotReadyAddresses", "true"},
    {"selector", "", "", 0, "spec.selector", "{\"rss.clusterlabs.org/name\":\"db\"}"},
    {"owner", "", "", 0, "metadata.ownerReferences[0].name", "\"db\""},
    {"no ports", "", "", 0, "spec.ports", "<absent>"},
    {"servicePorts", ",\"servicePorts\":[{\"name\":\"sql\",\"port\":3306}]", "", 0, "spec.ports[0].port",
     "3306"},
};

static void test_service_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(svc_rows) / sizeof(svc_rows[0]); i++) {
        const struct obj_row *r = &svc_rows[i];
        struct rss_spec spec;
        _cleanup_json_ cJSON *cr = NULL;
        parse_spec(r->extra_spec, r->extra_pod, &spec, &cr);
        _cleanup_json_ cJSON *svc = leader_build_service(&spec, cr);
        expect_at(svc, r->path, r->want, r->name);
        rss_spec_clear(&spec);
    }
}

static const struct obj_row pdb_rows[] = {
    {"kind", "", "", 0, "kind", "\"PodDisruptionBudget\""},
    {"apiVersion", "", "", 0, "apiVersion", "\"policy/v1\""},
    {"name", "", "", 0, "metadata.name", "\"rss-db\""},
    {"namespace", "", "", 0, "metadata.namespace", "\"prod\""},
    {"owner", "", "", 0, "metadata.ownerReferences[0].name", "\"db\""},
    {"selector", "", "", 0, "spec.selector.matchLabels", "{\"rss.clusterlabs.org/name\":\"db\"}"},
    {"no minAvailable", "", "", 0, "spec.minAvailable", "<absent>"},
};

/* The budget's object, and its maxUnavailable by phase: none only while Recovering. */
static void test_budget_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(pdb_rows) / sizeof(pdb_rows[0]); i++) {
        const struct obj_row *r = &pdb_rows[i];
        struct rss_spec spec;
        _cleanup_json_ cJSON *cr = NULL;
        parse_spec(r->extra_spec, r->extra_pod, &spec, &cr);
        _cleanup_json_ cJSON *pdb = leader_build_budget(&spec, 1, NULL);
        expect_at(pdb, r->path, r->want, r->name);
        expect_at(pdb, "spec.selector.matchExpressions", "<absent>", "no primary: every member");
        _cleanup_json_ cJSON *zero = leader_build_budget(&spec, 0, NULL);
        expect_at(zero, "spec.maxUnavailable", "0", "maxUnavailable 0");
        rss_spec_clear(&spec);
    }
    /* A primary with a budget of its own: out of the members' (a pod in two budgets cannot be evicted at
     * all), and in its own, never evicted. */
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec(",\"primaries\":1", "", &spec, &cr);
    spec.promote_standby = true; /* (the hooks PromoteStandby needs are not in this spec) */
    _cleanup_json_ cJSON *members = leader_build_budget(&spec, 1, "rss-db-2");
    expect_at(members, "spec.selector",
              "{\"matchLabels\":{\"rss.clusterlabs.org/name\":\"db\"},\"matchExpressions\":[{\"key\":"
              "\"statefulset.kubernetes.io/pod-name\",\"operator\":\"NotIn\",\"values\":[\"rss-db-2\"]}]}",
              "members but the primary");
    expect_at(members, "metadata.name", "\"rss-db\"", "members' name");
    expect_at(members, "spec.minAvailable", "1", "one of the two standbys may go");
    expect_at(members, "spec.maxUnavailable", "<absent>", "no maxUnavailable (counted against all 3)");
    _cleanup_json_ cJSON *members0 = leader_build_budget(&spec, 0, "rss-db-2");
    expect_at(members0, "spec.minAvailable", "2", "none while Recovering");
    _cleanup_json_ cJSON *own = leader_build_primary_budget(&spec, "rss-db-2");
    expect_at(own, "metadata.name", "\"rss-db-primary\"", "the primary's name");
    expect_at(own, "metadata.ownerReferences[0].name", "\"db\"", "the primary's owner");
    expect_at(own, "spec.minAvailable", "1", "the primary never evicted");
    expect_at(own, "spec.selector",
              "{\"matchLabels\":{\"rss.clusterlabs.org/name\":\"db\",\"statefulset.kubernetes.io/pod-name\":"
              "\"rss-db-2\"}}",
              "the primary alone");
    /* Which primary gets one: only where a cordon makes it hand over, and the leader sees cordons. */
    assert_string_equal(leader_budget_primary(&spec, "rss-db-2", true), "rss-db-2");
    assert_null(leader_budget_primary(&spec, "rss-db-2", false));
    assert_null(leader_budget_primary(&spec, NULL, true));
    spec.replicas = 1; /* no standby to hand over to */
    assert_null(leader_budget_primary(&spec, "rss-db-0", true));
    spec.replicas = 3;
    spec.promote_standby = false; /* Wait: a budget that never lets it go would hold a drain for good */
    assert_null(leader_budget_primary(&spec, "rss-db-2", true));
    rss_spec_clear(&spec);
    cJSON_Delete(cr);
    cr = NULL;
    parse_spec(",\"primaries\":3", "", &spec, &cr); /* Galera: every member a primary */
    assert_null(leader_budget_primary(&spec, "rss-db-2", true));
    rss_spec_clear(&spec);
    static const struct {
        const char *phase;
        int max;
    } phases[] = {{"Recovering", 0}, {"Running", 1},    {"Degraded", 1}, {"Scaling", 1},    {"Paused", 1},
                  {"Suspended", 1},  {"Suspending", 1}, {"Stopped", 1},  {"recovering", 1}, {NULL, 1}};
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
        assert_int_equal(leader_budget_max_unavailable(phases[i].phase), phases[i].max);
}

/* ---- node liveness, as this leader observed it ---- */

static cJSON *lease_list(const char *node, const char *renew, double duration_s)
{
    cJSON *list = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(list, "items");
    cJSON *l = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(l, "metadata");
    _cleanup_free_ char *name = rss_xasprintf("rssd-node-%s", node);
    cJSON_AddStringToObject(md, "name", name);
    cJSON *spec = cJSON_AddObjectToObject(l, "spec");
    if (renew)
        cJSON_AddStringToObject(spec, "renewTime", renew);
    if (duration_s)
        cJSON_AddNumberToObject(spec, "leaseDurationSeconds", duration_s);
    cJSON_AddItemToArray(items, l);
    return list;
}

#define T0      1000000 /* monotonic ms at the start of the term */
#define DEAD_MS 35000   /* fence timeout + margin */
#define GAP_MS  5000
#define POLL    1000

struct verdict {
    bool alive, dead;
};

/* The verdict of a node whose kubelet is read down at `now` too (a node that is off): the heartbeat
 * alone decides. */
static struct verdict judge(struct leader_liveness *lv, const char *node, int64_t now)
{
    struct verdict v;
    int64_t silent;
    leader_liveness_kubelet(lv, node, LEADER_KUBELET_DOWN, NULL, now, DEAD_MS);
    leader_liveness_node(lv, node, now, DEAD_MS, &v.alive, &v.dead, &silent);
    return v;
}

/* The verdict without reading the kubelet again. */
static struct verdict judge_as_is(const struct leader_liveness *lv, const char *node, int64_t now)
{
    struct verdict v;
    int64_t silent;
    leader_liveness_node(lv, node, now, DEAD_MS, &v.alive, &v.dead, &silent);
    return v;
}

/* Polls every POLL ms from `from` to `to` with the same (unchanged) renewTime. */
static void poll_same(struct leader_liveness *lv, const cJSON *leases, int64_t from, int64_t to)
{
    for (int64_t t = from; t <= to; t += POLL)
        leader_liveness_update(lv, leases, t, GAP_MS, DEAD_MS);
}

/* A node that stopped renewing while this leader watched with working API access: alive for its
 * lease duration, then silent, then dead after the fence timeout + margin. */
static void test_liveness_dead_node(void **state)
{
    (void)state;
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    _cleanup_json_ cJSON *l = lease_list("n1", "2023-11-14T22:13:15.000000Z", 10);
    poll_same(&lv, l, T0, T0 + 9000);
    struct verdict v = judge(&lv, "n1", T0 + 9000);
    assert_true(v.alive && !v.dead);
    poll_same(&lv, l, T0 + 10000, T0 + 34000);
    v = judge(&lv, "n1", T0 + 34000);
    assert_true(!v.alive && !v.dead);
    poll_same(&lv, l, T0 + 35000, T0 + 35000);
    v = judge(&lv, "n1", T0 + 35000);
    assert_true(!v.alive && v.dead);
    /* It renews again: alive at once. */
    _cleanup_json_ cJSON *l2 = lease_list("n1", "2023-11-14T22:14:00.000000Z", 10);
    assert_true(leader_liveness_update(&lv, l2, T0 + 36000, GAP_MS, DEAD_MS));
    v = judge(&lv, "n1", T0 + 36000);
    assert_true(v.alive && !v.dead);
    /* Never seen: neither alive nor dead (waiting is the safe side). */
    v = judge(&lv, "n9", T0 + 36000);
    assert_true(!v.alive && !v.dead);
    leader_liveness_clear(&lv);
}

/* Rule 13: an agent silent past the dead window (OOM-killed, crash-looping, evicted, SIGSTOPped) fenced
 * nothing. Its node is dead only once its kubelet is read down after the heartbeat's last change; a Ready
 * kubelet, or one never read or unreadable, leaves it silent ("agent absent"). */
static void test_liveness_agent_absent(void **state)
{
    (void)state;
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    _cleanup_json_ cJSON *l = lease_list("n1", "2023-11-14T22:13:15.000000Z", 10);
    poll_same(&lv, l, T0, T0 + 20000);
    /* Read down before the dead window: the suspect list does not ask yet, and it is not dead. */
    assert_null(leader_liveness_suspect(&lv, 0, T0 + 20000, DEAD_MS, 5000));
    poll_same(&lv, l, T0 + 21000, T0 + 40000);
    /* Never read: not dead, and absent; the leader is asked to read it. */
    assert_false(judge_as_is(&lv, "n1", T0 + 40000).dead);
    assert_true(leader_liveness_agent_absent(&lv, "n1", T0 + 40000, DEAD_MS));
    assert_string_equal(leader_liveness_suspect(&lv, 0, T0 + 40000, DEAD_MS, 5000), "n1");
    assert_null(leader_liveness_suspect(&lv, 1, T0 + 40000, DEAD_MS, 5000));
    /* The kubelet reports Ready: the agent is absent, the node is not dead. */
    assert_false(leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_READY, NULL, T0 + 40000, DEAD_MS));
    assert_false(judge_as_is(&lv, "n1", T0 + 90000).dead);
    assert_true(leader_liveness_agent_absent(&lv, "n1", T0 + 90000, DEAD_MS));
    assert_false(leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_UNKNOWN, NULL, T0 + 91000, DEAD_MS));
    assert_false(judge_as_is(&lv, "n1", T0 + 91000).dead);
    /* Down: now dead (a changed verdict), no longer absent, and not read again before the recheck. */
    assert_true(leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_DOWN, NULL, T0 + 92000, DEAD_MS));
    assert_true(judge_as_is(&lv, "n1", T0 + 92000).dead);
    assert_false(leader_liveness_agent_absent(&lv, "n1", T0 + 92000, DEAD_MS));
    assert_null(leader_liveness_suspect(&lv, 0, T0 + 93000, DEAD_MS, 5000));
    assert_string_equal(leader_liveness_suspect(&lv, 0, T0 + 97000, DEAD_MS, 5000), "n1");
    /* A gap in the leader's own view restarts the clock: the earlier down reading no longer counts, even
     * once the window has passed again. */
    leader_liveness_failed(&lv);
    poll_same(&lv, l, T0 + 100000, T0 + 140000);
    assert_false(judge_as_is(&lv, "n1", T0 + 140000).dead);
    assert_true(leader_liveness_agent_absent(&lv, "n1", T0 + 140000, DEAD_MS));
    leader_liveness_clear(&lv);
}

/* The kubelet's view is the Node's Ready condition; anything but True is down, no condition unknown. */
static void test_node_kubelet_table(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        enum leader_kubelet want;
    } rows[] = {
        {"{\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
         "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
         LEADER_KUBELET_READY},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}", LEADER_KUBELET_DOWN},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}", LEADER_KUBELET_DOWN},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":true}]}}", LEADER_KUBELET_UNKNOWN},
        {"{\"status\":{}}", LEADER_KUBELET_UNKNOWN},
        {"{}", LEADER_KUBELET_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        _cleanup_json_ cJSON *n = cJSON_Parse(rows[i].json);
        assert_non_null(n);
        assert_int_equal(leader_node_kubelet(n), rows[i].want);
    }
}

/* node's heartbeat Lease with the peer annotation `peer` (NULL: none). */
static cJSON *lease_with_peer(const char *node, const char *renew, const char *peer)
{
    cJSON *list = lease_list(node, renew, 10);
    cJSON *md = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(list, "items"), 0), "metadata");
    if (peer)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), RSS_ANNOTATION_PEER, peer);
    return list;
}

/* The agent the Lease names, silent, on a node whose Node (read after the silence) says another boot than
 * the agent published: the node rebooted, that agent and its members' containers are gone, its reports are
 * superseded although no new agent spoke yet (a real-world run counted such a member ready). */
static void test_liveness_superseded_by_reboot(void **state)
{
    (void)state;
    const char *peer =
        "{\"agent\":\"bbbb\",\"since\":1700000005000,\"boot\":\"1111aaaa-0000-4000-8000-000000000001\"}";
    _cleanup_json_ cJSON *l = lease_with_peer("n1", "2023-11-14T22:13:15.000000Z", peer);
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, l, T0, GAP_MS, DEAD_MS);
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000)); /* no Node read yet */
    /* Read while it was down: the same boot. */
    assert_false(leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_DOWN,
                                         "1111aaaa-0000-4000-8000-000000000001", T0 + 1000, DEAD_MS));
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000));
    /* Not a boot id: ignored. */
    leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_READY, "not-a-boot-ID!", T0 + 2000, DEAD_MS);
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000));
    /* Powered on: Ready in another boot, the agent not back. Its reports are superseded; plan again. */
    assert_true(leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_READY,
                                        "2222bbbb-0000-4000-8000-000000000002", T0 + 3000, DEAD_MS));
    assert_true(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000));
    /* A report of another agent, newer than this one by more than the skew: not this rule. */
    assert_false(leader_liveness_superseded(&lv, "n1", "cccc", 1700000005000 + RSS_CLOCK_SKEW_MAX_MS + 1000));
    /* The heartbeat renews (the agent was alive after all, or a new one): the Node read no longer counts. */
    _cleanup_json_ cJSON *l2 = lease_with_peer("n1", "2023-11-14T22:13:25.000000Z", peer);
    leader_liveness_update(&lv, l2, T0 + 4000, GAP_MS, DEAD_MS);
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000));
    leader_liveness_clear(&lv);
    /* An rssd that publishes no boot: never superseded by a Node read. */
    _cleanup_json_ cJSON *l3 =
        lease_with_peer("n1", "2023-11-14T22:13:15.000000Z", "{\"agent\":\"bbbb\",\"since\":1700000005000}");
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, l3, T0, GAP_MS, DEAD_MS);
    leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_READY, "2222bbbb-0000-4000-8000-000000000002",
                            T0 + 3000, DEAD_MS);
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000006000));
    leader_liveness_clear(&lv);
}

/* A report is superseded only when the node's Lease is renewed by another incarnation that started after
 * the report was written (both times from that node's clock): after a power-on or an rssd restart. Across
 * a reboot that clock may have been set differently on either side, so a report written up to
 * RSS_CLOCK_SKEW_MAX_MS after the new process's start counts as written before it. A report of the current
 * incarnation, one written later than that (the Lease seen late), or anything unknown or malformed is not. */
static void test_liveness_superseded(void **state)
{
    (void)state;
    static const char *const unknown[] = {
        NULL,                                                            /* an older rssd: no annotation */
        "{\"address\":\"10.0.0.1:9\",\"key\":\"k\",\"agent\":\"bbbb\"}", /* no "since" */
        "{\"agent\":\"bbbb\",\"since\":\"soon\"}",
        "{\"agent\":\"BBBB\",\"since\":1700000005000}", /* not an incarnation rssd makes */
        "{\"agent\":\"bbbb\",\"since\":1e300}",
        "{\"agent\":\"bbbb\",\"since\":-5}",
        "{\"agent\":\"0123456789abcdef0123456789abcdef0\",\"since\":1700000005000}", /* too long */
        "not json",
    };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        _cleanup_json_ cJSON *l = lease_with_peer("n1", "2023-11-14T22:13:15.000000Z", unknown[i]);
        struct leader_liveness lv;
        leader_liveness_init(&lv);
        leader_liveness_start(&lv, T0);
        leader_liveness_update(&lv, l, T0, GAP_MS, DEAD_MS);
        if (leader_liveness_superseded(&lv, "n1", "aaaa", 1700000000000))
            fail_msg("peer annotation %s: a report judged superseded", unknown[i] ? unknown[i] : "(none)");
        leader_liveness_clear(&lv);
    }
    _cleanup_json_ cJSON *l = lease_with_peer(
        "n1", "2023-11-14T22:13:15.000000Z",
        "{\"address\":\"10.0.0.1:9\",\"key\":\"k\",\"agent\":\"bbbb\",\"since\":1700000005000}");
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, l, T0, GAP_MS, DEAD_MS);
    assert_true(leader_liveness_superseded(&lv, "n1", "aaaa", 1700000004999)); /* before b started */
    /* After b's start by b's clock, within the skew bound: the node's clock came back from the power cut
     * behind the one a's report was written with (it read 1 s behind the report's clock here). */
    assert_true(leader_liveness_superseded(&lv, "n1", "aaaa", 1700000006000));
    assert_true(leader_liveness_superseded(&lv, "n1", "aaaa", 1700000005000 + RSS_CLOCK_SKEW_MAX_MS - 1));
    /* Later than that: a's report is newer than b (the Lease seen late). */
    assert_false(leader_liveness_superseded(&lv, "n1", "aaaa", 1700000005000 + RSS_CLOCK_SKEW_MAX_MS));
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000004999)); /* b's own */
    assert_false(leader_liveness_superseded(&lv, "n1", NULL, 1700000004999));   /* names none */
    assert_false(leader_liveness_superseded(&lv, "n1", "aaaa", 0));             /* no time */
    assert_false(leader_liveness_superseded(&lv, "n2", "aaaa", 1700000004999)); /* a node never seen */
    assert_false(leader_liveness_superseded(&lv, NULL, "aaaa", 1700000004999)); /* not scheduled */
    /* The node's rssd restarts again: c replaces b, and b's reports before c's start are superseded. */
    _cleanup_json_ cJSON *l2 =
        lease_with_peer("n1", "2023-11-14T22:13:25.000000Z", "{\"agent\":\"cccc\",\"since\":1700000009000}");
    leader_liveness_update(&lv, l2, T0 + 10000, GAP_MS, DEAD_MS);
    assert_true(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000008000));
    assert_false(leader_liveness_superseded(&lv, "n1", "bbbb", 1700000009000 + RSS_CLOCK_SKEW_MAX_MS));
    assert_false(leader_liveness_superseded(&lv, "n1", "cccc", 1700000008000));
    leader_liveness_clear(&lv);
}

/* A node's agent publishes its --fence-timeout in its heartbeat Lease: the leader judges the node with
 * the longer of that and its own (30 s here), so an agent updated to a longer fence timeout is not
 * judged fenced while it still runs its members. Garbage counts as nothing published; a huge value is
 * capped at an hour. */
static void test_liveness_published_fence(void **state)
{
    (void)state;
    static const struct {
        const char *node, *fence; /* NULL: an older rssd, nothing published */
        int64_t dead_from;        /* ms after T0 */
    } rows[] = {
        {"n1", "60000", 65000},
        {"n2", "abc", 35000},
        {"n3", NULL, 35000},
        {"n4", "10000", 35000}, /* shorter than the leader's: the leader's own */
        {"n5", "99999999999999999999999", 3600000 + 5000},
    };
    const size_t n = sizeof(rows) / sizeof(rows[0]);
    _cleanup_json_ cJSON *leases = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(leases, "items");
    for (size_t i = 0; i < n; i++) {
        _cleanup_json_ cJSON *one = lease_list(rows[i].node, "2023-11-14T22:13:15.000000Z", 10);
        cJSON *l = cJSON_DetachItemFromArray(cJSON_GetObjectItemCaseSensitive(one, "items"), 0);
        if (rows[i].fence)
            cJSON_AddStringToObject(
                cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(l, "metadata"), "annotations"),
                RSS_ANNOTATION_FENCE_TIMEOUT, rows[i].fence);
        cJSON_AddItemToArray(items, l);
    }
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    lv.own_fence_ms = 30000;
    poll_same(&lv, leases, T0, T0 + 34000);
    for (size_t i = 0; i < n; i++) {
        int64_t at = T0 + rows[i].dead_from;
        struct verdict before = judge(&lv, rows[i].node, at - 1), after = judge(&lv, rows[i].node, at);
        if (before.dead || !after.dead)
            fail_msg("%s (fence %s): dead at %lld: %d, a ms before: %d", rows[i].node,
                     rows[i].fence ? rows[i].fence : "none", (long long)rows[i].dead_from, after.dead,
                     before.dead);
        assert_int_equal(leader_liveness_dead_at(&lv, rows[i].node, T0 + 34000, DEAD_MS), at);
    }
    /* The poll reports n1's own flip to dead (a new pass plans at once). */
    poll_same(&lv, leases, T0 + 35000, T0 + 64000);
    assert_true(leader_liveness_update(&lv, leases, T0 + 65000, GAP_MS, DEAD_MS));
    assert_int_equal(leader_liveness_dead_at(&lv, "n1", T0 + 65000, DEAD_MS), 0); /* dead: none due */
    leader_liveness_clear(&lv);
}

/* A List of the one pod rss-db-0 (uid, node); the forged annotation on it must change nothing. */
static cJSON *pod_list(const char *uid, const char *node)
{
    cJSON *list = cJSON_CreateObject();
    cJSON *p = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(p, "metadata");
    cJSON_AddStringToObject(md, "name", "rss-db-0");
    cJSON_AddStringToObject(md, "uid", uid);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), RSS_ANNOTATION_OBSERVED, uid);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "spec"), "nodeName", node);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(list, "items"), p);
    return list;
}

/* A List of the record of rss-db-0 with `observed` about pod uid `for_uid`. */
static cJSON *record_list(const char *for_uid, const char *observed)
{
    cJSON *list = cJSON_CreateObject();
    cJSON *cm = rss_record_new("ns", "db", "rss-db-0");
    cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED, observed);
    cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_FOR, for_uid);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(list, "items"), cm);
    return list;
}

/* Model trace F2: a node back from a partition whose agent reports before its next heartbeat. A new
 * report on a pod of the node is a sign of life; the first sight of a report is not (it may be old). */
static void test_liveness_report_revives(void **state)
{
    (void)state;
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    _cleanup_json_ cJSON *l = lease_list("n1", "2023-11-14T22:13:15.000000Z", 10);
    _cleanup_json_ cJSON *p1 = pod_list("u1", "n1");
    _cleanup_json_ cJSON *r1 = record_list("u1", "{\"role\":\"primary\",\"generation\":3}");
    leader_liveness_reports(&lv, p1, r1, T0);
    poll_same(&lv, l, T0, T0 + 36000);
    leader_liveness_reports(&lv, p1, r1, T0 + 36000); /* the same report: no sign of life */
    assert_true(judge(&lv, "n1", T0 + 36000).dead);
    /* A new report about another incarnation of the pod is not this pod's: still dead. */
    _cleanup_json_ cJSON *r2old = record_list("u0", "{\"role\":\"primary\",\"generation\":4}");
    leader_liveness_reports(&lv, p1, r2old, T0 + 36500);
    assert_true(judge(&lv, "n1", T0 + 36500).dead);
    _cleanup_json_ cJSON *r2 = record_list("u1", "{\"role\":\"primary\",\"generation\":4}");
    leader_liveness_reports(&lv, p1, r2, T0 + 37000);
    struct verdict v = judge(&lv, "n1", T0 + 37000);
    assert_true(v.alive && !v.dead);
    /* A pod first seen (another uid) with a report proves nothing: n1 goes dead again on schedule. */
    _cleanup_json_ cJSON *p3 = pod_list("u2", "n1");
    _cleanup_json_ cJSON *r3 = record_list("u2", "{\"role\":\"primary\"}");
    poll_same(&lv, l, T0 + 38000, T0 + 72000);
    leader_liveness_reports(&lv, p3, r3, T0 + 72000);
    assert_true(judge(&lv, "n1", T0 + 72000).dead);
    leader_liveness_clear(&lv);
}

/* The issue-9 trace: the API server froze for 75 s. The heartbeats did not change because nobody
 * could write, so judging by renewTime (or by polls that failed) made every node "silent for 72 s".
 * Failed polls are a gap in the leader's own view: every clock restarts when they succeed again. */
static void test_liveness_api_outage(void **state)
{
    (void)state;
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    _cleanup_json_ cJSON *l = lease_list("n1", "2023-11-14T22:13:15.000000Z", 10);
    poll_same(&lv, l, T0, T0 + 5000);
    for (int64_t t = T0 + 6000; t < T0 + 81000; t += 10000)
        leader_liveness_failed(&lv); /* each LIST timed out */
    leader_liveness_update(&lv, l, T0 + 81000, GAP_MS, DEAD_MS);
    struct verdict v = judge(&lv, "n1", T0 + 81000);
    assert_true(v.alive && !v.dead);
    /* Same without a failure: the loop did not poll for longer than the gap allowed (blocked). */
    poll_same(&lv, l, T0 + 82000, T0 + 100000);
    leader_liveness_update(&lv, l, T0 + 190000, GAP_MS, DEAD_MS);
    v = judge(&lv, "n1", T0 + 190000);
    assert_true(!v.dead);
    /* A new term forgets everything: a node is not dead before DEAD_MS of this term. */
    leader_liveness_start(&lv, T0 + 200000);
    poll_same(&lv, l, T0 + 200000, T0 + 234000);
    assert_false(judge(&lv, "n1", T0 + 234000).dead);
    poll_same(&lv, l, T0 + 235000, T0 + 235000);
    assert_true(judge(&lv, "n1", T0 + 235000).dead);
    leader_liveness_clear(&lv);
}

/* findings/heartbeat-lease-huge-duration.json: leaseDurationSeconds 1e300 was undefined behaviour
 * (float-cast-overflow under UBSan); it is now clamped to an hour. */
/* The dead verdict for a member says "its node fenced it, so it is stopped": the node's self-fence runs
 * `stop` after the fence timeout, for up to the stop timeout, then kills. A primary whose stop took 20 s
 * was seeded elsewhere 16 s after the cut under fence timeout + margin alone. The window per RSS holds
 * the stop timeout (rounded up to whole seconds, as the runtime gets it) and LEADER_KILL_MS, and the
 * snapshot says when it ends so that the leader plans then. */
static void test_dead_window_holds_stop(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec("", "", &spec, &cr);
    spec.hooks[RSS_HOOK_STOP].timeout_ms = 19500; /* the runtime gets 20 s */
    const int64_t window = leader_dead_window(DEAD_MS, &spec);
    assert_int_equal(window, DEAD_MS + 20000 + LEADER_KILL_MS);
    _cleanup_json_ cJSON *leases = lease_list("n1", "2023-11-14T22:13:15.000000Z", 10);
    _cleanup_json_ cJSON *pods = pod_list("u0", "n1");
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    poll_same(&lv, leases, T0, T0 + 40000);
    /* Its kubelet is down too (rule 13): only the window is in question here. */
    leader_liveness_kubelet(&lv, "n1", LEADER_KUBELET_DOWN, NULL, T0 + 40000, DEAD_MS);
    struct leader_snapshot snap;
    leader_snapshot_build(&spec, pods, NULL, &lv, T0 + 40000, window, &snap);
    assert_int_equal(snap.n_members, 1);
    assert_false(snap.members[0].node_alive);
    assert_false(snap.members[0].node_dead); /* past fence + margin, but its stop may still run */
    assert_int_equal(snap.replan_at_ms, T0 + window);
    leader_snapshot_clear(&snap);
    leader_snapshot_build(&spec, pods, NULL, &lv, T0 + window, window, &snap);
    assert_true(snap.members[0].node_dead);
    assert_int_equal(snap.replan_at_ms, 0);
    leader_snapshot_clear(&snap);
    leader_liveness_clear(&lv);
    rss_spec_clear(&spec);
}

/* Issue 35: spec.pod.commands.stop.timeout lowered (30 s -> 2 s) while a node is cut off. The cut agent
 * stops its members with the stop timeout it holds (it cannot read the new spec), so the leader judges the
 * node's members with the longer of the spec's and the one the agent published in its heartbeat Lease:
 * dead no earlier than the node's fence timeout + margin + that stop (rounded up to whole seconds, as the
 * runtime gets it) + the kill. Garbage, 0 (an agent whose RSS specs are all unusable: it kills at once) or
 * nothing published (an older rssd) leave the spec's; a huge value is capped at the longest hook timeout a
 * spec may have (366 days). The kubelet read
 * still comes at the fence timeout + margin: the stop is part of a member's window, not of the node's
 * silence. */
static void test_liveness_published_stop(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec("", "", &spec, &cr);
    spec.hooks[RSS_HOOK_STOP].timeout_ms = 2000; /* the spec as lowered during the cut */
    const int64_t window = leader_dead_window(DEAD_MS, &spec);
    assert_int_equal(window, DEAD_MS + 2000 + LEADER_KILL_MS);
    static const struct {
        const char *node, *fence, *stop; /* NULL: nothing published */
        int64_t dead_from;               /* ms after T0 */
    } rows[] = {
        {"n1", "30000", "30000", 30000 + 5000 + 30000 + 5000}, /* the cut agent still holds 30 s */
        {"n2", "30000", NULL, 42000},                          /* an older rssd: the spec's */
        {"n3", "30000", "1000", 42000},                        /* shorter than the spec's: the spec's */
        {"n4", "30000", "29500", 70000},                       /* the runtime gets 30 s */
        {"n5", "30000", "abc", 42000},
        {"n6", "30000", "0", 42000},                           /* kills at once */
        {"n7", "60000", "30000", 60000 + 5000 + 30000 + 5000}, /* both longer */
        {"n8", "60000", NULL, 42000 + 30000},                  /* the fence alone, as before */
        {"n9", "10000", "30000", 30000 + 5000 + 30000 + 5000}, /* the leader's fence is the longer */
        {"n10", NULL, "30000", 30000 + 5000 + 30000 + 5000},   /* no fence published: the leader's */
        {"n11", "30000", "99999999999999999999", 30000 + 5000 + 366LL * 24 * 3600 * 1000 + 5000},
    };
    const size_t n = sizeof(rows) / sizeof(rows[0]);
    _cleanup_json_ cJSON *leases = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(leases, "items");
    for (size_t i = 0; i < n; i++) {
        _cleanup_json_ cJSON *one = lease_list(rows[i].node, "2023-11-14T22:13:15.000000Z", 10);
        cJSON *l = cJSON_DetachItemFromArray(cJSON_GetObjectItemCaseSensitive(one, "items"), 0);
        cJSON *ann = cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(l, "metadata"), "annotations");
        if (rows[i].fence)
            cJSON_AddStringToObject(ann, RSS_ANNOTATION_FENCE_TIMEOUT, rows[i].fence);
        if (rows[i].stop)
            cJSON_AddStringToObject(ann, RSS_ANNOTATION_STOP_TIMEOUT, rows[i].stop);
        cJSON_AddItemToArray(items, l);
    }
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    lv.own_fence_ms = 30000;
    poll_same(&lv, leases, T0, T0 + 35000);
    /* The kubelet is read once the node is silent past fence + margin, as before. */
    assert_string_equal(leader_liveness_suspect(&lv, 0, T0 + 35000, DEAD_MS, 5000), "n1");
    for (size_t i = 0; i < n; i++) {
        int64_t at = T0 + rows[i].dead_from;
        assert_int_equal(leader_liveness_dead_at(&lv, rows[i].node, T0 + 35000, window), at);
        leader_liveness_kubelet(&lv, rows[i].node, LEADER_KUBELET_DOWN, NULL, T0 + 35000, DEAD_MS);
        bool alive, dead_before, dead_at;
        int64_t silent;
        leader_liveness_node(&lv, rows[i].node, at - 1, window, &alive, &dead_before, &silent);
        leader_liveness_node(&lv, rows[i].node, at, window, &alive, &dead_at, &silent);
        if (dead_before || !dead_at)
            fail_msg("%s (fence %s, stop %s): dead at %lld: %d, a ms before: %d", rows[i].node,
                     rows[i].fence ? rows[i].fence : "none", rows[i].stop ? rows[i].stop : "none",
                     (long long)rows[i].dead_from, dead_at, dead_before);
    }
    /* The snapshot a plan reads: n1's member is not dead at the lowered spec's window, and the leader plans
     * again when the cut agent's own stop is over. */
    _cleanup_json_ cJSON *pods = pod_list("u0", "n1");
    struct leader_snapshot snap;
    leader_snapshot_build(&spec, pods, NULL, &lv, T0 + window, window, &snap);
    assert_int_equal(snap.n_members, 1);
    assert_false(snap.members[0].node_dead);
    assert_int_equal(snap.replan_at_ms, T0 + 70000);
    leader_snapshot_clear(&snap);
    leader_snapshot_build(&spec, pods, NULL, &lv, T0 + 70000, window, &snap);
    assert_true(snap.members[0].node_dead);
    leader_snapshot_clear(&snap);
    leader_liveness_clear(&lv);
    rss_spec_clear(&spec);
}

static void test_liveness_huge_duration(void **state)
{
    (void)state;
    _cleanup_free_ char *text = NULL;
    FILE *f = fopen(RSS_SHARED_DIR "/findings/heartbeat-lease-huge-duration.json", "r");
    _cleanup_json_ cJSON *leases = NULL;
    if (f) {
        char buf[4096];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        leases = cJSON_Parse(buf);
    } else {
        /* The same input, for a checkout without ../shared. */
        leases = cJSON_Parse("{\"items\":[{\"metadata\":{\"name\":\"rssd-node-n1\"},\"spec\":{\"renewTime\":"
                             "\"2024-01-01T00:00:00.000000Z\",\"leaseDurationSeconds\":1e300}}]}");
    }
    assert_non_null(leases);
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, leases, T0, GAP_MS, DEAD_MS);
    assert_true(judge(&lv, "n1", T0 + 3599000).alive);
    assert_false(judge(&lv, "n1", T0 + 3600000).alive);
    leader_liveness_clear(&lv);
}

/* ---- snapshot ---- */

static const char *pods_json =
    "{\"items\":["
    /* 10 before 2 in the list: the snapshot sorts by ordinal as a number */
    "{\"metadata\":{\"name\":\"rss-db-10\",\"uid\":\"u10\",\"resourceVersion\":\"110\","
    " \"labels\":{\"rss-active-member\":\"true\"}},"
    " \"spec\":{\"nodeName\":\"n1\"},"
    " \"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"side\",\"containerID\":"
    "\"containerd://"
    "zzz\"},{\"name\":\"app\",\"containerID\":\"containerd://abc\"}]}},"
    "{\"metadata\":{\"name\":\"rss-db-2\",\"uid\":\"u2\",\"resourceVersion\":\"102\","
    " \"deletionTimestamp\":\"2023-11-14T22:13:00Z\",\"labels\":{\"rss-active-member\":\"yes\"}},"
    " \"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Pending\"}},"
    /* rss-db-0 carries a user's forged annotations: ignored (listed for the Warning) */
    "{\"metadata\":{\"name\":\"rss-db-0\",\"uid\":\"u0\",\"resourceVersion\":\"100\","
    " \"labels\":{\"rss-active-member\":\"false\"},"
    " \"annotations\":{\"rss.clusterlabs.org/desired\":\"{\\\"epoch\\\":4,\\\"action\\\":\\\"stop\\\","
    "\\\"id\\\":\\\"4-1\\\",\\\"generation\\\":0}\"}},\"spec\":{},\"status\":{}},"
    "{\"metadata\":{\"name\":\"rss-db-02\",\"uid\":\"bad\"}},"
    "{\"metadata\":{\"name\":\"rss-other-1\",\"uid\":\"other\"}},"
    "{\"metadata\":{\"name\":\"rss-db-0\",\"uid\":\"dup\"}}"
    "]}";

/* The member records (rss/record.h): rss-db-10's is about its pod; rss-db-2's is unreadable; rss-db-0's
 * was written for an older incarnation of the pod (uid u0-old), so it counts as none. */
static const char *records_json =
    "{\"items\":["
    "{\"metadata\":{\"name\":\"ns.rss-db-10\",\"resourceVersion\":\"510\",\"labels\":{"
    " \"rss.clusterlabs.org/namespace\":\"ns\",\"rss.clusterlabs.org/rss\":\"db\","
    " \"rss.clusterlabs.org/member\":\"rss-db-10\"}},"
    " \"data\":{\"desired\":\"{\\\"epoch\\\":4,\\\"action\\\":\\\"none\\\"}\",\"desiredFor\":\"u10\","
    "  \"observed\":\"{\\\"containerId\\\":\\\"abc\\\",\\\"generation\\\":2,\\\"role\\\":"
    "\\\"stopped\\\",\\\"status\\\":7,\\\"sequence\\\":\\\"50\\\",\\\"leaseEpoch\\\":4,\\\"time\\\":"
    "\\\"2023-11-14T22:13:00Z\\\"}\",\"observedFor\":\"u10\"}},"
    "{\"metadata\":{\"name\":\"ns.rss-db-2\",\"resourceVersion\":\"502\",\"labels\":{"
    " \"rss.clusterlabs.org/namespace\":\"ns\",\"rss.clusterlabs.org/rss\":\"db\","
    " \"rss.clusterlabs.org/member\":\"rss-db-2\"}},"
    " \"data\":{\"desired\":\"not json\",\"desiredFor\":\"u2\","
    "  \"observed\":\"{\\\"role\\\":\\\"dancing\\\"}\",\"observedFor\":\"u2\"}},"
    "{\"metadata\":{\"name\":\"ns.rss-db-0\",\"resourceVersion\":\"500\",\"labels\":{"
    " \"rss.clusterlabs.org/namespace\":\"ns\",\"rss.clusterlabs.org/rss\":\"db\","
    " \"rss.clusterlabs.org/member\":\"rss-db-0\"}},"
    " \"data\":{\"desired\":\"{\\\"epoch\\\":4,\\\"action\\\":\\\"none\\\"}\",\"desiredFor\":\"u0-old\","
    "  \"observed\":\"{\\\"containerId\\\":\\\"abc\\\",\\\"generation\\\":2,\\\"role\\\":"
    "\\\"stopped\\\",\\\"status\\\":7,\\\"leaseEpoch\\\":4,\\\"time\\\":"
    "\\\"2023-11-14T22:13:00Z\\\"}\",\"observedFor\":\"u0-old\"}}"
    "]}";

struct snap_row {
    size_t idx;
    unsigned ordinal;
    const char *uid, *rv, *phase, *node, *cid;
    bool deleting, alive;
    int active;
    bool has_desired, has_observed, observed_error;
};

static const struct snap_row snap_rows[] = {
    {0, 0, "u0", "500", NULL, NULL, NULL, false, false, 0, false, false, false},
    {1, 2, "u2", "502", "Pending", "n2", NULL, true, false, -1, false, false, true},
    {2, 10, "u10", "510", "Running", "n1", "containerd://abc", false, true, 1, true, true, false},
};

static void test_snapshot_table(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec("", "", &spec, &cr);
    _cleanup_json_ cJSON *pods = cJSON_Parse(pods_json);
    _cleanup_json_ cJSON *records = cJSON_Parse(records_json);
    assert_non_null(pods);
    assert_non_null(records);
    _cleanup_json_ cJSON *leases = lease_list("n1", "2023-11-14T22:13:15Z", 10);
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, leases, T0, GAP_MS, DEAD_MS);
    struct leader_snapshot snap;
    leader_snapshot_build(&spec, pods, records, &lv, T0 + 5000, DEAD_MS, &snap);
    leader_liveness_clear(&lv);
    assert_int_equal(snap.n_members, 3);
    /* skipped: rss-db-02 (leading zero), rss-other-1, the duplicate rss-db-0; noted: bad desired, bad
     * observed */
    assert_int_equal(snap.n_errors, 5);
    /* the pod with the forged annotation, once (the duplicate rss-db-0 was skipped before) */
    assert_int_equal(snap.n_ignored, 1);
    assert_string_equal(cJSON_GetStringValue(at((cJSON *)snap.ignored[0], "metadata.uid")), "u0");
    for (size_t i = 0; i < sizeof(snap_rows) / sizeof(snap_rows[0]); i++) {
        const struct snap_row *r = &snap_rows[i];
        const struct rss_member_input *m = &snap.members[r->idx];
        assert_int_equal(m->ordinal, r->ordinal);
        assert_true(m->pod_exists);
        assert_string_equal(m->pod_uid, r->uid);
        assert_string_equal(m->resource_version, r->rv);
        if (r->phase)
            assert_string_equal(m->phase, r->phase);
        else
            assert_null(m->phase);
        if (r->node)
            assert_string_equal(m->node, r->node);
        else
            assert_null(m->node);
        if (r->cid)
            assert_string_equal(m->container_id, r->cid);
        else
            assert_null(m->container_id);
        assert_int_equal(m->deleting, r->deleting);
        assert_int_equal(m->node_alive, r->alive);
        assert_int_equal(m->active_label, r->active);
        assert_int_equal(m->has_desired, r->has_desired);
        assert_int_equal(m->has_observed, r->has_observed);
        assert_int_equal(m->observed_error != NULL, r->observed_error);
    }
    const struct rss_member_input *m10 = &snap.members[2];
    assert_false(m10->node_dead);
    assert_int_equal(m10->desired.epoch, 4);
    assert_int_equal(m10->desired.action, RSS_ACTION_NONE);
    assert_int_equal(m10->observed.sequence, 50);
    assert_int_equal(m10->observed.generation, 2);
    /* n2 has no Lease: never seen, so neither alive nor dead */
    assert_false(snap.members[1].node_alive);
    assert_false(snap.members[1].node_dead);

    /* The snapshot feeds the planner as is: a stale-epoch pod gets fenced. */
    struct rss_plan_input in = {.spec = &spec,
                                .epoch = 5,
                                .now_ms = NOW,
                                .statefulset_replicas = 3,
                                .members = snap.members,
                                .n_members = snap.n_members};
    struct rss_plan plan;
    rss_error_t err = NULL;
    assert_int_equal(rss_planner_plan(&in, &plan, &err), 0);
    assert_true(plan.fencing);
    assert_true(plan.n_patches >= 1);
    rss_plan_free(&plan);
    leader_snapshot_clear(&snap);
    rss_spec_clear(&spec);
}

/* ---- event correlation: repeats and bursts fold into one Event ---- */

struct ev_step {
    int64_t at_s; /* seconds after NOW */
    const char *reason, *message, *pod;
    int want;    /* 0 = a new Event, n = the n-th occurrence written to the same Event */
    int same_as; /* step whose Event this must be (-1: none to check) */
};

static const struct ev_step ev_steps[] = {
    /* 0-2: identical repeats patch one Event */
    {0, "SeedChosen", "rss-db-2 seeds", NULL, 0, -1},
    {1, "SeedChosen", "rss-db-2 seeds", NULL, 2, 0},
    {2, "SeedChosen", "rss-db-2 seeds", NULL, 3, 0},
    /* 3: another message of the same group within the fold window: the same Event, new message */
    {3, "SeedChosen", "rss-db-10 seeds", NULL, 4, 0},
    /* 4-5: other groups (reason, member) are Events of their own */
    {4, "Joining", "rss-db-2 seeds", NULL, 0, -1},
    {5, "SeedChosen", "rss-db-2 seeds", "rss-db-2", 0, -1},
    /* 6: a burst of waits while an RSS starts: one Event, not four */
    {6, "WaitingForMembers", "waiting for 3 of 3", NULL, 0, -1},
    {6, "WaitingForMembers", "waiting for 2 of 3", NULL, 2, 6},
    {7, "WaitingForMembers", "waiting for 1 of 3", NULL, 3, 6},
    /* 9: after the fold window a different message is a new Event... */
    {20, "SeedChosen", "rss-db-5 seeds", NULL, 0, -1},
    /* ...and the same message is still a repeat of the current one */
    {40, "SeedChosen", "rss-db-5 seeds", NULL, 2, 9},
};

static void test_event_correlation_table(void **state)
{
    (void)state;
    struct leader_events ev;
    leader_events_init(&ev, 8);
    char *names[sizeof(ev_steps) / sizeof(ev_steps[0])] = {0};
    for (size_t i = 0; i < sizeof(ev_steps) / sizeof(ev_steps[0]); i++) {
        const struct ev_step *s = &ev_steps[i];
        struct leader_event_key k = {.ns = "prod",
                                     .rss_uid = "u-1",
                                     .type = "Normal",
                                     .reason = s->reason,
                                     .message = s->message,
                                     .pod = s->pod};
        int64_t first = 0;
        int got = leader_events_note(&ev, &k, "db", NOW + s->at_s * 1000, &names[i], &first);
        if (got != s->want)
            fail_msg("step %zu (%s/%s): got %d, want %d", i, s->reason, s->message, got, s->want);
        assert_true(!strncmp(names[i], "db.", 3));
        if (s->same_as >= 0)
            assert_string_equal(names[i], names[s->same_as]);
        else
            for (size_t j = 0; j < i; j++)
                assert_string_not_equal(names[i], names[j]);
    }
    for (size_t i = 0; i < sizeof(ev_steps) / sizeof(ev_steps[0]); i++)
        free(names[i]);
    /* A forgotten group (its Event expired) starts over; a full table evicts the least recently used. */
    struct leader_event_key k = {"prod", "u-1", "Normal", "SeedChosen", "rss-db-5 seeds", NULL};
    leader_events_forget(&ev, &k);
    char *name = NULL;
    int64_t first;
    assert_int_equal(leader_events_note(&ev, &k, "db", NOW + 41000, &name, &first), 0);
    free(name);
    leader_events_clear(&ev);
    leader_events_init(&ev, 2);
    struct leader_event_key a = {"p", "u", "Normal", "A", "m", NULL},
                            b = {"p", "u", "Normal", "B", "m", NULL},
                            c = {"p", "u", "Normal", "C", "m", NULL};
    assert_int_equal(leader_events_note(&ev, &a, "db", NOW, &name, &first), 0);
    free(name);
    assert_int_equal(leader_events_note(&ev, &b, "db", NOW, &name, &first), 0);
    free(name);
    assert_int_equal(leader_events_note(&ev, &a, "db", NOW, &name, &first), 2);
    free(name);
    assert_int_equal(leader_events_note(&ev, &c, "db", NOW, &name, &first), 0); /* evicts B */
    free(name);
    assert_int_equal(leader_events_note(&ev, &b, "db", NOW, &name, &first), 0);
    free(name);
    leader_events_clear(&ev);
}

static void test_event_object(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec("", "", &spec, &cr);
    _cleanup_json_ cJSON *e =
        leader_build_event(&spec, "db.1", "Warning", "SequenceError", "garbage", "rss-db-1", "me", NOW);
    expect_at(e, "metadata.namespace", "\"prod\"", "event");
    expect_at(e, "involvedObject",
              "{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\","
              "\"name\":\"db\",\"namespace\":\"prod\",\"uid\":\"u-1\"}",
              "event");
    expect_at(e, "related.name", "\"rss-db-1\"", "event");
    expect_at(e, "type", "\"Warning\"", "event");
    expect_at(e, "count", "1", "event");
    expect_at(e, "firstTimestamp", "\"2023-11-14T22:13:20Z\"", "event");
    expect_at(e, "lastTimestamp", "\"2023-11-14T22:13:20Z\"", "event");
    rss_spec_clear(&spec);
}

/* ---- patches ---- */

static void test_pod_patch(void **state)
{
    (void)state;
    char *peers[] = {"rss-db-2.db-svc"};
    struct rss_plan_patch p = {.pod = "rss-db-10",
                               .resource_version = "42",
                               .set_desired = true,
                               .desired = {.epoch = 6,
                                           .id = {6, 3},
                                           .action = RSS_ACTION_PRIMARY,
                                           .generation = 1,
                                           .peers = peers,
                                           .n_peers = 1},
                               .set_active_label = -1};
    p.pod_uid = "u10";
    assert_null(leader_pod_patch(&p)); /* no label change: the pod is not written */
    _cleanup_json_ cJSON *j = leader_record_patch(&p);
    expect_at(j, "metadata.resourceVersion", "\"42\"", "patch");
    expect_at(j, "metadata.labels", "<absent>", "patch");
    expect_at(j, "data.desiredFor", "\"u10\"", "patch");
    _cleanup_json_ cJSON *d = cJSON_Parse(cJSON_GetStringValue(at(j, "data.desired")));
    expect_at(d, "action", "\"primary\"", "desired");
    expect_at(d, "peers", "[\"rss-db-2.db-svc\"]", "desired");
    expect_at(d, "id", "\"6-3\"", "desired");

    struct rss_plan_patch q = {.pod = "rss-db-0", .resource_version = "7", .set_active_label = 0};
    _cleanup_json_ cJSON *k = leader_pod_patch(&q);
    expect_at(k, "metadata.labels", "{\"rss-active-member\":\"false\"}", "label");
    expect_at(k, "metadata.annotations", "<absent>", "label");
    expect_at(k, "metadata.resourceVersion", "<absent>", "label"); /* the label is not trusted: no CAS */
    assert_null(leader_record_patch(&q));                          /* no desired: the record is not written */

    /* Rule 14's hold: written with the CAS, without a *For key (it is about the volume, not the pod). */
    struct rss_plan_patch h = {.pod = "rss-db-2",
                               .resource_version = "9",
                               .set_active_label = -1,
                               .set_hold = true,
                               .hold = "{\"seedSequence\":\"100\"}"};
    _cleanup_json_ cJSON *hj = leader_record_patch(&h);
    expect_at(hj, "metadata.resourceVersion", "\"9\"", "hold");
    expect_at(hj, "data.leftOut", "\"{\\\"seedSequence\\\":\\\"100\\\"}\"", "hold");
    expect_at(hj, "data.desired", "<absent>", "hold");
    expect_at(hj, "data.desiredFor", "<absent>", "hold");
    h.hold = NULL; /* removed: a merge patch null */
    _cleanup_json_ cJSON *hr = leader_record_patch(&h);
    expect_at(hr, "data.leftOut", "null", "hold removed");

    /* Rule 2's recovery pin: in the seed's own write, the same CAS as its desired, no *For key. */
    struct rss_plan_patch s = {
        .pod = "rss-db-1",
        .resource_version = "11",
        .pod_uid = "u1",
        .set_desired = true,
        .desired = {.epoch = 6, .id = {6, 4}, .action = RSS_ACTION_SEED, .generation = 1},
        .set_active_label = -1,
        .set_pin = true,
        .pin = "{\"seedSequence\":\"300\"}"};
    _cleanup_json_ cJSON *sj = leader_record_patch(&s);
    expect_at(sj, "metadata.resourceVersion", "\"11\"", "seed");
    expect_at(sj, "data.recoveryPin", "\"{\\\"seedSequence\\\":\\\"300\\\"}\"", "seed");
    expect_at(sj, "data.desiredFor", "\"u1\"", "seed");
    expect_at(sj, "data.recoveryPinFor", "<absent>", "seed");
    _cleanup_json_ cJSON *sd = cJSON_Parse(cJSON_GetStringValue(at(sj, "data.desired")));
    expect_at(sd, "action", "\"seed\"", "seed");
    /* removed once a primary runs: a patch of its own when nothing else changes */
    struct rss_plan_patch r = {
        .pod = "rss-db-1", .resource_version = "12", .set_active_label = -1, .set_pin = true};
    _cleanup_json_ cJSON *rj = leader_record_patch(&r);
    expect_at(rj, "metadata.resourceVersion", "\"12\"", "pin removed");
    expect_at(rj, "data.recoveryPin", "null", "pin removed");
    expect_at(rj, "data.desired", "<absent>", "pin removed");
}

/* The records kept when their pod or RSS is gone: those with rule 14's hold or rule 2's recovery pin (the
 * pinned member may come back on the same volume, its seed failed); any other record goes. */
static void test_record_holds(void **state)
{
    (void)state;
    const struct {
        const char *data;
        bool keep;
    } rows[] = {
        {"{\"recoveryPin\":\"{\\\"seedSequence\\\":\\\"300\\\"}\"}", true},
        {"{\"leftOut\":\"{\\\"seedSequence\\\":\\\"100\\\"}\"}", true},
        {"{\"recoveryPin\":\"garbage\",\"observed\":\"{}\"}", true},
        {"{\"desired\":\"{}\",\"desiredFor\":\"u1\",\"observed\":\"{}\",\"observedFor\":\"u1\"}", false},
        {"{}", false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        _cleanup_free_ char *j = rss_xasprintf("{\"data\":%s}", rows[i].data);
        _cleanup_json_ cJSON *cm = cJSON_Parse(j);
        assert_non_null(cm);
        if (leader_record_holds(cm) != rows[i].keep)
            fail_msg("row %zu (%s): want keep=%d", i, rows[i].data, rows[i].keep);
    }
}

struct status_row {
    const char *name, *status, *prev;
    int64_t epoch;
    const char *want; /* the value of the whole-status "add" after the epoch test; NULL: no write */
};

static const struct status_row status_rows[] = {
    {"first write", "{\"phase\":\"Running\",\"members\":{\"primary\":[\"a\",\"b\"]}}", NULL, 3,
     "{\"phase\":\"Running\",\"members\":{\"primary\":[\"a\",\"b\"]},\"primaries\":2,\"primary\":\"a,b\","
     "\"epoch\":3}"},
    {"unchanged: no write", "{\"phase\":\"Running\",\"members\":{\"primary\":[\"a\"]}}",
     "{\"primaries\":1,\"primary\":\"a\",\"members\":{\"primary\":[\"a\"]},\"phase\":\"Running\"}", 3, NULL},
    /* The printer columns' fields: the waiting reason while WaitingForMembers is True, gone after. */
    {"waiting",
     "{\"phase\":\"Recovering\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"X\"},"
     "{\"type\":\"WaitingForMembers\",\"status\":\"True\",\"reason\":\"SequenceError\"}]}",
     NULL, 3,
     "{\"phase\":\"Recovering\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"X\"},"
     "{\"type\":\"WaitingForMembers\",\"status\":\"True\",\"reason\":\"SequenceError\"}],\"primaries\":0,"
     "\"waiting\":\"SequenceError\",\"epoch\":3}"},
    {"not waiting",
     "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"WaitingForMembers\",\"status\":\"False\",\"reason\":"
     "\"NotWaiting\"}]}",
     "{\"phase\":\"Recovering\",\"waiting\":\"SequenceError\",\"primaries\":0}", 3,
     "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"WaitingForMembers\",\"status\":\"False\",\"reason\":"
     "\"NotWaiting\"}],\"primaries\":0,\"epoch\":3}"},
    /* The whole status is replaced: a key the planner dropped (a finished recovery pin) goes. */
    {"dropped key gone", "{\"phase\":\"Running\",\"members\":{\"primary\":[]}}",
     "{\"phase\":\"Recovering\",\"recovery\":{\"seedOrdinal\":2},\"members\":{\"primary\":[]},\"primaries\":"
     "0}",
     3, "{\"phase\":\"Running\",\"members\":{\"primary\":[]},\"primaries\":0,\"epoch\":3}"},
    {"no members", "{\"phase\":\"Stopped\"}", "{}", 3, "{\"phase\":\"Stopped\",\"primaries\":0,\"epoch\":3}"},
    /* Rule 11: status.epoch is the epoch floor. The write carries the epoch it tests, never the planner's
     * copy nor the one prev holds: a deposed leader (epoch 1, the floor already 2) tests 1 and is refused. */
    {"the tested epoch is written", "{\"phase\":\"Running\",\"epoch\":7}",
     "{\"phase\":\"Recovering\",\"epoch\":2,\"primaries\":0}", 1,
     "{\"phase\":\"Running\",\"primaries\":0,\"epoch\":1}"},
    {"epoch only differs: no write", "{\"phase\":\"Running\",\"epoch\":1}",
     "{\"phase\":\"Running\",\"epoch\":2,\"primaries\":0}", 2, NULL},
};

static void test_status_patch_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]); i++) {
        const struct status_row *r = &status_rows[i];
        _cleanup_json_ cJSON *st = cJSON_Parse(r->status);
        _cleanup_json_ cJSON *prev = r->prev ? cJSON_Parse(r->prev) : NULL;
        _cleanup_json_ cJSON *p = leader_status_patch(st, prev, r->epoch);
        if (!r->want) {
            if (p)
                fail_msg("%s: unexpected patch", r->name);
            continue;
        }
        _cleanup_free_ char *want = rss_xasprintf(
            "[{\"op\":\"test\",\"path\":\"/status/epoch\",\"value\":%lld},{\"op\":\"add\",\"path\":\"/"
            "status\",\"value\":%s}]",
            (long long)r->epoch, r->want);
        _cleanup_json_ cJSON *wj = cJSON_Parse(want);
        assert_non_null(wj);
        if (!p || !cJSON_Compare(p, wj, true)) {
            _cleanup_free_ char *got = p ? cJSON_PrintUnformatted(p) : NULL;
            fail_msg("%s: got %s, want %s", r->name, got ? got : "(null)", want);
        }
    }
}

/* ---- the write guard: a leader that does not lead writes nothing ---- */

static void test_apply_not_leading(void **state)
{
    (void)state;
    /* Nothing listens on port 1: any request would fail with UNAVAILABLE instead of the outcome LOST. */
    char dir[] = "/tmp/rss-test-leader.XXXXXX";
    assert_non_null(mkdtemp(dir));
    _cleanup_free_ char *cfg = rss_xasprintf("%s/kubeconfig", dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"c\","
          "\"clusters\":[{\"name\":\"k\",\"cluster\":{\"server\":\"http://127.0.0.1:1\"}}],"
          "\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"t\"}}],"
          "\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"k\",\"user\":\"u\"}}]}",
          f);
    fclose(f);
    struct rss_kube *kube = NULL;
    rss_error_t err = NULL;
    int r = rss_kube_new(cfg, &kube, &err);
    unlink(cfg);
    rmdir(dir);
    if (r < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fail_msg("kube: %s", s);
    }
    rss_kube_set_retries(kube, 1, 10);
    struct rss_election_config ec = {.kube = kube, .ns = "x", .name = "rssd-leader"};
    struct rss_election *el = NULL;
    assert_int_equal(rss_election_new(&ec, &el, &err), 0);
    struct leader_events evs;
    leader_events_init(&evs, 8);
    struct leader_ctx ctx = {.kube = kube, .election = el, .epoch = 1, .identity = "me", .events = &evs};
    assert_false(leader_still_leading(&ctx));

    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec("", "", &spec, &cr);
    struct rss_plan_patch patch = {.pod = "rss-db-0", .resource_version = "1", .set_active_label = 1};
    struct rss_plan_delete del = {.pod = "rss-db-1", .uid = "u"};
    struct rss_plan_event ev = {.reason = "Joining", .message = "m"};
    _cleanup_json_ cJSON *status = cJSON_Parse("{\"phase\":\"Running\"}");
    struct rss_plan plans[] = {
        {.patches = &patch, .n_patches = 1, .set_replicas = -1},
        {.create_statefulset = true, .set_replicas = 3},
        {.set_replicas = 2},
        {.deletes = &del, .n_deletes = 1, .set_replicas = -1},
        {.events = &ev, .n_events = 1, .set_replicas = -1},
        {.status = status, .set_replicas = -1},
    };
    for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
        r = leader_apply(&ctx, &spec, cr, &plans[i], &err);
        if (r != LEADER_LOST) {
            _cleanup_free_ char *s = err ? rss_error_string(err) : NULL;
            fail_msg("plan %zu: %d (%s), want LOST", i, r, s ? s : "");
        }
    }
    /* A pod claiming a newer epoch: the Lease is re-read first; here the API is unreachable, so the
     * plan fails (it is retried) and nothing is written. */
    struct rss_plan claims = {.epoch_claims = true, .patches = &patch, .n_patches = 1, .set_replicas = -1};
    assert_true(leader_apply(&ctx, &spec, cr, &claims, &err) < 0);
    rss_error_release(&err);
    /* An empty plan writes nothing, so it is simply done (no status: nothing to compare). */
    struct rss_plan empty = {.set_replicas = -1};
    assert_int_equal(leader_apply(&ctx, &spec, cr, &empty, &err), LEADER_DONE);
    rss_spec_clear(&spec);
    leader_events_clear(&evs);
    rss_election_free(el);
    rss_kube_free(kube);
}

/* rss_election_holder_rebooted: only the same node prefix with another boot id is a certainly-gone
 * holder; everything else (other node, same boot, foreign formats) keeps client-go's expiry. */
static void test_holder_rebooted_table(void **state)
{
    (void)state;
    static const struct {
        const char *holder, *me;
        bool rebooted;
    } rows[] = {
        {"node-1_0000dead_7_0badf00d", "node-1_1111beef_9_12345678", true},
        {"node-1_1111beef_7_0badf00d", "node-1_1111beef_9_12345678", false},  /* same boot: maybe alive */
        {"node-2_0000dead_7_0badf00d", "node-1_1111beef_9_12345678", false},  /* another node */
        {"node-10_0000dead_7_0badf00d", "node-1_1111beef_9_12345678", false}, /* prefix, not equal */
        {"a.b_c_0000dead_7_0badf00d", "a.b_c_1111beef_9_12345678", true},     /* prefix with '_' */
        {"the-test", "node-1_1111beef_9_12345678", false},                    /* not our format */
        {"node-1_dead_7_0badf00d", "node-1_1111beef_9_12345678", false},      /* short boot field */
        {"", "node-1_1111beef_9_12345678", false},
        {NULL, "node-1_1111beef_9_12345678", false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rss_election_holder_rebooted(rows[i].holder, rows[i].me) != rows[i].rebooted)
            fail_msg("row %zu: holder %s, me %s: want %d", i, rows[i].holder ? rows[i].holder : "(null)",
                     rows[i].me, rows[i].rebooted);
}

/* A candidate facing a valid Lease of another holder looks again at its expiry, at least every half
 * lease duration, never sooner than the retry period; otherwise after the retry period. */
static void test_candidate_wake(void **state)
{
    (void)state;
    const int64_t s = 1000000000000LL, ms = 1000000;
    /* nobody holds it (or the GET failed): the retry period, as before */
    assert_true(election_candidate_wake(s, 2000, 15000, false, s + 14000 * ms) == s + 2000 * ms);
    /* held, renewed just now: half a lease duration, not every 2 s */
    assert_true(election_candidate_wake(s, 2000, 15000, true, s + 15000 * ms) == s + 7500 * ms);
    /* held, expiring in 4 s: at its expiry */
    assert_true(election_candidate_wake(s, 2000, 15000, true, s + 4000 * ms) == s + 4000 * ms);
    /* held, expiring in 1 s: not sooner than the retry period */
    assert_true(election_candidate_wake(s, 2000, 15000, true, s + 1000 * ms) == s + 2000 * ms);
    /* the world's short timings: lease 3 s, retry 500 ms */
    assert_true(election_candidate_wake(s, 500, 3000, true, s + 3000 * ms) == s + 1500 * ms);
}

/* The Services checked this term: a sorted set, so a reconcile's lookup does not grow with the number
 * of RSSs (2,000 of them must not cost 2,000 comparisons per pod event). */
static void test_keyset(void **state)
{
    (void)state;
    struct leader_keyset s = {0};
    assert_false(leader_keyset_has(&s, "a"));
    leader_keyset_del_prefix(&s, "ns/"); /* an empty set: nothing to do (UBSan: no memmove of NULL) */
    assert_int_equal(s.n, 0);
    char key[32];
    for (int i = 999; i >= 0; i -= 2) { /* 500 keys, inserted in reverse */
        snprintf(key, sizeof(key), "ns/r%04d/u", i);
        leader_keyset_add(&s, key);
    }
    leader_keyset_add(&s, "ns/r0999/u"); /* again: no duplicate */
    assert_int_equal(s.n, 500);
    for (size_t i = 1; i < s.n; i++)
        assert_true(strcmp(s.keys[i - 1], s.keys[i]) < 0);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "ns/r%04d/u", i);
        assert_int_equal(leader_keyset_has(&s, key), i % 2 == 1);
    }
    assert_false(leader_keyset_has(&s, "ns/r0999/other-uid"));
    leader_keyset_del(&s, "ns/r0500/u"); /* absent: nothing changes */
    assert_int_equal(s.n, 500);
    leader_keyset_del(&s, "ns/r0001/u"); /* the first, a middle one and the last */
    leader_keyset_del(&s, "ns/r0501/u");
    leader_keyset_del(&s, "ns/r0999/u");
    assert_int_equal(s.n, 497);
    assert_false(leader_keyset_has(&s, "ns/r0001/u") || leader_keyset_has(&s, "ns/r0501/u") ||
                 leader_keyset_has(&s, "ns/r0999/u"));
    assert_true(leader_keyset_has(&s, "ns/r0003/u") && leader_keyset_has(&s, "ns/r0997/u"));
    for (size_t i = 1; i < s.n; i++)
        assert_true(strcmp(s.keys[i - 1], s.keys[i]) < 0);
    leader_keyset_del_prefix(&s, "ns/r01"); /* r0101 .. r0199, odd: 50 keys, and none beside them */
    assert_int_equal(s.n, 447);
    assert_false(leader_keyset_has(&s, "ns/r0101/u") || leader_keyset_has(&s, "ns/r0199/u"));
    assert_true(leader_keyset_has(&s, "ns/r0099/u") && leader_keyset_has(&s, "ns/r0201/u"));
    leader_keyset_del_prefix(&s, "ns/r5"); /* none */
    assert_int_equal(s.n, 447);
    for (size_t i = 1; i < s.n; i++)
        assert_true(strcmp(s.keys[i - 1], s.keys[i]) < 0);
    leader_keyset_clear(&s);
    assert_int_equal(s.n, 0);
    assert_false(leader_keyset_has(&s, "ns/r0999/u"));
    leader_keyset_clear(&s);
}

/* nodeLossPolicy Replace: the out-of-service taint, and which PersistentVolumes pin a member to its node. */
static void test_replace_facts(void **state)
{
    (void)state;
    static const struct {
        const char *node;
        bool oos;
    } nodes[] = {
        {"{}", false},
        {"{\"spec\":{\"taints\":[]}}", false},
        {"{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/out-of-service\",\"value\":\"nodeshutdown\","
         "\"effect\":\"NoExecute\"}]}}",
         true},
        {"{\"spec\":{\"taints\":[{\"key\":\"x\",\"effect\":\"NoExecute\"},{\"key\":\"node.kubernetes.io/"
         "out-of-service\",\"effect\":\"NoSchedule\"}]}}",
         true},
        {"{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/"
         "out-of-service\",\"effect\":\"PreferNoSchedule\"}]}}",
         false},
        {"{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]}}",
         false},
    };
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
        _cleanup_json_ cJSON *n = cJSON_Parse(nodes[i].node);
        assert_non_null(n);
        if (leader_node_out_of_service(n) != nodes[i].oos)
            fail_msg("node row %zu: %s", i, nodes[i].node);
    }
    static const struct {
        const char *pv;
        enum rss_volume_locality want;
    } pvs[] = {
        {"{}", RSS_VOLUME_UNKNOWN},
        {"{\"spec\":{\"local\":{\"path\":\"/mnt/disks/a\"},\"nodeAffinity\":{}}}", RSS_VOLUME_NODE_LOCAL},
        {"{\"spec\":{\"hostPath\":{\"path\":\"/data\"}}}", RSS_VOLUME_NODE_LOCAL},
        {"{\"spec\":{\"csi\":{\"driver\":\"topolvm.io\"},\"nodeAffinity\":{\"required\":{"
         "\"nodeSelectorTerms\":[{"
         "\"matchExpressions\":[{\"key\":\"kubernetes.io/"
         "hostname\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}}}",
         RSS_VOLUME_NODE_LOCAL},
        {"{\"spec\":{\"csi\":{\"driver\":\"x\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
         "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}}}",
         RSS_VOLUME_NODE_LOCAL},
        /* a zonal cloud disk follows the pod within its zone */
        {"{\"spec\":{\"csi\":{\"driver\":\"pd.csi.storage.gke.io\"},\"nodeAffinity\":{\"required\":{"
         "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/"
         "zone\",\"operator\":"
         "\"In\",\"values\":[\"z1\"]}]}]}}}}",
         RSS_VOLUME_NETWORK},
        {"{\"spec\":{\"nfs\":{\"server\":\"s\",\"path\":\"/x\"}}}", RSS_VOLUME_NETWORK},
    };
    for (size_t i = 0; i < sizeof(pvs) / sizeof(pvs[0]); i++) {
        _cleanup_json_ cJSON *pv = cJSON_Parse(pvs[i].pv);
        assert_non_null(pv);
        if (leader_pv_locality(pv) != pvs[i].want)
            fail_msg("pv row %zu: %s", i, pvs[i].pv);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyset),
        cmocka_unit_test(test_candidate_wake),
        cmocka_unit_test(test_holder_rebooted_table),
        cmocka_unit_test(test_statefulset_table),
        cmocka_unit_test(test_statefulset_env_not_overridden),
        cmocka_unit_test(test_statefulset_hash),
        cmocka_unit_test(test_service_table),
        cmocka_unit_test(test_budget_table),
        cmocka_unit_test(test_liveness_dead_node),
        cmocka_unit_test(test_liveness_agent_absent),
        cmocka_unit_test(test_node_kubelet_table),
        cmocka_unit_test(test_liveness_published_fence),
        cmocka_unit_test(test_liveness_superseded),
        cmocka_unit_test(test_liveness_superseded_by_reboot),
        cmocka_unit_test(test_dead_window_holds_stop),
        cmocka_unit_test(test_liveness_published_stop),
        cmocka_unit_test(test_liveness_report_revives),
        cmocka_unit_test(test_liveness_api_outage),
        cmocka_unit_test(test_liveness_huge_duration),
        cmocka_unit_test(test_snapshot_table),
        cmocka_unit_test(test_event_correlation_table),
        cmocka_unit_test(test_event_object),
        cmocka_unit_test(test_pod_patch),
        cmocka_unit_test(test_record_holds),
        cmocka_unit_test(test_status_patch_table),
        cmocka_unit_test(test_apply_not_leading),
        cmocka_unit_test(test_replace_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
