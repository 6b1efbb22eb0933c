/* kube_h2_check.c -- the Kubernetes client against a real kube-apiserver: one HTTP/2 connection carries a
 * process's watches and requests; a stalled server keeps it, a dead path loses it for a new one.
 *
 * Usage: kube_h2_check KUBECONFIG   (root; tests/realk8s/test_world_real.sh runs it against the real world)
 * Judged from outside the client: the process's own sockets (/proc/self/net/tcp), and a TCP relay in this
 * process that counts the connections it is asked for and can stop relaying (a stalled server: the kernel
 * still acknowledges). For a dead path the client runs in a network namespace of its own, where iptables
 * drops one connection's packets while new connections pass. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "kube_internal.h"

static int failures;
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            printf("ok: ");                                                                                  \
        } else {                                                                                             \
            printf("FAIL: ");                                                                                \
            failures++;                                                                                      \
        }                                                                                                    \
        printf(__VA_ARGS__);                                                                                 \
        printf("\n");                                                                                        \
        fflush(stdout);                                                                                      \
    } while (0)

/* Established TCP connections of this process to `port` on 127.0.0.1, from the kernel's own tables. */
static int connections_to(int port)
{
    char want[16];
    snprintf(want, sizeof(want), ":%04X", port);
    /* Our sockets' inodes. */
    unsigned long inodes[512];
    size_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 512) {
        char p[300], l[64];
        snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(p, l, sizeof(l) - 1);
        if (k > 0) {
            l[k] = '\0';
            unsigned long ino;
            if (sscanf(l, "socket:[%lu]", &ino) == 1)
                inodes[n++] = ino;
        }
    }
    if (d)
        closedir(d);
    FILE *f = fopen("/proc/self/net/tcp", "r");
    char line[512];
    int count = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char local[64], remote[64];
        unsigned st;
        unsigned long ino;
        if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %*s %*s %lu", local, remote, &st, &ino) != 4)
            continue;
        const char *colon = strchr(remote, ':');
        if (st != 1 || !colon || strcmp(colon, want))
            continue;
        for (size_t i = 0; i < n; i++)
            if (inodes[i] == ino)
                count++;
    }
    if (f)
        fclose(f);
    return count;
}

/* --- a TCP relay that can stop relaying --- */

struct relay {
    atomic_int lfd; /* listening socket, made by the main thread in the client's namespace */
    int upstream_port;
    atomic_int accepted, last_port; /* connections accepted; the client port of the last one */
    atomic_bool freeze, stop;
    pthread_t thread;
};

/* Runs in the namespace it was started in (the API server's): its upstream connections are made there. */
static void *relay_main(void *arg)
{
    struct relay *r = arg;
    int a[32], b[32];
    bool closed[32];
    int n = 0;
    while (atomic_load(&r->lfd) < 0 && !atomic_load(&r->stop))
        usleep(10000);
    while (!atomic_load(&r->stop)) {
        bool frozen = atomic_load(&r->freeze); /* held open, not read: a stalled server */
        struct pollfd p[65];
        int np = 0;
        p[np++] = (struct pollfd){.fd = atomic_load(&r->lfd), .events = POLLIN};
        for (int i = 0; i < n; i++) {
            p[np++] = (struct pollfd){.fd = frozen || closed[i] ? -1 : a[i], .events = POLLIN};
            p[np++] = (struct pollfd){.fd = frozen || closed[i] ? -1 : b[i], .events = POLLIN};
        }
        if (poll(p, (nfds_t)np, 100) <= 0)
            continue;
        if ((p[0].revents & POLLIN) && n < 32) {
            struct sockaddr_in peer;
            socklen_t pl = sizeof(peer);
            int c = accept(atomic_load(&r->lfd), (struct sockaddr *)&peer, &pl);
            int u = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->upstream_port)};
            sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (c >= 0 && u >= 0 && connect(u, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                a[n] = c;
                b[n] = u;
                closed[n] = false;
                n++;
                atomic_store(&r->last_port, ntohs(peer.sin_port));
                atomic_fetch_add(&r->accepted, 1);
            } else {
                if (c >= 0)
                    close(c);
                if (u >= 0)
                    close(u);
            }
        }
        for (int i = 0; i < n; i++) {
            for (int side = 0; side < 2; side++) {
                const struct pollfd *q = &p[1 + 2 * i + side];
                if (q->fd < 0 || !(q->revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                char buf[65536];
                ssize_t k = read(q->fd, buf, sizeof(buf));
                int to = side ? a[i] : b[i];
                if (k <= 0 || write(to, buf, (size_t)k) != k) {
                    closed[i] = true;
                    shutdown(a[i], SHUT_RDWR);
                    shutdown(b[i], SHUT_RDWR);
                }
            }
        }
    }
    for (int i = 0; i < n; i++) {
        close(a[i]);
        close(b[i]);
    }
    return NULL;
}

/* The listening socket, in the calling thread's namespace. */
static int relay_listen(struct relay *r)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
        return -1;
    atomic_store(&r->lfd, fd);
    return ntohs(sa.sin_port);
}

