/* leader_apply.c -- applies a plan in order, re-checking the election before every single write. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leader_internal.h"
#include "rss/record_codec.h"
#include "rss/cleanup.h"
#include "rss/election.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "rss/record.h"

cJSON *leader_record_patch(const struct rss_plan_patch *p)
{
    if (!p->set_desired && !p->set_hold && !p->set_pin && !p->set_primary)
        return NULL;
    cJSON *patch = cJSON_CreateObject();
    /* The CAS (rule 9): the record must still be the version the decision was made from. */
    if (p->resource_version)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "resourceVersion",
                                p->resource_version);
    cJSON *data = cJSON_AddObjectToObject(patch, "data");
    if (p->set_desired) {
        _cleanup_free_ char *d = rss_recordcodec_desired_encode(&p->desired);
        cJSON_AddStringToObject(data, RSS_RECORD_DESIRED, d);
        /* Written with the decision, so it never applies to another incarnation of the pod. */
        cJSON_AddStringToObject(data, RSS_RECORD_DESIRED_FOR, p->pod_uid ? p->pod_uid : "");
    }
    /* Rule 14's hold: not tied to an incarnation (no *For key), it is about the volume. */
    if (p->set_hold && p->hold)
        cJSON_AddStringToObject(data, RSS_RECORD_LEFT_OUT, p->hold);
    else if (p->set_hold)
        cJSON_AddNullToObject(data, RSS_RECORD_LEFT_OUT);
    /* Rule 2's recovery pin: in the seed's own write (same CAS as its desired), so a leader deposed after
     * it leaves the pin with the seed. No *For key either. */
    if (p->set_pin && p->pin)
        cJSON_AddStringToObject(data, RSS_RECORD_RECOVERY_PIN, p->pin);
    else if (p->set_pin)
        cJSON_AddNullToObject(data, RSS_RECORD_RECOVERY_PIN);
    /* Rules 16, 17: the primary mark, in the same write as the desired that makes the member a primary. */
    if (p->set_primary && p->primary)
        cJSON_AddStringToObject(data, RSS_RECORD_PRIMARY, p->primary);
    else if (p->set_primary)
        cJSON_AddNullToObject(data, RSS_RECORD_PRIMARY);
    return patch;
}

cJSON *leader_pod_patch(const struct rss_plan_patch *p)
{
    if (p->set_active_label < 0)
        return NULL;
    cJSON *patch = cJSON_CreateObject();
    cJSON *labels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "labels");
    cJSON_AddStringToObject(labels, RSS_LABEL_ACTIVE, p->set_active_label ? "true" : "false");
    return patch;
}

cJSON *leader_status_patch(const cJSON *status, const cJSON *prev, int64_t epoch)
{
    if (!status)
        return NULL;
    cJSON *next = cJSON_Duplicate(status, true);
    cJSON_DeleteItemFromObjectCaseSensitive(next, "epoch");
    /* The printer column "Primaries" needs a number; the planner lists names. */
    const cJSON *prim =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(status, "members"), "primary");
    cJSON_DeleteItemFromObjectCaseSensitive(next, "primaries");
    cJSON_AddNumberToObject(next, "primaries", cJSON_IsArray(prim) ? cJSON_GetArraySize(prim) : 0);
    /* The printer columns Primary and Waiting read simple paths: the names joined, the waiting reason. */
    struct rss_strbuf names = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, prim)
    {
        if (cJSON_IsString(e))
            rss_strbuf_printf(&names, "%s%s", names.len ? "," : "", e->valuestring);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(next, "primary");
    if (names.len)
        cJSON_AddStringToObject(next, "primary", names.s);
    free(names.s);
    cJSON_DeleteItemFromObjectCaseSensitive(next, "waiting");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "status"));
        const char *reason = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "reason"));
        if (type && st && reason && !strcmp(type, "WaitingForMembers") && !strcmp(st, "True"))
            cJSON_AddStringToObject(next, "waiting", reason);
    }
    if (cJSON_IsObject(prev)) {
        _cleanup_json_ cJSON *cmp = cJSON_Duplicate(prev, true);
        cJSON_DeleteItemFromObjectCaseSensitive(cmp, "epoch");
        if (cJSON_Compare(next, cmp, true)) {
            cJSON_Delete(next);
            return NULL; /* no write: a status write wakes our own RSS watch */
        }
    }
    /* Rule 11: status.epoch is the epoch floor, and a status write lands only while the floor is still the
     * writer's epoch. A deposed leader's write held in flight (a slow request, a GC pause) would otherwise
     * land after its successor's and bring back the planner's memory as it was (issue 35: a journal record
     * of an older stop made the journal "prove" a member behind, and the next lights-out seeded without
     * it). The test and the write are one PATCH: the API server applies both to the object as it is, or
     * neither (422). The floor in the new status is the value just tested, so it never moves. The whole
     * status is replaced: keys the planner dropped (a finished recovery pin) go with it. */
    cJSON_AddNumberToObject(next, "epoch", (double)epoch);
    cJSON *ops = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "op", "test");
    cJSON_AddStringToObject(t, "path", "/status/epoch");
    cJSON_AddNumberToObject(t, "value", (double)epoch);
    cJSON_AddItemToArray(ops, t);
    cJSON *add = cJSON_CreateObject();
    cJSON_AddStringToObject(add, "op", "add");
    cJSON_AddStringToObject(add, "path", "/status");
    cJSON_AddItemToObject(add, "value", next);
    cJSON_AddItemToArray(ops, add);
    return ops;
}

