/* fencestate.c -- the fence state file (rss/fencestate.h): codec, clock arithmetic, atomic write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/fencestate.h"

void rss_fencestate_clear(struct rss_fencestate *s)
{
    cJSON_Delete(s->pods);
    cJSON_Delete(s->rss);
    cJSON_Delete(s->peers);
    *s = (struct rss_fencestate){0};
}

/* By reference, not a copy: an RSS object may be 1.5 MB (etcd's limit), written every heartbeat. */
static void add_array(cJSON *o, const char *key, cJSON *arr)
{
    if (cJSON_IsArray(arr))
        cJSON_AddItemReferenceToObject(o, key, arr);
    else
        cJSON_AddItemToObject(o, key, cJSON_CreateArray());
}

char *rss_fencestate_encode(const struct rss_fencestate *s)
{
    _cleanup_json_ cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "version", RSS_FENCESTATE_VERSION);
    cJSON_AddStringToObject(o, "bootId", s->boot_id);
    cJSON_AddNumberToObject(o, "apiOkBootMs", (double)s->api_ok_boot_ms);
    add_array(o, "pods", s->pods);
    add_array(o, "rss", s->rss);
    add_array(o, "peers", s->peers);
    if (s->key[0])
        cJSON_AddStringToObject(o, "key", s->key);
    char *text = cJSON_PrintUnformatted(o);
    if (!text)
        abort(); /* out of memory, as rss_xalloc does */
    return text;
}

/* A whole non-negative number that a double holds exactly (ms since boot: far below 2^53). */
static bool whole_ms(const cJSON *n, int64_t *out)
{
    uint64_t v;
    if (!rss_json_uint53(n, &v))
        return false;
    *out = (int64_t)v;
    return true;
}

static int take_array(cJSON *o, const char *key, cJSON **out, rss_error_t *err)
{
    cJSON *a = cJSON_DetachItemFromObjectCaseSensitive(o, key);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return rss_error_make(err, RSS_E_INVALID, 0, "fence state: \"%s\" is not an array", key);
    }
    *out = a;
    return 0;
}

int rss_fencestate_decode(const char *text, struct rss_fencestate *s, rss_error_t *err)
{
    rss_fencestate_clear(s);
    _cleanup_json_ cJSON *o = cJSON_Parse(text);
    if (!cJSON_IsObject(o))
        return rss_error_make(err, RSS_E_INVALID, 0, "fence state: not a JSON object");
    int64_t version;
    if (!whole_ms(cJSON_GetObjectItemCaseSensitive(o, "version"), &version) ||
        version != RSS_FENCESTATE_VERSION)
        return rss_error_make(err, RSS_E_INVALID, 0, "fence state: not version %d", RSS_FENCESTATE_VERSION);
    const char *boot = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "bootId"));
    if (!boot || !*boot || strlen(boot) >= sizeof(s->boot_id))
        return rss_error_make(err, RSS_E_INVALID, 0, "fence state: bad bootId");
    int64_t stamp;
    if (!whole_ms(cJSON_GetObjectItemCaseSensitive(o, "apiOkBootMs"), &stamp))
        return rss_error_make(err, RSS_E_INVALID, 0, "fence state: bad apiOkBootMs");
    snprintf(s->boot_id, sizeof(s->boot_id), "%s", boot);
    s->api_ok_boot_ms = stamp;
    if (take_array(o, "pods", &s->pods, err) < 0 || take_array(o, "rss", &s->rss, err) < 0 ||
        take_array(o, "peers", &s->peers, err) < 0) {
        rss_fencestate_clear(s);
        return -1;
    }
    /* Optional, and never a reason to refuse the rest: a key that is not 44 base64 characters is
     * dropped (the process keeps its new key). */
    const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "key"));
    if (key && strlen(key) == 44 &&
        strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == 44)
        snprintf(s->key, sizeof(s->key), "%s", key);
    return 0;
}

