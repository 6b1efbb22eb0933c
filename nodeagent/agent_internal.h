/* agent_internal.h -- state shared by the agent's files (agent*.c, heartbeat.c, fence*.c); not public. */
#ifndef RSS_AGENT_INTERNAL_H
#define RSS_AGENT_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rss/agent.h"
#include "rss/namespaces.h"
#include "rss/record_codec.h"
#include "rss/clock.h"
#include "rss/fencestate.h"
#include "rss/hook.h"
#include "rss/spec.h"

#define RSS_AGENT_INCARNATION_LEN 16 /* hex characters of rss_agent.incarnation */

/* A parsed RSS shared by reference: a worker keeps its spec even if the RSS changes meanwhile. */
struct agent_spec {
    int refs;  /* under agent.lock */
    char *key; /* "ns/name" */
    bool valid;
    bool seen; /* during a relist */
    struct rss_spec spec;
    char **
        nodes; /* the nodes of its members, from .status.memberStatus (with the records': agent_spec_nodes) */
    size_t n_nodes, cap_nodes;
    cJSON *obj; /* the RSS object as read (no managedFields), for the fence state (fence_persist.c) */
};

/* One pod on this node carrying the member label. Fields marked (watch) are written by the pod
 * watch under agent.lock; fields marked (worker) belong to the member's worker while `busy` and are
 * otherwise touched only under agent.lock. */
struct agent_member {
    struct agent_member *next;
    /* (watch) */
    char *ns, *pod, *uid, *rss, *container_name;
    /* From the member's record (rss/record.h), kept in step by agent_member_sync: */
    char *rv;             /* the record's resourceVersion, NULL while it has none */
    char *desired_json;   /* its desired, when written for this pod uid, or NULL */
    char *observed_json;  /* its observed, when about this pod uid, or NULL */
    bool seen;            /* during a relist */
    bool fence_done;      /* fence.c ran `stop` on it; the next job re-probes */
    bool fence_started;   /* fence.c started `stop` in this cut-off period */
    bool fence_committed; /* ... and decided to stop it (no last look at the API server pending) */
    bool fence_wake;      /* ... and that fence is a wake's (rule 18): its Node decides, not the API server */
    bool wake_pending;    /* a wake's fence waits to start for it (rule 18, fence.c wake_start) */
    bool failsafe_kept;   /* fence.c kept it running in this cut-off period (logged once) */
    int64_t vouch_lost_ms; /* monotonic: when the peers stopped vouching after having kept it, in this
                              cut-off period (the end of a shared outage); 0 = not */
    bool gone;             /* deleted while a worker holds it: the worker frees it */
    /* (loop) */
    bool busy;
    bool wake;
    int64_t next_due_ms; /* monotonic; 0 = now */
    /* (worker) */
    bool have_obs; /* obs is what we (or our predecessor) published */
    struct rss_observed obs;
    char *container_id; /* the probed container, "" none */
    bool probed;
    bool we_stopped;       /* the last role change to stopped was our own `stop` */
    bool dirty;            /* obs differs from what was published */
    int64_t status_due_ms; /* monotonic: next periodic `status` */
    char *last_skip;       /* last skip/reject reason logged, to log a decision once */
};

/* A member record ConfigMap in rssd's namespace as last seen by its RSS's record watch (under agent.lock):
 * the records of every member of each RSS that has a member on this node (agent_rss_watch.c). */
struct agent_record {
    struct agent_record *next;
    char *ns, *rss, *pod, *rv; /* rss: its label, which the watch selects on */
    cJSON *cm;                 /* the whole object */
    bool seen;                 /* during a relist */
};

