/* main.c -- kubectl-rss, the kubectl plugin for rssd: parses kubectl's flags and runs one command. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "plugin_internal.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "kubectl rss -- day-2 commands for rssd's ReplicatedStatefulSets\n"
        "\n"
        "Usage: kubectl rss COMMAND [NAME [POD]] [flags]\n"
        "\n"
        "Commands:\n"
        "  status NAME          members, roles, sequences, the last recovery, and what rssd waits for\n"
        "  events NAME          the Events rssd wrote about NAME, oldest first\n"
        "  history NAME         its recoveries and failovers, step by step, kept after the Events\n"
        "                       expire (status.history: the newest 40 entries)\n"
        "  force-seed NAME POD  start POD's copy as the seed when rssd waits; the leader's refusals\n"
        "                       (a member runs or is starting; POD is not a member) are checked first\n"
        "  release-hold NAME POD  let POD, held back after a recovery that left it out, join (its writes\n"
        "                       beyond the seed's sequence are replaced); refused where rssd would\n"
        "  switchover NAME      a planned switchover of a one-primary RSS (spec.failover PromoteStandby):\n"
        "                       the primary is stopped with its stop hook, the most advanced standby\n"
        "                       promoted (--to POD: that one when it is as advanced), the others\n"
        "                       repointed, the old primary rejoins; refused where rssd would refuse it\n"
        "  suspend NAME         stop every member on purpose, one at a time (spec.suspend: true)\n"
        "  resume NAME          bring a suspended RSS back (spec.suspend: false)\n"
        "  logs NAME            what every node's rssd logged about NAME, merged in time order\n"
        "                       (--since 1h: only that far back; --tail N: the last N lines)\n"
        "  report NAME          a support bundle (-f FILE, default rss-report-NS-NAME-TIME.tar): the RSS,\n"
        "                       StatefulSet, pods, records, Events, rssd's Leases and log lines; env\n"
        "                       values redacted; README.txt says what could not be read\n"
        "  agents               every node's rssd: its version, its heartbeat's age, which one leads\n"
        "  version              this plugin's version\n"
        "\n"
        "Flags (as kubectl's):\n"
        "  -n, --namespace NS   the RSS's namespace (default: the context's namespace, else default)\n"
        "      --context NAME   the kubeconfig context to use (default: current-context)\n"
        "      --kubeconfig F   this kubeconfig file only (default: the $KUBECONFIG list merged,\n"
        "                       else ~/.kube/config)\n"
        "      --cluster NAME, --user NAME  this kubeconfig cluster or user instead of the context's\n"
        "  -s, --server URL     the API server instead of the kubeconfig's\n"
        "      --tls-server-name NAME  the server name for SNI and the certificate check, instead of\n"
        "                       the server URL's host (the connection still goes to that host)\n"
        "      --certificate-authority F  this CA file instead of the kubeconfig's\n"
        "      --client-certificate F, --client-key F  this client certificate and key\n"
        "      --token T        this bearer token instead of the kubeconfig user's credential\n"
        "      --insecure-skip-tls-verify  do not check the server's certificate\n"
        "      --as USER, --as-group GROUP  impersonate (repeat --as-group for several)\n"
        "      --request-timeout T  give up on a request after T: seconds, or with a unit (5s, 1m);\n"
        "                       0 never (default 30s)\n"
        "  -y, --yes            force-seed, release-hold and switchover without asking (needed when not\n"
        "                       on a terminal)\n"
        "      --to POD         switchover: the standby to promote\n"
        "  -o, --output FORMAT  json or yaml: status, events, history and agents print that (status: the "
        "RSS)\n"
        "      --rssd-namespace NS  where rssd runs (default rssd-system): its nodes' heartbeat\n"
        "                       Leases say why a refused force-seed waits, and until when\n"
        "  -h, --help           this text\n"
        "\n"
        "Exit status: 0 done, 1 failed or refused (the reason on stderr), 2 bad usage.\n");
}

enum {
    O_CONTEXT = 256,
    O_KUBECONFIG,
    O_RSSD_NS,
    O_TOKEN,
    O_INSECURE,
    O_AS,
    O_AS_GROUP,
    O_CLUSTER,
    O_USER,
    O_TLS_SERVER_NAME,
    O_CA,
    O_CLIENT_CERT,
    O_CLIENT_KEY,
    O_TIMEOUT,
    O_SINCE,
    O_TAIL,
    O_TO,
};

#define MAX_AS_GROUPS 32

/* Go's time.ParseDuration: a possibly signed sequence of decimal numbers, each with an optional fraction
 * and a unit (ns, us, µs, ms, s, m, h), as 1.5s or 1h30m; "0" alone needs none. *ms: its length in
 * milliseconds, with fractions; -1 for a negative one. */
