/* spec.c -- parse and validate a ReplicatedStatefulSet custom resource; derive member names. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/json.h"
#include "rss/spec.h"

static const char *const hook_names[RSS_HOOK_KIND_COUNT] = {
    [RSS_HOOK_SEQUENCE] = "sequence",   [RSS_HOOK_SEED] = "seed",     [RSS_HOOK_PRIMARY] = "primary",
    [RSS_HOOK_SECONDARY] = "secondary", [RSS_HOOK_STATUS] = "status", [RSS_HOOK_STOP] = "stop",
    [RSS_HOOK_DETACH] = "detach",
};

/* Short hooks answer questions; long ones move data (a Galera SST), so they get rss-operator's 10m. */
static const uint64_t default_timeout_ms[RSS_HOOK_KIND_COUNT] = {
    [RSS_HOOK_SEQUENCE] = 60000,   [RSS_HOOK_SEED] = 600000,  [RSS_HOOK_PRIMARY] = 600000,
    [RSS_HOOK_SECONDARY] = 600000, [RSS_HOOK_STATUS] = 60000, [RSS_HOOK_STOP] = 600000,
    [RSS_HOOK_DETACH] = 60000,
};

#define DURATION_MAX_MS (366ULL * 24 * 3600 * 1000)

const char *rss_spec_hook_name(enum rss_hook_kind kind)
{
    if ((int)kind < 0 || kind >= RSS_HOOK_KIND_COUNT)
        return "?";
    return hook_names[kind];
}

static void hook_clear(struct rss_hook_spec *h)
{
    if (h->argv) {
        for (size_t i = 0; i < h->argc; i++)
            free(h->argv[i]);
        free(h->argv);
    }
    memset(h, 0, sizeof(*h));
}

void rss_spec_clear(struct rss_spec *spec)
{
    if (!spec)
        return;
    free(spec->name);
    free(spec->ns);
    free(spec->uid);
    for (int i = 0; i < RSS_HOOK_KIND_COUNT; i++)
        hook_clear(&spec->hooks[i]);
    cJSON_Delete(spec->containers);
    cJSON_Delete(spec->volumes);
    cJSON_Delete(spec->volume_claim_templates);
    memset(spec, 0, sizeof(*spec));
}

int rss_spec_parse_duration(const char *s, uint64_t *ms, rss_error_t *err)
{
    if (!s || !*s)
        return rss_error_make(err, RSS_E_INVALID, 0, "empty duration");
    const char *p = s;
    uint64_t total = 0;
    bool bare = true;
    while (*p) {
        if (!isdigit((unsigned char)*p))
            return rss_error_make(err, RSS_E_INVALID, 0, "duration '%s': expected a number at '%s'", s, p);
        uint64_t n = 0;
        while (isdigit((unsigned char)*p)) {
            n = n * 10 + (uint64_t)(*p - '0');
            if (n > DURATION_MAX_MS)
                return rss_error_make(err, RSS_E_INVALID, 0, "duration '%s' is too long (max 366d)", s);
            p++;
        }
        uint64_t unit;
        if (!*p && bare) {
            unit = 1000; /* a bare number is seconds, as rss-operator */
        } else if (strncmp(p, "ms", 2) == 0) {
            unit = 1, p += 2;
        } else if (*p == 's') {
            unit = 1000, p++;
        } else if (*p == 'm') {
            unit = 60000, p++;
        } else if (*p == 'h') {
            unit = 3600000, p++;
        } else if (*p == 'd' || *p == 'D') {
            unit = 86400000, p++;
        } else if (!*p) {
            return rss_error_make(err, RSS_E_INVALID, 0, "duration '%s': missing unit after the last number",
                                  s);
        } else {
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "duration '%s': unknown unit at '%s' (expected ms, s, m, h or d)", s, p);
        }
        bare = false;
        if (n > DURATION_MAX_MS / unit || total + n * unit > DURATION_MAX_MS)
            return rss_error_make(err, RSS_E_INVALID, 0, "duration '%s' is too long (max 366d)", s);
        total += n * unit;
    }
    if (total == 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "duration '%s' must be positive", s);
    *ms = total;
    return 0;
}

