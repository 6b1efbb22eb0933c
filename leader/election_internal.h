/* election_internal.h -- the election's state and what its files share: the Lease observation
 * (election_observe.c) and the reboot shortcut's reads and writes (election_boot.c). */
#ifndef RSS_ELECTION_INTERNAL_H
#define RSS_ELECTION_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "rss/deadline.h"
#include "rss/error.h"
#include "rss/kube.h"

/* The fields of a Lease's spec the election compares (client-go calls this the leader election record). */
struct lease_spec {
    char *holder;
    long duration_s;
    char *acquire, *renew;
    int64_t transitions;
};

struct rss_election {
    struct rss_kube *kube;
    char *ns, *name, *identity;
    char *item_path, *collection_path;
    long lease_ms, renew_ms, retry_ms;
    bool release;
    void (*on_started)(void *, int64_t);
    void (*on_stopped)(void *);
    void (*on_new_leader)(void *, const char *);
    void *ud;
    int (*epoch_floor)(void *, int64_t *, rss_error_t *);
    void *floor_ud;
    char *node, *boot_id; /* the reboot shortcut; NULL = off */
    atomic_bool resigned; /* rss_election_verify found the Lease not ours: stop leading now */

    /* Shared with other threads. */
    atomic_bool stop;
    atomic_bool leading;
    atomic_int_least64_t epoch;
    rss_deadline_t deadline_ns; /* leading ends here unless a renewal moves it (rss/deadline.h) */
    int wake[2];                /* self-pipe: rss_election_stop wakes the sleeping loop */

    /* What is known of the Lease: from the election thread's own reads and writes, and from a watch of
     * the Lease (rss_election_observe, another thread). Either way a change is dated when this process
     * first saw it, so a watch that lags only ever makes a holder look alive longer. */
    pthread_mutex_t obs_lock;
    char *observed_key;      /* the Lease spec as last seen, to detect changes */
    char *observed_holder;   /* its holderIdentity */
    int64_t observed_ns;     /* when it was last seen to change (local monotonic clock) */
    long observed_dur_s;     /* its leaseDurationSeconds */
    int64_t max_transitions; /* highest leaseTransitions ever seen: a recreated Lease continues from it */
    bool watched;            /* rss_election_observe has been called: a watch feeds the observation */

    /* Election thread only. */
    cJSON *lease;          /* the Lease as last read or written (its resourceVersion) */
    char *reported_leader; /* the holder last reported to on_new_leader */
    int64_t sent_ns;       /* when the last write was sent */
    bool boot_watch;       /* the held Lease is stale and names a node to watch for a reboot */
    unsigned seed;
};

/* --- the Lease observation (election_observe.c) --- */

/* Reads a Lease's spec into *r (missing fields empty or 0); election_spec_clear frees it. */
void election_spec_read(const cJSON *lease, struct lease_spec *r);
void election_spec_clear(struct lease_spec *r);

/* Observes a spec read by the election thread at now and reports a new holder to on_new_leader. Returns
 * true when the spec is unchanged since the last look, by either reader, or this is the first look (an
 * agent just started, as after a power cut): no sign yet that its holder lives. */
bool election_observe(struct rss_election *el, const struct lease_spec *r, int64_t now);

/* Remembers the Lease spec we just wrote as observed, as client-go's setObservedRecord does. */
void election_observe_written(struct rss_election *el);

/* Election thread only: on_new_leader when the holder changed since the last report. */
void election_report_holder(struct rss_election *el, const char *holder);

/* Candidate only. True when a watch feeds the observation and it shows another holder that renewed
 * within the last two retry periods (it renews every one): the Lease is held, a GET could only say so
 * again. *until is when to look again (the same test then), *holder a copy of the holder. Without a
 * watch, or once the renewals stop showing, the candidate GETs as client-go does. */
bool election_watch_shows_held(struct rss_election *el, int64_t now, int64_t *until, char **holder);

/* The observed expiry (monotonic ns) and the highest epoch seen, read together; either may be NULL. */
void election_observed_expiry(struct rss_election *el, int64_t *expiry, int64_t *max_transitions);

/* --- the reboot shortcut (election_boot.c) --- */

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
