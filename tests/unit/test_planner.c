/* test_planner.c -- the pure planner in tables: every branch, and each ARCHITECTURE section 6 safety rule.
 *
 * A world is written as one token per member, ordinal 0 first:
 *   S<n> stopped, sequence n        N  stopped, no sequence yet     E  stopped, sequence error (garbage)
 *   P    running primary            Y  running secondary            T  starting (written ahead, pending)
 *   F    failed (status exit 1)     U  role unknown                 -  no pod               ?  pod, no report
 *   C<n> report for an older container (stale)    X<n> pod being deleted
 *   D<n> node dead (as the leader observed it)    L<n> node silent, not yet dead      H<n> no heartbeat ever
 *   W<n> node dead, its last report the write-ahead of a seed a minute ago (the hook may still run; the
 *        desired already retracted)     V<n> the same, the write-ahead an hour ago (hook and stop timed out)
 * (D/L/H without a number: no sequence.) Plans are summarised as "<ordinal>:<action>(<peer ordinals>)"
 * tokens, then "<ordinal>:delete", then "replicas=N", so a row pins down the WHOLE set of actions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/planner.h"

#define MAXM   16
#define EPOCH  5
#define NOW    1700000000000LL
#define GEN    3
#define NO_PIN -1

struct mstore {
    char uid[32], rv[32], node[32], cid[48], obs_err[64];
};

struct world {
    struct rss_spec spec;
    struct rss_member_input m[MAXM];
    struct mstore s[MAXM];
    size_t n;
    int sts;
    int64_t now;
    uint64_t epoch;
    cJSON *prev;
    int uid_counter;
    const char *force_seed; /* the RSS's force-seed annotation */
    const char *update_revision;
    int64_t dead_after; /* the leader's dead-node window */
};

/* ---- building worlds ---- */

static void spec_init(struct rss_spec *spec, int replicas, int primaries, bool secondary, int min_members)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"generation\":2},\"spec\":{\"replicas\":%d,\"primaries\":%d,"
        "\"recovery\":{\"minimumMembers\":%d},\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/seq\"]},\"seed\":{\"command\":[\"/seed\"]},"
        "\"primary\":{\"command\":[\"/start\"]},%s\"status\":{\"command\":[\"/check\"]},"
        "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        replicas,
        primaries > 0  ? primaries
        : replicas > 0 ? replicas
                       : 1,
        min_members, secondary ? "\"secondary\":{\"command\":[\"/replica\"]}," : "");
    _cleanup_json_ cJSON *cr = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    assert_non_null(cr);
    assert_int_equal(rss_spec_parse(cr, spec, &err), 0);
}

static struct rss_member_input *find(struct world *w, unsigned ordinal)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->m[i].ordinal == ordinal)
            return &w->m[i];
    return NULL;
}

static struct mstore *store(struct world *w, const struct rss_member_input *m)
{
    return &w->s[m - w->m];
}

static void set_observed(struct rss_member_input *m, enum rss_role role, uint64_t gen, bool has_seq,
                         uint64_t seq, const char *seq_err)
{
    rss_recordcodec_observed_clear(&m->observed);
    m->has_observed = true;
    m->observed.container_id = rss_xstrdup(m->container_id);
    m->observed.generation = gen;
    m->observed.role = role;
    m->observed.status_code = role == RSS_ROLE_STOPPED ? 7 : role == RSS_ROLE_PRIMARY ? 8 : 0;
    m->observed.has_sequence = has_seq;
    m->observed.sequence = seq;
    m->observed.sequence_error = seq_err ? rss_xstrdup(seq_err) : NULL;
    m->observed.lease_epoch = EPOCH;
    m->observed.time_ms = NOW;
}

static void set_desired(struct rss_member_input *m, uint64_t epoch, enum rss_action a, uint64_t seq,
                        uint64_t gen)
{
    rss_recordcodec_desired_clear(&m->desired);
    m->has_desired = true;
    m->desired.epoch = epoch;
    m->desired.action = a;
    if (a != RSS_ACTION_NONE)
        m->desired.id = (struct rss_action_id){epoch, seq};
    m->desired.generation = gen;
}

static void set_last(struct rss_member_input *m, enum rss_action a, uint64_t epoch, uint64_t seq,
                     enum rss_result r)
{
    free(m->observed.last.message);
    m->observed.last = (struct rss_last_action){.present = true,
                                                .id = {epoch, seq},
                                                .action = a,
                                                .result = r,
                                                .exit_code = r == RSS_RESULT_OK ? 0 : 1};
}

/* A fresh pod: running phase, own node alive, fenced by this leader (desired none). */
static struct rss_member_input *add_pod(struct world *w, unsigned ordinal)
{
    assert_true(w->n < MAXM);
    struct rss_member_input *m = &w->m[w->n];
    struct mstore *s = &w->s[w->n];
    w->n++;
    memset(m, 0, sizeof(*m));
    int k = w->uid_counter++;
    snprintf(s->uid, sizeof(s->uid), "uid-%u-%d", ordinal, k);
    snprintf(s->rv, sizeof(s->rv), "rv-%u", ordinal);
    snprintf(s->node, sizeof(s->node), "node-%u", ordinal);
    snprintf(s->cid, sizeof(s->cid), "containerd://cid-uid-%u-%d", ordinal, k);
    m->ordinal = ordinal;
    m->pod_exists = true;
    m->pod_uid = s->uid;
    m->resource_version = s->rv;
    m->phase = "Running";
    m->node = s->node;
    m->node_alive = true;
    m->container_id = s->cid;
    m->active_label = -1;
    set_desired(m, w->epoch, RSS_ACTION_NONE, 0, 0);
    return m;
}

static void remove_pod(struct world *w, unsigned ordinal)
{
    struct rss_member_input *m = find(w, ordinal);
    if (!m)
        return;
    rss_recordcodec_desired_clear(&m->desired);
    rss_recordcodec_observed_clear(&m->observed);
    size_t i = (size_t)(m - w->m);
    memmove(&w->m[i], &w->m[i + 1], (w->n - i - 1) * sizeof(w->m[0]));
    memmove(&w->s[i], &w->s[i + 1], (w->n - i - 1) * sizeof(w->s[0]));
    w->n--;
    /* The pointers into w->s moved with their rows: re-aim them. */
    for (size_t k = 0; k < w->n; k++) {
        w->m[k].pod_uid = w->s[k].uid;
        w->m[k].resource_version = w->s[k].rv;
        w->m[k].node = w->s[k].node;
        w->m[k].container_id = w->s[k].cid;
        if (w->m[k].observed_error)
            w->m[k].observed_error = w->s[k].obs_err;
    }
}

