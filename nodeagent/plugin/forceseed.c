/* forceseed.c -- `kubectl rss force-seed NAME POD`: the leader's refusals checked and shown before the
 * annotation is set. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/forceseed.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

/* As the planner judges a member live: it runs, is starting, or has an action in flight, as last
 * reported, unless its node was judged dead and it was fenced. The status carries that report. */
static bool live_in_status(const cJSON *ms)
{
    const char *state = rss_json_str(ms, "state"), *role = rss_json_str(ms, "role");
    const char *last = rss_json_str(ms, "lastResult");
    if (state && !strcmp(state, "fenced"))
        return false;
    if (role && (!strcmp(role, "primary") || !strcmp(role, "secondary") || !strcmp(role, "starting")))
        return true;
    return last && !strcmp(last, "pending");
}

static const cJSON *member_status(const cJSON *rss, const char *pod)
{
    const cJSON *ms;
    cJSON_ArrayForEach(ms, rss_json_path(rss, "status.memberStatus"))
    {
        const char *n = rss_json_str(ms, "name");
        if (n && !strcmp(n, pod))
            return ms;
    }
    return NULL;
}

/* Asks on the terminal; false when stdin is not one (then --yes is needed). */
static bool confirmed(const struct plugin_ctx *ctx, const char *pod)
{
    if (ctx->yes)
        return true;
    if (!isatty(STDIN_FILENO))
        return false;
    fprintf(ctx->out, "Type the pod name (%s) to set the annotation: ", pod);
    fflush(ctx->out);
    char line[300];
    if (!fgets(line, sizeof(line), stdin))
        return false;
    line[strcspn(line, "\r\n")] = '\0';
    return !strcmp(line, pod);
}

