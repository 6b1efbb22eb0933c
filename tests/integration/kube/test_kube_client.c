/* test_kube_client.c -- every verb of the Kubernetes client against kubesim, and its failure paths:
 * conflicts, retries, token rotation, wrong CA, malformed and truncated bodies, size cap, watch resume, 410
 * re-list, stalls. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "simfix.h"

static struct simfix sim;
static struct rss_kube *kube;

#define CM_PATH "/api/v1/namespaces/default/configmaps"

static cJSON *parsef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *parsef(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    assert_true(vasprintf(&s, fmt, ap) >= 0);
    va_end(ap);
    cJSON *j = cJSON_Parse(s);
    if (!j)
        fail_msg("bad test JSON: %s", s);
    free(s);
    return j;
}

static const char *jstr(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void expect_code(int r, rss_error_t *err, enum rss_errc code)
{
    if (r >= 0)
        fail_msg("expected %s, got success", rss_errc_name(code));
    if (rss_error_code(*err) != code) {
        _cleanup_free_ char *s = rss_error_string(*err);
        fail_msg("expected %s, got %s: %s", rss_errc_name(code), rss_errc_name(rss_error_code(*err)), s);
    }
    rss_error_release(err);
}

static void ok(int r, rss_error_t *err)
{
    if (r < 0) {
        _cleanup_free_ char *s = rss_error_string(*err);
        fail_msg("unexpected error %s: %s", rss_errc_name(rss_error_code(*err)), s);
    }
}

static cJSON *create_cm(const char *name, const char *labels, const char *value)
{
    _cleanup_json_ cJSON *obj =
        parsef("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
               "\"labels\":{%s}},\"data\":{\"v\":\"%s\"}}",
               name, labels, value);
    cJSON *got = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    ok(rss_kube_create(kube, CM_PATH, obj, &got, &err), &err);
    return got;
}

static int setup(void **state)
{
    (void)state;
    if (simfix_start(&sim, KUBESIM_BIN) < 0)
        return -1;
    _cleanup_error_ rss_error_t err = NULL;
    if (rss_kube_new(sim.kubeconfig, &kube, &err) < 0) {
        _cleanup_free_ char *s = rss_error_string(err);
        fprintf(stderr, "rss_kube_new: %s\n", s);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rss_kube_free(kube);
    simfix_stop(&sim);
    return 0;
}

/* --- verbs --- */