static void member_token(struct world *w, unsigned ordinal, const char *tok)
{
    char kind = tok[0];
    bool has_num = tok[1] >= '0' && tok[1] <= '9';
    uint64_t n = has_num ? strtoull(tok + 1, NULL, 10) : 0;
    if (kind == '-')
        return;
    struct rss_member_input *m = add_pod(w, ordinal);
    switch (kind) {
    case '?':
        break;
    case 'S':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        break;
    case 'N':
        set_observed(m, RSS_ROLE_STOPPED, GEN, false, 0, NULL);
        break;
    case 'E':
        set_observed(m, RSS_ROLE_STOPPED, GEN, false, 0,
                     "sequence output 'garbage' is not an unsigned decimal integer");
        break;
    case 'P':
        set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
        break;
    case 'Y':
        set_observed(m, RSS_ROLE_SECONDARY, GEN, false, 0, NULL);
        break;
    case 'T':
        set_observed(m, RSS_ROLE_STARTING, GEN, false, 0, NULL);
        set_desired(m, w->epoch, RSS_ACTION_PRIMARY, 900 + ordinal, GEN);
        set_last(m, RSS_ACTION_PRIMARY, w->epoch, 900 + ordinal, RSS_RESULT_PENDING);
        break;
    case 'F':
        set_observed(m, RSS_ROLE_FAILED, GEN, false, 0, NULL);
        m->observed.status_code = 1;
        break;
    case 'U':
        set_observed(m, RSS_ROLE_UNKNOWN, GEN, false, 0, NULL);
        break;
    case 'C':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        snprintf(store(w, m)->cid, sizeof(store(w, m)->cid), "containerd://newer-%u", ordinal);
        break;
    case 'X':
        set_observed(m, RSS_ROLE_STOPPED, GEN, true, n, NULL);
        m->deleting = true;
        break;
    case 'W':
    case 'V':
        set_observed(m, RSS_ROLE_STARTING, GEN, has_num, n, NULL);
        set_desired(m, w->epoch, RSS_ACTION_NONE, 0, 0);
        set_last(m, RSS_ACTION_SEED, w->epoch, 900 + ordinal, RSS_RESULT_PENDING);
        m->observed.time_ms = NOW - (kind == 'W' ? 60000 : 3600000);
        m->node_alive = false;
        m->node_dead = true;
        break;
    case 'D':
    case 'L':
    case 'H':
        set_observed(m, RSS_ROLE_STOPPED, GEN, has_num, n, NULL);
        m->node_alive = false;
        m->node_dead = kind == 'D';
        break;
    default:
        fail_msg("bad token '%s'", tok);
    }
}

static void world_init(struct world *w, const char *members, int primaries, bool secondary, int min_members)
{
    memset(w, 0, sizeof(*w));
    w->now = NOW;
    w->epoch = EPOCH;
    w->dead_after = 15000;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", members);
    unsigned o = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        member_token(w, o++, t);
    w->sts = (int)o;
    spec_init(&w->spec, (int)o, primaries, secondary, min_members);
}

static void world_free(struct world *w)
{
    for (size_t i = 0; i < w->n; i++) {
        rss_recordcodec_desired_clear(&w->m[i].desired);
        rss_recordcodec_observed_clear(&w->m[i].observed);
    }
    rss_spec_clear(&w->spec);
    cJSON_Delete(w->prev);
}

static void set_pin(struct world *w, unsigned ordinal, uint64_t seq)
{
    _cleanup_free_ char *j = rss_xasprintf("{\"recovery\":{\"seedOrdinal\":%u,\"seedSequence\":\"%llu\"}}",
                                           ordinal, (unsigned long long)seq);
    cJSON_Delete(w->prev);
    w->prev = cJSON_Parse(j);
}

static void run(struct world *w, struct rss_plan *p)
{
    struct rss_plan_input in = {.spec = &w->spec,
                                .epoch = w->epoch,
                                .now_ms = w->now,
                                .statefulset_replicas = w->sts,
                                .prev_status = w->prev,
                                .force_seed = w->force_seed,
                                .update_revision = w->update_revision,
                                .dead_after_ms = w->dead_after,
                                .members = w->m,
                                .n_members = w->n};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_planner_plan(&in, p, &err) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        fail_msg("plan failed: %s", m);
    }
}

/* ---- reading plans ---- */

static unsigned peer_ordinal(const char *dns)
{
    /* "rss-db-<N>.db-svc" */
    return (unsigned)strtoul(dns + strlen("rss-db-"), NULL, 10);
}

static char *summary(const struct rss_plan *p)
{
    char buf[1024] = "";
    size_t o = 0;
    for (size_t i = 0; i < p->n_patches; i++) {
        const struct rss_plan_patch *pt = &p->patches[i];
        if (!pt->set_desired || pt->desired.action == RSS_ACTION_NONE)
            continue;
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:%s", o ? " " : "", pt->ordinal,
                              rss_action_name(pt->desired.action));
        if (pt->desired.n_peers) {
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "(");
            for (size_t k = 0; k < pt->desired.n_peers; k++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u", k ? "," : "",
                                      peer_ordinal(pt->desired.peers[k]));
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, ")");
        }
    }
    for (size_t i = 0; i < p->n_deletes; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:delete", o ? " " : "", p->deletes[i].ordinal);
    if (p->set_replicas >= 0)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%sreplicas=%d", o ? " " : "", p->set_replicas);
    return rss_xstrdup(buf);
}

static const struct rss_plan_event *find_event(const struct rss_plan *p, const char *reason)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (strcmp(p->events[i].reason, reason) == 0)
            return &p->events[i];
    return NULL;
}

static const struct rss_plan_patch *patch_of(const struct rss_plan *p, unsigned ordinal)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].ordinal == ordinal)
            return &p->patches[i];
    return NULL;
}

static const char *status_str(const struct rss_plan *p, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p->status, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *member_status(const struct rss_plan *p, unsigned ordinal)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p->status, "memberStatus"))
    {
        if (cJSON_GetObjectItem(e, "ordinal")->valuedouble == ordinal)
            return e;
    }
    return NULL;
}

static void expect(const struct rss_plan *p, const char *want, const char *row)
{
    _cleanup_free_ char *got = summary(p);
    if (strcmp(got, want) != 0) {
        _cleanup_free_ char *d = rss_plan_describe(p);
        fail_msg("%s: plan '%s', want '%s'\n%s", row, got, want, d);
    }
}

/* ---- table 1: lights-out recovery (rules 1, 2, 3, 6, 8) ---- */

struct row {
    const char *rule; /* which safety rule the row protects */
    const char *members;
    int primaries;   /* 0 = replicas */
    bool secondary;  /* the spec has a secondary hook */
    int min_members; /* spec.recovery.minimumMembers */
    int pin_ordinal; /* a failed seed recorded in status, NO_PIN for none */
    uint64_t pin_seq;
    const char *want;  /* the whole plan summary */
    const char *event; /* an event reason that must be present (NULL: none required) */
    bool warning;      /* ...and must be a Warning */
};

