/* test_ctl_scheduler.c -- node choice: readiness, nodeSelector, required pod anti-affinity, spreading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static cJSON *make_node(const char *name, const char *extra_labels)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "{'metadata':{'name':'%s','labels':{'kubernetes.io/hostname':'%s'%s%s}}}",
             name, name, extra_labels ? "," : "", extra_labels ? extra_labels : "");
    return J(buf);
}

#define ANTI                                                                                                 \
    "'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':"     \
    "{'matchLabels':{'app':'db'}},'topologyKey':'kubernetes.io/hostname'}]}}"

static cJSON *make_pod(const char *ns, const char *name, const char *node, const char *spec_extra)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{'metadata':{'name':'%s','namespace':'%s','labels':{'app':'db'}},'spec':{%s%s%s%s%s}}", name,
             ns, node ? "'nodeName':'" : "", node ? node : "", node ? "'" : "", node && spec_extra ? "," : "",
             spec_extra ? spec_extra : "");
    return J(buf);
}

static void test_wants(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *a = make_pod("ns", "a", NULL, NULL);
    _cleanup_json_ cJSON *b = make_pod("ns", "b", "n1", NULL);
    _cleanup_json_ cJSON *c = make_pod("ns", "c", NULL, "'schedulerName':'other'");
    _cleanup_json_ cJSON *d =
        J("{'metadata':{'name':'d','deletionTimestamp':'2025-01-01T00:00:00Z'},'spec':{}}");
    assert_true(ctl_sched_wants(a));
    assert_false(ctl_sched_wants(b));
    assert_false(ctl_sched_wants(c));
    assert_false(ctl_sched_wants(d));
}

static void test_spread_and_ready(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *n1 = make_node("n1", NULL), *n2 = make_node("n2", NULL),
                         *n3 = make_node("n3", NULL);
    const cJSON *nodes[] = {n1, n2, n3};
    bool usable[] = {true, true, true};
    _cleanup_json_ cJSON *on1 = make_pod("ns", "x", "n1", NULL);
    _cleanup_json_ cJSON *pod = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{}}");
    const cJSON *pods[] = {on1};
    /* n1 has a pod already: the emptier n2 wins (first by name among equals). */
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 3, pods, 1, NULL), 1);
    usable[1] = false;
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 3, pods, 1, NULL), 2);
    usable[2] = false;
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 3, pods, 1, NULL), 0);
    usable[0] = false;
    _cleanup_free_ char *why = NULL;
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 3, pods, 1, &why), -1);
    assert_string_equal(why, "0/3 nodes are available: 3 node(s) were not ready.");
    _cleanup_free_ char *why0 = NULL;
    assert_int_equal(ctl_sched_pick(pod, NULL, NULL, 0, NULL, 0, &why0), -1);
    assert_non_null(strstr(why0, "0/0 nodes"));
}

static void test_node_selector(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *n1 = make_node("n1", NULL), *n2 = make_node("n2", "'disk':'ssd'");
    const cJSON *nodes[] = {n1, n2};
    bool usable[] = {true, true};
    _cleanup_json_ cJSON *pod = make_pod("ns", "p", NULL, "'nodeSelector':{'disk':'ssd'}");
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 2, NULL, 0, NULL), 1);
    usable[1] = false;
    _cleanup_free_ char *why = NULL;
    assert_int_equal(ctl_sched_pick(pod, nodes, usable, 2, NULL, 0, &why), -1);
    assert_string_equal(why, "0/2 nodes are available: 1 node(s) didn't match Pod's node selector, "
                             "1 node(s) were not ready.");
}

