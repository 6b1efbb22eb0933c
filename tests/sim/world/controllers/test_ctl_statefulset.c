/* test_ctl_statefulset.c -- the StatefulSet controller's decisions: ordinals, policies, scale, claims,
 * status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static cJSON *make_sts(long replicas, const char *policy)
{
    cJSON *sts = J("{'apiVersion':'apps/v1','kind':'StatefulSet',"
                   "'metadata':{'name':'web','namespace':'ns','uid':'sts-uid','generation':3},"
                   "'spec':{'serviceName':'websvc','selector':{'matchLabels':{'app':'web'}},"
                   "'template':{'metadata':{'labels':{'app':'web'},'annotations':{'a':'b'}},"
                   "'spec':{'containers':[{'name':'c','image':'busybox'}],"
                   "'volumes':[{'name':'data','emptyDir':{}},{'name':'cfg','configMap':{'name':'x'}}]}},"
                   "'volumeClaimTemplates':[{'metadata':{'name':'data','labels':{'kind':'db'}},"
                   "'spec':{'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}},"
                   "{'metadata':{'name':'logs'},'spec':{'accessModes':['ReadWriteOnce']}}]}}");
    cJSON *spec = cJSON_GetObjectItem(sts, "spec");
    cJSON_AddNumberToObject(spec, "replicas", (double)replicas);
    if (policy)
        cJSON_AddStringToObject(spec, "podManagementPolicy", policy);
    return sts;
}

/* A pod of the set as the controller builds it, then given a phase (NULL: no status) and readiness. */
static cJSON *make_pod(const cJSON *sts, long ordinal, const char *phase, bool ready)
{
    cJSON *pod = ctl_sts_build_pod(sts, ordinal);
    if (phase) {
        char buf[256];
        snprintf(buf, sizeof(buf), "{'phase':'%s','conditions':[{'type':'Ready','status':'%s'}]}", phase,
                 ready ? "True" : "False");
        cJSON_AddItemToObject(pod, "status", J(buf));
    }
    return pod;
}

static void set_terminating(cJSON *pod)
{
    cJSON_AddStringToObject(cJSON_GetObjectItem(pod, "metadata"), "deletionTimestamp",
                            "2025-01-01T00:00:00Z");
}

static void test_build_pod(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(11, NULL);
    _cleanup_json_ cJSON *pod = ctl_sts_build_pod(sts, 10);
    assert_string_equal(ctl_name(pod), "web-10");
    assert_string_equal(ctl_namespace(pod), "ns");
    assert_string_equal(rss_json_str(pod, "spec.hostname"), "web-10");
    assert_string_equal(rss_json_str(pod, "spec.subdomain"), "websvc");
    const cJSON *labels = rss_json_path(pod, "metadata.labels");
    assert_string_equal(rss_json_str(labels, "app"), "web");
    assert_string_equal(cJSON_GetObjectItem(labels, "statefulset.kubernetes.io/pod-name")->valuestring,
                        "web-10");
    assert_string_equal(cJSON_GetObjectItem(labels, "apps.kubernetes.io/pod-index")->valuestring, "10");
    _cleanup_free_ char *rev = ctl_sts_revision(sts);
    assert_string_equal(cJSON_GetObjectItem(labels, "controller-revision-hash")->valuestring, rev);
    assert_string_equal(rss_json_str(pod, "metadata.annotations.a"), "b");
    assert_string_equal(ctl_controller_uid(pod, "StatefulSet"), "sts-uid");
    /* The claim template "data" replaces the template volume "data"; "cfg" stays; "logs" is added. */
    const cJSON *vols = rss_json_path(pod, "spec.volumes");
    assert_int_equal(cJSON_GetArraySize(vols), 3);
    int found = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vols)
    {
        const char *n = rss_json_str(v, "name");
        if (strcmp(n, "data") == 0) {
            assert_string_equal(rss_json_str(v, "persistentVolumeClaim.claimName"), "data-web-10");
            assert_null(rss_json_path(v, "emptyDir"));
            found |= 1;
        } else if (strcmp(n, "logs") == 0) {
            assert_string_equal(rss_json_str(v, "persistentVolumeClaim.claimName"), "logs-web-10");
            found |= 2;
        } else if (strcmp(n, "cfg") == 0) {
            found |= 4;
        }
    }
    assert_int_equal(found, 7);
    assert_string_equal(rss_json_str(cJSON_GetArrayItem(rss_json_path(pod, "spec.containers"), 0), "image"),
                        "busybox");
}

