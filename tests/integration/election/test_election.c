/* test_election.c -- Lease election with 2 and 3 candidate processes against kubesim: never two leaders (from
 * kubesim's lease write log and from the candidates' own logs), failover after SIGKILL, takeover right after
 * a SIGTERM release, and a leader cut off from the API that stops acting before anyone else takes the Lease.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/election.h"
#include "rss/kube.h"
#include "simfix.h"

/* Short durations so that the tests take seconds: lease 2 s, renew deadline 1.5 s, retry 0.3 s. */
#define LEASE_MS  2000
#define RENEW_MS  1500
#define RETRY_MS  300
#define DURATIONS "2000,1500,300"

static struct simfix sim;
static struct rss_kube *kube;

/* --- a TCP proxy that can cut one candidate off from the API server (a network partition) --- */

struct proxy {
    int lfd, port, target;
    atomic_bool cut, stop;
    pthread_t th;
    int a[64], b[64]; /* client side, server side (-1 while held by a cut) */
    int n;
};

static void proxy_drop(struct proxy *p, int i)
{
    close(p->a[i]);
    if (p->b[i] >= 0)
        close(p->b[i]);
    p->a[i] = p->a[p->n - 1];
    p->b[i] = p->b[p->n - 1];
    p->n--;
}

static int connect_target(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *proxy_main(void *arg)
{
    struct proxy *p = arg;
    bool was_cut = false;
    while (!atomic_load(&p->stop)) {
        bool cut = atomic_load(&p->cut);
        if (was_cut && !cut) {
            /* Healing resets every connection held during the cut. */
            while (p->n > 0)
                proxy_drop(p, 0);
        }
        was_cut = cut;
        struct pollfd fds[1 + 128];
        int nf = 0;
        fds[nf++] = (struct pollfd){.fd = p->lfd, .events = POLLIN};
        if (!cut) {
            for (int i = 0; i < p->n; i++) {
                fds[nf++] = (struct pollfd){.fd = p->a[i], .events = POLLIN};
                fds[nf++] = (struct pollfd){.fd = p->b[i], .events = POLLIN};
            }
        }
        if (poll(fds, (nfds_t)nf, 50) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            int c = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0 && p->n < 64) {
                /* During a cut new connections are accepted and then ignored: packets vanish. */
                int s = cut ? -1 : connect_target(p->target);
                if (!cut && s < 0) {
                    close(c);
                } else {
                    p->a[p->n] = c;
                    p->b[p->n] = s;
                    p->n++;
                }
            } else if (c >= 0) {
                close(c);
            }
        }
        if (cut)
            continue;
        for (int k = 1; k < nf; k += 2) {
            int i = (k - 1) / 2;
            if (i >= p->n)
                break;
            bool dead = false;
            for (int side = 0; side < 2 && !dead; side++) {
                if (!(fds[k + side].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int from = side ? p->b[i] : p->a[i], to = side ? p->a[i] : p->b[i];
                char buf[16384];
                ssize_t r = read(from, buf, sizeof(buf));
                if (r <= 0) {
                    dead = true;
                    break;
                }
                for (ssize_t off = 0; off < r;) {
                    ssize_t w = write(to, buf + off, (size_t)(r - off));
                    if (w <= 0) {
                        dead = true;
                        break;
                    }
                    off += w;
                }
            }
            if (dead) {
                proxy_drop(p, i);
                break; /* indexes moved; poll again */
            }
        }
    }
    while (p->n > 0)
        proxy_drop(p, 0);
    return NULL;
}

static void proxy_start(struct proxy *p, int target)
{
    memset(p, 0, sizeof(*p));
    p->target = target;
    p->lfd = simfix_listen_loopback(16, &p->port);
    assert_true(p->lfd >= 0);
    atomic_init(&p->cut, false);
    atomic_init(&p->stop, false);
    assert_int_equal(pthread_create(&p->th, NULL, proxy_main, p), 0);
}

static void proxy_stop(struct proxy *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->th, NULL);
    close(p->lfd);
}

/* --- candidates --- */

struct cand {
    pid_t pid;
    char name[16];
    char *log;
    int64_t killed_ns; /* when SIGKILLed, which ends its term without a log line */
    struct proxy px;
    bool proxied;
};

struct ev {
    int64_t t;
    char what[16];
    char arg[160];
};

/* --node/--boot-id for the next cand_start (NULL: none); --watch for it (true); --durations for it
 * (NULL: DURATIONS). */
static const char *cand_node, *cand_boot, *cand_durations;
static bool cand_watch;

static void cand_start(struct cand *c, const char *name, const char *lease, bool proxied)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->log = rss_xasprintf("%s/%s-%s.log", sim.dir, lease, name);
    _cleanup_free_ char *kc = NULL;
    if (proxied) {
        proxy_start(&c->px, sim.port);
        c->proxied = true;
        /* kubesim's kubeconfig with the server pointed at this candidate's proxy */
        _cleanup_free_ char *tp = rss_xasprintf("%s/token", sim.dir);
        FILE *f = fopen(tp, "r");
        assert_non_null(f);
        char tok[256] = "";
        assert_non_null(fgets(tok, sizeof(tok), f));
        fclose(f);
        tok[strcspn(tok, "\r\n")] = '\0';
        kc = rss_xasprintf("%s/kc-%s-%s", sim.dir, lease, name);
        _cleanup_free_ char *text =
            rss_xasprintf("{\"current-context\":\"c\",\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":"
                          "\"c\",\"user\":\"u\"}}],"
                          "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://127.0.0.1:%d\","
                          "\"certificate-authority\":\"%s/"
                          "ca.crt\"}}],\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"%s\"}}]}",
                          c->px.port, sim.dir, tok);
        assert_int_equal(simfix_write(kc, text), 0);
    } else {
        kc = rss_xstrdup(sim.kubeconfig);
    }
    _cleanup_free_ char *errlog = rss_xasprintf("%s/%s-%s.err", sim.dir, lease, name);
    const char *durations = cand_durations ? cand_durations : DURATIONS;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(errlog, "w", stderr);
        (void)f;
        if (cand_node)
            execl(CANDIDATE_BIN, CANDIDATE_BIN, "--kubeconfig", kc, "--lease", lease, "--log", c->log,
                  "--durations", durations, "--node", cand_node, "--boot-id", cand_boot, (char *)NULL);
        else if (cand_watch)
            execl(CANDIDATE_BIN, CANDIDATE_BIN, "--kubeconfig", kc, "--lease", lease, "--log", c->log,
                  "--durations", durations, "--watch", (char *)NULL);
        else
            execl(CANDIDATE_BIN, CANDIDATE_BIN, "--kubeconfig", kc, "--lease", lease, "--log", c->log,
                  "--durations", durations, (char *)NULL);
        _exit(127);
    }
    c->pid = pid;
}