static const struct row recovery_rows[] = {
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

static void run_rows(const struct row *rows, size_t n, const char *table)
{
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        char name[160];
        snprintf(name, sizeof(name), "%s row %zu (rule %s, '%s')", table, i, r->rule, r->members);
        struct world w;
        world_init(&w, r->members, r->primaries, r->secondary, r->min_members);
        if (r->pin_ordinal != NO_PIN)
            set_pin(&w, (unsigned)r->pin_ordinal, r->pin_seq);
        struct rss_plan p;
        run(&w, &p);
        expect(&p, r->want, name);
        assert_false(p.epoch_claims);
        assert_false(p.fencing);
        if (r->event) {
            const struct rss_plan_event *e = find_event(&p, r->event);
            if (!e) {
                _cleanup_free_ char *d = rss_plan_describe(&p);
                fail_msg("%s: no %s event\n%s", name, r->event, d);
            }
            if (r->warning && e->type != RSS_EVENT_WARNING)
                fail_msg("%s: %s is not a Warning", name, r->event);
        }
        /* Rule 1: never more than one seed in a plan, never a seed next to any other start. */
        size_t seeds = 0, starts = 0;
        for (size_t k = 0; k < p.n_patches; k++) {
            seeds += p.patches[k].set_desired && p.patches[k].desired.action == RSS_ACTION_SEED;
            starts += p.patches[k].set_desired && (p.patches[k].desired.action == RSS_ACTION_PRIMARY ||
                                                   p.patches[k].desired.action == RSS_ACTION_SECONDARY);
        }
        assert_true(seeds <= 1);
        assert_true(seeds == 0 || starts == 0);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static void test_recovery_table(void **state)
{
    (void)state;
    run_rows(recovery_rows, sizeof(recovery_rows) / sizeof(recovery_rows[0]), "recovery");
}

/* ---- table 2: a running cluster (joins, failover, primaries/secondaries, repairs) ---- */

static const struct row running_rows[] = {
    /* after the seed runs, the others join one at a time, highest sequence first, with the primaries as peers
     */
    {"join", "P S10 S30", 0, false, 0, NO_PIN, 0, "2:primary(0)", "Joining", false},
    {"join", "P S30 S10", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P S10 S10", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P P S10", 0, false, 0, NO_PIN, 0, "2:primary(0,1)", "Joining", false},
    {"join", "S10 P S30 P", 0, false, 0, NO_PIN, 0, "2:primary(1,3)", "Joining", false},
    {"join", "P S10 E", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    {"join", "P E N", 0, false, 0, NO_PIN, 0, "1:primary(0)", "Joining", false},
    /* one at a time: nothing new while a start is in flight (rule 8 "starting counts as running") */
    {"8", "P T S30", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    /* primaries up to spec.primaries, then secondaries when the hook exists, else standby */
    {"join", "P P S1", 2, true, 0, NO_PIN, 0, "2:secondary(0,1)", "Joining", false},
    {"join", "P Y S1", 1, true, 0, NO_PIN, 0, "2:secondary(0)", "Joining", false},
    {"join", "P S1 S2", 1, false, 0, NO_PIN, 0, "", NULL, false},
    /* members on silent or dead nodes, stale reports, deleting pods are never started */
    {"join", "P L5 D5", 0, false, 0, NO_PIN, 0, "", NULL, false},
    {"join", "P C5 X5", 0, false, 0, NO_PIN, 0, "", NULL, false},
    /* trace 4: a primary is never started into a cluster whose primaries are gone */
    {"6.1", "Y S1 S2", 0, true, 0, NO_PIN, 0, "0:stop", "NoPrimary", true},
    {"6.1", "T S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForStart", false},
    {"6.1", "L S1 S2", 0, false, 0, NO_PIN, 0, "", "WaitingForMembers", false},
    /* repairs run alongside: a failed member is stopped while another joins */
    {"repair", "P F S1", 0, false, 0, NO_PIN, 0, "1:stop 2:primary(0)", "StoppingFailedMember", true},
    {"repair", "P U S1", 0, false, 0, NO_PIN, 0, "2:primary(0)", NULL, false},
    /* too many primaries (spec.primaries lowered): the highest ordinal is stopped */
    {"demote", "P P P", 2, true, 0, NO_PIN, 0, "2:stop", "Demoting", false},
    {"demote", "P P Y", 2, true, 0, NO_PIN, 0, "", NULL, false},
};

static void test_running_table(void **state)
{
    (void)state;
    run_rows(running_rows, sizeof(running_rows) / sizeof(running_rows[0]), "running");
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

/* ---- rule 7: actions target a generation; anything newer voids them ---- */

static void test_seed_targets_generation(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    find(&w, 1)->observed.generation = 42;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "gen");
    const struct rss_plan_patch *pt = patch_of(&p, 1);
    assert_int_equal(pt->desired.generation, 42);
    assert_int_equal(pt->desired.epoch, EPOCH);
    assert_int_equal(pt->desired.id.epoch, EPOCH);
    assert_int_equal(pt->desired.n_peers, 0);
    assert_string_equal(pt->resource_version, "rv-1"); /* a CAS on what the decision saw (rule 9) */
    rss_plan_free(&p);
    world_free(&w);
}

static void test_newer_generation_voids(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    /* A seed issued for generation 3 was never acknowledged, and the member is now in generation 4. */
    struct rss_member_input *m = find(&w, 1);
    set_desired(m, EPOCH, RSS_ACTION_SEED, 7, GEN);
    m->observed.generation = GEN + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "voided");
    assert_int_equal(patch_of(&p, 1)->desired.generation, GEN + 1);
    assert_true(patch_of(&p, 1)->desired.id.seq > 7); /* a fresh id, never a reused one */
    rss_plan_free(&p);
    /* Same generation, not acknowledged: still unresolved, so no seed anywhere (rule 8). */
    m->observed.generation = GEN;
    run(&w, &p);
    expect(&p, "", "unresolved");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_old_seed_not_reexecuted(void **state)
{
    (void)state;
    /* Trace 1: a seed left on a pod whose container restarted. The member must JOIN, never seed again. */
    struct world w;
    world_init(&w, "P S5 S2", 0, false, 0);
    struct rss_member_input *m = find(&w, 1);
    set_desired(m, EPOCH, RSS_ACTION_SEED, 7, GEN);
    m->observed.generation = GEN + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:primary(0)", "trace 1");
    assert_int_equal(patch_of(&p, 1)->desired.generation, GEN + 1);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- rule 8: nothing new while an issued action is unresolved ---- */

struct unresolved_row {
    enum rss_action action;
    enum rss_result ack; /* RSS_RESULT_PENDING with ack=false: no ack at all */
    bool acked;
    const char *want;
};

static void test_unresolved_table(void **state)
{
    (void)state;
    static const struct unresolved_row rows[] = {
        {RSS_ACTION_SEED, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_PRIMARY, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_STOP, RSS_RESULT_PENDING, false, ""},
        {RSS_ACTION_SEED, RSS_RESULT_PENDING, true, ""}, /* written ahead: starting counts as running */
        {RSS_ACTION_SEED, RSS_RESULT_REJECTED, true, "0:seed"},
        {RSS_ACTION_SEED, RSS_RESULT_INTERRUPTED, true, "0:seed"},
        {RSS_ACTION_STOP, RSS_RESULT_OK, true, "0:seed"},
        {RSS_ACTION_SEED, RSS_RESULT_FAILED, true, "0:seed"}, /* retried on the same member (rule 2) */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, "S9 S5 S2", 0, false, 0);
        struct rss_member_input *m = find(&w, 0);
        set_desired(m, EPOCH, rows[i].action, 3, GEN);
        if (rows[i].acked)
            set_last(m, rows[i].action, EPOCH, 3, rows[i].ack);
        struct rss_plan p;
        run(&w, &p);
        char name[64];
        snprintf(name, sizeof(name), "unresolved row %zu", i);
        expect(&p, rows[i].want, name);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static void test_unresolved_elsewhere_blocks_seed(void **state)
{
    (void)state;
    /* Member 2 holds an unacknowledged stop: member 0 (highest) must not seed yet. */
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    set_desired(find(&w, 2), EPOCH, RSS_ACTION_STOP, 4, GEN);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "unresolved stop");
    assert_non_null(strstr(status_str(&p, "message"), "waiting for rss-db-2 to resolve stop (5-4)"));
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- rules 4 and 9: fencing and deposition ---- */

static void test_fence_before_deciding(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    /* A new leader (epoch 6): the pods carry epoch 5 from its predecessor; one has none at all. */
    w.epoch = EPOCH + 1;
    find(&w, 2)->has_desired = false;
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.fencing);
    expect(&p, "", "fence");
    assert_int_equal(p.n_patches, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(p.patches[i].set_desired);
        assert_int_equal(p.patches[i].desired.action, RSS_ACTION_NONE);
        assert_int_equal(p.patches[i].desired.epoch, EPOCH + 1);
        assert_non_null(p.patches[i].resource_version);
    }
    assert_non_null(find_event(&p, "Fencing"));
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    /* Every pod carries epoch 6, but the reports were made under epoch 5: they may predate a power
     * cut, so it waits for the agents to re-probe instead of deciding on them. */
    for (size_t i = 0; i < w.n; i++)
        set_desired(&w.m[i], EPOCH + 1, RSS_ACTION_NONE, 0, 0);
    run(&w, &p);
    assert_false(p.fencing);
    expect(&p, "", "after fence, stale reports");
    assert_non_null(find_event(&p, "WaitingForMembers"));
    rss_plan_free(&p);
    /* Once the agents republished under epoch 6, it decides. */
    for (size_t i = 0; i < w.n; i++)
        w.m[i].observed.lease_epoch = EPOCH + 1;
    run(&w, &p);
    assert_false(p.fencing);
    expect(&p, "0:seed", "after fence");
    assert_int_equal(patch_of(&p, 0)->desired.epoch, EPOCH + 1);
    rss_plan_free(&p);
    world_free(&w);
}

/* The e2e `blip` trace: every node lost power; the leader came back on the node of the lowest sequence.
 * Two members still carry "primary" from before the cut, written under the previous epoch, and their
 * nodes' heartbeats still look alive. They are no running peers: no member may join them, and no seed
 * may run while they might still run (rules 1, 2; trace 4). */
static void test_stale_running_reports_are_no_peers(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 S20 S60", 0, false, 0);
    for (unsigned i = 1; i < 3; i++) {
        struct rss_member_input *m = find(&w, i);
        set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
        m->observed.lease_epoch = EPOCH - 1;
    }
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "stale primaries");
    for (size_t i = 0; i < p.n_patches; i++)
        assert_false(p.patches[i].set_desired && p.patches[i].desired.action != RSS_ACTION_NONE);
    rss_plan_free(&p);
    /* Their agents re-probe under this epoch: stopped, with their sequences. The newest copy seeds. */
    for (unsigned i = 1; i < 3; i++)
        set_observed(find(&w, i), RSS_ROLE_STOPPED, GEN, true, i == 1 ? 20 : 60, NULL);
    run(&w, &p);
    expect(&p, "2:seed", "after the re-probe");
    rss_plan_free(&p);
    world_free(&w);
}

/* Joins wait until every member on a live node reported under this epoch, so that the order stays
 * "highest sequence first" right after a leader change. */
static void test_joins_wait_for_stale_reports(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S90 S50 S10", 0, false, 0);
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, true, 90, NULL);
    find(&w, 1)->observed.lease_epoch = EPOCH - 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "member 1 not re-probed yet");
    rss_plan_free(&p);
    find(&w, 1)->observed.lease_epoch = EPOCH;
    run(&w, &p);
    expect(&p, "1:primary(0)", "after the re-probe");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_fence_keeps_pending_start(void **state)
{
    (void)state;
    /* The old leader's seed was written ahead (starting) before the new leader came: the new leader fences,
     * and afterwards must treat the member as running: no second seed (rule 8, trace 3). */
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    struct rss_member_input *m = find(&w, 0);
    set_desired(m, EPOCH + 1, RSS_ACTION_NONE, 0, 0);
    set_observed(m, RSS_ROLE_STARTING, GEN, true, 9, NULL);
    set_last(m, RSS_ACTION_SEED, EPOCH, 11, RSS_RESULT_PENDING);
    for (size_t i = 0; i < w.n; i++)
        w.m[i].desired.epoch = EPOCH + 1;
    w.epoch = EPOCH + 1;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "pending seed from the old leader");
    assert_null(find_event(&p, "SeedChosen"));
    rss_plan_free(&p);
    world_free(&w);
}

/* Rule 4 as corrected: a pod's claim of a newer epoch never deposes the leader by itself (any
 * namespace user can annotate a pod). The plan flags it (the leader then re-reads the Lease), says why
 * in a Warning, and overwrites a forged desired by fencing it. */
static void test_epoch_claims(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    set_desired(find(&w, 1), EPOCH + 1000, RSS_ACTION_SEED, 1, GEN);
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.epoch_claims);
    assert_true(p.fencing);
    const struct rss_plan_patch *pt = patch_of(&p, 1);
    assert_non_null(pt);
    assert_true(pt->set_desired);
    assert_int_equal(pt->desired.epoch, EPOCH);
    assert_int_equal(pt->desired.action, RSS_ACTION_NONE);
    const struct rss_plan_event *e = find_event(&p, "InvalidEpoch");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(p.status);
    rss_plan_free(&p);
    /* An observed annotation claiming a newer Lease: flagged, and that report is not trusted. */
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_NONE, 0, 0);
    find(&w, 2)->observed.lease_epoch = EPOCH + 2;
    run(&w, &p);
    assert_true(p.epoch_claims);
    assert_false(p.fencing);
    expect(&p, "", "observed epoch claim");
    assert_non_null(find_event(&p, "InvalidEpoch"));
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- action ids: fresh, deterministic, never reused ---- */

static void test_action_ids(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 S5 S2", 0, false, 0);
    w.prev = cJSON_Parse("{\"lastActionSeq\":41}");
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(patch_of(&p, 1)->desired.id.seq, 42);
    assert_int_equal(p.last_action_seq, 42);
    assert_int_equal(cJSON_GetObjectItem(p.status, "lastActionSeq")->valuedouble, 42);
    rss_plan_free(&p);
    /* The status write was lost but an acknowledged action 5-50 is on a pod: continue after it. */
    set_last(find(&w, 0), RSS_ACTION_STOP, EPOCH, 50, RSS_RESULT_OK);
    run(&w, &p);
    assert_int_equal(patch_of(&p, 1)->desired.id.seq, 51);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- failover and repeated failure ---- */

static void test_failover_after_crash(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "steady");
    assert_string_equal(p.phase, "Running");
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Member 1's application crashes: a new generation, stopped. */
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN + 1, true, 77, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "failover");
    assert_non_null(find_event(&p, "MemberCrashed"));
    assert_non_null(find_event(&p, "Failover"));
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 1);
    assert_string_equal(p.phase, "Degraded");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_repeated_failure_deletes_pod(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-8\",\"role\":\"stopped\",\"generation\":3}]}");
    struct rss_member_input *m = find(&w, 1);
    /* A third failed start (action 5-9): failures reach spec.recovery.maxFailures (3). */
    set_desired(m, EPOCH, RSS_ACTION_PRIMARY, 9, GEN - 1);
    set_last(m, RSS_ACTION_PRIMARY, EPOCH, 9, RSS_RESULT_FAILED);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:delete", "third failure");
    assert_string_equal(p.deletes[0].uid, "uid-1-1");
    assert_non_null(find_event(&p, "ActionFailed"));
    assert_true(find_event(&p, "DeletingPod")->type == RSS_EVENT_WARNING);
    rss_plan_free(&p);
    /* The same failed action seen again is not counted twice: with countedAction 5-9 it stays at 2... */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-9\",\"role\":\"stopped\",\"generation\":3}]}");
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "counted once");
    assert_null(find_event(&p, "ActionFailed"));
    rss_plan_free(&p);
    /* ...and a new pod (new uid) starts with a clean record. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"old-uid\",\"failures\":9,"
                         "\"role\":\"stopped\",\"generation\":3}]}");
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "new pod");
    rss_plan_free(&p);
    world_free(&w);
}

/* Every member went down together (a power cut): nobody's fault. Three cuts in a row must not delete
 * the pods, which only slows the recovery down; the recovery seeds the highest sequence instead. */
