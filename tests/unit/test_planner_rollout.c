/* test_planner_rollout.c -- the rolling update with pods that cannot start: the planner in tables, and the
 * pod facts it reads.
 *
 * One primary with secondaries (spec.primaries 1), the shape whose rollout stalled for good on an image
 * tag that does not exist. A world is one token per member, ordinal 0 first:
 *   P running primary    Y running secondary    S stopped (sequence 5)    T starting (written ahead)
 *   Q a pod that never started a container (Pending, no containerID, no report), with the row's
 *     waiting reason ("Unschedulable": the scheduler's verdict instead)
 *   X a pod that never started and is being deleted
 * Revisions, one letter per member: o = an older template, n = the StatefulSet's updateRevision.
 * Plans are summarised as "<ordinal>:<action>" then "<ordinal>:delete", so a row pins the WHOLE plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/planner.h"
#include "leader_internal.h"

#define MAXM  8
#define EPOCH 5
#define NOW   1700000000000LL
#define GEN   3

struct world {
    struct rss_spec spec;
    struct rss_member_input m[MAXM];
    char uid[MAXM][24], rv[MAXM][24], node[MAXM][24], cid[MAXM][40];
    size_t n;
};

static void spec_init(struct rss_spec *spec, int replicas)
{
    _cleanup_free_ char *json = rss_xasprintf(
        "{\"metadata\":{\"name\":\"db\",\"generation\":2},\"spec\":{\"replicas\":%d,\"primaries\":1,"
        "\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},\"seed\":{\"command\":[\"/seed\"]},"
        "\"primary\":{\"command\":[\"/start\"]},\"secondary\":{\"command\":[\"/replica\"]},"
        "\"status\":{\"command\":[\"/check\"]},\"stop\":{\"command\":[\"/stop\"]}},"
        "\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}}",
        replicas);
    _cleanup_json_ cJSON *cr = cJSON_Parse(json);
    _cleanup_error_ rss_error_t err = NULL;
    assert_non_null(cr);
    assert_int_equal(rss_spec_parse(cr, spec, &err), 0);
}

static void observe(struct rss_member_input *m, enum rss_role role)
{
    m->has_observed = true;
    m->observed.container_id = rss_xstrdup(m->container_id);
    m->observed.generation = GEN;
    m->observed.role = role;
    m->observed.status_code = role == RSS_ROLE_STOPPED ? 7 : role == RSS_ROLE_PRIMARY ? 8 : 0;
    m->observed.has_sequence = role == RSS_ROLE_STOPPED;
    m->observed.sequence = 5;
    m->observed.lease_epoch = EPOCH;
    m->observed.time_ms = NOW;
}

static void world_init(struct world *w, const char *members, const char *revs, const char *reason)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; members[2 * i]; i++) {
        assert_true(i < MAXM);
        struct rss_member_input *m = &w->m[w->n++];
        snprintf(w->uid[i], sizeof(w->uid[i]), "uid-%zu", i);
        snprintf(w->rv[i], sizeof(w->rv[i]), "rv-%zu", i);
        snprintf(w->node[i], sizeof(w->node[i]), "node-%zu", i);
        snprintf(w->cid[i], sizeof(w->cid[i]), "containerd://cid-%zu", i);
        *m = (struct rss_member_input){.ordinal = (unsigned)i,
                                       .pod_exists = true,
                                       .pod_uid = w->uid[i],
                                       .resource_version = w->rv[i],
                                       .phase = "Running",
                                       .node = w->node[i],
                                       .node_alive = true,
                                       .container_id = w->cid[i],
                                       .active_label = -1,
                                       .revision = revs[2 * i] == 'n' ? "rev-new" : "rev-old",
                                       .has_desired = true,
                                       .desired = {.epoch = EPOCH, .action = RSS_ACTION_NONE}};
        switch (members[2 * i]) {
        case 'P':
            observe(m, RSS_ROLE_PRIMARY);
            break;
        case 'Y':
            observe(m, RSS_ROLE_SECONDARY);
            break;
        case 'S':
            observe(m, RSS_ROLE_STOPPED);
            break;
        case 'T':
            observe(m, RSS_ROLE_STARTING);
            m->desired.action = RSS_ACTION_SECONDARY;
            m->desired.id = (struct rss_action_id){EPOCH, 900};
            m->desired.generation = GEN;
            m->observed.last = (struct rss_last_action){.present = true,
                                                        .id = {EPOCH, 900},
                                                        .action = RSS_ACTION_SECONDARY,
                                                        .result = RSS_RESULT_PENDING};
            break;
        case 'X':
        case 'Q':
            m->phase = "Pending";
            m->container_id = NULL;
            m->never_started = true;
            m->deleting = members[2 * i] == 'X';
            if (reason && !strcmp(reason, "Unschedulable"))
                m->unschedulable = true;
            else
                m->waiting_reason = reason;
            break;
        default:
            fail_msg("bad token '%c'", members[2 * i]);
        }
        if (!members[2 * i + 1])
            break;
    }
    spec_init(&w->spec, (int)w->n);
}

static void world_free(struct world *w)
{
    for (size_t i = 0; i < w->n; i++) {
        rss_recordcodec_desired_clear(&w->m[i].desired);
        rss_recordcodec_observed_clear(&w->m[i].observed);
    }
    rss_spec_clear(&w->spec);
}

static void run(struct world *w, struct rss_plan *p)
{
    struct rss_plan_input in = {.spec = &w->spec,
                                .epoch = EPOCH,
                                .now_ms = NOW,
                                .statefulset_replicas = (int)w->n,
                                .dead_after_ms = 15000,
                                .update_revision = "rev-new",
                                .members = w->m,
                                .n_members = w->n};
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_planner_plan(&in, p, &err) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        fail_msg("plan failed: %s", m);
    }
}

static char *summary(const struct rss_plan *p)
{
    char buf[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < p->n_patches; i++) {
        const struct rss_plan_patch *pt = &p->patches[i];
        if (pt->set_desired && pt->desired.action != RSS_ACTION_NONE)
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:%s", o ? " " : "", pt->ordinal,
                                  rss_action_name(pt->desired.action));
    }
    for (size_t i = 0; i < p->n_deletes; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:delete", o ? " " : "", p->deletes[i].ordinal);
    return rss_xstrdup(buf);
}

static const struct rss_plan_event *find_event(const struct rss_plan *p, const char *reason)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (!strcmp(p->events[i].reason, reason))
            return &p->events[i];
    return NULL;
}

static bool any_warning(const struct rss_plan *p)
{
    for (size_t i = 0; i < p->n_events; i++)
        if (p->events[i].type == RSS_EVENT_WARNING)
            return true;
    return false;
}

static const struct {
    const char *why, *members, *revs, *reason;
    const char *want;    /* the whole plan */
    const char *event;   /* an event with this reason must be in the plan (NULL: none required) */
    bool warning;        /* ...a Warning; false: the plan has no Warning at all */
    const char *message; /* a substring of the status message (NULL: not checked) */
} rows[] = {
    /* The new revision's pod cannot start: say so with a Warning naming the reason; stop no one else. */
    {"typo in the tag", "P Y Q", "o o n", "ErrImagePull", "", "RolloutHalted", true,
     "cannot start (ErrImagePull)"},
    {"pull backing off", "P Y Q", "o o n", "ImagePullBackOff", "", "RolloutHalted", true,
     "cannot start (ImagePullBackOff)"},
    {"imagePullPolicy Never", "P Y Q", "o o n", "ErrImageNeverPull", "", "RolloutHalted", true,
     "cannot start (ErrImageNeverPull)"},
    {"unparsable reference", "P Y Q", "o o n", "InvalidImageName", "", "RolloutHalted", true, NULL},
    {"no node fits", "P Y Q", "o o n", "Unschedulable", "", "RolloutHalted", true,
     "cannot start (Unschedulable)"},
    {"the secondary's pod of the new revision", "P Q Y", "o n o", "ErrImagePull", "", "RolloutHalted", true,
     "rss-db-1 cannot start"},
    /* Still being created (the normal way): a plain wait, no Warning. */
    {"creating", "P Y Q", "o o n", NULL, "", NULL, false, "waiting for rss-db-2"},
    {"creating (ContainerCreating)", "P Y Q", "o o n", "ContainerCreating", "", NULL, false, NULL},
    /* The template was fixed: the stuck pod is of an older revision now; deleting it stops nothing, the
     * StatefulSet recreates it from the fixed template. Before anyone else is stopped. */
    {"fixed back to the running revision", "P Y Q", "n n o", "ErrImagePull", "2:delete", "RollingUpdate",
     false, NULL},
    {"fixed to a third revision", "P Y Q", "o o o", "ImagePullBackOff", "2:delete", "RollingUpdate", false,
     NULL},
    {"fixed, unschedulable", "P Y Q", "n n o", "Unschedulable", "2:delete", "RollingUpdate", false, NULL},
    {"fixed while still creating", "P Y Q", "n n o", NULL, "2:delete", "RollingUpdate", false, NULL},
    /* Never deleted: a pod already being deleted, a pod of the current revision, a member with a start
     * written ahead (a container ran a hook), a member that reported (it has a container). */
    {"already deleting", "P Y X", "n n o", "ErrImagePull", "", NULL, false, NULL},
    {"current revision", "P Y Q", "n n n", "ErrImagePull", "", NULL, false, NULL},
    {"start written ahead", "P Y T", "n n o", NULL, "", NULL, false, NULL},
    {"a running secondary of the old revision is stopped, not deleted", "P Y Y", "n n o", NULL, "2:stop",
     "RollingUpdate", false, NULL},
};

