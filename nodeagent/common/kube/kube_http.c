/* kube_http.c -- the HTTP transport of the Kubernetes client: libcurl requests, the one place where curl
 * and HTTP codes become rss errors, retries with jittered backoff, the bearer token cache, body size caps,
 * and streaming for watches. The transfers themselves run on the client's one connection (kube_mux.c). */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kube_internal.h"
#include "rss/metrics.h"

#define TOKEN_REREAD_NS (60LL * 1000 * 1000 * 1000)

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* --- error conversion: the only place that knows HTTP and curl codes --- */

static enum rss_errc code_for_http(long http, const char *reason)
{
    if (http == 409)
        return reason && !strcmp(reason, "AlreadyExists") ? RSS_E_EXISTS : RSS_E_CONFLICT;
    if (http == 404)
        return RSS_E_NOT_FOUND;
    if (http == 410)
        return RSS_E_GONE;
    if (http == 401 || http == 403)
        return RSS_E_UNAUTHORIZED;
    if (http == 413)
        return RSS_E_TOO_LARGE;
    if (http == 429 || (http >= 500 && http <= 599))
        return RSS_E_UNAVAILABLE;
    if (http >= 400 && http <= 499)
        return RSS_E_INVALID;
    return RSS_E_INTERNAL; /* 1xx/3xx: we neither follow redirects nor expect them */
}

int kube_http_error(long http_code, const char *body, size_t len, const char *what, rss_error_t *err)
{
    _cleanup_json_ cJSON *st = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const char *reason = NULL, *message = NULL;
    long code = http_code;
    if (cJSON_IsObject(st)) {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(st, "kind");
        if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "Status")) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(st, "reason");
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(st, "code");
            reason = cJSON_IsString(r) ? r->valuestring : NULL;
            message = cJSON_IsString(m) ? m->valuestring : NULL;
            /* The Status code is what the API server meant (e.g. a 410 inside a 200 watch stream). */
            if (cJSON_IsNumber(c) && c->valueint >= 100 && c->valueint <= 599)
                code = c->valueint;
        }
    }
    return rss_error_make(err, code_for_http(code, reason), (int)code, "%s: HTTP %ld%s%s%s%s", what, code,
                          reason ? " " : "", reason ? reason : "", message ? ": " : "",
                          message ? message : "");
}

int kube_curl_error(int curl_code, const char *errbuf, bool too_large, const char *what, rss_error_t *err)
{
    const char *detail = errbuf && *errbuf ? errbuf : curl_easy_strerror((CURLcode)curl_code);
    enum rss_errc c;
    if (too_large) {
        return rss_error_make(err, RSS_E_TOO_LARGE, 0, "%s: response body over the size cap", what);
    }
    switch ((CURLcode)curl_code) {
    case CURLE_OPERATION_TIMEDOUT:
        c = RSS_E_TIMEOUT;
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
        /* curl's words name the mismatch or the unknown issuer, not what failed. */
        return rss_error_make(err, RSS_E_UNAVAILABLE, 0,
                              "%s: TLS verification of the server's certificate failed: %s", what, detail);
    case CURLE_OUT_OF_MEMORY:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_NOT_BUILT_IN:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        c = RSS_E_INTERNAL;
        break;
    case CURLE_ABORTED_BY_CALLBACK:
        c = RSS_E_CANCELLED;
        break;
    default:
        /* Refused, reset, TLS handshake or verification failure, cut body: the server is not
         * (trustworthily) reachable now. */
        c = RSS_E_UNAVAILABLE;
        break;
    }
    return rss_error_make(err, c, 0, "%s: %s", what, detail);
}

long kube_retry_delay_ms(int attempt, int max_attempts, long http_code, int curl_code, bool idempotent,
                         long retry_after_s, long max_backoff_ms)
{
    if (attempt >= max_attempts)
        return -1;
    bool retry = false;
    if (http_code == 429 || (http_code >= 500 && http_code <= 599 && http_code != 501))
        retry = true;
    else if (http_code == 0) {
        switch ((CURLcode)curl_code) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
            retry = true; /* nothing was sent */
            break;
        case CURLE_GOT_NOTHING:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_PARTIAL_FILE:
            retry = idempotent; /* the request may have been applied */
            break;
        default:
            break;
        }
    }
    if (!retry)
        return -1;
    if (retry_after_s >= 0) {
        long ms = retry_after_s > max_backoff_ms / 1000 ? max_backoff_ms : retry_after_s * 1000;
        return ms > 0 ? ms : 100;
    }
    long ms = 200;
    for (int i = 1; i < attempt && ms < max_backoff_ms; i++)
        ms *= 2;
    return ms < max_backoff_ms ? ms : max_backoff_ms;
}