int plugin_force_seed(const struct plugin_ctx *ctx, const char *name, const char *pod, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    const char *rv = rss_json_str(rss, "metadata.resourceVersion");
    _cleanup_free_ char *pods_path = rss_kube_path("v1", ctx->ns, "pods", NULL, NULL);
    _cleanup_free_ char *sel = rss_xasprintf(RSS_LABEL_NAME "=%s", name);
    struct rss_kube_list_opts lo = {.label_selector = sel};
    _cleanup_json_ cJSON *pods = NULL;
    if (rss_kube_list(ctx->kube, pods_path, &lo, &pods, err) < 0)
        return rss_error_wrap(err, "listing the member pods of %s/%s", ctx->ns, name);

    /* The members: every pod of the RSS, and every member the status still names (a pod that is gone
     * does not exist, as for the planner). */
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(pods, "items");
    size_t cap = (size_t)cJSON_GetArraySize(items) +
                 (size_t)cJSON_GetArraySize(rss_json_path(rss, "status.memberStatus")) + 1;
    _cleanup_free_ struct rss_forceseed_member *m = rss_xcalloc(cap, sizeof(*m));
    size_t n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, items)
    {
        const char *pn = rss_json_str(p, "metadata.name");
        if (!pn)
            continue;
        const cJSON *ms = member_status(rss, pn);
        m[n++] = (struct rss_forceseed_member){pn, true, ms && live_in_status(ms)};
    }
    cJSON_ArrayForEach(p, rss_json_path(rss, "status.memberStatus"))
    {
        const char *pn = rss_json_str(p, "name");
        bool seen = false;
        for (size_t i = 0; pn && i < n; i++)
            seen |= !strcmp(m[i].pod, pn);
        if (pn && !seen)
            m[n++] = (struct rss_forceseed_member){pn, false, false};
    }

    fprintf(ctx->out, "%s/%s members, as rssd last reported them:\n", ctx->ns, name);
    for (size_t i = 0; i < n; i++) {
        const cJSON *ms = member_status(rss, m[i].pod);
        const char *seq = ms ? rss_json_str(ms, "sequence") : NULL;
        const char *role = ms ? rss_json_str(ms, "role") : NULL,
                   *state = ms ? rss_json_str(ms, "state") : NULL;
        fprintf(ctx->out, "  %-24s sequence %-20s %s%s%s%s\n", m[i].pod,
                seq ? seq : (ms && rss_json_str(ms, "sequenceError") ? "error" : "unknown"),
                role ? role : "unreported", state ? " (" : "", state ? state : "", state ? ")" : "");
        if (!m[i].exists)
            fprintf(ctx->out, "  %-24s (its pod does not exist)\n", "");
    }

    const char *runner = NULL;
    enum rss_forceseed_verdict v = rss_forceseed_check(pod, m, n, NULL, &runner);
    if (v != RSS_FORCESEED_ALLOWED) {
        if (v == RSS_FORCESEED_RUNNING)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "force-seed of %s refused: %s (%s); rssd would refuse the annotation too. "
                                  "A force-seed is for a cluster where nothing runs",
                                  pod, rss_forceseed_reason(v), runner);
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "force-seed of %s refused: %s of %s/%s; rssd would refuse the annotation too",
                              pod, rss_forceseed_reason(v), ctx->ns, name);
    }
    /* Annotation keys hold dots: no dotted path. */
    const char *pending = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        rss_json_path(rss, "metadata.annotations"), RSS_ANNOTATION_FORCE_SEED));
    if (pending)
        fprintf(ctx->out, "A force-seed of %s is already requested; it is replaced.\n", pending);

    /* What the admin is about to accept: members with a higher sequence lose what only they hold. */
    const cJSON *mine = member_status(rss, pod);
    const char *my_seq = mine ? rss_json_str(mine, "sequence") : NULL;
    unsigned long long mv = my_seq ? strtoull(my_seq, NULL, 10) : 0;
    bool warned = false;
    for (size_t i = 0; i < n; i++) {
        const cJSON *ms = member_status(rss, m[i].pod);
        const char *seq = ms ? rss_json_str(ms, "sequence") : NULL;
        if (!strcmp(m[i].pod, pod))
            continue;
        if (!seq || !my_seq || strtoull(seq, NULL, 10) > mv) {
            fprintf(ctx->out, "WARNING: %s %s%s; writes only it holds may be lost.\n", m[i].pod,
                    seq ? "has a higher sequence: " : "did not report a sequence", seq ? seq : "");
            warned = true;
        }
    }
    if (!warned)
        fprintf(ctx->out, "%s has the highest sequence reported.\n", pod);
    const char *role = mine ? rss_json_str(mine, "role") : NULL;
    if (!role || strcmp(role, "stopped"))
        fprintf(ctx->out, "Note: rssd seeds %s only once it reports as stopped.\n", pod);
    if (!confirmed(ctx, pod))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "not confirmed: nothing was changed (pass --yes when not on a terminal)");

    /* Set only on the version that was checked: a change meanwhile (a member started) means checking
     * again. */
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), RSS_ANNOTATION_FORCE_SEED, pod);
    if (rv)
        cJSON_AddStringToObject(md, "resourceVersion", rv);
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ctx->ns, RSS_CRD_PLURAL, name, NULL);
    if (rss_kube_merge_patch(ctx->kube, path, patch, NULL, err) < 0) {
        if (rss_error_code(*err) == RSS_E_CONFLICT)
            return rss_error_wrap(err,
                                  "%s/%s changed while it was checked; nothing was set, run the command "
                                  "again",
                                  ctx->ns, name);
        return rss_error_wrap(err, "setting %s on %s/%s", RSS_ANNOTATION_FORCE_SEED, ctx->ns, name);
    }
    fprintf(ctx->out,
            "%s=%s set on %s/%s. The leader checks again, seeds %s, records lastRecovery.kind ForceSeed "
            "and removes the annotation (or refuses with a Warning ForceSeedRefused).\n"
            "Follow it with: kubectl rss status %s -n %s\n",
            RSS_ANNOTATION_FORCE_SEED, pod, ctx->ns, name, pod, name, ctx->ns);
    return 0;
}