/* A peer agent, learned from its heartbeat Lease (agent_peers.c; under peers_lock). */
struct agent_peer {
    char *node;
    char *url; /* http://<address>/peer */
    unsigned char key[32];
    int64_t reached_ms;   /* monotonic: its last valid signed answer; 0 none */
    long long api_age_ms; /* what it said: ms since its last successful API call */
    int64_t read_ms;      /* monotonic: its Lease last read; 0 never (known from the fence state file) */
    int64_t
        suspect_ms; /* monotonic: a record of a member on its node changed (it may have restarted); 0 none */
    /* The agent incarnation its Lease names ("" none read yet, or an rssd from before it), and the one a
     * suspect waits for its Lease to show: the writer of the report that made it a suspect ("" a report
     * naming none: read for SUSPECT_MS, as before observed.agent). */
    char agent[RSS_AGENT_INCARNATION_LEN + 1], want[RSS_AGENT_INCARNATION_LEN + 1];
};

/* One namespace's pod watch (ns NULL: cluster-wide). Its re-lists judge only its namespace's members as
 * gone, so one namespace's relist never drops another's. */
struct agent_scope {
    struct rss_agent *a;
    const char *ns; /* borrowed from rss_agent.managed */
    bool synced;    /* under agent.lock */
};

/* The two narrow watches of one RSS that has a member pod on this node (agent_rss_watch.c): its object by
 * name and its member records by label. Fields under agent.lock but `stop`. */
struct agent_rss_watch {
    struct agent_rss_watch *next;
    struct rss_agent *a;
    char *ns, *name, *key; /* key "ns/name", as agent_spec's */
    atomic_bool stop;      /* set (under agent.lock) when the RSS left the node or the agent stops */
    pthread_t th[2];       /* the spec and the records watch */
    bool started[2], done[2];
    bool spec_synced, records_synced; /* each watch's first list arrived */
};

struct rss_agent {
    struct rss_kube *kube;
    struct rss_cri *cri;
    char *node, *ns, *identity;
    /* This process's incarnation, written into every `observed` it publishes (observed.agent): random, made
     * once per start, so a peer tells a new agent on this node from a report of the same one. */
    char incarnation[RSS_AGENT_INCARNATION_LEN + 1];
    /* When it started (wall clock, ms since the Unix epoch), published with it in the heartbeat Lease: the
     * leader takes a report of another incarnation written before it for one this process replaced. */
    int64_t started_wall_ms;
    long fence_timeout_ms, heartbeat_ms;
    int heartbeat_misses;
    void (*leader_lease_seen)(void *ud, const cJSON *lease); /* rss_agent_config's */
    void *leader_lease_ud;
    size_t hook_output_max;
    const atomic_bool *stop;
    struct rss_namespaces managed;  /* --namespaces; n == 0: every namespace */
    struct agent_scope *pod_scopes; /* one per managed namespace (or one cluster-wide) */
    size_t n_scopes;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct agent_member *members;
    struct agent_spec **specs;
    size_t n_specs, cap_specs;
    bool lease_known;
    bool lease_read; /* the first GET answered (found or not) */
    uint64_t lease_epoch;
    struct agent_record *records;
    struct agent_rss_watch *rss_watches; /* one per RSS with a member here */
    struct agent_rss_watch *rss_retired; /* stopped, their threads not joined yet */
    bool pods_synced;
    bool fenced;
    int workers;

    /* Monotonic ms at which the last acknowledged heartbeat renewal was *sent*: the agent's view of
     * "the API server hears me". Only the heartbeat stamps it, because the leader judges a node dead
     * from its heartbeat Lease alone; a watch event or another write proves less (a one-way cut still
     * delivers watch events). Stamped with the send time, never the reply time, so the fence deadline
     * derived from it never falls after the leader's window for this node opens. */
    atomic_llong api_ok_ms;

