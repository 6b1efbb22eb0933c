/* record_codec.c -- encode and strictly decode the two documents of a member record, desired and observed. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rss/record_codec.h"
#include "rss/clock.h"
#include "rss/cleanup.h"
#include "rss/json.h"

#define DNS_NAME_MAX 253

static const char *const action_names[] = {"none", "seed", "primary", "secondary", "stop"};
static const char *const role_names[] = {"unknown", "stopped", "starting", "primary", "secondary", "failed"};
static const char *const result_names[] = {"pending", "ok", "failed", "timeout", "rejected", "interrupted"};

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

static int lookup(const char *const *names, size_t n, const char *s)
{
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}

const char *rss_action_name(enum rss_action a)
{
    return (unsigned)a < N_ELEM(action_names) ? action_names[a] : "?";
}

const char *rss_role_name(enum rss_role r)
{
    return (unsigned)r < N_ELEM(role_names) ? role_names[r] : "?";
}

const char *rss_result_name(enum rss_result r)
{
    return (unsigned)r < N_ELEM(result_names) ? result_names[r] : "?";
}

int rss_action_parse(const char *s, enum rss_action *out)
{
    int i = lookup(action_names, N_ELEM(action_names), s);
    if (i < 0)
        return -1;
    *out = (enum rss_action)i;
    return 0;
}

int rss_role_parse(const char *s, enum rss_role *out)
{
    int i = lookup(role_names, N_ELEM(role_names), s);
    if (i < 0)
        return -1;
    *out = (enum rss_role)i;
    return 0;
}

int rss_result_parse(const char *s, enum rss_result *out)
{
    int i = lookup(result_names, N_ELEM(result_names), s);
    if (i < 0)
        return -1;
    *out = (enum rss_result)i;
    return 0;
}

/* Canonical unsigned decimal: digits only, no sign, no leading zero, no overflow. */
static int parse_u64_canonical(const char *s, uint64_t *out)
{
    if (!s || !*s || (s[0] == '0' && s[1]))
        return -1;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

void rss_action_id_format(struct rss_action_id id, char *buf, size_t size)
{
    snprintf(buf, size, "%" PRIu64 "-%" PRIu64, id.epoch, id.seq);
}

int rss_action_id_parse(const char *s, struct rss_action_id *out, rss_error_t *err)
{
    char buf[48];
    if (!s || strlen(s) >= sizeof(buf))
        return rss_error_make(err, RSS_E_INVALID, 0, "action id is not '<epoch>-<seq>'");
    memcpy(buf, s, strlen(s) + 1);
    char *dash = strchr(buf, '-');
    if (!dash)
        return rss_error_make(err, RSS_E_INVALID, 0, "action id '%s' is not '<epoch>-<seq>'", s);
    *dash = '\0';
    struct rss_action_id id;
    if (parse_u64_canonical(buf, &id.epoch) < 0 || parse_u64_canonical(dash + 1, &id.seq) < 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "action id '%s' is not '<epoch>-<seq>'", s);
    *out = id;
    return 0;
}

bool rss_action_id_equal(struct rss_action_id a, struct rss_action_id b)
{
    return a.epoch == b.epoch && a.seq == b.seq;
}

/* ---- decoding helpers: each names its field path in the error ---- */

static int get_uint(const cJSON *obj, const char *key, const char *ctx, bool required, uint64_t *out,
                    rss_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required)
            return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: required", ctx, key);
        *out = 0;
        return 0;
    }
    if (!rss_json_uint53(v, out))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: expected an integer in [0, 2^53]", ctx, key);
    return 0;
}

static int get_int(const cJSON *obj, const char *key, const char *ctx, int dflt, int *out, rss_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < -2147483648.0 || v->valuedouble > 2147483647.0 ||
        v->valuedouble != (double)(int)v->valuedouble)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: expected a 32-bit integer", ctx, key);
    *out = (int)v->valuedouble;
    return 0;
}

