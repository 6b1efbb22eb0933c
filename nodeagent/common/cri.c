/* cri.c -- CRI runtime.v1 client: unary gRPC C core calls on a unix socket, protobuf-c messages,
 * and the one place where gRPC status becomes rss_errc. */
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

#include "cri_api.pb-c.h"
#include "rss/cleanup.h"
#include "rss/cri.h"
#include "rss/log.h"

/* sockaddr_un.sun_path holds 108 bytes including the NUL. */
#define UNIX_PATH_MAX_LEN  107
#define CONNECT_TIMEOUT_MS 1000

struct rss_cri {
    char *endpoint;    /* "unix:///path" */
    char *socket_path; /* "/path" */
    grpc_channel *channel;
    int call_timeout_ms;
};

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
    case GRPC_STATUS_ABORTED:
    case GRPC_STATUS_UNIMPLEMENTED:
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

static int is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

int rss_cri_detect(const char *root, char **ret, rss_error_t *err)
{
    static const char *const candidates[] = {
        "/run/containerd/containerd.sock", /* containerd */
        "/run/crio/crio.sock",             /* CRI-O */
        "/var/run/crio/crio.sock",
    };
    if (!root)
        root = "";
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
        _cleanup_free_ char *path = rss_xasprintf("%s%s", root, candidates[i]);
        if (is_socket(path)) {
            *ret = rss_xasprintf("unix://%s", path);
            return 0;
        }
    }
    return rss_error_make(err, RSS_E_NOT_FOUND, 0,
                          "no CRI runtime socket found (tried %s/run/containerd/containerd.sock, "
                          "%s/run/crio/crio.sock, %s/var/run/crio/crio.sock); use --cri-endpoint",
                          root, root, root);
}

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
    _cleanup_free_ char *detected = NULL;
    _cleanup_free_ char *path = NULL;

    if (!endpoint) {
        if (rss_cri_detect(NULL, &detected, err) < 0)
            return -1;
        endpoint = detected;
    }
    if (endpoint_path(endpoint, &path, err) < 0)
        return -1;

    int timeout_ms = opts && opts->call_timeout_ms > 0 ? opts->call_timeout_ms : RSS_CRI_CALL_TIMEOUT_MS;
    int backoff_ms =
        opts && opts->reconnect_backoff_ms > 0 ? opts->reconnect_backoff_ms : RSS_CRI_RECONNECT_BACKOFF_MS;

    pthread_once(&once, grpc_setup_once);
    grpc_init();

    struct rss_cri *cri = rss_xcalloc(1, sizeof(*cri));
    cri->socket_path = TAKE_PTR(path);
    cri->endpoint = rss_xasprintf("unix://%s", cri->socket_path);
    cri->call_timeout_ms = timeout_ms;

    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
         .value.integer = RSS_CRI_MAX_RECV_BYTES},
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
static int cri_call(struct rss_cri *cri, const char *rpc, const char *subject, const ProtobufCMessage *req,
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

#define CALL(cri, rpc, subject, req, resp_desc, timeout_ms, respp, err)                                      \
    cri_call((cri), (rpc), (subject), &(req)->base, &(resp_desc), (timeout_ms),                              \
             (ProtobufCMessage **)(respp), (err))

static void free_resp(void *p)
{
    ProtobufCMessage **m = p;
    if (*m)
        protobuf_c_message_free_unpacked(*m, NULL);
}
#define _cleanup_resp_ _cleanup_(free_resp)

/* --- converting maps and strings -------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    return rss_xstrdup(s ? s : "");
}

/* Copies a protobuf-c map (entries {base, key, value}) into a struct rss_cri_map. */
#define COPY_MAP(dst, n_src, src)                                                                            \
    do {                                                                                                     \
        (dst)->n = (n_src);                                                                                  \
        (dst)->items = (n_src) ? rss_xcalloc((n_src), sizeof(*(dst)->items)) : NULL;                         \
        for (size_t i_ = 0; i_ < (n_src); i_++) {                                                            \
            (dst)->items[i_].key = dup_str((src)[i_]->key);                                                  \
            (dst)->items[i_].value = dup_str((src)[i_]->value);                                              \
        }                                                                                                    \
    } while (0)

/* Builds a protobuf-c map for a request from a struct rss_cri_map: *n_out entries in *out, which
 * free_map_entries releases. The strings stay the caller's. */
#define BUILD_MAP(Type, INIT, map, n_out, out)                                                               \
    do {                                                                                                     \
        *(n_out) = (map)->n;                                                                                 \
        *(out) = NULL;                                                                                       \
        if ((map)->n) {                                                                                      \
            Type **v_ = rss_xcalloc((map)->n, sizeof(*v_));                                                  \
            Type *e_ = rss_xcalloc((map)->n, sizeof(*e_));                                                   \
            for (size_t i_ = 0; i_ < (map)->n; i_++) {                                                       \
                Type init_ = INIT;                                                                           \
                e_[i_] = init_;                                                                              \
                e_[i_].key = (char *)(map)->items[i_].key;                                                   \
                e_[i_].value = (char *)((map)->items[i_].value ? (map)->items[i_].value : "");               \
                v_[i_] = &e_[i_];                                                                            \
            }                                                                                                \
            *(out) = v_;                                                                                     \
        }                                                                                                    \
    } while (0)

/* Takes the address of the variable BUILD_MAP filled (a cleanup function). */
static void free_map_entries(void *pp)
{
    void **v = *(void ***)pp;
    if (v) {
        free(v[0]); /* the entry array BUILD_MAP allocated in one piece */
        free(v);
    }
}

static void map_clear(struct rss_cri_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free((char *)m->items[i].key);
        free((char *)m->items[i].value);
    }
    free(m->items);
    m->items = NULL;
    m->n = 0;
}