static void test_rollout_stuck_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        world_init(&w, rows[i].members, rows[i].revs, rows[i].reason);
        struct rss_plan p;
        run(&w, &p);
        _cleanup_free_ char *got = summary(&p);
        _cleanup_free_ char *d = rss_plan_describe(&p);
        if (strcmp(got, rows[i].want))
            fail_msg("row %zu (%s): plan '%s', want '%s'\n%s", i, rows[i].why, got, rows[i].want, d);
        const struct rss_plan_event *e = rows[i].event ? find_event(&p, rows[i].event) : NULL;
        if (rows[i].event && !e)
            fail_msg("row %zu (%s): no %s event\n%s", i, rows[i].why, rows[i].event, d);
        if (rows[i].warning && e->type != RSS_EVENT_WARNING)
            fail_msg("row %zu (%s): %s is not a Warning\n%s", i, rows[i].why, rows[i].event, d);
        if (!rows[i].warning && any_warning(&p))
            fail_msg("row %zu (%s): unexpected Warning\n%s", i, rows[i].why, d);
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(p.status, "message");
        if (rows[i].message && (!cJSON_IsString(msg) || !strstr(msg->valuestring, rows[i].message)))
            fail_msg("row %zu (%s): status message lacks '%s'\n%s", i, rows[i].why, rows[i].message, d);
        /* A rollout never seeds, and a deletion is always of this incarnation (uid precondition). */
        for (size_t k = 0; k < p.n_patches; k++)
            assert_int_not_equal(p.patches[k].desired.action, RSS_ACTION_SEED);
        for (size_t k = 0; k < p.n_deletes; k++) {
            assert_non_null(p.deletes[k].uid);
            assert_false(p.deletes[k].force);
        }
        rss_plan_free(&p);
        world_free(&w);
    }
}

