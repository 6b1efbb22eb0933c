/* test_spec.c -- RSS custom resource parsing: rss-operator manifests unchanged, defaults, clear errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/spec.h"

/* rss-operator's example/cluster.yaml (seeds README, the 5-replica version), converted to JSON as
 * kubectl sends it. Must parse unchanged. */
static const char example_cluster[] =
    "{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\","
    "\"metadata\":{\"name\":\"example\"},"
    "\"spec\":{\"replicas\":5,\"reconcileInterval\":\"30s\",\"pod\":{\"antiAffinity\":true,"
    "\"commands\":{\"sequence\":{\"command\":[\"/sequence.sh\"]},\"primary\":{\"command\":[\"/start.sh\"]},"
    "\"seed\":{\"command\":[\"/seed.sh\"]},\"status\":{\"timeout\":\"60s\",\"command\":[\"/check.sh\"]},"
    "\"stop\":{\"command\":[\"/stop.sh\"]}},"
    "\"containers\":[{\"name\":\"dummy\",\"image\":\"quay.io/beekhof/dummy:latest\"}]}}}";

/* rss-operator's apps/galera/cluster.yaml (unknown fields chaosLevel/servicePorts must be tolerated). */
static const char galera_cluster[] =
    "{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\","
    "\"metadata\":{\"name\":\"galera-demo\",\"labels\":{\"kind\":\"galera\"}},"
    "\"spec\":{\"replicas\":4,\"chaosLevel\":0,\"servicePorts\":[{\"name\":\"galera\",\"protocol\":\"TCP\","
    "\"port\":3306,\"targetPort\":3306}],\"pod\":{\"antiAffinity\":true,\"commands\":{"
    "\"sequence\":{\"timeout\":\"20s\",\"command\":[\"/sequence.sh\"]},\"primary\":{\"command\":[\"/"
    "start.sh\"]},"
    "\"seed\":{\"command\":[\"/seed.sh\"]},\"status\":{\"timeout\":\"2m\",\"command\":[\"/check.sh\"]},"
    "\"stop\":{\"command\":[\"/stop.sh\"]}},"
    "\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"mysql-data\"},\"spec\":{\"accessModes\":"
    "[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}],"
    "\"containers\":[{\"name\":\"galera\",\"image\":\"quay.io/beekhof/galera:latest\","
    "\"ports\":[{\"containerPort\":3306}]}]}}}";

/* A minimal valid CR; table rows merge-patch it. */
static const char minimal[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\",\"uid\":\"u-1\","
    "\"generation\":7},\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
    "\"primary\":{\"command\":[\"/start\",\"--join\"]},\"status\":{\"command\":[\"/check\"]},"
    "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}";

/* RFC 7386 merge patch, enough for the tables. */
static void merge_patch(cJSON *target, const cJSON *patch)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
        } else if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
            merge_patch(t, p);
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
            cJSON_AddItemToObject(target, p->string, cJSON_Duplicate(p, true));
        }
    }
}

static cJSON *patched(const char *base, const char *patch)
{
    cJSON *j = cJSON_Parse(base);
    assert_non_null(j);
    if (patch) {
        _cleanup_json_ cJSON *p = cJSON_Parse(patch);
        assert_non_null(p);
        merge_patch(j, p);
    }
    return j;
}

static void test_example_cluster_unchanged(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr = cJSON_Parse(example_cluster);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    assert_string_equal(s.name, "example");
    assert_int_equal(s.replicas, 5);
    assert_int_equal(s.primaries, 5);
    assert_int_equal(s.reconcile_interval_ms, 30000);
    assert_true(s.anti_affinity);
    assert_true(s.hooks[RSS_HOOK_SEED].present);
    assert_false(s.hooks[RSS_HOOK_SECONDARY].present);
    assert_int_equal(s.hooks[RSS_HOOK_STATUS].timeout_ms, 60000);
    assert_int_equal(s.hooks[RSS_HOOK_PRIMARY].argc, 1);
    assert_string_equal(s.hooks[RSS_HOOK_PRIMARY].argv[0], "/start.sh");
    assert_null(s.hooks[RSS_HOOK_PRIMARY].argv[1]);
    assert_int_equal(cJSON_GetArraySize(s.containers), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(s.containers, 0), "name")->valuestring,
                        "dummy");
    assert_null(s.volumes);
    assert_int_equal(s.min_members, 0);
    assert_int_equal(s.max_failures, 3);
    rss_spec_clear(&s);
}

