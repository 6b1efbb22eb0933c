/* test_cri_unit.c -- unit tests of the CRI client: gRPC status mapping, endpoint handling, and
 * output handling and error paths against the in-process fake CRI server (fake_cri.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <grpc/status.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_cri.h"
#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"

/* --- pure functions --------------------------------------------------------------------------- */

static void test_status_mapping(void **state)
{
    (void)state;
    static const struct {
        int status;
        const char *details;
        bool connected;
        enum rss_errc want;
    } cases[] = {
        {GRPC_STATUS_DEADLINE_EXCEEDED,
         "failed to exec in container: timeout 5s exceeded: context deadline exceeded", true, RSS_E_TIMEOUT},
        {GRPC_STATUS_DEADLINE_EXCEEDED, "Deadline Exceeded", false, RSS_E_UNAVAILABLE},
        {GRPC_STATUS_NOT_FOUND, "failed to find container \"x\" in store: not found", true, RSS_E_NOT_FOUND},
        {GRPC_STATUS_NOT_FOUND, "container is not created or running: x", true, RSS_E_NOT_RUNNING},
        {GRPC_STATUS_UNKNOWN, "failed to exec in container: container is in CONTAINER_EXITED state", true,
         RSS_E_NOT_RUNNING},
        {GRPC_STATUS_UNKNOWN,
         "failed to exec in container: failed to start exec \"1\": OCI runtime exec failed: exec failed: "
         "unable "
         "to start container process: exec: \"/no\": stat /no: no such file or directory: unknown",
         true, RSS_E_INVALID},
        {GRPC_STATUS_UNKNOWN, "server is not initialized yet", true, RSS_E_UNAVAILABLE},
        {GRPC_STATUS_UNKNOWN, "failed to drain exec process io", true, RSS_E_INTERNAL},
        {GRPC_STATUS_UNKNOWN, NULL, true, RSS_E_INTERNAL},
        {GRPC_STATUS_UNAVAILABLE, "failed to connect to all addresses", false, RSS_E_UNAVAILABLE},
        {GRPC_STATUS_RESOURCE_EXHAUSTED, "Received message larger than max (5242887 vs. 4194304)", true,
         RSS_E_TOO_LARGE},
        {GRPC_STATUS_UNIMPLEMENTED, "unknown service runtime.v1.RuntimeService", true, RSS_E_UNSUPPORTED},
        {GRPC_STATUS_INVALID_ARGUMENT, "bad", true, RSS_E_INVALID},
        {GRPC_STATUS_ALREADY_EXISTS, "name reserved", true, RSS_E_EXISTS},
        {GRPC_STATUS_PERMISSION_DENIED, "no", true, RSS_E_UNAUTHORIZED},
        {GRPC_STATUS_UNAUTHENTICATED, "no", true, RSS_E_UNAUTHORIZED},
        {GRPC_STATUS_CANCELLED, "Cancelled", true, RSS_E_CANCELLED},
        {GRPC_STATUS_FAILED_PRECONDITION, "container not running", true, RSS_E_NOT_RUNNING},
        {GRPC_STATUS_FAILED_PRECONDITION, "something else", true, RSS_E_INTERNAL},
        {GRPC_STATUS_INTERNAL, "boom", true, RSS_E_INTERNAL},
        {GRPC_STATUS_DATA_LOSS, "boom", true, RSS_E_INTERNAL},
        {99, "future code", true, RSS_E_INTERNAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum rss_errc got = rss_cri_errc_from_status(cases[i].status, cases[i].details, cases[i].connected);
        if (got != cases[i].want)
            fail_msg("case %zu: status %d \"%s\": got %s, want %s", i, cases[i].status,
                     cases[i].details ? cases[i].details : "(null)", rss_errc_name(got),
                     rss_errc_name(cases[i].want));
    }
}

static void test_exec_timed_out(void **state)
{
    (void)state;
    assert_true(rss_cri_exec_timed_out(-1, "command timed out", 17));
    assert_true(rss_cri_exec_timed_out(-1, "command timed out\n", 18));
    assert_false(rss_cri_exec_timed_out(-1, "command timed", 13));
    assert_false(rss_cri_exec_timed_out(1, "command timed out", 17));
    assert_false(rss_cri_exec_timed_out(-1, NULL, 0));
    assert_false(rss_cri_exec_timed_out(-1, "other", 5));
}

static void test_map_get(void **state)
{
    (void)state;
    struct rss_cri_kv kv[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
    struct rss_cri_map m = {3, kv};
    assert_string_equal(rss_cri_map_get(&m, "a"), "3");
    assert_string_equal(rss_cri_map_get(&m, "b"), "2");
    assert_null(rss_cri_map_get(&m, "c"));
    struct rss_cri_map empty = {0};
    assert_null(rss_cri_map_get(&empty, "a"));
    assert_null(rss_cri_map_get(NULL, "a"));
}

static void test_state_names(void **state)
{
    (void)state;
    assert_string_equal(rss_cri_container_state_name(RSS_CRI_CONTAINER_RUNNING), "CONTAINER_RUNNING");
    assert_string_equal(rss_cri_container_state_name(RSS_CRI_CONTAINER_EXITED), "CONTAINER_EXITED");
    assert_string_equal(rss_cri_container_state_name(7), "?");
}

/* --- endpoints -------------------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/rsscri.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    return rss_xstrdup(tmpl);
}

static void rm_tree(const char *dir)
{
    _cleanup_free_ char *cmd = rss_xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Creates a unix socket file at path (bound, not listening) and closes it: enough for stat(). */
static void make_socket_file(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
}

/* --- discovery (cri_discover.c) -------------------------------------------------------------- */

static char *mkparent(const char *root, const char *known)
{
    _cleanup_free_ char *path = rss_xasprintf("%s%s", root, known);
    _cleanup_free_ char *cmd = rss_xasprintf("mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    return TAKE_PTR(path);
}

/* The index of a known path, so that a reordering of the list fails here and not silently. */
static size_t known_index(const char *path)
{
    const char *p;
    for (size_t i = 0; (p = rss_cri_known_socket(i, NULL)); i++)
        if (!strcmp(p, path))
            return i;
    fail_msg("%s is not a known CRI socket path", path);
    return 0;
}

static struct fake_cri *live_at(const char *root, const char *known, const char *name, bool no_containers)
{
    _cleanup_free_ char *path = mkparent(root, known);
    struct fake_cri_options o = {.runtime_name = name, .no_containers = no_containers};
    struct fake_cri *f = fake_cri_start_with(path, &o);
    assert_non_null(f);
    return f;
}

/* A socket someone listens on but never answers: a hung runtime, or not gRPC at all. */
static int silent_at(const char *root, const char *known)
{
    _cleanup_free_ char *path = mkparent(root, known);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    return fd;
}

/* A probe deadline long enough for a fake runtime's first answer under valgrind. */
#define PROBE_MS 3000

static int discover(const char *root, const char *pod, struct rss_cri_discovery *d, rss_error_t *err)
{
    struct rss_cri_discover_options o = {.root = root,
                                         .probe_timeout_ms = PROBE_MS,
                                         .pod_namespace = pod ? "rssd-system" : NULL,
                                         .pod_name = pod};
    return rss_cri_discover(&o, d, err);
}

/* Discovery finds the runtime named runtime at known (under root); returns its report (owned). */
static char *found_report(const char *root, const char *pod, const char *known, const char *runtime)
{
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_discovery d = {0};
    if (discover(root, pod, &d, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        fail_msg("nothing found, want %s: %s", known, msg);
    }
    _cleanup_free_ char *want = rss_xasprintf("unix://%s%s", root, known);
    assert_string_equal(d.endpoint, want);
    if (!strstr(d.runtime, runtime))
        fail_msg("runtime \"%s\", want %s", d.runtime, runtime);
    char *report = rss_xstrdup(d.report);
    rss_cri_discovery_clear(&d);
    assert_null(d.endpoint);
    return report;
}

static void expect_found(const char *root, const char *pod, const char *known, const char *runtime)
{
    free(found_report(root, pod, known, runtime));
}

static char *expect_refused(const char *root, const char *pod, enum rss_errc code)
{
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_discovery d = {0};
    if (discover(root, pod, &d, &err) == 0)
        fail_msg("found %s, want an error", d.endpoint);
    assert_null(d.endpoint);
    if (rss_error_code(err) != code)
        fail_msg("got %s, want %s", rss_errc_name(rss_error_code(err)), rss_errc_name(code));
    char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "--cri-endpoint"));
    assert_non_null(strstr(msg, "CONTAINER_RUNTIME_ENDPOINT"));
    return msg;
}

/* Nothing there: the error names every known path (under the root) and the flag. */
static void test_discover_none(void **state)
{
    (void)state;
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_free_ char *msg = expect_refused(root, NULL, RSS_E_NOT_FOUND);
    const char *p, *who;
    size_t n = 0;
    const char *absent = strstr(msg, "absent: ");
    assert_non_null(absent);
    for (size_t i = 0; (p = rss_cri_known_socket(i, &who)); i++, n++) {
        _cleanup_free_ char *want = rss_xasprintf("%s%s (%s)", root, p, who);
        if (!strstr(absent, want))
            fail_msg("the error does not name \"%s\" as absent: %s", want, msg);
    }
    assert_true(n >= 9);
    rm_tree(root);
}

/* Each distribution's socket, alone on its node, is found. */
static void test_discover_each_distribution(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/run/containerd/containerd.sock",
        "/run/k3s/containerd/containerd.sock",
        "/run/k0s/containerd.sock",
        "/var/snap/microk8s/common/run/containerd.sock",
        "/run/crio/crio.sock",
        "/var/run/crio/crio.sock",
        "/run/cri-dockerd.sock",
        "/var/run/cri-dockerd.sock",
        "/run/k3s/cri-dockerd/cri-dockerd.sock",
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        (void)known_index(paths[i]);
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *name = rss_xasprintf("runtime-%zu", i);
        struct fake_cri *f = live_at(root, paths[i], name, false);
        expect_found(root, NULL, paths[i], name);
        expect_found(root, "rssd-x", paths[i], name); /* the echoing fake runs every pod */
        fake_cri_stop(f);
        rm_tree(root);
    }
    assert_null(rss_cri_known_socket(sizeof(paths) / sizeof(paths[0]), NULL));
}

/* A stale socket file (a stopped or uninstalled runtime: nothing listens) at an earlier path does not
 * win over the live runtime at a later one: containerd's path before CRI-O's, and before k3s's. */
static void test_discover_stale_loses(void **state)
{
    (void)state;
    static const char *const live[] = {"/run/crio/crio.sock", "/run/k3s/containerd/containerd.sock"};
    for (size_t i = 0; i < 2; i++) {
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *stale = mkparent(root, "/run/containerd/containerd.sock");
        make_socket_file(stale);
        assert_true(known_index("/run/containerd/containerd.sock") < known_index(live[i]));
        struct fake_cri *f = live_at(root, live[i], "live", false);
        /* connect() said "refused": no probe (and no probe deadline) was spent on the stale one. */
        _cleanup_free_ char *report = found_report(root, NULL, live[i], "live");
        assert_non_null(strstr(report, "containerd.sock (containerd): a stale socket"));
        fake_cri_stop(f);
        /* Stale alone: nothing answers, and the error says why. */
        _cleanup_free_ char *msg = expect_refused(root, NULL, RSS_E_NOT_FOUND);
        assert_non_null(strstr(msg, "a stale socket: nothing listens"));
        rm_tree(root);
    }
}

/* What is not a CRI runtime never wins: a regular file, a gRPC server without the CRI service (Docker's
 * own containerd), a socket that accepts and never answers. */
static void test_discover_not_a_runtime(void **state)
{
    (void)state;
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_free_ char *file = mkparent(root, "/run/containerd/containerd.sock");
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    _cleanup_free_ char *nocri = mkparent(root, "/run/k3s/containerd/containerd.sock");
    struct fake_cri *docker = fake_cri_start_with(nocri, &(struct fake_cri_options){.no_cri = true});
    assert_non_null(docker);
    int silent = silent_at(root, "/run/k0s/containerd.sock");
    struct fake_cri *crio = live_at(root, "/run/crio/crio.sock", "cri-o", false);

    _cleanup_free_ char *report = found_report(root, NULL, "/run/crio/crio.sock", "cri-o");
    assert_non_null(strstr(report, "(containerd): not a socket"));
    assert_non_null(strstr(report, "(k3s, RKE2): a gRPC server without the CRI runtime.v1 service"));
    /* The silent socket is asked under the probe deadline, not the default call timeout (10 s). */
    _cleanup_free_ char *silent_words =
        rss_xasprintf("(k0s): accepts connections but its CRI Version call failed within %d ms", PROBE_MS);
    assert_non_null(strstr(report, silent_words));
    assert_non_null(strstr(report, "(CRI-O): cri-o 0.0.1 (CRI v1) answers"));

    fake_cri_stop(crio);
    _cleanup_free_ char *msg = expect_refused(root, NULL, RSS_E_NOT_FOUND);
    assert_non_null(strstr(msg, "Docker's own containerd"));
    fake_cri_stop(docker);
    close(silent);
    rm_tree(root);
}

/* Two live runtimes: without its own pod rssd cannot tell the kubelet's and refuses; with it, the one
 * running the pod wins even when it comes later in the order. */
static void test_discover_two_runtimes(void **state)
{
    (void)state;
    _cleanup_free_ char *root = make_tmpdir();
    struct fake_cri *other = live_at(root, "/run/containerd/containerd.sock", "other", true);
    struct fake_cri *k3s = live_at(root, "/run/k3s/containerd/containerd.sock", "k3s", false);
    _cleanup_free_ char *msg = expect_refused(root, NULL, RSS_E_INVALID);
    assert_non_null(strstr(msg, "2 CRI runtimes answer"));
    assert_non_null(strstr(msg, "POD_NAME"));
    _cleanup_free_ char *report =
        found_report(root, "rssd-abc12", "/run/k3s/containerd/containerd.sock", "k3s");
    assert_non_null(strstr(report, "other 0.0.1 (CRI v1) answers, does not run pod rssd-system/rssd-abc12"));
    assert_non_null(strstr(report, "k3s 0.0.1 (CRI v1) answers, runs pod rssd-system/rssd-abc12"));

    /* Both run it (cannot be told apart): refused. */
    fake_cri_stop(other);
    other = live_at(root, "/run/containerd/containerd.sock", "other", false);
    free(msg);
    msg = expect_refused(root, "rssd-abc12", RSS_E_INVALID);
    assert_non_null(strstr(msg, "2 CRI runtimes run this pod"));
    fake_cri_stop(k3s);
    fake_cri_stop(other);
    rm_tree(root);
}

/* The one live runtime does not run rssd's pod: it is not the kubelet's (whose socket is not mounted),
 * and rssd must not fence through it. Retryable: the runtime may still be recording the container. */
static void test_discover_wrong_runtime(void **state)
{
    (void)state;
    _cleanup_free_ char *root = make_tmpdir();
    struct fake_cri *f = live_at(root, "/run/containerd/containerd.sock", "docker-containerd", true);
    expect_found(root, NULL, "/run/containerd/containerd.sock", "docker-containerd");
    _cleanup_free_ char *msg = expect_refused(root, "rssd-abc12", RSS_E_NOT_FOUND);
    assert_non_null(strstr(msg, "none of the CRI runtimes that answer runs this pod rssd-system/rssd-abc12"));
    fake_cri_stop(f);
    rm_tree(root);
}

/* One socket reached by two known paths (/var/run is a link to /run) is one runtime, not two. */
static void test_discover_same_socket_twice(void **state)
{
    (void)state;
    _cleanup_free_ char *root = make_tmpdir();
    struct fake_cri *f = live_at(root, "/run/crio/crio.sock", "cri-o", false);
    _cleanup_free_ char *varrun = rss_xasprintf("%s/var", root);
    assert_int_equal(mkdir(varrun, 0755), 0);
    _cleanup_free_ char *link = rss_xasprintf("%s/var/run", root);
    assert_int_equal(symlink("../run", link), 0);
    _cleanup_free_ char *report = found_report(root, NULL, "/run/crio/crio.sock", "cri-o");
    _cleanup_free_ char *want = rss_xasprintf(
        "%s/var/run/crio/crio.sock (CRI-O): the same socket as %s/run/crio/crio.sock", root, root);
    assert_non_null(strstr(report, want));
    fake_cri_stop(f);
    rm_tree(root);
}

static void test_endpoints(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *cri = NULL;
    assert_true(rss_cri_new(NULL, NULL, &cri, &err) < 0); /* rss_cri_discover finds one */
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    static const char *const bad[] = {"tcp://127.0.0.1:1234", "relative/x.sock", "unix:relative", "", NULL};
    for (size_t i = 0; bad[i]; i++) {
        assert_true(rss_cri_new(bad[i], NULL, &cri, &err) < 0);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        rss_error_release(&err);
    }
    char longpath[200];
    memset(longpath, 'a', sizeof(longpath));
    longpath[0] = '/';
    longpath[sizeof(longpath) - 1] = '\0';
    assert_true(rss_cri_new(longpath, NULL, &cri, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);

    static const char *const good[] = {"unix:///run/x.sock", "unix:/run/x.sock", "/run/x.sock", NULL};
    for (size_t i = 0; good[i]; i++) {
        assert_int_equal(rss_cri_new(good[i], NULL, &cri, &err), 0);
        assert_string_equal(rss_cri_endpoint(cri), "unix:///run/x.sock");
        rss_cri_free(cri);
    }
}

/* A socket path that does not exist fails at once with UNAVAILABLE naming endpoint and RPC. */
static void test_missing_socket(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *cri = NULL;
    assert_int_equal(rss_cri_new("unix:///nonexistent/rss/cri.sock", NULL, &cri, &err), 0);
    struct rss_cri_version v = {0};
    assert_true(rss_cri_get_version(cri, &v, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "Version"));
    assert_non_null(strstr(msg, "unix:///nonexistent/rss/cri.sock"));
    rss_cri_free(cri);
}

/* A stale socket file (nobody listening): wait-for-ready retries until the deadline, then the call
 * is reported as UNAVAILABLE, not as a TIMEOUT of a connected runtime. */
static void test_stale_socket(void **state)
{
    (void)state;
    _cleanup_free_ char *dir = make_tmpdir();
    _cleanup_free_ char *path = rss_xasprintf("%s/stale.sock", dir);
    make_socket_file(path);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *cri = NULL;
    struct rss_cri_options opts = {.call_timeout_ms = 300};
    assert_int_equal(rss_cri_new(path, &opts, &cri, &err), 0);
    struct rss_cri_version v = {0};
    assert_true(rss_cri_get_version(cri, &v, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "not reachable"));
    rss_cri_free(cri);
    rm_tree(dir);
}

/* --- against the fake server ------------------------------------------------------------------ */

struct fixture {
    char *dir;
    char *path;
    struct fake_cri *server;
    struct rss_cri *cri;
};

static int setup_fake(void **state)
{
    struct fixture *fx = rss_xcalloc(1, sizeof(*fx));
    _cleanup_error_ rss_error_t err = NULL;
    fx->dir = make_tmpdir();
    fx->path = rss_xasprintf("%s/fake.sock", fx->dir);
    fx->server = fake_cri_start(fx->path);
    if (!fx->server)
        return -1;
    struct rss_cri_options opts = {.call_timeout_ms = 2000};
    if (rss_cri_new(fx->path, &opts, &fx->cri, &err) < 0)
        return -1;
    *state = fx;
    return 0;
}

static int teardown_fake(void **state)
{
    struct fixture *fx = *state;
    rss_cri_free(fx->cri);
    fake_cri_stop(fx->server);
    rm_tree(fx->dir);
    free(fx->dir);
    free(fx->path);
    free(fx);
    return 0;
}

static int exec_argv(struct fixture *fx, const char *id, const char *const *argv,
                     struct rss_cri_exec_result *res, rss_error_t *err)
{
    return rss_cri_exec_sync(fx->cri, id, argv, 5, res, err);
}

static void test_fake_version(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_version v = {0};
    assert_int_equal(rss_cri_get_version(fx->cri, &v, &err), 0);
    assert_string_equal(v.runtime_name, "fake-cri");
    assert_string_equal(v.runtime_api_version, "v1");
    assert_string_equal(v.version, "0.1.0");
    rss_cri_version_clear(&v);
    assert_null(v.runtime_name);
}

static void test_fake_exec_outputs(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;

    static const char *const echo[] = {"echo", "hello", "world", NULL};
    assert_int_equal(exec_argv(fx, "c1", echo, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.out_len, 12);
    assert_string_equal(res.out, "hello world\n");
    assert_int_equal(res.errout_len, 0);
    assert_non_null(res.errout);
    assert_string_equal(res.errout, "");
    rss_cri_exec_result_clear(&res);

    static const char *const fail[] = {"fail", NULL};
    assert_int_equal(exec_argv(fx, "c1", fail, &res, &err), 0);
    assert_int_equal(res.exit_code, 3);
    assert_string_equal(res.errout, "oops\n");
    assert_int_equal(res.out_len, 0);
    rss_cri_exec_result_clear(&res);

    static const char *const binary[] = {"binary", NULL};
    assert_int_equal(exec_argv(fx, "c1", binary, &res, &err), 0);
    assert_int_equal(res.out_len, 3);
    assert_memory_equal(res.out, "a\0b", 3);
    assert_int_equal(res.out[3], '\0');
    rss_cri_exec_result_clear(&res);
}

/* The receive limit bounds what a hook can make rssd hold: 2 MiB passes the default
 * RSS_CRI_MAX_RECV_BYTES (above gRPC's own 4 MiB default it would need raising; below it, lowering); 3 MiB
 * is refused as RSS_E_TOO_LARGE before rssd buffers it. */
static void test_fake_exec_big(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    static const char *const big[] = {"big", "2097152", NULL};
    assert_int_equal(exec_argv(fx, "c1", big, &res, &err), 0);
    assert_int_equal(res.out_len, 2097152);
    assert_int_equal(res.out[0], 'x');
    assert_int_equal(res.out[2097151], 'x');
    assert_int_equal(res.out[2097152], '\0');
    rss_cri_exec_result_clear(&res);

    static const char *const huge[] = {"big", "3145728", NULL}; /* 3 MiB > RSS_CRI_MAX_RECV_BYTES */
    assert_true(exec_argv(fx, "c1", huge, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TOO_LARGE);
    assert_null(res.out);
    rss_error_release(&err);
    static const char *const h16[] = {"big", "16777216", NULL}; /* a hook printing 16 MB */
    assert_true(exec_argv(fx, "c1", h16, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TOO_LARGE);
}

static void expect_exec_error(struct fixture *fx, const char *id, const char *const *argv, enum rss_errc want,
                              int want_detail, const char *want_text)
{
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    assert_true(exec_argv(fx, id, argv, &res, &err) < 0);
    _cleanup_free_ char *msg = rss_error_string(err);
    if (rss_error_code(err) != want)
        fail_msg("%s: got %s, want %s", msg, rss_errc_name(rss_error_code(err)), rss_errc_name(want));
    assert_int_equal(err->detail, want_detail);
    assert_non_null(strstr(msg, "ExecSync"));
    assert_non_null(strstr(msg, fx->path));
    if (want_text && !strstr(msg, want_text))
        fail_msg("message \"%s\" lacks \"%s\"", msg, want_text);
    assert_null(res.out);
    assert_null(res.errout);
}

static void test_fake_exec_errors(void **state)
{
    struct fixture *fx = *state;
    static const char *const crio_timeout[] = {"crio-timeout", NULL};
    expect_exec_error(fx, "c1", crio_timeout, RSS_E_TIMEOUT, 0, "timed out");
    static const char *const ctrd_timeout[] = {
        "status", "4", "failed to exec in container: timeout 5s exceeded: context deadline exceeded", NULL};
    expect_exec_error(fx, "c1", ctrd_timeout, RSS_E_TIMEOUT, 4, "timeout 5s exceeded");
    static const char *const exited[] = {
        "status", "2", "failed to exec in container: container is in CONTAINER_EXITED state", NULL};
    expect_exec_error(fx, "c1", exited, RSS_E_NOT_RUNNING, 2, "CONTAINER_EXITED");
    static const char *const crio_exited[] = {"status", "5", "container is not created or running: c1", NULL};
    expect_exec_error(fx, "c1", crio_exited, RSS_E_NOT_RUNNING, 5, NULL);
    static const char *const missing_bin[] = {
        "status", "2",
        "failed to exec in container: failed to start exec \"e\": OCI runtime exec failed: exec failed: "
        "unable to start container process: exec: \"/no\": stat /no: no such file or directory: unknown",
        NULL};
    expect_exec_error(fx, "c1", missing_bin, RSS_E_INVALID, 2, "/no");
    static const char *const echo[] = {"echo", NULL};
    expect_exec_error(fx, "missing", echo, RSS_E_NOT_FOUND, 5, "not found");
    static const char *const garbage[] = {"garbage", NULL};
    expect_exec_error(fx, "c1", garbage, RSS_E_INTERNAL, 0, "malformed");
}

static void test_fake_exec_bad_args(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_exec_result res;
    int before = fake_cri_calls(fx->server);
    static const char *const echo[] = {"echo", NULL};
    static const char *const empty[] = {NULL};
    assert_true(rss_cri_exec_sync(fx->cri, "c1", echo, 0, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    assert_true(rss_cri_exec_sync(fx->cri, "c1", empty, 5, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    assert_true(rss_cri_exec_sync(fx->cri, NULL, echo, 5, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    /* Rejected before anything went out. */
    assert_int_equal(fake_cri_calls(fx->server), before);
}

/* A connected runtime that answers after the deadline is a TIMEOUT (not UNAVAILABLE). */
static void test_fake_deadline(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri *fast = NULL;
    struct rss_cri_options opts = {.call_timeout_ms = 200};
    assert_int_equal(rss_cri_new(fx->path, &opts, &fast, &err), 0);
    struct rss_cri_version v = {0};
    assert_int_equal(rss_cri_get_version(fast, &v, &err), 0); /* connect first */
    rss_cri_version_clear(&v);
    struct rss_cri_exec_result res;
    static const char *const slow[] = {"slow", "1800", NULL}; /* deadline: 1 s + 200 ms */
    assert_true(rss_cri_exec_sync(fast, "c1", slow, 1, &res, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TIMEOUT);
    assert_int_equal(err->detail, 4);
    rss_cri_free(fast);
}

static void test_fake_unimplemented(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_sandbox_list l = {0};
    assert_true(rss_cri_list_sandboxes(fx->cri, NULL, &l, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNSUPPORTED);
    assert_int_equal(err->detail, 12);
    _cleanup_free_ char *msg = rss_error_string(err);
    assert_non_null(strstr(msg, "ListPodSandbox"));
    assert_non_null(strstr(msg, "UNIMPLEMENTED"));
}

static void test_fake_list_containers(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_kv sel[] = {{"io.kubernetes.pod.uid", "u-1"}, {"io.kubernetes.container.name", "main"}};
    struct rss_cri_container_filter f = {
        .sandbox_id = "sb1", .match_state = true, .state = RSS_CRI_CONTAINER_RUNNING, .labels = {2, sel}};
    struct rss_cri_container_list l = {0};
    assert_int_equal(rss_cri_list_containers(fx->cri, &f, &l, &err), 0);
    assert_int_equal(l.n, 3);
    /* The fake echoes the filter: one container per selector entry, labels = the selector. */
    assert_string_equal(l.items[0].id, "io.kubernetes.pod.uid");
    assert_string_equal(l.items[1].id, "io.kubernetes.container.name");
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(l.items[i].sandbox_id, "sb1");
        assert_int_equal(l.items[i].state, RSS_CRI_CONTAINER_RUNNING);
        assert_string_equal(l.items[i].name, "main");
        assert_int_equal(l.items[i].attempt, 2);
        assert_int_equal(l.items[i].labels.n, 2);
        assert_string_equal(rss_cri_map_get(&l.items[i].labels, "io.kubernetes.pod.uid"), "u-1");
        assert_string_equal(rss_cri_map_get(&l.items[i].labels, "io.kubernetes.container.name"), "main");
        assert_string_equal(l.items[i].image, ""); /* absent submessage */
    }
    /* Unknown enum values and duplicate map keys survive; the last duplicate wins. */
    assert_string_equal(l.items[2].id, "odd");
    assert_int_equal(l.items[2].state, 7);
    assert_int_equal(l.items[2].created_at, 1234567890123456789LL);
    assert_string_equal(rss_cri_map_get(&l.items[2].labels, "k"), "second");
    assert_string_equal(l.items[2].sandbox_id, "");
    rss_cri_container_list_clear(&l);
    assert_int_equal(l.n, 0);

    /* No filter: the request carries no selector, only the odd container comes back. */
    assert_int_equal(rss_cri_list_containers(fx->cri, NULL, &l, &err), 0);
    assert_int_equal(l.n, 1);
    rss_cri_container_list_clear(&l);
}

struct thread_arg {
    struct rss_cri *cri;
    int index;
    int ok;
};

static void *exec_thread(void *p)
{
    struct thread_arg *a = p;
    char word[32];
    snprintf(word, sizeof(word), "t%d", a->index);
    const char *const argv[] = {"echo", word, NULL};
    for (int i = 0; i < 10; i++) {
        rss_error_t err = NULL;
        struct rss_cri_exec_result res;
        if (rss_cri_exec_sync(a->cri, "c1", argv, 5, &res, &err) < 0) {
            rss_error_release(&err);
            continue;
        }
        char want[40];
        snprintf(want, sizeof(want), "%s\n", word);
        if (res.exit_code == 0 && strcmp(res.out, want) == 0)
            a->ok++;
        rss_cri_exec_result_clear(&res);
    }
    return NULL;
}

/* One client, several threads at once: every call gets its own answer. */
static void test_fake_threads(void **state)
{
    struct fixture *fx = *state;
    pthread_t t[4];
    struct thread_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct thread_arg){.cri = fx->cri, .index = i};
        assert_int_equal(pthread_create(&t[i], NULL, exec_thread, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].ok, 10);
    }
}

/* The server goes away and comes back on the same path: the same client reaches it again. */
static void test_fake_restart(void **state)
{
    struct fixture *fx = *state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_version v = {0};
    assert_int_equal(rss_cri_get_version(fx->cri, &v, &err), 0);
    rss_cri_version_clear(&v);

    fake_cri_stop(fx->server);
    fx->server = NULL;
    assert_true(rss_cri_get_version(fx->cri, &v, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    rss_error_release(&err);

    fx->server = fake_cri_start(fx->path);
    assert_non_null(fx->server);
    double t0 = now_ms();
    int r = -1;
    for (int i = 0; i < 50 && r < 0; i++) {
        r = rss_cri_get_version(fx->cri, &v, &err);
        rss_error_release(&err);
    }
    assert_int_equal(r, 0);
    printf("# fake server restart: reached again after %.0f ms\n", now_ms() - t0);
    rss_cri_version_clear(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_mapping),
        cmocka_unit_test(test_exec_timed_out),
        cmocka_unit_test(test_map_get),
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_discover_none),
        cmocka_unit_test(test_discover_each_distribution),
        cmocka_unit_test(test_discover_stale_loses),
        cmocka_unit_test(test_discover_not_a_runtime),
        cmocka_unit_test(test_discover_two_runtimes),
        cmocka_unit_test(test_discover_wrong_runtime),
        cmocka_unit_test(test_discover_same_socket_twice),
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_missing_socket),
        cmocka_unit_test(test_stale_socket),
        cmocka_unit_test_setup_teardown(test_fake_version, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_exec_outputs, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_exec_big, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_exec_errors, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_exec_bad_args, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_deadline, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_unimplemented, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_list_containers, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_threads, setup_fake, teardown_fake),
        cmocka_unit_test_setup_teardown(test_fake_restart, setup_fake, teardown_fake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