    /* The fence state file (fence_persist.c), NULL = none kept; the heartbeat thread writes it. */
    char *state_path;
    char boot_id[RSS_FENCESTATE_BOOT_LEN];
    bool state_failing;    /* heartbeat thread only: the last write failed (logged once) */
    int64_t fence_from_ms; /* monotonic: no self-fencing before (the restored peers get probed first) */
    int state_lock_fd;     /* the node's agent lock in --state-dir (fence_persist.c), -1 = none held */
    /* Lock held (fence.c): the previous fence check, and when a gap between two checks showed that this
     * agent itself had not run (SIGSTOP, a starved CPU): monotonic ms, 0 = none. */
    int64_t fence_check_ms, stalled_ms;
    /* Lock held (fence.c), rule 18: what the previous check saw, so that a wake is judged by the last
     * acknowledged renewal before the gap, not one the heartbeat thread got in after the thaw: api_ok_ms
     * then (0 = none), its wall time, and CLOCK_BOOTTIME - CLOCK_MONOTONIC then (a suspend adds to it).
     * fence_persist.c sets them from the state file at start. */
    int64_t fence_seen_ok_ms, fence_seen_ok_wall_ms, fence_seen_off_ms;
    /* Lock held (fence.c): the last wake past the fence timeout (monotonic, 0 = none waiting) and the wall
     * time of the renewal before it, which the Node's Ready and creation must predate. */
    int64_t woke_ms, woke_ok_wall_ms;

    /* The failsafe (agent_peers.c). */
    void *peer_key;     /* EVP_PKEY *: this process's Ed25519 key */
    char *peer_pub;     /* its public key, base64 */
    char *peer_address; /* host:port others reach us at, NULL until the health server listens */
    pthread_mutex_t peers_lock;
    struct agent_peer *peers;
    size_t n_peers, cap_peers;
    int64_t
        peers_listed_ms; /* heartbeat thread only: the due peers' Leases last read (settling, unconfirmed) */
    int64_t peers_missing_ms; /* heartbeat thread only: the unknown ones last looked for */
    int64_t peers_first_ms;   /* heartbeat thread only: the first refresh (the settling period starts) */
    atomic_llong loop_tick_ms;
};

/* agent_worker.c (lock held): counts a worker and starts fn(arg) on a detached thread; on failure the
 * count is undone and arg is still the caller's. A worker calls agent_worker_done, lock held, as its
 * last act on the agent. */
int agent_worker_start(struct rss_agent *a, void *(*fn)(void *), void *arg, rss_error_t *err);
void agent_worker_done(struct rss_agent *a);

/* agent_hook.c: the one hook runner (used by the reconcile and by self-fencing). */
struct agent_hook_out {
    int errc; /* 0: the hook ran */
    int exit_code;
    enum rss_result result;
    char *out; /* stdout */
    size_t out_len;
    char *msg; /* for lastAction.message / sequenceError */
};
/* Runs hook `kind` of `spec` in container cid with the peers appended (env: what the hook may learn,
 * passed when the spec asks for it, rss/hook.h; NULL = nothing); the ExecSync timeout is the
 * hook's, so the runtime kills a hung hook (rule 6). `why` goes into the log line. Never fails: the
 * outcome is in *h (clear it with agent_hook_out_clear). */
void agent_hook_run(struct rss_agent *a, const struct rss_spec *spec, const char *ns, const char *pod,
                    const char *cid, enum rss_hook_kind kind, const struct rss_hook_env *env,
                    char *const *peers, size_t n_peers, const char *why, struct agent_hook_out *h);
void agent_hook_out_clear(struct agent_hook_out *h);
/* fence.c: the self-fencing stop of one member: hook `stop` in container cid, and when it failed or
 * timed out, the container killed through CRI StopContainer (timeout 0). spec NULL (its RSS's spec cannot be
 * used here): the kill alone. True when it killed. */
bool agent_fence_stop(struct rss_agent *a, const struct rss_spec *spec, const char *ns, const char *pod,
                      const char *cid, const char *why);
/* fence.c (takes the lock): the longest time the `stop` of a self-fence may take here, published in the
 * heartbeat Lease (RSS_ANNOTATION_STOP_TIMEOUT): the stop timeout, rounded up to whole seconds as the
 * runtime gets it, of each member's RSS spec held; 0 for one it cannot use (killed at once). */
