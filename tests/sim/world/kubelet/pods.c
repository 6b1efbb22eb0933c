/* pods.c -- watches the pods bound to this node and keeps one worker thread per pod. */
#include <string.h>
#include <time.h>

#include "kubelet.h"
#include "rss/cleanup.h"
#include "rss/log.h"

static const char *meta_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static struct kl_pod *find_pod(struct kl *kl, const char *uid)
{
    for (struct kl_pod *p = kl->pods; p; p = p->next)
        if (!strcmp(p->uid, uid))
            return p;
    return NULL;
}

static void kick(struct kl_pod *p)
{
    p->kick = true;
    pthread_cond_signal(&p->cond);
}

/* Called with kl->mu held. */
static void upsert(struct kl *kl, const cJSON *obj)
{
    const char *uid = meta_str(obj, "uid"), *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");
    if (!uid || !ns || !name)
        return;
    struct kl_pod *p = find_pod(kl, uid);
    if (!p) {
        p = rss_xcalloc(1, sizeof(*p));
        p->uid = rss_xstrdup(uid);
        p->ns = rss_xstrdup(ns);
        p->name = rss_xstrdup(name);
        p->kl = kl;
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &ca);
        pthread_condattr_destroy(&ca);
        p->obj = cJSON_Duplicate(obj, true);
        p->seen = true;
        p->kick = true; /* first sync at once */
        if (pthread_create(&p->thread, NULL, kl_pod_worker, p) != 0) {
            rss_log_err("cannot start a worker for pod %s/%s", ns, name);
            cJSON_Delete(p->obj);
            pthread_cond_destroy(&p->cond);
            free(p->uid);
            free(p->ns);
            free(p->name);
            free(p);
            return;
        }
        p->next = kl->pods;
        kl->pods = p;
        rss_log_info("pod %s/%s (%s) is ours", ns, name, uid);
        return;
    }
    cJSON_Delete(p->obj);
    p->obj = cJSON_Duplicate(obj, true);
    p->seen = true;
    p->gone = false;
    kick(p);
}

static int on_event(void *userdata, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct kl *kl = userdata;
    pthread_mutex_lock(&kl->mu);
    switch (ev) {
    case RSS_KUBE_SYNC_BEGIN:
        for (struct kl_pod *p = kl->pods; p; p = p->next)
            p->seen = false;
        break;
    case RSS_KUBE_SYNC_END:
        for (struct kl_pod *p = kl->pods; p; p = p->next) {
            if (!p->seen && !p->gone) {
                p->gone = true;
                kick(p);
            }
        }
        kl->synced = true;
        break;
    case RSS_KUBE_ADDED:
    case RSS_KUBE_MODIFIED:
        upsert(kl, obj);
        break;
    case RSS_KUBE_DELETED: {
        const char *uid = meta_str(obj, "uid");
        struct kl_pod *p = uid ? find_pod(kl, uid) : NULL;
        if (p) {
            p->gone = true;
            kick(p);
        }
        break;
    }
    }
    pthread_mutex_unlock(&kl->mu);
    return 0;
}

void *kl_pods_thread(void *arg)
{
    struct kl *kl = arg;
    _cleanup_free_ char *selector = rss_xasprintf("spec.nodeName=%s", kl->node);
    struct rss_kube_watch_opts opts = {
        .field_selector = selector,
        .stall_ms = 30000,
        .stop = &kl->stop,
    };
    while (!atomic_load(&kl->stop)) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_kube_watch(kl->kube, "/api/v1/pods", &opts, on_event, kl, &err) < 0) {
            rss_log_error(RSS_LOG_ERROR, &err, "watching pods of node %s", kl->node);
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static bool pod_known(struct kl *kl, const char *uid)
{
    /* called with kl->mu held */
    return find_pod(kl, uid) != NULL;
}

/* Removes what the runtime still has of pods this node no longer runs (deleted while it was off). */
static void remove_orphan_sandboxes(struct kl *kl)
{
    struct rss_cri_sandbox_list l = {0};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_cri_list_sandboxes(kl->cri, NULL, &l, &err) < 0) {
        rss_log_error(RSS_LOG_DEBUG, &err, "housekeeping");
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        const char *uid = rss_cri_map_get(&l.items[i].labels, KL_LABEL_POD_UID);
        if (!uid)
            continue;
        pthread_mutex_lock(&kl->mu);
        bool known = pod_known(kl, uid);
        pthread_mutex_unlock(&kl->mu);
        if (known)
            continue;
        rss_log_info("removing sandbox %.12s of vanished pod %s/%s", l.items[i].id, l.items[i].namespace,
                     l.items[i].name);
        if (rss_cri_stop_sandbox(kl->cri, l.items[i].id, &err) < 0 ||
            rss_cri_remove_sandbox(kl->cri, l.items[i].id, &err) < 0)
            rss_log_error(RSS_LOG_WARN, &err, "removing sandbox %s", l.items[i].id);
    }
    rss_cri_sandbox_list_clear(&l);
}

void kl_pods_housekeeping(struct kl *kl)
{
    pthread_mutex_lock(&kl->mu);
    bool synced = kl->synced;
    struct kl_pod **pp = &kl->pods;
    while (*pp) {
        struct kl_pod *p = *pp;
        if (p->finished) {
            *pp = p->next;
            pthread_mutex_unlock(&kl->mu);
            pthread_join(p->thread, NULL);
            cJSON_Delete(p->obj);
            pthread_cond_destroy(&p->cond);
            free(p->uid);
            free(p->ns);
            free(p->name);
            free(p);
            pthread_mutex_lock(&kl->mu);
            pp = &kl->pods; /* the list may have changed while unlocked */
            continue;
        }
        pp = &p->next;
    }
    if (synced)
        kl_hostproc_reap_orphans(kl, pod_known);
    pthread_mutex_unlock(&kl->mu);
    if (synced)
        remove_orphan_sandboxes(kl);
}

void kl_pods_shutdown(struct kl *kl)
{
    pthread_mutex_lock(&kl->mu);
    for (struct kl_pod *p = kl->pods; p; p = p->next)
        kick(p);
    pthread_mutex_unlock(&kl->mu);
    for (;;) {
        pthread_mutex_lock(&kl->mu);
        struct kl_pod *p = kl->pods;
        if (p)
            kl->pods = p->next;
        pthread_mutex_unlock(&kl->mu);
        if (!p)
            break;
        pthread_join(p->thread, NULL);
        cJSON_Delete(p->obj);
        pthread_cond_destroy(&p->cond);
        free(p->uid);
        free(p->ns);
        free(p->name);
        free(p);
    }
    free(TAKE_PTR(kl->runtime_version));
}
