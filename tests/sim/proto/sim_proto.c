/* sim_proto.c -- the protocol in virtual time: the real planner, modelled agents and applications, seeded
 * fault schedules, the chaos oracle checked at every step (issue 37, items 2 and 3, first part).
 *
 * One schedule is one RSS of 3 members on 3 nodes, run for `--minutes` simulated minutes in steps of one
 * virtual second: faults for the first two thirds, then none (the liveness part). Everything comes from one
 * splitmix64 stream seeded by the schedule's number, so `--seed N --trace` replays schedule N step by step.
 *
 * What is real: rss_planner_plan (the leader's every decision) and the agent's pure core, rss_agent_core
 * (the verdict on a desired action, the generation rule, a crash seen by `status`, the failsafe rule, a
 * wake's verdict and the Node's proof of rule 18). What is modelled, each
 * in one function below: the leader's loop (when it plans; its writes in leader_apply.c's order, the first
 * failed one ending the plan; the liveness verdicts from the heartbeats), the agents (probe after a boot,
 * write-ahead, hooks that take time and may fail, the periodic `status`, the position answer and detach of
 * rule 19, the fence when the API server is unreachable, the wake of rule 18 on a Node object as the node
 * controller leaves it), the StatefulSet controller (pods removed and made at the replicas
 * the plans set) and the applications: each member's data is a history (a branch and a length in a tree
 * of branches); a primary appends a write each second, acknowledged only when the application's own
 * replication says so (all-primary: the live members of the last primary component, when a majority of
 * it, as Galera's quorum; one primary: a standby that follows it, has not detached and caught up, as
 * `ANY 1`; standbys lag at random).
 *
 * Faults: power off and on (one node, or all), freeze and thaw, an application dying, a new leader,
 * spec.replicas 3 -> 2 -> 3, failing leader writes, failing hooks and detaches, a shared API outage
 * (nobody reaches the API server; the leader's liveness clocks restart after it, leader_liveness.c), a
 * partial partition (one node loses the API server, its peers still reach it), rssd restarted (down 2-91 s;
 * a hook in flight killed or left running unreported).
 *
 * The oracle, on every step (the chaos oracle's properties, tests/chaos/oracle.sh):
 *   P1 no acknowledged write lost: a member seeded or promoted holds every write acknowledged so far, and at
 *      the end the primary does;
 *   P2 a lights-out seed never goes to an older copy: a member whose history is a prefix of another
 *      member's (rules 1-3; minimumMembers is the default, every member), unless the leader left that
 *      other member out (its record's leftOut hold, rule 14: the old primary at a promotion, whose newer
 *      writes were never acknowledged; P1 says whether that held), it was scaled away, or the admin set
 *      minimumMembers (a scenario's edit) and its node is off;
 *   P3 at most one seed per lights-out: a seed never runs while another member's application runs as
 *      primary on a live node (and no pod is removed while its application runs);
 *   P4 no action of a stale epoch runs (the agent's verdict, rule 4);
 *   P5 once the faults end, the RSS is Running with every member in its role within the schedule;
 *   P6 the leader's dead verdict is true (rules 12, 18): a node it judges dead runs no member, and one
 *      judged dead while frozen runs none when it wakes; except the failsafe's known gap, counted (every
 *      agent hosting the RSS cut off together while the leader is not: they see a shared outage). rssd
 *      down when its node is cut off or frozen is a known gap too (nothing fences until rssd is back), which
 *      the random faults do not combine (docs/testing.md; scenarios may);
 *   P7 a shared API outage alone stops nothing (rule 5: every agent hosting the RSS live and together).
 * A violation prints the seed and the last steps of the trace, and the run exits 1.
 *
 * Usage: sim_proto [--schedules N] [--first S] [--minutes M] [--seed S --trace]
 *        sim_proto --script tests/sim/proto/scenarios/NAME.txt [--seed S] [--trace]   (parse_script()) */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner_fixture.h"
#include "rss/action.h"
#include "rss/agent.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/json.h"

#define NMEM        3
#define MAXBRANCH   4096
#define FENCE_MS    20000 /* the agent's fence timeout: a node silent longer stops its application */
#define NODE_GRACE  40000 /* the node controller's grace: a silent node's Ready turns Unknown after it */
#define LEASE_MS    10000 /* a heartbeat older than this: the node is silent */
#define DEAD_MS     45000 /* fence timeout + stop timeout + kill + margin (the leader's dead window) */
#define TRACE_KEEP  60
#define RESYNC_MS   10000
#define EVENTS_KEEP 128

/* all-primary (Galera); one primary and two standbys under PromoteStandby, ANY 1, with a detach hook; the
 * same with silentNodePolicy Promote (rule 19's promotion without the dead window); the same without the
 * detach hook (the promotion waits out the dead window: rule 12) */
enum shape { GALERA, SINGLE, SINGLE_EARLY, SINGLE_NODETACH };
static const char *const shape_names[] = {
    "all-primary", "one primary", "one primary, silentNodePolicy Promote", "one primary, no detach hook"};

/* A scripted scenario (tests/sim/proto/scenarios/): its shape, the members' data, and what happens at
 * which second; see parse_script(). */
#define SCRIPT_MAX 128
struct script_step {
    int64_t at_ms;
    char verb[32], what[32], arg[32];
    char text[160]; /* expect message TEXT, expect event REASON TEXT: the line's rest (spaces kept) */
    int line;
};
struct script {
    const char *path;
    enum shape shape;
    uint64_t data[NMEM];
    bool off[NMEM]; /* its node stays off at the start, its record from before the lights-out */
    int minutes;
    struct script_step steps[SCRIPT_MAX];
    size_t n;
};

/* ---- the seeded stream ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* true with probability n in 1000 */
static bool chance(unsigned per_mille)
{
    return rng_next() % 1000 < per_mille;
}

static unsigned below(unsigned n)
{
    return (unsigned)(rng_next() % n);
}

/* ---- histories: a tree of branches; a member's data is (branch, length) ---- */

struct history {
    int branch;
    uint64_t len;
};

static struct {
    int parent[MAXBRANCH];
    uint64_t fork[MAXBRANCH]; /* the parent's length where the branch starts */
    uint64_t tip[MAXBRANCH];
    int n;
} tree;

/* h holds write number `len` of branch b (a write is named by the branch that made it and its position) */
static bool holds(struct history h, int b, uint64_t len)
{
    int cur = h.branch;
    uint64_t upto = h.len;
    for (;;) {
        if (cur == b)
            return len <= upto;
        if (cur == 0)
            return false;
        upto = upto < tree.fork[cur] ? upto : tree.fork[cur];
        cur = tree.parent[cur];
    }
}

static struct history append(struct history h)
{
    if (tree.tip[h.branch] == h.len) {
        tree.tip[h.branch]++;
        return (struct history){h.branch, h.len + 1};
    }
    if (tree.n >= MAXBRANCH) /* a schedule that forks this often is already wrong: keep the last branch */
        return (struct history){h.branch, h.len};
    int b = tree.n++;
    tree.parent[b] = h.branch;
    tree.fork[b] = h.len;
    tree.tip[b] = h.len + 1;
    return (struct history){b, h.len + 1};
}

/* ---- the simulated members ---- */

struct member {
    /* the node */
    bool on, frozen;
    int64_t last_heartbeat, frozen_at;
    int64_t ready_since;     /* its Node's Ready=True lastTransitionTime (the kubelet's, wall ms) */
    int64_t kubelet_silent;  /* since when its kubelet has not reached the API server (0: it does) */
    bool judged_dead_frozen; /* the leader judged it dead while it was frozen (P6) */
    bool api_cut; /* a partial partition: this node alone lost the API server (its peers reach it) */
    int64_t api_cut_until;
    bool fenced; /* stopped by its agent's fence (API unreachable, the failsafe did not keep) */
    /* rssd restarted: down until then; its hook in flight either killed with its exec or left running in
     * the container (orphan), ending unreported */
    int64_t agent_down_until;
    bool restarted, orphan;
    bool kept;   /* the failsafe keeps its members through this cut (every hosting agent reached, none with
                  * the API server) */
    bool booted; /* powered on since its agent last probed: the agent probes before anything else */
    /* the application */
    enum rss_role app; /* STOPPED, PRIMARY or SECONDARY */
    struct history data;
    int follows; /* ordinal of the primary a standby replicates from, -1 */
    bool detached;
    /* the agent's hook in flight */
    bool hook_running;
    int64_t hook_done_at;
    struct rss_desired hook;
    uint64_t hook_generation;
    int cid_counter;
    bool fail_hook, fail_detach; /* its next hook, its next detach fails (script) */
    int64_t lag_until;           /* a standby that receives nothing until then (script) */
};

