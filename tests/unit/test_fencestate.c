/* test_fencestate.c -- the fence state across an rssd restart (finding F3): the file's codec, the clock
 * arithmetic, the atomic write, and an agent restarted while cut off resuming its fence clock, its
 * members, specs and peers, and fencing at once when its predecessor's last renewal is past the fence
 * timeout (rule 18), else right after the restore grace (not a fence timeout later). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "rss/agent.h"
#include "rss/cleanup.h"
#include "rss/cri.h"
#include "rss/fencestate.h"
#include "rss/json.h"
#include "rss/kube.h"
#include "agent_internal.h"

static char *mkdtemp_dir(void)
{
    char *d = rss_xstrdup("/tmp/rss-fencestate.XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void rm_rf(const char *d)
{
    _cleanup_free_ char *cmd = rss_xasprintf("rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

static void test_codec_roundtrip(void **state)
{
    (void)state;
    struct rss_fencestate s = {.api_ok_boot_ms = 123456789012LL,
                               .pods = cJSON_Parse("[{\"metadata\":{\"name\":\"p\"}}]"),
                               .rss = NULL,
                               .peers = cJSON_Parse("[{\"node\":\"n2\"}]")};
    snprintf(s.boot_id, sizeof(s.boot_id), "%s", "0b1c2d3e-aaaa-bbbb-cccc-000000000001");
    _cleanup_free_ char *text = rss_fencestate_encode(&s);
    struct rss_fencestate d = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_fencestate_decode(text, &d, &err), 0);
    assert_string_equal(d.boot_id, s.boot_id);
    assert_true(d.api_ok_boot_ms == 123456789012LL);
    assert_int_equal(cJSON_GetArraySize(d.pods), 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                            cJSON_GetObjectItem(cJSON_GetArrayItem(d.pods, 0), "metadata"), "name")),
                        "p");
    assert_int_equal(cJSON_GetArraySize(d.rss), 0); /* NULL is written as [] */
    assert_int_equal(cJSON_GetArraySize(d.peers), 1);
    rss_fencestate_clear(&d);
    rss_fencestate_clear(&s);
}

static void test_codec_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "not json",
        "[]",
        "{\"version\":2,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":7,\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":-1,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1.5,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":\"1\",\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1e300,\"pods\":[],\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":{},\"rss\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],\"peers\":[]}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":null}",
        "{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rss_fencestate d = {0};
        _cleanup_error_ rss_error_t err = NULL;
        if (rss_fencestate_decode(bad[i], &d, &err) == 0)
            fail_msg("decoded garbage #%zu: %s", i, bad[i]);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        assert_null(d.pods);
        rss_fencestate_clear(&d);
    }
    /* an overlong boot id */
    char big[200];
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    _cleanup_free_ char *t = rss_xasprintf(
        "{\"version\":1,\"bootId\":\"%s\",\"apiOkBootMs\":1,\"pods\":[],\"rss\":[],\"peers\":[]}", big);
    struct rss_fencestate d = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(rss_fencestate_decode(t, &d, &err) < 0);
}

struct resume_row {
    const char *name;
    bool have;
    const char *saved_boot, *boot;
    int64_t stamp, boot_now, mono_now, want;
};

static void test_resume(void **state)
{
    (void)state;
    static const struct resume_row rows[] = {
        /* The fix: the clock continues from the saved stamp (60 s ago on the boot clock). */
        {"same boot, 60 s ago", true, "b1", "b1", 940000, 1000000, 5000000, 4940000},
        {"same boot, just now", true, "b1", "b1", 1000000, 1000000, 5000000, 5000000},
        {"same boot, older than this process's clock", true, "b1", "b1", 0, 1000000, 500, 500 - 1000000},
        /* Everything not provably from this boot: the clock starts now (never earlier). */
        {"no file", false, "", "b1", 0, 1000000, 5000000, 5000000},
        {"another boot", true, "b0", "b1", 940000, 1000000, 5000000, 5000000},
        {"no boot id now", true, "b1", NULL, 940000, 1000000, 5000000, 5000000},
        {"a stamp in the future", true, "b1", "b1", 1000001, 1000000, 5000000, 5000000},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct resume_row *r = &rows[i];
        struct rss_fencestate s = {.api_ok_boot_ms = r->stamp};
        snprintf(s.boot_id, sizeof(s.boot_id), "%s", r->saved_boot);
        const char *why = NULL;
        int64_t got = rss_fencestate_resume(r->have ? &s : NULL, r->boot, r->boot_now, r->mono_now, &why);
        if (got != r->want)
            fail_msg("%s: got %lld, want %lld", r->name, (long long)got, (long long)r->want);
        assert_non_null(why);
        /* never earlier than the saved stamp */
        if (r->have && got < r->mono_now)
            assert_true(r->boot_now - (r->mono_now - got) == r->stamp);
    }
    /* boot_stamp is the inverse */
    int64_t st = rss_fencestate_boot_stamp(4940000, 1000000, 5000000);
    assert_true(st == 940000);
}

