/* node.c -- the kubelet's node heartbeat: registers the Node, renews its Lease and Ready condition. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kubelet.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"

#define LEASE_NS              "kube-node-lease"
#define LEASE_DURATION_S      40
#define LEASE_RENEW_MS        1000
#define STATUS_EVERY_RENEWALS 4

static void sleep_until_stop(struct kl *kl, long ms)
{
    for (long t = 0; t < ms && !atomic_load(&kl->stop); t += 50) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static int ensure_namespace(struct kl *kl, const char *name, rss_error_t *err)
{
    _cleanup_json_ cJSON *ns = cJSON_CreateObject();
    cJSON_AddStringToObject(ns, "apiVersion", "v1");
    cJSON_AddStringToObject(ns, "kind", "Namespace");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(ns, "metadata"), "name", name);
    _cleanup_json_ cJSON *created = NULL;
    if (rss_kube_create(kl->kube, "/api/v1/namespaces", ns, &created, err) < 0) {
        if (rss_error_code(*err) != RSS_E_EXISTS)
            return rss_error_wrap(err, "creating namespace %s", name);
        rss_error_release(err);
    }
    return 0;
}

/* Creates the Node if missing; *uid_ret gets its uid (for the Lease's owner reference). */
static int register_node(struct kl *kl, char **uid_ret, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", kl->node, NULL);
    _cleanup_json_ cJSON *node = NULL;
    if (rss_kube_get(kl->kube, path, &node, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "getting node %s", kl->node);
        rss_error_release(err);
        _cleanup_json_ cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "apiVersion", "v1");
        cJSON_AddStringToObject(obj, "kind", "Node");
        cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
        cJSON_AddStringToObject(meta, "name", kl->node);
        cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
        cJSON_AddStringToObject(labels, "kubernetes.io/hostname", kl->node);
        cJSON_AddStringToObject(labels, "kubernetes.io/os", "linux");
        cJSON_AddStringToObject(labels, "kubernetes.io/arch", "amd64");
        cJSON_AddStringToObject(labels, "node.kubernetes.io/instance-type", "rss-world");
        cJSON_AddObjectToObject(obj, "spec");
        if (rss_kube_create(kl->kube, "/api/v1/nodes", obj, &node, err) < 0) {
            if (rss_error_code(*err) != RSS_E_EXISTS)
                return rss_error_wrap(err, "registering node %s", kl->node);
            rss_error_release(err);
            if (rss_kube_get(kl->kube, path, &node, err) < 0)
                return rss_error_wrap(err, "getting node %s", kl->node);
        } else {
            rss_log_info("registered node %s", kl->node);
        }
    }
    const cJSON *uid =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"), "uid");
    *uid_ret = rss_xstrdup(cJSON_IsString(uid) ? uid->valuestring : "");
    return 0;
}

static cJSON *condition(const char *type, const char *status, const char *reason, const char *message,
                        const char *now, const char *since)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", status);
    cJSON_AddStringToObject(c, "lastHeartbeatTime", now);
    cJSON_AddStringToObject(c, "lastTransitionTime", since);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    return c;
}

/* A condition's lastTransitionTime as the real kubelet's setters give it (pkg/kubelet/nodestatus/
 * setters.go): the stored one while the stored status is the one posted, now when the status changes
 * (the node lifecycle controller set Unknown while this kubelet was frozen or cut off: the transition
 * back to True is the moment it posts again) or when the Node has no such condition yet. rssd reads
 * the Ready transition to prove that its node was not judged dead while the agent did not run. */
static const char *transition_time(const cJSON *node, const char *type, const char *status, const char *now)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, rss_json_path(node, "status.conditions"))
    {
        const char *t = rss_json_str(c, "type");
        if (!t || strcmp(t, type) != 0)
            continue;
        const char *s = rss_json_str(c, "status"), *since = rss_json_str(c, "lastTransitionTime");
        return s && strcmp(s, status) == 0 && since && *since ? since : now;
    }
    return now;
}

/* Reads the Node first, as the kubelet's status update does (tryUpdateNodeStatus): the conditions'
 * transition times depend on what the API server holds now, not on what this kubelet last wrote. */
