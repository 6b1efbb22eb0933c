/* agent.h -- the node agent role of rssd: runs hooks in local member containers, publishes `observed`.
 *
 * One `struct rss_agent` per rssd process. rss_agent_run() starts the watches (leader Lease, pods on
 * this node, RSS objects), the heartbeat Lease `rssd-node-<node>`, and the event-driven loop that hands
 * each member to its own worker thread (one job at a time per member, members in parallel), so a long
 * hook never blocks another member or a watch. The rules it enforces are ARCHITECTURE.md section 6
 * (4, 5, 7, 8, 10) as specified in docs/protocol.md; docs/agent.md says why it is built this way.
 *
 * The pure decision functions at the end are public so they can be table-tested without I/O.
 */
#ifndef RSS_AGENT_H
#define RSS_AGENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rss/record_codec.h"
#include "rss/cri.h"
#include "rss/error.h"
#include "rss/kube.h"
#include "rss/namespaces.h"
#include "rss/protocol.h"

struct rss_agent;

struct rss_agent_config {
    struct rss_kube *kube;  /* borrowed; must outlive the agent */
    struct rss_cri *cri;    /* borrowed; must outlive the agent */
    const char *node;       /* this node's name; required */
    const char *ns;         /* rssd's namespace (Leases); required */
    const char *identity;   /* holderIdentity of the heartbeat Lease; NULL = node */
    long fence_timeout_ms;  /* API unreachable this long -> stop local members; 0 = 30000 */
    long heartbeat_ms;      /* heartbeat renew period; 0 = 10000 (the kubelet's node Lease rate) */
    int heartbeat_misses;   /* renewals missed before the node looks silent; 0 = RSS_AGENT_HEARTBEAT_MISSES */
    size_t hook_output_max; /* for messages: the hook output limit the CRI client enforces (bytes) */
    const char *state_dir;  /* node-local dir (tmpfs) for the fence state (rss/fencestate.h); NULL none */
    const struct rss_namespaces *namespaces; /* the managed namespaces (copied); NULL or empty = all */
    /* Called with every view of the leader Lease the agent's watch of it gets (its first GET, then each
     * ADDED/MODIFIED), from the watching thread; rssd feeds the election's candidate with it
     * (rss_election_observe). NULL: none. */
    void (*leader_lease_seen)(void *ud, const cJSON *lease);
    void *leader_lease_ud;
};

/* Validates cfg and creates an agent (copies the strings). Errors: RSS_E_INVALID. */
int rss_agent_new(const struct rss_agent_config *cfg, struct rss_agent **ret, rss_error_t *err);

/* Runs the agent until *stop becomes true, then stops its threads. Hook workers still running a hook
 * are not waited for beyond a short grace: rssd must exit quickly and leave members running; their
 * pending actions are reported `interrupted` by the next instance. Returns 0, or negative when the
 * agent could not start (threads). After it returned with workers still busy,
 * rss_agent_busy_workers() > 0 and the agent (and the kube/cri clients) must not be freed. */
int rss_agent_run(struct rss_agent *a, const atomic_bool *stop, rss_error_t *err);

/* Number of hook workers still running. */
int rss_agent_busy_workers(struct rss_agent *a);

/* For health checks: true once the Lease and the pods were read, and the object and member records of
 * every RSS with a member pod on this node (its narrow watches, docs/agent.md), and not cut off. */
bool rss_agent_ready(struct rss_agent *a);
/* For health checks: ms since the loop last went round (it wakes at least every second). */
int64_t rss_agent_loop_age_ms(struct rss_agent *a);

/* Frees the agent. Accepts NULL. rss_agent_run must have returned with no busy worker. */
void rss_agent_free(struct rss_agent *a);

/* --- the self-fencing failsafe (agent_peers.c; docs/design.md) ------------------------------------ */

/* Where the other agents reach this one (its health server): published in its heartbeat Lease.
 * Call once the server listens; host is this pod's IP ($POD_IP), port the bound one. */
void rss_agent_set_peer_address(struct rss_agent *a, const char *host, int port);

/* The body of GET /peer?nonce=<32 hex digits>: this agent's node, the nonce, the ms since its last
 * successful API call, and an Ed25519 signature over them. NULL for a malformed nonce. Caller frees. */
char *rss_agent_peer_answer(struct rss_agent *a, const char *nonce);

/* Is ip (16 bytes, network order; an IPv4 address as ::ffff:a.b.c.d) the address of a peer agent this one
 * knows (the host of the address its heartbeat Lease published)? The health server keeps room for them. */
bool rss_agent_is_peer(struct rss_agent *a, const unsigned char ip[16]);

/* --- pure decisions (agent_decide.c, the library rss_agent_core) ------------------------------ */

/* The failsafe rule: with the API server unreachable past the fence timeout, keep the members of an RSS
 * running only when this agent reaches EVERY one of the `hosting` agents of that RSS (itself included:
 * `reached`), and none of the reached ones still reaches the API server (then this node is the one cut
 * off). A majority is not enough: the leader may be on the other side (docs/design.md). */
bool rss_agent_failsafe_keep(size_t hosting, size_t reached, bool peer_has_api);

/* A wake (rule 18): what the agent does after its loop did not run for a while (stopped, starved, its node
 * frozen) or at its start. */
enum rss_agent_wake {
    RSS_AGENT_WAKE_NONE = 0, /* no gap: the loop ran */
    RSS_AGENT_WAKE_LOOK,     /* a gap, but the last acknowledged renewal is within the fence timeout: the
                              * leader cannot have judged this node dead; a fence due soon looks first */
    RSS_AGENT_WAKE_FENCE,    /* past the fence timeout: the leader may have judged this node dead, so the
                              * members stop unless the Node proves otherwise (rss_agent_wake_keep) */
};

