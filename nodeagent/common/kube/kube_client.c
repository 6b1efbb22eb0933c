/* kube_client.c -- the Kubernetes client object and its verbs: get, paged list, create, update, patch,
 * delete. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "kube_internal.h"

#define DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static int client_of(struct kube_config cfg, struct rss_kube **ret, rss_error_t *err);

int rss_kube_new(const char *kubeconfig, struct rss_kube **ret, rss_error_t *err)
{
    if (kube_http_global_init(err) < 0)
        return -1;
    struct kube_config cfg = {0};
    const char *env = getenv("KUBECONFIG");
    if (kubeconfig) {
        if (kube_config_load_kubeconfig(kubeconfig, &cfg, err) < 0)
            return -1;
    } else if (env && *env) {
        /* The first file of the list that loads; client-go merges them, which we do not need. */
        _cleanup_free_ char *list = rss_xstrdup(env);
        char *save = NULL;
        bool loaded = false;
        for (char *p = strtok_r(list, ":", &save); p && !loaded; p = strtok_r(NULL, ":", &save)) {
            if (access(p, R_OK) != 0)
                continue;
            if (kube_config_load_kubeconfig(p, &cfg, err) < 0)
                return -1;
            loaded = true;
        }
        if (!loaded)
            return rss_error_make(err, RSS_E_NOT_FOUND, 0, "no readable file in KUBECONFIG=%s", env);
    } else {
        const char *dir = getenv("RSS_SERVICEACCOUNT_DIR");
        if (kube_config_in_cluster(dir && *dir ? dir : DEFAULT_SA_DIR, &cfg, err) < 0)
            return -1;
    }
    if (cfg.exec && kube_exec_credential(&cfg, err) < 0) {
        kube_config_clear(&cfg);
        return -1;
    }
    return client_of(cfg, ret, err);
}

static void replace(char **field, const char *value)
{
    free(*field);
    *field = value ? rss_xstrdup(value) : NULL;
}

/* kubectl's command-line overrides, over whatever the kubeconfig said (rss_kube_opts in rss/kube.h). */
static void overrides(struct kube_config *cfg, const struct rss_kube_opts *o)
{
    if (o->server && *o->server) {
        free(cfg->server);
        cfg->server = rss_xstrdup(o->server);
        size_t sl = strlen(cfg->server);
        while (sl > 0 && cfg->server[sl - 1] == '/')
            cfg->server[--sl] = '\0';
    }
    /* A --server drops the kubeconfig's tls-server-name, which named the kubeconfig's server: only
     * --tls-server-name goes with it (client-go's getCluster). */
    if ((o->tls_server_name && *o->tls_server_name) || (o->server && *o->server))
        replace(&cfg->tls_server_name, o->tls_server_name && *o->tls_server_name ? o->tls_server_name : NULL);
    /* Either of --certificate-authority and --insecure-skip-tls-verify replaces all three of the
     * cluster's CA data, CA file and insecure-skip-tls-verify. */
    if (o->insecure || (o->certificate_authority && *o->certificate_authority)) {
        cfg->insecure = o->insecure;
        replace(&cfg->ca_file,
                o->certificate_authority && *o->certificate_authority ? o->certificate_authority : NULL);
        replace(&cfg->ca_data, NULL);
        cfg->ca_len = 0;
    }
    /* A file given on the command line replaces the user's data as well as its file. */
    if (o->client_certificate && *o->client_certificate) {
        replace(&cfg->cert_file, o->client_certificate);
        replace(&cfg->cert_data, NULL);
        cfg->cert_len = 0;
    }
    if (o->client_key && *o->client_key) {
        replace(&cfg->key_file, o->client_key);
        replace(&cfg->key_data, NULL);
        cfg->key_len = 0;
    }
    if (o->token && *o->token) {
        free(cfg->token);
        free(cfg->token_file);
        cJSON_Delete(cfg->exec);
        cfg->token = rss_xstrdup(o->token);
        cfg->token_file = NULL;
        cfg->exec = NULL;
    }
    if (o->as && *o->as) {
        free(cfg->as);
        cfg->as = rss_xstrdup(o->as);
        for (size_t i = 0; i < cfg->n_as_groups; i++)
            free(cfg->as_groups[i]);
        free(cfg->as_groups);
        cfg->as_groups = rss_xcalloc(o->n_as_groups + 1, sizeof(char *));
        for (size_t i = 0; i < o->n_as_groups; i++)
            cfg->as_groups[i] = rss_xstrdup(o->as_groups[i]);
        cfg->n_as_groups = o->n_as_groups;
    }
}

