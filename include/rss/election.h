/* election.h -- leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics.
 *
 * One candidate per process instance runs rss_election_run() in its own thread. It GETs the Lease,
 * creates it (POST) when missing and otherwise writes it with PUT + resourceVersion, so a lost race
 * is a 409 and nothing else. A Lease held by someone else counts as expired only after its
 * leaseDurationSeconds have passed on OUR monotonic clock since we last saw the record change
 * (server timestamps are never compared with the local clock).
 *
 * Fencing (ARCHITECTURE.md section 6, rules 4 and 11):
 * - Every acquisition increments spec.leaseTransitions; the value after the acquisition is the
 *   leader's *epoch*. Renewals keep it. A candidate that is not currently leading always acquires
 *   with +1, even when the record already names it, so two terms never share an epoch.
 * - The identity is unique per process instance (hostname, boot id, pid, random), so a restarted
 *   process never "renews" its predecessor's record.
 * - A leader that has not renewed within renew_deadline of sending its last successful write stops
 *   leading. rss_election_leading() applies that deadline itself on the monotonic clock, so leader
 *   code that checks it before each write stops at the deadline even if the election thread is
 *   blocked; on_stopped_leading is then called from the election thread before it does anything else.
 *   Because standbys measure expiry from when they saw that write (which is later), and
 *   renew_deadline < lease_duration, a deposed leader stops before anyone can take the Lease.
 * - rss_election_stop() (async-signal-safe, e.g. from a SIGTERM handler) makes a leader stop leading
 *   (callback), then release the Lease (holderIdentity "", leaseDurationSeconds 1, like client-go's
 *   ReleaseOnCancel), so a successor takes over at its next retry instead of after a lease duration.
 */
#ifndef RSS_ELECTION_H
#define RSS_ELECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "rss/error.h"
#include "rss/kube.h"

struct rss_election;

struct rss_election_config {
    struct rss_kube *kube;  /* borrowed; must outlive the election */
    const char *ns;         /* Lease namespace; NULL = rss_kube_namespace(kube) */
    const char *name;       /* Lease name, e.g. "rssd-leader"; required */
    const char *identity;   /* NULL = generated "<hostname>_<bootid8>_<pid>_<random>"; must be unique per
                               process instance */
    long lease_duration_ms; /* 0 = 15000 */
    long renew_deadline_ms; /* 0 = 10000; must be < lease_duration and > 1.2 * retry_period */
    long retry_period_ms;   /* 0 = 2000 */
    bool no_release;        /* true: do not release the Lease on stop (default: release) */

    /* Callbacks, all called from the thread running rss_election_run; any may be NULL. They must not
     * block for long: the renew loop waits for them. */
    void (*on_started_leading)(void *userdata, int64_t epoch);   /* after is_leading became true */
    void (*on_stopped_leading)(void *userdata);                  /* after it became false */
    void (*on_new_leader)(void *userdata, const char *identity); /* observed holder changed ("" = none) */
    void *userdata;

    /* The epoch floor (may be NULL): the highest epoch the cluster has recorded outside the Lease
     * (rssd: the RSS status, which survives a deleted Lease and a reinstall). Called before each
     * acquisition; the new epoch is above both the Lease's and the floor. Negative = the floor is not
     * known: no acquisition this round (acting on a guess could reuse an epoch, rule 11). */
    int (*epoch_floor)(void *floor_userdata, int64_t *floor, rss_error_t *err);
    void *floor_userdata;

    /* The reboot shortcut (both NULL: off). `node` is the Node this instance runs on, `boot_id` the
     * kernel's boot id as this process read it. At each acquisition the election GETs that Node and,
     * only when its status.nodeInfo.bootID already equals boot_id, records "<node> <boot_id>
     * <identity>" on the Lease (RSS_ELECTION_BOOT_ANNOTATION). A candidate facing a valid Lease whose
     * holder recorded that, and whose Node now reports another bootID, takes over at once: that node
     * has rebooted since the holder acquired, so the holder is gone (docs/election.md). */
    const char *node;
    const char *boot_id;
};

/* Where the holder's node and boot id are recorded on the Lease (see node/boot_id above). */
#define RSS_ELECTION_BOOT_ANNOTATION "rss.clusterlabs.org/leader-boot"

/* Validates cfg (durations as in client-go) and creates an election (copies the strings).
 * Errors: RSS_E_INVALID. */