static void test_crud(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *created = create_cm("crud", "\"t\":\"crud\"", "one");
    const char *rv1 = jstr(created, "metadata", "resourceVersion");
    const char *uid = jstr(created, "metadata", "uid");
    assert_non_null(rv1);
    assert_non_null(uid);
    assert_string_equal(jstr(created, "data", "v"), "one");

    /* create again: AlreadyExists */
    _cleanup_json_ cJSON *dup = parsef("{\"metadata\":{\"name\":\"crud\"},\"data\":{}}");
    expect_code(rss_kube_create(kube, CM_PATH, dup, NULL, &err), &err, RSS_E_EXISTS);

    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", "crud", NULL);
    _cleanup_json_ cJSON *got = NULL;
    ok(rss_kube_get(kube, path, &got, &err), &err);
    assert_string_equal(jstr(got, "metadata", "uid"), uid);
    assert_string_equal(jstr(got, "data", "v"), "one");

    _cleanup_free_ char *missing = rss_kube_path("v1", "default", "configmaps", "nope", NULL);
    cJSON *none = NULL;
    expect_code(rss_kube_get(kube, missing, &none, &err), &err, RSS_E_NOT_FOUND);
    assert_null(none);

    /* update with the current resourceVersion, then again with the stale one: Conflict */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(got, "data"), "v", cJSON_CreateString("two"));
    _cleanup_json_ cJSON *updated = NULL;
    ok(rss_kube_update(kube, path, got, &updated, &err), &err);
    assert_string_equal(jstr(updated, "data", "v"), "two");
    assert_string_not_equal(jstr(updated, "metadata", "resourceVersion"), rv1);
    expect_code(rss_kube_update(kube, path, got, NULL, &err), &err, RSS_E_CONFLICT);

    /* merge patch; with a stale resourceVersion inside it is a precondition */
    _cleanup_json_ cJSON *mp = parsef("{\"data\":{\"w\":\"x\"},\"metadata\":{\"labels\":{\"p\":\"1\"}}}");
    _cleanup_json_ cJSON *patched = NULL;
    ok(rss_kube_merge_patch(kube, path, mp, &patched, &err), &err);
    assert_string_equal(jstr(patched, "data", "v"), "two");
    assert_string_equal(jstr(patched, "data", "w"), "x");
    _cleanup_json_ cJSON *stale =
        parsef("{\"metadata\":{\"resourceVersion\":\"%s\"},\"data\":{\"v\":\"3\"}}", rv1);
    expect_code(rss_kube_merge_patch(kube, path, stale, NULL, &err), &err, RSS_E_CONFLICT);

    /* JSON patch: test+replace as a compare-and-swap */
    _cleanup_json_ cJSON *jp = parsef("[{\"op\":\"test\",\"path\":\"/data/v\",\"value\":\"two\"},"
                                      "{\"op\":\"replace\",\"path\":\"/data/v\",\"value\":\"three\"}]");
    _cleanup_json_ cJSON *jpatched = NULL;
    ok(rss_kube_json_patch(kube, path, jp, &jpatched, &err), &err);
    assert_string_equal(jstr(jpatched, "data", "v"), "three");
    /* the same test now fails and changes nothing */
    int r = rss_kube_json_patch(kube, path, jp, NULL, &err);
    assert_true(r < 0);
    assert_true(rss_error_code(err) == RSS_E_INVALID || rss_error_code(err) == RSS_E_CONFLICT);
    rss_error_release(&err);
    /* The server compares a test's string as text against Go's encoding of the stored one ("<" is
     * "\u003c" there, as kubesim does it): a value with the characters Go escapes still tests equal. */
    _cleanup_json_ cJSON *odd = parsef("[{\"op\":\"add\",\"path\":\"/data/o\",\"value\":\"a<b>&c\u2028\"}]");
    ok(rss_kube_json_patch(kube, path, odd, NULL, &err), &err);
    _cleanup_json_ cJSON *odd_test =
        parsef("[{\"op\":\"test\",\"path\":\"/data/o\",\"value\":\"a<b>&c\u2028\"},"
               "{\"op\":\"remove\",\"path\":\"/data/o\"}]");
    ok(rss_kube_json_patch(kube, path, odd_test, NULL, &err), &err);
    _cleanup_json_ cJSON *after = NULL;
    ok(rss_kube_get(kube, path, &after, &err), &err);
    assert_string_equal(jstr(after, "data", "v"), "three");
    _cleanup_json_ cJSON *notarray = cJSON_CreateObject();
    expect_code(rss_kube_json_patch(kube, path, notarray, NULL, &err), &err, RSS_E_INVALID);

    /* delete: a wrong uid or resourceVersion precondition is a Conflict, the right one deletes */
    struct rss_kube_delete_opts wrong = {.uid = "00000000-0000-0000-0000-000000000000"};
    expect_code(rss_kube_delete(kube, path, &wrong, NULL, &err), &err, RSS_E_CONFLICT);
    struct rss_kube_delete_opts wrong_rv = {.resource_version = rv1};
    expect_code(rss_kube_delete(kube, path, &wrong_rv, NULL, &err), &err, RSS_E_CONFLICT);
    struct rss_kube_delete_opts right = {.uid = uid,
                                         .resource_version = jstr(after, "metadata", "resourceVersion")};
    _cleanup_json_ cJSON *del = NULL;
    ok(rss_kube_delete(kube, path, &right, &del, &err), &err);
    assert_non_null(del);
    expect_code(rss_kube_get(kube, path, &none, &err), &err, RSS_E_NOT_FOUND);
    expect_code(rss_kube_delete(kube, path, NULL, NULL, &err), &err, RSS_E_NOT_FOUND);
}

static void test_status_subresource(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *coll = rss_kube_path("v1", "default", "pods", NULL, NULL);
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "pods", "st", NULL);
    _cleanup_json_ cJSON *pod =
        parsef("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"st\"},"
               "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}");
    _cleanup_json_ cJSON *created = NULL;
    ok(rss_kube_create(kube, coll, pod, &created, &err), &err);

    /* PUT /status changes status only, even when the body also changes the spec */
    cJSON_Delete(cJSON_DetachItemFromObject(created, "status"));
    cJSON_AddItemToObject(created, "status", parsef("{\"phase\":\"Running\"}"));
    cJSON *c0 =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(created, "spec"), "containers"), 0);
    cJSON_ReplaceItemInObject(c0, "image", cJSON_CreateString("changed"));
    _cleanup_json_ cJSON *st = NULL;
    ok(rss_kube_update_status(kube, path, created, &st, &err), &err);
    assert_string_equal(jstr(st, "status", "phase"), "Running");
    _cleanup_json_ cJSON *got = NULL;
    ok(rss_kube_get(kube, path, &got, &err), &err);
    assert_string_equal(jstr(got, "status", "phase"), "Running");
    cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "spec"), "containers"), 0);
    assert_string_equal(cJSON_GetObjectItem(g0, "image")->valuestring, "busybox");

    _cleanup_json_ cJSON *mp = parsef("{\"status\":{\"podIP\":\"10.0.0.9\"}}");
    _cleanup_json_ cJSON *p2 = NULL;
    ok(rss_kube_merge_patch_status(kube, path, mp, &p2, &err), &err);
    assert_string_equal(jstr(p2, "status", "podIP"), "10.0.0.9");
    assert_string_equal(jstr(p2, "status", "phase"), "Running");
    struct rss_kube_delete_opts now = {.set_grace = true, .grace_period_seconds = 0};
    ok(rss_kube_delete(kube, path, &now, NULL, &err), &err);
}

