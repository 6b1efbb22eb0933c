/* fuzz_spec.c -- the RSS custom resource: rss_spec_parse() on arbitrary JSON, then the StatefulSet and
 * Service builders on every accepted spec. Asserts beyond "no crash": a rejected CR leaves the spec zeroed
 * with an RSS_E_INVALID message; an accepted one is within the documented limits (name a DNS label of at
 * most RSS_SPEC_NAME_MAX, 0 <= replicas <= RSS_SPEC_ORDINAL_MAX + 1, primaries >= 1, the required hooks
 * present as non-empty NULL-terminated argv arrays within RSS_SPEC_ARGV_MAX, positive timeouts, a
 * non-empty containers array); pod names and ordinals round-trip; parsing is deterministic; the
 * StatefulSet is named rss-<name>, carries the replicas asked for, the service name, the hook container
 * first, a spec-hash that does not depend on replicas, and prints as JSON that parses and prints back the
 * same. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "leader_internal.h"
#include "rss/error.h"
#include "rss/json.h"
#include "rss/spec.h"

static bool zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static char *hash_of(const cJSON *sts)
{
    const cJSON *ann = rss_json_obj(sts, "metadata.annotations");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(ann, RSS_ANNOTATION_SPEC_HASH);
    FUZZ_CHECK(cJSON_IsString(h) && strlen(h->valuestring) == 16);
    return h->valuestring;
}

static void check_spec(const struct rss_spec *s)
{
    FUZZ_CHECK(s->name && s->name[0] && strlen(s->name) <= RSS_SPEC_NAME_MAX);
    for (const char *p = s->name; *p; p++)
        FUZZ_CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    FUZZ_CHECK(s->name[0] != '-' && s->name[strlen(s->name) - 1] != '-');
    FUZZ_CHECK(s->ns && s->uid);
    FUZZ_CHECK(s->replicas >= 0 && s->replicas <= RSS_SPEC_ORDINAL_MAX + 1);
    FUZZ_CHECK(s->primaries >= 1);
    FUZZ_CHECK(s->reconcile_interval_ms >= RSS_SPEC_RECONCILE_MIN_MS);
    FUZZ_CHECK(s->min_members >= 0 && s->join_concurrency >= 1 && s->max_failures >= 1);
    static const enum rss_hook_kind required[] = {RSS_HOOK_SEQUENCE, RSS_HOOK_PRIMARY, RSS_HOOK_STATUS,
                                                  RSS_HOOK_STOP};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        FUZZ_CHECK(s->hooks[required[i]].present);
    for (int k = 0; k < RSS_HOOK_KIND_COUNT; k++) {
        const struct rss_hook_spec *h = &s->hooks[k];
        if (!h->present)
            continue;
        FUZZ_CHECK(h->argc >= 1 && h->argc <= RSS_SPEC_ARGV_MAX && h->argv && h->argv[h->argc] == NULL);
        for (size_t a = 0; a < h->argc; a++)
            FUZZ_CHECK(h->argv[a] && strlen(h->argv[a]) <= RSS_SPEC_ARG_LEN_MAX);
        FUZZ_CHECK(h->timeout_ms > 0);
    }
    FUZZ_CHECK(cJSON_IsArray(s->containers) && cJSON_GetArraySize(s->containers) >= 1);
}

static void check_names(const struct rss_spec *s)
{
    unsigned ords[] = {0, 1, (unsigned)s->replicas, RSS_SPEC_ORDINAL_MAX};
    for (size_t i = 0; i < 4; i++) {
        if (ords[i] > RSS_SPEC_ORDINAL_MAX)
            continue;
        char *pod = rss_spec_pod_name(s, ords[i]);
        unsigned back = 99999;
        rss_error_t err = NULL;
        FUZZ_CHECK(strlen(pod) <= 63);
        FUZZ_CHECK(rss_spec_pod_ordinal(s, pod, &back, &err) == 0 && back == ords[i]);
        free(pod);
    }
}

static void check_sts(const struct rss_spec *s, const cJSON *cr)
{
    int replicas = s->replicas;
    cJSON *sts = leader_build_statefulset(s, cr, replicas);
    cJSON *sts2 = leader_build_statefulset(s, cr, replicas + 1);
    FUZZ_CHECK(sts && sts2);
    char *name = rss_spec_statefulset_name(s), *svc = rss_spec_service_name(s);
    FUZZ_CHECK(strcmp(rss_json_str(sts, "metadata.name"), name) == 0);
    FUZZ_CHECK(rss_json_long(sts, "spec.replicas", -1) == replicas);
    FUZZ_CHECK(rss_json_long(sts2, "spec.replicas", -1) == replicas + 1);
    FUZZ_CHECK(strcmp(rss_json_str(sts, "spec.serviceName"), svc) == 0);
    FUZZ_CHECK(strcmp(hash_of(sts), hash_of(sts2)) == 0);
    const cJSON *cs = rss_json_path(sts, "spec.template.spec.containers");
    FUZZ_CHECK(cJSON_IsArray(cs) && cJSON_GetArraySize(cs) == cJSON_GetArraySize(s->containers));
    const char *first = rss_json_str(cJSON_GetArrayItem(s->containers, 0), "name");
    if (first)
        FUZZ_CHECK(strcmp(rss_json_str(cJSON_GetArrayItem(cs, 0), "name"), first) == 0);
    char *text = cJSON_PrintUnformatted(sts);
    FUZZ_CHECK(text);
    /* print -> parse -> print is a fixed point (not cJSON_Compare: it matches keys by name, so an object
     * with a duplicate key copied from the CR never compares equal, even to itself) */
    cJSON *back = cJSON_Parse(text);
    FUZZ_CHECK(back);
    char *text2 = cJSON_PrintUnformatted(back);
    FUZZ_CHECK(text2 && !strcmp(text, text2));
    free(text2);
    cJSON *svcobj = leader_build_service(s, cr);
    FUZZ_CHECK(svcobj && strcmp(rss_json_str(svcobj, "metadata.name"), svc) == 0);
    cJSON_Delete(svcobj);
    cJSON_Delete(back);
    free(text);
    free(name);
    free(svc);
    cJSON_Delete(sts);
    cJSON_Delete(sts2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    cJSON *cr = cJSON_ParseWithLength((const char *)data, size);
    if (!cr)
        return 0;
    struct rss_spec s, s2;
    rss_error_t err = NULL;
    memset(&s, 0x5a, sizeof(s));
    if (rss_spec_parse(cr, &s, &err) < 0) {
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID && err->msg && err->msg[0]);
        FUZZ_CHECK(zero(&s, sizeof(s)));
        rss_error_release(&err);
        cJSON_Delete(cr);
        return 0;
    }
    check_spec(&s);
    check_names(&s);
    FUZZ_CHECK(rss_spec_parse(cr, &s2, &err) == 0);
    FUZZ_CHECK(s2.replicas == s.replicas && s2.primaries == s.primaries && !strcmp(s2.name, s.name) &&
               s2.reconcile_interval_ms == s.reconcile_interval_ms && s2.min_members == s.min_members);
    check_sts(&s, cr);
    rss_spec_clear(&s);
    rss_spec_clear(&s2);
    FUZZ_CHECK(zero(&s, sizeof(s)));
    cJSON_Delete(cr);
    return 0;
}