/* A duration field: a string as above, or a JSON number of whole seconds. */
static int parse_duration_field(const cJSON *v, const char *path, uint64_t *ms, rss_error_t *err)
{
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d <= 0 || d > (double)(DURATION_MAX_MS / 1000) || d != (double)(int64_t)d)
            return rss_error_make(err, RSS_E_INVALID, 0, "%s: %g is not a positive whole number of seconds",
                                  path, d);
        *ms = (uint64_t)d * 1000;
        return 0;
    }
    if (!cJSON_IsString(v))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: expected a duration string such as \"30s\"", path);
    if (rss_spec_parse_duration(v->valuestring, ms, err) < 0)
        return rss_error_wrap(err, "%s", path);
    return 0;
}

static int parse_int_field(const cJSON *obj, const char *key, const char *path, int min, int max, int dflt,
                           int *out, rss_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: expected an integer", path);
    if (v->valuedouble < min || v->valuedouble > max)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: %g is out of range [%d, %d]", path, v->valuedouble,
                              min, max);
    if (v->valuedouble != (double)(int)v->valuedouble)
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: expected an integer", path);
    *out = (int)v->valuedouble;
    return 0;
}

static int parse_bool_field(const cJSON *obj, const char *key, const char *path, bool *out, rss_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = false;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return rss_error_make(err, RSS_E_INVALID, 0, "%s: expected true or false", path);
    *out = cJSON_IsTrue(v);
    return 0;
}

static const cJSON *optional_object(const cJSON *obj, const char *key, const char *path, rss_error_t *err,
                                    int *r)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *r = 0;
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v))
        *r = rss_error_make(err, RSS_E_INVALID, 0, "%s: expected an object", path);
    return v;
}

bool rss_spec_dns_label(const char *s, size_t len)
{
    if (len == 0 || len > 63)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < len))
            return false;
    }
    return true;
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    return n <= RSS_SPEC_NAME_MAX && rss_spec_dns_label(s, n);
}

static int parse_hook(const cJSON *v, enum rss_hook_kind kind, struct rss_hook_spec *h, rss_error_t *err)
{
    const char *name = hook_names[kind];
    if (!cJSON_IsObject(v))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s: expected an object", name);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(v, "command");
    if (!cmd)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s.command: required", name);
    if (!cJSON_IsArray(cmd))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.pod.commands.%s.command: expected an array of strings (argv), not a "
                              "shell string",
                              name);
    int n = cJSON_GetArraySize(cmd);
    if (n == 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s.command: must not be empty", name);
    if (n > RSS_SPEC_ARGV_MAX)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s.command: more than %d arguments",
                              name, RSS_SPEC_ARGV_MAX);
    h->argv = rss_xcalloc((size_t)n + 1, sizeof(char *));
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, cmd)
    {
        if (!cJSON_IsString(a))
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "spec.pod.commands.%s.command[%d]: expected a string", name, i);
        size_t len = strlen(a->valuestring);
        if (len > RSS_SPEC_ARG_LEN_MAX)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "spec.pod.commands.%s.command[%d]: longer than %d characters", name, i,
                                  RSS_SPEC_ARG_LEN_MAX);
        if (i == 0 && len == 0)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "spec.pod.commands.%s.command[0]: the program must not be empty", name);
        h->argv[i++] = rss_xstrdup(a->valuestring);
        h->argc = (size_t)i;
    }
    h->timeout_ms = default_timeout_ms[kind];
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "timeout");
    if (t && !cJSON_IsNull(t)) {
        _cleanup_free_ char *path = rss_xasprintf("spec.pod.commands.%s.timeout", name);
        if (parse_duration_field(t, path, &h->timeout_ms, err) < 0)
            return -1;
    }
    h->present = true;
    return 0;
}

