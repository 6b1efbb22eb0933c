/* test_ctl_disruption.c -- PodDisruptionBudget status as the disruption controller computes it:
 * expected pods, healthy counts, disruptionsAllowed, disruptedPods expiry, conditions, fail-safe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

/* 2026-01-01T00:00:00Z */
#define T0  1767225600.0
#define T0S "2026-01-01T00:00:00Z"

static cJSON *sts(long replicas)
{
    char buf[256];
    snprintf(buf, sizeof(buf),
             "[{'metadata':{'name':'db','namespace':'ns','uid':'sts-uid'},'spec':{'replicas':%ld}}]",
             replicas);
    return J(buf);
}

/* A pod db-N of the set: ready or not, being deleted or not. */
static void add_pod(cJSON *pods, int ordinal, bool ready, bool deleting)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{'metadata':{'name':'db-%d','namespace':'ns','labels':{'app':'db'}%s,"
             "'ownerReferences':[{'kind':'StatefulSet','name':'db','uid':'sts-uid','controller':true}]},"
             "'status':{'phase':'Running','conditions':[{'type':'Ready','status':'%s'}]}}",
             ordinal, deleting ? ",'deletionTimestamp':'" T0S "'" : "", ready ? "True" : "False");
    cJSON_AddItemToArray(pods, J(buf));
}

static cJSON *pdb(const char *spec, const char *status)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "{'metadata':{'name':'db','namespace':'ns','generation':3},'spec':%s%s%s}",
             spec, status ? ",'status':" : "", status ? status : "");
    return J(buf);
}

static long field(const cJSON *st, const char *k)
{
    return rss_json_long(st, k, -99);
}

static const char *cond(const cJSON *st, const char *k)
{
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0);
    return rss_json_str(c, k);
}

static void test_max_unavailable(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sets = sts(3);
    _cleanup_json_ cJSON *pods = cJSON_CreateArray();
    for (int i = 0; i < 3; i++)
        add_pod(pods, i, true, false);
    _cleanup_json_ cJSON *b = pdb("{'maxUnavailable':1,'selector':{'matchLabels':{'app':'db'}}}", NULL);
    _cleanup_json_ cJSON *st = ctl_pdb_status(b, pods, sets, T0, T0S);
    assert_int_equal(field(st, "expectedPods"), 3);
    assert_int_equal(field(st, "desiredHealthy"), 2);
    assert_int_equal(field(st, "currentHealthy"), 3);
    assert_int_equal(field(st, "disruptionsAllowed"), 1);
    assert_int_equal(field(st, "observedGeneration"), 3);
    assert_null(cJSON_GetObjectItem(st, "disruptedPods"));
    assert_string_equal(cond(st, "type"), "DisruptionAllowed");
    assert_string_equal(cond(st, "status"), "True");
    assert_string_equal(cond(st, "reason"), "SufficientPods");
    assert_int_equal(
        rss_json_long(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0), "observedGeneration", -1),
        3);

    /* the set's replicas, not the pods there are: one missing counts as unavailable */
    cJSON_DeleteItemFromArray(pods, 2);
    cJSON_Delete(st);
    st = ctl_pdb_status(b, pods, sets, T0, T0S);
    assert_int_equal(field(st, "expectedPods"), 3);
    assert_int_equal(field(st, "currentHealthy"), 2);
    assert_int_equal(field(st, "disruptionsAllowed"), 0);
    assert_string_equal(cond(st, "status"), "False");
    assert_string_equal(cond(st, "reason"), "InsufficientPods");
}

static void test_min_available(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sets = sts(5);
    _cleanup_json_ cJSON *pods = cJSON_CreateArray();
    for (int i = 0; i < 4; i++)
        add_pod(pods, i, i != 1, i == 3); /* db-1 unready, db-3 being deleted */
    /* an integer minAvailable counts the matching pods, not the set's replicas */
    _cleanup_json_ cJSON *b = pdb("{'minAvailable':1,'selector':{'matchLabels':{'app':'db'}}}", NULL);
    _cleanup_json_ cJSON *st = ctl_pdb_status(b, pods, sets, T0, T0S);
    assert_int_equal(field(st, "expectedPods"), 4);
    assert_int_equal(field(st, "desiredHealthy"), 1);
    assert_int_equal(field(st, "currentHealthy"), 2);
    assert_int_equal(field(st, "disruptionsAllowed"), 1);

    /* a percentage is of the set's replicas, rounded up: 50% of 5 is 3 */
    _cleanup_json_ cJSON *p = pdb("{'minAvailable':'50%','selector':{'matchLabels':{'app':'db'}}}", NULL);
    _cleanup_json_ cJSON *sp = ctl_pdb_status(p, pods, sets, T0, T0S);
    assert_int_equal(field(sp, "expectedPods"), 5);
    assert_int_equal(field(sp, "desiredHealthy"), 3);
    assert_int_equal(field(sp, "disruptionsAllowed"), 0);

    /* maxUnavailable 30% of 5 rounds up to 2 */
    _cleanup_json_ cJSON *m = pdb("{'maxUnavailable':'30%','selector':{'matchLabels':{'app':'db'}}}", NULL);
    _cleanup_json_ cJSON *sm = ctl_pdb_status(m, pods, sets, T0, T0S);
    assert_int_equal(field(sm, "desiredHealthy"), 3);

    /* another selector, another namespace: no pod, nothing allowed */
    _cleanup_json_ cJSON *o = pdb("{'minAvailable':0,'selector':{'matchLabels':{'app':'web'}}}", NULL);
    _cleanup_json_ cJSON *so = ctl_pdb_status(o, pods, sets, T0, T0S);
    assert_int_equal(field(so, "expectedPods"), 0);
    assert_int_equal(field(so, "disruptionsAllowed"), 0);
}

