/* podsync.c -- one pod's worker: runs its sandbox and containers, restarts them, reports status, ends it.
 *
 * Level-triggered like the kubelet's pod workers: every pass reads the runtime afresh (so a restarted
 * kubelet adopts what it finds) and converges it towards the Pod spec. A pass runs when the Pod
 * changes and at least every second.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kubelet.h"
#include "rss/json.h"
#include "rss/cleanup.h"
#include "rss/log.h"

#define RESYNC_MS        1000
#define BACKOFF_MIN_MS   500
#define BACKOFF_MAX_MS   5000
#define BACKOFF_RESET_NS (10LL * 1000000000)
#define DEFAULT_GRACE_S  30
#define LOG_PREFIX       "pod %s/%s: "

struct ctr {
    const cJSON *spec; /* in w->pod */
    char *name;
    const char *hostbin; /* host process binary, or NULL for a runtime container */
    bool any;            /* some attempt of this container has existed */
    uint32_t max_attempt;
    /* the current container */
    char *id;
    uint32_t attempt;
    bool running;
    int64_t started_at;
    /* crash loop */
    long backoff_ms;
    int64_t next_start_ns;
    char *exited_id; /* the exit we already accounted for */
    cJSON *last_term;
    char *wait_reason;
    char *wait_message;
    bool create_failed; /* the last attempt failed to create or start it (not an exit) */
    /* host process */
    struct kl_hostproc hp;
    bool adopt_tried;
    /* probes of the current (runtime) container */
    char *probed_id; /* the container the state below is about */
    bool ready;      /* readiness: false until the probe succeeds (true without a probe) */
    int ready_ok, ready_fail, live_fail;
    int64_t next_ready_ns, next_live_ns;
};

struct worker {
    struct kl *kl;
    struct kl_pod *p;
    cJSON *pod;
    char *sandbox_id;
    uint32_t sandbox_attempt;
    bool sandbox_any;
    struct ctr *ctrs;
    size_t n_ctrs;
    char *last_status;
    char start_time[RSS_TIME_LEN];
    char ready_since[RSS_TIME_LEN];
    bool ready;
    bool terminated;
    bool deleted;
    int64_t wake_ns; /* earliest backoff deadline, 0 = none */
};

static void set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? rss_xstrdup(s) : NULL;
}

static char *ns_time(char buf[RSS_TIME_LEN], int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    return rss_time_seconds(buf, ns > 0 ? &ts : NULL);
}

static void ctr_clear(struct ctr *c)
{
    free(c->name);
    free(c->id);
    free(c->exited_id);
    cJSON_Delete(c->last_term);
    free(c->wait_reason);
    free(c->wait_message);
    free(c->probed_id);
}

static void set_waiting(struct ctr *c, const char *reason, const char *message)
{
    set_str(&c->wait_reason, reason);
    set_str(&c->wait_message, message);
}

/* Matches w->ctrs to the spec's containers (kept by name across Pod updates). */
static void bind_spec(struct worker *w)
{
    const cJSON *list = rss_json_path(rss_json_path(w->pod, "spec"), "containers");
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        const char *name = rss_json_str(c, "name");
        if (!name)
            continue;
        struct ctr *found = NULL;
        for (size_t i = 0; i < w->n_ctrs; i++)
            if (!strcmp(w->ctrs[i].name, name))
                found = &w->ctrs[i];
        if (!found) {
            w->ctrs = rss_xrealloc(w->ctrs, (w->n_ctrs + 1) * sizeof(*w->ctrs));
            found = &w->ctrs[w->n_ctrs++];
            *found = (struct ctr){.name = rss_xstrdup(name), .backoff_ms = BACKOFF_MIN_MS};
        }
        found->spec = c;
        found->hostbin = kl_hostmap_lookup(w->kl, rss_json_str(c, "image"));
    }
}

/* The restart count the API last showed for a container, +1 if a container had existed (the base
 * for a kubelet that finds no trace of it in the runtime, e.g. after its sandboxes were removed). */
static uint32_t api_next_attempt(const struct worker *w, const char *name, bool *existed)
{
    const cJSON *cs;
    cJSON_ArrayForEach(cs, rss_json_path(rss_json_path(w->pod, "status"), "containerStatuses"))
    {
        const char *n = rss_json_str(cs, "name"), *id = rss_json_str(cs, "containerID");
        const cJSON *rc = rss_json_path(cs, "restartCount");
        if (n && !strcmp(n, name) && id && *id) {
            *existed = true;
            return (uint32_t)(cJSON_IsNumber(rc) ? rc->valueint : 0) + 1;
        }
    }
    *existed = false;
    return 0;
}

static uint32_t next_attempt(const struct worker *w, struct ctr *c)
{
    bool existed;
    uint32_t api = api_next_attempt(w, c->name, &existed);
    uint32_t rt = c->any ? c->max_attempt + 1 : 0;
    return api > rt ? api : rt;
}

/* --- the sandbox ------------------------------------------------------------------------------- */

struct kvs {
    size_t n;
    struct rss_cri_kv *items;
};

static void kvs_add(struct kvs *m, const char *k, const char *v)
{
    m->items = rss_xrealloc(m->items, (m->n + 1) * sizeof(*m->items));
    m->items[m->n++] = (struct rss_cri_kv){k, v};
}

static void kvs_add_json(struct kvs *m, const cJSON *obj)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj)
    {
        if (cJSON_IsString(e) && e->string)
            kvs_add(m, e->string, e->valuestring);
    }
}

static struct rss_cri_map kvs_map(const struct kvs *m)
{
    return (struct rss_cri_map){m->n, m->items};
}

struct sandbox_cfg {
    struct kvs labels, annotations;
    char *log_dir;
    char *cgroup_parent;
    struct rss_cri_sandbox_config cfg;
};