long long agent_fence_stop_ms(struct rss_agent *a);
/* A printable one-line copy of at most 512 bytes of s (untrusted hook output). */
char *agent_one_line(const char *s, size_t len);

/* agent_members.c (lock held unless said otherwise) */
void agent_member_ingest(struct rss_agent *a, const cJSON *pod);
void agent_member_delete(struct rss_agent *a, const char *ns, const char *name);
void agent_member_free(struct agent_member *m);
/* The member records (rss/record.h): ingest/delete a record, and copy a member's record into it. */
/* ingest: true when the record's `observed` is new or changed (its agent wrote: maybe a new agent). */
bool agent_record_ingest(struct rss_agent *a, const cJSON *cm);
struct agent_record *agent_record_find(struct rss_agent *a, const char *ns, const char *pod); /* or NULL */
void agent_record_delete(struct rss_agent *a, const cJSON *cm);
void agent_records_clear(struct rss_agent *a);
/* A relist of RSS ns/rss's records: mark clears their `seen`, sweep drops those still not `seen`. */
void agent_records_mark(struct rss_agent *a, const char *ns, const char *rss);
void agent_records_sweep(struct rss_agent *a, const char *ns, const char *rss);
void agent_member_sync(struct rss_agent *a, struct agent_member *m);
struct agent_spec *agent_spec_get(struct rss_agent *a, const char *ns, const char *name); /* +1 ref */
void agent_spec_put(struct rss_agent *a, struct agent_spec *s);                           /* -1 ref */
/* The spec valid or not (+1 ref), or NULL: self-fencing stops the members of an invalid one too (fence.c). */
struct agent_spec *agent_spec_hold(struct rss_agent *a, const char *ns, const char *name);
/* The failsafe's peers for RSS s (lock held): the nodes of its status's memberStatus and those its member
 * records name as where their `observed` was written (observedNode), without duplicates, in *nodes (free
 * with agent_nodes_free; none when the status names none). Returns how many. */
size_t agent_spec_nodes(struct rss_agent *a, const struct agent_spec *s, char ***nodes);
void agent_nodes_free(char **nodes, size_t n);
void agent_spec_set(struct rss_agent *a, const cJSON *cr);
void agent_spec_delete(struct rss_agent *a, const char *ns, const char *name);
/* By key "ns/name": the spec, valid or not, without a reference; drop: true if there was one. */
struct agent_spec *agent_spec_find(const struct rss_agent *a, const char *key);
bool agent_spec_drop(struct rss_agent *a, const char *key);
/* Without the lock: the newest RUNNING container of the pod's first container. *id = NULL if none. */
int agent_find_container(struct rss_agent *a, const char *uid, const char *cname, char **id,
                         rss_error_t *err);

/* agent_watch.c: the pod watch threads (one per scope) and the leader Lease's. */
void *agent_watch_pods(void *arg); /* arg = struct agent_scope * */
void *agent_watch_lease(void *arg);

/* agent_rss_watch.c: the per-RSS watches (lock held unless said otherwise). update: starts the watches of
 * each RSS that gained a member on this node, stops (and forgets the spec and records of) each that has
 * none left, joins those that ended. synced: both watches of ns/name listed (false when it has none);
 * all_synced: every current one has. stop_all (lock not held): stops and joins them all, at agent stop. */
void agent_rss_watch_update(struct rss_agent *a);
bool agent_rss_watch_synced(struct rss_agent *a, const char *ns, const char *name);
bool agent_rss_watch_all_synced(struct rss_agent *a);
void agent_rss_watch_stop_all(struct rss_agent *a);

