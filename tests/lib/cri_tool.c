/* cri_tool.c -- a small CRI command line over rssd's client, for fixtures, benchmarks and debugging.
 *
 *   cri_tool [--endpoint unix:///path] COMMAND ...
 *     version                      print the runtime's Version answer
 *     wait SECONDS                 retry Version until it succeeds (exit 1 after SECONDS)
 *     pods | ps                    list sandboxes | containers
 *     rm-all-pods                  stop and remove every sandbox (and any container left over)
 *     run-pod [--mount HOST:CTR[:ro]]... [--env K=V]... [--namespace NS] [--uid UID] [--container C]
 *             NAME [IMAGE]         create a sandbox and a container (sleep infinity) with the kubelet's
 *                                  labels for pod NAME in NS (default "default"), pod uid UID (default:
 *                                  a fresh one), container name C (default "main"), bind mounts and
 *                                  env; prints "SANDBOX_ID CONTAINER_ID"
 *     exec [-t SECONDS] ID CMD...  ExecSync; prints stdout/stderr, exits with the command's code
 * Without --endpoint: $CRI_ENDPOINT, else the one runtime at the known paths (rss_cri_discover).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "cri_lifecycle.h"
#include "rss/log.h"

static int usage(void)
{
    fprintf(stderr, "usage: cri_tool [--endpoint E] version|wait S|pods|ps|rm-all-pods|run-pod [--mount "
                    "H:C[:ro]]... [--env K=V]... [--namespace NS] [--uid U] [--container C] NAME [IMAGE]|"
                    "exec [-t S] ID CMD...\n");
    return 2;
}

static int cmd_version(struct rss_cri *cri, rss_error_t *err)
{
    struct rss_cri_version v = {0};
    if (rss_cri_get_version(cri, &v, err) < 0)
        return -1;
    printf("%s %s (CRI %s, version %s) at %s\n", v.runtime_name, v.runtime_version, v.runtime_api_version,
           v.version, rss_cri_endpoint(cri));
    rss_cri_version_clear(&v);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_wait(struct rss_cri *cri, double seconds, rss_error_t *err)
{
    double end = now_s() + seconds;
    for (;;) {
        struct rss_cri_version v = {0};
        if (rss_cri_get_version(cri, &v, err) == 0) {
            rss_cri_version_clear(&v);
            return 0;
        }
        if (now_s() >= end)
            return rss_error_wrap(err, "runtime not ready after %.1f s", seconds);
        rss_error_release(err);
        usleep(20 * 1000);
    }
}

static int cmd_pods(struct rss_cri *cri, rss_error_t *err)
{
    struct rss_cri_sandbox_list l = {0};
    if (rss_cri_list_sandboxes(cri, NULL, &l, err) < 0)
        return -1;
    for (size_t i = 0; i < l.n; i++)
        printf("%.13s  %-8s  %s/%s  uid=%s attempt=%u\n", l.items[i].id,
               l.items[i].state == RSS_CRI_SANDBOX_READY ? "READY" : "NOTREADY", l.items[i].namespace,
               l.items[i].name, l.items[i].uid, l.items[i].attempt);
    rss_cri_sandbox_list_clear(&l);
    return 0;
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

static int cmd_ps(struct rss_cri *cri, rss_error_t *err)
{
    struct rss_cri_container_list l = {0};
    if (rss_cri_list_containers(cri, NULL, &l, err) < 0)
        return -1;
    for (size_t i = 0; i < l.n; i++) {
        const struct rss_cri_container *c = &l.items[i];
        printf("%.13s  %-18s  %-12s pod=%s/%s sandbox=%.13s\n", c->id, rss_cri_container_state_name(c->state),
               c->name, or_dash(rss_cri_map_get(&c->labels, "io.kubernetes.pod.namespace")),
               or_dash(rss_cri_map_get(&c->labels, "io.kubernetes.pod.name")), c->sandbox_id);
    }
    rss_cri_container_list_clear(&l);
    return 0;
}

static int cmd_rm_all_pods(struct rss_cri *cri, rss_error_t *err)
{
    struct rss_cri_sandbox_list l = {0};
    struct rss_cri_container_list cl = {0};
    int r = 0;
    if (rss_cri_list_sandboxes(cri, NULL, &l, err) < 0)
        return -1;
    for (size_t i = 0; i < l.n; i++) {
        /* Go on after a failure: this runs in teardown, and the rest should still go. */
        if (rss_cri_stop_sandbox(cri, l.items[i].id, err) < 0 ||
            rss_cri_remove_sandbox(cri, l.items[i].id, err) < 0) {
            rss_log_error(RSS_LOG_WARN, err, "removing sandbox %.13s", l.items[i].id);
            r = -1;
        }
    }
    rss_cri_sandbox_list_clear(&l);
    if (rss_cri_list_containers(cri, NULL, &cl, err) < 0)
        return -1;
    for (size_t i = 0; i < cl.n; i++) {
        if (rss_cri_stop_container(cri, cl.items[i].id, 0, err) < 0 ||
            rss_cri_remove_container(cri, cl.items[i].id, err) < 0) {
            rss_log_error(RSS_LOG_WARN, err, "removing container %.13s", cl.items[i].id);
            r = -1;
        }
    }
    rss_cri_container_list_clear(&cl);
    if (r < 0)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "some pods could not be removed");
    return 0;
}

