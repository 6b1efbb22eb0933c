/* election.c -- Lease leader election (client-go semantics) with epochs for fencing. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "election_internal.h"
#include "leader_internal.h"
#include "rss/cleanup.h"
#include "rss/election.h"
#include "rss/deadline.h"
#include "rss/log.h"

/* --- lifecycle --- */

int rss_election_new(const struct rss_election_config *cfg, struct rss_election **ret, rss_error_t *err)
{
    long lease = cfg->lease_duration_ms ? cfg->lease_duration_ms : 15000;
    long renew = cfg->renew_deadline_ms ? cfg->renew_deadline_ms : 10000;
    long retry = cfg->retry_period_ms ? cfg->retry_period_ms : 2000;
    if (!cfg->kube || !cfg->name || !*cfg->name)
        return rss_error_make(err, RSS_E_INVALID, 0, "election: kube and name are required");
    if (lease < 1000 || renew <= 0 || retry <= 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "election: durations must be positive, lease >= 1 s");
    if (lease <= renew)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "election: lease duration must exceed the renew deadline");
    if (renew * 10 <= retry * 12)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "election: renew deadline must exceed 1.2 x retry period");
    if (cfg->identity && !*cfg->identity)
        return rss_error_make(err, RSS_E_INVALID, 0, "election: empty identity");
    struct rss_election *el = rss_xcalloc(1, sizeof(*el));
    if (pipe2(el->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        int e = errno;
        free(el);
        return rss_error_errno(err, e, "election: pipe");
    }
    el->kube = cfg->kube;
    el->ns = rss_xstrdup(cfg->ns ? cfg->ns : rss_kube_namespace(cfg->kube));
    el->name = rss_xstrdup(cfg->name);
    el->identity = cfg->identity ? rss_xstrdup(cfg->identity) : rss_election_make_identity(NULL);
    el->collection_path = rss_kube_path("coordination.k8s.io/v1", el->ns, "leases", NULL, NULL);
    el->item_path = rss_kube_path("coordination.k8s.io/v1", el->ns, "leases", el->name, NULL);
    el->lease_ms = lease;
    el->renew_ms = renew;
    el->retry_ms = retry;
    el->release = !cfg->no_release;
    el->on_started = cfg->on_started_leading;
    el->on_stopped = cfg->on_stopped_leading;
    el->on_new_leader = cfg->on_new_leader;
    el->ud = cfg->userdata;
    el->epoch_floor = cfg->epoch_floor;
    el->floor_ud = cfg->floor_userdata;
    if (cfg->node && *cfg->node && cfg->boot_id && *cfg->boot_id) {
        el->node = rss_xstrdup(cfg->node);
        el->boot_id = rss_xstrdup(cfg->boot_id);
    }
    el->seed = (unsigned)rss_clock_mono_ns() ^ (unsigned)getpid();
    pthread_mutex_init(&el->obs_lock, NULL);
    atomic_init(&el->stop, false);
    atomic_init(&el->leading, false);
    atomic_init(&el->epoch, -1);
    rss_deadline_clear(&el->deadline_ns);
    *ret = el;
    return 0;
}

void rss_election_free(struct rss_election *el)
{
    if (!el)
        return;
    close(el->wake[0]);
    close(el->wake[1]);
    cJSON_Delete(el->lease);
    free(el->observed_key);
    free(el->observed_holder);
    pthread_mutex_destroy(&el->obs_lock);
    free(el->reported_leader);
    free(el->ns);
    free(el->name);
    free(el->identity);
    free(el->node);
    free(el->boot_id);
    free(el->item_path);
    free(el->collection_path);
    free(el);
}

void rss_election_stop(struct rss_election *el)
{
    atomic_store(&el->stop, true);
    char c = 1;
    ssize_t r = write(el->wake[1], &c, 1); /* async-signal-safe */
    (void)r;
}

bool rss_election_leading(struct rss_election *el, int64_t *epoch)
{
    bool l = atomic_load(&el->leading) && rss_deadline_alive(&el->deadline_ns, rss_clock_mono_ns());
    if (epoch)
        *epoch = l ? atomic_load(&el->epoch) : -1;
    return l;
}

bool rss_election_holds(struct rss_election *el, int64_t epoch)
{
    int64_t e = -1;
    return rss_election_leading(el, &e) && e == epoch;
}

const char *rss_election_identity(const struct rss_election *el)
{
    return el->identity;
}

