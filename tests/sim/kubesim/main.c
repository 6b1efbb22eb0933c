/* main.c -- kubesim, a Kubernetes API server simulator for tests: command line, state directory,
 * startup (TLS material, built-in namespaces, kubeconfig, ready file) and clean SIGTERM exit. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

static void usage(FILE *f)
{
    fputs("usage: kubesim --dir DIR [--port PORT] [--minor N] [--pod-logs DIR] [--debug]\n"
          "  Serves a simulated Kubernetes API on https://127.0.0.1:PORT (0 or absent: any free port).\n"
          "  DIR receives ca.crt, ca.key, server.crt, server.key, token, kubeconfig, port and ready.\n"
          "  --minor N  the minor version /version reports (default 32)\n"
          "  --pod-logs DIR  serve pods/log from DIR/<node>/kubelet/logs (the world kubelet's CRI files)\n"
          "  --debug    log every request (also RSS_LOG_LEVEL=debug)\n",
          f);
}

static int mkdir_p(const char *dir)
{
    _cleanup_free_ char *copy = rss_xstrdup(dir);
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(copy, 0755) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void add_namespace(const char *name)
{
    cJSON *ns = cJSON_CreateObject();
    cJSON_AddStringToObject(ns, "apiVersion", "v1");
    cJSON_AddStringToObject(ns, "kind", "Namespace");
    cJSON *md = cJSON_AddObjectToObject(ns, "metadata");
    _cleanup_free_ char *uid = ks_uuid();
    _cleanup_free_ char *now = ks_time_now(0);
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "uid", uid);
    cJSON_AddStringToObject(md, "creationTimestamp", now);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(md, "labels"), "kubernetes.io/metadata.name",
                          cJSON_CreateString(name));
    cJSON_AddItemToObject(ns, "spec", cJSON_Parse("{\"finalizers\":[\"kubernetes\"]}"));
    cJSON_AddItemToObject(ns, "status", cJSON_Parse("{\"phase\":\"Active\"}"));
    ks_store_put("", "namespaces", "", ns, "POST");
    ks_default_serviceaccount(name);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"dir", required_argument, NULL, 'd'},
                                         {"port", required_argument, NULL, 'p'},
                                         {"minor", required_argument, NULL, 'm'},
                                         {"debug", no_argument, NULL, 'D'},
                                         {"pod-logs", required_argument, NULL, 'L'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    int port = 0;
    rss_log_set_component("kubesim");
    for (int c; (c = getopt_long(argc, argv, "d:p:m:DL:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'd':
            dir = optarg;
            break;
        case 'p':
            port = atoi(optarg);
            break;
        case 'm':
            ks_minor = atoi(optarg);
            break;
        case 'D':
            rss_log_set_level(RSS_LOG_DEBUG);
            break;
        case 'L':
            ks_pod_logs_root = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!dir || optind != argc || port < 0 || port > 65535) {
        usage(stderr);
        return 2;
    }
    /* Block the signals before any thread starts so only sigwait() below sees them. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());

    char err[512];
    if (mkdir_p(dir) < 0) {
        rss_log_err("cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    _cleanup_free_ char *ready = rss_xasprintf("%s/ready", dir);
    unlink(ready);
    _cleanup_free_ char *cert = NULL, *key = NULL;
    if (ks_certs_ensure(dir, &cert, &key, err, sizeof(err)) < 0) {
        rss_log_err("TLS material in %s: %s", dir, err);
        return 1;
    }
    if (ks_auth_init(dir, err, sizeof(err)) < 0) {
        rss_log_err("%s", err);
        return 1;
    }
    ks_lock();
    ks_registry_init();
    ks_store_init();
    add_namespace("default");
    add_namespace("kube-system");
    add_namespace("kube-public");
    add_namespace("kube-node-lease");
    ks_unlock();

    struct MHD_Daemon *d = ks_server_start(dir, &port, cert, key, err, sizeof(err));
    if (!d) {
        rss_log_err("%s", err);
        return 1;
    }
    ks_port = port;
    if (ks_write_kubeconfig(dir, port, err, sizeof(err)) < 0) {
        rss_log_err("%s", err);
        MHD_stop_daemon(d);
        return 1;
    }
    _cleanup_fclose_ FILE *rf = fopen(ready, "we");
    if (!rf) {
        rss_log_err("cannot write %s: %s", ready, strerror(errno));
        MHD_stop_daemon(d);
        return 1;
    }
    fprintf(rf, "%d\n", port);
    fclose(TAKE_PTR(rf));
    rss_log_info("serving https://127.0.0.1:%d (Kubernetes v1.%d), state in %s", port, ks_minor, dir);

    int sig = 0;
    sigwait(&sigs, &sig);
    rss_log_info("signal %d: shutting down", sig);
    atomic_store(&ks_shutting_down, true);
    ks_lock();
    ks_broadcast();
    ks_unlock();
    MHD_stop_daemon(d);
    unlink(ready);
    ks_lock();
    ks_store_free();
    ks_registry_free();
    ks_simctl_free();
    ks_unlock();
    ks_auth_free();
    ks_rbac_free();
    return 0;
}