static int parse_commands(const cJSON *pod, struct rss_spec *s, rss_error_t *err)
{
    const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(pod, "commands");
    if (!cmds)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands: required");
    if (!cJSON_IsObject(cmds))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands: expected an object");
    const cJSON *c;
    cJSON_ArrayForEach(c, cmds)
    {
        int kind = -1;
        for (int k = 0; k < RSS_HOOK_KIND_COUNT; k++)
            if (strcmp(c->string, hook_names[k]) == 0)
                kind = k;
        /* A typo such as "secondry" would silently drop a hook; refuse it instead. */
        if (kind < 0)
            return rss_error_make(err, RSS_E_INVALID, 0,
                                  "spec.pod.commands.%s: unknown hook (expected sequence, seed, primary, "
                                  "secondary, status, stop or detach)",
                                  c->string);
        /* A real API server keeps one of two equal keys; the parser does not rely on that (the first
         * argv would otherwise leak, findings/rss-duplicate-hook-key.json). */
        if (s->hooks[kind].present)
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s: given twice", c->string);
        if (parse_hook(c, (enum rss_hook_kind)kind, &s->hooks[kind], err) < 0)
            return -1;
    }
    static const enum rss_hook_kind required[] = {RSS_HOOK_SEQUENCE, RSS_HOOK_PRIMARY, RSS_HOOK_STATUS,
                                                  RSS_HOOK_STOP};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!s->hooks[required[i]].present)
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.commands.%s: required",
                                  hook_names[required[i]]);
    return 0;
}

static int parse_pod(const cJSON *spec, struct rss_spec *s, rss_error_t *err)
{
    const cJSON *pod = cJSON_GetObjectItemCaseSensitive(spec, "pod");
    if (!pod)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod: required");
    if (!cJSON_IsObject(pod))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod: expected an object");
    if (parse_bool_field(pod, "antiAffinity", "spec.pod.antiAffinity", &s->anti_affinity, err) < 0)
        return -1;
    if (parse_commands(pod, s, err) < 0)
        return -1;
    if (parse_bool_field(pod, "commandEnv", "spec.pod.commandEnv", &s->command_env, err) < 0)
        return -1;
    /* With commandEnv the hooks run under `env NAME=VALUE... HOOK`: a program named like an assignment
     * would be taken for one. */
    for (int k = 0; s->command_env && k < RSS_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].present && strchr(s->hooks[k].argv[0], '='))
            return rss_error_make(
                err, RSS_E_INVALID, 0,
                "spec.pod.commands.%s.command[0]: contains '=', not allowed with commandEnv", hook_names[k]);

    const cJSON *containers = cJSON_GetObjectItemCaseSensitive(pod, "containers");
    if (!containers)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.containers: required");
    if (!cJSON_IsArray(containers) || cJSON_GetArraySize(containers) == 0)
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.containers: expected a non-empty array");
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, containers)
    {
        if (!cJSON_IsObject(c))
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.containers[%d]: expected an object", i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.containers[%d].name: required string", i);
        const cJSON *image = cJSON_GetObjectItemCaseSensitive(c, "image");
        if (!cJSON_IsString(image) || !image->valuestring[0])
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.containers[%d].image: required string", i);
        i++;
    }
    s->containers = cJSON_Duplicate(containers, true);
    if (!s->containers)
        return rss_error_make(err, RSS_E_INTERNAL, 0, "copying spec.pod.containers: out of memory");

    static const char *const arrays[] = {"volumes", "volumeClaimTemplates"};
    cJSON **dst[] = {&s->volumes, &s->volume_claim_templates};
    for (int k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(pod, arrays[k]);
        if (!v || cJSON_IsNull(v))
            continue;
        if (!cJSON_IsArray(v))
            return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.%s: expected an array", arrays[k]);
        const cJSON *e;
        int j = 0;
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsObject(e))
                return rss_error_make(err, RSS_E_INVALID, 0, "spec.pod.%s[%d]: expected an object", arrays[k],
                                      j);
            j++;
        }
        *dst[k] = cJSON_Duplicate(v, true);
        if (!*dst[k])
            return rss_error_make(err, RSS_E_INTERNAL, 0, "copying spec.pod.%s: out of memory", arrays[k]);
    }
    return 0;
}

