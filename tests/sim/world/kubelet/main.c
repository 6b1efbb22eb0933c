/* main.c -- world-kubelet: the test world's kubelet simulator for one node (arguments, threads, signals).
 *
 * world-kubelet --kubeconfig PATH --node NAME --cri-endpoint unix://... --pv-dir DIR --state-dir DIR
 *               [--host-process IMAGE=BINARY]... [--extra-mount /HOST:/CONTAINER[:ro]]... [--boot-id ID]
 *               [--host-root DIR] [--node-ip ADDR] [--cgroup-parent /PATH]
 *
 * --host-root is the node's own "/" for hostPath volumes (the simulated nodes share one host, and a
 * DaemonSet's hostPath /run/containerd must be each node's own runtime); --node-ip is the node's
 * InternalIP (a loopback address of its own, e.g. 127.0.1.2), which every pod on it has as its IP;
 * --cgroup-parent puts every pod's containers under the node's cgroup (as the kubelet's kubepods),
 * so that `world partition` cuts them with the node.
 *
 * --boot-id stands for the node's kernel boot id, which the simulated nodes cannot have apart: the world
 * sets a new one at every power-on and hands it to host processes and containers as RSS_BOOT_ID (rssd's
 * election uses it to recognise a Lease holder from before the node rebooted).
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kubelet.h"
#include "rss/cleanup.h"
#include "rss/log.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: world-kubelet --kubeconfig PATH --node NAME --cri-endpoint unix://SOCK --pv-dir DIR\n"
               "                     --state-dir DIR [--host-process IMAGE=BINARY]... [--extra-mount "
               "/HOST:/CTR[:ro]]... [--boot-id ID]\n"
               "                     [--host-root DIR] [--node-ip ADDR] [--cgroup-parent /PATH]\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"node", required_argument, NULL, 'n'},
        {"cri-endpoint", required_argument, NULL, 'c'},
        {"pv-dir", required_argument, NULL, 'p'},
        {"state-dir", required_argument, NULL, 's'},
        {"host-process", required_argument, NULL, 'H'},
        {"extra-mount", required_argument, NULL, 'm'},
        {"boot-id", required_argument, NULL, 'b'},
        {"host-root", required_argument, NULL, 'r'},
        {"node-ip", required_argument, NULL, 'i'},
        {"cgroup-parent", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct kl kl = {0};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'k':
            kl.kubeconfig = optarg;
            break;
        case 'n':
            kl.node = optarg;
            break;
        case 'c':
            kl.cri_endpoint = optarg;
            break;
        case 'p':
            kl.pv_dir = optarg;
            break;
        case 's':
            kl.state_dir = optarg;
            break;
        case 'b':
            kl.boot_id = optarg;
            break;
        case 'r':
            if (optarg[0] != '/') {
                fprintf(stderr, "world-kubelet: --host-root wants an absolute path, got %s\n", optarg);
                return 2;
            }
            kl.host_root = optarg;
            break;
        case 'g':
            if (optarg[0] != '/') {
                fprintf(stderr, "world-kubelet: --cgroup-parent wants an absolute path, got %s\n", optarg);
                return 2;
            }
            kl.cgroup_parent = optarg;
            break;
        case 'i': {
            struct in_addr a;
            if (inet_pton(AF_INET, optarg, &a) != 1) {
                fprintf(stderr, "world-kubelet: --node-ip wants an IPv4 address, got %s\n", optarg);
                return 2;
            }
            kl.node_ip = optarg;
            break;
        }
        case 'H': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || eq[1] != '/') {
                fprintf(stderr, "world-kubelet: --host-process wants IMAGE=/ABSOLUTE/BINARY, got %s\n",
                        optarg);
                return 2;
            }
            kl.hostmaps = rss_xrealloc(kl.hostmaps, (kl.n_hostmaps + 1) * sizeof(*kl.hostmaps));
            kl.hostmaps[kl.n_hostmaps++] = (struct kl_hostmap){
                .image = strndup(optarg, (size_t)(eq - optarg)),
                .binary = rss_xstrdup(eq + 1),
            };
            break;
        }
        case 'm': {
            /* HOST:CONTAINER[:ro] */
            char *spec = rss_xstrdup(optarg), *colon = strchr(spec, ':');
            char *ro = colon ? strchr(colon + 1, ':') : NULL;
            if (ro)
                *ro++ = '\0';
            if (!colon || spec[0] != '/' || colon[1] != '/' || (ro && strcmp(ro, "ro") && strcmp(ro, "rw"))) {
                fprintf(stderr, "world-kubelet: --extra-mount wants /HOST:/CONTAINER[:ro], got %s\n", optarg);
                free(spec);
                return 2;
            }
            *colon = '\0';
            kl.extra_mounts =
                rss_xrealloc(kl.extra_mounts, (kl.n_extra_mounts + 1) * sizeof(*kl.extra_mounts));
            kl.extra_mounts[kl.n_extra_mounts++] = (struct rss_cri_mount){
                .host_path = spec,
                .container_path = rss_xstrdup(colon + 1),
                .readonly = ro && !strcmp(ro, "ro"),
            };
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!kl.kubeconfig || !kl.node || !kl.cri_endpoint || !kl.pv_dir || !kl.state_dir || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (!kl.node_ip)
        kl.node_ip = "127.0.0.1";
    _cleanup_free_ char *component = rss_xasprintf("kubelet/%s", kl.node);
    rss_log_set_component(component);

    _cleanup_error_ rss_error_t err = NULL;
    if (kl_mkdir_p(kl.state_dir, &err) < 0 || kl_mkdir_p(kl.pv_dir, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "world-kubelet");
        return 1;
    }
    if (rss_kube_new(kl.kubeconfig, &kl.kube, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "world-kubelet: kubeconfig %s", kl.kubeconfig);
        return 1;
    }
    rss_kube_set_user_agent(kl.kube, "world-kubelet");
    rss_kube_set_timeout(kl.kube, 10000);
    if (rss_cri_new(kl.cri_endpoint, NULL, &kl.cri, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "world-kubelet: CRI %s", kl.cri_endpoint);
        rss_kube_free(kl.kube);
        return 1;
    }
    pthread_mutex_init(&kl.mu, NULL);
    atomic_init(&kl.stop, false);

    /* Every thread inherits this mask, so only sigtimedwait below sees SIGTERM/SIGINT. */
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    pthread_t node_thread, pods_thread;
    if (pthread_create(&node_thread, NULL, kl_node_thread, &kl) != 0 ||
        pthread_create(&pods_thread, NULL, kl_pods_thread, &kl) != 0) {
        rss_log_err("world-kubelet: cannot start threads");
        return 1;
    }
    rss_log_info("kubelet for node %s on %s started", kl.node, kl.cri_endpoint);
    for (;;) {
        struct timespec ts = {2, 0};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        kl_pods_housekeeping(&kl);
    }
    rss_log_info("kubelet for node %s stopping (pods keep running)", kl.node);
    atomic_store(&kl.stop, true);
    pthread_join(node_thread, NULL);
    pthread_join(pods_thread, NULL);
    kl_pods_shutdown(&kl);
    rss_cri_free(kl.cri);
    rss_kube_free(kl.kube);
    for (size_t i = 0; i < kl.n_hostmaps; i++) {
        free(kl.hostmaps[i].image);
        free(kl.hostmaps[i].binary);
    }
    free(kl.hostmaps);
    for (size_t i = 0; i < kl.n_extra_mounts; i++) {
        free((char *)kl.extra_mounts[i].host_path);
        free((char *)kl.extra_mounts[i].container_path);
    }
    free(kl.extra_mounts);
    pthread_mutex_destroy(&kl.mu);
    return 0;
}
