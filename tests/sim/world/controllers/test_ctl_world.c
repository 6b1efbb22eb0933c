/* test_ctl_world.c -- world-controllers against a real kubesim, without any kubelet.
 *
 * The test plays the kubelets itself: a helper thread renews the kube-node-lease Leases of the
 * nodes marked alive and completes graceful pod deletions (DELETE with grace 0), and the tests set
 * pod status (Running/Ready) where the controllers wait for it. Every wait is a poll with a
 * generous bound on a condition the controllers cause; nothing asserts on elapsed time. Where a
 * test checks that something did NOT happen, it first waits for a status the controller writes
 * after the pass that would have done it. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "simfix.h"
#include "controllers.h"
#include "testutil.h"

#define NS        "ctl"
#define WAIT_MS   60000
#define MAX_NODES 8

static const char *controllers_bin;
static struct simfix sim;
static struct rss_kube *kube;
static pid_t ctl_pid;

/* The fake kubelets. */
static pthread_t helper;
static atomic_bool helper_stop;
static bool helper_started;
static atomic_bool finalize = true;
static atomic_int helper_rounds;
static pthread_mutex_t nodes_mu = PTHREAD_MUTEX_INITIALIZER;
static char alive[MAX_NODES][32];

/* ---------------------------------------------------------------- API helpers */

static char *path_of(const char *gv, const char *ns, const char *plural, const char *name)
{
    return rss_kube_path(gv, ns, plural, name, NULL);
}

static cJSON *get(const char *gv, const char *ns, const char *plural, const char *name)
{
    _cleanup_free_ char *p = path_of(gv, ns, plural, name);
    _cleanup_error_ rss_error_t err = NULL;
    cJSON *ret = NULL;
    if (rss_kube_get(kube, p, &ret, &err) < 0)
        return NULL;
    return ret;
}

static cJSON *list(const char *gv, const char *ns, const char *plural, const char *selector)
{
    _cleanup_free_ char *p = path_of(gv, ns, plural, NULL);
    struct rss_kube_list_opts o = {.label_selector = selector};
    _cleanup_error_ rss_error_t err = NULL;
    cJSON *ret = NULL;
    if (rss_kube_list(kube, p, &o, &ret, &err) < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fprintf(stderr, "list %s: %s\n", p, s);
        return NULL;
    }
    return ret;
}

static void create(const char *gv, const char *ns, const char *plural, const char *json)
{
    _cleanup_free_ char *p = path_of(gv, ns, plural, NULL);
    _cleanup_json_ cJSON *obj = J(json);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_create(kube, p, obj, &ret, &err) < 0 && rss_error_code(err) != RSS_E_EXISTS) {
        _cleanup_free_ char *s = rss_error_string(err);
        fail_msg("create %s: %s", p, s);
    }
}

static void patch(const char *gv, const char *ns, const char *plural, const char *name, const char *json,
                  bool status)
{
    _cleanup_free_ char *p = path_of(gv, ns, plural, name);
    _cleanup_json_ cJSON *obj = J(json);
    _cleanup_error_ rss_error_t err = NULL;
    int r = status ? rss_kube_merge_patch_status(kube, p, obj, NULL, &err)
                   : rss_kube_merge_patch(kube, p, obj, NULL, &err);
    if (r < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fail_msg("patch %s: %s", p, s);
    }
}

static void delete (const char *gv, const char *ns, const char *plural, const char *name)
{
    _cleanup_free_ char *p = path_of(gv, ns, plural, name);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_delete(kube, p, NULL, NULL, &err) < 0 && rss_error_code(err) != RSS_E_NOT_FOUND) {
        _cleanup_free_ char *s = rss_error_string(err);
        fail_msg("delete %s: %s", p, s);
    }
}

static cJSON *pod(const char *name)
{
    return get("v1", NS, "pods", name);
}

static bool pod_exists(const char *name)
{
    _cleanup_json_ cJSON *p = pod(name);
    return p != NULL;
}

static void set_pod_ready(const char *name)
{
    patch("v1", NS, "pods", name,
          "{'status':{'phase':'Running','conditions':[{'type':'PodScheduled','status':'True'},"
          "{'type':'Ready','status':'True'}]}}",
          true);
}

typedef bool (*cond_fn)(const void *arg);