static void test_outage_is_no_member_failure(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 S30 S20", 0, false, 0);
    w.prev = cJSON_Parse(
        "{\"memberStatus\":["
        "{\"ordinal\":0,\"podUID\":\"uid-0-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1},"
        "{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1},"
        "{\"ordinal\":2,\"podUID\":\"uid-2-1\",\"failures\":2,\"role\":\"primary\",\"generation\":1}]}");
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:seed", "after a power cut");
    assert_null(find_event(&p, "MemberCrashed"));
    assert_null(find_event(&p, "DeletingPod"));
    rss_plan_free(&p);
    /* The same member going down alone while the others run is a crash, and it counts. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":0,"
                         "\"role\":\"primary\",\"generation\":1}]}");
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, true, 10, NULL);
    set_observed(find(&w, 2), RSS_ROLE_PRIMARY, GEN, true, 20, NULL);
    run(&w, &p);
    assert_non_null(find_event(&p, "MemberCrashed"));
    rss_plan_free(&p);
    world_free(&w);
}

static void test_failed_member_stop_then_delete(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P F P", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:stop", "failed -> stop");
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 1);
    rss_plan_free(&p);
    /* The stop fails too, twice more: the pod goes. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"countedAction\":\"5-3\",\"role\":\"failed\",\"generation\":3}]}");
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_STOP, 4, GEN);
    set_last(find(&w, 1), RSS_ACTION_STOP, EPOCH, 4, RSS_RESULT_TIMEOUT);
    run(&w, &p);
    expect(&p, "1:delete", "stop timed out");
    assert_non_null(strstr(find_event(&p, "ActionFailed")->message, "timed out"));
    rss_plan_free(&p);
    world_free(&w);
}

/* A member at the failure limit that is still running (failed) is stopped before its pod goes
 * (docs/planner.md); a stopped one is deleted. */
static void test_limit_stops_before_delete(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P F P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":3,"
                         "\"role\":\"failed\",\"generation\":3}]}");
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "1:stop", "at the limit, failed: stop first");
    rss_plan_free(&p);
    /* The stop succeeded: now the pod is replaced. */
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN, true, 4, NULL);
    set_desired(find(&w, 1), EPOCH, RSS_ACTION_STOP, 4, GEN);
    set_last(find(&w, 1), RSS_ACTION_STOP, EPOCH, 4, RSS_RESULT_OK);
    run(&w, &p);
    expect(&p, "1:delete", "stopped at the limit: delete");
    rss_plan_free(&p);
    world_free(&w);
}