/* A file of the config that cannot be read fails here, naming it and where it came from, as kubectl's
 * validation does, rather than as a TLS failure at the first request. */
static int readable(const char *path, const char *what, const char *flag, const char *flag_value,
                    rss_error_t *err)
{
    if (!path)
        return 0;
    FILE *f = fopen(path, "re");
    if (f) {
        fclose(f);
        return 0;
    }
    if (flag_value && *flag_value && !strcmp(flag_value, path))
        return rss_error_errno(err, errno, "cannot read the %s '%s' (%s)", what, path, flag);
    return rss_error_errno(err, errno, "cannot read the %s '%s'", what, path);
}

/* kubectl's checks of the merged config (clientcmd's validation, client-go's TLS config). */
static int check(struct kube_config *cfg, const struct rss_kube_opts *o, rss_error_t *err)
{
    if (cfg->insecure && (cfg->ca_file || cfg->ca_data))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "a certificate authority together with insecure-skip-tls-verify is refused, "
                              "as by kubectl: drop one of them");
    if ((cfg->cert_file || cfg->cert_data) && !(cfg->key_file || cfg->key_data))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "the client certificate has no key: give --client-key, or client-key or "
                              "client-key-data in the kubeconfig's user");
    if (!(cfg->cert_file || cfg->cert_data)) {
        /* kubectl uses a key only with a certificate. */
        replace(&cfg->key_file, NULL);
        replace(&cfg->key_data, NULL);
        cfg->key_len = 0;
    }
    if (readable(cfg->ca_file, "certificate authority", "--certificate-authority", o->certificate_authority,
                 err) < 0 ||
        readable(cfg->cert_file, "client certificate", "--client-certificate", o->client_certificate, err) <
            0 ||
        readable(cfg->key_file, "client key", "--client-key", o->client_key, err) < 0)
        return -1;
    return 0;
}

int rss_kube_new_opts(const struct rss_kube_opts *opts, struct rss_kube **ret, rss_error_t *err)
{
    if (kube_http_global_init(err) < 0)
        return -1;
    struct kube_config cfg = {0};
    const struct rss_kube_opts none = {0};
    const struct rss_kube_opts *o = opts ? opts : &none;
    if (o->n_as_groups && !(o->as && *o->as))
        return rss_error_make(err, RSS_E_INVALID, 0, "--as-group needs --as (a user to impersonate)");
    if (kube_config_load_opts(o, &cfg, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND || (o->kubeconfig && *o->kubeconfig))
            return -1;
        /* No kubeconfig at all: in a pod, its service account (a context, cluster or user cannot be chosen
         * there); or --server alone, as kubectl allows. */
        if (o->context && *o->context)
            return rss_error_wrap(err, "context '%s'", o->context);
        if (o->cluster && *o->cluster)
            return rss_error_wrap(err, "cluster '%s'", o->cluster);
        if (o->user && *o->user)
            return rss_error_wrap(err, "user '%s'", o->user);
        rss_error_release(err);
        const char *dir = getenv("RSS_SERVICEACCOUNT_DIR");
        if (o->server && *o->server) {
            cfg.ns = rss_xstrdup("default");
        } else if (kube_config_in_cluster(dir && *dir ? dir : DEFAULT_SA_DIR, &cfg, err) < 0) {
            return -1;
        }
    }
    overrides(&cfg, o);
    if (check(&cfg, o, err) < 0 || (cfg.exec && kube_exec_credential(&cfg, err) < 0)) {
        kube_config_clear(&cfg);
        return -1;
    }
    return client_of(cfg, ret, err);
}