/* Polls cond every 50 ms for up to WAIT_MS; fails the test with `what` when it never holds. */
static void wait_for(const char *what, cond_fn cond, const void *arg)
{
    for (int64_t end = simfix_mono_ns() + (int64_t)WAIT_MS * 1000000; simfix_mono_ns() < end;) {
        if (cond(arg))
            return;
        simfix_sleep_ms(50);
    }
    fail_msg("timed out waiting for %s", what);
}

static bool cond_pod_exists(const void *name)
{
    return pod_exists(name);
}

static bool cond_pod_gone(const void *name)
{
    return !pod_exists(name);
}

struct field_eq {
    const char *gv, *plural, *name, *field;
    long value;
};

static bool cond_field_eq(const void *arg)
{
    const struct field_eq *f = arg;
    _cleanup_json_ cJSON *o = get(f->gv, strcmp(f->plural, "nodes") ? NS : NULL, f->plural, f->name);
    return o && rss_json_long(o, f->field, -12345) == f->value;
}

static void wait_field(const char *gv, const char *plural, const char *name, const char *field, long value)
{
    struct field_eq f = {gv, plural, name, field, value};
    char what[256];
    snprintf(what, sizeof(what), "%s %s: %s == %ld", plural, name, field, value);
    wait_for(what, cond_field_eq, &f);
}

static bool cond_pod_bound(const void *name)
{
    _cleanup_json_ cJSON *p = pod(name);
    const char *n = rss_json_str(p, "spec.nodeName");
    return n && *n;
}

static bool cond_pod_unschedulable(const void *name)
{
    _cleanup_json_ cJSON *p = pod(name);
    const cJSON *c = ctl_condition(p, "PodScheduled");
    const char *st = rss_json_str(c, "status"), *reason = rss_json_str(c, "reason");
    return st && reason && strcmp(st, "False") == 0 && strcmp(reason, "Unschedulable") == 0;
}

static bool cond_pod_scheduled_true(const void *name)
{
    _cleanup_json_ cJSON *p = pod(name);
    const char *st = ctl_condition_status(p, "PodScheduled");
    return st && strcmp(st, "True") == 0;
}

static bool cond_pod_terminating(const void *name)
{
    _cleanup_json_ cJSON *p = pod(name);
    return p && ctl_is_terminating(p);
}

/* ---------------------------------------------------------------- fake kubelets */

static void node_alive(const char *node, bool on)
{
    pthread_mutex_lock(&nodes_mu);
    for (int i = 0; i < MAX_NODES; i++) {
        if (on && !alive[i][0]) {
            snprintf(alive[i], sizeof(alive[i]), "%s", node);
            break;
        }
        if (!on && strcmp(alive[i], node) == 0) {
            alive[i][0] = '\0';
            break;
        }
    }
    pthread_mutex_unlock(&nodes_mu);
}

static void renew_lease(const char *node)
{
    _cleanup_free_ char *p = path_of("coordination.k8s.io/v1", "kube-node-lease", "leases", node);
    char now[RSS_TIME_LEN];
    rss_time_micro(now, NULL);
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *lease = NULL;
    if (rss_kube_get(kube, p, &lease, &err) < 0) {
        rss_error_release(&err);
        char buf[1024];
        snprintf(buf, sizeof(buf),
                 "{'apiVersion':'coordination.k8s.io/v1','kind':'Lease','metadata':{'name':'%s',"
                 "'namespace':'kube-node-lease'},'spec':{'holderIdentity':'%s','leaseDurationSeconds':40,"
                 "'renewTime':'%s'}}",
                 node, node, now);
        _cleanup_json_ cJSON *obj = J(buf);
        _cleanup_free_ char *coll = path_of("coordination.k8s.io/v1", "kube-node-lease", "leases", NULL);
        rss_kube_create(kube, coll, obj, NULL, &err);
        return;
    }
    cJSON *spec = cJSON_GetObjectItem(lease, "spec");
    cJSON_ReplaceItemInObject(spec, "renewTime", cJSON_CreateString(now));
    rss_kube_update(kube, p, lease, NULL, &err);
}