struct sim {
    enum shape shape;
    struct world w;
    struct member mem[NMEM];
    int64_t start, fault_end, end;
    /* all-primary: the members of the last primary component (Galera's view), and whether the live ones
     * among them are a majority of it (a component that may write) */
    bool comp[NMEM];
    bool quorate;
    /* the leader plans when a record changed (its watches), a node's liveness changed, or every
     * RESYNC_MS (its full pass), as leader.c does: most virtual seconds of a schedule plan nothing */
    bool dirty;
    int64_t last_plan;
    /* a shared API outage (nobody reaches the API server) until then; the leader's liveness clocks restart
     * after its view had a gap (leader_liveness.c), from liveness_from */
    int64_t api_down_until, liveness_from;
    bool kept_dead[NMEM], kept_dead_counted[NMEM];
    unsigned kept_dead_n; /* dead verdicts in the failsafe's known gap (P6) */
    bool seen_alive[NMEM], seen_dead[NMEM];
    /* the acknowledged writes: the newest per branch is enough (a branch's writes are a prefix) */
    uint64_t acked[MAXBRANCH];
    bool trace;
    /* a scripted scenario (--script): its faults only, nothing random fails */
    const struct script *script;
    unsigned fail_writes; /* the leader's next writes that fail (script) */
    int last_seed;        /* the member that ran the last seed (-1: none yet) */
    unsigned seeds;       /* seed hooks run so far (promotions too) */
    int forced;           /* the member the admin's force-seed named, once the leader took it (-1) */
    char force_seed[32];  /* the RSS's force-seed annotation (a scenario's `force-seed N`), w.force_seed */
    unsigned stops;       /* `stop` hooks run so far */
    /* a scenario's Events, each (reason, message) once, as a cluster keeps them (expect event) */
    struct {
        char reason[40], message[400];
    } events[EVENTS_KEEP];
    unsigned n_events;
    char log[TRACE_KEEP][200];
    unsigned log_n;
    unsigned long seed;
    uint64_t steps, plans;
};

static void say(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct sim *s, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    char *slot = s->log[s->log_n++ % TRACE_KEEP];
    snprintf(slot, 200, "t=%" PRId64 " %s", (s->w.now - s->start) / 1000, line);
    if (s->trace)
        printf("%s\n", slot);
}

