/* kube_exec.c -- a kubeconfig user's `exec` credential plugin (client.authentication.k8s.io v1 and
 * v1beta1, as kubectl runs it: EKS, GKE, AKS, OIDC logins): run once when the client is made, its
 * ExecCredential's token or client certificate used for every request. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rss/base64.h"
#include "rss/cleanup.h"
#include "kube_internal.h"

extern char **environ;

#define EXEC_OUTPUT_MAX (1u << 20) /* an ExecCredential is a few KiB; more is not one */

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static bool known_api(const char *v)
{
    return v && (!strcmp(v, "client.authentication.k8s.io/v1") ||
                 !strcmp(v, "client.authentication.k8s.io/v1beta1"));
}

int kube_exec_check(const cJSON *exec, rss_error_t *err)
{
    const char *api = str(exec, "apiVersion"), *cmd = str(exec, "command");
    if (!api)
        return rss_error_make(err, RSS_E_INVALID, 0, "exec: no apiVersion");
    if (!known_api(api))
        return rss_error_make(
            err, RSS_E_UNSUPPORTED, 0,
            "exec: apiVersion '%s' is not supported (client.authentication.k8s.io/v1 or v1beta1)", api);
    if (!cmd || !*cmd)
        return rss_error_make(err, RSS_E_INVALID, 0, "exec: no command");
    const char *mode = str(exec, "interactiveMode");
    if (mode && strcmp(mode, "Never") && strcmp(mode, "IfAvailable") && strcmp(mode, "Always"))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "exec: interactiveMode '%s' is not Never, IfAvailable or Always", mode);
    if (!mode && !strcmp(api, "client.authentication.k8s.io/v1"))
        return rss_error_make(err, RSS_E_INVALID, 0, "exec: interactiveMode is required with %s", api);
    return 0;
}

/* KUBERNETES_EXEC_INFO, as client-go writes it: the plugin learns whether it may prompt, and the cluster
 * when provideClusterInfo asks for it. */
