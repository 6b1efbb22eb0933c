/* agent_peers_reread.c -- reads the failsafe's peers' heartbeat Leases: all of them while this agent
 * settles, then a peer's only when there is a reason to think its agent changed, until the Lease shows
 * that agent.
 *
 * The failsafe (agent_peers.c) must reach every agent hosting a member of an RSS, with the address and key
 * that agent published in its heartbeat Lease. Past its first 30 s, an agent reads a peer's Lease again
 * only when it has a reason: an API outage that began soon after a peer's reboot or rssd restart (a new
 * key; on a real cluster a new pod IP) found this agent holding the old ones, so it could not vouch for
 * that peer, and every agent of the RSS stopped its healthy member. A restarted agent reports its members
 * soon after it starts (it probes them anew), and this agent watches the records of its RSSs' members: a
 * record of a member of an RSS that has members here, whose `observed` changed, makes its node's agent a
 * suspect, and this thread reads that one Lease within a second. Past the suspect's window, the same
 * evidence (agent_peers_confirmed, read from the records and the leader's placement as they are then, so
 * also a member the leader has placed on another node since its report) keeps the peer due for a read once
 * a minute at the heartbeat (agent_peers_due).
 *
 * Each report names the agent process that wrote it (observed.agent, random at every start) and each
 * heartbeat Lease the process that renews it (the peer annotation's "agent"). A report naming the
 * incarnation the node's Lease already showed is from the agent this one knows: no read (a role change,
 * a periodic `status`, every member republished at a new epoch, all the reports of a lights-out without
 * restarts: in a 200-node lights-out they were half of all rssd's requests, docs/scale.md). A report
 * naming another one makes its node a suspect until a read of its Lease shows that incarnation (its first
 * heartbeat may come after its first report, even by seconds under load), at most 30 s; a report naming
 * none (an rssd from before observed.agent) makes it a suspect for 4 s, as before (the windows:
 * agent_peers_suspect.c). The records live in rssd's namespace, where only rssd writes (a namespace user
 * cannot make this agent read anything), and a read only ever learns what the Lease says. A needed peer
 * not known at all (this agent just started) is looked for once a second too, not only at the next
 * heartbeat. Cost: one GET per suspect or unknown peer per second at most, and only for peers sharing an
 * RSS.
 */
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/record.h"
#include "agent_internal.h"

/* After this agent starts, its peers are often starting too (a lights-out: the nodes boot seconds apart)
 * and their Leases still name their previous processes: it reads them all often for LIST_SETTLE_MS. */
#define LIST_SETTLE_MS  30000
#define LIST_MISSING_MS 2000 /* ...and a peer we need and do not know yet is looked for often */
/* After that, a peer's Lease is read again only while this agent cannot confirm that its copy is current
 * (agent_peers_confirmed), at most once per UNCONFIRMED_EVERY_MS. A peer's address and key change only
 * when its agent restarts, and a restarted agent names itself in its first report of each member it
 * hosts (observed.agent), which makes this agent read its Lease at once (the reader below) and, past
 * that, keeps the peer unconfirmed until a read shows it. Reading every peer every 60 s whatever
 * the evidence was most of an idle agent's requests with many RSS objects (docs/scale.md). */
#define UNCONFIRMED_EVERY_MS 60000
#define TICK_MS              200
#define RETRY_MS             1000 /* a needed peer not known yet is looked for once a second; after an API error */

/* peers_lock held: p's Lease already names the agent that wrote the report. */
static bool known_writer(const struct agent_peer *p, const char *writer)
{
    return writer && p->agent[0] && !strcmp(p->agent, writer);
}

