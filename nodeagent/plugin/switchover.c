/* switchover.c -- `kubectl rss switchover NAME [--to POD]`: a planned switchover of a one-primary RSS; the
 * leader's refusals checked first, from the status it wrote, then the annotation set. */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "rss/spec.h"
#include "rss/switchover.h"
#include "plugin_internal.h"

int plugin_switchover(const struct plugin_ctx *ctx, const char *name, const char *to, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    struct rss_spec spec = {0};
    _cleanup_error_ rss_error_t serr = NULL;
    if (rss_spec_parse(rss, &spec, &serr) < 0) {
        _cleanup_free_ char *why = rss_error_string(serr);
        return rss_error_make(err, RSS_E_INVALID, 0, "%s/%s has an invalid spec: %s", ctx->ns, name, why);
    }
    bool promote = spec.promote_standby && spec.primaries == 1;
    int replicas = spec.replicas, k = spec.sync_standbys;
    rss_spec_clear(&spec);
    /* The members as the leader last reported them: a role without a `state` is the current container's. */
    const cJSON *list = rss_json_path(rss, "status.memberStatus");
    _cleanup_free_ struct rss_switchover_member *m =
        rss_xcalloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*m));
    size_t n = 0, s_total = 0, standbys = 0;
    const char *primary = NULL;
    const cJSON *ms;
    cJSON_ArrayForEach(ms, list)
    {
        const char *pod = rss_json_str(ms, "name"), *role = rss_json_str(ms, "role");
        const char *state = rss_json_str(ms, "state");
        const cJSON *ord = cJSON_GetObjectItemCaseSensitive(ms, "ordinal");
        if (!pod || !cJSON_IsNumber(ord))
            continue;
        bool current = !state && role;
        m[n] = (struct rss_switchover_member){
            .pod = pod,
            .primary = current && !strcmp(role, "primary"),
            .standby = current && !strcmp(role, "secondary"),
            .leaving = ord->valuedouble >= replicas,
        };
        if (m[n].primary && !primary)
            primary = pod;
        /* S, as planner_failover.c counts it: every member but the primary below spec.replicas, and
         * those above it still there. */
        if (!m[n].primary && (!m[n].leaving || !state || strcmp(state, "absent")))
            s_total++;
        standbys += m[n].standby;
        n++;
    }
    enum rss_switchover_verdict v =
        rss_switchover_check(primary, to, promote, m, n, rss_switchover_need(s_total, k));
    if (v != RSS_SWITCHOVER_ALLOWED)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "switchover of %s/%s refused: %s%s; rssd would refuse the annotation too",
                              ctx->ns, name, rss_switchover_reason(v),
                              v == RSS_SWITCHOVER_TOO_FEW ? " (see kubectl rss status)" : "");
    fprintf(ctx->out,
            "%s is the primary of %s/%s; %zu standbys run. The switchover stops %s with its stop hook, then "
            "promotes %s%s; the other standbys follow it and %s rejoins as a standby. Writes stop until the "
            "promotion (typically seconds).\n",
            primary, ctx->ns, name, standbys, primary, to ? to : "the most advanced standby",
            to ? " if it is as advanced as the others (else the most advanced one)" : "", primary);
    _cleanup_free_ char *value = rss_switchover_format(primary, to);
    if (plugin_annotate(ctx, name, rss, RSS_ANNOTATION_SWITCHOVER, value, primary, err) < 0)
        return -1;
    fprintf(ctx->out,
            "%s=%s set on %s/%s. The leader checks again, stops %s (a Normal Switchover Event) and removes "
            "the annotation (or refuses with a Warning SwitchoverRefused).\n"
            "Follow it with: kubectl rss status %s -n %s; kubectl rss history %s -n %s\n",
            RSS_ANNOTATION_SWITCHOVER, value, ctx->ns, name, primary, name, ctx->ns, name, ctx->ns);
    return 0;
}
