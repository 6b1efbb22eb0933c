/* kubesim.h -- interfaces between kubesim's files (test tooling, not a public rssd API).
 *
 * kubesim keeps everything in memory behind ONE mutex (ks_lock/ks_unlock) with one condition
 * variable that wakes watchers and paused requests. Stored objects are immutable snapshots
 * (struct ks_snap) shared by the store and the event history, so a watcher can serialise an
 * event while holding a reference, and a write never copies more than the new version.
 */
#ifndef KUBESIM_H
#define KUBESIM_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

/* ---- global lock, clock, misc (util.c) ---- */

void ks_lock(void);
void ks_unlock(void);
/* Waits on the global condition variable (lock held) until woken or `deadline_ns` (CLOCK_MONOTONIC). */
void ks_wait(int64_t deadline_ns);
void ks_broadcast(void);
int64_t ks_mono_ns(void);
/* RFC3339 UTC with whole seconds, e.g. 2025-01-02T03:04:05Z, for `now + offset_s`. */
char *ks_time_now(long offset_s);
/* Seconds since the epoch of an RFC3339 string, or -1. */
long ks_time_parse(const char *s);
/* Kubernetes HumanDuration ("5s", "3m12s", "2d"), into buf. */
void ks_human_duration(long seconds, char *buf, size_t n);
char *ks_uuid(void);
/* `n` characters from the apiserver's generateName alphabet. */
void ks_random_suffix(char *buf, size_t n);
/* Dotted-path lookups: "metadata.name" -> the item or NULL. */
cJSON *ks_json_path(const cJSON *obj, const char *dotted);
const char *ks_json_str(const cJSON *obj, const char *dotted);
/* Sets obj[key] to a string/number/item, replacing any existing member. */
void ks_json_set_str(cJSON *obj, const char *key, const char *value);
void ks_json_set_num(cJSON *obj, const char *key, double value);
void ks_json_set(cJSON *obj, const char *key, cJSON *item);
/* Returns obj[key], creating an empty object there if missing or not an object. */
cJSON *ks_json_obj(cJSON *obj, const char *key);

/* ---- resources (registry.c) ---- */

enum {
    KS_STATUS = 1 << 0,                /* has a /status subresource */
    KS_GENERATION = 1 << 1,            /* tracks metadata.generation */
    KS_CREATE_ON_UPDATE = 1 << 2,      /* PUT to a missing object creates it (Lease) */
    KS_NO_UNCONDITIONAL = 1 << 3,      /* PUT without resourceVersion is 422 (Lease, CRs) */
    KS_RETURN_DELETED = 1 << 4,        /* DELETE answers with the object, not a Status */
    KS_CUSTOM = 1 << 5,                /* a custom resource served for a CRD */
    KS_KEEP_STATUS_ON_CREATE = 1 << 6, /* create keeps .status (nodes, events have none) */
    KS_SCALE = 1 << 7,                 /* has a /scale subresource */
};

struct ks_column {
    const char *name;
    const char *type;     /* integer, number, string, boolean, date */
    const char *jsonpath; /* .spec.x, or a "!name" builtin computed in table.c */
    int priority;
};

struct ks_resource {
    char *group; /* "" for core */
    char *version;
    char *plural;
    char *singular;
    char *kind;
    char *list_kind;
    bool namespaced;
    unsigned flags;
    cJSON *short_names;           /* array of strings or NULL */
    cJSON *categories;            /* array of strings or NULL */
    const char *const *fields;    /* extra field selector labels, NULL-terminated, or NULL */
    const struct ks_column *cols; /* built-in printer columns (NULL: Age only) */
    cJSON *schema;                /* CR: openAPIV3Schema (owned) or NULL */
    cJSON *printer_cols;          /* CR: additionalPrinterColumns (owned) or NULL */
    char *scale_spec, *scale_status, *scale_selector; /* CR scale paths */
    bool served;                                      /* false once the CRD is gone (the struct lives on) */
    struct ks_resource *next;
};

void ks_registry_init(void);
void ks_registry_free(void);
/* All lookups under the lock. NULL when not served. */
struct ks_resource *ks_resource_find(const char *group, const char *version, const char *plural);
/* First served resource of (group, plural) in any version: the storage identity. */
struct ks_resource *ks_resource_any(const char *group, const char *plural);
struct ks_resource *ks_resource_first(void);
/* Registers the CR resources of a CRD object (replacing those of the same CRD). */
void ks_registry_crd_apply(const cJSON *crd);
void ks_registry_crd_remove(const char *group, const char *plural);
/* "pods" or "statefulsets.apps": the resource name errors use. */
void ks_resource_qualified(const struct ks_resource *r, char *buf, size_t n);
char *ks_resource_api_version(const struct ks_resource *r);
/* Bumped whenever the served set changes (for the OpenAPI hash). */
unsigned ks_registry_generation(void);