/* Takes cfg over, also on failure. */
static int client_of(struct kube_config cfg, struct rss_kube **ret, rss_error_t *err)
{
    struct rss_kube *k = rss_xcalloc(1, sizeof(*k));
    k->cfg = cfg;
    k->timeout_ms = 30000;
    k->max_body = 32u << 20;
    k->attempts = 4;
    k->max_backoff_ms = 5000;
    k->user_agent = rss_xstrdup("rssd/0.1");
    k->token = cfg.token ? rss_xstrdup(cfg.token) : NULL;
    const char *h1 = getenv("RSS_KUBE_HTTP1");
    k->http1 = h1 && !strcmp(h1, "1");
    pthread_mutex_init(&k->lock, NULL);
    /* Without an eventfd the first transfer fails with an internal error; nothing to do here. */
    (void)kube_mux_init(&k->mux);
    if (kube_http_target(k, err) < 0) {
        rss_kube_free(k);
        return -1;
    }
    *ret = k;
    return 0;
}

void rss_kube_free(struct rss_kube *kube)
{
    if (!kube)
        return;
    kube_mux_free(&kube->mux);
    kube_http_pool_free(kube);
    pthread_mutex_destroy(&kube->lock);
    kube_config_clear(&kube->cfg);
    free(kube->token);
    free(kube->user_agent);
    free(kube->base_url);
    curl_slist_free_all(kube->connect_to);
    free(kube->host_header);
    free(kube);
}

const char *rss_kube_namespace(const struct rss_kube *kube)
{
    return kube->cfg.ns;
}

const char *rss_kube_server(const struct rss_kube *kube)
{
    return kube->cfg.server;
}