static void sandbox_cfg_init(struct worker *w, uint32_t attempt, struct sandbox_cfg *s)
{
    const cJSON *meta = rss_json_path(w->pod, "metadata");
    *s = (struct sandbox_cfg){0};
    /* The kubelet's newPodLabels / newPodAnnotations: all Pod labels plus the three pod keys. */
    kvs_add_json(&s->labels, rss_json_path(meta, "labels"));
    kvs_add(&s->labels, KL_LABEL_POD_NAME, w->p->name);
    kvs_add(&s->labels, KL_LABEL_POD_NAMESPACE, w->p->ns);
    kvs_add(&s->labels, KL_LABEL_POD_UID, w->p->uid);
    kvs_add_json(&s->annotations, rss_json_path(meta, "annotations"));
    s->log_dir = rss_xasprintf("%s/logs/%s_%s_%s", w->kl->state_dir, w->p->ns, w->p->name, w->p->uid);
    /* As the kubelet's pod cgroups (kubepods/pod<uid>), below the node's cgroup. */
    s->cgroup_parent =
        w->kl->cgroup_parent ? rss_xasprintf("%s/pod%s", w->kl->cgroup_parent, w->p->uid) : NULL;
    s->cfg = (struct rss_cri_sandbox_config){
        .name = w->p->name,
        .namespace = w->p->ns,
        .uid = w->p->uid,
        .attempt = attempt,
        .log_directory = s->log_dir,
        .cgroup_parent = s->cgroup_parent,
        .labels = kvs_map(&s->labels),
        .annotations = kvs_map(&s->annotations),
    };
}

static void sandbox_cfg_clear(struct sandbox_cfg *s)
{
    free(s->labels.items);
    free(s->annotations.items);
    free(s->log_dir);
    free(s->cgroup_parent);
}

static void remove_sandbox(struct worker *w, const char *id)
{
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_cri_stop_sandbox(w->kl->cri, id, &err) < 0 || rss_cri_remove_sandbox(w->kl->cri, id, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "removing sandbox %.12s", w->p->ns, w->p->name, id);
}

/* Makes sure a READY sandbox exists; *stale gets the ids of the others (to remove once the
 * containers' attempts are known). */
static int sync_sandbox(struct worker *w, struct rss_cri_sandbox_list *all, rss_error_t *err)
{
    struct rss_cri_kv sel[] = {{KL_LABEL_POD_UID, w->p->uid}};
    struct rss_cri_sandbox_filter f = {.labels = {1, sel}};
    if (rss_cri_list_sandboxes(w->kl->cri, &f, all, err) < 0)
        return rss_error_wrap(err, "listing sandboxes");
    const struct rss_cri_sandbox *ready = NULL;
    for (size_t i = 0; i < all->n; i++) {
        const struct rss_cri_sandbox *s = &all->items[i];
        if (!w->sandbox_any || s->attempt > w->sandbox_attempt) {
            w->sandbox_attempt = s->attempt;
            w->sandbox_any = true;
        }
        if (s->state == RSS_CRI_SANDBOX_READY && (!ready || s->attempt > ready->attempt))
            ready = s;
    }
    if (ready) {
        if (!w->sandbox_id || strcmp(w->sandbox_id, ready->id))
            set_str(&w->sandbox_id, ready->id);
        return 0;
    }
    uint32_t attempt = w->sandbox_any ? w->sandbox_attempt + 1 : 0;
    struct sandbox_cfg s;
    sandbox_cfg_init(w, attempt, &s);
    char *id = NULL;
    int r = kl_mkdir_p(s.log_dir, err);
    if (r == 0)
        r = rss_cri_run_sandbox(w->kl->cri, &s.cfg, &id, err);
    sandbox_cfg_clear(&s);
    if (r < 0)
        return rss_error_wrap(err, "starting sandbox attempt %u", attempt);
    w->sandbox_attempt = attempt;
    w->sandbox_any = true;
    free(w->sandbox_id);
    w->sandbox_id = id;
    rss_log_info(LOG_PREFIX "sandbox %.12s (attempt %u)", w->p->ns, w->p->name, id, attempt);
    return 0;
}

/* --- containers -------------------------------------------------------------------------------- */

static cJSON *term_state(const char *id_prefix, const char *id, int exit_code, const char *reason,
                         const char *message, int64_t started, int64_t finished)
{
    char t[RSS_TIME_LEN];
    cJSON *t_ = cJSON_CreateObject();
    cJSON_AddNumberToObject(t_, "exitCode", exit_code);
    cJSON_AddStringToObject(t_, "reason", reason && *reason ? reason : (exit_code ? "Error" : "Completed"));
    if (message && *message)
        cJSON_AddStringToObject(t_, "message", message);
    if (started > 0)
        cJSON_AddStringToObject(t_, "startedAt", ns_time(t, started));
    cJSON_AddStringToObject(t_, "finishedAt", ns_time(t, finished > 0 ? finished : kl_now_ns()));
    _cleanup_free_ char *cid = rss_xasprintf("%s://%s", id_prefix, id);
    cJSON_AddStringToObject(t_, "containerID", cid);
    return t_;
}

/* An exit seen for the first time: remember it and schedule the restart (crash-loop backoff). */
static void account_exit(struct worker *w, struct ctr *c, const char *id, cJSON *term, int64_t started,
                         int64_t finished)
{
    if (c->exited_id && !strcmp(c->exited_id, id)) {
        cJSON_Delete(term);
        return;
    }
    set_str(&c->exited_id, id);
    cJSON_Delete(c->last_term);
    c->last_term = term;
    if (started > 0 && finished - started > BACKOFF_RESET_NS)
        c->backoff_ms = BACKOFF_MIN_MS;
    c->next_start_ns = kl_now_ns() + c->backoff_ms * 1000000LL;
    c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
    rss_log_info(LOG_PREFIX "container %s exited (%d); restart in %lld ms", w->p->ns, w->p->name, c->name,
                 cJSON_GetObjectItemCaseSensitive(term, "exitCode")->valueint,
                 (long long)((c->next_start_ns - kl_now_ns()) / 1000000));
}

static bool backoff_pending(struct worker *w, struct ctr *c)
{
    int64_t now = kl_now_ns();
    if (c->next_start_ns <= now)
        return false;
    if (!w->wake_ns || c->next_start_ns < w->wake_ns)
        w->wake_ns = c->next_start_ns;
    /* A create that failed keeps its own reason through the back-off, as with the real kubelet: a failed
     * pull backs off as ImagePullBackOff, a CreateContainerError stays one; only an exit is a crash loop. */
    if (!c->create_failed)
        set_waiting(c, "CrashLoopBackOff", "back-off restarting failed container");
    else if (c->wait_reason && !strcmp(c->wait_reason, "ErrImagePull"))
        set_str(&c->wait_reason, "ImagePullBackOff");
    return true;
}