static void finalize_pods(void)
{
    _cleanup_json_ cJSON *pods = list("v1", NS, "pods", NULL);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(pods, "items"))
    {
        if (!ctl_is_terminating(p))
            continue;
        _cleanup_free_ char *path = path_of("v1", NS, "pods", ctl_name(p));
        struct rss_kube_delete_opts o = {.uid = ctl_uid(p), .set_grace = true, .grace_period_seconds = 0};
        _cleanup_error_ rss_error_t err = NULL;
        rss_kube_delete(kube, path, &o, NULL, &err);
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&helper_stop)) {
        char names[MAX_NODES][32];
        pthread_mutex_lock(&nodes_mu);
        memcpy(names, alive, sizeof(names));
        pthread_mutex_unlock(&nodes_mu);
        for (int i = 0; i < MAX_NODES; i++) {
            if (names[i][0])
                renew_lease(names[i]);
        }
        if (atomic_load(&finalize))
            finalize_pods();
        atomic_fetch_add(&helper_rounds, 1);
        simfix_sleep_ms(200);
    }
    return NULL;
}

/* Returns once the helper finished a whole round that began after the call: a flag set before
 * is then honoured by every later round. */
static void helper_sync(void)
{
    int start = atomic_load(&helper_rounds);
    while (atomic_load(&helper_rounds) < start + 2)
        simfix_sleep_ms(20);
}

static void add_node(const char *name, const char *extra_labels)
{
    char now[RSS_TIME_LEN], buf[1024];
    rss_time_seconds(now, NULL);
    snprintf(buf, sizeof(buf),
             "{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s','labels':{'kubernetes.io/"
             "hostname':'%s'%s}},"
             "'status':{'conditions':[{'type':'Ready','status':'True','reason':'KubeletReady',"
             "'lastHeartbeatTime':'%s','lastTransitionTime':'%s'}]}}",
             name, name, extra_labels ? extra_labels : "", now, now);
    create("v1", NULL, "nodes", buf);
    node_alive(name, true);
}

/* ---------------------------------------------------------------- setup */

static int teardown(void **state);

static int setup(void **state)
{
    if (simfix_start(&sim, KUBESIM_BIN) < 0) {
        teardown(state);
        return -1;
    }
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(sim.kubeconfig, &kube, &err) < 0) {
        teardown(state);
        return -1;
    }
    create("v1", NULL, "namespaces", "{'metadata':{'name':'" NS "'}}");
    create("v1", NULL, "namespaces", "{'metadata':{'name':'kube-node-lease'}}");
    add_node("n1", NULL);
    add_node("n2", NULL);
    add_node("n3", NULL);
    atomic_store(&helper_stop, false);
    helper_started = pthread_create(&helper, NULL, helper_main, NULL) == 0;
    ctl_pid = helper_started ? fork() : -1;
    if (ctl_pid == 0) {
        /* Never outlive a crashed test. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execl(controllers_bin, controllers_bin, "--kubeconfig", sim.kubeconfig, "--node-grace", "2",
              "--resync", "0.2", (char *)NULL);
        _exit(127);
    }
    if (ctl_pid < 0) {
        teardown(state);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (ctl_pid > 0) {
        kill(ctl_pid, SIGTERM);
        int st = 0;
        waitpid(ctl_pid, &st, 0);
        /* SIGTERM must end it cleanly. */
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "world-controllers did not exit cleanly on SIGTERM (status %d)\n", st);
            rc = -1;
        }
    }
    ctl_pid = 0;
    atomic_store(&helper_stop, true);
    if (helper_started)
        pthread_join(helper, NULL);
    helper_started = false;
    rss_kube_free(kube);
    kube = NULL;
    simfix_stop(&sim);
    return rc;
}

/* ---------------------------------------------------------------- tests */

#define STS(name, replicas, policy, extra_spec)                                                              \
    "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'" name "','namespace':'" NS "'},"      \
    "'spec':{'replicas':" #replicas ",'podManagementPolicy':'" policy "','serviceName':'" name "-svc',"      \
    "'selector':{'matchLabels':{'app':'" name "'}},"                                                         \
    "'template':{'metadata':{'labels':{'app':'" name "'}},'spec':{" extra_spec "'containers':[{'name':'c',"  \
    "'image':'busybox'}]}},"                                                                                 \
    "'volumeClaimTemplates':[{'metadata':{'name':'data'},'spec':{'accessModes':['ReadWriteOnce'],"           \
    "'resources':{'requests':{'storage':'1Gi'}}}}]}}"