/* What the leader reads from a member pod's status for the rows above (leader_snapshot.c): a pod
 * never started while Pending with no container ever created; the reason that says why. */
static void test_snapshot_start_facts(void **state)
{
    (void)state;
    static const char pods_json[] =
        "{\"items\":["
        /* 0: the typo: Pending, waiting ErrImagePull, no containerID */
        "{\"metadata\":{\"name\":\"rss-db-0\",\"uid\":\"u0\"},\"spec\":{\"nodeName\":\"n1\"},"
        " \"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":0,"
        "  \"state\":{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"not found\"}}}]}},"
        /* 1: no node fits: Pending, PodScheduled False Unschedulable, no container statuses */
        "{\"metadata\":{\"name\":\"rss-db-1\",\"uid\":\"u1\"},\"spec\":{},"
        " \"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
        "  \"False\",\"reason\":\"Unschedulable\"}]}},"
        /* 2: running */
        "{\"metadata\":{\"name\":\"rss-db-2\",\"uid\":\"u2\"},\"spec\":{\"nodeName\":\"n1\"},"
        " \"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":0,"
        "  \"containerID\":\"containerd://abc\",\"state\":{\"running\":{}}}]}},"
        /* 3: Pending again after a container ran (a crash loop): it started once */
        "{\"metadata\":{\"name\":\"rss-db-3\",\"uid\":\"u3\"},\"spec\":{\"nodeName\":\"n1\"},"
        " \"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":2,"
        "  \"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":"
        "  {\"exitCode\":1}}}]}},"
        /* 4: being created, the normal way */
        "{\"metadata\":{\"name\":\"rss-db-4\",\"uid\":\"u4\"},\"spec\":{\"nodeName\":\"n1\"},"
        " \"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":0,"
        "  \"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}}"
        "]}";
    static const struct {
        bool never_started, unschedulable;
        const char *reason;
    } want[] = {
        {true, false, "ErrImagePull"},      {true, true, NULL},  {false, false, NULL},
        {false, false, "CrashLoopBackOff"}, {true, false, NULL},
    };
    struct world w;
    world_init(&w, "P Y P Y P", "n n n n n", NULL);
    _cleanup_json_ cJSON *pods = cJSON_Parse(pods_json);
    _cleanup_json_ cJSON *records = cJSON_Parse("{\"items\":[]}");
    assert_non_null(pods);
    struct leader_liveness lv;
    leader_liveness_init(&lv);
    struct leader_snapshot snap;
    leader_snapshot_build(&w.spec, pods, records, &lv, NOW, 15000, &snap);
    assert_int_equal(snap.n_members, 5);
    for (size_t i = 0; i < 5; i++) {
        const struct rss_member_input *m = &snap.members[i];
        assert_int_equal(m->ordinal, i);
        if (m->never_started != want[i].never_started || m->unschedulable != want[i].unschedulable)
            fail_msg("pod %zu: never_started %d unschedulable %d", i, m->never_started, m->unschedulable);
        if (want[i].reason)
            assert_string_equal(m->waiting_reason, want[i].reason);
        else
            assert_null(m->waiting_reason);
    }
    leader_snapshot_clear(&snap);
    leader_liveness_clear(&lv);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollout_stuck_table),
        cmocka_unit_test(test_snapshot_start_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