const char *rss_cri_map_get(const struct rss_cri_map *m, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; m && i < m->n; i++)
        if (m->items[i].key && strcmp(m->items[i].key, key) == 0)
            v = m->items[i].value; /* the last duplicate wins, as in a Go map built from the wire */
    return v;
}

static size_t count_argv(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
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

/* --- sandboxes -------------------------------------------------------------------------------- */

static void copy_sandbox_meta(struct rss_cri_sandbox *s, const Runtime__V1__PodSandboxMetadata *m)
{
    s->name = dup_str(m ? m->name : NULL);
    s->namespace = dup_str(m ? m->namespace_ : NULL);
    s->uid = dup_str(m ? m->uid : NULL);
    s->attempt = m ? m->attempt : 0;
}

int rss_cri_list_sandboxes(struct rss_cri *cri, const struct rss_cri_sandbox_filter *filter,
                           struct rss_cri_sandbox_list *ret, rss_error_t *err)
{
    Runtime__V1__ListPodSandboxRequest req = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
    Runtime__V1__PodSandboxFilter f = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
    Runtime__V1__PodSandboxStateValue sv = RUNTIME__V1__POD_SANDBOX_STATE_VALUE__INIT;
    _cleanup_(free_map_entries) Runtime__V1__PodSandboxFilter__LabelSelectorEntry **sel = NULL;
    _cleanup_resp_ Runtime__V1__ListPodSandboxResponse *resp = NULL;

    if (filter) {
        if (filter->id)
            f.id = (char *)filter->id;
        if (filter->match_state) {
            sv.state = (Runtime__V1__PodSandboxState)filter->state;
            f.state = &sv;
        }
        BUILD_MAP(Runtime__V1__PodSandboxFilter__LabelSelectorEntry,
                  RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT, &filter->labels,
                  &f.n_label_selector, &sel);
        f.label_selector = sel;
        req.filter = &f;
    }
    if (CALL(cri, "ListPodSandbox", NULL, &req, runtime__v1__list_pod_sandbox_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;

    ret->n = resp->n_items;
    ret->items = resp->n_items ? rss_xcalloc(resp->n_items, sizeof(*ret->items)) : NULL;
    for (size_t i = 0; i < resp->n_items; i++) {
        const Runtime__V1__PodSandbox *p = resp->items[i];
        struct rss_cri_sandbox *s = &ret->items[i];
        s->id = dup_str(p->id);
        copy_sandbox_meta(s, p->metadata);
        s->state = p->state;
        s->created_at = p->created_at;
        s->ip = dup_str(NULL);
        COPY_MAP(&s->labels, p->n_labels, p->labels);
        COPY_MAP(&s->annotations, p->n_annotations, p->annotations);
    }
    return 0;
}

int rss_cri_sandbox_status(struct rss_cri *cri, const char *sandbox_id, struct rss_cri_sandbox *ret,
                           rss_error_t *err)
{
    Runtime__V1__PodSandboxStatusRequest req = RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__PodSandboxStatusResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    if (CALL(cri, "PodSandboxStatus", sandbox_id, &req, runtime__v1__pod_sandbox_status_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;
    if (!resp->status)
        return rss_error_make(err, RSS_E_INTERNAL, 0,
                              "CRI PodSandboxStatus %.12s on %s: no status in the answer", sandbox_id,
                              cri->endpoint);
    const Runtime__V1__PodSandboxStatus *p = resp->status;
    memset(ret, 0, sizeof(*ret));
    ret->id = dup_str(p->id);
    copy_sandbox_meta(ret, p->metadata);
    ret->state = p->state;
    ret->created_at = p->created_at;
    ret->ip = dup_str(p->network ? p->network->ip : NULL);
    COPY_MAP(&ret->labels, p->n_labels, p->labels);
    COPY_MAP(&ret->annotations, p->n_annotations, p->annotations);
    return 0;
}

void rss_cri_sandbox_clear(struct rss_cri_sandbox *s)
{
    if (!s)
        return;
    free(s->id);
    free(s->name);
    free(s->namespace);
    free(s->uid);
    free(s->ip);
    map_clear(&s->labels);
    map_clear(&s->annotations);
    memset(s, 0, sizeof(*s));
}

void rss_cri_sandbox_list_clear(struct rss_cri_sandbox_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        rss_cri_sandbox_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* A PodSandboxConfig on the stack plus what it points to; fill with sandbox_config_build. */
struct sandbox_config_buf {
    Runtime__V1__PodSandboxConfig config;
    Runtime__V1__PodSandboxMetadata meta;
    Runtime__V1__LinuxPodSandboxConfig linux_config;
    Runtime__V1__LinuxSandboxSecurityContext sec;
    Runtime__V1__NamespaceOption ns;
    Runtime__V1__PodSandboxConfig__LabelsEntry **labels;
    Runtime__V1__PodSandboxConfig__AnnotationsEntry **annotations;
};

static void sandbox_config_build(struct sandbox_config_buf *b, const struct rss_cri_sandbox_config *c)
{
    runtime__v1__pod_sandbox_config__init(&b->config);
    runtime__v1__pod_sandbox_metadata__init(&b->meta);
    runtime__v1__linux_pod_sandbox_config__init(&b->linux_config);
    runtime__v1__linux_sandbox_security_context__init(&b->sec);
    runtime__v1__namespace_option__init(&b->ns);
    b->meta.name = (char *)(c->name ? c->name : "");
    b->meta.namespace_ = (char *)(c->namespace ? c->namespace : "");
    b->meta.uid = (char *)(c->uid ? c->uid : "");
    b->meta.attempt = c->attempt;
    b->config.metadata = &b->meta;
    /* hostname stays empty: runc refuses to set one without a private UTS namespace. */
    if (c->log_directory)
        b->config.log_directory = (char *)c->log_directory;
    BUILD_MAP(Runtime__V1__PodSandboxConfig__LabelsEntry, RUNTIME__V1__POD_SANDBOX_CONFIG__LABELS_ENTRY__INIT,
              &c->labels, &b->config.n_labels, &b->labels);
    b->config.labels = b->labels;
    BUILD_MAP(Runtime__V1__PodSandboxConfig__AnnotationsEntry,
              RUNTIME__V1__POD_SANDBOX_CONFIG__ANNOTATIONS_ENTRY__INIT, &c->annotations,
              &b->config.n_annotations, &b->annotations);
    b->config.annotations = b->annotations;
    /* Host network (no CNI in the test world); the sandbox's own PID and IPC namespaces. */
    b->ns.network = RUNTIME__V1__NAMESPACE_MODE__NODE;
    b->ns.pid = RUNTIME__V1__NAMESPACE_MODE__POD;
    b->ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
    b->sec.namespace_options = &b->ns;
    b->linux_config.security_context = &b->sec;
    b->config.linux_config = &b->linux_config;
}

static void sandbox_config_release(struct sandbox_config_buf *b)
{
    free_map_entries(&b->labels);
    free_map_entries(&b->annotations);
    b->labels = NULL;
    b->annotations = NULL;
}

int rss_cri_run_sandbox(struct rss_cri *cri, const struct rss_cri_sandbox_config *config, char **id_ret,
                        rss_error_t *err)
{
    Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RunPodSandboxResponse *resp = NULL;
    struct sandbox_config_buf b;
    sandbox_config_build(&b, config);
    req.config = &b.config;
    int r = CALL(cri, "RunPodSandbox", config->name, &req, runtime__v1__run_pod_sandbox_response__descriptor,
                 cri->call_timeout_ms, &resp, err);
    sandbox_config_release(&b);
    if (r < 0)
        return -1;
    *id_ret = dup_str(resp->pod_sandbox_id);
    return 0;
}

int rss_cri_stop_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err)
{
    Runtime__V1__StopPodSandboxRequest req = RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StopPodSandboxResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    return CALL(cri, "StopPodSandbox", sandbox_id, &req, runtime__v1__stop_pod_sandbox_response__descriptor,
                cri->call_timeout_ms, &resp, err);
}

int rss_cri_remove_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err)
{
    Runtime__V1__RemovePodSandboxRequest req = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RemovePodSandboxResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    return CALL(cri, "RemovePodSandbox", sandbox_id, &req,
                runtime__v1__remove_pod_sandbox_response__descriptor, cri->call_timeout_ms, &resp, err);
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

int rss_cri_create_container(struct rss_cri *cri, const char *sandbox_id,
                             const struct rss_cri_container_config *config,
                             const struct rss_cri_sandbox_config *sandbox, char **id_ret, rss_error_t *err)
{
    Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
    Runtime__V1__ContainerConfig cc = RUNTIME__V1__CONTAINER_CONFIG__INIT;
    Runtime__V1__ContainerMetadata meta = RUNTIME__V1__CONTAINER_METADATA__INIT;
    Runtime__V1__ImageSpec image = RUNTIME__V1__IMAGE_SPEC__INIT;
    Runtime__V1__LinuxContainerConfig lc = RUNTIME__V1__LINUX_CONTAINER_CONFIG__INIT;
    Runtime__V1__LinuxContainerResources res = RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
    Runtime__V1__LinuxContainerSecurityContext sec = RUNTIME__V1__LINUX_CONTAINER_SECURITY_CONTEXT__INIT;
    Runtime__V1__NamespaceOption ns = RUNTIME__V1__NAMESPACE_OPTION__INIT;
    _cleanup_(free_map_entries) Runtime__V1__ContainerConfig__LabelsEntry **labels = NULL;
    _cleanup_(free_map_entries) Runtime__V1__ContainerConfig__AnnotationsEntry **annotations = NULL;
    _cleanup_free_ Runtime__V1__KeyValue *env_items = NULL;
    _cleanup_free_ Runtime__V1__KeyValue **envs = NULL;
    _cleanup_free_ Runtime__V1__Mount *mount_items = NULL;
    _cleanup_free_ Runtime__V1__Mount **mounts = NULL;
    _cleanup_resp_ Runtime__V1__CreateContainerResponse *resp = NULL;

    if (!config->name || !config->image)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "CRI CreateContainer: a container needs a name and an image");

    meta.name = (char *)config->name;
    meta.attempt = config->attempt;
    cc.metadata = &meta;
    image.image = (char *)config->image;
    cc.image = &image;
    cc.n_command = count_argv(config->command);
    cc.command = (char **)config->command;
    cc.n_args = count_argv(config->args);
    cc.args = (char **)config->args;
    if (config->working_dir)
        cc.working_dir = (char *)config->working_dir;
    if (config->envs.n) {
        env_items = rss_xcalloc(config->envs.n, sizeof(*env_items));
        envs = rss_xcalloc(config->envs.n, sizeof(*envs));
        for (size_t i = 0; i < config->envs.n; i++) {
            runtime__v1__key_value__init(&env_items[i]);
            env_items[i].key = (char *)config->envs.items[i].key;
            env_items[i].value = (char *)(config->envs.items[i].value ? config->envs.items[i].value : "");
            envs[i] = &env_items[i];
        }
        cc.n_envs = config->envs.n;
        cc.envs = envs;
    }
    if (config->n_mounts) {
        mount_items = rss_xcalloc(config->n_mounts, sizeof(*mount_items));
        mounts = rss_xcalloc(config->n_mounts, sizeof(*mounts));
        for (size_t i = 0; i < config->n_mounts; i++) {
            runtime__v1__mount__init(&mount_items[i]);
            mount_items[i].container_path = (char *)config->mounts[i].container_path;
            mount_items[i].host_path = (char *)config->mounts[i].host_path;
            mount_items[i].readonly = config->mounts[i].readonly;
            mounts[i] = &mount_items[i];
        }
        cc.n_mounts = config->n_mounts;
        cc.mounts = mounts;
    }
    BUILD_MAP(Runtime__V1__ContainerConfig__LabelsEntry, RUNTIME__V1__CONTAINER_CONFIG__LABELS_ENTRY__INIT,
              &config->labels, &cc.n_labels, &labels);
    cc.labels = labels;
    BUILD_MAP(Runtime__V1__ContainerConfig__AnnotationsEntry,
              RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT, &config->annotations, &cc.n_annotations,
              &annotations);
    cc.annotations = annotations;
    if (config->log_path)
        cc.log_path = (char *)config->log_path;
    /* As the kubelet does for a v1 Pod: the pod's (host) network, the container's own PID
     * namespace, so that its CMD is PID 1 and reaps what exec'd hooks leave behind. */
    ns.network = RUNTIME__V1__NAMESPACE_MODE__NODE;
    ns.pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
    ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
    sec.namespace_options = &ns;
    lc.security_context = &sec;
    if (config->memory_limit_bytes > 0) {
        res.memory_limit_in_bytes = config->memory_limit_bytes;
        lc.resources = &res;
    }
    cc.linux_config = &lc;

    struct sandbox_config_buf b;
    sandbox_config_build(&b, sandbox);
    req.pod_sandbox_id = (char *)sandbox_id;
    req.config = &cc;
    req.sandbox_config = &b.config;
    int r = CALL(cri, "CreateContainer", config->name, &req,
                 runtime__v1__create_container_response__descriptor, cri->call_timeout_ms, &resp, err);
    sandbox_config_release(&b);
    if (r < 0)
        return -1;
    *id_ret = dup_str(resp->container_id);
    return 0;
}

int rss_cri_start_container(struct rss_cri *cri, const char *container_id, rss_error_t *err)
{
    Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StartContainerResponse *resp = NULL;
    req.container_id = (char *)container_id;
    return CALL(cri, "StartContainer", container_id, &req, runtime__v1__start_container_response__descriptor,
                cri->call_timeout_ms, &resp, err);
}

int rss_cri_stop_container(struct rss_cri *cri, const char *container_id, int64_t timeout_s, rss_error_t *err)
{
    Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StopContainerResponse *resp = NULL;
    req.container_id = (char *)container_id;
    req.timeout = timeout_s > 0 ? timeout_s : 0;
    return CALL(cri, "StopContainer", container_id, &req, runtime__v1__stop_container_response__descriptor,
                req.timeout * 1000 + cri->call_timeout_ms, &resp, err);
}

int rss_cri_remove_container(struct rss_cri *cri, const char *container_id, rss_error_t *err)
{
    Runtime__V1__RemoveContainerRequest req = RUNTIME__V1__REMOVE_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RemoveContainerResponse *resp = NULL;
    req.container_id = (char *)container_id;
    return CALL(cri, "RemoveContainer", container_id, &req,
                runtime__v1__remove_container_response__descriptor, cri->call_timeout_ms, &resp, err);
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

void rss_cri_exec_result_clear(struct rss_cri_exec_result *r)
{
    if (!r)
        return;
    free(r->out);
    free(r->errout);
    memset(r, 0, sizeof(*r));
}