/* The replacement of a pod deleted for failing starts with a clean failure count, even when no plan
 * saw the old and the new pod together (the record of the absent pod keeps the old uid). */
static void test_replacement_starts_clean(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P - P", 0, false, 0);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"old-uid\",\"failures\":3,"
                         "\"role\":\"stopped\",\"generation\":3}]}");
    struct rss_plan p;
    run(&w, &p);
    const cJSON *ms = member_status(&p, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ms, "podUID")), "old-uid");
    assert_int_equal(cJSON_GetObjectItem(ms, "failures")->valuedouble, 3);
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The StatefulSet recreated it: new uid, stopped, with data. */
    remove_pod(&w, 2);
    struct rss_member_input *m = add_pod(&w, 1);
    set_observed(m, RSS_ROLE_STOPPED, GEN, true, 5, NULL);
    m = add_pod(&w, 2);
    set_observed(m, RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "replacement joins");
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 0);
    rss_plan_free(&p);
    world_free(&w);
}

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

/* Model trace F1: the leader issued `seed` on a member whose node was then cut off before its agent
 * took it up. With minimumMembers the leader may go on without that member, but the seed is still on
 * the pod, and the agent would run it when the node comes back: a second bootstrap. The planner first
 * retracts it (desired none, a CAS), says so, and decides nothing else in that plan. */
static void test_dead_node_start_retracted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 D60 S20", 0, false, 2);
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_SEED, 7, GEN);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "no seed while a dead node still holds an unacknowledged start");
    assert_true(p.retracting && !p.fencing); /* re-plan from a fresh LIST once the retraction is in */
    bool retracted = false;
    for (size_t i = 0; i < p.n_patches; i++)
        retracted |= p.patches[i].ordinal == 1 && p.patches[i].set_desired &&
                     p.patches[i].desired.action == RSS_ACTION_NONE && p.patches[i].resource_version;
    assert_true(retracted);
    const struct rss_plan_event *e = find_event(&p, "ActionRetracted");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    rss_plan_free(&p);
    /* The retraction landed: now the admin's opt-in applies, with its Warning. */
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_NONE, 0, 0);
    run(&w, &p);
    expect(&p, "2:seed", "minimumMembers goes on once the stale start is gone");
    assert_non_null(find_event(&p, "MemberSkipped"));
    rss_plan_free(&p);
    /* Without the opt-in the retraction happens too (the seed will be decided again when it reports). */
    world_free(&w);
    world_init(&w, "S1 D60 S20", 0, false, 0);
    set_desired(find(&w, 1), w.epoch, RSS_ACTION_PRIMARY, 7, GEN);
    run(&w, &p);
    expect(&p, "", "a stale primary is retracted too");
    assert_non_null(find_event(&p, "ActionRetracted"));
    rss_plan_free(&p);
    world_free(&w);
}

/* Finding F4 (docs/model.md): node 1 was cut off while its seed hook ran (its last report is the
 * write-ahead) and judged dead; the unacknowledged seed was retracted. Under minimumMembers the plan
 * seeded member 2 at once, while the hook on node 1 could still bootstrap a second cluster. Now it waits
 * until the seed hook's timeout and the dead window have passed since the write-ahead (the window holds
 * the stop's timeout, the kill and the margin for clock skew between the agent and the leader: counted
 * once), and says so in a Warning. */
static void test_dead_node_start_in_flight(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S1 W60 S20", 0, false, 2);
    w.dead_after = 35000 + 600000 + 5000; /* fence + margin, the 600 s stop timeout, the kill */
    struct rss_member_input *m = find(&w, 1);
    const int64_t until = m->observed.time_ms + 600000 + w.dead_after;
    struct rss_plan p;
    w.now = until - 1;
    run(&w, &p);
    expect(&p, "", "the seed hook on the dead node may still run");
    const struct rss_plan_event *e = find_event(&p, "WaitingForStart");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    if (!strstr(e->message, "rss-db-1's seed (5-901) may still be running on node") ||
        !strstr(e->message, "no seed before"))
        fail_msg("message: %s", e->message);
    rss_plan_free(&p);
    w.now = until;
    run(&w, &p);
    expect(&p, "2:seed", "the hook and the stop timed out: the admin's opt-in applies");
    assert_non_null(find_event(&p, "MemberSkipped"));
    rss_plan_free(&p);
    /* A write-ahead without a time cannot be bounded: it waits, and so does the admin's force-seed
     * (until the node reports again). */
    m->observed.time_ms = 0;
    w.now = NOW + 36000000;
    run(&w, &p);
    expect(&p, "", "no time: wait");
    assert_non_null(find_event(&p, "WaitingForStart"));
    rss_plan_free(&p);
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "", "no force-seed while the start may run");
    rss_plan_free(&p);
    world_free(&w);
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

