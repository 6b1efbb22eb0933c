/* test_planner_recovery.c -- rows 9 and 10 in tables: the lights-out recovery seeds the highest sequence
 * (rules 1, 2, 3, 6, 8), ties by ordinal compared as numbers, members above spec.replicas, a new cluster's
 * bootstrap. Worlds are written in the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

static const struct plan_row recovery_rows[] = {
    /* rule 2: the highest sequence seeds, with no peers; nothing else starts */
    {"2", "S100 S300 S200", 0, false, 0, NO_PIN, 0, "1:seed", "SeedChosen", false},
    {"2", "S300 S100 S200", 0, false, 0, NO_PIN, 0, "0:seed", "SeedChosen", false},
    {"2", "S0 S0 S1", 0, false, 0, NO_PIN, 0, "2:seed", "SeedChosen", false},
    {"2", "S18446744073709551615 S18446744073709551614 S1", 0, false, 0, NO_PIN, 0, "0:seed", "SeedChosen",
     false},
    /* ties go to the lowest ordinal */
    {"2", "S9 S9 S9", 0, false, 0, NO_PIN, 0, "0:seed", "SeedChosen", false},
    {"2", "S1 S9 S9", 0, false, 0, NO_PIN, 0, "1:seed", "SeedChosen", false},
    /* every member empty and never seeded: a new cluster bootstraps (the same rules, clearer words) */
    {"2", "S0 S0 S0", 0, false, 0, NO_PIN, 0, "0:seed", "Bootstrap", false},
    /* rule 3: wait for every member by default */
    {"3", "? S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "- S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "S1 S2 N", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "C9 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "X9 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "L9 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "H9 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "S1 S2 L", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    /* rule 3 (corrected): a dead node is never by itself a reason to seed without its member: its data
     * may be the newest (a node that booted late, or stays off) */
    {"3", "D S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "D1 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "D900 S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "S1 D60 S20", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    /* ... with minimumMembers the admin opted in: it goes on, with a Warning naming what may be lost */
    {"3", "S1 D60 S20", 0, false, 2, NO_PIN, 0, "2:seed", "MemberSkipped", true},
    {"3", "D S1 S2", 0, false, 2, NO_PIN, 0, "2:seed", "MemberSkipped", true},
    /* finding F4 (docs/model.md): a start written ahead on a node judged dead may still run there (the
     * retraction does not stop a running hook); no seed elsewhere until its hook timeout and the stop
     * timeout after the write-ahead have passed (plus the dead-node margin), opt-in or not */
    {"F4", "S1 W60 S20", 0, false, 2, NO_PIN, 0, "", "WaitingForStart", true},
    {"F4", "S1 W60 S20", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", true},
    {"F4", "W S1 S2", 0, false, 2, NO_PIN, 0, "", "WaitingForStart", true},
    {"F4", "S1 V60 S20", 0, false, 2, NO_PIN, 0, "2:seed", "MemberSkipped", true},
    {"F4", "S1 V60 S20", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    /* rule 3: ... or the admin opted in with minimumMembers (Warning) */
    {"3", "? S1 S2", 0, false, 2, NO_PIN, 0, "2:seed", "MemberSkipped", true},
    {"3", "S7 - S2", 0, false, 2, NO_PIN, 0, "0:seed", "MemberSkipped", true},
    {"3", "? ? S2", 0, false, 2, NO_PIN, 0, "", "WaitingForMembers", false},
    {"3", "S1 S2 S3", 0, false, 2, NO_PIN, 0, "2:seed", "SeedChosen", false},
    /* rule 6: a garbage sequence is never 0: the member is excluded, with a Warning, and we wait */
    {"6", "E S1 S2", 0, false, 0, NO_PIN, 0, "", "SequenceError", true},
    {"6", "S0 E S0", 0, false, 0, NO_PIN, 0, "", "SequenceError", true},
    {"6", "E E E", 0, false, 0, NO_PIN, 0, "", "SequenceError", true},
    {"6", "E S0 S0", 0, false, 2, NO_PIN, 0, "1:seed", "MemberSkipped", true},
    {"6", "E E S0", 0, false, 1, NO_PIN, 0, "2:seed", "SequenceError", true},
    /* rule 1 / rule 8: no seed while anything runs or starts ("starting" counts as running) */
    {"1", "P S1 S2", 0, false, 0, NO_PIN, 0, "2:primary(0)", "Joining", false},
    {"1", "Y S1 S2", 0, true, 0, NO_PIN, 0, "0:stop", "NoPrimary", true},
    {"8", "T S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    {"8", "S9 T S2", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    /* rule 1: an unclear member blocks the seed; a failed one is stopped first */
    {"1", "U S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", true},
    {"1", "F S1 S2", 0, false, 0, NO_PIN, 0, "0:stop", "StoppingFailedMember", true},
    /* rule 2: a failed seed is retried on the same member; never an automatic fallback */
    {"2", "S100 S300 S200", 0, false, 0, 1, 300, "1:seed", "SeedChosen", false},
    {"2", "S100 S300 S200", 0, false, 0, 2, 200, "1:seed", "SeedChosen", false},
    {"2", "S100 E S200", 0, false, 0, 1, 300, "", "SequenceError", true},
    {"2", "S100 E S200", 0, false, 2, 1, 300, "", "SeedFallbackRefused", true},
    {"2", "S100 - S200", 0, false, 2, 1, 300, "", "SeedFallbackRefused", true},
    {"2", "S100 S250 S200", 0, false, 0, 1, 300, "", "SeedFallbackRefused", true},
};

static void test_recovery_table(void **state)
{
    (void)state;
    plan_rows_run(recovery_rows, sizeof(recovery_rows) / sizeof(recovery_rows[0]), "recovery");
}

/* ---- ties compared as numbers: 2 vs 10 ---- */

static void test_tie_2_vs_10(void **state)
{
    (void)state;
    /* Ordinals 2 and 10 share the highest sequence. As strings "rss-db-10" < "rss-db-2"; as numbers 2 < 10.
     */
    const char *rows[][2] = {
        {"S1 S1 S7 S1 S1 S1 S1 S1 S1 S1 S7", "2:seed"},
        {"S1 S1 S6 S1 S1 S1 S1 S1 S1 S1 S7", "10:seed"}, /* 10 > 9 > 2 as numbers; higher sequence wins */
        {"S1 S1 S7 S1 S1 S1 S1 S1 S1 S9 S9", "9:seed"},
    };
    for (size_t i = 0; i < 3; i++) {
        struct world w;
        world_init(&w, rows[i][0], 0, false, 0);
        struct rss_plan p;
        run(&w, &p);
        expect(&p, rows[i][1], rows[i][0]);
        rss_plan_free(&p);
        /* The input order of the LIST must not matter: reverse it. */
        for (size_t a = 0, b = w.n - 1; a < b; a++, b--) {
            struct rss_member_input t = w.m[a];
            w.m[a] = w.m[b];
            w.m[b] = t;
        }
        run(&w, &p);
        expect(&p, rows[i][1], "reversed");
        if (i == 0)
            assert_non_null(strstr(find_event(&p, "SeedChosen")->message, "tied with rss-db-10"));
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* findings/planner-ordinal-above-replicas.txt: StatefulSet replicas 1 (scaled out of band), RSS
 * replicas 4, a member at ordinal 1 with sequence 2 and ordinal 0 with 0. The plan raised replicas and
 * seeded ordinal 0 in the same step (rule 2). Now it raises replicas and waits for every member. */
static void test_ordinal_above_replicas(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S0 S2 - -", 0, false, 0);
    w.sts = 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "replicas=4", "scale up first, no seed");
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    w.sts = 4;
    set_observed(add_pod(&w, 2), RSS_ROLE_STOPPED, GEN, true, 0, NULL);
    set_observed(add_pod(&w, 3), RSS_ROLE_STOPPED, GEN, true, 0, NULL);
    run(&w, &p);
    expect(&p, "1:seed", "the highest sequence seeds");
    rss_plan_free(&p);
    world_free(&w);
}

/* A new cluster reads as a bootstrap; the first lights-out after it as a recovery; lastRecovery says
 * which member seeded with what, and survives the end of the recovery. */
static void test_bootstrap_then_recovery(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S0 S0 S0", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "0:seed", "bootstrap");
    const struct rss_plan_event *e = find_event(&p, "Bootstrap");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "new cluster: rss-db-0 bootstraps, all 3 members empty"));
    assert_null(find_event(&p, "SeedChosen"));
    const cJSON *lr = cJSON_GetObjectItem(p.status, "lastRecovery");
    assert_string_equal(cJSON_GetObjectItem(lr, "kind")->valuestring, "Bootstrap");
    assert_string_equal(cJSON_GetObjectItem(lr, "seed")->valuestring, "rss-db-0");
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* It runs; the record stays. */
    for (unsigned i = 0; i < 3; i++)
        set_observed(find(&w, i), RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    run(&w, &p);
    lr = cJSON_GetObjectItem(p.status, "lastRecovery");
    assert_string_equal(cJSON_GetObjectItem(lr, "kind")->valuestring, "Bootstrap");
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* A lights-out with empty data again is a recovery now, not a bootstrap. */
    for (unsigned i = 0; i < 3; i++)
        set_observed(find(&w, i), RSS_ROLE_STOPPED, GEN + 1, true, 0, NULL);
    run(&w, &p);
    expect(&p, "0:seed", "recovery");
    assert_non_null(find_event(&p, "SeedChosen"));
    lr = cJSON_GetObjectItem(p.status, "lastRecovery");
    assert_string_equal(cJSON_GetObjectItem(lr, "kind")->valuestring, "LightsOut");
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- rule 2's recovery pin, durable in the seed member's record ---- */

#define PIN300 "{\"seedSequence\":\"300\"}"

/* The pin is in the seed's own patch: its desired and its recoveryPin are one record write (one CAS). No
 * other member's record gets a pin. */
static void test_pin_written_with_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S100 S300 D120", 0, false, 2);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "seed");
    const struct rss_plan_patch *seed = desired_patch_of(&p, 1);
    assert_non_null(seed);
    assert_true(seed->desired.action == RSS_ACTION_SEED);
    assert_true(seed->set_pin);
    assert_string_equal(seed->pin, PIN300);
    for (size_t i = 0; i < p.n_patches; i++)
        assert_true(p.patches[i].ordinal == 1 || !p.patches[i].set_pin);
    /* the status pin says the same */
    const cJSON *r = cJSON_GetObjectItem(p.status, "recovery");
    assert_int_equal(cJSON_GetObjectItem(r, "seedOrdinal")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(r, "seedSequence")->valuestring, "300");
    rss_plan_free(&p);
    world_free(&w);
}

/* The Lease was lost after the seed's record write and before the status write: the next leader has no
 * status.recovery, only the seed member's record. Its seed failed and it now reports a sequence error;
 * minimumMembers 2 would let the 200 seed. The record's pin refuses it; the pinned member's retry seeds. */
static void test_pin_from_record_only(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S100 S300 S200", 0, false, 2);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "the first leader seeds");
    char pin[80];
    snprintf(pin, sizeof(pin), "%s", desired_patch_of(&p, 1)->pin);
    rss_plan_free(&p);
    world_free(&w);
    /* the next leader: the status write was lost (no previous status at all) */
    world_init(&w, "S100 E S200", 0, false, 2);
    set_record_pin(&w, 1, pin);
    run(&w, &p);
    expect(&p, "", "a lower sequence is refused");
    const struct rss_plan_event *e = find_event(&p, "SeedFallbackRefused");
    assert_non_null(e);
    assert_true(e->type == RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "previous seed rss-db-1 had sequence 300"));
    /* the status gets the pin back */
    const cJSON *r = cJSON_GetObjectItem(p.status, "recovery");
    assert_string_equal(cJSON_GetObjectItem(r, "seedSequence")->valuestring, "300");
    rss_plan_free(&p);
    world_free(&w);
    /* ... without minimumMembers too, a lower reported sequence never seeds */
    world_init(&w, "S100 S250 S200", 0, false, 0);
    set_record_pin(&w, 1, pin);
    run(&w, &p);
    expect(&p, "", "250 < 300");
    assert_non_null(find_event(&p, "SeedFallbackRefused"));
    rss_plan_free(&p);
    world_free(&w);
    /* the pinned member reports its 300 again: its retry seeds (the pin stays in its seed's write) */
    world_init(&w, "S100 S300 S200", 0, false, 2);
    set_record_pin(&w, 1, pin);
    run(&w, &p);
    expect(&p, "1:seed", "the retry");
    assert_string_equal(desired_patch_of(&p, 1)->pin, PIN300);
    rss_plan_free(&p);
    world_free(&w);
}

/* Status and records disagree after a lost write: the higher pin wins, whichever holds it. */
static void test_pin_highest_wins(void **state)
{
    (void)state;
    struct world w;
    struct rss_plan p;
    /* status 2@200, record of 1 at 300: the 250 is refused */
    world_init(&w, "S100 S250 S200", 0, false, 0);
    set_pin(&w, 2, 200);
    set_record_pin(&w, 1, PIN300);
    run(&w, &p);
    expect(&p, "", "record higher");
    assert_non_null(strstr(find_event(&p, "SeedFallbackRefused")->message, "rss-db-1 had sequence 300"));
    const cJSON *r = cJSON_GetObjectItem(p.status, "recovery");
    assert_int_equal(cJSON_GetObjectItem(r, "seedOrdinal")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(r, "seedSequence")->valuestring, "300");
    rss_plan_free(&p);
    world_free(&w);
    /* status 1@300, a stale record pin of 2 at 200: still refused at 300 */
    world_init(&w, "S100 S250 S200", 0, false, 0);
    set_pin(&w, 1, 300);
    set_record_pin(&w, 2, "{\"seedSequence\":\"200\"}");
    run(&w, &p);
    expect(&p, "", "status higher");
    assert_non_null(strstr(find_event(&p, "SeedFallbackRefused")->message, "rss-db-1 had sequence 300"));
    rss_plan_free(&p);
    world_free(&w);
    /* both lower than the best: it seeds, and its record gets its own pin */
    world_init(&w, "S100 S350 S200", 0, false, 0);
    set_pin(&w, 2, 200);
    set_record_pin(&w, 1, PIN300);
    run(&w, &p);
    expect(&p, "1:seed", "above both");
    assert_string_equal(desired_patch_of(&p, 1)->pin, "{\"seedSequence\":\"350\"}");
    rss_plan_free(&p);
    world_free(&w);
}

/* An unreadable pin (only rssd writes there) is a seed at an unknown sequence: no automatic seed at all,
 * not even of its own member; the admin's force-seed decides and its pin replaces it. */
static void test_pin_unreadable(void **state)
{
    (void)state;
    struct world w;
    struct rss_plan p;
    world_init(&w, "S100 S300 S200", 0, false, 0);
    set_record_pin(&w, 1, "garbage");
    run(&w, &p);
    expect(&p, "", "unreadable");
    const struct rss_plan_event *e = find_event(&p, "SeedFallbackRefused");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "record of rss-db-1 is unreadable"));
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "S100 S300 S200", 0, false, 0);
    set_record_pin(&w, 1, "{\"seedSequence\":\"-1\"}");
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "2:seed", "force-seed");
    assert_string_equal(desired_patch_of(&p, 2)->pin, "{\"seedSequence\":\"200\"}");
    const struct rss_plan_patch *old = patch_of(&p, 1);
    assert_non_null(old);
    assert_true(old->set_pin && !old->pin); /* the admin's choice supersedes it */
    rss_plan_free(&p);
    world_free(&w);
}