long kube_jitter_ms(long ms)
{
    static _Thread_local unsigned seed;
    if (!seed)
        seed = (unsigned)rss_clock_mono_ns() ^ (unsigned)(uintptr_t)&seed;
    if (ms < 2)
        return ms;
    return ms / 2 + (long)(rand_r(&seed) % (unsigned)(ms / 2 + 1));
}

/* --- token cache --- */

char *kube_token(struct rss_kube *kube, bool force)
{
    pthread_mutex_lock(&kube->lock);
    if (kube->cfg.token_file) {
        int64_t now = rss_clock_mono_ns();
        if (force || !kube->token || now - kube->token_read_ns >= TOKEN_REREAD_NS) {
            _cleanup_error_ rss_error_t e = NULL;
            char *t = NULL;
            if (kube_read_token_file(kube->cfg.token_file, &t, &e) == 0) {
                free(kube->token);
                kube->token = t;
            } else {
                /* Keep the old token: a kubelet rewriting the file is a transient state. */
                rss_log_error(RSS_LOG_DEBUG, &e, "kube: token file");
            }
            kube->token_read_ns = now;
        }
    }
    char *t = kube->token ? rss_xstrdup(kube->token) : NULL;
    pthread_mutex_unlock(&kube->lock);
    return t;
}

/* --- curl handles --- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void)
{
    curl_init_result = curl_global_init(CURL_GLOBAL_ALL);
}

int kube_http_global_init(rss_error_t *err)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_result != CURLE_OK)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "curl_global_init: %s",
                              curl_easy_strerror(curl_init_result));
    return 0;
}

static CURL *handle_get(struct rss_kube *kube)
{
    CURL *h = NULL;
    pthread_mutex_lock(&kube->lock);
    if (kube->npool > 0)
        h = kube->pool[--kube->npool];
    pthread_mutex_unlock(&kube->lock);
    if (h)
        curl_easy_reset(h); /* the connections themselves live in the mux's multi handle */
    else
        h = curl_easy_init();
    return h;
}

static void handle_put(struct rss_kube *kube, CURL *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&kube->lock);
    if (kube->npool < RSS_KUBE_POOL_MAX) {
        kube->pool[kube->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&kube->lock);
    if (h)
        curl_easy_cleanup(h);
}

void kube_http_pool_free(struct rss_kube *kube)
{
    for (size_t i = 0; i < kube->npool; i++)
        curl_easy_cleanup(kube->pool[i]);
    kube->npool = 0;
}

struct body {
    char *data;
    size_t len, cap, max;
    bool too_large;
};

static size_t body_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct body *b = ud;
    size_t n = size * nmemb;
    if (!kube_buf_append(&b->data, &b->len, &b->cap, b->max, ptr, n)) {
        b->too_large = true;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    return n;
}

static size_t header_cb(char *buf, size_t size, size_t nitems, void *ud)
{
    long *retry_after = ud;
    size_t n = size * nitems;
    static const char name[] = "retry-after:";
    if (n > sizeof(name) - 1 && !strncasecmp(buf, name, sizeof(name) - 1)) {
        char tmp[32];
        size_t l = n - (sizeof(name) - 1);
        if (l >= sizeof(tmp))
            l = sizeof(tmp) - 1;
        memcpy(tmp, buf + sizeof(name) - 1, l);
        tmp[l] = '\0';
        char *end;
        long v = strtol(tmp, &end, 10);
        /* Only the delta-seconds form; an HTTP date falls back to our own backoff. */
        if (end != tmp && v >= 0)
            *retry_after = v;
    }
    return n;
}

/* A tls-server-name (kubeconfig, --tls-server-name) is the name the TLS layer uses, for SNI and to check the
 * server's certificate, while the connection goes to the server URL's host and the Host header stays the
 * URL's, as Go's tls.Config.ServerName does for kubectl. libcurl has no option for the TLS name alone: it
 * takes it from the URL. So the URL gets the name as its host, CURLOPT_CONNECT_TO sends the connection to
 * the real host and port (resolved by curl as usual, the same through a proxy: its CONNECT names the
 * real host too), and an explicit Host header (HTTP/2's :authority) keeps the URL's. CURLOPT_RESOLVE
 * could do the same only for one fixed address, and would put the name into the DNS cache the whole
 * multi handle shares. */
