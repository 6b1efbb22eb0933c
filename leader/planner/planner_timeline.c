/* planner_timeline.c -- status.history: the recoveries and failovers of an RSS, step by step, kept after
 * their Events expire (an hour) so that last night's lights-out can be read in the morning.
 *
 * Each entry is one decision of a plan, as its Event said it: when (this leader's wall clock), the Event's
 * reason, the member, the message (who seeded or was promoted, the sequences, who was left out and why). A
 * "Running" entry closes an episode when the RSS is Running again, with how long it took since the
 * episode's first entry. Entries already in the open episode are not repeated. The newest
 * PLANNER_TIMELINE_MAX are kept. It is a report: nothing in a plan reads it back but this file, and a
 * lost status write loses an entry, never a decision (the member records hold those, rule 16). */
#include <string.h>

#include "rss/cleanup.h"
#include "rss/clock.h"
#include "planner_internal.h"

#define PLANNER_TIMELINE_MAX 40
#define MESSAGE_MAX          1024 /* an Event's message is at most 1 KiB too */

/* The Events that tell the story of a recovery or a failover. Not "Fencing": every new leader term fences,
 * and a leader change alone is no recovery. "Failover" with a member is that member's own restart after
 * a crash (planner_running.c), not the RSS's: a crash loop must not push the recoveries out. */
static bool kept(const char *reason, const char *pod)
{
    if (!strcmp(reason, "Failover") && pod)
        return false;
    static const char *const reasons[] = {
        "Bootstrap",           "SeedChosen",       "ForceSeed",     "ForceSeedRefused", "SeedBelowHistory",
        "SeedFallbackRefused", "LeftOutBehind",    "MemberSkipped", "NewerThanSeed",    "HoldReleased",
        "ReleaseHoldRefused",  "FailoverStarted",  "Failover",      "Promoting",        "FailoverFallback",
        "DivergedPrimary",     "MemberOnDeadNode", "Switchover",    "SwitchoverRefused"};
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (!strcmp(reason, reasons[i]))
            return true;
    return false;
}

static const char *str(const cJSON *e, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, key));
    return s ? s : "";
}

/* An entry as this file writes it; anything else in a previous status is dropped. */
static bool well_formed(const cJSON *e)
{
    return cJSON_IsObject(e) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "at")) &&
           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "reason")) &&
           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "message"));
}

/* The index of the first entry of the open episode (after the last "Running"), n when there is none. */
static int episode_start(const cJSON *h)
{
    int n = cJSON_GetArraySize(h), start = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(str(cJSON_GetArrayItem(h, i), "reason"), "Running"))
            start = i + 1;
    return start;
}

static bool in_episode(const cJSON *h, const char *reason, const char *pod, const char *message)
{
    int n = cJSON_GetArraySize(h);
    for (int i = episode_start(h); i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(h, i);
        if (!strcmp(str(e, "reason"), reason) && !strcmp(str(e, "member"), pod ? pod : "") &&
            !strcmp(str(e, "message"), message))
            return true;
    }
    return false;
}

static void add(cJSON *h, int64_t now_ms, const char *reason, const char *pod, const char *message)
{
    char when[RSS_TIME_LEN];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "at", rss_time_ms(when, now_ms));
    cJSON_AddStringToObject(e, "reason", reason);
    if (pod)
        cJSON_AddStringToObject(e, "member", pod);
    _cleanup_free_ char *m = rss_xstrndup(message, strnlen(message, MESSAGE_MAX));
    cJSON_AddStringToObject(e, "message", m);
    cJSON_AddItemToArray(h, e);
}

void planner_timeline_render(struct planner *c, cJSON *status, const char *phase, size_t ready)
{
    cJSON *h = cJSON_CreateArray();
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(c->in->prev_status, "history");
    const cJSON *e;
    cJSON_ArrayForEach(e, prev)
    {
        if (well_formed(e))
            cJSON_AddItemToArray(h, cJSON_Duplicate(e, true));
    }
    const struct rss_plan *o = c->out;
    for (size_t i = 0; i < o->n_events; i++) {
        const struct rss_plan_event *ev = &o->events[i];
        if (kept(ev->reason, ev->pod) && !in_episode(h, ev->reason, ev->pod, ev->message))
            add(h, c->in->now_ms, ev->reason, ev->pod, ev->message);
    }
    int n = cJSON_GetArraySize(h), start = episode_start(h);
    if (!strcmp(phase, "Running") && start < n) {
        int64_t since = 0;
        _cleanup_error_ rss_error_t err = NULL;
        const char *first = str(cJSON_GetArrayItem(h, start), "at");
        _cleanup_free_ char *msg =
            rss_time_parse_ms(first, &since, &err) == 0
                ? rss_xasprintf("running again, %zu of %d members ready, %.1f s after %s", ready, c->target,
                                (double)(c->in->now_ms - since) / 1000.0,
                                str(cJSON_GetArrayItem(h, start), "reason"))
                : rss_xasprintf("running again, %zu of %d members ready", ready, c->target);
        add(h, c->in->now_ms, "Running", NULL, msg);
    }
    while (cJSON_GetArraySize(h) > PLANNER_TIMELINE_MAX)
        cJSON_DeleteItemFromArray(h, 0);
    if (cJSON_GetArraySize(h) > 0)
        cJSON_AddItemToObject(status, "history", h);
    else
        cJSON_Delete(h);
}