static char *item_path(const struct rss_spec *spec)
{
    return rss_kube_path(RSS_CRD_GROUP_VERSION, spec->ns, RSS_CRD_PLURAL, spec->name, NULL);
}

/* A lost CAS or a vanished object: our view was stale, plan again from a fresh LIST. */
static bool stale_view(rss_error_t err)
{
    enum rss_errc c = rss_error_code(err);
    return c == RSS_E_CONFLICT || c == RSS_E_NOT_FOUND || c == RSS_E_EXISTS;
}

/* Writes desired into the member's record: a merge patch with the CAS, or, when the plan saw no record,
 * a create (which fails if one appeared meanwhile: the same CAS for "absent"). */
static int write_desired(const struct leader_ctx *ctx, const struct rss_spec *spec,
                         const struct rss_plan_patch *p, rss_error_t *err)
{
    _cleanup_json_ cJSON *patch = leader_record_patch(p);
    if (!patch)
        return 0;
    if (p->resource_version) {
        _cleanup_free_ char *path = rss_record_path(ctx->rssd_ns, spec->ns, p->pod);
        if (!path)
            return rss_error_make(err, RSS_E_INVALID, 0, "no record name fits %s/%s", spec->ns, p->pod);
        return rss_kube_merge_patch(ctx->kube, path, patch, NULL, err);
    }
    _cleanup_json_ cJSON *cm = rss_record_new(spec->ns, spec->name, p->pod);
    if (!cm)
        return rss_error_make(err, RSS_E_INVALID, 0, "no record name fits %s/%s", spec->ns, p->pod);
    cJSON_ReplaceItemInObjectCaseSensitive(
        cm, "data", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(patch, "data"), true));
    _cleanup_free_ char *coll = rss_kube_path("v1", ctx->rssd_ns, "configmaps", NULL, NULL);
    return rss_kube_create(ctx->kube, coll, cm, NULL, err);
}

static int apply_patches(const struct leader_ctx *ctx, const struct rss_spec *spec,
                         const struct rss_plan *plan, rss_error_t *err)
{
    for (size_t i = 0; i < plan->n_patches; i++) {
        const struct rss_plan_patch *p = &plan->patches[i];
        _cleanup_log_scope_ struct rss_log_fields outer = rss_log_scope((struct rss_log_fields){
            .member = p->pod, .action = p->set_desired ? rss_action_name(p->desired.action) : NULL});
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        if (write_desired(ctx, spec, p, err) < 0) {
            if (stale_view(*err)) {
                rss_log_error(RSS_LOG_INFO, err,
                              "%s/%s: the record of %s changed under the plan, re-planning", spec->ns,
                              spec->name, p->pod);
                return LEADER_REPLAN;
            }
            return rss_error_wrap(err, "write desired of %s", p->pod);
        }
        if (p->set_desired)
            rss_log_info("%s/%s: %s desired %s (epoch %llu, generation %llu)%s%s", spec->ns, spec->name,
                         p->pod, rss_action_name(p->desired.action), (unsigned long long)p->desired.epoch,
                         (unsigned long long)p->desired.generation, p->desired.reason ? ": " : "",
                         p->desired.reason ? p->desired.reason : "");
        /* The label is for client Services only (rssd never reads it back as a fact): no CAS. */
        _cleanup_json_ cJSON *label = leader_pod_patch(p);
        if (!label)
            continue;
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        _cleanup_free_ char *path = rss_kube_path("v1", spec->ns, "pods", p->pod, NULL);
        if (rss_kube_merge_patch(ctx->kube, path, label, NULL, err) < 0) {
            if (stale_view(*err)) {
                rss_error_release(err);
                return LEADER_REPLAN;
            }
            return rss_error_wrap(err, "label pod %s", p->pod);
        }
    }
    return LEADER_DONE;
}

