/* agent_members.c -- the agent's tables: member pods on this node, parsed RSS specs, and the CRI lookup
 * of a member's hook container. */
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/log.h"
#include "rss/record.h"
#include "agent_internal.h"

static char *dup_or_null(const char *s)
{
    return s ? rss_xstrdup(s) : NULL;
}

/* An unchanged value keeps its pointer: a worker may be reading it (it copies what it needs at
 * dispatch, agent.c, but a stable pointer is the cheaper guarantee). */
static void set_str(char **dst, const char *s)
{
    if ((*dst == NULL && s == NULL) || (*dst && s && !strcmp(*dst, s)))
        return;
    free(*dst);
    *dst = dup_or_null(s);
}

void agent_member_free(struct agent_member *m)
{
    if (!m)
        return;
    free(m->ns);
    free(m->pod);
    free(m->uid);
    free(m->rss);
    free(m->container_name);
    free(m->rv);
    free(m->desired_json);
    free(m->observed_json);
    rss_recordcodec_observed_clear(&m->obs);
    free(m->container_id);
    free(m->last_skip);
    free(m);
}

static struct agent_member **find_member(struct rss_agent *a, const char *ns, const char *name)
{
    for (struct agent_member **p = &a->members; *p; p = &(*p)->next)
        if (strcmp((*p)->ns, ns) == 0 && strcmp((*p)->pod, name) == 0)
            return p;
    return NULL;
}

/* Unlinks *p; a member a worker holds is freed by that worker. */
static void unlink_member(struct agent_member **p)
{
    struct agent_member *m = *p;
    *p = m->next;
    m->next = NULL;
    if (m->busy)
        m->gone = true;
    else
        agent_member_free(m);
}

void agent_member_delete(struct rss_agent *a, const char *ns, const char *name)
{
    struct agent_member **p = find_member(a, ns, name);
    if (p) {
        rss_log_info("pod %s/%s left this node or is no longer a member", ns, name);
        unlink_member(p);
    }
}

void agent_member_ingest(struct rss_agent *a, const cJSON *pod)
{
    const cJSON *meta = rss_json_obj(pod, "metadata");
    const char *ns = rss_json_str(meta, "namespace"), *name = rss_json_str(meta, "name"),
               *uid = rss_json_str(meta, "uid");
    const char *rss =
        rss_json_str(cJSON_GetObjectItemCaseSensitive(rss_json_obj(meta, "labels"), RSS_LABEL_NAME), "");
    const cJSON *containers = cJSON_GetObjectItemCaseSensitive(rss_json_obj(pod, "spec"), "containers");
    const char *cname = rss_json_str(cJSON_GetArrayItem(containers, 0), "name");
    if (!ns || !name)
        return;
    struct agent_member **p = find_member(a, ns, name);
    if (!rss || !uid || !cname) {
        if (p)
            agent_member_delete(a, ns, name);
        return;
    }
    if (p && strcmp((*p)->uid, uid) != 0) {
        rss_log_info("pod %s/%s was replaced (uid %s -> %s)", ns, name, (*p)->uid, uid);
        unlink_member(p);
        p = NULL;
    }
    struct agent_member *m;
    if (p) {
        m = *p;
    } else {
        m = rss_xcalloc(1, sizeof(*m));
        m->ns = rss_xstrdup(ns);
        m->pod = rss_xstrdup(name);
        m->uid = rss_xstrdup(uid);
        m->container_id = rss_xstrdup("");
        m->next = a->members;
        a->members = m;
        rss_log_info("pod %s/%s (uid %s) is a candidate member of RSS %s", ns, name, uid, rss);
    }
    set_str(&m->rss, rss);
    set_str(&m->container_name, cname);
    /* The pod's own annotations are not read: anyone who can patch the pod could have written them. */
    agent_member_sync(a, m);
    m->seen = true;
    m->wake = true;
}

/* --- member records -------------------------------------------------------------------------------- */

static struct agent_record **find_record(struct rss_agent *a, const char *ns, const char *pod)
{
    for (struct agent_record **p = &a->records; *p; p = &(*p)->next)
        if (strcmp((*p)->ns, ns) == 0 && strcmp((*p)->pod, pod) == 0)
            return p;
    return NULL;
}

