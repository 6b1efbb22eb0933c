/* agent_peers.c -- the failsafe of self-fencing: agents vouch for each other when the API server is gone.
 *
 * Each agent makes an Ed25519 key pair at start and publishes its public key and its address in its
 * heartbeat Lease (rssd's namespace: only rssd writes there). While the API works, every agent reads the
 * Leases of the peers it needs when it has a reason to (agent_peers_reread.c) and keeps their addresses
 * and keys. When an agent has not reached the API for half a heartbeat period past its next renewal
 * (rss_agent_probe_after_ms), a prober
 * thread asks the agents that host members of the same RSS, directly and all at once: GET
 * /peer?nonce=<random>. The answer is signed over (node, nonce, apiOkAgeMs), so only the peer's own process
 * can give it and an old answer cannot be replayed. fence.c then decides per RSS with rss_agent_failsafe_keep
 * (docs/design.md, "Self-fencing and the failsafe"). The probes keep their connections: one per peer, not one
 * per probe (a new connection per probe left 82,000 sockets in TIME_WAIT and half the CPU in the kernel on an
 * overloaded 200-node bench: docs/scale.md). They run in parallel: one after the other, a few silent peers
 * (800 ms each) made a round longer than an answer stays fresh, and the peers that did answer no longer
 * counted, which stopped healthy members.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rss/base64.h"
#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/metrics.h"
#include "agent_internal.h"

#define PROBE_EVERY_MS 1000
#define PROBE_TIMEOUT  800L /* ms, per peer */
#define FRESH_MS       3000 /* an answer counts for this long */
#define ANSWER_MAX     4096
/* Connections the prober keeps open (libcurl's cache, least recently used dropped first): one per peer,
 * for more peers than an agent has in practice (the nodes sharing an RSS with it). */
#define PROBE_CONNS 256

long rss_agent_probe_after_ms(long fence_timeout_ms, long heartbeat_ms)
{
    long third = fence_timeout_ms / 3, later = heartbeat_ms + fence_timeout_ms / 6;
    return third > later ? third : later;
}

/* Exactly `want` bytes from base64 `in`, or false. The decoded copy is wiped: it may be the private key. */
static bool decode_b64(const char *in, unsigned char *out, size_t want)
{
    size_t n = 0;
    char *d = rss_base64_decode(in, &n);
    bool ok = d && n == want;
    if (ok)
        memcpy(out, d, want);
    if (d)
        OPENSSL_cleanse(d, n);
    free(d);
    return ok;
}

/* The payload both sides sign and verify. */
static char *statement(const char *node, const char *nonce, long long age_ms)
{
    return rss_xasprintf("rssd-peer-v1\n%s\n%s\n%lld", node, nonce, age_ms);
}

int agent_peers_init(struct rss_agent *a, rss_error_t *err)
{
    EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    EVP_PKEY *key = NULL;
    bool ok = kctx && EVP_PKEY_keygen_init(kctx) > 0 && EVP_PKEY_keygen(kctx, &key) > 0;
    EVP_PKEY_CTX_free(kctx);
    unsigned char pub[32];
    size_t pl = sizeof(pub);
    if (!ok || EVP_PKEY_get_raw_public_key(key, pub, &pl) <= 0 || pl != sizeof(pub)) {
        EVP_PKEY_free(key);
        return rss_error_make(err, RSS_E_INTERNAL, 0, "agent: cannot make the failsafe's Ed25519 key");
    }
    a->peer_key = key;
    a->peer_pub = rss_base64_encode(pub, pl);
    pthread_mutex_init(&a->peers_lock, NULL);
    return 0;
}

char *agent_peers_private(struct rss_agent *a)
{
    unsigned char raw[32];
    size_t n = sizeof(raw);
    pthread_mutex_lock(&a->peers_lock);
    bool ok = EVP_PKEY_get_raw_private_key(a->peer_key, raw, &n) > 0 && n == sizeof(raw);
    pthread_mutex_unlock(&a->peers_lock);
    char *r = ok ? rss_base64_encode(raw, n) : NULL;
    OPENSSL_cleanse(raw, sizeof(raw));
    return r;
}