/* A member left out of a recovery (minimumMembers) that comes back with a higher sequence than the
 * seed had is held back with a Warning, not joined over its newer writes; Join lets it join. */
static void test_newer_late_member_held(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S20 D60 S10", 0, false, 2);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "0:seed", "seed without the dead member (opt-in)");
    const struct rss_plan_event *e = find_event(&p, "MemberSkipped");
    assert_non_null(e);
    assert_non_null(strstr(e->message, "rss-db-1 (last reported sequence 60)"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* The cluster runs; member 1's node comes back with its newer data. */
    set_observed(find(&w, 0), RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    set_observed(find(&w, 2), RSS_ROLE_PRIMARY, GEN, false, 0, NULL);
    find(&w, 1)->node_alive = true;
    find(&w, 1)->node_dead = false;
    run(&w, &p);
    expect(&p, "", "held back");
    e = find_event(&p, "NewerThanSeed");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Still held on the next plan, without a second Warning. */
    run(&w, &p);
    expect(&p, "", "still held");
    assert_null(find_event(&p, "NewerThanSeed"));
    rss_plan_free(&p);
    /* The admin lets it join. */
    w.spec.join_newer_late_members = true;
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "joins with Join");
    rss_plan_free(&p);
    /* A late member that is behind the seed just joins. */
    w.spec.join_newer_late_members = false;
    set_observed(find(&w, 1), RSS_ROLE_STOPPED, GEN, true, 15, NULL);
    run(&w, &p);
    expect(&p, "1:primary(0,2)", "behind the seed: joins");
    rss_plan_free(&p);
    world_free(&w);
}

static void test_failures_reset_when_stable(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P P P", 0, false, 0);
    /* Running in the same generation since long before 2 x reconcileInterval (2 min): streak over. */
    w.prev =
        cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                    "\"role\":\"primary\",\"generation\":3,\"runningSince\":\"2023-11-14T22:00:00Z\"}]}");
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 0);
    rss_plan_free(&p);
    /* Just started: the streak stays. */
    cJSON_Delete(w.prev);
    w.prev = cJSON_Parse("{\"memberStatus\":[{\"ordinal\":1,\"podUID\":\"uid-1-1\",\"failures\":2,"
                         "\"role\":\"starting\",\"generation\":3}]}");
    run(&w, &p);
    assert_int_equal(cJSON_GetObjectItem(member_status(&p, 1), "failures")->valuedouble, 2);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- scale up / down, create, paused, labels, status ---- */

static void test_create_and_scale_up(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "- - -", 0, false, 0);
    w.sts = -1;
    struct rss_plan p;
    run(&w, &p);
    assert_true(p.create_statefulset);
    expect(&p, "replicas=3", "create");
    assert_string_equal(p.phase, "Recovering");
    rss_plan_free(&p);
    world_free(&w);
    world_init(&w, "P P P - -", 0, false, 0);
    w.sts = 3;
    run(&w, &p);
    expect(&p, "replicas=5", "scale up");
    assert_false(p.create_statefulset);
    assert_non_null(find_event(&p, "ScalingUp"));
    assert_string_equal(p.phase, "Scaling");
    rss_plan_free(&p);
    world_free(&w);
}

struct scale_row {
    const char *members;
    int sts, replicas;
    const char *want;
};

static void test_scale_down_table(void **state)
{
    (void)state;
    static const struct scale_row rows[] = {
        {"P P P P P", 5, 3, "4:stop"},             /* highest ordinal first, replicas untouched */
        {"P P P P S1", 5, 3, "3:stop replicas=4"}, /* 4 stopped: lower past it, stop the next */
        {"P P P S1 S1", 5, 3, "replicas=3"},
        {"P P P S1 -", 5, 3, "replicas=3"},
        {"P P P T P", 5, 3, "4:stop"},            /* a starting member below does not block the stop of 4 */
        {"P P P P T", 5, 3, ""},                  /* 4 is starting: wait */
        {"S1 P P P P", 5, 3, "4:stop"},           /* joins of members that stay happen too... */
        {"S1 S1 S1 P P", 5, 3, "0:primary(3,4)"}, /* ...and with no primary among those that stay, no stop */
        {"P P P", 3, 0, "2:stop"},                /* scale to zero */
        {"S1 S1 S1", 3, 0, "replicas=0"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].members, 0, false, 0);
        rss_spec_clear(&w.spec);
        spec_init(&w.spec, rows[i].replicas, 0, false, 0);
        w.sts = rows[i].sts;
        struct rss_plan p;
        run(&w, &p);
        char name[64];
        snprintf(name, sizeof(name), "scale row %zu '%s'", i, rows[i].members);
        expect(&p, rows[i].want, name);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static void test_paused(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S9 S5 S2", 0, false, 0);
    w.spec.paused = true;
    w.epoch = EPOCH + 1; /* even fencing waits */
    struct rss_plan p;
    run(&w, &p);
    assert_int_equal(p.n_patches, 0);
    assert_int_equal(p.set_replicas, -1);
    assert_string_equal(p.phase, "Paused");
    rss_plan_free(&p);
    world_free(&w);
}

/* spec.suspend: one stop at a time, secondaries first, the last primary last; then replicas 0 with
 * the sequences at stop kept in status; resuming scales up and recovers the usual way. */
static void test_suspend(void **state)
{
    (void)state;
    static const struct {
        const char *members, *want;
    } steps[] = {
        {"P Y P", "1:stop"},       /* the secondary first */
        {"P S5 P", "2:stop"},      /* then the primaries, highest ordinal first */
        {"P S5 S7", "0:stop"},     /* the last primary last */
        {"S3 S5 S7", "replicas=0"} /* every member stopped and reported: the StatefulSet goes to 0 */
    };
    struct world w;
    cJSON *prev = NULL;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        world_init(&w, steps[i].members, 2, true, 0);
        w.spec.suspend = true;
        w.prev = prev;
        struct rss_plan p;
        run(&w, &p);
        expect(&p, steps[i].want, steps[i].members);
        assert_string_equal(p.phase, "Suspending");
        prev = cJSON_Duplicate(p.status, true);
        rss_plan_free(&p);
        world_free(&w);
    }
    const cJSON *seqs = cJSON_GetObjectItem(cJSON_GetObjectItem(prev, "suspended"), "sequences");
    assert_string_equal(cJSON_GetObjectItem(seqs, "rss-db-2")->valuestring, "7");
    assert_int_equal(cJSON_GetArraySize(seqs), 3);
    /* Scaled to 0: nothing to do; the record stays. */
    world_init(&w, "- - -", 2, true, 0);
    w.spec.suspend = true;
    w.sts = 0;
    w.prev = prev;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "suspended");
    assert_string_equal(p.phase, "Suspended");
    assert_non_null(cJSON_GetObjectItem(p.status, "suspended"));
    cJSON_Delete(w.prev);
    w.prev = cJSON_Duplicate(p.status, true);
    rss_plan_free(&p);
    /* Resume: the StatefulSet comes back; the recovery then waits for every member as usual. */
    w.spec.suspend = false;
    run(&w, &p);
    expect(&p, "replicas=3", "resume");
    rss_plan_free(&p);
    world_free(&w);
}

