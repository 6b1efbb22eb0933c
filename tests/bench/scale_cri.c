/* scale_cri.c -- one process serving the fake CRI of many simulated nodes for bench_scale_real.sh.
 *
 * Usage: scale_cri DIR N   listens on DIR/node-1.sock .. DIR/node-N.sock (one gRPC server, N unix ports)
 *
 * Every pod has one running container per "boot": ListContainers with the kubelet's label
 * io.kubernetes.pod.uid answers the container c-<uid>-<boot> (RUNNING, labels echoed back), so a pod
 * uid alone identifies a member: no pod registry is needed. SIGUSR1 is a lights-out: the boot counter
 * goes up, every container is new, its application stopped, with a new sequence number. Hooks answer
 * at once by their command's base name (after an `env VAR=...` prefix): sequence prints
 * boot * 1000 + (a hash of the uid) % 100; status exits 7 (stopped), 8 (primary) or 0 (secondary);
 * seed and primary make the application a primary, secondary a secondary, stop stops it; anything
 * else exits 0. An ExecSync on a container of an older boot gets NOT_FOUND, as containerd answers for
 * a removed container. The counts of each hook are written to DIR/hooks.txt on SIGUSR2.
 */
#include <errno.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cri_api.pb-c.h"
#include "rss/cleanup.h"

enum app { APP_STOPPED, APP_SECONDARY, APP_PRIMARY };

struct ctr {
    char *id;
    enum app app;
    struct ctr *next;
};

#define NBUCKETS 4096
static struct ctr *table[NBUCKETS];
static volatile sig_atomic_t boot_bumps, dump_requests;
static unsigned boot = 1;
static long hook_counts[8];
static const char *const hook_names[] = {"sequence",  "status", "seed",  "primary",
                                         "secondary", "stop",   "other", "lists"};

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a: spreads uids over sequences and buckets alike */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* The container of this id, made on first sight (stopped) when its boot is the current one; NULL for
 * an id of an older boot or one we never handed out. */
static struct ctr *lookup(const char *id)
{
    unsigned b;
    const char *dash = strrchr(id, '-');
    if (strncmp(id, "c-", 2) || !dash || sscanf(dash + 1, "%u", &b) != 1 || b != boot)
        return NULL;
    struct ctr **head = &table[hash(id) % NBUCKETS];
    for (struct ctr *c = *head; c; c = c->next)
        if (!strcmp(c->id, id))
            return c;
    struct ctr *c = rss_xcalloc(1, sizeof(*c));
    c->id = rss_xstrdup(id);
    c->next = *head;
    *head = c;
    return c;
}

static void lights_out(void)
{
    for (size_t i = 0; i < NBUCKETS; i++) {
        while (table[i]) {
            struct ctr *c = table[i];
            table[i] = c->next;
            free(c->id);
            free(c);
        }
    }
    boot++;
}

