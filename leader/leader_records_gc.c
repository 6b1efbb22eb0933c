/* leader_records_gc.c -- a full pass's collection of the member records of RSSs that no longer exist.
 *
 * Apart from leader_records.c (pure reads of a record, and one delete) because it lists, judges the
 * managed namespaces and checks the term: the fuzz targets link leader_records.c alone. */
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/kube.h"
#include "rss/log.h"
#include "rss/namespaces.h"
#include "rss/record.h"

static const char *md_str(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key));
}

int leader_records_drop_deleted(const struct leader_ctx *ctx, const struct rss_namespaces *managed,
                                const cJSON *rsss)
{
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *coll = rss_kube_path("v1", ctx->rssd_ns, "configmaps", NULL, NULL);
    struct rss_kube_list_opts lo = {.label_selector = RSS_LABEL_RECORD_MEMBER};
    _cleanup_json_ cJSON *records = NULL;
    if (rss_kube_list(ctx->kube, coll, &lo, &records, &err) < 0) {
        rss_log_error(RSS_LOG_WARN, &err, "list member records");
        return LEADER_DONE;
    }
    const cJSON *cm;
    cJSON_ArrayForEach(cm, cJSON_GetObjectItemCaseSensitive(records, "items"))
    {
        const char *ns, *rss, *pod;
        /* A namespace rssd does not manage is not its to judge (its RSS list does not cover it). */
        if (!rss_record_member(cm, &ns, &rss, &pod) || !rss_namespaces_contains(managed, ns))
            continue;
        bool exists = false;
        const cJSON *cr;
        cJSON_ArrayForEach(cr, cJSON_GetObjectItemCaseSensitive(rsss, "items"))
        {
            const char *cns = md_str(cr, "namespace"), *cname = md_str(cr, "name");
            exists |= cns && cname && !strcmp(cns, ns) && !strcmp(cname, rss);
        }
        /* Rules 14 and 2: a held or pinned member's record outlives its RSS, so a re-created RSS finds the
         * hold and the recovery pin (the status that had them is gone); the admin deletes the record to give
         * the member's data up. */
        if (exists || leader_record_holds(cm))
            continue;
        if (!leader_still_leading(ctx))
            return LEADER_LOST;
        const char *name = md_str(cm, "name");
        _cleanup_free_ char *why =
            rss_xasprintf("the record %s (RSS %s/%s no longer exists)", name ? name : "?", ns, rss);
        leader_record_drop(ctx->kube, ctx->rssd_ns, cm, why);
    }
    return LEADER_DONE;
}
