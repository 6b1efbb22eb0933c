/* test_planner_status.c -- the plan's output beyond actions: labels, the status, the wait Event said once,
 * determinism, and input the planner refuses. Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"
#include "rss/clock.h"
#include "rss/condition.h"

static void test_labels(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 Y", 1, true, 0);
    find(&w, 0)->active_label = -1; /* absent: set true */
    find(&w, 1)->active_label = 1;  /* stopped but labelled active: set false */
    find(&w, 2)->active_label = 1;  /* correct: no change */
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(patch_of(&p, 0)->set_active_label, 1);
    assert_int_equal(patch_of(&p, 1)->set_active_label, 0);
    assert_null(patch_of(&p, 2));
    /* The label rides in the same CAS patch as the desired write. */
    assert_true(patch_of(&p, 1)->set_desired);
    rss_plan_free(&p);
    world_free(&w);
}

static void names_equal(const cJSON *arr, const char *want)
{
    char buf[256] = "";
    size_t o = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) o +=
        (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", o ? " " : "", e->valuestring);
    assert_string_equal(buf, want);
}

static void test_status(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P Y F E", 2, true, 0);
    struct rss_plan p;
    run(&w, &p);
    const cJSON *members = cJSON_GetObjectItem(p.status, "members");
    names_equal(cJSON_GetObjectItem(members, "ready"), "rss-db-0 rss-db-1");
    names_equal(cJSON_GetObjectItem(members, "unready"), "rss-db-2 rss-db-3");
    names_equal(cJSON_GetObjectItem(members, "primary"), "rss-db-0");
    names_equal(cJSON_GetObjectItem(members, "secondary"), "rss-db-1");
    names_equal(cJSON_GetObjectItem(members, "failed"), "rss-db-2");
    assert_int_equal(cJSON_GetObjectItem(p.status, "observedGeneration")->valuedouble, 2);
    assert_string_equal(status_str(&p, "phase"), "Degraded");
    const cJSON *m3 = member_status(&p, 3);
    assert_string_equal(cJSON_GetObjectItem(m3, "node")->valuestring, "node-3");
    assert_string_equal(cJSON_GetObjectItem(m3, "role")->valuestring, "stopped");
    assert_non_null(strstr(cJSON_GetObjectItem(m3, "sequenceError")->valuestring, "garbage"));
    /* kubectl describe: Ready, Available, Degraded, Recovering, WaitingForMembers, Scaling. */
    static const struct {
        const char *type, *status, *reason;
    } want[] = {{"Ready", "False", "MembersNotReady"},
                {"Available", "True", "PrimaryRunning"},
                {"Degraded", "True", "MembersDown"},
                {"Recovering", "False", "NotRecovering"}};
    const cJSON *conds = cJSON_GetObjectItem(p.status, "conditions");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const cJSON *cd = cJSON_GetArrayItem(conds, (int)i);
        assert_string_equal(cJSON_GetObjectItem(cd, "type")->valuestring, want[i].type);
        assert_string_equal(cJSON_GetObjectItem(cd, "status")->valuestring, want[i].status);
        assert_string_equal(cJSON_GetObjectItem(cd, "reason")->valuestring, want[i].reason);
    }
    rss_plan_free(&p);
    world_free(&w);
}

static void test_wait_event_not_repeated(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "? S1 S2", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    assert_non_null(find_event(&p, "WaitingForMembers"));
    assert_string_equal(p.phase, "Recovering");
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    run(&w, &p);
    assert_null(find_event(&p, "WaitingForMembers")); /* same message: no event spam */
    rss_plan_free(&p);
    world_free(&w);
}

static void test_deterministic(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S10 E F S30 D4 T", 3, true, 0);
    struct rss_plan a, b;
    run(&w, &a);
    run(&w, &b);
    _cleanup_free_ char *da = rss_plan_describe(&a);
    _cleanup_free_ char *db = rss_plan_describe(&b);
    _cleanup_free_ char *sa = cJSON_PrintUnformatted(a.status);
    _cleanup_free_ char *sb = cJSON_PrintUnformatted(b.status);
    assert_string_equal(da, db);
    assert_string_equal(sa, sb);
    rss_plan_free(&a);
    rss_plan_free(&b);
    rss_plan_free(&a); /* idempotent */
    world_free(&w);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S2", 0, false, 0);
    w.m[1].ordinal = 0;
    struct rss_plan_input in = {.spec = &w.spec,
                                .epoch = EPOCH,
                                .now_ms = NOW,
                                .statefulset_replicas = 2,
                                .members = w.m,
                                .n_members = w.n};
    struct rss_plan p;
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(rss_planner_plan(&in, &p, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_plan_free(&p);
    rss_error_release(&err);
    w.m[1].ordinal = 10000;
    assert_true(rss_planner_plan(&in, &p, &err) < 0);
    rss_plan_free(&p);
    rss_error_release(&err);
    in.spec = NULL;
    assert_true(rss_planner_plan(&in, &p, &err) < 0);
    rss_plan_free(&p);
    w.m[1].ordinal = 1;
    world_free(&w);
}

static const cJSON *history(const struct rss_plan *p)
{
    return cJSON_GetObjectItemCaseSensitive(p->status, "history");
}

static const char *entry(const struct rss_plan *p, int i, const char *key)
{
    const cJSON *h = history(p);
    int n = cJSON_GetArraySize(h);
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(h, i < 0 ? n + i : i), key));
}

