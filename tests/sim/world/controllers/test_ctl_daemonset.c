/* test_ctl_daemonset.c -- DaemonSet decisions: one pod per usable node, removal from gone nodes, status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static cJSON *make_ds(const char *node_selector)
{
    cJSON *ds =
        J("{'metadata':{'name':'agent','namespace':'kube-system','uid':'ds-uid','generation':2},"
          "'spec':{'selector':{'matchLabels':{'app':'agent'}},"
          "'template':{'metadata':{'labels':{'app':'agent'}},'spec':{'containers':[{'name':'a'}]}}}}");
    if (node_selector)
        cJSON_AddItemToObject(
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(ds, "spec"), "template"), "spec"),
            "nodeSelector", J(node_selector));
    return ds;
}

static cJSON *make_node(const char *name, const char *labels)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "{'metadata':{'name':'%s','labels':%s}}", name, labels ? labels : "{}");
    return J(buf);
}

static cJSON *ready(cJSON *pod)
{
    cJSON_AddItemToObject(pod, "status",
                          J("{'phase':'Running','conditions':[{'type':'Ready','status':'True'}]}"));
    return pod;
}

static void test_build_pod(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *ds = make_ds(NULL);
    _cleanup_json_ cJSON *pod = ctl_ds_build_pod(ds, "n2");
    assert_string_equal(ctl_name(pod), "agent-n2");
    assert_string_equal(ctl_namespace(pod), "kube-system");
    assert_string_equal(rss_json_str(pod, "spec.nodeName"), "n2");
    assert_string_equal(rss_json_str(pod, "metadata.labels.app"), "agent");
    assert_non_null(cJSON_GetObjectItem(rss_json_path(pod, "metadata.labels"), "controller-revision-hash"));
    assert_string_equal(
        cJSON_GetObjectItem(rss_json_path(pod, "metadata.labels"), "pod-template-generation")->valuestring,
        "2");
    assert_string_equal(ctl_controller_uid(pod, "DaemonSet"), "ds-uid");
}

static void test_plan(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *ds = make_ds(NULL);
    _cleanup_json_ cJSON *n1 = make_node("n1", NULL), *n2 = make_node("n2", NULL),
                         *n3 = make_node("n3", NULL);
    const cJSON *nodes[] = {n1, n2, n3};
    bool usable[] = {true, true, false};
    _cleanup_json_ cJSON *on1 = ready(ctl_ds_build_pod(ds, "n1"));
    _cleanup_json_ cJSON *on3 = ctl_ds_build_pod(ds, "n3");
    _cleanup_json_ cJSON *gone = ctl_ds_build_pod(ds, "n9");
    _cleanup_json_ cJSON *dup = ctl_ds_build_pod(ds, "n1");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(dup, "metadata"), "name", cJSON_CreateString("agent-dup"));
    const cJSON *pods[] = {on1, on3, gone, dup};
    struct ctl_ds_plan plan;
    ctl_ds_plan(ds, nodes, usable, 3, pods, 4, &plan);
    /* n2 needs one; n3 is not usable but keeps its pod; n9 is gone; the duplicate on n1 goes. */
    assert_int_equal(plan.ncreate, 1);
    assert_ptr_equal(plan.create_on[0], n2);
    assert_int_equal(plan.nremove, 2);
    assert_ptr_equal(plan.remove[0], gone);
    assert_ptr_equal(plan.remove[1], dup);
    ctl_ds_plan_clear(&plan);

    /* A terminating pod still holds its node (its name is taken until it is gone). */
    _cleanup_json_ cJSON *term = ctl_ds_build_pod(ds, "n2");
    cJSON_AddStringToObject(cJSON_GetObjectItem(term, "metadata"), "deletionTimestamp",
                            "2025-01-01T00:00:00Z");
    const cJSON *pods2[] = {on1, term};
    ctl_ds_plan(ds, nodes, usable, 3, pods2, 2, &plan);
    assert_int_equal(plan.ncreate, 0);
    assert_int_equal(plan.nremove, 0);
    ctl_ds_plan_clear(&plan);
}

static void test_node_selector_and_status(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *ds = make_ds("{'role':'db'}");
    _cleanup_json_ cJSON *n1 = make_node("n1", "{'role':'db'}"), *n2 = make_node("n2", "{'role':'web'}");
    const cJSON *nodes[] = {n1, n2};
    bool usable[] = {true, true};
    _cleanup_json_ cJSON *on2 = ready(ctl_ds_build_pod(ds, "n2"));
    const cJSON *pods[] = {on2};
    struct ctl_ds_plan plan;
    ctl_ds_plan(ds, nodes, usable, 2, pods, 1, &plan);
    assert_int_equal(plan.ncreate, 1);
    assert_ptr_equal(plan.create_on[0], n1);
    assert_int_equal(plan.nremove, 1);
    assert_ptr_equal(plan.remove[0], on2);
    ctl_ds_plan_clear(&plan);

    _cleanup_json_ cJSON *on1 = ready(ctl_ds_build_pod(ds, "n1"));
    const cJSON *pods2[] = {on1, on2};
    _cleanup_json_ cJSON *st = ctl_ds_status(ds, nodes, 2, pods2, 2);
    assert_int_equal(rss_json_long(st, "desiredNumberScheduled", -1), 1);
    assert_int_equal(rss_json_long(st, "currentNumberScheduled", -1), 1);
    assert_int_equal(rss_json_long(st, "numberMisscheduled", -1), 1);
    assert_int_equal(rss_json_long(st, "numberReady", -1), 1);
    assert_int_equal(rss_json_long(st, "updatedNumberScheduled", -1), 1);
    assert_int_equal(rss_json_long(st, "numberUnavailable", -1), 0);
    assert_int_equal(rss_json_long(st, "observedGeneration", -1), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_pod),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_node_selector_and_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
