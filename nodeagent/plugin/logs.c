/* logs.c -- `kubectl rss logs NAME`: what every node's rssd logged about one RSS, merged in time order.
 *
 * Each rssd pod's log (pods/log with timestamps, the kubelet's own time of each line) is read and the
 * lines about NAME kept: with --log-format json, those whose "rss" is NAMESPACE/NAME (or whose "member"
 * is one of its pods); as text, those naming NAMESPACE/NAME or one of its pods (NAMESPACE/rss-NAME-N),
 * the words every rssd message about an RSS or a member starts with. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"
#include "rss/spec.h"
#include "rss/strbuf.h"
#include "plugin_internal.h"

struct line {
    char *ts; /* the kubelet's RFC 3339 time, as it wrote it */
    /* ts parsed: RFC3339Nano drops a fraction's trailing zeros (".5Z", ".51Z"), so the text does not sort */
    struct timespec at;
    bool parsed;
    const char *node, *pod;
    char *text;
};

/* s contains `word` not followed by a character that would make it a longer name. */
static bool names(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
        char c = p[n];
        if (!(isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_'))
            return true;
    }
    return false;
}

/* s names a member pod: "<ns>/rss-<name>-" followed by a digit. */
static bool names_member(const char *s, const char *member_prefix)
{
    size_t n = strlen(member_prefix);
    for (const char *p = strstr(s, member_prefix); p; p = strstr(p + 1, member_prefix))
        if (isdigit((unsigned char)p[n]))
            return true;
    return false;
}

static bool about(const char *text, const char *rss, const char *member_prefix, const char *pod_prefix)
{
    if (text[0] == '{') {
        _cleanup_json_ cJSON *o = cJSON_Parse(text);
        if (o && cJSON_IsObject(o)) {
            const char *r = rss_json_str(o, "rss"), *m = rss_json_str(o, "member");
            if (r)
                return !strcmp(r, rss);
            /* a member's line without its RSS (a fence): its pod name says which */
            return m && !strncmp(m, pod_prefix, strlen(pod_prefix)) &&
                   isdigit((unsigned char)m[strlen(pod_prefix)]);
        }
    }
    return names(text, rss) || names_member(text, member_prefix);
}

static int by_time(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    if (!x->parsed || !y->parsed)
        return x->parsed != y->parsed ? (x->parsed ? 1 : -1) : strcmp(x->ts, y->ts);
    if (x->at.tv_sec != y->at.tv_sec)
        return x->at.tv_sec < y->at.tv_sec ? -1 : 1;
    return x->at.tv_nsec < y->at.tv_nsec ? -1 : x->at.tv_nsec > y->at.tv_nsec;
}

int plugin_logs(const struct plugin_ctx *ctx, const char *name, long since_s, long tail, FILE *warn,
                rss_error_t *err)
{
    _cleanup_free_ char *rss = rss_xasprintf("%s/%s", ctx->ns, name);
    struct rss_spec who = {.name = (char *)name}; /* the names rssd derives need only that */
    _cleanup_free_ char *sts = rss_spec_statefulset_name(&who);
    _cleanup_free_ char *pod_prefix = rss_xasprintf("%s-", sts);
    _cleanup_free_ char *member_prefix = rss_xasprintf("%s/%s", ctx->ns, pod_prefix);
    _cleanup_free_ char *coll = rss_kube_path("v1", ctx->rssd_ns, "pods", NULL, NULL);
    struct rss_kube_list_opts lo = {.label_selector = "app.kubernetes.io/name=rssd"};
    _cleanup_json_ cJSON *pods = NULL;
    if (rss_kube_list(ctx->kube, coll, &lo, &pods, err) < 0)
        return rss_error_wrap(err, "listing rssd's pods in namespace %s (--rssd-namespace)", ctx->rssd_ns);
    struct line *lines = NULL;
    size_t n = 0, cap = 0;
    struct rss_strbuf failed = {0};
    size_t read = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(pods, "items"))
    {
        const char *pod = rss_json_str(p, "metadata.name"), *node = rss_json_str(p, "spec.nodeName");
        if (!pod)
            continue;
        _cleanup_free_ char *path = rss_kube_path("v1", ctx->rssd_ns, "pods", pod, "log");
        _cleanup_free_ char *query =
            since_s > 0 ? rss_xasprintf("container=rssd&timestamps=true&sinceSeconds=%ld", since_s)
                        : rss_xstrdup("container=rssd&timestamps=true");
        char *text = NULL;
        struct rss_kube_request req = {.method = "GET", .path = path, .query = query, .text = &text};
        rss_error_t e = NULL;
        if (rss_kube_call(ctx->kube, &req, NULL, &e) < 0) {
            /* One node's log unreadable (a pod not started, a kubelet away) leaves the others': say which. */
            _cleanup_free_ char *m = rss_error_string(e);
            rss_error_release(&e);
            rss_strbuf_item(&failed, "%s: %s", pod, m);
            continue;
        }
        read++;
        char *save = NULL;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            char *sp = strchr(l, ' ');
            if (!sp || !about(sp + 1, rss, member_prefix, pod_prefix))
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                lines = rss_xrealloc(lines, cap * sizeof(*lines));
            }
            lines[n] = (struct line){.ts = rss_xstrndup(l, (size_t)(sp - l)),
                                     .node = node ? node : "?",
                                     .pod = pod,
                                     .text = rss_xstrdup(sp + 1)};
            rss_error_t perr = NULL;
            lines[n].parsed = rss_time_parse(lines[n].ts, &lines[n].at, &perr) == 0;
            rss_error_release(&perr);
            n++;
        }
        free(text);
    }
    int r = 0;
    if (!read && failed.len) {
        r = rss_error_make(err, RSS_E_UNAVAILABLE, 0, "no rssd log could be read: %s", failed.s);
        goto out;
    }
    if (n) /* qsort's base must not be NULL, even for no element (UBSan) */
        qsort(lines, n, sizeof(*lines), by_time);
    size_t from = tail >= 0 && (size_t)tail < n ? n - (size_t)tail : 0;
    if (ctx->output) {
        _cleanup_json_ cJSON *arr = cJSON_CreateArray();
        for (size_t i = from; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "time", lines[i].ts);
            cJSON_AddStringToObject(o, "node", lines[i].node);
            cJSON_AddStringToObject(o, "pod", lines[i].pod);
            cJSON_AddStringToObject(o, "line", lines[i].text);
            cJSON_AddItemToArray(arr, o);
        }
        plugin_print_value(ctx, arr);
    } else {
        for (size_t i = from; i < n; i++)
            fprintf(ctx->out, "%-12s %s\n", lines[i].node, lines[i].text);
        if (!n)
            fprintf(ctx->out, "No line about %s in the logs of %zu rssd pod(s) in namespace %s.\n", rss, read,
                    ctx->rssd_ns);
    }
    if (failed.len)
        fprintf(warn, "warning: not read: %s\n", failed.s);
out:
    for (size_t i = 0; i < n; i++) {
        free(lines[i].ts);
        free(lines[i].text);
    }
    free(lines);
    free(failed.s);
    return r;
}
