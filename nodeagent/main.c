/* main.c -- rssd, where the agent and the leader roles meet: options, wiring of the agent, the
 * election and the leader threads, signals. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/agent.h"
#include "rss/cleanup.h"
#include "rss/cri.h"
#include "rss/election.h"
#include "rss/fencestate.h"
#include "rss/health.h"
#include "rss/kube.h"
#include "rss/leader.h"
#include "rss/log.h"
#include "rss/namespaces.h"
#include "rss/spec.h"

#define EXIT_USAGE 2

struct opts {
    const char *node, *ns, *kubeconfig, *cri_endpoint, *health_address, *peer_address, *state_dir;
    int health_port;
    long lease_duration_ms, renew_deadline_ms, retry_period_ms, fence_timeout_ms, heartbeat_ms;
    int heartbeat_misses;
    long hook_output_max;
    int reconcile_workers;
    struct rss_namespaces managed; /* --namespaces; n == 0: every namespace */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rssd [OPTIONS]\n"
               "The rssd node agent (and, when it holds the Lease rssd-leader, the leader) of\n"
               "ReplicatedStatefulSets. Runs hooks in member containers on this node through CRI.\n"
               "\n"
               "  --node NAME             this node (default $NODE_NAME)\n"
               "  --namespace NS          rssd's own namespace for its Leases (default $POD_NAMESPACE,\n"
               "                          else the kube client's namespace)\n"
               "  --namespaces NS[,NS...] manage the ReplicatedStatefulSets of these namespaces only:\n"
               "                          rssd lists and watches nothing outside them (default: every\n"
               "                          namespace; docs/deploy.md, the namespace overlay)\n"
               "  --kubeconfig FILE       kubeconfig (default $KUBECONFIG, else in-cluster config)\n"
               "  --cri-endpoint EP       the runtime's CRI socket, unix:///PATH (default\n"
               "                          $CONTAINER_RUNTIME_ENDPOINT; else the first known socket of\n"
               "                          containerd, k3s/RKE2, k0s, MicroK8s, CRI-O or cri-dockerd whose\n"
               "                          runtime answers and runs this pod: docs/cri.md)\n"
               "  --health-port PORT      /healthz, /readyz and /peer port (default 8476; 0 = any free\n"
               "                          port; off = no server, and so no failsafe peer checks)\n"
               "  --health-address ADDR   address to bind it (default: every address, IPv6 and IPv4)\n"
               "  --peer-address HOST     where the other agents reach this one for the failsafe\n"
               "                          (default $POD_IP; none = peers cannot vouch for this node)\n"
               "  --lease-duration D      leader Lease duration (default 15s)\n"
               "  --renew-deadline D      leader renew deadline (default 10s)\n"
               "  --retry-period D        leader retry period (default 2s)\n"
               "  --fence-timeout D       API unreachable this long -> stop local members (default 30s;\n"
               "                          at least 3 heartbeat periods)\n"
               "  --heartbeat-period D    heartbeat Lease renewal period (default 10s, the kubelet's)\n"
               "  --heartbeat-misses N    renewals missed before the leader calls this node silent\n"
               "                          (2..60, default 5): under an RSS's silentNodePolicy\n"
               "                          Promote, a silent node's primary is replaced at once\n"
               "  --state-dir DIR         node-local directory (a tmpfs such as /run/rssd) where the\n"
               "                          fence clock and what fencing needs survive an rssd restart\n"
               "                          (default $RSSD_STATE_DIR; unset or none = not kept)\n"
               "  --reconcile-workers N   when leading, reconcile up to N ReplicatedStatefulSets at once\n"
               "                          (1..64, default 4; 1 = one at a time): a slow one holds one\n"
               "                          worker, never the others\n"
               "  --hook-output-max BYTES the most output (stdout + stderr) one hook may print; more is\n"
               "                          reported as \"output too large\" and never used (default 1048576)\n"
               "  --log-level LEVEL       error, warn, info or debug (default info, or $RSS_LOG_LEVEL)\n"
               "  --log-format FORMAT     text, or json: one object per line with rss, member, action and\n"
               "                          epoch fields where a line is about them (default text)\n"
               "  --help                  this text\n"
               "Durations: milliseconds (\"1500\") or a duration string (\"15s\", \"1m30s\", \"500ms\").\n");
}

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rssd: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'rssd --help'.\n");
    va_end(ap);
    return -1;
}