/* Optional string (NULL when absent); required ones report their absence. */
static int get_str(const cJSON *obj, const char *key, const char *ctx, bool required, size_t max,
                   const char **out, rss_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v) {
        if (required)
            return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: required", ctx, key);
        return 0;
    }
    if (!cJSON_IsString(v))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: expected a string", ctx, key);
    if (strlen(v->valuestring) > max)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s.%s: longer than %zu characters", ctx, key, max);
    *out = v->valuestring;
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? rss_xstrdup(s) : NULL;
}

static int get_action(const cJSON *obj, const char *ctx, enum rss_action *out, rss_error_t *err)
{
    const char *s;
    if (get_str(obj, "action", ctx, true, 32, &s, err) < 0)
        return -1;
    if (rss_action_parse(s, out) < 0)
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "%s.action: unknown action '%s' (expected none, seed, primary, secondary or stop)", ctx, s);
    return 0;
}

static int get_id(const cJSON *obj, const char *ctx, bool required, struct rss_action_id *out,
                  rss_error_t *err)
{
    const char *s;
    *out = (struct rss_action_id){0, 0};
    if (get_str(obj, "id", ctx, required, 47, &s, err) < 0)
        return -1;
    if (s && rss_action_id_parse(s, out, err) < 0)
        return rss_error_wrap(err, "%s.id", ctx);
    return 0;
}

static cJSON *parse_capped(const char *json, const char *what, rss_error_t *err)
{
    if (!json)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: no value in the record", what), NULL;
    if (strlen(json) > RSS_RECORD_MAX_LEN)
        return rss_error_make(err, RSS_E_TOO_LARGE, 0, "%s: record value longer than %d bytes", what,
                              RSS_RECORD_MAX_LEN),
               NULL;
    cJSON *j = cJSON_Parse(json);
    if (!j)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: not valid JSON", what), NULL;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: not a JSON object", what), NULL;
    }
    return j;
}

/* ---- desired ---- */

void rss_recordcodec_desired_clear(struct rss_desired *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_peers; i++)
        free(d->peers[i]);
    free(d->peers);
    free(d->reason);
    memset(d, 0, sizeof(*d));
}

void rss_recordcodec_desired_copy(struct rss_desired *dst, const struct rss_desired *src)
{
    *dst = *src;
    dst->peers = src->n_peers ? rss_xcalloc(src->n_peers, sizeof(char *)) : NULL;
    for (size_t i = 0; i < src->n_peers; i++)
        dst->peers[i] = rss_xstrdup(src->peers[i]);
    dst->reason = dup_or_null(src->reason);
}

/* Integers are printed exactly: cJSON prints numbers with 15 significant digits, so 2^53 came back as
 * 9.00719925474099e+15 and no longer decoded (findings/desired-epoch-2pow53.json). The decoders accept
 * [0, 2^53]; nothing rssd writes is larger (epochs and generations count events). */
static void add_uint(cJSON *obj, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    cJSON_AddRawToObject(obj, key, buf);
}

char *rss_recordcodec_desired_encode(const struct rss_desired *d)
{
    _cleanup_json_ cJSON *j = cJSON_CreateObject();
    char id[48];
    add_uint(j, "epoch", d->epoch);
    cJSON_AddStringToObject(j, "action", rss_action_name(d->action));
    if (d->action != RSS_ACTION_NONE) {
        rss_action_id_format(d->id, id, sizeof(id));
        cJSON_AddStringToObject(j, "id", id);
        add_uint(j, "generation", d->generation);
        cJSON *peers = cJSON_AddArrayToObject(j, "peers");
        for (size_t i = 0; i < d->n_peers; i++)
            cJSON_AddItemToArray(peers, cJSON_CreateString(d->peers[i]));
    }
    if (d->position_request.epoch || d->position_request.seq) {
        rss_action_id_format(d->position_request, id, sizeof(id));
        cJSON_AddStringToObject(j, "positionRequest", id);
    }
    if (d->reason)
        cJSON_AddStringToObject(j, "reason", d->reason);
    char *s = cJSON_PrintUnformatted(j);
    if (!s)
        abort(); /* cJSON fails only on allocation */
    return s;
}

