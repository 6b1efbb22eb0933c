/* kube.h -- a small Kubernetes API client (libcurl + OpenSSL + cJSON): config, verbs, list+watch.
 *
 * A `struct rss_kube` holds the connection settings (server, CA, client certificate, token source)
 * and one connection: every request and watch is a stream of one HTTP/2 connection when the server
 * speaks it (HTTP/1.1 otherwise, or with RSS_KUBE_HTTP1=1 in the environment), driven by one thread of
 * the client. A connection whose sent bytes stay unacknowledged by the peer's TCP for 20 s (a dead
 * path) is closed by the kernel and the transfers on it fail (GETs retry, watches resume); a merely slow
 * server keeps it. It is thread-safe: any number of threads may call
 * the verbs and run watches on the same client at once. Tune it with the rss_kube_set_* calls before
 * sharing it.
 *
 * Objects go in and come out as cJSON. Every function that returns an object through `cJSON **ret`
 * gives the caller ownership (cJSON_Delete it); on failure *ret is left untouched.
 *
 * Errors (see rss/error.h): HTTP statuses and curl codes are converted in one place (kube_http.c),
 * from the Status body's `code`/`reason` when the server sent one:
 *     404 -> RSS_E_NOT_FOUND        409 Conflict -> RSS_E_CONFLICT, 409 AlreadyExists -> RSS_E_EXISTS
 *     410 -> RSS_E_GONE             401/403 -> RSS_E_UNAUTHORIZED     400/422/415 -> RSS_E_INVALID
 *     429/5xx, refused or reset connection, TLS failure -> RSS_E_UNAVAILABLE
 *     request deadline -> RSS_E_TIMEOUT   body over the cap -> RSS_E_TOO_LARGE
 *     a 2xx body that is not JSON -> RSS_E_INVALID
 * `detail` holds the HTTP status (0 when no response arrived); the message holds the Status message.
 *
 * Retries: 429 and 5xx are retried with jittered exponential backoff honouring Retry-After (bounded), and
 * failures to connect are retried (nothing was sent). A 401 makes the client re-read its token file
 * and retry once. Every request has a timeout (unless rss_kube_set_timeout says none); watches have none
 * but a stall detector instead.
 */
#ifndef RSS_KUBE_H
#define RSS_KUBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cjson/cJSON.h>

#include "rss/clock.h"
#include "rss/error.h"

struct rss_kube;

/* Creates a client.
 * - kubeconfig != NULL: that kubeconfig file (YAML or JSON; current-context).
 * - else $KUBECONFIG if set (the first readable file of a ':'-separated list),
 * - else in-cluster config: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with the
 *   service account's ca.crt, namespace ($POD_NAMESPACE overrides) and token, read from
 *   /var/run/secrets/kubernetes.io/serviceaccount or the directory $RSS_SERVICEACCOUNT_DIR.
 * Token files (in-cluster, or kubeconfig `tokenFile`) are re-read every minute and after a 401.
 * Errors: RSS_E_INVALID (bad or incomplete config), RSS_E_NOT_FOUND (no config at all), RSS_E_SYSTEM. */
int rss_kube_new(const char *kubeconfig, struct rss_kube **ret, rss_error_t *err);

/* Where `kubectl` would connect (kubectl plugins use this):
 * - kubeconfig: that file alone (--kubeconfig); it must exist;
 * - else every file of the $KUBECONFIG list, merged as client-go merges them (missing files skipped;
 *   for clusters, users and contexts of the same name, and for current-context, the first file wins;
 *   relative paths resolve against the file that named them);
 * - else ~/.kube/config; else in-cluster config as rss_kube_new.
 * context: that context (--context) instead of current-context; NULL for current-context.
 * rss_kube_namespace() then gives the context's namespace ("default" when it names none).
 * The rest are kubectl's overrides, each NULL/false for none, with client-go's precedence
 * (clientcmd/client_config.go):
 * - cluster, user (--cluster, --user): that kubeconfig entry instead of the context's (a context is then
 *   not needed for the cluster); an entry that does not exist is an error;
 * - server (--server; with no kubeconfig at all it is the whole connection; it also drops the kubeconfig's
 *   tls-server-name, as kubectl does, unless tls_server_name is given too);
 * - tls_server_name (--tls-server-name): the name sent in SNI and checked in the server's certificate,
 *   while the connection still goes to the server URL's host and the Host header stays the URL's;
 * - certificate_authority (--certificate-authority: this CA file instead of the cluster's CA data or file
 *   and of its insecure-skip-tls-verify), insecure (--insecure-skip-tls-verify: no CA at all; both at once
 *   are refused, as by kubectl, and so is a kubeconfig cluster with both);
 * - client_certificate, client_key (--client-certificate, --client-key: these files instead of the user's
 *   certificate or key, file or data); a certificate needs a key; a key without a certificate is unused;
 *   a certificate, key or CA file that cannot be read is an error that names it;
 * - token (--token: the bearer token instead of the user's token, token file or exec plugin; a client
 *   certificate stays, as kubectl keeps it);
 * - as and as_groups (--as, --as-group: impersonation headers; groups need a user).
 * kubectl's --request-timeout is rss_kube_set_timeout(). */
