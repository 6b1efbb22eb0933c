/* test_planner_nodeloss.c -- spec.nodeLossPolicy in tables (docs/node-loss.md): a member on a dead node
 * waited for or replaced, a replacement that never seeds, one replacement at a time. Worlds are written in
 * the tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- spec.nodeLossPolicy (docs/node-loss.md) ---- */

/* The spec of world_init with nodeLossPolicy and a claim template `data`. */
static void nl_spec(struct world *w, bool replace, int min_members)
{
    rss_spec_clear(&w->spec);
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"generation\":2},\"spec\":{\"replicas\":%d,\"nodeLossPolicy\":\"%"
        "s\","
        "\"recovery\":{\"minimumMembers\":%d},\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/seq\"]},\"seed\":{\"command\":[\"/seed\"]},"
        "\"primary\":{\"command\":[\"/start\"]},\"status\":{\"command\":[\"/check\"]},"
        "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}],"
        "\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"}}]}}}",
        w->sts, replace ? "Replace" : "Wait", min_members);
    _cleanup_json_ cJSON *cr = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_spec_parse(cr, &w->spec, &err), 0);
}

struct nl_row {
    const char *what;
    const char *members; /* the last member is the one whose node died (or not) */
    bool replace;        /* nodeLossPolicy Replace */
    bool oos;            /* its node carries node.kubernetes.io/out-of-service */
    enum rss_volume_locality vol;
    int min_members;
    const char *want;  /* the whole plan summary */
    const char *event; /* an event that must be present */
    int claims;        /* -1: no delete; else the delete must be forced with this many claims */
};

static const struct nl_row nl_rows[] = {
    /* Wait (the default) never replaces, and says why */
    {"wait", "P P D5", false, true, RSS_VOLUME_NETWORK, 0, "", "MemberOnDeadNode", -1},
    /* Replace needs the taint unless the volume is known not to be node-local */
    {"no taint", "P P D5", true, false, RSS_VOLUME_UNKNOWN, 0, "", "MemberOnDeadNode", -1},
    {"no taint, local", "P P D5", true, false, RSS_VOLUME_NODE_LOCAL, 0, "", "MemberOnDeadNode", -1},
    {"taint, unknown", "P P D5", true, true, RSS_VOLUME_UNKNOWN, 0, "2:delete", "ReplacingMember", 0},
    {"taint, local", "P P D5", true, true, RSS_VOLUME_NODE_LOCAL, 0, "2:delete", "ReplacingMember", 1},
    {"network", "P P D5", true, false, RSS_VOLUME_NETWORK, 0, "2:delete", "ReplacingMember", 0},
    {"taint, network", "P P D5", true, true, RSS_VOLUME_NETWORK, 0, "2:delete", "ReplacingMember", 0},
    /* a stuck Terminating pod on the dead node is force-deleted too */
    {"joins go on", "P S3 D5", true, true, RSS_VOLUME_NODE_LOCAL, 0, "1:primary(0) 2:delete",
     "ReplacingMember", 1},
    /* only the leader's own dead verdict counts: a silent node is not dead yet */
    {"silent", "P P L5", true, true, RSS_VOLUME_NETWORK, 0, "", NULL, -1},
    /* rule 3: in a lights-out the dead member's data may be the newest: never replaced, waited for... */
    {"lights-out", "S1 S2 D5", true, true, RSS_VOLUME_NETWORK, 0, "", "WaitingForMembers", -1},
    {"lights-out, highest", "S1 S2 D900", true, true, RSS_VOLUME_NODE_LOCAL, 0, "", "WaitingForMembers", -1},
    /* ... unless minimumMembers says otherwise: the survivors' highest seeds (Warning), no replacement yet */
    {"lights-out, minimumMembers", "S1 S2 D900", true, true, RSS_VOLUME_NODE_LOCAL, 2, "1:seed",
     "MemberSkipped", -1},
    /* no primary runs: not replaced */
    {"no primary", "T S1 D5", true, true, RSS_VOLUME_NETWORK, 0, "", "WaitingForStart", -1},
};

static void test_node_loss_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(nl_rows) / sizeof(nl_rows[0]); i++) {
        const struct nl_row *r = &nl_rows[i];
        struct world w;
        world_init(&w, r->members, 0, false, 0);
        nl_spec(&w, r->replace, r->min_members);
        struct rss_member_input *m = find(&w, (unsigned)w.sts - 1);
        m->node_out_of_service = r->oos;
        m->volume = r->vol;
        if (r->what[0] == 'j')
            m->deleting = true;
        struct rss_plan p;
        run(&w, &p);
        char row[96];
        snprintf(row, sizeof(row), "node loss row %zu (%s)", i, r->what);
        expect(&p, r->want, row);
        if (r->event && !find_event(&p, r->event)) {
            _cleanup_free_ char *d = rss_plan_describe(&p);
            fail_msg("%s: no %s event\n%s", row, r->event, d);
        }
        if (r->claims < 0) {
            assert_int_equal(p.n_deletes, 0);
        } else {
            assert_int_equal(p.n_deletes, 1);
            assert_true(p.deletes[0].force);
            assert_int_equal(p.deletes[0].n_claims, (size_t)r->claims);
            if (r->claims)
                assert_string_equal(p.deletes[0].claims[0], "data-rss-db-2");
            assert_int_equal(find_event(&p, "ReplacingMember")->type, RSS_EVENT_WARNING);
            const cJSON *rep = cJSON_GetObjectItem(member_status(&p, 2), "replacement");
            assert_non_null(rep);
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rep, "fromNode")), "node-2");
            assert_non_null(cJSON_GetObjectItem(p.status, "lastReplacement"));
        }
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* A replacement never seeds while it has not run: it neither seeds nor blocks the others; alone it waits;
 * reporting more than the others (its volume followed it) it waits for force-seed; once it runs, the record
 * goes. The record survives the new pod uid. */
