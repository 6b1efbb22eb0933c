/* test_leader_marks.c -- rules 16 and 17 in the leader's plumbing: the primary mark goes into the record
 * patch with its desired, and a member whose pod is gone reaches the planner with its record's mark. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/record.h"

#define T0 1700000000000LL

static void parse_spec(struct rss_spec *spec, cJSON **cr)
{
    *cr = cJSON_Parse(
        "{\"metadata\":{\"name\":\"db\",\"namespace\":\"ns\",\"uid\":\"u\",\"generation\":1},"
        "\"spec\":{\"replicas\":3,\"primaries\":1,\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/s\"]},\"primary\":{\"command\":[\"/p\"]},"
        "\"secondary\":{\"command\":[\"/r\"]},\"status\":{\"command\":[\"/c\"]},"
        "\"stop\":{\"command\":[\"/x\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"b\"}]}}}");
    assert_non_null(*cr);
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_spec_parse(*cr, spec, &err), 0);
}

/* One record of ns/db: member pod, its primary mark (NULL: none). */
static cJSON *record(const char *pod, const char *mark)
{
    cJSON *cm = rss_record_new("ns", "db", pod);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "resourceVersion", "7");
    if (mark)
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cm, "data"), RSS_RECORD_PRIMARY, mark);
    return cm;
}

/* rss-db-0's pod exists; rss-db-1's is gone but its record carries a mark (a drained primary); rss-db-2's
 * is gone with no mark; a record of another RSS with a mark. Only rss-db-1 joins the input without its
 * pod, with its mark and nothing else. */
static void test_absent_member_keeps_its_mark(void **state)
{
    (void)state;
    struct rss_spec spec;
    _cleanup_json_ cJSON *cr = NULL;
    parse_spec(&spec, &cr);
    _cleanup_json_ cJSON *pods = cJSON_Parse(
        "{\"items\":[{\"metadata\":{\"name\":\"rss-db-0\",\"uid\":\"p0\"},\"spec\":{\"nodeName\":\"n1\"},"
        "\"status\":{\"phase\":\"Running\"}}]}");
    const char *mark1 = "{\"action\":\"5-9\",\"podUID\":\"p1-old\",\"sequence\":\"120\"}";
    _cleanup_json_ cJSON *records = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(records, "items");
    cJSON_AddItemToArray(items, record("rss-db-0", "{\"action\":\"5-1\",\"podUID\":\"p0\"}"));
    cJSON_AddItemToArray(items, record("rss-db-1", mark1));
    cJSON_AddItemToArray(items, record("rss-db-2", NULL));
    cJSON *other = rss_record_new("ns", "other", "rss-other-1");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(other, "data"), RSS_RECORD_PRIMARY, mark1);
    cJSON_AddItemToArray(items, other);
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    struct leader_snapshot snap;
    leader_snapshot_build(&spec, pods, records, &lv, T0 + 1000, 60000, &snap);
    leader_liveness_clear(&lv);
    assert_int_equal(snap.n_members, 2);
    assert_int_equal(snap.members[0].ordinal, 0);
    assert_true(snap.members[0].pod_exists);
    assert_string_equal(snap.members[0].primary_record, "{\"action\":\"5-1\",\"podUID\":\"p0\"}");
    const struct rss_member_input *m1 = &snap.members[1];
    assert_int_equal(m1->ordinal, 1);
    assert_false(m1->pod_exists);
    assert_string_equal(m1->primary_record, mark1);
    assert_string_equal(m1->resource_version, "7");
    assert_null(m1->pod_uid);
    assert_null(m1->node);
    assert_false(m1->has_desired || m1->has_observed);
    assert_null(m1->hold_record);
    assert_null(m1->pin_record);
    leader_snapshot_clear(&snap);
    rss_spec_clear(&spec);
}

/* The mark rides in the record patch of its desired: set, removed (null), or left alone. */
static void test_record_patch_carries_mark(void **state)
{
    (void)state;
    struct rss_plan_patch p = {.ordinal = 1, .pod = "rss-db-1", .resource_version = "7", .pod_uid = "p1"};
    p.set_desired = true;
    p.desired.action = RSS_ACTION_SEED;
    p.desired.epoch = 5;
    p.desired.id = (struct rss_action_id){5, 9};
    p.set_primary = true;
    p.primary = "{\"action\":\"5-9\"}";
    _cleanup_json_ cJSON *a = leader_record_patch(&p);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(a, "data");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, RSS_RECORD_PRIMARY)),
                        "{\"action\":\"5-9\"}");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(data, RSS_RECORD_DESIRED)); /* one write, one CAS */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(a, "metadata"), "resourceVersion")),
                        "7");
    p.primary = NULL;
    _cleanup_json_ cJSON *b = leader_record_patch(&p);
    assert_true(cJSON_IsNull(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "data"), RSS_RECORD_PRIMARY)));
    p.set_primary = false;
    _cleanup_json_ cJSON *c = leader_record_patch(&p);
    assert_null(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "data"), RSS_RECORD_PRIMARY));
    /* A patch that only removes a mark is still a write. */
    p.set_desired = false;
    p.set_primary = true;
    _cleanup_json_ cJSON *d = leader_record_patch(&p);
    assert_non_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_member_keeps_its_mark),
        cmocka_unit_test(test_record_patch_carries_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