/* Creating the StatefulSet brings pods into being, so it is never done from a stale copy of the RSS:
 * the leader's RSS cache may still hold an RSS that was just deleted (its watch's DELETED event not in
 * yet) while the garbage collector has already taken the StatefulSet, and a plan from that copy would
 * create a new StatefulSet, whose pods then run under an RSS that no longer exists. A fresh GET decides:
 * 1 the same RSS (its uid) is there, 2 it is being deleted, 0 it is gone or another one took its name,
 * -1 an error. */
static int rss_still_there(const struct leader_ctx *ctx, const struct rss_spec *spec, rss_error_t *err)
{
    _cleanup_free_ char *path = item_path(spec);
    _cleanup_json_ cJSON *got = NULL;
    if (rss_kube_get(ctx->kube, path, &got, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "re-read rss %s/%s", spec->ns, spec->name);
        rss_error_release(err);
        return 0;
    }
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(got, "metadata");
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
    if (!uid || !spec->uid || strcmp(uid, spec->uid))
        return 0;
    return cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp") ? 2 : 1;
}

static int apply_statefulset(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                             const struct rss_plan *plan, rss_error_t *err)
{
    if (!plan->create_statefulset && plan->set_replicas < 0)
        return LEADER_DONE;
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    _cleanup_free_ char *name = rss_spec_statefulset_name(spec);
    if (plan->create_statefulset) {
        int there = rss_still_there(ctx, spec, err);
        if (there < 0)
            return -1;
        if (there != 1) {
            rss_log_info("%s/%s: the RSS is %s: no statefulset created", spec->ns, spec->name,
                         there ? "being deleted" : "gone, or another one took its name");
            return there ? LEADER_DONE : LEADER_REPLAN; /* a re-read of the RSS decides what follows */
        }
        int replicas = plan->set_replicas >= 0 ? plan->set_replicas : spec->replicas;
        _cleanup_json_ cJSON *sts = leader_build_statefulset(spec, cr, replicas);
        _cleanup_free_ char *coll = rss_kube_path("apps/v1", spec->ns, "statefulsets", NULL, NULL);
        _cleanup_json_ cJSON *created = NULL;
        if (rss_kube_create(ctx->kube, coll, sts, &created, err) < 0) {
            if (stale_view(*err)) {
                rss_error_release(err);
                return LEADER_REPLAN;
            }
            return rss_error_wrap(err, "create statefulset %s", name);
        }
        leader_sts_written(ctx, created);
        rss_log_info("%s/%s: created statefulset %s with %d replicas", spec->ns, spec->name, name, replicas);
        return LEADER_DONE;
    }
    _cleanup_json_ cJSON *patch = cJSON_CreateObject();
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(patch, "spec"), "replicas", plan->set_replicas);
    _cleanup_free_ char *path = rss_kube_path("apps/v1", spec->ns, "statefulsets", name, NULL);
    _cleanup_json_ cJSON *scaled = NULL;
    if (rss_kube_merge_patch(ctx->kube, path, patch, &scaled, err) < 0) {
        if (stale_view(*err)) {
            rss_error_release(err);
            return LEADER_REPLAN;
        }
        return rss_error_wrap(err, "scale statefulset %s", name);
    }
    leader_sts_written(ctx, scaled);
    rss_log_info("%s/%s: statefulset %s replicas -> %d", spec->ns, spec->name, name, plan->set_replicas);
    return LEADER_DONE;
}

