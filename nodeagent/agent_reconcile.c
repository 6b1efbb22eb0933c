/* agent_reconcile.c -- one job of a member's worker: find its container, probe, execute `desired`, run the
 * periodic `status`, publish `observed`. Runs in its own thread; hooks go through CRI ExecSync. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rss/action.h"
#include "rss/cleanup.h"
#include "rss/hook.h"
#include "rss/log.h"
#include "agent_internal.h"

#define RETRY_MS 2000

/* Runs `status`: sets the role and status code in obs. */
static void do_status(struct agent_job *j, const char *cid, char *const *peers, size_t n, const char *why)
{
    struct rss_observed *o = &j->m->obs;
    struct agent_hook_out h;
    struct rss_hook_env env = {.epoch = j->m->obs.lease_epoch, .generation = j->m->obs.generation};
    agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, RSS_HOOK_STATUS, &env, peers, n, why, &h);
    if (h.errc == 0) {
        o->role = rss_hook_status_role(&j->spec->spec, h.exit_code);
        o->status_code = h.exit_code;
    } else {
        o->role = RSS_ROLE_UNKNOWN; /* the agent cannot tell; the leader waits */
        o->status_code = -1;
    }
    agent_hook_out_clear(&h);
}

static void drop_sequence(struct rss_observed *o)
{
    o->has_sequence = false;
    o->sequence = 0;
    free(o->sequence_error);
    o->sequence_error = NULL;
}

/* Runs `sequence` and records a strictly parsed value or the error (never 0 for garbage, rule 6). */
static void do_sequence(struct agent_job *j, const char *cid, char *const *peers, size_t n, const char *why)
{
    struct rss_observed *o = &j->m->obs;
    struct agent_hook_out h;
    drop_sequence(o);
    struct rss_hook_env env = {.epoch = j->m->obs.lease_epoch, .generation = j->m->obs.generation};
    agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, RSS_HOOK_SEQUENCE, &env, peers, n, why,
                   &h);
    if (h.errc == 0 && h.exit_code == 0) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_hook_parse_sequence(h.out, h.out_len, &o->sequence, &err) == 0) {
            o->has_sequence = true;
        } else {
            _cleanup_free_ char *e = rss_error_string(err);
            o->sequence_error = agent_one_line(e, strlen(e));
        }
    } else if (h.errc == 0) {
        o->sequence_error = rss_xasprintf("sequence hook exited %d%s%s", h.exit_code,
                                          h.msg && *h.msg ? ": " : "", h.msg ? h.msg : "");
    } else {
        o->sequence_error = rss_xstrdup(h.msg ? h.msg : "sequence hook failed");
    }
    if (o->has_sequence)
        rss_log_info("pod %s/%s: sequence %" PRIu64 " (generation %" PRIu64 ")", j->m->ns, j->m->pod,
                     o->sequence, o->generation);
    else
        rss_log_warn("pod %s/%s: no valid sequence: %s", j->m->ns, j->m->pod, o->sequence_error);
    agent_hook_out_clear(&h);
}

/* Promotion of a standby (docs/rules.md rule 15): the leader asked this running member for its position
 * under an id. The hook runs after the request was seen, so the position is read after the primary was
 * fenced (the leader asks only then); the answer names the request, never a position read before it.
 * With a `detach` hook the standby first stops following that primary (rule 19): a primary that comes
 * back (a frozen node thawed before the repoint) can then have nothing acknowledged through it, and the
 * position read after the detach is final. A detach that failed still answers with the position, not
 * marked detached: the leader's wait for the old primary's stop or death covers it as before. */
