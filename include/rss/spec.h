/* spec.h -- a ReplicatedStatefulSet custom resource parsed and validated, and the names derived from it.
 *
 * rss_spec_parse() accepts the original rss-operator manifests unchanged (see
 * docs/planner.md for the fields) and fills a `struct rss_spec` that the agent, the planner and
 * the StatefulSet builder share. Parsing is all-or-nothing: on error *out is left zeroed and the
 * error message names the field path (e.g. "spec.pod.commands.status.timeout: ...").
 *
 * Defaults (rss-operator compatible unless marked rssd):
 *   replicas 3; primaries = replicas; reconcileInterval 1m;
 *   hook timeout: sequence and status 60s, seed/primary/secondary/stop 10m (rss-operator's);
 *   spec.recovery.minimumMembers 0 = wait for every member (rssd extension);
 *   spec.recovery.maxFailures 3 consecutive failures before the pod is deleted (rssd extension);
 *   spec.recovery.onNewerLateMember Hold: a late member newer than the seed is not joined (rssd);
 *   spec.recovery.replication Asynchronous: no member is left out on the journal's proof (rssd).
 *   spec.nodeLossPolicy Wait: a member on a dead node is waited for, never replaced (rssd).
 */
#ifndef RSS_SPEC_H
#define RSS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/error.h"

/* Longest RSS name: "rss-<name>-<ordinal>" must stay a 63-character DNS label. */
#define RSS_SPEC_NAME_MAX 50
/* Largest ordinal accepted anywhere (pod names, replicas). */
#define RSS_SPEC_ORDINAL_MAX 9999
/* Most argv entries in one hook command, and the longest single entry. */
#define RSS_SPEC_ARGV_MAX    64
#define RSS_SPEC_ARG_LEN_MAX 4096
/* Shortest spec.reconcileInterval accepted. */
#define RSS_SPEC_RECONCILE_MIN_MS 1000

enum rss_hook_kind {
    RSS_HOOK_SEQUENCE = 0,
    RSS_HOOK_SEED,
    RSS_HOOK_PRIMARY,
    RSS_HOOK_SECONDARY,
    RSS_HOOK_STATUS,
    RSS_HOOK_STOP,
    /* rssd's optional one (docs/rules.md rule 19): a running standby stops following its primary before
     * it answers a position request. Exit 0 is the application's word that it can acknowledge nothing
     * more from that primary. */
    RSS_HOOK_DETACH,
    RSS_HOOK_KIND_COUNT,
};

struct rss_hook_spec {
    bool present;
    char **argv; /* argc strings plus a NULL terminator; owned */
    size_t argc;
    uint64_t timeout_ms;
};

struct rss_spec {
    char *name;         /* metadata.name */
    char *ns;           /* metadata.namespace, "" when absent */
    char *uid;          /* metadata.uid, "" when absent */
    int64_t generation; /* metadata.generation, 0 when absent */

    int replicas;  /* >= 0; 0 stops every member */
    int primaries; /* >= 1 */
    bool paused;   /* rss-operator's spec.paused: observe and report, never act */
    bool suspend;  /* rssd: a planned full stop (every member stopped, then replicas 0, volumes kept) */
    uint64_t reconcile_interval_ms;
    bool anti_affinity;
    bool command_env; /* spec.pod.commandEnv (rssd): hooks get RSS_EPOCH, RSS_GENERATION, RSS_ACTION[_ID] */

    struct rss_hook_spec hooks[RSS_HOOK_KIND_COUNT];

    /* Copies for the StatefulSet builder; containers is a non-empty array and its first element is
     * the container hooks run in. volumes and volume_claim_templates may be NULL. */
    cJSON *containers;
    cJSON *volumes;
    cJSON *volume_claim_templates;