static int patch_status(struct kl *kl, rss_error_t *err)
{
    char now[RSS_TIME_LEN];
    rss_time_seconds(now, NULL);
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", kl->node, NULL);
    _cleanup_json_ cJSON *node = NULL;
    if (rss_kube_get(kl->kube, path, &node, err) < 0)
        return rss_error_wrap(err, "reading node %s before its status update", kl->node);
    static const struct {
        const char *type, *status, *reason, *message;
    } conditions[] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
    };
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    for (size_t i = 0; i < sizeof(conditions) / sizeof(conditions[0]); i++)
        cJSON_AddItemToArray(conds,
                             condition(conditions[i].type, conditions[i].status, conditions[i].reason,
                                       conditions[i].message, now,
                                       transition_time(node, conditions[i].type, conditions[i].status, now)));
    cJSON *addrs = cJSON_AddArrayToObject(st, "addresses");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "type", "InternalIP");
    cJSON_AddStringToObject(a, "address", kl->node_ip);
    cJSON_AddItemToArray(addrs, a);
    a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "type", "Hostname");
    cJSON_AddStringToObject(a, "address", kl->node);
    cJSON_AddItemToArray(addrs, a);
    for (int i = 0; i < 2; i++) {
        cJSON *cap = cJSON_AddObjectToObject(st, i ? "allocatable" : "capacity");
        cJSON_AddStringToObject(cap, "cpu", "2");
        cJSON_AddStringToObject(cap, "memory", "4Gi");
        cJSON_AddStringToObject(cap, "pods", "110");
    }
    cJSON *info = cJSON_AddObjectToObject(st, "nodeInfo");
    cJSON_AddStringToObject(info, "kubeletVersion", "v1.32.0-rss-world");
    cJSON_AddStringToObject(info, "containerRuntimeVersion", kl->runtime_version ? kl->runtime_version : "");
    cJSON_AddStringToObject(info, "operatingSystem", "linux");
    cJSON_AddStringToObject(info, "architecture", "amd64");
    /* As a real kubelet reports the kernel's: this power-on's, so a reboot shows in the Node. */
    if (kl->boot_id)
        cJSON_AddStringToObject(info, "bootID", kl->boot_id);
    if (rss_kube_merge_patch_status(kl->kube, path, patch, NULL, err) < 0)
        return rss_error_wrap(err, "updating node %s status", kl->node);
    return 0;
}

struct lease_state {
    cJSON *last; /* the last Lease we wrote or read */
};

static cJSON *new_lease(struct kl *kl, const char *node_uid)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(l, "kind", "Lease");
    cJSON *meta = cJSON_AddObjectToObject(l, "metadata");
    cJSON_AddStringToObject(meta, "name", kl->node);
    cJSON_AddStringToObject(meta, "namespace", LEASE_NS);
    if (node_uid && *node_uid) {
        /* As the kubelet's SetNodeOwnerFunc: the Lease goes away with its Node. */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "apiVersion", "v1");
        cJSON_AddStringToObject(o, "kind", "Node");
        cJSON_AddStringToObject(o, "name", kl->node);
        cJSON_AddStringToObject(o, "uid", node_uid);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), o);
    }
    cJSON_AddObjectToObject(l, "spec");
    return l;
}

static void lease_set_spec(struct kl *kl, cJSON *lease)
{
    char now[RSS_TIME_LEN];
    rss_time_micro(now, NULL);
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!spec)
        spec = cJSON_AddObjectToObject(lease, "spec");
    cJSON_DeleteItemFromObject(spec, "holderIdentity");
    cJSON_DeleteItemFromObject(spec, "leaseDurationSeconds");
    cJSON_DeleteItemFromObject(spec, "renewTime");
    cJSON_AddStringToObject(spec, "holderIdentity", kl->node);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", LEASE_DURATION_S);
    cJSON_AddStringToObject(spec, "renewTime", now);
}

/* The kubelet's lease controller: PUT the last known Lease; on a conflict or if it is missing, GET
 * or create it and try again. */
