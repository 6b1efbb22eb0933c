/* record_codec.h -- the codec of the two documents of a member record (rss/record.h) that carry the
 * leader <-> agent protocol:
 *
 *   desired   written only by the leader: what this member should do
 *   observed  written only by the member's node agent: what it saw and did
 *
 * The JSON is specified in docs/protocol.md. Decoding is strict: a wrong type, an unknown action,
 * role or result, a malformed action id or an out-of-range number is RSS_E_INVALID with a message
 * naming the field, and nothing is returned. Unknown keys are ignored so that a newer writer can
 * add fields. Encoders produce compact JSON (a new string the caller frees).
 *
 * Numbers that may exceed 2^53 (sequences) travel as decimal strings; epochs and generations are
 * JSON integers in [0, 2^53].
 */
#ifndef RSS_RECORD_CODEC_H
#define RSS_RECORD_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rss/error.h"
#include "rss/protocol.h"

/* Caps on decoded input: a record value comes from the API server, and a bug or a compromised writer
 * must not make every reader allocate without bound. */
#define RSS_RECORD_MAX_LEN   65536
#define RSS_RECORD_MAX_PEERS 1024
#define RSS_RECORD_MAX_TEXT  4096 /* reason, messages, container id */
#define RSS_RECORD_MAX_AGENT 64   /* observed.agent, the writer's incarnation */

enum rss_action {
    RSS_ACTION_NONE = 0, /* "none": fencing by a new leader, or nothing to do */
    RSS_ACTION_SEED,
    RSS_ACTION_PRIMARY,
    RSS_ACTION_SECONDARY,
    RSS_ACTION_STOP,
};

enum rss_role {
    RSS_ROLE_UNKNOWN = 0, /* the agent could not tell (e.g. the status hook timed out) */
    RSS_ROLE_STOPPED,
    RSS_ROLE_STARTING, /* write-ahead before seed/primary/secondary (ARCHITECTURE rule 8) */
    RSS_ROLE_PRIMARY,
    RSS_ROLE_SECONDARY,
    RSS_ROLE_FAILED,
};

enum rss_result {
    RSS_RESULT_PENDING = 0, /* written ahead; the hook is running or about to */
    RSS_RESULT_OK,
    RSS_RESULT_FAILED,      /* the hook exited non-zero */
    RSS_RESULT_TIMEOUT,     /* the runtime killed the hook at its timeout */
    RSS_RESULT_REJECTED,    /* not executed: stale epoch or a newer generation (rule 7) */
    RSS_RESULT_INTERRUPTED, /* the agent or the container went away while the hook ran */
};

/* An action id: "<epoch>-<seq>". Unique across leaders because each leader has its own epoch. */
struct rss_action_id {
    uint64_t epoch;
    uint64_t seq;
};

struct rss_desired {
    uint64_t epoch;          /* the leader's epoch (Lease leaseTransitions), rule 4 */
    struct rss_action_id id; /* {0,0} for action none */
    enum rss_action action;
    uint64_t generation; /* the member generation this decision targets (rule 7); 0 for none */
    char **peers;        /* n_peers DNS names appended to the hook's argv; owned */
    size_t n_peers;
    char *reason; /* human-readable why; owned, may be NULL */
    /* Promotion of a standby (spec.failover, docs/rules.md rule 15): the leader asks a running member
     * to read its position now, under this id ({0,0}: no request). It rides on any action, `none`
     * included (a new leader's fencing leaves `none` on every member); the agent answers in
     * observed.position/positionFor without running the action again. */
    struct rss_action_id position_request;
};

struct rss_last_action {
    bool present;
    struct rss_action_id id;
    enum rss_action action;
    enum rss_result result;
    int exit_code;
    char *message; /* owned, may be NULL */
};

struct rss_observed {
    char *container_id;  /* owned, "" when the member has no container */
    uint64_t generation; /* rule 7 */
    enum rss_role role;
    int status_code;   /* last `status` exit code (OCF), -1 when none yet */
    bool has_sequence; /* sequence for this generation is valid */
    uint64_t sequence;
    char *sequence_error; /* owned; set when `sequence` failed or printed garbage */
    struct rss_last_action last;
    uint64_t lease_epoch; /* the leader Lease's leaseTransitions the agent last saw */
    int64_t time_ms;      /* when the agent wrote this, ms since the Unix epoch */
    /* "agent": the incarnation of the agent process that wrote this report (owned; NULL when absent, as
     * from an agent before it was added). A random id made once per process start, so a restarted or
     * rebooted agent always writes a new one: its peers re-read its heartbeat Lease (new address, new key)
     * only when it changes, not on every report (nodeagent/agent_peers_reread.c). Only agents read it. */
    char *agent;
    /* The answer to desired.positionRequest: the `sequence` hook run on the running member after the
     * request was seen (position_for = the request's id; has_position false: the hook gave none).
     * detached: the spec's `detach` hook ran before it and exited 0 (rule 19), so the position is final:
     * this member acknowledges nothing more from the primary it followed. */
    struct rss_action_id position_for;
    bool has_position;
    uint64_t position;
    bool detached;
};

const char *rss_action_name(enum rss_action a); /* "none", "seed", ... */
const char *rss_role_name(enum rss_role r);
const char *rss_result_name(enum rss_result r);
/* Strict: returns 0 and sets *out for a known name, negative otherwise (no error object). */
int rss_action_parse(const char *s, enum rss_action *out);
int rss_role_parse(const char *s, enum rss_role *out);
int rss_result_parse(const char *s, enum rss_result *out);

/* Formats "<epoch>-<seq>" into buf (at least 42 bytes). */
void rss_action_id_format(struct rss_action_id id, char *buf, size_t size);
int rss_action_id_parse(const char *s, struct rss_action_id *out, rss_error_t *err);
bool rss_action_id_equal(struct rss_action_id a, struct rss_action_id b);

char *rss_recordcodec_desired_encode(const struct rss_desired *d);
/* On success *out owns its strings (release with rss_recordcodec_desired_clear). On failure *out is
 * zeroed. */
int rss_recordcodec_desired_decode(const char *json, struct rss_desired *out, rss_error_t *err);
void rss_recordcodec_desired_clear(struct rss_desired *d);
/* Deep copy; dst must be zeroed or cleared. */
void rss_recordcodec_desired_copy(struct rss_desired *dst, const struct rss_desired *src);

char *rss_recordcodec_observed_encode(const struct rss_observed *o);
int rss_recordcodec_observed_decode(const char *json, struct rss_observed *out, rss_error_t *err);
void rss_recordcodec_observed_clear(struct rss_observed *o);

#endif
