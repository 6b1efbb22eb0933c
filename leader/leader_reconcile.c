/* leader_reconcile.c -- one RSS: its Service and StatefulSet, then snapshot -> plan -> apply until settled.
 */
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/condition.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "rss/record.h"

/* Rounds of "apply, then re-LIST and re-plan" in one reconcile: fencing takes one, each lost CAS
 * another. Beyond that the next event or timer tries again. */
#define MAX_ROUNDS 6

/* Nothing of the RSS is touched; `why` goes to its status (phase Failed) and a Warning Event `reason`,
 * both only when they change. */
/* The conditions of an RSS rssd refuses to act on: Ready False and Stalled True with the reason (what
 * kubectl wait, kstatus, Flux and Argo CD read), Reconciling False; the others as the last plan left them
 * (its members may still run). */
static cJSON *failed_conditions(const cJSON *prev_status, const char *reason, const char *why,
                                const cJSON *gen_json)
{
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(prev_status, "conditions");
    int64_t gen = cJSON_IsNumber(gen_json) ? (int64_t)gen_json->valuedouble : -1, now = rss_clock_wall_ms();
    cJSON *arr = cJSON_CreateArray();
    rss_condition_add(arr, prev, "Ready", false, reason, why, gen, now);
    const cJSON *p;
    cJSON_ArrayForEach(p, prev)
    {
        const char *t = rss_json_str(p, "type");
        if (t && strcmp(t, "Ready") && strcmp(t, "Stalled") && strcmp(t, "Reconciling"))
            cJSON_AddItemToArray(arr, cJSON_Duplicate(p, true));
    }
    rss_condition_add(arr, prev, "Stalled", true, reason, why, gen, now);
    rss_condition_add(arr, prev, "Reconciling", false, "Reconciled", "", gen, now);
    return arr;
}

static int report_failed(const struct leader_ctx *ctx, const cJSON *cr, const char *reason, const char *why,
                         rss_error_t *err)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(cr, "metadata");
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
    if (!ns || !name)
        return LEADER_DONE;
    /* The per-RSS gauges say it too (the RssdInvalidSpec alert), also when the status says it already (a
     * new leader process has no series for it yet); only while this process leads, as for every RSS. */
    _cleanup_json_ cJSON *failed = cJSON_CreateObject();
    cJSON_AddStringToObject(failed, "phase", "Failed");
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(cr, "status");
    const char *pphase = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prev, "phase"));
    const char *pmsg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prev, "message"));
    if (pphase && pmsg && !strcmp(pphase, "Failed") && !strcmp(pmsg, why)) {
        if (leader_still_leading(ctx))
            rss_metrics_rss_status(ns, name, failed);
        return LEADER_DONE;
    }
    rss_log_warn("%s/%s: %s, nothing changed: %s", ns, name, reason, why);
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    rss_metrics_rss_status(ns, name, failed);
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddStringToObject(st, "phase", "Failed");
    cJSON_AddStringToObject(st, "message", why);
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(md, "generation");
    if (cJSON_IsNumber(gen))
        cJSON_AddNumberToObject(st, "observedGeneration", gen->valuedouble);
    cJSON_AddItemToObject(st, "conditions", failed_conditions(prev, reason, why, gen));
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ns, RSS_CRD_PLURAL, name, NULL);
    _cleanup_json_ cJSON *written = NULL;
    if (rss_kube_merge_patch_status(ctx->kube, path, patch, &written, err) < 0)
        return rss_error_wrap(err, "status of %s/%s", ns, name);
    leader_rss_written(ctx, written);
    /* The admin reads `kubectl describe` and Events first: say it there too (once per new reason). */
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
    struct rss_spec who = {.name = (char *)name, .ns = (char *)ns, .uid = (char *)(uid ? uid : "")};
    struct rss_plan_event ev = {.type = RSS_EVENT_WARNING, .reason = (char *)reason, .message = (char *)why};
    struct rss_plan only = {.events = &ev, .n_events = 1, .set_replicas = -1};
    return leader_apply_events(ctx, &who, &only);
}

