/* registry.c -- the resources kubesim serves: the built-in kinds and every CRD's custom resources.
 * Unserved resources are kept (served=false) until exit, so a watch that still points at a
 * deleted CRD's resource never reads freed memory. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "kubesim.h"

static const char *const pod_fields[] = {"spec.nodeName",
                                         "spec.restartPolicy",
                                         "spec.schedulerName",
                                         "spec.serviceAccountName",
                                         "spec.hostNetwork",
                                         "status.phase",
                                         "status.podIP",
                                         "status.nominatedNodeName",
                                         NULL};
static const char *const event_fields[] = {"involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "source",
                                           "type",
                                           "reportingComponent",
                                           NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const secret_fields[] = {"type", NULL};

#define AGE                                                                                                  \
    {                                                                                                        \
        "Age", "string", "!age", 0                                                                           \
    }
static const struct ks_column pod_cols[] = {{"Ready", "string", "!podready", 0},
                                            {"Status", "string", "!podstatus", 0},
                                            {"Restarts", "string", "!restarts", 0},
                                            AGE,
                                            {"IP", "string", ".status.podIP", 1},
                                            {"Node", "string", ".spec.nodeName", 1},
                                            {NULL, NULL, NULL, 0}};
static const struct ks_column sts_cols[] = {{"Ready", "string", "!stsready", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column deploy_cols[] = {{"Ready", "string", "!stsready", 0},
                                               {"Available", "integer", ".status.availableReplicas", 0},
                                               AGE,
                                               {NULL, NULL, NULL, 0}};
static const struct ks_column ds_cols[] = {{"Desired", "integer", ".status.desiredNumberScheduled", 0},
                                           {"Ready", "integer", ".status.numberReady", 0},
                                           AGE,
                                           {NULL, NULL, NULL, 0}};
static const struct ks_column svc_cols[] = {{"Type", "string", ".spec.type", 0},
                                            {"Cluster-IP", "string", ".spec.clusterIP", 0},
                                            AGE,
                                            {NULL, NULL, NULL, 0}};
static const struct ks_column lease_cols[] = {
    {"Holder", "string", ".spec.holderIdentity", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column ns_cols[] = {
    {"Status", "string", ".status.phase", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column node_cols[] = {
    {"Status", "string", "!nodestatus", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column event_cols[] = {
    {"Last Seen", "string", "!lastseen", 0}, {"Type", "string", ".type", 0},
    {"Reason", "string", ".reason", 0},      {"Object", "string", "!involved", 0},
    {"Message", "string", ".message", 0},    {NULL, NULL, NULL, 0}};
static const struct ks_column cm_cols[] = {{"Data", "integer", "!datacount", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column secret_cols[] = {
    {"Type", "string", ".type", 0}, {"Data", "integer", "!datacount", 0}, AGE, {NULL, NULL, NULL, 0}};
static const struct ks_column pvc_cols[] = {
    {"Status", "string", ".status.phase", 0}, AGE, {NULL, NULL, NULL, 0}};
/* printPodDisruptionBudget: N/A for the unset one of the two. */
static const struct ks_column pdb_cols[] = {{"Min Available", "string", "!pdbmin", 0},
                                            {"Max Unavailable", "string", "!pdbmax", 0},
                                            {"Allowed Disruptions", "integer", "!pdballowed", 0},
                                            AGE,
                                            {NULL, NULL, NULL, 0}};
static const struct ks_column crd_cols[] = {{"Created At", "string", ".metadata.creationTimestamp", 0},
                                            {NULL, NULL, NULL, 0}};
static const struct ks_column age_cols[] = {AGE, {NULL, NULL, NULL, 0}};

struct builtin {
    const char *group, *version, *plural, *singular, *kind;
    bool namespaced;
    unsigned flags;
    const char *shorts; /* comma-separated */
    bool all;           /* in category "all" */
    const char *const *fields;
    const struct ks_column *cols;
};

