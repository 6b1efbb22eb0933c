/* condition.c -- one status condition, its transition time kept while its status holds. */
#include <stdio.h>
#include <string.h>

#include "rss/clock.h"
#include "rss/condition.h"
#include "rss/json.h"

void rss_condition_add(cJSON *arr, const cJSON *prev_conditions, const char *type, bool status,
                       const char *reason, const char *message, int64_t generation, int64_t now_ms)
{
    cJSON *j = cJSON_CreateObject();
    const char *st = status ? "True" : "False";
    cJSON_AddStringToObject(j, "type", type);
    cJSON_AddStringToObject(j, "status", st);
    cJSON_AddStringToObject(j, "reason", reason);
    cJSON_AddStringToObject(j, "message", message);
    /* Per condition: the generation judged, so a reader after an edit knows whether it speaks of it. */
    if (generation >= 0)
        cJSON_AddNumberToObject(j, "observedGeneration", (double)generation);
    char buf[RSS_TIME_LEN] = "";
    const cJSON *p;
    cJSON_ArrayForEach(p, prev_conditions)
    {
        const char *t = rss_json_str(p, "type"), *s = rss_json_str(p, "status"),
                   *when = rss_json_str(p, "lastTransitionTime");
        if (t && s && when && !strcmp(t, type) && !strcmp(s, st) && strlen(when) < sizeof(buf))
            snprintf(buf, sizeof(buf), "%s", when);
    }
    if (!buf[0])
        rss_time_ms(buf, now_ms);
    cJSON_AddStringToObject(j, "lastTransitionTime", buf);
    cJSON_AddItemToArray(arr, j);
}