struct agent_record *agent_record_find(struct rss_agent *a, const char *ns, const char *pod)
{
    struct agent_record **p = find_record(a, ns, pod);
    return p ? *p : NULL;
}

void agent_member_sync(struct rss_agent *a, struct agent_member *m)
{
    struct agent_record **p = find_record(a, m->ns, m->pod);
    const cJSON *cm = p ? (*p)->cm : NULL;
    set_str(&m->rv, p ? (*p)->rv : NULL);
    /* Only what was written for this incarnation of the pod counts (rss/record.h). */
    set_str(&m->desired_json, rss_record_value(cm, RSS_RECORD_DESIRED, RSS_RECORD_DESIRED_FOR, m->uid));
    set_str(&m->observed_json, rss_record_value(cm, RSS_RECORD_OBSERVED, RSS_RECORD_OBSERVED_FOR, m->uid));
}

static void sync_member_of(struct rss_agent *a, const char *ns, const char *pod)
{
    struct agent_member **mp = find_member(a, ns, pod);
    if (mp) {
        agent_member_sync(a, *mp);
        (*mp)->wake = true;
    }
}

static void record_free(struct agent_record *r)
{
    free(r->ns);
    free(r->rss);
    free(r->pod);
    free(r->rv);
    cJSON_Delete(r->cm);
    free(r);
}

bool agent_record_ingest(struct rss_agent *a, const cJSON *cm)
{
    const char *ns, *rss, *pod;
    const char *rv = rss_json_str(cm, "metadata.resourceVersion");
    if (!rss_record_member(cm, &ns, &rss, &pod) || !rv)
        return false;
    struct agent_record **p = find_record(a, ns, pod);
    const char *was = p ? rss_json_str((*p)->cm, "data." RSS_RECORD_OBSERVED) : NULL;
    const char *now = rss_json_str(cm, "data." RSS_RECORD_OBSERVED);
    bool observed_changed = now && (!was || strcmp(was, now));
    struct agent_record *r;
    if (p) {
        r = *p;
        cJSON_Delete(r->cm);
        free(r->rv);
    } else {
        r = rss_xcalloc(1, sizeof(*r));
        r->ns = rss_xstrdup(ns);
        r->pod = rss_xstrdup(pod);
        r->next = a->records;
        a->records = r;
    }
    r->rv = rss_xstrdup(rv);
    free(r->rss);
    r->rss = rss_xstrdup(rss);
    r->cm = cJSON_Duplicate(cm, true);
    r->seen = true;
    sync_member_of(a, ns, pod);
    return observed_changed;
}

void agent_record_delete(struct rss_agent *a, const cJSON *cm)
{
    const char *ns, *rss, *pod;
    if (!rss_record_member(cm, &ns, &rss, &pod))
        return;
    struct agent_record **p = find_record(a, ns, pod);
    if (!p)
        return;
    struct agent_record *r = *p;
    *p = r->next;
    record_free(r);
    sync_member_of(a, ns, pod);
}

void agent_records_clear(struct rss_agent *a)
{
    while (a->records) {
        struct agent_record *r = a->records;
        a->records = r->next;
        record_free(r);
    }
}

void agent_records_mark(struct rss_agent *a, const char *ns, const char *rss)
{
    for (struct agent_record *r = a->records; r; r = r->next)
        if (!strcmp(r->ns, ns) && !strcmp(r->rss, rss))
            r->seen = false;
}

void agent_records_sweep(struct rss_agent *a, const char *ns, const char *rss)
{
    struct agent_record **p = &a->records;
    while (*p) {
        struct agent_record *r = *p;
        if (r->seen || strcmp(r->ns, ns) || strcmp(r->rss, rss)) {
            p = &r->next;
            continue;
        }
        *p = r->next;
        _cleanup_free_ char *ns = rss_xstrdup(r->ns), *pod = rss_xstrdup(r->pod);
        record_free(r);
        sync_member_of(a, ns, pod);
    }
}

/* --- specs ----------------------------------------------------------------------------------------- */

