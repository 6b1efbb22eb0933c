/* leader_cache.h -- a watch-fed store of one collection's objects, for the leader's reads (not public). */
#ifndef RSS_LEADER_CACHE_H
#define RSS_LEADER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "rss/error.h"
#include "rss/kube.h"

/* One collection (e.g. the heartbeat Leases in rssd's namespace) as the leader last saw it: filled by
 * rss_kube_watch (leader_cache_feed as its callback: LIST, then WATCH from the List's resourceVersion,
 * re-LIST on 410 or a broken watch) and by the reader's own LIST (leader_cache_replace) when the watch
 * has been quiet too long to vouch for the store.
 *
 * Order: resourceVersions that are decimal integers (every real and simulated API server) are compared,
 * so an event or List older than what the store holds never rolls an object back: an event at or below
 * the store's own copy, or at or below the last List's resourceVersion for an object that List did not
 * have, is dropped; a DELETED leaves a tombstone so an older ADDED/MODIFIED that arrives late does not
 * bring the object back (tombstones go at the next List at or above them). A resourceVersion that is
 * not an integer is taken as newer (the server's order, as client-go does).
 *
 * Thread-safe: any number of writers (the watch thread; the reconcile workers, each feeding its own writes)
 * and readers, under one lock. Readers get copies. */
struct leader_cache;

struct leader_cache *leader_cache_new(void);
void leader_cache_free(struct leader_cache *c); /* accepts NULL; no watch may still feed it */

/* An rss_kube_watch_fn: SYNC_BEGIN .. ADDED* .. SYNC_END is a List (applied as leader_cache_replace at
 * SYNC_END), ADDED/MODIFIED/DELETED single events. Never fails. */
int leader_cache_feed(void *cache, enum rss_kube_event event, const cJSON *obj, rss_error_t *err);

/* A List (`items` and metadata.resourceVersion) the reader took itself, at monotonic now_ms: objects
 * it lacks whose version is not newer than the List go, the others are taken unless the store's copy
 * is newer. Marks the store synced. */
void leader_cache_replace(struct leader_cache *c, const cJSON *list, int64_t now_ms);

/* True once a List was applied (by the watch or leader_cache_replace) and no watch re-list is half
 * way through. */
bool leader_cache_synced(const struct leader_cache *c);

/* Monotonic ms of the last thing that proved the store current: an applied List or any watch event
 * (even one dropped as old). 0: never. */
int64_t leader_cache_heard_ms(const struct leader_cache *c);

/* A List-shaped copy of the store, {"metadata":{"resourceVersion":...},"items":[...]} in key order
 * (namespace/name); the caller deletes it. */
cJSON *leader_cache_list(const struct leader_cache *c);

/* A copy of one object (ns NULL or "" for a cluster-scoped one), or NULL when absent. */
cJSON *leader_cache_get(const struct leader_cache *c, const char *ns, const char *name);

/* True when both objects carry decimal resourceVersions and a's is the greater (the later write). */
bool leader_rv_newer(const cJSON *a, const cJSON *b);

/* The number of live objects (tombstones not counted). */
size_t leader_cache_size(const struct leader_cache *c);

#endif