/* --- watches --- */

struct watch {
    struct rss_kube *kube;
    atomic_bool stop;
    atomic_int events;
    pthread_t thread;
};

/* The name whose ADDED event the watches count. */
static char names[3][64];
static atomic_int wanted = -1; /* an index into names */

static int on_event(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    struct watch *w = ud;
    (void)err;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
    if (ev == RSS_KUBE_ADDED && cJSON_IsString(name) && atomic_load(&wanted) >= 0 &&
        !strcmp(name->valuestring, names[atomic_load(&wanted)]))
        atomic_fetch_add(&w->events, 1);
    return 0;
}

static void *watch_main(void *arg)
{
    struct watch *w = arg;
    /* A stall window far longer than the test: a watch resumes here only because the client gave its
     * dead connection up. */
    struct rss_kube_watch_opts o = {.stop = &w->stop, .stall_ms = 600000, .label_selector = "kube-h2-check"};
    _cleanup_error_ rss_error_t e = NULL;
    if (rss_kube_watch(w->kube, "/api/v1/namespaces/default/configmaps", &o, on_event, w, &e) < 0)
        rss_log_error(RSS_LOG_WARN, &e, "watch");
    return NULL;
}

static void *get_main(void *arg)
{
    struct rss_kube *k = arg;
    for (int i = 0; i < 5; i++) {
        _cleanup_json_ cJSON *o = NULL;
        _cleanup_error_ rss_error_t e = NULL;
        if (rss_kube_get(k, "/api/v1/namespaces/default", &o, &e) < 0)
            rss_log_error(RSS_LOG_WARN, &e, "get");
    }
    return NULL;
}

/* Waits until every watch counted the wanted object; then resets the counts. */
static bool watches_saw(struct watch *w, long ms)
{
    int64_t t0 = rss_clock_mono_ms();
    bool all = false;
    while (!all && rss_clock_mono_ms() - t0 < ms) {
        all = true;
        for (int i = 0; i < 3; i++)
            all = all && atomic_load(&w[i].events) >= 1;
        if (!all)
            usleep(50000);
    }
    printf("   (%lld ms)\n", (long long)(rss_clock_mono_ms() - t0));
    for (int i = 0; i < 3; i++)
        atomic_store(&w[i].events, 0);
    return all;
}

static int server_port(struct rss_kube *k)
{
    const char *s = strrchr(rss_kube_server(k), ':');
    return s ? (int)strtol(s + 1, NULL, 10) : -1;
}

/* Six watches and twelve threads of GETs at once; then the connections this process holds. */
static int busy_connections(struct rss_kube *k)
{
    struct watch w[6];
    pthread_t g[12];
    for (int i = 0; i < 6; i++) {
        w[i] = (struct watch){.kube = k};
        pthread_create(&w[i].thread, NULL, watch_main, &w[i]);
    }
    for (int i = 0; i < 12; i++)
        pthread_create(&g[i], NULL, get_main, k);
    for (int i = 0; i < 12; i++)
        pthread_join(g[i], NULL);
    usleep(500000);
    int c = connections_to(server_port(k));
    for (int i = 0; i < 6; i++) {
        atomic_store(&w[i].stop, true);
        pthread_join(w[i].thread, NULL);
    }
    return c;
}