static int count_items(const cJSON *list)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
}

static long stat_count(const char *verb)
{
    _cleanup_json_ cJSON *st = NULL;
    assert_int_equal(simfix_ctl(kube, "GET", "/_sim/stats", NULL, &st), 0);
    const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "requests"), verb);
    assert_true(cJSON_IsNumber(n));
    return (long)n->valuedouble;
}

static void test_list_paging_selectors(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    for (int i = 0; i < 7; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pg-%d", i);
        _cleanup_free_ char *labels = rss_xasprintf("\"app\":\"pg\",\"tier\":\"%s\"", i % 2 ? "a" : "b");
        cJSON_Delete(create_cm(name, labels, "x"));
    }
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stats-reset", NULL, NULL), 0);
    struct rss_kube_list_opts o = {.label_selector = "app=pg", .limit = 2};
    _cleanup_json_ cJSON *all = NULL;
    ok(rss_kube_list(kube, CM_PATH, &o, &all, &err), &err);
    assert_int_equal(count_items(all), 7);
    assert_non_null(jstr(all, "metadata", "resourceVersion"));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(all, "metadata"), "continue"));
    /* the list came in pages of 2 */
    assert_int_equal(stat_count("LIST"), 4);

    struct rss_kube_list_opts o2 = {.label_selector = "app=pg,tier in (a)"};
    _cleanup_json_ cJSON *a = NULL;
    ok(rss_kube_list(kube, CM_PATH, &o2, &a, &err), &err);
    assert_int_equal(count_items(a), 3);

    struct rss_kube_list_opts o3 = {.field_selector = "metadata.name=pg-4"};
    _cleanup_json_ cJSON *one = NULL;
    ok(rss_kube_list(kube, CM_PATH, &o3, &one, &err), &err);
    assert_int_equal(count_items(one), 1);
    assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(one, "items"), 0), "metadata", "name"),
                        "pg-4");

    struct rss_kube_list_opts o4 = {.label_selector = "app=nothing"};
    _cleanup_json_ cJSON *empty = NULL;
    ok(rss_kube_list(kube, CM_PATH, &o4, &empty, &err), &err);
    assert_int_equal(count_items(empty), 0);

    cJSON *none = NULL;
    expect_code(rss_kube_list(kube, "/api/v1/namespaces/default/nonsense", NULL, &none, &err), &err,
                RSS_E_NOT_FOUND);
}

/* --- retries, timeouts, size cap --- */

static void test_retries(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    cJSON_Delete(create_cm("retry", "\"t\":\"r\"", "r"));
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", "retry", NULL);
    _cleanup_json_ cJSON *got = NULL;

    /* two 503s, then success */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/fail", "count=2&code=503&path=" CM_PATH, NULL), 0);
    ok(rss_kube_get(kube, path, &got, &err), &err);
    assert_string_equal(jstr(got, "data", "v"), "r");

    /* 429 with Retry-After: waited for, then success */
    assert_int_equal(
        simfix_ctl(kube, "POST", "/_sim/fail", "count=1&code=429&retryAfter=1&path=" CM_PATH, NULL), 0);
    cJSON_Delete(got);
    got = NULL;
    int64_t t0 = simfix_mono_ns();
    ok(rss_kube_get(kube, path, &got, &err), &err);
    printf("429 + Retry-After: 1 -> success after %.2f s\n", (double)(simfix_mono_ns() - t0) / 1e9);

    /* a PUT hit by 500 is retried too: the server answered, nothing was applied */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/fail", "count=1&code=500&verb=PUT&path=" CM_PATH, NULL),
                     0);
    _cleanup_json_ cJSON *upd = NULL;
    ok(rss_kube_update(kube, path, got, &upd, &err), &err);

    /* more 500s than attempts: the error comes through with its code */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/fail", "count=4&code=500&path=" CM_PATH, NULL), 0);
    cJSON *none = NULL;
    int r = rss_kube_get(kube, path, &none, &err);
    assert_true(r < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    assert_int_equal(err->detail, 500);
    rss_error_release(&err);

    /* 409 is never retried: the caller must re-read */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/fail", "count=1&code=409&path=" CM_PATH, NULL), 0);
    expect_code(rss_kube_get(kube, path, &none, &err), &err, RSS_E_CONFLICT);
    ok(rss_kube_get(kube, path, &none, &err), &err);
    cJSON_Delete(none);

    /* a dropped connection: GET is retried; POST is not (it may have been applied) */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/drop", "count=1&path=" CM_PATH, NULL), 0);
    none = NULL;
    ok(rss_kube_get(kube, path, &none, &err), &err);
    cJSON_Delete(none);
    /* (on a fresh connection: libcurl itself resends any request whose reused connection turns out dead) */
    struct rss_kube *fresh = NULL;
    ok(rss_kube_new(sim.kubeconfig, &fresh, &err), &err);
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/drop", "count=1&path=" CM_PATH, NULL), 0);
    _cleanup_json_ cJSON *obj = parsef("{\"metadata\":{\"name\":\"dropped\"},\"data\":{}}");
    expect_code(rss_kube_create(fresh, CM_PATH, obj, NULL, &err), &err, RSS_E_UNAVAILABLE);
    rss_kube_free(fresh);
}