static void violation(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void violation(struct sim *s, const char *fmt, ...)
{
    if (!s->trace) {
        unsigned from = s->log_n > TRACE_KEEP ? s->log_n - TRACE_KEEP : 0;
        for (unsigned i = from; i < s->log_n; i++)
            fprintf(stderr, "  %s\n", s->log[i % TRACE_KEEP]);
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "VIOLATION seed %lu (%s) at t=%" PRId64 " s: ", s->seed, shape_names[s->shape],
            (s->w.now - s->start) / 1000);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (s->script)
        fprintf(stderr, "\n  replay: sim_proto --script %s --seed %lu --trace\n", s->script->path, s->seed);
    else
        fprintf(stderr, "\n  replay: sim_proto --seed %lu --trace\n", s->seed);
    exit(1);
}

static bool node_live(const struct member *x)
{
    return x->on && !x->frozen;
}

/* The node reaches the API server: no shared outage, no cut of its own. */
static bool api_ok(const struct sim *s, unsigned o)
{
    return s->w.now >= s->api_down_until && !s->mem[o].api_cut;
}

/* P1: every acknowledged write is in h */
static void check_holds_acked(struct sim *s, unsigned ordinal, struct history h, const char *what)
{
    for (int b = 0; b < tree.n; b++)
        if (s->acked[b] && !holds(h, b, s->acked[b]))
            violation(s, "P1: %s %u lacks acknowledged write %d/%" PRIu64 " (it has %d/%" PRIu64 ")", what,
                      ordinal, b, s->acked[b], h.branch, h.len);
}

/* ---- the world the leader reads ---- */

static void new_container(struct sim *s, unsigned o)
{
    struct rss_member_input *m = find(&s->w, o);
    snprintf(store(&s->w, m)->cid, sizeof(store(&s->w, m)->cid), "containerd://c%u-%d", o,
             ++s->mem[o].cid_counter);
}

/* The agent's report, written to its record: observed as the real agent writes it. */
static void report(struct sim *s, unsigned o, enum rss_role role, uint64_t gen, bool with_seq)
{
    struct rss_member_input *m = find(&s->w, o);
    struct rss_last_action last = m->observed.last;
    last.message = NULL;
    m->observed.last.message = NULL;
    struct rss_action_id pos_for = m->observed.position_for;
    bool has_pos = m->observed.has_position, det = m->observed.detached;
    uint64_t pos = m->observed.position;
    s->dirty = true;
    set_observed(m, role, gen, with_seq, s->mem[o].data.len, NULL);
    m->observed.last = last;
    m->observed.lease_epoch = s->w.epoch;
    m->observed.time_ms = s->w.now;
    m->observed.position_for = pos_for;
    m->observed.has_position = has_pos;
    m->observed.position = pos;
    m->observed.detached = det;
}

/* ---- the application ---- */

/* the peer to join or follow: a running primary, in the all-primary shape one of a quorate component */
static int running_primary_among(struct sim *s, const struct rss_desired *d)
{
    for (size_t k = 0; k < d->n_peers; k++) {
        unsigned p = peer_ordinal(d->peers[k]);
        if (p < NMEM && s->mem[p].app == RSS_ROLE_PRIMARY && node_live(&s->mem[p]) &&
            (s->shape != GALERA || (s->comp[p] && s->quorate)))
            return (int)p;
    }
    return -1;
}

/* One second of client writes and replication. */
static void app_tick(struct sim *s)
{
    if (s->shape != GALERA) {
        for (unsigned p = 0; p < NMEM; p++) {
            struct member *x = &s->mem[p];
            if (x->app != RSS_ROLE_PRIMARY || !node_live(x))
                continue;
            x->data = append(x->data);
            bool acked = false;
            for (unsigned q = 0; q < NMEM; q++) {
                struct member *y = &s->mem[q];
                /* a standby lags now and then: it catches up with 70% chance a second, so the standbys
                 * differ and the promotion must pick the most advanced (not in a scenario: it says who
                 * is promoted) */
                if (q != p && y->app == RSS_ROLE_SECONDARY && y->follows == (int)p && !y->detached &&
                    node_live(y) && s->w.now >= y->lag_until && (s->script || !chance(300))) {
                    y->data = x->data;
                    acked = true;
                }
            }
            if (acked && x->data.len > s->acked[x->data.branch])
                s->acked[x->data.branch] = x->data.len;
        }
        return;
    }
    /* all-primary: the live members of the last primary component go on as one when they are a majority
     * of it (the others are evicted); otherwise they are non-primary and accept no writes */
    unsigned live = 0, size = 0;
    int any = -1;
    for (unsigned q = 0; q < NMEM; q++) {
        if (!s->comp[q])
            continue;
        size++;
        if (s->mem[q].app == RSS_ROLE_PRIMARY && node_live(&s->mem[q]))
            live++, any = (int)q;
    }
    s->quorate = live * 2 > size;
    if (!s->quorate)
        return;
    for (unsigned q = 0; q < NMEM; q++)
        s->comp[q] = s->comp[q] && s->mem[q].app == RSS_ROLE_PRIMARY && node_live(&s->mem[q]);
    struct history h = append(s->mem[any].data);
    for (unsigned q = 0; q < NMEM; q++)
        if (s->comp[q])
            s->mem[q].data = h;
    if (h.len > s->acked[h.branch])
        s->acked[h.branch] = h.len;
}

static void app_stop(struct member *x)
{
    x->app = RSS_ROLE_STOPPED;
    x->follows = -1;
    x->detached = false;
}

/* ---- the agents ---- */

/* The hook's effect on the application when it completes; false: the hook failed. */
static bool hook_effect(struct sim *s, unsigned o, const struct rss_desired *d)
{
    struct member *x = &s->mem[o];
    switch (d->action) {
    case RSS_ACTION_SEED: {
        bool promotion = x->app == RSS_ROLE_SECONDARY;
        for (unsigned q = 0; q < NMEM; q++) {
            if (q == o)
                continue;
            if (s->mem[q].app == RSS_ROLE_PRIMARY && node_live(&s->mem[q]) && !promotion)
                violation(s, "P3: seed of %u while %u runs as primary", o, q);
            /* an older copy: its whole history is a prefix of another member's (one the leader left out: its
             * newer writes were never acknowledged, which P1 judges) */
            if (!promotion && (int)o != s->forced && find(&s->w, q)->pod_exists &&
                !find(&s->w, q)->hold_record && !(s->w.spec.min_members > 0 && !node_live(&s->mem[q])) &&
                s->mem[q].data.len > x->data.len && holds(s->mem[q].data, x->data.branch, x->data.len))
                violation(s, "P2: seed of %u (%d/%" PRIu64 "), an older copy of %u (%d/%" PRIu64 ")", o,
                          x->data.branch, x->data.len, q, s->mem[q].data.branch, s->mem[q].data.len);
        }
        if (promotion && s->shape == GALERA)
            violation(s, "a seed of running member %u in the all-primary shape", o);
        /* the admin's force-seed gives up what the others hold (docs/operations.md): the acknowledged
         * writes start again from the forced seed's data */
        if ((int)o == s->forced && !promotion) {
            memset(s->acked, 0, sizeof(s->acked));
            s->forced = -1;
        }
        check_holds_acked(s, o, x->data, promotion ? "promoted" : "seeded");
        s->last_seed = (int)o;
        s->seeds++;
        memset(s->comp, 0, sizeof(s->comp));
        s->comp[o] = true; /* all-primary: a new cluster, bootstrapped from this member */
        s->quorate = true;
        x->app = RSS_ROLE_PRIMARY;
        x->follows = -1;
        x->detached = false;
        return true;
    }
    case RSS_ACTION_PRIMARY:
    case RSS_ACTION_SECONDARY: {
        int p = running_primary_among(s, d);
        if (p < 0 || p == (int)o || (x->app != RSS_ROLE_STOPPED && d->action != RSS_ACTION_SECONDARY))
            return false; /* nothing to join: the hook exits non-zero */
        /* a running member given `secondary` follows the named primary from now on (a repoint, a
         * re-attach: pg_rewind where it diverged) */
        x->data = s->mem[p].data; /* state transfer (SST, pg_basebackup or rewind) */
        x->app = d->action == RSS_ACTION_PRIMARY ? RSS_ROLE_PRIMARY : RSS_ROLE_SECONDARY;
        x->follows = d->action == RSS_ACTION_SECONDARY ? p : -1;
        x->detached = false;
        s->comp[o] = s->shape == GALERA;
        return true;
    }
    case RSS_ACTION_STOP:
        s->stops++;
        /* a running member's clean leave: the component shrinks without losing its quorum; a member that
         * had crashed left without one, and stopping its container now tells the others nothing */
        if (x->app == RSS_ROLE_PRIMARY)
            s->comp[o] = false;
        app_stop(x);
        return true;
    default:
        return true;
    }
}

/* The node powered on, or its application died in its container: a new container, probed. */
static void probe(struct sim *s, unsigned o)
{
    struct rss_member_input *m = find(&s->w, o);
    struct member *x = &s->mem[o];
    char prev[48];
    snprintf(prev, sizeof(prev), "%s", m->observed.container_id ? m->observed.container_id : "");
    new_container(s, o);
    uint64_t gen = rss_agent_generation_for_container(m->has_observed, m->observed.generation, prev,
                                                      m->container_id, NULL);
    report(s, o, RSS_ROLE_STOPPED, gen, true);
    if (m->observed.last.present && m->observed.last.result == RSS_RESULT_PENDING)
        m->observed.last.result = RSS_RESULT_INTERRUPTED; /* never re-run (agent_reconcile.c) */
    say(s, "%u probed: generation %" PRIu64 ", length %" PRIu64, o, gen, x->data.len);
}

/* What the `status` hook says of the application: all-primary members outside a quorate component are
 * non-primary, which the hook reports as failed. */
static enum rss_role app_status(const struct sim *s, unsigned o)
{
    enum rss_role r = s->mem[o].app;
    if (s->shape == GALERA && r == RSS_ROLE_PRIMARY && !(s->comp[o] && s->quorate))
        return RSS_ROLE_FAILED;
    return r;
}

/* The agent's periodic `status`: a change is reported; a running member found stopped or failed without
 * the agent's own stop is a crash, a new generation (rss_agent_status_is_crash, rule 7). */
static void status_check(struct sim *s, unsigned o)
{
    struct rss_member_input *m = find(&s->w, o);
    enum rss_role before = m->observed.role, now = app_status(s, o);
    if (before == now || before == RSS_ROLE_STARTING || !m->has_observed)
        return;
    uint64_t gen = m->observed.generation + (rss_agent_status_is_crash(before, now, false) ? 1 : 0);
    report(s, o, now, gen, now == RSS_ROLE_STOPPED || now == RSS_ROLE_FAILED);
    say(s, "%u status: %s -> %s, generation %" PRIu64, o, rss_role_name(before), rss_role_name(now), gen);
}

/* The node's kubelet stops or starts reaching the API server (a freeze, a cut, power): the node controller
 * turns Ready Unknown once it was silent for NODE_GRACE, and the kubelet True again when it is back. */
static void kubelet_silent(struct sim *s, unsigned o)
{
    if (!s->mem[o].kubelet_silent)
        s->mem[o].kubelet_silent = s->w.now;
}

static void kubelet_back(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    if (x->kubelet_silent && s->w.now - x->kubelet_silent >= NODE_GRACE)
        x->ready_since = s->w.now;
    x->kubelet_silent = 0;
}

/* The Node as the agent reads it after a gap in its loop (a thaw, a restart), before the kubelet posts again.
 */
static cJSON *node_now(const struct sim *s, const struct member *x)
{
    char created[RSS_TIME_LEN], since[RSS_TIME_LEN];
    rss_time_ms(created, s->start - 86400000);
    bool unknown = x->kubelet_silent && s->w.now - x->kubelet_silent >= NODE_GRACE;
    rss_time_ms(since, unknown ? x->kubelet_silent + NODE_GRACE : x->ready_since);
    cJSON *node = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(node, "metadata");
    cJSON_AddStringToObject(meta, "creationTimestamp", created);
    cJSON *cond = cJSON_CreateObject();
    cJSON_AddStringToObject(cond, "type", "Ready");
    cJSON_AddStringToObject(cond, "status", unknown ? "Unknown" : "True");
    cJSON_AddStringToObject(cond, "lastTransitionTime", since);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(node, "status"), "conditions"), cond);
    return node;
}

/* A frozen node thaws: its agent's loop did not run for the freeze, so the agent core's wake verdict
 * (rule 18) decides, and past the fence timeout the Node must prove that the leader cannot have judged the
 * node dead (rss_agent_wake_keep) or the members stop at once. */
static void thaw(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    x->frozen = false;
    int64_t gap = s->w.now - x->frozen_at, silence = s->w.now - x->last_heartbeat;
    bool keep = true, absent = s->w.now < x->agent_down_until;
    char why[512] = "within the fence timeout";
    if (absent)
        snprintf(why, sizeof(why), "rssd is down: its return decides (restart_probe)");
    else if (rss_agent_wake_verdict(false, gap, silence, FENCE_MS) == RSS_AGENT_WAKE_FENCE) {
        _cleanup_json_ cJSON *node = api_ok(s, o) ? node_now(s, x) : NULL; /* no read when cut off */
        keep = rss_agent_wake_keep(node, x->last_heartbeat, why, sizeof(why));
    }
    if (!x->api_cut)
        kubelet_back(s, o);
    if (keep || x->app == RSS_ROLE_STOPPED) {
        say(s, "fault: node %u thawed after %" PRId64 " s, its members kept: %.120s", o, gap / 1000, why);
        /* P6 (rule 18): the leader's dead verdict assumes the node's members stopped */
        if (x->judged_dead_frozen && x->app != RSS_ROLE_STOPPED && !absent)
            violation(s, "P6: %u runs as %s after its node woke from a freeze that the leader judged dead", o,
                      rss_role_name(x->app));
        return;
    }
    app_stop(x);
    x->hook_running = false;
    say(s, "fault: node %u thawed after %" PRId64 " s, fenced: %.120s", o, gap / 1000, why);
    /* its own stop, reported in the same generation (not a crash); when it reaches the API server */
    if (!api_ok(s, o)) {
        x->fenced = true;
        return;
    }
    struct rss_member_input *m = find(&s->w, o);
    report(s, o, RSS_ROLE_STOPPED, m->observed.generation, true);
    if (m->observed.last.present && m->observed.last.result == RSS_RESULT_PENDING)
        m->observed.last.result = RSS_RESULT_INTERRUPTED;
}

