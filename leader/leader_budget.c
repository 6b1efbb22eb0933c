/* leader_budget.c -- keeps each RSS's PodDisruptionBudget: one member evicted at a time, none while a
 * recovery runs. */
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"

int leader_budget_max_unavailable(const char *phase)
{
    /* Recovering: no primary is up, and the members that are running are the ones the recovery reads
     * sequences from and starts; an eviction then could take the newest copy out of the choice. Every
     * other phase allows one: a second is refused by the budget itself while one member is not Ready. */
    return phase && !strcmp(phase, "Recovering") ? 0 : 1;
}

/* Whether the budget's spec is ours: the same maxUnavailable and exactly our selector (a namespace user
 * who edits it to select fewer pods, or none, gets it back). */
static bool spec_matches(const cJSON *got, const cJSON *want)
{
    const cJSON *gs = cJSON_GetObjectItemCaseSensitive(got, "spec");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(want, "spec");
    const cJSON *gm = cJSON_GetObjectItemCaseSensitive(gs, "maxUnavailable");
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(ws, "maxUnavailable");
    return cJSON_IsNumber(gm) && gm->valuedouble == wm->valuedouble &&
           !cJSON_GetObjectItemCaseSensitive(gs, "minAvailable") &&
           cJSON_Compare(cJSON_GetObjectItemCaseSensitive(gs, "selector"),
                         cJSON_GetObjectItemCaseSensitive(ws, "selector"), true);
}

/* One GET, then a create or a replacement of the spec. 1: written, 0: already right, -1: err set. */
static int put_budget(const struct leader_ctx *ctx, const struct rss_spec *spec, int max, rss_error_t *err)
{
    _cleanup_json_ cJSON *want = leader_build_budget(spec, max);
    const char *name = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(want, "metadata"), "name"));
    _cleanup_free_ char *path = rss_kube_path("policy/v1", spec->ns, "poddisruptionbudgets", name, NULL);
    _cleanup_json_ cJSON *got = NULL;
    if (rss_kube_get(ctx->kube, path, &got, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "get");
        rss_error_release(err);
        if (!leader_still_leading(ctx))
            return 0;
        _cleanup_free_ char *coll = rss_kube_path("policy/v1", spec->ns, "poddisruptionbudgets", NULL, NULL);
        if (rss_kube_create(ctx->kube, coll, want, NULL, err) < 0)
            return rss_error_wrap(err, "create");
        return 1;
    }
    if (!leader_owned_by(got, spec))
        return rss_error_make(
            err, RSS_E_EXISTS, 0,
            "it exists and is not owned by this ReplicatedStatefulSet: rssd leaves it alone "
            "(delete it to have rssd's, which allows no eviction during a recovery)");
    if (spec_matches(got, want) || !leader_still_leading(ctx))
        return 0;
    /* The whole spec replaced, guarded by the version read: a concurrent edit makes it a conflict,
     * retried at the next reconcile. */
    _cleanup_json_ cJSON *ops = cJSON_CreateArray();
    cJSON *test = cJSON_CreateObject();
    cJSON_AddStringToObject(test, "op", "test");
    cJSON_AddStringToObject(test, "path", "/metadata/resourceVersion");
    cJSON_AddItemToObject(
        test, "value",
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(got, "metadata"),
                                                         "resourceVersion"),
                        true));
    cJSON_AddItemToArray(ops, test);
    cJSON *rep = cJSON_CreateObject();
    cJSON_AddStringToObject(rep, "op", "replace");
    cJSON_AddStringToObject(rep, "path", "/spec");
    cJSON_AddItemToObject(rep, "value",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(want, "spec"), true));
    cJSON_AddItemToArray(ops, rep);
    if (rss_kube_json_patch(ctx->kube, path, ops, NULL, err) < 0)
        return rss_error_wrap(err, "update");
    return 1;
}

void leader_budget_sync(const struct leader_ctx *ctx, const struct rss_spec *spec, const char *phase)
{
    int max = leader_budget_max_unavailable(phase);
    _cleanup_free_ char *base = rss_xasprintf("%s/%s/%s=", spec->ns, spec->name, spec->uid ? spec->uid : "");
    _cleanup_free_ char *key = rss_xasprintf("%s%d", base, max);
    if (ctx->budgets && leader_ctx_key_has(ctx, ctx->budgets, key))
        return;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *name = rss_spec_statefulset_name(spec);
    int r = put_budget(ctx, spec, max, &err);
    if (r < 0) {
        /* Best effort: the budget protects against drains, it never gates a recovery. Said once per
         * term at warning level (a ServiceAccount without the permission, an older chart's, would say it
         * at every reconcile), retried at every reconcile. */
        _cleanup_free_ char *why = rss_error_string(err);
        _cleanup_free_ char *said = rss_xasprintf("%serror", base);
        bool first = !ctx->budgets || !leader_ctx_key_has(ctx, ctx->budgets, said);
        rss_log(first ? RSS_LOG_WARN : RSS_LOG_DEBUG, "%s/%s: PodDisruptionBudget %s (maxUnavailable %d): %s",
                spec->ns, spec->name, name, max, why);
        if (ctx->budgets)
            leader_ctx_key_add(ctx, ctx->budgets, said);
        return;
    }
    if (!leader_still_leading(ctx))
        return;
    if (r > 0)
        rss_log_info("%s/%s: PodDisruptionBudget %s: maxUnavailable %d (phase %s)", spec->ns, spec->name,
                     name, max, phase ? phase : "unknown");
    if (!ctx->budgets)
        return;
    _cleanup_free_ char *other = rss_xasprintf("%s%d", base, !max);
    leader_lock(ctx->keys_mu);
    leader_keyset_del(ctx->budgets, other);
    leader_keyset_add(ctx->budgets, key);
    leader_unlock(ctx->keys_mu);
}
