/* test_ctl_nodelifecycle.c -- heartbeat tracking by local observation, and the Ready=Unknown transition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static cJSON *make_node(const char *name, const char *ready, const char *heartbeat)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{'metadata':{'name':'%s'},'status':{'conditions':["
             "{'type':'MemoryPressure','status':'False','lastHeartbeatTime':'%s'},"
             "{'type':'Ready','status':'%s','reason':'KubeletReady','lastHeartbeatTime':'%s',"
             "'lastTransitionTime':'2025-01-01T00:00:00Z'}]}}",
             name, heartbeat, ready, heartbeat);
    return J(buf);
}

static cJSON *make_lease(const char *name, const char *renew)
{
    char buf[256];
    snprintf(buf, sizeof(buf),
             "{'metadata':{'name':'%s','namespace':'kube-node-lease'},'spec':{'holderIdentity':'%s',"
             "'renewTime':'%s'}}",
             name, name, renew);
    return J(buf);
}

static void test_fresh_and_stale(void **state)
{
    (void)state;
    struct ctl_nodelc *lc = ctl_nodelc_new(5);
    _cleanup_json_ cJSON *nodes = cJSON_CreateArray();
    cJSON_AddItemToArray(nodes, make_node("n1", "True", "2025-01-01T00:00:00Z"));
    cJSON_AddItemToArray(nodes, make_node("n2", "True", "2025-01-01T00:00:00Z"));
    _cleanup_json_ cJSON *leases = cJSON_CreateArray();
    cJSON_AddItemToArray(leases, make_lease("n1", "2025-01-01T00:00:00.000000Z"));
    cJSON_AddItemToArray(leases, make_lease("n2", "2025-01-01T00:00:00.000000Z"));

    ctl_nodelc_observe(lc, nodes, leases, 100);
    assert_true(ctl_nodelc_fresh(lc, "n1", 104));
    assert_false(ctl_nodelc_fresh(lc, "nX", 100));
    /* n1 renews its lease at 103; n2 stays silent. */
    cJSON_ReplaceItemInArray(leases, 0, make_lease("n1", "2025-01-01T00:00:03.000000Z"));
    ctl_nodelc_observe(lc, nodes, leases, 103);
    ctl_nodelc_observe(lc, nodes, leases, 106);
    assert_true(ctl_nodelc_fresh(lc, "n1", 106));
    assert_false(ctl_nodelc_fresh(lc, "n2", 106));
    assert_true(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 0), 106, true));
    assert_false(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 1), 106, true));

    _cleanup_json_ cJSON *n1_marked = ctl_nodelc_mark_unknown(lc, cJSON_GetArrayItem(nodes, 0), 106, "T");
    assert_null(n1_marked);
    _cleanup_json_ cJSON *marked =
        ctl_nodelc_mark_unknown(lc, cJSON_GetArrayItem(nodes, 1), 106, "2025-01-01T00:01:46Z");
    assert_non_null(marked);
    const cJSON *ready = ctl_condition(marked, "Ready");
    assert_string_equal(rss_json_str(ready, "status"), "Unknown");
    assert_string_equal(rss_json_str(ready, "reason"), "NodeStatusUnknown");
    assert_string_equal(rss_json_str(ready, "lastTransitionTime"), "2025-01-01T00:01:46Z");
    assert_string_equal(rss_json_str(ready, "lastHeartbeatTime"), "2025-01-01T00:00:00Z");
    assert_string_equal(ctl_condition_status(marked, "MemoryPressure"), "Unknown");
    assert_false(ctl_node_usable(lc, marked, 106, true));
    /* Already Unknown: nothing to do. */
    _cleanup_json_ cJSON *again = ctl_nodelc_mark_unknown(lc, marked, 107, "x");
    assert_null(again);

    /* The kubelet comes back: a new heartbeat in the node status makes it fresh again. */
    cJSON_ReplaceItemInArray(nodes, 1, make_node("n2", "True", "2025-01-01T00:02:00Z"));
    ctl_nodelc_observe(lc, nodes, leases, 120);
    assert_true(ctl_nodelc_fresh(lc, "n2", 120));
    assert_false(ctl_nodelc_fresh(lc, "n1", 120));
    /* A node that is gone is forgotten. */
    cJSON_DeleteItemFromArray(nodes, 0);
    ctl_nodelc_observe(lc, nodes, leases, 121);
    assert_false(ctl_nodelc_fresh(lc, "n1", 121));
    ctl_nodelc_free(lc);
}

static void test_usable_needs_ready_true(void **state)
{
    (void)state;
    struct ctl_nodelc *lc = ctl_nodelc_new(5);
    _cleanup_json_ cJSON *nodes = cJSON_CreateArray();
    cJSON_AddItemToArray(nodes, make_node("n1", "False", "h"));
    cJSON_AddItemToArray(nodes, J("{'metadata':{'name':'n2'},'spec':{'unschedulable':true},"
                                  "'status':{'conditions':[{'type':'Ready','status':'True'}]}}"));
    cJSON_AddItemToArray(nodes, J("{'metadata':{'name':'n3'}}"));
    ctl_nodelc_observe(lc, nodes, NULL, 0);
    assert_false(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 0), 1, true));
    assert_false(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 1), 1, true));
    assert_true(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 1), 1, false));
    assert_false(ctl_node_usable(lc, cJSON_GetArrayItem(nodes, 2), 1, false));
    /* A node that never posted status gets a Ready=Unknown condition once stale. */
    _cleanup_json_ cJSON *m = ctl_nodelc_mark_unknown(lc, cJSON_GetArrayItem(nodes, 2), 10, "t");
    assert_non_null(m);
    assert_string_equal(ctl_condition_status(m, "Ready"), "Unknown");
    assert_string_equal(rss_json_str(ctl_condition(m, "Ready"), "reason"), "NodeStatusNeverUpdated");
    ctl_nodelc_free(lc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_and_stale),
        cmocka_unit_test(test_usable_needs_ready_true),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