/* An agent that does not reach the API server: no heartbeat, no write (so no write-ahead, no hook start, no
 * answer, no report the leader could read). Past the fence timeout since its last acknowledged renewal the
 * agent core's failsafe rule decides whether its members keep running (they do when it reaches every agent
 * hosting the RSS and none of those reaches the API server: a shared outage), or stop (rule 5). */
static void agent_cut_off(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    if (x->fenced || x->app == RSS_ROLE_STOPPED || s->w.now - x->last_heartbeat <= FENCE_MS)
        return;
    size_t hosting = 0, reached = 0;
    bool peer_has_api = false;
    for (unsigned q = 0; q < NMEM; q++) {
        if (!find(&s->w, q) || !find(&s->w, q)->pod_exists)
            continue;
        hosting++;
        if (node_live(&s->mem[q])) {
            reached++;
            peer_has_api |= q != o && api_ok(s, q);
        }
    }
    x->kept = rss_agent_failsafe_keep(hosting, reached, peer_has_api);
    if (x->kept)
        return;
    /* P7: an outage alone (every agent hosting the RSS live and together) stops nothing */
    if (reached == hosting && !peer_has_api)
        violation(s, "P7: %u stopped by its fence in a shared API outage with every agent live", o);
    app_stop(x);
    x->hook_running = false;
    x->fenced = true;
    say(s, "%u self-fences: no API server for %" PRId64 " s (%zu of %zu agents reached%s)", o,
        (s->w.now - x->last_heartbeat) / 1000, reached, hosting, peer_has_api ? ", one reaches the API" : "");
}

/* A restarted rssd's first look (agent.c, fence.c): the wake verdict on the silence since the last renewal
 * (the fence state kept it across the restart), the Node's proof when past the fence timeout, then its
 * members probed with `status` in the same containers (the generation stays; a pending action is
 * interrupted, never re-run). */
static void restart_probe(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    struct rss_member_input *m = find(&s->w, o);
    char why[512] = "within the fence timeout";
    bool keep = true;
    if (rss_agent_wake_verdict(true, 0, s->w.now - x->last_heartbeat, FENCE_MS) == RSS_AGENT_WAKE_FENCE) {
        _cleanup_json_ cJSON *node = node_now(s, x);
        keep = rss_agent_wake_keep(node, x->last_heartbeat, why, sizeof(why));
    }
    if (!keep && x->app != RSS_ROLE_STOPPED) {
        app_stop(x);
        say(s, "%u: rssd back, its members stopped (rule 18): %.120s", o, why);
    }
    enum rss_role role = app_status(s, o);
    report(s, o, role, m->observed.generation, role == RSS_ROLE_STOPPED || role == RSS_ROLE_FAILED);
    if (m->observed.last.present && m->observed.last.result == RSS_RESULT_PENDING)
        m->observed.last.result = RSS_RESULT_INTERRUPTED;
    say(s, "%u: rssd back: %s, generation %" PRIu64 " (%.80s)", o, rss_role_name(role),
        m->observed.generation, why);
}

/* rssd on node o is down for `secs` (a crash, a rollout): its hook in flight, if any, is killed with it or
 * goes on in the container unreported. */
static void restart_agent(struct sim *s, unsigned o, int secs)
{
    struct member *x = &s->mem[o];
    x->agent_down_until = s->w.now + 1000 * (int64_t)secs;
    x->restarted = true;
    x->orphan = x->hook_running && chance(500);
    if (x->hook_running && !x->orphan) {
        x->hook_running = false;
        rss_recordcodec_desired_clear(&x->hook);
    }
    say(s, "fault: rssd on node %u down for %d s%s", o, secs,
        x->orphan         ? ", its hook left running"
        : x->hook_running ? ""
                          : "");
}

static void agent_step(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    struct rss_member_input *m = find(&s->w, o);
    if (!node_live(x) || !m || !m->pod_exists)
        return;
    if (s->w.now < x->agent_down_until || (x->restarted && x->orphan)) {
        /* rssd down (or just back): the orphaned hook ends in its container, unreported */
        if (x->hook_running && x->orphan &&
            (s->w.now >= x->hook_done_at || s->w.now >= x->agent_down_until)) {
            x->hook_running = x->orphan = false;
            bool ok = !chance(60) && hook_effect(s, o, &x->hook);
            say(s, "%u's orphaned %s ends in its container, %s, unreported", o,
                rss_action_name(x->hook.action), ok ? "ok" : "failed");
            rss_recordcodec_desired_clear(&x->hook);
        }
        if (s->w.now < x->agent_down_until)
            return;
    }
    if (!api_ok(s, o)) {
        agent_cut_off(s, o);
        /* a shared outage: a hook in flight finishes and its report waits for the API server, which the
         * leader cannot read meanwhile either, so it is written at once here; everything else needs a
         * write */
        if (x->api_cut || x->fenced || !x->hook_running || x->booted)
            return;
    } else {
        x->kept = false;
        s->kept_dead_counted[o] = false;
        if (x->fenced) {
            /* the API server again: the agent reports the stop its fence made (its own, no crash) */
            x->fenced = false;
            report(s, o, RSS_ROLE_STOPPED, m->observed.generation, true);
            if (m->observed.last.present && m->observed.last.result == RSS_RESULT_PENDING)
                m->observed.last.result = RSS_RESULT_INTERRUPTED;
            say(s, "%u reaches the API server again: reports its fence's stop", o);
        }
        if (x->restarted) {
            x->restarted = false;
            restart_probe(s, o);
            x->last_heartbeat = s->w.now;
            return;
        }
        x->last_heartbeat = s->w.now;
    }
    if (x->booted) {
        x->booted = false;
        x->hook_running = false;
        probe(s, o);
        return;
    }
    if (m->has_observed && m->observed.lease_epoch != s->w.epoch) {
        m->observed.lease_epoch = s->w.epoch; /* a new Lease holder: the agent reports again (rule 10) */
        s->dirty = true;
        m->observed.time_ms = s->w.now;
    }
    if (x->hook_running) {
        if (s->w.now < x->hook_done_at)
            return;
        x->hook_running = false;
        bool fails = s->script ? x->fail_hook : chance(60);
        x->fail_hook = false;
        bool ok = !fails && hook_effect(s, o, &x->hook);
        enum rss_role role = !ok                                 ? RSS_ROLE_FAILED
                             : x->hook.action == RSS_ACTION_STOP ? RSS_ROLE_STOPPED
                                                                 : x->app;
        if (!ok && x->app != RSS_ROLE_STOPPED && x->hook.action != RSS_ACTION_STOP)
            role = x->app;
        report(s, o, role, x->hook_generation, role == RSS_ROLE_STOPPED || role == RSS_ROLE_FAILED);
        set_last(m, x->hook.action, x->hook.id.epoch, x->hook.id.seq, ok ? RSS_RESULT_OK : RSS_RESULT_FAILED);
        s->dirty = true;
        say(s, "%u %s %s -> %s (length %" PRIu64 ")", o, rss_action_name(x->hook.action),
            ok ? "ok" : "failed", rss_role_name(role), x->data.len);
        rss_recordcodec_desired_clear(&x->hook);
        return;
    }
    /* rule 19: answer a position request (after the detach hook, when the spec has one) */
    struct rss_action_id req = m->has_desired ? m->desired.position_request : (struct rss_action_id){0, 0};
    if (req.seq && !rss_action_id_equal(req, m->observed.position_for) && m->desired.epoch == s->w.epoch) {
        /* a detach that fails still answers, not marked detached, and the standby follows on
         * (agent_reconcile.c) */
        bool detach = s->w.spec.hooks[RSS_HOOK_DETACH].present && x->app == RSS_ROLE_SECONDARY &&
                      !(s->script ? x->fail_detach : chance(100));
        x->fail_detach = false;
        if (detach)
            x->detached = true;
        s->dirty = true;
        m->observed.position_for = req;
        m->observed.has_position = true;
        m->observed.position = x->data.len;
        m->observed.detached = detach;
        m->observed.lease_epoch = s->w.epoch;
        say(s, "%u answers position %" PRIu64 "%s", o, x->data.len, detach ? " (detached)" : "");
        return;
    }
    if ((s->w.now - s->start) % 5000 == 0)
        status_check(s, o);
    if (!m->has_desired)
        return;
    struct rss_agent_view v = {.lease_known = true,
                               .lease_epoch = s->w.epoch,
                               .probed = true,
                               .has_container = true,
                               .generation = m->observed.generation,
                               .has_last = m->observed.last.present,
                               .last_id = m->observed.last.id};
    char why[256];
    enum rss_agent_verdict verdict = rss_agent_decide(&m->desired, &v, why, sizeof(why));
    if (verdict == RSS_AGENT_EXECUTE && m->desired.epoch != s->w.epoch)
        violation(s, "P4: %u executes an action of epoch %" PRIu64 " under epoch %" PRIu64, o,
                  m->desired.epoch, s->w.epoch);
    if (verdict == RSS_AGENT_REJECT) {
        set_last(m, m->desired.action, m->desired.id.epoch, m->desired.id.seq, RSS_RESULT_REJECTED);
        s->dirty = true;
        say(s, "%u rejects %s: %s", o, rss_action_name(m->desired.action), why);
        return;
    }
    if (verdict != RSS_AGENT_EXECUTE)
        return;
    /* the write-ahead (rule 8), then the hook runs for a few seconds */
    x->hook_running = true;
    x->hook_done_at = s->w.now + 1000 * (1 + below(4));
    x->hook_generation = m->observed.generation;
    rss_recordcodec_desired_clear(&x->hook); /* a hook cut short (power, fence, pod removed) left its copy */
    rss_recordcodec_desired_copy(&x->hook, &m->desired);
    set_last(m, m->desired.action, m->desired.id.epoch, m->desired.id.seq, RSS_RESULT_PENDING);
    s->dirty = true;
    if (m->desired.action != RSS_ACTION_STOP) {
        m->observed.role = x->app == RSS_ROLE_STOPPED ? RSS_ROLE_STARTING : x->app;
        m->observed.has_sequence = false;
    }
    m->observed.time_ms = s->w.now;
    say(s, "%u runs %s", o, rss_action_name(m->desired.action));
}

