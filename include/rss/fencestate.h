/* fencestate.h -- the fence clock across an rssd restart: the state file's codec and clock arithmetic.
 *
 * An agent fences (stops its members) once the API server has not acknowledged a heartbeat renewal for
 * the fence timeout (fence.c). The leader judges the node dead on the same clock: its heartbeat Lease
 * unchanged for the fence timeout plus a margin. A new rssd process used to start that clock at its own
 * start and to know nothing (no members, no specs, no peers) until the API answered, so an rssd
 * restarted while its node was cut off never fenced, while the leader failed over (finding F3,
 * docs/model.md). So the agent keeps, in a small file in a node-local directory that survives an rssd
 * restart but not a reboot (a tmpfs hostPath such as /run/rssd; a reboot also ends every container):
 * when the last acknowledged renewal was sent (CLOCK_BOOTTIME, with the kernel's boot id) and what
 * fencing needs (its member pods, their RSS objects, its peers' addresses and keys), and the failsafe's
 * own signing key: a process restarted while the API server is gone cannot publish a new public key,
 * so its peers could not verify it and (the failsafe needing every hosting agent) would all fence.
 *
 * File format, one JSON object:
 *   {"version":1, "bootId":"<boot id>", "apiOkBootMs":<ms of CLOCK_BOOTTIME>,
 *    "pods":[<minimal pod>...], "rss":[<RSS object>...], "peers":[{"node","url","key"}...],
 *    "key":"<base64 of this agent's Ed25519 private key>" (optional)}
 * The file is 0600 in a 0700 directory on the node: whoever reads it owns the node already.
 */
#ifndef RSS_FENCESTATE_H
#define RSS_FENCESTATE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "rss/error.h"

#define RSS_FENCESTATE_VERSION  1
#define RSS_FENCESTATE_BOOT_LEN 64

struct rss_fencestate {
    char boot_id[RSS_FENCESTATE_BOOT_LEN]; /* the kernel's boot id when it was written */
    int64_t api_ok_boot_ms;                /* CLOCK_BOOTTIME ms: the last acknowledged renewal was sent */
    cJSON *pods;                           /* owned arrays, never NULL after decode (may be empty) */
    cJSON *rss;
    cJSON *peers;
    char key[64]; /* the failsafe's private key, base64 of 32 bytes ("" = none) */
};

/* Frees the arrays and zeroes *s. Accepts a zeroed struct. */
void rss_fencestate_clear(struct rss_fencestate *s);

/* The file's text (caller frees). The arrays may be NULL (written empty). Never fails. */
char *rss_fencestate_encode(const struct rss_fencestate *s);

/* Parses the file's text into *s (cleared first; clear it after). RSS_E_INVALID for anything that is
 * not exactly the format above: not JSON, another version, an empty or overlong boot id, a stamp that is
 * not a non-negative integer, an array that is not an array. */
int rss_fencestate_decode(const char *text, struct rss_fencestate *s, rss_error_t *err);

/* Where the fence clock of a new process starts (CLOCK_MONOTONIC ms), given the state read at start
 * (NULL: none or unreadable), the kernel's boot id now and both clocks now. The saved stamp is used only
 * when it is from this boot and not in the future; otherwise the clock starts now (the rule before the
 * state file). *why (may be NULL) gets a static string saying which. */
int64_t rss_fencestate_resume(const struct rss_fencestate *s, const char *boot_id, int64_t boot_now_ms,
                              int64_t mono_now_ms, const char **why);

/* The CLOCK_BOOTTIME stamp of a CLOCK_MONOTONIC instant, given both clocks now (the inverse of the
 * arithmetic in rss_fencestate_resume). */
int64_t rss_fencestate_boot_stamp(int64_t api_ok_mono_ms, int64_t boot_now_ms, int64_t mono_now_ms);

/* This boot's id: $RSS_BOOT_ID (the test world's simulated nodes share one kernel and get a new one at
 * every power-on, rss/election.h), else /proc/sys/kernel/random/boot_id. RSS_E_SYSTEM when neither. */
int rss_fencestate_boot_id(char out[RSS_FENCESTATE_BOOT_LEN], rss_error_t *err);

/* Reads and decodes the file at path. A missing file is RSS_E_NOT_FOUND. */
int rss_fencestate_load(const char *path, struct rss_fencestate *s, rss_error_t *err);

/* Writes the file atomically: path.tmp, then rename over path (a reader sees the old or the new file,
 * never half of one). No fsync: the directory is a tmpfs, and a reboot is meant to forget it. */
int rss_fencestate_save(const char *path, const struct rss_fencestate *s, rss_error_t *err);

#endif