/* Sleeps until the monotonic time `until` or a stop. */
static void wait_until(struct rss_election *el, int64_t until)
{
    for (;;) {
        if (atomic_load(&el->stop))
            return;
        int64_t left = until - rss_clock_mono_ns();
        if (left <= 0)
            return;
        struct pollfd p = {.fd = el->wake[0], .events = POLLIN};
        int ms = (int)((left + 999999) / 1000000);
        if (poll(&p, 1, ms) > 0) {
            char buf[16];
            while (read(el->wake[0], buf, sizeof(buf)) > 0)
                ;
        }
    }
}

/* --- Lease writes --- */

static cJSON *lease_body(struct rss_election *el, const cJSON *base, const char *holder, long dur_s,
                         const char *acquire, const char *renew, int64_t transitions)
{
    cJSON *l;
    if (base) {
        l = cJSON_Duplicate(base, true);
        cJSON_DeleteItemFromObjectCaseSensitive(l, "spec");
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(l, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    } else {
        l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "apiVersion", "coordination.k8s.io/v1");
        cJSON_AddStringToObject(l, "kind", "Lease");
        cJSON *meta = cJSON_AddObjectToObject(l, "metadata");
        cJSON_AddStringToObject(meta, "name", el->name);
        cJSON_AddStringToObject(meta, "namespace", el->ns);
    }
    cJSON *spec = cJSON_AddObjectToObject(l, "spec");
    cJSON_AddStringToObject(spec, "holderIdentity", holder);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)dur_s);
    cJSON_AddStringToObject(spec, "acquireTime", acquire);
    cJSON_AddStringToObject(spec, "renewTime", renew);
    cJSON_AddNumberToObject(spec, "leaseTransitions", (double)transitions);
    return l;
}

static int write_lease(struct rss_election *el, const char *method, cJSON *body, long timeout_ms,
                       rss_error_t *err)
{
    _cleanup_free_ char *text = cJSON_PrintUnformatted(body);
    bool put = !strcmp(method, "PUT");
    struct rss_kube_request req = {.method = method,
                                   .path = put ? el->item_path : el->collection_path,
                                   .body = text,
                                   .timeout_ms = timeout_ms,
                                   .attempts = 1};
    _cleanup_json_ cJSON *resp = NULL;
    el->sent_ns = rss_clock_mono_ns();
    if (rss_kube_call(el->kube, &req, &resp, err) < 0)
        return -1;
    if (!cJSON_IsObject(resp))
        return rss_error_make(err, RSS_E_INVALID, 0, "Lease %s: empty answer", method);
    cJSON_Delete(el->lease);
    el->lease = TAKE_PTR(resp);
    return 0;
}

/* Raises *t above the epoch floor, if there is one. */
static int above_floor(struct rss_election *el, int64_t *t)
{
    if (!el->epoch_floor)
        return 0;
    int64_t floor = 0;
    _cleanup_error_ rss_error_t e = NULL;
    if (el->epoch_floor(el->floor_ud, &floor, &e) < 0) {
        rss_log_error(RSS_LOG_WARN, &e, "election: epoch floor unknown, not acquiring this round");
        return -1;
    }
    if (floor >= *t) {
        rss_log_info(
            "election: the cluster has seen epoch %lld (RSS status) above the Lease's; taking epoch %lld",
            (long long)floor, (long long)floor + 1);
        *t = floor + 1;
    }
    return 0;
}

enum outcome {
    ACQUIRED, /* we hold the Lease (acquired or renewed) */
    FAILED,   /* this round failed (network, 409, ...): try again */
    HELD,     /* someone else holds a valid Lease, or took it from us */
};

static long dur_s(const struct rss_election *el)
{
    return (el->lease_ms + 999) / 1000;
}