/* ---- the leader ---- */

/* A leader write that fails: at random in a lossy phase of a seeded schedule, as the script says in a
 * scenario. */
static bool write_fails(struct sim *s, bool lossy)
{
    if (s->script) {
        if (!s->fail_writes)
            return false;
        s->fail_writes--;
        return true;
    }
    return lossy && chance(50);
}

/* The admin edits spec.replicas (all-primary: spec.primaries with it). */
static void scale_to(struct sim *s, int n)
{
    s->w.spec.replicas = n;
    if (s->shape == GALERA)
        s->w.spec.primaries = n;
    s->dirty = true;
    say(s, "fault: spec.replicas %d", n);
}

/* The StatefulSet controller at replicas n: pods above it removed (the kubelet kills their containers;
 * the claims and the member records stay), pods below it made (a new uid and container, scheduled on
 * the member's node at once). */
static void statefulset_to(struct sim *s, int n)
{
    int old = s->w.sts;
    s->w.sts = n;
    for (int o = n; o < old && o < NMEM; o++) {
        struct member *x = &s->mem[o];
        if (x->app != RSS_ROLE_STOPPED && node_live(x))
            violation(s, "pod %d removed while its application runs as %s", o, rss_role_name(x->app));
        app_stop(x);
        x->hook_running = false;
        s->comp[o] = false;
        pod_gone(&s->w, (unsigned)o);
        say(s, "statefulset: pod %d removed", o);
    }
    for (int o = old < 0 ? 0 : old; o < n && o < NMEM; o++) {
        struct rss_member_input *m = find(&s->w, (unsigned)o);
        struct mstore *st = store(&s->w, m);
        snprintf(st->uid, sizeof(st->uid), "uid-%d-%d", o, s->w.uid_counter++);
        m->pod_exists = true;
        m->pod_uid = st->uid;
        m->phase = "Running";
        m->node = st->node;
        m->container_id = st->cid;
        m->pin_record = st->pin[0] ? st->pin : NULL;
        m->hold_record = st->hold[0] ? st->hold : NULL;
        s->mem[o].booted = s->mem[o].on;
        say(s, "statefulset: pod %d made", o);
    }
    s->dirty = true;
}

/* A scenario's Event, once per (reason, message) as the leader's Event folding keeps it; the first
 * EVENTS_KEEP. */
static void keep_event(struct sim *s, const char *reason, const char *message)
{
    for (unsigned i = 0; i < s->n_events; i++)
        if (!strcmp(s->events[i].reason, reason) && !strncmp(s->events[i].message, message, 399))
            return;
    if (s->n_events == EVENTS_KEEP)
        return;
    snprintf(s->events[s->n_events].reason, sizeof(s->events[0].reason), "%s", reason);
    snprintf(s->events[s->n_events].message, sizeof(s->events[0].message), "%s", message);
    s->n_events++;
}

/* An Event of this reason so far whose message holds text ("" for any). */
static bool has_event(const struct sim *s, const char *reason, const char *text)
{
    for (unsigned i = 0; i < s->n_events; i++)
        if (!strcmp(s->events[i].reason, reason) && strstr(s->events[i].message, text))
            return true;
    return false;
}

/* status.journal has a confirmed witness for member o (spec.recovery.replication Synchronous) */
static bool journal_confirmed(const struct sim *s, unsigned o)
{
    char name[32];
    snprintf(name, sizeof(name), "rss-db-%u", o);
    const cJSON *rec;
    cJSON_ArrayForEach(rec, cJSON_GetObjectItemCaseSensitive(s->w.prev, "journal"))
    {
        const char *member = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "member"));
        if (!member || strcmp(member, name) != 0)
            continue;
        const cJSON *wit;
        cJSON_ArrayForEach(wit, cJSON_GetObjectItemCaseSensitive(rec, "witnesses"))
        {
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(wit, "confirmed")))
                return true;
        }
    }
    return false;
}

static const char *status_message(const struct sim *s)
{
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s->w.prev, "message"));
    return m ? m : "";
}