/* Rolling update (StatefulSet OnDelete): one member at a time, secondaries first, then primaries from the
 * highest ordinal: stop, delete the pod, join the recreated one; never a second member down, never a seed.
 * Revisions: o = made from the old template, n = the StatefulSet's updateRevision, - = no pod. */
static void set_revisions(struct world *w, const char *revs)
{
    for (unsigned i = 0; revs[2 * i]; i++) {
        struct rss_member_input *m = find(w, i);
        if (m)
            m->revision = revs[2 * i] == 'n' ? "rev-new" : "rev-old";
        if (!revs[2 * i + 1])
            break;
    }
    w->update_revision = "rev-new";
}

static void test_rollout(void **state)
{
    (void)state;
    static const struct {
        const char *members, *revs, *want, *event;
    } steps[] = {
        {"P Y P", "o o o", "1:stop", "RollingUpdate"},      /* the secondary first */
        {"P S5 P", "o o o", "1:delete", "RollingUpdate"},   /* stopped: recreated, not restarted */
        {"P - P", "o - o", "", NULL},                       /* waits for the new pod */
        {"P ? P", "o n o", "", NULL},                       /* ... and its first report */
        {"P S5 P", "o n o", "1:secondary(0,2)", "Joining"}, /* it joins like any stopped member */
        {"P T P", "o n o", "", NULL},                       /* one at a time: nothing while it starts */
        {"P Y P", "o n o", "2:stop", "RollingUpdate"},      /* then the primaries, highest ordinal first */
        {"P Y S5", "o n o", "2:delete", "RollingUpdate"},
        {"P Y S5", "o n n", "2:primary(0)", "Joining"},
        {"P Y P", "o n n", "0:stop", "RollingUpdate"}, /* another primary stays up */
        {"S5 Y P", "o n n", "0:delete", "RollingUpdate"},
        {"S5 Y P", "n n n", "0:primary(2)", "Joining"},
        {"P Y P", "n n n", "", NULL},                         /* done: nothing more */
        {"P S5 P", "o n o", "1:secondary(0,2)", "Joining"},   /* an updated member that stopped rejoins */
        {"P F P", "o n o", "1:stop", "StoppingFailedMember"}, /* a failed updated one is repaired first */
        {"S5 Y P", "o n o", "0:delete", "RollingUpdate"},     /* an outdated one already down: recreated */
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct world w;
        world_init(&w, steps[i].members, 2, true, 0);
        set_revisions(&w, steps[i].revs);
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *row = rss_xasprintf("%s [%s]", steps[i].members, steps[i].revs);
        expect(&p, steps[i].want, row);
        if (steps[i].event && !find_event(&p, steps[i].event))
            fail_msg("%s: no %s event", row, steps[i].event);
        for (size_t k = 0; k < p.n_patches; k++)
            assert_int_not_equal(p.patches[k].desired.action, RSS_ACTION_SEED);
        rss_plan_free(&p);
        world_free(&w);
    }
    /* Without a known updateRevision (the controller has not seen the new template yet), nothing rolls. */
    struct world w;
    world_init(&w, "P Y P", 2, true, 0);
    set_revisions(&w, "o o o");
    w.update_revision = NULL;
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "no updateRevision");
    rss_plan_free(&p);
    world_free(&w);
    /* A single primary is never stopped for a rollout: the admin deletes its pod. */
    world_init(&w, "P", 1, false, 0);
    set_revisions(&w, "o");
    run(&w, &p);
    expect(&p, "", "single primary");
    assert_non_null(strstr(status_str(&p, "message"), "would leave no primary running"));
    rss_plan_free(&p);
    world_free(&w);
    /* A member silent on its node holds the rollout: no second member goes down. */
    world_init(&w, "P L Y", 2, true, 0);
    set_revisions(&w, "o n o");
    run(&w, &p);
    expect(&p, "", "silent member");
    rss_plan_free(&p);
    world_free(&w);
    /* A member on a dead node (nodeLossPolicy Wait) holds it too, named in the status, whether it is
     * outdated itself or not: its pod is not deleted (its data may be the newest) and no other member
     * goes down beside it. */
    static const char *const dead_revs[] = {"o o o", "n n o", "o o n"};
    for (size_t i = 0; i < 3; i++) {
        world_init(&w, "P Y D5", 2, true, 0);
        set_revisions(&w, dead_revs[i]);
        run(&w, &p);
        expect(&p, "", dead_revs[i]);
        assert_non_null(strstr(status_str(&p, "message"), "rss-db-2"));
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* An updated member that fails halts the rollout with a Warning naming it. */
static void test_rollout_halted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 P", 2, true, 0);
    set_revisions(&w, "o n o");
    struct rss_member_input *m1 = find(&w, 1);
    set_last(m1, RSS_ACTION_SECONDARY, EPOCH, 9, RSS_RESULT_FAILED);
    struct rss_plan p;
    run(&w, &p);
    const struct rss_plan_event *e = find_event(&p, "RolloutHalted");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "rss-db-1 failed after its update"));
    /* No member of the old revision is stopped meanwhile. */
    for (unsigned o = 0; o < 3; o += 2)
        assert_true(!patch_of(&p, o) || !patch_of(&p, o)->set_desired);
    rss_plan_free(&p);
    world_free(&w);
}

/* ---- the journal: a missing member proven behind (spec.recovery.replication: Synchronous) ---- */

/* Plans a series of worlds, each against the status the previous one wrote, at the given times (s after
 * NOW); returns the last plan (caller frees). The spec's status timeout is 60 s and its reconcile interval
 * 1 m: the witness window is 15 + 120 + 60 = 195 s. */
struct jstep {
    const char *members;
    int64_t at_s;
};

static void journal_run(const struct jstep *steps, size_t n, bool sync, struct rss_plan *last)
{
    cJSON *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        struct world w;
        world_init(&w, steps[i].members, 0, false, 0);
        w.spec.replication_sync = sync;
        w.now = NOW + steps[i].at_s * 1000;
        w.prev = prev;
        struct rss_plan p;
        run(&w, &p);
        if (i + 1 == n) {
            *last = p;
            world_free(&w);
            return;
        }
        prev = cJSON_Duplicate(p.status, true);
        rss_plan_free(&p);
        world_free(&w);
    }
}

static const cJSON *journal_of(const struct rss_plan *p, unsigned ordinal)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(p->status, "journal"))
    {
        if (cJSON_GetObjectItem(e, "ordinal")->valuedouble == ordinal)
            return e;
    }
    return NULL;
}