/* Rule 19's hook: optional, parsed like the others, with the short hooks' default timeout. */
static void test_detach_hook(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr =
        patched(minimal, "{\"spec\":{\"pod\":{\"commands\":{\"detach\":{\"command\":[\"/hooks/detach\","
                         "\"now\"]}}}}}");
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    assert_true(s.hooks[RSS_HOOK_DETACH].present);
    assert_int_equal(s.hooks[RSS_HOOK_DETACH].argc, 2);
    assert_string_equal(s.hooks[RSS_HOOK_DETACH].argv[0], "/hooks/detach");
    assert_int_equal(s.hooks[RSS_HOOK_DETACH].timeout_ms, 60000);
    assert_string_equal(rss_spec_hook_name(RSS_HOOK_DETACH), "detach");
    rss_spec_clear(&s);
    _cleanup_json_ cJSON *bad =
        patched(minimal, "{\"spec\":{\"pod\":{\"commands\":{\"detach\":{\"command\":[]}}}}}");
    assert_int_equal(rss_spec_parse(bad, &s, &err), -1);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "commands.detach"));
}

static void test_galera_cluster(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr = cJSON_Parse(galera_cluster);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    assert_int_equal(s.replicas, 4);
    assert_int_equal(s.hooks[RSS_HOOK_SEQUENCE].timeout_ms, 20000);
    assert_int_equal(s.hooks[RSS_HOOK_STATUS].timeout_ms, 120000);
    assert_int_equal(cJSON_GetArraySize(s.volume_claim_templates), 1);
    rss_spec_clear(&s);
}

static void test_defaults(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr = patched(minimal, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    assert_int_equal(s.replicas, 3);
    assert_int_equal(s.primaries, 3);
    assert_int_equal(s.reconcile_interval_ms, 60000);
    assert_false(s.anti_affinity);
    assert_false(s.paused);
    assert_false(s.node_loss_replace); /* nodeLossPolicy Wait */
    assert_false(s.hooks[RSS_HOOK_SEED].present);
    assert_false(s.hooks[RSS_HOOK_DETACH].present); /* optional: without it, rule 15's wait stands */
    assert_int_equal(s.hooks[RSS_HOOK_SEQUENCE].timeout_ms, 60000);
    assert_int_equal(s.hooks[RSS_HOOK_STATUS].timeout_ms, 60000);
    assert_int_equal(s.hooks[RSS_HOOK_PRIMARY].timeout_ms, 600000);
    assert_int_equal(s.hooks[RSS_HOOK_STOP].timeout_ms, 600000);
    assert_int_equal(s.hooks[RSS_HOOK_PRIMARY].argc, 2);
    assert_string_equal(s.hooks[RSS_HOOK_PRIMARY].argv[1], "--join");
    assert_string_equal(s.ns, "ns1");
    assert_string_equal(s.uid, "u-1");
    assert_int_equal(s.generation, 7);
    rss_spec_clear(&s);
    rss_spec_clear(&s); /* idempotent */
    rss_spec_clear(NULL);
}

struct good_row {
    const char *patch;
    int replicas, primaries;
    uint64_t interval_ms;
    int min_members, max_failures;
};

static const struct good_row good_rows[] = {
    {"{\"spec\":{\"replicas\":1}}", 1, 1, 60000, 0, 3}, /* rss-operator raised 1 to 3; rssd honours it */
    {"{\"spec\":{\"replicas\":0}}", 0, 1, 60000, 0, 3},
    {"{\"spec\":{\"replicas\":5,\"primaries\":2}}", 5, 2, 60000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"2m\"}}", 3, 3, 120000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"1h\"}}", 3, 3, 3600000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"1D\"}}", 3, 3, 86400000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"45\"}}", 3, 3, 45000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":45}}", 3, 3, 45000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"1m30s\"}}", 3, 3, 90000, 0, 3},
    {"{\"spec\":{\"reconcileInterval\":\"1500ms\"}}", 3, 3, 1500, 0, 3},
    {"{\"spec\":{\"recovery\":{\"minimumMembers\":2}}}", 3, 3, 60000, 2, 3},
    {"{\"spec\":{\"recovery\":{\"maxFailures\":1}}}", 3, 3, 60000, 0, 1},
    {"{\"spec\":{\"paused\":true,\"servicePorts\":[],\"chaosLevel\":1}}", 3, 3, 60000, 0, 3},
};

static void test_good_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
        const struct good_row *r = &good_rows[i];
        _cleanup_json_ cJSON *cr = patched(minimal, r->patch);
        _cleanup_error_ rss_error_t err = NULL;
        struct rss_spec s;
        if (rss_spec_parse(cr, &s, &err) < 0) {
            _cleanup_free_ char *m = rss_error_string(err);
            fail_msg("row %zu (%s): %s", i, r->patch, m);
        }
        assert_int_equal(s.replicas, r->replicas);
        assert_int_equal(s.primaries, r->primaries);
        assert_int_equal(s.reconcile_interval_ms, r->interval_ms);
        assert_int_equal(s.min_members, r->min_members);
        assert_int_equal(s.max_failures, r->max_failures);
        rss_spec_clear(&s);
    }
}