/* ---- store and history (store.c) ---- */

/* --pod-logs DIR: where the world's nodes keep their pods' logs (DIR/<node>/kubelet/logs/...), for
 * pods/log; NULL: pods/log answers 503. */
extern const char *ks_pod_logs_root;

struct ks_snap {
    atomic_int refs;
    cJSON *obj; /* immutable once published */
};

struct ks_snap *ks_snap_new(cJSON *obj);
struct ks_snap *ks_snap_ref(struct ks_snap *s);
void ks_snap_unref(struct ks_snap *s);

enum ks_event_type { KS_ADDED, KS_MODIFIED, KS_DELETED };
const char *ks_event_name(enum ks_event_type t);

struct ks_event {
    uint64_t rv;
    enum ks_event_type type;
    char *group, *plural, *ns; /* ns "" for cluster-scoped */
    struct ks_snap *snap;      /* the new state (the last state for DELETED) */
    struct ks_snap *prev;      /* the previous state, or NULL for ADDED */
};

void ks_store_init(void);
void ks_store_free(void);
uint64_t ks_store_rv(void);
/* Borrowed snapshot of an object, or NULL. ns is "" (or NULL) for cluster-scoped. */
struct ks_snap *ks_store_get(const char *group, const char *plural, const char *ns, const char *name);
/* Stores `obj` (taken) as the new version: assigns the next resourceVersion, records an event,
 * wakes watchers. Returns the borrowed stored snapshot. */
struct ks_snap *ks_store_put(const char *group, const char *plural, const char *ns, cJSON *obj,
                             const char *verb);
/* Removes the object: a DELETED event with the last state at a new resourceVersion. Returns a
 * new reference to the deleted snapshot (caller unrefs), or NULL if missing. */
struct ks_snap *ks_store_remove(const char *group, const char *plural, const char *ns, const char *name,
                                const char *verb);
/* Snapshots (new references) of every object of (group, plural), ns NULL for all, sorted by
 * namespace then name. Caller frees with ks_snaps_free. */
struct ks_snap **ks_store_list(const char *group, const char *plural, const char *ns, size_t *n);
void ks_snaps_free(struct ks_snap **v, size_t n);
/* History lookup: the event with this rv, or NULL if not (or no longer) kept. */
const struct ks_event *ks_history_at(uint64_t rv);
/* The oldest rv still in the history (events exist for oldest..ks_store_rv()). */
uint64_t ks_history_oldest(void);
/* Watch/list from an rv below this answer 410 (POST /_sim/compact). */
uint64_t ks_store_compacted(void);
void ks_store_compact(void);
/* JSON array of the Lease write log (caller frees). */
cJSON *ks_store_leases_log(void);

/* ---- request/reply (api.c, server.c) ---- */

struct ks_watch;
struct ks_user;

struct ks_req {
    const char *method; /* GET PUT ... */
    const char *path;
    const char *accept;       /* may be NULL */
    const char *content_type; /* may be NULL */
    const char *body;
    size_t body_len;
    /* query parameter lookup (decoded), NULL if absent */
    const char *(*query)(void *ctx, const char *key);
    void *query_ctx;
    const struct ks_user *user; /* who is asking (authenticated, or anonymous on public paths) */
    const char *client;         /* its User-Agent, may be NULL */
};

struct ks_reply {
    int code;
    char *body;               /* owned */
    const char *content_type; /* static string */
    int retry_after;          /* >0: add Retry-After */
    char *warning;            /* owned, Warning header or NULL */
    struct ks_watch *watch;   /* a streaming watch instead of a body */
};

