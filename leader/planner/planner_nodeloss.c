/* planner_nodeloss.c -- spec.nodeLossPolicy: a member on a dead node waited for, or replaced while a
 * primary runs (docs/node-loss.md). */
#include "rss/clock.h"
#include "rss/json.h"
#include "planner_internal.h"

/* spec.nodeLossPolicy Replace: the pod of a member on a dead node, without waiting for its kubelet (grace
 * 0, as the pod GC does on an out-of-service node), and first its claims when their data is node-local:
 * the StatefulSet then recreates pod and claims, and the scheduler places them on a live node. */
static void force_delete_pod(struct planner *c, struct planner_member *m, bool claims)
{
    planner_delete_pod(c, m);
    struct rss_plan_delete *d = &c->out->deletes[c->out->n_deletes - 1];
    d->force = true;
    const cJSON *tpl;
    size_t n = (size_t)cJSON_GetArraySize(c->spec->volume_claim_templates);
    if (!claims || !n)
        return;
    d->claims = rss_xcalloc(n, sizeof(char *));
    cJSON_ArrayForEach(tpl, c->spec->volume_claim_templates)
    {
        const char *name = rss_json_str(cJSON_GetObjectItemCaseSensitive(tpl, "metadata"), "name");
        if (name)
            d->claims[d->n_claims++] = rss_xasprintf("%s-%s", name, m->pod);
    }
}

/* spec.nodeLossPolicy (docs/node-loss.md). Only here, while a primary runs on a live node: the replacement
 * joins with `primary` and copies the data from the running members, so it never seeds, and what the lost
 * member held is not needed (in a lights-out its data may be the newest: planner_recovery() waits for it).
 * The leader's own dead verdict (rule 3's clock) is necessary; sufficient only with the admin's taint
 * node.kubernetes.io/out-of-service (the node is off: its volumes may move) or a volume that is known not
 * to be node-local. One replacement at a time: the next waits until the previous one has run. */
void planner_replace_lost(struct planner *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct planner_member *m = &c->m[i];
        if (!m->exists || !m->fenced_dead || m->decided || (int)m->ordinal >= c->target)
            continue;
        const char *node = m->in->node;
        if (!c->spec->node_loss_replace) {
            rss_strbuf_item(&m->note, "node %s is dead: not replaced (spec.nodeLossPolicy: Wait)", node);
            planner_wait(c, false, "MemberOnDeadNode",
                         "%s: node %s is dead; waiting for it to come back (spec.nodeLossPolicy: Wait)",
                         m->pod, node);
            continue;
        }
        bool oos = m->in->node_out_of_service;
        enum rss_volume_locality vol = m->in->volume;
        if (!oos && vol != RSS_VOLUME_NETWORK) {
            const char *what = vol == RSS_VOLUME_NODE_LOCAL ? "node-local" : "of unknown locality";
            rss_strbuf_item(
                &m->note,
                "node %s is dead: replaced once it carries the taint node.kubernetes.io/out-of-service "
                "(its volume is %s)",
                node, what);
            planner_wait(c, false, "MemberOnDeadNode",
                         "%s: node %s is dead; spec.nodeLossPolicy Replace waits for the taint "
                         "node.kubernetes.io/out-of-service on it (the volume is %s)",
                         m->pod, node, what);
            continue;
        }
        struct planner_member *busy = NULL;
        for (size_t k = 0; k < c->n && !busy; k++)
            if (&c->m[k] != m && c->m[k].repl_pending && (int)k < c->target)
                busy = &c->m[k];
        if (busy) {
            planner_wait(c, false, "MemberOnDeadNode",
                         "%s: node %s is dead; replacing one member at a time, %s (replaced) has not run yet",
                         m->pod, node, busy->pod);
            continue;
        }
        bool claims = vol == RSS_VOLUME_NODE_LOCAL && cJSON_GetArraySize(c->spec->volume_claim_templates) > 0;
        force_delete_pod(c, m, claims);
        struct rss_plan_delete *d = &c->out->deletes[c->out->n_deletes - 1];
        struct rss_strbuf cl = {0};
        for (size_t k = 0; k < d->n_claims; k++)
            rss_strbuf_item(&cl, "%s", d->claims[k]);
        char ls[24] = "never reported";
        if (m->obs && m->in->observed.has_sequence)
            fmt_seq(m->in->observed.sequence, ls, sizeof(ls));
        /* Left out of a recovery with a higher sequence than the seed: with its claim deleted the writes
         * beyond the seed go; with the claim kept the replacement has them and is held back like any
         * late member newer than the seed (spec.recovery.onNewerLateMember). */
        bool newer = m->left_out && m->obs && m->in->observed.has_sequence &&
                     m->in->observed.sequence > m->left_out_seed_seq;
        bool loses = newer && claims;
        planner_event(
            c, RSS_EVENT_WARNING, "ReplacingMember", m,
            "%s: node %s judged dead by the leader and %s; spec.nodeLossPolicy Replace: force-deleting the "
            "pod%s%s%s so that the StatefulSet recreates it on a live node, where it joins with `primary` "
            "(it never seeds); its last reported sequence: %s%s",
            m->pod, node,
            oos ? "tainted node.kubernetes.io/out-of-service" : "the member's volume is not node-local",
            claims ? " and its node-local claim(s) " : "", claims ? rss_strbuf_str(&cl) : "",
            claims ? " (what happens to their volumes follows the PVs' reclaim policy)" : "", ls,
            loses   ? "; the writes it held beyond the running cluster's seed are lost"
            : newer ? "; it holds writes beyond the running cluster's seed and is held back like any late "
                      "member (spec.recovery.onNewerLateMember)"
                    : "");
        planner_decision(c, "replacing %s: node %s is dead", m->pod, node);
        if (claims)
            m->left_out = false; /* its data is deleted: nothing diverged is left to hold */
        rss_strbuf_item(&m->note, "replaced: node %s is dead", node);
        char when[RSS_TIME_LEN];
        rss_time_ms(when, c->in->now_ms);
        cJSON_Delete(m->repl_new);
        m->repl_new = cJSON_CreateObject();
        cJSON_AddStringToObject(m->repl_new, "fromNode", node);
        cJSON_AddStringToObject(m->repl_new, "reason", oos ? "OutOfService" : "NetworkVolume");
        if (m->in->pod_uid)
            cJSON_AddStringToObject(m->repl_new, "podUID", m->in->pod_uid);
        if (claims)
            cJSON_AddStringToObject(m->repl_new, "claimsDeleted", rss_strbuf_str(&cl));
        cJSON_AddStringToObject(m->repl_new, "lastSequence", ls);
        if (m->left_out && !claims) {
            char ss[24];
            fmt_seq(m->left_out_seed_seq, ss, sizeof(ss));
            cJSON_AddStringToObject(m->repl_new, "leftOutSeedSequence", ss);
        }
        cJSON_AddStringToObject(m->repl_new, "time", when);
        m->repl_pending = true;
        cJSON_Delete(c->new_replacement);
        c->new_replacement = cJSON_Duplicate(m->repl_new, true);
        cJSON_AddStringToObject(c->new_replacement, "member", m->pod);
        free(cl.s);
    }
}