static void test_save_load(void **state)
{
    (void)state;
    _cleanup_free_ char *dir = mkdtemp_dir();
    _cleanup_free_ char *path = rss_xasprintf("%s/fence-n1.json", dir);
    _cleanup_free_ char *tmp = rss_xasprintf("%s.tmp", path);
    struct rss_fencestate s = {.api_ok_boot_ms = 42, .pods = cJSON_Parse("[1,2]")};
    snprintf(s.boot_id, sizeof(s.boot_id), "%s", "bootid-1");
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_fencestate d = {0};
    assert_true(rss_fencestate_load(path, &d, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    rss_error_release(&err);
    assert_int_equal(rss_fencestate_save(path, &s, &err), 0);
    assert_int_equal(access(tmp, F_OK), -1); /* renamed, not left behind */
    s.api_ok_boot_ms = 43;
    assert_int_equal(rss_fencestate_save(path, &s, &err), 0); /* over the old one */
    assert_int_equal(rss_fencestate_load(path, &d, &err), 0);
    assert_true(d.api_ok_boot_ms == 43);
    assert_int_equal(cJSON_GetArraySize(d.pods), 2);
    rss_fencestate_clear(&d);
    /* a garbled file is RSS_E_INVALID (the agent then starts its clock now) */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"version\":1,\"bootId\":\"bootid-1\",\"apiOk", f);
    fclose(f);
    assert_true(rss_fencestate_load(path, &d, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    /* an unwritable place fails cleanly */
    _cleanup_free_ char *nodir = rss_xasprintf("%s/missing/fence.json", dir);
    assert_true(rss_fencestate_save(nodir, &s, &err) < 0);
    rss_error_release(&err);
    rss_fencestate_clear(&s);
    rm_rf(dir);
}

/* --- the agent: restart while cut off ------------------------------------------------------------- */

static const char rss_obj[] =
    "{\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\",\"uid\":\"u-1\","
    "\"generation\":7},\"spec\":{\"pod\":{\"commands\":{\"sequence\":{\"command\":[\"/seq\"]},"
    "\"primary\":{\"command\":[\"/start\",\"--join\"]},\"status\":{\"command\":[\"/check\"]},"
    "\"stop\":{\"command\":[\"/stop\"]}},\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}},"
    "\"status\":{\"memberStatus\":[{\"node\":\"n1\"},{\"node\":\"n2\"},{\"node\":\"n3\"}]}}";

struct world {
    char *dir;
    struct rss_kube *kube;
    struct rss_cri *cri;
    struct rss_agent *a;
};

static struct rss_agent *new_agent(struct world *w)
{
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_agent_config cfg = {.kube = w->kube,
                                   .cri = w->cri,
                                   .node = "n1",
                                   .ns = "rssd",
                                   .fence_timeout_ms = 30000,
                                   .state_dir = w->dir};
    struct rss_agent *a = NULL;
    if (rss_agent_new(&cfg, &a, &err) < 0)
        fail_msg("rss_agent_new failed");
    return a;
}

static int world_setup(void **state)
{
    struct world *w = rss_xcalloc(1, sizeof(*w));
    w->dir = mkdtemp_dir();
    _cleanup_free_ char *kc = rss_xasprintf("%s/kubeconfig", w->dir);
    FILE *f = fopen(kc, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:9\n"
          "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: rssd\n"
          "current-context: x\nusers:\n- name: u\n  user:\n    token: t\n",
          f);
    fclose(f);
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(kc, &w->kube, &err) < 0) {
        _cleanup_free_ char *m = rss_error_string(err);
        fail_msg("kube: %s", m);
    }
    _cleanup_free_ char *sock = rss_xasprintf("unix://%s/no-cri.sock", w->dir);
    assert_int_equal(rss_cri_new(sock, NULL, &w->cri, &err), 0);
    *state = w;
    return 0;
}

static int world_teardown(void **state)
{
    struct world *w = *state;
    rss_cri_free(w->cri);
    rss_kube_free(w->kube);
    rm_rf(w->dir);
    free(w->dir);
    free(w);
    unsetenv("RSS_BOOT_ID");
    return 0;
}

static size_t n_members(struct rss_agent *a)
{
    size_t n = 0;
    for (struct agent_member *m = a->members; m; m = m->next)
        n++;
    return n;
}

/* The state the previous process left: its last acknowledged renewal `age_ms` ago, on this boot. */
static void write_state(struct world *w, const char *boot, int64_t age_ms)
{
    struct rss_fencestate s = {
        .api_ok_boot_ms = rss_clock_boot_ms() - age_ms,
        .pods = cJSON_Parse("[{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"db-0\",\"uid\":\"uid-0\","
                            "\"labels\":{\"" RSS_LABEL_NAME "\":\"db\"}},\"spec\":{\"containers\":[{\"name\":"
                            "\"app\"}]}}]"),
        .rss = cJSON_CreateArray(),
        .peers = cJSON_Parse("[{\"node\":\"n2\",\"address\":\"127.0.0.1:9\",\"key\":"
                             "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}]")};
    cJSON_AddItemToArray(s.rss, cJSON_Parse(rss_obj));
    snprintf(s.boot_id, sizeof(s.boot_id), "%s", boot);
    _cleanup_free_ char *path = rss_xasprintf("%s/fence-n1.json", w->dir);
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_fencestate_save(path, &s, &err), 0);
    rss_fencestate_clear(&s);
}

static void wait_workers(struct rss_agent *a)
{
    for (int i = 0; i < 200 && rss_agent_busy_workers(a) > 0; i++)
        usleep(50 * 1000);
    assert_int_equal(rss_agent_busy_workers(a), 0);
}

/* F3: the previous process last heard the API 60 s ago (fence timeout 30 s); the new one, still cut
 * off, must resume that clock and its tables and fence at once, not 30 s later. Past the fence timeout it
 * is a wake (rule 18): no rssd may have run here while the leader judged the node dead, so the fence
 * starts at the first check, before the restore grace the failsafe's peers get (they cannot keep a woken
 * node's members), and only the Node (unreadable here: no API server) could call it off. */
static void test_restart_cut_off_fences(void **state)
{
    struct world *w = *state;
    setenv("RSS_BOOT_ID", "boot-aaaaaaaa", 1);
    write_state(w, "boot-aaaaaaaa", 60000);
    struct rss_agent *a = new_agent(w);
    agent_fence_state_restore(a);
    int64_t now = rss_clock_mono_ms();
    int64_t age = now - atomic_load(&a->api_ok_ms);
    assert_true(age >= 60000 && age < 65000);
    assert_int_equal(n_members(a), 1);
    struct agent_spec *spec = agent_spec_get(a, "ns1", "db");
    assert_non_null(spec);
    assert_int_equal(spec->n_nodes, 3);
    agent_spec_put(a, spec);
    assert_int_equal(a->n_peers, 1);
    assert_string_equal(a->peers[0].url, "http://127.0.0.1:9/peer");
    /* the wake's fence at the first check, the cut-off state still in its grace */
    pthread_mutex_lock(&a->lock);
    agent_fence_check(a, now);
    assert_false(a->fenced);
    assert_true(a->members->fence_started);
    assert_true(a->members->fence_wake);
    /* the cut-off state after the grace leaves the wake's fence running */
    agent_fence_check(a, a->fence_from_ms);
    assert_true(a->fenced);
    assert_true(a->members->fence_started);
    assert_true(a->members->fence_wake);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    /* what it saves is what it restored, with the stamp it is given */
    int64_t ok = atomic_load(&a->api_ok_ms);
    agent_fence_state_save(a, ok);
    rss_agent_free(a);
    _cleanup_free_ char *path = rss_xasprintf("%s/fence-n1.json", w->dir);
    struct rss_fencestate s = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_fencestate_load(path, &s, &err), 0);
    assert_string_equal(s.boot_id, "boot-aaaaaaaa");
    int64_t saved_age = rss_clock_boot_ms() - s.api_ok_boot_ms;
    assert_true(saved_age >= 60000 && saved_age < 65000);
    assert_int_equal(cJSON_GetArraySize(s.pods), 1);
    assert_int_equal(cJSON_GetArraySize(s.rss), 1);
    assert_null(rss_json_obj(cJSON_GetArrayItem(s.rss, 0), "metadata.managedFields"));
    assert_int_equal(cJSON_GetArraySize(s.peers), 1);
    assert_string_equal(rss_json_str(cJSON_GetArrayItem(s.peers, 0), "address"), "127.0.0.1:9");
    rss_fencestate_clear(&s);
}