struct bad_row {
    const char *patch;
    const char *want; /* substring of the error message */
};

static const struct bad_row bad_rows[] = {
    {"{\"metadata\":{\"name\":null}}", "metadata.name: required"},
    {"{\"metadata\":{\"name\":\"Bad_Name\"}}", "metadata.name: 'Bad_Name' is not a DNS label"},
    {"{\"metadata\":{\"name\":\"-x\"}}", "metadata.name"},
    {"{\"metadata\":{\"name\":\"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijk\"}}", "at most 50"},
    {"{\"kind\":\"Deployment\"}", "kind: expected ReplicatedStatefulSet"},
    {"{\"spec\":null}", "spec: required object"},
    {"{\"spec\":{\"replicas\":-1}}", "spec.replicas: -1 is out of range"},
    {"{\"spec\":{\"replicas\":2.5}}", "spec.replicas: expected an integer"},
    {"{\"spec\":{\"replicas\":\"3\"}}", "spec.replicas: expected an integer"},
    {"{\"spec\":{\"replicas\":1e300}}", "spec.replicas"},
    {"{\"spec\":{\"primaries\":0}}", "spec.primaries: 0 is out of range"},
    {"{\"spec\":{\"paused\":\"yes\"}}", "spec.paused: expected true or false"},
    {"{\"spec\":{\"reconcileInterval\":\"\"}}", "spec.reconcileInterval: empty duration"},
    {"{\"spec\":{\"reconcileInterval\":\"0s\"}}", "spec.reconcileInterval: duration '0s' must be positive"},
    {"{\"spec\":{\"reconcileInterval\":\"10x\"}}", "unknown unit"},
    {"{\"spec\":{\"reconcileInterval\":\"1m5\"}}", "missing unit"},
    {"{\"spec\":{\"reconcileInterval\":\"-5s\"}}", "expected a number"},
    {"{\"spec\":{\"reconcileInterval\":\"400d\"}}", "too long"},
    {"{\"spec\":{\"reconcileInterval\":\"99999999999999999999s\"}}", "too long"},
    {"{\"spec\":{\"reconcileInterval\":-3}}", "spec.reconcileInterval: -3 is not a positive"},
    /* a `status` storm: every agent would run status on every member every millisecond */
    {"{\"spec\":{\"reconcileInterval\":\"1ms\"}}", "spec.reconcileInterval: 1 ms is below the minimum of 1s"},
    {"{\"spec\":{\"reconcileInterval\":\"999ms\"}}", "below the minimum"},
    {"{\"spec\":{\"reconcileInterval\":true}}", "spec.reconcileInterval: expected a duration string"},
    {"{\"spec\":{\"pod\":null}}", "spec.pod: required"},
    {"{\"spec\":{\"pod\":{\"antiAffinity\":1}}}", "spec.pod.antiAffinity: expected true or false"},
    {"{\"spec\":{\"pod\":{\"commands\":null}}}", "spec.pod.commands: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"status\":null}}}}", "spec.pod.commands.status: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"sequence\":null}}}}", "spec.pod.commands.sequence: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":null}}}}", "spec.pod.commands.stop: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"primary\":null}}}}", "spec.pod.commands.primary: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"secondry\":{\"command\":[\"/x\"]}}}}}",
     "spec.pod.commands.secondry: unknown hook"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"command\":\"/stop.sh --now\"}}}}}",
     "spec.pod.commands.stop.command: expected an array of strings (argv), not a shell string"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"command\":[]}}}}}",
     "spec.pod.commands.stop.command: must not be empty"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"command\":[\"/s\",3]}}}}}",
     "spec.pod.commands.stop.command[1]: expected a string"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"command\":[\"\"]}}}}}",
     "spec.pod.commands.stop.command[0]: the program must not be empty"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"command\":null,\"timeout\":\"9s\"}}}}}",
     "spec.pod.commands.stop.command: required"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"stop\":{\"timeout\":\"soon\"}}}}}",
     "spec.pod.commands.stop.timeout"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"seed\":{\"command\":[\"/s\"],\"timeout\":\"0\"}}}}}",
     "spec.pod.commands.seed.timeout: duration '0' must be positive"},
    {"{\"spec\":{\"pod\":{\"commands\":{\"seed\":[\"/s\"]}}}}", "spec.pod.commands.seed: expected an object"},
    {"{\"spec\":{\"pod\":{\"containers\":[]}}}", "spec.pod.containers: expected a non-empty array"},
    {"{\"spec\":{\"pod\":{\"containers\":null}}}", "spec.pod.containers: required"},
    {"{\"spec\":{\"pod\":{\"containers\":[{\"image\":\"x\"}]}}}", "spec.pod.containers[0].name: required"},
    {"{\"spec\":{\"pod\":{\"containers\":[{\"name\":\"x\"}]}}}", "spec.pod.containers[0].image: required"},
    {"{\"spec\":{\"pod\":{\"containers\":[\"x\"]}}}", "spec.pod.containers[0]: expected an object"},
    {"{\"spec\":{\"pod\":{\"volumes\":{}}}}", "spec.pod.volumes: expected an array"},
    {"{\"spec\":{\"pod\":{\"volumeClaimTemplates\":[1]}}}",
     "spec.pod.volumeClaimTemplates[0]: expected an object"},
    {"{\"spec\":{\"recovery\":5}}", "spec.recovery: expected an object"},
    {"{\"spec\":{\"recovery\":{\"minimumMembers\":4}}}",
     "spec.recovery.minimumMembers: more than spec.replicas (4 > 3)"},
    {"{\"spec\":{\"recovery\":{\"minimumMembers\":-1}}}", "spec.recovery.minimumMembers: -1 is out of range"},
    {"{\"spec\":{\"recovery\":{\"maxFailures\":0}}}", "spec.recovery.maxFailures: 0 is out of range"},
    {"{\"spec\":{\"recovery\":{\"replication\":\"sync\"}}}",
     "spec.recovery.replication: expected Synchronous or Asynchronous"},
    {"{\"spec\":{\"nodeLossPolicy\":\"replace\"}}", "spec.nodeLossPolicy: expected Wait or Replace"},
    {"{\"spec\":{\"nodeLossPolicy\":true}}", "spec.nodeLossPolicy: expected Wait or Replace"},
};