void rss_kube_set_timeout(struct rss_kube *kube, long timeout_ms)
{
    kube->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

void rss_kube_set_max_body(struct rss_kube *kube, size_t bytes)
{
    kube->max_body = bytes > 0 ? bytes : 32u << 20;
}

void rss_kube_set_retries(struct rss_kube *kube, int attempts, long max_backoff_ms)
{
    kube->attempts = attempts > 0 ? attempts : 1;
    kube->max_backoff_ms = max_backoff_ms > 0 ? max_backoff_ms : 5000;
}

void rss_kube_set_user_agent(struct rss_kube *kube, const char *user_agent)
{
    free(kube->user_agent);
    kube->user_agent = rss_xstrdup(user_agent);
}

char *rss_kube_path(const char *group_version, const char *ns, const char *plural, const char *name,
                    const char *subresource)
{
    /* The core group has no name: "v1" lives under /api, everything else under /apis. */
    bool core = !strchr(group_version, '/');
    size_t len = strlen(group_version) + 64 + (ns ? strlen(ns) : 0) + (plural ? strlen(plural) : 0) +
                 (name ? strlen(name) : 0) + (subresource ? strlen(subresource) : 0);
    char *p = rss_xmalloc(len);
    int n = snprintf(p, len, "%s/%s", core ? "/api" : "/apis", group_version);
    if (ns)
        n += snprintf(p + n, len - (size_t)n, "/namespaces/%s", ns);
    if (plural)
        n += snprintf(p + n, len - (size_t)n, "/%s", plural);
    if (name)
        n += snprintf(p + n, len - (size_t)n, "/%s", name);
    if (subresource)
        snprintf(p + n, len - (size_t)n, "/%s", subresource);
    return p;
}

void kube_query_add(char **q, const char *key, const char *value)
{
    /* curl_easy_escape needs no handle for plain percent-encoding. */
    char *enc = curl_easy_escape(NULL, value, 0);
    if (!enc)
        abort();
    char *n = rss_xasprintf("%s%s%s=%s", *q ? *q : "", *q && **q ? "&" : "", key, enc);
    curl_free(enc);
    free(*q);
    *q = n;
}

int rss_kube_get(struct rss_kube *kube, const char *path, cJSON **ret, rss_error_t *err)
{
    struct rss_kube_request r = {.method = "GET", .path = path};
    return rss_kube_call(kube, &r, ret, err);
}

static int list_once(struct rss_kube *kube, const char *path, const struct rss_kube_list_opts *opts,
                     cJSON **ret, rss_error_t *err)
{
    _cleanup_json_ cJSON *all = NULL;
    _cleanup_free_ char *cont = NULL;
    char limit[32];
    snprintf(limit, sizeof(limit), "%ld", opts && opts->limit > 0 ? opts->limit : 500);
    for (int page = 0;; page++) {
        _cleanup_free_ char *q = NULL;
        if (opts && opts->label_selector && *opts->label_selector)
            kube_query_add(&q, "labelSelector", opts->label_selector);
        if (opts && opts->field_selector && *opts->field_selector)
            kube_query_add(&q, "fieldSelector", opts->field_selector);
        kube_query_add(&q, "limit", limit);
        if (cont)
            kube_query_add(&q, "continue", cont);
        struct rss_kube_request r = {.method = "GET", .path = path, .query = q};
        _cleanup_json_ cJSON *resp = NULL;
        if (rss_kube_call(kube, &r, &resp, err) < 0)
            return -1;
        cJSON *items = cJSON_GetObjectItemCaseSensitive(resp, "items");
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(resp, "metadata");
        if (!cJSON_IsObject(resp) || !(cJSON_IsArray(items) || cJSON_IsNull(items) || !items) ||
            !cJSON_IsObject(meta))
            return rss_error_make(err, RSS_E_INVALID, 0, "LIST %s: the response is not a List", path);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "continue");
        free(cont);
        cont = cJSON_IsString(c) && c->valuestring[0] ? rss_xstrdup(c->valuestring) : NULL;
        if (!all) {
            /* The first page carries the snapshot's resourceVersion; keep its envelope. */
            all = TAKE_PTR(resp);
            if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(all, "items"))) {
                cJSON_DeleteItemFromObjectCaseSensitive(all, "items");
                cJSON_AddItemToObject(all, "items", cJSON_CreateArray());
            }
        } else {
            cJSON *dst = cJSON_GetObjectItemCaseSensitive(all, "items");
            while (cJSON_IsArray(items) && cJSON_GetArraySize(items) > 0)
                cJSON_AddItemToArray(dst, cJSON_DetachItemFromArray(items, 0));
        }
        if (!cont)
            break;
    }
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(all, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "continue");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "remainingItemCount");
    *ret = TAKE_PTR(all);
    return 0;
}

int rss_kube_list(struct rss_kube *kube, const char *path, const struct rss_kube_list_opts *opts, cJSON **ret,
                  rss_error_t *err)
{
    int r = list_once(kube, path, opts, ret, err);
    if (r < 0 && rss_error_code(*err) == RSS_E_GONE) {
        /* The continue token expired (the snapshot got compacted): start over once. */
        rss_error_release(err);
        r = list_once(kube, path, opts, ret, err);
    }
    if (r < 0)
        return rss_error_wrap(err, "listing %s", path);
    return 0;
}

static int with_body(struct rss_kube *kube, const char *method, const char *path, const char *content_type,
                     const cJSON *body, cJSON **ret, rss_error_t *err)
{
    _cleanup_free_ char *text = cJSON_PrintUnformatted(body);
    if (!text)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "%s %s: cannot serialize the body", method, path);
    struct rss_kube_request r = {.method = method, .path = path, .content_type = content_type, .body = text};
    return rss_kube_call(kube, &r, ret, err);
}

int rss_kube_create(struct rss_kube *kube, const char *collection_path, const cJSON *obj, cJSON **ret,
                    rss_error_t *err)
{
    return with_body(kube, "POST", collection_path, NULL, obj, ret, err);
}

int rss_kube_update(struct rss_kube *kube, const char *path, const cJSON *obj, cJSON **ret, rss_error_t *err)
{
    return with_body(kube, "PUT", path, NULL, obj, ret, err);
}