/* Which way is safe: a fence clock that starts too late lets the leader fail over while this node's
 * members still run (F3); one that starts too early stops members sooner. Earlier than the saved stamp
 * is never right: the stamp is when the API server last heard this node, so the clock resumes from it
 * exactly. Anything not provably from this boot (missing, garbled, another boot id, a stamp after
 * "now") starts the clock now: the rule before this file, which never fences earlier than the node's
 * own silence warrants. Not a reboot's stamp either: a reboot ended every container, there is
 * nothing to fence, and CLOCK_BOOTTIME restarted from 0. A node in a control-plane outage that is not
 * a partition is no worse off with the saved stamp: the failsafe (peers vouching, agent_peers.c) still
 * decides before anything stops, and the restored peers are what lets them vouch at all. */
int64_t rss_fencestate_resume(const struct rss_fencestate *s, const char *boot_id, int64_t boot_now_ms,
                              int64_t mono_now_ms, const char **why)
{
    const char *w;
    int64_t r = mono_now_ms;
    if (!s || !s->boot_id[0])
        w = "no saved fence state: the fence clock starts now";
    else if (!boot_id || strcmp(s->boot_id, boot_id) != 0)
        w = "the saved fence state is from another boot: the fence clock starts now";
    else if (s->api_ok_boot_ms > boot_now_ms)
        w = "the saved fence stamp is in the future: the fence clock starts now";
    else {
        w = "the fence clock continues from the last acknowledged heartbeat of the previous process";
        r = mono_now_ms - (boot_now_ms - s->api_ok_boot_ms);
    }
    if (why)
        *why = w;
    return r;
}

int64_t rss_fencestate_boot_stamp(int64_t api_ok_mono_ms, int64_t boot_now_ms, int64_t mono_now_ms)
{
    return boot_now_ms - (mono_now_ms - api_ok_mono_ms);
}

int rss_fencestate_boot_id(char out[RSS_FENCESTATE_BOOT_LEN], rss_error_t *err)
{
    const char *env = getenv("RSS_BOOT_ID");
    if (env && strlen(env) >= 8 && strlen(env) < RSS_FENCESTATE_BOOT_LEN) {
        snprintf(out, RSS_FENCESTATE_BOOT_LEN, "%s", env);
        return 0;
    }
    _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return rss_error_errno(err, errno, "reading /proc/sys/kernel/random/boot_id");
    if (!fgets(out, RSS_FENCESTATE_BOOT_LEN, f)) {
        out[0] = '\0';
        return rss_error_make(err, RSS_E_SYSTEM, 0, "reading /proc/sys/kernel/random/boot_id: empty");
    }
    out[strcspn(out, "\n")] = '\0';
    if (strlen(out) < 8)
        return rss_error_make(err, RSS_E_SYSTEM, 0, "/proc/sys/kernel/random/boot_id: too short");
    return 0;
}

#define FILE_MAX (4 << 20) /* far above any real state; a bigger file is garbage */

int rss_fencestate_load(const char *path, struct rss_fencestate *s, rss_error_t *err)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT)
            return rss_error_make(err, RSS_E_NOT_FOUND, 0, "%s does not exist", path);
        return rss_error_errno(err, errno, "opening %s", path);
    }
    _cleanup_free_ char *buf = rss_xcalloc(1, FILE_MAX + 1);
    size_t n = fread(buf, 1, FILE_MAX + 1, f);
    if (ferror(f))
        return rss_error_errno(err, errno ? errno : EIO, "reading %s", path);
    if (n > FILE_MAX)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: larger than %d bytes", path, FILE_MAX);
    buf[n] = '\0';
    if (rss_fencestate_decode(buf, s, err) < 0)
        return rss_error_wrap(err, "%s", path);
    return 0;
}

int rss_fencestate_save(const char *path, const struct rss_fencestate *s, rss_error_t *err)
{
    _cleanup_free_ char *text = rss_fencestate_encode(s);
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", path);
    _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return rss_error_errno(err, errno, "creating %s", tmp);
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            unlink(tmp);
            return rss_error_errno(err, e, "writing %s", tmp);
        }
        off += (size_t)w;
    }
    if (close(TAKE_FD(fd)) < 0) {
        int e = errno;
        unlink(tmp);
        return rss_error_errno(err, e, "closing %s", tmp);
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return rss_error_errno(err, e, "renaming %s to %s", tmp, path);
    }
    return 0;
}