/* peers_lock held. writer: the report's incarnation, NULL none. */
static void suspect(struct rss_agent *a, const char *node, const char *writer, int64_t now)
{
    for (size_t i = 0; i < a->n_peers; i++) {
        struct agent_peer *p = &a->peers[i];
        if (strcmp(p->node, node) || known_writer(p, writer))
            continue;
        p->suspect_ms = now;
        snprintf(p->want, sizeof(p->want), "%s", writer ? writer : "");
    }
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

/* The node the leader last saw pod on (its status's memberStatus), NULL when it placed it nowhere. */
static const char *placed_on(const struct agent_spec *spec, const char *pod)
{
    const char *node = NULL;
    const cJSON *ms;
    cJSON_ArrayForEach(ms,
                       cJSON_GetObjectItemCaseSensitive(rss_json_obj(spec->obj, "status"), "memberStatus"))
    {
        const char *name = rss_json_str(ms, "name");
        if (name && !strcmp(name, pod))
            node = rss_json_str(ms, "node");
    }
    return node && *node ? node : NULL;
}

bool agent_peers_confirmed(struct rss_agent *a, const char *node)
{
    /* The incarnations named by the records of the members the leader places on node. */
    char **writers = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&a->lock);
    for (const struct agent_record *r = a->records; r; r = r->next) {
        struct agent_spec *spec = r->rss ? agent_spec_get(a, r->ns, r->rss) : NULL;
        const char *on = spec ? placed_on(spec, r->pod) : NULL;
        char *w = on && !strcmp(on, node) ? writer_of(r) : NULL;
        if (w && *w)
            *(char **)rss_xarray_push(&writers, &n, &cap, sizeof(*writers)) = w;
        else
            free(w);
        agent_spec_put(a, spec);
    }
    pthread_mutex_unlock(&a->lock);
    bool ok = false;
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers; i++) {
        const struct agent_peer *p = &a->peers[i];
        if (strcmp(p->node, node))
            continue;
        ok = p->agent[0] != '\0'; /* an incarnation read from its Lease */
        for (size_t k = 0; k < n && ok; k++)
            ok = !strcmp(p->agent, writers[k]);
    }
    pthread_mutex_unlock(&a->peers_lock);
    for (size_t k = 0; k < n; k++)
        free(writers[k]);
    free(writers);
    return ok;
}

void agent_peers_record_changed(struct rss_agent *a, const char *ns, const char *rss, const char *pod)
{
    bool hosted = false;
    for (struct agent_member *m = a->members; m && !hosted; m = m->next)
        hosted = m->rss && !strcmp(m->ns, ns) && !strcmp(m->rss, rss);
    if (!hosted)
        return; /* not a peer of ours */
    struct agent_spec *spec = agent_spec_get(a, ns, rss);
    if (!spec)
        return;
    /* The node the leader last saw this pod on, else the one the report says it was written on (a member
     * placed on a new node before the status names it); a pod placed nowhere may be on any of them. */
    const struct agent_record *rec = agent_record_find(a, ns, pod);
    const char *node = placed_on(spec, pod);
    if (!node && rec) {
        node = rss_json_str(rec->cm, "data." RSS_RECORD_OBSERVED_NODE);
        node = node && *node ? node : NULL;
    }
    _cleanup_free_ char *writer = writer_of(rec);
    int64_t now = rss_clock_mono_ms();
    pthread_mutex_lock(&a->peers_lock);
    if (node) {
        if (strcmp(node, a->node))
            suspect(a, node, writer, now);
    } else {
        /* Placed nowhere yet: a writer some node's Lease names is known; otherwise every node of the RSS
         * may host it, and none can be waited for to show it: each is read as for a report naming none. */
        bool known = false;
        for (size_t i = 0; i < a->n_peers && !known; i++)
            for (size_t k = 0; k < spec->n_nodes && !known; k++)
                known = !strcmp(a->peers[i].node, spec->nodes[k]) && known_writer(&a->peers[i], writer);
        for (size_t k = 0; k < spec->n_nodes && !known; k++)
            if (strcmp(spec->nodes[k], a->node))
                suspect(a, spec->nodes[k], NULL, now);
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
        if (agent_peers_reread_due(now, p->read_ms, p->suspect_ms, agent_peers_window(p))) {
            *(char **)rss_xarray_push(&nodes, &n, &cap, sizeof(*nodes)) = rss_xstrdup(p->node);
        } else if (p->suspect_ms && p->read_ms >= p->suspect_ms && agent_peers_settled(p, now, false)) {
            p->suspect_ms = 0; /* read, and its window passed without the Lease showing a new agent */
            p->want[0] = '\0';
        }
    }
    pthread_mutex_unlock(&a->peers_lock);
    *out = nodes;
    return n;
}