static void test_timeout_and_cap(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct rss_kube *k = NULL;
    ok(rss_kube_new(sim.kubeconfig, &k, &err), &err);
    rss_kube_set_timeout(k, 500);

    cJSON_Delete(create_cm("slow", "\"t\":\"s\"", "s"));
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", "slow", NULL);
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stall", "count=1&ms=3000&path=" CM_PATH "/slow", NULL),
                     0);
    cJSON *none = NULL;
    expect_code(rss_kube_get(k, path, &none, &err), &err, RSS_E_TIMEOUT);

    /* a 64 KiB object through a 4 KiB cap */
    size_t n = 64 << 10;
    _cleanup_free_ char *big = rss_xmalloc(n + 1);
    memset(big, 'b', n);
    big[n] = '\0';
    _cleanup_json_ cJSON *cm = create_cm("big", "\"t\":\"big\"", big);
    _cleanup_free_ char *bpath = rss_kube_path("v1", "default", "configmaps", "big", NULL);
    rss_kube_set_max_body(k, 4096);
    expect_code(rss_kube_get(k, bpath, &none, &err), &err, RSS_E_TOO_LARGE);
    /* the same client still works for small objects */
    rss_kube_set_timeout(k, 10000);
    ok(rss_kube_get(k, path, &none, &err), &err);
    cJSON_Delete(none);
    rss_kube_free(k);
}

/* --- auth and TLS --- */

static char *write_kubeconfig(const char *name, const char *server, const char *ca_line,
                              const char *user_line)
{
    _cleanup_free_ char *text =
        rss_xasprintf("apiVersion: v1\nkind: Config\ncurrent-context: t\n"
                      "contexts:\n- name: t\n  context:\n    cluster: c\n    user: u\n"
                      "clusters:\n- name: c\n  cluster:\n    server: %s\n    %s\n"
                      "users:\n- name: u\n  user:\n    %s\n",
                      server, ca_line, user_line);
    char *path = rss_xasprintf("%s/%s", sim.dir, name);
    assert_int_equal(simfix_write(path, text), 0);
    return path;
}

static char *server_url(void)
{
    return rss_xasprintf("https://127.0.0.1:%d", sim.port);
}

static void test_token_rotation(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *url = server_url();
    _cleanup_free_ char *tokens = rss_xasprintf("%s/tokens", sim.dir);
    _cleanup_free_ char *tokfile = rss_xasprintf("%s/my-token", sim.dir);
    _cleanup_free_ char *ca = rss_xasprintf("certificate-authority: %s/ca.crt", sim.dir);
    _cleanup_free_ char *user = rss_xasprintf("tokenFile: %s", tokfile);
    _cleanup_free_ char *kc = write_kubeconfig("kc-rotate", url, ca, user);
    assert_int_equal(simfix_write(tokens, "rot-one\n"), 0);
    assert_int_equal(simfix_write(tokfile, "rot-one\n"), 0);
    simfix_sleep_ms(1100); /* kubesim re-reads tokens when the mtime changes (1 s resolution on some fs) */

    struct rss_kube *k = NULL;
    ok(rss_kube_new(kc, &k, &err), &err);
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "namespaces", "default", NULL);
    cJSON *got = NULL;
    ok(rss_kube_get(k, path, &got, &err), &err);
    cJSON_Delete(got);

    /* rotate: the old token is revoked, the file has the new one; the client still caches the old one,
     * gets a 401, re-reads the file and retries once */
    assert_int_equal(simfix_write(tokens, "rot-two\n"), 0);
    assert_int_equal(simfix_write(tokfile, "rot-two\n"), 0);
    simfix_sleep_ms(1100);
    got = NULL;
    ok(rss_kube_get(k, path, &got, &err), &err);
    cJSON_Delete(got);
    rss_kube_free(k);

    /* the old token really was revoked (so the client above went through 401, re-read, retry) */
    _cleanup_free_ char *kc_old = write_kubeconfig("kc-old", url, ca, "token: rot-one");
    ok(rss_kube_new(kc_old, &k, &err), &err);
    got = NULL;
    expect_code(rss_kube_get(k, path, &got, &err), &err, RSS_E_UNAUTHORIZED);
    rss_kube_free(k);

    /* a token nobody accepts: Unauthorized, decoded from the Status, even after the re-read */
    assert_int_equal(simfix_write(tokfile, "wrong\n"), 0);
    ok(rss_kube_new(kc, &k, &err), &err);
    expect_code(rss_kube_get(k, path, &got, &err), &err, RSS_E_UNAUTHORIZED);
    rss_kube_free(k);

    /* a static token in the kubeconfig */
    _cleanup_free_ char *kc2 = write_kubeconfig("kc-static", url, ca, "token: rot-two");
    ok(rss_kube_new(kc2, &k, &err), &err);
    ok(rss_kube_get(k, path, &got, &err), &err);
    cJSON_Delete(got);
    rss_kube_free(k);
}

