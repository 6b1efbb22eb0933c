/* fuzz_liveness.c -- the heartbeat Lease decoder of the leader's node liveness (leader_liveness_update):
 * input = 2 bytes of time step (ms) + a JSON List of Leases. The list is applied at t0, then again at
 * t0 + step (renewTimes unchanged). Asserts beyond "no crash" (e.g. findings/heartbeat-lease-huge-
 * duration.json, a float-cast overflow under UBSan): at most LEADER_MAX_NODES nodes; no node is dead the
 * moment it is first seen; a node is never alive and dead at once (dead_after is above the longest
 * lease duration); alive means silent 0; silence never exceeds the time since the first LIST; a node not
 * in the list is neither alive nor dead. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "leader_internal.h"

#define T0      1000000
#define DEAD_MS (3600 * 1000 + LEADER_FENCE_MARGIN)
#define MAX_GAP 120000

static void check(const struct leader_liveness *lv, int64_t now, int64_t since_first)
{
    FUZZ_CHECK(lv->n <= LEADER_MAX_NODES);
    for (size_t i = 0; i < lv->n; i++) {
        bool alive = false, dead = false;
        int64_t silent = -1;
        FUZZ_CHECK(lv->v[i].node && lv->v[i].node[0]);
        FUZZ_CHECK(lv->v[i].duration_ms >= 1000 && lv->v[i].duration_ms <= 3600 * 1000);
        leader_liveness_node(lv, lv->v[i].node, now, DEAD_MS, &alive, &dead, &silent);
        FUZZ_CHECK(!(alive && dead));
        FUZZ_CHECK(silent >= 0 && silent <= since_first);
        FUZZ_CHECK(!alive || silent == 0);
        if (since_first == 0)
            FUZZ_CHECK(alive && !dead);
    }
    /* A name the input did not list (the fuzzer can learn and list any fixed name, so check first). */
    bool listed = false;
    for (size_t i = 0; i < lv->n; i++)
        listed |= !strcmp(lv->v[i].node, "\x01never-listed");
    bool alive = true, dead = true;
    int64_t silent = -1;
    leader_liveness_node(lv, "\x01never-listed", now, DEAD_MS, &alive, &dead, &silent);
    FUZZ_CHECK(listed || (!alive && !dead));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 64 * 1024)
        return 0;
    int64_t step = (int64_t)data[0] << 10 | (int64_t)data[1] << 2; /* 0 .. ~260 s */
    cJSON *leases = cJSON_ParseWithLength((const char *)data + 2, size - 2);
    if (!leases)
        return 0;
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    leader_liveness_start(&lv, T0);
    leader_liveness_update(&lv, leases, T0, MAX_GAP, DEAD_MS);
    check(&lv, T0, 0);
    leader_liveness_update(&lv, leases, T0 + step, MAX_GAP, DEAD_MS);
    check(&lv, T0 + step, step > MAX_GAP ? 0 : step);
    leader_liveness_failed(&lv);
    leader_liveness_update(&lv, leases, T0 + 2 * step, MAX_GAP, DEAD_MS);
    check(&lv, T0 + 2 * step, 0);
    leader_liveness_clear(&lv);
    cJSON_Delete(leases);
    return 0;
}
