/* fuzz_planner.c -- structured fuzzing of the pure planner (rss_planner_plan): the input bytes build a
 * random snapshot (spec: replicas, primaries, hooks, minimumMembers, paused/suspend, nodeLossPolicy;
 * StatefulSet replicas; up to 10 member pods with random desired/observed annotations, epochs, generations,
 * roles, sequences, sequence errors, pending/acknowledged actions, node liveness, container ids; a previous
 * status with a recovery pin, and pins in the member records (readable or not); sometimes a force-seed; under
 * spec.failover PromoteStandby a failover record, position requests and answers), plans it, then plans again
 * from the plan's own status. Asserts beyond "no crash" the safety rules of ARCHITECTURE section 6 on every
 * plan (planner_props.h): at most one seed and never next to another start; no seed while any member runs or
 * starts or any action is unresolved; the seed reported and has the highest sequence among the members
 * that reported; no seed before every member reported unless minimumMembers allows (then at least that
 * many); never below the pinned seed sequence; fencing first; our epoch on every desired; actions target
 * the reported generation with new unique ids; starts only for ordinals < replicas; writes and deletes
 * only to existing pods, as CAS; paused writes nothing; rule 15's promotion (a seed of a running standby)
 * only with the primary lost and fenced, after S-k+1 answers to the failover request of this epoch, of the
 * highest answer, next to running standbys only. And the plan is deterministic. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "planner_props.h"
#include "rss/cleanup.h"
#include "rss/planner.h"
#include "rss/spec.h"

#define EPOCH    5
#define NOW      1700000000000LL
#define MAXM     10
#define ORD_SPAN 8

struct store {
    char uid[32], rv[32], node[16], cid[48], ocid[48], seqerr[16], pin[40];
};

static uint64_t pick_epoch(struct fuzz_reader *r)
{
    static const uint64_t e[] = {EPOCH, EPOCH, EPOCH, EPOCH, EPOCH - 1, EPOCH + 1, 0, EPOCH};
    return e[fuzz_below(r, 8)];
}

static uint64_t pick_seq(struct fuzz_reader *r)
{
    uint8_t b = fuzz_u8(r);
    return b < 240 ? b % 8 : UINT64_MAX - (b % 3);
}

static void member(struct fuzz_reader *r, unsigned ord, struct rss_member_input *m, struct store *s)
{
    memset(m, 0, sizeof(*m));
    m->ordinal = ord;
    m->pod_exists = fuzz_below(r, 8) != 0;
    snprintf(s->uid, sizeof(s->uid), "uid-%u", ord);
    snprintf(s->rv, sizeof(s->rv), "rv-%u", ord);
    m->pod_uid = s->uid;
    m->resource_version = fuzz_below(r, 16) ? s->rv : NULL;
    m->phase = fuzz_below(r, 4) ? "Running" : "Pending";
    m->deleting = fuzz_below(r, 10) == 0;
    unsigned node = fuzz_below(r, 6);
    snprintf(s->node, sizeof(s->node), "node-%u", node % 3);
    m->node = node == 0 ? NULL : node == 1 ? "" : s->node;
    uint8_t live = fuzz_u8(r);
    m->node_alive = (live & 3) != 0;
    m->node_dead = !m->node_alive && (live & 4);
    /* Its report from the rssd its node ran before (leader_liveness_superseded): the byte's two top bits,
     * so no input changes meaning; only read where a report is decoded (below). */
    bool superseded = (live & 0xC0) == 0xC0;
    m->node_cordoned = live & 8; /* a drain (bit 3, read by nothing before it) */
    unsigned cid = fuzz_below(r, 4);
    snprintf(s->cid, sizeof(s->cid), "containerd://c%u", ord);
    m->container_id = cid == 0 ? NULL : s->cid;
    m->active_label = (int)fuzz_below(r, 3) - 1;
    uint8_t nl = fuzz_u8(r); /* nodeLossPolicy's facts, as leader_replace.c fills them */
    m->node_out_of_service = nl & 1;
    m->volume = (enum rss_volume_locality)((nl >> 1) % 3);
    /* Rule 14's hold in the record (its two top bits, so no input changes meaning): readable or not. */
    m->hold_record = (nl & 0xC0) == 0xC0 ? ((nl & 0x20) ? "{\"seedSequence\":\"3\"}" : "garbage") : NULL;
    /* Rule 2's recovery pin in the record (the same bits, another pattern): readable (0..7) or not. */
    snprintf(s->pin, sizeof(s->pin), "{\"seedSequence\":\"%u\"}", (nl >> 1) & 7);
    m->pin_record = (nl & 0xC0) == 0x80 ? ((nl & 0x20) ? s->pin : "{\"seedSequence\":\"x\"}") : NULL;

    m->has_desired = fuzz_below(r, 5) != 0;
    if (m->has_desired) {
        m->desired.epoch = pick_epoch(r);
        m->desired.action = (enum rss_action)fuzz_below(r, 5);
        if (m->desired.action != RSS_ACTION_NONE) {
            /* one read per statement: the evaluation order inside an initializer is unspecified */
            m->desired.id.epoch = fuzz_bool(r) ? m->desired.epoch : pick_epoch(r);
            m->desired.id.seq = fuzz_below(r, 8);
        }
        m->desired.generation = fuzz_below(r, 4);
    }
    m->has_observed = fuzz_below(r, 6) != 0;
    if (!m->has_observed) {
        m->observed_error = fuzz_bool(r) ? "observed: malformed JSON" : NULL;
        return;
    }
    m->observed_superseded = superseded;
    struct rss_observed *o = &m->observed;
    unsigned oc = fuzz_below(r, 4);
    snprintf(s->ocid, sizeof(s->ocid), oc == 0 ? "c%u-old" : oc == 1 ? "containerd://c%u" : "c%u", ord);
    o->container_id = s->ocid;
    o->generation = fuzz_below(r, 4);
    o->role = (enum rss_role)fuzz_below(r, 6);
    o->status_code = o->role == RSS_ROLE_STOPPED ? 7 : o->role == RSS_ROLE_PRIMARY ? 8 : 0;
    o->has_sequence = fuzz_below(r, 4) != 0;
    o->sequence = o->has_sequence ? pick_seq(r) : 0;
    snprintf(s->seqerr, sizeof(s->seqerr), "garbage");
    o->sequence_error = fuzz_below(r, 8) == 0 ? s->seqerr : NULL;
    o->last.present = fuzz_bool(r);
    if (o->last.present) {
        uint8_t b = fuzz_u8(r);
        if (b & 1 && m->has_desired) /* often the acknowledgement of the desired action */
            o->last.id = m->desired.id;
        else {
            o->last.id.epoch = pick_epoch(r);
            o->last.id.seq = fuzz_below(r, 8);
        }
        o->last.action = (enum rss_action)fuzz_below(r, 5);
        o->last.result = (enum rss_result)fuzz_below(r, 6);
        o->last.exit_code = o->last.result == RSS_RESULT_OK ? 0 : 1;
    }
    o->lease_epoch = pick_epoch(r);
    /* Mostly now; sometimes long ago (a start's hook timed out since: F4's wait is over) or unknown. */
    unsigned t = fuzz_below(r, 8);
    o->time_ms = t == 0 ? 0 : t == 1 ? NOW - 3600000 : NOW;
}