static void test_wrong_ca(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *url = server_url();
    _cleanup_free_ char *cmd = rss_xasprintf(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout %s/other.key -out "
        "%s/other.crt >/dev/null 2>&1",
        sim.dir, sim.dir);
    assert_int_equal(system(cmd), 0);
    _cleanup_free_ char *token_line = NULL;
    {
        _cleanup_free_ char *tp = rss_xasprintf("%s/token", sim.dir);
        FILE *f = fopen(tp, "r");
        assert_non_null(f);
        char tok[256] = "";
        assert_non_null(fgets(tok, sizeof(tok), f));
        fclose(f);
        tok[strcspn(tok, "\r\n")] = '\0';
        token_line = rss_xasprintf("token: %s", tok);
    }
    _cleanup_free_ char *ca = rss_xasprintf("certificate-authority: %s/other.crt", sim.dir);
    _cleanup_free_ char *kc = write_kubeconfig("kc-wrong-ca", url, ca, token_line);
    struct rss_kube *k = NULL;
    ok(rss_kube_new(kc, &k, &err), &err);
    _cleanup_free_ char *path = rss_kube_path("v1", NULL, "namespaces", "default", NULL);
    cJSON *got = NULL;
    int r = rss_kube_get(k, path, &got, &err);
    assert_true(r < 0);
    assert_int_equal(rss_error_code(err), RSS_E_UNAVAILABLE);
    _cleanup_free_ char *msg = rss_error_string(err);
    printf("wrong CA: %s\n", msg);
    assert_non_null(strcasestr(msg, "certificate"));
    rss_error_release(&err);
    rss_kube_free(k);

    /* the same wrong CA with insecure-skip-tls-verify connects */
    _cleanup_free_ char *ca2 = rss_xasprintf("insecure-skip-tls-verify: true");
    _cleanup_free_ char *kc2 = write_kubeconfig("kc-insecure", url, ca2, token_line);
    ok(rss_kube_new(kc2, &k, &err), &err);
    ok(rss_kube_get(k, path, &got, &err), &err);
    cJSON_Delete(got);
    rss_kube_free(k);

    /* and the right CA given inline as certificate-authority-data */
    _cleanup_free_ char *b64cmd = rss_xasprintf("base64 -w0 %s/ca.crt", sim.dir);
    FILE *p = popen(b64cmd, "r");
    assert_non_null(p);
    char b64[8192] = "";
    assert_non_null(fgets(b64, sizeof(b64), p));
    pclose(p);
    _cleanup_free_ char *ca3 = rss_xasprintf("certificate-authority-data: %s", b64);
    _cleanup_free_ char *kc3 = write_kubeconfig("kc-cadata", url, ca3, token_line);
    ok(rss_kube_new(kc3, &k, &err), &err);
    got = NULL;
    ok(rss_kube_get(k, path, &got, &err), &err);
    cJSON_Delete(got);
    rss_kube_free(k);
}

/* --- a raw TLS server for answers kubesim never gives: malformed JSON, truncated bodies --- */

struct raw {
    int fd, port;
    SSL_CTX *ctx;
    const char *reply; /* the whole HTTP response to send */
    size_t reply_len;
    atomic_bool stop;
    pthread_t th;
    int served;
};

static void *raw_main(void *arg)
{
    struct raw *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        int c = accept(r->fd, NULL, NULL);
        if (c < 0)
            continue;
        SSL *ssl = SSL_new(r->ctx);
        SSL_set_fd(ssl, c);
        if (SSL_accept(ssl) == 1) {
            char buf[8192];
            size_t n = 0;
            while (n < sizeof(buf) - 1) {
                int k = SSL_read(ssl, buf + n, (int)(sizeof(buf) - 1 - n));
                if (k <= 0)
                    break;
                n += (size_t)k;
                buf[n] = '\0';
                if (strstr(buf, "\r\n\r\n"))
                    break;
            }
            SSL_write(ssl, r->reply, (int)r->reply_len);
            r->served++;
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(c);
    }
    return NULL;
}

static void raw_start(struct raw *r)
{
    r->ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(r->ctx);
    _cleanup_free_ char *crt = rss_xasprintf("%s/server.crt", sim.dir);
    _cleanup_free_ char *key = rss_xasprintf("%s/server.key", sim.dir);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(r->ctx, crt), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(r->ctx, key, SSL_FILETYPE_PEM), 1);
    r->fd = simfix_listen_loopback(8, &r->port);
    assert_true(r->fd >= 0);
    atomic_init(&r->stop, false);
    assert_int_equal(pthread_create(&r->th, NULL, raw_main, r), 0);
}