static void add_annotations(struct worker *w, struct ctr *c, uint32_t attempt, struct kvs *a, char **owned)
{
    const cJSON *spec = rss_json_path(w->pod, "spec");
    /* The kubelet's newContainerAnnotations. */
    owned[0] = kl_json_hash(c->spec);
    owned[1] = rss_xasprintf("%u", attempt);
    kvs_add(a, "io.kubernetes.container.hash", owned[0]);
    kvs_add(a, "io.kubernetes.container.restartCount", owned[1]);
    const char *tmp = rss_json_str(c->spec, "terminationMessagePath"),
               *tmpol = rss_json_str(c->spec, "terminationMessagePolicy");
    kvs_add(a, "io.kubernetes.container.terminationMessagePath", tmp ? tmp : "/dev/termination-log");
    kvs_add(a, "io.kubernetes.container.terminationMessagePolicy", tmpol ? tmpol : "File");
    const cJSON *g = rss_json_path(spec, "terminationGracePeriodSeconds");
    if (cJSON_IsNumber(g)) {
        owned[2] = rss_xasprintf("%d", g->valueint);
        kvs_add(a, "io.kubernetes.pod.terminationGracePeriod", owned[2]);
    }
    const cJSON *ports = rss_json_path(c->spec, "ports");
    if (cJSON_IsArray(ports) && cJSON_GetArraySize(ports) > 0) {
        owned[3] = cJSON_PrintUnformatted(ports);
        kvs_add(a, "io.kubernetes.container.ports", owned[3]);
    }
}

/* The container's securityContext over the pod's, as the kubelet merges them: runAsUser (either
 * level), readOnlyRootFilesystem, allowPrivilegeEscalation false -> no_new_privs, capabilities.drop. */
static const char *const *security_context(const struct worker *w, const struct ctr *c,
                                           struct rss_cri_container_config *cfg, const char **drop,
                                           size_t n_drop)
{
    const cJSON *psc = rss_json_path(rss_json_path(w->pod, "spec"), "securityContext");
    const cJSON *sc = rss_json_path(c->spec, "securityContext");
    const cJSON *uid = rss_json_path(sc, "runAsUser");
    if (!cJSON_IsNumber(uid))
        uid = rss_json_path(psc, "runAsUser");
    if (cJSON_IsNumber(uid)) {
        cfg->has_run_as_user = true;
        cfg->run_as_user = (int64_t)uid->valuedouble;
    }
    cfg->readonly_rootfs = cJSON_IsTrue(rss_json_path(sc, "readOnlyRootFilesystem"));
    cfg->no_new_privs = cJSON_IsFalse(rss_json_path(sc, "allowPrivilegeEscalation"));
    size_t n = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, rss_json_path(rss_json_path(sc, "capabilities"), "drop"))
    {
        if (cJSON_IsString(d) && n + 1 < n_drop)
            drop[n++] = d->valuestring;
    }
    drop[n] = NULL;
    return n ? drop : NULL;
}

/* The kubelet's service env of the `kubernetes` Service in every container: where the API server is
 * (kubesim, on the loopback the containers share). A container's own env wins. */
static void add_service_env(struct kl *kl, struct kl_env *env)
{
    const char *server = rss_kube_server(kl->kube);
    const char *hp = server && !strncmp(server, "https://", 8) ? server + 8 : NULL;
    const char *colon = hp ? strrchr(hp, ':') : NULL;
    if (!colon)
        return;
    _cleanup_free_ char *host = strndup(hp, (size_t)(colon - hp));
    _cleanup_free_ char *port = rss_xstrdup(colon + 1);
    port[strcspn(port, "/")] = '\0';
    if (!kl_env_get(env, "KUBERNETES_SERVICE_HOST"))
        kl_env_add(env, "KUBERNETES_SERVICE_HOST", host);
    if (!kl_env_get(env, "KUBERNETES_SERVICE_PORT"))
        kl_env_add(env, "KUBERNETES_SERVICE_PORT", port);
}

/* This power-on's boot id in every container, as in host processes (hostproc.c): the simulated nodes
 * share one kernel, so /proc/sys/kernel/random/boot_id cannot tell their reboots apart, and rssd's
 * reboot shortcut compares its own boot id with the Node's bootID (the one this kubelet reports). A
 * container's own env wins. */
static void add_boot_env(struct kl *kl, struct kl_env *env)
{
    if (kl->boot_id && !kl_env_get(env, "RSS_BOOT_ID"))
        kl_env_add(env, "RSS_BOOT_ID", kl->boot_id);
}

/* The projected ServiceAccount token volume (kube-api-access-*), read-only, unless the pod opts out
 * or the container mounts something else there. */
static int add_sa_mount(struct worker *w, struct kl_mounts *m, rss_error_t *err)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->items[i].container_path, KL_SA_MOUNT))
            return 0;
    bool none = false;
    char *dir = kl_pod_sa_dir(w->kl, w->pod, &none, err);
    if (!dir)
        return none ? 0 : rss_error_wrap(err, "projected ServiceAccount volume");
    m->items = rss_xrealloc(m->items, (m->n + 1) * sizeof(*m->items));
    m->items[m->n++] = (struct rss_cri_mount){
        .container_path = rss_xstrdup(KL_SA_MOUNT), .host_path = dir, .readonly = true};
    return 0;
}