/* SIGTERM (or SIGKILL) and reap; returns the exit status. */
static int cand_signal(struct cand *c, int sig)
{
    if (c->pid <= 0)
        return -1;
    if (sig == SIGKILL)
        c->killed_ns = simfix_mono_ns();
    kill(c->pid, sig);
    int st = 0;
    waitpid(c->pid, &st, 0);
    c->pid = 0;
    return st;
}

static void cand_cleanup(struct cand *c)
{
    if (c->pid > 0)
        cand_signal(c, SIGKILL);
    if (c->proxied)
        proxy_stop(&c->px);
    c->proxied = false;
    free(c->log);
    c->log = NULL;
}

static int cand_events(const struct cand *c, struct ev *evs, int max)
{
    FILE *f = fopen(c->log, "r");
    if (!f)
        return 0;
    int n = 0;
    char line[256];
    while (n < max && fgets(line, sizeof(line), f)) {
        struct ev e = {0};
        if (sscanf(line, "%" SCNd64 " %15s %159s", &e.t, e.what, e.arg) >= 2)
            evs[n++] = e;
    }
    fclose(f);
    return n;
}

#define MAXEV 8192
static struct ev evbuf[MAXEV];

/* The time and epoch of the candidate's current term, or -1 when it does not lead now. */
static int64_t cand_leading_since(const struct cand *c, int64_t *epoch)
{
    int n = cand_events(c, evbuf, MAXEV);
    int64_t since = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(evbuf[i].what, "leading")) {
            since = evbuf[i].t;
            if (epoch)
                *epoch = strtoll(evbuf[i].arg, NULL, 10);
        } else if (!strcmp(evbuf[i].what, "stopped") || !strcmp(evbuf[i].what, "exit")) {
            since = -1;
        }
    }
    return since;
}