static void test_node_loss_policy(void **state)
{
    (void)state;
    const char *rows[] = {"{\"spec\":{\"nodeLossPolicy\":\"Wait\"}}", "{\"spec\":{\"nodeLossPolicy\":null}}",
                          "{\"spec\":{\"nodeLossPolicy\":\"Replace\"}}"};
    for (size_t i = 0; i < 3; i++) {
        _cleanup_json_ cJSON *cr = patched(minimal, rows[i]);
        _cleanup_error_ rss_error_t err = NULL;
        struct rss_spec s;
        assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
        assert_int_equal(s.node_loss_replace, i == 2);
        rss_spec_clear(&s);
    }
}

static void test_bad_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        const struct bad_row *r = &bad_rows[i];
        _cleanup_json_ cJSON *cr = patched(minimal, r->patch);
        _cleanup_error_ rss_error_t err = NULL;
        struct rss_spec s;
        memset(&s, 0xa5, sizeof(s));
        int rc = rss_spec_parse(cr, &s, &err);
        if (rc >= 0) {
            rss_spec_clear(&s);
            fail_msg("row %zu (%s) parsed", i, r->patch);
        }
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        _cleanup_free_ char *m = rss_error_string(err);
        if (!strstr(m, r->want))
            fail_msg("row %zu (%s): error '%s' lacks '%s'", i, r->patch, m, r->want);
        /* No partial result: everything zeroed. */
        assert_null(s.name);
        assert_null(s.containers);
        assert_false(s.hooks[RSS_HOOK_SEQUENCE].present);
        assert_int_equal(s.replicas, 0);
    }
}

