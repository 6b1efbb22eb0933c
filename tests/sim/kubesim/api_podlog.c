/* api_podlog.c -- GET pods/NAME/log: a container's log from the CRI log file the world's kubelet keeps,
 * as the real apiserver relays it from the kubelet (text/plain, one line per line the container wrote).
 *
 * Served when kubesim knows where the nodes keep their logs (--pod-logs DIR: DIR/<node>/kubelet/logs/
 * <ns>_<pod>_<uid>/<container>/<restart>.log, the kubelet's layout). Parameters as the real server takes
 * them: container, previous, timestamps, tailLines, sinceSeconds, limitBytes; their errors with the real
 * messages (400 for a pod without a node, an unknown or unnamed container, no previous instance). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_internal.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/strbuf.h"

const char *ks_pod_logs_root;

/* The restart numbers of DIR's N.log files: the highest in *last, the one before it in *prev (-1: none). */
static void log_files(const char *dir, long *last, long *prev)
{
    *last = *prev = -1;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long n = strtol(e->d_name, &end, 10);
        if (end == e->d_name || strcmp(end, ".log") || n < 0)
            continue;
        if (n > *last) {
            *prev = *last;
            *last = n;
        } else if (n > *prev) {
            *prev = n;
        }
    }
    closedir(d);
}

/* "2026-12-07T04:53:05.928835793Z" -> seconds since the epoch, or -1. */
static long long rfc3339_s(const char *ts)
{
    struct tm tm = {0};
    const char *end = strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return -1;
    return (long long)timegm(&tm);
}

/* The file's lines (CRI format "TIME STREAM P|F text"), partial pieces joined, filtered and shaped as the
 * parameters ask, appended to out. */
static void render(FILE *f, bool timestamps, long long since, long tail, long long limit,
                   struct rss_strbuf *out)
{
    struct rss_strbuf all = {0};
    size_t *starts = NULL, n = 0, cap = 0;
    _cleanup_free_ char *line = NULL, *ts = NULL;
    size_t lcap = 0;
    struct rss_strbuf cur = {0};
    bool open = false;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp1 || !sp2 || (sp2[1] != 'P' && sp2[1] != 'F') || (sp2[2] != ' ' && sp2[2] != '\0'))
            continue; /* not a CRI line: the kubelet would not have written it */
        const char *text = sp2[2] ? sp2 + 3 : "";
        if (!open) {
            free(ts);
            ts = strndup(line, (size_t)(sp1 - line));
            cur.len = 0;
            if (cur.s)
                cur.s[0] = '\0';
            open = true;
        }
        rss_strbuf_printf(&cur, "%s", text);
        if (sp2[1] == 'P')
            continue;
        open = false;
        if (since >= 0 && rfc3339_s(ts) < since)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            starts = rss_xrealloc(starts, cap * sizeof(*starts));
        }
        starts[n++] = all.len;
        if (timestamps)
            rss_strbuf_printf(&all, "%s ", ts);
        rss_strbuf_printf(&all, "%s\n", cur.s ? cur.s : "");
    }
    size_t from = tail >= 0 && (size_t)tail < n ? starts[n - (size_t)tail] : 0;
    if (tail == 0)
        from = all.len;
    size_t take = all.len - from;
    if (limit >= 0 && (size_t)limit < take)
        take = (size_t)limit;
    if (take)
        rss_strbuf_printf(out, "%.*s", (int)take, all.s + from);
    free(starts);
    free(all.s);
    free(cur.s);
}

static bool nonneg_param(struct ctx *c, const char *key, long long *v)
{
    const char *s = api_q(c, key);
    *v = -1;
    if (!s)
        return true;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || x < 0) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "%s: invalid value '%s'", key, s);
        return false;
    }
    *v = x;
    return true;
}

void api_pod_log(struct ctx *c)
{
    if (strcmp(c->req->method, "GET")) {
        api_reply_err(c->reply, 405, "MethodNotAllowed", NULL, NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    _cleanup_free_ char *node = NULL, *uid = NULL, *names = NULL, *container = NULL;
    ks_lock();
    struct ks_snap *s = ks_store_get("", "pods", c->ns, c->name);
    if (s) {
        const char *v = rss_json_str(s->obj, "spec.nodeName");
        node = v ? strdup(v) : NULL;
        v = rss_json_str(s->obj, "metadata.uid");
        uid = v ? strdup(v) : NULL;
        struct rss_strbuf b = {0};
        const cJSON *ct;
        int count = 0;
        const char *only = NULL;
        cJSON_ArrayForEach(ct, rss_json_path(s->obj, "spec.containers"))
        {
            const char *nm = rss_json_str(ct, "name");
            if (!nm)
                continue;
            rss_strbuf_printf(&b, "%s%s", count ? " " : "", nm);
            only = nm;
            count++;
        }
        const char *want = api_q(c, "container");
        if (want && *want)
            container = strdup(want);
        else if (count == 1)
            container = strdup(only);
        names = b.s ? b.s : strdup("");
    }
    ks_unlock();
    if (!s) {
        api_not_found(c->reply, c->res, c->name);
        return;
    }
    if (!container) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "a container name must be specified for pod %s, choose one of: [%s]", c->name, names);
        return;
    }
    bool known = false;
    for (char *save = NULL, *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save))
        known |= !strcmp(t, container);
    if (!known) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "container %s is not valid for pod %s",
                      container, c->name);
        return;
    }
    if (!node || !*node) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL, "pod %s does not have a host assigned",
                      c->name);
        return;
    }
    if (!ks_pod_logs_root) {
        api_reply_err(c->reply, 503, "ServiceUnavailable", NULL, NULL, NULL,
                      "kubesim was started without --pod-logs: no kubelet to read pod logs from");
        return;
    }
    long long since, tail, limit;
    if (!nonneg_param(c, "sinceSeconds", &since) || !nonneg_param(c, "tailLines", &tail) ||
        !nonneg_param(c, "limitBytes", &limit))
        return;
    _cleanup_free_ char *dir = rss_xasprintf("%s/%s/kubelet/logs/%s_%s_%s/%s", ks_pod_logs_root, node, c->ns,
                                             c->name, uid ? uid : "", container);
    long last, prev;
    log_files(dir, &last, &prev);
    bool previous = api_qbool(c, "previous");
    long which = previous ? prev : last;
    if (which < 0) {
        if (previous)
            api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                          "previous terminated container \"%s\" in pod \"%s\" not found", container, c->name);
        else
            api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                          "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating", container,
                          c->name);
        return;
    }
    _cleanup_free_ char *path = rss_xasprintf("%s/%ld.log", dir, which);
    _cleanup_fclose_ FILE *f = fopen(path, "r");
    struct rss_strbuf out = {0};
    if (f)
        render(f, api_qbool(c, "timestamps"), since >= 0 ? (long long)time(NULL) - since : -1, (long)tail,
               limit, &out);
    c->reply->code = 200;
    c->reply->content_type = "text/plain";
    c->reply->body = out.s ? out.s : strdup("");
}