/* What run-pod creates: the pod's identity as the kubelet labels it, and its one container. */
struct run_pod {
    const char *name;
    const char *namespace;
    const char *uid; /* NULL: a fresh one */
    const char *container;
    const char *image;
};

static int cmd_run_pod(struct rss_cri *cri, const struct run_pod *p, const struct rss_cri_mount *mounts,
                       size_t n_mounts, const struct rss_cri_map *envs, rss_error_t *err)
{
    _cleanup_free_ char *fresh = rss_xasprintf("%s-%ld-%d", p->name, (long)time(NULL), (int)getpid());
    const char *uid = p->uid ? p->uid : fresh;
    struct rss_cri_kv labels[] = {
        {"io.kubernetes.pod.name", p->name},
        {"io.kubernetes.pod.namespace", p->namespace},
        {"io.kubernetes.pod.uid", uid},
    };
    struct rss_cri_kv clabels[] = {
        {"io.kubernetes.pod.name", p->name},
        {"io.kubernetes.pod.namespace", p->namespace},
        {"io.kubernetes.pod.uid", uid},
        {"io.kubernetes.container.name", p->container},
    };
    struct rss_cri_sandbox_config sc = {
        .name = p->name,
        .namespace = p->namespace,
        .uid = uid,
        .labels = {3, labels},
    };
    static const char *const cmd[] = {"/bin/sleep", "infinity", NULL};
    struct rss_cri_container_config cc = {
        .name = p->container,
        .image = p->image,
        .command = cmd,
        .envs = *envs,
        .mounts = mounts,
        .n_mounts = n_mounts,
        .labels = {4, clabels},
    };
    _cleanup_free_ char *sid = NULL;
    _cleanup_free_ char *cid = NULL;
    if (rss_cri_run_sandbox(cri, &sc, &sid, err) < 0)
        return -1;
    if (rss_cri_create_container(cri, sid, &cc, &sc, &cid, err) < 0 ||
        rss_cri_start_container(cri, cid, err) < 0)
        return -1;
    printf("%s %s\n", sid, cid);
    return 0;
}

static int cmd_exec(struct rss_cri *cri, int timeout_s, const char *id, const char *const *argv,
                    int *exit_code, rss_error_t *err)
{
    struct rss_cri_exec_result res = {0};
    if (rss_cri_exec_sync(cri, id, argv, timeout_s, &res, err) < 0)
        return -1;
    fwrite(res.out, 1, res.out_len, stdout);
    fwrite(res.errout, 1, res.errout_len, stderr);
    *exit_code = res.exit_code;
    rss_cri_exec_result_clear(&res);
    return 0;
}