static int go_duration_ms(const char *s, double *ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"\xce\xbcs", 1e-3},
                 {"ms", 1},    {"s", 1e3},   {"m", 6e4},          {"h", 3.6e6}};
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!strcmp(s, "0")) {
        *ms = 0;
        return 0;
    }
    if (!*s)
        return -1;
    double total = 0;
    while (*s) {
        double v = 0, scale = 1;
        bool digits = false;
        for (; *s >= '0' && *s <= '9'; s++, digits = true)
            v = v * 10 + (*s - '0');
        if (*s == '.')
            for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
                v += (*s - '0') * (scale /= 10);
        if (!digits)
            return -1;
        size_t n = 0;
        while (s[n] && s[n] != '.' && !(s[n] >= '0' && s[n] <= '9'))
            n++;
        size_t i = 0;
        while (i < sizeof(units) / sizeof(units[0]) &&
               !(strlen(units[i].unit) == n && !strncmp(s, units[i].unit, n)))
            i++;
        if (i == sizeof(units) / sizeof(units[0]))
            return -1; /* no unit, or an unknown one */
        total += v * units[i].ms;
        s += n;
    }
    *ms = neg && total > 0 ? -1 : total;
    return 0;
}

/* kubectl's --request-timeout (client-go's ParseTimeout): a whole number of seconds, else a Go duration.
 * *ms: milliseconds, rounded up; 0 for none: zero, or a negative duration, which kubectl's Go client
 * takes as none too. */
static int parse_timeout(const char *s, long *ms)
{
    const char *d = s + (*s == '+');
    double v;
    if (*d >= '0' && *d <= '9' && strspn(d, "0123456789") == strlen(d))
        v = strtod(d, NULL) * 1e3;
    else if (go_duration_ms(s, &v) < 0)
        return -1;
    if (v <= 0) {
        *ms = 0;
    } else if (v >= INT_MAX) {
        *ms = INT_MAX; /* 24 days: as good as none, and no overflow of the client's deadlines */
    } else {
        *ms = (long)v;
        *ms += (double)*ms < v; /* 1ns is 1 ms, not none */
    }
    return 0;
}