struct reply {
    grpc_status_code status;
    const char *details;
    grpc_slice payload;
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

static void handle_version(struct reply *r)
{
    Runtime__V1__VersionResponse resp = RUNTIME__V1__VERSION_RESPONSE__INIT;
    resp.version = "0.1.0";
    resp.runtime_name = "scale-cri";
    resp.runtime_version = "0.0.1";
    resp.runtime_api_version = "v1";
    reply_message(r, &resp.base);
}

static void handle_list(struct reply *r, const uint8_t *data, size_t len)
{
    Runtime__V1__ListContainersRequest *req = runtime__v1__list_containers_request__unpack(NULL, len, data);
    if (!req) {
        r->status = GRPC_STATUS_INVALID_ARGUMENT;
        r->details = "bad ListContainersRequest";
        return;
    }
    hook_counts[7]++;
    const char *uid = NULL;
    size_t n_sel = req->filter ? req->filter->n_label_selector : 0;
    for (size_t i = 0; i < n_sel; i++)
        if (!strcmp(req->filter->label_selector[i]->key, "io.kubernetes.pod.uid"))
            uid = req->filter->label_selector[i]->value;
    Runtime__V1__ListContainersResponse resp = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
    Runtime__V1__Container c = RUNTIME__V1__CONTAINER__INIT;
    Runtime__V1__Container *pc = &c;
    Runtime__V1__ContainerMetadata meta = RUNTIME__V1__CONTAINER_METADATA__INIT;
    _cleanup_free_ char *id = NULL;
    if (uid && (!req->filter->state ||
                req->filter->state->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING)) {
        id = rss_xasprintf("c-%s-%u", uid, boot);
        meta.name = "main";
        meta.attempt = boot;
        c.id = id;
        c.pod_sandbox_id = "sandbox";
        c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
        c.created_at = (int64_t)boot * 1000000000LL;
        c.metadata = &meta;
        /* The selector's entries and the container's labels have the same layout. */
        c.n_labels = n_sel;
        c.labels = (Runtime__V1__Container__LabelsEntry **)req->filter->label_selector;
        resp.n_containers = 1;
        resp.containers = &pc;
    }
    reply_message(r, &resp.base);
    runtime__v1__list_containers_request__free_unpacked(req, NULL);
}

static void handle_exec(struct reply *r, const uint8_t *data, size_t len)
{
    Runtime__V1__ExecSyncRequest *req = runtime__v1__exec_sync_request__unpack(NULL, len, data);
    if (!req || req->n_cmd == 0) {
        r->status = GRPC_STATUS_UNKNOWN;
        r->details = "exec command cannot be empty";
        if (req)
            runtime__v1__exec_sync_request__free_unpacked(req, NULL);
        return;
    }
    struct ctr *c = lookup(req->container_id);
    if (!c) {
        r->status = GRPC_STATUS_NOT_FOUND;
        r->details = "container not found";
        runtime__v1__exec_sync_request__free_unpacked(req, NULL);
        return;
    }
    size_t k = 0;
    if (!strcmp(req->cmd[0], "env"))
        for (k = 1; k < req->n_cmd && strchr(req->cmd[k], '='); k++)
            ;
    const char *base = k < req->n_cmd ? strrchr(req->cmd[k], '/') : NULL;
    base = base ? base + 1 : (k < req->n_cmd ? req->cmd[k] : "");
    Runtime__V1__ExecSyncResponse resp = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
    char out[32] = "";
    int h = 6;
    if (!strcmp(base, "sequence")) {
        h = 0;
        const char *dash = strrchr(c->id, '-');
        _cleanup_free_ char *uid = rss_xstrndup(c->id + 2, (size_t)(dash - c->id - 2));
        snprintf(out, sizeof(out), "%u\n", boot * 1000 + hash(uid) % 100);
    } else if (!strcmp(base, "status")) {
        h = 1;
        resp.exit_code = c->app == APP_PRIMARY ? 8 : c->app == APP_SECONDARY ? 0 : 7;
    } else if (!strcmp(base, "seed") || !strcmp(base, "primary")) {
        h = !strcmp(base, "seed") ? 2 : 3;
        c->app = APP_PRIMARY;
    } else if (!strcmp(base, "secondary")) {
        h = 4;
        c->app = APP_SECONDARY;
    } else if (!strcmp(base, "stop")) {
        h = 5;
        c->app = APP_STOPPED;
    }
    hook_counts[h]++;
    resp.stdout_bytes.data = (uint8_t *)out;
    resp.stdout_bytes.len = strlen(out);
    reply_message(r, &resp.base);
    runtime__v1__exec_sync_request__free_unpacked(req, NULL);
}

enum { TAG_NEW = 1, TAG_A, TAG_B };
#define TAG(t) ((void *)(intptr_t)(t))

static void wait_tag(grpc_completion_queue *cq, int tag)
{
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN || ev.tag == TAG(tag))
            return;
    }
}