/* Waits (bounded, for failure only) for a leader other than `exclude`; returns its index. */
static int wait_leader(struct cand *cs, int n, int exclude)
{
    for (int i = 0; i < 2000; i++) {
        for (int k = 0; k < n; k++)
            if (k != exclude && cs[k].pid > 0 && cand_leading_since(&cs[k], NULL) >= 0)
                return k;
        simfix_sleep_ms(10);
    }
    fail_msg("no leader emerged");
    return -1;
}

/* Last time of `what` (with arg `arg` if not NULL) in the candidate's log, or -1. */
static int64_t cand_last(const struct cand *c, const char *what, const char *arg)
{
    int n = cand_events(c, evbuf, MAXEV);
    int64_t t = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(evbuf[i].what, what) && (!arg || !strcmp(evbuf[i].arg, arg)))
            t = evbuf[i].t;
    return t;
}

/* --- checks --- */

struct term {
    int cand;
    int64_t epoch, start, end;
};

/* From the candidates' own logs: terms never overlap, epochs rise with every term, and every "act"
 * happened inside its own term. */
static void check_candidate_logs(struct cand *cs, int n)
{
    struct term terms[256];
    int nt = 0;
    for (int k = 0; k < n; k++) {
        int ne = cand_events(&cs[k], evbuf, MAXEV);
        int open = -1;
        for (int i = 0; i < ne; i++) {
            if (!strcmp(evbuf[i].what, "leading")) {
                assert_int_equal(open, -1);
                assert_true(nt < 256);
                terms[nt] = (struct term){.cand = k,
                                          .epoch = strtoll(evbuf[i].arg, NULL, 10),
                                          .start = evbuf[i].t,
                                          .end = INT64_MAX};
                open = nt++;
            } else if ((!strcmp(evbuf[i].what, "stopped") || !strcmp(evbuf[i].what, "exit")) && open >= 0) {
                terms[open].end = evbuf[i].t;
                open = -1;
            }
        }
        if (open >= 0 && cs[k].killed_ns)
            terms[open].end = cs[k].killed_ns;
        /* acts inside a term of this candidate with the same epoch */
        for (int i = 0; i < ne; i++) {
            if (strcmp(evbuf[i].what, "act"))
                continue;
            int64_t e = strtoll(evbuf[i].arg, NULL, 10);
            bool inside = false;
            for (int t = 0; t < nt; t++)
                if (terms[t].cand == k && terms[t].epoch == e && evbuf[i].t >= terms[t].start &&
                    evbuf[i].t <= terms[t].end)
                    inside = true;
            if (!inside)
                fail_msg("%s acted with epoch %" PRId64 " outside its term", cs[k].name, e);
        }
    }
    /* sort by start */
    for (int i = 1; i < nt; i++)
        for (int j = i; j > 0 && terms[j].start < terms[j - 1].start; j--) {
            struct term x = terms[j];
            terms[j] = terms[j - 1];
            terms[j - 1] = x;
        }
    for (int i = 1; i < nt; i++) {
        if (terms[i].start <= terms[i - 1].end)
            fail_msg("two leaders at once: %s (epoch %" PRId64 ") started %.3f s before %s (epoch %" PRId64
                     ") ended",
                     cs[terms[i].cand].name, terms[i].epoch,
                     (double)(terms[i - 1].end - terms[i].start) / 1e9, cs[terms[i - 1].cand].name,
                     terms[i - 1].epoch);
        assert_true(terms[i].epoch > terms[i - 1].epoch);
    }
    assert_true(nt >= 1);
}

struct lwrite {
    char holder[160];
    int64_t transitions, mono;
    char verb[16];
};

static int leases_log(const char *lease, struct lwrite *w, int max)
{
    _cleanup_json_ cJSON *log = NULL;
    assert_int_equal(simfix_ctl(kube, "GET", "/_sim/leases-log", NULL, &log), 0);
    assert_true(cJSON_IsArray(log));
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, log)
    {
        const cJSON *name = cJSON_GetObjectItem(it, "name");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, lease) || n >= max)
            continue;
        const cJSON *h = cJSON_GetObjectItem(it, "holderIdentity");
        snprintf(w[n].holder, sizeof(w[n].holder), "%s", cJSON_IsString(h) ? h->valuestring : "");
        w[n].transitions = (int64_t)cJSON_GetObjectItem(it, "leaseTransitions")->valuedouble;
        w[n].mono = (int64_t)cJSON_GetObjectItem(it, "monoNs")->valuedouble;
        const cJSON *v = cJSON_GetObjectItem(it, "verb");
        snprintf(w[n].verb, sizeof(w[n].verb), "%s", cJSON_IsString(v) ? v->valuestring : "");
        n++;
    }
    return n;
}