static cJSON *make_prev(struct fuzz_reader *r)
{
    unsigned k = fuzz_below(r, 4);
    if (k == 0)
        return NULL;
    cJSON *p = cJSON_CreateObject();
    if (k & 1)
        cJSON_AddNumberToObject(p, "lastActionSeq", fuzz_below(r, 12));
    if (k & 2) {
        cJSON *rec = cJSON_AddObjectToObject(p, "recovery");
        cJSON_AddNumberToObject(rec, "seedOrdinal", fuzz_below(r, ORD_SPAN));
        char s[24];
        snprintf(s, sizeof(s), "%u", fuzz_below(r, 9));
        cJSON_AddStringToObject(rec, "seedSequence", s);
        cJSON *last = cJSON_AddObjectToObject(p, "lastRecovery");
        cJSON_AddStringToObject(last, "kind", "LightsOut");
    }
    if (fuzz_below(r, 3) == 0) { /* a member replaced after its node was lost (nodeLossPolicy) */
        unsigned o = fuzz_below(r, ORD_SPAN);
        cJSON *ms = cJSON_AddArrayToObject(p, "memberStatus"), *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "ordinal", o);
        char uid[32];
        snprintf(uid, sizeof(uid), fuzz_bool(r) ? "uid-%u" : "old-%u", o);
        cJSON_AddStringToObject(e, "podUID", uid);
        cJSON *rep = cJSON_AddObjectToObject(e, "replacement");
        cJSON_AddStringToObject(rep, "fromNode", "node-9");
        if (fuzz_bool(r))
            cJSON_AddStringToObject(rep, "leftOutSeedSequence", "3");
        cJSON_AddItemToArray(ms, e);
    }
    return p;
}

