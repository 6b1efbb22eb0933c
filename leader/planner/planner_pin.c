/* planner_pin.c -- rule 2's recovery pin: read from status.recovery and the members' records, written into
 * the seed member's record with the seed, removed once a primary runs. */
#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/json.h"
#include "planner_internal.h"

/* 0 with *seq, or -1 for a document that is not {"seedSequence":"<decimal>"}. */
static int pin_parse(const char *doc, uint64_t *seq)
{
    _cleanup_json_ cJSON *j = cJSON_Parse(doc);
    const char *s = rss_json_str(j, "seedSequence");
    _cleanup_error_ rss_error_t ignored = NULL;
    if (!s || rss_hook_parse_sequence(s, strlen(s), seq, &ignored) < 0)
        return -1;
    return 0;
}

void planner_pin_load(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct planner_member *m = &c->m[i];
        const char *doc = m->in ? m->in->pin_record : NULL;
        if (!doc)
            continue;
        uint64_t seq = 0;
        if (pin_parse(doc, &seq) < 0) {
            /* Only rssd writes there, so this is a bug or a hand edit; either way a seed was issued at a
             * sequence nobody can read now: no automatic seed may go below it (docs/rules.md, rule 2). */
            if (!c->pin_bad) {
                c->pin_bad = true;
                c->pin_bad_ordinal = m->ordinal;
            }
            continue;
        }
        /* Status and records disagree only after a lost write; the higher pin is the one no seed may
         * go below. On a tie the status's (or the lowest ordinal's) names the member. */
        if (!c->pin || seq > c->pin_seq) {
            c->pin = true;
            c->pin_ordinal = m->ordinal;
            c->pin_seq = seq;
        }
    }
    if (c->n_primaries_up) {
        /* The recovery is over: a primary runs. Every pin goes, so none blocks a later recovery. */
        c->pin = false;
        c->pin_bad = false;
    }
}

void planner_pin_issue(struct planner *c, struct planner_member *m, bool has_seq, uint64_t seq, bool forced)
{
    c->pin_forced = forced;
    c->pin = has_seq;
    c->pin_ordinal = m->ordinal;
    c->pin_seq = seq;
    c->pin_issued = true;
    c->pin_bad = false;
}

void planner_pin_persist(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || !m->in)
            continue;
        bool seed = c->pin_issued && c->pin && m->ordinal == c->pin_ordinal;
        const char *have = m->in->pin_record;
        if (seed) {
            /* Always in the seed's own patch, even when the record says so already: the desired and
             * its pin are one write, so no leader is deposed between them. */
            struct rss_plan_patch *p = planner_patch_for(c, m);
            p->set_pin = true;
            free(p->pin);
            p->pin = rss_xasprintf("{\"seedSequence\":\"%" PRIu64 "\"}", c->pin_seq);
            continue;
        }
        /* Other records keep their pin during a recovery: an automatic seed's pin is never lower than
         * theirs, and removing one before the seed is written could lose the highest. A force-seed is
         * the admin's choice of history: it supersedes them, as it replaces status.recovery. */
        bool drop = c->n_primaries_up || (c->pin_issued && c->pin_forced);
        if (!drop || !have || !m->in->resource_version)
            continue;
        struct rss_plan_patch *p = planner_patch_for(c, m);
        p->set_pin = true;
        free(p->pin);
        p->pin = NULL;
    }
}
