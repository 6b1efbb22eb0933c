/* cri.c -- CRI runtime.v1 client for what rssd itself calls (Version, ListContainers, ExecSync,
 * StopContainer): unary gRPC C core calls on a unix socket, protobuf-c messages, and the one place where
 * gRPC status becomes rss_errc. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cri_internal.h"
#include "rss/cleanup.h"
#include "rss/log.h"

/* sockaddr_un.sun_path holds 108 bytes including the NUL. */
#define UNIX_PATH_MAX_LEN  107
#define CONNECT_TIMEOUT_MS 1000

/* --- error mapping ---------------------------------------------------------------------------- */

static bool has(const char *s, const char *needle)
{
    return s && strstr(s, needle);
}

/* containerd: "container is in CONTAINER_EXITED state"; CRI-O: "container is not created or
 * running"; shims: "... not running". */
static bool says_not_running(const char *details)
{
    return (has(details, "container is in CONTAINER_") && has(details, " state")) ||
           has(details, "not created or running") || has(details, "not running");
}

enum rss_errc rss_cri_errc_from_status(int grpc_status, const char *details, bool connected)
{
    switch ((grpc_status_code)grpc_status) {
    case GRPC_STATUS_OK:
        return RSS_E_INTERNAL; /* not an error: a caller bug */
    case GRPC_STATUS_CANCELLED:
        return RSS_E_CANCELLED;
    case GRPC_STATUS_UNKNOWN:
        /* containerd returns plain Go errors as UNKNOWN; the message is all there is. */
        if (says_not_running(details))
            return RSS_E_NOT_RUNNING;
        if (has(details, "OCI runtime exec failed") || has(details, "executable file not found"))
            return RSS_E_INVALID;
        if (has(details, "server is not initialized yet"))
            return RSS_E_UNAVAILABLE;
        return RSS_E_INTERNAL;
    case GRPC_STATUS_INVALID_ARGUMENT:
    case GRPC_STATUS_OUT_OF_RANGE:
        return RSS_E_INVALID;
    case GRPC_STATUS_DEADLINE_EXCEEDED:
        /* With wait-for-ready, a call to a runtime that is down waits for the deadline too. */
        return connected ? RSS_E_TIMEOUT : RSS_E_UNAVAILABLE;
    case GRPC_STATUS_NOT_FOUND:
        return says_not_running(details) ? RSS_E_NOT_RUNNING : RSS_E_NOT_FOUND;
    case GRPC_STATUS_ALREADY_EXISTS:
        return RSS_E_EXISTS;
    case GRPC_STATUS_PERMISSION_DENIED:
    case GRPC_STATUS_UNAUTHENTICATED:
        return RSS_E_UNAUTHORIZED;
    case GRPC_STATUS_RESOURCE_EXHAUSTED:
        return RSS_E_TOO_LARGE;
    case GRPC_STATUS_FAILED_PRECONDITION:
        return says_not_running(details) ? RSS_E_NOT_RUNNING : RSS_E_INTERNAL;
    case GRPC_STATUS_UNAVAILABLE:
        return RSS_E_UNAVAILABLE;
    case GRPC_STATUS_UNIMPLEMENTED:
        return RSS_E_UNSUPPORTED;
    case GRPC_STATUS_ABORTED:
    case GRPC_STATUS_INTERNAL:
    case GRPC_STATUS_DATA_LOSS:
    default:
        return RSS_E_INTERNAL;
    }
}

bool rss_cri_exec_timed_out(int exit_code, const char *errout, size_t errout_len)
{
    static const char msg[] = "command timed out";
    return exit_code == -1 && errout && errout_len >= sizeof(msg) - 1 &&
           memcmp(errout, msg, sizeof(msg) - 1) == 0;
}

static const char *status_name(int s)
{
    static const char *const names[] = {
        "OK",        "CANCELLED",       "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",   "OUT_OF_RANGE",    "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED",
    };
    if (s >= 0 && (size_t)s < sizeof(names) / sizeof(names[0]))
        return names[s];
    return "?";
}

/* --- gRPC process state ----------------------------------------------------------------------- */

/* gRPC core's own log lines go through ours (one format, one level setting): its errors as
 * warnings (our errors carry what matters to callers), the rest at debug level. */
static void grpc_log_to_rss(gpr_log_func_args *args)
{
    rss_log(args->severity == GPR_LOG_SEVERITY_ERROR ? RSS_LOG_WARN : RSS_LOG_DEBUG, "grpc %s:%d: %s",
            args->file, args->line, args->message);
}

