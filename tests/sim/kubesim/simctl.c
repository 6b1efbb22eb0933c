/* simctl.c -- the test-only /_sim control endpoints: fault injection (fail, stall, drop, pause,
 * watch-cut, compact), the Lease write log and request statistics (contracts.md section A). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

atomic_bool ks_shutting_down;

enum rule_kind { RULE_FAIL, RULE_STALL, RULE_DROP };

struct rule {
    enum rule_kind kind;
    long count;
    int code, retry_after;
    long ms;
    char *path, *verb;
    struct rule *next;
};

static const char *const verbs[] = {"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE"};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

/* One counter of requests by client (User-Agent), verb and resource (and namespace, in by_ns). */
struct by_key {
    char *client, *verb, *resource, *ns;
    unsigned long count;
    struct by_key *next;
};

/* All under ks_lock(). */
static struct {
    struct rule *rules;
    bool paused;
    unsigned cut_gen;
    unsigned long counts[NVERBS];
    unsigned long total;
    struct by_key *by;     /* counts by client, verb and resource */
    struct by_key *by_ns;  /* the same split by the namespace in the path ("" = none: cluster-wide) */
    struct by_key *events; /* watch events sent, by client and resource (verb "EVENT") */
} sim;

bool ks_sim_paused(void)
{
    return sim.paused;
}

unsigned ks_sim_cut_gen(void)
{
    return sim.cut_gen;
}

/* The resource a request path names: "pods", "pods/status", "leases", "replicatedstatefulsets";
 * "discovery" for /api, /apis, /version, /openapi and the like. The namespace in the path goes to
 * nsbuf ("" when there is none: a cluster-scoped object, or a LIST/WATCH of every namespace). */