static char *exec_info(const cJSON *exec, const struct kube_config *cfg, bool interactive)
{
    _cleanup_json_ cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "ExecCredential");
    cJSON_AddStringToObject(o, "apiVersion", str(exec, "apiVersion"));
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddBoolToObject(spec, "interactive", interactive);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(exec, "provideClusterInfo"))) {
        cJSON *c = cJSON_AddObjectToObject(spec, "cluster");
        cJSON_AddStringToObject(c, "server", cfg->server);
        if (cfg->insecure)
            cJSON_AddTrueToObject(c, "insecure-skip-tls-verify");
        if (cfg->ca_data) {
            _cleanup_free_ char *b64 = rss_base64_encode(cfg->ca_data, cfg->ca_len);
            cJSON_AddStringToObject(c, "certificate-authority-data", b64);
        }
    }
    return cJSON_PrintUnformatted(o);
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Runs argv with env (stdin kept only when interactive, stderr the user's), its stdout read whole; -2 when
 * it could not be started (not installed: the install hint helps). */
static int run(char **argv, char **envp, bool interactive, char **out, rss_error_t *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return rss_error_errno(err, errno, "exec: pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    if (!interactive)
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (r != 0) {
        close(p[0]);
        rss_error_errno(err, r, "exec: running '%s'", argv[0]);
        return -2;
    }
    size_t cap = 4096, n = 0;
    char *buf = rss_xmalloc(cap);
    bool too_big = false;
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= EXEC_OUTPUT_MAX) {
                too_big = true;
                break;
            }
            cap *= 2;
            buf = rss_xrealloc(buf, cap);
        }
        ssize_t k = read(p[0], buf + n, cap - n - 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(p[0]);
    if (too_big)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    buf[n] = '\0';
    if (too_big) {
        free(buf);
        return rss_error_make(err, RSS_E_TOO_LARGE, 0, "exec: '%s' printed more than %u bytes", argv[0],
                              EXEC_OUTPUT_MAX);
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(buf);
        /* 127: posix_spawn's child could not exec it (a path that does not exist), as a shell says. */
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
            rss_error_make(err, RSS_E_NOT_FOUND, 0, "exec: '%s' could not be run (exit 127: not found?)",
                           argv[0]);
            return -2;
        }
        if (WIFEXITED(st))
            return rss_error_make(err, RSS_E_SYSTEM, 0, "exec: '%s' exited %d", argv[0], WEXITSTATUS(st));
        return rss_error_make(err, RSS_E_SYSTEM, 0, "exec: '%s' was killed by signal %d", argv[0],
                              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    }
    *out = buf;
    return 0;
}

int kube_exec_credential(struct kube_config *cfg, rss_error_t *err)
{
    const cJSON *exec = cfg->exec;
    if (kube_exec_check(exec, err) < 0)
        return -1;
    const char *api = str(exec, "apiVersion"), *mode = str(exec, "interactiveMode");
    if (!mode)
        mode = "IfAvailable";
    bool tty = isatty(STDIN_FILENO);
    if (!strcmp(mode, "Always") && !tty)
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "exec: '%s' needs a terminal (interactiveMode Always) and standard input is not one",
            str(exec, "command"));
    bool interactive = tty && strcmp(mode, "Never") != 0;

    /* argv: the command (a path with a slash resolved against the kubeconfig's directory when loaded),
     * then args. */
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(exec, "args"), *a;
    size_t na = 0;
    cJSON_ArrayForEach(a, args) na++;
    char **argv = rss_xcalloc(na + 2, sizeof(char *));
    size_t i = 0;
    argv[i++] = rss_xstrdup(str(exec, "command"));
    cJSON_ArrayForEach(a, args) argv[i++] = rss_xstrdup(cJSON_IsString(a) ? a->valuestring : "");

    /* env: ours, then the stanza's (it wins), then KUBERNETES_EXEC_INFO. */
    size_t ne = 0, nx = 0;
    while (environ[ne])
        ne++;
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(exec, "env"), *e;
    cJSON_ArrayForEach(e, env) nx++;
    char **envp = rss_xcalloc(ne + nx + 2, sizeof(char *));
    size_t j = 0;
    for (size_t k = 0; k < ne; k++) {
        bool overridden = !strncmp(environ[k], "KUBERNETES_EXEC_INFO=", 21);
        cJSON_ArrayForEach(e, env)
        {
            const char *name = str(e, "name");
            size_t l = name ? strlen(name) : 0;
            overridden |= l && !strncmp(environ[k], name, l) && environ[k][l] == '=';
        }
        if (!overridden)
            envp[j++] = rss_xstrdup(environ[k]);
    }
    cJSON_ArrayForEach(e, env)
    {
        const char *name = str(e, "name"), *value = str(e, "value");
        if (name && *name)
            envp[j++] = rss_xasprintf("%s=%s", name, value ? value : "");
    }
    _cleanup_free_ char *info = exec_info(exec, cfg, interactive);
    envp[j++] = rss_xasprintf("KUBERNETES_EXEC_INFO=%s", info);

    _cleanup_free_ char *out = NULL;
    int r = run(argv, envp, interactive, &out, err);
    if (r == -2 && str(exec, "installHint"))
        rss_error_wrap(err, "%s", str(exec, "installHint"));
    free_strv(argv);
    free_strv(envp);
    if (r < 0)
        return rss_error_wrap(err, "kubeconfig user's exec credential plugin");

    _cleanup_json_ cJSON *cred = cJSON_Parse(out);
    const char *kind = str(cred, "kind"), *got_api = str(cred, "apiVersion");
    if (!cJSON_IsObject(cred) || !kind || strcmp(kind, "ExecCredential") != 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "exec: '%s' did not print an ExecCredential",
                              str(exec, "command"));
    if (!got_api || strcmp(got_api, api) != 0)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "exec: '%s' printed apiVersion '%s', the kubeconfig asks for %s",
                              str(exec, "command"), got_api ? got_api : "(none)", api);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(cred, "status");
    const char *token = str(status, "token");
    const char *cert = str(status, "clientCertificateData"), *key = str(status, "clientKeyData");
    if ((cert && *cert) != (key && *key))
        return rss_error_make(
            err, RSS_E_INVALID, 0,
            "exec: '%s' gave a client certificate without its key, or a key without its certificate",
            str(exec, "command"));
    if (!(token && *token) && !(cert && *cert))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "exec: '%s' gave neither a token nor a client certificate",
                              str(exec, "command"));
    if (token && *token) {
        free(cfg->token);
        cfg->token = rss_xstrdup(token);
    }
    if (cert && *cert) {
        free(cfg->cert_data);
        free(cfg->key_data);
        cfg->cert_data = rss_xstrdup(cert);
        cfg->cert_len = strlen(cert);
        cfg->key_data = rss_xstrdup(key);
        cfg->key_len = strlen(key);
    }
    return 0;
}