static void grpc_setup_once(void)
{
    gpr_set_log_function(grpc_log_to_rss);
}

/* --- endpoint --------------------------------------------------------------------------------- */

/* "unix:///p", "unix:/p" or "/p" -> "/p". */
static int endpoint_path(const char *endpoint, char **ret, rss_error_t *err)
{
    const char *p = endpoint;
    if (strncmp(p, "unix://", 7) == 0)
        p += 7;
    else if (strncmp(p, "unix:", 5) == 0)
        p += 5;
    if (p[0] != '/')
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "unsupported CRI endpoint \"%s\": expected unix:///absolute/path", endpoint);
    if (strlen(p) > UNIX_PATH_MAX_LEN)
        return rss_error_make(err, RSS_E_INVALID, 0, "CRI endpoint \"%s\": socket path longer than %d bytes",
                              endpoint, UNIX_PATH_MAX_LEN);
    *ret = rss_xstrdup(p);
    return 0;
}

int rss_cri_new(const char *endpoint, const struct rss_cri_options *opts, struct rss_cri **ret,
                rss_error_t *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    _cleanup_free_ char *path = NULL;

    if (!endpoint)
        return rss_error_make(err, RSS_E_INVALID, 0, "no CRI endpoint given");
    if (endpoint_path(endpoint, &path, err) < 0)
        return -1;

    int timeout_ms = opts && opts->call_timeout_ms > 0 ? opts->call_timeout_ms : RSS_CRI_CALL_TIMEOUT_MS;
    int max_recv = opts && opts->max_recv_bytes > 0 ? opts->max_recv_bytes : RSS_CRI_MAX_RECV_BYTES;
    int backoff_ms =
        opts && opts->reconnect_backoff_ms > 0 ? opts->reconnect_backoff_ms : RSS_CRI_RECONNECT_BACKOFF_MS;

    pthread_once(&once, grpc_setup_once);
    grpc_init();

    struct rss_cri *cri = rss_xcalloc(1, sizeof(*cri));
    cri->socket_path = TAKE_PTR(path);
    cri->endpoint = rss_xasprintf("unix://%s", cri->socket_path);
    cri->call_timeout_ms = timeout_ms;

    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, .value.integer = max_recv},
        /* A short constant backoff: the runtime is local, and a restarted one must be reached again
         * within about a second. Calls use WAIT_FOR_READY, so they drive the reconnect. */
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, .value.integer = backoff_ms},
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, .value.integer = backoff_ms},
        /* The minimum time one connection attempt may take (default 20 s): a socket whose owner
         * accepts but never speaks HTTP/2 must not hold the channel for that long. */
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
         .value.integer = CONNECT_TIMEOUT_MS},
        /* Our own subchannel: no backoff state shared with other clients of the same socket. */
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, .value.integer = 1},
    };
    grpc_channel_args chargs = {.num_args = sizeof(args) / sizeof(args[0]), .args = args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    cri->channel = grpc_channel_create(cri->endpoint, creds, &chargs);
    grpc_channel_credentials_release(creds);
    if (!cri->channel) {
        rss_cri_free(cri);
        return rss_error_make(err, RSS_E_INTERNAL, 0, "CRI: cannot create a gRPC channel to %s", endpoint);
    }
    *ret = cri;
    return 0;
}

void rss_cri_free(struct rss_cri *cri)
{
    if (!cri)
        return;
    if (cri->channel)
        grpc_channel_destroy(cri->channel);
    free(cri->endpoint);
    free(cri->socket_path);
    free(cri);
    grpc_shutdown();
}

const char *rss_cri_endpoint(const struct rss_cri *cri)
{
    return cri->endpoint;
}

/* --- one unary call --------------------------------------------------------------------------- */

static char *slice_to_string(grpc_slice s)
{
    size_t n = GRPC_SLICE_LENGTH(s);
    char *r = rss_xmalloc(n + 1);
    memcpy(r, GRPC_SLICE_START_PTR(s), n);
    r[n] = '\0';
    return r;
}

/* Sends `req` to /runtime.v1.RuntimeService/<rpc> and unpacks the answer into *resp (free with
 * protobuf_c_message_free_unpacked). `subject` (an id, or NULL) only goes into messages. */
