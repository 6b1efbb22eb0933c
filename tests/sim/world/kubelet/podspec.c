/* podspec.c -- translates a Pod's containers into runtime terms: env, mounts, argv, spec hash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kubelet.h"
#include "rss/json.h"
#include "rss/cleanup.h"

void kl_env_add(struct kl_env *env, const char *key, const char *value)
{
    for (size_t i = 0; i < env->n; i++) {
        if (!strcmp(env->keys[i], key)) {
            free(env->values[i]);
            env->values[i] = rss_xstrdup(value);
            return;
        }
    }
    env->keys = rss_xrealloc(env->keys, (env->n + 1) * sizeof(char *));
    env->values = rss_xrealloc(env->values, (env->n + 1) * sizeof(char *));
    env->keys[env->n] = rss_xstrdup(key);
    env->values[env->n] = rss_xstrdup(value);
    env->n++;
}

void kl_env_clear(struct kl_env *env)
{
    for (size_t i = 0; i < env->n; i++) {
        free(env->keys[i]);
        free(env->values[i]);
    }
    free(env->keys);
    free(env->values);
    *env = (struct kl_env){0};
}

const char *kl_env_get(const struct kl_env *env, const char *key)
{
    for (size_t i = 0; i < env->n; i++)
        if (!strcmp(env->keys[i], key))
            return env->values[i];
    return NULL;
}

static const char *env_get(const struct kl_env *env, const char *key, size_t keylen)
{
    for (size_t i = 0; i < env->n; i++)
        if (strlen(env->keys[i]) == keylen && !strncmp(env->keys[i], key, keylen))
            return env->values[i];
    return NULL;
}

struct sbuf {
    char *s;
    size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->s = rss_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* Kubernetes' expansion (third_party/forked/golang/expansion): $(VAR) is replaced when VAR is
 * defined, $$ is a literal $, anything else is kept as written. */
char *kl_env_expand(const struct kl_env *env, const char *s)
{
    struct sbuf b = {0};
    sbuf_add(&b, "", 0);
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            sbuf_add(&b, "$", 1);
            p += 2;
            continue;
        }
        if (p[0] == '$' && p[1] == '(') {
            const char *end = strchr(p + 2, ')');
            const char *v = end ? env_get(env, p + 2, (size_t)(end - p - 2)) : NULL;
            if (v) {
                sbuf_add(&b, v, strlen(v));
                p = end + 1;
                continue;
            }
        }
        sbuf_add(&b, p, 1);
        p++;
    }
    return b.s;
}

/* The downward API fields the test world supports (those rssd's hooks and manifests use). */
static char *field_ref(const cJSON *pod, const char *node, const char *node_ip, const char *path)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const char *v = NULL;
    if (!strcmp(path, "metadata.name"))
        v = rss_json_str(meta, "name");
    else if (!strcmp(path, "metadata.namespace"))
        v = rss_json_str(meta, "namespace");
    else if (!strcmp(path, "metadata.uid"))
        v = rss_json_str(meta, "uid");
    else if (!strcmp(path, "spec.nodeName"))
        v = node;
    else if (!strcmp(path, "spec.serviceAccountName"))
        v = rss_json_str(pod, "spec.serviceAccountName");
    else if (!strcmp(path, "status.podIP") || !strcmp(path, "status.hostIP"))
        v = node_ip ? node_ip : "127.0.0.1"; /* host network: the pod's IP is the node's */
    else if (!strncmp(path, "metadata.labels['", 17) || !strncmp(path, "metadata.annotations['", 22)) {
        bool labels = path[9] == 'l';
        const char *k = path + (labels ? 17 : 22);
        size_t klen = strlen(k);
        if (klen < 2 || strcmp(k + klen - 2, "']"))
            return NULL;
        _cleanup_free_ char *key = rss_xstrdup(k);
        key[klen - 2] = '\0';
        /* Label keys contain dots: look the key up directly, not as a path. */
        v = rss_json_str(
            cJSON_GetObjectItemCaseSensitive(rss_json_obj(meta, labels ? "labels" : "annotations"), key), "");
        return rss_xstrdup(v ? v : "");
    } else
        return NULL;
    return rss_xstrdup(v ? v : "");
}