static void resource_of(const char *path, char *buf, size_t n, char *nsbuf, size_t nsn)
{
    snprintf(nsbuf, nsn, "%s", "");
    const char *rest = NULL;
    if (!strncmp(path, "/api/v1/", 8)) {
        rest = path + 8;
    } else if (!strncmp(path, "/apis/", 6)) {
        const char *s1 = strchr(path + 6, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
        rest = s2 ? s2 + 1 : NULL;
    }
    if (!rest || !*rest) {
        snprintf(buf, n, "discovery");
        return;
    }
    char segs[5][128];
    size_t k = 0;
    for (const char *p = rest; *p && k < 5;) {
        size_t len = strcspn(p, "/");
        snprintf(segs[k++], sizeof(segs[0]), "%.*s", (int)(len < 127 ? len : 127), p);
        p += len;
        while (*p == '/')
            p++;
    }
    size_t i = 0;
    if (k >= 3 && !strcmp(segs[0], "namespaces")) {
        i = 2; /* namespaces/NS/RESOURCE[/NAME[/SUB]] */
        snprintf(nsbuf, nsn, "%s", segs[1]);
    }
    if (k - i >= 3)
        snprintf(buf, n, "%.120s/%.120s", segs[i], segs[i + 2]);
    else
        snprintf(buf, n, "%.120s", segs[i]);
}

/* Adds one to the counter of (client, verb, res, ns) in *list (ks_lock held); ns NULL: not split. */
static void count_in(struct by_key **list, const char *client, const char *verb, const char *res,
                     const char *ns)
{
    struct by_key *b = *list;
    while (b && (strcmp(b->client, client) || strcmp(b->verb, verb) || strcmp(b->resource, res) ||
                 (ns && strcmp(b->ns, ns))))
        b = b->next;
    if (!b) {
        b = rss_xcalloc(1, sizeof(*b));
        b->client = rss_xstrdup(client);
        b->verb = rss_xstrdup(verb);
        b->resource = rss_xstrdup(res);
        b->ns = ns ? rss_xstrdup(ns) : NULL;
        b->next = *list;
        *list = b;
    }
    b->count++;
}

void ks_sim_count(const char *verb, const char *path, const char *client)
{
    char res[256], ns[128];
    resource_of(path ? path : "", res, sizeof(res), ns, sizeof(ns));
    if (!client || !*client)
        client = "-";
    ks_lock();
    for (size_t i = 0; i < NVERBS; i++) {
        if (!strcmp(verbs[i], verb))
            sim.counts[i]++;
    }
    sim.total++;
    count_in(&sim.by, client, verb, res, NULL);
    count_in(&sim.by_ns, client, verb, res, ns);
    ks_unlock();
}

void ks_sim_count_event(const char *client, const char *plural)
{
    count_in(&sim.events, client, "EVENT", plural, NULL);
}

static void list_free(struct by_key **list)
{
    while (*list) {
        struct by_key *next = (*list)->next;
        free((*list)->client);
        free((*list)->verb);
        free((*list)->resource);
        free((*list)->ns);
        free(*list);
        *list = next;
    }
}

static void by_free(void)
{
    list_free(&sim.by);
    list_free(&sim.by_ns);
    list_free(&sim.events);
}

static bool rule_matches(const struct rule *r, const char *method, const char *alt, const char *path)
{
    if (r->count <= 0)
        return false;
    if (r->path && strncmp(path, r->path, strlen(r->path)))
        return false;
    if (r->verb && strcasecmp(r->verb, method) && (!alt || strcasecmp(r->verb, alt)))
        return false;
    return true;
}

/* Takes the first matching rule of a kind and uses one of its count. */
static struct rule *take(enum rule_kind kind, const char *method, const char *alt, const char *path)
{
    for (struct rule *r = sim.rules; r; r = r->next) {
        if (r->kind == kind && rule_matches(r, method, alt, path)) {
            r->count--;
            return r;
        }
    }
    return NULL;
}

enum ks_fault ks_sim_faults(const char *method, const char *alt, const char *path, int *code,
                            int *retry_after)
{
    ks_lock();
    while (sim.paused && !atomic_load(&ks_shutting_down))
        ks_wait(ks_mono_ns() + 500000000LL);
    struct rule *r = take(RULE_DROP, method, alt, path);
    if (r) {
        ks_unlock();
        return KS_FAULT_DROP;
    }
    r = take(RULE_STALL, method, alt, path);
    long ms = r ? r->ms : 0;
    ks_unlock();
    if (ms > 0) {
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    ks_lock();
    r = take(RULE_FAIL, method, alt, path);
    if (r) {
        *code = r->code;
        *retry_after = r->retry_after;
    }
    ks_unlock();
    return r ? KS_FAULT_FAIL : KS_FAULT_NONE;
}

static void add_rule(const struct ks_req *req, enum rule_kind kind, struct ks_reply *reply)
{
    const char *count = req->query(req->query_ctx, "count");
    const char *code = req->query(req->query_ctx, "code");
    const char *ms = req->query(req->query_ctx, "ms");
    const char *ra = req->query(req->query_ctx, "retryAfter");
    const char *path = req->query(req->query_ctx, "path");
    const char *verb = req->query(req->query_ctx, "verb");
    struct rule *r = rss_xcalloc(1, sizeof(*r));
    r->kind = kind;
    r->count = count ? atol(count) : 1;
    r->code = code ? atoi(code) : 500;
    r->ms = ms ? atol(ms) : 0;
    r->retry_after = ra ? atoi(ra) : 0;
    r->path = path && *path ? rss_xstrdup(path) : NULL;
    r->verb = verb && *verb ? rss_xstrdup(verb) : NULL;
    if ((kind == RULE_FAIL && (r->code < 100 || r->code > 599)) || (kind == RULE_STALL && r->ms <= 0)) {
        free(r->path);
        free(r->verb);
        free(r);
        ks_reply_status(reply, 400, "BadRequest", "bad parameters");
        return;
    }
    ks_lock();
    struct rule **p = &sim.rules;
    while (*p)
        p = &(*p)->next;
    *p = r;
    ks_unlock();
    rss_log_info("sim: %s count=%ld code=%d ms=%ld path=%s verb=%s",
                 kind == RULE_FAIL    ? "fail"
                 : kind == RULE_STALL ? "stall"
                                      : "drop",
                 r->count, r->code, r->ms, r->path ? r->path : "*", r->verb ? r->verb : "*");
    ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
}

/* Lock held. One array NAME of {client, verb, resource[, namespace], count}. */
static void add_counts(cJSON *o, const char *name, const struct by_key *list, bool with_ns)
{
    cJSON *arr = cJSON_AddArrayToObject(o, name);
    for (const struct by_key *b = list; b; b = b->next) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "client", b->client);
        cJSON_AddStringToObject(e, "verb", b->verb);
        cJSON_AddStringToObject(e, "resource", b->resource);
        if (with_ns)
            cJSON_AddStringToObject(e, "namespace", b->ns);
        cJSON_AddNumberToObject(e, "count", (double)b->count);
        cJSON_AddItemToArray(arr, e);
    }
}