int cri_call(struct rss_cri *cri, const char *rpc, const char *subject, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *resp_desc, int64_t timeout_ms, ProtobufCMessage **resp,
             rss_error_t *err)
{
    _cleanup_free_ char *what = subject ? rss_xasprintf("CRI %s %.12s on %s", rpc, subject, cri->endpoint)
                                        : rss_xasprintf("CRI %s on %s", rpc, cri->endpoint);

    /* Without this check a call to a runtime whose socket is gone would wait for its whole
     * deadline (wait-for-ready); a missing socket is a clear "runtime down" already. */
    struct stat st;
    if (stat(cri->socket_path, &st) < 0) {
        int e = errno;
        return rss_error_make(err, RSS_E_UNAVAILABLE, 0, "%s: socket %s: %s", what, cri->socket_path,
                              strerror(e));
    }
    if (!S_ISSOCK(st.st_mode))
        return rss_error_make(err, RSS_E_UNAVAILABLE, 0, "%s: %s is not a socket", what, cri->socket_path);

    size_t len = protobuf_c_message_get_packed_size(req);
    grpc_slice payload = grpc_slice_malloc(len);
    protobuf_c_message_pack(req, GRPC_SLICE_START_PTR(payload));
    grpc_byte_buffer *send_bb = grpc_raw_byte_buffer_create(&payload, 1);
    grpc_slice_unref(payload);

    char path[128];
    snprintf(path, sizeof(path), "/runtime.v1.RuntimeService/%s", rpc);
    grpc_slice method = grpc_slice_from_copied_string(path);
    gpr_timespec deadline =
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_call *call = grpc_channel_create_call(cri->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL,
                                               deadline, NULL);
    grpc_slice_unref(method);

    grpc_metadata_array init_md, trail_md;
    grpc_metadata_array_init(&init_md);
    grpc_metadata_array_init(&trail_md);
    grpc_byte_buffer *recv_bb = NULL;
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    int r = 0;
    int tag;

    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send_bb;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &init_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv_bb;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trail_md;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &details;

    grpc_call_error ce = call ? grpc_call_start_batch(call, ops, 6, &tag, NULL) : GRPC_CALL_ERROR;
    if (ce != GRPC_CALL_OK) {
        r = rss_error_make(err, RSS_E_INTERNAL, 0, "%s: cannot start the call (grpc_call_error %d)", what,
                           (int)ce);
        goto out;
    }
    grpc_event ev = grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type != GRPC_OP_COMPLETE) {
        r = rss_error_make(err, RSS_E_INTERNAL, 0, "%s: completion queue failed (%d)", what, (int)ev.type);
        goto out;
    }

    if (status != GRPC_STATUS_OK) {
        _cleanup_free_ char *msg = slice_to_string(details);
        bool connected = grpc_channel_check_connectivity_state(cri->channel, 0) == GRPC_CHANNEL_READY;
        enum rss_errc code = rss_cri_errc_from_status(status, msg, connected);
        if (status == GRPC_STATUS_DEADLINE_EXCEEDED && !connected)
            r = rss_error_make(err, code, status, "%s: runtime not reachable within %lld ms (%s)", what,
                               (long long)timeout_ms, msg);
        else
            r = rss_error_make(err, code, status, "%s: %s (%s)", what, msg[0] ? msg : "no details",
                               status_name(status));
        goto out;
    }
    if (!recv_bb) {
        r = rss_error_make(err, RSS_E_INTERNAL, 0, "%s: status OK without a response message", what);
        goto out;
    }

    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, recv_bb)) {
        r = rss_error_make(err, RSS_E_INTERNAL, 0, "%s: cannot read the response", what);
        goto out;
    }
    grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
    *resp = protobuf_c_message_unpack(resp_desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    grpc_byte_buffer_reader_destroy(&reader);
    if (!*resp)
        r = rss_error_make(err, RSS_E_INTERNAL, 0, "%s: malformed %s", what, resp_desc->name);

out:
    if (recv_bb)
        grpc_byte_buffer_destroy(recv_bb);
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&init_md);
    grpc_metadata_array_destroy(&trail_md);
    grpc_byte_buffer_destroy(send_bb);
    if (call)
        grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return r < 0 ? -1 : 0;
}

/* --- maps -------------------------------------------------------------------------------------- */

const char *rss_cri_map_get(const struct rss_cri_map *m, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; m && i < m->n; i++)
        if (m->items[i].key && strcmp(m->items[i].key, key) == 0)
            v = m->items[i].value; /* the last duplicate wins, as in a Go map built from the wire */
    return v;
}

/* --- Version ---------------------------------------------------------------------------------- */