/* pflag's booleans (Go's strconv.ParseBool): --insecure-skip-tls-verify=false is kubectl's too. */
static int parse_bool(const char *s, bool *v)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
            *v = !strcmp(s, yes[i]);
            return 0;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"namespace", required_argument, NULL, 'n'},
                                       {"context", required_argument, NULL, O_CONTEXT},
                                       {"kubeconfig", required_argument, NULL, O_KUBECONFIG},
                                       {"yes", no_argument, NULL, 'y'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"rssd-namespace", required_argument, NULL, O_RSSD_NS},
                                       {"server", required_argument, NULL, 's'},
                                       {"token", required_argument, NULL, O_TOKEN},
                                       {"insecure-skip-tls-verify", optional_argument, NULL, O_INSECURE},
                                       {"as", required_argument, NULL, O_AS},
                                       {"as-group", required_argument, NULL, O_AS_GROUP},
                                       {"cluster", required_argument, NULL, O_CLUSTER},
                                       {"user", required_argument, NULL, O_USER},
                                       {"tls-server-name", required_argument, NULL, O_TLS_SERVER_NAME},
                                       {"certificate-authority", required_argument, NULL, O_CA},
                                       {"client-certificate", required_argument, NULL, O_CLIENT_CERT},
                                       {"client-key", required_argument, NULL, O_CLIENT_KEY},
                                       {"request-timeout", required_argument, NULL, O_TIMEOUT},
                                       {"since", required_argument, NULL, O_SINCE},
                                       {"tail", required_argument, NULL, O_TAIL},
                                       {"to", required_argument, NULL, O_TO},
                                       {"file", required_argument, NULL, 'f'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    const char *ns = NULL;
    struct rss_kube_opts ko = {0};
    const char *groups[MAX_AS_GROUPS];
    struct plugin_ctx ctx = {.out = stdout, .rssd_ns = "rssd-system"};
    bool timeout_set = false;
    long timeout_ms = 0, since_ms = 0, tail = -1;
    const char *report_file = NULL, *to = NULL;
    int o;
    /* kubectl hands the plugin its flags wherever the user typed them: GNU getopt permutes. */
    while ((o = getopt_long(argc, argv, "n:s:yo:f:h", lo, NULL)) != -1) {
        switch (o) {
        case 'n':
            ns = optarg;
            break;
        case O_CONTEXT:
            ko.context = optarg;
            break;
        case O_KUBECONFIG:
            ko.kubeconfig = optarg;
            break;
        case O_RSSD_NS:
            ctx.rssd_ns = optarg;
            break;
        case 's':
            ko.server = optarg;
            break;
        case O_TOKEN:
            ko.token = optarg;
            break;
        case O_INSECURE:
            if (optarg && parse_bool(optarg, &ko.insecure) < 0) {
                fprintf(stderr, "error: --insecure-skip-tls-verify=%s: not true or false\n", optarg);
                return 2;
            }
            if (!optarg)
                ko.insecure = true;
            break;
        case O_CLUSTER:
            ko.cluster = optarg;
            break;
        case O_USER:
            ko.user = optarg;
            break;
        case O_TLS_SERVER_NAME:
            ko.tls_server_name = optarg;
            break;
        case O_CA:
            ko.certificate_authority = optarg;
            break;
        case O_CLIENT_CERT:
            ko.client_certificate = optarg;
            break;
        case O_CLIENT_KEY:
            ko.client_key = optarg;
            break;
        case O_TIMEOUT:
            timeout_set = *optarg != '\0'; /* empty: the default, as with kubectl */
            if (!timeout_set)
                break;
            if (parse_timeout(optarg, &timeout_ms) < 0) {
                fprintf(stderr,
                        "error: --request-timeout \"%s\" is not a duration: give a whole number of seconds, "
                        "or a number with a unit (e.g. 5s, 1m, 1h30m); 0 means no timeout\n",
                        optarg);
                return 2;
            }
            break;
        case O_SINCE:
            if (parse_timeout(optarg, &since_ms) < 0 || since_ms <= 0) {
                fprintf(stderr,
                        "error: --since \"%s\" is not a positive duration (e.g. 30m, 2h, or seconds)\n",
                        optarg);
                return 2;
            }
            break;
        case 'f':
            report_file = optarg;
            break;
        case O_TAIL: {
            char *end;
            tail = strtol(optarg, &end, 10);
            if (!*optarg || *end || tail < 0) {
                fprintf(stderr, "error: --tail \"%s\" is not a number of lines\n", optarg);
                return 2;
            }
            break;
        }
        case O_AS:
            ko.as = optarg;
            break;
        case O_AS_GROUP:
            if (ko.n_as_groups == MAX_AS_GROUPS) {
                fprintf(stderr, "error: at most %d --as-group\n", MAX_AS_GROUPS);
                return 2;
            }
            groups[ko.n_as_groups++] = optarg;
            ko.as_groups = groups;
            break;
        case 'y':
            ctx.yes = true;
            break;
        case O_TO:
            to = optarg;
            break;
        case 'o':
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "yaml") != 0) {
                fprintf(stderr,
                        "error: unsupported output format \"%s\" (json and yaml are; the tables are the "
                        "default)\n",
                        optarg);
                return 2;
            }
            ctx.output = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    int left = argc - optind;
    const char *cmd = left > 0 ? argv[optind] : NULL;
    if (cmd && !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    static const struct {
        const char *name;
        int args; /* after the command */
    } cmds[] = {{"status", 1},       {"events", 1},  {"history", 1}, {"force-seed", 2},
                {"release-hold", 2}, {"suspend", 1}, {"resume", 1},  {"agents", 0},
                {"version", 0},      {"logs", 1},    {"report", 1},  {"switchover", 1}};
    int want = -1;
    for (size_t i = 0; cmd && i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (!strcmp(cmd, cmds[i].name))
            want = cmds[i].args;
    if (!cmd || want < 0) {
        fprintf(stderr, "error: %s%s\n\n", cmd ? "unknown command: " : "no command given", cmd ? cmd : "");
        usage(stderr);
        return 2;
    }
    if (left - 1 != want) {
        fprintf(stderr, "error: %s takes %s\n", cmd,
                want == 2   ? "NAME POD"
                : want == 1 ? "NAME"
                            : "no argument");
        return 2;
    }
    if (ctx.output && strcmp(cmd, "status") && strcmp(cmd, "events") && strcmp(cmd, "history") &&
        strcmp(cmd, "agents") && strcmp(cmd, "logs")) {
        fprintf(stderr, "error: -o is for status, events, history, logs and agents, not %s\n", cmd);
        return 2;
    }
    if (report_file && strcmp(cmd, "report")) {
        fprintf(stderr, "error: -f is for report, not %s\n", cmd);
        return 2;
    }
    if (to && strcmp(cmd, "switchover")) {
        fprintf(stderr, "error: --to is for switchover, not %s\n", cmd);
        return 2;
    }
    if ((since_ms || tail >= 0) && strcmp(cmd, "logs")) {
        fprintf(stderr, "error: --since and --tail are for logs, not %s\n", cmd);
        return 2;
    }
    if (!strcmp(cmd, "version")) {
        printf("kubectl-rss %s\n", RSS_VERSION);
        return 0;
    }
    const char *name = want >= 1 ? argv[optind + 1] : NULL, *pod = want == 2 ? argv[optind + 2] : NULL;
    /* Errors go to stderr once, here; the client library's own logging stays quiet. */
    rss_log_set_level(RSS_LOG_ERROR);
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_kube *kube = NULL;
    if (rss_kube_new_opts(&ko, &kube, &err) < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        fprintf(stderr, "error: %s\n", msg);
        return 1;
    }
    rss_kube_set_user_agent(kube, "kubectl-rss/" RSS_VERSION);
    rss_kube_set_retries(kube, 2, 1000);
    if (timeout_set)
        rss_kube_set_timeout(kube, timeout_ms); /* 0: none */
    ctx.kube = kube;
    ctx.ns = ns && *ns ? ns : rss_kube_namespace(kube);
    int r;
    if (!strcmp(cmd, "status"))
        r = plugin_status(&ctx, name, &err);
    else if (!strcmp(cmd, "events"))
        r = plugin_events(&ctx, name, &err);
    else if (!strcmp(cmd, "history"))
        r = plugin_history(&ctx, name, &err);
    else if (!strcmp(cmd, "agents"))
        r = plugin_agents(&ctx, &err);
    else if (!strcmp(cmd, "logs"))
        r = plugin_logs(&ctx, name, (since_ms + 999) / 1000, tail, stderr, &err);
    else if (!strcmp(cmd, "report"))
        r = plugin_report(&ctx, name, report_file, &err);
    else if (!strcmp(cmd, "force-seed"))
        r = plugin_force_seed(&ctx, name, pod, &err);
    else if (!strcmp(cmd, "release-hold"))
        r = plugin_release_hold(&ctx, name, pod, &err);
    else if (!strcmp(cmd, "switchover"))
        r = plugin_switchover(&ctx, name, to, &err);
    else
        r = plugin_suspend(&ctx, name, !strcmp(cmd, "suspend"), &err);
    fflush(stdout);
    if (r < 0) {
        _cleanup_free_ char *msg = rss_error_string(err);
        fprintf(stderr, "error: %s\n", msg);
    }
    rss_kube_free(kube);
    return r < 0 ? 1 : 0;
}