/* One round of client-go's tryAcquireOrRenew. *new_epoch gets the epoch on ACQUIRED. */
static enum outcome try_acquire_or_renew(struct rss_election *el, bool leading, long timeout_ms,
                                         int64_t *new_epoch)
{
    char now_s[RSS_TIME_LEN];
    rss_time_micro(now_s, NULL);
    int64_t epoch = atomic_load(&el->epoch);

    if (leading && el->lease) {
        /* Fast path: PUT on the cached resourceVersion; a 409 means someone wrote in between. */
        struct lease_spec cur = {0};
        election_spec_read(el->lease, &cur);
        _cleanup_json_ cJSON *body =
            lease_body(el, el->lease, el->identity, dur_s(el), cur.acquire, now_s, epoch);
        election_spec_clear(&cur);
        _cleanup_error_ rss_error_t e = NULL;
        if (write_lease(el, "PUT", body, timeout_ms, &e) == 0) {
            election_observe_written(el);
            *new_epoch = epoch;
            return ACQUIRED;
        }
        if (rss_error_code(e) != RSS_E_CONFLICT) {
            rss_log_error(RSS_LOG_DEBUG, &e, "election: renew");
            return FAILED;
        }
    }

    _cleanup_json_ cJSON *got = NULL;
    _cleanup_error_ rss_error_t e = NULL;
    struct rss_kube_request get = {
        .method = "GET", .path = el->item_path, .timeout_ms = timeout_ms, .attempts = 1};
    if (rss_kube_call(el->kube, &get, &got, &e) < 0) {
        if (rss_error_code(e) != RSS_E_NOT_FOUND) {
            rss_log_error(RSS_LOG_DEBUG, &e, "election: get lease");
            return FAILED;
        }
        rss_error_release(&e);
        if (leading)
            return HELD; /* deleted under us: our term is over; the next round recreates it */
        /* Continue from the highest epoch seen so that a recreated Lease never reuses an epoch we know. */
        int64_t max_t;
        election_observed_expiry(el, NULL, &max_t);
        int64_t t = max_t + 1;
        if (above_floor(el, &t) < 0)
            return FAILED;
        _cleanup_json_ cJSON *body = lease_body(el, NULL, el->identity, dur_s(el), now_s, now_s, t);
        _cleanup_free_ char *rec =
            election_boot_record(el->kube, el->node, el->boot_id, el->identity, timeout_ms);
        election_boot_set(body, rec);
        if (write_lease(el, "POST", body, timeout_ms, &e) < 0) {
            rss_log_error(RSS_LOG_DEBUG, &e, "election: create lease");
            return FAILED;
        }
        election_observe_written(el);
        *new_epoch = t;
        return ACQUIRED;
    }
    if (!cJSON_IsObject(got))
        return FAILED;
    cJSON_Delete(el->lease);
    el->lease = cJSON_Duplicate(got, true);
    struct lease_spec old = {0};
    election_spec_read(got, &old);
    int64_t now = rss_clock_mono_ns();
    /* A Lease spec that changed since our last look has a live writer: no reason to look for a reboot.
     * The first look does look: after a power cut every agent starts anew, and the holder's node
     * reporting another boot is what lets the new leader skip the wait (the observed lease duration
     * counts from this look, however long ago the holder died). */
    bool stale = election_observe(el, &old, now);
    el->boot_watch = false;
    int64_t expiry, max_t;
    election_observed_expiry(el, &expiry, &max_t);

    enum outcome out;
    if (leading) {
        if (strcmp(old.holder, el->identity) || old.transitions != epoch) {
            out = HELD; /* someone took it: our term is over */
        } else {
            _cleanup_json_ cJSON *body =
                lease_body(el, got, el->identity, dur_s(el), old.acquire, now_s, epoch);
            if (write_lease(el, "PUT", body, timeout_ms, &e) == 0) {
                election_observe_written(el);
                *new_epoch = epoch;
                out = ACQUIRED;
            } else {
                rss_log_error(RSS_LOG_DEBUG, &e, "election: renew");
                out = FAILED;
            }
        }
    } else if (old.holder[0] && strcmp(old.holder, el->identity) &&
               !rss_election_holder_rebooted(old.holder, el->identity) && now < expiry &&
               !(stale &&
                 election_holder_node_rebooted(el->kube, got, old.holder, &el->boot_watch, timeout_ms))) {
        out = HELD;
    } else {
        if (old.holder[0] && rss_election_holder_rebooted(old.holder, el->identity))
            rss_log_info("election: the Lease holder %s ran on this node before it rebooted: it is gone, "
                         "taking over without waiting out the lease",
                         old.holder);
        /* Taking over: an expired or released Lease, or one left under our own identity by an earlier
         * term of ours. Either way a new term, so a new epoch (never client-go's "holder == me"
         * renewal, which would let two terms share one). */
        int64_t t = (old.transitions > max_t ? old.transitions : max_t) + 1;
        el->boot_watch = false;
        if (above_floor(el, &t) < 0) {
            out = FAILED;
        } else {
            _cleanup_json_ cJSON *body = lease_body(el, got, el->identity, dur_s(el), now_s, now_s, t);
            _cleanup_free_ char *rec =
                election_boot_record(el->kube, el->node, el->boot_id, el->identity, timeout_ms);
            election_boot_set(body, rec);
            if (write_lease(el, "PUT", body, timeout_ms, &e) == 0) {
                election_observe_written(el);
                *new_epoch = t;
                out = ACQUIRED;
            } else {
                rss_log_error(RSS_LOG_DEBUG, &e, "election: acquire");
                out = FAILED;
            }
        }
    }
    election_spec_clear(&old);
    return out;
}

