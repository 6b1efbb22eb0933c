/* hook.h -- the pure half of the hook contract: argv construction, `sequence` parsing, OCF mapping.
 *
 * Hooks are argv arrays taken only from the RSS spec (ARCHITECTURE rule 5): rssd never builds a
 * shell string. The DNS names of the currently active primaries are appended to every hook's argv,
 * as rss-operator did. The part that runs hooks through CRI ExecSync lives elsewhere; nothing here
 * does I/O.
 */
#ifndef RSS_HOOK_H
#define RSS_HOOK_H

#include <stddef.h>
#include <stdint.h>

#include "rss/record_codec.h"
#include "rss/error.h"
#include "rss/spec.h"

/* Longest `sequence` output considered at all; a longer one is garbage by definition. */
#define RSS_HOOK_SEQUENCE_OUTPUT_MAX 4096

/* OCF exit codes of the `status` hook. */
#define RSS_OCF_SUCCESS         0 /* running: secondary, or primary when the spec has no secondary hook */
#define RSS_OCF_NOT_RUNNING     7
#define RSS_OCF_RUNNING_PRIMARY 8

/* Which hook carries out `action`: seed falls back to primary when the spec has no seed hook (it then
 * runs with no peers, as rss-operator's seed did); none has no hook (returns RSS_HOOK_KIND_COUNT). */
enum rss_hook_kind rss_hook_for_action(const struct rss_spec *spec, enum rss_action action);

/* Builds the argv of hook `kind`: the spec's command followed by the n_peers peer names, NULL-terminated.
 * Returns RSS_E_INVALID when the spec has no such hook, or when a peer is not the DNS name of a member
 * of this RSS, `rss-<name>-<ordinal>.<name>-svc` (so a peer can never be an option of the hook, nor a
 * host of someone's choosing). *argv_out is a new array of new strings;
 * free it with rss_hook_argv_free(). */
int rss_hook_argv(const struct rss_spec *spec, enum rss_hook_kind kind, char *const *peers, size_t n_peers,
                  char ***argv_out, rss_error_t *err);
void rss_hook_argv_free(char **argv);

/* What a hook may learn about the decision it carries out (spec.pod.commandEnv). CRI's ExecSync has no
 * environment field, so rssd prefixes the argv with `env NAME=VALUE...` (no shell involved): the
 * hook's own argv and peers are unchanged, and hooks written for rss-operator ignore the variables. */
struct rss_hook_env {
    uint64_t epoch;        /* RSS_EPOCH: the leader epoch the agent acts under */
    uint64_t generation;   /* RSS_GENERATION: the member generation the action targets */
    const char *action;    /* RSS_ACTION (seed, primary, ...), NULL for status/sequence */
    const char *action_id; /* RSS_ACTION_ID ("<epoch>-<seq>"), NULL likewise */
};

/* Like rss_hook_argv; when spec->command_env and env is not NULL, the argv starts with "env" and the
 * RSS_* assignments. An application can then refuse a command from a deposed leader itself. */
int rss_hook_argv_env(const struct rss_spec *spec, enum rss_hook_kind kind, const struct rss_hook_env *env,
                      char *const *peers, size_t n_peers, char ***argv_out, rss_error_t *err);

/* Strictly parses the stdout of `sequence` (len bytes, not necessarily NUL-terminated): optional
 * ASCII whitespace, one unsigned decimal integer that fits in 64 bits, optional whitespace, nothing
 * else. Empty output, a sign ("+5", "-1"), hex, a fraction, a second number, an embedded NUL byte,
 * overflow and output over RSS_HOOK_SEQUENCE_OUTPUT_MAX bytes are RSS_E_INVALID with a message that
 * quotes (sanitised) what was printed. A bad output is never read as 0 (rule 6). */
int rss_hook_parse_sequence(const char *out, size_t len, uint64_t *seq, rss_error_t *err);

/* Maps a `status` exit code to a role: 0 -> secondary (primary when the spec has no secondary hook),
 * 7 -> stopped, 8 -> primary, anything else -> failed. */
enum rss_role rss_hook_status_role(const struct rss_spec *spec, int exit_code);

#endif