int rss_kube_merge_patch(struct rss_kube *kube, const char *path, const cJSON *patch, cJSON **ret,
                         rss_error_t *err)
{
    return with_body(kube, "PATCH", path, "application/merge-patch+json", patch, ret, err);
}

/* The API server compares a `test` operation's string with the stored one as JSON text, the stored one as
 * Go's encoding/json writes it (kube-apiserver v1.34, evanphx/json-patch v4): "a<b" fails against a stored
 * "a<b", which Go writes "a\u003cb". cJSON writes those characters as they are, so inside strings they are
 * written as Go does; for every other operation the escape reads back the same. */
static char *go_escaped(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '<' || *p == '>' || *p == '&' || (*p == '\xe2' && p[1] == '\x80') ? 6 : 1;
    char *out = rss_xmalloc(n + 1), *o = out;
    bool in = false;
    for (const char *p = text; *p; p++) {
        if (in && *p == '\\' && p[1]) {
            *o++ = *p++;
            *o++ = *p;
            continue;
        }
        if (*p == '"')
            in = !in;
        const char *esc = !in                              ? NULL
                          : *p == '<'                      ? "\\u003c"
                          : *p == '>'                      ? "\\u003e"
                          : *p == '&'                      ? "\\u0026"
                          : !strncmp(p, "\xe2\x80\xa8", 3) ? "\\u2028"
                          : !strncmp(p, "\xe2\x80\xa9", 3) ? "\\u2029"
                                                           : NULL;
        if (!esc) {
            *o++ = *p;
            continue;
        }
        memcpy(o, esc, 6);
        o += 6;
        p += (unsigned char)*p == 0xe2 ? 2 : 0;
    }
    *o = '\0';
    return out;
}

int rss_kube_json_patch(struct rss_kube *kube, const char *path, const cJSON *ops, cJSON **ret,
                        rss_error_t *err)
{
    if (!cJSON_IsArray(ops))
        return rss_error_make(err, RSS_E_INVALID, 0, "PATCH %s: a JSON patch is an array of operations",
                              path);
    _cleanup_free_ char *text = cJSON_PrintUnformatted(ops);
    if (!text)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "PATCH %s: cannot serialize the body", path);
    _cleanup_free_ char *body = go_escaped(text);
    struct rss_kube_request r = {
        .method = "PATCH", .path = path, .content_type = "application/json-patch+json", .body = body};
    return rss_kube_call(kube, &r, ret, err);
}

int rss_kube_update_status(struct rss_kube *kube, const char *item_path, const cJSON *obj, cJSON **ret,
                           rss_error_t *err)
{
    _cleanup_free_ char *p = rss_xasprintf("%s/status", item_path);
    return rss_kube_update(kube, p, obj, ret, err);
}

int rss_kube_merge_patch_status(struct rss_kube *kube, const char *item_path, const cJSON *patch, cJSON **ret,
                                rss_error_t *err)
{
    _cleanup_free_ char *p = rss_xasprintf("%s/status", item_path);
    return rss_kube_merge_patch(kube, p, patch, ret, err);
}

int rss_kube_delete(struct rss_kube *kube, const char *path, const struct rss_kube_delete_opts *opts,
                    cJSON **ret, rss_error_t *err)
{
    _cleanup_json_ cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "kind", "DeleteOptions");
    cJSON_AddStringToObject(body, "apiVersion", "v1");
    cJSON_AddStringToObject(body, "propagationPolicy",
                            opts && opts->propagation ? opts->propagation : "Background");
    if (opts && opts->set_grace)
        cJSON_AddNumberToObject(body, "gracePeriodSeconds", (double)opts->grace_period_seconds);
    if (opts && (opts->uid || opts->resource_version)) {
        cJSON *pre = cJSON_AddObjectToObject(body, "preconditions");
        if (opts->uid)
            cJSON_AddStringToObject(pre, "uid", opts->uid);
        if (opts->resource_version)
            cJSON_AddStringToObject(pre, "resourceVersion", opts->resource_version);
    }
    return with_body(kube, "DELETE", path, NULL, body, ret, err);
}
