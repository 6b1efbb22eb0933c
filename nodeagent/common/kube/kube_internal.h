/* kube_internal.h -- what the kube_*.c files share with each other and with their unit tests. */
#ifndef RSS_KUBE_INTERNAL_H
#define RSS_KUBE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "rss/error.h"
#include "rss/kube.h"

/* The connection settings, from a kubeconfig or the in-cluster service account. */
struct kube_config {
    char *server;  /* "https://host:port", no trailing slash */
    char *ns;      /* namespace, never NULL after loading */
    char *ca_file; /* CA bundle path, or NULL */
    char *ca_data; /* CA PEM in memory (decoded certificate-authority-data), or NULL */
    size_t ca_len;
    char *cert_file, *key_file; /* client certificate and key paths, or NULL */
    char *cert_data, *key_data; /* ...or in memory (PEM) */
    size_t cert_len, key_len;
    bool insecure;    /* insecure-skip-tls-verify */
    char *token;      /* a static bearer token, or NULL */
    char *token_file; /* a token file, re-read periodically, or NULL */
    cJSON *exec; /* the user's exec stanza (its command resolved), run by kube_exec_credential; or NULL */
    char *as;    /* impersonate this user (kubeconfig `as`, --as), or NULL */
    char **as_groups; /* ...and these groups (`as-groups`, --as-group) */
    size_t n_as_groups;
    char *proxy;           /* the cluster's proxy-url, or NULL */
    char *tls_server_name; /* the cluster's tls-server-name (--tls-server-name), or NULL */
};

void kube_config_clear(struct kube_config *cfg);

/* kube_config.c: loads `path` (YAML or JSON kubeconfig); relative paths resolve against its directory. */
int kube_config_load_kubeconfig(const char *path, struct kube_config *cfg, rss_error_t *err);

/* kube_config.c: the same from text already read; `dir` resolves relative paths (may be NULL). */
int kube_config_parse_kubeconfig(const char *text, const char *dir, struct kube_config *cfg,
                                 rss_error_t *err);

/* kube_config.c: parses kubeconfig text (YAML or JSON) into its JSON form (caller frees). */
int kube_config_parse_root(const char *text, cJSON **ret, rss_error_t *err);

/* kube_config.c: the settings of a parsed kubeconfig for o's context (NULL: current-context), cluster and
 * user (NULL: the context's); o may be NULL. The other overrides of o are not applied here. */
int kube_config_from_root(const cJSON *root, const char *dir, const struct rss_kube_opts *o,
                          struct kube_config *cfg, rss_error_t *err);

/* kube_config.c: reads a whole file of at most `max` bytes (NUL-terminated; caller frees). */
int kube_read_file(const char *path, size_t max, char **ret, size_t *len, rss_error_t *err);

/* kube_config_merge.c: kubectl's loading rules: o->kubeconfig alone when given; else every file of the
 * $KUBECONFIG list merged (missing files skipped; the first file to name a cluster, user, context or
 * current-context wins); else ~/.kube/config. Then the entries o names (kube_config_from_root).
 * RSS_E_NOT_FOUND when there is no file to load. */
int kube_config_load_opts(const struct rss_kube_opts *o, struct kube_config *cfg, rss_error_t *err);

/* kube_config_merge.c: the same for a path and a context alone. */
int kube_config_load_merged(const char *path, const char *context, struct kube_config *cfg, rss_error_t *err);

/* kube_config.c: in-cluster config from the environment and the service account directory `sa_dir`. */
int kube_config_in_cluster(const char *sa_dir, struct kube_config *cfg, rss_error_t *err);

/* kube_exec.c: whether an exec stanza is one this client runs (apiVersion v1 or v1beta1, a command, a valid
 * interactiveMode, required with v1). */
int kube_exec_check(const cJSON *exec, rss_error_t *err);

/* kube_exec.c: runs cfg->exec once, as kubectl does (args, env, KUBERNETES_EXEC_INFO, stdin only when
 * interactive), and sets cfg's token or client certificate from its ExecCredential. */
