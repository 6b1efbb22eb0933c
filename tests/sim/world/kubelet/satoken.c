/* satoken.c -- a pod's ServiceAccount credentials: the projected token volume (token from the TokenRequest
 * API, ca.crt, namespace) and, for host processes, a kubeconfig pointing at it.
 *
 * A runtime container gets the directory at /var/run/secrets/kubernetes.io/serviceaccount, as from the
 * real kubelet; a host process has no such path, so it gets a kubeconfig naming the token file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kubelet.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"

#define TOKEN_SECONDS 3607 /* the kubelet's default for projected tokens */

static int write_file(const char *path, const char *text, rss_error_t *err)
{
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return rss_error_errno(err, errno, "open %s", tmp);
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    int e = errno;
    if (close(fd) < 0 || w != (ssize_t)len)
        return rss_error_errno(err, w < 0 ? e : EIO, "write %s", tmp);
    if (rename(tmp, path) < 0)
        return rss_error_errno(err, errno, "rename %s", path);
    return 0;
}

/* The certificate-authority path of the kubelet's own kubeconfig (the world's kubesim writes it). */
static char *ca_path(const char *kubeconfig)
{
    _cleanup_fclose_ FILE *f = fopen(kubeconfig, "re");
    char line[4096];
    while (f && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "certificate-authority:");
        if (!p)
            continue;
        p += strlen("certificate-authority:");
        p += strspn(p, " \t\"'");
        p[strcspn(p, "\"'\r\n")] = '\0';
        return rss_xstrdup(p);
    }
    return NULL;
}

/* The whole file at path (caller frees), or NULL. */
static char *read_all(const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = rss_xcalloc(cap, 1);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            cap *= 2;
            buf = rss_xrealloc(buf, cap);
        }
    }
    buf[len] = '\0';
    return buf;
}

char *kl_pod_sa_dir(struct kl *kl, const cJSON *pod, bool *none, rss_error_t *err)
{
    const char *ns = rss_json_str(pod, "metadata.namespace"), *name = rss_json_str(pod, "metadata.name");
    const char *uid = rss_json_str(pod, "metadata.uid");
    const char *sa = rss_json_str(pod, "spec.serviceAccountName");
    if (!sa || !*sa)
        sa = rss_json_str(pod, "spec.serviceAccount");
    if (!sa || !*sa)
        sa = "default";
    *none = false;
    if (!ns || !name || !uid) {
        rss_error_make(err, RSS_E_INVALID, 0, "pod without namespace, name or uid");
        return NULL;
    }
    if (cJSON_IsFalse(rss_json_path(pod, "spec.automountServiceAccountToken"))) {
        *none = true;
        return NULL;
    }
    _cleanup_free_ char *pd = kl_pod_dir(kl, uid);
    _cleanup_free_ char *dir = rss_xasprintf("%s/serviceaccount", pd);
    if (kl_mkdir_p(dir, err) < 0)
        return NULL;
    _cleanup_free_ char *tok_p = rss_xasprintf("%s/token", dir);
    /* As the kubelet's token manager: a token is requested again only when 80 % of its lifetime has
     * passed, so a container restarted while the API server is slow or cut off starts at once. */
    struct stat st;
    _cleanup_free_ char *ns_p0 = rss_xasprintf("%s/namespace", dir);
    if (stat(tok_p, &st) == 0 && access(ns_p0, R_OK) == 0 &&
        time(NULL) - st.st_mtime < TOKEN_SECONDS * 8 / 10)
        return TAKE_PTR(dir);
    _cleanup_free_ char *path = rss_xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, sa);
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "apiVersion", "authentication.k8s.io/v1");
    cJSON_AddStringToObject(req, "kind", "TokenRequest");
    cJSON *spec = cJSON_AddObjectToObject(req, "spec");
    cJSON_AddNumberToObject(spec, "expirationSeconds", TOKEN_SECONDS);
    cJSON *ref = cJSON_AddObjectToObject(spec, "boundObjectRef");
    cJSON_AddStringToObject(ref, "kind", "Pod");
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "name", name);
    cJSON_AddStringToObject(ref, "uid", uid);
    _cleanup_json_ cJSON *resp = NULL;
    if (rss_kube_create(kl->kube, path, req, &resp, err) < 0) {
        /* A container restarted while the API server is unreachable: the real kubelet's projected
         * volume still holds the token it mounted before (valid for an hour), so the container
         * starts; so here, with this pod's token of its previous start. */
        if (access(tok_p, R_OK) == 0) {
            rss_log_error(RSS_LOG_WARN, err, "token of ServiceAccount %s/%s: keeping the one mounted before",
                          ns, sa);
            rss_error_release(err);
            return TAKE_PTR(dir);
        }
        rss_error_wrap(err, "token of ServiceAccount %s/%s", ns, sa);
        return NULL;
    }
    const char *token = rss_json_str(resp, "status.token");
    if (!token || !*token) {
        rss_error_make(err, RSS_E_INVALID, 0, "TokenRequest for %s/%s answered no token", ns, sa);
        return NULL;
    }
    if (write_file(tok_p, token, err) < 0)
        return NULL;
    /* ca.crt and namespace complete the volume, as the kubelet's projected kube-api-access volume. */
    _cleanup_free_ char *ns_p = rss_xasprintf("%s/namespace", dir);
    if (write_file(ns_p, ns, err) < 0)
        return NULL;
    _cleanup_free_ char *ca = ca_path(kl->kubeconfig);
    _cleanup_free_ char *ca_text = ca ? read_all(ca) : NULL;
    if (ca_text) {
        _cleanup_free_ char *ca_p = rss_xasprintf("%s/ca.crt", dir);
        if (write_file(ca_p, ca_text, err) < 0)
            return NULL;
    }
    return TAKE_PTR(dir);
}