/* A force-seed writes its pin into the seeded member's record with the seed, and removes the others'. */
static void test_pin_force_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S100 S300 S200", 0, false, 0);
    set_pin(&w, 1, 300);
    set_record_pin(&w, 1, PIN300);
    w.force_seed = "rss-db-0";
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "0:seed", "force-seed");
    const struct rss_plan_patch *seed = desired_patch_of(&p, 0);
    assert_true(seed->set_pin);
    assert_string_equal(seed->pin, "{\"seedSequence\":\"100\"}");
    assert_true(patch_of(&p, 1)->set_pin && !patch_of(&p, 1)->pin);
    assert_false(patch_of(&p, 2) && patch_of(&p, 2)->set_pin); /* no pin there, nothing to remove */
    rss_plan_free(&p);
    world_free(&w);
}

/* Once a primary runs, the recovery is over: every record's pin is removed (and the status's), so a stale
 * pin never blocks a later recovery; a record without one gets no write for it. */
/* Issue 35 fault 4: a lights-out recovered the cluster at 50 (rss-db-0 seeded it: its record's primary
 * mark, status.lastRecovery); the next lights-out leaves the two members with the data off and the third
 * comes back empty. minimumMembers 1 accepts losing what only the absent members hold, never starting an
 * empty history in place of the one rssd recovered: SeedBelowHistory, no seed. With every member back the
 * highest seeds as always; a force-seed decides otherwise. */
