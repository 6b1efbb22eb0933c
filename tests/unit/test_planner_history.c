/* test_planner_history.c -- rule 14 in tables: a member left out of a recovery (its history diverged from
 * the cluster's) never seeds, is not joined over its writes until released, and its hold survives a new
 * pod, a sequence error, a second recovery and a re-created RSS (the record's copy).
 *
 * Worlds are written as in test_planner.c (one token per member, ordinal 0 first): S<n> stopped with
 * sequence n, E stopped with a sequence error, P running primary, Y running secondary, D<n> node dead,
 * - no pod. The previous status is given as JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
    const char *force_seed;   /* the RSS's force-seed annotation */
    const char *release_hold; /* the RSS's release-hold annotation */
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

static void run(struct world *w, struct rss_plan *p)
{
    struct rss_plan_input in = {.spec = &w->spec,
                                .epoch = w->epoch,
                                .now_ms = w->now,
                                .statefulset_replicas = w->sts,
                                .prev_status = w->prev,
                                .force_seed = w->force_seed,
                                .release_hold = w->release_hold,
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

static const cJSON *member_status(const struct rss_plan *p, unsigned ord)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p->status, "memberStatus"))
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "ordinal");
        if (cJSON_IsNumber(o) && o->valuedouble == (double)ord)
            return e;
    }
    return NULL;
}

/* status.memberStatus[ord].leftOut.seedSequence, or "" */
static const char *left_out_seq(const struct rss_plan *p, unsigned ord)
{
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(member_status(p, ord), "leftOut");
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(lo, "seedSequence"));
    return s ? s : "";
}

static const struct rss_plan_patch *patch_of(const struct rss_plan *p, unsigned ord)
{
    for (size_t i = 0; i < p->n_patches; i++)
        if (p->patches[i].ordinal == ord)
            return &p->patches[i];
    return NULL;
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
    find(&w, 2)->hold_record = "{\"seedSequence\":\"100\"}";
    struct rss_plan p;
    expect_plan(&w, &p, "");
    assert_non_null(find_event(&p, "NewerThanSeed"));
    assert_string_equal(left_out_seq(&p, 2), "100");
    assert_false(patch_of(&p, 2) && patch_of(&p, 2)->set_hold); /* the record says so already */
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
    assert_string_equal(p.patches[0].hold, "{\"seedSequence\":\"100\"}");
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
    assert_string_equal(h->hold, "{\"seedSequence\":\"100\",\"released\":true}");
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