int rss_election_verify(struct rss_election *el, int64_t epoch, rss_error_t *err)
{
    _cleanup_json_ cJSON *got = NULL;
    struct rss_kube_request get = {.method = "GET", .path = el->item_path, .timeout_ms = el->renew_ms / 2};
    if (rss_kube_call(el->kube, &get, &got, err) < 0) {
        if (rss_error_code(*err) != RSS_E_NOT_FOUND)
            return rss_error_wrap(err, "election: verifying the Lease");
        rss_error_release(err);
    }
    struct lease_spec r = {0};
    if (got)
        election_spec_read(got, &r);
    bool ours = got && r.holder && !strcmp(r.holder, el->identity) && r.transitions == epoch;
    int64_t now_epoch;
    if (ours && rss_election_leading(el, &now_epoch) && now_epoch == epoch) {
        election_spec_clear(&r);
        return 1;
    }
    rss_log_warn("election: the Lease names %s with leaseTransitions %lld, not us with %lld: stepping down",
                 got && r.holder && r.holder[0] ? r.holder : "nobody", (long long)r.transitions,
                 (long long)epoch);
    election_spec_clear(&r);
    /* Stop at once (the deadline check makes rss_election_leading false now); the election thread
     * runs on_stopped_leading and does not renew. */
    atomic_store(&el->resigned, true);
    rss_deadline_clear(&el->deadline_ns);
    char c = 1;
    ssize_t w = write(el->wake[1], &c, 1);
    (void)w;
    return 0;
}

void rss_election_resign(struct rss_election *el, int64_t epoch, const char *why)
{
    int64_t now_epoch;
    if (!rss_election_leading(el, &now_epoch) || now_epoch != epoch)
        return;
    rss_log_warn("election: stepping down from epoch %lld: %s", (long long)epoch, why ? why : "");
    /* As in rss_election_verify: rss_election_leading turns false now; the election thread runs
     * on_stopped_leading and, as a candidate again, takes its own Lease over with a new epoch above
     * the floor (try_acquire_or_renew: a Lease under our identity is a new term, never a renewal). */
    atomic_store(&el->resigned, true);
    rss_deadline_clear(&el->deadline_ns);
    char c = 1;
    ssize_t w = write(el->wake[1], &c, 1);
    (void)w;
}

static void stop_leading(struct rss_election *el, const char *why)
{
    if (!atomic_load(&el->leading))
        return;
    rss_deadline_clear(&el->deadline_ns);
    atomic_store(&el->leading, false);
    rss_log_debug("election: %s stopped leading epoch %lld: %s", el->identity,
                  (long long)atomic_load(&el->epoch), why);
    atomic_store(&el->epoch, -1);
    if (el->on_stopped)
        el->on_stopped(el->ud);
}

/* Hands the Lease back (client-go ReleaseOnCancel) so a successor need not wait a lease duration.
 * GETs first for a fresh resourceVersion and retries conflicts, unlike client-go <= v0.33. */
static void release(struct rss_election *el)
{
    for (int i = 0; i < 3; i++) {
        _cleanup_json_ cJSON *got = NULL;
        _cleanup_error_ rss_error_t e = NULL;
        struct rss_kube_request get = {
            .method = "GET", .path = el->item_path, .timeout_ms = el->renew_ms, .attempts = 1};
        if (rss_kube_call(el->kube, &get, &got, &e) < 0) {
            rss_log_error(RSS_LOG_DEBUG, &e, "election: release: get");
            return;
        }
        struct lease_spec r = {0};
        election_spec_read(got, &r);
        bool mine = !strcmp(r.holder, el->identity);
        int64_t t = r.transitions;
        election_spec_clear(&r);
        if (!mine)
            return;
        char now_s[RSS_TIME_LEN];
        rss_time_micro(now_s, NULL);
        _cleanup_json_ cJSON *body = lease_body(el, got, "", 1, now_s, now_s, t);
        election_boot_set(body, NULL);
        if (write_lease(el, "PUT", body, el->renew_ms, &e) == 0) {
            rss_log_debug("election: %s released the lease", el->identity);
            return;
        }
        if (rss_error_code(e) != RSS_E_CONFLICT) {
            rss_log_error(RSS_LOG_DEBUG, &e, "election: release");
            return;
        }
    }
}