/* findings/rss-duplicate-hook-key.json: `seed` twice leaked the first argv (LeakSanitizer). The
 * parser refuses it instead of depending on the API server to de-duplicate keys. */
static void test_duplicate_hook_key(void **state)
{
    (void)state;
    char buf[4096] = "";
    FILE *f = fopen(RSS_SHARED_DIR "/findings/rss-duplicate-hook-key.json", "r");
    if (f) {
        buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
        fclose(f);
    } else { /* the same input, for a checkout without ../shared */
        snprintf(buf, sizeof(buf), "%s",
                 "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":"
                 "[\"/s\"]},"
                 "\"primary\":{\"command\":[\"/p\"]},\"status\":{\"command\":[\"/"
                 "st\"]},\"stop\":{\"command\":[\"/x\"]},"
                 "\"seed\":{\"command\":[\"/a\"]},\"seed\":{\"command\":[\"/"
                 "b\"]}},\"containers\":[{\"name\":\"c\","
                 "\"image\":\"i\"}]}}}");
    }
    _cleanup_json_ cJSON *cr = cJSON_Parse(buf);
    assert_non_null(cr);
    struct rss_spec s;
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(rss_spec_parse(cr, &s, &err) < 0);
    _cleanup_free_ char *m = rss_error_string(err);
    assert_non_null(strstr(m, "spec.pod.commands.seed: given twice"));
}

static void test_not_an_object(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *arr = cJSON_CreateArray();
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_true(rss_spec_parse(arr, &s, &err) < 0);
    rss_error_release(&err);
    assert_true(rss_spec_parse(NULL, &s, &err) < 0);
}

static void test_names(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr = cJSON_Parse(example_cluster);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    _cleanup_free_ char *sts = rss_spec_statefulset_name(&s);
    _cleanup_free_ char *svc = rss_spec_service_name(&s);
    _cleanup_free_ char *pod = rss_spec_pod_name(&s, 10);
    _cleanup_free_ char *dns = rss_spec_peer_dns(&s, 2);
    assert_string_equal(sts, "rss-example");
    assert_string_equal(svc, "example-svc");
    assert_string_equal(pod, "rss-example-10");
    assert_string_equal(dns, "rss-example-2.example-svc");
    rss_spec_clear(&s);
}

struct ordinal_row {
    const char *pod;
    int want; /* -1: rejected */
};

static const struct ordinal_row ordinal_rows[] = {
    {"rss-example-0", 0},       {"rss-example-2", 2},      {"rss-example-10", 10}, /* a number: 10 > 2, unlike
                                                                                      the string "10" < "2" */
    {"rss-example-9999", 9999}, {"rss-example-10000", -1}, {"rss-example-", -1},   {"rss-example-01", -1},
    {"rss-example--1", -1},     {"rss-example-+1", -1},    {"rss-example-1a", -1}, {"rss-example-0x1", -1},
    {"rss-example", -1},        {"rss-examplex-1", -1},    {"rss-exampl-1", -1},   {"example-1", -1},
    {"rss-other-1", -1},        {"rss-example-1 ", -1},
};