int kube_exec_credential(struct kube_config *cfg, rss_error_t *err);

/* kube_config.c: reads a token file (trimmed content; caller frees). */
int kube_read_token_file(const char *path, char **ret, rss_error_t *err);

/* kube_yaml.c: parses the first document of a YAML stream (libyaml) into cJSON. Scalars become
 * strings, except an unquoted null, ~ or empty value (JSON null); aliases are copies of their anchor.
 * Errors (malformed YAML, a duplicate or non-scalar key, an unknown alias, too deep or too large):
 * RSS_E_INVALID with the line number. */
int kube_yaml_parse(const char *text, cJSON **ret, rss_error_t *err);

#define RSS_KUBE_POOL_MAX 16

/* kube_mux.c: the one thread and curl multi handle that carry all of a client's transfers. */
struct kube_xfer;
struct kube_mux {
    pthread_mutex_t lock; /* guards pending, started, quit and each transfer's done, cancel and buffer */
    pthread_t thread;
    bool started, quit;
    int efd;                   /* eventfd: wakes the mux thread from curl_multi_poll */
    CURLM *multi;              /* the mux thread's alone, once started */
    struct kube_xfer *pending; /* submitted, not yet in the multi */
    struct kube_xfer *active;  /* in the multi (the mux thread's alone) */
};

/* One transfer. The owner sets h's options (not the write and header callbacks: it gives write_fn and
 * header_fn instead, which run on the mux thread) and keeps the struct alive until it is done. */
struct kube_xfer {
    CURL *h;
    curl_write_callback write_fn; /* kube_mux_perform only */
    void *write_ud;
    curl_write_callback header_fn; /* may be NULL */
    void *header_ud;
    int64_t deadline_ns; /* CLOCK_MONOTONIC; 0 = none. Ended with CURLE_OPERATION_TIMEDOUT at it, even
                            while curl still waits for a connection */
    /* kube_mux.c's own */
    struct kube_mux *mux;
    struct kube_xfer *next;
    pthread_cond_t cond;
    bool stream, done, cancel, overflow;
    CURLcode result;
    char *sbuf; /* a stream's bytes not yet taken by kube_mux_next */
    size_t slen, scap;
    long http; /* a stream's HTTP status, as of its last bytes */
};

int kube_mux_init(struct kube_mux *m);  /* -1: no eventfd (errno) */
void kube_mux_free(struct kube_mux *m); /* no transfer may be running */

/* Runs x to its end and returns curl's result; CURLE_OUT_OF_MEMORY when the mux thread could not start. */
CURLcode kube_mux_perform(struct kube_mux *m, struct kube_xfer *x);

/* A stream: kube_mux_start, then kube_mux_next until it returns 0 (the transfer ended: x->result says
 * how, x->overflow when the consumer fell 64 MiB behind) or the owner gives up; then always
 * kube_mux_end, which cancels a running transfer and waits until the mux lets go of it.
 * kube_mux_next: 1 with the bytes received so far (caller frees *data; *http is the status), 0 at the
 * end, -1 when nothing came within wait_ms. */
int kube_mux_start(struct kube_mux *m, struct kube_xfer *x);
int kube_mux_next(struct kube_mux *m, struct kube_xfer *x, long wait_ms, char **data, size_t *len,
                  long *http);
void kube_mux_end(struct kube_mux *m, struct kube_xfer *x);

struct rss_kube {
    struct kube_config cfg;
    long timeout_ms;
    size_t max_body;
    int attempts;
    long max_backoff_ms;
    char *user_agent;

    pthread_mutex_t lock;          /* guards the token cache and the handle pool */
    char *token;                   /* current bearer token (static or last read from token_file) */
    int64_t token_read_ns;         /* CLOCK_MONOTONIC of the last read of token_file */
    void *pool[RSS_KUBE_POOL_MAX]; /* idle CURL easy handles */
    size_t npool;
    bool http1; /* RSS_KUBE_HTTP1=1: no HTTP/2 (one connection per transfer, as before 2 December) */
    struct kube_mux mux;
    /* With a tls-server-name (kube_http_target): the URL every request starts with, its host being that
     * name; the CURLOPT_CONNECT_TO entry that sends the connection to the server URL's own host and port;
     * and the Host header, the server URL's. NULL without one. */
    char *base_url;
    struct curl_slist *connect_to;
    char *host_header;
};