static void raw_stop(struct raw *r)
{
    atomic_store(&r->stop, true);
    pthread_join(r->th, NULL);
    close(r->fd);
    SSL_CTX_free(r->ctx);
}

static struct rss_kube *raw_client(struct raw *r)
{
    _cleanup_free_ char *url = rss_xasprintf("https://127.0.0.1:%d", r->port);
    _cleanup_free_ char *ca = rss_xasprintf("certificate-authority: %s/ca.crt", sim.dir);
    _cleanup_free_ char *kc = write_kubeconfig("kc-raw", url, ca, "token: raw");
    struct rss_kube *k = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    ok(rss_kube_new(kc, &k, &err), &err);
    rss_kube_set_retries(k, 2, 100);
    return k;
}

static void test_malformed_and_truncated(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    struct raw r = {0};
    raw_start(&r);
    struct rss_kube *k = raw_client(&r);
    cJSON *got = NULL;

    static const char malformed[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 31\r\n"
        "Connection: close\r\n\r\n{\"kind\":\"ConfigMap\",\"metadata\":";
    r.reply = malformed;
    r.reply_len = sizeof(malformed) - 1;
    int rc = rss_kube_get(k, "/api/v1/namespaces/default/configmaps/x", &got, &err);
    assert_true(rc < 0);
    assert_null(got);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    assert_int_equal(err->detail, 200);
    rss_error_release(&err);

    /* Content-Length promises 500 bytes, 20 arrive, then the connection closes */
    static const char truncated[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n"
        "Connection: close\r\n\r\n{\"kind\":\"ConfigMap\",";
    r.reply = truncated;
    r.reply_len = sizeof(truncated) - 1;
    int before = r.served;
    expect_code(rss_kube_get(k, "/api/v1/namespaces/default/configmaps/x", &got, &err), &err,
                RSS_E_UNAVAILABLE);
    assert_int_equal(r.served - before, 2); /* a GET is retried (2 attempts configured) */

    /* an error that is not a Status still maps by its HTTP code */
    static const char html500[] = "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n"
                                  "Connection: close\r\n\r\n<h1>x</h1";
    r.reply = html500;
    r.reply_len = sizeof(html500) - 1;
    expect_code(rss_kube_get(k, "/api/v1/namespaces/default/configmaps/x", &got, &err), &err,
                RSS_E_NOT_FOUND);

    /* a 2xx with an empty body is fine for callers that do not need one */
    static const char empty[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    r.reply = empty;
    r.reply_len = sizeof(empty) - 1;
    got = (cJSON *)1;
    ok(rss_kube_get(k, "/x", &got, &err), &err);
    assert_null(got);

    rss_kube_free(k);
    raw_stop(&r);
}

/* --- watch --- */

struct rec {
    pthread_mutex_t mu;
    char log[1024][128];
    int n;
    int sync_begin, sync_end;
    atomic_bool stop;
    pthread_t th;
    struct rss_kube *k;
    const char *path;
    struct rss_kube_watch_opts opts;
    int ret;
    rss_error_t err;
};

static int rec_fn(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)err;
    struct rec *r = ud;
    static const char *const names[] = {"SYNC_BEGIN", "SYNC_END", "ADDED", "MODIFIED", "DELETED"};
    pthread_mutex_lock(&r->mu);
    if (ev == RSS_KUBE_SYNC_BEGIN)
        r->sync_begin++;
    if (ev == RSS_KUBE_SYNC_END)
        r->sync_end++;
    if (r->n < 1024) {
        const char *name = ev >= RSS_KUBE_ADDED ? jstr(obj, "metadata", "name") : "-";
        const char *v = ev >= RSS_KUBE_ADDED ? jstr(obj, "data", "v") : NULL;
        snprintf(r->log[r->n++], sizeof(r->log[0]), "%s %s %s", names[ev], name ? name : "?", v ? v : "-");
    }
    pthread_mutex_unlock(&r->mu);
    return 0;
}

static void *rec_main(void *arg)
{
    struct rec *r = arg;
    r->ret = rss_kube_watch(r->k, r->path, &r->opts, rec_fn, r, &r->err);
    return NULL;
}

static void rec_start(struct rec *r, struct rss_kube *k, const char *label_selector, const char *rv,
                      long stall_ms)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    atomic_init(&r->stop, false);
    r->k = k;
    r->path = CM_PATH;
    r->opts.label_selector = label_selector;
    r->opts.resource_version = rv;
    r->opts.stall_ms = stall_ms;
    r->opts.stop = &r->stop;
    assert_int_equal(pthread_create(&r->th, NULL, rec_main, r), 0);
}

static void rec_stop(struct rec *r)
{
    atomic_store(&r->stop, true);
    pthread_join(r->th, NULL);
    if (r->ret < 0) {
        _cleanup_free_ char *s = rss_error_string(r->err);
        fail_msg("watch ended with an error: %s", s);
    }
    assert_int_equal(r->ret, 0);
    pthread_mutex_destroy(&r->mu);
}

static int rec_count(struct rec *r, const char *entry)
{
    int c = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->log[i], entry))
            c++;
    pthread_mutex_unlock(&r->mu);
    return c;
}

