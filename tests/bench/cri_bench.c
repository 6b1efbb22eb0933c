/* cri_bench.c -- ExecSync latency through rssd's CRI client next to `ctr task exec`, and the client's memory.
 *
 *   cri_bench [--endpoint unix:///path] [-n N] [--container ID]
 * Without --container it creates a pod (sandbox + busybox container "main") and removes it at the
 * end. Both paths run `true` in the same container of the same runtime, N times each, after a
 * short warm-up. The ctr path spawns `ctr --address SOCK -n k8s.io task exec` per call, so its figure
 * includes starting the ctr process, as any exec through a CLI does. Prints figures; asserts nothing.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"
#include "rss/log.h"

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, int n, double p)
{
    int rank = (int)(p / 100.0 * n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

static void report(const char *what, double *v, int n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    printf("%-34s n=%-4d median %7.2f ms   p90 %7.2f ms   min %7.2f ms   max %7.2f ms\n", what, n,
           pct(v, n, 50), pct(v, n, 90), v[0], v[n - 1]);
}

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t len = strlen(field);
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, len) == 0 && line[len] == ':')
            kb = strtol(line + len + 1, NULL, 10);
    fclose(f);
    return kb;
}

static int run_ctr(const char *sock, const char *cid, int i)
{
    char exec_id[64];
    snprintf(exec_id, sizeof(exec_id), "rss-bench-%d-%d", (int)getpid(), i);
    const char *argv[] = {"ctr",  "--address", sock,    "-n", "k8s.io", "task",
                          "exec", "--exec-id", exec_id, cid,  "true",   NULL};
    pid_t pid;
    /* posix_spawn, not fork: gRPC core does not survive fork(). */
    if (posix_spawnp(&pid, "ctr", NULL, NULL, (char *const *)argv, environ) != 0)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return 0;
}

static int create_pod(struct rss_cri *cri, char **sid, char **cid, rss_error_t *err)
{
    static struct rss_cri_kv labels[] = {
        {"io.kubernetes.pod.name", "cri-bench"},
        {"io.kubernetes.pod.namespace", "default"},
        {"io.kubernetes.pod.uid", "cri-bench-uid"},
        {"io.kubernetes.container.name", "main"},
    };
    struct rss_cri_sandbox_config sc = {
        .name = "cri-bench", .namespace = "default", .uid = "cri-bench-uid", .labels = {3, labels}};
    static const char *const cmd[] = {"/bin/sleep", "infinity", NULL};
    struct rss_cri_container_config cc = {
        .name = "main", .image = "localhost/rss/busybox:1", .command = cmd, .labels = {4, labels}};
    if (rss_cri_run_sandbox(cri, &sc, sid, err) < 0)
        return -1;
    if (rss_cri_create_container(cri, *sid, &cc, &sc, cid, err) < 0 ||
        rss_cri_start_container(cri, *cid, err) < 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    _cleanup_error_ rss_error_t err = NULL;
    const char *endpoint = getenv("CRI_ENDPOINT");
    const char *container = NULL;
    int n = 50;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
            endpoint = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--container") == 0 && i + 1 < argc)
            container = argv[++i];
        else {
            fprintf(stderr, "usage: cri_bench [--endpoint E] [-n N] [--container ID]\n");
            return 2;
        }
    }
    if (n < 1)
        n = 1;
    rss_log_set_component("cri_bench");

    struct rss_cri *cri = NULL;
    _cleanup_free_ char *sid = NULL;
    _cleanup_free_ char *cid = container ? rss_xstrdup(container) : NULL;
    _cleanup_free_ double *rss_ms = rss_xcalloc(n, sizeof(double));
    _cleanup_free_ double *ctr_ms = rss_xcalloc(n, sizeof(double));
    int rc = 1;
    long rss_before = status_kb("VmRSS");

    if (rss_cri_new(endpoint && endpoint[0] ? endpoint : NULL, NULL, &cri, &err) < 0)
        goto out;
    if (!cid && create_pod(cri, &sid, &cid, &err) < 0)
        goto out;
    const char *sock = rss_cri_endpoint(cri) + strlen("unix://");
    static const char *const t[] = {"true", NULL};

    for (int i = 0; i < 3; i++) { /* warm-up: connection, first exec in the container */
        struct rss_cri_exec_result res;
        if (rss_cri_exec_sync(cri, cid, t, 10, &res, &err) < 0)
            goto out;
        rss_cri_exec_result_clear(&res);
        if (run_ctr(sock, cid, 100000 + i) < 0) {
            rss_error_make(&err, RSS_E_INTERNAL, 0, "ctr task exec failed");
            goto out;
        }
    }
    /* Interleaved, so that both paths see the same machine load. */
    for (int i = 0; i < n; i++) {
        struct rss_cri_exec_result res;
        double t0 = now_ms();
        if (rss_cri_exec_sync(cri, cid, t, 10, &res, &err) < 0)
            goto out;
        rss_ms[i] = now_ms() - t0;
        if (res.exit_code != 0) {
            rss_error_make(&err, RSS_E_INTERNAL, 0, "true exited %d", res.exit_code);
            rss_cri_exec_result_clear(&res);
            goto out;
        }
        rss_cri_exec_result_clear(&res);
        t0 = now_ms();
        if (run_ctr(sock, cid, i) < 0) {
            rss_error_make(&err, RSS_E_INTERNAL, 0, "ctr task exec failed");
            goto out;
        }
        ctr_ms[i] = now_ms() - t0;
    }
    printf("ExecSync(true) on %s, container %.12s\n", rss_cri_endpoint(cri), cid);
    report("rssd CRI client (ExecSync)", rss_ms, n);
    report("ctr -n k8s.io task exec", ctr_ms, n);
    printf("client memory: VmRSS %ld kB (%ld kB before the client), VmHWM %ld kB\n", status_kb("VmRSS"),
           rss_before, status_kb("VmHWM"));
    rc = 0;
out:
    if (sid) {
        rss_error_t e2 = NULL;
        if (rss_cri_stop_sandbox(cri, sid, &e2) < 0 || rss_cri_remove_sandbox(cri, sid, &e2) < 0)
            rss_log_error(RSS_LOG_WARN, &e2, "removing the bench pod");
    }
    if (rc != 0)
        rss_log_error(RSS_LOG_ERROR, &err, "cri_bench");
    rss_cri_free(cri);
    return rc;
}
