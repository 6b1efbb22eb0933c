/* test_planner_history.c -- rule 14 in tables: a member left out of a recovery (its history diverged from
 * the cluster's) never seeds, is not joined over its writes until released, and its hold survives a new
 * pod, a sequence error, a second recovery and a re-created RSS (the record's copy).
 *
 * Worlds are written in the tokens of planner_fixture.h (one per member, ordinal 0 first); the previous
 * status is given as JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- the previous status and the record ---- */

/* The status after a recovery that seeded `seed` without ordinal `ord`: its memberStatus entry carries
 * leftOut (and podUID `uid`, NULL: the member's current pod). */
static void prev_left_out(struct world *w, unsigned ord, const char *seed, const char *uid, bool held)
{
    const struct rss_member_input *m = find(w, ord);
    const char *u = uid ? uid : m ? m->pod_uid : "gone";
    _cleanup_free_ char *j = rss_xasprintf(
        "{\"lastRecovery\":{\"kind\":\"LightsOut\",\"seed\":\"rss-db-0\",\"sequence\":\"%s\"},"
        "\"memberStatus\":[{\"ordinal\":%u,\"podUID\":\"%s\",\"leftOut\":{\"seedSequence\":\"%s\"%s}}]}",
        seed, ord, u, seed, held ? ",\"held\":true" : "");
    cJSON_Delete(w->prev);
    w->prev = cJSON_Parse(j);
    assert_non_null(w->prev);
}

/* status.memberStatus[ord].leftOut.seedSequence, or "" */
static const char *left_out_seq(const struct rss_plan *p, unsigned ord)
{
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(member_status(p, ord), "leftOut");
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(lo, "seedSequence"));
    return s ? s : "";
}

static void expect_plan(struct world *w, struct rss_plan *p, const char *want)
{
    run(w, p);
    _cleanup_free_ char *got = summary(p);
    if (strcmp(got, want) != 0) {
        _cleanup_free_ char *d = rss_plan_describe(p);
        fail_msg("plan \"%s\", want \"%s\"\n%s", got, want, d);
    }
}

/* ---- a diverged history never seeds (item: held member seeds the next lights-out) ---- */

/* minimumMembers 2 seeded 100 without ordinal 2 (120); the cluster wrote on to 105; ordinal 2 came back
 * and was held. Second lights-out, every member back: the 5 acknowledged writes are on 0 and 1 only. */
static void test_diverged_never_seeds(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S105 S105 S120", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    struct rss_plan p;
    expect_plan(&w, &p, "0:seed");
    const struct rss_plan_event *e = find_event(&p, "SeedChosen");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "rss-db-2 (left out of the recovery that seeded sequence 100"));
    assert_string_equal(left_out_seq(&p, 2), "100"); /* still held afterwards */
    rss_plan_free(&p);
    world_free(&w);
}

/* A diverged member is not waited for either: its data cannot seed, whatever it reports. */
static void test_diverged_not_waited_for(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S105 S105 -", 0, false, 0);
    prev_left_out(&w, 2, "100", "old-uid", true);
    struct rss_plan p;
    expect_plan(&w, &p, "0:seed");
    assert_string_equal(left_out_seq(&p, 2), "100");
    rss_plan_free(&p);
    world_free(&w);
}

/* Only diverged members report: nothing seeds, and the wait says why (force-seed decides). */
static void test_only_diverged_reports(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S120", 0, false, 0);
    prev_left_out(&w, 0, "100", NULL, true);
    struct rss_plan p;
    expect_plan(&w, &p, "");
    const struct rss_plan_event *e = find_event(&p, "WaitingForMembers");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "never seeds (rule 14): rss-db-0"));
    rss_plan_free(&p);
    world_free(&w);
}

/* A second recovery under minimumMembers with the diverged member still away keeps the FIRST divergence
 * point: measured against the second seed (130) its 120 would look "behind" and be joined over. */