static void test_journal_proves_behind(void **state)
{
    (void)state;
    /* Member 2 joined with sequence 40, ran, and its node died while 0 and 1 ran on (confirmed well
     * after); then the rest went dark and reported 50 and 45: 2 is left out, 0 seeds. */
    const struct jstep early[] = {
        {"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}};
    struct rss_plan p;
    journal_run(early, 5, true, &p);
    expect(&p, "0:seed", "lost early, synchronous");
    const struct rss_plan_event *e = find_event(&p, "LeftOutBehind");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_NORMAL);
    assert_non_null(strstr(e->message, "rss-db-2 is left out"));
    assert_non_null(strstr(e->message, "last sequence 40"));
    assert_null(find_event(&p, "MemberSkipped"));
    const cJSON *j = journal_of(&p, 2);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "lastSequence")->valuestring, "40");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "witnesses")), 2);
    rss_plan_free(&p);

    /* Refusals: each row must wait (no seed). */
    static const struct {
        const char *why;
        struct jstep steps[5];
        size_t n;
        bool sync;
    } waits[] = {
        {"asynchronous replication: nothing proves it",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}},
         5,
         false},
        {"witnesses never confirmed (dark too soon)",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"S50 S45 D", 60}},
         4,
         true},
        {"no witness committed past its last sequence",
         {{"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P P D", 230}, {"S40 S39 D", 300}},
         5,
         true},
        {"lost last: nobody ran on after it",
         {{"P P S40", 0}, {"P P P", 10}, {"S50 S45 P", 20}, {"S50 S45 P", 230}, {"S50 S45 D", 300}},
         5,
         true},
        {"its last sequence was never known",
         {{"P P P", 0}, {"P P D", 20}, {"P P D", 230}, {"S50 S45 D", 300}},
         4,
         true},
    };
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
        journal_run(waits[i].steps, waits[i].n, waits[i].sync, &p);
        expect(&p, "", waits[i].why);
        assert_null(find_event(&p, "LeftOutBehind"));
        rss_plan_free(&p);
    }
    /* A witness that crashed before it was confirmed (new generation) is dropped; the other suffices. */
    const struct jstep one[] = {
        {"P P S40", 0}, {"P P P", 10}, {"P P D", 20}, {"P S45 D", 100}, {"P S45 D", 230}};
    journal_run(one, 5, true, &p);
    j = journal_of(&p, 2);
    const cJSON *ws = cJSON_GetObjectItem(j, "witnesses");
    assert_int_equal(cJSON_GetArraySize(ws), 1);
    assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(ws, 0), "ordinal")->valuedouble, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(ws, 0), "confirmed")));
    rss_plan_free(&p);
}

/* spec.joinConcurrency: up to K members start at once after the seed (1 keeps the one-at-a-time
 * default), highest sequence first, never more primaries than spec.primaries. */
static void test_join_concurrency(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "P S5 S7 S3", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=1: one join");
    rss_plan_free(&p);
    w.spec.join_concurrency = 2;
    run(&w, &p);
    expect(&p, "1:primary(0) 2:primary(0)", "K=2: the two highest at once");
    rss_plan_free(&p);
    world_free(&w);
    /* One start in flight: one slot left. */
    world_init(&w, "P T S5 S3", 0, false, 0);
    w.spec.join_concurrency = 2;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=2 with one in flight");
    rss_plan_free(&p);
    world_free(&w);
    /* spec.primaries 2: the second slot may not make a third primary (no secondary hook: standby). */
    world_init(&w, "P S5 S7", 2, false, 0);
    w.spec.join_concurrency = 3;
    run(&w, &p);
    expect(&p, "2:primary(0)", "K=3, primaries 2");
    rss_plan_free(&p);
    world_free(&w);
}

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

/* The admin's override: seeds the named member although the policy waits; refused (and removed) while a
 * member runs or for a pod that is not a member; waits (kept) until the member reported as stopped. */
static void test_force_seed(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "S10 D60 E", 0, false, 0);
    struct rss_plan p;
    run(&w, &p);
    expect(&p, "", "the policy waits for the down member and the garbage sequence");
    assert_false(p.clear_force_seed);
    rss_plan_free(&p);
    w.force_seed = "rss-db-0";
    run(&w, &p);
    expect(&p, "0:seed", "force-seed");
    assert_true(p.clear_force_seed);
    const struct rss_plan_event *e = find_event(&p, "ForceSeed");
    assert_non_null(e);
    assert_int_equal(e->type, RSS_EVENT_WARNING);
    assert_non_null(strstr(e->message, "rss-db-0 seeds (sequence 10)"));
    const cJSON *lr = cJSON_GetObjectItem(p.status, "lastRecovery");
    assert_string_equal(cJSON_GetObjectItem(lr, "kind")->valuestring, "ForceSeed");
    rss_plan_free(&p);
    /* Not a member: refused, removed, nothing else decided in that plan. */
    w.force_seed = "rss-db-7";
    run(&w, &p);
    expect(&p, "", "no such member");
    assert_true(p.clear_force_seed);
    assert_non_null(find_event(&p, "ForceSeedRefused"));
    rss_plan_free(&p);
    world_free(&w);
    /* A member runs: refused, removed, the running cluster goes on as usual. */
    world_init(&w, "P P S5", 0, false, 0);
    w.force_seed = "rss-db-2";
    run(&w, &p);
    expect(&p, "2:primary(0,1)", "refused while running");
    assert_true(p.clear_force_seed);
    assert_non_null(find_event(&p, "ForceSeedRefused"));
    assert_null(find_event(&p, "ForceSeed"));
    rss_plan_free(&p);
    world_free(&w);
    /* The named member has not reported yet: wait, keep the annotation. */
    world_init(&w, "? S1 S2", 0, false, 0);
    w.force_seed = "rss-db-0";
    run(&w, &p);
    expect(&p, "", "waits for the named member");
    assert_false(p.clear_force_seed);
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
        cmocka_unit_test(test_recovery_table),
        cmocka_unit_test(test_running_table),
        cmocka_unit_test(test_tie_2_vs_10),
        cmocka_unit_test(test_seed_targets_generation),
        cmocka_unit_test(test_newer_generation_voids),
        cmocka_unit_test(test_old_seed_not_reexecuted),
        cmocka_unit_test(test_unresolved_table),
        cmocka_unit_test(test_unresolved_elsewhere_blocks_seed),
        cmocka_unit_test(test_fence_before_deciding),
        cmocka_unit_test(test_fence_keeps_pending_start),
        cmocka_unit_test(test_stale_running_reports_are_no_peers),
        cmocka_unit_test(test_joins_wait_for_stale_reports),
        cmocka_unit_test(test_epoch_claims),
        cmocka_unit_test(test_action_ids),
        cmocka_unit_test(test_failover_after_crash),
        cmocka_unit_test(test_repeated_failure_deletes_pod),
        cmocka_unit_test(test_failed_member_stop_then_delete),
        cmocka_unit_test(test_outage_is_no_member_failure),
        cmocka_unit_test(test_failures_reset_when_stable),
        cmocka_unit_test(test_limit_stops_before_delete),
        cmocka_unit_test(test_replacement_starts_clean),
        cmocka_unit_test(test_node_outage_is_no_crash),
        cmocka_unit_test(test_ordinal_above_replicas),
        cmocka_unit_test(test_dead_node_start_retracted),
        cmocka_unit_test(test_dead_node_start_in_flight),
        cmocka_unit_test(test_newer_late_member_held),
        cmocka_unit_test(test_bootstrap_then_recovery),
        cmocka_unit_test(test_force_seed),
        cmocka_unit_test(test_node_loss_table),
        cmocka_unit_test(test_replacement_never_seeds),
        cmocka_unit_test(test_replace_one_at_a_time),
        cmocka_unit_test(test_replacement_keeps_left_out),
        cmocka_unit_test(test_suspend),
        cmocka_unit_test(test_rollout),
        cmocka_unit_test(test_rollout_halted),
        cmocka_unit_test(test_journal_proves_behind),
        cmocka_unit_test(test_join_concurrency),
        cmocka_unit_test(test_create_and_scale_up),
        cmocka_unit_test(test_scale_down_table),
        cmocka_unit_test(test_paused),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_wait_event_not_repeated),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_sim_lights_out),
        cmocka_unit_test(test_sim_lights_out_with_secondaries),
        cmocka_unit_test(test_sim_scale_3_5_3),
        cmocka_unit_test(test_sim_seed_fails_then_retried),
        cmocka_unit_test(test_sim_seed_dies_new_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
