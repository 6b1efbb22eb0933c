/* report.c -- `kubectl rss report NAME`: a support bundle, one tar file of YAML documents and rssd's log
 * lines about the RSS, redacted, for a bug report or a colleague.
 *
 * What goes in: the RSS, its StatefulSet, its pods, the member records, its Events, rssd's Leases (which
 * node runs which rssd, who leads) and the lines every rssd logged about it (`kubectl rss logs`). What is
 * taken out: every container env `value` (a password is often one), the last-applied annotation (a copy
 * of the spec with those values) and managedFields. Secrets and ConfigMaps other than the member records
 * are never read. A part that cannot be read (RBAC, a kubelet away) is named in README.txt and the rest is
 * written: a partial report is better than none when something is broken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/protocol.h"
#include "rss/record.h"
#include "rss/spec.h"
#include "rss/strbuf.h"
#include "plugin_internal.h"

#define REDACTED "REDACTED by kubectl rss report"

/* --- a ustar archive, written as it goes --- */

static void octal(char *field, size_t len, unsigned long long v)
{
    snprintf(field, len, "%0*llo", (int)len - 1, v);
}

static int tar_add(FILE *f, const char *name, const char *data, size_t size, time_t mtime)
{
    char h[512] = {0};
    if (strlen(name) >= 100)
        return -1;
    memcpy(h, name, strlen(name));
    octal(h + 100, 8, 0644);
    octal(h + 108, 8, 0);
    octal(h + 116, 8, 0);
    octal(h + 124, 12, size);
    octal(h + 136, 12, (unsigned long long)mtime);
    memset(h + 148, ' ', 8);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof(h); i++)
        sum += (unsigned char)h[i];
    snprintf(h + 148, 8, "%06o", sum);
    h[155] = ' ';
    static const char pad[512];
    if (fwrite(h, 1, sizeof(h), f) != sizeof(h) || (size && fwrite(data, 1, size, f) != size) ||
        (size % 512 && fwrite(pad, 1, 512 - size % 512, f) != 512 - size % 512))
        return -1;
    return 0;
}

/* --- redaction --- */

static void drop_meta(cJSON *obj)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "annotations"),
                                            "kubectl.kubernetes.io/last-applied-configuration");
}

/* Every env value of every container list under `spec` (a pod's, or a template's pod spec). */
static size_t redact_env(cJSON *spec)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    size_t n = 0;
    for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
        cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[k]))
        {
            cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(
                                      c, "env")) if (cJSON_GetObjectItemCaseSensitive(e, "value"))
            {
                cJSON_ReplaceItemInObjectCaseSensitive(e, "value", cJSON_CreateString(REDACTED));
                n++;
            }
        }
    }
    return n;
}

/* The RSS keeps its pod template in spec.pod (rss-operator's format), the StatefulSet in
 * spec.template.spec, a pod in spec. */
static size_t redact(cJSON *obj)
{
    drop_meta(obj);
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    return redact_env(spec) + redact_env(cJSON_GetObjectItemCaseSensitive(spec, "pod")) +
           redact_env((cJSON *)rss_json_obj(spec, "template.spec"));
}

/* --- the parts --- */

struct report {
    FILE *tar;
    const char *dir;
    time_t now;
    struct rss_strbuf readme, missing;
    size_t redacted;
    int failed; /* a write to the archive failed */
};

static void add_text(struct report *r, const char *file, const char *text, size_t len)
{
    _cleanup_free_ char *name = rss_xasprintf("%s/%s", r->dir, file);
    if (tar_add(r->tar, name, text, len, r->now) < 0)
        r->failed = 1;
}

static void add_yaml(struct report *r, const char *file, const cJSON *v, const char *what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        r->failed = 1;
        return;
    }
    plugin_print_yaml(m, v);
    fclose(m);
    add_text(r, file, buf, len);
    free(buf);
    rss_strbuf_printf(&r->readme, "  %-16s %s\n", file, what);
}

/* GET or LIST path into file, each object redacted; a failure is named in README.txt. */
static void add_api(struct report *r, const struct plugin_ctx *ctx, const char *file, const char *path,
                    const struct rss_kube_list_opts *lo, const char *what)
{
    _cleanup_json_ cJSON *v = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if ((lo ? rss_kube_list(ctx->kube, path, lo, &v, &err) : rss_kube_get(ctx->kube, path, &v, &err)) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        rss_strbuf_printf(&r->missing, "  %s (%s): %s\n", file, what, m);
        return;
    }
    if (lo) {
        cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(v, "items")) r->redacted += redact(it);
        cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(v, "items");
        add_yaml(r, file, items, what);
        cJSON_Delete(items);
    } else {
        r->redacted += redact(v);
        add_yaml(r, file, v, what);
    }
}