static void test_second_recovery_keeps_divergence_point(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S130 S130 D120", 0, false, 2);
    prev_left_out(&w, 2, "100", NULL, true);
    struct rss_plan p;
    expect_plan(&w, &p, "0:seed");
    assert_string_equal(left_out_seq(&p, 2), "100");
    assert_null(find_event(&p, "MemberSkipped")); /* nothing newly skipped: it could not seed anyway */
    rss_plan_free(&p);
    /* It comes back: held, not joined. */
    world_free(&w);
    world_init(&w, "P P S120", 0, false, 2);
    prev_left_out(&w, 2, "100", NULL, false);
    expect_plan(&w, &p, "");
    assert_non_null(find_event(&p, "NewerThanSeed"));
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- the hold (item: a sequence error, a new pod, a re-created RSS) ---- */

/* Unknown data of a held member counts as possibly newer: a sequence error does not let it join. */
static void test_held_sequence_error_stays_held(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P E", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    struct rss_plan p;
    expect_plan(&w, &p, "");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(member_status(&p, 2), "leftOut");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "held")));
    rss_plan_free(&p);
    /* The same with no sequence reported at all (a new report without one). */
    world_free(&w);
    world_init(&w, "P P N", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, false);
    expect_plan(&w, &p, "");
    const struct rss_plan_event *e = find_event(&p, "NewerThanSeed");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "possibly above"));
    rss_plan_free(&p);
    world_free(&w);
}

/* The pod was recreated (a rolling update, kubectl delete pod, a resume, the pod GC after its Node went):
 * the hold is about the volume, not the pod uid. */
static void test_hold_survives_new_pod(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S120", 0, false, 0);
    prev_left_out(&w, 2, "100", "uid-of-the-old-pod", true);
    struct rss_plan p;
    expect_plan(&w, &p, "");
    assert_string_equal(left_out_seq(&p, 2), "100");
    rss_plan_free(&p);
    world_free(&w);
}

/* A rolling update recreated the held member's pod first: it stays held, and the rollout waits for it
 * (taking another member down would leave two out) and says why. */
static void test_rollout_waits_for_held(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S120", 0, false, 0);
    prev_left_out(&w, 2, "100", "uid-before-the-rollout", true);
    w.update_revision = "new";
    find(&w, 0)->revision = "old";
    find(&w, 1)->revision = "old";
    find(&w, 2)->revision = "new";
    struct rss_plan p;
    expect_plan(&w, &p, "");
    const struct rss_plan_event *e = find_event(&p, "RollingUpdate");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "waiting for rss-db-2 (held back"));
    rss_plan_free(&p);
    world_free(&w);
}

/* The RSS was deleted and created again: no status, the record's copy of the hold remains. */
static void test_hold_from_record(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S120", 0, false, 0);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\",\"at\":\"4-7\"}";
    struct rss_plan p;
    expect_plan(&w, &p, "");
    assert_non_null(find_event(&p, "NewerThanSeed"));
    assert_string_equal(left_out_seq(&p, 2), "100");
    assert_false(patch_of(&p, 2) && patch_of(&p, 2)->set_hold); /* the record says so already */
    rss_plan_free(&p);
    world_free(&w);
    /* A hold written before its mark was kept gets one: the last action id before this plan's. */
    world_init(&w, "P P S120", 0, false, 0);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    expect_plan(&w, &p, "");
    assert_true(patch_of(&p, 2) && patch_of(&p, 2)->set_hold);
    assert_string_equal(patch_of(&p, 2)->hold, "{\"seedSequence\":\"100\",\"at\":\"5-0\"}");
    rss_plan_free(&p);
    world_free(&w);
    /* ... and in a lights-out it never seeds. */
    world_init(&w, "S105 S105 S120", 0, false, 0);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    expect_plan(&w, &p, "0:seed");
    rss_plan_free(&p);
    world_free(&w);
    /* An unreadable record (only rssd writes it) holds against any sequence rather than being ignored. */
    world_init(&w, "P P S1", 0, false, 0);
    find(&w, 2)->hold_record = "garbage";
    expect_plan(&w, &p, "");
    assert_string_equal(left_out_seq(&p, 2), "0");
    rss_plan_free(&p);
    world_free(&w);
}

/* The hold is in the member's record before the seed that created it: a leader that loses its Lease
 * between the seed and the status write leaves the hold behind, not only the seed. */
static void test_hold_written_ahead_of_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S100 S100 D120", 0, false, 2);
    struct rss_plan p;
    expect_plan(&w, &p, "0:seed");
    assert_true(p.n_patches >= 2);
    assert_int_equal(p.patches[0].ordinal, 2);
    assert_true(p.patches[0].set_hold);
    assert_string_equal(p.patches[0].hold, "{\"seedSequence\":\"100\",\"at\":\"5-0\"}");
    assert_false(p.patches[0].set_desired);
    const struct rss_plan_patch *seed = patch_of(&p, 0);
    assert_true(seed->set_desired && seed->desired.action == RSS_ACTION_SEED);
    assert_true(seed > &p.patches[0]);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- release: by joining, or by the admin ---- */

