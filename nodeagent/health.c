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
/* Connections one address may hold: a peer's prober keeps one, the kubelet's probes and a Prometheus
 * scrape one each. Not this pod's own loopback (the test worlds' pods share the host's). */
#define PER_ADDRESS 8U
/* Connections that addresses neither of a known peer nor loopback may hold together: the rest of CONN_MAX
 * is kept for the peers, however many addresses hold connections. */
#define OTHERS_MAX (CONN_MAX / 4 * 3)

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

/* An address and how many connections it holds. */
struct address {
    unsigned char ip[16];
    unsigned n;
};

/* A counted connection (MHD's socket context): its address, and whether it counts among the others. */
struct held {
    unsigned char ip[16];
    bool other;
};

struct rss_health {
    struct MHD_Daemon *d;
    struct rss_agent *agent;
    uint16_t port; /* the port actually bound (port 0 asks for any free one) */
    /* MHD's one thread only (the accept policy and the connection notices): the addresses holding
     * connections, and how many connections the others hold. */
    struct address *addrs;
    size_t n_addrs, cap_addrs;
    unsigned others;
};

/* sa's address as 16 bytes, an IPv4 one v4-mapped (as a dual-stack socket gives it). */
static bool ip_of(const struct sockaddr *sa, unsigned char ip[16])
{
    if (sa && sa->sa_family == AF_INET) {
        memset(ip, 0, 10);
        ip[10] = ip[11] = 0xff;
        memcpy(ip + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return true;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(ip, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

/* 127.0.0.1 or ::1: only a process in this pod's own network namespace connects from there. */
static bool loopback(const unsigned char ip[16])
{
    static const unsigned char v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
    static const unsigned char v6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return !memcmp(ip, v4, 16) || !memcmp(ip, v6, 16);
}

static struct address *address(struct rss_health *h, const unsigned char ip[16])
{
    for (size_t i = 0; i < h->n_addrs; i++)
        if (!memcmp(h->addrs[i].ip, ip, 16))
            return &h->addrs[i];
    return NULL;
}

/* Why: /metrics, the probes and the failsafe's /peer share this listener, and nothing on it is
 * authenticated. A pod holding its connections (idle ones close after 10 s; one that sends a byte now and
 * then does not) took all CONN_MAX of them during an API outage, every peer's probe was turned away, and the
 * peers fenced their members (issue 35). One address may hold PER_ADDRESS; addresses that are not a known
 * peer's (its heartbeat Lease's) share OTHERS_MAX, so that however many pods hold connections, the peers
 * still find room. */
static mhd_result admit(void *cls, const struct sockaddr *sa, socklen_t len)
{
    struct rss_health *h = cls;
    (void)len;
    unsigned char ip[16];
    if (!ip_of(sa, ip) || loopback(ip))
        return MHD_YES;
    const struct address *c = address(h, ip);
    if (c && c->n >= PER_ADDRESS)
        return MHD_NO;
    return h->others < OTHERS_MAX || rss_agent_is_peer(h->agent, ip) ? MHD_YES : MHD_NO;
}

/* Counts each connection admit() let in while it is open. */
static void notice(void *cls, struct MHD_Connection *conn, void **ctx,
                   enum MHD_ConnectionNotificationCode code)
{
    struct rss_health *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        unsigned char ip[16];
        if (!ci || !ip_of(ci->client_addr, ip) || loopback(ip))
            return;
        struct held *x = rss_xcalloc(1, sizeof(*x));
        memcpy(x->ip, ip, 16);
        x->other = !rss_agent_is_peer(h->agent, ip);
        struct address *c = address(h, ip);
        if (!c) {
            c = rss_xarray_push(&h->addrs, &h->n_addrs, &h->cap_addrs, sizeof(*h->addrs));
            memcpy(c->ip, ip, 16);
            c->n = 0;
        }
        c->n++;
        h->others += x->other;
        *ctx = x;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *ctx) {
        struct held *x = *ctx;
        struct address *c = address(h, x->ip);
        if (c && --c->n == 0)
            *c = h->addrs[--h->n_addrs];
        h->others -= x->other;
        free(x);
        *ctx = NULL;
    }
}

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
     * While a peer probes, a probe comes every second, so 10 s idle closes only connections nobody uses.
     * One thread (no thread pool): admit() and notice() share their counts without a lock. */
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | flags, port, admit, h, handle, h,
                            MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT, CONN_MAX,
                            MHD_OPTION_NOTIFY_CONNECTION, notice, h, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)16384, MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_END);
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
        free(h->addrs);
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
    MHD_stop_daemon(h->d); /* its connections' CLOSED notices free their counts */
    free(h->addrs);
    free(h);
}