struct rss_kube_opts {
    const char *kubeconfig;
    const char *context;
    const char *cluster;
    const char *user;
    const char *server;
    const char *tls_server_name;
    const char *certificate_authority;
    const char *client_certificate;
    const char *client_key;
    const char *token;
    bool insecure;
    const char *as;
    const char *const *as_groups;
    size_t n_as_groups;
};
int rss_kube_new_opts(const struct rss_kube_opts *opts, struct rss_kube **ret, rss_error_t *err);

/* Frees the client. Accepts NULL. No request or watch may still be running on it. */
void rss_kube_free(struct rss_kube *kube);

/* The namespace of the config (kubeconfig context namespace, in-cluster namespace, or "default"). */
const char *rss_kube_namespace(const struct rss_kube *kube);

/* The server URL, e.g. "https://127.0.0.1:6443". */
const char *rss_kube_server(const struct rss_kube *kube);

/* Tunables; call before the client is shared between threads. */
/* Per request; default 30000. <= 0: none (kubectl's --request-timeout=0), though connecting, TLS
 * handshake included, still gives up after 10 s. */
void rss_kube_set_timeout(struct rss_kube *kube, long timeout_ms);
void rss_kube_set_max_body(struct rss_kube *kube, size_t bytes);                     /* default 32 MiB */
void rss_kube_set_retries(struct rss_kube *kube, int attempts, long max_backoff_ms); /* default 4, 5000 */
void rss_kube_set_user_agent(struct rss_kube *kube, const char *user_agent); /* default "rssd/<version>" */

/* Builds an API path (caller frees). group_version "v1" gives /api/v1, "apps/v1" /apis/apps/v1;
 * a NULL ns, plural, name or subresource is left out:
 *   rss_kube_path("v1", "ns", "pods", "p", "status") -> "/api/v1/namespaces/ns/pods/p/status"
 *   rss_kube_path("coordination.k8s.io/v1", NULL, "leases", NULL, NULL) ->
 * "/apis/coordination.k8s.io/v1/leases" Parts are used verbatim (Kubernetes names need no escaping). */
char *rss_kube_path(const char *group_version, const char *ns, const char *plural, const char *name,
                    const char *subresource);

/* GET of one object. */
int rss_kube_get(struct rss_kube *kube, const char *path, cJSON **ret, rss_error_t *err);

struct rss_kube_list_opts {
    const char *label_selector; /* e.g. "app=db,tier notin (web)"; NULL = all */
    const char *field_selector; /* e.g. "spec.nodeName=node1"; NULL = all */
    long limit;                 /* page size; 0 = 500 */
};

/* LIST of a collection path, following `continue` until the end: *ret is one List object holding
 * all items and the metadata.resourceVersion of the (first page's) snapshot. opts may be NULL.
 * An expired continue token restarts the list once from scratch (then RSS_E_GONE). */
int rss_kube_list(struct rss_kube *kube, const char *path, const struct rss_kube_list_opts *opts, cJSON **ret,
                  rss_error_t *err);

/* POST obj to a collection path; *ret = the created object (201). 409 -> RSS_E_EXISTS. */
int rss_kube_create(struct rss_kube *kube, const char *collection_path, const cJSON *obj, cJSON **ret,
                    rss_error_t *err);

/* PUT obj to an item path (use ".../status" for the status subresource). obj should carry
 * metadata.resourceVersion: a stale one gives RSS_E_CONFLICT. *ret = the stored object. */
int rss_kube_update(struct rss_kube *kube, const char *path, const cJSON *obj, cJSON **ret, rss_error_t *err);

/* PATCH with application/merge-patch+json (RFC 7386). A metadata.resourceVersion in the patch acts
 * as a precondition (RSS_E_CONFLICT on mismatch). ret may be NULL. */
int rss_kube_merge_patch(struct rss_kube *kube, const char *path, const cJSON *patch, cJSON **ret,
                         rss_error_t *err);

/* PATCH with application/json-patch+json (RFC 6902): ops is a JSON array of operations; a failing
 * "test" operation gives RSS_E_INVALID (422) or RSS_E_CONFLICT, as the server says. ret may be NULL. */
