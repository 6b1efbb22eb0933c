/* test_planner_sim.c -- simulations: the planner driven to a fixpoint against fake agents (lights-out,
 * secondaries, scale 3-5-3, a seed that fails and is retried, a seed that dies). Worlds are written in the
 * tokens of planner_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner_fixture.h"

/* ---- simulations: the planner driven to a fixpoint against fake agents ---- */

struct hook_log {
    char entries[64][48];
    size_t n;
};

/* What the per-member data says its sequence is (for pods the StatefulSet creates). */
static uint64_t sim_data_seq[MAXM];

/* Applies a plan like the reconciler + agents + StatefulSet controller would, one step. */
static void sim_apply(struct world *w, const struct rss_plan *p, struct hook_log *log,
                      bool *stopped_at_removal)
{
    for (size_t i = 0; i < p->n_patches; i++) {
        struct rss_member_input *m = find(w, p->patches[i].ordinal);
        if (!m)
            continue;
        if (p->patches[i].set_desired) {
            rss_recordcodec_desired_clear(&m->desired);
            rss_recordcodec_desired_copy(&m->desired, &p->patches[i].desired);
            m->has_desired = true;
        }
        if (p->patches[i].set_active_label >= 0)
            m->active_label = p->patches[i].set_active_label;
    }
    for (size_t i = 0; i < p->n_deletes; i++) {
        unsigned o = p->deletes[i].ordinal;
        remove_pod(w, o);
        struct rss_member_input *m = add_pod(w, o);
        set_observed(m, RSS_ROLE_STOPPED, 1, true, sim_data_seq[o], NULL);
    }
    if (p->set_replicas >= 0) {
        int old = w->sts;
        w->sts = p->set_replicas;
        for (int o = w->sts; o < old; o++) {
            const struct rss_member_input *m = find(w, (unsigned)o);
            if (m && m->observed.role != RSS_ROLE_STOPPED)
                *stopped_at_removal = false;
            remove_pod(w, (unsigned)o);
        }
        for (int o = old < 0 ? 0 : old; o < w->sts; o++) {
            if (find(w, (unsigned)o))
                continue;
            struct rss_member_input *m = add_pod(w, (unsigned)o);
            set_observed(m, RSS_ROLE_STOPPED, 1, true, sim_data_seq[o], NULL);
        }
    }
    /* Agents: run each desired action once, in its target generation, with this leader's epoch. */
    for (size_t i = 0; i < w->n; i++) {
        struct rss_member_input *m = &w->m[i];
        struct rss_desired *d = &m->desired;
        if (!m->has_desired || d->action == RSS_ACTION_NONE || d->epoch != w->epoch || !m->has_observed)
            continue;
        if (m->observed.last.present && rss_action_id_equal(m->observed.last.id, d->id))
            continue;
        assert_int_equal(d->generation, m->observed.generation); /* the planner targets what it saw */
        assert_true(log->n < 64);
        char *e = log->entries[log->n++];
        int off = snprintf(e, 48, "%u:%s", m->ordinal, rss_action_name(d->action));
        if (d->n_peers) {
            off += snprintf(e + off, 48 - (size_t)off, "(");
            for (size_t k = 0; k < d->n_peers; k++)
                off += snprintf(e + off, 48 - (size_t)off, "%s%u", k ? "," : "", peer_ordinal(d->peers[k]));
            snprintf(e + off, 48 - (size_t)off, ")");
        }
        uint64_t gen = m->observed.generation;
        if (d->action == RSS_ACTION_STOP) {
            set_observed(m, RSS_ROLE_STOPPED, gen, true, sim_data_seq[m->ordinal], NULL);
        } else {
            set_observed(m, d->action == RSS_ACTION_SECONDARY ? RSS_ROLE_SECONDARY : RSS_ROLE_PRIMARY,
                         gen + 1, false, 0, NULL);
        }
        set_last(m, d->action, d->id.epoch, d->id.seq, RSS_RESULT_OK);
    }
    cJSON_Delete(w->prev);
    w->prev = cJSON_Duplicate(p->status, true);
}

static bool quiet(const struct rss_plan *p)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].set_desired)
            return false;
    return p->n_deletes == 0 && p->set_replicas < 0;
}

/* Runs plans until nothing is left to do; returns the phase reached. */
static void sim_run(struct world *w, struct hook_log *log, bool *stopped_at_removal, char *phase, size_t size)
{
    for (int step = 0; step < 60; step++) {
        struct rss_plan p;
        run(w, &p);
        bool q = quiet(&p);
        snprintf(phase, size, "%s", p.phase);
        sim_apply(w, &p, log, stopped_at_removal);
        rss_plan_free(&p);
        if (q)
            return;
        w->now += 1000;
    }
    fail_msg("no fixpoint after 60 plans");
}

static void log_equal(const struct hook_log *log, const char *want)
{
    char buf[1024] = "";
    size_t o = 0;
    for (size_t i = 0; i < log->n; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "", log->entries[i]);
    if (strcmp(buf, want) != 0)
        fail_msg("hooks ran '%s', want '%s'", buf, want);
}