int rss_election_new(const struct rss_election_config *cfg, struct rss_election **ret, rss_error_t *err);

/* Frees it. Accepts NULL. rss_election_run must have returned. */
void rss_election_free(struct rss_election *el);

/* Runs the election until rss_election_stop: acquire, renew, and after a lost leadership (deadline
 * passed, or someone else took the Lease) go back to acquiring. On stop, a leader stops leading and
 * releases the Lease. Returns 0 after a stop; API failures never end it (they are retried). */
int rss_election_run(struct rss_election *el, rss_error_t *err);

/* Feeds one view of the Lease from a watch of it (ADDED/MODIFIED events, or a GET), from any thread.
 * A candidate fed this way GETs the Lease only once the holder's renewals stop showing (two retry
 * periods without one); a change is dated when this process first saw it, by the watch or its own
 * read, so a lagging or stalled watch only delays a takeover, never hastens one. NULL el: no-op. */
void rss_election_observe(struct rss_election *el, const cJSON *lease);

/* Asks rss_election_run to stop. Async-signal-safe; callable from any thread. */
void rss_election_stop(struct rss_election *el);

/* True while this instance leads: it holds the Lease and is within its renew deadline. *epoch (if
 * not NULL) gets the epoch of the current term, or -1 when not leading. Thread-safe and cheap: leader
 * code calls it before every write and stamps writes with the epoch. */
bool rss_election_leading(struct rss_election *el, int64_t *epoch);

/* True while this instance leads the term `epoch`: rss_election_leading() and the same epoch. The check
 * before every write of a term (a term that ended and a new one of ours began writes nothing more). */
bool rss_election_holds(struct rss_election *el, int64_t epoch);

/* A fresh read (GET) of the Lease: 1 when it still names this instance with leaseTransitions ==
 * epoch; otherwise 0, and this instance stops leading at once (on_stopped_leading is called and
 * rss_election_leading turns false) without renewing again. Negative on an API error (nothing
 * changes). The leader calls it when a pod claims an epoch above its own: only the Lease decides
 * who is deposed, never a pod (which any namespace user can annotate). */
int rss_election_verify(struct rss_election *el, int64_t epoch, rss_error_t *err);

/* Stops leading `epoch` at once, like rss_election_verify finding the Lease not ours (no-op when this
 * instance does not lead that epoch any more). The leader calls it when an RSS's epoch floor already
 * holds its epoch and this term did not raise it: another leader holds the same epoch (a Lease deleted
 * and re-created before the floor was written, finding F5 in docs/model.md). The next acquisition takes
 * a new epoch above the floor, so stepping down ends the tie. `why` is logged. */
void rss_election_resign(struct rss_election *el, int64_t epoch, const char *why);

/* The identity this instance writes into holderIdentity. */
const char *rss_election_identity(const struct rss_election *el);

/* Generates a unique identity "<prefix>_<bootid8>_<pid>_<random hex>" (caller frees); prefix NULL =
 * hostname. rssd uses the node name as prefix. The boot id is the kernel's, or $RSS_BOOT_ID when set
 * (the test world, whose simulated nodes share one kernel, sets a new one at every power-on). */
char *rss_election_make_identity(const char *prefix);

/* True when `holder` and `me` are identities of that format with the same prefix (node) but a
 * different boot id: the holder ran on this node before it last booted, so it is certainly gone. A
 * candidate then takes the Lease at once (still as a new term, leaseTransitions + 1) instead of waiting
 * out a lease duration: after a lights-out the first leader is elected as soon as the old leader's
 * node is back. Any other holder is judged by client-go's rules. */
bool rss_election_holder_rebooted(const char *holder, const char *me);

/* Parses the value of RSS_ELECTION_BOOT_ANNOTATION: true when it is "<node> <boot id> <identity>"
 * with that identity equal to `holder` (a record left by an earlier holder, e.g. by a client that
 * copied the annotations, proves nothing about this one). *node and *boot (caller frees) are set only
 * on true. */
bool rss_election_boot_parse(const char *annotation, const char *holder, char **node, char **boot);

/* The reboot shortcut's decision: true only when `recorded` (the holder's boot id at acquisition) and
 * `reported` (its Node's bootID now) are both non-empty and differ. A missing or unreadable one is no
 * proof: wait out the Lease as usual. */
bool rss_election_boot_changed(const char *recorded, const char *reported);

#endif
