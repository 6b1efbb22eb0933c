/* election_internal.h -- what election.c takes from election_boot.c: the reboot shortcut's reads and writes.
 */
#ifndef RSS_ELECTION_INTERNAL_H
#define RSS_ELECTION_INTERNAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "rss/kube.h"

/* The boot record to write with an acquisition ("<node> <boot_id> <identity>"), or NULL (no shortcut this
 * term). Recorded only when our own Node already reports our boot id: a later, different bootID on it then
 * comes from a later boot, never from the boot before ours whose kubelet has not yet updated the Node. */
char *election_boot_record(struct rss_kube *kube, const char *node, const char *boot_id, const char *identity,
                           long timeout_ms);

/* Sets (value) or removes (NULL) the boot record on a Lease body. */
void election_boot_set(cJSON *lease, const char *value);

/* True when the holder of `lease` recorded its node and boot and that Node reports another boot now.
 * Sets *watch when the Lease carries a usable boot record (the candidate then looks every retry period). */
bool election_holder_node_rebooted(struct rss_kube *kube, const cJSON *lease, const char *holder, bool *watch,
                                   long timeout_ms);

#endif
