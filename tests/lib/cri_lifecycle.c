/* cri_lifecycle.c -- CRI sandbox and container lifecycle calls, used by the test world's kubelet,
 * never by rssd itself (rssd lists containers, execs in them and, as a self-fence's last resort, stops
 * one: cri.c). */
#include <stdio.h>
#include <string.h>

#include "cri_internal.h"
#include "cri_lifecycle.h"

/* --- sandboxes -------------------------------------------------------------------------------- */

static void copy_sandbox_meta(struct rss_cri_sandbox *s, const Runtime__V1__PodSandboxMetadata *m)
{
    s->name = dup_str(m ? m->name : NULL);
    s->namespace = dup_str(m ? m->namespace_ : NULL);
    s->uid = dup_str(m ? m->uid : NULL);
    s->attempt = m ? m->attempt : 0;
}

int rss_cri_list_sandboxes(struct rss_cri *cri, const struct rss_cri_sandbox_filter *filter,
                           struct rss_cri_sandbox_list *ret, rss_error_t *err)
{
    Runtime__V1__ListPodSandboxRequest req = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
    Runtime__V1__PodSandboxFilter f = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
    Runtime__V1__PodSandboxStateValue sv = RUNTIME__V1__POD_SANDBOX_STATE_VALUE__INIT;
    _cleanup_(free_map_entries) Runtime__V1__PodSandboxFilter__LabelSelectorEntry **sel = NULL;
    _cleanup_resp_ Runtime__V1__ListPodSandboxResponse *resp = NULL;

