/* election_observe.c -- what the election knows of the Lease: from its own reads and writes and from the
 * agent's watch (rss_election_observe), each change dated when this process first saw it. */
#include <stdlib.h>
#include <string.h>

#include "election_internal.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/election.h"
#include "rss/log.h"

void election_spec_clear(struct lease_spec *r)
{
    free(r->holder);
    free(r->acquire);
    free(r->renew);
    memset(r, 0, sizeof(*r));
}

static const char *spec_str(const cJSON *spec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

void election_spec_read(const cJSON *lease, struct lease_spec *r)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    r->holder = rss_xstrdup(spec_str(spec, "holderIdentity"));
    r->acquire = rss_xstrdup(spec_str(spec, "acquireTime"));
    r->renew = rss_xstrdup(spec_str(spec, "renewTime"));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
    r->duration_s = cJSON_IsNumber(d) ? (long)d->valuedouble : 0;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
    r->transitions = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
}

static char *lease_spec_key(const struct lease_spec *r)
{
    return rss_xasprintf("%s|%ld|%s|%s|%lld", r->holder, r->duration_s, r->acquire, r->renew,
                         (long long)r->transitions);
}

/* Dates a change of the Lease spec at now (a spec seen before keeps its date). Returns true when the
 * spec is the one observed already (unchanged since the last look, by either reader) or this is the
 * first look: either way no sign of a live writer yet. */
static bool observe_spec(struct rss_election *el, const struct lease_spec *r, int64_t now)
{
    _cleanup_free_ char *key = lease_spec_key(r);
    pthread_mutex_lock(&el->obs_lock);
    bool first = !el->observed_key;
    bool same = !first && !strcmp(key, el->observed_key);
    if (!same) {
        free(el->observed_key);
        el->observed_key = TAKE_PTR(key);
        free(el->observed_holder);
        el->observed_holder = rss_xstrdup(r->holder);
        el->observed_ns = now;
        el->observed_dur_s = r->duration_s;
    }
    if (r->transitions > el->max_transitions)
        el->max_transitions = r->transitions;
    pthread_mutex_unlock(&el->obs_lock);
    return same || first;
}

void election_report_holder(struct rss_election *el, const char *holder)
{
    if (!el->reported_leader || strcmp(el->reported_leader, holder)) {
        free(el->reported_leader);
        el->reported_leader = rss_xstrdup(holder);
        if (el->on_new_leader)
            el->on_new_leader(el->ud, holder);
    }
}

bool election_observe(struct rss_election *el, const struct lease_spec *r, int64_t now)
{
    bool same = observe_spec(el, r, now);
    election_report_holder(el, r->holder);
    return same;
}

void rss_election_observe(struct rss_election *el, const cJSON *lease)
{
    if (!el || !cJSON_IsObject(lease))
        return;
    struct lease_spec r = {0};
    election_spec_read(lease, &r);
    observe_spec(el, &r, rss_clock_mono_ns());
    election_spec_clear(&r);
    pthread_mutex_lock(&el->obs_lock);
    el->watched = true;
    pthread_mutex_unlock(&el->obs_lock);
}

bool election_watch_shows_held(struct rss_election *el, int64_t now, int64_t *until, char **holder)
{
    const int64_t ms = 1000000;
    pthread_mutex_lock(&el->obs_lock);
    bool held = el->watched && el->observed_holder && el->observed_holder[0] &&
                strcmp(el->observed_holder, el->identity) &&
                !rss_election_holder_rebooted(el->observed_holder, el->identity);
    int64_t fresh = el->observed_ns + 2 * (int64_t)el->retry_ms * ms;
    int64_t expiry = el->observed_ns + (int64_t)el->observed_dur_s * 1000000000LL;
    held = held && now < fresh && now < expiry;
    if (held) {
        *until = fresh < expiry ? fresh : expiry;
        *holder = rss_xstrdup(el->observed_holder);
    }
    pthread_mutex_unlock(&el->obs_lock);
    return held;
}

void election_observed_expiry(struct rss_election *el, int64_t *expiry, int64_t *max_transitions)
{
    pthread_mutex_lock(&el->obs_lock);
    if (expiry)
        *expiry = el->observed_ns + (int64_t)el->observed_dur_s * 1000000000LL;
    if (max_transitions)
        *max_transitions = el->max_transitions;
    pthread_mutex_unlock(&el->obs_lock);
}

void election_observe_written(struct rss_election *el)
{
    struct lease_spec r = {0};
    election_spec_read(el->lease, &r);
    election_observe(el, &r, rss_clock_mono_ns());
    election_spec_clear(&r);
}