static int create_container(struct worker *w, struct ctr *c, uint32_t attempt, rss_error_t *err)
{
    struct kl_env env = {0};
    struct kl_mounts mounts = {0};
    char **command = NULL, **args = NULL;
    struct kvs labels = {0}, annots = {0};
    char *owned[4] = {0};
    struct sandbox_cfg sb;
    sandbox_cfg_init(w, w->sandbox_attempt, &sb);
    char *id = NULL;
    _cleanup_free_ char *log_path = rss_xasprintf("%s/%u.log", c->name, attempt);
    _cleanup_free_ char *log_sub = rss_xasprintf("%s/%s", sb.log_dir, c->name);
    int r = kl_env_resolve(w->pod, c->spec, w->kl->node, w->kl->node_ip, &env, err);
    if (r == 0) {
        add_service_env(w->kl, &env);
        add_boot_env(w->kl, &env);
    }
    if (r == 0)
        r = kl_mounts_resolve(w->kl, w->pod, c->spec, &mounts, err);
    if (r == 0)
        r = add_sa_mount(w, &mounts, err);
    if (r == 0)
        r = kl_mkdir_p(log_sub, err);
    if (r == 0) {
        command = kl_strv_from_json(rss_json_path(c->spec, "command"), &env);
        args = kl_strv_from_json(rss_json_path(c->spec, "args"), &env);
        kvs_add(&labels, KL_LABEL_POD_NAME, w->p->name);
        kvs_add(&labels, KL_LABEL_POD_NAMESPACE, w->p->ns);
        kvs_add(&labels, KL_LABEL_POD_UID, w->p->uid);
        kvs_add(&labels, KL_LABEL_CONTAINER_NAME, c->name);
        add_annotations(w, c, attempt, &annots, owned);
        struct rss_cri_kv *envkv = rss_xcalloc(env.n + 1, sizeof(*envkv));
        for (size_t i = 0; i < env.n; i++)
            envkv[i] = (struct rss_cri_kv){env.keys[i], env.values[i]};
        struct rss_cri_container_config cfg = {
            .name = c->name,
            .attempt = attempt,
            .image = rss_json_str(c->spec, "image"),
            .command = (const char *const *)command,
            .args = (const char *const *)args,
            .working_dir = rss_json_str(c->spec, "workingDir"),
            .envs = {env.n, envkv},
            .mounts = mounts.items,
            .n_mounts = mounts.n,
            .labels = kvs_map(&labels),
            .annotations = kvs_map(&annots),
            .log_path = log_path,
        };
        const char *drop[16];
        cfg.drop_caps = security_context(w, c, &cfg, drop, sizeof(drop) / sizeof(drop[0]));
        r = rss_cri_create_container(w->kl->cri, w->sandbox_id, &cfg, &sb.cfg, &id, err);
        free(envkv);
        if (r < 0)
            rss_error_wrap(err, "creating container %s", c->name);
    }
    if (r == 0 && rss_cri_start_container(w->kl->cri, id, err) < 0) {
        rss_error_wrap(err, "starting container %s", c->name);
        _cleanup_error_ rss_error_t e2 = NULL;
        rss_cri_remove_container(w->kl->cri, id, &e2);
        free(TAKE_PTR(id));
        r = -1;
    }
    for (size_t i = 0; i < 4; i++)
        free(owned[i]);
    free(labels.items);
    free(annots.items);
    kl_strv_free(command);
    kl_strv_free(args);
    kl_mounts_clear(&mounts);
    kl_env_clear(&env);
    sandbox_cfg_clear(&sb);
    if (r < 0)
        return -1;
    set_str(&c->id, id);
    free(id);
    c->attempt = attempt;
    c->running = true;
    c->create_failed = false;
    c->started_at = kl_now_ns();
    c->any = true;
    if (attempt > c->max_attempt)
        c->max_attempt = attempt;
    set_waiting(c, NULL, NULL);
    rss_log_info(LOG_PREFIX "container %s %.12s started (attempt %u)", w->p->ns, w->p->name, c->name, c->id,
                 attempt);
    return 0;
}

/* The waiting reason of a container that could not be created. The world never pulls (images are
 * imported or tagged into each node's runtime), so an image the runtime does not have is what a real
 * kubelet reports after a failed pull: ErrImageNeverPull under imagePullPolicy Never, else ErrImagePull
 * at the first attempt and ImagePullBackOff while it backs off (the real kubelet alternates the two;
 * here a later failed attempt says ImagePullBackOff). Anything else stays CreateContainerError. */
static const char *create_reason(const struct ctr *c, rss_error_t err)
{
    _cleanup_free_ char *msg = rss_error_string(err);
    bool no_image = msg && strstr(msg, "image") && (strstr(msg, "not found") || strstr(msg, "no such image"));
    if (!no_image)
        return "CreateContainerError";
    const char *policy = rss_json_str(c->spec, "imagePullPolicy");
    if (policy && !strcmp(policy, "Never"))
        return "ErrImageNeverPull";
    return c->wait_reason &&
                   (!strcmp(c->wait_reason, "ErrImagePull") || !strcmp(c->wait_reason, "ImagePullBackOff"))
               ? "ImagePullBackOff"
               : "ErrImagePull";
}

/* After a failed create/start: wait (backoff) and say why in the status. */
static void create_failed(struct worker *w, struct ctr *c, const char *reason, rss_error_t *err)
{
    _cleanup_free_ char *msg = rss_error_string(*err);
    rss_log_error(RSS_LOG_WARN, err, LOG_PREFIX "container %s", w->p->ns, w->p->name, c->name);
    set_waiting(c, reason, msg);
    c->create_failed = true;
    c->next_start_ns = kl_now_ns() + c->backoff_ms * 1000000LL;
    c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
}

/* --- probes ------------------------------------------------------------------------------------ */

static long probe_num(const cJSON *probe, const char *key, long dflt)
{
    const cJSON *v = rss_json_path(probe, key);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : dflt;
}

/* One httpGet probe of container c: true on 200-399. Other probe kinds are not simulated (they pass). */
static bool probe_once(struct worker *w, struct ctr *c, const cJSON *probe, const char *what)
{
    const cJSON *hg = rss_json_path(probe, "httpGet");
    if (!hg)
        return true;
    const cJSON *port = rss_json_path(hg, "port");
    int pn = cJSON_IsNumber(port) ? port->valueint : 0;
    if (cJSON_IsString(port)) { /* a named port of the container */
        const cJSON *p;
        cJSON_ArrayForEach(p, rss_json_path(c->spec, "ports"))
        {
            const char *n = rss_json_str(p, "name");
            const cJSON *cp = rss_json_path(p, "containerPort");
            if (n && !strcmp(n, port->valuestring) && cJSON_IsNumber(cp))
                pn = cp->valueint;
        }
    }
    const char *host = rss_json_str(hg, "host");
    if (!host || !*host)
        host = w->kl->node_ip ? w->kl->node_ip : "127.0.0.1"; /* the pod's IP */
    const char *path = rss_json_str(hg, "path");
    _cleanup_error_ rss_error_t err = NULL;
    int code = kl_probe_http(host, pn, path ? path : "/", probe_num(probe, "timeoutSeconds", 1) * 1000, &err);
    if (code >= 200 && code < 400)
        return true;
    if (code < 0)
        rss_log_error(RSS_LOG_INFO, &err, LOG_PREFIX "%s probe of %s failed", w->p->ns, w->p->name, what,
                      c->name);
    else
        rss_log_info(LOG_PREFIX "%s probe of %s failed: HTTP %d", w->p->ns, w->p->name, what, c->name, code);
    return false;
}