static void do_position(struct agent_job *j, const char *cid, const struct rss_desired *d)
{
    struct rss_observed *o = &j->m->obs;
    char id[48];
    rss_action_id_format(d->position_request, id, sizeof(id));
    do_status(j, cid, d->peers, d->n_peers, "the leader asks for the position of a running standby");
    o->position_for = d->position_request;
    o->has_position = false;
    if (o->role != RSS_ROLE_SECONDARY) {
        rss_log_warn("pod %s/%s: position request %s: the member is %s, not a running standby", j->m->ns,
                     j->m->pod, id, rss_role_name(o->role));
        return;
    }
    struct agent_hook_out h;
    struct rss_hook_env env = {.epoch = o->lease_epoch, .generation = o->generation};
    o->detached = false;
    if (j->spec->spec.hooks[RSS_HOOK_DETACH].present) {
        agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, RSS_HOOK_DETACH, &env, d->peers,
                       d->n_peers, "stop following the primary before the position (leader's request)", &h);
        o->detached = h.errc == 0 && h.exit_code == 0;
        if (!o->detached)
            rss_log_warn("pod %s/%s: position request %s: the detach hook failed (exit %d%s%s): the position "
                         "is given without it",
                         j->m->ns, j->m->pod, id, h.exit_code, h.msg && *h.msg ? ": " : "",
                         h.msg ? h.msg : "");
        agent_hook_out_clear(&h);
    }
    agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, RSS_HOOK_SEQUENCE, &env, d->peers,
                   d->n_peers, "position of a running standby (leader's request)", &h);
    _cleanup_error_ rss_error_t err = NULL;
    if (h.errc == 0 && h.exit_code == 0 && rss_hook_parse_sequence(h.out, h.out_len, &o->position, &err) == 0)
        o->has_position = true;
    else
        o->detached = false;
    if (o->has_position)
        rss_log_info("pod %s/%s: position %" PRIu64 " for request %s%s", j->m->ns, j->m->pod, o->position, id,
                     o->detached ? " (detached from its primary)" : "");
    else
        rss_log_warn("pod %s/%s: no position for request %s (the sequence hook gave none)", j->m->ns,
                     j->m->pod, id);
    agent_hook_out_clear(&h);
}

static void set_last(struct rss_observed *o, const struct rss_desired *d, enum rss_result res, int exit_code,
                     const char *msg)
{
    free(o->last.message);
    o->last = (struct rss_last_action){.present = true,
                                       .id = d->id,
                                       .action = d->action,
                                       .result = res,
                                       .exit_code = exit_code,
                                       .message = msg ? rss_xstrdup(msg) : NULL};
}

/* Publishes obs; cas_rv != NULL makes it the write-ahead CAS. On success the job's view of the pod
 * advances to the version our own write created, as long as `desired` did not change meanwhile. */
static int publish(struct agent_job *j, const char *cas_rv, rss_error_t *err)
{
    struct agent_member *m = j->m;
    if (j->lease_known)
        m->obs.lease_epoch = j->lease_epoch;
    m->obs.time_ms = rss_clock_wall_ms();
    /* Every report names this process: the first one after a start (the probe) tells the peers that a new
     * agent, with a new failsafe address and key, runs here; later ones do not make them look again. */
    if (!m->obs.agent || strcmp(m->obs.agent, j->a->incarnation)) {
        free(m->obs.agent);
        m->obs.agent = rss_xstrdup(j->a->incarnation);
    }
    _cleanup_free_ char *rv = NULL, *desired = NULL;
    if (agent_publish(j->a, m->ns, m->pod, j->uid, j->rss, &m->obs, cas_rv, &rv, &desired, err) < 0)
        return -1;
    m->dirty = false;
    bool same =
        (!desired && !j->desired_json) || (desired && j->desired_json && !strcmp(desired, j->desired_json));
    if (same && rv) {
        free(j->rv);
        j->rv = TAKE_PTR(rv);
    } else {
        free(j->rv);
        j->rv = NULL; /* desired changed: no CAS can succeed on this view; wait for the watch */
    }
    return 0;
}

static void publish_or_log(struct agent_job *j)
{
    _cleanup_error_ rss_error_t err = NULL;
    if (publish(j, NULL, &err) < 0)
        rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: observed not published, retrying", j->m->ns, j->m->pod);
}