static int parse_ms(const char *flag, const char *s, long *ms)
{
    char *end;
    if (*s >= '0' && *s <= '9') {
        long v = strtol(s, &end, 10);
        if (*end == '\0') {
            if (v <= 0)
                return bad("%s: must be positive, got '%s'", flag, s);
            *ms = v;
            return 0;
        }
    }
    uint64_t v;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_spec_parse_duration(s, &v, &err) < 0 || v > 86400000ULL)
        return bad("%s: bad duration '%s'", flag, s);
    *ms = (long)v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    enum {
        O_NODE = 256,
        O_NS,
        O_KC,
        O_CRI,
        O_HPORT,
        O_HADDR,
        O_PADDR,
        O_LD,
        O_RD,
        O_RP,
        O_FT,
        O_HB,
        O_HBM,
        O_SD,
        O_HOM,
        O_LOG,
        O_LOGF,
        O_NSS,
        O_RW,
        O_HELP
    };
    static const struct option lo[] = {{"node", required_argument, NULL, O_NODE},
                                       {"namespace", required_argument, NULL, O_NS},
                                       {"kubeconfig", required_argument, NULL, O_KC},
                                       {"cri-endpoint", required_argument, NULL, O_CRI},
                                       {"health-port", required_argument, NULL, O_HPORT},
                                       {"health-address", required_argument, NULL, O_HADDR},
                                       {"peer-address", required_argument, NULL, O_PADDR},
                                       {"lease-duration", required_argument, NULL, O_LD},
                                       {"renew-deadline", required_argument, NULL, O_RD},
                                       {"retry-period", required_argument, NULL, O_RP},
                                       {"fence-timeout", required_argument, NULL, O_FT},
                                       {"heartbeat-period", required_argument, NULL, O_HB},
                                       {"heartbeat-misses", required_argument, NULL, O_HBM},
                                       {"state-dir", required_argument, NULL, O_SD},
                                       {"hook-output-max", required_argument, NULL, O_HOM},
                                       {"log-level", required_argument, NULL, O_LOG},
                                       {"log-format", required_argument, NULL, O_LOGF},
                                       {"namespaces", required_argument, NULL, O_NSS},
                                       {"reconcile-workers", required_argument, NULL, O_RW},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};
    *o = (struct opts){.node = getenv("NODE_NAME"),
                       .ns = getenv("POD_NAMESPACE"),
                       .cri_endpoint = getenv("CONTAINER_RUNTIME_ENDPOINT"),
                       .health_address = NULL,
                       .peer_address = getenv("POD_IP"),
                       .health_port = 8476,
                       .lease_duration_ms = 15000,
                       .renew_deadline_ms = 10000,
                       .retry_period_ms = 2000,
                       .fence_timeout_ms = 30000,
                       .heartbeat_ms = 10000,
                       .heartbeat_misses = RSS_AGENT_HEARTBEAT_MISSES,
                       .state_dir = getenv("RSSD_STATE_DIR"),
                       .hook_output_max = 1048576,
                       .reconcile_workers = RSS_LEADER_DEFAULT_WORKERS};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
        char *end;
        switch (c) {
        case O_NODE:
            o->node = optarg;
            break;
        case O_NS:
            o->ns = optarg;
            break;
        case O_KC:
            o->kubeconfig = optarg;
            break;
        case O_CRI:
            o->cri_endpoint = optarg;
            break;
        case O_HPORT: {
            if (!strcmp(optarg, "off")) {
                o->health_port = -1;
                break;
            }
            long p = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || p < 0 || p > 65535)
                return bad("--health-port: bad port '%s' (a number, 0 for any free port, or off)", optarg);
            o->health_port = (int)p;
            break;
        }
        case O_HADDR:
            o->health_address = optarg;
            break;
        case O_PADDR:
            o->peer_address = optarg;
            break;
        case O_LD:
            if (parse_ms("--lease-duration", optarg, &o->lease_duration_ms) < 0)
                return -1;
            break;
        case O_RD:
            if (parse_ms("--renew-deadline", optarg, &o->renew_deadline_ms) < 0)
                return -1;
            break;
        case O_RP:
            if (parse_ms("--retry-period", optarg, &o->retry_period_ms) < 0)
                return -1;
            break;
        case O_SD:
            o->state_dir = optarg;
            break;
        case O_FT:
            if (parse_ms("--fence-timeout", optarg, &o->fence_timeout_ms) < 0)
                return -1;
            break;
        case O_HB:
            if (parse_ms("--heartbeat-period", optarg, &o->heartbeat_ms) < 0)
                return -1;
            break;
        case O_HBM: {
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < RSS_AGENT_HEARTBEAT_MISSES_MIN ||
                v > RSS_AGENT_HEARTBEAT_MISSES_MAX)
                return bad("--heartbeat-misses: '%s' is not a number of renewals in [%d, %d]", optarg,
                           RSS_AGENT_HEARTBEAT_MISSES_MIN, RSS_AGENT_HEARTBEAT_MISSES_MAX);
            o->heartbeat_misses = (int)v;
            break;
        }
        case O_HOM: {
            long v = strtol(optarg, &end, 10);
            /* At least a page (a sequence is tiny, a status message short); at most what runtimes send. */
            if (*optarg == '\0' || *end != '\0' || v < 4096 || v > 16 * 1024 * 1024)
                return bad("--hook-output-max: '%s' is not a byte count in [4096, 16777216]", optarg);
            o->hook_output_max = v;
            break;
        }
        case O_RW: {
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 1 || v > RSS_LEADER_MAX_WORKERS)
                return bad("--reconcile-workers: '%s' is not a number of workers in [1, %d]", optarg,
                           RSS_LEADER_MAX_WORKERS);
            o->reconcile_workers = (int)v;
            break;
        }
        case O_LOG:
            if (!strcmp(optarg, "error"))
                rss_log_set_level(RSS_LOG_ERROR);
            else if (!strcmp(optarg, "warn"))
                rss_log_set_level(RSS_LOG_WARN);
            else if (!strcmp(optarg, "info"))
                rss_log_set_level(RSS_LOG_INFO);
            else if (!strcmp(optarg, "debug"))
                rss_log_set_level(RSS_LOG_DEBUG);
            else
                return bad("--log-level: '%s' is not one of error, warn, info, debug", optarg);
            break;
        case O_LOGF: {
            enum rss_log_format f;
            if (rss_log_parse_format(optarg, &f) < 0)
                return bad("--log-format: '%s' is not one of text, json", optarg);
            rss_log_set_format(f);
            break;
        }
        case O_NSS: {
            _cleanup_error_ rss_error_t err = NULL;
            rss_namespaces_clear(&o->managed);
            if (rss_namespaces_parse(optarg, &o->managed, &err) < 0) {
                _cleanup_free_ char *msg = rss_error_string(err);
                return bad("%s", msg);
            }
            break;
        }
        case O_HELP:
            usage(stdout);
            exit(0);
        case ':':
            return bad("option '%s' needs a value", argv[optind - 1]);
        default:
            return bad("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bad("unexpected argument '%s'", argv[optind]);
    if (!o->node || !*o->node)
        return bad("no node name: pass --node or set NODE_NAME");
    _cleanup_error_ rss_error_t terr = NULL;
    if (rss_agent_timing_check(o->fence_timeout_ms, o->heartbeat_ms, &terr) < 0) {
        _cleanup_free_ char *msg = rss_error_string(terr);
        return bad("%s", msg);
    }
    return 0;
}