static void test_anti_affinity(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *n1 = make_node("n1", NULL), *n2 = make_node("n2", NULL),
                         *n3 = make_node("n3", NULL);
    const cJSON *nodes[] = {n1, n2, n3};
    bool usable[] = {true, true, true};
    _cleanup_json_ cJSON *a = make_pod("ns", "db-0", "n2", ANTI);
    _cleanup_json_ cJSON *b = make_pod("ns", "db-1", "n1", ANTI);
    _cleanup_json_ cJSON *c = make_pod("ns", "db-2", "n3", ANTI);
    _cleanup_json_ cJSON *newpod = make_pod("ns", "db-3", NULL, ANTI);
    const cJSON *pods[] = {a, b, c};
    /* Only n3 is free of a matching pod. */
    assert_int_equal(ctl_sched_pick(newpod, nodes, usable, 3, pods, 2, NULL), 2);
    _cleanup_free_ char *why = NULL;
    assert_int_equal(ctl_sched_pick(newpod, nodes, usable, 3, pods, 3, &why), -1);
    assert_string_equal(why, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
    /* A terminated pod does not count; the pod itself does not count. */
    cJSON_AddItemToObject(c, "status", J("{'phase':'Succeeded'}"));
    assert_int_equal(ctl_sched_pick(newpod, nodes, usable, 3, pods, 3, NULL), 2);
    _cleanup_json_ cJSON *self = make_pod("ns", "db-3", "n1", ANTI);
    const cJSON *pods2[] = {self};
    assert_int_equal(ctl_sched_pick(newpod, nodes, usable, 1, pods2, 1, NULL), 0);
    /* Another namespace does not conflict. */
    _cleanup_json_ cJSON *other = make_pod("other", "db-0", "n1", NULL);
    const cJSON *pods3[] = {other};
    assert_int_equal(ctl_sched_pick(newpod, nodes, usable, 1, pods3, 1, NULL), 0);
}

static void test_anti_affinity_expressions_and_symmetry(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *n1 = make_node("n1", "'zone':'a'"), *n2 = make_node("n2", "'zone':'a'"),
                         *n3 = make_node("n3", "'zone':'b'");
    const cJSON *nodes[] = {n1, n2, n3};
    bool usable[] = {true, true, true};
    /* An existing pod without affinity labelled app=db on n1; newcomer avoids zone of any app In (db). */
    _cleanup_json_ cJSON *placed = make_pod("ns", "x", "n1", NULL);
    _cleanup_json_ cJSON *zone_pod =
        make_pod("ns", "y", NULL,
                 "'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{"
                 "'labelSelector':{'matchExpressions':[{'key':'app','operator':'In','values':['db']}]},"
                 "'topologyKey':'zone'}]}}");
    const cJSON *pods[] = {placed};
    assert_int_equal(ctl_sched_pick(zone_pod, nodes, usable, 3, pods, 1, NULL), 2);
    /* Symmetry: a placed pod with anti-affinity against app=db keeps a plain app=db pod off its node. */
    _cleanup_json_ cJSON *guard = make_pod("ns", "g", "n1", ANTI);
    _cleanup_json_ cJSON *plain = make_pod("ns", "z", NULL, NULL);
    const cJSON *pods2[] = {guard};
    bool only_n1[] = {true, false, false};
    _cleanup_free_ char *why = NULL;
    assert_int_equal(ctl_sched_pick(plain, nodes, only_n1, 3, pods2, 1, &why), -1);
    assert_non_null(strstr(why, "1 node(s) didn't match pod anti-affinity rules"));
    assert_int_equal(ctl_sched_pick(plain, nodes, usable, 3, pods2, 1, NULL), 1);
}

/* Taints (kubectl taint): NoSchedule/NoExecute keep untolerating pods off; tolerations by key/value/effect.
 */
static void test_taints(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *n1 = J("{'metadata':{'name':'n1'},'spec':{'taints':[{'key':'node.kubernetes.io/"
                                 "out-of-service','value':'nodeshutdown','effect':'NoExecute'}]}}");
    _cleanup_json_ cJSON *n2 =
        J("{'metadata':{'name':'n2'},'spec':{'taints':[{'key':'a','effect':'NoSchedule'},"
          "{'key':'b','effect':'PreferNoSchedule'}]}}");
    const cJSON *nodes[] = {n1, n2};
    bool usable[] = {true, true};
    _cleanup_json_ cJSON *plain = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{}}");
    _cleanup_free_ char *why = NULL;
    assert_int_equal(ctl_sched_pick(plain, nodes, usable, 2, NULL, 0, &why), -1);
    assert_non_null(strstr(why, "2 node(s) had untolerated taints"));
    _cleanup_json_ cJSON *tol_a = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{'tolerations':["
                                    "{'key':'a','operator':'Exists'}]}}");
    assert_int_equal(ctl_sched_pick(tol_a, nodes, usable, 2, NULL, 0, NULL), 1);
    _cleanup_json_ cJSON *wrong_value = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{'tolerations':["
                                          "{'key':'node.kubernetes.io/out-of-service','value':'x'}]}}");
    assert_int_equal(ctl_sched_pick(wrong_value, nodes, usable, 2, NULL, 0, NULL), -1);
    _cleanup_json_ cJSON *oos = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{'tolerations':["
                                  "{'key':'node.kubernetes.io/out-of-service','value':'nodeshutdown',"
                                  "'effect':'NoExecute'}]}}");
    assert_int_equal(ctl_sched_pick(oos, nodes, usable, 2, NULL, 0, NULL), 0);
    _cleanup_json_ cJSON *all = J("{'metadata':{'name':'p','namespace':'ns'},'spec':{'tolerations':["
                                  "{'operator':'Exists'}]}}");
    assert_int_equal(ctl_sched_pick(all, nodes, usable, 2, NULL, 0, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wants),
        cmocka_unit_test(test_spread_and_ready),
        cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_anti_affinity),
        cmocka_unit_test(test_anti_affinity_expressions_and_symmetry),
        cmocka_unit_test(test_taints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