/* agent_reconcile.c: one job of a member's worker (thread entry; arg = struct agent_job *). */
struct agent_job {
    struct rss_agent *a;
    struct agent_member *m;
    struct agent_spec *spec; /* +1 ref */
    char *rv, *desired_json, *observed_json;
    char *uid, *cname, *rss; /* the pod's, copied at dispatch: the pod watch may replace the member's */
    bool lease_known;
    uint64_t lease_epoch;
    bool fenced;
    bool fence_done;
};
void *agent_job_run(void *arg);
/* Frees a job's copies (not its spec reference: the caller puts that back under the lock). */
void agent_job_free(struct agent_job *j);

/* agent_publish.c: merge-patches `observed` (with observedFor = uid) into the member's record, creating
 * the record (labelled with `rss`) when there is none yet. resource_version != NULL makes it a CAS
 * (RSS_E_CONFLICT when the record changed, RSS_E_NOT_FOUND when it is gone). *new_rv and *new_desired
 * (may be NULL) get the record's resourceVersion and its desired for this uid after the write. */
int agent_publish(struct rss_agent *a, const char *ns, const char *pod, const char *uid, const char *rss,
                  const struct rss_observed *o, const char *resource_version, char **new_rv,
                  char **new_desired, rss_error_t *err);

/* agent_peers.c: the failsafe. init/free with the agent; the annotation for our heartbeat Lease (caller
 * frees; NULL while we have no address); the prober thread; verify (public for tests); vouch: the failsafe
 * verdict for an RSS whose members are on `nodes`, with a one-line why. vouch takes peers_lock: callers may
 * hold a->lock (lock order: lock, then peers_lock). */
int agent_peers_init(struct rss_agent *a, rss_error_t *err);
void agent_peers_free(struct rss_agent *a);
char *agent_peers_annotation(struct rss_agent *a);
/* The peers this agent needs: the nodes (but its own) of the RSS that have members here (agent_spec_nodes:
 * their status and their records), sorted and without duplicates, in *nodes (free each and the array).
 * Returns how many. */
size_t agent_peers_wanted(struct rss_agent *a, char ***nodes);
void *agent_peers_prober(void *arg);
/* The prober's connection cache (a curl multi handle, kept across rounds: one connection per peer), and one
 * round through it: asks every peer in peers[0..n) (node, url, key) at once, each within PROBE_TIMEOUT, so
 * a round is as long as one probe however many peers are silent; records each valid signed answer and
 * returns how many vouched. */
CURLM *agent_peers_probe_multi(void);
size_t agent_peers_probe_round(struct rss_agent *a, CURLM *m, const struct agent_peer *peers, size_t n);
bool agent_peers_verify(const unsigned char key[32], const char *node, const char *nonce, const char *answer,
                        long long *age_ms);
bool agent_peers_vouch(struct rss_agent *a, char *const *nodes, size_t n_nodes, char *why, size_t size);
/* This process's private key, base64 (caller frees; NULL if it cannot be read), and the adoption of a
 * predecessor's (fence_persist.c, same boot): false, and the key kept, when it is not a valid one. */
char *agent_peers_private(struct rss_agent *a);
bool agent_peers_adopt(struct rss_agent *a, const char *b64);
/* The known peers as [{"node","address","key"}] (caller deletes), and back (fence_persist.c). */
cJSON *agent_peers_snapshot(struct rss_agent *a);
void agent_peers_restore(struct rss_agent *a, const cJSON *peers);
/* Do we know where `node`'s agent answers? (takes peers_lock) */
bool agent_peers_known(struct rss_agent *a, const char *node);
/* Takes a peer's address and key from its heartbeat Lease `lease` (read just now); true when they changed. */
bool agent_peers_learn(struct rss_agent *a, const cJSON *lease);