static char *spec_key(const char *ns, const char *name)
{
    return rss_xasprintf("%s/%s", ns, name);
}

static struct agent_spec *find_spec(const struct rss_agent *a, const char *key, size_t *idx)
{
    for (size_t i = 0; i < a->n_specs; i++)
        if (strcmp(a->specs[i]->key, key) == 0) {
            if (idx)
                *idx = i;
            return a->specs[i];
        }
    return NULL;
}

struct agent_spec *agent_spec_get(struct rss_agent *a, const char *ns, const char *name)
{
    _cleanup_free_ char *key = spec_key(ns, name);
    struct agent_spec *s = find_spec(a, key, NULL);
    if (!s || !s->valid)
        return NULL;
    s->refs++;
    return s;
}

struct agent_spec *agent_spec_hold(struct rss_agent *a, const char *ns, const char *name)
{
    _cleanup_free_ char *key = spec_key(ns, name);
    struct agent_spec *s = find_spec(a, key, NULL);
    if (s)
        s->refs++;
    return s;
}

/* Is record r one of the RSS with key "ns/name"? */
static bool record_of(const struct agent_record *r, const char *key)
{
    size_t n = strlen(r->ns);
    return r->rss && !strncmp(key, r->ns, n) && key[n] == '/' && !strcmp(key + n + 1, r->rss);
}

static void push_node(char ***nodes, size_t *n, size_t *cap, const char *node)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*nodes)[i], node))
            return;
    *(char **)rss_xarray_push(nodes, n, cap, sizeof(**nodes)) = rss_xstrdup(node);
}

/* Why the records too: the status is written after the records in a plan, and a member the leader has just
 * placed on a new node is started before the status naming that node reaches this agent. An agent cut off
 * in between asked only the nodes of the status it held; all of them could vouch while the new node's
 * member ran on the leader's side, and the leader's dead verdict then found this node's members running
 * (issue 35). The new member's agent reported (`observed`, with its node) before the leader started it
 * (rule 8), so its record names the node. A node named only by an old record (a pod gone from it) is asked
 * too: a failsafe that asks one node too many fences in an outage at worst. A status that names no node is
 * no view of the members at all (no leader has written one yet): nothing to ask, as before, so the failsafe
 * keeps nothing on the records alone (an older rssd's record names no node). */
size_t agent_spec_nodes(struct rss_agent *a, const struct agent_spec *s, char ***out)
{
    char **nodes = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n_nodes; i++)
        push_node(&nodes, &n, &cap, s->nodes[i]);
    for (const struct agent_record *r = n ? a->records : NULL; r; r = r->next) {
        const char *node =
            record_of(r, s->key) ? rss_json_str(r->cm, "data." RSS_RECORD_OBSERVED_NODE) : NULL;
        if (node && *node && n < 4 * RSS_SPEC_ORDINAL_MAX)
            push_node(&nodes, &n, &cap, node);
    }
    *out = nodes;
    return n;
}

void agent_nodes_free(char **nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(nodes[i]);
    free(nodes);
}

void agent_spec_put(struct rss_agent *a, struct agent_spec *s)
{
    (void)a;
    if (!s || --s->refs > 0)
        return;
    rss_spec_clear(&s->spec);
    for (size_t i = 0; i < s->n_nodes; i++)
        free(s->nodes[i]);
    free(s->nodes);
    cJSON_Delete(s->obj);
    free(s->key);
    free(s);
}

static void drop_spec(struct rss_agent *a, size_t i)
{
    struct agent_spec *s = a->specs[i];
    a->specs[i] = a->specs[--a->n_specs];
    agent_spec_put(a, s);
}

struct agent_spec *agent_spec_find(const struct rss_agent *a, const char *key)
{
    return find_spec(a, key, NULL);
}

bool agent_spec_drop(struct rss_agent *a, const char *key)
{
    size_t i;
    if (!find_spec(a, key, &i))
        return false;
    drop_spec(a, i);
    return true;
}

void agent_spec_delete(struct rss_agent *a, const char *ns, const char *name)
{
    _cleanup_free_ char *key = spec_key(ns, name);
    if (agent_spec_drop(a, key))
        rss_log_info("RSS %s deleted: its pods are no longer members", key);
}