static struct lwrite lw[4096];

/* From kubesim's own record: every change of holder to a candidate increments leaseTransitions by one,
 * renewals and releases keep it, and once a term is over its holder never writes again. */
static int check_lease_log(const char *lease)
{
    int n = leases_log(lease, lw, 4096);
    assert_true(n >= 1);
    assert_string_not_equal(lw[0].holder, "");
    for (int i = 1; i < n; i++) {
        if (!lw[i].holder[0] || !strcmp(lw[i].holder, lw[i - 1].holder)) {
            assert_int_equal(lw[i].transitions, lw[i - 1].transitions); /* release or renewal */
        } else {
            if (lw[i].transitions != lw[i - 1].transitions + 1)
                fail_msg("write %d: %s acquired with leaseTransitions %" PRId64 " after %" PRId64, i,
                         lw[i].holder, lw[i].transitions, lw[i - 1].transitions);
            /* the previous terms' holders never write with their old epoch again */
            for (int j = i + 1; j < n; j++)
                for (int k = 0; k < i; k++)
                    if (lw[k].holder[0] && !strcmp(lw[j].holder, lw[k].holder) &&
                        lw[j].transitions == lw[k].transitions)
                        fail_msg("write %d: %s wrote again with the epoch of an ended term", j, lw[j].holder);
        }
        assert_true(lw[i].mono >= lw[i - 1].mono);
    }
    return n;
}

/* The kubesim time of the first write by `holder`. */
static int64_t acquired_at(int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(lw[i].holder, id))
            return lw[i].mono;
    fail_msg("no lease write by %s", id);
    return -1;
}

static void identity_of(const struct cand *c, char *out, size_t len)
{
    int n = cand_events(c, evbuf, MAXEV);
    for (int i = 0; i < n; i++)
        if (!strcmp(evbuf[i].what, "start")) {
            snprintf(out, len, "%s", evbuf[i].arg);
            return;
        }
    fail_msg("%s logged no identity", c->name);
}

/* --- tests --- */

/* Every test's candidates; the per-test teardown ends them even when an assertion failed. */
static struct cand cs[8];

static int cleanup_cands(void **state)
{
    (void)state;
    for (int i = 0; i < 8; i++)
        cand_cleanup(&cs[i]);
    memset(cs, 0, sizeof(cs));
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return simfix_start_kube(&sim, KUBESIM_BIN, &kube);
}

static int teardown(void **state)
{
    (void)state;
    rss_kube_free(kube);
    simfix_stop(&sim);
    return 0;
}

static void test_sigkill_failover(void **state)
{
    (void)state;
    cand_start(&cs[0], "a", "kill", false);
    cand_start(&cs[1], "b", "kill", false);
    int l = wait_leader(cs, 2, -1);
    int64_t e1 = 0;
    cand_leading_since(&cs[l], &e1);
    simfix_sleep_ms(1000); /* a few renewals */
    cand_signal(&cs[l], SIGKILL);
    int s = wait_leader(cs, 2, l);
    int64_t e2 = 0;
    int64_t t = cand_leading_since(&cs[s], &e2);
    printf("SIGKILL failover: new leader %.3f s after the kill (lease %d ms, renew %d ms, retry %d ms)\n",
           (double)(t - cs[l].killed_ns) / 1e9, LEASE_MS, RENEW_MS, RETRY_MS);
    assert_int_equal(e2, e1 + 1);
    simfix_sleep_ms(500);
    assert_int_equal(WEXITSTATUS(cand_signal(&cs[s], SIGTERM)), 0);
    int n = check_lease_log("kill");
    /* the survivor released the Lease on SIGTERM */
    assert_string_equal(lw[n - 1].holder, "");
    check_candidate_logs(cs, 2);
}