/* first: the agent's first check (no gap known); gap_ms: since its loop last ran; silence_ms: since its last
 * acknowledged heartbeat renewal (0 = none yet). */
enum rss_agent_wake rss_agent_wake_verdict(bool first, int64_t gap_ms, int64_t silence_ms,
                                           int64_t fence_timeout_ms);

/* Rule 18: may an agent that did not run past its fence timeout keep its members running? Only when its
 * Node, read after the wake, proves that the leader cannot have judged the node dead while it slept:
 * created, and Ready=True (every Ready condition) with a lastTransitionTime, at least a second (the times'
 * granularity) before ok_wall_ms, the wall time of the last acknowledged heartbeat renewal before the gap.
 * Anything else (Ready not True, no Ready condition, a time missing, unreadable or too late, no Node) is no
 * proof. why[size] gets one line saying what the Node said. */
bool rss_agent_wake_keep(const cJSON *node, int64_t ok_wall_ms, char *why, size_t size);

enum rss_agent_verdict {
    RSS_AGENT_SKIP = 0, /* do nothing now (may change later: e.g. the Lease view catches up) */
    RSS_AGENT_EXECUTE,  /* take the action up: write-ahead, hook, report */
    RSS_AGENT_REJECT,   /* report it `rejected` once: it targets an older generation (rule 7) */
};

/* What the agent knows when it looks at a member's `desired`. */
struct rss_agent_view {
    bool lease_known;     /* the leader Lease was read (rule 10) */
    uint64_t lease_epoch; /* its leaseTransitions, never going backwards */
    bool probed;          /* the current container was probed and reported (rule 8, last bullet) */
    bool has_container;   /* a running hook container exists */
    uint64_t generation;  /* the member's current generation (rule 7) */
    bool has_last;        /* observed.lastAction exists */
    struct rss_action_id last_id;
    bool fenced; /* self-fenced: the API is unreachable */
};

/* Decides what to do with `d` (may be NULL: no desired). Writes a one-line reason into reason[size]
 * (for the log and the `rejected` message). Checks, in order: an action at all; the Lease view;
 * epoch equality (rules 4, 10); exactly once (id already taken up); fencing; a probed container;
 * the target generation (rule 7: different -> REJECT). */
enum rss_agent_verdict rss_agent_decide(const struct rss_desired *d, const struct rss_agent_view *v,
                                        char *reason, size_t size);

/* Name of a verdict: "skip", "execute", "reject". */
const char *rss_agent_verdict_name(enum rss_agent_verdict v);

/* Generation bump rules (rule 7, docs/protocol.md "Generation").
 * prev_known: the member had an observed report (from this agent or its predecessor);
 * prev_container / new_container: container ids (NULL = ""). Returns the generation for a probe of
 * new_container: 1 for a member never reported, +1 when the container differs, else unchanged.
 * *reason (may be NULL) gets a static string saying why. */
uint64_t rss_agent_generation_for_container(bool prev_known, uint64_t prev_generation,
                                            const char *prev_container, const char *new_container,
                                            const char **reason);

/* True when a `status` result means the application crashed inside a live container: it was
 * running (primary, secondary or starting) and is now stopped or failed, and the agent did not stop
 * it itself (`we_stopped`). Such a change bumps the generation. */
bool rss_agent_status_is_crash(enum rss_role before, enum rss_role after, bool we_stopped);

/* Maps the outcome of a hook run to a result: err_code 0 = the hook ran (exit_code decides: 0 ok,
 * else failed); RSS_E_TIMEOUT = timeout; RSS_E_NOT_RUNNING / RSS_E_NOT_FOUND = interrupted (the
 * container went away); anything else = failed. */
enum rss_result rss_agent_hook_result(int err_code, int exit_code);

/* Checks that a fence timeout suits a heartbeat period (docs/rules.md, "Timing"): a live agent's fence
 * clock runs up to one period plus one request between two acknowledged renewals, so the fence timeout
 * must leave at least two more renewals after a full period: fence >= 3 x period, period >= 100 ms.
 * Errors: RSS_E_INVALID, saying which. */
int rss_agent_timing_check(long fence_timeout_ms, long heartbeat_ms, rss_error_t *err);

/* The heartbeat Lease's leaseDurationSeconds: misses periods, rounded up to a second, at least 2 s. The
 * leader calls the node silent once its heartbeat did not change for that long, and under an RSS's
 * spec.silentNodePolicy Promote replaces a primary there at once (docs/rules.md, rule 19): fewer misses fail
 * over sooner, and a slow API server or a loaded node more often for nothing (never losing a commit). */
#define RSS_AGENT_HEARTBEAT_MISSES     5
#define RSS_AGENT_HEARTBEAT_MISSES_MIN 2
#define RSS_AGENT_HEARTBEAT_MISSES_MAX 60
long rss_agent_heartbeat_lease_s(long heartbeat_ms, int misses);

/* How long the heartbeat waits after a failed renewal: the period, but at most 2 s, so that an agent
 * whose API came back is heard again (and its fence clock reset) well within its fence timeout. */
long rss_agent_heartbeat_retry_ms(long heartbeat_ms);

/* How long the API server must be silent (since the last acknowledged renewal was sent) before the
 * failsafe starts probing peers and stops reading their Leases: half a period past the next renewal at
 * the defaults, max(fence/3, period + fence/6). A healthy agent's silence reaches a period plus two
 * requests at every renewal, so fence/3 (a period, at the defaults) started a probe round at every
 * heartbeat; never later than fence/2 (fence >= 3 periods), which leaves the probes half the timeout. */
long rss_agent_probe_after_ms(long fence_timeout_ms, long heartbeat_ms);

#endif
