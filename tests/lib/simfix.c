/* simfix.c -- test fixture: a private kubesim per test program, plus its control endpoints. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "simfix.h"

int64_t simfix_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void simfix_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int simfix_write(const char *path, const char *text)
{
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fputs(text, f);
    if (fclose(f) != 0)
        return -1;
    /* Atomic replace: readers never see a half-written file. */
    return rename(tmp, path);
}

int simfix_start(struct simfix *s, const char *bin)
{
    memset(s, 0, sizeof(*s));
    char tmpl[] = "/tmp/rss-kubesim-XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return -1;
    }
    s->dir = rss_xstrdup(tmpl);
    s->kubeconfig = rss_xasprintf("%s/kubeconfig", s->dir);
    _cleanup_free_ char *log = rss_xasprintf("%s/kubesim.log", s->dir);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execl(bin, bin, "--dir", s->dir, "--port", "0", (char *)NULL);
        perror("exec kubesim");
        _exit(127);
    }
    s->pid = pid;
    _cleanup_free_ char *ready = rss_xasprintf("%s/ready", s->dir);
    for (int i = 0; i < 3000; i++) {
        if (access(ready, F_OK) == 0) {
            _cleanup_free_ char *pp = rss_xasprintf("%s/port", s->dir);
            FILE *f = fopen(pp, "r");
            if (f) {
                if (fscanf(f, "%d", &s->port) != 1)
                    s->port = 0;
                fclose(f);
            }
            return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "simfix: kubesim exited early (status %d); see %s\n", st, log);
            s->pid = 0;
            return -1;
        }
        simfix_sleep_ms(10);
    }
    fprintf(stderr, "simfix: kubesim not ready after 30 s\n");
    return -1;
}

void simfix_stop(struct simfix *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int st;
        for (int i = 0; i < 500; i++) {
            if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
                s->pid = 0;
                break;
            }
            simfix_sleep_ms(10);
        }
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
            s->pid = 0;
        }
    }
    if (s->dir && !getenv("RSS_KEEP_TMP")) {
        _cleanup_free_ char *cmd = rss_xasprintf("rm -rf '%s'", s->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "simfix: could not remove %s\n", s->dir);
    }
    free(s->dir);
    free(s->kubeconfig);
    s->dir = s->kubeconfig = NULL;
}

int simfix_ctl(struct rss_kube *k, const char *method, const char *path, const char *query, cJSON **ret)
{
    struct rss_kube_request r = {.method = method, .path = path, .query = query, .attempts = 1};
    if (!strcmp(method, "POST"))
        r.body = "{}";
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_call(k, &r, ret, &err) < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fprintf(stderr, "simfix: %s %s?%s: %s\n", method, path, query ? query : "", s);
        return -1;
    }
    return 0;
}

int simfix_start_kube(struct simfix *s, const char *bin, struct rss_kube **k)
{
    if (simfix_start(s, bin) < 0)
        return -1;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(s->kubeconfig, k, &err) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        fprintf(stderr, "simfix: a client of kubesim: %s\n", m);
        return -1;
    }
    return 0;
}

int simfix_create(struct rss_kube *k, const char *gv, const char *ns, const char *plural, const char *json)
{
    _cleanup_json_ cJSON *obj = cJSON_Parse(json);
    if (!obj) {
        fprintf(stderr, "simfix: not JSON: %s\n", json);
        return -1;
    }
    _cleanup_free_ char *path = rss_kube_path(gv, ns, plural, NULL, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_create(k, path, obj, NULL, &err) < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fprintf(stderr, "simfix: create %s: %s\n", json, s);
        return -1;
    }
    return 0;
}

static bool in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static bool resource_matches(const char *want, const char *res)
{
    if (!want)
        return true;
    if (want[0] == '!')
        return strcmp(res, want + 1) != 0;
    if (want[0] == '*')
        return strstr(res, want + 1) != NULL;
    return !strcmp(res, want);
}

int simfix_stats_count(struct rss_kube *k, const char *client, const char *verbs, const char *resource)
{
    _cleanup_json_ cJSON *st = NULL;
    if (simfix_ctl(k, "GET", "/_sim/stats", NULL, &st) < 0)
        return -1;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(st, "by"))
    {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "client"));
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "verb"));
        const char *res = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "resource"));
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(e, "count");
        if (!c || !v || !res || !cJSON_IsNumber(count))
            continue;
        if ((!client || !strcmp(c, client)) && (!verbs || in_list(verbs, v)) &&
            resource_matches(resource, res))
            n += count->valueint;
    }
    return n;
}

int simfix_listen_loopback(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, backlog) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}
