/* agent_peers_suspect.c -- when a peer suspected of a new agent has its heartbeat Lease read, and when a read
 * settles it: the pure decisions of the failsafe re-reader (agent_peers_reread.c), shared with the
 * heartbeat's reads of agent_peers.c. Why these windows: agent_peers_reread.c's first comment. */
#include <string.h>

#include "agent_internal.h"

#define REREAD_MIN_MS 1000 /* at most one read of a peer's Lease per second */
/* A report naming no incarnation: the new agent's first renewal with its address may come after it (its
 * health server starts with it), so a suspect whose Lease did not change is read again for this long. */
#define SUSPECT_MS 4000
/* A report naming a new incarnation: read until the Lease shows it, for at most 3 default heartbeat
 * periods; past that the heartbeat reads it once a minute while it stays unconfirmed, and each new report of
 * that agent starts this again. */
#define CONFIRM_MS 30000

int64_t agent_peers_window(const struct agent_peer *p)
{
    return p->want[0] ? CONFIRM_MS : SUSPECT_MS;
}

bool agent_peers_reread_due(int64_t now_ms, int64_t read_ms, int64_t suspect_ms, int64_t window_ms)
{
    if (!suspect_ms)
        return false;
    if (read_ms && now_ms - read_ms < REREAD_MIN_MS)
        return false;
    /* Not read since it became a suspect, or read too early to show the new agent. */
    return read_ms < suspect_ms || now_ms - suspect_ms <= window_ms;
}

bool agent_peers_settled(const struct agent_peer *p, int64_t now_ms, bool changed)
{
    if (!p->suspect_ms)
        return true;
    if (p->want[0] ? !strcmp(p->agent, p->want) : changed)
        return true;
    return now_ms - p->suspect_ms > agent_peers_window(p);
}

void agent_peers_was_read(struct agent_peer *p, int64_t now_ms, bool changed)
{
    p->read_ms = now_ms;
    if (agent_peers_settled(p, now_ms, changed)) {
        p->suspect_ms = 0;
        p->want[0] = '\0';
    }
}