int kl_env_resolve(const cJSON *pod, const cJSON *container, const char *node, const char *node_ip,
                   struct kl_env *ret, rss_error_t *err)
{
    struct kl_env env = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(container, "env"))
    {
        const char *name = rss_json_str(e, "name");
        if (!name)
            continue;
        const char *value = rss_json_str(e, "value");
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(e, "valueFrom");
        if (from) {
            const char *path = rss_json_str(from, "fieldRef.fieldPath");
            _cleanup_free_ char *v = path ? field_ref(pod, node, node_ip, path) : NULL;
            if (!v) {
                kl_env_clear(&env);
                return rss_error_make(err, RSS_E_INVALID, 0,
                                      "env %s: only fieldRef valueFrom is supported in the test world (%s)",
                                      name, path ? path : "no fieldRef");
            }
            kl_env_add(&env, name, v);
        } else {
            _cleanup_free_ char *v = kl_env_expand(&env, value ? value : "");
            kl_env_add(&env, name, v);
        }
    }
    *ret = env;
    return 0;
}

char **kl_strv_from_json(const cJSON *arr, const struct kl_env *env)
{
    if (!cJSON_IsArray(arr))
        return NULL;
    int n = cJSON_GetArraySize(arr);
    char **v = rss_xcalloc((size_t)n + 1, sizeof(char *));
    int i = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, arr)
    {
        v[i++] = kl_env_expand(env, cJSON_IsString(s) ? s->valuestring : "");
    }
    return v;
}

void kl_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

char *kl_pod_dir(struct kl *kl, const char *uid)
{
    return rss_xasprintf("%s/pods/%s", kl->state_dir, uid);
}

static const cJSON *find_volume(const cJSON *pod, const char *name)
{
    const cJSON *v;
    cJSON_ArrayForEach(
        v, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "spec"), "volumes"))
    {
        const char *n = rss_json_str(v, "name");
        if (n && !strcmp(n, name))
            return v;
    }
    return NULL;
}

