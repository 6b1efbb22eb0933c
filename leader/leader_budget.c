/* leader_budget.c -- keeps each RSS's PodDisruptionBudgets: one member evicted at a time, none while a
 * recovery runs, and a single primary never evicted before it handed over. */
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

const char *leader_budget_primary(const struct rss_spec *spec, const char *plan_primary, bool cordons_known)
{
    /* Only where a cordon makes the primary hand over (a standby to hand over to included): elsewhere a
     * budget that never lets it go would hold a drain for good. */
    if (!cordons_known || !spec->promote_standby || spec->primaries != 1 || spec->replicas < 2)
        return NULL;
    return plan_primary;
}

/* The same field in both specs, or absent from both. */
static bool same_field(const cJSON *gs, const cJSON *ws, const char *key)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(gs, key),
                *w = cJSON_GetObjectItemCaseSensitive(ws, key);
    return g || w ? g && w && cJSON_Compare(g, w, true) : true;
}

/* Whether the budget's spec is ours: the same maxUnavailable or minAvailable and exactly our selector (a
 * namespace user who edits it to select fewer pods, or none, gets it back). */
static bool spec_matches(const cJSON *got, const cJSON *want)
{
    const cJSON *gs = cJSON_GetObjectItemCaseSensitive(got, "spec");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(want, "spec");
    return same_field(gs, ws, "maxUnavailable") && same_field(gs, ws, "minAvailable") &&
           same_field(gs, ws, "selector");
}

static const char *obj_name(const cJSON *obj)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name"));
}

/* GET of the budget called name: 1 and *got when it is ours, 0 when absent, -1 with err set (also when
 * it is not ours). */
static int get_ours(const struct leader_ctx *ctx, const struct rss_spec *spec, const char *path, cJSON **got,
                    rss_error_t *err)
{
    if (rss_kube_get(ctx->kube, path, got, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "get");
        rss_error_release(err);
        return 0;
    }
    if (!leader_owned_by(*got, spec))
        return rss_error_make(
            err, RSS_E_EXISTS, 0,
            "it exists and is not owned by this ReplicatedStatefulSet: rssd leaves it alone "
            "(delete it to have rssd's, which follows the recovery and the primary's handover)");
    return 1;
}

/* One GET, then a create or a replacement of the spec. 1: written, 0: already right, -1: err set. */
static int put_budget(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *want,
                      rss_error_t *err)
{
    _cleanup_free_ char *path =
        rss_kube_path("policy/v1", spec->ns, "poddisruptionbudgets", obj_name(want), NULL);
    _cleanup_json_ cJSON *got = NULL;
    int r = get_ours(ctx, spec, path, &got, err);
    if (r < 0)
        return rss_error_wrap(err, "budget %s", obj_name(want));
    if (!leader_still_leading(ctx))
        return 0;
    if (r == 0) {
        _cleanup_free_ char *coll = rss_kube_path("policy/v1", spec->ns, "poddisruptionbudgets", NULL, NULL);
        if (rss_kube_create(ctx->kube, coll, want, NULL, err) < 0)
            return rss_error_wrap(err, "create budget %s", obj_name(want));
        return 1;
    }
    if (spec_matches(got, want))
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
        return rss_error_wrap(err, "update budget %s", obj_name(want));
    return 1;
}