bool agent_peers_adopt(struct rss_agent *a, const char *b64_key)
{
    unsigned char raw[32], pub[32];
    size_t pl = sizeof(pub);
    if (!b64_key || !decode_b64(b64_key, raw, sizeof(raw)))
        return false;
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw, sizeof(raw));
    OPENSSL_cleanse(raw, sizeof(raw));
    if (!key || EVP_PKEY_get_raw_public_key(key, pub, &pl) <= 0 || pl != sizeof(pub)) {
        EVP_PKEY_free(key);
        return false;
    }
    pthread_mutex_lock(&a->peers_lock);
    EVP_PKEY_free(a->peer_key);
    free(a->peer_pub);
    a->peer_key = key;
    a->peer_pub = rss_base64_encode(pub, pl);
    pthread_mutex_unlock(&a->peers_lock);
    return true;
}

void agent_peers_free(struct rss_agent *a)
{
    EVP_PKEY_free(a->peer_key);
    free(a->peer_pub);
    free(a->peer_address);
    for (size_t i = 0; i < a->n_peers; i++) {
        free(a->peers[i].node);
        free(a->peers[i].url);
    }
    free(a->peers);
    if (a->peer_pub || a->peer_key)
        pthread_mutex_destroy(&a->peers_lock);
}

void rss_agent_set_peer_address(struct rss_agent *a, const char *host, int port)
{
    if (!host || !*host || port <= 0)
        return;
    pthread_mutex_lock(&a->peers_lock);
    free(a->peer_address);
    /* An IPv6 literal needs brackets in a URL. */
    a->peer_address =
        strchr(host, ':') ? rss_xasprintf("[%s]:%d", host, port) : rss_xasprintf("%s:%d", host, port);
    pthread_mutex_unlock(&a->peers_lock);
}

char *agent_peers_annotation(struct rss_agent *a)
{
    pthread_mutex_lock(&a->peers_lock);
    /* "boot": the boot this process runs in, so that a leader reading the Node's bootID after a silence
     * knows the node rebooted since, and that this process and its reports are gone (leader_liveness.c). */
    char *r = a->peer_address
                  ? rss_xasprintf("{\"address\":\"%s\",\"key\":\"%s\",\"agent\":\"%s\",\"since\":%lld,"
                                  "\"boot\":\"%s\"}",
                                  a->peer_address, a->peer_pub, a->incarnation, (long long)a->started_wall_ms,
                                  a->boot_id)
                  : NULL;
    pthread_mutex_unlock(&a->peers_lock);
    return r;
}

char *rss_agent_peer_answer(struct rss_agent *a, const char *nonce)
{
    if (!nonce || strlen(nonce) != 32 || strspn(nonce, "0123456789abcdef") != 32)
        return NULL;
    long long age = (long long)(rss_clock_mono_ms() - atomic_load(&a->api_ok_ms));
    _cleanup_free_ char *msg = statement(a->node, nonce, age);
    unsigned char sig[64];
    size_t sl = sizeof(sig);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    pthread_mutex_lock(&a->peers_lock); /* agent_peers_adopt may swap the key at start */
    bool ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, a->peer_key) > 0 &&
              EVP_DigestSign(ctx, sig, &sl, (const unsigned char *)msg, strlen(msg)) > 0;
    pthread_mutex_unlock(&a->peers_lock);
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return NULL;
    _cleanup_free_ char *s64 = rss_base64_encode(sig, sl);
    return rss_xasprintf("{\"node\":\"%s\",\"nonce\":\"%s\",\"apiOkAgeMs\":%lld,\"sig\":\"%s\"}\n", a->node,
                         nonce, age, s64);
}