/* Not newer than the seed: it joins, but the mark stays until it runs (a join that never ran replaced
 * nothing); once it runs, the mark goes from the status and the record. */
static void test_hold_clears_once_joined(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S100", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, false);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    struct rss_plan p;
    expect_plan(&w, &p, "2:primary(0,1)");
    assert_string_equal(left_out_seq(&p, 2), "100");
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "P P P", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, false);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    expect_plan(&w, &p, "");
    assert_string_equal(left_out_seq(&p, 2), "");
    const struct rss_plan_patch *h = patch_of(&p, 2);
    assert_non_null(h);
    assert_true(h->set_hold);
    assert_null(h->hold);
    rss_plan_free(&p);
    world_free(&w);
}

static void test_release_hold(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S120", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    w.release_hold = "rss-db-2";
    struct rss_plan p;
    expect_plan(&w, &p, "2:primary(0,1)");
    assert_true(p.clear_release_hold);
    const struct rss_plan_event *e = find_event(&p, "HoldReleased");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    const struct rss_plan_patch *h = patch_of(&p, 2);
    assert_true(h->set_hold && h->set_desired); /* one record write, one CAS */
    assert_string_equal(h->hold, "{\"seedSequence\":\"100\",\"at\":\"5-0\",\"released\":true}");
    rss_plan_free(&p);
    world_free(&w);
    /* Released but a lights-out came before it joined: still never a seed candidate. */
    world_init(&w, "S105 S105 S120", 0, false, 0);
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\",\"released\":true}";
    expect_plan(&w, &p, "0:seed");
    rss_plan_free(&p);
    world_free(&w);
    /* A release of a member that is not held is refused and removed. */
    world_init(&w, "P P S100", 0, false, 0);
    w.release_hold = "rss-db-1";
    expect_plan(&w, &p, "2:primary(0,1)");
    assert_true(p.clear_release_hold);
    assert_non_null(find_event(&p, "ReleaseHoldRefused"));
    rss_plan_free(&p);
    world_free(&w);
}

/* spec.paused: status only. Neither the record's hold is written nor the release annotation consumed. */
static void test_paused_writes_no_hold(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P S120", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    w.spec.paused = true;
    w.release_hold = "rss-db-2";
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(p.n_patches, 0);
    assert_false(p.clear_release_hold);
    assert_string_equal(left_out_seq(&p, 2), "100");
    rss_plan_free(&p);
    world_free(&w);
}

/* The admin's force-seed of the held member makes its history the cluster's: the mark goes. */
static void test_force_seed_of_held_member(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S105 S105 S120", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    w.force_seed = "rss-db-2";
    struct rss_plan p;
    expect_plan(&w, &p, "2:seed");
    assert_string_equal(left_out_seq(&p, 2), "");
    rss_plan_free(&p);
    world_free(&w);
    /* A force-seed of another member (130) while the held one cannot report: it stays marked at its first
     * divergence point (100), not at 130, which its 120 would look "behind" and be joined over. */
    world_init(&w, "S130 S130 E", 0, false, 0);
    prev_left_out(&w, 2, "100", NULL, true);
    w.force_seed = "rss-db-0";
    expect_plan(&w, &p, "0:seed");
    assert_string_equal(left_out_seq(&p, 2), "100");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diverged_never_seeds),
        cmocka_unit_test(test_diverged_not_waited_for),
        cmocka_unit_test(test_only_diverged_reports),
        cmocka_unit_test(test_second_recovery_keeps_divergence_point),
        cmocka_unit_test(test_held_sequence_error_stays_held),
        cmocka_unit_test(test_hold_survives_new_pod),
        cmocka_unit_test(test_rollout_waits_for_held),
        cmocka_unit_test(test_hold_from_record),
        cmocka_unit_test(test_hold_written_ahead_of_seed),
        cmocka_unit_test(test_hold_clears_once_joined),
        cmocka_unit_test(test_release_hold),
        cmocka_unit_test(test_paused_writes_no_hold),
        cmocka_unit_test(test_force_seed_of_held_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
