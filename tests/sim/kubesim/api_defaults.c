/* api_defaults.c -- the defaults kubesim applies, and the validation of custom resources by their CRD schema.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/log.h"
#include "api_internal.h"

/* ---- defaults (the few the simulated controllers and kubectl rely on) ---- */

static void default_num(cJSON *o, const char *key, double v)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddNumberToObject(o, key, v);
}

static void default_str(cJSON *o, const char *key, const char *v)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddStringToObject(o, key, v);
}

void api_apply_defaults(const struct ks_resource *res, cJSON *obj)
{
    if (api_is(res, "", "pods")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_str(spec, "restartPolicy", "Always");
        default_num(spec, "terminationGracePeriodSeconds", 30);
        default_str(spec, "dnsPolicy", "ClusterFirst");
        default_str(spec, "schedulerName", "default-scheduler");
    } else if (api_is(res, "apps", "statefulsets")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_num(spec, "replicas", 1);
        default_str(spec, "podManagementPolicy", "OrderedReady");
        default_num(spec, "revisionHistoryLimit", 10);
        if (!cJSON_GetObjectItemCaseSensitive(spec, "updateStrategy"))
            cJSON_AddItemToObject(
                spec, "updateStrategy",
                cJSON_Parse("{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"partition\":0}}"));
    } else if (api_is(res, "apps", "deployments")) {
        default_num(ks_json_obj(obj, "spec"), "replicas", 1);
    } else if (api_is(res, "", "services")) {
        cJSON *spec = ks_json_obj(obj, "spec");
        default_str(spec, "type", "ClusterIP");
        default_str(spec, "sessionAffinity", "None");
        if (!cJSON_GetObjectItemCaseSensitive(spec, "clusterIP")) {
            unsigned char b[2];
            ks_random_suffix((char *)b, 2);
            char ip[32];
            snprintf(ip, sizeof(ip), "10.96.%u.%u", b[0] % 250 + 1, b[1] % 250 + 2);
            cJSON_AddStringToObject(spec, "clusterIP", ip);
        }
        cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(spec, "ports"))
        {
            default_str(p, "protocol", "TCP");
            const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
            if (cJSON_IsNumber(port))
                default_num(p, "targetPort", port->valuedouble);
        }
    }
}

/* ---- CR schema handling ---- */

/* Validates and prunes a custom resource. Returns false with the reply set on failure. */
bool api_check_custom(struct ctx *c, cJSON *obj, const char *name)
{
    const struct ks_resource *res = c->res;
    if (!(res->flags & KS_CUSTOM) || !res->schema)
        return true;
    _cleanup_json_ cJSON *pruned = cJSON_CreateArray();
    cJSON *causes = ks_schema_validate(res->schema, obj, pruned);
    if (cJSON_GetArraySize(causes) > 0) {
        api_invalid(c->reply, res, name, causes);
        return false;
    }
    cJSON_Delete(causes);
    const char *fv = api_q(c, "fieldValidation");
    if (cJSON_GetArraySize(pruned) > 0 && fv && !strcmp(fv, "Strict")) {
        api_reply_err(c->reply, 400, "BadRequest", NULL, NULL, NULL,
                      "strict decoding error: unknown field \"%s\"",
                      cJSON_GetArrayItem(pruned, 0)->valuestring);
        return false;
    }
    if (cJSON_GetArraySize(pruned) > 0 && fv && !strcmp(fv, "Warn")) {
        free(c->reply->warning);
        c->reply->warning =
            rss_xasprintf("299 - \"unknown field \\\"%s\\\"\"", cJSON_GetArrayItem(pruned, 0)->valuestring);
    }
    return true;
}

bool api_check_crd(struct ctx *c, cJSON *obj, const char *name)
{
    const char *group = ks_json_str(obj, "spec.group");
    const char *plural = ks_json_str(obj, "spec.names.plural");
    const char *kind = ks_json_str(obj, "spec.names.kind");
    cJSON *causes = cJSON_CreateArray();
    if (!group || !*group)
        api_add_cause(causes, "FieldValueRequired", "spec.group", "Required value");
    if (!plural || !*plural)
        api_add_cause(causes, "FieldValueRequired", "spec.names.plural", "Required value");
    if (!kind || !*kind)
        api_add_cause(causes, "FieldValueRequired", "spec.names.kind", "Required value");
    if (group && plural) {
        _cleanup_free_ char *want = rss_xasprintf("%s.%s", plural, group);
        if (strcmp(want, name)) {
            _cleanup_free_ char *m =
                rss_xasprintf("Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name);
            api_add_cause(causes, "FieldValueInvalid", "metadata.name", m);
        }
    }
    int storage = 0, n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, ks_json_path(obj, "spec.versions"))
    {
        n++;
        storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        if (!cJSON_IsObject(ks_json_path(v, "schema.openAPIV3Schema"))) {
            _cleanup_free_ char *f = rss_xasprintf("spec.versions[%d].schema.openAPIV3Schema", n - 1);
            api_add_cause(causes, "FieldValueRequired", f, "Required value: schemas are required");
        }
    }
    if (!n)
        api_add_cause(causes, "FieldValueRequired", "spec.versions",
                      "Required value: must have exactly one version marked as storage version");
    else if (storage != 1)
        api_add_cause(causes, "FieldValueInvalid", "spec.versions",
                      "Invalid value: must have exactly one version marked as storage version");
    if (cJSON_GetArraySize(causes)) {
        api_invalid(c->reply, c->res, name, causes);
        return false;
    }
    cJSON_Delete(causes);
    /* Established at once (kube-api.md 4.6). */
    cJSON *status = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    _cleanup_free_ char *now = ks_time_now(0);
    const char *types[] = {"NamesAccepted", "Established"};
    const char *reasons[] = {"NoConflicts", "InitialNamesAccepted"};
    for (int i = 0; i < 2; i++) {
        cJSON *cd = cJSON_CreateObject();
        cJSON_AddStringToObject(cd, "type", types[i]);
        cJSON_AddStringToObject(cd, "status", "True");
        cJSON_AddStringToObject(cd, "lastTransitionTime", now);
        cJSON_AddStringToObject(cd, "reason", reasons[i]);
        cJSON_AddStringToObject(cd, "message",
                                i ? "the initial names have been accepted" : "no conflicts found");
        cJSON_AddItemToArray(conds, cd);
    }
    cJSON *names = cJSON_Duplicate(ks_json_path(obj, "spec.names"), true);
    if (!ks_json_str(names, "singular")) {
        _cleanup_free_ char *l = rss_xstrdup(kind);
        for (char *p = l; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        cJSON_AddStringToObject(names, "singular", l);
    }
    if (!ks_json_str(names, "listKind")) {
        _cleanup_free_ char *lk = rss_xasprintf("%sList", kind);
        cJSON_AddStringToObject(names, "listKind", lk);
    }
    ks_json_set(ks_json_obj(obj, "spec"), "names", cJSON_Duplicate(names, true));
    cJSON_AddItemToObject(status, "acceptedNames", names);
    cJSON *stored = cJSON_AddArrayToObject(status, "storedVersions");
    cJSON_ArrayForEach(v, ks_json_path(obj, "spec.versions"))
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
            cJSON_AddItemToArray(stored, cJSON_CreateString(ks_json_str(v, "name")));
    }
    default_str(ks_json_obj(obj, "spec"), "scope", "Namespaced");
    ks_json_set(obj, "status", status);
    return true;
}
