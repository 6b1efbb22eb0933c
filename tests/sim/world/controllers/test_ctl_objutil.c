/* test_ctl_objutil.c -- the controllers' shared helpers: selectors, ordinals, readiness, ownership. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static void test_selector(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *labels = J("{'app':'db','tier':'back'}");
    _cleanup_json_ cJSON *empty = J("{}");
    _cleanup_json_ cJSON *ml = J("{'matchLabels':{'app':'db'}}");
    _cleanup_json_ cJSON *ml_no = J("{'matchLabels':{'app':'web'}}");
    _cleanup_json_ cJSON *in =
        J("{'matchExpressions':[{'key':'tier','operator':'In','values':['front','back']}]}");
    _cleanup_json_ cJSON *notin =
        J("{'matchExpressions':[{'key':'tier','operator':'NotIn','values':['back']}]}");
    _cleanup_json_ cJSON *exists = J("{'matchExpressions':[{'key':'tier','operator':'Exists'}]}");
    _cleanup_json_ cJSON *dne = J("{'matchExpressions':[{'key':'zone','operator':'DoesNotExist'}]}");
    _cleanup_json_ cJSON *both =
        J("{'matchLabels':{'app':'db'},'matchExpressions':[{'key':'x','operator':'Exists'}]}");
    _cleanup_json_ cJSON *badop = J("{'matchExpressions':[{'key':'app','operator':'Gt','values':['1']}]}");
    assert_true(ctl_selector_matches(empty, labels));
    assert_false(ctl_selector_matches(NULL, labels));
    assert_true(ctl_selector_matches(ml, labels));
    assert_false(ctl_selector_matches(ml_no, labels));
    assert_false(ctl_selector_matches(ml, NULL));
    assert_true(ctl_selector_matches(in, labels));
    assert_false(ctl_selector_matches(notin, labels));
    assert_true(ctl_selector_matches(notin, NULL));
    assert_true(ctl_selector_matches(exists, labels));
    assert_true(ctl_selector_matches(dne, labels));
    assert_false(ctl_selector_matches(both, labels));
    assert_false(ctl_selector_matches(badop, labels));
}

static void test_node_selector(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *labels = J("{'disk':'ssd','kubernetes.io/hostname':'n1'}");
    _cleanup_json_ cJSON *sel = J("{'disk':'ssd'}");
    _cleanup_json_ cJSON *sel2 = J("{'disk':'ssd','zone':'a'}");
    assert_true(ctl_node_selector_matches(NULL, labels));
    assert_true(ctl_node_selector_matches(sel, labels));
    assert_false(ctl_node_selector_matches(sel2, labels));
    assert_false(ctl_node_selector_matches(sel, NULL));
}

static void test_ordinal(void **state)
{
    (void)state;
    assert_int_equal(ctl_parse_ordinal("web", "web-0"), 0);
    assert_int_equal(ctl_parse_ordinal("web", "web-10"), 10);
    assert_int_equal(ctl_parse_ordinal("web", "web-01"), -1);
    assert_int_equal(ctl_parse_ordinal("web", "web-"), -1);
    assert_int_equal(ctl_parse_ordinal("web", "web-1a"), -1);
    assert_int_equal(ctl_parse_ordinal("web", "webx-1"), -1);
    assert_int_equal(ctl_parse_ordinal("web", "web-db-1"), -1);
    assert_int_equal(ctl_parse_ordinal("web-db", "web-db-1"), 1);
    assert_int_equal(ctl_parse_ordinal("web", "web-99999999999"), -1);
}

static void test_pod_state(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *ready =
        J("{'status':{'phase':'Running','conditions':[{'type':'Ready','status':'True'}]}}");
    _cleanup_json_ cJSON *unready =
        J("{'status':{'phase':'Running','conditions':[{'type':'Ready','status':'False'}]}}");
    _cleanup_json_ cJSON *pending = J("{'status':{'phase':'Pending'}}");
    _cleanup_json_ cJSON *term =
        J("{'metadata':{'deletionTimestamp':'2025-01-01T00:00:00Z'},"
          "'status':{'phase':'Running','conditions':[{'type':'Ready','status':'True'}]}}");
    _cleanup_json_ cJSON *failed = J("{'status':{'phase':'Failed'}}");
    assert_true(ctl_pod_running_ready(ready));
    assert_false(ctl_pod_running_ready(unready));
    assert_false(ctl_pod_running_ready(pending));
    assert_false(ctl_pod_running_ready(term));
    assert_true(ctl_is_terminating(term));
    assert_true(ctl_pod_terminated(failed));
    assert_false(ctl_pod_terminated(ready));
    assert_string_equal(ctl_condition_status(unready, "Ready"), "False");
    assert_null(ctl_condition_status(pending, "Ready"));
}

static void test_owner(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sts = J("{'metadata':{'name':'web','namespace':'ns','uid':'u-1'}}");
    _cleanup_json_ cJSON *refs = ctl_owner_refs(sts, "apps/v1", "StatefulSet");
    _cleanup_json_ cJSON *pod = J("{'metadata':{'name':'web-0'}}");
    cJSON_AddItemToObject(cJSON_GetObjectItem(pod, "metadata"), "ownerReferences", TAKE_PTR(refs));
    assert_string_equal(ctl_controller_uid(pod, "StatefulSet"), "u-1");
    assert_null(ctl_controller_uid(pod, "DaemonSet"));
    const cJSON *ref = cJSON_GetArrayItem(rss_json_path(pod, "metadata.ownerReferences"), 0);
    assert_string_equal(rss_json_str(ref, "name"), "web");
    assert_string_equal(rss_json_str(ref, "apiVersion"), "apps/v1");
    assert_true(cJSON_IsTrue(rss_json_path(ref, "blockOwnerDeletion")));
}

static void test_misc(void **state)
{
    (void)state;
    assert_true(ctl_rv_compare("9", "10") < 0);
    assert_true(ctl_rv_compare("10", "9") > 0);
    assert_int_equal(ctl_rv_compare("7", "7"), 0);
    assert_true(ctl_rv_compare("abc", "1") < 0);
    _cleanup_json_ cJSON *a = J("{'x':1}");
    _cleanup_json_ cJSON *b = J("{'x':2}");
    char ha[9], hb[9], ha2[9];
    ctl_json_hash(a, ha);
    ctl_json_hash(b, hb);
    ctl_json_hash(a, ha2);
    assert_string_equal(ha, ha2);
    assert_string_not_equal(ha, hb);
    assert_int_equal(strlen(ha), 8);
    _cleanup_json_ cJSON *arr = J("[{'metadata':{'name':'b','creationTimestamp':'2025-01-01T00:00:02Z'}},"
                                  "{'metadata':{'name':'c','creationTimestamp':'2025-01-01T00:00:01Z'}},"
                                  "{'metadata':{'name':'a','creationTimestamp':'2025-01-01T00:00:02Z'}}]");
    size_t n = 0;
    _cleanup_free_ const cJSON **items = ctl_items(arr, &n);
    assert_int_equal(n, 3);
    ctl_sort_by_age(items, n);
    assert_string_equal(ctl_name(items[0]), "c");
    assert_string_equal(ctl_name(items[1]), "a");
    assert_string_equal(ctl_name(items[2]), "b");
    assert_ptr_equal(ctl_find(arr, "", "a"), items[1]);
    assert_null(ctl_find(arr, "ns", "a"));
    assert_int_equal(rss_json_long(arr, "nope", 7), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selector), cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_ordinal),  cmocka_unit_test(test_pod_state),
        cmocka_unit_test(test_owner),    cmocka_unit_test(test_misc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