static void test_parallel_scale(void **state)
{
    (void)state;
    create("apps/v1", NS, "statefulsets", STS("par", 11, "Parallel", ""));
    wait_for("par-10", cond_pod_exists, "par-10");
    _cleanup_json_ cJSON *sts = get("apps/v1", NS, "statefulsets", "par");
    assert_non_null(sts);
    char name[32];
    for (int i = 0; i <= 10; i++) {
        snprintf(name, sizeof(name), "par-%d", i);
        wait_for(name, cond_pod_exists, name);
        _cleanup_json_ cJSON *p = pod(name);
        assert_string_equal(ctl_controller_uid(p, "StatefulSet"), ctl_uid(sts));
        assert_string_equal(rss_json_str(p, "spec.hostname"), name);
        assert_string_equal(rss_json_str(p, "spec.subdomain"), "par-svc");
        char claim[48];
        snprintf(claim, sizeof(claim), "data-%s", name);
        const cJSON *vol = cJSON_GetArrayItem(rss_json_path(p, "spec.volumes"), 0);
        assert_string_equal(rss_json_str(vol, "persistentVolumeClaim.claimName"), claim);
        _cleanup_json_ cJSON *pvc = get("v1", NS, "persistentvolumeclaims", claim);
        assert_non_null(pvc);
        assert_string_equal(rss_json_str(pvc, "metadata.labels.app"), "par");
        /* The scheduler binds every one of them: no constraints, three Ready nodes. */
        wait_for(name, cond_pod_bound, name);
    }
    _cleanup_json_ cJSON *pods = list("v1", NS, "pods", "app=par");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(pods, "items")), 11);
    /* Spreading: 11 pods on 3 nodes, none gets more than 4. */
    int per_node[3] = {0};
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(pods, "items"))
    {
        const char *n = rss_json_str(p, "spec.nodeName");
        assert_true(n[0] == 'n' && n[1] >= '1' && n[1] <= '3');
        per_node[n[1] - '1']++;
    }
    for (int i = 0; i < 3; i++)
        assert_true(per_node[i] >= 3 && per_node[i] <= 4);

    wait_field("apps/v1", "statefulsets", "par", "status.replicas", 11);
    for (int i = 0; i <= 10; i++) {
        snprintf(name, sizeof(name), "par-%d", i);
        set_pod_ready(name);
    }
    wait_field("apps/v1", "statefulsets", "par", "status.readyReplicas", 11);
    wait_field("apps/v1", "statefulsets", "par", "status.currentReplicas", 11);
    wait_field("apps/v1", "statefulsets", "par", "status.updatedReplicas", 11);

    /* Scale down: pods 3..10 go, their claims stay. */
    patch("apps/v1", NS, "statefulsets", "par", "{'spec':{'replicas':3}}", false);
    wait_for("par-3 gone", cond_pod_gone, "par-3");
    wait_for("par-10 gone", cond_pod_gone, "par-10");
    wait_field("apps/v1", "statefulsets", "par", "status.replicas", 3);
    for (int i = 0; i <= 10; i++) {
        snprintf(name, sizeof(name), "data-par-%d", i);
        _cleanup_json_ cJSON *pvc = get("v1", NS, "persistentvolumeclaims", name);
        assert_non_null(pvc);
    }
    assert_true(pod_exists("par-0") && pod_exists("par-2"));

    /* The set goes: so do its pods (our stand-in for the garbage collector). */
    delete ("apps/v1", NS, "statefulsets", "par");
    wait_for("par-0 gone", cond_pod_gone, "par-0");
    wait_for("par-2 gone", cond_pod_gone, "par-2");
}