static void leader_step(struct sim *s, bool lossy)
{
    if (s->w.now < s->api_down_until)
        return; /* the leader reads and writes nothing; its liveness view has a gap */
    for (unsigned o = 0; o < NMEM; o++) {
        struct rss_member_input *m = find(&s->w, o);
        int64_t seen =
            s->mem[o].last_heartbeat > s->liveness_from ? s->mem[o].last_heartbeat : s->liveness_from;
        int64_t silent = s->w.now - seen;
        m->node_alive = silent < LEASE_MS;
        /* dead: the heartbeat silent past the window and the kubelet down (rule 13: an absent agent is not a
         * dead node; leader_liveness.c) */
        struct member *x = &s->mem[o];
        m->node_dead = silent >= DEAD_MS && x->kubelet_silent && s->w.now - x->kubelet_silent >= NODE_GRACE;
        m->node_silent_ms = m->node_alive ? 0 : silent;
        m->node_dead_in_ms = m->node_alive || m->node_dead ? 0 : DEAD_MS - silent;
        if (m->node_alive != s->seen_alive[o] || m->node_dead != s->seen_dead[o])
            s->dirty = true;
        s->seen_alive[o] = m->node_alive;
        s->seen_dead[o] = m->node_dead;
        if (m->node_dead && s->mem[o].frozen)
            s->mem[o].judged_dead_frozen = true;
        /* P6 (rules 12, 18): the dead verdict assumes the node's members stopped; a frozen one is judged at
         * its thaw */
        if (m->node_dead && s->mem[o].on && !s->mem[o].frozen && s->mem[o].app != RSS_ROLE_STOPPED) {
            /* the failsafe's known gap (docs/testing.md): every agent hosting the RSS cut off from the API
             * server together while the leader is not looks like a shared outage to them */
            const struct member *x = &s->mem[o];
            if (!x->kept)
                violation(s, "P6: the leader judges node %u dead while its member runs as %s", o,
                          rss_role_name(x->app));
            if (!s->kept_dead[o])
                say(s, "leader: judges node %u dead while the failsafe keeps its member (the known gap)", o);
            s->kept_dead[o] = true;
            s->kept_dead_n += !s->kept_dead_counted[o];
            s->kept_dead_counted[o] = true;
        } else {
            s->kept_dead[o] = false;
        }
    }
    if (!s->dirty && s->w.now - s->last_plan < RESYNC_MS)
        return;
    s->dirty = false;
    s->last_plan = s->w.now;
    struct rss_plan p;
    run(&s->w, &p);
    s->plans++;
    for (size_t i = 0; s->trace && i < p.n_events; i++)
        say(s, "leader: event %s: %s", p.events[i].reason, p.events[i].message);
    for (size_t i = 0; s->script && i < p.n_events; i++)
        keep_event(s, p.events[i].reason, p.events[i].message);
    /* leader_apply.c's order: each member's record (one write: desired, hold, pin, mark), the deletes, the
     * status; the first write that fails (a conflict, the Lease lost, an API error) ends the plan */
    bool failed = false;
    for (size_t i = 0; i < p.n_patches && !failed; i++) {
        const struct rss_plan_patch *pt = &p.patches[i];
        struct rss_member_input *m = find(&s->w, pt->ordinal);
        if (!m)
            continue;
        if (write_fails(s, lossy)) {
            say(s, "leader: the write of %u's record failed%s%s: the plan ends there", pt->ordinal,
                pt->set_desired ? ", desired " : "",
                pt->set_desired ? rss_action_name(pt->desired.action) : "");
            failed = true;
            break;
        }
        /* the leader's watch sees its own write when it changed something */
        const struct rss_desired *d = &m->desired;
        if (pt->set_pin || pt->set_primary || pt->set_hold ||
            (pt->set_desired &&
             (!m->has_desired || d->epoch != pt->desired.epoch || d->action != pt->desired.action ||
              !rss_action_id_equal(d->id, pt->desired.id) ||
              !rss_action_id_equal(d->position_request, pt->desired.position_request))))
            s->dirty = true;
        if (pt->set_pin)
            set_record_pin(&s->w, pt->ordinal, pt->pin);
        if (pt->set_primary)
            set_record_primary(&s->w, pt->ordinal, pt->primary);
        if (pt->set_hold)
            set_record_hold(&s->w, pt->ordinal, pt->hold);
        if (pt->set_desired) {
            rss_recordcodec_desired_clear(&m->desired);
            rss_recordcodec_desired_copy(&m->desired, &pt->desired);
            m->has_desired = true;
            if (pt->desired.action != RSS_ACTION_NONE)
                say(s, "leader: %u desired %s", pt->ordinal, rss_action_name(pt->desired.action));
        }
    }
    if (!failed && p.set_replicas >= 0 && p.set_replicas != s->w.sts) {
        if (write_fails(s, lossy))
            failed = true;
        else
            statefulset_to(s, p.set_replicas);
    }
    /* the StatefulSet controller makes a deleted pod again at once: a new uid and container, the
     * application stopped, the member record (pin, primary mark, hold) kept */
    for (size_t i = 0; i < p.n_deletes && !failed; i++) {
        unsigned o = p.deletes[i].ordinal;
        struct rss_member_input *m = find(&s->w, o);
        if (!m)
            continue;
        if (write_fails(s, lossy)) {
            say(s, "leader: the deletion of pod %u failed: the plan ends there", o);
            failed = true;
            break;
        }
        struct mstore *st = store(&s->w, m);
        snprintf(st->uid, sizeof(st->uid), "uid-%u-%d", o, s->w.uid_counter++);
        rss_recordcodec_desired_clear(&m->desired);
        rss_recordcodec_observed_clear(&m->observed);
        m->has_desired = m->has_observed = false;
        app_stop(&s->mem[o]);
        s->mem[o].hook_running = false;
        s->mem[o].booted = s->mem[o].on;
        s->dirty = true;
        say(s, "leader: pod %u deleted and made again", o);
    }
    if (!failed && !write_fails(s, lossy)) {
        cJSON_Delete(s->w.prev);
        s->w.prev = cJSON_Duplicate(p.status, true);
        /* after the status, the annotation's removal (leader_apply.c); a seed it asked for is the one
         * desired seed of this plan */
        if (p.clear_force_seed && s->w.force_seed) {
            for (size_t i = 0; i < p.n_patches; i++)
                if (p.patches[i].set_desired && p.patches[i].desired.action == RSS_ACTION_SEED)
                    s->forced = (int)p.patches[i].ordinal;
            s->w.force_seed = NULL;
            s->dirty = true;
            say(s, "leader: force-seed annotation removed%s", s->forced >= 0 ? " (used)" : " (refused)");
        }
    } else {
        s->dirty = true; /* the leader retries */
    }
    rss_plan_free(&p);
}

/* ---- faults ---- */

static void power_off(struct sim *s, unsigned o)
{
    struct member *x = &s->mem[o];
    x->on = false;
    x->frozen = false;
    kubelet_silent(s, o);
    app_stop(x);
    x->hook_running = false;
    rss_recordcodec_desired_clear(&x->hook);
    say(s, "fault: node %u off", o);
}

static void power_on(struct sim *s, unsigned o)
{
    s->mem[o].on = true;
    s->mem[o].booted = true;
    if (!s->mem[o].api_cut)
        kubelet_back(s, o);
    say(s, "fault: node %u on", o);
}

static void freeze(struct sim *s, unsigned o)
{
    s->mem[o].frozen = true;
    s->mem[o].frozen_at = s->w.now;
    s->mem[o].judged_dead_frozen = false;
    kubelet_silent(s, o);
    say(s, "fault: node %u frozen", o);
}

static void app_dies(struct sim *s, unsigned o)
{
    app_stop(&s->mem[o]);
    s->mem[o].hook_running = false;
    say(s, "fault: %u's application died", o);
    probe(s, o);
}

static void new_leader(struct sim *s)
{
    s->w.epoch++;
    s->dirty = true;
    say(s, "fault: a new leader, epoch %" PRIu64, s->w.epoch);
}

/* One second of a seeded schedule's faults. */
/* A shared API outage of `secs`: nobody reads or writes; the leader's liveness clocks restart at its end. */
static void api_down(struct sim *s, int secs)
{
    s->api_down_until = s->w.now + 1000 * (int64_t)secs;
    s->liveness_from = s->api_down_until;
    say(s, "fault: the API server down for %d s", secs);
}

/* A partial partition of `secs`: node o alone loses the API server; its peers still reach it. */
static void api_cut(struct sim *s, unsigned o, int secs)
{
    s->mem[o].api_cut = true;
    s->mem[o].api_cut_until = s->w.now + 1000 * (int64_t)secs;
    kubelet_silent(s, o);
    say(s, "fault: node %u cut off from the API server for %d s", o, secs);
}

static void api_heal(struct sim *s, bool all)
{
    for (unsigned o = 0; o < NMEM; o++)
        if (s->mem[o].api_cut && (all || s->w.now >= s->mem[o].api_cut_until)) {
            s->mem[o].api_cut = false;
            if (s->mem[o].on && !s->mem[o].frozen)
                kubelet_back(s, o);
            say(s, "fault: node %u reaches the API server again", o);
        }
    if (all && s->w.now < s->api_down_until)
        s->api_down_until = s->liveness_from = s->w.now;
}

static void faults(struct sim *s)
{
    if (s->w.now >= s->api_down_until && chance(1)) {
        api_down(s, 10 + (int)below(110));
        return;
    }
    unsigned off = 0;
    for (unsigned o = 0; o < NMEM; o++)
        off += !s->mem[o].on;
    if (off == 0 && chance(3)) {
        say(s, "fault: lights-out");
        for (unsigned o = 0; o < NMEM; o++)
            power_off(s, o);
        return;
    }
    if (chance(2)) {
        scale_to(s, s->w.spec.replicas == NMEM ? NMEM - 1 : NMEM);
        return;
    }
    unsigned o = below(NMEM);
    struct member *x = &s->mem[o];
    if (!x->on) {
        if (chance(60))
            power_on(s, o);
    } else if (x->frozen) {
        if (chance(40))
            thaw(s, o);
    } else if (chance(4)) {
        power_off(s, o);
    } else if (chance(3) && s->w.now >= x->agent_down_until) {
        freeze(s, o);
    } else if (chance(1) && !x->api_cut && !x->hook_running && s->w.now >= x->agent_down_until) {
        api_cut(s, o, 10 + (int)below(110));
    } else if (chance(2) && s->w.now >= x->agent_down_until && !x->api_cut) {
        /* not on a node cut off or frozen: rssd down there is the known gap above */
        restart_agent(s, o, 2 + (int)below(90));
    } else if (chance(3) && x->app != RSS_ROLE_STOPPED) {
        app_dies(s, o);
    } else if (chance(2)) {
        new_leader(s);
    }
}

/* ---- scripted scenarios ---- */

static int primary_now(const struct sim *s)
{
    for (unsigned o = 0; o < NMEM; o++)
        if (s->mem[o].app == RSS_ROLE_PRIMARY && node_live(&s->mem[o]))
            return (int)o;
    return -1;
}

static bool settled(struct sim *s);