int plugin_report(const struct plugin_ctx *ctx, const char *name, const char *file, rss_error_t *err)
{
    _cleanup_json_ cJSON *rss = NULL;
    if (plugin_get_rss(ctx, name, &rss, err) < 0)
        return -1;
    struct report r = {.now = time(NULL)};
    struct tm tm;
    gmtime_r(&r.now, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    _cleanup_free_ char *dir = rss_xasprintf("rss-report-%s-%s-%s", ctx->ns, name, stamp);
    r.dir = dir;
    _cleanup_free_ char *path_default = rss_xasprintf("%s.tar", dir);
    const char *out = file && *file ? file : path_default;
    _cleanup_fclose_ FILE *tar = fopen(out, "wx");
    if (!tar)
        return rss_error_errno(err, errno, "cannot create %s (an existing file is not overwritten)", out);
    r.tar = tar;

    r.redacted += redact(rss);
    add_yaml(&r, "rss.yaml", rss, "the ReplicatedStatefulSet, status included");
    struct rss_spec who = {.name = (char *)name}; /* the names rssd derives need only that */
    _cleanup_free_ char *sts = rss_spec_statefulset_name(&who);
    _cleanup_free_ char *sts_path = rss_kube_path("apps/v1", ctx->ns, "statefulsets", sts, NULL);
    add_api(&r, ctx, "statefulset.yaml", sts_path, NULL, "the StatefulSet rssd made");
    _cleanup_free_ char *pods = rss_kube_path("v1", ctx->ns, "pods", NULL, NULL);
    _cleanup_free_ char *sel = rss_xasprintf(RSS_LABEL_NAME "=%s", name);
    struct rss_kube_list_opts plo = {.label_selector = sel};
    add_api(&r, ctx, "pods.yaml", pods, &plo, "its member pods");
    _cleanup_free_ char *cms = rss_kube_path("v1", ctx->rssd_ns, "configmaps", NULL, NULL);
    _cleanup_free_ char *rsel =
        rss_xasprintf(RSS_LABEL_RECORD_NS "=%s," RSS_LABEL_RECORD_RSS "=%s", ctx->ns, name);
    struct rss_kube_list_opts rlo = {.label_selector = rsel};
    add_api(&r, ctx, "records.yaml", cms, &rlo, "the member records (desired, observed) in rssd's namespace");
    _cleanup_free_ char *evs = rss_kube_path("v1", ctx->ns, "events", NULL, NULL);
    _cleanup_free_ char *esel =
        rss_xasprintf("involvedObject.kind=ReplicatedStatefulSet,involvedObject.name=%s", name);
    struct rss_kube_list_opts elo = {.field_selector = esel};
    add_api(&r, ctx, "events.yaml", evs, &elo, "its Events (the API server keeps them an hour)");
    _cleanup_free_ char *leases = rss_kube_path("coordination.k8s.io/v1", ctx->rssd_ns, "leases", NULL, NULL);
    struct rss_kube_list_opts llo = {0};
    add_api(&r, ctx, "leases.yaml", leases, &llo,
            "rssd's Leases: each node's heartbeat and version, the leader");

    /* rssd's log lines about it, as `kubectl rss logs` prints them (a node unreadable is said inline). */
    char *logs = NULL;
    size_t logs_len = 0;
    FILE *m = open_memstream(&logs, &logs_len);
    if (m) {
        struct plugin_ctx lctx = *ctx;
        lctx.out = m;
        lctx.output = NULL;
        _cleanup_error_ rss_error_t lerr = NULL;
        if (plugin_logs(&lctx, name, 0, -1, m, &lerr) < 0) {
            _cleanup_free_ char *msg = rss_error_string(lerr);
            rss_strbuf_printf(&r.missing, "  rssd-logs.txt: %s\n", msg);
        }
        fclose(m);
        add_text(&r, "rssd-logs.txt", logs, logs_len);
        rss_strbuf_printf(&r.readme, "  %-16s %s\n", "rssd-logs.txt",
                          "every node's rssd lines about it, in time order (kubectl rss logs)");
        free(logs);
    }

    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    _cleanup_free_ char *readme = rss_xasprintf(
        "kubectl rss report of ReplicatedStatefulSet %s/%s, %s, kubectl-rss %s\n\n"
        "Files:\n%s\n"
        "Redacted: %zu container env value(s) replaced by \"" REDACTED "\"; the\n"
        "kubectl.kubernetes.io/last-applied-configuration annotation and managedFields dropped. Secrets and\n"
        "other ConfigMaps were not read. Hook output quoted in records, Events and logs is kept: read it\n"
        "before you share this file.\n\n"
        "Not read:\n%s",
        ctx->ns, name, when, RSS_VERSION, r.readme.s ? r.readme.s : "", r.redacted,
        r.missing.s ? r.missing.s : "  (nothing: every part was read)\n");
    add_text(&r, "README.txt", readme, strlen(readme));
    static const char end[1024];
    if (fwrite(end, 1, sizeof(end), tar) != sizeof(end))
        r.failed = 1;
    int rc = 0;
    if (r.failed || fflush(tar) != 0)
        rc = rss_error_errno(err, errno, "writing %s", out);
    else
        fprintf(ctx->out, "Wrote %s (%s): %zu env value(s) redacted%s%s", out, dir, r.redacted,
                r.missing.s ? "; not read:\n" : ".\n", r.missing.s ? r.missing.s : "");
    free(r.readme.s);
    free(r.missing.s);
    return rc;
}