/* The previous process last heard the API 29 s ago (fence timeout 30 s): no wake, the clock runs on; once
 * it passes the fence timeout, the restored peers get their probe round (the grace) before the failsafe
 * decides, and then `stop` starts (no peer vouched). */
static void test_restart_within_timeout_grace(void **state)
{
    struct world *w = *state;
    setenv("RSS_BOOT_ID", "boot-aaaaaaaa", 1);
    write_state(w, "boot-aaaaaaaa", 29000);
    struct rss_agent *a = new_agent(w);
    agent_fence_state_restore(a);
    int64_t now = rss_clock_mono_ms();
    pthread_mutex_lock(&a->lock);
    agent_fence_check(a, now);
    assert_false(a->fenced);
    assert_false(a->members->fence_started);
    agent_fence_check(a, now + 2000); /* past the fence timeout, within the grace */
    assert_false(a->fenced);
    assert_false(a->members->fence_started);
    agent_fence_check(a, a->fence_from_ms);
    assert_true(a->fenced);
    assert_true(a->members->fence_started);
    assert_false(a->members->fence_wake);
    pthread_mutex_unlock(&a->lock);
    wait_workers(a);
    rss_agent_free(a);
}

/* After a reboot (another boot id) or with a garbled file: the clock starts now and nothing is restored
 * (the containers the file names are gone with the boot). */