static void probe_schedule(struct worker *w, int64_t *next, int64_t now, const cJSON *probe)
{
    *next = now + probe_num(probe, "periodSeconds", 10) * 1000000000LL;
    if (!w->wake_ns || *next < w->wake_ns)
        w->wake_ns = *next;
}

/* The kubelet's prober for a running container: readiness decides the container's ready (and so the
 * pod's Ready condition); failureThreshold liveness failures in a row restart the container. */
static void run_probes(struct worker *w, struct ctr *c)
{
    const cJSON *rp = rss_json_path(c->spec, "readinessProbe"), *lp = rss_json_path(c->spec, "livenessProbe");
    int64_t now = kl_now_ns();
    if (!c->probed_id || strcmp(c->probed_id, c->id)) {
        set_str(&c->probed_id, c->id);
        int64_t base = c->started_at > 0 ? c->started_at : now;
        c->ready = rp == NULL;
        c->ready_ok = c->ready_fail = c->live_fail = 0;
        c->next_ready_ns = base + probe_num(rp, "initialDelaySeconds", 0) * 1000000000LL;
        c->next_live_ns = base + probe_num(lp, "initialDelaySeconds", 0) * 1000000000LL;
    }
    if (rp && now >= c->next_ready_ns) {
        if (probe_once(w, c, rp, "readiness")) {
            c->ready_fail = 0;
            if (++c->ready_ok >= probe_num(rp, "successThreshold", 1))
                c->ready = true;
        } else {
            c->ready_ok = 0;
            if (++c->ready_fail >= probe_num(rp, "failureThreshold", 3))
                c->ready = false;
        }
        probe_schedule(w, &c->next_ready_ns, now, rp);
    }
    if (lp && now >= c->next_live_ns) {
        if (probe_once(w, c, lp, "liveness")) {
            c->live_fail = 0;
        } else if (++c->live_fail >= probe_num(lp, "failureThreshold", 3)) {
            rss_log_info(LOG_PREFIX "container %s failed liveness probe, will be restarted", w->p->ns,
                         w->p->name, c->name);
            _cleanup_error_ rss_error_t err = NULL;
            const cJSON *g = rss_json_path(rss_json_path(w->pod, "spec"), "terminationGracePeriodSeconds");
            if (rss_cri_stop_container(w->kl->cri, c->id,
                                       cJSON_IsNumber(g) ? (int64_t)g->valuedouble : DEFAULT_GRACE_S,
                                       &err) < 0)
                rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "stopping %s", w->p->ns, w->p->name, c->name);
            c->live_fail = 0;
            c->running = c->ready = false;
            return;
        }
        probe_schedule(w, &c->next_live_ns, now, lp);
    }
}

static void sync_runtime_container(struct worker *w, struct ctr *c, const struct rss_cri_container_list *all)
{
    const struct rss_cri_container *cur = NULL, *prev = NULL;
    for (size_t i = 0; i < all->n; i++) {
        const struct rss_cri_container *x = &all->items[i];
        const char *n = rss_cri_map_get(&x->labels, KL_LABEL_CONTAINER_NAME);
        if (!n || strcmp(n, c->name))
            continue;
        if (!c->any || x->attempt > c->max_attempt)
            c->max_attempt = x->attempt;
        c->any = true;
        if (strcmp(x->sandbox_id, w->sandbox_id)) {
            if (!prev || x->attempt > prev->attempt)
                prev = x;
            continue;
        }
        if (!cur || x->attempt > cur->attempt ||
            (x->attempt == cur->attempt && x->created_at > cur->created_at))
            cur = x;
    }
    _cleanup_error_ rss_error_t err = NULL;
    if (cur && cur->state == RSS_CRI_CONTAINER_RUNNING) {
        if (!c->id || strcmp(c->id, cur->id)) {
            set_str(&c->id, cur->id);
            c->started_at = 0;
            struct rss_cri_container st = {0};
            if (rss_cri_container_status(w->kl->cri, cur->id, &st, &err) == 0) {
                c->started_at = st.started_at;
                rss_cri_container_clear(&st);
            }
        }
        c->attempt = cur->attempt;
        c->running = true;
        set_waiting(c, NULL, NULL);
        run_probes(w, c);
        return;
    }
    c->running = false;
    c->ready = false;
    if (cur && cur->state == RSS_CRI_CONTAINER_CREATED) {
        /* created by a kubelet that died before starting it */
        if (rss_cri_start_container(w->kl->cri, cur->id, &err) == 0) {
            set_str(&c->id, cur->id);
            c->attempt = cur->attempt;
            c->running = true;
            c->started_at = kl_now_ns();
            return;
        }
        rss_error_release(&err);
        rss_cri_remove_container(w->kl->cri, cur->id, &err);
        rss_error_release(&err);
        return;
    }
    if (cur) { /* exited or unknown */
        struct rss_cri_container st = {0};
        if (rss_cri_container_status(w->kl->cri, cur->id, &st, &err) == 0) {
            account_exit(w, c, cur->id,
                         term_state("containerd", cur->id, st.exit_code, st.reason, st.message, st.started_at,
                                    st.finished_at),
                         st.started_at, st.finished_at);
            rss_cri_container_clear(&st);
        } else {
            rss_error_release(&err);
        }
        set_str(&c->id, cur->id);
        c->attempt = cur->attempt;
        if (backoff_pending(w, c))
            return;
        /* The kubelet's GC keeps one dead container per name: drop older ones. */
        for (size_t i = 0; i < all->n; i++) {
            const struct rss_cri_container *x = &all->items[i];
            const char *n = rss_cri_map_get(&x->labels, KL_LABEL_CONTAINER_NAME);
            if (n && !strcmp(n, c->name) && x != cur && x->state != RSS_CRI_CONTAINER_RUNNING &&
                !strcmp(x->sandbox_id, w->sandbox_id)) {
                rss_cri_remove_container(w->kl->cri, x->id, &err);
                rss_error_release(&err);
            }
        }
    } else if (backoff_pending(w, c)) {
        return;
    } else if (prev && prev->state != RSS_CRI_CONTAINER_RUNNING &&
               (!c->exited_id || strcmp(c->exited_id, prev->id))) {
        /* The container of a dead sandbox (power loss): its end is this one's lastState, but a new
         * sandbox starts without crash-loop backoff. */
        struct rss_cri_container st = {0};
        if (rss_cri_container_status(w->kl->cri, prev->id, &st, &err) == 0) {
            set_str(&c->exited_id, prev->id);
            cJSON_Delete(c->last_term);
            c->last_term = term_state("containerd", prev->id, st.exit_code, st.reason, st.message,
                                      st.started_at, st.finished_at);
            rss_cri_container_clear(&st);
        }
        rss_error_release(&err);
    }
    if (create_container(w, c, next_attempt(w, c), &err) < 0)
        create_failed(w, c, create_reason(c, err), &err);
}

