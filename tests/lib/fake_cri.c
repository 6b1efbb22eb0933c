/* fake_cri.c -- an in-process fake CRI server on gRPC C core, for the CRI client's unit tests. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cri_api.pb-c.h"
#include "fake_cri.h"
#include "rss/cleanup.h"

struct fake_cri {
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    atomic_bool stop;
    atomic_int calls;
    atomic_int stops; /* StopContainer calls answered OK */
    atomic_int execs; /* ExecSync calls */
    char *path;
    struct fake_cri_options opts; /* runtime_name owned */
};

enum { TAG_NEW = 1, TAG_A, TAG_B, TAG_SHUTDOWN };
#define TAG(t) ((void *)(intptr_t)(t))

static void wait_tag(grpc_completion_queue *cq, int tag)
{
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN || ev.tag == TAG(tag))
            return;
    }
}

struct reply {
    grpc_status_code status;
    char *details;
    grpc_slice payload; /* sent only when has_payload */
    int has_payload;
};

static void reply_message(struct reply *r, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    r->payload = grpc_slice_malloc(len);
    protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(r->payload));
    r->has_payload = 1;
    r->status = GRPC_STATUS_OK;
}

static void reply_error(struct reply *r, grpc_status_code code, const char *msg)
{
    r->status = code;
    r->details = rss_xstrdup(msg);
}

static void handle_version(struct fake_cri *f, struct reply *r)
{
    Runtime__V1__VersionResponse resp = RUNTIME__V1__VERSION_RESPONSE__INIT;
    resp.version = "0.1.0";
    resp.runtime_name = (char *)(f->opts.runtime_name ? f->opts.runtime_name : "fake-cri");
    resp.runtime_version = "0.0.1";
    resp.runtime_api_version = "v1";
    reply_message(r, &resp.base);
}

static void handle_list_containers(struct reply *r, const uint8_t *data, size_t len)
{
    Runtime__V1__ListContainersRequest *req = runtime__v1__list_containers_request__unpack(NULL, len, data);
    if (!req) {
        reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "bad ListContainersRequest");
        return;
    }
    size_t n_sel = req->filter ? req->filter->n_label_selector : 0;
    size_t n = n_sel + 1;
    Runtime__V1__Container *cs = rss_xcalloc(n, sizeof(*cs));
    Runtime__V1__Container **pcs = rss_xcalloc(n, sizeof(*pcs));
    Runtime__V1__ContainerMetadata meta = RUNTIME__V1__CONTAINER_METADATA__INIT;
    meta.name = "main";
    meta.attempt = 2;
    for (size_t i = 0; i < n_sel; i++) {
        runtime__v1__container__init(&cs[i]);
        cs[i].id = req->filter->label_selector[i]->key;
        cs[i].pod_sandbox_id = req->filter->pod_sandbox_id;
        cs[i].state =
            req->filter->state ? req->filter->state->state : RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED;
        cs[i].metadata = &meta;
        /* Echo the whole selector back as labels: the map entry types have the same layout. */
        cs[i].n_labels = req->filter->n_label_selector;
        cs[i].labels = (Runtime__V1__Container__LabelsEntry **)req->filter->label_selector;
        pcs[i] = &cs[i];
    }
    Runtime__V1__Container__LabelsEntry l1 = RUNTIME__V1__CONTAINER__LABELS_ENTRY__INIT;
    Runtime__V1__Container__LabelsEntry l2 = RUNTIME__V1__CONTAINER__LABELS_ENTRY__INIT;
    Runtime__V1__Container__LabelsEntry *dup[] = {&l1, &l2};
    l1.key = "k";
    l1.value = "first";
    l2.key = "k";
    l2.value = "second";
    runtime__v1__container__init(&cs[n_sel]);
    cs[n_sel].id = "odd";
    cs[n_sel].state = (Runtime__V1__ContainerState)7;
    cs[n_sel].created_at = 1234567890123456789LL;
    cs[n_sel].n_labels = 2;
    cs[n_sel].labels = dup;
    pcs[n_sel] = &cs[n_sel];

    Runtime__V1__ListContainersResponse resp = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
    resp.n_containers = n;
    resp.containers = pcs;
    reply_message(r, &resp.base);
    free(pcs);
    free(cs);
    runtime__v1__list_containers_request__free_unpacked(req, NULL);
}