/* Names become one path component: no '/', no "..". */
static bool safe_component(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int volume_host_dir(struct kl *kl, const cJSON *pod, const cJSON *vol, char **ret, rss_error_t *err)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const char *ns = rss_json_str(meta, "namespace"), *uid = rss_json_str(meta, "uid"),
               *vname = rss_json_str(vol, "name");
    const cJSON *pvc = cJSON_GetObjectItemCaseSensitive(vol, "persistentVolumeClaim");
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(vol, "hostPath");
    _cleanup_free_ char *dir = NULL;
    if (pvc) {
        const char *claim = rss_json_str(pvc, "claimName");
        if (!safe_component(ns) || !safe_component(claim))
            return rss_error_make(err, RSS_E_INVALID, 0, "volume %s: bad claim name", vname);
        /* One directory per claim, shared by all nodes: storage behaves like a network volume
         * that follows the pod, and outlives pods and containers. */
        dir = rss_xasprintf("%s/%s/%s", kl->pv_dir, ns, claim);
        if (kl_mkdir_p(dir, err) < 0)
            return rss_error_wrap(err, "volume %s", vname);
    } else if (hp) {
        const char *path = rss_json_str(hp, "path"), *type = rss_json_str(hp, "type");
        if (!path || path[0] != '/')
            return rss_error_make(err, RSS_E_INVALID, 0, "volume %s: hostPath needs an absolute path", vname);
        if (strstr(path, "/../") || (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
            return rss_error_make(err, RSS_E_INVALID, 0, "volume %s: hostPath with '..'", vname);
        /* The simulated nodes share one host: each has its own tree for hostPaths (the world puts
         * the node's containerd socket directory at <root>/run/containerd). */
        dir = kl->host_root ? rss_xasprintf("%s%s", kl->host_root, path) : rss_xstrdup(path);
        if (type && !strcmp(type, "DirectoryOrCreate") && kl_mkdir_p(dir, err) < 0)
            return rss_error_wrap(err, "volume %s", vname);
        struct stat st;
        if (type && !strcmp(type, "Directory") && (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
            return rss_error_make(err, RSS_E_NOT_FOUND, 0,
                                  "volume %s: hostPath type check failed: %s is not a directory", vname, dir);
    } else if (cJSON_GetObjectItemCaseSensitive(vol, "emptyDir")) {
        if (!safe_component(uid) || !safe_component(vname))
            return rss_error_make(err, RSS_E_INVALID, 0, "volume %s: bad name", vname ? vname : "?");
        _cleanup_free_ char *pd = kl_pod_dir(kl, uid);
        dir = rss_xasprintf("%s/volumes/%s", pd, vname);
        if (kl_mkdir_p(dir, err) < 0)
            return rss_error_wrap(err, "volume %s", vname);
    } else {
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "volume %s: only persistentVolumeClaim, hostPath and emptyDir volumes exist in "
                              "the test world",
                              vname);
    }
    *ret = TAKE_PTR(dir);
    return 0;
}

int kl_mounts_resolve(struct kl *kl, const cJSON *pod, const cJSON *container, struct kl_mounts *ret,
                      rss_error_t *err)
{
    struct kl_mounts m = {0};
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(container, "volumeMounts"))
    {
        const char *name = rss_json_str(vm, "name"), *path = rss_json_str(vm, "mountPath"),
                   *sub = rss_json_str(vm, "subPath");
        const cJSON *vol = name ? find_volume(pod, name) : NULL;
        if (!vol || !path) {
            kl_mounts_clear(&m);
            return rss_error_make(err, RSS_E_INVALID, 0, "volumeMount %s: no such volume", name ? name : "?");
        }
        _cleanup_free_ char *host = NULL;
        if (volume_host_dir(kl, pod, vol, &host, err) < 0) {
            kl_mounts_clear(&m);
            return -1;
        }
        if (sub && *sub) {
            if (strstr(sub, "..") || sub[0] == '/') {
                kl_mounts_clear(&m);
                return rss_error_make(err, RSS_E_INVALID, 0, "volumeMount %s: bad subPath", name);
            }
            char *full = rss_xasprintf("%s/%s", host, sub);
            free(host);
            host = full;
            if (kl_mkdir_p(host, err) < 0) {
                kl_mounts_clear(&m);
                return -1;
            }
        }
        m.items = rss_xrealloc(m.items, (m.n + 1) * sizeof(*m.items));
        m.items[m.n++] = (struct rss_cri_mount){
            .container_path = rss_xstrdup(path),
            .host_path = TAKE_PTR(host),
            .readonly = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(vm, "readOnly")),
        };
    }
    for (size_t i = 0; i < kl->n_extra_mounts; i++) {
        const struct rss_cri_mount *x = &kl->extra_mounts[i];
        bool taken = false;
        for (size_t j = 0; j < m.n; j++)
            taken = taken || !strcmp(m.items[j].container_path, x->container_path);
        if (taken)
            continue;
        m.items = rss_xrealloc(m.items, (m.n + 1) * sizeof(*m.items));
        m.items[m.n++] = (struct rss_cri_mount){
            .container_path = rss_xstrdup(x->container_path),
            .host_path = rss_xstrdup(x->host_path),
            .readonly = x->readonly,
        };
    }
    *ret = m;
    return 0;
}

void kl_mounts_clear(struct kl_mounts *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free((char *)m->items[i].container_path);
        free((char *)m->items[i].host_path);
    }
    free(m->items);
    *m = (struct kl_mounts){0};
}

char *kl_json_hash(const cJSON *v)
{
    _cleanup_free_ char *s = cJSON_PrintUnformatted(v);
    uint64_t h = 1469598103934665603ULL; /* FNV-1a: stable across restarts, unlike pointer hashes */
    for (const char *p = s ? s : ""; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    return rss_xasprintf("%08llx", (unsigned long long)(h & 0xffffffffULL));
}

const char *kl_hostmap_lookup(const struct kl *kl, const char *image)
{
    if (!image)
        return NULL;
    for (size_t i = 0; i < kl->n_hostmaps; i++)
        if (!strcmp(kl->hostmaps[i].image, image))
            return kl->hostmaps[i].binary;
    return NULL;
}