int rss_cri_get_version(struct rss_cri *cri, struct rss_cri_version *ret, rss_error_t *err)
{
    Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__VersionResponse *resp = NULL;
    req.version = "0.1.0";
    if (CALL(cri, "Version", NULL, &req, runtime__v1__version_response__descriptor, cri->call_timeout_ms,
             &resp, err) < 0)
        return -1;
    ret->version = dup_str(resp->version);
    ret->runtime_name = dup_str(resp->runtime_name);
    ret->runtime_version = dup_str(resp->runtime_version);
    ret->runtime_api_version = dup_str(resp->runtime_api_version);
    return 0;
}

void rss_cri_version_clear(struct rss_cri_version *v)
{
    if (!v)
        return;
    free(v->version);
    free(v->runtime_name);
    free(v->runtime_version);
    free(v->runtime_api_version);
    memset(v, 0, sizeof(*v));
}

/* --- containers ------------------------------------------------------------------------------- */

const char *rss_cri_container_state_name(int state)
{
    switch (state) {
    case RSS_CRI_CONTAINER_CREATED:
        return "CONTAINER_CREATED";
    case RSS_CRI_CONTAINER_RUNNING:
        return "CONTAINER_RUNNING";
    case RSS_CRI_CONTAINER_EXITED:
        return "CONTAINER_EXITED";
    case RSS_CRI_CONTAINER_UNKNOWN:
        return "CONTAINER_UNKNOWN";
    default:
        return "?";
    }
}

int rss_cri_list_containers(struct rss_cri *cri, const struct rss_cri_container_filter *filter,
                            struct rss_cri_container_list *ret, rss_error_t *err)
{
    Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
    Runtime__V1__ContainerFilter f = RUNTIME__V1__CONTAINER_FILTER__INIT;
    Runtime__V1__ContainerStateValue sv = RUNTIME__V1__CONTAINER_STATE_VALUE__INIT;
    _cleanup_(free_map_entries) Runtime__V1__ContainerFilter__LabelSelectorEntry **sel = NULL;
    _cleanup_resp_ Runtime__V1__ListContainersResponse *resp = NULL;