/* A request or answer id: mostly our epoch and a small seq, so requests and answers meet often. */
static struct rss_action_id pick_id(struct fuzz_reader *r)
{
    struct rss_action_id id;
    id.epoch = pick_epoch(r);
    id.seq = 1 + fuzz_below(r, 4);
    return id;
}

/* A primary mark as the leader writes it (rss/record.h), for m's incarnation or an older one, at any
 * action id; sometimes a promotion's; sometimes unreadable. Points into a static pool (one per ordinal). */
static const char *fuzz_mark(struct fuzz_reader *r, const struct rss_member_input *m)
{
    static char pool[ORD_SPAN][160];
    char *buf = pool[m->ordinal % ORD_SPAN];
    uint8_t b = fuzz_u8(r);
    if ((b & 7) == 7)
        return "garbage";
    struct rss_action_id at = pick_id(r);
    char id[48], uid[32];
    rss_action_id_format(at, id, sizeof(id));
    snprintf(uid, sizeof(uid), b & 8 ? "old-%u" : "uid-%u", m->ordinal);
    if (b & 0x10)
        snprintf(buf, 160, "{\"action\":\"%s\",\"podUID\":\"%s\",\"sequence\":\"%u\",\"promotedOver\":%u}",
                 id, uid, fuzz_below(r, 8), fuzz_below(r, ORD_SPAN));
    else
        snprintf(buf, 160, "{\"action\":\"%s\",\"podUID\":\"%s\",\"sequence\":\"%u\"}", id, uid,
                 fuzz_below(r, 8));
    return buf;
}