static void test_ordered_ready(void **state)
{
    (void)state;
    create("apps/v1", NS, "statefulsets", STS("ord", 3, "OrderedReady", ""));
    wait_for("ord-0", cond_pod_exists, "ord-0");
    /* The status write after the pass that saw ord-0 proves the controller looked, and declined. */
    wait_field("apps/v1", "statefulsets", "ord", "status.replicas", 1);
    assert_false(pod_exists("ord-1"));
    set_pod_ready("ord-0");
    wait_for("ord-1", cond_pod_exists, "ord-1");
    wait_field("apps/v1", "statefulsets", "ord", "status.replicas", 2);
    wait_field("apps/v1", "statefulsets", "ord", "status.readyReplicas", 1);
    assert_false(pod_exists("ord-2"));
    set_pod_ready("ord-1");
    wait_for("ord-2", cond_pod_exists, "ord-2");
    set_pod_ready("ord-2");
    wait_field("apps/v1", "statefulsets", "ord", "status.readyReplicas", 3);

    /* A deleted pod comes back with the same identity and the same claim. */
    _cleanup_json_ cJSON *old = pod("ord-1");
    _cleanup_json_ cJSON *old_pvc = get("v1", NS, "persistentvolumeclaims", "data-ord-1");
    assert_non_null(old_pvc);
    _cleanup_free_ char *old_uid = rss_xstrdup(ctl_uid(old));
    delete ("v1", NS, "pods", "ord-1");
    for (int64_t end = simfix_mono_ns() + (int64_t)WAIT_MS * 1000000; simfix_mono_ns() < end;) {
        _cleanup_json_ cJSON *p = pod("ord-1");
        if (p && !ctl_is_terminating(p) && strcmp(ctl_uid(p), old_uid) != 0)
            break;
        simfix_sleep_ms(50);
    }
    _cleanup_json_ cJSON *again = pod("ord-1");
    assert_non_null(again);
    assert_string_not_equal(ctl_uid(again), old_uid);
    assert_string_equal(rss_json_str(again, "spec.hostname"), "ord-1");
    assert_string_equal(rss_json_str(cJSON_GetArrayItem(rss_json_path(again, "spec.volumes"), 0),
                                     "persistentVolumeClaim.claimName"),
                        "data-ord-1");
    _cleanup_json_ cJSON *pvc = get("v1", NS, "persistentvolumeclaims", "data-ord-1");
    assert_string_equal(ctl_uid(pvc), ctl_uid(old_pvc));
    set_pod_ready("ord-1");
    wait_field("apps/v1", "statefulsets", "ord", "status.readyReplicas", 3);

    /* Scale down one at a time, highest first: hold terminations so the order is visible. */
    atomic_store(&finalize, false);
    helper_sync();
    patch("apps/v1", NS, "statefulsets", "ord", "{'spec':{'replicas':1}}", false);
    wait_for("ord-2 terminating", cond_pod_terminating, "ord-2");
    /* readyReplicas 2 is written by a pass that saw ord-2 terminating; it must not touch ord-1. */
    wait_field("apps/v1", "statefulsets", "ord", "status.readyReplicas", 2);
    _cleanup_json_ cJSON *one = pod("ord-1");
    assert_false(ctl_is_terminating(one));
    atomic_store(&finalize, true);
    wait_for("ord-2 gone", cond_pod_gone, "ord-2");
    wait_for("ord-1 gone", cond_pod_gone, "ord-1");
    wait_field("apps/v1", "statefulsets", "ord", "status.replicas", 1);
    assert_true(pod_exists("ord-0"));
    _cleanup_json_ cJSON *kept = get("v1", NS, "persistentvolumeclaims", "data-ord-2");
    assert_non_null(kept);
}

#define ANTI                                                                                                 \
    "'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':"     \
    "{'matchExpressions':[{'key':'app','operator':'In','values':['db']}]},"                                  \
    "'topologyKey':'kubernetes.io/hostname'}]}},"

static void test_anti_affinity(void **state)
{
    (void)state;
    /* ord-0 from the previous test still runs somewhere; it has other labels and does not matter. */
    create("apps/v1", NS, "statefulsets", STS("db", 4, "Parallel", ANTI));
    const char *names[] = {"db-0", "db-1", "db-2"};
    for (int i = 0; i < 3; i++)
        wait_for(names[i], cond_pod_bound, names[i]);
    wait_for("db-3 unschedulable", cond_pod_unschedulable, "db-3");
    _cleanup_json_ cJSON *pending = pod("db-3");
    assert_null(rss_json_str(pending, "spec.nodeName"));
    const char *msg = rss_json_str(ctl_condition(pending, "PodScheduled"), "message");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "0/3 nodes are available"));
    assert_non_null(strstr(msg, "anti-affinity"));
    char seen[3][32];
    for (int i = 0; i < 3; i++) {
        _cleanup_json_ cJSON *p = pod(names[i]);
        snprintf(seen[i], sizeof(seen[i]), "%s", rss_json_str(p, "spec.nodeName"));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
    }
    /* A fourth node frees a place. */
    add_node("n4", NULL);
    wait_for("db-3 bound", cond_pod_bound, "db-3");
    _cleanup_json_ cJSON *placed = pod("db-3");
    assert_string_equal(rss_json_str(placed, "spec.nodeName"), "n4");
    /* The condition follows the binding in a second write. */
    wait_for("db-3 PodScheduled=True", cond_pod_scheduled_true, "db-3");
    delete ("apps/v1", NS, "statefulsets", "db");
    for (int i = 0; i < 3; i++)
        wait_for(names[i], cond_pod_gone, names[i]);
    wait_for("db-3 gone", cond_pod_gone, "db-3");
}

