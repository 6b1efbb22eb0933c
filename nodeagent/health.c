/* health.c -- rssd's HTTP server (libmicrohttpd): /healthz and /readyz for the probes, /peer for the
 * failsafe. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>
#include <microhttpd.h>

#include "rss/cleanup.h"
#include "rss/health.h"
#include "rss/metrics.h"

#define LIVE_MAX_AGE_MS 30000
#define CONN_MAX        1024U

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

struct rss_health {
    struct MHD_Daemon *d;
    struct rss_agent *agent;
    uint16_t port; /* the port actually bound (port 0 asks for any free one) */
};

static mhd_result reply(struct MHD_Connection *c, unsigned code, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "text/plain");
    mhd_result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static mhd_result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload, size_t *upload_size, void **state)
{
    struct rss_health *h = cls;
    (void)version;
    (void)upload;
    /* Anything but GET and HEAD is refused at once, and MHD closes that connection. */
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, 405, "method not allowed\n");
    /* MHD calls once for the headers, then once per piece of body, then once more. A response queued at
     * the first call makes MHD close the connection after it (it has not read the request's end), and the
     * failsafe's probes keep their connections: answer at the last call, a body (a GET has none) dropped. */
    static int headers_seen;
    if (!*state) {
        *state = &headers_seen;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/healthz") == 0)
        return rss_agent_loop_age_ms(h->agent) < LIVE_MAX_AGE_MS ? reply(c, 200, "ok\n")
                                                                 : reply(c, 503, "agent loop stalled\n");
    if (strcmp(url, "/readyz") == 0)
        return rss_agent_ready(h->agent) ? reply(c, 200, "ok\n") : reply(c, 503, "not ready\n");
    if (strcmp(url, "/metrics") == 0) {
        struct rss_strbuf b = {0};
        rss_metrics_render(&b);
        struct MHD_Response *r = MHD_create_response_from_buffer(b.len, b.s, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
        mhd_result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (strcmp(url, "/peer") == 0) {
        /* Another agent asks whether we live and still reach the API server (self-fencing failsafe). */
        const char *nonce = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce");
        _cleanup_free_ char *body = rss_agent_peer_answer(h->agent, nonce);
        return body ? reply(c, 200, body) : reply(c, 400, "bad nonce\n");
    }
    return reply(c, 404, "not found\n");
}

static struct MHD_Daemon *listen_on(const struct sockaddr *sa, unsigned flags, uint16_t port,
                                    struct rss_health *h)
{
    /* Every peer whose API server is silent keeps a connection here while it probes us (agent_peers.c),
     * so the limit is well above the number of peers a node has: a peer turned away would count this
     * node as unreached and fence its members. epoll (MHD_USE_AUTO), since select stops at 1024 fds.
     * While a peer probes, a probe comes every second, so 10 s idle closes only connections nobody uses. */
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | flags, port, NULL, NULL, handle,
                            h, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT, CONN_MAX,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_CONNECTION_TIMEOUT,
                            10U, MHD_OPTION_END);
}

int rss_health_start(const char *address, int port, struct rss_agent *agent, struct rss_health **ret,
                     rss_error_t *err)
{
    if (port < 0 || port > 65535)
        return rss_error_make(err, RSS_E_INVALID, 0, "health: bad port %d", port);
    struct sockaddr_in sa4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    bool any = !address || !*address;
    if (!any && inet_pton(AF_INET, address, &sa4.sin_addr) != 1 &&
        inet_pton(AF_INET6, address, &sa6.sin6_addr) != 1)
        return rss_error_make(err, RSS_E_INVALID, 0, "health: bad address '%s'", address);
    struct rss_health *h = rss_xcalloc(1, sizeof(*h));
    h->agent = agent;
    if (any) {
        /* Every address, IPv6 and IPv4 on one socket where the host has IPv6; else IPv4 alone. */
        sa6.sin6_addr = in6addr_any;
        h->d = listen_on((struct sockaddr *)&sa6, MHD_USE_DUAL_STACK, (uint16_t)port, h);
        if (!h->d)
            h->d = listen_on((struct sockaddr *)&sa4, 0, (uint16_t)port, h);
    } else if (sa4.sin_addr.s_addr || !strcmp(address, "0.0.0.0")) {
        h->d = listen_on((struct sockaddr *)&sa4, 0, (uint16_t)port, h);
    } else {
        h->d = listen_on((struct sockaddr *)&sa6, MHD_USE_IPv6, (uint16_t)port, h);
    }
    if (!h->d) {
        int e = errno;
        free(h);
        return rss_error_errno(err, e ? e : EADDRINUSE, "health: cannot listen on %s port %d",
                               any ? "every address" : address, port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : (uint16_t)port;
    *ret = h;
    return 0;
}

int rss_health_port(const struct rss_health *h)
{
    return h ? h->port : 0;
}

void rss_health_stop(struct rss_health *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