static void test_build_pvcs(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(1, NULL);
    _cleanup_json_ cJSON *pvcs = ctl_sts_build_pvcs(sts, "web-3");
    assert_int_equal(cJSON_GetArraySize(pvcs), 2);
    const cJSON *d = cJSON_GetArrayItem(pvcs, 0);
    assert_string_equal(ctl_name(d), "data-web-3");
    assert_string_equal(ctl_namespace(d), "ns");
    assert_string_equal(rss_json_str(d, "kind"), "PersistentVolumeClaim");
    assert_string_equal(rss_json_str(d, "metadata.labels.app"), "web");
    assert_string_equal(rss_json_str(d, "metadata.labels.kind"), "db");
    assert_string_equal(rss_json_str(d, "spec.resources.requests.storage"), "1Gi");
    assert_null(rss_json_path(d, "metadata.ownerReferences"));
    assert_string_equal(ctl_name(cJSON_GetArrayItem(pvcs, 1)), "logs-web-3");
}

static void test_parallel_creates_all(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(11, "Parallel");
    _cleanup_json_ cJSON *p3 = make_pod(sts, 3, "Running", true);
    const cJSON *pods[] = {p3};
    struct ctl_sts_plan plan;
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 10);
    assert_int_equal(plan.nremove, 0);
    assert_int_equal(plan.create[0], 0);
    assert_int_equal(plan.create[3], 4);
    assert_int_equal(plan.create[9], 10);
    ctl_sts_plan_clear(&plan);
}

static void test_ordered_ready(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(3, NULL);
    struct ctl_sts_plan plan;
    ctl_sts_plan(sts, NULL, 0, &plan);
    assert_int_equal(plan.ncreate, 1);
    assert_int_equal(plan.create[0], 0);
    ctl_sts_plan_clear(&plan);

    /* Pod 0 exists but is not ready: nothing more. */
    _cleanup_json_ cJSON *p0 = make_pod(sts, 0, "Running", false);
    const cJSON *pods[] = {p0, NULL};
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 0);
    assert_int_equal(plan.nremove, 0);
    ctl_sts_plan_clear(&plan);

    /* Without any status at all (no kubelet yet): still waiting. */
    _cleanup_json_ cJSON *p0bare = make_pod(sts, 0, NULL, false);
    pods[0] = p0bare;
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 0);
    ctl_sts_plan_clear(&plan);

    /* Pod 0 Running and Ready: pod 1 next, and only pod 1. */
    _cleanup_json_ cJSON *p0r = make_pod(sts, 0, "Running", true);
    pods[0] = p0r;
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 1);
    assert_int_equal(plan.create[0], 1);
    ctl_sts_plan_clear(&plan);

    /* Pod 0 deleted while 1 runs: recreate 0 first. */
    _cleanup_json_ cJSON *p1r = make_pod(sts, 1, "Running", true);
    pods[0] = p1r;
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 1);
    assert_int_equal(plan.create[0], 0);
    ctl_sts_plan_clear(&plan);

    /* Pod 0 terminating: wait for it to go before anything else. */
    set_terminating(p0r);
    pods[0] = p0r;
    pods[1] = p1r;
    ctl_sts_plan(sts, pods, 2, &plan);
    assert_int_equal(plan.ncreate, 0);
    assert_int_equal(plan.nremove, 0);
    ctl_sts_plan_clear(&plan);
}

static void test_scale_down(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *ordered = make_sts(2, NULL);
    _cleanup_json_ cJSON *parallel = make_sts(2, "Parallel");
    cJSON *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = make_pod(ordered, i, "Running", true);
    /* Listed in a scrambled order on purpose. */
    const cJSON *pods[] = {p[3], p[0], p[4], p[1], p[2]};
    struct ctl_sts_plan plan;
    ctl_sts_plan(ordered, pods, 5, &plan);
    assert_int_equal(plan.ncreate, 0);
    assert_int_equal(plan.nremove, 1);
    assert_string_equal(ctl_name(plan.remove[0]), "web-4");
    ctl_sts_plan_clear(&plan);

    ctl_sts_plan(parallel, pods, 5, &plan);
    assert_int_equal(plan.nremove, 3);
    assert_string_equal(ctl_name(plan.remove[0]), "web-4");
    assert_string_equal(ctl_name(plan.remove[1]), "web-3");
    assert_string_equal(ctl_name(plan.remove[2]), "web-2");
    ctl_sts_plan_clear(&plan);

    /* OrderedReady waits while the highest is terminating. */
    set_terminating(p[4]);
    ctl_sts_plan(ordered, pods, 5, &plan);
    assert_int_equal(plan.nremove, 0);
    ctl_sts_plan_clear(&plan);
    for (int i = 0; i < 5; i++)
        cJSON_Delete(p[i]);
}