/* status.history (issue 38 item 5): a lights-out's seed decision with its sequences, once, however many
 * plans repeat the situation; the episode closed by "Running" with its duration; the Events that tell
 * nothing of a recovery (a wait) stay out; the previous entries carried, garbage dropped, the newest 40
 * kept. */
/* kstatus (Flux, Argo CD): Reconciling while not at rest, Stalled when only an admin can move it on, never
 * both; every condition carries the generation the plan judged. */
static const cJSON *cond(const struct rss_plan *p, const char *type)
{
    const cJSON *cd;
    cJSON_ArrayForEach(
        cd, cJSON_GetObjectItem(p->status,
                                "conditions")) if (!strcmp(cJSON_GetObjectItem(cd, "type")->valuestring,
                                                           type)) return cd;
    fail_msg("no condition %s", type);
    return NULL;
}

static void test_kstatus(void **state)
{
    (void)state;
    static const struct {
        const char *world, *spec, *hold; /* hold: a record hold on member 0 */
        int primaries;
        const char *phase, *reconciling, *stalled; /* the reason of the one True, or NULL for False */
    } rows[] = {
        {"P P P", "", NULL, 3, "Running", NULL, NULL},
        {"P Y Y", "", NULL, 1, "Running", NULL, NULL},
        {"P Y S5", "", NULL, 1, "Degraded", "Degraded", NULL},
        {"S5 S3 S1", "", NULL, 3, "Recovering", "Recovering", NULL},
        {"S5 S3 D", "", NULL, 3, "Recovering", "Recovering", NULL},
        /* Every sequence unreadable: no member can seed until an admin looks (force-seed). */
        {"E E E", "", NULL, 3, "Recovering", NULL, "SequenceError"},
        /* A member held back with writes newer than the seed: release-hold or force-seed. */
        {"S9 P P", "", "{\"seedSequence\":\"5\",\"at\":\"5-3\"}", 3, "Degraded", NULL, "MemberHeldNewer"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init_with(&w, rows[i].world, rows[i].primaries, true, 0, rows[i].spec);
        if (rows[i].hold)
            set_record_hold(&w, 0, rows[i].hold);
        struct rss_plan p;
        run(&w, &p);
        const char *ph = status_str(&p, "phase");
        const cJSON *rec = cond(&p, "Reconciling"), *st = cond(&p, "Stalled");
        const char *rs = cJSON_GetObjectItem(rec, "status")->valuestring;
        const char *ss = cJSON_GetObjectItem(st, "status")->valuestring;
        const char *rr = cJSON_GetObjectItem(rec, "reason")->valuestring;
        const char *sr = cJSON_GetObjectItem(st, "reason")->valuestring;
        if (strcmp(ph, rows[i].phase) || strcmp(rs, rows[i].reconciling ? "True" : "False") ||
            strcmp(ss, rows[i].stalled ? "True" : "False") ||
            strcmp(rr, rows[i].reconciling ? rows[i].reconciling : "Reconciled") ||
            strcmp(sr, rows[i].stalled ? rows[i].stalled : "NotStalled"))
            fail_msg("row %zu (%s): phase %s, Reconciling %s %s, Stalled %s %s", i, rows[i].world, ph, rs, rr,
                     ss, sr);
        assert_false(!strcmp(rs, "True") && !strcmp(ss, "True"));
        double gen = cJSON_GetObjectItem(p.status, "observedGeneration")->valuedouble;
        const cJSON *cd;
        int n = 0;
        cJSON_ArrayForEach(cd, cJSON_GetObjectItem(p.status, "conditions"))
        {
            const cJSON *og = cJSON_GetObjectItem(cd, "observedGeneration");
            assert_non_null(og);
            assert_true(og->valuedouble == gen && gen > 0);
            n++;
        }
        assert_int_equal(n, 8);
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* rss_condition_add (the planner's and the leader's): the time changes only when the status does. */
static void test_condition_time(void **state)
{
    (void)state;
    cJSON *prev = cJSON_Parse(
        "[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:00.000Z\"},"
        "{\"type\":\"Stalled\",\"status\":\"False\",\"lastTransitionTime\":\"2026-01-02T00:00:00.000Z\"}]");
    assert_non_null(prev);
    cJSON *arr = cJSON_CreateArray();
    rss_condition_add(arr, prev, "Ready", true, "AllMembersReady", "", 7, NOW);
    rss_condition_add(arr, prev, "Stalled", true, "InvalidSpec", "bad", -1, NOW);
    rss_condition_add(arr, NULL, "Reconciling", false, "Reconciled", "", 0, NOW);
    const cJSON *r = cJSON_GetArrayItem(arr, 0), *st = cJSON_GetArrayItem(arr, 1),
                *rc = cJSON_GetArrayItem(arr, 2);
    assert_string_equal(cJSON_GetObjectItem(r, "lastTransitionTime")->valuestring,
                        "2026-01-01T00:00:00.000Z");
    assert_int_equal(cJSON_GetObjectItem(r, "observedGeneration")->valuedouble, 7);
    char now[RSS_TIME_LEN];
    rss_time_ms(now, NOW);
    assert_string_equal(cJSON_GetObjectItem(st, "lastTransitionTime")->valuestring, now); /* False -> True */
    assert_null(cJSON_GetObjectItem(st, "observedGeneration"));
    assert_string_equal(cJSON_GetObjectItem(st, "status")->valuestring, "True");
    assert_string_equal(cJSON_GetObjectItem(rc, "lastTransitionTime")->valuestring, now);
    assert_int_equal(cJSON_GetObjectItem(rc, "observedGeneration")->valuedouble, 0);
    cJSON_Delete(arr);
    cJSON_Delete(prev);
}

static void test_history(void **state)
{
    (void)state;
    struct world w;
    struct rss_plan p;
    world_init(&w, "S10 S30 S20", 0, false, 0);
    run(&w, &p);
    expect(&p, "1:seed", "lights-out");
    assert_int_equal(cJSON_GetArraySize(history(&p)), 1);
    assert_string_equal(entry(&p, 0, "reason"), "SeedChosen");
    assert_string_equal(entry(&p, 0, "member"), "rss-db-1");
    assert_non_null(strstr(entry(&p, 0, "message"), "30"));
    assert_non_null(entry(&p, 0, "at"));
    apply(&w, &p);
    ran(&w, 1, RSS_ROLE_PRIMARY);
    run(&w, &p);
    assert_int_equal(cJSON_GetArraySize(history(&p)), 1); /* not Running yet: 2 members to join */
    apply(&w, &p);
    ran(&w, 0, RSS_ROLE_PRIMARY);
    ran(&w, 2, RSS_ROLE_PRIMARY);
    w.now += 7500;
    run(&w, &p);
    assert_string_equal(p.phase, "Running");
    assert_int_equal(cJSON_GetArraySize(history(&p)), 2);
    assert_string_equal(entry(&p, 1, "reason"), "Running");
    assert_null(entry(&p, 1, "member"));
    assert_non_null(strstr(entry(&p, 1, "message"), "3 of 3 members ready"));
    assert_non_null(strstr(entry(&p, 1, "message"), "after SeedChosen"));
    apply(&w, &p);
    run(&w, &p); /* Running again: the episode is closed, nothing added */
    assert_int_equal(cJSON_GetArraySize(history(&p)), 2);
    rss_plan_free(&p);
    world_free(&w);

    /* A wait (its Event once per message) is not history; garbage in the previous status is dropped. */
    world_init(&w, "? S1 S2", 0, false, 0);
    w.prev = cJSON_Parse("{\"history\":[1,{\"at\":\"x\"},{\"at\":\"2026-12-07T00:00:00.000Z\",\"reason\":"
                         "\"SeedChosen\",\"member\":\"rss-db-2\",\"message\":\"an old seed\"}]}");
    run(&w, &p);
    assert_non_null(find_event(&p, "WaitingForMembers"));
    assert_int_equal(cJSON_GetArraySize(history(&p)), 1);
    assert_string_equal(entry(&p, 0, "message"), "an old seed");
    rss_plan_free(&p);
    world_free(&w);

    /* A member's own restart after a crash ("Failover" naming it) is not the RSS's recovery. */
    world_init(&w, "P P P", 0, false, 0);
    run(&w, &p);
    apply(&w, &p);
    crash(&w, 1, 40);
    run(&w, &p);
    const struct rss_plan_event *fo = find_event(&p, "Failover");
    assert_non_null(fo);
    assert_non_null(fo->pod);
    assert_null(history(&p));
    rss_plan_free(&p);
    world_free(&w);

    /* Bounded: the newest 40. */
    world_init(&w, "S10 S30 S20", 0, false, 0);
    cJSON *prev = cJSON_CreateObject(), *h = cJSON_AddArrayToObject(prev, "history");
    for (int i = 0; i < 45; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "at", "2026-12-07T00:00:00.000Z");
        cJSON_AddStringToObject(e, "reason", i % 2 ? "Running" : "Promoting");
        _cleanup_free_ char *m = rss_xasprintf("entry %d", i);
        cJSON_AddStringToObject(e, "message", m);
        cJSON_AddItemToArray(h, e);
    }
    w.prev = prev;
    run(&w, &p);
    assert_int_equal(cJSON_GetArraySize(history(&p)), 40);
    assert_string_equal(entry(&p, 0, "message"), "entry 6");
    assert_string_equal(entry(&p, -1, "reason"), "SeedChosen");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_kstatus),
        cmocka_unit_test(test_condition_time),
        cmocka_unit_test(test_wait_event_not_repeated),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
