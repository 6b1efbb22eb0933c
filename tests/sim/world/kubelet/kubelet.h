/* kubelet.h -- the test world's kubelet simulator: shared state and the interfaces between its files.
 *
 * Threads: main (arguments, housekeeping), the node heartbeat (node.c), the pod watch (pods.c) and one
 * worker per pod (podsync.c), as the real kubelet's pod workers. The pod table is guarded by kl->mu;
 * the Kubernetes and CRI clients are thread-safe. Host processes (hostproc.c) are started with
 * posix_spawn, never fork, because gRPC core does not survive a fork.
 */
#ifndef RSS_WORLD_KUBELET_H
#define RSS_WORLD_KUBELET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "rss/cri.h"
#include "cri_lifecycle.h"
#include "rss/error.h"
#include "rss/kube.h"

#define KL_LABEL_POD_NAME       "io.kubernetes.pod.name"
#define KL_LABEL_POD_NAMESPACE  "io.kubernetes.pod.namespace"
#define KL_LABEL_POD_UID        "io.kubernetes.pod.uid"
#define KL_LABEL_CONTAINER_NAME "io.kubernetes.container.name"

struct kl_hostmap {
    char *image;
    char *binary;
};

struct kl_pod;

struct kl {
    const char *node;
    const char *kubeconfig;
    const char *cri_endpoint;
    const char *pv_dir;
    const char *state_dir;
    const char *boot_id;       /* --boot-id: this power-on's boot id, given to host processes; NULL = none */
    const char *host_root;     /* --host-root: the node's own "/" for hostPath volumes; NULL = the host's */
    const char *node_ip;       /* --node-ip: the node's InternalIP, also every pod's IP (host network) */
    const char *cgroup_parent; /* --cgroup-parent: the node's cgroup; each pod gets <it>/pod<uid> */
    struct kl_hostmap *hostmaps;
    size_t n_hostmaps;
    struct rss_cri_mount *extra_mounts; /* --extra-mount: in every runtime container (e.g. /hooks) */
    size_t n_extra_mounts;
    char *runtime_version; /* "containerd://1.6.20~ds1" once known */

    struct rss_kube *kube;
    struct rss_cri *cri;
    atomic_bool stop;

    pthread_mutex_t mu;  /* guards everything below and every struct kl_pod's shared fields */
    struct kl_pod *pods; /* one entry per pod uid seen on this node */
    bool synced;         /* the first full list of our pods has arrived */
};

/* One pod's worker. Fields under "shared" are guarded by kl->mu. */
struct kl_pod {
    struct kl_pod *next;
    char *uid;
    char *ns;
    char *name;
    struct kl *kl;
    pthread_t thread;
    pthread_cond_t cond;
    /* shared */
    cJSON *obj;    /* the latest Pod from the API */
    bool gone;     /* the Pod no longer exists in the API */
    bool seen;     /* seen in the current (re)list */
    bool kick;     /* something changed: sync now */
    bool finished; /* the worker thread has returned */
};

/* node.c: registers the Node, then renews its Lease every second and its status every few seconds
 * until kl->stop. Writes <state_dir>/registered after the first successful status update. */
void *kl_node_thread(void *kl);

/* pods.c: watches the pods bound to this node and runs one worker per pod until kl->stop. */
void *kl_pods_thread(void *kl);
/* pods.c: joins and frees the workers of pods that are gone and done; removes sandboxes and host
 * processes of pods this node no longer has (e.g. deleted while it was off). */
void kl_pods_housekeeping(struct kl *kl);
/* pods.c: stops and joins every worker (at exit). */
void kl_pods_shutdown(struct kl *kl);

/* podsync.c: the worker thread of one pod (arg: struct kl_pod *). */
void *kl_pod_worker(void *pod);

/* podspec.c: translating a Pod into what the runtime needs. */
struct kl_env {
    size_t n;
    char **keys;
    char **values;
};
/* Resolves a container's env (plain values, downward-API fieldRefs, $(VAR) references); node_ip is
 * status.podIP and status.hostIP (the world's pods share the node's network). */
int kl_env_resolve(const cJSON *pod, const cJSON *container, const char *node, const char *node_ip,
                   struct kl_env *ret, rss_error_t *err);
/* The value of key in env, or NULL. */
const char *kl_env_get(const struct kl_env *env, const char *key);
void kl_env_add(struct kl_env *env, const char *key, const char *value);
void kl_env_clear(struct kl_env *env);
/* Expands $(VAR) references in s against env (kubelet semantics: $$ escapes, unknown refs stay). */
char *kl_env_expand(const struct kl_env *env, const char *s);