int main(int argc, char **argv)
{
    _cleanup_error_ rss_error_t err = NULL;
    const char *endpoint = getenv("CRI_ENDPOINT");
    int i = 1;
    int r = 0;
    int code = 0;

    rss_log_set_component("cri_tool");
    if (i + 1 < argc && strcmp(argv[i], "--endpoint") == 0) {
        endpoint = argv[i + 1];
        i += 2;
    }
    if (i >= argc)
        return usage();
    if (endpoint && !endpoint[0])
        endpoint = NULL;
    const char *cmd = argv[i++];

    struct rss_cri_options opts = {0};
    if (strcmp(cmd, "wait") == 0)
        opts.call_timeout_ms = 1000;
    struct rss_cri *cri = NULL;
    struct rss_cri_discovery found = {0};
    if (!endpoint && rss_cri_discover(NULL, &found, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "cri_tool");
        return 1;
    }
    if (rss_cri_new(endpoint ? endpoint : found.endpoint, &opts, &cri, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "cri_tool");
        rss_cri_discovery_clear(&found);
        return 1;
    }
    rss_cri_discovery_clear(&found);
    if (strcmp(cmd, "version") == 0) {
        r = cmd_version(cri, &err);
    } else if (strcmp(cmd, "wait") == 0 && i < argc) {
        r = cmd_wait(cri, atof(argv[i]), &err);
    } else if (strcmp(cmd, "pods") == 0) {
        r = cmd_pods(cri, &err);
    } else if (strcmp(cmd, "ps") == 0) {
        r = cmd_ps(cri, &err);
    } else if (strcmp(cmd, "rm-all-pods") == 0) {
        r = cmd_rm_all_pods(cri, &err);
    } else if (strcmp(cmd, "run-pod") == 0 && i < argc) {
        /* Options point into argv (split in place at '=' and ':'), so nothing needs freeing. */
        struct rss_cri_mount mounts[16];
        struct rss_cri_kv kvs[16];
        size_t nm = 0;
        size_t ne = 0;
        struct run_pod p = {.namespace = "default", .container = "main", .image = "localhost/rss/busybox:1"};
        for (; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--mount") == 0 && nm < 16) {
                char *h = argv[i + 1];
                char *c = strchr(h, ':');
                if (!c || h[0] != '/')
                    break;
                *c++ = '\0';
                char *ro = strchr(c, ':');
                if (ro)
                    *ro++ = '\0';
                mounts[nm++] = (struct rss_cri_mount){
                    .container_path = c, .host_path = h, .readonly = ro && !strcmp(ro, "ro")};
            } else if (strcmp(argv[i], "--env") == 0 && ne < 16) {
                char *eq = strchr(argv[i + 1], '=');
                if (!eq)
                    break;
                *eq = '\0';
                kvs[ne++] = (struct rss_cri_kv){argv[i + 1], eq + 1};
            } else if (strcmp(argv[i], "--namespace") == 0) {
                p.namespace = argv[i + 1];
            } else if (strcmp(argv[i], "--uid") == 0) {
                p.uid = argv[i + 1];
            } else if (strcmp(argv[i], "--container") == 0) {
                p.container = argv[i + 1];
            } else {
                break;
            }
        }
        if (i >= argc || argv[i][0] == '-') {
            rss_cri_free(cri);
            return usage();
        }
        struct rss_cri_map envs = {ne, kvs};
        p.name = argv[i];
        if (i + 1 < argc)
            p.image = argv[i + 1];
        r = cmd_run_pod(cri, &p, mounts, nm, &envs, &err);
    } else if (strcmp(cmd, "exec") == 0) {
        int timeout_s = 10;
        if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
            timeout_s = atoi(argv[i + 1]);
            i += 2;
        }
        if (i + 1 >= argc) {
            rss_cri_free(cri);
            return usage();
        }
        r = cmd_exec(cri, timeout_s, argv[i], (const char *const *)&argv[i + 1], &code, &err);
    } else {
        rss_cri_free(cri);
        return usage();
    }
    rss_cri_free(cri);
    if (r < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "cri_tool %s", cmd);
        return 1;
    }
    return code;
}
