/* cri_discover.c -- finds the node's CRI runtime without --cri-endpoint: the distributions' known socket
 * paths in order, the candidates that answer the CRI Version call, and the one that runs rssd's own pod. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/cri.h"
#include "rss/strbuf.h"

#define PROBE_TIMEOUT_MS 2000

/* Sources (docs/platforms.md cites them): crictl's defaults (containerd, CRI-O, cri-dockerd), k3s's
 * applyContainerdStateAndAddress and applyCRIDockerdAddress, rke2's staticpod.ContainerdSock, k0s's
 * runtime docs, MicroK8s's default-args/containerd. */
static const struct known {
    const char *path;
    const char *who;
} known[] = {
    {"/run/containerd/containerd.sock", "containerd"},
    {"/run/k3s/containerd/containerd.sock", "k3s, RKE2"},
    {"/run/k0s/containerd.sock", "k0s"},
    {"/var/snap/microk8s/common/run/containerd.sock", "MicroK8s"},
    {"/run/crio/crio.sock", "CRI-O"},
    {"/var/run/crio/crio.sock", "CRI-O"},
    {"/run/cri-dockerd.sock", "cri-dockerd"},
    {"/var/run/cri-dockerd.sock", "cri-dockerd"},
    {"/run/k3s/cri-dockerd/cri-dockerd.sock", "k3s --docker"},
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

const char *rss_cri_known_socket(size_t i, const char **who)
{
    if (i >= N_KNOWN)
        return NULL;
    if (who)
        *who = known[i].who;
    return known[i].path;
}

struct candidate {
    char *path;
    char *found;   /* what was found there, for the report */
    char *runtime; /* set when it answered the Version call */
    bool absent;   /* nothing at the path */
    bool answers;  /* a live CRI runtime */
    bool runs_pod; /* ... that runs a container of this pod */
    bool socket;   /* a socket file: dev and ino identify it, for two paths to one socket */
    dev_t dev;
    ino_t ino;
};

/* connect(2) tells a stale socket file (ECONNREFUSED: nobody listens) from a live one at once; the gRPC
 * client would keep reconnecting until its deadline. Returns 0, or an errno. */
static int try_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errno;
    /* A full backlog (EAGAIN) is a live listener: the Version call decides. */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EAGAIN && errno != EINPROGRESS)
        return errno;
    return 0;
}

/* Whether the runtime runs (or is just creating) a container of pod ns/name. The labels are checked
 * here too: a runtime that ignored the filter must not vouch for a pod it does not run. */
static int runs_pod(struct rss_cri *cri, const char *ns, const char *name, bool *ret, rss_error_t *err)
{
    struct rss_cri_kv sel[] = {{"io.kubernetes.pod.namespace", ns}, {"io.kubernetes.pod.name", name}};
    struct rss_cri_container_filter f = {.labels = {2, sel}};
    struct rss_cri_container_list l = {0};
    if (rss_cri_list_containers(cri, &f, &l, err) < 0)
        return -1;
    *ret = false;
    for (size_t i = 0; i < l.n; i++) {
        const char *lns = rss_cri_map_get(&l.items[i].labels, sel[0].key);
        const char *lname = rss_cri_map_get(&l.items[i].labels, sel[1].key);
        /* rssd itself runs in the container, so its state may still read CREATED for a moment. */
        if (lns && lname && !strcmp(lns, ns) && !strcmp(lname, name) &&
            (l.items[i].state == RSS_CRI_CONTAINER_RUNNING || l.items[i].state == RSS_CRI_CONTAINER_CREATED))
            *ret = true;
    }
    rss_cri_container_list_clear(&l);
    return 0;
}