static void test_node_selector(void **state)
{
    (void)state;
    create("v1", NS, "pods",
           "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'ssd','namespace':'" NS "'},"
           "'spec':{'nodeSelector':{'disk':'ssd'},'containers':[{'name':'c','image':'busybox'}]}}");
    wait_for("ssd unschedulable", cond_pod_unschedulable, "ssd");
    _cleanup_json_ cJSON *p = pod("ssd");
    assert_non_null(strstr(rss_json_str(ctl_condition(p, "PodScheduled"), "message"), "node selector"));
    patch("v1", NULL, "nodes", "n2", "{'metadata':{'labels':{'disk':'ssd'}}}", false);
    wait_for("ssd bound", cond_pod_bound, "ssd");
    _cleanup_json_ cJSON *bound = pod("ssd");
    assert_string_equal(rss_json_str(bound, "spec.nodeName"), "n2");
    delete ("v1", NS, "pods", "ssd");
    wait_for("ssd gone", cond_pod_gone, "ssd");
}

static bool cond_node_ready_is(const void *arg)
{
    const char *const *a = arg;
    _cleanup_json_ cJSON *n = get("v1", NULL, "nodes", a[0]);
    const char *st = ctl_condition_status(n, "Ready");
    return st && strcmp(st, a[1]) == 0;
}

static void test_node_lifecycle(void **state)
{
    (void)state;
    node_alive("n3", false);
    const char *unknown[] = {"n3", "Unknown"};
    wait_for("n3 Ready=Unknown", cond_node_ready_is, unknown);
    _cleanup_json_ cJSON *n3 = get("v1", NULL, "nodes", "n3");
    assert_string_equal(rss_json_str(ctl_condition(n3, "Ready"), "reason"), "NodeStatusUnknown");
    /* The controller never sets True again by itself; other nodes keep theirs. */
    _cleanup_json_ cJSON *n1 = get("v1", NULL, "nodes", "n1");
    assert_string_equal(ctl_condition_status(n1, "Ready"), "True");

    /* No new pod lands on n3 now. */
    create(
        "v1", NS, "pods",
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'on3','namespace':'" NS "'},"
        "'spec':{'nodeSelector':{'kubernetes.io/hostname':'n3'},'containers':[{'name':'c','image':'b'}]}}");
    wait_for("on3 unschedulable", cond_pod_unschedulable, "on3");
    _cleanup_json_ cJSON *p = pod("on3");
    assert_non_null(strstr(rss_json_str(ctl_condition(p, "PodScheduled"), "message"), "not ready"));

    /* The "kubelet" comes back: it sets Ready=True with a fresh heartbeat and renews its lease. */
    char now[RSS_TIME_LEN], buf[512];
    rss_time_seconds(now, NULL);
    snprintf(buf, sizeof(buf),
             "{'status':{'conditions':[{'type':'Ready','status':'True','reason':'KubeletReady',"
             "'lastHeartbeatTime':'%s','lastTransitionTime':'%s'}]}}",
             now, now);
    node_alive("n3", true);
    patch("v1", NULL, "nodes", "n3", buf, true);
    wait_for("on3 bound", cond_pod_bound, "on3");
    const char *ready[] = {"n3", "True"};
    assert_true(cond_node_ready_is(ready));
    delete ("v1", NS, "pods", "on3");
    wait_for("on3 gone", cond_pod_gone, "on3");
}

#define DS                                                                                                   \
    "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'agent','namespace':'" NS "'},"           \
    "'spec':{'selector':{'matchLabels':{'app':'agent'}},'template':{'metadata':{'labels':{'app':'agent'}},"  \
    "'spec':{'containers':[{'name':'a','image':'busybox'}]}}}}"