static int apply_deletes(const struct leader_ctx *ctx, const struct rss_spec *spec,
                         const struct rss_plan *plan, rss_error_t *err)
{
    for (size_t i = 0; i < plan->n_deletes; i++) {
        const struct rss_plan_delete *d = &plan->deletes[i];
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        /* Claims first: the StatefulSet recreates the pod at once, and a claim still there would be
         * reused, pinning the new pod to the lost node (docs/node-loss.md). */
        int r = leader_delete_claims(ctx, spec, d, err);
        if (r != LEADER_DONE)
            return r;
        _cleanup_free_ char *path = rss_kube_path("v1", spec->ns, "pods", d->pod, NULL);
        /* Only this incarnation: the replacement the StatefulSet made meanwhile is innocent. A forced
         * delete (grace 0) is for a dead node whose kubelet will never confirm the deletion. */
        struct rss_kube_delete_opts opts = {.uid = d->uid, .set_grace = d->force, .grace_period_seconds = 0};
        if (rss_kube_delete(ctx->kube, path, &opts, NULL, err) < 0) {
            if (stale_view(*err)) {
                rss_error_release(err);
                return LEADER_REPLAN;
            }
            return rss_error_wrap(err, "delete pod %s", d->pod);
        }
        rss_log_info("%s/%s: deleted pod %s (uid %s%s)", spec->ns, spec->name, d->pod, d->uid ? d->uid : "?",
                     d->force ? ", forced" : "");
    }
    return LEADER_DONE;
}

/* Events are best effort (kube-api.md 6.2): failures are logged, never returned. */
int leader_apply_events(const struct leader_ctx *ctx, const struct rss_spec *spec,
                        const struct rss_plan *plan)
{
    for (size_t i = 0; i < plan->n_events; i++) {
        const struct rss_plan_event *pe = &plan->events[i];
        const char *type = pe->type == RSS_EVENT_WARNING ? "Warning" : "Normal";
        if (!strcmp(pe->reason, "SeedChosen") || !strcmp(pe->reason, "Bootstrap") ||
            !strcmp(pe->reason, "ForceSeed"))
            rss_metrics_inc(RSS_METRIC_SEEDS);
        rss_log(pe->type == RSS_EVENT_WARNING ? RSS_LOG_WARN : RSS_LOG_INFO, "%s/%s: event %s %s: %s",
                spec->ns, spec->name, type, pe->reason, pe->message);
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        struct leader_event_key key = {.ns = spec->ns,
                                       .rss_uid = spec->uid,
                                       .type = type,
                                       .reason = pe->reason,
                                       .message = pe->message,
                                       .pod = pe->pod};
        int64_t now = rss_clock_wall_ms(), first;
        _cleanup_free_ char *name = NULL;
        int count = leader_events_note(ctx->events, &key, spec->name, now, &name, &first);
        _cleanup_error_ rss_error_t err = NULL;
        if (count >= 2) {
            _cleanup_json_ cJSON *patch = cJSON_CreateObject();
            cJSON_AddNumberToObject(patch, "count", count);
            cJSON_AddStringToObject(patch, "message", pe->message); /* a folded event shows the latest */
            char buf[RSS_TIME_LEN];
            struct timespec ts = {.tv_sec = (time_t)(now / 1000), .tv_nsec = (long)(now % 1000) * 1000000};
            cJSON_AddStringToObject(patch, "lastTimestamp", rss_time_seconds(buf, &ts));
            _cleanup_free_ char *path = rss_kube_path("v1", spec->ns, "events", name, NULL);
            if (rss_kube_merge_patch(ctx->kube, path, patch, NULL, &err) == 0)
                continue;
            if (rss_error_code(err) != RSS_E_NOT_FOUND) {
                rss_log_error(RSS_LOG_WARN, &err, "event %s", name);
                continue;
            }
            /* Expired (event TTL): start a new one. */
            rss_error_release(&err);
            leader_events_forget(ctx->events, &key);
            free(name);
            name = NULL;
            leader_events_note(ctx->events, &key, spec->name, now, &name, &first);
        }
        _cleanup_json_ cJSON *ev =
            leader_build_event(spec, name, type, pe->reason, pe->message, pe->pod, ctx->identity, now);
        _cleanup_free_ char *coll = rss_kube_path("v1", spec->ns, "events", NULL, NULL);
        if (rss_kube_create(ctx->kube, coll, ev, NULL, &err) < 0)
            rss_log_error(RSS_LOG_WARN, &err, "event %s", name);
    }
    return LEADER_DONE;
}