/* A member named by a step: an ordinal, or `primary` (the one running as primary on a live node now). */
static unsigned step_member(struct sim *s, const struct script_step *st, const char *name)
{
    int o = !strcmp(name, "primary") ? primary_now(s) : (name[0] >= '0' && name[0] <= '9' ? atoi(name) : -1);
    if (o < 0 || o >= NMEM)
        violation(s, "%s:%d: no member '%s' now", s->script->path, st->line, name);
    return (unsigned)o;
}

/* The steps of this second: faults, failures to come, and expectations (a failed one is a violation). */
static void script_step(struct sim *s)
{
    int64_t t = s->w.now - s->start;
    for (size_t i = 0; i < s->script->n; i++) {
        const struct script_step *st = &s->script->steps[i];
        if (st->at_ms != t)
            continue;
        const char *v = st->verb, *w = st->what;
        if (!strcmp(v, "off"))
            power_off(s, step_member(s, st, w));
        else if (!strcmp(v, "on"))
            power_on(s, step_member(s, st, w));
        else if (!strcmp(v, "freeze"))
            freeze(s, step_member(s, st, w));
        else if (!strcmp(v, "thaw"))
            thaw(s, step_member(s, st, w));
        else if (!strcmp(v, "crash"))
            app_dies(s, step_member(s, st, w));
        else if (!strcmp(v, "api-down"))
            api_down(s, atoi(w));
        else if (!strcmp(v, "cut"))
            api_cut(s, step_member(s, st, w), atoi(st->arg));
        else if (!strcmp(v, "restart"))
            restart_agent(s, step_member(s, st, w), atoi(st->arg));
        else if (!strcmp(v, "leader"))
            new_leader(s);
        else if (!strcmp(v, "replicas"))
            scale_to(s, atoi(w));
        else if (!strcmp(v, "fail-writes"))
            s->fail_writes = (unsigned)atoi(w);
        else if (!strcmp(v, "fail-hook"))
            s->mem[step_member(s, st, w)].fail_hook = true;
        else if (!strcmp(v, "fail-detach"))
            s->mem[step_member(s, st, w)].fail_detach = true;
        else if (!strcmp(v, "spec") && !strcmp(w, "minimumMembers"))
            s->w.spec.min_members = atoi(st->arg), s->dirty = true;
        else if (!strcmp(v, "spec") && !strcmp(w, "onNewerLateMember"))
            s->w.spec.join_newer_late_members = !strcmp(st->arg, "Join"), s->dirty = true;
        else if (!strcmp(v, "spec") && !strcmp(w, "replication"))
            s->w.spec.replication_sync = !strcmp(st->arg, "Synchronous"), s->dirty = true;
        else if (!strcmp(v, "force-seed")) {
            snprintf(s->force_seed, sizeof(s->force_seed), "rss-db-%u", step_member(s, st, w));
            s->w.force_seed = s->force_seed;
            s->dirty = true;
        } else if (!strcmp(v, "lag"))
            s->mem[step_member(s, st, w)].lag_until = s->w.now + 1000 * (int64_t)atoi(st->arg);
        else if (!strcmp(v, "expect")) {
            bool ok = false;
            if (!strcmp(w, "running"))
                ok = settled(s);
            else if (!strcmp(w, "primary"))
                ok = primary_now(s) == atoi(st->arg);
            else if (!strcmp(w, "primary-not"))
                ok = primary_now(s) >= 0 && primary_now(s) != atoi(st->arg);
            else if (!strcmp(w, "seeded"))
                ok = s->last_seed == atoi(st->arg);
            else if (!strcmp(w, "stops"))
                ok = s->stops == (unsigned)atoi(st->arg);
            else if (!strcmp(w, "seeds"))
                ok = s->seeds == (unsigned)atoi(st->arg);
            else if (!strcmp(w, "message"))
                ok = strstr(status_message(s), st->text) != NULL;
            else if (!strcmp(w, "event"))
                ok = has_event(s, st->arg, st->text);
            else if (!strcmp(w, "runs"))
                ok = s->mem[step_member(s, st, st->arg)].app != RSS_ROLE_STOPPED;
            else if (!strcmp(w, "force-seed-removed"))
                ok = !s->w.force_seed;
            else if (!strcmp(w, "no-event"))
                ok = !has_event(s, st->arg, "");
            else if (!strcmp(w, "journal-confirmed"))
                ok = journal_confirmed(s, step_member(s, st, st->arg));
            else if (!strcmp(w, "stopped"))
                ok = s->mem[step_member(s, st, st->arg)].app == RSS_ROLE_STOPPED;
            if (!ok) {
                _cleanup_free_ char *status = cJSON_PrintUnformatted(s->w.prev);
                fprintf(stderr, "status then: %s\n", status ? status : "none");
                violation(s,
                          "%s:%d: expected %s %s%s%s (primary now: %d, last seed: %d, seeds: %u, stops: %u)",
                          s->script->path, st->line, w, st->arg, st->text[0] ? " " : "", st->text,
                          primary_now(s), s->last_seed, s->seeds, s->stops);
            }
            say(s, "script: %s %s holds", w, st->arg);
        }
    }
}

/* One scenario file. Lines: `shape all-primary|one-primary|one-primary-early|one-primary-nodetach`,
 * `data L0 L1 L2` (the members' history lengths, all stopped), `off N` (member N's node is off at the
 * start, its record from before the lights-out), `minutes M`, and steps `at SECONDS VERB
 * [WHAT [ARG]]`: off, on, freeze, thaw, crash N|primary; api-down S (nobody reaches the API server for S
 * seconds); cut N S (node N alone loses it for S seconds); restart N S (rssd on node N down for S
 * seconds); leader; replicas N; fail-writes K (the leader's
 * next K writes fail); fail-hook N, fail-detach N (that member's next one); lag N S (standby N receives
 * nothing for S seconds); spec minimumMembers N, spec onNewerLateMember Join|Hold, spec replication
 * Synchronous|Asynchronous, force-seed N (an admin's edit); expect running | runs N (its application is
 * not stopped) | force-seed-removed | primary N | primary-not N (some other
 * member is) | seeded N | seeds K (seed hooks run so far) | stopped N | stops K (`stop` hooks run so far) |
 * message TEXT (the status message holds TEXT) | event REASON [TEXT] (an Event so far of that reason, its
 * message holding TEXT) | no-event REASON | journal-confirmed N (status.journal has a confirmed witness
 * for member N). Standbys
 * do not lag in a scenario. `#` starts
 * a comment. Exits 2 on a line it cannot read. */
/* The line's rest after its first `words` words, trimmed. */
static void rest_after(const char *line, int words, char *out, size_t size)
{
    const char *p = line;
    for (int i = 0; i < words; i++) {
        p += strspn(p, " \t");
        p += strcspn(p, " \t\n");
    }
    p += strspn(p, " \t");
    snprintf(out, size, "%s", p);
    for (size_t n = strlen(out); n > 0 && strchr(" \t\n", out[n - 1]); n--)
        out[n - 1] = '\0';
}

static void parse_script(const char *path, struct script *sc)
{
    static const char *const shapes[] = {"all-primary", "one-primary", "one-primary-early",
                                         "one-primary-nodetach"};
    memset(sc, 0, sizeof(*sc));
    sc->path = path;
    sc->minutes = 10;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sim_proto: cannot read %s\n", path);
        exit(2);
    }
    char line[256];
    for (int ln = 1; fgets(line, sizeof(line), f); ln++) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char a[32] = "", b[32] = "", c[32] = "", d[32] = "", e[32] = "";
        int n = sscanf(line, "%31s %31s %31s %31s %31s", a, b, c, d, e);
        bool ok = n <= 0;
        if (n >= 2 && !strcmp(a, "shape")) {
            for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
                if (!strcmp(b, shapes[k]))
                    sc->shape = (enum shape)k, ok = true;
        } else if (n == 4 && !strcmp(a, "data")) {
            sc->data[0] = strtoull(b, NULL, 10);
            sc->data[1] = strtoull(c, NULL, 10);
            sc->data[2] = strtoull(d, NULL, 10);
            ok = true;
        } else if (n == 2 && !strcmp(a, "off")) {
            int o = atoi(b);
            ok = o >= 0 && o < NMEM;
            if (ok)
                sc->off[o] = true;
        } else if (n == 2 && !strcmp(a, "minutes")) {
            sc->minutes = atoi(b);
            ok = sc->minutes >= 1;
        } else if (n >= 3 && !strcmp(a, "at") && sc->n < SCRIPT_MAX) {
            struct script_step *st = &sc->steps[sc->n++];
            st->at_ms = (int64_t)atol(b) * 1000;
            st->line = ln;
            snprintf(st->verb, sizeof(st->verb), "%s", c);
            snprintf(st->what, sizeof(st->what), "%s", d);
            snprintf(st->arg, sizeof(st->arg), "%s", e);
            /* the text of `expect message TEXT` (after the word message) and `expect event REASON TEXT` */
            if (!strcmp(c, "expect") && (!strcmp(d, "message") || !strcmp(d, "event")))
                rest_after(line, !strcmp(d, "message") ? 4 : 5, st->text, sizeof(st->text));
            if (!strcmp(c, "expect") && !strcmp(d, "message"))
                st->arg[0] = '\0';
            ok = true;
        }
        if (!ok) {
            fprintf(stderr, "sim_proto: %s:%d: cannot read this line\n", path, ln);
            exit(2);
        }
    }
    fclose(f);
}

