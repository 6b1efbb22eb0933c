/* cri.h -- client for the CRI runtime.v1 API (containerd, CRI-O) over gRPC C core on a unix socket.
 *
 * The node agent finds member containers (ListContainers by the kubelet's labels) and runs hooks in
 * them (ExecSync); the test world's kubelet also creates and removes sandboxes and containers. No
 * protobuf or gRPC type appears here: requests are plain C structs, results are copied into plain C
 * structs that the caller owns and releases with the matching *_clear() function.
 *
 * Threads: one `struct rss_cri` may be used by several threads at once (each call has its own
 * completion queue; the channel is shared). Do not fork() after rss_cri_new() (gRPC core does not
 * survive it); use posix_spawn.
 *
 * Every call has a deadline. Calls wait for the channel to become ready (gRPC WAIT_FOR_READY) within
 * that deadline, and the reconnect backoff is short, so a restarted runtime is reached again within
 * about a second of its socket reappearing. A call made while the socket file does not exist fails at
 * once with RSS_E_UNAVAILABLE instead of waiting for the deadline.
 *
 * Errors (err->detail holds the gRPC status code, or 0 when the failure was local):
 *   RSS_E_TIMEOUT      the deadline passed with the runtime connected, or ExecSync's command timed
 *                      out (containerd: DEADLINE_EXCEEDED; CRI-O: exit -1 + "command timed out")
 *   RSS_E_UNAVAILABLE  runtime not reachable: socket missing, connection refused, not a gRPC server,
 *                      or the deadline passed while still connecting. Worth retrying.
 *   RSS_E_NOT_FOUND    no such container or sandbox (gRPC NOT_FOUND)
 *   RSS_E_NOT_RUNNING  the container exists but is not running (containerd: UNKNOWN "container is in
 *                      CONTAINER_EXITED state"; CRI-O: NOT_FOUND "container is not created or running")
 *   RSS_E_INVALID      the command could not be started in the container (missing binary: gRPC UNKNOWN
 *                      "OCI runtime exec failed"), INVALID_ARGUMENT, or bad arguments to this API
 *   RSS_E_TOO_LARGE    a response over the receive limit (RESOURCE_EXHAUSTED)
 *   RSS_E_CANCELLED    gRPC CANCELLED
 *   RSS_E_EXISTS       gRPC ALREADY_EXISTS (e.g. a sandbox name reused)
 *   RSS_E_UNAUTHORIZED gRPC PERMISSION_DENIED / UNAUTHENTICATED
 *   RSS_E_INTERNAL     anything else (UNIMPLEMENTED: the endpoint serves no CRI v1; INTERNAL; a
 *                      response that does not parse)
 * Messages name the RPC and the endpoint, e.g.
 *   "CRI ExecSync on unix:///run/containerd/containerd.sock: failed to exec in container: ...".
 */
#ifndef RSS_CRI_H
#define RSS_CRI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rss/error.h"

/* Default deadline of a non-exec call, and the margin added to an ExecSync/StopContainer timeout. */
#define RSS_CRI_CALL_TIMEOUT_MS 10000
/* Default initial and maximum reconnect backoff. */
#define RSS_CRI_RECONNECT_BACKOFF_MS 200
/* Default receive limit of one answer. An ExecSync answer carries the hook's stdout and stderr, so this
 * bounds what a hook can make rssd hold: a bigger answer is refused by gRPC (RSS_E_TOO_LARGE) before
 * it is buffered, and the hook is reported as "output too large". Runtimes themselves allow 16 MiB. */
#define RSS_CRI_MAX_RECV_BYTES (2 * 1024 * 1024 + 64 * 1024)

struct rss_cri;

struct rss_cri_options {
    int call_timeout_ms;      /* 0: RSS_CRI_CALL_TIMEOUT_MS */
    int reconnect_backoff_ms; /* 0: RSS_CRI_RECONNECT_BACKOFF_MS */
    int max_recv_bytes;       /* 0: RSS_CRI_MAX_RECV_BYTES; the largest answer accepted */
};

/* A string map entry. In requests the strings are the caller's; in results they are owned by the
 * enclosing result and freed by its *_clear(). */
struct rss_cri_kv {
    const char *key;
    const char *value;
};

struct rss_cri_map {
    size_t n;
    struct rss_cri_kv *items;
};