static void test_disrupted_pods(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sets = sts(3);
    _cleanup_json_ cJSON *pods = cJSON_CreateArray();
    for (int i = 0; i < 3; i++)
        add_pod(pods, i, true, false);
    /* db-0 evicted a minute ago, db-1 three minutes ago (expired), db-9 is gone */
    _cleanup_json_ cJSON *b =
        pdb("{'maxUnavailable':1,'selector':{'matchLabels':{'app':'db'}}}",
            "{'disruptedPods':{'db-0':'2025-12-31T23:59:00Z','db-1':'2025-12-31T23:57:00Z',"
            "'db-9':'2025-12-31T23:59:30Z'},'disruptionsAllowed':0,"
            "'conditions':[{'type':'DisruptionAllowed','status':'False',"
            "'reason':'InsufficientPods','message':'','observedGeneration':2,"
            "'lastTransitionTime':'2025-12-01T00:00:00Z'}]}");
    _cleanup_json_ cJSON *st = ctl_pdb_status(b, pods, sets, T0, T0S);
    const cJSON *d = cJSON_GetObjectItem(st, "disruptedPods");
    assert_int_equal(cJSON_GetArraySize(d), 1);
    assert_string_equal(rss_json_str(d, "db-0"), "2025-12-31T23:59:00Z");
    assert_int_equal(field(st, "currentHealthy"), 2); /* db-0 does not count while it goes */
    assert_int_equal(field(st, "disruptionsAllowed"), 0);
    /* the condition's status did not change: its transition time stays, its generation moves */
    assert_string_equal(cond(st, "lastTransitionTime"), "2025-12-01T00:00:00Z");
    assert_int_equal(
        rss_json_long(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0), "observedGeneration", -1),
        3);

    /* db-0 now being deleted: dropped from the map and not healthy */
    cJSON_DeleteItemFromArray(pods, 0);
    add_pod(pods, 0, true, true);
    cJSON_Delete(st);
    st = ctl_pdb_status(b, pods, sets, T0, T0S);
    assert_null(cJSON_GetObjectItem(st, "disruptedPods"));
    assert_int_equal(field(st, "currentHealthy"), 2);

    /* a minute later db-0 is gone and its replacement Ready: one disruption again, condition True now */
    cJSON_DeleteItemFromArray(pods, 2);
    add_pod(pods, 0, true, false);
    cJSON_Delete(st);
    st = ctl_pdb_status(b, pods, sets, T0 + 60, "2026-01-01T00:01:00Z");
    assert_int_equal(field(st, "currentHealthy"), 3);
    assert_int_equal(field(st, "disruptionsAllowed"), 1);
    assert_string_equal(cond(st, "status"), "True");
    assert_string_equal(cond(st, "lastTransitionTime"), "2026-01-01T00:01:00Z");
}

static void test_fail_safe(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *sets = cJSON_CreateArray(); /* the set is gone */
    _cleanup_json_ cJSON *pods = cJSON_CreateArray();
    add_pod(pods, 0, true, false);
    add_pod(pods, 1, true, false);
    _cleanup_json_ cJSON *b = pdb("{'maxUnavailable':1,'selector':{'matchLabels':{'app':'db'}}}",
                                  "{'disruptionsAllowed':1,'observedGeneration':2,'currentHealthy':2}");
    _cleanup_json_ cJSON *st = ctl_pdb_status(b, pods, sets, T0, T0S);
    assert_int_equal(field(st, "disruptionsAllowed"), 0);
    assert_int_equal(field(st, "observedGeneration"), 2); /* not observed: evictions get 429 */
    assert_int_equal(field(st, "currentHealthy"), 2);
    assert_string_equal(cond(st, "reason"), "SyncFailed");
    assert_string_equal(cond(st, "message"), "found no controllers for pod \"db-0\"");

    /* an integer minAvailable needs no controller */
    _cleanup_json_ cJSON *m = pdb("{'minAvailable':1,'selector':{'matchLabels':{'app':'db'}}}", NULL);
    _cleanup_json_ cJSON *sm = ctl_pdb_status(m, pods, sets, T0, T0S);
    assert_int_equal(field(sm, "disruptionsAllowed"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_unavailable),
        cmocka_unit_test(test_min_available),
        cmocka_unit_test(test_disrupted_pods),
        cmocka_unit_test(test_fail_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
