/* simfix.h -- test fixture: start and stop a private kubesim, and call its /_sim control endpoints. */
#ifndef RSS_TESTS_SIMFIX_H
#define RSS_TESTS_SIMFIX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "rss/kube.h"

struct simfix {
    pid_t pid;
    char *dir;        /* kubesim's --dir: ca.crt, token, kubeconfig, tokens, ... */
    char *kubeconfig; /* dir/kubeconfig */
    int port;
};

/* Starts `bin --dir <new temp dir> --port 0` and waits (up to 30 s) for dir/ready. Returns 0 or -1. */
int simfix_start(struct simfix *s, const char *bin);

/* simfix_start, then a client of that kubesim in *k (the caller frees it). Returns 0 or -1 (printed). */
int simfix_start_kube(struct simfix *s, const char *bin, struct rss_kube **k);

/* SIGTERMs kubesim, reaps it and removes the directory. Safe on a never-started fixture. */
void simfix_stop(struct simfix *s);

/* POST or GET a control endpoint, e.g. simfix_ctl(k, "POST", "/_sim/fail", "count=1&code=500", NULL).
 * Returns 0 or -1 (the error is printed). */
int simfix_ctl(struct rss_kube *k, const char *method, const char *path, const char *query, cJSON **ret);

/* cmocka tests: fails the test with err's message and `what` when r < 0 (r is evaluated once). */
#define SIMFIX_CHECK(r, err, what)                                                                           \
    do {                                                                                                     \
        if ((r) < 0) {                                                                                       \
            _cleanup_free_ char *simfix_msg_ = rss_error_string(*(err));                                     \
            fail_msg("%s: %s", (what), simfix_msg_);                                                         \
        }                                                                                                    \
    } while (0)

/* POSTs the object `json` to the collection gv/ns/plural (ns NULL: cluster-scoped). Returns 0 or -1
 * (the error is printed). */
int simfix_create(struct rss_kube *k, const char *gv, const char *ns, const char *plural, const char *json);

/* The requests kubesim counted since its last stats-reset (/_sim/stats "by") from client (NULL: any)
 * whose verb is one of the comma-separated `verbs` (NULL: any) and whose resource is `resource` (NULL:
 * any; "!x": any but x; "*x": any containing x). Returns the count, or -1 when the stats are unreadable. */
int simfix_stats_count(struct rss_kube *k, const char *client, const char *verbs, const char *resource);

/* CLOCK_MONOTONIC in ns (the same clock kubesim's leases-log uses). */
int64_t simfix_mono_ns(void);

/* Writes text to path (truncating); returns 0 or -1. */
int simfix_write(const char *path, const char *text);

/* Sleeps ms milliseconds. */
void simfix_sleep_ms(long ms);

/* A listening TCP socket on 127.0.0.1 at a free port (tests only ever listen on loopback): returns
 * the fd (CLOEXEC) and sets *port, or -1. */
int simfix_listen_loopback(int backlog, int *port);

#endif
