/* kube_config_merge.c -- kubectl's kubeconfig loading rules: --kubeconfig, else the $KUBECONFIG list merged,
 * else ~/.kube/config. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "kube_internal.h"

/* A relative path in a file's entry names a file beside that kubeconfig: made absolute before the
 * entries of several files are mixed. */
static void absolute(cJSON *obj, const char *key, const char *dir)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsString(v) || !v->valuestring[0] || v->valuestring[0] == '/')
        return;
    _cleanup_free_ char *p = rss_xasprintf("%s/%s", dir, v->valuestring);
    cJSON_SetValuestring(v, p);
}

/* Appends the entries of `list` in `from` whose name `into` does not have yet (first file wins). */
static void merge_list(cJSON *into, const cJSON *from, const char *list, const char *inner, const char *dir)
{
    cJSON *dst = cJSON_GetObjectItemCaseSensitive(into, list);
    if (!cJSON_IsArray(dst)) {
        cJSON_DeleteItemFromObjectCaseSensitive(into, list);
        dst = cJSON_AddArrayToObject(into, list);
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(from, list))
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
        if (!name)
            continue;
        bool have = false;
        const cJSON *d;
        cJSON_ArrayForEach(d, dst)
        {
            const char *dn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name"));
            have |= dn && !strcmp(dn, name);
        }
        if (have)
            continue;
        cJSON *copy = cJSON_Duplicate(it, true);
        cJSON *in = cJSON_GetObjectItemCaseSensitive(copy, inner);
        if (cJSON_IsObject(in)) {
            absolute(in, "certificate-authority", dir);
            absolute(in, "client-certificate", dir);
            absolute(in, "client-key", dir);
            absolute(in, "tokenFile", dir);
            /* An exec command with a slash is a path beside its kubeconfig (client-go); one without is
             * looked up in PATH and stays as it is. */
            cJSON *exec = cJSON_GetObjectItemCaseSensitive(in, "exec");
            const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(exec, "command"));
            if (cmd && strchr(cmd, '/'))
                absolute(exec, "command", dir);
        }
        cJSON_AddItemToArray(dst, copy);
    }
}

static int merge_file(cJSON *into, const char *path, rss_error_t *err)
{
    _cleanup_free_ char *text = NULL;
    if (kube_read_file(path, 4 << 20, &text, NULL, err) < 0)
        return rss_error_wrap(err, "reading kubeconfig");
    _cleanup_json_ cJSON *root = NULL;
    if (kube_config_parse_root(text, &root, err) < 0)
        return rss_error_wrap(err, "'%s'", path);
    const char *slash = strrchr(path, '/');
    _cleanup_free_ char *dir = slash ? rss_xstrndup(path, (size_t)(slash - path)) : rss_xstrdup(".");
    merge_list(into, root, "clusters", "cluster", dir);
    merge_list(into, root, "users", "user", dir);
    merge_list(into, root, "contexts", "context", dir);
    const char *cur = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "current-context"));
    if (cur && *cur && !cJSON_GetObjectItemCaseSensitive(into, "current-context"))
        cJSON_AddStringToObject(into, "current-context", cur);
    return 0;
}

int kube_config_load_opts(const struct rss_kube_opts *o, struct kube_config *cfg, rss_error_t *err)
{
    const char *path = o->kubeconfig;
    _cleanup_json_ cJSON *merged = cJSON_CreateObject();
    size_t loaded = 0;
    if (path && *path) {
        /* An explicit file must exist, as with kubectl --kubeconfig. */
        if (merge_file(merged, path, err) < 0)
            return -1;
        loaded++;
    } else {
        const char *env = getenv("KUBECONFIG");
        if (env && *env) {
            _cleanup_free_ char *list = rss_xstrdup(env);
            char *save = NULL;
            for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
                if (access(p, F_OK) != 0)
                    continue; /* kubectl skips files of the list that do not exist */
                if (merge_file(merged, p, err) < 0)
                    return -1;
                loaded++;
            }
        } else {
            const char *home = getenv("HOME");
            _cleanup_free_ char *p = rss_xasprintf("%s/.kube/config", home && *home ? home : "");
            if (home && *home && access(p, F_OK) == 0) {
                if (merge_file(merged, p, err) < 0)
                    return -1;
                loaded++;
            }
        }
    }
    if (!loaded)
        return rss_error_make(err, RSS_E_NOT_FOUND, 0,
                              "no kubeconfig: $KUBECONFIG names no existing file, or "
                              "~/.kube/config does not exist");
    /* kube_config_from_root's errors start with "kubeconfig" already. */
    if (kube_config_from_root(merged, NULL, o, cfg, err) < 0)
        return path && *path ? rss_error_wrap(err, "'%s'", path) : -1;
    return 0;
}

int kube_config_load_merged(const char *path, const char *context, struct kube_config *cfg, rss_error_t *err)
{
    const struct rss_kube_opts o = {.kubeconfig = path, .context = context};
    return kube_config_load_opts(&o, cfg, err);
}