static int parse_recovery(const cJSON *spec, struct rss_spec *s, rss_error_t *err)
{
    int r;
    const cJSON *rec = optional_object(spec, "recovery", "spec.recovery", err, &r);
    if (r < 0)
        return r;
    s->min_members = 0;
    s->max_failures = 3;
    s->join_newer_late_members = false;
    s->replication_sync = false;
    if (!rec)
        return 0;
    if (parse_int_field(rec, "minimumMembers", "spec.recovery.minimumMembers", 0, RSS_SPEC_ORDINAL_MAX + 1, 0,
                        &s->min_members, err) < 0)
        return -1;
    if (s->min_members > s->replicas)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.recovery.minimumMembers: more than spec.replicas (%d > %d)",
                              s->min_members, s->replicas);
    if (parse_int_field(rec, "maxFailures", "spec.recovery.maxFailures", 1, 1000, 3, &s->max_failures, err) <
        0)
        return -1;
    const cJSON *late = cJSON_GetObjectItemCaseSensitive(rec, "onNewerLateMember");
    if (late &&
        !(cJSON_IsString(late) && (!strcmp(late->valuestring, "Hold") || !strcmp(late->valuestring, "Join"))))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.recovery.onNewerLateMember: expected Hold or Join");
    s->join_newer_late_members = late && !strcmp(late->valuestring, "Join");
    const cJSON *repl = cJSON_GetObjectItemCaseSensitive(rec, "replication");
    if (repl && !(cJSON_IsString(repl) &&
                  (!strcmp(repl->valuestring, "Synchronous") || !strcmp(repl->valuestring, "Asynchronous"))))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.recovery.replication: expected Synchronous or Asynchronous");
    s->replication_sync = repl && !strcmp(repl->valuestring, "Synchronous");
    return 0;
}

/* spec.failover (rssd): Recover (default, the lights-out path) or PromoteStandby, which needs one primary,
 * the seed hook (it promotes a running standby), the secondary hook (it repoints the others) and
 * spec.synchronousStandbys, the application's synchronous quorum (docs/rules.md rule 15). An unknown
 * value is an error, so a typo never looks like the opt-in was taken. */
static int parse_failover(const cJSON *spec, struct rss_spec *s, rss_error_t *err)
{
    s->promote_standby = false;
    s->sync_standbys = 0;
    s->silent_promote = false;
    /* spec.silentNodePolicy (rssd): Wait (default) or Promote, which needs PromoteStandby and the detach
     * hook (rule 19: only detached answers make a promotion safe beside a primary that may still run). */
    const cJSON *snp = cJSON_GetObjectItemCaseSensitive(spec, "silentNodePolicy");
    if (snp && !cJSON_IsNull(snp) &&
        !(cJSON_IsString(snp) && (!strcmp(snp->valuestring, "Wait") || !strcmp(snp->valuestring, "Promote"))))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.silentNodePolicy: expected Wait or Promote");
    bool silent_promote = cJSON_IsString(snp) && !strcmp(snp->valuestring, "Promote");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(spec, "failover");
    if (f && !cJSON_IsNull(f) &&
        !(cJSON_IsString(f) &&
          (!strcmp(f->valuestring, "Recover") || !strcmp(f->valuestring, "PromoteStandby"))))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.failover: expected Recover or PromoteStandby");
    s->promote_standby = cJSON_IsString(f) && !strcmp(f->valuestring, "PromoteStandby");
    if (parse_int_field(spec, "synchronousStandbys", "spec.synchronousStandbys", 0, RSS_SPEC_ORDINAL_MAX, 0,
                        &s->sync_standbys, err) < 0)
        return -1;
    if (silent_promote && (!s->promote_standby || !s->hooks[RSS_HOOK_DETACH].present))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.silentNodePolicy: Promote needs spec.failover PromoteStandby and the "
                              "detach hook (spec.pod.commands.detach)");
    s->silent_promote = silent_promote;
    if (!s->promote_standby)
        return 0;
    if (s->primaries != 1)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.failover: PromoteStandby needs spec.primaries 1 (it is %d)",
                              s->primaries);
    if (!s->hooks[RSS_HOOK_SEED].present || !s->hooks[RSS_HOOK_SECONDARY].present)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.failover: PromoteStandby needs the seed and secondary hooks");
    if (s->sync_standbys < 1 || s->sync_standbys > s->replicas - 1)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.synchronousStandbys: PromoteStandby needs the synchronous quorum k "
                              "(ANY k), 1 to spec.replicas - 1 (%d), got %d",
                              s->replicas - 1, s->sync_standbys);
    return 0;
}