/* agent_peers_reread.c: the failsafe's reads of its peers' Leases, at the heartbeat (refresh, below) and
 * as soon as there is a reason to think a peer's agent changed (the reader thread). record_changed: the
 * record watch saw the `observed` of member ns/pod of RSS `rss` change (agent_record_ingest said so; lock
 * held; takes peers_lock): suspects its node's agent when this agent hosts a member of the same RSS, unless
 * the report names the agent incarnation (observed.agent) that node's Lease already showed. settled
 * (peers_lock held): p's Lease was just read (`changed`: a new address or key); true when p is no suspect any
 * more: its Lease shows the incarnation the suspect waits for, or the window for reading passed. reread_due:
 * whether to read p now, window_ms = agent_peers_window(p). The pure decisions (agent_peers_suspect.c); the
 * reader thread reads the suspects. */
void agent_peers_record_changed(struct rss_agent *a, const char *ns, const char *rss, const char *pod);
/* Whether this agent's copy of node's Lease is known current (takes lock, then peers_lock): the Lease it
 * read named an incarnation, and every record of a member the leader places on node that names the
 * incarnation that wrote it names that one. */
bool agent_peers_confirmed(struct rss_agent *a, const char *node);
/* refresh: the heartbeat thread, after a successful renew, reads the Leases agent_peers_due names. */
void agent_peers_refresh(struct rss_agent *a);
/* The peers whose Lease the next refresh reads at `now` (heartbeat thread; takes lock and peers_lock):
 * all the wanted ones every 2 s while settling (the first 30 s), the ones not known every 2 s, and after
 * settling, once a minute, the ones agent_peers_confirmed cannot confirm. Returns due->n; the flags say
 * which clocks a successful read restarts. Free with agent_peers_due_clear. */
struct agent_peers_due {
    char **nodes;
    size_t n;
    bool all, missing, unconfirmed;
};
size_t agent_peers_due(struct rss_agent *a, int64_t now, struct agent_peers_due *due);
void agent_peers_due_clear(struct agent_peers_due *due);
bool agent_peers_settled(const struct agent_peer *p, int64_t now_ms, bool changed);
void agent_peers_was_read(struct agent_peer *p, int64_t now_ms, bool changed); /* settles: peers_lock */
int64_t agent_peers_window(const struct agent_peer *p);
bool agent_peers_reread_due(int64_t now_ms, int64_t read_ms, int64_t suspect_ms, int64_t window_ms);
void *agent_peers_reader(void *arg);

/* agent_members.c (takes the lock): does `node` host a member of an RSS that has members here? */
bool agent_peer_wanted(struct rss_agent *a, const char *node);

/* fence_persist.c: the fence state across an rssd restart (rss/fencestate.h). restore: at start, before
 * the threads (the fence clock, members, specs and peers of the previous process of this boot); save:
 * the heartbeat thread, after each acknowledged renewal, with the send time it stamped. */
void agent_fence_state_restore(struct rss_agent *a);
/* One agent per node and state directory: waits (polling every 500 ms, ticking the loop clock so that
 * the liveness probe does not restart a process that only waits) for an exclusive flock on
 * <state-dir>/fence-<node>.lock, held until the agent is freed. False when *stop was set first. Without
 * --state-dir there is nothing to share and nothing to lock. */
bool agent_state_lock(struct rss_agent *a, const atomic_bool *stop);
void agent_fence_state_save(struct rss_agent *a, int64_t api_ok_mono_ms);

/* heartbeat.c: the heartbeat thread (renews Lease rssd-node-<node>; stamps api_ok_ms). */
void *agent_heartbeat(void *arg);

/* fence.c: called by the loop every tick (lock held): enters/leaves the fenced state; on entering
 * it starts one thread per member that runs `stop` through CRI only, so a worker blocked on the
 * unreachable API cannot delay the fence. agent_fenced() takes the lock. */
void agent_fence_check(struct rss_agent *a, int64_t now_ms);
/* fence.c: at exit, kills the container of every member whose fence `stop` still runs; one whose fence is
 * still taking its last look at the API server only when a look here (1 s at most) gets no answer either,
 * one whose wake's fence is still reading the Node only when a read here does not prove it alive (lock not
 * held). */
void agent_fence_finish(struct rss_agent *a);
bool agent_fenced(struct rss_agent *a);

#endif