static void test_restart_other_boot(void **state)
{
    struct world *w = *state;
    setenv("RSS_BOOT_ID", "boot-bbbbbbbb", 1);
    write_state(w, "boot-aaaaaaaa", 60000);
    struct rss_agent *a = new_agent(w);
    agent_fence_state_restore(a);
    int64_t now = rss_clock_mono_ms();
    assert_true(now - atomic_load(&a->api_ok_ms) < 5000);
    assert_int_equal(n_members(a), 0);
    assert_int_equal(a->n_peers, 0);
    pthread_mutex_lock(&a->lock);
    agent_fence_check(a, now);
    assert_false(a->fenced);
    pthread_mutex_unlock(&a->lock);
    rss_agent_free(a);

    _cleanup_free_ char *path = rss_xasprintf("%s/fence-n1.json", w->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("garbage", f);
    fclose(f);
    a = new_agent(w);
    agent_fence_state_restore(a);
    assert_true(rss_clock_mono_ms() - atomic_load(&a->api_ok_ms) < 5000);
    assert_int_equal(n_members(a), 0);
    rss_agent_free(a);
}

/* The failsafe's signing key survives a restart in the same boot: the peers know only the public key the
 * previous process published, and a process restarted while the API server is gone cannot publish a
 * new one. Without it the peers cannot verify its answers, and since the failsafe needs every hosting
 * agent, one rssd restart during an API outage would fence every member of its RSSs. Not across a
 * reboot, and not a key that is not one. */
static void test_restart_keeps_key(void **state)
{
    struct world *w = *state;
    setenv("RSS_BOOT_ID", "boot-aaaaaaaa", 1);
    struct rss_agent *first = new_agent(w);
    agent_fence_state_restore(first); /* no file: a fresh start */
    _cleanup_free_ char *key1 = agent_peers_private(first);
    assert_non_null(key1);
    assert_int_equal(strlen(key1), 44);
    _cleanup_free_ char *pub1 = rss_xstrdup(first->peer_pub);
    agent_fence_state_save(first, atomic_load(&first->api_ok_ms));
    rss_agent_free(first);

    struct rss_agent *second = new_agent(w);
    assert_string_not_equal(second->peer_pub, pub1); /* a new process makes a new key... */
    agent_fence_state_restore(second);
    _cleanup_free_ char *key2 = agent_peers_private(second);
    assert_string_equal(key2, key1); /* ...and takes its predecessor's back */
    assert_string_equal(second->peer_pub, pub1);
    /* its answers verify with the published public key */
    unsigned char pub[33]; /* EVP_DecodeBlock writes 33 bytes for 44 characters (the padding) */
    assert_true(EVP_DecodeBlock(pub, (const unsigned char *)pub1, 44) >= 32);
    _cleanup_free_ char *ans = rss_agent_peer_answer(second, "0123456789abcdef0123456789abcdef");
    long long age;
    assert_true(agent_peers_verify(pub, "n1", "0123456789abcdef0123456789abcdef", ans, &age));
    agent_fence_state_save(second, atomic_load(&second->api_ok_ms));
    rss_agent_free(second);

    /* another boot: the file is not this boot's, the key is not taken */
    setenv("RSS_BOOT_ID", "boot-bbbbbbbb", 1);
    struct rss_agent *third = new_agent(w);
    agent_fence_state_restore(third);
    assert_string_not_equal(third->peer_pub, pub1);
    rss_agent_free(third);

    /* a garbled key: dropped by the codec, the rest of the file still counts */
    struct rss_fencestate s = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_fencestate_decode("{\"version\":1,\"bootId\":\"b\",\"apiOkBootMs\":1,\"pods\":[],"
                                           "\"rss\":[],\"peers\":[],\"key\":\"not a key\"}",
                                           &s, &err),
                     0);
    assert_string_equal(s.key, "");
    rss_fencestate_clear(&s);
}