static void test_failed_pod_replaced(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(2, NULL);
    _cleanup_json_ cJSON *p0 = make_pod(sts, 0, "Failed", false);
    const cJSON *pods[] = {p0};
    struct ctl_sts_plan plan;
    ctl_sts_plan(sts, pods, 1, &plan);
    assert_int_equal(plan.nremove, 1);
    assert_ptr_equal(plan.remove[0], p0);
    assert_int_equal(plan.ncreate, 0);
    ctl_sts_plan_clear(&plan);
}

static void test_rolling_update(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *old = make_sts(3, NULL);
    _cleanup_json_ cJSON *p0 = make_pod(old, 0, "Running", true);
    _cleanup_json_ cJSON *p1 = make_pod(old, 1, "Running", true);
    _cleanup_json_ cJSON *p2 = make_pod(old, 2, "Running", true);
    _cleanup_json_ cJSON *sts = make_sts(3, NULL);
    cJSON_ReplaceItemInObject(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sts, "spec"), "template"), "metadata"),
        "annotations", J("{'a':'changed'}"));
    _cleanup_free_ char *r1 = ctl_sts_revision(old), *r2 = ctl_sts_revision(sts);
    assert_string_not_equal(r1, r2);
    const cJSON *pods[] = {p0, p1, p2};
    struct ctl_sts_plan plan;
    ctl_sts_plan(sts, pods, 3, &plan);
    assert_int_equal(plan.nremove, 1);
    assert_string_equal(ctl_name(plan.remove[0]), "web-2");
    ctl_sts_plan_clear(&plan);
    /* The unchanged template changes nothing. */
    ctl_sts_plan(old, pods, 3, &plan);
    assert_int_equal(plan.nremove + plan.ncreate, 0);
    ctl_sts_plan_clear(&plan);
    /* OnDelete leaves outdated pods alone. */
    cJSON_AddItemToObject(cJSON_GetObjectItem(sts, "spec"), "updateStrategy", J("{'type':'OnDelete'}"));
    ctl_sts_plan(sts, pods, 3, &plan);
    assert_int_equal(plan.nremove, 0);
    ctl_sts_plan_clear(&plan);
}

static void test_status(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = make_sts(3, NULL);
    _cleanup_json_ cJSON *p0 = make_pod(sts, 0, "Running", true);
    _cleanup_json_ cJSON *p1 = make_pod(sts, 1, "Running", false);
    const cJSON *pods[] = {p0, p1};
    _cleanup_json_ cJSON *st = ctl_sts_status(sts, pods, 2);
    assert_int_equal(rss_json_long(st, "replicas", -1), 2);
    assert_int_equal(rss_json_long(st, "readyReplicas", -1), 1);
    assert_int_equal(rss_json_long(st, "availableReplicas", -1), 1);
    assert_int_equal(rss_json_long(st, "updatedReplicas", -1), 2);
    assert_int_equal(rss_json_long(st, "currentReplicas", -1), 2);
    assert_int_equal(rss_json_long(st, "observedGeneration", -1), 3);
    _cleanup_free_ char *rev = ctl_sts_revision(sts);
    assert_string_equal(rss_json_str(st, "updateRevision"), rev);
    assert_true(ctl_status_differs(NULL, st));
    assert_false(ctl_status_differs(st, st));
    _cleanup_json_ cJSON *cur = cJSON_Duplicate(st, true);
    cJSON_ReplaceItemInObject(cur, "readyReplicas", cJSON_CreateNumber(2));
    assert_true(ctl_status_differs(cur, st));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_pod),
        cmocka_unit_test(test_build_pvcs),
        cmocka_unit_test(test_parallel_creates_all),
        cmocka_unit_test(test_ordered_ready),
        cmocka_unit_test(test_scale_down),
        cmocka_unit_test(test_failed_pod_replaced),
        cmocka_unit_test(test_rolling_update),
        cmocka_unit_test(test_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