static int foreign(const struct leader_ctx *ctx, const cJSON *cr, const char *kind, const char *name,
                   rss_error_t *err)
{
    _cleanup_free_ char *why = rss_xasprintf(
        "%s %s exists and is not owned by this ReplicatedStatefulSet: rssd changes nothing of it; delete or "
        "rename it, or rename the RSS",
        kind, name);
    int r = report_failed(ctx, cr, "ForeignObject", why, err);
    return r == LEADER_DONE ? LEADER_FOREIGN : r;
}

static int ensure_service(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                          rss_error_t *err)
{
    _cleanup_free_ char *name = rss_spec_service_name(spec);
    _cleanup_free_ char *path = rss_kube_path("v1", spec->ns, "services", name, NULL);
    _cleanup_json_ cJSON *got = NULL;
    if (rss_kube_get(ctx->kube, path, &got, err) == 0)
        return leader_owned_by(got, spec) ? LEADER_DONE : foreign(ctx, cr, "Service", name, err);
    if (rss_error_code(*err) != RSS_E_NOT_FOUND)
        return rss_error_wrap(err, "get service %s", name);
    rss_error_release(err);
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    _cleanup_json_ cJSON *svc = leader_build_service(spec, cr);
    _cleanup_free_ char *coll = rss_kube_path("v1", spec->ns, "services", NULL, NULL);
    if (rss_kube_create(ctx->kube, coll, svc, NULL, err) < 0) {
        if (rss_error_code(*err) == RSS_E_EXISTS) {
            rss_error_release(err);
            return LEADER_DONE;
        }
        return rss_error_wrap(err, "create service %s", name);
    }
    rss_log_info("%s/%s: created headless service %s", spec->ns, spec->name, name);
    return LEADER_DONE;
}

/* Reads the StatefulSet: *replicas = spec.replicas or -1 when missing. Brings its pod template up to
 * the spec when the spec hash differs (replicas stay the planner's).
 * cached: the StatefulSet may come from the leader's watch-fed cache (an event-driven reconcile's first
 * round), which holds it at least as new as the last event the watch delivered and our own last write
 * to it (leader_sts_written): what a GET says, short of a write the watch has yet to bring, and that
 * write's event marks this RSS for another reconcile. A full pass, and every round after a REPLAN,
 * GET it: a watch that stalled without a word costs one reconcileInterval at most. Not in the cache
 * (not listed yet, or absent: being created or deleted): a GET. */
static int sync_statefulset(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                            bool cached, int *replicas, char **update_revision, rss_error_t *err)
{
    _cleanup_free_ char *name = rss_spec_statefulset_name(spec);
    _cleanup_free_ char *path = rss_kube_path("apps/v1", spec->ns, "statefulsets", name, NULL);
    _cleanup_json_ cJSON *got =
        cached && ctx->sts_cached ? ctx->sts_cached(ctx->caches_ud, spec->ns, name) : NULL;
    *replicas = -1;
    if (got &&
        !leader_owned_by(got, spec)) /* a cached one of an RSS of the same name before: the API decides */
        cJSON_Delete(TAKE_PTR(got));
    if (!got && rss_kube_get(ctx->kube, path, &got, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "get statefulset %s", name);
        rss_error_release(err);
        return LEADER_DONE;
    }
    if (!leader_owned_by(got, spec))
        return foreign(ctx, cr, "StatefulSet", name, err);
    const cJSON *r =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(got, "spec"), "replicas");
    *replicas = cJSON_IsNumber(r) ? r->valueint : 1;
    /* The rollout follows updateRevision only once the controller has seen the current template: before
     * that it names the previous one, and members made from the new one would look outdated. */
    const cJSON *gen =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(got, "metadata"), "generation");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(got, "status");
    const cJSON *ogen = cJSON_GetObjectItemCaseSensitive(st, "observedGeneration");
    const char *urev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "updateRevision"));
    if (cJSON_IsNumber(gen) && cJSON_IsNumber(ogen) && gen->valuedouble == ogen->valuedouble && urev && *urev)
        *update_revision = rss_xstrdup(urev);

    _cleanup_json_ cJSON *want = leader_build_statefulset(spec, cr, *replicas);
    const cJSON *wmd = cJSON_GetObjectItemCaseSensitive(want, "metadata");
    const cJSON *gmd = cJSON_GetObjectItemCaseSensitive(got, "metadata");
    const char *wh = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(wmd, "annotations"), RSS_ANNOTATION_SPEC_HASH));
    const char *gh = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(gmd, "annotations"), RSS_ANNOTATION_SPEC_HASH));
    if (wh && gh && !strcmp(wh, gh))
        return LEADER_DONE;
    free(*update_revision); /* about to change: the old revision says nothing about the new template */
    *update_revision = NULL;
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    /* volumeClaimTemplates are immutable in a StatefulSet: only the template is updated. */
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON *pmd = cJSON_AddObjectToObject(patch, "metadata");
    cJSON_AddItemToObject(pmd, "annotations",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(wmd, "annotations"), true));
    cJSON *ps = cJSON_AddObjectToObject(patch, "spec");
    cJSON_AddItemToObject(
        ps, "updateStrategy",
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(want, "spec"),
                                                         "updateStrategy"),
                        true));
    cJSON_AddItemToObject(ps, "template",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
                                              cJSON_GetObjectItemCaseSensitive(want, "spec"), "template"),
                                          true));
    _cleanup_json_ cJSON *written = NULL;
    if (rss_kube_merge_patch(ctx->kube, path, patch, &written, err) < 0)
        return rss_error_wrap(err, "update statefulset %s template", name);
    leader_sts_written(ctx, written);
    rss_log_info("%s/%s: statefulset %s template updated from the spec", spec->ns, spec->name, name);
    return LEADER_DONE;
}