/* Waits (bounded, for failure only) until `entry` has been seen `times` times. */
static void rec_wait(struct rec *r, const char *entry, int times)
{
    for (int i = 0; i < 3000; i++) {
        if (rec_count(r, entry) >= times)
            return;
        simfix_sleep_ms(10);
    }
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++)
        fprintf(stderr, "  event %d: %s\n", i, r->log[i]);
    pthread_mutex_unlock(&r->mu);
    fail_msg("watch event '%s' x%d never came", entry, times);
}

static void set_v(const char *name, const char *v)
{
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", name, NULL);
    _cleanup_json_ cJSON *p = parsef("{\"data\":{\"v\":\"%s\"}}", v);
    ok(rss_kube_merge_patch(kube, path, p, NULL, &err), &err);
}

static void test_watch_events(void **state)
{
    (void)state;
    _cleanup_error_ rss_error_t err = NULL;
    cJSON_Delete(create_cm("w-pre", "\"w\":\"ev\"", "0"));
    struct rec r;
    rec_start(&r, kube, "w=ev", NULL, 0);
    rec_wait(&r, "SYNC_END - -", 1);
    assert_int_equal(rec_count(&r, "ADDED w-pre 0"), 1); /* from the list */
    cJSON_Delete(create_cm("w-new", "\"w\":\"ev\"", "1"));
    cJSON_Delete(create_cm("w-other", "\"w\":\"other\"", "1")); /* not selected */
    set_v("w-new", "2");
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", "w-new", NULL);
    ok(rss_kube_delete(kube, path, NULL, NULL, &err), &err);
    rec_wait(&r, "DELETED w-new 2", 1);
    rec_stop(&r);
    assert_int_equal(r.sync_begin, 1);
    assert_int_equal(rec_count(&r, "ADDED w-new 1"), 1);
    assert_int_equal(rec_count(&r, "MODIFIED w-new 2"), 1);
    for (int i = 0; i < r.n; i++)
        assert_null(strstr(r.log[i], "w-other"));
    /* order: list, then the changes as they happened */
    int added = -1, mod = -1, del = -1;
    for (int i = 0; i < r.n; i++) {
        if (!strcmp(r.log[i], "ADDED w-new 1"))
            added = i;
        if (!strcmp(r.log[i], "MODIFIED w-new 2"))
            mod = i;
        if (!strcmp(r.log[i], "DELETED w-new 2"))
            del = i;
    }
    assert_true(added < mod && mod < del);
}

static void test_watch_cut_resume(void **state)
{
    (void)state;
    cJSON_Delete(create_cm("cut", "\"w\":\"cut\"", "0"));
    struct rec r;
    rec_start(&r, kube, "w=cut", NULL, 0);
    rec_wait(&r, "SYNC_END - -", 1);
    for (int round = 1; round <= 3; round++) {
        char v[16];
        snprintf(v, sizeof(v), "%d", round);
        set_v("cut", v);
        /* cut every watch stream mid-event; the event comes again after the resume */
        assert_int_equal(simfix_ctl(kube, "POST", "/_sim/watch-cut", NULL, NULL), 0);
        char want[64];
        snprintf(want, sizeof(want), "MODIFIED cut %d", round);
        rec_wait(&r, want, 1);
    }
    set_v("cut", "after");
    rec_wait(&r, "MODIFIED cut after", 1);
    rec_stop(&r);
    /* resumed from the last resourceVersion: no re-list, no duplicate, nothing lost */
    assert_int_equal(r.sync_begin, 1);
    for (int round = 1; round <= 3; round++) {
        char want[64];
        snprintf(want, sizeof(want), "MODIFIED cut %d", round);
        assert_int_equal(rec_count(&r, want), 1);
    }
}

static void test_watch_410_relist(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *c = create_cm("gone", "\"w\":\"gone\"", "0");
    const char *old_rv = jstr(c, "metadata", "resourceVersion");
    set_v("gone", "1");
    set_v("gone", "2");
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/compact", NULL, NULL), 0);

    /* 410 as the server sends it for a too-old resourceVersion (ERROR event or plain 410) */
    struct rec r;
    rec_start(&r, kube, "w=gone", old_rv, 0);
    rec_wait(&r, "SYNC_END - -", 1);
    assert_int_equal(rec_count(&r, "ADDED gone 2"), 1);
    assert_int_equal(rec_count(&r, "MODIFIED gone 1"), 0);
    set_v("gone", "3");
    rec_wait(&r, "MODIFIED gone 3", 1);
    rec_stop(&r);
    assert_int_equal(r.sync_begin, 1);

    /* 410 as a plain HTTP status on the watch request */
    _cleanup_json_ cJSON *now = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", "gone", NULL);
    ok(rss_kube_get(kube, path, &now, &err), &err);
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/fail", "count=1&code=410&verb=GET&path=" CM_PATH, NULL),
                     0);
    rec_start(&r, kube, "w=gone", jstr(now, "metadata", "resourceVersion"), 0);
    rec_wait(&r, "SYNC_END - -", 1);
    assert_int_equal(rec_count(&r, "ADDED gone 3"), 1);
    set_v("gone", "4");
    rec_wait(&r, "MODIFIED gone 4", 1);
    rec_stop(&r);
}