static int decode_desired(const cJSON *j, struct rss_desired *d, rss_error_t *err)
{
    const char *ctx = "desired";
    if (get_uint(j, "epoch", ctx, true, &d->epoch, err) < 0 || get_action(j, ctx, &d->action, err) < 0)
        return -1;
    bool act = d->action != RSS_ACTION_NONE;
    if (get_id(j, ctx, act, &d->id, err) < 0 || get_uint(j, "generation", ctx, act, &d->generation, err) < 0)
        return -1;
    if (act && d->id.epoch != d->epoch)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "desired.id: epoch %" PRIu64 " differs from epoch %" PRIu64, d->id.epoch,
                              d->epoch);
    /* A `none` has id {0,0} and generation 0 (record_codec.h); the encoder writes neither, so values
     * decoded from one would not survive a round trip (found by tests/fuzz/fuzz_record_codec). */
    if (!act) {
        d->id = (struct rss_action_id){0, 0};
        d->generation = 0;
    }
    const cJSON *peers = cJSON_GetObjectItemCaseSensitive(j, "peers");
    /* A `none` (fencing, or nothing to do) has no hook to pass peers to; peers on it could only be
     * someone choosing the arguments of the periodic hooks (findings/desired-none-with-peers.json). */
    if (!act && cJSON_GetArraySize(peers) > 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "desired.peers: a none action carries no peers");
    if (peers) {
        if (!cJSON_IsArray(peers))
            return rss_error_make(err, RSS_E_INVALID, 0, "desired.peers: expected an array of strings");
        int n = cJSON_GetArraySize(peers);
        if (n > RSS_RECORD_MAX_PEERS)
            return rss_error_make(err, RSS_E_INVALID, 0, "desired.peers: more than %d entries",
                                  RSS_RECORD_MAX_PEERS);
        d->peers = n ? rss_xcalloc((size_t)n, sizeof(char *)) : NULL;
        const cJSON *p;
        cJSON_ArrayForEach(p, peers)
        {
            if (!cJSON_IsString(p) || !p->valuestring[0] || strlen(p->valuestring) > DNS_NAME_MAX)
                return rss_error_make(err, RSS_E_INVALID, 0,
                                      "desired.peers[%zu]: expected a DNS name of 1-%d characters",
                                      d->n_peers, DNS_NAME_MAX);
            d->peers[d->n_peers++] = rss_xstrdup(p->valuestring);
        }
    }
    const char *reason, *req;
    if (get_str(j, "reason", ctx, false, RSS_RECORD_MAX_TEXT, &reason, err) < 0 ||
        get_str(j, "positionRequest", ctx, false, 64, &req, err) < 0)
        return -1;
    d->reason = dup_or_null(reason);
    if (req && rss_action_id_parse(req, &d->position_request, err) < 0)
        return rss_error_wrap(err, "desired.positionRequest");
    /* {0,0} means "no request" and is not written: decoding one would not survive a round trip. */
    if (req && !d->position_request.epoch && !d->position_request.seq)
        return rss_error_make(err, RSS_E_INVALID, 0, "desired.positionRequest: 0-0 is not a request");
    return 0;
}

int rss_recordcodec_desired_decode(const char *json, struct rss_desired *out, rss_error_t *err)
{
    memset(out, 0, sizeof(*out));
    _cleanup_json_ cJSON *j = parse_capped(json, "desired", err);
    if (!j)
        return -1;
    struct rss_desired d = {0};
    if (decode_desired(j, &d, err) < 0) {
        rss_recordcodec_desired_clear(&d);
        return -1;
    }
    *out = d;
    return 0;
}

/* ---- observed ---- */