/* A pod that carries the old protocol's annotations (a user's forgery, or an old rssd's): they are
 * ignored; its RSS gets a Warning Event once per pod incarnation and term. */
static int warn_ignored(const struct leader_ctx *ctx, const struct rss_spec *spec,
                        const struct leader_snapshot *snap)
{
    for (size_t i = 0; i < snap->n_ignored; i++) {
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(snap->ignored[i], "metadata");
        const char *pod = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
        _cleanup_free_ char *key = rss_xasprintf("%s/%s/%s", spec->ns, pod ? pod : "", uid ? uid : "");
        if (ctx->ignored && leader_ctx_key_has(ctx, ctx->ignored, key))
            continue;
        _cleanup_free_ char *msg = rss_xasprintf(
            "pod %s carries a %s or %s annotation: ignored. rssd keeps that state in member records in its "
            "own "
            "namespace, which users of this namespace cannot write; whoever set it may be trying to steer "
            "rssd (docs/security.md)",
            pod ? pod : "?", RSS_ANNOTATION_DESIRED, RSS_ANNOTATION_OBSERVED);
        struct rss_plan_event ev = {
            .type = RSS_EVENT_WARNING, .reason = "IgnoredAnnotation", .message = msg, .pod = (char *)pod};
        struct rss_plan only = {.events = &ev, .n_events = 1, .set_replicas = -1};
        int r = leader_apply_events(ctx, spec, &only);
        if (r != LEADER_DONE)
            return r;
        if (ctx->ignored)
            leader_ctx_key_add(ctx, ctx->ignored, key);
    }
    return LEADER_DONE;
}

/* Deletes the records of members whose pod the LIST did not show (cross-namespace ownerReferences do
 * not exist, so no garbage collector does it). Only that version of each: a record the agent or
 * another write touched meanwhile waits for the next round. Best effort: a failure is logged. */
static int drop_orphan_records(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *pods,
                               const cJSON *records)
{
    const cJSON *cm;
    cJSON_ArrayForEach(cm, cJSON_GetObjectItemCaseSensitive(records, "items"))
    {
        const char *ns, *rss, *pod;
        if (!rss_record_member(cm, &ns, &rss, &pod))
            continue;
        bool exists = false;
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(pods, "items"))
        {
            const char *name = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"), "name"));
            exists |= name && !strcmp(name, pod);
        }
        /* Rules 14 and 2: a held or pinned member's record outlives its pod (a resume, a re-created pod).
         * Rules 16, 17: so does a member's primary mark while its ordinal is still a member (a drained or
         * deleted primary's pod, not recreated yet): dropped, the next plan would take an older primary
         * for the newest. */
        unsigned ord;
        _cleanup_error_ rss_error_t ignored = NULL;
        const char *mark = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cm, "data"), RSS_RECORD_PRIMARY));
        bool marked =
            mark && rss_spec_pod_ordinal(spec, pod, &ord, &ignored) == 0 && (int)ord < spec->replicas;
        if (exists || marked || leader_record_holds(cm))
            continue;
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        _cleanup_free_ char *why =
            rss_xasprintf("%s/%s: the record of pod %s (the pod is gone)", spec->ns, spec->name, pod);
        leader_record_drop(ctx->kube, ctx->rssd_ns, cm, why);
    }
    return LEADER_DONE;
}

