/* plugin_internal.h -- what the files of kubectl-rss share: the connection, the namespace, and one function
 * per command. */
#ifndef RSS_PLUGIN_INTERNAL_H
#define RSS_PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "rss/error.h"
#include "rss/kube.h"

struct plugin_ctx {
    struct rss_kube *kube;
    const char *ns;      /* -n, else the context's namespace */
    const char *rssd_ns; /* --rssd-namespace: where rssd keeps its heartbeat Leases (rssd-system) */
    bool yes;            /* --yes: no confirmation for force-seed */
    const char *output;  /* -o json or yaml: a read command prints that instead of its table; NULL: table */
    FILE *out;
};

/* Every command prints what it did or found on ctx->out and returns 0, or fails with *err set (the
 * caller prints it and exits 1). */
int plugin_status(const struct plugin_ctx *ctx, const char *name, rss_error_t *err);
int plugin_force_seed(const struct plugin_ctx *ctx, const char *name, const char *pod, rss_error_t *err);
int plugin_suspend(const struct plugin_ctx *ctx, const char *name, bool suspend, rss_error_t *err);
int plugin_events(const struct plugin_ctx *ctx, const char *name, rss_error_t *err);
int plugin_history(const struct plugin_ctx *ctx, const char *name, rss_error_t *err);
int plugin_agents(const struct plugin_ctx *ctx, rss_error_t *err);
/* logs.c: the lines about NAME from every rssd pod's log, in time order; since_s > 0: only that many
 * seconds back; tail >= 0: only the last `tail` of them. A pod whose log cannot be read is named on
 * `warn`; an error only when none could be read. */
int plugin_logs(const struct plugin_ctx *ctx, const char *name, long since_s, long tail, FILE *warn,
                rss_error_t *err);
/* report.c: the support bundle of NAME written to `file` (NULL: rss-report-NS-NAME-TIME.tar here). */
int plugin_report(const struct plugin_ctx *ctx, const char *name, const char *file, rss_error_t *err);
/* switchover.c: kubectl rss switchover NAME [--to POD] (to NULL: the most advanced standby). */
int plugin_switchover(const struct plugin_ctx *ctx, const char *name, const char *to, rss_error_t *err);
int plugin_release_hold(const struct plugin_ctx *ctx, const char *name, const char *pod, rss_error_t *err);

/* events.c: the RSS's Events, oldest first, at most `last` of them (0: all); shared with status. */
int plugin_print_events(const struct plugin_ctx *ctx, const char *name, size_t last, rss_error_t *err);

/* annotate.c: the memberStatus entry of pod in rss's status, or NULL. */
const cJSON *plugin_member_status(const cJSON *rss, const char *pod);
/* annotate.c: after the admin's confirmation (--yes, or the name `pod` typed on the terminal),
 * sets annotation key=value on the RSS `name`, on the resourceVersion of `rss` as it was checked (a
 * conflict says to run the command again). */
int plugin_annotate(const struct plugin_ctx *ctx, const char *name, const cJSON *rss, const char *key,
                    const char *value, const char *pod, rss_error_t *err);

/* get.c: prints v (NULL: null) on ctx->out as -o asks: indented JSON, or YAML (yaml.c). */
void plugin_print_value(const struct plugin_ctx *ctx, const cJSON *v);

/* yaml.c: v as YAML (block style, strings double-quoted), ending with a newline. */
void plugin_print_yaml(FILE *f, const cJSON *v);

/* get.c: GET of the RSS `name` in ctx->ns; a 404 becomes a message that says which one. */
int plugin_get_rss(const struct plugin_ctx *ctx, const char *name, cJSON **ret, rss_error_t *err);

#endif