bool agent_peers_verify(const unsigned char key[32], const char *node, const char *nonce, const char *answer,
                        long long *age_ms)
{
    _cleanup_json_ cJSON *j = cJSON_Parse(answer);
    const char *n = rss_json_str(j, "node"), *nn = rss_json_str(j, "nonce"), *sig64 = rss_json_str(j, "sig");
    const cJSON *age = cJSON_GetObjectItemCaseSensitive(j, "apiOkAgeMs");
    unsigned char sig[64];
    if (!n || !nn || !sig64 || !cJSON_IsNumber(age) || strcmp(n, node) || strcmp(nn, nonce) ||
        !decode_b64(sig64, sig, sizeof(sig)))
        return false;
    long long a = (long long)age->valuedouble;
    _cleanup_free_ char *msg = statement(node, nonce, a);
    EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key, 32);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = pk && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) > 0 &&
              EVP_DigestVerify(ctx, sig, sizeof(sig), (const unsigned char *)msg, strlen(msg)) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pk);
    if (ok)
        *age_ms = a;
    return ok;
}

/* --- learning the peers while the API works (heartbeat thread) ------------------------------------ */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

size_t agent_peers_wanted(struct rss_agent *a, char ***out)
{
    char **nodes = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m; m = m->next) {
        /* Valid or not: fence.c asks the peers of both. */
        struct agent_spec *spec = m->rss ? agent_spec_hold(a, m->ns, m->rss) : NULL;
        char **of = NULL;
        size_t n_of = spec ? agent_spec_nodes(a, spec, &of) : 0;
        for (size_t k = 0; k < n_of; k++) {
            if (!strcmp(of[k], a->node))
                continue;
            *(char **)rss_xarray_push(&nodes, &n, &cap, sizeof(*nodes)) = rss_xstrdup(of[k]);
        }
        agent_nodes_free(of, n_of);
        agent_spec_put(a, spec);
    }
    pthread_mutex_unlock(&a->lock);
    if (n)
        qsort(nodes, n, sizeof(*nodes), cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && !strcmp(nodes[u - 1], nodes[i]))
            free(nodes[i]);
        else
            nodes[u++] = nodes[i];
    }
    *out = nodes;
    return u;
}

/* The host of a peer's URL "http://<host>:<port>/peer" ("[v6]" in brackets) as 16 bytes, an IPv4 one
 * v4-mapped; false when it is not an IP literal (a name: no source address to match). */
static bool url_ip(const char *url, unsigned char ip[16])
{
    const char *h = url && !strncmp(url, "http://", 7) ? url + 7 : NULL;
    if (!h)
        return false;
    size_t n = *h == '[' ? strcspn(++h, "]") : strcspn(h, ":/");
    char host[64];
    if (n == 0 || n >= sizeof(host))
        return false;
    memcpy(host, h, n);
    host[n] = '\0';
    struct in_addr v4;
    if (inet_pton(AF_INET, host, &v4) == 1) {
        memset(ip, 0, 10);
        ip[10] = ip[11] = 0xff;
        memcpy(ip + 12, &v4, 4);
        return true;
    }
    return inet_pton(AF_INET6, host, ip) == 1;
}

/* Why a peer's address is enough: pods reach each other without NAT (the Kubernetes network model), so a
 * probe from a peer comes from the pod IP it published. A pod that takes a peer's IP could only take its
 * room among the connections, not answer for it (the answers are signed). */
bool rss_agent_is_peer(struct rss_agent *a, const unsigned char ip[16])
{
    bool known = false;
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers && !known; i++) {
        unsigned char p[16];
        known = url_ip(a->peers[i].url, p) && !memcmp(p, ip, 16);
    }
    pthread_mutex_unlock(&a->peers_lock);
    return known;
}

bool agent_peers_known(struct rss_agent *a, const char *node)
{
    bool known = false;
    pthread_mutex_lock(&a->peers_lock);
    for (size_t k = 0; k < a->n_peers && !known; k++)
        known = !strcmp(a->peers[k].node, node);
    pthread_mutex_unlock(&a->peers_lock);
    return known;
}

/* Valid (an address we may put in a URL, a 32-byte key), or false. */
static bool peer_fields(const char *addr, const char *key, unsigned char k[32])
{
    return addr && key && strlen(addr) <= 300 && !strpbrk(addr, "/?#@ ") && decode_b64(key, k, 32);
}

/* Records a peer's address, key and incarnation (agent; NULL unknown: from the fence state file), true when
 * the address or key changed (a new process there). `read` says they come from its Lease just read: its
 * reread clock restarts, and a suspect waiting for this incarnation is settled. */
