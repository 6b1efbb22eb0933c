/* fuzz_snapshot.c -- the member pod LIST and the member record LIST as the leader decodes them
 * (leader_snapshot_build: pod names to ordinals, deletionTimestamp, node, container status, the records'
 * desired/observed JSON text tied to pod uids) and the planner on the result, with an arbitrary previous
 * status (the List's "prevStatus" key, a test convenience) and a fixed liveness view (node-0 alive,
 * node-1 dead, node-2 alive with a long lease, others never seen). Input = a JSON pod List; its
 * "records" key (a ConfigMap List) is the record LIST, to which a record is added for every pod that
 * carries the old protocol annotations (their text, written for the pod's uid), so the seed corpus of
 * annotated pods keeps reaching the decoders. Asserts beyond "no crash": the snapshot has unique
 * ordinals, sorted, each a pod that exists, within RSS_SPEC_ORDINAL_MAX; the planner accepts it; and
 * every plan (minimumMembers 0 and 2) satisfies the safety rules of planner_props.h. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "rss/protocol.h"
#include "rss/record.h"
#include "leader_internal.h"
#include "planner_props.h"

#define EPOCH 5
#define T0    1000000
#define T1    (T0 + 100000)
#define DEAD  60000

static const char *const LEASES =
    "{\"items\":[{\"metadata\":{\"name\":\"rssd-node-node-0\"},\"spec\":{\"renewTime\":\"%s\","
    "\"leaseDurationSeconds\":40}},{\"metadata\":{\"name\":\"rssd-node-node-1\"},\"spec\":{\"renewTime\":"
    "\"a\",\"leaseDurationSeconds\":40}},{\"metadata\":{\"name\":\"rssd-node-node-2\"},\"spec\":{"
    "\"renewTime\":\"a\",\"leaseDurationSeconds\":3600}}]}";

static struct rss_spec specs[2];
static struct leader_liveness lv;

static void init_once(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (int i = 0; i < 2; i++) {
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"db\",\"uid\":\"u\"},\"spec\":{\"replicas\":3,\"recovery\":{"
                 "\"minimumMembers\":%d},\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
                 "\"primary\":{\"command\":[\"/p\"]},\"secondary\":{\"command\":[\"/s\"]},\"status\":{"
                 "\"command\":[\"/st\"]},\"stop\":{\"command\":[\"/x\"]}},\"containers\":[{\"name\":\"app\","
                 "\"image\":\"i\"}]}}}",
                 i * 2);
        cJSON *cr = cJSON_Parse(json);
        rss_error_t err = NULL;
        FUZZ_CHECK(rss_spec_parse(cr, &specs[i], &err) == 0);
        cJSON_Delete(cr);
    }
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    char buf[1024];
    snprintf(buf, sizeof(buf), LEASES, "a");
    cJSON *l = cJSON_Parse(buf);
    leader_liveness_update(&lv, l, T0, 200000, DEAD);
    cJSON_Delete(l);
    snprintf(buf, sizeof(buf), LEASES, "b");
    l = cJSON_Parse(buf);
    leader_liveness_update(&lv, l, T1, 200000, DEAD);
    cJSON_Delete(l);
}

/* The record LIST: the input's "records" items, plus one record per annotated pod. */
static cJSON *records_of(const cJSON *pods)
{
    cJSON *list = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(list, "items");
    const cJSON *it;
    cJSON_ArrayForEach(
        it, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pods, "records"), "items"))
    {
        cJSON_AddItemToArray(items, cJSON_Duplicate(it, true));
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(pods, "items"))
    {
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
        const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, RSS_ANNOTATION_DESIRED));
        const char *o = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, RSS_ANNOTATION_OBSERVED));
        cJSON *cm = name && uid && (d || o) ? rss_record_new("ns", "db", name) : NULL;
        if (!cm)
            continue;
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "resourceVersion", "7");
        cJSON *data = cJSON_GetObjectItemCaseSensitive(cm, "data");
        if (d) {
            cJSON_AddStringToObject(data, RSS_RECORD_DESIRED, d);
            cJSON_AddStringToObject(data, RSS_RECORD_DESIRED_FOR, uid);
        }
        if (o) {
            cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED, o);
            cJSON_AddStringToObject(data, RSS_RECORD_OBSERVED_FOR, uid);
        }
        cJSON_AddItemToArray(items, cm);
    }
    return list;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    if (size > 64 * 1024)
        return 0;
    cJSON *pods = cJSON_ParseWithLength((const char *)data, size);
    if (!pods)
        return 0;
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(pods, "prevStatus");
    cJSON *records = records_of(pods);
    for (int i = 0; i < 2; i++) {
        struct leader_snapshot snap;
        leader_snapshot_build(&specs[i], pods, records, &lv, T1, DEAD, &snap);
        for (size_t k = 0; k < snap.n_members; k++) {
            /* A member whose pod is gone is there only for its record's primary mark (rules 16, 17). */
            FUZZ_CHECK((snap.members[k].pod_exists || snap.members[k].primary_record) &&
                       snap.members[k].ordinal <= RSS_SPEC_ORDINAL_MAX);
            if (k)
                FUZZ_CHECK(snap.members[k - 1].ordinal < snap.members[k].ordinal);
            FUZZ_CHECK(snap.members[k].has_observed || !snap.members[k].observed.container_id);
        }
        struct rss_plan_input in = {.spec = &specs[i],
                                    .epoch = EPOCH,
                                    .now_ms = 1700000000000LL,
                                    .statefulset_replicas = 3,
                                    .prev_status = cJSON_IsObject(prev) ? prev : NULL,
                                    .members = snap.members,
                                    .n_members = snap.n_members};
        struct rss_plan plan;
        rss_error_t err = NULL;
        FUZZ_CHECK(rss_planner_plan(&in, &plan, &err) == 0);
        prop_check_plan(&in, &plan, i == 0);
        rss_plan_free(&plan);
        leader_snapshot_clear(&snap);
    }
    cJSON_Delete(records);
    cJSON_Delete(pods);
    return 0;
}
