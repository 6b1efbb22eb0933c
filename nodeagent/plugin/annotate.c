/* annotate.c -- what the commands that set an annotation on an RSS share: the member as rssd last
 * reported it, the admin's confirmation, and the write on the version that was checked. */
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "plugin_internal.h"

const cJSON *plugin_member_status(const cJSON *rss, const char *pod)
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

/* --yes, or the pod's name typed on the terminal; false when stdin is not one. */
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

/* What the check and the admin's confirmation read of an RSS: its generation and each member's name,
 * role, sequence and left-out mark (not the times and hook results the leader rewrites at every status
 * write). Equal facts on a newer version: the check would say the same. */
static char *facts(const cJSON *rss)
{
    _cleanup_json_ cJSON *f = cJSON_CreateArray();
    const cJSON *gen = rss_json_path(rss, "metadata.generation");
    cJSON_AddItemToArray(f, gen ? cJSON_Duplicate(gen, true) : cJSON_CreateNull());
    const cJSON *ms;
    cJSON_ArrayForEach(ms, rss_json_path(rss, "status.memberStatus"))
    {
        static const char *const keys[] = {"name", "role", "sequence", "leftOut"};
        cJSON *m = cJSON_CreateObject();
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(ms, keys[k]);
            if (v)
                cJSON_AddItemToObject(m, keys[k], cJSON_Duplicate(v, true));
        }
        cJSON_AddItemToArray(f, m);
    }
    return cJSON_PrintUnformatted(f);
}

int plugin_annotate(const struct plugin_ctx *ctx, const char *name, const cJSON *rss, const char *key,
                    const char *value, const char *pod, rss_error_t *err)
{
    if (!confirmed(ctx, pod))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "not confirmed: nothing was changed (pass --yes when not on a terminal)");
    /* Set only on the version that was checked, or on a newer one whose facts are the same: the leader
     * writes its status every few seconds (each write a new version), and a member that started or a
     * sequence that changed meanwhile means checking again. */
    _cleanup_free_ char *checked = facts(rss);
    _cleanup_free_ char *path = rss_kube_path(RSS_CRD_GROUP_VERSION, ctx->ns, RSS_CRD_PLURAL, name, NULL);
    _cleanup_free_ char *rv = rss_json_str(rss, "metadata.resourceVersion")
                                  ? rss_xstrdup(rss_json_str(rss, "metadata.resourceVersion"))
                                  : NULL;
    for (int attempt = 1;; attempt++) {
        _cleanup_json_ cJSON *patch = cJSON_CreateObject();
        cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"), key, value);
        if (rv)
            cJSON_AddStringToObject(md, "resourceVersion", rv);
        if (rss_kube_merge_patch(ctx->kube, path, patch, NULL, err) == 0)
            return 0;
        if (rss_error_code(*err) != RSS_E_CONFLICT)
            return rss_error_wrap(err, "setting %s on %s/%s", key, ctx->ns, name);
        _cleanup_json_ cJSON *fresh = NULL;
        rss_error_t gerr = NULL;
        bool same = false;
        if (attempt < 5 && rss_kube_get(ctx->kube, path, &fresh, &gerr) == 0) {
            _cleanup_free_ char *now = facts(fresh);
            same = now && checked && !strcmp(now, checked);
        }
        rss_error_release(&gerr);
        if (!same)
            return rss_error_wrap(err,
                                  "%s/%s changed while it was checked; nothing was set, run the command "
                                  "again",
                                  ctx->ns, name);
        rss_error_release(err);
        free(rv);
        const char *nrv = rss_json_str(fresh, "metadata.resourceVersion");
        rv = nrv ? rss_xstrdup(nrv) : NULL;
    }
}