void agent_spec_set(struct rss_agent *a, const cJSON *cr)
{
    const cJSON *meta = rss_json_obj(cr, "metadata");
    const char *ns = rss_json_str(meta, "namespace"), *name = rss_json_str(meta, "name");
    if (!ns || !name)
        return;
    struct agent_spec *s = rss_xcalloc(1, sizeof(*s));
    s->refs = 1;
    s->seen = true;
    s->key = spec_key(ns, name);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_spec_parse(cr, &s->spec, &err) == 0) {
        s->valid = true;
    } else {
        /* Rule 6: a bad spec changes nothing; its members are left alone (the leader reports it). Not by
         * self-fencing: the leader may hold a spec it can use (fixed during a cut, a newer rssd). */
        _cleanup_free_ char *msg = rss_error_string(err);
        rss_log_warn("RSS %s is invalid, its members are left alone but for a self-fence (which kills their "
                     "containers): %s",
                     s->key, msg);
    }
    /* The nodes the leader last saw its members on: the agents the failsafe asks (fence.c). */
    const cJSON *ms;
    cJSON_ArrayForEach(ms, cJSON_GetObjectItemCaseSensitive(rss_json_obj(cr, "status"), "memberStatus"))
    {
        const char *node = rss_json_str(ms, "node");
        if (node && *node && s->n_nodes < RSS_SPEC_ORDINAL_MAX) {
            *(char **)rss_xarray_push(&s->nodes, &s->n_nodes, &s->cap_nodes, sizeof(*s->nodes)) =
                rss_xstrdup(node);
        }
    }
    s->obj = cJSON_Duplicate(cr, true);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(s->obj, "metadata"),
                                            "managedFields");
    size_t i;
    if (find_spec(a, s->key, &i))
        drop_spec(a, i);
    *(struct agent_spec **)rss_xarray_push(&a->specs, &a->n_specs, &a->cap_specs, sizeof(*a->specs)) = s;
    for (struct agent_member *m = a->members; m; m = m->next)
        if (strcmp(m->ns, ns) == 0 && m->rss && strcmp(m->rss, name) == 0)
            m->wake = true;
}

/* --- CRI ------------------------------------------------------------------------------------------- */

int agent_find_container(struct rss_agent *a, const char *uid, const char *cname, char **id, rss_error_t *err)
{
    /* Rule 5: only the kubelet's labels of this pod's first container identify a hook container. */
    struct rss_cri_kv kv[] = {{"io.kubernetes.pod.uid", uid}, {"io.kubernetes.container.name", cname}};
    struct rss_cri_container_filter f = {
        .match_state = true, .state = RSS_CRI_CONTAINER_RUNNING, .labels = {2, kv}};
    struct rss_cri_container_list l = {0};
    *id = NULL;
    if (rss_cri_list_containers(a->cri, &f, &l, err) < 0)
        return rss_error_wrap(err, "listing the containers of pod uid %s", uid);
    const struct rss_cri_container *best = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (l.items[i].state == RSS_CRI_CONTAINER_RUNNING &&
            (!best || l.items[i].created_at > best->created_at))
            best = &l.items[i];
    if (best)
        *id = rss_xstrdup(best->id);
    rss_cri_container_list_clear(&l);
    return 0;
}

bool agent_peer_wanted(struct rss_agent *a, const char *node)
{
    bool wanted = false;
    pthread_mutex_lock(&a->lock);
    for (struct agent_member *m = a->members; m && !wanted; m = m->next) {
        if (!m->rss)
            continue;
        _cleanup_free_ char *key = spec_key(m->ns, m->rss);
        size_t i;
        if (!find_spec(a, key, &i))
            continue;
        char **nodes;
        size_t n = agent_spec_nodes(a, a->specs[i], &nodes);
        for (size_t k = 0; k < n && !wanted; k++)
            wanted = !strcmp(nodes[k], node);
        agent_nodes_free(nodes, n);
    }
    pthread_mutex_unlock(&a->lock);
    return wanted;
}
