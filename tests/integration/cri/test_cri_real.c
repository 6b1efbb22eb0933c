/* test_cri_real.c -- the CRI client against a real containerd (started by tests/integration/cri/run_real.sh
 * with tests/lib/containerd.sh): kubelet-style pods, label lookups, ExecSync outcomes, bad endpoints and a
 * runtime restart in the middle of a session.
 *
 * Environment (set by run_real.sh): CRI_ENDPOINT, RSS_CONTAINERD_DIR, RSS_CONTAINERD_FIXTURE, CRI_TOOL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"

extern char **environ;

#define IMAGE "localhost/rss/busybox:1"

static struct {
    struct rss_cri *cri;
    char uid[64];
    struct rss_cri_kv pod_labels[4];
    struct rss_cri_kv pod_annotations[1];
    struct rss_cri_kv ctr_labels[4];
    struct rss_cri_kv ctr_annotations[5];
    struct rss_cri_sandbox_config sandbox;
    char *sandbox_id;
    char *container_id;
} g;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !v[0]) {
        fprintf(stderr, "%s is not set: run this test through tests/integration/cri/run_real.sh\n", name);
        exit(1);
    }
    return v;
}

/* The pod as the kubelet would create it: labels, annotations, container labels. */
static int group_setup(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_options opts = {.call_timeout_ms = 10000};
    if (rss_cri_new(env("CRI_ENDPOINT"), &opts, &g.cri, &err) < 0)
        goto fail;
    snprintf(g.uid, sizeof(g.uid), "0f1e2d3c-%d-uid", (int)getpid());
    g.pod_labels[0] = (struct rss_cri_kv){"io.kubernetes.pod.name", "galera-0"};
    g.pod_labels[1] = (struct rss_cri_kv){"io.kubernetes.pod.namespace", "rss-test"};
    g.pod_labels[2] = (struct rss_cri_kv){"io.kubernetes.pod.uid", g.uid};
    g.pod_labels[3] = (struct rss_cri_kv){"app", "galera"};
    g.pod_annotations[0] =
        (struct rss_cri_kv){"rss.clusterlabs.org/desired", "{\"epoch\":3,\"action\":\"seed\"}"};
    memcpy(g.ctr_labels, g.pod_labels, 3 * sizeof(g.ctr_labels[0]));
    g.ctr_labels[3] = (struct rss_cri_kv){"io.kubernetes.container.name", "main"};
    g.ctr_annotations[0] = (struct rss_cri_kv){"io.kubernetes.container.hash", "5f2b0c1a"};
    g.ctr_annotations[1] = (struct rss_cri_kv){"io.kubernetes.container.restartCount", "0"};
    g.ctr_annotations[2] =
        (struct rss_cri_kv){"io.kubernetes.container.terminationMessagePath", "/dev/termination-log"};
    g.ctr_annotations[3] = (struct rss_cri_kv){"io.kubernetes.container.terminationMessagePolicy", "File"};
    g.ctr_annotations[4] = (struct rss_cri_kv){"io.kubernetes.pod.terminationGracePeriod", "30"};
    g.sandbox = (struct rss_cri_sandbox_config){
        .name = "galera-0",
        .namespace = "rss-test",
        .uid = g.uid,
        .labels = {4, g.pod_labels},
        .annotations = {1, g.pod_annotations},
    };
    static const char *const cmd[] = {"/bin/sleep", "infinity", NULL};
    struct rss_cri_container_config cc = {
        .name = "main",
        .image = IMAGE,
        .command = cmd,
        .labels = {4, g.ctr_labels},
        .annotations = {5, g.ctr_annotations},
        .memory_limit_bytes = 256 << 20,
    };
    if (rss_cri_run_sandbox(g.cri, &g.sandbox, &g.sandbox_id, &err) < 0 ||
        rss_cri_create_container(g.cri, g.sandbox_id, &cc, &g.sandbox, &g.container_id, &err) < 0 ||
        rss_cri_start_container(g.cri, g.container_id, &err) < 0)
        goto fail;
    return 0;
fail : {
    _cleanup_free_ char *msg = rss_error_string(err);
    fprintf(stderr, "setup: %s\n", msg);
    return -1;
}
}

static int group_teardown(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    int r = 0;
    if (g.sandbox_id && (rss_cri_stop_sandbox(g.cri, g.sandbox_id, &err) < 0 ||
                         rss_cri_remove_sandbox(g.cri, g.sandbox_id, &err) < 0)) {
        _cleanup_free_ char *msg = rss_error_string(err);
        fprintf(stderr, "teardown: %s\n", msg);
        r = -1;
    }
    free(g.sandbox_id);
    free(g.container_id);
    rss_cri_free(g.cri);
    return r;
}