static void sync_host_container(struct worker *w, struct ctr *c)
{
    _cleanup_error_ rss_error_t err = NULL;
    if (!c->adopt_tried) {
        c->adopt_tried = true;
        struct kl_hostproc hp;
        int r = kl_hostproc_adopt(w->kl, w->p->uid, c->name, &hp, &err);
        if (r == 1) {
            c->hp = hp;
            rss_log_info(LOG_PREFIX "adopted host process %d for %s", w->p->ns, w->p->name, (int)hp.pid,
                         c->name);
        } else if (r == 0) {
            c->any = true;
            c->max_attempt = hp.attempt;
        }
        rss_error_release(&err);
    }
    if (kl_hostproc_alive(&c->hp)) {
        c->running = true;
        c->attempt = c->hp.attempt;
        c->started_at = c->hp.started_at;
        _cleanup_free_ char *id = rss_xasprintf("%d", (int)c->hp.pid);
        set_str(&c->id, id);
        set_waiting(c, NULL, NULL);
        return;
    }
    c->running = false;
    if (c->hp.pid > 0) {
        _cleanup_free_ char *id = rss_xasprintf("%d", (int)c->hp.pid);
        account_exit(
            w, c, id,
            term_state("hostprocess", id, c->hp.exit_code, NULL, NULL, c->hp.started_at, c->hp.finished_at),
            c->hp.started_at, c->hp.finished_at);
        c->any = true;
        if (c->hp.attempt > c->max_attempt)
            c->max_attempt = c->hp.attempt;
    }
    if (backoff_pending(w, c))
        return;
    uint32_t attempt = next_attempt(w, c);
    struct kl_env env = {0};
    char **cmd = NULL, **args = NULL;
    int r = kl_env_resolve(w->pod, c->spec, w->kl->node, w->kl->node_ip, &env, &err);
    /* As the kubelet's projected ServiceAccount token volume: the process talks to the API server
     * as its pod's ServiceAccount, never with the kubelet's credentials. */
    _cleanup_free_ char *kubeconfig = r == 0 ? kl_pod_kubeconfig(w->kl, w->pod, &err) : NULL;
    if (r == 0 && !kubeconfig)
        r = -1;
    if (r == 0) {
        cmd = kl_strv_from_json(rss_json_path(c->spec, "command"), &env);
        args = kl_strv_from_json(rss_json_path(c->spec, "args"), &env);
        /* The binary stands for the image's entrypoint: argv = binary, command[1:], args. */
        size_t n = 1;
        for (char **p = cmd && cmd[0] ? cmd + 1 : NULL; p && *p; p++)
            n++;
        for (char **p = args; p && *p; p++)
            n++;
        char **argv = rss_xcalloc(n + 1, sizeof(char *));
        size_t i = 0;
        argv[i++] = (char *)c->hostbin;
        for (char **p = cmd && cmd[0] ? cmd + 1 : NULL; p && *p; p++)
            argv[i++] = *p;
        for (char **p = args; p && *p; p++)
            argv[i++] = *p;
        r = kl_hostproc_start(w->kl, w->p->uid, c->name, c->hostbin, argv, &env, kubeconfig, attempt, &c->hp,
                              &err);
        free(argv);
    }
    kl_strv_free(cmd);
    kl_strv_free(args);
    kl_env_clear(&env);
    if (r < 0) {
        create_failed(w, c, "HostProcessError", &err);
        return;
    }
    c->running = true;
    c->attempt = attempt;
    c->any = true;
    if (attempt > c->max_attempt)
        c->max_attempt = attempt;
    c->started_at = c->hp.started_at;
    _cleanup_free_ char *id = rss_xasprintf("%d", (int)c->hp.pid);
    set_str(&c->id, id);
    set_waiting(c, NULL, NULL);
    rss_log_info(LOG_PREFIX "host process %s started: %s pid %d (attempt %u)", w->p->ns, w->p->name, c->name,
                 c->hostbin, (int)c->hp.pid, attempt);
}

/* --- status ------------------------------------------------------------------------------------ */

static cJSON *condition(const char *type, bool status, const char *since)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", status ? "True" : "False");
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", since);
    if (!status && (!strcmp(type, "Ready") || !strcmp(type, "ContainersReady")))
        cJSON_AddStringToObject(c, "reason", "ContainersNotReady");
    return c;
}

static cJSON *ip_list(const char *ip)
{
    cJSON *a = cJSON_CreateArray();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "ip", ip);
    cJSON_AddItemToArray(a, o);
    return a;
}

