/* kube_config.c -- where the client's settings come from: a kubeconfig file or the in-cluster service
 * account. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rss/base64.h"
#include "rss/cleanup.h"
#include "kube_internal.h"

void kube_config_clear(struct kube_config *cfg)
{
    free(cfg->server);
    free(cfg->ns);
    free(cfg->ca_file);
    free(cfg->ca_data);
    free(cfg->cert_file);
    free(cfg->key_file);
    free(cfg->cert_data);
    free(cfg->key_data);
    free(cfg->token);
    free(cfg->token_file);
    cJSON_Delete(cfg->exec);
    free(cfg->as);
    for (size_t i = 0; i < cfg->n_as_groups; i++)
        free(cfg->as_groups[i]);
    free(cfg->as_groups);
    free(cfg->proxy);
    free(cfg->tls_server_name);
    memset(cfg, 0, sizeof(*cfg));
}

int kube_read_file(const char *path, size_t max, char **ret, size_t *len, rss_error_t *err)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return rss_error_errno(err, errno, "opening '%s'", path);
    size_t cap = 4096, n = 0;
    _cleanup_free_ char *buf = rss_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= max)
                return rss_error_make(err, RSS_E_TOO_LARGE, 0, "'%s' is larger than %zu bytes", path, max);
            cap *= 2;
            buf = rss_xrealloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) {
            if (ferror(f))
                return rss_error_errno(err, errno, "reading '%s'", path);
            break;
        }
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    *ret = TAKE_PTR(buf);
    return 0;
}

static char *trimmed(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
        s++;
    char *r = rss_xstrdup(s);
    size_t n = strlen(r);
    while (n > 0 && (r[n - 1] == ' ' || r[n - 1] == '\n' || r[n - 1] == '\r' || r[n - 1] == '\t'))
        r[--n] = '\0';
    return r;
}

/* A path from a kubeconfig, relative to the kubeconfig's directory. */
static char *resolve(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return rss_xstrdup(path);
    return rss_xasprintf("%s/%s", dir, path);
}

static const char *str_field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* YAML scalars arrive as strings, JSON booleans as booleans. */
static bool bool_field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    return cJSON_IsString(v) && (!strcasecmp(v->valuestring, "true") || !strcasecmp(v->valuestring, "yes") ||
                                 !strcasecmp(v->valuestring, "on"));
}

/* Finds {name: NAME, <field>: {...}} in a named list and returns the inner object. */
static const cJSON *named(const cJSON *root, const char *list, const char *field, const char *name)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, list);
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        const char *n = str_field(it, "name");
        if (n && !strcmp(n, name)) {
            const cJSON *inner = cJSON_GetObjectItemCaseSensitive(it, field);
            return cJSON_IsObject(inner) ? inner : NULL;
        }
    }
    return NULL;
}

static int pem_data(const cJSON *obj, const char *key, char **data, size_t *len, rss_error_t *err)
{
    const char *v = str_field(obj, key);
    if (!v)
        return 0;
    *data = rss_base64_decode(v, len);
    if (!*data)
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: %s is not valid base64", key);
    return 0;
}

int kube_config_parse_root(const char *text, cJSON **ret, rss_error_t *err)
{
    _cleanup_json_ cJSON *root = NULL;
    const char *t = text;
    while (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t')
        t++;
    if (*t == '{') {
        root = cJSON_Parse(t);
        if (!root)
            return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: malformed JSON");
    } else if (kube_yaml_parse(text, &root, err) < 0) {
        return rss_error_wrap(err, "kubeconfig");
    }
    if (!cJSON_IsObject(root))
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: not a mapping");
    *ret = TAKE_PTR(root);
    return 0;
}

int kube_config_parse_kubeconfig(const char *text, const char *dir, struct kube_config *cfg, rss_error_t *err)
{
    _cleanup_json_ cJSON *root = NULL;
    if (kube_config_parse_root(text, &root, err) < 0)
        return -1;
    struct kube_config c = {0};
    if (kube_config_from_root(root, dir, NULL, &c, err) < 0)
        return -1;
    /* Stricter than kubectl, which ignores a key without a certificate (rss_kube_new_opts follows it). */
    if ((c.cert_data || c.cert_file) != (c.key_data || c.key_file)) {
        kube_config_clear(&c);
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "kubeconfig: a client certificate needs its key and vice versa");
    }
    kube_config_clear(cfg);
    *cfg = c;
    return 0;
}

