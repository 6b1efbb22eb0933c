/* election_boot.c -- the election's identities and its reboot shortcut (a holder whose node rebooted is
 * gone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "election_internal.h"
#include "rss/cleanup.h"
#include "rss/clock.h"
#include "rss/election.h"
#include "rss/log.h"

/* --- identity --- */

/* Splits "<prefix>_<boot8>_<pid>_<random>" (the format below): prefix length and boot field. */
static bool split_identity(const char *id, size_t *prefix_len, const char **boot)
{
    const char *u3 = strrchr(id, '_');
    const char *u2 = u3 ? memrchr(id, '_', (size_t)(u3 - id)) : NULL;
    const char *u1 = u2 ? memrchr(id, '_', (size_t)(u2 - id)) : NULL;
    if (!u1 || u1 == id || u2 - u1 - 1 != 8)
        return false;
    *prefix_len = (size_t)(u1 - id);
    *boot = u1 + 1;
    return true;
}

bool rss_election_holder_rebooted(const char *holder, const char *me)
{
    size_t hl, ml;
    const char *hb, *mb;
    if (!holder || !me || !split_identity(holder, &hl, &hb) || !split_identity(me, &ml, &mb))
        return false;
    return hl == ml && !strncmp(holder, me, hl) && strncmp(hb, mb, 8) != 0;
}

char *rss_election_make_identity(const char *prefix)
{
    char host[256] = "";
    if (!prefix) {
        if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
            snprintf(host, sizeof(host), "unknown");
        prefix = host;
    }
    char boot[9] = "00000000";
    /* RSS_BOOT_ID stands in for the kernel's where simulated nodes share one kernel (the test world
     * gives each node a new one at every power-on). */
    const char *env = getenv("RSS_BOOT_ID");
    FILE *f = env && strlen(env) >= 8 ? NULL : fopen("/proc/sys/kernel/random/boot_id", "re");
    if (env && strlen(env) >= 8) {
        memcpy(boot, env, 8);
    } else if (f) {
        char buf[64];
        if (fgets(buf, sizeof(buf), f) && strlen(buf) >= 8)
            memcpy(boot, buf, 8);
        fclose(f);
    }
    for (int i = 0; i < 8; i++)
        if (boot[i] == '_')
            boot[i] = '-'; /* keep the identity's fields apart */
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        rnd = (uint32_t)rss_clock_mono_ns() ^ (uint32_t)getpid();
    /* The random part keeps identities unique even across a pid reused after a restart. */
    return rss_xasprintf("%s_%s_%d_%08x", prefix, boot, (int)getpid(), rnd);
}

/* --- the reboot shortcut --- */

/* A field of the boot record: printable, no blank, bounded (it goes into a URL path and a log line). */
static bool boot_field_ok(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f || s[i] == '/')
            return false;
    return true;
}

bool rss_election_boot_parse(const char *annotation, const char *holder, char **node, char **boot)
{
    if (!annotation || !holder || !*holder)
        return false;
    const char *s1 = strchr(annotation, ' ');
    const char *s2 = s1 ? strchr(s1 + 1, ' ') : NULL;
    if (!s2 || strchr(s2 + 1, ' '))
        return false;
    size_t nl = (size_t)(s1 - annotation), bl = (size_t)(s2 - s1 - 1);
    if (!boot_field_ok(annotation, nl) || !boot_field_ok(s1 + 1, bl) || strcmp(s2 + 1, holder) != 0)
        return false;
    *node = rss_xstrndup(annotation, nl);
    *boot = rss_xstrndup(s1 + 1, bl);
    return true;
}

bool rss_election_boot_changed(const char *recorded, const char *reported)
{
    if (!recorded || !reported || !boot_field_ok(recorded, strlen(recorded)) ||
        !boot_field_ok(reported, strlen(reported)))
        return false;
    return strcmp(recorded, reported) != 0;
}

/* The Node's status.nodeInfo.bootID (the kubelet reads the kernel's at its start), or NULL when the
 * Node cannot be read (no RBAC, API error) or reports none: no shortcut then. */
static char *node_boot_id(struct rss_kube *kube, const char *node, long timeout_ms)
{
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "nodes", node, NULL);
    struct rss_kube_request get = {.method = "GET", .path = path, .timeout_ms = timeout_ms, .attempts = 1};
    _cleanup_json_ cJSON *n = NULL;
    _cleanup_error_ rss_error_t e = NULL;
    if (rss_kube_call(kube, &get, &n, &e) < 0) {
        rss_log_error(RSS_LOG_DEBUG, &e, "election: reading node %s for its boot id", node);
        return NULL;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(n, "status");
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(st, "nodeInfo");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(info, "bootID");
    return cJSON_IsString(b) && b->valuestring[0] ? rss_xstrdup(b->valuestring) : NULL;
}

/* See election_internal.h. */
char *election_boot_record(struct rss_kube *kube, const char *node, const char *boot_id, const char *identity,
                           long timeout_ms)
{
    if (!node || !boot_id)
        return NULL;
    _cleanup_free_ char *reported = node_boot_id(kube, node, timeout_ms);
    if (!reported || strcmp(reported, boot_id) != 0) {
        rss_log_debug("election: node %s reports boot id %s, ours is %s: no boot record with this term", node,
                      reported ? reported : "(none)", boot_id);
        return NULL;
    }
    return rss_xasprintf("%s %s %s", node, boot_id, identity);
}

/* Sets (value) or removes (NULL) the boot record on a Lease body. */
void election_boot_set(cJSON *lease, const char *value)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(lease, "metadata");
    if (!cJSON_IsObject(meta))
        return;
    cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    if (cJSON_IsObject(ann))
        cJSON_DeleteItemFromObjectCaseSensitive(ann, RSS_ELECTION_BOOT_ANNOTATION);
    if (!value)
        return;
    if (!cJSON_IsObject(ann)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
        ann = cJSON_AddObjectToObject(meta, "annotations");
    }
    cJSON_AddStringToObject(ann, RSS_ELECTION_BOOT_ANNOTATION, value);
}

/* True when the holder of `lease` recorded its node and boot and that Node reports another boot now. */
bool election_holder_node_rebooted(struct rss_kube *kube, const cJSON *lease, const char *holder, bool *watch,
                                   long timeout_ms)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(lease, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ann, RSS_ELECTION_BOOT_ANNOTATION);
    _cleanup_free_ char *node = NULL, *boot = NULL;
    if (!cJSON_IsString(rec) || !rss_election_boot_parse(rec->valuestring, holder, &node, &boot))
        return false;
    *watch = true;
    _cleanup_free_ char *now = node_boot_id(kube, node, timeout_ms);
    if (!rss_election_boot_changed(boot, now))
        return false;
    rss_log_info("election: the Lease holder %s acquired on node %s in boot %s, which now reports boot %s: "
                 "it is gone, taking over without waiting out the lease",
                 holder, node, boot, now);
    return true;
}