static void test_sim_lights_out(void **state)
{
    (void)state;
    /* rule 1 over a whole recovery: exactly one seed, the highest; joins in sequence order, one at a time,
     * each with the primaries running at that moment. */
    struct world w;
    world_init(&w, "S100 S300 S200 S250", 0, false, 0);
    memcpy(sim_data_seq, (uint64_t[]){100, 300, 200, 250}, 4 * sizeof(uint64_t));
    struct hook_log log = {0};
    bool stopped = true;
    char phase[32];
    sim_run(&w, &log, &stopped, phase, sizeof(phase));
    log_equal(&log, "1:seed 3:primary(1) 2:primary(1,3) 0:primary(1,2,3)");
    assert_string_equal(phase, "Running");
    world_free(&w);
}

static void test_sim_lights_out_with_secondaries(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S5 S5 S9", 2, true, 0);
    memcpy(sim_data_seq, (uint64_t[]){5, 5, 9}, 3 * sizeof(uint64_t));
    struct hook_log log = {0};
    bool stopped = true;
    char phase[32];
    sim_run(&w, &log, &stopped, phase, sizeof(phase));
    log_equal(&log, "2:seed 0:primary(2) 1:secondary(0,2)");
    assert_string_equal(phase, "Running");
    world_free(&w);
}

static void test_sim_scale_3_5_3(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    memcpy(sim_data_seq, (uint64_t[]){0, 0, 0, 40, 30}, 5 * sizeof(uint64_t));
    struct hook_log log = {0};
    bool stopped = true;
    char phase[32];
    sim_run(&w, &log, &stopped, phase, sizeof(phase));
    assert_int_equal(log.n, 0);
    /* 3 -> 5: replicas raised, the new members join one at a time (sequence order: 3 then 4). */
    rss_spec_clear(&w.spec);
    spec_init(&w.spec, 5, 0, false, 0);
    sim_run(&w, &log, &stopped, phase, sizeof(phase));
    log_equal(&log, "3:primary(0,1,2) 4:primary(0,1,2,3)");
    assert_int_equal(w.sts, 5);
    assert_string_equal(phase, "Running");
    /* 5 -> 3: stop 4, then 3 (highest ordinal first); replicas only lowered past stopped members. */
    log.n = 0;
    rss_spec_clear(&w.spec);
    spec_init(&w.spec, 3, 0, false, 0);
    sim_run(&w, &log, &stopped, phase, sizeof(phase));
    log_equal(&log, "4:stop 3:stop");
    assert_true(stopped); /* no pod was removed while its member still ran */
    assert_int_equal(w.sts, 3);
    assert_int_equal(w.n, 3);
    assert_string_equal(phase, "Running");
    world_free(&w);
}

static void test_sim_seed_fails_then_retried(void **state)
{
    (void)state;
    /* rule 2 over time: the seed fails; the next seed goes to the same member, never the lower one. */
    struct world w;
    world_init(&w, "S100 S300 S200", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "first seed");
    struct rss_member_input *m = find(&w, 1);
    rss_recordcodec_desired_clear(&m->desired);
    rss_recordcodec_desired_copy(&m->desired, &patch_of(&p, 1)->desired);
    uint64_t id = m->desired.id.seq;
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The seed hook fails; the agent reports the next generation, stopped, same data. */
    set_observed(m, RSS_ROLE_STOPPED, GEN + 1, true, 300, NULL);
    set_last(m, RSS_ACTION_SEED, EPOCH, id, RSS_RESULT_FAILED);
    run(&w, &p);
    expect(&p, "1:seed", "retry");
    assert_non_null(find_event(&p, "ActionFailed"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Now its sequence hook prints garbage: wait; even with minimumMembers the lower one never seeds. */
    set_observed(m, RSS_ROLE_STOPPED, GEN + 2, false, 0,
                 "sequence output 'x' is not an unsigned decimal integer");
    set_last(m, RSS_ACTION_SEED, EPOCH, id + 1, RSS_RESULT_FAILED);
    w.spec.min_members = 2;
    run(&w, &p);
    expect(&p, "", "no fallback");
    assert_true(find_event(&p, "SeedFallbackRefused")->type == RSS_EVENT_WARNING);
    assert_non_null(find_event(&p, "SequenceError"));
    rss_plan_free(&p);
    world_free(&w);
}

static void test_sim_seed_dies_new_recovery(void **state)
{
    (void)state;
    /* Trace 4: the seed runs, then dies before anyone joined: no primary into that cluster; a new recovery
     * waits for the seed's new report and seeds the highest again. */
    struct world w;
    world_init(&w, "P S100 S200", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    set_observed(find(&w, 0), RSS_ROLE_STOPPED, GEN + 1, false, 0, NULL);
    run(&w, &p);
    expect(&p, "", "seed died, no report yet");
    assert_string_equal(p.phase, "Recovering");
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    find(&w, 0)->observed.has_sequence = true;
    find(&w, 0)->observed.sequence = 500;
    run(&w, &p);
    expect(&p, "0:seed", "new recovery");
    rss_plan_free(&p);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_lights_out),
        cmocka_unit_test(test_sim_lights_out_with_secondaries),
        cmocka_unit_test(test_sim_scale_3_5_3),
        cmocka_unit_test(test_sim_seed_fails_then_retried),
        cmocka_unit_test(test_sim_seed_dies_new_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