static int renew_lease(struct kl *kl, struct lease_state *ls, const char *node_uid, rss_error_t *err)
{
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", LEASE_NS, "leases", kl->node, NULL);
    for (int attempt = 0; attempt < 3; attempt++) {
        if (!ls->last) {
            if (rss_kube_get(kl->kube, path, &ls->last, err) < 0) {
                if (rss_error_code(*err) != RSS_E_NOT_FOUND)
                    return rss_error_wrap(err, "getting node lease");
                rss_error_release(err);
                _cleanup_json_ cJSON *l = new_lease(kl, node_uid);
                lease_set_spec(kl, l);
                _cleanup_free_ char *coll =
                    rss_kube_path("coordination.k8s.io/v1", LEASE_NS, "leases", NULL, NULL);
                if (rss_kube_create(kl->kube, coll, l, &ls->last, err) < 0) {
                    if (rss_error_code(*err) == RSS_E_EXISTS) {
                        rss_error_release(err);
                        continue;
                    }
                    if (rss_error_code(*err) == RSS_E_NOT_FOUND) { /* no namespace yet */
                        rss_error_release(err);
                        if (ensure_namespace(kl, LEASE_NS, err) < 0)
                            return -1;
                        continue;
                    }
                    return rss_error_wrap(err, "creating node lease");
                }
                return 0;
            }
        }
        lease_set_spec(kl, ls->last);
        cJSON *updated = NULL;
        if (rss_kube_update(kl->kube, path, ls->last, &updated, err) == 0) {
            cJSON_Delete(ls->last);
            ls->last = updated;
            return 0;
        }
        cJSON_Delete(ls->last);
        ls->last = NULL;
        enum rss_errc c = rss_error_code(*err);
        if (c != RSS_E_CONFLICT && c != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "renewing node lease");
        rss_error_release(err);
    }
    return rss_error_make(err, RSS_E_CONFLICT, 0, "renewing node lease: conflicts kept coming");
}

static void write_registered(struct kl *kl)
{
    _cleanup_free_ char *path = rss_xasprintf("%s/registered", kl->state_dir);
    _cleanup_fclose_ FILE *f = fopen(path, "we");
    if (f)
        fprintf(f, "%s\n", kl->node);
}

void *kl_node_thread(void *arg)
{
    struct kl *kl = arg;
    _cleanup_free_ char *node_uid = NULL;
    struct lease_state ls = {0};
    bool registered = false, announced = false;
    long backoff = 200;
    unsigned n = 0;

    while (!atomic_load(&kl->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        if (!registered) {
            if (!kl->runtime_version) {
                struct rss_cri_version v = {0};
                if (rss_cri_get_version(kl->cri, &v, &err) == 0) {
                    char *rv = rss_xasprintf("%s://%s", v.runtime_name, v.runtime_version);
                    pthread_mutex_lock(&kl->mu);
                    kl->runtime_version = rv;
                    pthread_mutex_unlock(&kl->mu);
                    rss_cri_version_clear(&v);
                } else {
                    rss_log_error(RSS_LOG_WARN, &err, "runtime %s not answering yet", kl->cri_endpoint);
                }
            }
            if (register_node(kl, &node_uid, &err) < 0 || patch_status(kl, &err) < 0) {
                rss_log_error(RSS_LOG_WARN, &err, "node %s", kl->node);
                sleep_until_stop(kl, backoff);
                backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
                continue;
            }
            registered = true;
            backoff = 200;
        } else if (n % STATUS_EVERY_RENEWALS == 0 && patch_status(kl, &err) < 0) {
            if (rss_error_code(err) == RSS_E_NOT_FOUND)
                registered = false; /* someone deleted our Node: register again */
            rss_log_error(RSS_LOG_WARN, &err, "node %s", kl->node);
        }
        if (renew_lease(kl, &ls, node_uid, &err) < 0)
            rss_log_error(RSS_LOG_WARN, &err, "node %s", kl->node);
        else if (!announced) {
            write_registered(kl); /* Node Ready and Lease fresh: `world` may go on */
            announced = true;
        }
        n++;
        sleep_until_stop(kl, LEASE_RENEW_MS);
    }
    cJSON_Delete(ls.last);
    return NULL;
}