static void test_daemonset(void **state)
{
    (void)state;
    create("apps/v1", NS, "daemonsets", DS);
    const char *names[] = {"agent-n1", "agent-n2", "agent-n3", "agent-n4"};
    for (int i = 0; i < 4; i++) {
        wait_for(names[i], cond_pod_exists, names[i]);
        _cleanup_json_ cJSON *p = pod(names[i]);
        assert_string_equal(rss_json_str(p, "spec.nodeName"), names[i] + strlen("agent-"));
        assert_non_null(ctl_controller_uid(p, "DaemonSet"));
    }
    wait_field("apps/v1", "daemonsets", "agent", "status.desiredNumberScheduled", 4);
    wait_field("apps/v1", "daemonsets", "agent", "status.currentNumberScheduled", 4);
    for (int i = 0; i < 4; i++)
        set_pod_ready(names[i]);
    wait_field("apps/v1", "daemonsets", "agent", "status.numberReady", 4);

    /* Deleted: recreated (a new incarnation of the same name). */
    _cleanup_json_ cJSON *old = pod("agent-n1");
    _cleanup_free_ char *old_uid = rss_xstrdup(ctl_uid(old));
    delete ("v1", NS, "pods", "agent-n1");
    for (int64_t end = simfix_mono_ns() + (int64_t)WAIT_MS * 1000000; simfix_mono_ns() < end;) {
        _cleanup_json_ cJSON *p = pod("agent-n1");
        if (p && strcmp(ctl_uid(p), old_uid) != 0)
            break;
        simfix_sleep_ms(50);
    }
    _cleanup_json_ cJSON *again = pod("agent-n1");
    assert_non_null(again);
    assert_string_not_equal(ctl_uid(again), old_uid);

    /* A node that is gone loses its pod. */
    node_alive("n4", false);
    delete ("v1", NULL, "nodes", "n4");
    wait_for("agent-n4 gone", cond_pod_gone, "agent-n4");
    wait_field("apps/v1", "daemonsets", "agent", "status.desiredNumberScheduled", 3);
    assert_true(pod_exists("agent-n2"));

    delete ("apps/v1", NS, "daemonsets", "agent");
    for (int i = 0; i < 3; i++)
        wait_for(names[i], cond_pod_gone, names[i]);
}

/* POST pods/NAME/eviction, no retry: 0 when evicted, else the error's words in why. */
static int evict(const char *name, char *why, size_t n)
{
    _cleanup_free_ char *p = rss_xasprintf("/api/v1/namespaces/" NS "/pods/%s/eviction", name);
    _cleanup_free_ char *body = rss_xasprintf(
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"%s\"}}", name);
    struct rss_kube_request r = {.method = "POST", .path = p, .body = body, .attempts = 1};
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *ret = NULL;
    if (rss_kube_call(kube, &r, &ret, &err) == 0)
        return 0;
    _cleanup_free_ char *s = rss_error_string(err);
    snprintf(why, n, "%s", s);
    return -1;
}

static bool cond_no_disrupted(const void *name)
{
    _cleanup_json_ cJSON *b = get("policy/v1", NS, "poddisruptionbudgets", name);
    return b && !rss_json_path(b, "status.disruptedPods");
}