static void test_sigterm_release_takeover(void **state)
{
    (void)state;
    cand_start(&cs[0], "a", "term", false);
    cand_start(&cs[1], "b", "term", false);
    cand_start(&cs[2], "c", "term", false);
    int l = wait_leader(cs, 3, -1);
    simfix_sleep_ms(1000);
    char lid[160];
    identity_of(&cs[l], lid, sizeof(lid));
    int64_t t_term = simfix_mono_ns();
    int st = cand_signal(&cs[l], SIGTERM);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    int s = wait_leader(cs, 3, l);
    char sid[160];
    identity_of(&cs[s], sid, sizeof(sid));

    int n = check_lease_log("term");
    /* find the release and the last renewal before it */
    int rel = -1;
    for (int i = 0; i < n; i++)
        if (!lw[i].holder[0] && i > 0 && !strcmp(lw[i - 1].holder, lid))
            rel = i;
    assert_true(rel > 0);
    int64_t last_renew = lw[rel - 1].mono;
    int64_t acq = acquired_at(n, sid);
    assert_true(acq > lw[rel].mono);
    printf(
        "SIGTERM release: successor acquired %.3f s after SIGTERM, %.3f s after the release; the old lease "
        "would have expired %.3f s after its last renewal\n",
        (double)(acq - t_term) / 1e9, (double)(acq - lw[rel].mono) / 1e9, LEASE_MS / 1e3);
    /* taken over before the old lease could have expired: the release, not the expiry, handed it over */
    assert_true(acq < last_renew + (int64_t)LEASE_MS * 1000000);
    /* the old leader stopped leading before it released */
    int64_t stopped = cand_last(&cs[l], "stopped", NULL);
    assert_true(stopped > 0 && stopped < lw[rel].mono);
    for (int i = 0; i < 3; i++)
        if (cs[i].pid > 0)
            assert_int_equal(WEXITSTATUS(cand_signal(&cs[i], SIGTERM)), 0);
    check_lease_log("term");
    check_candidate_logs(cs, 3);
}

/* GETs of Leases kubesim counted since its last stats-reset. */
static int lease_gets(void)
{
    int n = simfix_stats_count(kube, NULL, "GET", "*leases");
    assert_true(n >= 0);
    return n;
}

/* Three candidates for 3 s (10 retry periods) while one leads: GETs of the Lease counted by kubesim. */
static int idle_lease_gets(const char *lease)
{
    cand_start(&cs[0], "a", lease, false);
    cand_start(&cs[1], "b", lease, false);
    cand_start(&cs[2], "c", lease, false);
    wait_leader(cs, 3, -1);
    simfix_sleep_ms(1000);
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stats-reset", NULL, NULL), 0);
    simfix_sleep_ms(3000);
    return lease_gets();
}

/* Candidates fed by a watch of the Lease (as rssd's agent feeds its election) do not GET it while its
 * holder keeps renewing; without the watch they look every half lease duration. After the leader's
 * SIGKILL a watched candidate still takes over, and never before the Lease expired: from kubesim's own
 * write log, the new holder's first write comes at least a lease duration after the last renewal. */
static void test_watched_candidates_quiet(void **state)
{
    (void)state;
    int plain = idle_lease_gets("plain");
    cleanup_cands(NULL);
    cand_watch = true;
    int watched = idle_lease_gets("watched");
    cand_watch = false;
    printf("idle GETs of the Lease in 3 s, 3 candidates: %d without a watch, %d with one\n", plain, watched);
    assert_true(plain >= 2); /* the measurement sees the GETs the watch saves */
    assert_int_equal(watched, 0);

    int l = wait_leader(cs, 3, -1);
    char lid[160];
    identity_of(&cs[l], lid, sizeof(lid));
    cand_signal(&cs[l], SIGKILL);
    int s = wait_leader(cs, 3, l);
    char sid[160];
    identity_of(&cs[s], sid, sizeof(sid));
    int n = check_lease_log("watched");
    int64_t last_renew = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(lw[i].holder, lid))
            last_renew = lw[i].mono;
    int64_t acq = acquired_at(n, sid);
    printf("watched candidates: SIGKILL failover %.3f s after the last renewal (lease %d ms)\n",
           (double)(acq - last_renew) / 1e9, LEASE_MS);
    assert_true(last_renew > 0);
    assert_true(acq >= last_renew + (int64_t)LEASE_MS * 1000000);
    for (int i = 0; i < 3; i++)
        if (cs[i].pid > 0)
            assert_int_equal(WEXITSTATUS(cand_signal(&cs[i], SIGTERM)), 0);
    check_candidate_logs(cs, 3);
}