/* The epoch floor recorded in the RSS (0: none) and the resourceVersion it was read at. */
static const char *floor_and_rv(const cJSON *cr, int64_t *floor)
{
    const cJSON *e =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "status"), "epoch");
    /* An invalid floor (above what a Lease can carry) counts as none: the CAS overwrites it. */
    *floor = cJSON_IsNumber(e) && e->valuedouble > 0 && leader_epoch_valid(e->valuedouble)
                 ? (int64_t)e->valuedouble
                 : 0;
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cr, "metadata"), "resourceVersion"));
}

/* A floor at or above this term's epoch that this term did not raise: another leader holds this epoch or a
 * newer one. This term steps down and writes nothing more. */
static int floor_taken(const struct leader_ctx *ctx, const struct rss_spec *spec, int64_t floor)
{
    _cleanup_free_ char *why =
        rss_xasprintf("%s/%s: its epoch floor (status.epoch) is %lld, not raised by this term (epoch %lld): "
                      "another leader holds this epoch or a newer one",
                      spec->ns, spec->name, (long long)floor, (long long)ctx->epoch);
    rss_election_resign(ctx->election, ctx->epoch, why);
    return LEADER_LOST;
}

static char *floor_key(const struct rss_spec *spec)
{
    return rss_xasprintf("%s/%s/%s", spec->ns, spec->name, spec->uid ? spec->uid : "");
}

/* The CAS that raises the floor from below to this term's epoch (on the resourceVersion of cr, read again
 * after a lost CAS). */
static int floor_cas(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                     rss_error_t *err)
{
    _cleanup_free_ char *key = floor_key(spec);
    _cleanup_free_ char *path = item_path(spec);
    _cleanup_json_ cJSON *fresh = NULL;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t floor;
        const char *rv = floor_and_rv(cr, &floor);
        if (floor >= ctx->epoch)
            return floor_taken(ctx, spec, floor);
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        _cleanup_json_ cJSON *patch = cJSON_CreateObject();
        if (rv)
            cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "resourceVersion", rv);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(patch, "status"), "epoch", (double)ctx->epoch);
        _cleanup_json_ cJSON *written = NULL;
        if (rss_kube_merge_patch_status(ctx->kube, path, patch, &written, err) == 0) {
            leader_rss_written(ctx, written);
            if (ctx->floors)
                leader_ctx_key_add(ctx, ctx->floors, key);
            return LEADER_DONE;
        }
        enum rss_errc c = rss_error_code(*err);
        if (c == RSS_E_NOT_FOUND) { /* the RSS is gone; its objects follow (GC) */
            rss_error_release(err);
            return LEADER_DONE;
        }
        if (c != RSS_E_CONFLICT)
            return rss_error_wrap(err, "raising the epoch floor of %s/%s to %lld", spec->ns, spec->name,
                                  (long long)ctx->epoch);
        /* Written meanwhile (a status write of ours, or another leader's floor): read it again. */
        rss_error_release(err);
        cJSON_Delete(fresh);
        fresh = NULL;
        if (rss_kube_get(ctx->kube, path, &fresh, err) < 0) {
            if (rss_error_code(*err) == RSS_E_NOT_FOUND) {
                rss_error_release(err);
                return LEADER_DONE;
            }
            return rss_error_wrap(err, "re-reading %s/%s for its epoch floor", spec->ns, spec->name);
        }
        cr = fresh;
    }
    return LEADER_REPLAN;
}

/* Rule 11 across reinstalls, and finding F5 (docs/model.md): before this term acts on an RSS, it raises
 * the RSS's status.epoch (the epoch floor) to its own epoch with a compare-and-swap (the resourceVersion
 * the floor was read at), and only from strictly below. So the floor read at the next acquisition
 * (rss_leader_epoch_floor) is never below an epoch some pod holds, even after the Lease was deleted;
 * and of two leaders holding the same epoch (the Lease deleted and re-created before the first one
 * wrote the floor) exactly one wins the CAS: the other finds the floor at its epoch without having
 * raised it, writes nothing and steps down, and its next acquisition takes an epoch above the floor.
 * Every status write tests the floor at this epoch (leader_status_patch), so the floor never goes down
 * and no status write of a deposed leader lands. Once per RSS per term (ctx->floors), before its first
 * write of any kind, the status included. */