static void report_status(struct worker *w)
{
    bool all_running = w->n_ctrs > 0, pending = false;
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON *css = cJSON_CreateArray();
    char t[RSS_TIME_LEN];
    for (size_t i = 0; i < w->n_ctrs; i++) {
        struct ctr *c = &w->ctrs[i];
        if (!c->spec)
            continue;
        cJSON *cs = cJSON_CreateObject();
        cJSON_AddStringToObject(cs, "name", c->name);
        cJSON_AddStringToObject(cs, "image",
                                rss_json_str(c->spec, "image") ? rss_json_str(c->spec, "image") : "");
        cJSON_AddStringToObject(cs, "imageID", "");
        if (c->id) {
            _cleanup_free_ char *cid =
                rss_xasprintf("%s://%s", c->hostbin ? "hostprocess" : "containerd", c->id);
            cJSON_AddStringToObject(cs, "containerID", cid);
        }
        bool ready = c->running && (c->hostbin || c->ready);
        cJSON_AddBoolToObject(cs, "ready", ready);
        cJSON_AddBoolToObject(cs, "started", c->running);
        cJSON_AddNumberToObject(cs, "restartCount", c->id ? c->attempt : 0);
        cJSON *state = cJSON_AddObjectToObject(cs, "state");
        if (c->running) {
            cJSON_AddStringToObject(cJSON_AddObjectToObject(state, "running"), "startedAt",
                                    ns_time(t, c->started_at));
        } else if (c->wait_reason || !c->last_term) {
            cJSON *wt = cJSON_AddObjectToObject(state, "waiting");
            cJSON_AddStringToObject(wt, "reason", c->wait_reason ? c->wait_reason : "ContainerCreating");
            if (c->wait_message)
                cJSON_AddStringToObject(wt, "message", c->wait_message);
        } else {
            cJSON_AddItemToObject(state, "terminated", cJSON_Duplicate(c->last_term, true));
        }
        cJSON *last = cJSON_AddObjectToObject(cs, "lastState");
        if (c->last_term && (c->running || c->wait_reason))
            cJSON_AddItemToObject(last, "terminated", cJSON_Duplicate(c->last_term, true));
        cJSON_AddItemToArray(css, cs);
        all_running = all_running && ready;
        pending = pending || (!c->running && !c->last_term);
    }
    if (all_running != w->ready) {
        w->ready = all_running;
        rss_time_seconds(w->ready_since, NULL);
    }
    cJSON_AddStringToObject(st, "phase", pending ? "Pending" : "Running");
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    cJSON_AddItemToArray(conds, condition("PodReadyToStartContainers", w->sandbox_id != NULL, w->start_time));
    cJSON_AddItemToArray(conds, condition("Initialized", true, w->start_time));
    cJSON_AddItemToArray(conds, condition("Ready", all_running, w->ready_since));
    cJSON_AddItemToArray(conds, condition("ContainersReady", all_running, w->ready_since));
    cJSON_AddItemToArray(conds, condition("PodScheduled", true, w->start_time));
    /* The world has no pod network: every pod shares its node's, so its IP is the node's. */
    const char *ip = w->kl->node_ip ? w->kl->node_ip : "127.0.0.1";
    cJSON_AddStringToObject(st, "hostIP", ip);
    cJSON_AddItemToObject(st, "hostIPs", ip_list(ip));
    cJSON_AddStringToObject(st, "podIP", ip);
    cJSON_AddItemToObject(st, "podIPs", ip_list(ip));
    cJSON_AddStringToObject(st, "startTime", w->start_time);
    cJSON_AddItemToObject(st, "containerStatuses", css);
    cJSON_AddStringToObject(st, "qosClass", "BestEffort");

    _cleanup_free_ char *s = cJSON_PrintUnformatted(patch);
    if (w->last_status && !strcmp(w->last_status, s))
        return;
    _cleanup_free_ char *path = rss_kube_path("v1", w->p->ns, "pods", w->p->name, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_merge_patch_status(w->kl->kube, path, patch, NULL, &err) < 0) {
        if (rss_error_code(err) != RSS_E_NOT_FOUND)
            rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "status", w->p->ns, w->p->name);
        return;
    }
    free(w->last_status);
    w->last_status = TAKE_PTR(s);
}

/* --- termination ------------------------------------------------------------------------------- */

static long grace_seconds(const struct worker *w, bool gone)
{
    const cJSON *g = rss_json_path(rss_json_path(w->pod, "metadata"), "deletionGracePeriodSeconds");
    if (!cJSON_IsNumber(g))
        g = rss_json_path(rss_json_path(w->pod, "spec"), "terminationGracePeriodSeconds");
    long s = cJSON_IsNumber(g) ? (long)g->valuedouble : DEFAULT_GRACE_S;
    if (s < 0)
        s = 0;
    /* Deleted from the API without us (a forced delete): nobody waits for a graceful stop. */
    if (gone && s > 2)
        s = 2;
    return s;
}

static void terminate(struct worker *w, bool gone)
{
    long grace = grace_seconds(w, gone);
    rss_log_info(LOG_PREFIX "stopping (grace %lds)", w->p->ns, w->p->name, grace);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    _cleanup_error_ rss_error_t err = NULL;
    for (size_t i = 0; i < w->n_ctrs; i++) {
        struct ctr *c = &w->ctrs[i];
        if (c->hostbin && !c->adopt_tried) {
            c->adopt_tried = true;
            if (kl_hostproc_adopt(w->kl, w->p->uid, c->name, &c->hp, &err) < 0)
                rss_error_release(&err);
        }
        if (c->hostbin || c->hp.pid > 0)
            kl_hostproc_kill(w->kl, w->p->uid, c->name, &c->hp, grace);
    }
    struct rss_cri_kv sel[] = {{KL_LABEL_POD_UID, w->p->uid}};
    struct rss_cri_container_filter cf = {
        .match_state = true, .state = RSS_CRI_CONTAINER_RUNNING, .labels = {1, sel}};
    struct rss_cri_container_list cl = {0};
    if (rss_cri_list_containers(w->kl->cri, &cf, &cl, &err) == 0) {
        for (size_t i = 0; i < cl.n; i++) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long left = grace - (long)(now.tv_sec - t0.tv_sec);
            if (rss_cri_stop_container(w->kl->cri, cl.items[i].id, left > 0 ? left : 0, &err) < 0)
                rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "stopping %.12s", w->p->ns, w->p->name,
                              cl.items[i].id);
        }
        rss_cri_container_list_clear(&cl);
    } else {
        rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "listing containers", w->p->ns, w->p->name);
    }
    struct rss_cri_sandbox_filter sf = {.labels = {1, sel}};
    struct rss_cri_sandbox_list sl = {0};
    if (rss_cri_list_sandboxes(w->kl->cri, &sf, &sl, &err) == 0) {
        for (size_t i = 0; i < sl.n; i++)
            remove_sandbox(w, sl.items[i].id);
        rss_cri_sandbox_list_clear(&sl);
    } else {
        rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "listing sandboxes", w->p->ns, w->p->name);
    }
    _cleanup_free_ char *pd = kl_pod_dir(w->kl, w->p->uid);
    _cleanup_free_ char *ld =
        rss_xasprintf("%s/logs/%s_%s_%s", w->kl->state_dir, w->p->ns, w->p->name, w->p->uid);
    kl_rm_rf(pd);
    kl_rm_rf(ld);
    w->terminated = true;
}