/* The value of `key` in m (the last one if a runtime sent duplicates), or NULL. */
const char *rss_cri_map_get(const struct rss_cri_map *m, const char *key);

/* --- finding the runtime (cri_discover.c; docs/cri.md "Endpoint") ------------------------------ */

/* The known socket paths, in the order tried: i-th path, or NULL past the end; *who (if not NULL) gets the
 * distributions that put a runtime there ("k3s, RKE2"). */
const char *rss_cri_known_socket(size_t i, const char **who);

struct rss_cri_discover_options {
    const char *root;     /* prefixes every known path; NULL or "" for "/" (tests pass a temp dir) */
    int probe_timeout_ms; /* the Version (and ListContainers) call of one candidate; 0: 2000 */
    /* This process's own pod (rssd's $POD_NAMESPACE and $POD_NAME), or NULL: when set, a runtime counts
     * only if it runs a container of that pod, which is what makes it the kubelet's. */
    const char *pod_namespace;
    const char *pod_name;
};

struct rss_cri_discovery {
    char *endpoint; /* "unix:///path" of the runtime found */
    char *runtime;  /* what its Version call said, e.g. "containerd 1.6.20~ds1 (CRI v1)" */
    char *report;   /* every known path and what was found there, "; "-separated, for the log */
};

/* Finds the node's CRI runtime as crictl does, and more carefully: every known path in order; a candidate
 * counts when it is a unix socket that accepts a connection and answers the CRI Version call (a stale
 * socket file of a stopped or removed runtime does not, nor a gRPC server without the CRI service, such
 * as Docker's own containerd); the same socket reached by two paths counts once. With the pod set, the
 * one candidate running it wins, whatever its place in the order. Without it, a single candidate wins,
 * and several are refused: rssd must never act on a runtime other than the kubelet's (a self-fence that
 * stops nothing). Errors, each naming every path and what was found there, and --cri-endpoint:
 *   RSS_E_NOT_FOUND  no candidate answers, or (pod set) none runs the pod; worth retrying shortly after
 *                    a runtime restart or while the runtime is still creating rssd's container
 *   RSS_E_INVALID    several candidates answer (or run the pod) and nothing tells them apart
 * On success fills *ret (release with rss_cri_discovery_clear). */
int rss_cri_discover(const struct rss_cri_discover_options *opts, struct rss_cri_discovery *ret,
                     rss_error_t *err);
void rss_cri_discovery_clear(struct rss_cri_discovery *d);

/* --- connection ------------------------------------------------------------------------------- */

/* Opens a client. `endpoint` is "unix:///path", "unix:/path" or a bare absolute path (rss_cri_discover
 * finds one). `opts` may be NULL. The runtime need not be up yet: nothing is connected until the first
 * call. Errors: RSS_E_INVALID (no endpoint, an unsupported one, e.g. tcp://, or a path over 107 bytes). */
int rss_cri_new(const char *endpoint, const struct rss_cri_options *opts, struct rss_cri **ret,
                rss_error_t *err);

/* Closes the channel and frees the client. No call may be in flight. Accepts NULL. */
void rss_cri_free(struct rss_cri *cri);

/* The normalised endpoint, "unix:///path". Valid until rss_cri_free. */
const char *rss_cri_endpoint(const struct rss_cri *cri);

/* --- Version ---------------------------------------------------------------------------------- */

struct rss_cri_version {
    char *version;             /* "0.1.0" */
    char *runtime_name;        /* "containerd", "cri-o" */
    char *runtime_version;     /* "1.6.20~ds1" */
    char *runtime_api_version; /* "v1" */
};

/* The Version RPC; also the cheap liveness probe of the runtime. */
int rss_cri_get_version(struct rss_cri *cri, struct rss_cri_version *ret, rss_error_t *err);
void rss_cri_version_clear(struct rss_cri_version *v);

/* --- containers ------------------------------------------------------------------------------- */

enum rss_cri_container_state {
    RSS_CRI_CONTAINER_CREATED = 0,
    RSS_CRI_CONTAINER_RUNNING = 1,
    RSS_CRI_CONTAINER_EXITED = 2,
    RSS_CRI_CONTAINER_UNKNOWN = 3,
};

/* Name of a state ("CONTAINER_RUNNING"), or "?" for values this build does not know. */
const char *rss_cri_container_state_name(int state);

