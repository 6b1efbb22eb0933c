/* cri_lifecycle.h -- CRI sandbox and container lifecycle, for the test world's kubelet.
 *
 * rssd itself never creates, starts or stops containers: it lists them and runs hooks in them
 * (rss/cri.h). These calls exist so that the test world can act as a kubelet on a real runtime with
 * the same client; the conventions (errors, deadlines, maps) are those of rss/cri.h.
 */
#ifndef RSS_CRI_LIFECYCLE_H
#define RSS_CRI_LIFECYCLE_H

#include "rss/cri.h"

/* --- sandboxes -------------------------------------------------------------------------------- */

enum rss_cri_sandbox_state {
    RSS_CRI_SANDBOX_READY = 0,
    RSS_CRI_SANDBOX_NOTREADY = 1,
};

struct rss_cri_sandbox {
    char *id;
    char *name; /* metadata: the Pod's name, namespace, uid */
    char *namespace;
    char *uid;
    uint32_t attempt;
    int state;          /* enum rss_cri_sandbox_state; unknown values kept as they came */
    int64_t created_at; /* ns since the epoch */
    char *ip;           /* rss_cri_sandbox_status only; "" for host-network sandboxes */
    struct rss_cri_map labels;
    struct rss_cri_map annotations;
};

struct rss_cri_sandbox_list {
    size_t n;
    struct rss_cri_sandbox *items;
};

/* All set fields are ANDed; a zeroed filter (or NULL) matches every sandbox, including NOTREADY
 * ones of earlier attempts. */
struct rss_cri_sandbox_filter {
    const char *id; /* NULL: any; runtimes accept unique prefixes */
    bool match_state;
    enum rss_cri_sandbox_state state;
    struct rss_cri_map labels; /* every key must be present with this value */
};

int rss_cri_list_sandboxes(struct rss_cri *cri, const struct rss_cri_sandbox_filter *filter,
                           struct rss_cri_sandbox_list *ret, rss_error_t *err);
int rss_cri_sandbox_status(struct rss_cri *cri, const char *sandbox_id, struct rss_cri_sandbox *ret,
                           rss_error_t *err);
void rss_cri_sandbox_clear(struct rss_cri_sandbox *s);
void rss_cri_sandbox_list_clear(struct rss_cri_sandbox_list *l);

/* What the test world's kubelet passes to RunPodSandbox (and again to CreateContainer). The sandbox
 * always uses the node's network namespace and gets no hostname, as the kubelet does for
 * hostNetwork pods: the test world runs without CNI. Labels should include io.kubernetes.pod.name,
 * io.kubernetes.pod.namespace and io.kubernetes.pod.uid plus the Pod's labels; annotations are the
 * Pod's. */
struct rss_cri_sandbox_config {
    const char *name;
    const char *namespace;
    const char *uid;
    uint32_t attempt;
    const char *log_directory; /* NULL: none */
    const char *cgroup_parent; /* NULL: the runtime's default; else e.g. "/kubepods/pod<uid>" (cgroupfs) */
    struct rss_cri_map labels;
    struct rss_cri_map annotations;
};

/* RunPodSandbox. *id_ret gets the new sandbox id (caller frees). */
int rss_cri_run_sandbox(struct rss_cri *cri, const struct rss_cri_sandbox_config *config, char **id_ret,
                        rss_error_t *err);
/* StopPodSandbox: kills every container of the sandbox. Idempotent. */
int rss_cri_stop_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err);
/* RemovePodSandbox: removes the sandbox and its containers. Idempotent. */
int rss_cri_remove_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err);

/* --- containers ------------------------------------------------------------------------------- */

struct rss_cri_mount {
    const char *container_path;
    const char *host_path;
    bool readonly;
};

/* What the test world's kubelet passes to CreateContainer. The container gets its own PID namespace
 * (the PodSpec default) and shares the sandbox's (host) network. Labels should be exactly
 * io.kubernetes.pod.name/namespace/uid and io.kubernetes.container.name, as the kubelet sets. */
struct rss_cri_container_config {
    const char *name;
    uint32_t attempt;
    const char *image;          /* e.g. "localhost/rss/busybox:1" */
    const char *const *command; /* NULL-terminated; NULL: the image's entrypoint */
    const char *const *args;    /* NULL-terminated; NULL: the image's cmd */
    const char *working_dir;    /* NULL: image default */
    struct rss_cri_map envs;    /* environment variables */
    const struct rss_cri_mount *mounts;
    size_t n_mounts;
    struct rss_cri_map labels;
    struct rss_cri_map annotations;
    const char *log_path;       /* relative to the sandbox's log_directory; NULL: none */
    int64_t memory_limit_bytes; /* 0: none */
    /* A Pod's securityContext (the test world's kubelet passes it on; rssd never sets these). */
    bool has_run_as_user; /* false: the image's user */
    int64_t run_as_user;
    bool readonly_rootfs;
    bool no_new_privs;            /* allowPrivilegeEscalation: false */
    const char *const *drop_caps; /* NULL-terminated, e.g. {"ALL", NULL}; NULL: none */
};

/* CreateContainer in `sandbox_id`; `sandbox` is the config the sandbox was created with. *id_ret
 * gets the new container id (caller frees). */
int rss_cri_create_container(struct rss_cri *cri, const char *sandbox_id,
                             const struct rss_cri_container_config *config,
                             const struct rss_cri_sandbox_config *sandbox, char **id_ret, rss_error_t *err);
int rss_cri_start_container(struct rss_cri *cri, const char *container_id, rss_error_t *err);
/* StopContainer is rss_cri_stop_container (rss/cri.h): rssd itself calls it. */
int rss_cri_remove_container(struct rss_cri *cri, const char *container_id, rss_error_t *err);

#endif
