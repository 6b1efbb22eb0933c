/* hook.c -- hook argv construction, strict `sequence` parsing and OCF status mapping (no I/O). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/hook.h"

enum rss_hook_kind rss_hook_for_action(const struct rss_spec *spec, enum rss_action action)
{
    switch (action) {
    case RSS_ACTION_SEED:
        return spec->hooks[RSS_HOOK_SEED].present ? RSS_HOOK_SEED : RSS_HOOK_PRIMARY;
    case RSS_ACTION_PRIMARY:
        return RSS_HOOK_PRIMARY;
    case RSS_ACTION_SECONDARY:
        return RSS_HOOK_SECONDARY;
    case RSS_ACTION_STOP:
        return RSS_HOOK_STOP;
    case RSS_ACTION_NONE:
        break;
    }
    return RSS_HOOK_KIND_COUNT;
}

void rss_hook_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

/* Peers come from the leader's decision, which travels through an object others may be able to write:
 * only the names rssd itself gives members, `rss-<name>-<ordinal>.<name>-svc`, may reach a hook. */
static bool is_member_dns(const struct rss_spec *spec, const char *peer)
{
    if (!peer)
        return false;
    /* "<pod>.<service>": the pod part must be a member's name as rss_spec_pod_ordinal parses it. */
    _cleanup_free_ char *svc = rss_spec_service_name(spec);
    size_t pl = strlen(peer), sl = strlen(svc);
    if (pl <= sl + 1 || peer[pl - sl - 1] != '.' || strcmp(peer + pl - sl, svc) != 0)
        return false;
    _cleanup_free_ char *pod = rss_xstrndup(peer, pl - sl - 1);
    unsigned ordinal;
    _cleanup_error_ rss_error_t err = NULL;
    return rss_spec_pod_ordinal(spec, pod, &ordinal, &err) == 0;
}

int rss_hook_argv(const struct rss_spec *spec, enum rss_hook_kind kind, char *const *peers, size_t n_peers,
                  char ***argv_out, rss_error_t *err)
{
    if ((int)kind < 0 || kind >= RSS_HOOK_KIND_COUNT || !spec->hooks[kind].present)
        return rss_error_make(err, RSS_E_INVALID, 0, "the spec has no %s hook", rss_spec_hook_name(kind));
    for (size_t i = 0; i < n_peers; i++)
        if (!is_member_dns(spec, peers[i]))
            return rss_error_make(
                err, RSS_E_INVALID, 0,
                "peer %zu ('%.64s') is not the DNS name of a member of %s (rss-%s-<ordinal>.%s-svc)", i,
                peers[i] ? peers[i] : "", spec->name, spec->name, spec->name);
    const struct rss_hook_spec *h = &spec->hooks[kind];
    char **argv = rss_xcalloc(h->argc + n_peers + 1, sizeof(char *));
    for (size_t i = 0; i < h->argc; i++)
        argv[i] = rss_xstrdup(h->argv[i]);
    for (size_t i = 0; i < n_peers; i++)
        argv[h->argc + i] = rss_xstrdup(peers[i]);
    *argv_out = argv;
    return 0;
}

int rss_hook_argv_env(const struct rss_spec *spec, enum rss_hook_kind kind, const struct rss_hook_env *env,
                      char *const *peers, size_t n_peers, char ***argv_out, rss_error_t *err)
{
    char **argv = NULL;
    if (rss_hook_argv(spec, kind, peers, n_peers, &argv, err) < 0)
        return -1;
    if (!spec->command_env || !env) {
        *argv_out = argv;
        return 0;
    }
    size_t n = 0;
    while (argv[n])
        n++;
    char **out = rss_xcalloc(n + 6, sizeof(char *));
    size_t o = 0;
    out[o++] = rss_xstrdup("env");
    out[o++] = rss_xasprintf("RSS_EPOCH=%" PRIu64, env->epoch);
    out[o++] = rss_xasprintf("RSS_GENERATION=%" PRIu64, env->generation);
    if (env->action)
        out[o++] = rss_xasprintf("RSS_ACTION=%s", env->action);
    if (env->action_id)
        out[o++] = rss_xasprintf("RSS_ACTION_ID=%s", env->action_id);
    memcpy(out + o, argv, n * sizeof(char *));
    free(argv); /* the strings moved to out */
    *argv_out = out;
    return 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A printable excerpt of untrusted output for an error message. */
static void excerpt(const char *s, size_t len, char *buf, size_t size)
{
    size_t o = 0, i = 0;
    for (; i < len && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\'')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
}

int rss_hook_parse_sequence(const char *out, size_t len, uint64_t *seq, rss_error_t *err)
{
    char show[64];
    if (!out)
        len = 0;
    if (len > RSS_HOOK_SEQUENCE_OUTPUT_MAX)
        return rss_error_make(err, RSS_E_INVALID, 0, "sequence output is %zu bytes; expected one number",
                              len);
    excerpt(out, len, show, sizeof(show));
    if (len && memchr(out, '\0', len))
        return rss_error_make(err, RSS_E_INVALID, 0, "sequence output '%s' contains a NUL byte", show);
    size_t i = 0, end = len;
    while (i < end && is_space(out[i]))
        i++;
    while (end > i && is_space(out[end - 1]))
        end--;
    if (i == end)
        return rss_error_make(err, RSS_E_INVALID, 0, "sequence output is empty");
    uint64_t v = 0;
    for (size_t k = i; k < end; k++) {
        char c = out[k];
        if (c < '0' || c > '9')
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "sequence output '%s' is not an unsigned decimal integer (unexpected '%c')",
                                  show, c >= 0x20 && c < 0x7f ? c : '?');
        unsigned d = (unsigned)(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return rss_error_make(err, RSS_E_INVALID, 0, "sequence output '%s' overflows 64 bits", show);
        v = v * 10 + d;
    }
    *seq = v;
    return 0;
}

enum rss_role rss_hook_status_role(const struct rss_spec *spec, int exit_code)
{
    switch (exit_code) {
    case RSS_OCF_SUCCESS:
        return spec->hooks[RSS_HOOK_SECONDARY].present ? RSS_ROLE_SECONDARY : RSS_ROLE_PRIMARY;
    case RSS_OCF_NOT_RUNNING:
        return RSS_ROLE_STOPPED;
    case RSS_OCF_RUNNING_PRIMARY:
        return RSS_ROLE_PRIMARY;
    default:
        return RSS_ROLE_FAILED;
    }
}