static int create_cm(struct rss_kube *k, const char *name)
{
    _cleanup_json_ cJSON *cm = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(cm, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), "kube-h2-check", "1");
    _cleanup_error_ rss_error_t e = NULL;
    _cleanup_json_ cJSON *out = NULL;
    int r = rss_kube_create(k, "/api/v1/namespaces/default/configmaps", cm, &out, &e);
    if (r < 0)
        rss_log_error(RSS_LOG_WARN, &e, "create %s", name);
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kube_h2_check KUBECONFIG\n");
        return 2;
    }
    _cleanup_error_ rss_error_t e = NULL;

    /* 1. One connection for everything; the HTTP/1.1 fallback shows the count can be more. */
    struct rss_kube *k = NULL;
    if (rss_kube_new(argv[1], &k, &e) < 0) {
        rss_log_error(RSS_LOG_ERROR, &e, "kube_h2_check");
        return 1;
    }
    int c2 = busy_connections(k);
    CHECK(c2 == 1, "6 watches and 12 threads of GETs: %d connection(s) to the API server (want 1)", c2);
    rss_kube_free(k);
    setenv("RSS_KUBE_HTTP1", "1", 1);
    if (rss_kube_new(argv[1], &k, &e) < 0)
        return 1;
    int c1 = busy_connections(k);
    CHECK(c1 >= 6, "the same with RSS_KUBE_HTTP1=1: %d connections (want at least 6, one per watch)", c1);
    rss_kube_free(k);
    unsetenv("RSS_KUBE_HTTP1");

    /* 2. Through the relay, from a network namespace of our own: the relay thread starts first, so that it
     * stays in ours and reaches the API server; the client and the listening socket live in the new one. */
    struct relay r = {.lfd = -1};
    if (rss_kube_new(argv[1], &k, &e) < 0)
        return 1;
    r.upstream_port = server_port(k);
    if (pthread_create(&r.thread, NULL, relay_main, &r) != 0 || unshare(CLONE_NEWNET) < 0 ||
        system("ip link set lo up") != 0) {
        perror("relay or namespace");
        return 1;
    }
    int port = relay_listen(&r);
    if (port < 0) {
        perror("relay listen");
        return 1;
    }
    free(k->cfg.server);
    k->cfg.server = rss_xasprintf("https://127.0.0.1:%d", port);
    rss_kube_set_timeout(k, 3000);
    rss_kube_set_retries(k, 1, 1000);
    struct watch w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct watch){.kube = k};
        pthread_create(&w[i].thread, NULL, watch_main, &w[i]);
    }
    for (int i = 0; i < 3; i++)
        snprintf(names[i], sizeof(names[i]), "kube-h2-check-%d-%c", (int)getpid(), 'a' + i);
    atomic_store(&wanted, 0);
    CHECK(create_cm(k, names[0]) == 0, "a request through the relay");
    CHECK(watches_saw(w, 10000), "the 3 watches saw it");
    CHECK(atomic_load(&r.accepted) == 1, "one connection through the relay: %d", atomic_load(&r.accepted));

    /* 2a. A stalled server (the relay reads nothing; its kernel still acknowledges): requests time out, the
     * connection stays, and everything goes on on it once the server answers again. */
    atomic_store(&r.freeze, true);
    _cleanup_json_ cJSON *o = NULL;
    int64_t t0 = rss_clock_mono_ms();
    int g = rss_kube_get(k, "/api/v1/namespaces/default", &o, &e);
    CHECK(g < 0 && rss_error_code(e) == RSS_E_TIMEOUT, "stalled: a GET timed out (%lld ms)",
          (long long)(rss_clock_mono_ms() - t0));
    rss_error_release(&e);
    sleep(4);
    atomic_store(&r.freeze, false);
    atomic_store(&wanted, 1);
    CHECK(create_cm(k, names[1]) == 0, "stalled, then answering: the next request went through");
    CHECK(watches_saw(w, 10000), "the 3 watches saw the new object");
    CHECK(atomic_load(&r.accepted) == 1,
          "still one connection through the relay: %d (a slow server is no reason to reconnect)",
          atomic_load(&r.accepted));

    /* 2b. A dead path: this connection's packets are dropped, new connections pass (a NAT entry or route
     * gone). The kernel gives the connection up (TCP_USER_TIMEOUT), and requests and watches go on on a
     * new one; without that, TCP would keep retransmitting for up to 15 minutes. */
    char cmd[256];
    int cport = atomic_load(&r.last_port);
    snprintf(
        cmd, sizeof(cmd),
        "iptables -w -I INPUT -p tcp --sport %d -j DROP && iptables -w -I INPUT -p tcp --dport %d -j DROP",
        cport, cport);
    CHECK(system(cmd) == 0, "dropping the packets of the connection from port %d", cport);
    t0 = rss_clock_mono_ms();
    g = rss_kube_get(k, "/api/v1/namespaces/default", &o, &e);
    CHECK(g < 0, "dead path: a GET failed (%lld ms)", (long long)(rss_clock_mono_ms() - t0));
    rss_error_release(&e);
    atomic_store(&wanted, 2);
    bool created = false;
    t0 = rss_clock_mono_ms();
    while (!created && rss_clock_mono_ms() - t0 < 60000) {
        created = create_cm(k, names[2]) == 0;
        if (!created)
            sleep(1);
    }
    CHECK(created, "dead path: a request went through %lld ms after the drop began",
          (long long)(rss_clock_mono_ms() - t0));
    CHECK(watches_saw(w, 20000), "the 3 watches saw the object made after it: they resumed on a new "
                                 "connection, not after their 600 s stall window");
    CHECK(atomic_load(&r.accepted) == 2, "two connections through the relay in all: %d",
          atomic_load(&r.accepted));

    for (int i = 0; i < 3; i++) {
        atomic_store(&w[i].stop, true);
        pthread_join(w[i].thread, NULL);
    }
    for (int i = 0; i < 3; i++) {
        _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", names[i], NULL);
        rss_kube_delete(k, path, NULL, NULL, &e);
        rss_error_release(&e);
    }
    rss_kube_free(k);
    atomic_store(&r.stop, true);
    pthread_join(r.thread, NULL);
    close(atomic_load(&r.lfd));
    printf("%s\n", failures ? "kube_h2_check: FAILED" : "kube_h2_check: passed");
    return failures ? 1 : 0;
}