/* Rule 8, last bullet: on (re)start and for every new container, report the real state first. */
static void probe(struct agent_job *j, const char *cid, char *const *peers, size_t n)
{
    struct agent_member *m = j->m;
    struct rss_observed *o = &m->obs;
    if (!m->have_obs && j->observed_json) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_recordcodec_observed_decode(j->observed_json, o, &err) == 0)
            m->have_obs = true;
        else
            rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: own observed record unreadable, starting afresh",
                          m->ns, m->pod);
    }
    if (!o->container_id)
        o->container_id = rss_xstrdup("");
    bool prev_known = m->have_obs;
    bool same = prev_known && strcmp(o->container_id, cid) == 0;
    const char *why;
    uint64_t gen = rss_agent_generation_for_container(prev_known, o->generation, o->container_id, cid, &why);
    bool interrupted = prev_known && o->last.present && o->last.result == RSS_RESULT_PENDING;
    if (interrupted && same && rss_action_starts(o->last.action) && gen == o->generation) {
        gen++; /* the start hook may have started the application: void decisions for the old generation */
        why = "a start hook was interrupted";
    }
    enum rss_role before = same ? o->role : RSS_ROLE_UNKNOWN;
    bool stopped_by_us = m->we_stopped || (o->last.present && o->last.action == RSS_ACTION_STOP &&
                                           o->last.result == RSS_RESULT_OK);
    bool bumped = gen != o->generation;
    if (bumped)
        drop_sequence(o);
    o->generation = gen;
    free(o->container_id);
    o->container_id = rss_xstrdup(cid);
    m->have_obs = true;
    do_status(j, cid, peers, n, "probing the container before acting on it");
    /* One bump per event: an interrupted start already voided the old generation. */
    if (same && !bumped && rss_agent_status_is_crash(before, o->role, stopped_by_us)) {
        o->generation++;
        drop_sequence(o);
        why = "the application crashed in its container";
    }
    if (o->role == RSS_ROLE_STOPPED)
        do_sequence(j, cid, peers, n, "the member is stopped: the leader needs its sequence");
    if (interrupted) {
        char id[48];
        rss_action_id_format(o->last.id, id, sizeof(id));
        rss_log_info(
            "pod %s/%s: action %s (%s) was pending when the previous agent stopped: reported interrupted, "
            "never re-run",
            m->ns, m->pod, id, rss_action_name(o->last.action));
        free(o->last.message);
        o->last.message = rss_xstrdup("the agent restarted while the hook ran; not re-run");
        o->last.result = RSS_RESULT_INTERRUPTED;
    }
    free(m->container_id);
    m->container_id = rss_xstrdup(cid);
    m->we_stopped = false;
    m->dirty = true;
    rss_log_info("pod %s/%s: probed container %.12s: generation %" PRIu64 " (%s), role %s (status %d)", m->ns,
                 m->pod, cid, o->generation, why, rss_role_name(o->role), o->status_code);
    _cleanup_error_ rss_error_t err = NULL;
    if (publish(j, NULL, &err) == 0)
        m->probed = true;
    else
        rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: probe not published; nothing runs until it is", m->ns,
                      m->pod);
}

static void log_decision(struct agent_member *m, enum rss_agent_verdict v, const char *reason)
{
    if (m->last_skip && strcmp(m->last_skip, reason) == 0)
        return;
    free(m->last_skip);
    m->last_skip = rss_xstrdup(reason);
    rss_log_info("pod %s/%s: decision %s: %s", m->ns, m->pod, rss_agent_verdict_name(v), reason);
}