void rss_recordcodec_observed_clear(struct rss_observed *o)
{
    if (!o)
        return;
    free(o->container_id);
    free(o->sequence_error);
    free(o->last.message);
    free(o->agent);
    memset(o, 0, sizeof(*o));
}

char *rss_recordcodec_observed_encode(const struct rss_observed *o)
{
    _cleanup_json_ cJSON *j = cJSON_CreateObject();
    char buf[48];
    cJSON_AddStringToObject(j, "containerId", o->container_id ? o->container_id : "");
    add_uint(j, "generation", o->generation);
    cJSON_AddStringToObject(j, "role", rss_role_name(o->role));
    /* Absent means -1 (no status yet); any other code the decoder accepts is written back, so a report
     * survives decode -> encode (a negative code was dropped and came back as -1: found by fuzzing). */
    if (o->status_code != -1)
        cJSON_AddNumberToObject(j, "status", o->status_code);
    if (o->has_sequence) {
        snprintf(buf, sizeof(buf), "%" PRIu64, o->sequence);
        cJSON_AddStringToObject(j, "sequence", buf);
    } else if (o->sequence_error) {
        cJSON_AddStringToObject(j, "sequenceError", o->sequence_error);
    }
    if (o->last.present) {
        cJSON *la = cJSON_AddObjectToObject(j, "lastAction");
        rss_action_id_format(o->last.id, buf, sizeof(buf));
        cJSON_AddStringToObject(la, "id", buf);
        cJSON_AddStringToObject(la, "action", rss_action_name(o->last.action));
        cJSON_AddStringToObject(la, "result", rss_result_name(o->last.result));
        cJSON_AddNumberToObject(la, "exitCode", o->last.exit_code);
        if (o->last.message)
            cJSON_AddStringToObject(la, "message", o->last.message);
    }
    if (o->position_for.epoch || o->position_for.seq) {
        rss_action_id_format(o->position_for, buf, sizeof(buf));
        cJSON_AddStringToObject(j, "positionFor", buf);
        if (o->has_position) {
            snprintf(buf, sizeof(buf), "%" PRIu64, o->position);
            cJSON_AddStringToObject(j, "position", buf);
        }
        if (o->detached)
            cJSON_AddBoolToObject(j, "positionDetached", true);
    }
    add_uint(j, "leaseEpoch", o->lease_epoch);
    rss_time_ms(buf, o->time_ms);
    cJSON_AddStringToObject(j, "time", buf);
    if (o->agent)
        cJSON_AddStringToObject(j, "agent", o->agent);
    char *s = cJSON_PrintUnformatted(j);
    if (!s)
        abort();
    return s;
}

static int decode_last_action(const cJSON *la, struct rss_last_action *l, rss_error_t *err)
{
    const char *ctx = "observed.lastAction";
    if (!cJSON_IsObject(la))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: expected an object", ctx);
    if (get_id(la, ctx, true, &l->id, err) < 0 || get_action(la, ctx, &l->action, err) < 0)
        return -1;
    if (l->action == RSS_ACTION_NONE)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s.action: 'none' is not an action that runs", ctx);
    const char *res, *msg;
    if (get_str(la, "result", ctx, true, 32, &res, err) < 0)
        return -1;
    if (rss_result_parse(res, &l->result) < 0)
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "%s.result: unknown result '%s' (expected pending, ok, failed, timeout, rejected "
            "or interrupted)",
            ctx, res);
    if (get_int(la, "exitCode", ctx, 0, &l->exit_code, err) < 0 ||
        get_str(la, "message", ctx, false, RSS_RECORD_MAX_TEXT, &msg, err) < 0)
        return -1;
    l->message = dup_or_null(msg);
    l->present = true;
    return 0;
}

