/* metrics_rss.c -- the leader's per-RSS gauges (phase, what it waits for, held members), from the status it
 * writes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rss/json.h"
#include "rss/metrics.h"
#include "rss/cleanup.h"

struct entry {
    char *ns, *name, *phase, *waiting; /* waiting: the WaitingForMembers reason, NULL when not waiting */
    long held;
    struct entry *next;
};

/* A leader handles a few hundred RSSs at most; a list is enough and keeps the order stable. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;

static void entry_free(struct entry *e)
{
    free(e->ns);
    free(e->name);
    free(e->phase);
    free(e->waiting);
    free(e);
}

static struct entry **find(const char *ns, const char *name)
{
    struct entry **p = &entries;
    while (*p && (strcmp((*p)->ns, ns) || strcmp((*p)->name, name)))
        p = &(*p)->next;
    return p;
}

void rss_metrics_rss_status(const char *ns, const char *name, const cJSON *status)
{
    if (!ns || !name || !status)
        return;
    const char *phase = rss_json_str(status, "phase");
    const char *waiting = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *t = rss_json_str(c, "type"), *s = rss_json_str(c, "status");
        if (t && s && !strcmp(t, "WaitingForMembers") && !strcmp(s, "True"))
            waiting = rss_json_str(c, "reason");
    }
    long held = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "memberStatus")) held +=
        cJSON_IsTrue(rss_json_path(c, "leftOut.held"));
    pthread_mutex_lock(&lock);
    struct entry **p = find(ns, name);
    if (!*p) {
        *p = rss_xcalloc(1, sizeof(**p));
        (*p)->ns = rss_xstrdup(ns);
        (*p)->name = rss_xstrdup(name);
    }
    struct entry *e = *p;
    free(e->phase);
    free(e->waiting);
    e->phase = rss_xstrdup(phase ? phase : "Unknown");
    e->waiting = waiting ? rss_xstrdup(waiting) : NULL;
    e->held = held;
    pthread_mutex_unlock(&lock);
}

void rss_metrics_rss_forget(const char *ns, const char *name)
{
    pthread_mutex_lock(&lock);
    struct entry **p = find(ns, name);
    if (*p) {
        struct entry *e = *p;
        *p = e->next;
        entry_free(e);
    }
    pthread_mutex_unlock(&lock);
}

void rss_metrics_rss_clear(void)
{
    pthread_mutex_lock(&lock);
    while (entries) {
        struct entry *e = entries;
        entries = e->next;
        entry_free(e);
    }
    pthread_mutex_unlock(&lock);
}

/* Label values come from names Kubernetes validated (DNS labels, CamelCase reasons), but a value is
 * escaped anyway: one bad byte must not make the whole scrape unparsable. */
static void label(struct rss_strbuf *o, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            rss_strbuf_printf(o, "\\%c", *v);
        else if (*v == '\n')
            rss_strbuf_printf(o, "\\n");
        else
            rss_strbuf_printf(o, "%c", *v);
    }
}

static void series(struct rss_strbuf *o, const char *metric, const struct entry *e, const char *key,
                   const char *value, long n)
{
    rss_strbuf_printf(o, "%s{rss_namespace=\"", metric);
    label(o, e->ns);
    rss_strbuf_printf(o, "\",rss=\"");
    label(o, e->name);
    if (key) {
        rss_strbuf_printf(o, "\",%s=\"", key);
        label(o, value);
    }
    rss_strbuf_printf(o, "\"} %ld\n", n);
}

void rss_metrics_rss_render(struct rss_strbuf *o)
{
    pthread_mutex_lock(&lock);
    rss_strbuf_printf(o, "# HELP rssd_rss_phase The phase of each RSS this process leads (status.phase), 1 "
                         "for the current one.\n# TYPE rssd_rss_phase gauge\n");
    for (const struct entry *e = entries; e; e = e->next)
        series(o, "rssd_rss_phase", e, "phase", e->phase, 1);
    rss_strbuf_printf(o, "# HELP rssd_rss_waiting 1 while an RSS this process leads waits (condition "
                         "WaitingForMembers), with its reason.\n# TYPE rssd_rss_waiting gauge\n");
    for (const struct entry *e = entries; e; e = e->next)
        if (e->waiting)
            series(o, "rssd_rss_waiting", e, "reason", e->waiting, 1);
    rss_strbuf_printf(o, "# HELP rssd_rss_members_held Members held back because they came back with "
                         "newer data than the seed.\n# TYPE rssd_rss_members_held gauge\n");
    for (const struct entry *e = entries; e; e = e->next)
        series(o, "rssd_rss_members_held", e, NULL, NULL, e->held);
    pthread_mutex_unlock(&lock);
}