int kube_http_target(struct rss_kube *kube, rss_error_t *err)
{
    const char *name = kube->cfg.tls_server_name;
    if (!name || strncmp(kube->cfg.server, "https://", 8) != 0)
        return 0; /* plain http has no TLS to name */
    _cleanup_free_ char *tls_host = strchr(name, ':') ? rss_xasprintf("[%s]", name) : rss_xstrdup(name);
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *url = NULL;
    int r = 0;
    if (!u || curl_url_set(u, CURLUPART_URL, kube->cfg.server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        r = rss_error_make(err, RSS_E_INVALID, 0, "the server '%s' is not a URL", kube->cfg.server);
        goto out;
    }
    /* The Host header as Go writes it: with the URL's port only when the URL gives one. */
    bool given_port = curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK;
    if (!given_port && curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        r = rss_error_make(err, RSS_E_INVALID, 0, "the server '%s' has no port", kube->cfg.server);
        goto out;
    }
    if (curl_url_set(u, CURLUPART_HOST, tls_host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        r = rss_error_make(err, RSS_E_INVALID, 0, "tls-server-name '%s' is not a host name", name);
        goto out;
    }
    kube->base_url = rss_xstrdup(url);
    size_t n = strlen(kube->base_url);
    while (n > 0 && kube->base_url[n - 1] == '/')
        kube->base_url[--n] = '\0';
    {
        /* In a block: the `goto out`s above must not jump into the scope of a cleanup variable. */
        _cleanup_free_ char *entry = rss_xasprintf("%s:%s:%s:%s", tls_host, port, host, port);
        kube->connect_to = curl_slist_append(NULL, entry);
        if (!kube->connect_to)
            abort();
    }
    kube->host_header =
        given_port ? rss_xasprintf("Host: %s:%s", host, port) : rss_xasprintf("Host: %s", host);
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return r;
}

/* The options every request shares: URL, TLS, auth, headers. */
static int setup(struct rss_kube *kube, CURL *h, const char *url, const char *method,
                 const char *content_type, const char *accept, const char *token, struct curl_slist **headers,
                 char *errbuf)
{
    struct kube_config *c = &kube->cfg;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* HTTP/2 where TLS negotiates it (kube-apiserver does), HTTP/1.1 otherwise. */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                     kube->http1 ? (long)CURL_HTTP_VERSION_1_1 : (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, kube->user_agent);
    /* The cluster's proxy-url, for every host: kubectl does not read no_proxy for it, so the empty list
     * keeps libcurl from reading it either. Without one libcurl reads https_proxy/no_proxy, as client-go
     * does. */
    if (c->proxy) {
        curl_easy_setopt(h, CURLOPT_PROXY, c->proxy);
        curl_easy_setopt(h, CURLOPT_NOPROXY, "");
    }
    if (kube->connect_to)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, kube->connect_to);
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (c->ca_data) {
        struct curl_blob blob = {.data = c->ca_data, .len = c->ca_len, .flags = CURL_BLOB_NOCOPY};
        /* Trust only the cluster CA, not the system store as well. */
        curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    } else if (c->ca_file) {
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    }
    if (c->cert_data) {
        struct curl_blob blob = {.data = c->cert_data, .len = c->cert_len, .flags = CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (c->cert_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
    }
    if (c->key_data) {
        struct curl_blob blob = {.data = c->key_data, .len = c->key_len, .flags = CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (c->key_file) {
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
    }

    struct curl_slist *hl = NULL;
    _cleanup_free_ char *accept_h = rss_xasprintf("Accept: %s", accept ? accept : "application/json");
    hl = curl_slist_append(hl, accept_h);
    if (kube->host_header)
        hl = curl_slist_append(hl, kube->host_header);
    /* No "Expect: 100-continue" round trip before bodies over 1 KiB. */
    hl = curl_slist_append(hl, "Expect:");
    if (content_type) {
        _cleanup_free_ char *ct = rss_xasprintf("Content-Type: %s", content_type);
        hl = curl_slist_append(hl, ct);
    }
    /* kubectl sends no credentials over plain http, nor do we. */
    if (token && !strncmp(url, "https://", 8)) {
        _cleanup_free_ char *auth = rss_xasprintf("Authorization: Bearer %s", token);
        hl = curl_slist_append(hl, auth);
    }
    /* Impersonation (kubectl --as/--as-group, the kubeconfig's as/as-groups): the server authorizes the
     * request as that user, if the caller may impersonate. */
    if (c->as) {
        _cleanup_free_ char *as = rss_xasprintf("Impersonate-User: %s", c->as);
        hl = curl_slist_append(hl, as);
        for (size_t i = 0; i < c->n_as_groups; i++) {
            _cleanup_free_ char *g = rss_xasprintf("Impersonate-Group: %s", c->as_groups[i]);
            hl = curl_slist_append(hl, g);
        }
    }
    if (!hl)
        return -1;
    *headers = hl;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);

    if (!strcmp(method, "GET"))
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else if (!strcmp(method, "POST"))
        curl_easy_setopt(h, CURLOPT_POST, 1L);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    return 0;
}

static char *make_url(struct rss_kube *kube, const char *path, const char *query)
{
    const char *base = kube->base_url ? kube->base_url : kube->cfg.server;
    if (query && *query)
        return rss_xasprintf("%s%s?%s", base, path, query);
    return rss_xasprintf("%s%s", base, path);
}

/* Connecting, the TLS handshake included, has its own limit, also without a request timeout. */
static long connect_timeout_ms(long timeout_ms)
{
    return timeout_ms > 0 && timeout_ms < 10000 ? timeout_ms : 10000L;
}

int rss_kube_call(struct rss_kube *kube, const struct rss_kube_request *req, cJSON **ret, rss_error_t *err)
{
    const char *method = req->method ? req->method : "GET";
    _cleanup_free_ char *url = make_url(kube, req->path, req->query);
    _cleanup_free_ char *what = rss_xasprintf("%s %s", method, req->path);
    long timeout = req->timeout_ms > 0 ? req->timeout_ms : kube->timeout_ms;
    int attempts = req->attempts > 0 ? req->attempts : kube->attempts;
    bool idempotent = !strcmp(method, "GET");
    bool retried_401 = false;
    const char *ct = req->body ? (req->content_type ? req->content_type : "application/json") : NULL;

    for (int attempt = 1;; attempt++) {
        CURL *h = handle_get(kube);
        if (!h)
            return rss_error_make(err, RSS_E_INTERNAL, 0, "%s: curl_easy_init failed", what);
        char errbuf[CURL_ERROR_SIZE] = "";
        struct curl_slist *headers = NULL;
        struct body b = {.max = kube->max_body};
        long retry_after = -1;
        _cleanup_free_ char *token = kube_token(kube, false);
        /* A text body (pods/log) is asked for as kubectl logs asks: JSON for an error Status, else any. */
        if (setup(kube, h, url, method, ct, req->text ? "application/json, */*" : NULL, token, &headers,
                  errbuf) < 0) {
            curl_easy_cleanup(h);
            return rss_error_make(err, RSS_E_INTERNAL, 0, "%s: building headers failed", what);
        }
        if (req->body) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
        }
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout); /* 0: none */
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms(timeout));
        /* curl's own timeout normally ends it first, with its message; the deadline is the backstop. */
        struct kube_xfer x = {.h = h,
                              .write_fn = body_write,
                              .write_ud = &b,
                              .header_fn = header_cb,
                              .header_ud = &retry_after,
                              .deadline_ns =
                                  timeout > 0 ? rss_clock_mono_ns() + (timeout + 100) * 1000000LL : 0};
        CURLcode rc = kube_mux_perform(&kube->mux, &x);
        long http = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
        curl_slist_free_all(headers);
        /* A handle whose transfer failed may hold a broken connection; curl drops those itself. */
        handle_put(kube, h);

        if (rc == CURLE_OK && http >= 200 && http <= 299) {
            if (req->text) {
                *req->text = rss_xmalloc(b.len + 1);
                if (b.len)
                    memcpy(*req->text, b.data, b.len);
                (*req->text)[b.len] = '\0';
            } else if (ret) {
                *ret = NULL;
                if (b.len > 0) {
                    cJSON *j = cJSON_ParseWithLength(b.data, b.len);
                    if (!j) {
                        free(b.data);
                        return rss_error_make(err, RSS_E_INVALID, (int)http,
                                              "%s: malformed JSON in the response", what);
                    }
                    *ret = j;
                }
            }
            free(b.data);
            return 0;
        }
        if (rc == CURLE_OK && http == 401 && !retried_401 && kube->cfg.token_file) {
            /* The token may have been rotated under us (client-go resets its cache on 401). */
            free(kube_token(kube, true));
            retried_401 = true;
            free(b.data);
            attempt--;
            continue;
        }
        long delay = kube_retry_delay_ms(attempt, attempts, rc == CURLE_OK ? http : 0, rc, idempotent,
                                         retry_after, kube->max_backoff_ms);
        if (delay >= 0 && !b.too_large) {
            /* Jittered, so that agents failed by the same slow server do not come back together; a
             * Retry-After is the server's own spreading, and no shorter wait than it asked for. */
            if (retry_after < 0)
                delay = kube_jitter_ms(delay);
            rss_log_debug("kube: %s: %s, retrying in %ld ms", what,
                          rc == CURLE_OK ? "HTTP error" : curl_easy_strerror(rc), delay);
            free(b.data);
            sleep_ms(delay);
            continue;
        }
        int r;
        if (rc != CURLE_OK)
            r = kube_curl_error(rc, errbuf, b.too_large, what, err);
        else
            r = kube_http_error(http, b.data, b.len, what, err);
        free(b.data);
        rss_metrics_inc(RSS_METRIC_API_ERRORS);
        return r;
    }
}

/* --- streaming (watch) --- */

int kube_stream(struct rss_kube *kube, const char *path, const char *query, const atomic_bool *stop,
                long stall_ms, rss_kube_data_fn on_data, void *userdata, bool *got_bytes, rss_error_t *err)
{
    _cleanup_free_ char *url = make_url(kube, path, query);
    _cleanup_free_ char *what = rss_xasprintf("WATCH %s", path);
    _cleanup_free_ char *token = kube_token(kube, false);
    CURL *h = handle_get(kube);
    if (!h)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "%s: curl_easy_init failed", what);
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    if (setup(kube, h, url, "GET", NULL, NULL, token, &headers, errbuf) < 0) {
        curl_easy_cleanup(h);
        return rss_error_make(err, RSS_E_INTERNAL, 0, "%s: building headers failed", what);
    }
    /* No overall timeout on a watch: the server ends it at timeoutSeconds; the stall detector below
     * catches a dead connection. Connecting still has a deadline. */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms(kube->timeout_ms));
    struct kube_xfer x = {.h = h};
    if (kube_mux_start(&kube->mux, &x) < 0) {
        curl_slist_free_all(headers);
        curl_easy_cleanup(h);
        return rss_error_make(err, RSS_E_INTERNAL, 0, "%s: the transfer thread did not start", what);
    }

    /* The bytes are handed over here, on the watch's own thread, so that a slow consumer holds up no
     * other transfer on the connection. */
    int64_t last_byte_ns = rss_clock_mono_ns();
    bool stalled = false, stopped = false, ended = false, cb_failed = false, got = false;
    rss_error_t cb_err = NULL;
    struct body errbody = {.max = 1 << 20};
    long http = 0;
    for (;;) {
        /* Checked before every wait too, so that a stream that never pauses still stops. */
        if (atomic_load(stop)) {
            stopped = true;
            break;
        }
        char *data = NULL;
        size_t len = 0;
        int n = kube_mux_next(&kube->mux, &x, 200, &data, &len, &http);
        if (n > 0) {
            last_byte_ns = rss_clock_mono_ns();
            got = true;
            bool fine;
            if (http < 200 || http > 299)
                fine = kube_buf_append(&errbody.data, &errbody.len, &errbody.cap, errbody.max, data, len);
            else
                fine = on_data(userdata, data, len, &cb_err) >= 0;
            free(data);
            if (!fine && http >= 200 && http <= 299) {
                cb_failed = true;
                break;
            }
            continue;
        }
        if (n == 0) {
            ended = true;
            break;
        }
        if (rss_clock_mono_ns() - last_byte_ns > (int64_t)stall_ms * 1000000) {
            stalled = true;
            break;
        }
    }
    kube_mux_end(&kube->mux, &x);
    CURLcode result = ended ? x.result : CURLE_OK;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    curl_slist_free_all(headers);
    /* Out of the multi handle now: a transfer ended early took only its stream (HTTP/2) or its
     * connection (HTTP/1.1) with it, and the handle itself is as good as new. */
    handle_put(kube, h);
    if (got_bytes)
        *got_bytes = got;

    int r = 0;
    if (stopped) {
        r = rss_error_make(err, RSS_E_CANCELLED, 0, "%s: stopped", what);
    } else if (stalled) {
        r = rss_error_make(err, RSS_E_TIMEOUT, 0, "%s: no data for %ld ms", what, stall_ms);
    } else if (cb_failed) {
        if (cb_err) {
            *err = cb_err;
            cb_err = NULL;
            r = rss_error_wrap(err, "%s", what);
        } else {
            r = rss_error_make(err, RSS_E_CANCELLED, 0, "%s: aborted by the consumer", what);
        }
    } else if (x.overflow) {
        r = rss_error_make(err, RSS_E_TOO_LARGE, 0, "%s: the consumer fell 64 MiB behind", what);
    } else if (http != 0 && (http < 200 || http > 299)) {
        if (http == 401)
            free(kube_token(kube, true));
        r = kube_http_error(http, errbody.data, errbody.len, what, err);
    } else if (result != CURLE_OK) {
        r = kube_curl_error(result, errbuf, false, what, err);
    }
    free(errbody.data);
    rss_error_release(&cb_err);
    return r;
}