static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", false, KS_STATUS | KS_RETURN_DELETED, "ns", false,
     ns_fields, ns_cols},
    {"", "v1", "pods", "pod", "Pod", true, KS_STATUS | KS_RETURN_DELETED, "po", true, pod_fields, pod_cols},
    {"", "v1", "services", "service", "Service", true, KS_STATUS | KS_RETURN_DELETED, "svc", true, NULL,
     svc_cols},
    {"", "v1", "endpoints", "endpoints", "Endpoints", true, KS_CREATE_ON_UPDATE, "ep", false, NULL, age_cols},
    {"", "v1", "events", "event", "Event", true, KS_CREATE_ON_UPDATE, "ev", false, event_fields, event_cols},
    {"", "v1", "configmaps", "configmap", "ConfigMap", true, 0, "cm", false, NULL, cm_cols},
    {"", "v1", "secrets", "secret", "Secret", true, 0, NULL, false, secret_fields, secret_cols},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, KS_RETURN_DELETED, "sa", false,
     NULL, age_cols},
    {"", "v1", "nodes", "node", "Node", false, KS_STATUS | KS_KEEP_STATUS_ON_CREATE, "no", false, node_fields,
     node_cols},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, KS_STATUS,
     "pvc", false, NULL, pvc_cols},
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, KS_STATUS, "pv", false,
     NULL, pvc_cols},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, KS_STATUS | KS_GENERATION | KS_SCALE,
     "sts", true, NULL, sts_cols},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, KS_STATUS | KS_GENERATION, "ds", true, NULL,
     ds_cols},
    {"apps", "v1", "deployments", "deployment", "Deployment", true, KS_STATUS | KS_GENERATION | KS_SCALE,
     "deploy", true, NULL, deploy_cols},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true,
     KS_STATUS | KS_GENERATION, "pdb", false, NULL, pdb_cols},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, KS_CREATE_ON_UPDATE | KS_NO_UNCONDITIONAL,
     NULL, false, NULL, lease_cols},
    {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, 0, NULL, false, NULL, age_cols},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, 0, NULL, false,
     NULL, age_cols},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, 0, NULL, false,
     NULL, age_cols},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding",
     false, 0, NULL, false, NULL, age_cols},
    /* deploy/base/flowcontrol.yaml: stored and served, not enforced (kubesim queues nothing). */
    {"flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "flowschema", "FlowSchema", false, KS_STATUS, NULL,
     false, NULL, age_cols},
    {"flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "prioritylevelconfiguration",
     "PriorityLevelConfiguration", false, KS_STATUS, NULL, false, NULL, age_cols},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
     "CustomResourceDefinition", false, KS_STATUS | KS_GENERATION, "crd,crds", false, NULL, crd_cols},
};

static struct ks_resource *head;      /* served, in discovery order */
static struct ks_resource *graveyard; /* no longer served */
static unsigned generation = 1;

static cJSON *split_list(const char *csv)
{
    if (!csv)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    _cleanup_free_ char *copy = rss_xstrdup(csv);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(arr, cJSON_CreateString(t));
    return arr;
}

static void append(struct ks_resource *r)
{
    struct ks_resource **p = &head;
    while (*p)
        p = &(*p)->next;
    r->next = NULL;
    *p = r;
    generation++;
}

void ks_registry_init(void)
{
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        const struct builtin *b = &builtins[i];
        struct ks_resource *r = rss_xcalloc(1, sizeof(*r));
        r->group = rss_xstrdup(b->group);
        r->version = rss_xstrdup(b->version);
        r->plural = rss_xstrdup(b->plural);
        r->singular = rss_xstrdup(b->singular);
        r->kind = rss_xstrdup(b->kind);
        r->list_kind = rss_xasprintf("%sList", b->kind);
        r->namespaced = b->namespaced;
        r->flags = b->flags;
        r->short_names = split_list(b->shorts);
        r->categories = b->all ? split_list("all") : NULL;
        r->fields = b->fields;
        r->cols = b->cols;
        r->served = true;
        append(r);
    }
}

static void resource_free(struct ks_resource *r)
{
    free(r->group);
    free(r->version);
    free(r->plural);
    free(r->singular);
    free(r->kind);
    free(r->list_kind);
    cJSON_Delete(r->short_names);
    cJSON_Delete(r->categories);
    cJSON_Delete(r->schema);
    cJSON_Delete(r->printer_cols);
    free(r->scale_spec);
    free(r->scale_status);
    free(r->scale_selector);
    free(r);
}

void ks_registry_free(void)
{
    struct ks_resource *lists[] = {head, graveyard};
    for (int i = 0; i < 2; i++) {
        struct ks_resource *r = lists[i];
        while (r) {
            struct ks_resource *next = r->next;
            resource_free(r);
            r = next;
        }
    }
    head = graveyard = NULL;
}

