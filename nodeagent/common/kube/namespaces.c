/* namespaces.c -- the --namespaces list: parsing, membership, and LISTs over the managed namespaces. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/namespaces.h"
#include "rss/spec.h"

void rss_namespaces_clear(struct rss_namespaces *nss)
{
    if (!nss)
        return;
    for (size_t i = 0; i < nss->n; i++)
        free(nss->names[i]);
    free(nss->names);
    nss->names = NULL;
    nss->n = 0;
}

bool rss_namespaces_contains(const struct rss_namespaces *nss, const char *ns)
{
    if (!nss || nss->n == 0)
        return true;
    if (!ns)
        return false;
    for (size_t i = 0; i < nss->n; i++)
        if (!strcmp(nss->names[i], ns))
            return true;
    return false;
}

int rss_namespaces_parse(const char *csv, struct rss_namespaces *out, rss_error_t *err)
{
    *out = (struct rss_namespaces){0};
    if (!csv || !*csv)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "--namespaces: empty (leave the flag out to manage every namespace)");
    struct rss_namespaces nss = {0};
    size_t cap = 0;
    for (const char *p = csv;;) {
        size_t len = strcspn(p, ",");
        if (!rss_spec_dns_label(p, len)) {
            rss_namespaces_clear(&nss);
            if (len == 0)
                return rss_error_make(err, RSS_E_INVALID, 0, "--namespaces '%s': an empty name", csv);
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "--namespaces: '%.*s' is not a namespace name (a DNS label: at most 63 "
                                  "of a-z, 0-9 and '-', starting and ending with a letter or digit)",
                                  (int)(len > 80 ? 80 : len), p);
        }
        _cleanup_free_ char *name = rss_xstrndup(p, len);
        if (rss_namespaces_contains(&nss, name) && nss.n > 0) {
            rss_namespaces_clear(&nss);
            return rss_error_make(err, RSS_E_INVALID, 0, "--namespaces: '%s' is given twice", name);
        }
        *(char **)rss_xarray_push(&nss.names, &nss.n, &cap, sizeof(*nss.names)) = TAKE_PTR(name);
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *out = nss;
    return 0;
}

int rss_namespaces_list(struct rss_kube *kube, const struct rss_namespaces *nss, const char *group_version,
                        const char *plural, const struct rss_kube_list_opts *opts, cJSON **ret,
                        rss_error_t *err)
{
    if (!nss || nss->n == 0) {
        _cleanup_free_ char *path = rss_kube_path(group_version, NULL, plural, NULL, NULL);
        return rss_kube_list(kube, path, opts, ret, err);
    }
    _cleanup_json_ cJSON *all = NULL;
    for (size_t i = 0; i < nss->n; i++) {
        _cleanup_free_ char *path = rss_kube_path(group_version, nss->names[i], plural, NULL, NULL);
        _cleanup_json_ cJSON *list = NULL;
        if (rss_kube_list(kube, path, opts, &list, err) < 0)
            return rss_error_wrap(err, "listing %s in namespace %s", plural, nss->names[i]);
        if (!all) {
            all = TAKE_PTR(list);
            if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(all, "items"))) {
                cJSON_DeleteItemFromObjectCaseSensitive(all, "items");
                cJSON_AddArrayToObject(all, "items");
            }
            continue;
        }
        cJSON *items = cJSON_GetObjectItemCaseSensitive(all, "items");
        cJSON *more = cJSON_GetObjectItemCaseSensitive(list, "items");
        while (cJSON_IsArray(more) && cJSON_GetArraySize(more) > 0)
            cJSON_AddItemToArray(items, cJSON_DetachItemFromArray(more, 0));
    }
    *ret = TAKE_PTR(all);
    return 0;
}