static int parse_metadata(const cJSON *cr, struct rss_spec *s, rss_error_t *err)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(cr, "kind");
    if (kind && !(cJSON_IsString(kind) && strcmp(kind->valuestring, "ReplicatedStatefulSet") == 0))
        return rss_error_make(err, RSS_E_INVALID, 0, "kind: expected ReplicatedStatefulSet");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(cr, "metadata");
    if (!cJSON_IsObject(md))
        return rss_error_make(err, RSS_E_INVALID, 0, "metadata: required object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
    if (!cJSON_IsString(name))
        return rss_error_make(err, RSS_E_INVALID, 0, "metadata.name: required string");
    if (!valid_name(name->valuestring))
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "metadata.name: '%.64s' is not a DNS label of at most %d characters (lowercase "
                              "letters, digits and '-')",
                              name->valuestring, RSS_SPEC_NAME_MAX);
    s->name = rss_xstrdup(name->valuestring);
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    s->ns = rss_xstrdup(cJSON_IsString(ns) ? ns->valuestring : "");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(md, "uid");
    s->uid = rss_xstrdup(cJSON_IsString(uid) ? uid->valuestring : "");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(md, "generation");
    uint64_t g = 0;
    s->generation = rss_json_uint53(gen, &g) ? (int64_t)g : 0;
    return 0;
}

static int parse_all(const cJSON *cr, struct rss_spec *s, rss_error_t *err)
{
    if (!cJSON_IsObject(cr))
        return rss_error_make(err, RSS_E_INVALID, 0, "the custom resource is not a JSON object");
    if (parse_metadata(cr, s, err) < 0)
        return -1;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(cr, "spec");
    if (!cJSON_IsObject(spec))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec: required object");
    /* Negative replicas meant "stopped" in rss-operator; say 0 instead, explicitly. */
    if (parse_int_field(spec, "replicas", "spec.replicas", 0, RSS_SPEC_ORDINAL_MAX + 1, 3, &s->replicas,
                        err) < 0)
        return -1;
    if (parse_int_field(spec, "primaries", "spec.primaries", 1, RSS_SPEC_ORDINAL_MAX + 1, s->replicas,
                        &s->primaries, err) < 0)
        return -1;
    if (s->primaries == 0) /* the default for replicas 0 */
        s->primaries = 1;
    if (parse_int_field(spec, "joinConcurrency", "spec.joinConcurrency", 1, RSS_SPEC_ORDINAL_MAX + 1, 1,
                        &s->join_concurrency, err) < 0)
        return -1;
    if (parse_bool_field(spec, "paused", "spec.paused", &s->paused, err) < 0 ||
        parse_bool_field(spec, "suspend", "spec.suspend", &s->suspend, err) < 0)
        return -1;
    /* spec.nodeLossPolicy (rssd): Wait (default) keeps a member whose node died until the node returns;
     * Replace lets the leader delete its pod (and a node-local claim) so it is recreated elsewhere. An
     * unknown value is an error rather than Wait, so a typo never looks like the opt-in was taken. */
    const cJSON *nlp = cJSON_GetObjectItemCaseSensitive(spec, "nodeLossPolicy");
    if (nlp && !cJSON_IsNull(nlp) &&
        !(cJSON_IsString(nlp) && (!strcmp(nlp->valuestring, "Wait") || !strcmp(nlp->valuestring, "Replace"))))
        return rss_error_make(err, RSS_E_INVALID, 0, "spec.nodeLossPolicy: expected Wait or Replace");
    s->node_loss_replace = cJSON_IsString(nlp) && !strcmp(nlp->valuestring, "Replace");
    s->reconcile_interval_ms = 60000;
    const cJSON *ri = cJSON_GetObjectItemCaseSensitive(spec, "reconcileInterval");
    if (ri && !cJSON_IsNull(ri) &&
        parse_duration_field(ri, "spec.reconcileInterval", &s->reconcile_interval_ms, err) < 0)
        return -1;
    /* Every agent runs `status` on every running member this often: 1ms would be a status storm. */
    if (s->reconcile_interval_ms < RSS_SPEC_RECONCILE_MIN_MS)
        return rss_error_make(err, RSS_E_INVALID, 0,
                              "spec.reconcileInterval: %llu ms is below the minimum of 1s",
                              (unsigned long long)s->reconcile_interval_ms);
    if (parse_pod(spec, s, err) < 0 || parse_recovery(spec, s, err) < 0)
        return -1;
    return parse_failover(spec, s, err);
}