static void execute(struct agent_job *j, const char *cid, const struct rss_desired *d, const char *reason)
{
    struct agent_member *m = j->m;
    struct rss_observed *o = &m->obs;
    char id[48];
    rss_action_id_format(d->id, id, sizeof(id));
    enum rss_hook_kind kind = rss_hook_for_action(&j->spec->spec, d->action);
    bool starts = rss_action_starts(d->action);
    if (!j->rv) {
        rss_log_info("pod %s/%s: %s %s waits: the pod changed under us, re-reading it", m->ns, m->pod,
                     rss_action_name(d->action), id);
        return;
    }
    /* Rule 8: write-ahead, a CAS on the version `desired` was read from; no hook without it. */
    enum rss_role old_role = o->role;
    struct rss_last_action old_last = o->last;
    o->last = (struct rss_last_action){
        .present = true, .id = d->id, .action = d->action, .result = RSS_RESULT_PENDING, .exit_code = 0};
    if (starts)
        o->role = RSS_ROLE_STARTING;
    _cleanup_error_ rss_error_t err = NULL;
    if (publish(j, j->rv, &err) < 0) {
        o->role = old_role;
        o->last = old_last;
        m->dirty = false;
        rss_log_error(RSS_LOG_INFO, &err, "pod %s/%s: write-ahead of %s %s failed, the hook does not run",
                      m->ns, m->pod, rss_action_name(d->action), id);
        return;
    }
    free(old_last.message);
    rss_log_info("pod %s/%s: executing %s %s (%s) with %zu peers", m->ns, m->pod, rss_action_name(d->action),
                 id, reason, d->n_peers);
    _cleanup_free_ char *why = rss_xasprintf("desired %s %s", rss_action_name(d->action), id);
    struct agent_hook_out h;
    if (kind == RSS_HOOK_KIND_COUNT) {
        h = (struct agent_hook_out){.errc = RSS_E_INVALID, .exit_code = -1, .result = RSS_RESULT_FAILED};
        h.msg = rss_xasprintf("the spec has no hook for action %s", rss_action_name(d->action));
    } else {
        /* seed without a seed hook runs `primary` with no peers (rss_hook_for_action). */
        bool no_peers = d->action == RSS_ACTION_SEED;
        struct rss_hook_env env = {.epoch = d->epoch,
                                   .generation = d->generation,
                                   .action = rss_action_name(d->action),
                                   .action_id = id};
        agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, kind, &env, no_peers ? NULL : d->peers,
                       no_peers ? 0 : d->n_peers, why, &h);
    }
    if (d->action == RSS_ACTION_STOP && h.result == RSS_RESULT_OK)
        m->we_stopped = true;
    if (starts && h.result == RSS_RESULT_OK) {
        o->generation++;
        drop_sequence(o);
        m->we_stopped = false;
        rss_log_info("pod %s/%s: generation %" PRIu64 ": %s started the application", m->ns, m->pod,
                     o->generation, rss_action_name(d->action));
    }
    if (starts && h.result == RSS_RESULT_OK && agent_fenced(j->a)) {
        /* Self-fencing began while the start hook ran: the fence's stop may have come first. */
        struct agent_hook_out hs;
        agent_hook_run(j->a, &j->spec->spec, j->m->ns, j->m->pod, cid, RSS_HOOK_STOP, NULL, NULL, 0,
                       "self-fenced while the application was starting", &hs);
        if (hs.result == RSS_RESULT_OK)
            m->we_stopped = true;
        agent_hook_out_clear(&hs);
    }
    set_last(o, d, h.result, h.exit_code, h.msg);
    if (h.result != RSS_RESULT_INTERRUPTED) {
        do_status(j, cid, d->peers, d->n_peers, "checking the result of the action");
        /* A `stop` that returned 0 is the member's word that it stopped (the hook contract). When `status`
         * then gives no answer (it hung) or says failed, the leader counts the member stopped for a
         * suspend (planner_suspend.c) and records the sequence asked here; without it, "unknown". */
        bool stop_said = d->action == RSS_ACTION_STOP && h.result == RSS_RESULT_OK &&
                         (o->role == RSS_ROLE_UNKNOWN || o->role == RSS_ROLE_FAILED);
        if (o->role == RSS_ROLE_STOPPED)
            do_sequence(j, cid, d->peers, d->n_peers, "the member is stopped: the leader needs its sequence");
        else if (stop_said)
            do_sequence(j, cid, d->peers, d->n_peers,
                        "its stop returned 0 and status does not say it runs: the leader needs its sequence");
    } else {
        o->role = RSS_ROLE_UNKNOWN;
    }
    agent_hook_out_clear(&h);
    m->dirty = true;
    publish_or_log(j);
    j->m->status_due_ms = rss_clock_mono_ms() + (int64_t)j->spec->spec.reconcile_interval_ms;
}