static const char *nonempty(const char *s)
{
    return s && *s ? s : NULL;
}

int kube_config_from_root(const cJSON *root, const char *dir, const struct rss_kube_opts *o,
                          struct kube_config *cfg, rss_error_t *err)
{
    const struct rss_kube_opts none = {0};
    if (!o)
        o = &none;
    /* As client-go: --context names a context that must exist, else current-context does; --cluster and
     * --user name entries instead of the context's, so that with --cluster no context is needed. */
    const char *ctx_name = nonempty(o->context) ? o->context : str_field(root, "current-context");
    if (!ctx_name && !nonempty(o->cluster))
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: no current-context");
    const cJSON *ctx = ctx_name ? named(root, "contexts", "context", ctx_name) : NULL;
    if (ctx_name && !ctx)
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: context '%s' not found", ctx_name);
    const char *cluster_name = nonempty(o->cluster) ? o->cluster : str_field(ctx, "cluster");
    if (!cluster_name)
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: context '%s' has no cluster", ctx_name);
    const cJSON *cluster = named(root, "clusters", "cluster", cluster_name);
    if (!cluster)
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: cluster '%s' not found", cluster_name);
    const char *user_name = nonempty(o->user) ? o->user : str_field(ctx, "user");
    const cJSON *user = user_name ? named(root, "users", "user", user_name) : NULL;
    if (user_name && !user)
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: user '%s' not found", user_name);

    struct kube_config c = {0};
    const char *server = str_field(cluster, "server");
    if (!server) {
        kube_config_clear(&c);
        return rss_error_make(err, RSS_E_INVALID, 0, "kubeconfig: cluster '%s' has no server", cluster_name);
    }
    c.server = rss_xstrdup(server);
    size_t sl = strlen(c.server);
    while (sl > 0 && c.server[sl - 1] == '/')
        c.server[--sl] = '\0';
    const char *ns = str_field(ctx, "namespace");
    c.ns = rss_xstrdup(ns ? ns : "default");
    c.insecure = bool_field(cluster, "insecure-skip-tls-verify");
    const char *v;
    if ((v = str_field(cluster, "proxy-url")))
        c.proxy = rss_xstrdup(v);
    if ((v = str_field(cluster, "tls-server-name")))
        c.tls_server_name = rss_xstrdup(v);
    if (pem_data(cluster, "certificate-authority-data", &c.ca_data, &c.ca_len, err) < 0)
        goto fail;
    if (!c.ca_data && (v = str_field(cluster, "certificate-authority")))
        c.ca_file = resolve(dir, v);
    if (user) {
        if (pem_data(user, "client-certificate-data", &c.cert_data, &c.cert_len, err) < 0 ||
            pem_data(user, "client-key-data", &c.key_data, &c.key_len, err) < 0)
            goto fail;
        if (!c.cert_data && (v = str_field(user, "client-certificate")))
            c.cert_file = resolve(dir, v);
        if (!c.key_data && (v = str_field(user, "client-key")))
            c.key_file = resolve(dir, v);
        if ((v = str_field(user, "token")))
            c.token = rss_xstrdup(v);
        else if ((v = str_field(user, "tokenFile")))
            c.token_file = resolve(dir, v);
        if ((v = str_field(user, "as")))
            c.as = rss_xstrdup(v);
        const cJSON *g;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(user, "as-groups"))
        {
            if (!cJSON_IsString(g))
                continue;
            c.as_groups = rss_xrealloc(c.as_groups, (c.n_as_groups + 1) * sizeof(char *));
            c.as_groups[c.n_as_groups++] = rss_xstrdup(g->valuestring);
        }
        bool other = c.token || c.token_file || c.cert_data || c.cert_file;
        const cJSON *exec = cJSON_GetObjectItemCaseSensitive(user, "exec");
        if (cJSON_IsObject(exec) && !other) {
            /* Run when the client is made (kube_exec.c), not here: loading stays free of side effects. */
            if (kube_exec_check(exec, err) < 0) {
                rss_error_wrap(err, "kubeconfig: user '%s'", user_name);
                goto fail;
            }
            c.exec = cJSON_Duplicate(exec, true);
            const char *cmd = str_field(exec, "command");
            /* As client-go: a command with a slash is a path, relative to the kubeconfig's directory;
             * without one it is looked up in PATH. */
            if (strchr(cmd, '/') && cmd[0] != '/') {
                _cleanup_free_ char *abs = resolve(dir, cmd);
                cJSON_ReplaceItemInObjectCaseSensitive(c.exec, "command", cJSON_CreateString(abs));
            }
        } else if (cJSON_GetObjectItemCaseSensitive(user, "auth-provider") && !other) {
            /* kubectl dropped its auth-provider plugins (1.26): their exec plugins replace them. */
            rss_error_make(err, RSS_E_UNSUPPORTED, 0,
                           "kubeconfig: user '%s': auth-provider is not supported (use its exec credential "
                           "plugin, as kubectl since 1.26 does)",
                           user_name);
            goto fail;
        }
    }
    kube_config_clear(cfg);
    *cfg = c;
    return 0;