struct rss_cri_container {
    char *id;
    char *sandbox_id;
    char *name; /* metadata: PodSpec container name and restart attempt */
    uint32_t attempt;
    char *image;
    char *image_ref;
    int state;          /* enum rss_cri_container_state; unknown values kept as they came */
    int64_t created_at; /* ns since the epoch */
    /* rss_cri_container_status only (0 / "" from ListContainers): */
    int64_t started_at;
    int64_t finished_at;
    int32_t exit_code;
    char *reason; /* "Completed", "Error", "OOMKilled" */
    char *message;
    char *log_path;
    struct rss_cri_map labels;
    struct rss_cri_map annotations;
};

struct rss_cri_container_list {
    size_t n;
    struct rss_cri_container *items;
};

/* All set fields are ANDed; a zeroed filter (or NULL) matches every container, including exited
 * ones: filter on RUNNING and pick the newest created_at to find "the" container of a pod. */
struct rss_cri_container_filter {
    const char *id;         /* NULL: any; unique prefixes accepted */
    const char *sandbox_id; /* NULL: any */
    bool match_state;
    enum rss_cri_container_state state;
    struct rss_cri_map labels; /* e.g. io.kubernetes.pod.uid + io.kubernetes.container.name */
};

int rss_cri_list_containers(struct rss_cri *cri, const struct rss_cri_container_filter *filter,
                            struct rss_cri_container_list *ret, rss_error_t *err);
int rss_cri_container_status(struct rss_cri *cri, const char *container_id, struct rss_cri_container *ret,
                             rss_error_t *err);
void rss_cri_container_clear(struct rss_cri_container *c);
void rss_cri_container_list_clear(struct rss_cri_container_list *l);

/* --- ExecSync --------------------------------------------------------------------------------- */

struct rss_cri_exec_result {
    int exit_code;
    char *out; /* stdout: out_len bytes plus a NUL (the data itself may contain NULs); never NULL
                  after success */
    size_t out_len;
    char *errout; /* stderr, likewise */
    size_t errout_len;
};

/* Runs argv (NULL-terminated, argv[0] not NULL; passed as an argv array, never through a shell) in
 * a running container and waits for it. timeout_s >= 1 is enforced by the runtime (the process is
 * killed); the gRPC deadline is timeout_s plus the call timeout.
 * Returns 0 when the command ran, whatever its exit code: a non-zero exit is a result, not an error.
 * Errors: RSS_E_TIMEOUT (both runtimes' forms), RSS_E_NOT_FOUND, RSS_E_NOT_RUNNING, RSS_E_INVALID
 * (the binary could not be started, or timeout_s < 1), RSS_E_UNAVAILABLE, RSS_E_TOO_LARGE, ...
 * On error *ret is left empty (zeroed). */
int rss_cri_exec_sync(struct rss_cri *cri, const char *container_id, const char *const *argv, int timeout_s,
                      struct rss_cri_exec_result *ret, rss_error_t *err);
void rss_cri_exec_result_clear(struct rss_cri_exec_result *r);

/* --- StopContainer ---------------------------------------------------------------------------- */

/* StopContainer: SIGTERM, then SIGKILL after timeout_s seconds (0: SIGKILL at once); the runtime answers
 * once the container has exited. Idempotent (an exited container is no error). The gRPC deadline is
 * timeout_s plus the call timeout. The agent calls it with 0 when a self-fence `stop` failed: the
 * member container's own command only idles, the kubelet restarts it, and hooks start the application.
 * Errors: RSS_E_NOT_FOUND, RSS_E_TIMEOUT, RSS_E_UNAVAILABLE, RSS_E_INVALID (no id), ... */
int rss_cri_stop_container(struct rss_cri *cri, const char *container_id, int64_t timeout_s,
                           rss_error_t *err);

/* --- error mapping (the one place gRPC status becomes rss_errc; public for tests) -------------- */

/* Maps a gRPC status code (grpc_status_code values) and its details to an rss_errc. `connected`
 * says whether the channel was READY when the call ended: a DEADLINE_EXCEEDED while not connected
 * means the runtime was unreachable (RSS_E_UNAVAILABLE), not slow. Never called with status 0. */
enum rss_errc rss_cri_errc_from_status(int grpc_status, const char *details, bool connected);

/* True if an ExecSync response is CRI-O's timeout form (exit -1, stderr "command timed out"). */
bool rss_cri_exec_timed_out(int exit_code, const char *errout, size_t errout_len);

#endif