/* kube_http.c: maps an HTTP error response to an rss error (the single place that knows HTTP codes):
 * decodes a Status body when there is one. `what` (e.g. "GET /api/v1/...") prefixes the message. */
int kube_http_error(long http_code, const char *body, size_t len, const char *what, rss_error_t *err);

/* kube_http.c: maps a curl failure. too_large: the size cap aborted the transfer. */
int kube_curl_error(int curl_code, const char *errbuf, bool too_large, const char *what, rss_error_t *err);

/* kube_http.c: how long to wait before attempt number attempt+1 (attempt = attempts made so far, >= 1),
 * or -1 for no retry. http_code 0 means no response (then curl_code says why). retry_after_s < 0
 * when the response had no Retry-After. */
long kube_retry_delay_ms(int attempt, int max_attempts, long http_code, int curl_code, bool idempotent,
                         long retry_after_s, long max_backoff_ms);

/* kube_http.c: a delay drawn evenly from [ms/2, ms], so that clients failed together retry apart. */
long kube_jitter_ms(long ms);

/* kube_http.c: curl_global_init, once per process (pthread_once). */
int kube_http_global_init(rss_error_t *err);

/* kube_http.c: what a request's URL and connection are: with cfg.tls_server_name, fills base_url,
 * connect_to and host_header from the server URL (RSS_E_INVALID when it is not a URL). */
int kube_http_target(struct rss_kube *kube, rss_error_t *err);

/* kube_http.c: frees the idle handles of the pool. */
void kube_http_pool_free(struct rss_kube *kube);

/* kube_http.c: the bearer token to send now (caller frees; NULL = none). force re-reads the file. */
char *kube_token(struct rss_kube *kube, bool force);

/* kube_http.c: streams a GET (a watch) to on_data until the server ends it, *stop becomes true,
 * on_data returns < 0, or nothing arrives for stall_ms.
 * Returns 0 when the server ended the stream cleanly; otherwise negative with: RSS_E_CANCELLED
 * (stop or on_data; on_data's own error is kept as the cause when it set one), RSS_E_TIMEOUT
 * (stall), the HTTP-mapped error for a non-2xx answer (e.g. RSS_E_GONE), RSS_E_UNAVAILABLE (the
 * connection broke). *got_bytes tells whether any body byte arrived. */
typedef int (*rss_kube_data_fn)(void *userdata, const char *data, size_t len, rss_error_t *err);
int kube_stream(struct rss_kube *kube, const char *path, const char *query, const atomic_bool *stop,
                long stall_ms, rss_kube_data_fn on_data, void *userdata, bool *got_bytes, rss_error_t *err);

/* kube_mux.c: appends n bytes to a NUL-terminated buffer that grows by doubling (response bodies, watch
 * lines). Returns false and appends nothing when the result would exceed max bytes. */
bool kube_buf_append(char **data, size_t *len, size_t *cap, size_t max, const char *p, size_t n);

/* kube_watch.c: splits a byte stream into '\n'-terminated lines, holding a partial line until the
 * rest arrives. Lines longer than max are an error (RSS_E_TOO_LARGE). */
struct kube_framer {
    char *buf;
    size_t len, cap, max;
};
typedef int (*rss_kube_line_fn)(void *userdata, char *line, size_t len, rss_error_t *err);
int kube_framer_feed(struct kube_framer *f, const char *data, size_t len, rss_kube_line_fn fn, void *userdata,
                     rss_error_t *err);
void kube_framer_reset(struct kube_framer *f); /* drops a partial line; keeps the buffer */
void kube_framer_free(struct kube_framer *f);

/* kube_client.c: appends "&key=<url-encoded value>" (no '&' when *q is empty) to the string *q. */
void kube_query_add(char **q, const char *key, const char *value);

#endif