static void test_seed_below_history(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "D D S0", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"5-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"50\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 5, 1, RSS_RESULT_OK);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "empty member under minimumMembers");
    const struct rss_plan_event *e = find_event(&p, "SeedBelowHistory");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "rss-db-0 was made primary with sequence 50"));
    rss_plan_free(&p);
    world_free(&w);
    /* The status's last recovery alone (an RSS from before the marks) says the same. */
    world_init(&w, "D D S0", 0, false, 1);
    w.prev =
        cJSON_Parse("{\"lastRecovery\":{\"kind\":\"LightsOut\",\"seed\":\"rss-db-0\",\"sequence\":\"50\"}}");
    run(&w, &p);
    expect(&p, "", "empty member, status floor");
    assert_non_null(
        strstr(find_event(&p, "SeedBelowHistory")->message, "the last recovery seeded sequence 50"));
    rss_plan_free(&p);
    world_free(&w);
    /* Bootstrapped at 0 and never recovered since (the floor is 0: the writes since are unknown to rssd,
     * found by postgres.sh postgres_history_floor): an empty member still never seeds without the others;
     * one with data at 0's floor does. */
    world_init(&w, "D D S0", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"1-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"0\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 1, 1, RSS_RESULT_OK);
    w.prev =
        cJSON_Parse("{\"lastRecovery\":{\"kind\":\"Bootstrap\",\"seed\":\"rss-db-0\",\"sequence\":\"0\"}}");
    run(&w, &p);
    expect(&p, "", "empty member after a bootstrap");
    assert_non_null(
        strstr(find_event(&p, "SeedBelowHistory")->message,
               "rss-db-2 has the highest sequence (0) of the members that reported, an empty volume, "
               "and the cluster has run since rssd started it"));
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "D D S7", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"1-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"0\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 1, 1, RSS_RESULT_OK);
    run(&w, &p);
    expect(&p, "2:seed", "data above a bootstrap's floor");
    rss_plan_free(&p);
    world_free(&w);
    /* At or above the history: the opt-in goes on as before. */
    world_init(&w, "D D S50", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"5-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"50\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 5, 1, RSS_RESULT_OK);
    run(&w, &p);
    expect(&p, "2:seed", "at the history");
    rss_plan_free(&p);
    world_free(&w);
    /* Every member reported: the data that exists is all there is; the highest seeds. */
    world_init(&w, "S0 S0 S3", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"5-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"50\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 5, 1, RSS_RESULT_OK);
    run(&w, &p);
    expect(&p, "2:seed", "all reported");
    rss_plan_free(&p);
    world_free(&w);
    /* The admin's force-seed decides. */
    world_init(&w, "D D S0", 0, false, 1);
    set_record_primary(&w, 0, "{\"action\":\"5-1\",\"podUID\":\"uid-0-0\",\"sequence\":\"50\"}");
    set_last(find(&w, 0), RSS_ACTION_SEED, 5, 1, RSS_RESULT_OK);
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "2:seed", "force-seed");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_pin_removed_once_primary_runs(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S300 S200", 0, false, 0);
    set_pin(&w, 0, 300);
    set_record_pin(&w, 0, PIN300);
    set_record_pin(&w, 2, "garbage");
    struct rss_plan p;
    run(&w, &p);
    assert_null(cJSON_GetObjectItem(p.status, "recovery"));
    assert_true(patch_of(&p, 0) && patch_of(&p, 0)->set_pin && !patch_of(&p, 0)->pin);
    assert_true(patch_of(&p, 2) && patch_of(&p, 2)->set_pin && !patch_of(&p, 2)->pin);
    assert_false(patch_of(&p, 1) && patch_of(&p, 1)->set_pin);
    /* the next lights-out, with the pins gone (the leader applied the plan), seeds the highest again */
    apply(&w, &p);
    assert_null(find(&w, 0)->pin_record);
    assert_null(find(&w, 2)->pin_record);
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "S250 S100 S200", 0, false, 0);
    run(&w, &p);
    expect(&p, "0:seed", "no stale pin");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovery_table),         cmocka_unit_test(test_tie_2_vs_10),
        cmocka_unit_test(test_ordinal_above_replicas), cmocka_unit_test(test_bootstrap_then_recovery),
        cmocka_unit_test(test_pin_written_with_seed),  cmocka_unit_test(test_pin_from_record_only),
        cmocka_unit_test(test_pin_highest_wins),       cmocka_unit_test(test_pin_unreadable),
        cmocka_unit_test(test_pin_force_seed),         cmocka_unit_test(test_pin_removed_once_primary_runs),
        cmocka_unit_test(test_seed_below_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