char *kl_pod_kubeconfig(struct kl *kl, const cJSON *pod, rss_error_t *err)
{
    const char *ns = rss_json_str(pod, "metadata.namespace"), *uid = rss_json_str(pod, "metadata.uid");
    const char *sa = rss_json_str(pod, "spec.serviceAccountName");
    if (!sa || !*sa)
        sa = rss_json_str(pod, "spec.serviceAccount");
    if (!sa || !*sa)
        sa = "default";
    bool none = false;
    _cleanup_free_ char *dir = kl_pod_sa_dir(kl, pod, &none, err);
    if (!dir && !none)
        return NULL;
    _cleanup_free_ char *pd = kl_pod_dir(kl, uid);
    _cleanup_free_ char *sa_dir = rss_xasprintf("%s/serviceaccount", pd);
    if (none && kl_mkdir_p(sa_dir, err) < 0)
        return NULL;
    _cleanup_free_ char *cfg_p = rss_xasprintf("%s/kubeconfig", sa_dir);
    /* no token mounted: the process is anonymous */
    _cleanup_free_ char *user = none ? rss_xstrdup("") : rss_xasprintf("    tokenFile: %s/token\n", dir);
    _cleanup_free_ char *ca = ca_path(kl->kubeconfig);
    _cleanup_free_ char *ca_line =
        ca ? rss_xasprintf("    certificate-authority: %s\n", ca) : rss_xstrdup("");
    _cleanup_free_ char *cfg = rss_xasprintf("apiVersion: v1\n"
                                             "kind: Config\n"
                                             "clusters:\n"
                                             "- name: world\n"
                                             "  cluster:\n"
                                             "    server: %s\n"
                                             "%s"
                                             "users:\n"
                                             "- name: %s\n"
                                             "  user:\n"
                                             "%s"
                                             "contexts:\n"
                                             "- name: pod\n"
                                             "  context:\n"
                                             "    cluster: world\n"
                                             "    user: %s\n"
                                             "    namespace: %s\n"
                                             "current-context: pod\n",
                                             rss_kube_server(kl->kube), ca_line, sa, user, sa, ns);
    if (write_file(cfg_p, cfg, err) < 0)
        return NULL;
    return rss_xstrdup(cfg_p);
}