static void test_watch_stall(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *c = create_cm("stall", "\"w\":\"stall\"", "0");
    /* the first watch request hangs for a minute without a byte; the stall detector (1 s) must give up
     * on it and reconnect long before that */
    assert_int_equal(simfix_ctl(kube, "POST", "/_sim/stall", "count=1&ms=60000&verb=GET&path=" CM_PATH, NULL),
                     0);
    struct rec r;
    rec_start(&r, kube, "w=stall", jstr(c, "metadata", "resourceVersion"), 1000);
    simfix_sleep_ms(200);
    set_v("stall", "1");
    rec_wait(&r, "MODIFIED stall 1", 1);
    rec_stop(&r);
    assert_int_equal(r.sync_begin, 0); /* resumed, never re-listed */
}

/* --- many watches ended at once --- */

/* 100 watches on one client, ended by one stop flag at once: all return, and the client serves a
 * request after (the multiplexer finishes every transfer ended in one turn; it collected them in a
 * 64-slot array before). */
enum { MANY = 100 };
static atomic_bool many_stop;
static atomic_int many_synced;

static int many_fn(void *ud, enum rss_kube_event ev, const cJSON *obj, rss_error_t *err)
{
    (void)ud, (void)obj, (void)err;
    if (ev == RSS_KUBE_SYNC_END)
        atomic_fetch_add(&many_synced, 1);
    return 0;
}

static void *many_main(void *arg)
{
    int *ret = arg;
    struct rss_kube_watch_opts o = {.label_selector = "w=many", .stop = &many_stop};
    rss_error_t err = NULL;
    *ret = rss_kube_watch(kube, CM_PATH, &o, many_fn, NULL, &err);
    rss_error_release(&err);
    return NULL;
}

static void test_many_watches_end(void **state)
{
    (void)state;
    pthread_t th[MANY];
    int ret[MANY];
    atomic_store(&many_stop, false);
    atomic_store(&many_synced, 0);
    for (int i = 0; i < MANY; i++)
        assert_int_equal(pthread_create(&th[i], NULL, many_main, &ret[i]), 0);
    for (int i = 0; i < 3000 && atomic_load(&many_synced) < MANY; i++)
        simfix_sleep_ms(10);
    assert_int_equal(atomic_load(&many_synced), MANY);
    atomic_store(&many_stop, true);
    for (int i = 0; i < MANY; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(ret[i], 0);
    }
    _cleanup_error_ rss_error_t err = NULL;
    _cleanup_json_ cJSON *list = NULL;
    ok(rss_kube_list(kube, CM_PATH, NULL, &list, &err), &err);
}

/* --- many threads on one client --- */

struct worker {
    int id;
    int failures;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    char name[32];
    snprintf(name, sizeof(name), "mt-%d", w->id);
    _cleanup_free_ char *path = rss_kube_path("v1", "default", "configmaps", name, NULL);
    for (int i = 0; i < 40; i++) {
        _cleanup_error_ rss_error_t err = NULL;
        _cleanup_json_ cJSON *got = NULL;
        _cleanup_json_ cJSON *p = parsef("{\"data\":{\"v\":\"%d\"}}", i);
        if (rss_kube_merge_patch(kube, path, p, NULL, &err) < 0 || rss_kube_get(kube, path, &got, &err) < 0) {
            w->failures++;
            continue;
        }
        const char *v = jstr(got, "data", "v");
        if (!v || atoi(v) != i)
            w->failures++;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "mt-%d", i);
        cJSON_Delete(create_cm(name, "\"w\":\"mt\"", "-"));
        w[i] = (struct worker){.id = i};
    }
    struct rec r;
    rec_start(&r, kube, "w=mt", NULL, 0);
    /* The writers start once the watch has listed: a writer done before the LIST would show its last
     * value as ADDED, never as MODIFIED (seen once on a loaded machine). */
    rec_wait(&r, "SYNC_END - -", 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    for (int i = 0; i < 4; i++) {
        char want[64];
        snprintf(want, sizeof(want), "MODIFIED mt-%d 39", i);
        rec_wait(&r, want, 1);
    }
    rec_stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud),
        cmocka_unit_test(test_status_subresource),
        cmocka_unit_test(test_list_paging_selectors),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_timeout_and_cap),
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_wrong_ca),
        cmocka_unit_test(test_malformed_and_truncated),
        cmocka_unit_test(test_watch_events),
        cmocka_unit_test(test_watch_cut_resume),
        cmocka_unit_test(test_watch_410_relist),
        cmocka_unit_test(test_watch_stall),
        cmocka_unit_test(test_many_watches_end),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