/* One agent per node and state directory: a second rssd (a DaemonSet with maxSurge, two installs sharing
 * the hostPath) waits until the first exits instead of acting on the same pods with its own generations
 * and overwriting the first's fence state and key. */
struct lock_try {
    struct rss_agent *a;
    atomic_bool *stop;
    atomic_bool done, got;
};

static void *try_lock(void *arg)
{
    struct lock_try *t = arg;
    atomic_store(&t->got, agent_state_lock(t->a, t->stop));
    atomic_store(&t->done, true);
    return NULL;
}

static void test_one_agent_per_node(void **state)
{
    struct world *w = *state;
    setenv("RSS_BOOT_ID", "boot-aaaaaaaa", 1);
    atomic_bool stop = false;
    struct rss_agent *first = new_agent(w);
    assert_true(agent_state_lock(first, &stop));
    assert_true(first->state_lock_fd >= 0);
    struct rss_agent *second = new_agent(w);
    struct lock_try t = {.a = second, .stop = &stop};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, try_lock, &t), 0);
    usleep(800 * 1000);
    assert_false(atomic_load(&t.done)); /* waits while the first runs */
    rss_agent_free(first);              /* the first exits: its lock goes with it */
    for (int i = 0; i < 40 && !atomic_load(&t.done); i++)
        usleep(100 * 1000);
    pthread_join(th, NULL);
    assert_true(atomic_load(&t.got));
    assert_true(second->state_lock_fd >= 0);
    /* a third one asked to stop while it waits gives up without the lock */
    struct rss_agent *third = new_agent(w);
    atomic_store(&stop, true);
    assert_false(agent_state_lock(third, &stop));
    assert_int_equal(third->state_lock_fd, -1);
    rss_agent_free(third);
    rss_agent_free(second);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_roundtrip),
        cmocka_unit_test(test_codec_garbage),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_save_load),
        cmocka_unit_test_setup_teardown(test_restart_cut_off_fences, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_restart_within_timeout_grace, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_restart_other_boot, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_key, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_one_agent_per_node, world_setup, world_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
