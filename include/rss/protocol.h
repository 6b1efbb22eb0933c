/* protocol.h -- the names rssd's agents and leader agree on: Leases, labels, annotations, the CRD.
 *
 * Defined once here so that the agent, the leader and the tests cannot drift apart. The leader and
 * the agents talk through member records (rss/record.h; their JSON is specified in docs/protocol.md,
 * codec: rss/record_codec.h); the annotations below are on Leases, the RSS and the StatefulSet.
 */
#ifndef RSS_PROTOCOL_H
#define RSS_PROTOCOL_H

/* The leader election Lease, and the prefix of the per-node heartbeat Leases (rssd's namespace). */
#define RSS_LEADER_LEASE     "rssd-leader"
#define RSS_HEARTBEAT_PREFIX "rssd-node-"

/* The label that makes a pod a member candidate of the RSS named by its value. */
#define RSS_LABEL_NAME "rss.clusterlabs.org/name"
/* rss-operator's label on active members, for a client Service to select them. */
#define RSS_LABEL_ACTIVE "rss-active-member"

/* The old protocol's member pod annotations (before the member records): rssd never reads them; the
 * leader only warns about a pod that carries one (IgnoredAnnotation), since anyone with pod patch
 * rights can write them. */
#define RSS_ANNOTATION_DESIRED  "rss.clusterlabs.org/desired"
#define RSS_ANNOTATION_OBSERVED "rss.clusterlabs.org/observed"
/* On each agent's heartbeat Lease: {"address": "host:port", "key": base64 Ed25519 public key, "agent": the
 * process's incarnation, "since": when it started, ms since the Unix epoch on its node's clock}: how the
 * other agents reach it for the self-fencing failsafe, and which reports of its node are older than the
 * process that renews it (the leader's liveness view, leader/leader_liveness.c). */
#define RSS_ANNOTATION_PEER "rss.clusterlabs.org/peer"
/* On each agent's heartbeat Lease: its --fence-timeout in milliseconds (decimal). The leader judges the
 * node with the longer of this and its own, so that agents updated to a longer fence timeout are never
 * judged dead (fenced) under an older leader's shorter window. */
#define RSS_ANNOTATION_FENCE_TIMEOUT "rss.clusterlabs.org/fence-timeout"
/* On each agent's heartbeat Lease: the longest `stop` timeout its self-fence would use, in milliseconds
 * (decimal): the stop hook's timeout rounded up to whole seconds, over the RSS specs it holds for its
 * members (0: only members it would kill at once, specs it cannot use). A spec lowered while the node is
 * cut off does not reach its agent, so the leader judges the node's members with the longer of this and
 * the spec's (issue 35). */
#define RSS_ANNOTATION_STOP_TIMEOUT "rss.clusterlabs.org/stop-timeout"
/* On each agent's heartbeat Lease: the rssd version that renews it (the project's version), so that
 * `kubectl rss agents` shows which node runs which rssd during a rollout. Informational only. */
#define RSS_ANNOTATION_VERSION "rss.clusterlabs.org/version"
/* On an RSS, set by its admin: seed this member now, although the recovery policy waits (a member
 * missing, garbage sequences). Refused while a member runs; removed once used or refused. */
#define RSS_ANNOTATION_FORCE_SEED "rss.clusterlabs.org/force-seed"
/* On the RSS, a member pod's name: the admin releases that member's rule 14 hold (it joins). */
#define RSS_ANNOTATION_RELEASE_HOLD "rss.clusterlabs.org/release-hold"
/* On the RSS, set by its admin (kubectl rss switchover): "from=POD[,to=POD]", stop the primary POD and
 * promote the most advanced standby (or the named one, when it is as advanced): rss/switchover.h. */
#define RSS_ANNOTATION_SWITCHOVER "rss.clusterlabs.org/switchover"
/* On the StatefulSet: a hash of everything the leader built from the spec. */
#define RSS_ANNOTATION_SPEC_HASH "rss.clusterlabs.org/spec-hash"

/* The ReplicatedStatefulSet custom resource. */
#define RSS_CRD_GROUP_VERSION "clusterlabs.org/v1alpha1"
#define RSS_CRD_KIND          "ReplicatedStatefulSet"
#define RSS_CRD_PLURAL        "replicatedstatefulsets"
#define RSS_CRD_PATH          "/apis/" RSS_CRD_GROUP_VERSION "/" RSS_CRD_PLURAL

/* The reportingComponent of rssd's Events. */
#define RSS_EVENT_COMPONENT "clusterlabs.org/rssd"

#endif
