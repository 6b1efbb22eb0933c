/* agent_hook.c -- the agent's one hook runner: a hook of the spec, with peers, in a container through
 * CRI ExecSync, with its timeout enforced by the runtime, logged, and turned into a result. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "agent_internal.h"

#define MSG_MAX 512

void agent_hook_out_clear(struct agent_hook_out *h)
{
    free(h->out);
    free(h->msg);
    *h = (struct agent_hook_out){0};
}

char *agent_one_line(const char *s, size_t len)
{
    if (len > MSG_MAX)
        len = MSG_MAX;
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\r' || s[len - 1] == '\t'))
        len--;
    char *r = rss_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++)
        r[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : ' ';
    r[len] = '\0';
    return r;
}

/* The command line for the log: the argv joined by spaces. */
static char *join_argv(char **argv)
{
    size_t n = 1;
    for (char **p = argv; *p; p++)
        n += strlen(*p) + 1;
    char *r = rss_xmalloc(n), *w = r;
    for (char **p = argv; *p; p++) {
        size_t l = strlen(*p);
        if (p != argv)
            *w++ = ' ';
        memcpy(w, *p, l);
        w += l;
    }
    *w = '\0';
    return r;
}

void agent_hook_run(struct rss_agent *a, const struct rss_spec *spec, const char *ns, const char *pod,
                    const char *cid, enum rss_hook_kind kind, const struct rss_hook_env *env,
                    char *const *peers, size_t n_peers, const char *why, struct agent_hook_out *h)
{
    *h = (struct agent_hook_out){0};
    _cleanup_log_scope_ struct rss_log_fields outer =
        rss_log_scope((struct rss_log_fields){.ns = ns,
                                              .rss = spec->name,
                                              .member = pod,
                                              .action = rss_spec_hook_name(kind),
                                              .epoch = env ? env->epoch : 0});
    char **argv = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_hook_argv_env(spec, kind, env, peers, n_peers, &argv, &err) < 0) {
        h->errc = RSS_E_INVALID;
        h->exit_code = -1;
        h->result = RSS_RESULT_FAILED;
        h->msg = rss_error_string(err);
        rss_log_warn("pod %s/%s: cannot run hook %s (%s): %s", ns, pod, rss_spec_hook_name(kind), why,
                     h->msg);
        return;
    }
    uint64_t tmo = (spec->hooks[kind].timeout_ms + 999) / 1000;
    int timeout_s = tmo < 1 ? 1 : tmo > INT_MAX ? INT_MAX : (int)tmo;
    _cleanup_free_ char *cmd = join_argv(argv);
    rss_log_info("pod %s/%s: running hook %s in container %.12s (timeout %d s) because %s: %s", ns, pod,
                 rss_spec_hook_name(kind), cid, timeout_s, why, cmd);
    int64_t t0 = rss_clock_mono_ms();
    struct rss_cri_exec_result r = {0};
    int rc = rss_cri_exec_sync(a->cri, cid, (const char *const *)argv, timeout_s, &r, &err);
    rss_hook_argv_free(argv);
    int64_t took = rss_clock_mono_ms() - t0;
    if (rc < 0) {
        h->errc = rss_error_code(err);
        h->exit_code = -1;
        h->result = rss_agent_hook_result(h->errc, 0);
        _cleanup_free_ char *e = rss_error_string(err);
        if (h->result == RSS_RESULT_TIMEOUT)
            h->msg = rss_xasprintf("hook %s killed by the runtime at its %d s timeout",
                                   rss_spec_hook_name(kind), timeout_s);
        else if (h->errc == RSS_E_TOO_LARGE)
            /* Refused by the CRI client before it was buffered (--hook-output-max): never parsed. */
            h->msg = rss_xasprintf(
                "hook %s: output too large (stdout and stderr over %zu bytes, --hook-output-max); not used",
                rss_spec_hook_name(kind), a->hook_output_max);
        else
            h->msg = rss_xasprintf("hook %s could not run: %s", rss_spec_hook_name(kind), e);
        rss_metrics_hook(rss_spec_hook_name(kind), rss_result_name(h->result), (double)took / 1000);
        rss_log_info("pod %s/%s: hook %s -> %s after %" PRId64 " ms: %s", ns, pod, rss_spec_hook_name(kind),
                     rss_result_name(h->result), took, h->msg);
        return;
    }
    h->exit_code = r.exit_code;
    h->result = rss_agent_hook_result(0, r.exit_code);
    /* `status` answers with OCF codes: 7 (stopped) and 8 (primary) are answers, not failures. */
    bool ocf =
        kind == RSS_HOOK_STATUS && (r.exit_code == RSS_OCF_SUCCESS || r.exit_code == RSS_OCF_NOT_RUNNING ||
                                    r.exit_code == RSS_OCF_RUNNING_PRIMARY);
    rss_metrics_hook(rss_spec_hook_name(kind), ocf ? "ok" : rss_result_name(h->result), (double)took / 1000);
    h->out = r.out;
    h->out_len = r.out_len;
    r.out = NULL;
    if (r.exit_code != 0)
        h->msg = agent_one_line(r.errout ? r.errout : "", r.errout ? r.errout_len : 0);
    rss_cri_exec_result_clear(&r);
    rss_log_info("pod %s/%s: hook %s exited %d after %" PRId64 " ms%s%s", ns, pod, rss_spec_hook_name(kind),
                 h->exit_code, took, h->msg && *h->msg ? ": " : "", h->msg ? h->msg : "");
}