/* The Lease holder ran on this node before it rebooted (same node prefix, other boot id): it is gone,
 * so a candidate of this boot takes over at once, as a new term; a holder of the current boot is
 * judged by the usual expiry, here an hour away. */
static void test_rebooted_holder_taken_over_at_once(void **state)
{
    (void)state;
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
    char now[RSS_TIME_LEN];
    rss_time_micro(now, NULL);
    _cleanup_free_ char *body = rss_xasprintf(
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"reboot\"},"
        "\"spec\":{\"holderIdentity\":\"%s_0000dead_1_00000000\",\"leaseDurationSeconds\":3600,"
        "\"leaseTransitions\":4,\"acquireTime\":\"%s\",\"renewTime\":\"%s\"}}",
        host, now, now);
    _cleanup_json_ cJSON *lease = cJSON_Parse(body);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", "default", "leases", NULL, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_kube_create(kube, path, lease, NULL, &err), 0);

    /* Same boot as the holder: it may be alive, so no takeover within seconds of an hour-long lease. */
    setenv("RSS_BOOT_ID", "0000dead", 1);
    cand_start(&cs[0], "sameboot", "reboot", false);
    unsetenv("RSS_BOOT_ID");
    simfix_sleep_ms(2000);
    assert_true(cand_leading_since(&cs[0], NULL) < 0);
    assert_int_equal(WEXITSTATUS(cand_signal(&cs[0], SIGTERM)), 0);

    /* A later boot of the same node: taken over at once, with a new epoch. */
    setenv("RSS_BOOT_ID", "1111beef", 1);
    cand_start(&cs[1], "newboot", "reboot", false);
    unsetenv("RSS_BOOT_ID");
    int l = wait_leader(&cs[1], 1, -1);
    assert_int_equal(l, 0);
    int64_t epoch = 0;
    cand_leading_since(&cs[1], &epoch);
    assert_int_equal(epoch, 5);
    assert_int_equal(WEXITSTATUS(cand_signal(&cs[1], SIGTERM)), 0);
}

/* A Node with status.nodeInfo.bootID `boot` (NULL: none), created or updated. */
static void set_node_boot(const char *node, const char *boot)
{
    _cleanup_free_ char *coll = rss_kube_path("v1", NULL, "nodes", NULL, NULL);
    _cleanup_free_ char *item = rss_kube_path("v1", NULL, "nodes", node, NULL);
    _cleanup_free_ char *body =
        rss_xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"}}", node);
    _cleanup_json_ cJSON *obj = cJSON_Parse(body);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_create(kube, coll, obj, NULL, &err) < 0) {
        assert_int_equal(rss_error_code(err), RSS_E_EXISTS);
        rss_error_release(&err);
    }
    _cleanup_free_ char *patch = boot ? rss_xasprintf("{\"status\":{\"nodeInfo\":{\"bootID\":\"%s\"}}}", boot)
                                      : rss_xstrdup("{\"status\":{\"nodeInfo\":{\"bootID\":null}}}");
    _cleanup_json_ cJSON *p = cJSON_Parse(patch);
    assert_int_equal(rss_kube_merge_patch_status(kube, item, p, NULL, &err), 0);
}

/* An hour-long Lease held by `holder` with the boot record `record` (NULL: none). */
static void create_held_lease(const char *name, const char *holder, const char *record)
{
    char now[RSS_TIME_LEN];
    rss_time_micro(now, NULL);
    _cleanup_free_ char *ann =
        record ? rss_xasprintf(",\"annotations\":{\"%s\":\"%s\"}", RSS_ELECTION_BOOT_ANNOTATION, record)
               : rss_xstrdup("");
    _cleanup_free_ char *body = rss_xasprintf(
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"%s\"%s},"
        "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":3600,"
        "\"leaseTransitions\":7,\"acquireTime\":\"%s\",\"renewTime\":\"%s\"}}",
        name, ann, holder, now, now);
    _cleanup_json_ cJSON *lease = cJSON_Parse(body);
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", "default", "leases", NULL, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_kube_create(kube, path, lease, NULL, &err), 0);
}