static void probe(struct candidate *c, const struct rss_cri_discover_options *o, int timeout_ms)
{
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_cri_options co = {.call_timeout_ms = timeout_ms};
    struct rss_cri *cri = NULL;
    if (rss_cri_new(c->path, &co, &cri, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        c->found = rss_xasprintf("unusable: %s", msg);
        return;
    }
    struct rss_cri_version v = {0};
    if (rss_cri_get_version(cri, &v, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        if (rss_error_code(err) == RSS_E_UNSUPPORTED)
            c->found =
                rss_xstrdup("a gRPC server without the CRI runtime.v1 service (Docker's own containerd "
                            "has its CRI plugin disabled)");
        else
            c->found = rss_xasprintf("accepts connections but its CRI Version call failed within %d ms: %s",
                                     timeout_ms, msg);
        rss_cri_free(cri);
        return;
    }
    c->answers = true;
    c->runtime = rss_xasprintf("%s %s (CRI %s)", v.runtime_name, v.runtime_version, v.runtime_api_version);
    rss_cri_version_clear(&v);
    if (!o->pod_name) {
        c->found = rss_xasprintf("%s answers", c->runtime);
    } else if (runs_pod(cri, o->pod_namespace, o->pod_name, &c->runs_pod, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        c->found = rss_xasprintf("%s answers, but listing its containers failed: %s", c->runtime, msg);
    } else {
        c->found = rss_xasprintf("%s answers, %s pod %s/%s", c->runtime,
                                 c->runs_pod ? "runs" : "does not run", o->pod_namespace, o->pod_name);
    }
    rss_cri_free(cri);
}

/* Looks at one known path; earlier candidates are c[0..i-1], for sockets reached twice. */
static void examine(struct candidate *c, size_t i, const struct rss_cri_discover_options *o, int timeout_ms)
{
    struct stat st;
    if (stat(c[i].path, &st) < 0) {
        c[i].absent = errno == ENOENT;
        c[i].found = rss_xstrdup(strerror(errno));
        return;
    }
    if (!S_ISSOCK(st.st_mode)) {
        c[i].found = rss_xstrdup("not a socket");
        return;
    }
    for (size_t j = 0; j < i; j++) {
        if (c[j].socket && c[j].dev == st.st_dev && c[j].ino == st.st_ino) {
            c[i].found = rss_xasprintf("the same socket as %s", c[j].path);
            return;
        }
    }
    c[i].socket = true;
    c[i].dev = st.st_dev;
    c[i].ino = st.st_ino;
    int e = try_connect(c[i].path);
    if (e == ECONNREFUSED)
        c[i].found = rss_xstrdup("a stale socket: nothing listens (a stopped or removed runtime)");
    else if (e)
        c[i].found = rss_xasprintf("cannot connect: %s", strerror(e));
    else
        probe(&c[i], o, timeout_ms);
}

void rss_cri_discovery_clear(struct rss_cri_discovery *d)
{
    free(d->endpoint);
    free(d->runtime);
    free(d->report);
    *d = (struct rss_cri_discovery){0};
}

int rss_cri_discover(const struct rss_cri_discover_options *opts, struct rss_cri_discovery *ret,
                     rss_error_t *err)
{
    struct rss_cri_discover_options o = opts ? *opts : (struct rss_cri_discover_options){0};
    const char *root = o.root ? o.root : "";
    int timeout_ms = o.probe_timeout_ms > 0 ? o.probe_timeout_ms : PROBE_TIMEOUT_MS;
    /* Half a pod is no pod: both names, or the check is off. */
    if (!o.pod_name || !*o.pod_name || !o.pod_namespace || !*o.pod_namespace)
        o.pod_name = o.pod_namespace = NULL;

    struct candidate c[N_KNOWN] = {0};
    /* What was found at each path; the absent ones last, in one item, so the rest stands out. */
    struct rss_strbuf report = {0}, absent = {0};
    size_t n_live = 0, n_pod = 0, chosen = N_KNOWN;
    for (size_t i = 0; i < N_KNOWN; i++) {
        c[i].path = rss_xasprintf("%s%s", root, known[i].path);
        examine(c, i, &o, timeout_ms);
        if (c[i].absent)
            rss_strbuf_printf(&absent, "%s%s (%s)", absent.len ? ", " : "", c[i].path, known[i].who);
        else
            rss_strbuf_item(&report, "%s (%s): %s", c[i].path, known[i].who, c[i].found);
        if (c[i].answers && n_live++ == 0 && !o.pod_name)
            chosen = i;
        if (c[i].runs_pod && n_pod++ == 0)
            chosen = i;
    }
    if (absent.len)
        rss_strbuf_item(&report, "absent: %s", absent.s);
    free(absent.s);

    int rc = 0;
    static const char fix[] =
        "set --cri-endpoint (or $CONTAINER_RUNTIME_ENDPOINT; the Helm value criSocket) to "
        "the kubelet's --container-runtime-endpoint and mount that socket's directory "
        "into rssd's pod (docs/platforms.md)";
    if (n_live == 0) {
        rc = rss_error_make(err, RSS_E_NOT_FOUND, 0, "no CRI runtime answers at the known paths: %s; %s",
                            rss_strbuf_str(&report), fix);
    } else if (!o.pod_name && n_live > 1) {
        rc = rss_error_make(err, RSS_E_INVALID, 0,
                            "%zu CRI runtimes answer and nothing tells which one is the kubelet's ($POD_NAME "
                            "and $POD_NAMESPACE, rssd's own pod, are not set): %s; %s",
                            n_live, rss_strbuf_str(&report), fix);
    } else if (o.pod_name && n_pod == 0) {
        rc = rss_error_make(err, RSS_E_NOT_FOUND, 0,
                            "none of the CRI runtimes that answer runs this pod %s/%s, so none is the "
                            "kubelet's: %s; %s",
                            o.pod_namespace, o.pod_name, rss_strbuf_str(&report), fix);
    } else if (o.pod_name && n_pod > 1) {
        rc = rss_error_make(err, RSS_E_INVALID, 0, "%zu CRI runtimes run this pod %s/%s: %s; %s", n_pod,
                            o.pod_namespace, o.pod_name, rss_strbuf_str(&report), fix);
    } else {
        *ret = (struct rss_cri_discovery){
            .endpoint = rss_xasprintf("unix://%s", c[chosen].path),
            .runtime = TAKE_PTR(c[chosen].runtime),
            .report = rss_xstrdup(rss_strbuf_str(&report)),
        };
    }
    for (size_t i = 0; i < N_KNOWN; i++) {
        free(c[i].path);
        free(c[i].found);
        free(c[i].runtime);
    }
    free(report.s);
    return rc;
}