static bool set_peer(struct rss_agent *a, const char *node, const char *addr, const unsigned char k[32],
                     const char *agent, bool read)
{
    pthread_mutex_lock(&a->peers_lock);
    struct agent_peer *p = NULL;
    for (size_t i = 0; i < a->n_peers && !p; i++)
        if (!strcmp(a->peers[i].node, node))
            p = &a->peers[i];
    if (!p) {
        if (a->n_peers >= 4096) {
            pthread_mutex_unlock(&a->peers_lock);
            return false;
        }
        p = rss_xarray_push(&a->peers, &a->n_peers, &a->cap_peers, sizeof(*a->peers));
        p->node = rss_xstrdup(node);
    }
    _cleanup_free_ char *url = rss_xasprintf("http://%s/peer", addr);
    bool changed = !p->url || strcmp(p->url, url) || memcmp(p->key, k, 32);
    if (changed) {
        rss_log_info("failsafe: the agent on %s answers at %s", p->node, url);
        free(p->url);
        p->url = TAKE_PTR(url);
        memcpy(p->key, k, 32);
        p->reached_ms = 0; /* a new process there: nothing it said before counts */
    }
    if (agent)
        snprintf(p->agent, sizeof(p->agent), "%s", agent);
    if (read) /* agent_peers_reread.c's clocks: the agent it waits for found, no need to read it again */
        agent_peers_was_read(p, rss_clock_mono_ms(), changed);
    pthread_mutex_unlock(&a->peers_lock);
    return changed;
}

bool agent_peers_learn(struct rss_agent *a, const cJSON *it)
{
    const size_t plen = strlen(RSS_HEARTBEAT_PREFIX);
    const cJSON *md = rss_json_obj(it, "metadata");
    const char *name = rss_json_str(md, "name");
    /* Not rss_json_str: its dotted paths would split the annotation's key at its dots. */
    const char *ann = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(rss_json_obj(md, "annotations"), RSS_ANNOTATION_PEER));
    if (!name || strncmp(name, RSS_HEARTBEAT_PREFIX, plen) || !ann || !strcmp(name + plen, a->node))
        return false;
    _cleanup_json_ cJSON *pj = cJSON_Parse(ann);
    unsigned char k[32];
    if (!peer_fields(rss_json_str(pj, "address"), rss_json_str(pj, "key"), k))
        return false;
    /* "agent": an incarnation as rssd makes them; absent (an rssd from before it) or odd, "" = unknown. */
    const char *agent = rss_json_str(pj, "agent");
    if (!agent || !*agent || strlen(agent) > RSS_AGENT_INCARNATION_LEN ||
        strspn(agent, "0123456789abcdef") != strlen(agent))
        agent = "";
    return set_peer(a, name + plen, rss_json_str(pj, "address"), k, agent, true);
}

cJSON *agent_peers_snapshot(struct rss_agent *a)
{
    cJSON *arr = cJSON_CreateArray();
    const size_t pre = strlen("http://"), post = strlen("/peer");
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < a->n_peers; i++) {
        const struct agent_peer *p = &a->peers[i];
        size_t n = p->url ? strlen(p->url) : 0;
        if (n <= pre + post)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", p->node);
        _cleanup_free_ char *addr = rss_xstrdup(p->url + pre);
        addr[n - pre - post] = '\0';
        cJSON_AddStringToObject(o, "address", addr);
        _cleanup_free_ char *k = rss_base64_encode(p->key, sizeof(p->key));
        cJSON_AddStringToObject(o, "key", k);
        cJSON_AddItemToArray(arr, o);
    }
    pthread_mutex_unlock(&a->peers_lock);
    return arr;
}

void agent_peers_restore(struct rss_agent *a, const cJSON *peers)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, peers)
    {
        const char *node = rss_json_str(it, "node"), *addr = rss_json_str(it, "address");
        unsigned char k[32];
        if (node && *node && strcmp(node, a->node) && peer_fields(addr, rss_json_str(it, "key"), k))
            set_peer(a, node, addr, k, NULL, false);
    }
}