int rss_kube_json_patch(struct rss_kube *kube, const char *path, const cJSON *ops, cJSON **ret,
                        rss_error_t *err);

/* The status subresource: PUT / merge PATCH of item_path + "/status". */
int rss_kube_update_status(struct rss_kube *kube, const char *item_path, const cJSON *obj, cJSON **ret,
                           rss_error_t *err);
int rss_kube_merge_patch_status(struct rss_kube *kube, const char *item_path, const cJSON *patch, cJSON **ret,
                                rss_error_t *err);

struct rss_kube_delete_opts {
    const char *uid;              /* precondition: delete only this incarnation; NULL = none */
    const char *resource_version; /* precondition; NULL = none */
    bool set_grace;               /* send grace_period_seconds */
    long grace_period_seconds;
    const char *propagation; /* "Background" (default when NULL), "Foreground", "Orphan" */
};

/* DELETE of an item. opts may be NULL. A failed precondition gives RSS_E_CONFLICT. *ret (if ret is
 * not NULL) is the server's answer: the object (still there with deletionTimestamp, or its last
 * state) or a Status of kind "Status" with status "Success". */
int rss_kube_delete(struct rss_kube *kube, const char *path, const struct rss_kube_delete_opts *opts,
                    cJSON **ret, rss_error_t *err);

/* The general request all the verbs use.
 * method: "GET", "POST", "PUT", "PATCH", "DELETE"; query: already URL-encoded, without '?', or NULL;
 * content_type: for the body (NULL = application/json); body: NULL for none.
 * timeout_ms: 0 = the client's timeout; attempts: 0 = the client's retry count, 1 = no retry.
 * *ret (if ret is not NULL) gets the parsed 2xx body (NULL for an empty body). */
struct rss_kube_request {
    const char *method;
    const char *path;
    const char *query;
    const char *content_type;
    const char *body;
    long timeout_ms;
    int attempts;
    /* Not NULL: the 2xx body is text (pods/log), stored NUL-terminated in *text (the caller frees it),
     * and ret is left alone. */
    char **text;
};
int rss_kube_call(struct rss_kube *kube, const struct rss_kube_request *req, cJSON **ret, rss_error_t *err);

/* --- watch: list + watch with resume, re-list and stall detection (an informer without a cache) --- */

enum rss_kube_event {
    RSS_KUBE_SYNC_BEGIN, /* a (re)list starts; obj NULL. Until SYNC_END, ADDED events are the full state */
    RSS_KUBE_SYNC_END,   /* the (re)list ended; obj = the List's metadata (resourceVersion). Objects not seen
                            between BEGIN and END no longer exist */
    RSS_KUBE_ADDED,
    RSS_KUBE_MODIFIED,
    RSS_KUBE_DELETED, /* obj = the last state of the object */
};

/* Called from the watching thread for each event. obj is only valid during the call. Return >= 0 to
 * go on, or a negative value with *err set to make rss_kube_watch return that error. */
typedef int (*rss_kube_watch_fn)(void *userdata, enum rss_kube_event event, const cJSON *obj,
                                 rss_error_t *err);

struct rss_kube_watch_opts {
    const char *label_selector;
    const char *field_selector;
    /* Start by watching from this resourceVersion instead of listing first (e.g. the RV of a quorum
     * GET); NULL or "" = list first. A 410 then re-lists as usual. */
    const char *resource_version;
    /* Reconnect when no byte (not even a bookmark) arrived for this long; 0 = 90 s. Servers send a
     * bookmark about every minute, so keep it above that against a real API server. */
    long stall_ms;
    /* The server-side timeoutSeconds of each watch request; 0 = random in [300, 600) like client-go. */
    long watch_timeout_s;
    /* Checked at least every 200 ms; rss_kube_watch returns 0 soon after it becomes true. Required. */
    const atomic_bool *stop;
};

/* Lists `collection_path` (SYNC_BEGIN, ADDED..., SYNC_END), then watches from the list's
 * resourceVersion with allowWatchBookmarks, calling fn for every ADDED/MODIFIED/DELETED (bookmarks
 * only advance the resume point). A watch that ends, is cut, stalls or fails is resumed from the last
 * resourceVersion seen; a 410 (as an ERROR event or an HTTP status) re-lists. Failures of the API
 * server are retried forever with capped backoff (1 s .. 30 s). Returns 0 when *opts->stop became
 * true, or the callback's negative value; RSS_E_INVALID for a bad request (400/404/422 on the list:
 * e.g. an unknown resource or selector), which retrying would not fix. */
int rss_kube_watch(struct rss_kube *kube, const char *collection_path, const struct rss_kube_watch_opts *opts,
                   rss_kube_watch_fn fn, void *userdata, rss_error_t *err);

#endif