int64_t election_candidate_wake(int64_t start_ns, long retry_ms, long lease_ms, bool held, int64_t expiry_ns)
{
    const int64_t ms = 1000000;
    int64_t wake = start_ns + retry_ms * ms;
    if (!held)
        return wake;
    /* Someone else holds a valid Lease: nothing can change for us before it expires on our clock, so
     * a candidate looks again then, but at least every half lease duration (a renewal seen restarts the
     * wait), never sooner than the retry period. With one candidate per node, these GETs of the leader
     * Lease are the election's whole cost (docs/scale.md). */
    int64_t half = start_ns + (int64_t)lease_ms / 2 * ms;
    int64_t w = expiry_ns < half ? expiry_ns : half;
    return w > wake ? w : wake;
}

int rss_election_run(struct rss_election *el, rss_error_t *err)
{
    (void)err;
    const int64_t ms = 1000000;
    int64_t next = 0;
    while (!atomic_load(&el->stop)) {
        if (atomic_load(&el->leading)) {
            int64_t dl = rss_deadline_peek(&el->deadline_ns);
            wait_until(el, next < dl ? next : dl);
            if (atomic_load(&el->stop))
                break;
            int64_t now = rss_clock_mono_ns();
            if (atomic_exchange(&el->resigned, false)) {
                stop_leading(el, "the Lease is not ours any more");
                continue;
            }
            /* Leave room for the request: one that cannot finish before the deadline is useless. */
            if (now + 5 * ms >= dl) {
                stop_leading(el, "renew deadline passed");
                continue;
            }
            long timeout = el->renew_ms / 2;
            if ((dl - now) / ms < timeout)
                timeout = (long)((dl - now) / ms);
            next = now + el->retry_ms * ms;
            int64_t epoch;
            enum outcome o = try_acquire_or_renew(el, true, timeout, &epoch);
            if (o == ACQUIRED) {
                /* A renewal answered or processed after the deadline (a loaded machine) must not
                 * revive a term a reader already saw end: the term would be over on the leader's side
                 * while the Lease stays renewed, and no one would ever lead again. */
                if (!rss_deadline_move(&el->deadline_ns, dl, el->sent_ns + el->renew_ms * ms))
                    stop_leading(el, atomic_exchange(&el->resigned, false)
                                         ? "the Lease is not ours any more"
                                         : "renewed only after the renew deadline: the term had ended");
            } else if (o == HELD)
                stop_leading(el, "the lease was taken over");
            else if (!rss_deadline_alive(&el->deadline_ns, rss_clock_mono_ns()))
                stop_leading(el, "renew deadline passed");
        } else {
            int64_t epoch;
            int64_t start = rss_clock_mono_ns();
            /* The agent's watch of this Lease shows every renewal: while they keep coming, a GET would
             * only say "held" again. At one candidate per node these GETs were the largest idle cost. */
            int64_t until;
            _cleanup_free_ char *holder = NULL;
            if (election_watch_shows_held(el, start, &until, &holder)) {
                election_report_holder(el, holder);
                wait_until(el, until);
                continue;
            }
            enum outcome o = try_acquire_or_renew(el, false, el->renew_ms / 2, &epoch);
            if (o == ACQUIRED) {
                atomic_store(&el->epoch, epoch);
                rss_deadline_set(&el->deadline_ns, el->sent_ns + el->renew_ms * ms);
                atomic_store(&el->leading, true);
                rss_log_debug("election: %s leads with epoch %lld", el->identity, (long long)epoch);
                if (el->on_started)
                    el->on_started(el->ud, epoch);
                next = start + el->retry_ms * ms;
            } else {
                /* Jitter factor 1.2 like client-go, so candidates do not move in lockstep. */
                int64_t j = (int64_t)el->retry_ms * ms / 5 * (rand_r(&el->seed) % 1000) / 1000;
                /* A stale record with a boot record is looked at every retry period: its node's reboot
                 * ends the wait at once, and the look costs only while the Lease is not renewed. */
                int64_t expiry;
                election_observed_expiry(el, &expiry, NULL);
                int64_t wake = election_candidate_wake(start, el->retry_ms, el->lease_ms,
                                                       o == HELD && !el->boot_watch, expiry);
                wait_until(el, wake + j);
            }
        }
    }
    stop_leading(el, "stopping");
    if (el->release && el->lease) {
        /* Also after a lost deadline: a Lease still naming us only delays a successor. */
        struct lease_spec r = {0};
        election_spec_read(el->lease, &r);
        bool mine = !strcmp(r.holder, el->identity);
        election_spec_clear(&r);
        if (mine)
            release(el);
    }
    return 0;
}
