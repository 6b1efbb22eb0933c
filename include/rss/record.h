/* record.h -- the member record: where `desired` and `observed` (rss/record_codec.h) live.
 *
 * One ConfigMap per member pod in rssd's own namespace, named "<namespace>.<pod>", where users of the
 * application namespace have no rights (docs/protocol.md, docs/security.md). Its data keys:
 *   desired, desiredFor    the leader's decision and the pod uid it was made for
 *   observed, observedFor  the member's agent's report and the pod uid it is about
 *   leftOut                the leader's rule 14 hold (JSON {"seedSequence":"<n>"[,"released":true]}):
 *                          the member was left out of a recovery and its history diverged from the
 *                          cluster's. Not tied to an incarnation (it is about the volume's data), and a
 *                          record carrying it is kept when its pod or its RSS is gone.
 *   recoveryPin            rule 2's recovery pin (JSON {"seedSequence":"<n>"}): the leader issued `seed` to
 *                          this member when it had that sequence, in the same write as that `desired`; no
 *                          recovery seeds a lower sequence until a primary runs (then the leader removes
 *                          it). Not tied to an incarnation either, and it keeps its record like leftOut.
 *   primary                rules 16 and 17 (JSON
 * {"action":"<epoch>-<seq>","podUID":"<uid>"[,"sequence":"<n>"]
 *                          [,"promotedOver":<ordinal>,"request":"<epoch>-<seq>"]
 *                          [,"scaledAway":{"pod":"<name>"[,"sequence":"<n>"]}]}): the leader made this
 *                          member a primary (seed, promotion, or a join as primary) by that action, for that
 *                          pod incarnation, holding that sequence then; written in the same patch as that
 *                          desired, removed by the patch that starts it as a secondary. The newest mark
 *                          names the member holding the cluster's newest history: the primary a failover
 *                          replaces, the one kept when two primaries run, and the height no seed without
 *                          every member may go below. Not tied to an incarnation: the record is kept while
 *                          its pod is gone and its ordinal is below spec.replicas (a drain, a deletion).
 *                          scaledAway (added by the plan that lowers replicas past a stopped standby while
 *                          this member is primary, spec.failover PromoteStandby): the highest last sequence
 *                          of such a standby (no sequence: unknown, as on a node judged dead); its
 *                          failover never promotes below it.
 *   observedNode           the node of the agent that wrote `observed`, in the same write (agents only: the
 *                          self-fence's failsafe asks that node's agent too, docs/agent.md; absent from an
 *                          older rssd's records)
 * Each pair is written together in one write, so a record never mixes incarnations: a reader uses a
 * value only when its *For key equals the uid of the pod it is looking at (a recreated pod starts
 * empty, as it did with annotations). Labels let the leader LIST an RSS's records.
 */
#ifndef RSS_RECORD_H
#define RSS_RECORD_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#define RSS_RECORD_DESIRED       "desired"
#define RSS_RECORD_DESIRED_FOR   "desiredFor"
#define RSS_RECORD_OBSERVED      "observed"
#define RSS_RECORD_OBSERVED_FOR  "observedFor"
#define RSS_RECORD_OBSERVED_NODE "observedNode"
#define RSS_RECORD_LEFT_OUT      "leftOut"
#define RSS_RECORD_RECOVERY_PIN  "recoveryPin"
#define RSS_RECORD_PRIMARY       "primary"

/* Labels of a record: the member's namespace, RSS and pod (label values, at most 63 characters). */
#define RSS_LABEL_RECORD_NS     "rss.clusterlabs.org/namespace"
#define RSS_LABEL_RECORD_RSS    "rss.clusterlabs.org/rss"
#define RSS_LABEL_RECORD_MEMBER "rss.clusterlabs.org/member"

/* "<ns>.<pod>" (a namespace has no dot, so the split is unambiguous), or NULL when either is empty
 * or the name would exceed 253 characters. Caller frees. */
char *rss_record_name(const char *ns, const char *pod);

/* The API path of the record of pod `ns`/`pod` in rssd's namespace `rssd_ns` (NULL as above). */
char *rss_record_path(const char *rssd_ns, const char *ns, const char *pod);

/* A new record object (name, labels, empty data) for a create. NULL as rss_record_name. */
cJSON *rss_record_new(const char *ns, const char *rss, const char *pod);

/* data[key] of a record when data[key_for] equals pod_uid, else NULL (borrowed from cm). */
const char *rss_record_value(const cJSON *cm, const char *key, const char *key_for, const char *pod_uid);

/* The member a record is about, from its labels (borrowed); false when a label is missing. */
bool rss_record_member(const cJSON *cm, const char **ns, const char **rss, const char **pod);

#endif