/* The kubelet's final delete: grace 0, only this incarnation. */
static void finish_delete(struct worker *w)
{
    _cleanup_free_ char *path = rss_kube_path("v1", w->p->ns, "pods", w->p->name, NULL);
    struct rss_kube_delete_opts o = {.uid = w->p->uid, .set_grace = true, .grace_period_seconds = 0};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_delete(w->kl->kube, path, &o, NULL, &err) < 0) {
        enum rss_errc c = rss_error_code(err);
        if (c != RSS_E_NOT_FOUND && c != RSS_E_CONFLICT) {
            rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "deleting", w->p->ns, w->p->name);
            return;
        }
    }
    w->deleted = true;
    rss_log_info(LOG_PREFIX "deleted", w->p->ns, w->p->name);
}

/* --- the loop ---------------------------------------------------------------------------------- */

static void sync_pod(struct worker *w)
{
    bind_spec(w);
    w->wake_ns = 0;
    struct rss_cri_sandbox_list sandboxes = {0};
    _cleanup_error_ rss_error_t err = NULL;
    if (sync_sandbox(w, &sandboxes, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "sandbox", w->p->ns, w->p->name);
        for (size_t i = 0; i < w->n_ctrs; i++)
            if (!w->ctrs[i].running)
                set_waiting(&w->ctrs[i], "ContainerCreating", msg);
        rss_cri_sandbox_list_clear(&sandboxes);
        report_status(w);
        return;
    }
    struct rss_cri_kv sel[] = {{KL_LABEL_POD_UID, w->p->uid}};
    struct rss_cri_container_filter f = {.labels = {1, sel}};
    struct rss_cri_container_list all = {0};
    bool listed = rss_cri_list_containers(w->kl->cri, &f, &all, &err) == 0;
    if (!listed)
        rss_log_error(RSS_LOG_WARN, &err, LOG_PREFIX "listing containers", w->p->ns, w->p->name);
    for (size_t i = 0; i < w->n_ctrs; i++) {
        struct ctr *c = &w->ctrs[i];
        if (!c->spec)
            continue;
        if (c->hostbin)
            sync_host_container(w, c);
        else if (listed)
            sync_runtime_container(w, c, &all);
    }
    /* Sandboxes of earlier attempts (e.g. dead after a power loss) go once the new one runs. */
    for (size_t i = 0; listed && i < sandboxes.n; i++)
        if (strcmp(sandboxes.items[i].id, w->sandbox_id))
            remove_sandbox(w, sandboxes.items[i].id);
    rss_cri_container_list_clear(&all);
    rss_cri_sandbox_list_clear(&sandboxes);
    report_status(w);
}

void *kl_pod_worker(void *arg)
{
    struct kl_pod *p = arg;
    struct kl *kl = p->kl;
    struct worker w = {.kl = kl, .p = p};
    rss_time_seconds(w.start_time, NULL);
    memcpy(w.ready_since, w.start_time, sizeof(w.ready_since));
    for (;;) {
        pthread_mutex_lock(&kl->mu);
        if (!p->kick && !atomic_load(&kl->stop)) {
            struct timespec deadline;
            clock_gettime(CLOCK_MONOTONIC, &deadline);
            long ms = RESYNC_MS;
            if (w.wake_ns) {
                long until = (long)((w.wake_ns - kl_now_ns()) / 1000000) + 1;
                if (until < ms)
                    ms = until < 1 ? 1 : until;
            }
            deadline.tv_sec += ms / 1000;
            deadline.tv_nsec += (ms % 1000) * 1000000L;
            if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->cond, &kl->mu, &deadline);
        }
        p->kick = false;
        bool gone = p->gone, stop = atomic_load(&kl->stop);
        cJSON *snap = cJSON_Duplicate(p->obj, true);
        pthread_mutex_unlock(&kl->mu);
        if (stop) {
            cJSON_Delete(snap);
            break; /* as the kubelet: exiting leaves the pods running */
        }
        cJSON_Delete(w.pod);
        w.pod = snap;
        for (size_t i = 0; i < w.n_ctrs; i++)
            w.ctrs[i].spec = NULL; /* pointed into the old snapshot */
        if (!w.sandbox_id && !w.terminated) {
            const char *st = rss_json_str(rss_json_path(w.pod, "status"), "startTime");
            if (st)
                snprintf(w.start_time, sizeof(w.start_time), "%s", st);
        }
        bool deleting = rss_json_path(rss_json_path(w.pod, "metadata"), "deletionTimestamp") != NULL;
        if (gone || deleting) {
            bind_spec(&w);
            if (!w.terminated)
                terminate(&w, gone);
            if (gone)
                break;
            if (!w.deleted)
                finish_delete(&w);
            continue;
        }
        sync_pod(&w);
    }
    cJSON_Delete(w.pod);
    for (size_t i = 0; i < w.n_ctrs; i++)
        ctr_clear(&w.ctrs[i]);
    free(w.ctrs);
    free(w.sandbox_id);
    free(w.last_status);
    pthread_mutex_lock(&kl->mu);
    p->finished = true;
    pthread_mutex_unlock(&kl->mu);
    return NULL;
}