int rss_spec_parse(const cJSON *cr, struct rss_spec *out, rss_error_t *err)
{
    struct rss_spec s = {0};
    memset(out, 0, sizeof(*out));
    if (parse_all(cr, &s, err) < 0) {
        rss_spec_clear(&s);
        return -1;
    }
    *out = s;
    return 0;
}

char *rss_spec_statefulset_name(const struct rss_spec *spec)
{
    return rss_xasprintf("rss-%s", spec->name);
}

char *rss_spec_service_name(const struct rss_spec *spec)
{
    return rss_xasprintf("%s-svc", spec->name);
}

char *rss_spec_pod_name(const struct rss_spec *spec, unsigned ordinal)
{
    return rss_xasprintf("rss-%s-%u", spec->name, ordinal);
}

char *rss_spec_peer_dns(const struct rss_spec *spec, unsigned ordinal)
{
    _cleanup_free_ char *pod = rss_spec_pod_name(spec, ordinal);
    _cleanup_free_ char *svc = rss_spec_service_name(spec);
    return rss_xasprintf("%s.%s", pod, svc);
}

int rss_spec_pod_ordinal(const struct rss_spec *spec, const char *pod_name, unsigned *ordinal,
                         rss_error_t *err)
{
    if (!pod_name)
        return rss_error_make(err, RSS_E_INVALID, 0, "no pod name");
    /* A member pod is named by its StatefulSet: "<statefulset>-<ordinal>". */
    _cleanup_free_ char *sts = rss_spec_statefulset_name(spec);
    size_t slen = strlen(sts);
    if (strncmp(pod_name, sts, slen) != 0 || pod_name[slen] != '-')
        return rss_error_make(err, RSS_E_INVALID, 0, "pod '%.80s' is not a member of %s", pod_name, sts);
    const char *p = pod_name + slen + 1;
    size_t len = strlen(p);
    if (len == 0 || len > 4 || (len > 1 && p[0] == '0'))
        return rss_error_make(err, RSS_E_INVALID, 0, "pod '%.80s': bad ordinal '%s'", pod_name, p);
    unsigned n = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return rss_error_make(err, RSS_E_INVALID, 0, "pod '%.80s': bad ordinal '%s'", pod_name, p);
        n = n * 10 + (unsigned)(p[i] - '0');
    }
    if (n > RSS_SPEC_ORDINAL_MAX)
        return rss_error_make(err, RSS_E_INVALID, 0, "pod '%.80s': ordinal %u is too large", pod_name, n);
    *ordinal = n;
    return 0;
}
