/* health.h -- rssd's HTTP server (libmicrohttpd): GET /healthz (liveness), /readyz, /peer, /metrics.
 *
 * /healthz answers 200 while the agent loop goes round (it ticks every second; 30 s without a tick
 * is 503), /readyz 200 once the agent read the Lease, its pods and the RSS objects and is not
 * self-fenced. /peer?nonce=HEX is the self-fencing failsafe's check between agents: a signed
 * statement that this agent lives and how long ago it last reached the API server
 * (rss_agent_peer_answer). /metrics is the Prometheus text of rss/metrics.h (docs/metrics.md).
 * Anything else is 404. The server runs its own thread.
 */
#ifndef RSS_HEALTH_H
#define RSS_HEALTH_H

#include "rss/agent.h"
#include "rss/error.h"

struct rss_health;

/* Starts serving on address:port. address NULL or "" = every address, IPv6 and IPv4 (IPv4 only where
 * the host has no IPv6); an IPv4 or IPv6 literal = that address. port 0 = any free port (see
 * rss_health_port). The agent is borrowed. Errors: RSS_E_INVALID (bad address), RSS_E_SYSTEM (bind). */
int rss_health_start(const char *address, int port, struct rss_agent *agent, struct rss_health **ret,
                     rss_error_t *err);

/* The port the server listens on (0 for NULL). */
int rss_health_port(const struct rss_health *h);

/* Stops the server and frees it. Accepts NULL. */
void rss_health_stop(struct rss_health *h);

#endif
