/* agent_peers_reread.c -- reads a peer's heartbeat Lease as soon as there is a reason to think its agent
 * changed.
 *
 * The failsafe (agent_peers.c) must reach every agent hosting a member of an RSS, with the address and key
 * that agent published in its heartbeat Lease. agent_peers_refresh reads those Leases every LIST_EVERY_MS
 * (60 s; it was 10 s): an API outage that began within that period of a peer's reboot or rssd restart (a
 * new key; on a real cluster a new pod IP) found this agent holding the old ones, so it could not vouch for
 * that peer, and every agent of the RSS stopped its healthy member. A restarted agent reports its members
 * soon after it starts (it probes them anew), and this agent watches every member record already: a record of
 * a member of an RSS that has members here, whose `observed` changed, makes its node's agent a suspect, and
 * this thread reads that one Lease within a second. Only when `observed` names an agent incarnation other
 * than the one that last made that node a suspect for this record (observed.agent, new at every process
 * start): a healthy peer's periodic reports are the same agent and cost no read; a report without one (an
 * older rssd) counts as new, as before. The records live in rssd's namespace, where only rssd
 * writes (a namespace user cannot make this agent read anything), and a read only ever learns what the Lease
 * says. A needed peer not known at all (this agent just started) is looked for once a second too, not only at
 * the next heartbeat. Cost: one GET per suspect or unknown peer per second at most (a suspect for
 * SUSPECT_MS), and only for peers sharing an RSS.
 */
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/record.h"
#include "agent_internal.h"

#define REREAD_MIN_MS 1000 /* at most one read of a peer's Lease per second */
/* The record may come before the new agent's first renewal with its address (its health server starts
 * with it): a suspect whose Lease did not change is read again, once a second, for this long. */
#define SUSPECT_MS 4000
#define TICK_MS    200

bool agent_peers_reread_due(int64_t now_ms, int64_t read_ms, int64_t suspect_ms)
{
    if (!suspect_ms)
        return false;
    if (read_ms && now_ms - read_ms < REREAD_MIN_MS)
        return false;
    /* Not read since it became a suspect, or read too early to show the new agent. */
    return read_ms < suspect_ms || now_ms - suspect_ms <= SUSPECT_MS;
}

void agent_peers_was_read(struct agent_peer *p, int64_t now_ms, bool changed)
{
    p->read_ms = now_ms;
    if (changed || (p->suspect_ms && now_ms - p->suspect_ms > SUSPECT_MS))
        p->suspect_ms = 0;
}

/* peers_lock held. */
static void suspect(struct rss_agent *a, const char *node, int64_t now)
{
    for (size_t i = 0; i < a->n_peers; i++)
        if (!strcmp(a->peers[i].node, node))
            a->peers[i].suspect_ms = now;
    /* A peer not known yet is looked for every LIST_MISSING_MS already (agent_peers_refresh). */
}

/* The incarnation that wrote the record's `observed` (caller frees); NULL when it names none. */
static char *writer_of(const struct agent_record *r)
{
    const char *json = r ? rss_json_str(r->cm, "data." RSS_RECORD_OBSERVED) : NULL;
    struct rss_observed o;
    _cleanup_error_ rss_error_t err = NULL;
    if (!json || rss_recordcodec_observed_decode(json, &o, &err) < 0)
        return NULL;
    char *agent = TAKE_PTR(o.agent);
    rss_recordcodec_observed_clear(&o);
    return agent;
}

/* Lock held. False when the agent that wrote this record's `observed` already made `where` a suspect for
 * it; otherwise remembers it. Each record keeps one writer, so the memory goes with the record. */
static bool new_writer(struct rss_agent *a, const char *ns, const char *pod, const char *where)
{
    struct agent_record *r = agent_record_find(a, ns, pod);
    if (!r)
        return true;
    char *writer = writer_of(r);
    bool same = writer && r->writer && !strcmp(writer, r->writer) && !strcmp(where, r->writer_node);
    free(r->writer);
    free(r->writer_node);
    r->writer = writer;
    r->writer_node = rss_xstrdup(where);
    return !same;
}