/* ---- one schedule ---- */

static void sim_init(struct sim *s, unsigned long seed, int minutes, bool trace, const struct script *sc)
{
    memset(s, 0, sizeof(*s));
    s->script = sc;
    s->last_seed = -1;
    s->forced = -1;
    rng_state = seed * 0x2545f4914f6cdd1dULL + 1;
    memset(&tree, 0, sizeof(tree));
    tree.n = 1;
    s->seed = seed;
    s->trace = trace;
    s->shape = sc ? sc->shape : (enum shape)(seed % 4);
    bool single = s->shape != GALERA;
    /* the members start stopped after a lights-out, with histories of different lengths on one branch,
     * each record holding its member's last report */
    uint64_t lens[NMEM];
    for (unsigned o = 0; o < NMEM; o++)
        lens[o] = sc ? sc->data[o] : below(4);
    /* a member whose node stays off at the start (a scenario's `off N`): its record holds the report of
     * its container before the lights-out (stale, C), not one of this boot */
    char tokens[64];
    snprintf(tokens, sizeof(tokens), "%c%" PRIu64 " %c%" PRIu64 " %c%" PRIu64, sc && sc->off[0] ? 'C' : 'S',
             lens[0], sc && sc->off[1] ? 'C' : 'S', lens[1], sc && sc->off[2] ? 'C' : 'S', lens[2]);
    world_init_with(&s->w, tokens, single ? 1 : 0, single, 0, single ? FAILOVER_SPEC : "");
    s->w.spec.hooks[RSS_HOOK_DETACH].present = single && s->shape != SINGLE_NODETACH;
    s->w.spec.silent_promote = s->shape == SINGLE_EARLY;
    s->w.dead_after = DEAD_MS;
    s->start = s->w.now;
    if (sc)
        minutes = sc->minutes;
    s->end = s->start + (int64_t)minutes * 60000;
    /* a scenario's own steps are its faults: no heal phase, its expectations say what must hold */
    s->fault_end = sc ? s->end : s->start + (int64_t)minutes * 40000;
    for (unsigned o = 0; o < NMEM; o++) {
        struct member *x = &s->mem[o];
        x->on = !(sc && sc->off[o]);
        x->kubelet_silent = x->on ? 0 : s->w.now;
        x->ready_since = s->w.now - 86400000;
        x->booted = x->on;
        x->data = (struct history){0, lens[o]};
        x->follows = -1;
        x->app = RSS_ROLE_STOPPED;
        if (lens[o] > tree.tip[0])
            tree.tip[0] = lens[o];
        x->last_heartbeat = s->w.now;
    }
}

static bool settled(struct sim *s)
{
    const char *phase = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s->w.prev, "phase"));
    if (!phase || strcmp(phase, "Running") != 0)
        return false;
    unsigned primaries = 0;
    for (unsigned o = 0; o < NMEM; o++) {
        enum rss_role r = s->mem[o].app;
        if (r == RSS_ROLE_STOPPED || s->mem[o].hook_running)
            return false;
        primaries += r == RSS_ROLE_PRIMARY;
        if (r == RSS_ROLE_SECONDARY && (s->mem[o].detached || s->mem[o].follows < 0 ||
                                        s->mem[s->mem[o].follows].app != RSS_ROLE_PRIMARY))
            return false;
    }
    return primaries == (s->shape != GALERA ? 1u : NMEM);
}

static void sim_run(struct sim *s)
{
    bool healed = false;
    int64_t settled_at = 0;
    while (s->w.now < s->end) {
        s->steps++;
        bool faulty = s->w.now < s->fault_end;
        api_heal(s, false);
        if (s->script) {
            script_step(s);
        } else if (faulty) {
            faults(s);
        } else if (!healed) {
            healed = true;
            say(s, "faults end: every node on and running");
            api_heal(s, true);
            if (s->w.spec.replicas != NMEM)
                scale_to(s, NMEM);
            for (unsigned o = 0; o < NMEM; o++) {
                struct member *x = &s->mem[o];
                if (!x->on)
                    power_on(s, o);
                if (x->frozen)
                    thaw(s, o);
            }
        }
        leader_step(s, faulty);
        for (unsigned o = 0; o < NMEM; o++)
            agent_step(s, o);
        app_tick(s);
        if (s->trace && (s->w.now - s->start) % 10000 == 0) {
            _cleanup_free_ char *st = cJSON_PrintUnformatted(s->w.prev);
            say(s, "  status %.150s", st ? st : "none");
        }
        if (s->trace && (s->w.now - s->start) % 10000 == 0)
            for (unsigned o = 0; o < NMEM; o++)
                say(s, "  %u: node %s, %s, data %d/%" PRIu64 "%s%s", o,
                    !s->mem[o].on      ? "off"
                    : s->mem[o].frozen ? "frozen"
                                       : "on",
                    rss_role_name(s->mem[o].app), s->mem[o].data.branch, s->mem[o].data.len,
                    s->mem[o].detached ? ", detached" : "", find(&s->w, o)->hold_record ? ", left out" : "");
        if (healed && settled(s)) {
            if (!settled_at)
                settled_at = s->w.now;
        } else {
            settled_at = 0;
        }
        s->w.now += 1000;
    }
    if (!settled_at && !s->script)
        violation(s, "P5: not Running with every member in its role %" PRId64 " s after the faults ended",
                  (s->end - s->fault_end) / 1000);
    for (unsigned o = 0; o < NMEM; o++)
        if (s->mem[o].app == RSS_ROLE_PRIMARY)
            check_holds_acked(s, o, s->mem[o].data, "primary at the end,");
}

static void sim_free(struct sim *s)
{
    for (unsigned o = 0; o < NMEM; o++)
        rss_recordcodec_desired_clear(&s->mem[o].hook);
    world_free(&s->w);
}

int main(int argc, char **argv)
{
    unsigned long schedules = 200, first = 1;
    int minutes = 30;
    bool trace = false;
    static struct script sc;
    const struct script *script = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--schedules") && i + 1 < argc)
            schedules = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            first = strtoul(argv[++i], NULL, 10), schedules = 1;
        else if (!strcmp(argv[i], "--minutes") && i + 1 < argc)
            minutes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--trace"))
            trace = true;
        else if (!strcmp(argv[i], "--script") && i + 1 < argc) {
            parse_script(argv[++i], &sc);
            script = &sc;
            schedules = 1;
            minutes = sc.minutes;
        } else {
            fprintf(stderr, "usage: sim_proto [--schedules N] [--first S] [--minutes M] [--seed S] [--trace] "
                            "[--script FILE]\n");
            return 2;
        }
    }
    if (minutes < 3 || schedules == 0) {
        fprintf(stderr, "sim_proto: --minutes must be at least 3 and --schedules at least 1\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t steps = 0, plans = 0, gap = 0;
    for (unsigned long k = 0; k < schedules; k++) {
        struct sim *s = rss_xcalloc(1, sizeof(*s));
        sim_init(s, first + k, minutes, trace, script);
        sim_run(s);
        steps += s->steps;
        plans += s->plans;
        gap += s->kept_dead_n;
        sim_free(s);
        free(s);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (script) {
        printf("%s: passed (%d simulated minutes, seed %lu)\n", script->path, minutes, first);
        return 0;
    }
    printf("%lu schedules of %d simulated minutes (seeds %lu..%lu): %" PRIu64 " steps, %" PRIu64
           " plans, 0 violations, %.1f s; dead verdicts in the failsafe's known gap: %" PRIu64 "\n",
           schedules, minutes, first, first + schedules - 1, steps, plans, secs, gap);
    return 0;
}