static void reject(struct agent_job *j, const struct rss_desired *d, const char *reason)
{
    set_last(&j->m->obs, d, RSS_RESULT_REJECTED, 0, reason);
    j->m->dirty = true;
    publish_or_log(j);
}

static int64_t reconcile(struct agent_job *j)
{
    struct agent_member *m = j->m;
    struct rss_observed *o = &m->obs;
    int64_t now = rss_clock_mono_ms();
    struct rss_desired d = {0};
    bool has_d = false;
    if (j->desired_json) {
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_recordcodec_desired_decode(j->desired_json, &d, &err) == 0)
            has_d = true;
        else if (rss_log_enabled(RSS_LOG_DEBUG))
            rss_log_error(RSS_LOG_DEBUG, &err, "pod %s/%s: desired unreadable, ignored", m->ns, m->pod);
    }
    /* status and sequence get the peers of the last desired (docs/protocol.md). */
    char *const *peers = has_d ? d.peers : NULL;
    size_t n_peers = has_d ? d.n_peers : 0;
    int64_t next = now + (int64_t)j->spec->spec.reconcile_interval_ms;

    _cleanup_free_ char *cid = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    if (agent_find_container(j->a, j->uid, j->cname, &cid, &err) < 0) {
        rss_log_error(RSS_LOG_WARN, &err, "pod %s/%s: cannot look up its container", m->ns, m->pod);
        next = now + RETRY_MS;
        goto out;
    }
    if (!cid) {
        if (m->container_id && *m->container_id)
            rss_log_info("pod %s/%s: container %.12s is gone; waiting for a new one", m->ns, m->pod,
                         m->container_id);
        free(m->container_id);
        m->container_id = rss_xstrdup("");
        m->probed = false;
        next = now + RETRY_MS;
        goto out;
    }
    if (j->fence_done) {
        /* fence.c ran `stop` while we were cut off: re-probe so the real state gets reported, and
         * do not read the stop as a crash. */
        m->we_stopped = true;
        m->probed = false;
    }
    if (!m->probed || strcmp(cid, m->container_id) != 0) {
        m->probed = false;
        probe(j, cid, peers, n_peers);
        m->status_due_ms = now + (int64_t)j->spec->spec.reconcile_interval_ms;
        if (!m->probed) {
            next = now + RETRY_MS;
            goto out;
        }
    }
    struct rss_agent_view v = {.lease_known = j->lease_known,
                               .lease_epoch = j->lease_epoch,
                               .probed = m->probed,
                               .has_container = true,
                               .generation = o->generation,
                               .has_last = o->last.present,
                               .last_id = o->last.id,
                               .fenced = j->fenced};
    char reason[512];
    enum rss_agent_verdict verdict = rss_agent_decide(has_d ? &d : NULL, &v, reason, sizeof(reason));
    if (verdict == RSS_AGENT_EXECUTE) {
        free(m->last_skip);
        m->last_skip = NULL;
        execute(j, cid, &d, reason);
    } else if (verdict == RSS_AGENT_REJECT) {
        log_decision(m, verdict, reason);
        reject(j, &d, reason);
    } else if (has_d && d.action != RSS_ACTION_NONE) {
        log_decision(m, verdict, reason);
    }

    now = rss_clock_mono_ms();
    /* A new leader trusts only reports made under its epoch (docs/protocol.md): answer it with a fresh
     * look rather than with what `status` said up to a reconcileInterval ago. */
    bool new_epoch = j->lease_known && o->lease_epoch != j->lease_epoch;
    if ((now >= m->status_due_ms || new_epoch) && o->role != RSS_ROLE_STOPPED) {
        enum rss_role before = o->role;
        int code = o->status_code;
        do_status(j, cid, peers, n_peers,
                  new_epoch ? "a new leader epoch: report the current state"
                            : "periodic check every reconcileInterval");
        if (rss_agent_status_is_crash(before, o->role, m->we_stopped)) {
            o->generation++;
            drop_sequence(o);
            rss_log_warn(
                "pod %s/%s: the application was %s and is now %s without a stop: crash, generation %" PRIu64,
                m->ns, m->pod, rss_role_name(before), rss_role_name(o->role), o->generation);
            if (o->role == RSS_ROLE_STOPPED)
                do_sequence(j, cid, peers, n_peers, "the member crashed: the leader needs its sequence");
        }
        if (before != o->role || code != o->status_code)
            m->dirty = true;
        m->status_due_ms = rss_clock_mono_ms() + (int64_t)j->spec->spec.reconcile_interval_ms;
    }
    /* A stopped member without a valid sequence (its hook printed garbage, failed or was too large) is
     * asked again every reconcileInterval: the admin may have fixed its data, and the recovery waits for
     * it (rule 3). A stopped member with a sequence has nothing new to say until something starts it. */
    bool ask_again = o->role == RSS_ROLE_STOPPED && !o->has_sequence;
    if (ask_again && now >= m->status_due_ms) {
        _cleanup_free_ char *before = o->sequence_error ? rss_xstrdup(o->sequence_error) : NULL;
        do_status(j, cid, peers, n_peers, "periodic check of a stopped member without a valid sequence");
        if (o->role == RSS_ROLE_STOPPED)
            do_sequence(j, cid, peers, n_peers, "asking again for the sequence it could not give");
        if (o->role != RSS_ROLE_STOPPED || o->has_sequence ||
            !(before && o->sequence_error && !strcmp(before, o->sequence_error)))
            m->dirty = true;
        m->status_due_ms = rss_clock_mono_ms() + (int64_t)j->spec->spec.reconcile_interval_ms;
    }
    /* Not tied to desired.generation: a start bumps the generation after it ran, so the desired a
     * running standby carries targets the one before. The leader binds the answer to this container
     * (the report's containerId) and to the request's id. */
    bool asked = has_d && j->lease_known && d.epoch == j->lease_epoch &&
                 (d.position_request.epoch || d.position_request.seq) &&
                 !rss_action_id_equal(d.position_request, o->position_for);
    if (asked && rss_role_running(o->role)) {
        do_position(j, cid, &d);
        m->dirty = true;
    }
    if ((o->role != RSS_ROLE_STOPPED || ask_again) && m->status_due_ms < next)
        next = m->status_due_ms;
    if (new_epoch)
        m->dirty = true;
    if (m->dirty)
        publish_or_log(j);
    if (m->dirty)
        next = now + RETRY_MS;
out:
    rss_recordcodec_desired_clear(&d);
    return next;
}

void *agent_job_run(void *arg)
{
    struct agent_job *j = arg;
    struct rss_agent *a = j->a;
    /* The member's ns and pod never change while it is busy (its rss may: the job's copy is used). */
    _cleanup_log_scope_ struct rss_log_fields outer = rss_log_scope((struct rss_log_fields){
        .ns = j->m->ns, .rss = j->rss, .member = j->m->pod, .epoch = j->lease_known ? j->lease_epoch : 0});
    int64_t next = reconcile(j);
    pthread_mutex_lock(&a->lock);
    struct agent_member *m = j->m;
    m->busy = false;
    m->next_due_ms = next;
    if (m->gone)
        agent_member_free(m);
    agent_spec_put(a, j->spec);
    agent_worker_done(a);
    pthread_mutex_unlock(&a->lock);
    agent_job_free(j);
    return NULL;
}

void agent_job_free(struct agent_job *j)
{
    free(j->rv);
    free(j->desired_json);
    free(j->observed_json);
    free(j->uid);
    free(j->rss);
    free(j->cname);
    free(j);
}