    if (filter) {
        if (filter->id)
            f.id = (char *)filter->id;
        if (filter->match_state) {
            sv.state = (Runtime__V1__PodSandboxState)filter->state;
            f.state = &sv;
        }
        BUILD_MAP(Runtime__V1__PodSandboxFilter__LabelSelectorEntry,
                  RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT, &filter->labels,
                  &f.n_label_selector, &sel);
        f.label_selector = sel;
        req.filter = &f;
    }
    if (CALL(cri, "ListPodSandbox", NULL, &req, runtime__v1__list_pod_sandbox_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;

    ret->n = resp->n_items;
    ret->items = resp->n_items ? rss_xcalloc(resp->n_items, sizeof(*ret->items)) : NULL;
    for (size_t i = 0; i < resp->n_items; i++) {
        const Runtime__V1__PodSandbox *p = resp->items[i];
        struct rss_cri_sandbox *s = &ret->items[i];
        s->id = dup_str(p->id);
        copy_sandbox_meta(s, p->metadata);
        s->state = p->state;
        s->created_at = p->created_at;
        s->ip = dup_str(NULL);
        COPY_MAP(&s->labels, p->n_labels, p->labels);
        COPY_MAP(&s->annotations, p->n_annotations, p->annotations);
    }
    return 0;
}

int rss_cri_sandbox_status(struct rss_cri *cri, const char *sandbox_id, struct rss_cri_sandbox *ret,
                           rss_error_t *err)
{
    Runtime__V1__PodSandboxStatusRequest req = RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__PodSandboxStatusResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    if (CALL(cri, "PodSandboxStatus", sandbox_id, &req, runtime__v1__pod_sandbox_status_response__descriptor,
             cri->call_timeout_ms, &resp, err) < 0)
        return -1;
    if (!resp->status)
        return rss_error_make(err, RSS_E_INTERNAL, 0,
                              "CRI PodSandboxStatus %.12s on %s: no status in the answer", sandbox_id,
                              cri->endpoint);
    const Runtime__V1__PodSandboxStatus *p = resp->status;
    memset(ret, 0, sizeof(*ret));
    ret->id = dup_str(p->id);
    copy_sandbox_meta(ret, p->metadata);
    ret->state = p->state;
    ret->created_at = p->created_at;
    ret->ip = dup_str(p->network ? p->network->ip : NULL);
    COPY_MAP(&ret->labels, p->n_labels, p->labels);
    COPY_MAP(&ret->annotations, p->n_annotations, p->annotations);
    return 0;
}

void rss_cri_sandbox_clear(struct rss_cri_sandbox *s)
{
    if (!s)
        return;
    free(s->id);
    free(s->name);
    free(s->namespace);
    free(s->uid);
    free(s->ip);
    map_clear(&s->labels);
    map_clear(&s->annotations);
    memset(s, 0, sizeof(*s));
}

void rss_cri_sandbox_list_clear(struct rss_cri_sandbox_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        rss_cri_sandbox_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* A PodSandboxConfig on the stack plus what it points to; fill with sandbox_config_build. */
struct sandbox_config_buf {
    Runtime__V1__PodSandboxConfig config;
    Runtime__V1__PodSandboxMetadata meta;
    Runtime__V1__LinuxPodSandboxConfig linux_config;
    Runtime__V1__LinuxSandboxSecurityContext sec;
    Runtime__V1__NamespaceOption ns;
    Runtime__V1__PodSandboxConfig__LabelsEntry **labels;
    Runtime__V1__PodSandboxConfig__AnnotationsEntry **annotations;
};

static void sandbox_config_build(struct sandbox_config_buf *b, const struct rss_cri_sandbox_config *c)
{
    runtime__v1__pod_sandbox_config__init(&b->config);
    runtime__v1__pod_sandbox_metadata__init(&b->meta);
    runtime__v1__linux_pod_sandbox_config__init(&b->linux_config);
    runtime__v1__linux_sandbox_security_context__init(&b->sec);
    runtime__v1__namespace_option__init(&b->ns);
    b->meta.name = (char *)(c->name ? c->name : "");
    b->meta.namespace_ = (char *)(c->namespace ? c->namespace : "");
    b->meta.uid = (char *)(c->uid ? c->uid : "");
    b->meta.attempt = c->attempt;
    b->config.metadata = &b->meta;
    /* hostname stays empty: runc refuses to set one without a private UTS namespace. */
    if (c->log_directory)
        b->config.log_directory = (char *)c->log_directory;
    BUILD_MAP(Runtime__V1__PodSandboxConfig__LabelsEntry, RUNTIME__V1__POD_SANDBOX_CONFIG__LABELS_ENTRY__INIT,
              &c->labels, &b->config.n_labels, &b->labels);
    b->config.labels = b->labels;
    BUILD_MAP(Runtime__V1__PodSandboxConfig__AnnotationsEntry,
              RUNTIME__V1__POD_SANDBOX_CONFIG__ANNOTATIONS_ENTRY__INIT, &c->annotations,
              &b->config.n_annotations, &b->annotations);
    b->config.annotations = b->annotations;
    /* Host network (no CNI in the test world); the sandbox's own PID and IPC namespaces. */
    b->ns.network = RUNTIME__V1__NAMESPACE_MODE__NODE;
    b->ns.pid = RUNTIME__V1__NAMESPACE_MODE__POD;
    b->ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
    b->sec.namespace_options = &b->ns;
    b->linux_config.security_context = &b->sec;
    if (c->cgroup_parent)
        b->linux_config.cgroup_parent = (char *)c->cgroup_parent;
    b->config.linux_config = &b->linux_config;
}

static void sandbox_config_release(struct sandbox_config_buf *b)
{
    free_map_entries(&b->labels);
    free_map_entries(&b->annotations);
    b->labels = NULL;
    b->annotations = NULL;
}

int rss_cri_run_sandbox(struct rss_cri *cri, const struct rss_cri_sandbox_config *config, char **id_ret,
                        rss_error_t *err)
{
    Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RunPodSandboxResponse *resp = NULL;
    struct sandbox_config_buf b;
    sandbox_config_build(&b, config);
    req.config = &b.config;
    int r = CALL(cri, "RunPodSandbox", config->name, &req, runtime__v1__run_pod_sandbox_response__descriptor,
                 cri->call_timeout_ms, &resp, err);
    sandbox_config_release(&b);
    if (r < 0)
        return -1;
    *id_ret = dup_str(resp->pod_sandbox_id);
    return 0;
}

int rss_cri_stop_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err)
{
    Runtime__V1__StopPodSandboxRequest req = RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StopPodSandboxResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    return CALL(cri, "StopPodSandbox", sandbox_id, &req, runtime__v1__stop_pod_sandbox_response__descriptor,
                cri->call_timeout_ms, &resp, err);
}

int rss_cri_remove_sandbox(struct rss_cri *cri, const char *sandbox_id, rss_error_t *err)
{
    Runtime__V1__RemovePodSandboxRequest req = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RemovePodSandboxResponse *resp = NULL;
    req.pod_sandbox_id = (char *)sandbox_id;
    return CALL(cri, "RemovePodSandbox", sandbox_id, &req,
                runtime__v1__remove_pod_sandbox_response__descriptor, cri->call_timeout_ms, &resp, err);
}

/* --- containers ------------------------------------------------------------------------------- */

int rss_cri_create_container(struct rss_cri *cri, const char *sandbox_id,
                             const struct rss_cri_container_config *config,
                             const struct rss_cri_sandbox_config *sandbox, char **id_ret, rss_error_t *err)
{
    Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
    Runtime__V1__ContainerConfig cc = RUNTIME__V1__CONTAINER_CONFIG__INIT;
    Runtime__V1__ContainerMetadata meta = RUNTIME__V1__CONTAINER_METADATA__INIT;
    Runtime__V1__ImageSpec image = RUNTIME__V1__IMAGE_SPEC__INIT;
    Runtime__V1__LinuxContainerConfig lc = RUNTIME__V1__LINUX_CONTAINER_CONFIG__INIT;
    Runtime__V1__LinuxContainerResources res = RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
    Runtime__V1__LinuxContainerSecurityContext sec = RUNTIME__V1__LINUX_CONTAINER_SECURITY_CONTEXT__INIT;
    Runtime__V1__NamespaceOption ns = RUNTIME__V1__NAMESPACE_OPTION__INIT;
    _cleanup_(free_map_entries) Runtime__V1__ContainerConfig__LabelsEntry **labels = NULL;
    _cleanup_(free_map_entries) Runtime__V1__ContainerConfig__AnnotationsEntry **annotations = NULL;
    _cleanup_free_ Runtime__V1__KeyValue *env_items = NULL;
    _cleanup_free_ Runtime__V1__KeyValue **envs = NULL;
    _cleanup_free_ Runtime__V1__Mount *mount_items = NULL;
    _cleanup_free_ Runtime__V1__Mount **mounts = NULL;
    _cleanup_resp_ Runtime__V1__CreateContainerResponse *resp = NULL;

    if (!config->name || !config->image)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "CRI CreateContainer: a container needs a name and an image");

    meta.name = (char *)config->name;
    meta.attempt = config->attempt;
    cc.metadata = &meta;
    image.image = (char *)config->image;
    cc.image = &image;
    cc.n_command = count_argv(config->command);
    cc.command = (char **)config->command;
    cc.n_args = count_argv(config->args);
    cc.args = (char **)config->args;
    if (config->working_dir)
        cc.working_dir = (char *)config->working_dir;
    if (config->envs.n) {
        env_items = rss_xcalloc(config->envs.n, sizeof(*env_items));
        envs = rss_xcalloc(config->envs.n, sizeof(*envs));
        for (size_t i = 0; i < config->envs.n; i++) {
            runtime__v1__key_value__init(&env_items[i]);
            env_items[i].key = (char *)config->envs.items[i].key;
            env_items[i].value = (char *)(config->envs.items[i].value ? config->envs.items[i].value : "");
            envs[i] = &env_items[i];
        }
        cc.n_envs = config->envs.n;
        cc.envs = envs;
    }
    if (config->n_mounts) {
        mount_items = rss_xcalloc(config->n_mounts, sizeof(*mount_items));
        mounts = rss_xcalloc(config->n_mounts, sizeof(*mounts));
        for (size_t i = 0; i < config->n_mounts; i++) {
            runtime__v1__mount__init(&mount_items[i]);
            mount_items[i].container_path = (char *)config->mounts[i].container_path;
            mount_items[i].host_path = (char *)config->mounts[i].host_path;
            mount_items[i].readonly = config->mounts[i].readonly;
            mounts[i] = &mount_items[i];
        }
        cc.n_mounts = config->n_mounts;
        cc.mounts = mounts;
    }
    BUILD_MAP(Runtime__V1__ContainerConfig__LabelsEntry, RUNTIME__V1__CONTAINER_CONFIG__LABELS_ENTRY__INIT,
              &config->labels, &cc.n_labels, &labels);
    cc.labels = labels;
    BUILD_MAP(Runtime__V1__ContainerConfig__AnnotationsEntry,
              RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT, &config->annotations, &cc.n_annotations,
              &annotations);
    cc.annotations = annotations;
    if (config->log_path)
        cc.log_path = (char *)config->log_path;
    /* As the kubelet does for a v1 Pod: the pod's (host) network, the container's own PID
     * namespace, so that its CMD is PID 1 and reaps what exec'd hooks leave behind. */
    ns.network = RUNTIME__V1__NAMESPACE_MODE__NODE;
    ns.pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
    ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
    sec.namespace_options = &ns;
    Runtime__V1__Int64Value uid = RUNTIME__V1__INT64_VALUE__INIT;
    if (config->has_run_as_user) {
        uid.value = config->run_as_user;
        sec.run_as_user = &uid;
    }
    sec.readonly_rootfs = config->readonly_rootfs;
    sec.no_new_privs = config->no_new_privs;
    Runtime__V1__Capability caps = RUNTIME__V1__CAPABILITY__INIT;
    if (config->drop_caps && config->drop_caps[0]) {
        caps.n_drop_capabilities = count_argv(config->drop_caps);
        caps.drop_capabilities = (char **)config->drop_caps;
        sec.capabilities = &caps;
    }
    lc.security_context = &sec;
    if (config->memory_limit_bytes > 0) {
        res.memory_limit_in_bytes = config->memory_limit_bytes;
        lc.resources = &res;
    }
    cc.linux_config = &lc;

    struct sandbox_config_buf b;
    sandbox_config_build(&b, sandbox);
    req.pod_sandbox_id = (char *)sandbox_id;
    req.config = &cc;
    req.sandbox_config = &b.config;
    int r = CALL(cri, "CreateContainer", config->name, &req,
                 runtime__v1__create_container_response__descriptor, cri->call_timeout_ms, &resp, err);
    sandbox_config_release(&b);
    if (r < 0)
        return -1;
    *id_ret = dup_str(resp->container_id);
    return 0;
}

int rss_cri_start_container(struct rss_cri *cri, const char *container_id, rss_error_t *err)
{
    Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__StartContainerResponse *resp = NULL;
    req.container_id = (char *)container_id;
    return CALL(cri, "StartContainer", container_id, &req, runtime__v1__start_container_response__descriptor,
                cri->call_timeout_ms, &resp, err);
}

int rss_cri_remove_container(struct rss_cri *cri, const char *container_id, rss_error_t *err)
{
    Runtime__V1__RemoveContainerRequest req = RUNTIME__V1__REMOVE_CONTAINER_REQUEST__INIT;
    _cleanup_resp_ Runtime__V1__RemoveContainerResponse *resp = NULL;
    req.container_id = (char *)container_id;
    return CALL(cri, "RemoveContainer", container_id, &req,
                runtime__v1__remove_container_response__descriptor, cri->call_timeout_ms, &resp, err);
}