static void on_new_leader(void *ud, const char *identity)
{
    (void)ud;
    rss_log_info("the leader is now %s", *identity ? identity : "(nobody)");
}

/* The agent's watch of the leader Lease feeds the election's candidate: no GETs while it is held. */
static void leader_lease_seen(void *ud, const cJSON *lease)
{
    rss_election_observe(ud, lease);
}

static void *election_thread(void *arg)
{
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_election_run(arg, &err) < 0)
        rss_log_error(RSS_LOG_ERROR, &err, "election");
    return NULL;
}

struct agent_arg {
    struct rss_agent *agent;
    const atomic_bool *stop;
    int rc;
};

/* No --cri-endpoint: the runtime that answers at a known path and runs this very pod (docs/cri.md). A
 * runtime restarting as rssd starts, or one still recording rssd's container, is waited for a few
 * seconds; an ambiguity is not, as only the user can settle it. */
#define FIND_CRI_ATTEMPTS 10
static int find_cri(char **endpoint, rss_error_t *err)
{
    struct rss_cri_discover_options d = {.pod_namespace = getenv("POD_NAMESPACE"),
                                         .pod_name = getenv("POD_NAME")};
    for (int attempt = 1;; attempt++) {
        struct rss_cri_discovery found = {0};
        _cleanup_error_ rss_error_t e = NULL;
        if (rss_cri_discover(&d, &found, &e) == 0) {
            rss_log_info("CRI runtime %s at %s, found among the known sockets (%s)", found.runtime,
                         found.endpoint, found.report);
            *endpoint = TAKE_PTR(found.endpoint);
            rss_cri_discovery_clear(&found);
            return 0;
        }
        if (rss_error_code(e) != RSS_E_NOT_FOUND || attempt == FIND_CRI_ATTEMPTS) {
            *err = TAKE_PTR(e);
            return -1;
        }
        if (attempt == 1)
            rss_log_error(RSS_LOG_WARN, &e, "no CRI runtime yet; looking again every second for %d s",
                          FIND_CRI_ATTEMPTS - 1);
        sleep(1);
    }
}