static int raise_epoch_floor(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                             rss_error_t *err)
{
    _cleanup_free_ char *key = floor_key(spec);
    if (ctx->floors && leader_ctx_key_has(ctx, ctx->floors, key))
        return LEADER_DONE;
    return floor_cas(ctx, spec, cr, err);
}

/* The status write's test failed (422), or the object did not take the status: a fresh read tells why.
 * The floor moved up (a newer leader raised it): this term is deposed, it steps down. It went down or away
 * (an admin's edit, a restored backup): raised again by CAS, and the plan is made again from the re-read.
 * Still this epoch: the API server refused the status itself, err says why. */
static int status_refused(const struct leader_ctx *ctx, const struct rss_spec *spec, rss_error_t *err)
{
    _cleanup_free_ char *path = item_path(spec);
    _cleanup_json_ cJSON *fresh = NULL;
    rss_error_t gerr = NULL;
    if (rss_kube_get(ctx->kube, path, &fresh, &gerr) < 0) {
        bool gone = rss_error_code(gerr) == RSS_E_NOT_FOUND;
        rss_error_release(&gerr);
        if (gone) {
            rss_error_release(err);
            return LEADER_DONE;
        }
        return rss_error_wrap(err, "status of %s/%s", spec->ns, spec->name);
    }
    leader_rss_written(ctx, fresh);
    /* Exactly the number tested: anything else (6.5 read as 6) failed the test too. */
    const cJSON *e =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fresh, "status"), "epoch");
    double f = cJSON_IsNumber(e) ? e->valuedouble : 0;
    if (cJSON_IsNumber(e) && f == (double)ctx->epoch)
        return rss_error_wrap(err, "status of %s/%s", spec->ns, spec->name);
    rss_log_error(RSS_LOG_INFO, err, "%s/%s: status not written: the epoch floor is %g, not this term's %lld",
                  spec->ns, spec->name, f, (long long)ctx->epoch);
    if (f > (double)ctx->epoch && leader_epoch_valid(f))
        return floor_taken(ctx, spec, (int64_t)f);
    /* Below this epoch, gone, or not one a Lease can carry: the CAS writes this epoch over it. */
    int r = floor_cas(ctx, spec, fresh, err);
    return r == LEADER_DONE ? LEADER_REPLAN : r;
}

static int apply_status(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                        const struct rss_plan *plan, rss_error_t *err)
{
    /* The alerts' view (rssd_rss_* gauges) is what this leader decided, whether or not it changed. */
    if (leader_still_leading(ctx))
        rss_metrics_rss_status(spec->ns, spec->name, plan->status);
    _cleanup_json_ cJSON *patch =
        leader_status_patch(plan->status, cJSON_GetObjectItemCaseSensitive(cr, "status"), ctx->epoch);
    if (!patch)
        return LEADER_DONE;
    /* The write tests the floor at this term's epoch: a plan with nothing else to write raises it first. */
    int r = raise_epoch_floor(ctx, spec, cr, err);
    if (r != LEADER_DONE)
        return r;
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    _cleanup_free_ char *item = item_path(spec);
    _cleanup_free_ char *path = rss_xasprintf("%s/status", item);
    _cleanup_json_ cJSON *written = NULL;
    if (rss_kube_json_patch(ctx->kube, path, patch, &written, err) < 0) {
        enum rss_errc c = rss_error_code(*err);
        if (c == RSS_E_NOT_FOUND) { /* the RSS is gone; its objects follow (GC) */
            rss_error_release(err);
            rss_metrics_rss_forget(spec->ns, spec->name);
            return LEADER_DONE;
        }
        if (c == RSS_E_INVALID)
            return status_refused(ctx, spec, err);
        return rss_error_wrap(err, "status of %s/%s", spec->ns, spec->name);
    }
    leader_rss_written(ctx, written);
    return LEADER_DONE;
}