struct kl_mounts {
    size_t n;
    struct rss_cri_mount *items; /* strings owned here */
};
/* Resolves a container's volumeMounts into host directories (creating PVC, emptyDir and
 * DirectoryOrCreate directories), plus the node's extra mounts at paths the container leaves free.
 * A hostPath P is <host_root>/P when the node has a host root (each simulated node its own tree). */
int kl_mounts_resolve(struct kl *kl, const cJSON *pod, const cJSON *container, struct kl_mounts *ret,
                      rss_error_t *err);
void kl_mounts_clear(struct kl_mounts *m);
/* The host directory of a pod's emptyDir volumes (caller frees). */
char *kl_pod_dir(struct kl *kl, const char *uid);

/* A NULL-terminated copy of a JSON array of strings with $(VAR) expanded; NULL when arr is absent. */
char **kl_strv_from_json(const cJSON *arr, const struct kl_env *env);
void kl_strv_free(char **v);

/* A short stable hash of a JSON value (the container spec), as hex (caller frees). */
char *kl_json_hash(const cJSON *v);
/* The host binary a container's image is mapped to, or NULL. */
const char *kl_hostmap_lookup(const struct kl *kl, const char *image);

/* hostproc.c: containers run as host processes. */
struct kl_hostproc {
    pid_t pid; /* 0: none */
    unsigned long long start;
    uint32_t attempt;
    bool child; /* ours (waitpid works) or adopted from an earlier kubelet */
    bool exited;
    int exit_code;
    int64_t started_at;  /* ns since the epoch */
    int64_t finished_at; /* ns */
};
/* Starts binary with argv and env in a new session, stdout/stderr to <state_dir>/hostproc/<uid>_<name>.log,
 * records "pid start attempt" in <state_dir>/hostproc/<uid>_<name>.pid. KUBECONFIG is `kubeconfig`. */
int kl_hostproc_start(struct kl *kl, const char *uid, const char *name, const char *binary, char *const *argv,
                      const struct kl_env *env, const char *kubeconfig, uint32_t attempt,
                      struct kl_hostproc *ret, rss_error_t *err);
/* Adopts the process recorded by an earlier kubelet. Returns 1 if it lives (ret filled), 0 if not
 * (ret->attempt holds the recorded attempt, ret->pid 0), RSS_E_NOT_FOUND if nothing was recorded. */
int kl_hostproc_adopt(struct kl *kl, const char *uid, const char *name, struct kl_hostproc *ret,
                      rss_error_t *err);
/* Updates exited/exit_code; returns true while the process runs. */
bool kl_hostproc_alive(struct kl_hostproc *p);
/* SIGTERM, wait up to grace_s, SIGKILL; reaps it if ours; removes the pid file. */
void kl_hostproc_kill(struct kl *kl, const char *uid, const char *name, struct kl_hostproc *p, long grace_s);
/* Kills by SIGKILL every recorded host process whose pod uid is not accepted by keep(). */
void kl_hostproc_reap_orphans(struct kl *kl, bool (*keep)(struct kl *kl, const char *uid));

/* satoken.c: a kubeconfig (path, caller frees) with a token of the pod's ServiceAccount from the
 * TokenRequest API, in <state_dir>/pods/<uid>/serviceaccount/; none when the pod opts out of
 * automountServiceAccountToken. */
char *kl_pod_kubeconfig(struct kl *kl, const cJSON *pod, rss_error_t *err);
/* satoken.c: the projected ServiceAccount volume of a runtime container, as the kubelet mounts it at
 * /var/run/secrets/kubernetes.io/serviceaccount: a directory (caller frees) with token, ca.crt and
 * namespace. *none is set (and NULL returned) when the pod opts out of automountServiceAccountToken. */
char *kl_pod_sa_dir(struct kl *kl, const cJSON *pod, bool *none, rss_error_t *err);
#define KL_SA_MOUNT "/var/run/secrets/kubernetes.io/serviceaccount"

/* probe.c: one httpGet probe: GET http://host:port/path within timeout_ms. Returns the HTTP status,
 * or -1 (err set) when nothing answered. The kubelet counts 200-399 as success. */
int kl_probe_http(const char *host, int port, const char *path, long timeout_ms, rss_error_t *err);

/* util */
int64_t kl_now_ns(void);
int kl_mkdir_p(const char *path, rss_error_t *err);
int kl_rm_rf(const char *path);

#endif