static void failover(struct fuzz_reader *r, struct rss_spec *spec, struct rss_member_input *m, size_t n,
                     cJSON **prev)
{
    spec->promote_standby = true;
    spec->sync_standbys = 1 + (int)fuzz_below(r, (unsigned)spec->replicas - 1);
    struct rss_action_id req = pick_id(r);
    if (fuzz_below(r, 4)) { /* the record a plan that saw the primary lost left in status.failover */
        if (!*prev)
            *prev = cJSON_CreateObject();
        cJSON *rec = cJSON_AddObjectToObject(*prev, "failover");
        cJSON_AddNumberToObject(rec, "lost", fuzz_below(r, ORD_SPAN));
        uint8_t b = fuzz_u8(r);
        if (b & 1) {
            char id[48];
            rss_action_id_format(req, id, sizeof(id));
            cJSON_AddStringToObject(rec, "request", id);
            /* asked now, or an hour ago (the answers' deadline is over) */
            cJSON_AddStringToObject(rec, "since",
                                    b & 2 ? "2023-11-14T21:13:20.000Z" : "2023-11-14T22:13:20.000Z");
        }
        if (b & 4) { /* a promotion already made: the repoint list */
            cJSON_AddNumberToObject(rec, "promoted", fuzz_below(r, ORD_SPAN));
            cJSON *rep = cJSON_AddArrayToObject(rec, "repoint");
            cJSON_AddItemToArray(rep, cJSON_CreateNumber(fuzz_below(r, ORD_SPAN)));
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t b = fuzz_u8(r);
        if (b &
            0x40) /* the record's primary mark (rules 16, 17): this incarnation, an older one, or garbage */
            m[i].primary_record = fuzz_mark(r, &m[i]);
        if (m[i].has_desired && (b & 1))
            m[i].desired.position_request = (b & 2) ? req : pick_id(r);
        if (!m[i].has_observed || !(b & 4))
            continue;
        m[i].observed.position_for = (b & 8) ? req : pick_id(r);
        m[i].observed.has_position = (b & 0x30) != 0;
        m[i].observed.detached = m[i].observed.has_position && (b & 0x80);
        m[i].observed.position = pick_seq(r);
    }
    /* Rule 19: a `detach` hook in the spec, and with it spec.silentNodePolicy Promote (spec.c refuses the
     * policy without the hook), drawn last (off when the bytes run out). */
    spec->hooks[RSS_HOOK_DETACH].present = fuzz_below(r, 2) == 1;
    spec->silent_promote = spec->hooks[RSS_HOOK_DETACH].present && fuzz_below(r, 2) == 1;
}

static bool make_spec(struct fuzz_reader *r, struct rss_spec *spec)
{
    int replicas = (int)fuzz_below(r, 6);
    int primaries = 1 + (int)fuzz_below(r, replicas > 0 ? (unsigned)replicas : 1);
    int min = fuzz_below(r, 3) == 0 ? (int)fuzz_below(r, (unsigned)replicas + 1) : 0;
    uint8_t f = fuzz_u8(r);
    bool seed_hook = fuzz_bool(r), secondary_hook = fuzz_bool(r); /* read in order, not as arguments */
    bool replace = fuzz_bool(r);
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"uid\":\"u\",\"generation\":2},\"spec\":{\"replicas\":%d,"
        "\"primaries\":%d,\"paused\":%s,\"suspend\":%s,\"joinConcurrency\":%d,\"nodeLossPolicy\":\"%s\","
        "\"recovery\":{\"minimumMembers\":%d,\"onNewerLateMember\":\"%s\"},\"pod\":{\"commands\":{"
        "\"sequence\":{\"command\":[\"/seq\"]},%s\"primary\":{\"command\":[\"/start\"]},%s"
        "\"status\":{\"command\":[\"/check\"]},\"stop\":{\"command\":[\"/stop\"]}},"
        "\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        replicas, primaries, (f & 0x7) == 0 ? "true" : "false", (f & 0x38) == 0 ? "true" : "false",
        1 + ((f >> 6) & 1), replace ? "Replace" : "Wait", min, f & 0x80 ? "Join" : "Hold",
        seed_hook ? "\"seed\":{\"command\":[\"/seed\"]}," : "",
        secondary_hook ? "\"secondary\":{\"command\":[\"/replica\"]}," : "");
    cJSON *cr = cJSON_Parse(json);
    rss_error_t err = NULL;
    int rc = rss_spec_parse(cr, spec, &err);
    cJSON_Delete(cr);
    if (rc < 0) {
        fprintf(stderr, "fuzz_planner: spec rejected: %s\n", err->msg);
        abort(); /* the generator only writes valid specs */
    }
    return true;
}

