/* fence.c -- self-fencing: an agent cut off from the API server stops its local members. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/log.h"
#include "agent_internal.h"

struct fence_job {
    struct rss_agent *a;
    char *ns, *pod, *uid, *cname;
    struct agent_spec *spec;
};

/* Runs `stop` in the member's container with CRI only: nothing here may wait for the API server. */
static void *fence_member(void *arg)
{
    struct fence_job *f = arg;
    struct rss_agent *a = f->a;
    _cleanup_free_ char *cid = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    char **argv = NULL;
    if (agent_find_container(a, f->uid, f->cname, &cid, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s: cannot find its container", f->ns,
                      f->pod);
    } else if (!cid) {
        rss_log_info("self-fencing: pod %s/%s has no running container, nothing to stop", f->ns, f->pod);
    } else if (rss_hook_argv(&f->spec->spec, RSS_HOOK_STOP, NULL, 0, &argv, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s", f->ns, f->pod);
    } else {
        uint64_t tmo = (f->spec->spec.hooks[RSS_HOOK_STOP].timeout_ms + 999) / 1000;
        int timeout_s = tmo < 1 ? 1 : tmo > INT_MAX ? INT_MAX : (int)tmo;
        rss_log_warn(
            "pod %s/%s: running hook stop in container %.12s (timeout %d s) because self-fencing: the API "
            "server has been unreachable for more than %ld ms",
            f->ns, f->pod, cid, timeout_s, a->fence_timeout_ms);
        struct rss_cri_exec_result r = {0};
        if (rss_cri_exec_sync(a->cri, cid, (const char *const *)argv, timeout_s, &r, &err) < 0)
            rss_log_error(RSS_LOG_ERROR, &err, "self-fencing: pod %s/%s: stop", f->ns, f->pod);
        else
            rss_log_warn("pod %s/%s: self-fencing stop exited %d", f->ns, f->pod, r.exit_code);
        rss_cri_exec_result_clear(&r);
        rss_hook_argv_free(argv);
    }
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next)
        if (strcmp(m->ns, f->ns) == 0 && strcmp(m->pod, f->pod) == 0 && strcmp(m->uid, f->uid) == 0) {
            m->fence_done = true;
            m->wake = true;
        }
    agent_spec_put(a, f->spec);
    a->workers--;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    free(f->ns);
    free(f->pod);
    free(f->uid);
    free(f->cname);
    free(f);
    return NULL;
}

/* Lock held. */
static void fence_all(struct rss_agent *a)
{
    for (struct agent_member *m = a->members; m; m = m->next) {
        struct agent_spec *spec = agent_spec_get(a, m->ns, m->rss);
        if (!spec)
            continue;
        struct fence_job *f = rss_xcalloc(1, sizeof(*f));
        *f = (struct fence_job){.a = a,
                                .ns = rss_xstrdup(m->ns),
                                .pod = rss_xstrdup(m->pod),
                                .uid = rss_xstrdup(m->uid),
                                .cname = rss_xstrdup(m->container_name),
                                .spec = spec};
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        a->workers++;
        int r = pthread_create(&t, &attr, fence_member, f);
        pthread_attr_destroy(&attr);
        if (r != 0) {
            rss_log_err("self-fencing: pod %s/%s: cannot start a thread: %s", m->ns, m->pod, strerror(r));
            a->workers--;
            agent_spec_put(a, spec);
            free(f->ns);
            free(f->pod);
            free(f->uid);
            free(f->cname);
            free(f);
        }
    }
}

/* Why: the leader treats members on a node whose heartbeat is silent for longer than the fence
 * timeout plus a margin as stopped, and may start a recovery without them. A partitioned node must
 * therefore have stopped its members by then, or two copies could serve writes (rule 3). */
void agent_fence_check(struct rss_agent *a, int64_t now_ms)
{
    int64_t silent = now_ms - atomic_load(&a->last_api_ok_ms);
    bool cut_off = silent > a->fence_timeout_ms;
    if (cut_off == a->fenced)
        return;
    a->fenced = cut_off;
    if (cut_off) {
        rss_log_warn(
            "self-fencing: no successful API call for %lld ms (fence timeout %ld ms): stopping the local "
            "members",
            (long long)silent, a->fence_timeout_ms);
        fence_all(a);
    } else {
        rss_log_info(
            "the API server is reachable again: self-fencing ends; members are reported as they are, the "
            "leader decides what starts");
    }
    for (struct agent_member *m = a->members; m; m = m->next)
        m->wake = true;
}

bool agent_fenced(struct rss_agent *a)
{
    pthread_mutex_lock(&a->lock);
    bool f = a->fenced;
    pthread_mutex_unlock(&a->lock);
    return f;
}