static int plan_round(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr, bool cached,
                      rss_error_t *err)
{
    _cleanup_log_scope_ struct rss_log_fields outer = rss_log_scope(
        (struct rss_log_fields){.ns = spec->ns, .rss = spec->name, .epoch = (unsigned long long)ctx->epoch});
    int replicas;
    _cleanup_free_ char *update_revision = NULL;
    int r = sync_statefulset(ctx, spec, cr, cached, &replicas, &update_revision, err);
    if (r != LEADER_DONE)
        return r;
    _cleanup_free_ char *coll = rss_kube_path("v1", spec->ns, "pods", NULL, NULL);
    _cleanup_free_ char *sel = rss_xasprintf(RSS_LABEL_NAME "=%s", spec->name);
    struct rss_kube_list_opts lo = {.label_selector = sel};
    _cleanup_json_ cJSON *pods = NULL;
    /* One consistent LIST (rule 8): every decision of this plan comes from the same snapshot. */
    if (rss_kube_list(ctx->kube, coll, &lo, &pods, err) < 0)
        return rss_error_wrap(err, "list pods of %s/%s", spec->ns, spec->name);
    /* The records second: every desired/observed the plan uses comes from this one LIST, and each write
     * of the plan is a CAS on the record version it saw (rule 9). A pod fact (node, container, phase)
     * that changed since the pod LIST is caught by the agent's generation check (rule 7). */
    _cleanup_free_ char *rcoll = rss_kube_path("v1", ctx->rssd_ns, "configmaps", NULL, NULL);
    _cleanup_free_ char *rsel =
        rss_xasprintf(RSS_LABEL_RECORD_NS "=%s," RSS_LABEL_RECORD_RSS "=%s", spec->ns, spec->name);
    struct rss_kube_list_opts rlo = {.label_selector = rsel};
    _cleanup_json_ cJSON *records = NULL;
    if (rss_kube_list(ctx->kube, rcoll, &rlo, &records, err) < 0)
        return rss_error_wrap(err, "list member records of %s/%s", spec->ns, spec->name);

    int64_t now = rss_clock_wall_ms();
    struct leader_snapshot snap;
    /* The view is the loop's and every worker's: read and noted in one hold of its lock, which no API
     * request is made under. */
    leader_lock(ctx->liveness_mu);
    leader_liveness_reports(ctx->liveness, pods, records, rss_clock_mono_ms());
    /* The dead verdict for this RSS's members says "its node stopped them": after the fence timeout the
     * node's `stop` may still run for its timeout. The pass when that window ends comes from replan_at. */
    int64_t dead_after = leader_dead_window(ctx->dead_after_ms, spec);
    leader_snapshot_build(spec, pods, records, ctx->liveness, rss_clock_mono_ms(), dead_after, &snap);
    if (snap.replan_at_ms &&
        (!ctx->liveness->replan_at_ms || snap.replan_at_ms < ctx->liveness->replan_at_ms))
        ctx->liveness->replan_at_ms = snap.replan_at_ms;
    leader_unlock(ctx->liveness_mu);
    if ((r = warn_ignored(ctx, spec, &snap)) != LEADER_DONE) {
        leader_snapshot_clear(&snap);
        return r;
    }
    for (size_t i = 0; i < snap.n_errors; i++)
        rss_log_debug("%s/%s: %s", spec->ns, spec->name, snap.errors[i]);
    leader_replace_facts(ctx, spec, &snap);
    /* A drain's cordon, for the handover before the eviction (planner_switchover.c). */
    for (size_t i = 0; ctx->node_cordoned && i < snap.n_members; i++)
        snap.members[i].node_cordoned = ctx->node_cordoned(ctx->caches_ud, snap.members[i].node) > 0;
    struct rss_plan_input in = {
        .spec = spec,
        .epoch = (uint64_t)ctx->epoch,
        .now_ms = now,
        .statefulset_replicas = replicas,
        .update_revision = update_revision,
        .dead_after_ms = dead_after,
        .prev_status = cJSON_GetObjectItemCaseSensitive(cr, "status"),
        .force_seed = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "metadata"), "annotations"),
            RSS_ANNOTATION_FORCE_SEED)),
        .release_hold = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "metadata"), "annotations"),
            RSS_ANNOTATION_RELEASE_HOLD)),
        .switchover = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "metadata"), "annotations"),
            RSS_ANNOTATION_SWITCHOVER)),
        .members = snap.members,
        .n_members = snap.n_members,
    };
    struct rss_plan plan;
    r = rss_planner_plan(&in, &plan, err);
    if (r < 0) {
        rss_plan_free(&plan);
        leader_snapshot_clear(&snap);
        return rss_error_wrap(err, "plan %s/%s", spec->ns, spec->name);
    }
    if (rss_log_enabled(RSS_LOG_DEBUG)) {
        _cleanup_free_ char *d = rss_plan_describe(&plan);
        rss_log_debug("%s/%s: plan (epoch %lld):\n%s", spec->ns, spec->name, (long long)ctx->epoch, d);
    }
    /* Before the plan's actions: a recovery's budget allows no eviction from its first round on. */
    leader_budget_sync(ctx, spec, plan.phase, plan.primary);
    r = leader_apply(ctx, spec, cr, &plan, err);
    rss_plan_free(&plan);
    leader_snapshot_clear(&snap);
    if (r == LEADER_DONE)
        r = drop_orphan_records(ctx, spec, pods, records);
    return r;
}