/* The boot record on a Lease, or NULL. */
static char *lease_boot_record(const char *name)
{
    _cleanup_free_ char *path = rss_kube_path("coordination.k8s.io/v1", "default", "leases", name, NULL);
    _cleanup_json_ cJSON *l = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_kube_get(kube, path, &l, &err), 0);
    const cJSON *ann =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(l, "metadata"), "annotations");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(ann, RSS_ELECTION_BOOT_ANNOTATION);
    return cJSON_IsString(r) ? rss_xstrdup(r->valuestring) : NULL;
}

/* The holder of another node recorded its node and boot; that Node now reports another boot: the holder
 * is gone (its node rebooted), so a candidate takes over at once as a new term, far inside the hour-long
 * lease. No takeover while the Node still reports the holder's boot, when the record names another
 * identity than the holder, or when the Node reports no boot id. The new holder records its own boot
 * only because its Node reports it. */
static void test_holder_node_rebooted_taken_over_at_once(void **state)
{
    (void)state;
    const char *holder = "nodea_aaaaaaaa_1_00000000";
    set_node_boot("nodea", "boot-a-1");
    set_node_boot("nodeb", "boot-b-1");
    create_held_lease("nreboot", holder, "nodea boot-a-1 nodea_aaaaaaaa_1_00000000");
    create_held_lease("nforeign", holder, "nodea boot-a-1 nodez_aaaaaaaa_1_00000000");
    set_node_boot("nodec", "boot-c-1");
    create_held_lease("nnoboot", "nodec_cccccccc_1_00000000", "nodec boot-c-1 nodec_cccccccc_1_00000000");

    cand_node = "nodeb";
    cand_boot = "boot-b-1";
    cand_start(&cs[0], "b", "nreboot", false);
    cand_start(&cs[1], "b", "nforeign", false);
    cand_start(&cs[2], "b", "nnoboot", false);
    cand_node = cand_boot = NULL;
    /* The holder's node still runs the holder's boot: it may be alive. */
    simfix_sleep_ms(2000);
    for (int i = 0; i < 3; i++)
        assert_true(cand_leading_since(&cs[i], NULL) < 0);

    set_node_boot("nodea", "boot-a-2"); /* nodea rebooted */
    set_node_boot("nodec", NULL);       /* nodec's boot unknown */
    assert_int_equal(wait_leader(cs, 1, -1), 0);
    int64_t epoch = 0;
    cand_leading_since(&cs[0], &epoch);
    assert_int_equal(epoch, 8);
    char id[160];
    identity_of(&cs[0], id, sizeof(id));
    _cleanup_free_ char *want = rss_xasprintf("nodeb boot-b-1 %s", id);
    _cleanup_free_ char *rec = lease_boot_record("nreboot");
    assert_non_null(rec);
    assert_string_equal(rec, want);

    /* The record of another identity, and a Node without a boot id, prove nothing. */
    simfix_sleep_ms(2000);
    assert_true(cand_leading_since(&cs[1], NULL) < 0);
    assert_true(cand_leading_since(&cs[2], NULL) < 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(WEXITSTATUS(cand_signal(&cs[i], SIGTERM)), 0);
}

/* After a power cut: the holder's node had rebooted before the candidate started (every agent starts
 * anew). The candidate's first look at the Lease takes it over: its lease duration and its retry period
 * are 100 s and more here, so waiting for a second look, or for the lease to run out as first observed,
 * would fail wait_leader's 20 s. */
static void test_holder_node_rebooted_before_first_look(void **state)
{
    (void)state;
    set_node_boot("nodee", "boot-e-2");
    set_node_boot("nodef", "boot-f-1");
    create_held_lease("nfirst", "nodee_eeeeeeee_1_00000000", "nodee boot-e-1 nodee_eeeeeeee_1_00000000");
    cand_node = "nodef";
    cand_boot = "boot-f-1";
    cand_durations = "600000,400000,100000";
    cand_start(&cs[0], "f", "nfirst", false);
    cand_node = cand_boot = cand_durations = NULL;
    assert_int_equal(wait_leader(cs, 1, -1), 0);
    int64_t epoch = 0;
    cand_leading_since(&cs[0], &epoch);
    assert_int_equal(epoch, 8);
    assert_int_equal(WEXITSTATUS(cand_signal(&cs[0], SIGTERM)), 0);
}

/* A candidate whose Node reports another boot id than its own records none: a Node still showing the
 * boot before ours must not later look like a reboot of ours. */
static void test_boot_record_only_when_node_agrees(void **state)
{
    (void)state;
    set_node_boot("noded", "boot-d-old");
    cand_node = "noded";
    cand_boot = "boot-d-new";
    cand_start(&cs[0], "d", "nagree", false);
    cand_node = cand_boot = NULL;
    assert_int_equal(wait_leader(cs, 1, -1), 0);
    _cleanup_free_ char *rec = lease_boot_record("nagree");
    assert_null(rec);
    assert_int_equal(WEXITSTATUS(cand_signal(&cs[0], SIGTERM)), 0);
}

static void test_partitioned_leader_stops_first(void **state)
{
    (void)state;
    cand_start(&cs[0], "a", "part", true);
    cand_start(&cs[1], "b", "part", true);
    cand_start(&cs[2], "c", "part", true);
    int l = wait_leader(cs, 3, -1);
    int64_t epoch = 0;
    cand_leading_since(&cs[l], &epoch);
    simfix_sleep_ms(1000);
    int64_t t_cut = simfix_mono_ns();
    atomic_store(&cs[l].px.cut, true);
    int s = wait_leader(cs, 3, l);
    char sid[160];
    identity_of(&cs[s], sid, sizeof(sid));
    int n = check_lease_log("part");
    int64_t acq = acquired_at(n, sid);
    char e[32];
    snprintf(e, sizeof(e), "%" PRId64, epoch);
    int64_t last_act = cand_last(&cs[l], "act", e);
    int64_t stopped = cand_last(&cs[l], "stopped", NULL);
    assert_true(last_act > 0);
    if (stopped < 0)
        fail_msg("the cut-off leader never logged that it stopped");
    printf("partition: old leader stopped %.3f s after the cut; its last act was %.3f s and its stop %.3f s "
           "before the successor acquired (%.3f s after the cut)\n",
           (double)(stopped - t_cut) / 1e9, (double)(acq - last_act) / 1e9, (double)(acq - stopped) / 1e9,
           (double)(acq - t_cut) / 1e9);
    assert_true(stopped < acq);
    assert_true(last_act < acq);

    /* heal: the old leader sees the new holder and stays a follower */
    atomic_store(&cs[l].px.cut, false);
    simfix_sleep_ms(1500);
    assert_true(cand_leading_since(&cs[l], NULL) < 0);
    assert_true(cand_leading_since(&cs[s], NULL) >= 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(WEXITSTATUS(cand_signal(&cs[i], SIGTERM)), 0);
    check_lease_log("part");
    check_candidate_logs(cs, 3);
}

static void test_churn(void **state)
{
    (void)state;
    /* three rounds of killing whoever leads and starting a fresh process in its place */
    int n = 3;
    cand_start(&cs[0], "a", "churn", false);
    cand_start(&cs[1], "b", "churn", false);
    cand_start(&cs[2], "c", "churn", false);
    for (int round = 0; round < 3; round++) {
        int l = wait_leader(cs, n, -1);
        simfix_sleep_ms(400);
        cand_signal(&cs[l], round % 2 ? SIGTERM : SIGKILL);
        char name[8];
        snprintf(name, sizeof(name), "r%d", round);
        cand_start(&cs[n], name, "churn", false);
        n++;
    }
    wait_leader(cs, n, -1);
    for (int i = 0; i < n; i++)
        if (cs[i].pid > 0)
            assert_int_equal(WEXITSTATUS(cand_signal(&cs[i], SIGTERM)), 0);
    check_lease_log("churn");
    check_candidate_logs(cs, n);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sigkill_failover, cleanup_cands),
        cmocka_unit_test_teardown(test_sigterm_release_takeover, cleanup_cands),
        cmocka_unit_test_teardown(test_rebooted_holder_taken_over_at_once, cleanup_cands),
        cmocka_unit_test_teardown(test_holder_node_rebooted_taken_over_at_once, cleanup_cands),
        cmocka_unit_test_teardown(test_holder_node_rebooted_before_first_look, cleanup_cands),
        cmocka_unit_test_teardown(test_boot_record_only_when_node_agrees, cleanup_cands),
        cmocka_unit_test_teardown(test_partitioned_leader_stops_first, cleanup_cands),
        cmocka_unit_test_teardown(test_churn, cleanup_cands),
        cmocka_unit_test_teardown(test_watched_candidates_quiet, cleanup_cands),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