/* --- probing, while the API is silent ------------------------------------------------------------- */

struct capped {
    char buf[ANSWER_MAX + 1];
    size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    struct capped *c = ud;
    size_t len = size * n;
    if (c->len + len > ANSWER_MAX)
        return 0; /* abort: no peer answer is that long */
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->buf[c->len] = '\0';
    return len;
}

CURLM *agent_peers_probe_multi(void)
{
    CURLM *m = curl_multi_init();
    if (m)
        curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)PROBE_CONNS);
    return m;
}

/* One peer's probe within a round. */
struct probe {
    CURL *h;
    const struct agent_peer *peer;
    char nonce[33];
    char *url;
    struct capped body;
    CURLcode rc;
    bool done;
};

static bool probe_add(CURLM *m, struct probe *p)
{
    unsigned char raw[16];
    if (RAND_bytes(raw, sizeof(raw)) != 1 || !(p->h = curl_easy_init()))
        return false;
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(p->nonce + 2 * i, 3, "%02x", raw[i]);
    p->url = rss_xasprintf("%s?nonce=%s", p->peer->url, p->nonce);
    curl_easy_setopt(p->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(p->h, CURLOPT_TIMEOUT_MS, PROBE_TIMEOUT);
    curl_easy_setopt(p->h, CURLOPT_CONNECTTIMEOUT_MS, PROBE_TIMEOUT);
    curl_easy_setopt(p->h, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(p->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(p->h, CURLOPT_WRITEDATA, &p->body);
    curl_easy_setopt(p->h, CURLOPT_PRIVATE, p);
    curl_easy_setopt(p->h, CURLOPT_URL, p->url);
    if (curl_multi_add_handle(m, p->h) != CURLM_OK) {
        curl_easy_cleanup(p->h);
        p->h = NULL;
        return false;
    }
    return true;
}

/* Checks a finished probe's answer and records it; true when the peer vouched. */
static bool probe_record(struct rss_agent *a, CURLM *m, struct probe *p)
{
    long code = 0, conns = 0;
    curl_easy_getinfo(p->h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(p->h, CURLINFO_NUM_CONNECTS, &conns);
    curl_multi_remove_handle(m, p->h); /* its connection stays in m's cache */
    curl_easy_cleanup(p->h);
    p->h = NULL;
    rss_metrics_inc(RSS_METRIC_PROBES);
    rss_metrics_add(RSS_METRIC_PROBE_CONNS, conns > 0 ? (uint64_t)conns : 0);
    const char *node = p->peer->node;
    long long age;
    bool ok = p->done && p->rc == CURLE_OK && code == 200 &&
              agent_peers_verify(p->peer->key, node, p->nonce, p->body.buf, &age);
    if (ok) {
        pthread_mutex_lock(&a->peers_lock);
        for (size_t i = 0; i < a->n_peers; i++)
            if (!strcmp(a->peers[i].node, node)) {
                a->peers[i].reached_ms = rss_clock_mono_ms();
                a->peers[i].api_age_ms = age;
            }
        pthread_mutex_unlock(&a->peers_lock);
    } else {
        rss_log_info("failsafe: the agent on %s did not vouch (%s, HTTP %ld%s)", node,
                     p->done ? curl_easy_strerror(p->rc) : "not sent", code,
                     p->done && p->rc == CURLE_OK && code == 200 ? ", bad signature" : "");
    }
    return ok;
}

size_t agent_peers_probe_round(struct rss_agent *a, CURLM *m, const struct agent_peer *peers, size_t n)
{
    struct probe *p = rss_xcalloc(n ? n : 1, sizeof(*p));
    int running = 0;
    for (size_t i = 0; i < n; i++) {
        p[i].peer = &peers[i];
        running += probe_add(m, &p[i]);
    }
    /* Every probe is bounded by PROBE_TIMEOUT, so the round is too, however many peers are silent. */
    while (running > 0) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE) {
                struct probe *q = NULL;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&q);
                q->rc = msg->data.result;
                q->done = true;
            }
        if (running > 0 && curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK)
            break;
    }
    size_t vouched = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].h)
            vouched += probe_record(a, m, &p[i]);
        else
            rss_log_info("failsafe: could not start a probe of the agent on %s", peers[i].node);
        free(p[i].url);
    }
    free(p);
    return vouched;
}

