/* health.c -- /healthz and /readyz over libmicrohttpd for the DaemonSet's probes. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <microhttpd.h>

#include "rss/cleanup.h"
#include "rss/health.h"

#define LIVE_MAX_AGE_MS 30000

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

struct rss_health {
    struct MHD_Daemon *d;
    struct rss_agent *agent;
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
    (void)upload_size;
    (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, 405, "method not allowed\n");
    if (strcmp(url, "/healthz") == 0)
        return rss_agent_loop_age_ms(h->agent) < LIVE_MAX_AGE_MS ? reply(c, 200, "ok\n")
                                                                 : reply(c, 503, "agent loop stalled\n");
    if (strcmp(url, "/readyz") == 0)
        return rss_agent_ready(h->agent) ? reply(c, 200, "ok\n") : reply(c, 503, "not ready\n");
    return reply(c, 404, "not found\n");
}

int rss_health_start(const char *address, int port, struct rss_agent *agent, struct rss_health **ret,
                     rss_error_t *err)
{
    if (port <= 0 || port > 65535)
        return rss_error_make(err, RSS_E_INVALID, 0, "health: bad port %d", port);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, address ? address : "0.0.0.0", &sa.sin_addr) != 1)
        return rss_error_make(err, RSS_E_INVALID, 0, "health: bad IPv4 address '%s'", address);
    struct rss_health *h = rss_xcalloc(1, sizeof(*h));
    h->agent = agent;
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, handle, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, 16U,
                            MHD_OPTION_CONNECTION_TIMEOUT, 5U, MHD_OPTION_END);
    if (!h->d) {
        int e = errno;
        free(h);
        return rss_error_errno(err, e ? e : EADDRINUSE, "health: cannot listen on %s:%d",
                               address ? address : "0.0.0.0", port);
    }
    *ret = h;
    return 0;
}

void rss_health_stop(struct rss_health *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