static int decode_observed(const cJSON *j, struct rss_observed *o, rss_error_t *err)
{
    const char *ctx = "observed";
    const char *cid, *role, *seq, *seqerr, *time, *agent;
    if (get_str(j, "containerId", ctx, false, RSS_RECORD_MAX_TEXT, &cid, err) < 0 ||
        get_uint(j, "generation", ctx, true, &o->generation, err) < 0 ||
        get_str(j, "role", ctx, true, 32, &role, err) < 0)
        return -1;
    o->container_id = rss_xstrdup(cid ? cid : "");
    if (rss_role_parse(role, &o->role) < 0)
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "observed.role: unknown role '%s' (expected unknown, stopped, starting, primary, "
            "secondary or failed)",
            role);
    if (get_int(j, "status", ctx, -1, &o->status_code, err) < 0)
        return -1;
    if (get_str(j, "sequence", ctx, false, 32, &seq, err) < 0 ||
        get_str(j, "sequenceError", ctx, false, RSS_RECORD_MAX_TEXT, &seqerr, err) < 0)
        return -1;
    if (seq && seqerr)
        return rss_error_make(err, RSS_E_INVALID, 0, "observed: both sequence and sequenceError are set");
    if (seq) {
        if (parse_u64_canonical(seq, &o->sequence) < 0)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "observed.sequence: '%s' is not a canonical unsigned 64-bit decimal", seq);
        o->has_sequence = true;
    }
    o->sequence_error = dup_or_null(seqerr);
    const char *pfor, *pos;
    if (get_str(j, "positionFor", ctx, false, 64, &pfor, err) < 0 ||
        get_str(j, "position", ctx, false, 32, &pos, err) < 0)
        return -1;
    if (pfor && rss_action_id_parse(pfor, &o->position_for, err) < 0)
        return rss_error_wrap(err, "observed.positionFor");
    if (pfor && !o->position_for.epoch && !o->position_for.seq)
        return rss_error_make(err, RSS_E_INVALID, 0, "observed.positionFor: 0-0 is not a request");
    if (pos && !pfor)
        return rss_error_make(err, RSS_E_INVALID, 0, "observed.position: without positionFor");
    if (pos) {
        if (parse_u64_canonical(pos, &o->position) < 0)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "observed.position: '%s' is not a canonical unsigned 64-bit decimal", pos);
        o->has_position = true;
    }
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(j, "positionDetached");
    if (det && !cJSON_IsBool(det))
        return rss_error_make(err, RSS_E_INVALID, 0, "observed.positionDetached: expected a boolean");
    if (cJSON_IsTrue(det) && !pos)
        return rss_error_make(err, RSS_E_INVALID, 0, "observed.positionDetached: without position");
    o->detached = cJSON_IsTrue(det);
    const cJSON *la = cJSON_GetObjectItemCaseSensitive(j, "lastAction");
    if (la && decode_last_action(la, &o->last, err) < 0)
        return -1;
    if (get_uint(j, "leaseEpoch", ctx, true, &o->lease_epoch, err) < 0 ||
        get_str(j, "time", ctx, true, 64, &time, err) < 0)
        return -1;
    if (rss_time_parse_ms(time, &o->time_ms, err) < 0)
        return rss_error_wrap(err, "observed.time");
    /* rssd writes UTC only; another zone means another writer. */
    if (time[strlen(time) - 1] != 'Z')
        return rss_error_make(err, RSS_E_INVALID, 0, "observed.time '%.40s': only UTC ('Z') is accepted",
                              time);
    if (get_str(j, "agent", ctx, false, RSS_RECORD_MAX_AGENT, &agent, err) < 0)
        return -1;
    o->agent = dup_or_null(agent);
    return 0;
}

int rss_recordcodec_observed_decode(const char *json, struct rss_observed *out, rss_error_t *err)
{
    memset(out, 0, sizeof(*out));
    _cleanup_json_ cJSON *j = parse_capped(json, "observed", err);
    if (!j)
        return -1;
    struct rss_observed o = {0};
    if (decode_observed(j, &o, err) < 0) {
        rss_recordcodec_observed_clear(&o);
        return -1;
    }
    *out = o;
    return 0;
}