/* A force-seed or release-hold is used once: removed after the status recorded what it did (lastRecovery, the
 * Events). A JSON patch that first tests the value, so a new request the admin wrote meanwhile stays. */
static int clear_annotation(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                            const char *key, const char *ptr, rss_error_t *err)
{
    const char *used = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cr, "metadata"), "annotations"),
        key));
    if (!used)
        return LEADER_DONE;
    if (!leader_still_leading(ctx))
        return LEADER_LOST;
    _cleanup_json_ cJSON *ops = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "op", "test");
    cJSON_AddStringToObject(t, "path", ptr);
    cJSON_AddStringToObject(t, "value", used);
    cJSON_AddItemToArray(ops, t);
    cJSON *rm = cJSON_CreateObject();
    cJSON_AddStringToObject(rm, "op", "remove");
    cJSON_AddStringToObject(rm, "path", ptr);
    cJSON_AddItemToArray(ops, rm);
    _cleanup_free_ char *path = item_path(spec);
    /* The object returned goes to the RSS cache: a plan read from a cache still holding the used
     * request would take it for a new one. */
    _cleanup_json_ cJSON *written = NULL;
    if (rss_kube_json_patch(ctx->kube, path, ops, &written, err) < 0) {
        enum rss_errc c = rss_error_code(*err);
        if (c == RSS_E_INVALID || c == RSS_E_CONFLICT || c == RSS_E_NOT_FOUND) {
            rss_error_release(err); /* changed or gone meanwhile: the next plan looks again */
            return LEADER_DONE;
        }
        return rss_error_wrap(err, "removing the annotation %s of %s/%s", key, spec->ns, spec->name);
    }
    leader_rss_written(ctx, written);
    return LEADER_DONE;
}

int leader_apply(const struct leader_ctx *ctx, const struct rss_spec *spec, const cJSON *cr,
                 const struct rss_plan *plan, rss_error_t *err)
{
    if (plan->epoch_claims) {
        /* Rule 4: only the Lease decides. Still ours: the claim is invalid and the plan overwrites it.
         * Not ours: the election has stepped down, and nothing is written. */
        int v = rss_election_verify(ctx->election, ctx->epoch, err);
        if (v < 0)
            return -1;
        if (v == 0)
            return LEADER_LOST;
    }
    int r = LEADER_DONE;
    if (plan->n_patches || plan->n_deletes || plan->create_statefulset || plan->set_replicas >= 0)
        r = raise_epoch_floor(ctx, spec, cr, err);
    if (r != LEADER_DONE)
        return r;
    r = apply_patches(ctx, spec, plan, err);
    if (r != LEADER_DONE)
        return r;
    if ((r = apply_statefulset(ctx, spec, cr, plan, err)) != LEADER_DONE)
        return r;
    if ((r = apply_deletes(ctx, spec, plan, err)) != LEADER_DONE)
        return r;
    if ((r = leader_apply_events(ctx, spec, plan)) != LEADER_DONE)
        return r;
    if ((r = apply_status(ctx, spec, cr, plan, err)) != LEADER_DONE)
        return r;
    /* JSON pointer: '/' in the key is written "~1" (RFC 6901). */
    if (plan->clear_force_seed &&
        (r = clear_annotation(ctx, spec, cr, RSS_ANNOTATION_FORCE_SEED,
                              "/metadata/annotations/rss.clusterlabs.org~1force-seed", err)) != LEADER_DONE)
        return r;
    /* After the record (written ahead with the patches) and the status say it is released. */
    if (plan->clear_release_hold &&
        (r = clear_annotation(ctx, spec, cr, RSS_ANNOTATION_RELEASE_HOLD,
                              "/metadata/annotations/rss.clusterlabs.org~1release-hold", err)) != LEADER_DONE)
        return r;
    /* After the primary's stop (written ahead with the patches) and status.failover.switchover. */
    if (plan->clear_switchover &&
        (r = clear_annotation(ctx, spec, cr, RSS_ANNOTATION_SWITCHOVER,
                              "/metadata/annotations/rss.clusterlabs.org~1switchover", err)) != LEADER_DONE)
        return r;
    /* Rule 9: after fencing, decide only from a fresh LIST that shows our epoch on every pod. */
    return plan->fencing || plan->retracting ? LEADER_REPLAN : LEADER_DONE;
}