static void test_version(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_version v = {0};
    assert_int_equal(rss_cri_get_version(g.cri, &v, &err), 0);
    assert_string_equal(v.runtime_name, "containerd");
    assert_string_equal(v.runtime_api_version, "v1");
    assert_true(strlen(v.runtime_version) > 0);
    printf("# %s %s, CRI %s\n", v.runtime_name, v.runtime_version, v.runtime_api_version);
    rss_cri_version_clear(&v);
}

static void test_list_by_labels(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_kv sel[] = {{"io.kubernetes.pod.uid", g.uid}, {"io.kubernetes.container.name", "main"}};
    struct rss_cri_container_filter f = {
        .match_state = true, .state = RSS_CRI_CONTAINER_RUNNING, .labels = {2, sel}};
    struct rss_cri_container_list l = {0};
    assert_int_equal(rss_cri_list_containers(g.cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 1);
    const struct rss_cri_container *c = &l.items[0];
    assert_string_equal(c->id, g.container_id);
    assert_string_equal(c->sandbox_id, g.sandbox_id);
    assert_string_equal(c->name, "main");
    assert_int_equal(c->state, RSS_CRI_CONTAINER_RUNNING);
    assert_true(c->created_at > 0);
    assert_string_equal(rss_cri_map_get(&c->labels, "io.kubernetes.pod.name"), "galera-0");
    assert_string_equal(rss_cri_map_get(&c->labels, "io.kubernetes.pod.namespace"), "rss-test");
    assert_string_equal(rss_cri_map_get(&c->labels, "io.kubernetes.pod.uid"), g.uid);
    assert_string_equal(rss_cri_map_get(&c->labels, "io.kubernetes.container.name"), "main");
    assert_string_equal(rss_cri_map_get(&c->annotations, "io.kubernetes.container.hash"), "5f2b0c1a");
    rss_cri_container_list_clear(&l);

    /* By pod namespace + name, as a lookup without the UID would do. */
    struct rss_cri_kv sel2[] = {{"io.kubernetes.pod.namespace", "rss-test"},
                                {"io.kubernetes.pod.name", "galera-0"}};
    struct rss_cri_container_filter f2 = {.labels = {2, sel2}};
    assert_int_equal(rss_cri_list_containers(g.cri, &f2, &l, &err), 0);
    assert_int_equal(l.n, 1);
    rss_cri_container_list_clear(&l);

    /* Another UID matches nothing; so does the right UID with state EXITED. */
    struct rss_cri_kv other[] = {{"io.kubernetes.pod.uid", "no-such-uid"}};
    struct rss_cri_container_filter f3 = {.labels = {1, other}};
    assert_int_equal(rss_cri_list_containers(g.cri, &f3, &l, &err), 0);
    assert_int_equal(l.n, 0);
    f.state = RSS_CRI_CONTAINER_EXITED;
    assert_int_equal(rss_cri_list_containers(g.cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 0);

    /* By sandbox id and by container id prefix. */
    struct rss_cri_container_filter f4 = {.sandbox_id = g.sandbox_id};
    assert_int_equal(rss_cri_list_containers(g.cri, &f4, &l, &err), 0);
    assert_true(l.n >= 1);
    rss_cri_container_list_clear(&l);
    char prefix[13];
    snprintf(prefix, sizeof(prefix), "%.12s", g.container_id);
    struct rss_cri_container_filter f5 = {.id = prefix};
    assert_int_equal(rss_cri_list_containers(g.cri, &f5, &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.items[0].id, g.container_id);
    rss_cri_container_list_clear(&l);
}

static void test_container_status(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_container c = {0};
    assert_int_equal(rss_cri_container_status(g.cri, g.container_id, &c, &err), 0);
    assert_string_equal(c.id, g.container_id);
    assert_string_equal(c.name, "main");
    assert_int_equal(c.state, RSS_CRI_CONTAINER_RUNNING);
    assert_true(c.started_at >= c.created_at);
    assert_int_equal(c.finished_at, 0);
    assert_non_null(strstr(c.image, "busybox"));
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(rss_cri_map_get(&c.annotations, g.ctr_annotations[i].key),
                            g.ctr_annotations[i].value);
    assert_string_equal(rss_cri_map_get(&c.labels, "io.kubernetes.pod.uid"), g.uid);
    rss_cri_container_clear(&c);

    assert_true(rss_cri_container_status(g.cri, "0000deadbeef0000", &c, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
}

static void test_sandbox(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_sandbox s = {0};
    assert_int_equal(rss_cri_sandbox_status(g.cri, g.sandbox_id, &s, &err), 0);
    assert_string_equal(s.id, g.sandbox_id);
    assert_int_equal(s.state, RSS_CRI_SANDBOX_READY);
    assert_string_equal(s.name, "galera-0");
    assert_string_equal(s.namespace, "rss-test");
    assert_string_equal(s.uid, g.uid);
    assert_string_equal(rss_cri_map_get(&s.labels, "app"), "galera");
    assert_string_equal(rss_cri_map_get(&s.annotations, "rss.clusterlabs.org/desired"),
                        "{\"epoch\":3,\"action\":\"seed\"}");
    rss_cri_sandbox_clear(&s);

    struct rss_cri_kv sel[] = {{"io.kubernetes.pod.uid", g.uid}};
    struct rss_cri_sandbox_filter f = {
        .match_state = true, .state = RSS_CRI_SANDBOX_READY, .labels = {1, sel}};
    struct rss_cri_sandbox_list l = {0};
    assert_int_equal(rss_cri_list_sandboxes(g.cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.items[0].id, g.sandbox_id);
    assert_string_equal(l.items[0].uid, g.uid);
    rss_cri_sandbox_list_clear(&l);
}

static int exec(const char *const *argv, int timeout_s, struct rss_cri_exec_result *res, rss_error_t *err)
{
    return rss_cri_exec_sync(g.cri, g.container_id, argv, timeout_s, res, err);
}

static void test_exec_ok(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const argv[] = {"sh", "-c", "echo 42; echo -n warn >&2", NULL};
    assert_int_equal(exec(argv, 5, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out, "42\n");
    assert_string_equal(res.errout, "warn");
    rss_cri_exec_result_clear(&res);

    /* An argv array, not a shell string: the argument arrives verbatim. */
    static const char *const literal[] = {"echo", "a b;$(false)", NULL};
    assert_int_equal(exec(literal, 5, &res, &err), 0);
    assert_string_equal(res.out, "a b;$(false)\n");
    rss_cri_exec_result_clear(&res);
}

static void test_exec_nonzero(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const argv[] = {"sh", "-c", "echo partial; echo oops >&2; exit 3", NULL};
    assert_int_equal(exec(argv, 5, &res, &err), 0);
    assert_int_equal(res.exit_code, 3);
    assert_string_equal(res.out, "partial\n");
    assert_string_equal(res.errout, "oops\n");
    rss_cri_exec_result_clear(&res);
}

static void test_exec_timeout(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const argv[] = {"sleep", "37", NULL};
    assert_true(exec(argv, 1, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TIMEOUT);
    assert_int_equal(err->detail, 4);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "ExecSync"));
    assert_non_null(strstr(msg, rss_cri_endpoint(g.cri)));
    rss_error_release(&err);

    /* The runtime killed the command: no "sleep 37" left in the container. */
    static const char *const ps[] = {"ps", "-o", "pid,args", NULL};
    assert_int_equal(exec(ps, 5, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out, "sleep infinity")); /* ps works and sees the container's PID 1 */
    if (strstr(res.out, "sleep 37"))
        fail_msg("the timed-out command still runs:\n%s", res.out);
    rss_cri_exec_result_clear(&res);
}

static void test_exec_missing_binary(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const argv[] = {"/no/such/hook", "arg", NULL};
    assert_true(exec(argv, 5, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    assert_int_equal(err->detail, 2); /* gRPC UNKNOWN */
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "/no/such/hook"));
    assert_non_null(strstr(msg, "ExecSync"));
}

/* Output up to the receive limit (RSS_CRI_MAX_RECV_BYTES, stdout and stderr together) arrives whole;
 * more is refused as RSS_E_TOO_LARGE before rssd holds it (a hook that prints 16 MB must not grow
 * rssd), and the client works on afterwards. */
static void test_exec_big_output(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    /* 1.5 MiB on stdout, 0.25 MiB on stderr. */
    static const char *const argv[] = {"sh", "-c",
                                       "dd if=/dev/zero bs=1024 count=1536 2>/dev/null | tr '\\0' x; "
                                       "dd if=/dev/zero bs=1024 count=256 2>/dev/null | tr '\\0' y >&2",
                                       NULL};
    assert_int_equal(exec(argv, 20, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.out_len, 1536 * 1024);
    assert_int_equal(res.errout_len, 256 * 1024);
    for (size_t i = 0; i < res.out_len; i += 4096)
        assert_int_equal(res.out[i], 'x');
    assert_int_equal(res.out[res.out_len - 1], 'x');
    assert_int_equal(res.errout[res.errout_len - 1], 'y');
    rss_cri_exec_result_clear(&res);
    /* 16 MiB: refused, nothing kept. */
    static const char *const big[] = {"sh", "-c",
                                      "dd if=/dev/zero bs=1048576 count=16 2>/dev/null | tr '\\0' x", NULL};
    assert_true(exec(big, 20, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TOO_LARGE);
    assert_null(res.out);
    rss_error_release(&err);
    static const char *const echo[] = {"echo", "still here", NULL};
    assert_int_equal(exec(echo, 20, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    rss_cri_exec_result_clear(&res);
}

static void test_exec_not_found(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const argv[] = {"true", NULL};
    assert_true(rss_cri_exec_sync(g.cri, "0000deadbeef0000", argv, 5, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    assert_int_equal(err->detail, 5);
}

/* A container that exited: exec gives NOT_RUNNING; its status keeps the exit code. */
static void test_exec_not_running(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    static const char *const cmd[] = {"sh", "-c", "exit 7", NULL};
    struct rss_cri_kv labels[] = {
        g.ctr_labels[0], g.ctr_labels[1], g.ctr_labels[2], {"io.kubernetes.container.name", "short"}};
    struct rss_cri_container_config cc = {
        .name = "short", .image = IMAGE, .command = cmd, .labels = {4, labels}};
    _cleanup_free_ char *id = NULL;
    assert_int_equal(rss_cri_create_container(g.cri, g.sandbox_id, &cc, &g.sandbox, &id, &err), 0);
    assert_int_equal(rss_cri_start_container(g.cri, id, &err), 0);
    struct rss_cri_container c = {0};
    for (int i = 0; i < 200; i++) {
        assert_int_equal(rss_cri_container_status(g.cri, id, &c, &err), 0);
        if (c.state == RSS_CRI_CONTAINER_EXITED)
            break;
        rss_cri_container_clear(&c);
        sleep_ms(50);
    }
    assert_int_equal(c.state, RSS_CRI_CONTAINER_EXITED);
    assert_int_equal(c.exit_code, 7);
    assert_string_equal(c.reason, "Error");
    assert_true(c.finished_at > 0);
    rss_cri_container_clear(&c);

    struct rss_cri_exec_result res;
    static const char *const argv[] = {"true", NULL};
    assert_true(rss_cri_exec_sync(g.cri, id, argv, 5, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_RUNNING);
    rss_error_release(&err);

    /* The exited container is listed under state EXITED, not RUNNING. */
    struct rss_cri_kv sel[] = {{"io.kubernetes.pod.uid", g.uid}, {"io.kubernetes.container.name", "short"}};
    struct rss_cri_container_filter f = {
        .match_state = true, .state = RSS_CRI_CONTAINER_RUNNING, .labels = {2, sel}};
    struct rss_cri_container_list l = {0};
    assert_int_equal(rss_cri_list_containers(g.cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 0);
    f.state = RSS_CRI_CONTAINER_EXITED;
    assert_int_equal(rss_cri_list_containers(g.cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 1);
    rss_cri_container_list_clear(&l);

    assert_int_equal(rss_cri_remove_container(g.cri, id, &err), 0);
    assert_true(rss_cri_container_status(g.cri, id, &c, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
}

struct thread_arg {
    int index;
    int ok;
};

static void *exec_thread(void *p)
{
    struct thread_arg *a = p;
    char word[16];
    snprintf(word, sizeof(word), "w%d", a->index);
    const char *const argv[] = {"echo", word, NULL};
    for (int i = 0; i < 5; i++) {
        rss_error_t err = NULL;
        struct rss_cri_exec_result res;
        if (exec(argv, 10, &res, &err) < 0) {
            rss_error_release(&err);
            continue;
        }
        if (res.exit_code == 0 && strncmp(res.out, word, strlen(word)) == 0 && res.out[strlen(word)] == '\n')
            a->ok++;
        rss_cri_exec_result_clear(&res);
    }
    return NULL;
}

static void test_exec_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    struct thread_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct thread_arg){.index = i};
        assert_int_equal(pthread_create(&t[i], NULL, exec_thread, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].ok, 5);
    }
}

static void test_missing_socket(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *path = rss_xasprintf("%s/no-such.sock", env("RSS_CONTAINERD_DIR"));
    struct rss_cri *cri = NULL;
    assert_int_equal(rss_cri_new(path, NULL, &cri, &err), 0);
    struct rss_cri_version v = {0};
    assert_true(rss_cri_get_version(cri, &v, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, "Version"));
    rss_cri_free(cri);
}

/* A unix socket that accepts connections but is no gRPC server. */
static void test_not_cri_socket(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *path = rss_xasprintf("%s/plain.sock", env("RSS_CONTAINERD_DIR"));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);

    struct rss_cri *cri = NULL;
    struct rss_cri_options opts = {.call_timeout_ms = 1000};
    assert_int_equal(rss_cri_new(path, &opts, &cri, &err), 0);
    struct rss_cri_version v = {0};
    assert_true(rss_cri_get_version(cri, &v, &err) < 0);
    _cleanup_free_ char *msg = rss_error_string(err);
    printf("# not a CRI server: %s\n", msg);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    assert_non_null(strstr(msg, path));
    rss_cri_free(cri);
    close(fd);
    unlink(path);
}

/* Runs the fixture script with `verb`; returns its pid (not waited for). */
static pid_t fixture(const char *verb)
{
    const char *argv[] = {"bash", env("RSS_CONTAINERD_FIXTURE"), verb, env("RSS_CONTAINERD_DIR"), NULL};
    pid_t pid;
    /* posix_spawn, not fork: gRPC does not survive fork(). */
    assert_int_equal(posix_spawnp(&pid, "bash", NULL, NULL, (char *const *)argv, environ), 0);
    return pid;
}

static int wait_status(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* containerd stops and starts again under one client session: the same client reaches it again,
 * and the container (which outlives containerd) answers ExecSync. */
static void test_restart(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_version v = {0};
    struct rss_cri_exec_result res;
    static const char *const echo[] = {"echo", "before", NULL};
    assert_int_equal(exec(echo, 5, &res, &err), 0);
    rss_cri_exec_result_clear(&res);

    assert_int_equal(wait_status(fixture("stop")), 0);
    const char *sock = rss_cri_endpoint(g.cri) + strlen("unix://");
    struct stat st;
    assert_true(stat(sock, &st) < 0); /* containerd removes its socket on SIGTERM */
    assert_true(rss_cri_get_version(g.cri, &v, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    rss_error_release(&err);

    double t_start = now_ms();
    pid_t pid = fixture("start");
    double t_sock = 0;
    while (stat(sock, &st) < 0) {
        if (now_ms() - t_start > 20000)
            fail_msg("containerd's socket did not come back within 20 s");
        sleep_ms(2);
    }
    t_sock = now_ms();
    int attempts = 0, r = -1;
    while (r < 0 && now_ms() - t_sock < 30000) {
        attempts++;
        r = rss_cri_get_version(g.cri, &v, &err);
        if (r < 0) {
            rss_error_release(&err);
            sleep_ms(5);
        }
    }
    double t_ok = now_ms();
    assert_int_equal(r, 0);
    rss_cri_version_clear(&v);
    printf("# containerd restart: socket back %.0f ms after start; first successful call %.0f ms after "
           "the socket appeared (%d attempts)\n",
           t_sock - t_start, t_ok - t_sock, attempts);
    assert_int_equal(wait_status(pid), 0);

    static const char *const after[] = {"echo", "after", NULL};
    assert_int_equal(exec(after, 5, &res, &err), 0);
    assert_string_equal(res.out, "after\n");
    rss_cri_exec_result_clear(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),          cmocka_unit_test(test_list_by_labels),
        cmocka_unit_test(test_container_status), cmocka_unit_test(test_sandbox),
        cmocka_unit_test(test_exec_ok),          cmocka_unit_test(test_exec_nonzero),
        cmocka_unit_test(test_exec_timeout),     cmocka_unit_test(test_exec_missing_binary),
        cmocka_unit_test(test_exec_big_output),  cmocka_unit_test(test_exec_not_found),
        cmocka_unit_test(test_exec_not_running), cmocka_unit_test(test_exec_threads),
        cmocka_unit_test(test_missing_socket),   cmocka_unit_test(test_not_cri_socket),
        cmocka_unit_test(test_restart),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
