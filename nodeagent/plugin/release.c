/* release.c -- `kubectl rss release-hold NAME POD`: a member held back after a recovery that left it out
 * joins the running cluster; the leader's refusals checked and shown before the annotation is set. */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

int plugin_release_hold(const struct plugin_ctx *ctx, const char *name, const char *pod, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    /* The leader's refusals (planner_hold_release), from the status it wrote: a member is held while it
     * was left out of a recovery and has not rejoined since (memberStatus[].leftOut). */
    const cJSON *ms = plugin_member_status(rss, pod);
    const cJSON *lo = ms ? cJSON_GetObjectItemCaseSensitive(ms, "leftOut") : NULL;
    if (!ms || !cJSON_IsObject(lo))
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "release-hold of %s refused: %s of %s/%s; rssd would refuse the annotation too", pod,
            !ms ? "no such member" : "it is not held (not left out of a recovery, or it has rejoined since)",
            ctx->ns, name);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "released"))) {
        fprintf(ctx->out,
                "%s is released already: it joins as soon as it can (kubectl rss status %s -n %s).\n", pod,
                name, ctx->ns);
        return 0;
    }
    const char *seed = rss_json_str(lo, "seedSequence"), *seq = rss_json_str(ms, "sequence");
    bool held = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "held"));
    fprintf(ctx->out, "%s was left out of the recovery that seeded sequence %s; its own sequence: %s%s.\n",
            pod, seed ? seed : "unknown", seq ? seq : "unknown",
            held ? " (held back: possibly newer than the seed)" : "");
    fprintf(ctx->out,
            "WARNING: once released it joins the running cluster, which replaces its writes beyond sequence "
            "%s. Recover them by hand first.\n",
            seed ? seed : "the seed's");
    if (plugin_annotate(ctx, name, rss, RSS_ANNOTATION_RELEASE_HOLD, pod, pod, err) < 0)
        return -1;
    fprintf(ctx->out,
            "%s=%s set on %s/%s. The leader checks again, lets %s join (a Warning HoldReleased) and removes "
            "the annotation (or refuses with a Warning ReleaseHoldRefused).\n"
            "Follow it with: kubectl rss status %s -n %s\n",
            RSS_ANNOTATION_RELEASE_HOLD, pod, ctx->ns, name, pod, name, ctx->ns);
    return 0;
}