    if (filter) {
        if (filter->id)
            f.id = (char *)filter->id;
        if (filter->sandbox_id)
            f.pod_sandbox_id = (char *)filter->sandbox_id;
        if (filter->match_state) {
            sv.state = (Runtime__V1__ContainerState)filter->state;
            f.state = &sv;
        }
        BUILD_MAP(Runtime__V1__ContainerFilter__LabelSelectorEntry,
                  RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT, &filter->labels,
                  &f.n_label_selector, &sel);
        f.label_selector = sel;
        req.filter = &f;
    }
    if (CALL(cri, "ListContainers", NULL, &req, runtime__v1__list_containers_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;

    ret->n = resp->n_containers;
    ret->items = resp->n_containers ? rss_xcalloc(resp->n_containers, sizeof(*ret->items)) : NULL;
    for (size_t i = 0; i < resp->n_containers; i++) {
        const Runtime__V1__Container *p = resp->containers[i];
        struct rss_cri_container *c = &ret->items[i];
        c->id = dup_str(p->id);
        c->sandbox_id = dup_str(p->pod_sandbox_id);
        c->name = dup_str(p->metadata ? p->metadata->name : NULL);
        c->attempt = p->metadata ? p->metadata->attempt : 0;
        c->image = dup_str(p->image ? p->image->image : NULL);
        c->image_ref = dup_str(p->image_ref);
        c->state = p->state;
        c->created_at = p->created_at;
        c->reason = dup_str(NULL);
        c->message = dup_str(NULL);
        c->log_path = dup_str(NULL);
        COPY_MAP(&c->labels, p->n_labels, p->labels);
        COPY_MAP(&c->annotations, p->n_annotations, p->annotations);
    }
    return 0;
}

int rss_cri_container_status(struct rss_cri *cri, const char *container_id, struct rss_cri_container *ret,
                             rss_error_t *err)
{
    Runtime__V1__ContainerStatusRequest req = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__ContainerStatusResponse *resp = NULL;
    req.container_id = (char *)container_id;
    if (CALL(cri, "ContainerStatus", container_id, &req, runtime__v1__container_status_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;
    if (!resp->status)
        return rss_error_make(err, RSS_E_INTERNAL, 0,
                              "CRI ContainerStatus %.12s on %s: no status in the answer", container_id,
                              cri->endpoint);
    const Runtime__V1__ContainerStatus *p = resp->status;
    memset(ret, 0, sizeof(*ret));
    ret->id = dup_str(p->id);
    /* ContainerStatus has no sandbox id; the sandbox_id label-free lookup is ListContainers'. */
    ret->sandbox_id = dup_str(NULL);
    ret->name = dup_str(p->metadata ? p->metadata->name : NULL);
    ret->attempt = p->metadata ? p->metadata->attempt : 0;
    ret->image = dup_str(p->image ? p->image->image : NULL);
    ret->image_ref = dup_str(p->image_ref);
    ret->state = p->state;
    ret->created_at = p->created_at;
    ret->started_at = p->started_at;
    ret->finished_at = p->finished_at;
    ret->exit_code = p->exit_code;
    ret->reason = dup_str(p->reason);
    ret->message = dup_str(p->message);
    ret->log_path = dup_str(p->log_path);
    COPY_MAP(&ret->labels, p->n_labels, p->labels);
    COPY_MAP(&ret->annotations, p->n_annotations, p->annotations);
    return 0;
}

void rss_cri_container_clear(struct rss_cri_container *c)
{
    if (!c)
        return;
    free(c->id);
    free(c->sandbox_id);
    free(c->name);
    free(c->image);
    free(c->image_ref);
    free(c->reason);
    free(c->message);
    free(c->log_path);
    map_clear(&c->labels);
    map_clear(&c->annotations);
    memset(c, 0, sizeof(*c));
}

void rss_cri_container_list_clear(struct rss_cri_container_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        rss_cri_container_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* --- ExecSync --------------------------------------------------------------------------------- */

static char *copy_bytes(const ProtobufCBinaryData *b, size_t *len)
{
    *len = b->data ? b->len : 0;
    char *r = rss_xmalloc(*len + 1);
    if (*len)
        memcpy(r, b->data, *len);
    r[*len] = '\0';
    return r;
}

int rss_cri_exec_sync(struct rss_cri *cri, const char *container_id, const char *const *argv, int timeout_s,
                      struct rss_cri_exec_result *ret, rss_error_t *err)
{
    Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__ExecSyncResponse *resp = NULL;

    memset(ret, 0, sizeof(*ret));
    if (!container_id || !argv || !argv[0])
        return rss_error_make(err, RSS_E_INVALID, 0, "CRI ExecSync on %s: empty container id or command",
                              cri->endpoint);
    /* 0 would mean "no timeout" to the runtime: a hung hook must never hang the agent. */
    if (timeout_s < 1)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "CRI ExecSync %.12s on %s: timeout must be >= 1 s, got %d", container_id,
                              cri->endpoint, timeout_s);
    req.container_id = (char *)container_id;
    req.n_cmd = count_argv(argv);
    req.cmd = (char **)argv;
    req.timeout = timeout_s;
    if (CALL(cri, "ExecSync", container_id, &req, runtime__v1__exec_sync_response__descriptor,
             (int64_t)timeout_s * 1000 + cri->call_timeout_ms, &resp, err) < 0)
        return -1;

    const ProtobufCBinaryData *se = &resp->stderr_bytes;
    if (rss_cri_exec_timed_out(resp->exit_code, (const char *)se->data, se->data ? se->len : 0))
        return rss_error_make(err, RSS_E_TIMEOUT, 0,
                              "CRI ExecSync %.12s on %s: %s: command timed out after %d s", container_id,
                              cri->endpoint, argv[0], timeout_s);
    ret->exit_code = resp->exit_code;
    ret->out = copy_bytes(&resp->stdout_bytes, &ret->out_len);
    ret->errout = copy_bytes(&resp->stderr_bytes, &ret->errout_len);
    return 0;
}

int rss_cri_stop_container(struct rss_cri *cri, const char *container_id, int64_t timeout_s, rss_error_t *err)
{
    Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StopContainerResponse *resp = NULL;
    if (!container_id || !*container_id)
        return rss_error_make(err, RSS_E_INVALID, 0, "CRI StopContainer on %s: empty container id",
                              cri->endpoint);
    req.container_id = (char *)container_id;
    req.timeout = timeout_s > 0 ? timeout_s : 0;
    return CALL(cri, "StopContainer", container_id, &req, runtime__v1__stop_container_response__descriptor,
                req.timeout * 1000 + cri->call_timeout_ms, &resp, err);
}

void rss_cri_exec_result_clear(struct rss_cri_exec_result *r)
{
    if (!r)
        return;
    free(r->out);
    free(r->errout);
    memset(r, 0, sizeof(*r));
}