void *agent_peers_prober(void *arg)
{
    struct rss_agent *a = arg;
    CURLM *m = agent_peers_probe_multi(); /* its connection cache outlives every round */
    long after = rss_agent_probe_after_ms(a->fence_timeout_ms, a->heartbeat_ms);
    while (!atomic_load(a->stop)) {
        int64_t silent = rss_clock_mono_ms() - atomic_load(&a->api_ok_ms);
        if (m && silent > after) {
            /* Snapshot the peers to probe without holding the lock over the network. */
            pthread_mutex_lock(&a->peers_lock);
            size_t n = 0;
            struct agent_peer *copy = rss_xcalloc(a->n_peers ? a->n_peers : 1, sizeof(*copy));
            for (size_t i = 0; i < a->n_peers; i++) {
                if (!a->peers[i].url || !a->peers[i].url[0])
                    continue;
                copy[n] = a->peers[i];
                copy[n].node = rss_xstrdup(a->peers[i].node);
                copy[n++].url = rss_xstrdup(a->peers[i].url);
            }
            pthread_mutex_unlock(&a->peers_lock);
            size_t k = 0; /* agent_peer_wanted takes a->lock: not under peers_lock */
            for (size_t i = 0; i < n; i++) {
                if (agent_peer_wanted(a, copy[i].node)) {
                    copy[k++] = copy[i];
                    continue;
                }
                free(copy[i].node);
                free(copy[i].url);
            }
            agent_peers_probe_round(a, m, copy, k);
            for (size_t i = 0; i < k; i++) {
                free(copy[i].node);
                free(copy[i].url);
            }
            free(copy);
        }
        if (!m) /* out of memory at start: try again */
            m = agent_peers_probe_multi();
        for (int t = 0; t < PROBE_EVERY_MS / 100 && !atomic_load(a->stop); t++)
            usleep(100 * 1000);
    }
    if (m)
        curl_multi_cleanup(m);
    return NULL;
}

bool agent_peers_vouch(struct rss_agent *a, char *const *nodes, size_t n_nodes, char *why, size_t size)
{
    if (n_nodes == 0) {
        /* No member list from the leader yet: nobody to ask, so no evidence against isolation. */
        snprintf(why, size, "the RSS status lists no member nodes to ask");
        return false;
    }
    int64_t now = rss_clock_mono_ms();
    size_t hosting = 0, reached = 0;
    bool has_api = false, self_listed = false;
    char names[256] = "";
    size_t o = 0;
    pthread_mutex_lock(&a->peers_lock);
    for (size_t i = 0; i < n_nodes; i++) {
        self_listed |= !strcmp(nodes[i], a->node);
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = !strcmp(nodes[i], nodes[k]);
        if (dup)
            continue;
        hosting++;
        if (!strcmp(nodes[i], a->node)) {
            reached++;
            continue;
        }
        for (size_t k = 0; k < a->n_peers; k++) {
            const struct agent_peer *p = &a->peers[k];
            if (strcmp(p->node, nodes[i]) || !p->reached_ms || now - p->reached_ms > FRESH_MS)
                continue;
            reached++;
            if (p->api_age_ms < a->fence_timeout_ms / 2)
                has_api = true;
            if (o + strlen(p->node) + 2 < sizeof(names))
                o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", o ? " " : "", p->node);
        }
    }
    pthread_mutex_unlock(&a->peers_lock);
    if (!self_listed) { /* the status predates our member: we host one all the same */
        hosting++;
        reached++;
    }
    bool keep = rss_agent_failsafe_keep(hosting, reached, has_api);
    snprintf(why, size, "%zu of %zu agents hosting its members reached (this one%s%s)%s", reached, hosting,
             o ? ", " : "", names,
             has_api ? "; a peer reaches the API server, so this node is the one cut off" : "");
    return keep;
}