static cJSON *stats(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *req = cJSON_AddObjectToObject(o, "requests");
    ks_lock();
    for (size_t i = 0; i < NVERBS; i++)
        cJSON_AddNumberToObject(req, verbs[i], (double)sim.counts[i]);
    cJSON_AddNumberToObject(o, "total", (double)sim.total);
    add_counts(o, "by", sim.by, false);
    add_counts(o, "byNamespace", sim.by_ns, true);
    add_counts(o, "watchEvents", sim.events, false);
    ks_unlock();
    return o;
}

void ks_simctl_handle(const struct ks_req *req, struct ks_reply *reply)
{
    const char *what = req->path + strlen("/_sim/");
    bool post = !strcmp(req->method, "POST");
    if (post && !strcmp(what, "fail")) {
        add_rule(req, RULE_FAIL, reply);
    } else if (post && !strcmp(what, "stall")) {
        add_rule(req, RULE_STALL, reply);
    } else if (post && !strcmp(what, "drop")) {
        add_rule(req, RULE_DROP, reply);
    } else if (post && (!strcmp(what, "pause") || !strcmp(what, "resume"))) {
        ks_lock();
        sim.paused = what[0] == 'p';
        ks_broadcast();
        ks_unlock();
        rss_log_info("sim: %s", what);
        ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
    } else if (post && !strcmp(what, "watch-cut")) {
        ks_lock();
        sim.cut_gen++;
        ks_broadcast();
        ks_unlock();
        rss_log_info("sim: watch-cut");
        ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
    } else if (post && !strcmp(what, "compact")) {
        ks_lock();
        ks_store_compact();
        ks_unlock();
        rss_log_info("sim: compact");
        ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
    } else if (post && !strcmp(what, "stats-reset")) {
        ks_lock();
        memset(sim.counts, 0, sizeof(sim.counts));
        sim.total = 0;
        by_free();
        ks_unlock();
        ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
    } else if (post && !strcmp(what, "clear")) {
        ks_lock();
        for (struct rule *r = sim.rules; r; r = r->next)
            r->count = 0;
        ks_unlock();
        ks_reply_json(reply, 200, ks_status_new(200, NULL, "ok"));
    } else if (!strcmp(req->method, "GET") && !strcmp(what, "leases-log")) {
        ks_lock();
        cJSON *log = ks_store_leases_log();
        ks_unlock();
        ks_reply_json(reply, 200, log);
    } else if (!strcmp(req->method, "GET") && !strcmp(what, "stats")) {
        ks_reply_json(reply, 200, stats());
    } else {
        ks_reply_status(reply, 404, "NotFound", "unknown control endpoint %s %s", req->method, req->path);
    }
}

void ks_simctl_free(void)
{
    struct rule *r = sim.rules;
    while (r) {
        struct rule *next = r->next;
        free(r->path);
        free(r->verb);
        free(r);
        r = next;
    }
    sim.rules = NULL;
    by_free();
}