int64_t leader_dead_window(int64_t dead_after_ms, const struct rss_spec *spec)
{
    /* The agent passes the runtime the stop timeout rounded up to whole seconds (agent_hook.c). */
    int64_t stop = (int64_t)((spec->hooks[RSS_HOOK_STOP].timeout_ms + 999) / 1000) * 1000;
    return dead_after_ms + stop + LEADER_KILL_MS;
}

int leader_reconcile(const struct leader_ctx *ctx, const cJSON *cr, rss_error_t *err)
{
    _cleanup_json_ cJSON *fresh = NULL;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        struct rss_spec spec;
        rss_error_t perr = NULL;
        if (rss_spec_parse(cr, &spec, &perr) < 0) {
            _cleanup_free_ char *why = rss_error_string(perr);
            rss_error_release(&perr);
            return report_failed(ctx, cr, "InvalidSpec", why, err);
        }
        int r = LEADER_DONE;
        if (!round) {
            _cleanup_free_ char *key =
                rss_xasprintf("%s/%s/%s", spec.ns, spec.name, spec.uid ? spec.uid : "");
            if (ctx->full || !ctx->services || !leader_ctx_key_has(ctx, ctx->services, key)) {
                r = ensure_service(ctx, &spec, cr, err);
                if (r == LEADER_DONE && ctx->services)
                    leader_ctx_key_add(ctx, ctx->services, key);
            }
        }
        if (r == LEADER_DONE)
            r = plan_round(ctx, &spec, cr, !ctx->full && !round, err);
        if (r != LEADER_REPLAN) {
            rss_spec_clear(&spec);
            return r == LEADER_FOREIGN ? LEADER_DONE : r;
        }
        /* Re-read the RSS too: the status just written (lastActionSeq, failure counts) is the
         * next plan's prev_status. */
        _cleanup_free_ char *path =
            rss_kube_path(RSS_CRD_GROUP_VERSION, spec.ns, RSS_CRD_PLURAL, spec.name, NULL);
        rss_spec_clear(&spec);
        cJSON *next = NULL;
        if (rss_kube_get(ctx->kube, path, &next, err) < 0) {
            if (rss_error_code(*err) == RSS_E_NOT_FOUND) {
                rss_error_release(err);
                return LEADER_DONE;
            }
            return rss_error_wrap(err, "re-read rss");
        }
        leader_rss_written(ctx, next); /* the freshest copy: the cache takes it too */
        cJSON_Delete(fresh);
        fresh = next;
        cr = fresh;
    }
    return LEADER_REPLAN;
}