unsigned ks_registry_generation(void)
{
    return generation;
}

struct ks_resource *ks_resource_first(void)
{
    return head;
}

struct ks_resource *ks_resource_find(const char *group, const char *version, const char *plural)
{
    for (struct ks_resource *r = head; r; r = r->next) {
        if (!strcmp(r->plural, plural) && !strcmp(r->version, version) && !strcmp(r->group, group))
            return r;
    }
    return NULL;
}

struct ks_resource *ks_resource_any(const char *group, const char *plural)
{
    for (struct ks_resource *r = head; r; r = r->next) {
        if (!strcmp(r->plural, plural) && !strcmp(r->group, group))
            return r;
    }
    return NULL;
}

void ks_resource_qualified(const struct ks_resource *r, char *buf, size_t n)
{
    if (*r->group)
        snprintf(buf, n, "%s.%s", r->plural, r->group);
    else
        snprintf(buf, n, "%s", r->plural);
}

char *ks_resource_api_version(const struct ks_resource *r)
{
    if (*r->group)
        return rss_xasprintf("%s/%s", r->group, r->version);
    return rss_xstrdup(r->version);
}

void ks_registry_crd_remove(const char *group, const char *plural)
{
    struct ks_resource **p = &head;
    while (*p) {
        struct ks_resource *r = *p;
        if ((r->flags & KS_CUSTOM) && !strcmp(r->group, group) && !strcmp(r->plural, plural)) {
            *p = r->next;
            r->served = false;
            r->next = graveyard;
            graveyard = r;
            generation++;
        } else {
            p = &r->next;
        }
    }
}

static char *lower(const char *s)
{
    char *l = rss_xstrdup(s);
    for (char *p = l; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return l;
}

void ks_registry_crd_apply(const cJSON *crd)
{
    const char *group = ks_json_str(crd, "spec.group");
    const char *plural = ks_json_str(crd, "spec.names.plural");
    const char *kind = ks_json_str(crd, "spec.names.kind");
    if (!group || !plural || !kind)
        return;
    ks_registry_crd_remove(group, plural);
    const char *singular = ks_json_str(crd, "spec.names.singular");
    const char *list_kind = ks_json_str(crd, "spec.names.listKind");
    const char *scope = ks_json_str(crd, "spec.scope");
    const cJSON *v;
    cJSON_ArrayForEach(v, ks_json_path(crd, "spec.versions"))
    {
        const char *name = ks_json_str(v, "name");
        if (!name || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")))
            continue;
        struct ks_resource *r = rss_xcalloc(1, sizeof(*r));
        r->group = rss_xstrdup(group);
        r->version = rss_xstrdup(name);
        r->plural = rss_xstrdup(plural);
        r->singular = singular ? rss_xstrdup(singular) : lower(kind);
        r->kind = rss_xstrdup(kind);
        r->list_kind = list_kind ? rss_xstrdup(list_kind) : rss_xasprintf("%sList", kind);
        r->namespaced = !scope || strcmp(scope, "Cluster");
        r->flags = KS_CUSTOM | KS_GENERATION | KS_NO_UNCONDITIONAL;
        if (ks_json_path(v, "subresources.status"))
            r->flags |= KS_STATUS;
        const cJSON *scale = ks_json_path(v, "subresources.scale");
        if (scale) {
            r->flags |= KS_SCALE;
            const char *s;
            if ((s = ks_json_str(scale, "specReplicasPath")))
                r->scale_spec = rss_xstrdup(s);
            if ((s = ks_json_str(scale, "statusReplicasPath")))
                r->scale_status = rss_xstrdup(s);
            if ((s = ks_json_str(scale, "labelSelectorPath")))
                r->scale_selector = rss_xstrdup(s);
        }
        const cJSON *x = ks_json_path(crd, "spec.names.shortNames");
        r->short_names = cJSON_IsArray(x) ? cJSON_Duplicate(x, true) : NULL;
        x = ks_json_path(crd, "spec.names.categories");
        r->categories = cJSON_IsArray(x) ? cJSON_Duplicate(x, true) : NULL;
        x = ks_json_path(v, "schema.openAPIV3Schema");
        r->schema = cJSON_IsObject(x) ? cJSON_Duplicate(x, true) : NULL;
        x = cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns");
        r->printer_cols = cJSON_IsArray(x) ? cJSON_Duplicate(x, true) : NULL;
        r->served = true;
        append(r);
    }
}