static void test_ordinals(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *cr = cJSON_Parse(example_cluster);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_spec s;
    assert_int_equal(rss_spec_parse(cr, &s, &err), 0);
    for (size_t i = 0; i < sizeof(ordinal_rows) / sizeof(ordinal_rows[0]); i++) {
        unsigned o = 12345;
        int rc = rss_spec_pod_ordinal(&s, ordinal_rows[i].pod, &o, &err);
        if (ordinal_rows[i].want < 0) {
            if (rc >= 0)
                fail_msg("row %zu: '%s' accepted as %u", i, ordinal_rows[i].pod, o);
            assert_int_equal(rss_error_code(err), RSS_E_INVALID);
            assert_int_equal(o, 12345);
            rss_error_release(&err);
        } else {
            if (rc < 0)
                fail_msg("row %zu: '%s' rejected", i, ordinal_rows[i].pod);
            assert_int_equal(o, (unsigned)ordinal_rows[i].want);
        }
    }
    assert_true(rss_spec_pod_ordinal(&s, NULL, NULL, &err) < 0);
    rss_spec_clear(&s);
}

static void test_hook_names(void **state)
{
    (void)state;
    assert_string_equal(rss_spec_hook_name(RSS_HOOK_SEQUENCE), "sequence");
    assert_string_equal(rss_spec_hook_name(RSS_HOOK_STOP), "stop");
    assert_string_equal(rss_spec_hook_name(RSS_HOOK_KIND_COUNT), "?");
}

/* The cross-field rules, from the table the real apiserver's CEL rules are checked against as well
 * (tests/realk8s/test_world_real.sh): spec.c refuses each case in the table's words (then the values). */
static void test_cross_field_table(void **state)
{
    (void)state;
    _cleanup_fclose_ FILE *f = fopen(RSS_SPEC_CASES, "r");
    assert_non_null(f);
    char line[8192];
    int cases = 0, refused = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *name = line, *spec = strchr(line, '\t');
        assert_non_null(spec);
        *spec++ = '\0';
        char *want = strchr(spec, '\t');
        assert_non_null(want);
        *want++ = '\0';
        _cleanup_free_ char *doc = NULL;
        assert_true(
            asprintf(&doc,
                     "{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\","
                     "\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"},\"spec\":%s}",
                     spec) > 0);
        _cleanup_json_ cJSON *cr = cJSON_Parse(doc);
        if (!cr)
            fail_msg("%s: the spec is not JSON", name);
        struct rss_spec s;
        _cleanup_error_ rss_error_t err = NULL;
        int r = rss_spec_parse(cr, &s, &err);
        if (!strcmp(want, "-")) {
            if (r < 0) {
                _cleanup_free_ char *m = rss_error_string(err);
                fail_msg("%s: refused: %s", name, m);
            }
            rss_spec_clear(&s);
        } else {
            if (r == 0) {
                rss_spec_clear(&s);
                fail_msg("%s: accepted, expected: %s", name, want);
            }
            _cleanup_free_ char *m = rss_error_string(err);
            if (strncmp(m, want, strlen(want)))
                fail_msg("%s: refused with\n  %s\nexpected the words\n  %s", name, m, want);
            refused++;
        }
        cases++;
    }
    assert_true(cases >= 10);
    assert_true(refused >= 5 && refused < cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_field_table),
        cmocka_unit_test(test_example_cluster_unchanged),
        cmocka_unit_test(test_galera_cluster),
        cmocka_unit_test(test_detach_hook),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_good_rows),
        cmocka_unit_test(test_bad_rows),
        cmocka_unit_test(test_node_loss_policy),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_duplicate_hook_key),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_ordinals),
        cmocka_unit_test(test_hook_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