void ks_reply_json(struct ks_reply *r, int code, cJSON *body); /* takes body */
/* A Status failure reply. kind/group/name go into details when name != NULL. */
void ks_reply_status(struct ks_reply *r, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
cJSON *ks_status_new(int code, const char *reason, const char *msg);
void ks_reply_free(struct ks_reply *r);

/* Serves one authenticated API request (not /_sim). Verb for stats goes to *verb. */
void ks_api_handle(const struct ks_req *req, struct ks_reply *reply, const char **verb);

/* ---- discovery, version, openapi (discovery.c) ---- */

extern int ks_minor;
extern int ks_port;
/* Answers /version, /api, /apis, discovery lists, /openapi/..., health. False if not such a path. */
bool ks_discovery_handle(const struct ks_req *req, struct ks_reply *reply);

/* ---- patches (patch.c) ---- */

/* RFC 7386 merge patch: applies `patch` to `target` in place. */
void ks_merge_patch(cJSON *target, const cJSON *patch);
/* RFC 6902 as kube-apiserver applies it (evanphx/json-patch v4): returns the new document, or NULL with
 * *code (400/422) and what failed in errbuf. raw/raw_len: the request body, whose text a `test` compares
 * (jsontext.c); NULL compares values. */
cJSON *ks_json_patch(const cJSON *doc, const cJSON *ops, const char *raw, size_t raw_len, int *code,
                     char *errbuf, size_t n);

/* ---- JSON as text (jsontext.c) ---- */

/* The text of operation `index`'s "value" in a JSON patch body (the last one when repeated); false when
 * it has none. */
bool ks_jsontext_op_value(const char *raw, size_t len, int index, const char **s, const char **e);
/* Whether the text [s, e) is JSON null. */
bool ks_jsontext_null(const char *s, const char *e);
/* Whether the stored value equals the text [s, e) as a `test` operation of the real server decides: objects
 * by keys, arrays by elements, anything else by its text against Go's encoding of the stored value. */
bool ks_jsontext_equal(const cJSON *stored, const char *s, const char *e);
/* Minimal strategic merge patch (built-in kinds), in place. */
void ks_strategic_patch(cJSON *target, const cJSON *patch);

/* ---- selectors (selector.c) ---- */

struct ks_selector;
/* NULL/empty string gives a selector matching everything. Error: NULL + message in errbuf. */
struct ks_selector *ks_label_selector_parse(const char *s, char *errbuf, size_t n);
struct ks_selector *ks_field_selector_parse(const char *s, const struct ks_resource *res, char *errbuf,
                                            size_t n);
bool ks_selector_match(const struct ks_selector *sel, const cJSON *obj);
void ks_selector_free(struct ks_selector *sel);

/* ---- CR schema validation and pruning (schema.c) ---- */

/* Validates `obj` against `schema` (an openAPIV3Schema), pruning unknown fields in place.
 * Returns a cJSON array of causes {type,message,field} (empty when valid; caller frees);
 * pruned field paths are appended to `pruned` (an array) when not NULL. */
cJSON *ks_schema_validate(const cJSON *schema, cJSON *obj, cJSON *pruned);

/* ---- tables (table.c) ---- */

bool ks_wants_table(const char *accept);
extern const char ks_table_content_type[];
/* Builds a Table of `objs` (borrowed). header=false omits columnDefinitions (watch events). */
cJSON *ks_table(const struct ks_resource *res, cJSON *const *objs, size_t n, const char *rv, bool header,
                bool include_object);
/* Evaluates a kubectl-style JSONPath (.a.b[0].c, [?(@.k=="v")]) on obj; NULL if absent. */
const cJSON *ks_jsonpath(const cJSON *obj, const char *path);

/* ---- watch streams (watch.c) ---- */

struct ks_watch_opts {
    const struct ks_resource *res;
    char *ns;                            /* NULL for all */
    struct ks_selector *labels, *fields; /* taken */
    uint64_t from_rv;                    /* stream events after this rv */
    bool send_initial;                   /* synthetic ADDED for the current state first */
    bool initial_bookmark;               /* sendInitialEvents: bookmark with initial-events-end */
    bool bookmarks;
    bool table;
    bool expired; /* answer one ERROR 410 event and end */
    uint64_t expired_rv;
    long timeout_s;
    char *client; /* the User-Agent (owned), for the per-client event counts; NULL = "-" */
};
/* Creates a watch (under the lock: takes the initial snapshot). Frees opts' owned members on error. */
struct ks_watch *ks_watch_new(struct ks_watch_opts *opts);
/* The MHD content reader callback and its free callback. */
ssize_t ks_watch_read(void *cls, uint64_t pos, char *buf, size_t max);
void ks_watch_free(void *cls);
/* Lets the watch notice that its client went away (socket fd; -1 if unknown). */
void ks_watch_set_fd(struct ks_watch *w, int fd);

/* ---- control endpoints and fault injection (simctl.c) ---- */

extern atomic_bool ks_shutting_down;
bool ks_sim_paused(void);      /* under the lock */
unsigned ks_sim_cut_gen(void); /* under the lock */
void ks_simctl_handle(const struct ks_req *req, struct ks_reply *reply);
enum ks_fault { KS_FAULT_NONE, KS_FAULT_DROP, KS_FAULT_FAIL };
/* Consumes matching fault rules for a request: blocks while paused, sleeps for stalls, returns
 * DROP or FAIL (with *code and *retry_after) or NONE. `alt` is a second verb name rules may
 * use (WATCH for watch requests), or NULL. */
enum ks_fault ks_sim_faults(const char *method, const char *alt, const char *path, int *code,
                            int *retry_after);
void ks_simctl_free(void);
/* Counts one request: by verb, and by client (User-Agent), verb and the resource of its path. */
void ks_sim_count(const char *verb, const char *path, const char *client);
/* Under the lock: counts one watch event (ADDED/MODIFIED/DELETED, not BOOKMARK or ERROR) sent to client on
 * a stream of resource `plural`. */
void ks_sim_count_event(const char *client, const char *plural);

/* ---- HTTPS server (server.c) ---- */

struct MHD_Daemon;
/* Listens on 127.0.0.1:*port (0: any; the port chosen is written back) with TLS. */
struct MHD_Daemon *ks_server_start(const char *dir, int *port, const char *cert, const char *key,
                                   char *errbuf, size_t n);

/* ---- TLS material, tokens, kubeconfig (certs.c) ---- */

/* Loads or creates DIR/{ca,server}.{crt,key} and DIR/token. PEM strings are returned owned. */
int ks_certs_ensure(const char *dir, char **cert_pem, char **key_pem, char *errbuf, size_t n);
int ks_write_kubeconfig(const char *dir, int port, char *errbuf, size_t n);
char *ks_read_file(const char *path);

/* ---- identities (auth.c) ---- */

struct ks_user {
    char *name;
    char *uid;
    char **groups; /* always ends with system:authenticated (or system:unauthenticated) */
    size_t n_groups;
};
/* Loads or creates DIR/sa.key, the key that signs ServiceAccount tokens. */
int ks_auth_init(const char *dir, char *errbuf, size_t n);
/* The user of a bearer token, or NULL (401): DIR/token is the admin (kubesim-admin, system:masters);
 * a line of DIR/tokens (re-read when its mtime changes) is either a bare token (the admin too) or
 * "token,user,uid[,\"group1,group2\"]" as kube-apiserver's --token-auth-file; a ServiceAccount token
 * kubesim issued (TokenRequest) is system:serviceaccount:NS:NAME while that ServiceAccount exists
 * with the same uid. Takes the lock for the ServiceAccount lookup. */
struct ks_user *ks_authenticate(const char *token);
/* system:anonymous (group system:unauthenticated), for the public paths without a token. */
struct ks_user *ks_user_anonymous(void);
struct ks_user *ks_user_new(const char *name, const char *uid, const char *const *groups, size_t n);
void ks_user_free(struct ks_user *u);
bool ks_user_in_group(const struct ks_user *u, const char *group);
/* POST .../serviceaccounts/NAME/token (TokenRequest): issues a token for the ServiceAccount. */
void ks_token_request(const struct ks_req *req, const char *ns, const char *name, struct ks_reply *reply);
void ks_auth_free(void);
/* The ServiceAccount "default" of a new namespace (lock held), as the ServiceAccount controller. */
void ks_default_serviceaccount(const char *ns);

/* ---- protobuf request bodies (proto.c) ---- */

/* The JSON form of a protobuf body (magic "k8s\0" + runtime.Unknown) of the kinds kubesim takes in
 * protobuf (SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectRulesReview, TokenRequest),
 * or NULL. */
cJSON *ks_proto_decode(const char *body, size_t len);
/* A request body as JSON: JSON, or protobuf for the kinds above; NULL if neither. */
cJSON *ks_body_json(const struct ks_req *req);

/* ---- authorization (rbac.c) ---- */

/* What the authorizer decides on, as the apiserver's RequestInfo: "" for absent parts. */
struct ks_attrs {
    bool resource_request;
    char verb[32];
    char group[128];
    char version[32];
    char resource[96];
    char sub[64];
    char ns[256];
    char name[256];
    char path[512]; /* non-resource requests */
};
/* The attributes of an HTTP request (method, path, query: watch, fieldSelector metadata.name). */
void ks_request_attrs(const struct ks_req *req, struct ks_attrs *a);
/* RBAC over the stored Roles, ClusterRoles and bindings, plus the built-in roles (system:masters,
 * discovery, basic-user, public-info). True if allowed; `reason` gets "RBAC: allowed by ..." or
 * the resolution errors. Takes the lock. */
bool ks_authorize(const struct ks_user *u, const struct ks_attrs *a, char *reason, size_t n);
bool ks_authorize_locked(const struct ks_user *u, const struct ks_attrs *a, char *reason, size_t n);
/* The 403 Forbidden Status the apiserver answers for a denied request. */
void ks_reply_forbidden(struct ks_reply *reply, const struct ks_user *u, const struct ks_attrs *a,
                        const char *reason);
/* POST /apis/authorization.k8s.io/v1/{selfsubjectaccessreviews,subjectaccessreviews,
 * selfsubjectrulesreviews}: false if the path is none of them. */
bool ks_review_handle(const struct ks_req *req, struct ks_reply *reply);
void ks_rbac_free(void);

#endif
