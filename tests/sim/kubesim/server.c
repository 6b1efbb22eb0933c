/* server.c -- kubesim's HTTPS front end on libmicrohttpd (GnuTLS, one thread per connection):
 * bearer-token authentication (auth.c), request bodies with a size cap, fault injection, dispatch to the
 * API or the /_sim controls, and plain or streaming (watch) responses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "kubesim.h"

#define MAX_BODY (8 * 1024 * 1024)

struct conn {
    bool started;
    char *uri;
    char method[16];
    char *body;
    size_t len, cap;
    bool too_large;
    bool unauthorized;
    struct ks_user *user;
    bool sim;
    enum ks_fault fault;
    int fault_code, retry_after;
    int64_t start_ns;
    int code;
};

static const char *lookup(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* Query strings use '+' for spaces (kubectl's labelSelector=a+in+(x)); MHD decodes only %XX. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '+') {
            *o++ = ' ';
        } else if (*p == '%' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (*end) {
                *o++ = *p;
                continue;
            }
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return (size_t)(o - s);
}

static bool public_path(const char *url)
{
    return !strcmp(url, "/version") || !strcmp(url, "/healthz") || !strcmp(url, "/livez") ||
           !strcmp(url, "/readyz");
}

static enum MHD_Result send_reply(struct MHD_Connection *mc, struct conn *c, struct ks_reply *r)
{
    struct MHD_Response *resp;
    if (r->watch) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        ks_watch_set_fd(r->watch, ci ? ci->connect_fd : -1);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, ks_watch_read, r->watch,
                                                 ks_watch_free);
        r->watch = NULL;
        MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    } else {
        size_t len = r->body ? strlen(r->body) : 0;
        resp = MHD_create_response_from_buffer(len, r->body ? r->body : (char *)"", MHD_RESPMEM_MUST_COPY);
    }
    MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type : "application/json");
    if (r->retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", r->retry_after);
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    if (r->warning)
        MHD_add_response_header(resp, "Warning", r->warning);
    c->code = r->code;
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    return ret;
}

static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 413:
        return "RequestEntityTooLarge";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_size,
                               void **con_cls)
{
    (void)cls;
    (void)version;
    struct conn *c = *con_cls;
    if (!c->started) {
        c->started = true;
        snprintf(c->method, sizeof(c->method), "%s", method);
        const char *auth = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Authorization");
        const char *token = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
        c->sim = !strncmp(url, "/_sim/", 6);
        c->user = ks_authenticate(token);
        if (!c->user && public_path(url))
            c->user = ks_user_anonymous();
        if (!c->user) {
            c->unauthorized = true;
            return MHD_YES;
        }
        if (!c->sim) {
            const char *w = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "watch");
            bool watch = w && (!strcmp(w, "1") || !strcmp(w, "true"));
            c->fault = ks_sim_faults(method, watch ? "WATCH" : NULL, url, &c->fault_code, &c->retry_after);
            if (c->fault == KS_FAULT_DROP) {
                ks_sim_count(!strcmp(method, "GET") && watch ? "WATCH" : method, url,
                             MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "User-Agent"));
                rss_log_debug("%s %s -> dropped (sim)", method, url);
                return MHD_NO;
            }
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!c->too_large) {
            if (c->len + *upload_size > MAX_BODY) {
                c->too_large = true;
            } else {
                if (c->len + *upload_size + 1 > c->cap) {
                    c->cap = (c->len + *upload_size + 1) * 2;
                    c->body = rss_xrealloc(c->body, c->cap);
                }
                memcpy(c->body + c->len, upload_data, *upload_size);
                c->len += *upload_size;
                c->body[c->len] = '\0';
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    struct ks_reply reply = {0};
    struct ks_req req = {
        .method = method,
        .path = url,
        .accept = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Accept"),
        .content_type = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Type"),
        .body = c->body,
        .body_len = c->len,
        .query = lookup,
        .query_ctx = mc,
        .user = c->user,
        .client = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "User-Agent"),
    };
    if (c->unauthorized) {
        ks_reply_status(&reply, 401, "Unauthorized", "Unauthorized");
    } else if (c->too_large) {
        ks_reply_status(&reply, 413, "RequestEntityTooLarge", "Request entity too large: limit is %d",
                        MAX_BODY);
    } else if (c->sim) {
        ks_simctl_handle(&req, &reply);
    } else if (c->fault == KS_FAULT_FAIL) {
        const char *w = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "watch");
        ks_sim_count(!strcmp(method, "GET") && w ? "WATCH" : method, url,
                     MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "User-Agent"));
        ks_reply_status(&reply, c->fault_code, reason_for(c->fault_code),
                        "kubesim: injected failure (HTTP %d)", c->fault_code);
        reply.retry_after = c->retry_after;
        if (c->retry_after > 0) {
            cJSON *st = cJSON_Parse(reply.body);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(st, "details"), "retryAfterSeconds",
                                    c->retry_after);
            ks_reply_json(&reply, c->fault_code, st);
        }
    } else {
        const char *verb = method;
        ks_api_handle(&req, &reply, &verb);
        ks_sim_count(verb, url, MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "User-Agent"));
    }
    if (!reply.code)
        ks_reply_status(&reply, 500, "InternalError", "no reply");
    enum MHD_Result ret = send_reply(mc, c, &reply);
    ks_reply_free(&reply);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    struct conn *c = *con_cls;
    if (!c)
        return;
    (void)mc;
    if (c->code >= 500 && !c->fault)
        rss_log_warn("%s %s -> %d", c->method, c->uri, c->code);
    else
        rss_log_debug("%s %s -> %d in %.1f ms%s", c->method, c->uri, c->code,
                      (double)(ks_mono_ns() - c->start_ns) / 1e6,
                      toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection ended)");
    free(c->uri);
    free(c->body);
    ks_user_free(c->user);
    free(c);
    *con_cls = NULL;
}

/* Called first for every request: its return value becomes the request's state (*con_cls). */
static void *log_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
    (void)cls;
    (void)con;
    struct conn *c = rss_xcalloc(1, sizeof(*c));
    c->uri = rss_xstrdup(uri);
    c->start_ns = ks_mono_ns();
    return c;
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    rss_log_debug("libmicrohttpd: %s", buf);
}

struct MHD_Daemon *ks_server_start(const char *dir, int *port, const char *cert, const char *key,
                                   char *errbuf, size_t n)
{
    (void)dir;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(errbuf, n, "socket: %s", strerror(errno));
        return NULL;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 256) < 0) {
        snprintf(errbuf, n, "bind/listen 127.0.0.1:%d: %s", *port, strerror(errno));
        close(fd);
        return NULL;
    }
    socklen_t sl = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *port = ntohs(sa.sin_port);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_TLS |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, handler, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_UNESCAPE_CALLBACK,
        unescape, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, log_uri,
        NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300, MHD_OPTION_CONNECTION_LIMIT, (unsigned)1000,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024), MHD_OPTION_END);
    if (!d) {
        snprintf(errbuf, n, "cannot start libmicrohttpd on 127.0.0.1:%d", *port);
        close(fd);
        return NULL;
    }
    return d;
}
