/* health.h -- rssd's HTTP health endpoints (libmicrohttpd): GET /healthz (liveness) and /readyz.
 *
 * /healthz answers 200 while the agent loop goes round (it ticks every second; 30 s without a tick
 * is 503), /readyz 200 once the agent read the Lease, its pods and the RSS objects and is not
 * self-fenced. Anything else is 404. The server runs its own thread.
 */
#ifndef RSS_HEALTH_H
#define RSS_HEALTH_H

#include "rss/agent.h"
#include "rss/error.h"

struct rss_health;

/* Starts serving on address:port (address NULL = 0.0.0.0; port 0 is not allowed: the caller skips
 * health entirely). The agent is borrowed. Errors: RSS_E_INVALID (bad address), RSS_E_SYSTEM (bind). */
int rss_health_start(const char *address, int port, struct rss_agent *agent, struct rss_health **ret,
                     rss_error_t *err);

/* Stops the server and frees it. Accepts NULL. */
void rss_health_stop(struct rss_health *h);

#endif