static void handle_exec(struct reply *r, const uint8_t *data, size_t len)
{
    Runtime__V1__ExecSyncRequest *req = runtime__v1__exec_sync_request__unpack(NULL, len, data);
    if (!req || req->n_cmd == 0) {
        reply_error(r, GRPC_STATUS_UNKNOWN, "exec command cannot be empty");
        if (req)
            runtime__v1__exec_sync_request__free_unpacked(req, NULL);
        return;
    }
    Runtime__V1__ExecSyncResponse resp = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
    const char *cmd = req->cmd[0];
    char *out = NULL;
    size_t out_len = 0;

    if (strcmp(req->container_id, "missing") == 0) {
        reply_error(r, GRPC_STATUS_NOT_FOUND, "failed to find container \"missing\" in store: not found");
    } else if (strcmp(cmd, "echo") == 0) {
        out = rss_xstrdup("");
        for (size_t i = 1; i < req->n_cmd; i++) {
            char *s = rss_xasprintf("%s%s%s", out, i > 1 ? " " : "", req->cmd[i]);
            free(out);
            out = s;
        }
        char *s = rss_xasprintf("%s\n", out);
        free(out);
        out = s;
        out_len = strlen(out);
    } else if (strcmp(cmd, "fail") == 0) {
        resp.stderr_bytes.data = (uint8_t *)"oops\n";
        resp.stderr_bytes.len = 5;
        resp.exit_code = 3;
    } else if (strcmp(cmd, "binary") == 0) {
        out = rss_xmalloc(3);
        memcpy(out, "a\0b", 3);
        out_len = 3;
    } else if (strcmp(cmd, "big") == 0 && req->n_cmd > 1) {
        out_len = strtoul(req->cmd[1], NULL, 10);
        out = rss_xmalloc(out_len ? out_len : 1);
        memset(out, 'x', out_len);
    } else if (strcmp(cmd, "crio-timeout") == 0) {
        resp.stderr_bytes.data = (uint8_t *)"command timed out";
        resp.stderr_bytes.len = strlen("command timed out");
        resp.exit_code = -1;
    } else if (strcmp(cmd, "slow") == 0 && req->n_cmd > 1) {
        struct timespec ts = {.tv_sec = atoi(req->cmd[1]) / 1000,
                              .tv_nsec = (atoi(req->cmd[1]) % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        out = rss_xstrdup("slow\n");
        out_len = 5;
    } else if (strcmp(cmd, "garbage") == 0) {
        r->payload = grpc_slice_from_copied_buffer("\xff\xff\xff", 3);
        r->has_payload = 1;
        r->status = GRPC_STATUS_OK;
    } else if (strcmp(cmd, "status") == 0 && req->n_cmd > 2) {
        reply_error(r, (grpc_status_code)atoi(req->cmd[1]), req->cmd[2]);
    } else {
        reply_error(r, GRPC_STATUS_UNKNOWN, "fake: unknown command");
    }
    if (!r->details && !r->has_payload) {
        resp.stdout_bytes.data = (uint8_t *)out;
        resp.stdout_bytes.len = out_len;
        reply_message(r, &resp.base);
    }
    free(out);
    runtime__v1__exec_sync_request__free_unpacked(req, NULL);
}

static void handle_stop(struct fake_cri *f, struct reply *r, const uint8_t *data, size_t len)
{
    Runtime__V1__StopContainerRequest *req = runtime__v1__stop_container_request__unpack(NULL, len, data);
    if (!req || !req->container_id || !*req->container_id) {
        reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "container id is empty");
    } else if (strcmp(req->container_id, "missing") == 0) {
        reply_error(r, GRPC_STATUS_NOT_FOUND,
                    "an error occurred when try to find container \"missing\": not found");
    } else {
        Runtime__V1__StopContainerResponse resp = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
        reply_message(r, &resp.base);
        atomic_fetch_add(&f->stops, 1);
    }
    if (req)
        runtime__v1__stop_container_request__free_unpacked(req, NULL);
}

static void serve_call(struct fake_cri *f, grpc_call *call, grpc_call_details *details)
{
    grpc_byte_buffer *req_bb = NULL;
    grpc_op ops[3];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_MESSAGE;
    ops[1].data.recv_message.recv_message = &req_bb;
    if (grpc_call_start_batch(call, ops, 2, TAG(TAG_A), NULL) != GRPC_CALL_OK)
        abort();
    wait_tag(f->cq, TAG_A);

    grpc_slice req = grpc_empty_slice();
    if (req_bb) {
        grpc_byte_buffer_reader reader;
        if (grpc_byte_buffer_reader_init(&reader, req_bb)) {
            req = grpc_byte_buffer_reader_readall(&reader);
            grpc_byte_buffer_reader_destroy(&reader);
        }
    }
    struct reply r = {.status = GRPC_STATUS_OK};
    const uint8_t *data = GRPC_SLICE_START_PTR(req);
    size_t len = GRPC_SLICE_LENGTH(req);
    if (!req_bb)
        reply_error(&r, GRPC_STATUS_CANCELLED, "no request (client gone)");
    else if (f->opts.no_cri)
        reply_error(&r, GRPC_STATUS_UNIMPLEMENTED, "unknown service runtime.v1.RuntimeService");
    else if (grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/Version") == 0)
        handle_version(f, &r);
    else if (grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/ListContainers") == 0 &&
             f->opts.no_containers) {
        Runtime__V1__ListContainersResponse none = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
        reply_message(&r, &none.base);
    } else if (grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/ListContainers") == 0)
        handle_list_containers(&r, data, len);
    else if (grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/ExecSync") == 0) {
        atomic_fetch_add(&f->execs, 1);
        handle_exec(&r, data, len);
    } else if (grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/StopContainer") == 0)
        handle_stop(f, &r, data, len);
    else
        reply_error(&r, GRPC_STATUS_UNIMPLEMENTED, "unknown method");
    grpc_slice_unref(req);

    grpc_byte_buffer *resp_bb = NULL;
    grpc_slice status_details = grpc_slice_from_copied_string(r.details ? r.details : "");
    int cancelled = 0;
    size_t n = 0;
    memset(ops, 0, sizeof(ops));
    if (r.has_payload) {
        resp_bb = grpc_raw_byte_buffer_create(&r.payload, 1);
        grpc_slice_unref(r.payload);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = resp_bb;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = r.status;
    ops[n++].data.send_status_from_server.status_details = r.details ? &status_details : NULL;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &cancelled;
    if (grpc_call_start_batch(call, ops, n, TAG(TAG_B), NULL) != GRPC_CALL_OK)
        abort();
    wait_tag(f->cq, TAG_B);

    grpc_slice_unref(status_details);
    if (resp_bb)
        grpc_byte_buffer_destroy(resp_bb);
    if (req_bb)
        grpc_byte_buffer_destroy(req_bb);
    free(r.details);
    atomic_fetch_add(&f->calls, 1);
}

static void *serve(void *arg)
{
    struct fake_cri *f = arg;
    for (;;) {
        grpc_call *call = NULL;
        grpc_call_details details;
        grpc_metadata_array md;
        grpc_call_details_init(&details);
        grpc_metadata_array_init(&md);
        if (grpc_server_request_call(f->server, &call, &details, &md, f->cq, f->cq, TAG(TAG_NEW)) !=
            GRPC_CALL_OK)
            abort();
        bool got = false;
        while (!got) {
            gpr_timespec dl =
                gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(20, GPR_TIMESPAN));
            grpc_event ev = grpc_completion_queue_next(f->cq, dl, NULL);
            if (ev.type == GRPC_OP_COMPLETE && ev.tag == TAG(TAG_NEW)) {
                got = ev.success;
                if (!got)
                    break;
            } else if (ev.type == GRPC_QUEUE_TIMEOUT && atomic_load(&f->stop)) {
                break;
            }
        }
        if (got) {
            serve_call(f, call, &details);
            grpc_call_unref(call);
        }
        grpc_call_details_destroy(&details);
        grpc_metadata_array_destroy(&md);
        if (!got) {
            /* Stopping: the pending request_call completes (success=0) during shutdown. */
            grpc_server_shutdown_and_notify(f->server, f->cq, TAG(TAG_SHUTDOWN));
            grpc_server_cancel_all_calls(f->server);
            wait_tag(f->cq, TAG_SHUTDOWN);
            return NULL;
        }
    }
}

struct fake_cri *fake_cri_start(const char *path)
{
    return fake_cri_start_with(path, NULL);
}

struct fake_cri *fake_cri_start_with(const char *path, const struct fake_cri_options *opts)
{
    grpc_init();
    struct fake_cri *f = rss_xcalloc(1, sizeof(*f));
    f->path = rss_xstrdup(path);
    if (opts) {
        f->opts = *opts;
        f->opts.runtime_name = opts->runtime_name ? rss_xstrdup(opts->runtime_name) : NULL;
    }
    f->server = grpc_server_create(NULL, NULL);
    f->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(f->server, f->cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    _cleanup_free_ char *addr = rss_xasprintf("unix:%s", path);
    int port = grpc_server_add_http2_port(f->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        grpc_server_destroy(f->server);
        grpc_completion_queue_shutdown(f->cq);
        grpc_completion_queue_destroy(f->cq);
        free((char *)f->opts.runtime_name);
        free(f->path);
        free(f);
        grpc_shutdown();
        return NULL;
    }
    grpc_server_start(f->server);
    if (pthread_create(&f->thread, NULL, serve, f) != 0)
        abort();
    return f;
}

void fake_cri_stop(struct fake_cri *f)
{
    if (!f)
        return;
    atomic_store(&f->stop, true);
    pthread_join(f->thread, NULL);
    grpc_server_destroy(f->server);
    grpc_completion_queue_shutdown(f->cq);
    while (grpc_completion_queue_next(f->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(f->cq);
    unlink(f->path);
    free((char *)f->opts.runtime_name);
    free(f->path);
    free(f);
    grpc_shutdown();
}

int fake_cri_calls(struct fake_cri *f)
{
    return atomic_load(&f->calls);
}

int fake_cri_stops(struct fake_cri *f)
{
    return atomic_load(&f->stops);
}

int fake_cri_execs(struct fake_cri *f)
{
    return atomic_load(&f->execs);
}