static void plan_and_check(const struct rss_plan_input *in, bool check_seq_rule, cJSON **status_out)
{
    struct rss_plan plan, again;
    rss_error_t err = NULL;
    if (rss_planner_plan(in, &plan, &err) < 0) {
        /* only inconsistent input may fail; the generator never makes any */
        fprintf(stderr, "planner failed: %s\n", err && err->msg ? err->msg : "?");
        abort();
    }
    prop_check_plan(in, &plan, check_seq_rule);
    FUZZ_CHECK(rss_planner_plan(in, &again, &err) == 0);
    char *a = rss_plan_describe(&plan), *b = rss_plan_describe(&again);
    FUZZ_CHECK(a && b && !strcmp(a, b)); /* deterministic */
    free(a);
    free(b);
    FUZZ_CHECK(plan.status && cJSON_IsObject(plan.status));
    if (status_out)
        *status_out = cJSON_Duplicate(plan.status, true);
    rss_plan_free(&plan);
    rss_plan_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_reader r = {data, size};
    struct rss_spec spec;
    if (!make_spec(&r, &spec))
        return 0;
    struct rss_member_input m[MAXM];
    struct store st[MAXM];
    bool used[ORD_SPAN] = {false};
    size_t n = 0;
    unsigned want = fuzz_below(&r, MAXM + 1);
    for (unsigned i = 0; i < want && n < MAXM; i++) {
        unsigned ord = fuzz_below(&r, ORD_SPAN);
        if (used[ord])
            continue;
        used[ord] = true;
        member(&r, ord, &m[n], &st[n]);
        n++;
    }
    cJSON *prev = make_prev(&r);
    char force[32];
    snprintf(force, sizeof(force), "rss-db-%u", fuzz_below(&r, ORD_SPAN));
    bool use_force = fuzz_below(&r, 12) == 0;
    int sts = (int)fuzz_below(&r, 8) - 1;
    /* Template revisions last, so older corpus entries keep their meaning: a rolling update. */
    static const char *const revs[] = {NULL, "rev-a", "rev-b"};
    for (size_t i = 0; i < n; i++)
        m[i].revision = revs[fuzz_below(&r, 3)];
    const char *update_revision = revs[fuzz_below(&r, 3)];
    /* The journal (spec.recovery.replication: Synchronous): random records in the previous status. */
    spec.replication_sync = fuzz_bool(&r);
    if (fuzz_bool(&r)) {
        if (!prev)
            prev = cJSON_CreateObject();
        cJSON *jr = cJSON_AddArrayToObject(prev, "journal");
        for (unsigned k = 0, nk = fuzz_below(&r, 3); k < nk; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "ordinal", fuzz_below(&r, ORD_SPAN));
            cJSON_AddStringToObject(e, "downAt", "2023-11-14T22:13:00.000Z");
            char sq[24];
            snprintf(sq, sizeof(sq), "%u", fuzz_below(&r, 9));
            if (fuzz_below(&r, 4))
                cJSON_AddStringToObject(e, "lastSequence", sq);
            cJSON *ws = cJSON_AddArrayToObject(e, "witnesses");
            for (unsigned q = 0, nq = fuzz_below(&r, 3); q < nq; q++) {
                cJSON *w = cJSON_CreateObject();
                cJSON_AddNumberToObject(w, "ordinal", fuzz_below(&r, ORD_SPAN));
                cJSON_AddNumberToObject(w, "generation", fuzz_below(&r, 4));
                cJSON_AddBoolToObject(w, "confirmed", fuzz_bool(&r));
                cJSON_AddItemToArray(ws, w);
            }
            cJSON_AddItemToArray(jr, e);
        }
    }
    /* Rule 15 (spec.failover PromoteStandby), read last and off when the bytes run out, so older corpus
     * entries keep their meaning: the opt-in where spec.c accepts it, a failover record in the previous
     * status, position requests on the records and answers in the reports. */
    if (spec.primaries == 1 && spec.replicas >= 2 && spec.hooks[RSS_HOOK_SEED].present &&
        spec.hooks[RSS_HOOK_SECONDARY].present && fuzz_below(&r, 4) == 3)
        failover(&r, &spec, m, n, &prev);
    struct rss_plan_input in = {.spec = &spec,
                                .epoch = EPOCH,
                                .now_ms = NOW,
                                .statefulset_replicas = sts,
                                .prev_status = prev,
                                .force_seed = use_force ? force : NULL,
                                .update_revision = update_revision,
                                .members = m,
                                .n_members = n};
    cJSON *status = NULL;
    plan_and_check(&in, true, &status);
    /* The next round: the same LIST against the status this plan wrote (history, pin, lastActionSeq). */
    in.prev_status = status;
    in.now_ms += 1000 * (int64_t)fuzz_below(&r, 200);
    plan_and_check(&in, false, NULL);
    cJSON_Delete(status);
    cJSON_Delete(prev);
    rss_spec_clear(&spec);
    return 0;
}