fail:
    kube_config_clear(&c);
    return -1;
}

int kube_config_load_kubeconfig(const char *path, struct kube_config *cfg, rss_error_t *err)
{
    _cleanup_free_ char *text = NULL;
    if (kube_read_file(path, 4 << 20, &text, NULL, err) < 0)
        return rss_error_wrap(err, "reading kubeconfig");
    const char *slash = strrchr(path, '/');
    _cleanup_free_ char *dir = slash ? rss_xstrndup(path, (size_t)(slash - path)) : rss_xstrdup(".");
    if (kube_config_parse_kubeconfig(text, dir, cfg, err) < 0)
        return rss_error_wrap(err, "'%s'", path);
    return 0;
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config *cfg, rss_error_t *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return rss_error_make(
            err, RSS_E_NOT_FOUND, 0,
            "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset, and no kubeconfig given");
    struct kube_config c = {0};
    /* IPv6 literals need brackets in a URL (net.JoinHostPort). */
    if (strchr(host, ':'))
        c.server = rss_xasprintf("https://[%s]:%s", host, port);
    else
        c.server = rss_xasprintf("https://%s:%s", host, port);
    c.ca_file = rss_xasprintf("%s/ca.crt", sa_dir);
    c.token_file = rss_xasprintf("%s/token", sa_dir);
    const char *ns = getenv("POD_NAMESPACE");
    if (ns && *ns) {
        c.ns = rss_xstrdup(ns);
    } else {
        _cleanup_free_ char *path = rss_xasprintf("%s/namespace", sa_dir);
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ rss_error_t ignored = NULL;
        if (kube_read_file(path, 4096, &text, NULL, &ignored) == 0) {
            c.ns = trimmed(text);
            if (!*c.ns) {
                free(c.ns);
                c.ns = NULL;
            }
        }
        if (!c.ns)
            c.ns = rss_xstrdup("default");
    }
    /* Fail early on an unreadable token rather than at the first request. */
    _cleanup_free_ char *tok = NULL;
    if (kube_read_file(c.token_file, 64 << 10, &tok, NULL, err) < 0) {
        kube_config_clear(&c);
        return rss_error_wrap(err, "in-cluster service account token");
    }
    kube_config_clear(cfg);
    *cfg = c;
    return 0;
}

int kube_read_token_file(const char *path, char **ret, rss_error_t *err)
{
    _cleanup_free_ char *text = NULL;
    if (kube_read_file(path, 64 << 10, &text, NULL, err) < 0)
        return rss_error_wrap(err, "reading token");
    *ret = trimmed(text);
    return 0;
}