static void test_replacement_never_seeds(void **state)
{
    (void)state;
    static const struct {
        const char *members;
        int min_members;
        const char *want;
        bool keeps; /* memberStatus[2].replacement is still there */
    } rows[] = {
        {"S5 S3 S0", 0, "0:seed", true},       /* excluded, not waited for */
        {"D5 D3 S0", 1, "", true},             /* the only reporter: waits, never seeds an empty member */
        {"S1 S2 S9", 0, "", true},             /* above the others: no lower seed either */
        {"P P S0", 0, "2:primary(0,1)", true}, /* it joins with primary */
        {"P P P", 0, "", false},               /* it ran: the record goes */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].members, 0, false, 0);
        nl_spec(&w, true, rows[i].min_members);
        w.prev = cJSON_Parse("{\"lastRecovery\":{\"kind\":\"LightsOut\"},\"memberStatus\":[{\"ordinal\":2,"
                             "\"podUID\":\"old-uid\",\"replacement\":{\"fromNode\":\"node-9\"}}]}");
        struct rss_plan p;
        run(&w, &p);
        char row[64];
        snprintf(row, sizeof(row), "replacement row %zu", i);
        expect(&p, rows[i].want, row);
        const cJSON *ms = member_status(&p, 2);
        assert_int_equal(cJSON_GetObjectItem(ms, "replacement") != NULL, rows[i].keeps);
        if ((i == 1 || i == 2) && !strstr(status_str(&p, "message"), "rss-db-2 (a replacement") &&
            !strstr(status_str(&p, "message"), "rss-db-2 (replaced"))
            fail_msg("%s: message '%s'", row, status_str(&p, "message"));
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* A replacement that kept the claim of a member left out of a recovery has its data: newer than the seed,
 * it is held back like the member itself would be (spec.recovery.onNewerLateMember). */
static void test_replacement_keeps_left_out(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P D60", 0, false, 0);
    nl_spec(&w, true, 0);
    find(&w, 2)->node_out_of_service = true;
    find(&w, 2)->volume = RSS_VOLUME_UNKNOWN; /* the claim is kept */
    _cleanup_free_ char *uid = rss_xstrdup(find(&w, 2)->pod_uid);
    _cleanup_free_ char *prev =
        rss_xasprintf("{\"lastRecovery\":{\"kind\":\"LightsOut\"},\"memberStatus\":[{"
                      "\"ordinal\":2,\"podUID\":\"%s\",\"leftOut\":{\"seedSequence\":\"20\"}}]}",
                      uid);
    w.prev = cJSON_Parse(prev);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "2:delete", "replaced");
    assert_non_null(strstr(find_event(&p, "ReplacingMember")->message, "held back"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The StatefulSet recreated it elsewhere with the same claim: sequence 60 > 20, held. */
    remove_pod(&w, 2);
    set_observed(add_pod(&w, 2), RSS_ROLE_STOPPED, GEN, true, 60, NULL);
    run(&w, &p);
    expect(&p, "", "held");
    assert_non_null(find_event(&p, "NewerThanSeed"));
    rss_plan_free(&p);
    world_free(&w);
}

/* One replacement at a time: a dead member waits while an earlier replacement has not run. */
static void test_replace_one_at_a_time(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P ? D5", 0, false, 0);
    nl_spec(&w, true, 0);
    find(&w, 2)->node_out_of_service = true;
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"old\",\"replacement\":{}}]}");
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "second replacement waits");
    assert_non_null(strstr(status_str(&p, "message"), "one member at a time"));
    rss_plan_free(&p);
    world_free(&w);
}

/* A member whose node lost power while the others ran is not a crashed member: no failure is counted,
 * and its restart is a join, not a failover. */
static void test_node_outage_is_no_crash(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Node 1 goes silent: its member's last report still says primary. */
    find(&w, 1)->node_alive = false;
    find(&w, 1)->node_dead = true;
    run(&w, &p);
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Power back: a new container, a new generation, stopped. */
    find(&w, 1)->node_alive = true;
    find(&w, 1)->node_dead = false;
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN + 1, true, 40, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "rejoins");
    assert_null(find_event(&p, "MemberCrashed"));
    assert_null(find_event(&p, "Failover"));
    assert_non_null(find_event(&p, "Joining"));
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 0);
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_outage_is_no_crash),    cmocka_unit_test(test_node_loss_table),
        cmocka_unit_test(test_replacement_never_seeds),    cmocka_unit_test(test_replace_one_at_a_time),
        cmocka_unit_test(test_replacement_keeps_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