static void serve_call(grpc_completion_queue *cq, grpc_call *call, grpc_call_details *details)
{
    grpc_byte_buffer *req_bb = NULL;
    grpc_op ops[3];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_MESSAGE;
    ops[1].data.recv_message.recv_message = &req_bb;
    if (grpc_call_start_batch(call, ops, 2, TAG(TAG_A), NULL) != GRPC_CALL_OK)
        abort();
    wait_tag(cq, TAG_A);
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
    if (!req_bb) {
        r.status = GRPC_STATUS_CANCELLED;
        r.details = "no request";
    } else if (!grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/Version")) {
        handle_version(&r);
    } else if (!grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/ListContainers")) {
        handle_list(&r, data, len);
    } else if (!grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/ExecSync")) {
        handle_exec(&r, data, len);
    } else if (!grpc_slice_str_cmp(details->method, "/runtime.v1.RuntimeService/StopContainer")) {
        Runtime__V1__StopContainerResponse resp = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
        reply_message(&r, &resp.base);
    } else {
        r.status = GRPC_STATUS_UNIMPLEMENTED;
        r.details = "unknown method";
    }
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
    wait_tag(cq, TAG_B);
    grpc_slice_unref(status_details);
    if (resp_bb)
        grpc_byte_buffer_destroy(resp_bb);
    if (req_bb)
        grpc_byte_buffer_destroy(req_bb);
}

static void on_usr1(int sig)
{
    (void)sig;
    boot_bumps++;
}

static void on_usr2(int sig)
{
    (void)sig;
    dump_requests++;
}

static void dump(const char *dir)
{
    _cleanup_free_ char *path = rss_xasprintf("%s/hooks.txt", dir);
    _cleanup_free_ char *tmp = rss_xasprintf("%s/hooks.txt.tmp", dir);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "boot %u\n", boot);
    for (size_t i = 0; i < sizeof(hook_counts) / sizeof(hook_counts[0]); i++)
        fprintf(f, "%s %ld\n", hook_names[i], hook_counts[i]);
    fclose(f);
    rename(tmp, path);
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: scale_cri DIR N\n");
        return 2;
    }
    const char *dir = argv[1];
    int n = atoi(argv[2]);
    struct sigaction sa = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    grpc_init();
    grpc_server *server = grpc_server_create(NULL, NULL);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(server, cq, NULL);
    for (int i = 1; i <= n; i++) {
        grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
        _cleanup_free_ char *addr = rss_xasprintf("unix:%s/node-%d.sock", dir, i);
        int port = grpc_server_add_http2_port(server, addr, creds);
        grpc_server_credentials_release(creds);
        if (port == 0) {
            fprintf(stderr, "scale_cri: cannot listen on %s\n", addr);
            return 1;
        }
    }
    grpc_server_start(server);
    fprintf(stderr, "scale_cri: serving %d sockets in %s\n", n, dir);
    for (;;) {
        grpc_call *call = NULL;
        grpc_call_details details;
        grpc_metadata_array md;
        grpc_call_details_init(&details);
        grpc_metadata_array_init(&md);
        if (grpc_server_request_call(server, &call, &details, &md, cq, cq, TAG(TAG_NEW)) != GRPC_CALL_OK)
            abort();
        for (;;) {
            gpr_timespec dl =
                gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(50, GPR_TIMESPAN));
            grpc_event ev = grpc_completion_queue_next(cq, dl, NULL);
            /* Signals are handled between calls, so a lights-out never splits one. */
            while (boot_bumps > 0) {
                boot_bumps--;
                lights_out();
            }
            if (dump_requests > 0) {
                dump_requests = 0;
                dump(dir);
            }
            if (ev.type == GRPC_OP_COMPLETE && ev.tag == TAG(TAG_NEW)) {
                if (ev.success)
                    serve_call(cq, call, &details);
                break;
            }
        }
        if (call)
            grpc_call_unref(call);
        grpc_call_details_destroy(&details);
        grpc_metadata_array_destroy(&md);
    }
}