/* The primary's budget deleted when it is ours (this incarnation only). 1: deleted, 0: none, -1: err. */
static int drop_primary_budget(const struct leader_ctx *ctx, const struct rss_spec *spec, rss_error_t *err)
{
    _cleanup_free_ char *name = leader_primary_budget_name(spec);
    _cleanup_free_ char *path = rss_kube_path("policy/v1", spec->ns, "poddisruptionbudgets", name, NULL);
    _cleanup_json_ cJSON *got = NULL;
    int r = get_ours(ctx, spec, path, &got, err);
    if (r < 0) {
        if (rss_error_code(*err) != RSS_E_EXISTS)
            return rss_error_wrap(err, "budget %s", name);
        rss_error_release(err); /* not ours: it selects what its owner wants, not our concern */
        return 0;
    }
    if (r == 0 || !leader_still_leading(ctx))
        return 0;
    struct rss_kube_delete_opts o = {.uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                         cJSON_GetObjectItemCaseSensitive(got, "metadata"), "uid"))};
    if (rss_kube_delete(ctx->kube, path, &o, NULL, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "delete budget %s", name);
        rss_error_release(err);
        return 0;
    }
    return 1;
}

void leader_budget_sync(const struct leader_ctx *ctx, const struct rss_spec *spec, const char *phase,
                        const char *plan_primary)
{
    int max = leader_budget_max_unavailable(phase);
    bool cordons_known = ctx->node_cordoned && ctx->node_cordoned(ctx->caches_ud, NULL) >= 0;
    const char *primary = leader_budget_primary(spec, plan_primary, cordons_known);
    _cleanup_free_ char *base = rss_xasprintf("%s/%s/%s=", spec->ns, spec->name, spec->uid ? spec->uid : "");
    /* (the replicas too: with a primary of its own, the members' budget is a minAvailable) */
    _cleanup_free_ char *key =
        rss_xasprintf("%s%d:%s:%d", base, max, primary ? primary : "", primary ? spec->replicas : 0);
    if (ctx->budgets && leader_ctx_key_has(ctx, ctx->budgets, key))
        return;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *members = leader_build_budget(spec, max, primary);
    int r;
    /* In the order whose midway state can only refuse an eviction: a pod in both budgets cannot be
     * evicted (the server answers 500), a new primary in neither could be. */
    if (primary) {
        _cleanup_json_ cJSON *own = leader_build_primary_budget(spec, primary);
        r = put_budget(ctx, spec, own, &err);
        if (r >= 0) {
            int r2 = put_budget(ctx, spec, members, &err);
            r = r2 < 0 ? r2 : r | r2;
        }
    } else {
        r = put_budget(ctx, spec, members, &err);
        if (r >= 0 && spec->primaries == 1) { /* only a single-primary RSS can have had one */
            int r2 = drop_primary_budget(ctx, spec, &err);
            r = r2 < 0 ? r2 : r | r2;
        }
    }
    if (r < 0) {
        /* Best effort: the budget protects against drains, it never gates a recovery. Said at warning
         * level once until the budgets are written again (a ServiceAccount without the permission, an
         * older chart's, would say it at every reconcile), retried at every reconcile. */
        _cleanup_free_ char *why = rss_error_string(err);
        _cleanup_free_ char *said = rss_xasprintf("%serror", base);
        bool first = !ctx->budgets || !leader_ctx_key_has(ctx, ctx->budgets, said);
        rss_log(first ? RSS_LOG_WARN : RSS_LOG_DEBUG,
                "%s/%s: PodDisruptionBudgets (maxUnavailable %d%s%s): %s", spec->ns, spec->name, max,
                primary ? ", the primary's own for " : "", primary ? primary : "", why);
        if (ctx->budgets)
            leader_ctx_key_add(ctx, ctx->budgets, said);
        return;
    }
    if (!leader_still_leading(ctx))
        return;
    if (r > 0)
        rss_log_info("%s/%s: PodDisruptionBudgets: members' unavailable at most %d (phase %s)%s%s%s",
                     spec->ns, spec->name, max, phase ? phase : "unknown",
                     primary ? "; the primary " : "; no primary's own", primary ? primary : "",
                     primary ? " never evicted before it hands over" : "");
    if (!ctx->budgets)
        return;
    leader_lock(ctx->keys_mu);
    leader_keyset_del_prefix(ctx->budgets, base);
    leader_keyset_add(ctx->budgets, key);
    leader_unlock(ctx->keys_mu);
}