void agent_peers_record_changed(struct rss_agent *a, const char *ns, const char *rss, const char *pod)
{
    bool hosted = false;
    for (struct agent_member *m = a->members; m && !hosted; m = m->next)
        hosted = m->rss && !strcmp(m->ns, ns) && !strcmp(m->rss, rss);
    if (!hosted)
        return; /* not a peer of ours: at 5,000 nodes most records are none of this agent's business */
    struct agent_spec *spec = agent_spec_get(a, ns, rss);
    if (!spec)
        return;
    /* The node the leader last saw this pod on; a pod it has not placed yet may be on any of them. */
    const char *node = NULL;
    const cJSON *ms;
    cJSON_ArrayForEach(ms,
                       cJSON_GetObjectItemCaseSensitive(rss_json_obj(spec->obj, "status"), "memberStatus"))
    {
        const char *name = rss_json_str(ms, "name");
        if (name && !strcmp(name, pod))
            node = rss_json_str(ms, "node");
    }
    /* A report of the agent that made this node a suspect already: the same address and key. */
    if (!new_writer(a, ns, pod, node ? node : "")) {
        agent_spec_put(a, spec);
        return;
    }
    int64_t now = rss_clock_mono_ms();
    pthread_mutex_lock(&a->peers_lock);
    if (node && *node) {
        if (strcmp(node, a->node))
            suspect(a, node, now);
    } else {
        for (size_t k = 0; k < spec->n_nodes; k++)
            if (strcmp(spec->nodes[k], a->node))
                suspect(a, spec->nodes[k], now);
    }
    pthread_mutex_unlock(&a->peers_lock);
    agent_spec_put(a, spec);
}

/* The suspects due for a read now (caller frees each and the array). */
static size_t due(struct rss_agent *a, int64_t now, char ***out)
{
    char **nodes = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers; i++) {
        struct agent_peer *p = &a->peers[i];
        if (agent_peers_reread_due(now, p->read_ms, p->suspect_ms))
            *(char **)rss_xarray_push(&nodes, &n, &cap, sizeof(*nodes)) = rss_xstrdup(p->node);
        else if (p->suspect_ms && p->read_ms >= p->suspect_ms && now - p->suspect_ms > SUSPECT_MS)
            p->suspect_ms = 0; /* read and unchanged for long enough: not a new agent after all */
    }
    pthread_mutex_unlock(&a->peers_lock);
    *out = nodes;
    return n;
}

/* Reads one peer's Lease; false when the API server failed (not for a Lease that does not exist). */
static bool reread(struct rss_agent *a, const char *node)
{
    _cleanup_free_ char *lname = rss_xasprintf("%s%s", RSS_HEARTBEAT_PREFIX, node);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", a->ns, "leases", lname, NULL);
    _cleanup_json_ cJSON *lease = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    bool changed = false;
    if (rss_kube_get(a->kube, path, &lease, &err) == 0) {
        changed = agent_peers_learn(a, lease);
    } else if (rss_error_code(err) != RSS_E_NOT_FOUND) {
        rss_log_error(RSS_LOG_DEBUG, &err, "failsafe: re-reading the heartbeat Lease of %s", node);
        return false;
    }
    int64_t now = rss_clock_mono_ms();
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers; i++)
        if (!strcmp(a->peers[i].node, node))
            agent_peers_was_read(&a->peers[i], now, changed);
    pthread_mutex_unlock(&a->peers_lock);
    if (changed)
        rss_log_info("failsafe: re-read the heartbeat Lease of %s after its member's record changed: a new "
                     "agent there",
                     node);
    return true;
}

/* The peers this agent needs and does not know yet, looked for once a second: an agent that just started
 * (a reboot) learns of its members and their RSS's nodes from its watches, and would otherwise wait for its
 * next heartbeat (up to --heartbeat-period, 10 s) to read their Leases; an outage in between found it
 * unable to vouch for anyone, and it stopped the member it had just started. */
static bool read_missing(struct rss_agent *a, bool *read)
{
    char **nodes = NULL;
    size_t n = agent_peers_wanted(a, &nodes);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (ok && !agent_peers_known(a, nodes[i])) {
            ok = reread(a, nodes[i]);
            *read = true;
        }
        free(nodes[i]);
    }
    free(nodes);
    return ok;
}

void *agent_peers_reader(void *arg)
{
    struct rss_agent *a = arg;
    int64_t missing_ms = 0;
    while (!atomic_load(a->stop)) {
        int64_t now = rss_clock_mono_ms();
        long wait = TICK_MS;
        /* While the API is silent nothing can be read (and the prober has the peers to ask). */
        if (now - atomic_load(&a->api_ok_ms) <= a->fence_timeout_ms / 3) {
            char **nodes = NULL;
            size_t n = due(a, now, &nodes);
            bool ok = true;
            for (size_t i = 0; i < n; i++) {
                if (ok && agent_peer_wanted(a, nodes[i]))
                    ok = reread(a, nodes[i]);
                free(nodes[i]);
            }
            free(nodes);
            /* Every tick until there is one to look for (the watches just told us), then once a second. */
            bool read = false;
            if (ok && now - missing_ms >= REREAD_MIN_MS) {
                ok = read_missing(a, &read);
                if (read)
                    missing_ms = now;
            }
            if (!ok)
                wait = REREAD_MIN_MS;
        }
        for (long t = 0; t < wait && !atomic_load(a->stop); t += 100)
            usleep(100 * 1000);
    }
    return NULL;
}