/* Reads one peer's Lease (the reader's and the heartbeat's reads); false when the API server failed (not
 * for a Lease that does not exist). */
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
    /* Also when the Lease is gone or names no address (learn settled the others already). */
    int64_t now = rss_clock_mono_ms();
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers; i++)
        if (!strcmp(a->peers[i].node, node))
            agent_peers_was_read(&a->peers[i], now, changed);
    pthread_mutex_unlock(&a->peers_lock);
    if (changed)
        rss_log_info("failsafe: read the heartbeat Lease of %s: a new agent there", node);
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
        if (now - atomic_load(&a->api_ok_ms) <=
            rss_agent_probe_after_ms(a->fence_timeout_ms, a->heartbeat_ms)) {
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
            if (ok && now - missing_ms >= RETRY_MS) {
                ok = read_missing(a, &read);
                if (read)
                    missing_ms = now;
            }
            if (!ok)
                wait = RETRY_MS;
        }
        for (long t = 0; t < wait && !atomic_load(a->stop); t += 100)
            usleep(100 * 1000);
    }
    return NULL;
}

/* --- the heartbeat's reads ---------------------------------------------------------------------------- */

size_t agent_peers_due(struct rss_agent *a, int64_t now, struct agent_peers_due *due)
{
    char **nodes = NULL;
    size_t n = agent_peers_wanted(a, &nodes);
    if (!a->peers_first_ms)
        a->peers_first_ms = now;
    /* Settling: every wanted peer is read again every LIST_MISSING_MS, since the Leases may still name
     * the peers' previous processes. Without it, an agent that came up first after a staggered lights-out
     * kept stale addresses, reached no peer in an API outage during that window, and fenced a healthy
     * member (chaos run, seed 20261124, cycle 29). */
    bool settling = now - a->peers_first_ms < LIST_SETTLE_MS;
    *due = (struct agent_peers_due){
        .all = settling && (!a->peers_listed_ms || now - a->peers_listed_ms >= LIST_MISSING_MS),
        .missing = !a->peers_missing_ms || now - a->peers_missing_ms >= LIST_MISSING_MS,
        .unconfirmed = !settling && (!a->peers_listed_ms || now - a->peers_listed_ms >= UNCONFIRMED_EVERY_MS),
    };
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (due->all || (due->missing && !agent_peers_known(a, nodes[i])) ||
            (due->unconfirmed && !agent_peers_confirmed(a, nodes[i])))
            nodes[u++] = nodes[i];
        else
            free(nodes[i]);
    }
    due->nodes = nodes;
    return due->n = u;
}

void agent_peers_due_clear(struct agent_peers_due *due)
{
    for (size_t i = 0; i < due->n; i++)
        free(due->nodes[i]);
    free(due->nodes);
    *due = (struct agent_peers_due){0};
}

/* Reads the heartbeat Leases of the peers this agent needs (the nodes of the RSS that have members here)
 * that agent_peers_due names, each by name. Not a LIST of every heartbeat Lease: that would cost each
 * agent the size of the cluster, and the API server the square of it (docs/scale.md). An agent without
 * members reads nothing, and one whose peers are all confirmed reads nothing either. */
void agent_peers_refresh(struct rss_agent *a)
{
    int64_t now = rss_clock_mono_ms();
    struct agent_peers_due due;
    agent_peers_due(a, now, &due);
    bool ok = true;
    for (size_t i = 0; i < due.n && ok; i++)
        ok = reread(a, due.nodes[i]); /* false: the API is failing, try again at the next heartbeat */
    if (ok) {
        if (due.all || due.unconfirmed)
            a->peers_listed_ms = now;
        if (due.all || due.missing)
            a->peers_missing_ms = now;
    }
    agent_peers_due_clear(&due);
}