    int min_members;      /* spec.recovery.minimumMembers; 0 = all members must report */
    int join_concurrency; /* spec.joinConcurrency: members started at once after the seed (default 1) */
    /* spec.recovery.onNewerLateMember: Join; default Hold. A member left out of a recovery that comes
     * back with a higher sequence than the seed had is held back (Hold) or joined, losing its newer
     * writes (Join). */
    bool join_newer_late_members;
    int max_failures; /* spec.recovery.maxFailures; consecutive failures before the pod is deleted */
    /* spec.recovery.replication: Synchronous (the admin declares that every commit is on every member
     * of the primary component before it is acknowledged, as in Galera); default Asynchronous. Only
     * then may a missing member that the journal proves behind be left out of a recovery. */
    bool replication_sync;
    /* spec.nodeLossPolicy: Replace; default Wait. Replace lets the leader delete the pod (and, for a
     * node-local volume, its claims) of a member whose node it judged dead, once the node carries the
     * node.kubernetes.io/out-of-service taint or the volume is known not to be node-local, so that the
     * StatefulSet recreates it on a live node (docs/node-loss.md). */
    bool node_loss_replace;
    /* spec.failover: PromoteStandby (rssd; default Recover = today's lights-out recovery). Only with
     * spec.primaries 1: a lost primary is replaced by promoting the running standby with the highest
     * position, once enough standbys reported it (docs/rules.md rule 15). sync_standbys is
     * spec.synchronousStandbys, the k of the application's `ANY k` synchronous quorum (>= 1). */
    bool promote_standby;
    int sync_standbys;
    /* spec.silentNodePolicy: Promote (rssd; default Wait). Under PromoteStandby with a `detach` hook, a
     * primary whose node's rssd heartbeat is silent is replaced without waiting for the node to be judged
     * dead (docs/rules.md rule 19). Opt-in: rssd cannot tell a dead node from a hung rssd or a node cut
     * off from the API server in that window, and the old primary, replaced, is stopped when seen again. */
    bool silent_promote;
};

/* Parses the whole custom resource (apiVersion/kind/metadata/spec). On success fills *out, which
 * the caller releases with rss_spec_clear(). On failure returns negative with RSS_E_INVALID and a
 * message naming the field path; *out is zeroed. */
int rss_spec_parse(const cJSON *cr, struct rss_spec *out, rss_error_t *err);

/* Frees everything *spec owns and zeroes it. Accepts NULL and a zeroed spec. */
void rss_spec_clear(struct rss_spec *spec);

/* "sequence", "seed", ... for a hook kind; "?" when out of range. */
const char *rss_spec_hook_name(enum rss_hook_kind kind);

/* Whether the LEN bytes at S are a DNS-1123 label (at most 63 of a-z, 0-9 and '-', starting and ending
 * with a letter or digit): what the API server accepts as a namespace name, and the shape of an RSS
 * name (which rss_spec_parse further limits to RSS_SPEC_NAME_MAX). */
bool rss_spec_dns_label(const char *s, size_t len);

/* Parses a duration: a bare non-negative integer of seconds ("45"), or one or more <integer><unit>
 * terms with units ms, s, m, h, d (or D, as rss-operator), e.g. "30s", "2m", "1h30m". Zero and
 * results over 366 days are rejected. */
int rss_spec_parse_duration(const char *s, uint64_t *ms, rss_error_t *err);

/* Derived names (rss-operator compatible). Each returns a new string the caller frees. */
char *rss_spec_statefulset_name(const struct rss_spec *spec);           /* rss-<name> */
char *rss_spec_service_name(const struct rss_spec *spec);               /* <name>-svc */
char *rss_spec_pod_name(const struct rss_spec *spec, unsigned ordinal); /* rss-<name>-<ordinal> */
char *rss_spec_peer_dns(const struct rss_spec *spec, unsigned ordinal); /* <pod>.<name>-svc */

/* Parses the ordinal of a member pod named "rss-<name>-<N>" as a number: N is decimal, without a
 * sign or leading zeros (except "0" itself), at most RSS_SPEC_ORDINAL_MAX. Anything else, including
 * a pod of another RSS, is RSS_E_INVALID. */
int rss_spec_pod_ordinal(const struct rss_spec *spec, const char *pod_name, unsigned *ordinal,
                         rss_error_t *err);

#endif