static void *agent_thread(void *arg)
{
    struct agent_arg *aa = arg;
    _cleanup_error_ rss_error_t err = NULL;
    aa->rc = rss_agent_run(aa->agent, aa->stop, &err);
    if (aa->rc < 0)
        rss_log_error(RSS_LOG_ERROR, &err, "agent");
    return NULL;
}

int main(int argc, char **argv)
{
    rss_log_set_component("rssd");
    struct opts o;
    if (parse_opts(argc, argv, &o) < 0)
        return EXIT_USAGE;

    /* Signals are taken synchronously by main with sigwait; every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    _cleanup_error_ rss_error_t err = NULL;
    struct rss_kube *kube = NULL;
    if (rss_kube_new(o.kubeconfig, &kube, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "Kubernetes client");
        return 1;
    }
    rss_kube_set_timeout(kube, 10000);
    /* The node in the User-Agent lets the API server's audit log (and kubesim's counters) tell the
     * agents apart, as the kubelet's does. */
    _cleanup_free_ char *ua = rss_xasprintf("rssd/0.1 (%s)", o.node);
    rss_kube_set_user_agent(kube, ua);
    const char *ns = o.ns && *o.ns ? o.ns : rss_kube_namespace(kube);
    struct rss_cri *cri = NULL;
    /* One answer carries stdout and stderr together, plus a little message framing. */
    struct rss_cri_options co = {.max_recv_bytes = (int)(o.hook_output_max + 64 * 1024)};
    _cleanup_free_ char *found = NULL;
    if (!(o.cri_endpoint && *o.cri_endpoint) && find_cri(&found, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "CRI runtime");
        rss_kube_free(kube);
        return 1;
    }
    if (rss_cri_new(found ? found : o.cri_endpoint, &co, &cri, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "CRI client");
        rss_kube_free(kube);
        return 1;
    }
    _cleanup_free_ char *identity = rss_election_make_identity(o.node);
    rss_log_info("rssd starting: node %s, namespace %s, API %s, CRI %s, identity %s", o.node, ns,
                 rss_kube_server(kube), rss_cri_endpoint(cri), identity);
    for (size_t i = 0; i < o.managed.n; i++)
        rss_log_info("managing namespace %s only (--namespaces)", o.managed.names[i]);

    atomic_bool quit = false;
    struct rss_leader_terms *terms = rss_leader_terms_new();
    struct rss_leader *leader = NULL;
    struct rss_election *el = NULL;
    struct rss_agent *agent = NULL;
    struct rss_health *health = NULL;
    struct rss_leader_scope floor_scope = {.kube = kube, .namespaces = &o.managed};
    /* The reboot shortcut needs the full boot id; without one the election simply waits out Leases. */
    char boot_id[RSS_FENCESTATE_BOOT_LEN] = "";
    {
        _cleanup_error_ rss_error_t be = NULL;
        if (rss_fencestate_boot_id(boot_id, &be) < 0) {
            rss_log_error(RSS_LOG_WARN, &be, "boot id unknown: a rebooted leader's Lease is waited out");
            boot_id[0] = '\0';
        }
    }
    struct rss_election_config ec = {.kube = kube,
                                     .ns = ns,
                                     .name = RSS_LEADER_LEASE,
                                     .identity = identity,
                                     .lease_duration_ms = o.lease_duration_ms,
                                     .renew_deadline_ms = o.renew_deadline_ms,
                                     .retry_period_ms = o.retry_period_ms,
                                     .on_started_leading = rss_leader_terms_on_started,
                                     .on_stopped_leading = rss_leader_terms_on_stopped,
                                     .on_new_leader = on_new_leader,
                                     .userdata = terms,
                                     .epoch_floor = rss_leader_epoch_floor,
                                     .floor_userdata = &floor_scope,
                                     .node = o.node,
                                     .boot_id = boot_id};
    struct rss_agent_config ac = {.kube = kube,
                                  .cri = cri,
                                  .node = o.node,
                                  .ns = ns,
                                  .identity = identity,
                                  .fence_timeout_ms = o.fence_timeout_ms,
                                  .heartbeat_ms = o.heartbeat_ms,
                                  .heartbeat_misses = o.heartbeat_misses,
                                  .hook_output_max = (size_t)o.hook_output_max,
                                  .namespaces = &o.managed,
                                  .state_dir =
                                      o.state_dir && strcmp(o.state_dir, "none") ? o.state_dir : NULL,
                                  .leader_lease_seen = leader_lease_seen};
    struct rss_leader_config lc = {.ns = ns,
                                   .namespaces = &o.managed,
                                   .fence_timeout_ms = o.fence_timeout_ms,
                                   .workers = o.reconcile_workers};
    int rc = 1;
    if (rss_election_new(&ec, &el, &err) == 0)
        ac.leader_lease_ud = el;
    if (!el || rss_agent_new(&ac, &agent, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "configuration");
        goto out;
    }
    lc.kube = kube;
    lc.election = el;
    if (rss_leader_new(&lc, &leader, &err) < 0) {
        rss_log_error(RSS_LOG_ERROR, &err, "leader");
        goto out;
    }
    /* Not fatal: several rssd share one host in the test world, and a missing health port only
     * makes the probes fail (the kubelet then restarts us), while the agent itself works. */
    if (o.health_port >= 0 && rss_health_start(o.health_address, o.health_port, agent, &health, &err) < 0)
        rss_log_error(RSS_LOG_ERROR, &err, "health endpoint disabled");
    if (health && o.peer_address && *o.peer_address)
        rss_agent_set_peer_address(agent, o.peer_address, rss_health_port(health));
    else
        rss_log_warn(
            "no peer address (--peer-address or $POD_IP) or no health server: the other agents cannot "
            "vouch for this node, so it stops its members whenever the API server is unreachable");

    struct agent_arg aa = {.agent = agent, .stop = &quit};
    pthread_t t_agent, t_el;
    if (rss_leader_terms_start(terms, leader, &err) < 0 ||
        (errno = pthread_create(&t_agent, NULL, agent_thread, &aa)) != 0) {
        if (!err)
            rss_error_errno(&err, errno, "starting the agent thread");
        rss_log_error(RSS_LOG_ERROR, &err, "rssd");
        exit(1);
    }
    pthread_create(&t_el, NULL, election_thread, el);

    int sig = 0;
    sigwait(&sigs, &sig);
    rss_log_info("signal %d: stopping (members keep running)", sig);
    atomic_store(&quit, true);
    rss_leader_terms_on_stopped(terms); /* the term ends now, not at the next renew */
    rss_election_stop(el); /* stops leading first, then releases the Lease for a quick successor */
    pthread_join(t_el, NULL);
    rss_leader_terms_stop(terms);
    terms = NULL;
    pthread_join(t_agent, NULL);
    rc = aa.rc < 0 ? 1 : 0;
    if (rss_agent_busy_workers(agent) > 0) {
        /* A hook is still in flight: its worker uses the clients, so exit without freeing them. */
        rss_health_stop(health);
        rss_log_info("rssd stopped");
        exit(rc);
    }
out:
    rss_leader_terms_stop(terms);
    rss_health_stop(health);
    rss_leader_free(leader);
    rss_agent_free(agent);
    rss_election_free(el);
    rss_cri_free(cri);
    rss_kube_free(kube);
    rss_namespaces_clear(&o.managed);
    if (rc == 0)
        rss_log_info("rssd stopped");
    return rc;
}