static void test_disruption(void **state)
{
    (void)state;
    create("apps/v1", NS, "statefulsets", STS("pdb", 3, "Parallel", ""));
    const char *names[] = {"pdb-0", "pdb-1", "pdb-2"};
    for (int i = 0; i < 3; i++) {
        wait_for(names[i], cond_pod_bound, names[i]);
        set_pod_ready(names[i]);
    }
    create("policy/v1", NS, "poddisruptionbudgets",
           "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':{'name':'pdb','namespace':'" NS
           "'},'spec':{'maxUnavailable':1,'selector':{'matchLabels':{'app':'pdb'}}}}");
    wait_field("policy/v1", "poddisruptionbudgets", "pdb", "status.disruptionsAllowed", 1);
    _cleanup_json_ cJSON *b = get("policy/v1", NS, "poddisruptionbudgets", "pdb");
    assert_int_equal(rss_json_long(b, "status.expectedPods", -1), 3);
    assert_int_equal(rss_json_long(b, "status.currentHealthy", -1), 3);
    assert_int_equal(rss_json_long(b, "status.desiredHealthy", -1), 2);
    assert_int_equal(rss_json_long(b, "status.observedGeneration", -1), 1);
    assert_string_equal(rss_json_str(ctl_condition(b, "DisruptionAllowed"), "reason"), "SufficientPods");
    /* Settled: the resync passes (1 s) find nothing to write (no write loop on its own status). */
    simfix_sleep_ms(2500);
    _cleanup_json_ cJSON *settled = get("policy/v1", NS, "poddisruptionbudgets", "pdb");
    assert_string_equal(rss_json_str(settled, "metadata.resourceVersion"),
                        rss_json_str(b, "metadata.resourceVersion"));

    /* One eviction within the budget; the pod goes Terminating, and the next is refused. */
    atomic_store(&finalize, false);
    helper_sync();
    char why[1024] = "";
    assert_int_equal(evict("pdb-0", why, sizeof(why)), 0);
    wait_for("pdb-0 terminating", cond_pod_terminating, "pdb-0");
    assert_int_not_equal(evict("pdb-1", why, sizeof(why)), 0);
    /* (the client's error carries the Status message; the cause's numbers are kubesim_eviction's) */
    if (!strstr(why, "violate the pod's disruption budget"))
        fail_msg("second eviction: %s", why);
    /* The controller's next passes agree (the Terminating pod is not healthy) and keep it refused. */
    wait_field("policy/v1", "poddisruptionbudgets", "pdb", "status.currentHealthy", 2);
    wait_for("no disruptedPods while terminating", cond_no_disrupted, "pdb");
    _cleanup_json_ cJSON *b2 = get("policy/v1", NS, "poddisruptionbudgets", "pdb");
    assert_int_equal(rss_json_long(b2, "status.disruptionsAllowed", -1), 0);
    assert_string_equal(rss_json_str(ctl_condition(b2, "DisruptionAllowed"), "reason"), "InsufficientPods");

    /* The pod goes, the set makes it again; once Ready the budget allows one again, within a second or so
     * of the pod's change (a pod event wakes the controllers; nothing here waits on the resync). */
    atomic_store(&finalize, true);
    for (int64_t end = simfix_mono_ns() + (int64_t)WAIT_MS * 1000000; simfix_mono_ns() < end;) {
        _cleanup_json_ cJSON *p = pod("pdb-0");
        if (p && !ctl_is_terminating(p) && rss_json_str(p, "spec.nodeName"))
            break;
        simfix_sleep_ms(50);
    }
    set_pod_ready("pdb-0");
    int64_t t0 = simfix_mono_ns();
    wait_field("policy/v1", "poddisruptionbudgets", "pdb", "status.disruptionsAllowed", 1);
    int64_t took_ms = (simfix_mono_ns() - t0) / 1000000;
    fprintf(stderr, "budget back to 1 allowed %lld ms after the pod's Ready\n", (long long)took_ms);
    assert_true(took_ms < 5000);

    /* A spec change is not observed until the controller writes: then minAvailable 3 leaves none. */
    patch("policy/v1", NS, "poddisruptionbudgets", "pdb", "{'spec':{'maxUnavailable':null,'minAvailable':3}}",
          false);
    wait_field("policy/v1", "poddisruptionbudgets", "pdb", "status.observedGeneration", 2);
    wait_field("policy/v1", "poddisruptionbudgets", "pdb", "status.disruptionsAllowed", 0);
    assert_int_not_equal(evict("pdb-2", why, sizeof(why)), 0);
    if (!strstr(why, "violate the pod's disruption budget"))
        fail_msg("eviction under minAvailable 3: %s", why);

    delete ("policy/v1", NS, "poddisruptionbudgets", "pdb");
    delete ("apps/v1", NS, "statefulsets", "pdb");
    for (int i = 0; i < 3; i++)
        wait_for(names[i], cond_pod_gone, names[i]);
}

int main(int argc, char **argv)
{
    controllers_bin = argc > 1 ? argv[1] : "./world-controllers";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_scale), cmocka_unit_test(test_ordered_ready),
        cmocka_unit_test(test_anti_affinity),  cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_node_lifecycle), cmocka_unit_test(test_daemonset),
        cmocka_unit_test(test_disruption),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
