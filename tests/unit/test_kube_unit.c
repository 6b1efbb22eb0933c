/* test_kube_unit.c -- the Kubernetes client's pure parts: Status decoding, retry decisions, kubeconfig and
 * YAML, MicroTime, paths, watch line framing, token caching. No server needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/kube.h"
#include "kube_internal.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/kube-unit-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    return rss_xstrdup(tmpl);
}

static void rm_rf(const char *dir)
{
    _cleanup_free_ char *cmd = rss_xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* --- paths and queries --- */

static void test_path(void **state)
{
    (void)state;
    struct {
        const char *gv, *ns, *plural, *name, *sub, *want;
    } cases[] = {
        {"v1", "ns", "pods", "p", "status", "/api/v1/namespaces/ns/pods/p/status"},
        {"v1", NULL, "nodes", NULL, NULL, "/api/v1/nodes"},
        {"v1", NULL, "namespaces", "kube-system", NULL, "/api/v1/namespaces/kube-system"},
        {"apps/v1", "db", "statefulsets", "galera", "scale",
         "/apis/apps/v1/namespaces/db/statefulsets/galera/scale"},
        {"coordination.k8s.io/v1", NULL, "leases", NULL, NULL, "/apis/coordination.k8s.io/v1/leases"},
        {"clusterlabs.org/v1alpha1", "x", "replicatedstatefulsets", NULL, NULL,
         "/apis/clusterlabs.org/v1alpha1/namespaces/x/replicatedstatefulsets"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        _cleanup_free_ char *p =
            rss_kube_path(cases[i].gv, cases[i].ns, cases[i].plural, cases[i].name, cases[i].sub);
        assert_string_equal(p, cases[i].want);
    }
}

static void test_query(void **state)
{
    (void)state;
    _cleanup_free_ char *q = NULL;
    kube_query_add(&q, "labelSelector", "app=web,tier notin (db)");
    kube_query_add(&q, "fieldSelector", "spec.nodeName=n1");
    kube_query_add(&q, "continue", "a/b+c==");
    assert_string_equal(q,
                        "labelSelector=app%3Dweb%2Ctier%20notin%20%28db%29&fieldSelector=spec.nodeName%3Dn1&"
                        "continue=a%2Fb%2Bc%3D%3D");
}

/* --- times --- */

static void test_microtime(void **state)
{
    (void)state;
    char buf[RSS_TIME_LEN];
    struct timespec ts = {.tv_sec = 1735787045, .tv_nsec = 123456789}; /* 2025-01-02T03:04:05 */
    assert_string_equal(rss_time_micro(buf, &ts), "2025-01-02T03:04:05.123456Z");
    ts.tv_nsec = 0;
    assert_string_equal(rss_time_micro(buf, &ts), "2025-01-02T03:04:05.000000Z");
    ts.tv_nsec = 999999999;
    assert_string_equal(rss_time_micro(buf, &ts), "2025-01-02T03:04:05.999999Z");
    ts.tv_nsec = 1000; /* 1 us: leading zeros kept */
    assert_string_equal(rss_time_micro(buf, &ts), "2025-01-02T03:04:05.000001Z");
    assert_string_equal(rss_time_seconds(buf, &ts), "2025-01-02T03:04:05Z");
    /* now: always 27 characters with exactly 6 fraction digits */
    rss_time_micro(buf, NULL);
    assert_int_equal(strlen(buf), 27);
    assert_int_equal(buf[19], '.');
    assert_int_equal(buf[26], 'Z');
}

static void test_parse_time(void **state)
{
    (void)state;
    struct timespec ts;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(rss_time_parse("2025-01-02T03:04:05.123456Z", &ts, &err), 0);
    assert_int_equal(ts.tv_sec, 1735787045);
    assert_int_equal(ts.tv_nsec, 123456000);
    assert_int_equal(rss_time_parse("2025-01-02T03:04:05Z", &ts, &err), 0);
    assert_int_equal(ts.tv_nsec, 0);
    assert_int_equal(rss_time_parse("2025-01-02T05:04:05.5+02:00", &ts, &err), 0);
    assert_int_equal(ts.tv_sec, 1735787045);
    assert_int_equal(ts.tv_nsec, 500000000);
    const char *bad[] = {"2025-01-02",
                         "2025-01-02T03:04:05",
                         "2025-13-02T03:04:05Z",
                         "2025-01-02T03:04:05.Z",
                         "2025-01-02T03:04:05Zjunk",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_true(rss_time_parse(bad[i], &ts, &err) < 0);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        rss_error_release(&err);
    }
    /* round trip */
    char buf[RSS_TIME_LEN];
    struct timespec now, back;
    clock_gettime(CLOCK_REALTIME, &now);
    assert_int_equal(rss_time_parse(rss_time_micro(buf, &now), &back, &err), 0);
    assert_int_equal(back.tv_sec, now.tv_sec);
    assert_int_equal(back.tv_nsec, now.tv_nsec / 1000 * 1000);
}

/* --- error conversion --- */

static void expect_http(long http, const char *body, enum rss_errc code, int detail, const char *substr)
{
    _cleanup_error_ rss_error_t err = NULL;
    assert_true(kube_http_error(http, body, body ? strlen(body) : 0, "GET /x", &err) < 0);
    assert_int_equal(rss_error_code(err), code);
    assert_int_equal(err->detail, detail);
    if (substr) {
        _cleanup_free_ char *s = rss_error_string(err);
        assert_non_null(strstr(s, substr));
    }
}

static void test_status_decoding(void **state)
{
    (void)state;
    expect_http(
        404,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"pods \\\"x\\\" not "
        "found\",\"reason\":\"NotFound\",\"code\":404}",
        RSS_E_NOT_FOUND, 404, "pods \"x\" not found");
    expect_http(409, "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409,\"message\":\"exists\"}",
                RSS_E_EXISTS, 409, "AlreadyExists");
    expect_http(409, "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}", RSS_E_CONFLICT, 409,
                "Conflict");
    expect_http(410, "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410}", RSS_E_GONE, 410, NULL);
    expect_http(422, "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"code\":422}", RSS_E_INVALID, 422, NULL);
    expect_http(400, NULL, RSS_E_INVALID, 400, "HTTP 400");
    expect_http(415, "{\"kind\":\"Status\",\"reason\":\"UnsupportedMediaType\",\"code\":415}", RSS_E_INVALID,
                415, NULL);
    expect_http(401, "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}", RSS_E_UNAUTHORIZED,
                401, NULL);
    expect_http(403, "not json at all", RSS_E_UNAUTHORIZED, 403, NULL);
    expect_http(429, "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}", RSS_E_UNAVAILABLE,
                429, NULL);
    expect_http(503, "<html>bad gateway</html>", RSS_E_UNAVAILABLE, 503, "HTTP 503");
    expect_http(413, NULL, RSS_E_TOO_LARGE, 413, NULL);
    /* A watch ERROR event: HTTP said 200, the Status says 410. */
    expect_http(200,
                "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,"
                "\"message\":\"too old resource version: 1 (5)\"}",
                RSS_E_GONE, 410, "too old resource version");
    /* Something that is not a Status keeps the HTTP code. */
    expect_http(404, "{\"kind\":\"Pod\",\"code\":500}", RSS_E_NOT_FOUND, 404, NULL);
}

static void test_curl_errors(void **state)
{
    (void)state;
    struct {
        int code;
        bool too_large;
        enum rss_errc want;
    } cases[] = {
        {CURLE_OPERATION_TIMEDOUT, false, RSS_E_TIMEOUT},
        {CURLE_COULDNT_CONNECT, false, RSS_E_UNAVAILABLE},
        {CURLE_PEER_FAILED_VERIFICATION, false, RSS_E_UNAVAILABLE},
        {CURLE_SSL_CONNECT_ERROR, false, RSS_E_UNAVAILABLE},
        {CURLE_PARTIAL_FILE, false, RSS_E_UNAVAILABLE},
        {CURLE_WRITE_ERROR, true, RSS_E_TOO_LARGE},
        {CURLE_OUT_OF_MEMORY, false, RSS_E_INTERNAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        _cleanup_error_ rss_error_t err = NULL;
        assert_true(kube_curl_error(cases[i].code, "", cases[i].too_large, "GET /x", &err) < 0);
        assert_int_equal(rss_error_code(err), cases[i].want);
    }
}

static void test_jitter(void **state)
{
    (void)state;
    const long in[] = {0, 1, 2, 200, 5000, 30000};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        long lo = in[i], hi = 0;
        for (int k = 0; k < 2000; k++) {
            long d = kube_jitter_ms(in[i]);
            assert_true(d >= in[i] / 2 && d <= in[i]);
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
        /* Spread over the upper half, not one value: 2,000 draws reach both ends' tenths. */
        if (in[i] >= 200) {
            assert_true(lo < in[i] / 2 + in[i] / 10);
            assert_true(hi > in[i] - in[i] / 10);
        }
    }
}

static void test_retry_decisions(void **state)
{
    (void)state;
    /* 429 with Retry-After: wait what the server said, bounded by max backoff. */
    assert_int_equal(kube_retry_delay_ms(1, 4, 429, 0, false, 2, 5000), 2000);
    assert_int_equal(kube_retry_delay_ms(1, 4, 429, 0, false, 3600, 5000), 5000);
    assert_int_equal(kube_retry_delay_ms(1, 4, 503, 0, false, 0, 5000), 100);
    /* 5xx without Retry-After: exponential from 200 ms, capped */
    assert_int_equal(kube_retry_delay_ms(1, 10, 500, 0, false, -1, 5000), 200);
    assert_int_equal(kube_retry_delay_ms(2, 10, 500, 0, false, -1, 5000), 400);
    assert_int_equal(kube_retry_delay_ms(3, 10, 502, 0, false, -1, 5000), 800);
    assert_int_equal(kube_retry_delay_ms(9, 10, 504, 0, false, -1, 5000), 5000);
    /* attempts exhausted */
    assert_int_equal(kube_retry_delay_ms(4, 4, 500, 0, false, -1, 5000), -1);
    /* no retry on client errors, nor 501 */
    for (long c = 400; c < 500; c++)
        if (c != 429)
            assert_int_equal(kube_retry_delay_ms(1, 4, c, 0, true, -1, 5000), -1);
    assert_int_equal(kube_retry_delay_ms(1, 4, 501, 0, true, -1, 5000), -1);
    /* transport: connect failures always, broken exchanges only when idempotent, timeouts never */
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_COULDNT_CONNECT, false, -1, 5000), 200);
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_RECV_ERROR, true, -1, 5000), 200);
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_RECV_ERROR, false, -1, 5000), -1);
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_GOT_NOTHING, false, -1, 5000), -1);
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_OPERATION_TIMEDOUT, true, -1, 5000), -1);
    assert_int_equal(kube_retry_delay_ms(1, 4, 0, CURLE_PEER_FAILED_VERIFICATION, true, -1, 5000), -1);
}

/* --- watch line framing --- */

struct lines {
    char got[8][128];
    int n;
    int fail_at; /* fail on this line number (1-based), 0 = never */
};

static int collect(void *ud, char *line, size_t len, rss_error_t *err)
{
    struct lines *l = ud;
    assert_true(len < sizeof(l->got[0]));
    assert_int_equal(strlen(line), len);
    if (l->fail_at && l->n + 1 == l->fail_at)
        return rss_error_make(err, RSS_E_INVALID, 0, "consumer failed");
    memcpy(l->got[l->n], line, len + 1);
    l->n++;
    return 0;
}

static void test_framer(void **state)
{
    (void)state;
    struct kube_framer f = {.max = 64};
    struct lines l = {0};
    _cleanup_error_ rss_error_t err = NULL;
    /* an event split over three reads, then two events and a partial one in one read */
    assert_int_equal(kube_framer_feed(&f, "{\"a\"", 4, collect, &l, &err), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(kube_framer_feed(&f, ":1", 2, collect, &l, &err), 0);
    assert_int_equal(kube_framer_feed(&f, "}\n", 2, collect, &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.got[0], "{\"a\":1}");
    const char *chunk = "{\"b\":2}\n\n  \n{\"c\":3}\n{\"d\":";
    assert_int_equal(kube_framer_feed(&f, chunk, strlen(chunk), collect, &l, &err), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.got[1], "{\"b\":2}");
    assert_string_equal(l.got[2], "{\"c\":3}");
    /* the stream is cut: the partial line must never be delivered, even when more bytes follow a reset */
    kube_framer_reset(&f);
    assert_int_equal(kube_framer_feed(&f, "{\"e\":5}\n", 8, collect, &l, &err), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.got[3], "{\"e\":5}");
    /* a line over the cap is an error, not a truncated event */
    char big[100];
    memset(big, 'x', sizeof(big));
    assert_true(kube_framer_feed(&f, big, sizeof(big), collect, &l, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_TOO_LARGE);
    assert_int_equal(l.n, 4);
    rss_error_release(&err);
    /* a consumer failure stops the feed */
    kube_framer_reset(&f);
    struct lines l2 = {.fail_at = 2};
    assert_true(kube_framer_feed(&f, "1\n2\n3\n", 6, collect, &l2, &err) < 0);
    assert_int_equal(l2.n, 1);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    kube_framer_free(&f);
}

/* --- YAML, kubeconfig --- */

static const char kubectl_style[] = "apiVersion: v1\n"
                                    "clusters:\n"
                                    "- cluster:\n"
                                    "    certificate-authority-data: aGVsbG8=\n"
                                    "    server: https://10.0.0.1:6443/\n"
                                    "  name: prod\n"
                                    "- cluster:\n"
                                    "    certificate-authority: ca.crt   # relative to the file\n"
                                    "    server: \"https://127.0.0.1:8443\"\n"
                                    "    insecure-skip-tls-verify: true\n"
                                    "  name: 'dev # not a comment'\n"
                                    "contexts:\n"
                                    "- context:\n"
                                    "    cluster: prod\n"
                                    "    user: admin\n"
                                    "  name: prod\n"
                                    "- context:\n"
                                    "    cluster: 'dev # not a comment'\n"
                                    "    namespace: team-a\n"
                                    "    user: dev\n"
                                    "  name: dev\n"
                                    "current-context: dev\n"
                                    "kind: Config\n"
                                    "preferences: {}\n"
                                    "users:\n"
                                    "- name: admin\n"
                                    "  user:\n"
                                    "    client-certificate-data: Y2VydA==\n"
                                    "    client-key-data: a2V5\n"
                                    "- name: dev\n"
                                    "  user:\n"
                                    "    tokenFile: secrets/token\n";

static void test_yaml(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *j = NULL;
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(kube_yaml_parse(kubectl_style, &j, &err), 0);
    _cleanup_free_ char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "clusters"));
    assert_string_equal(
        s, "[{\"cluster\":{\"certificate-authority-data\":\"aGVsbG8=\",\"server\":\"https://"
           "10.0.0.1:6443/\"},\"name\":\"prod\"},{\"cluster\":{\"certificate-authority\":\"ca.crt\","
           "\"server\":\"https://127.0.0.1:8443\",\"insecure-skip-tls-verify\":\"true\"},\"name\":"
           "\"dev # not a comment\"}]");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(j, "preferences")));

    /* flow style over several lines, indented sequences, escapes, null, nested lists */
    const char *flow = "# leading comment\n"
                       "---\n"
                       "contexts: [{name: ctx, context: {cluster: c1,\n"
                       "           user: u1}}]\n"
                       "list:\n"
                       "  - a\n"
                       "  - \"b\\tc\\u00e9\"\n"
                       "  - 'it''s'\n"
                       "  -\n"
                       "    - nested\n"
                       "empty:\n"
                       "tilde: ~\n"
                       "url: http://x:1/a#frag\n";
    cJSON_Delete(j);
    j = NULL;
    assert_int_equal(kube_yaml_parse(flow, &j, &err), 0);
    _cleanup_free_ char *t = cJSON_PrintUnformatted(j);
    assert_string_equal(
        t, "{\"contexts\":[{\"name\":\"ctx\",\"context\":{\"cluster\":\"c1\",\"user\":\"u1\"}}],"
           "\"list\":[\"a\",\"b\\tc\xc3\xa9\",\"it's\",[\"nested\"]],\"empty\":null,\"tilde\":null,"
           "\"url\":\"http://x:1/a#frag\"}");

    /* What the hand-written subset rejected and libyaml reads: block scalars, anchors and aliases,
     * several documents (the first one counts, as in client-go). */
    const char *more = "certificate: |\n"
                       "  line one\n"
                       "  line two\n"
                       "folded: >\n"
                       "  a\n"
                       "  b\n"
                       "base: &cl {server: 'https://h:1', insecure-skip-tls-verify: true}\n"
                       "clusters:\n"
                       "- {name: a, cluster: *cl}\n"
                       "- {name: b, cluster: *cl}\n"
                       "---\n"
                       "second: document\n";
    cJSON_Delete(j);
    j = NULL;
    assert_int_equal(kube_yaml_parse(more, &j, &err), 0);
    _cleanup_free_ char *u = cJSON_PrintUnformatted(j);
    assert_string_equal(
        u, "{\"certificate\":\"line one\\nline two\\n\",\"folded\":\"a b\\n\",\"base\":{\"server\":"
           "\"https://h:1\",\"insecure-skip-tls-verify\":\"true\"},\"clusters\":[{\"name\":\"a\","
           "\"cluster\":{\"server\":\"https://h:1\",\"insecure-skip-tls-verify\":\"true\"}},{\"name\":"
           "\"b\",\"cluster\":{\"server\":\"https://h:1\",\"insecure-skip-tls-verify\":\"true\"}}]}");

    /* A billion-laughs document is refused, not expanded. */
    char laughs[2048] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'j'; c++) {
        char line[128];
        snprintf(line, sizeof(line), "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c,
                 c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
        strncat(laughs, line, sizeof(laughs) - strlen(laughs) - 1);
    }
    const char *bad[] = {"a:\n\tb: 1\n",  "a: [1, 2\n", "a: \"open\n",  "a: 1\na: 2\n", "a: *ref\n",
                         "a: 1\n b: 2\n", "",           "? [k]\n: v\n", "a: &x [*x]\n", laughs};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *x = NULL;
        assert_true(kube_yaml_parse(bad[i], &x, &err) < 0);
        assert_null(x);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        rss_error_release(&err);
    }
}

static void test_kubeconfig(void **state)
{
    (void)state;
    struct kube_config c = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(kube_config_parse_kubeconfig(kubectl_style, "/etc/kube", &c, &err), 0);
    assert_string_equal(c.server, "https://127.0.0.1:8443");
    assert_string_equal(c.ns, "team-a");
    assert_string_equal(c.ca_file, "/etc/kube/ca.crt");
    assert_true(c.insecure);
    assert_string_equal(c.token_file, "/etc/kube/secrets/token");
    assert_null(c.token);
    assert_null(c.cert_data);

    /* the other context: inline CA and client cert/key, trailing slash trimmed, default namespace */
    const char *at = strstr(kubectl_style, "current-context: dev\n");
    _cleanup_free_ char *prod2 = rss_xasprintf("%.*scurrent-context: prod\n%s", (int)(at - kubectl_style),
                                               kubectl_style, at + strlen("current-context: dev\n"));
    assert_int_equal(kube_config_parse_kubeconfig(prod2, "/etc/kube", &c, &err), 0);
    assert_string_equal(c.server, "https://10.0.0.1:6443");
    assert_string_equal(c.ns, "default");
    assert_int_equal(c.ca_len, 5);
    assert_memory_equal(c.ca_data, "hello", 5);
    assert_null(c.ca_file);
    assert_false(c.insecure);
    assert_memory_equal(c.cert_data, "cert", 4);
    assert_memory_equal(c.key_data, "key", 3);

    /* JSON works too, with real booleans and a static token */
    const char *json =
        "{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\","
        "\"user\":\"u\",\"namespace\":\"n\"}}],\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":"
        "\"https://h:1\",\"insecure-skip-tls-verify\":true}}],\"users\":[{\"name\":\"u\",\"user\":{"
        "\"token\":\"abc\"}}]}";
    assert_int_equal(kube_config_parse_kubeconfig(json, NULL, &c, &err), 0);
    assert_string_equal(c.token, "abc");
    assert_true(c.insecure);
    assert_string_equal(c.ns, "n");

    const char *bad[] = {
        "kind: Config\n",                                                      /* no current-context */
        "current-context: a\ncontexts: []\n",                                  /* context missing */
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n", /* cluster missing */
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: "
        "{}\n",
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: "
        "{server: 'https://h', certificate-authority-data: '!!!'}\n",
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  "
        "cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {exec: {command: aws}}\n",
        "{\"current-context\": ",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_true(kube_config_parse_kubeconfig(bad[i], NULL, &c, &err) < 0);
        assert_int_equal(rss_error_code(err), RSS_E_INVALID);
        rss_error_release(&err);
    }
    /* a failed parse leaves the previous config alone */
    assert_string_equal(c.token, "abc");
    kube_config_clear(&c);

    /* An exec user is kept for the client to run (kube_exec.c); a command with a slash is a path beside
     * the kubeconfig, one without is looked up in PATH. An old apiVersion and auth-provider are refused
     * as unsupported. */
    const char *head =
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
        "name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: ";
    _cleanup_free_ char *rel =
        rss_xasprintf("%s{exec: {apiVersion: client.authentication.k8s.io/v1, command: "
                      "bin/login, args: [a], interactiveMode: Never}}\n",
                      head);
    assert_int_equal(kube_config_parse_kubeconfig(rel, "/etc/kube", &c, &err), 0);
    assert_non_null(c.exec);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c.exec, "command")),
                        "/etc/kube/bin/login");
    assert_null(c.token);
    kube_config_clear(&c);
    _cleanup_free_ char *path = rss_xasprintf("%s{exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                                              "command: aws}}\n",
                                              head);
    assert_int_equal(kube_config_parse_kubeconfig(path, "/etc/kube", &c, &err), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c.exec, "command")), "aws");
    kube_config_clear(&c);
    _cleanup_free_ char *old = rss_xasprintf("%s{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
                                             "command: aws}}\n",
                                             head);
    _cleanup_free_ char *ap = rss_xasprintf("%s{auth-provider: {name: oidc}}\n", head);
    const char *unsupported[] = {old, ap};
    for (size_t i = 0; i < 2; i++) {
        assert_true(kube_config_parse_kubeconfig(unsupported[i], NULL, &c, &err) < 0);
        assert_int_equal(rss_error_code(err), RSS_E_UNSUPPORTED);
        rss_error_release(&err);
    }
}

static void test_in_cluster(void **state)
{
    (void)state;
    _cleanup_free_ char *dir = tmpdir();
    _cleanup_free_ char *tok = rss_xasprintf("%s/token", dir);
    _cleanup_free_ char *ns = rss_xasprintf("%s/namespace", dir);
    struct kube_config c = {0};
    _cleanup_error_ rss_error_t err = NULL;

    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_true(kube_config_in_cluster(dir, &c, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    rss_error_release(&err);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    unsetenv("POD_NAMESPACE");
    /* no token file yet */
    assert_true(kube_config_in_cluster(dir, &c, &err) < 0);
    rss_error_release(&err);
    write_file(tok, "tok1\n");
    write_file(ns, "  team-b\n");
    assert_int_equal(kube_config_in_cluster(dir, &c, &err), 0);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.ns, "team-b");
    assert_string_equal(c.token_file, tok);
    _cleanup_free_ char *ca = rss_xasprintf("%s/ca.crt", dir);
    assert_string_equal(c.ca_file, ca);

    setenv("POD_NAMESPACE", "override", 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    assert_int_equal(kube_config_in_cluster(dir, &c, &err), 0);
    assert_string_equal(c.ns, "override");
    assert_string_equal(c.server, "https://10.96.0.1:443");
    kube_config_clear(&c);

    /* the whole client: in-cluster through RSS_SERVICEACCOUNT_DIR, token re-read only when due or forced */
    setenv("RSS_SERVICEACCOUNT_DIR", dir, 1);
    unsetenv("KUBECONFIG");
    struct rss_kube *k = NULL;
    assert_int_equal(rss_kube_new(NULL, &k, &err), 0);
    assert_string_equal(rss_kube_namespace(k), "override");
    assert_string_equal(rss_kube_server(k), "https://10.96.0.1:443");
    _cleanup_free_ char *t1 = kube_token(k, false);
    assert_string_equal(t1, "tok1");
    write_file(tok, "tok2\n");
    _cleanup_free_ char *t2 = kube_token(k, false);
    assert_string_equal(t2, "tok1"); /* cached for a minute */
    _cleanup_free_ char *t3 = kube_token(k, true);
    assert_string_equal(t3, "tok2"); /* what a 401 does */
    unlink(tok);
    _cleanup_free_ char *t4 = kube_token(k, true);
    assert_string_equal(t4, "tok2"); /* a missing file keeps the last token */
    rss_kube_free(k);
    unsetenv("RSS_SERVICEACCOUNT_DIR");
    unsetenv("POD_NAMESPACE");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");

    /* KUBECONFIG: the first readable file of the list */
    _cleanup_free_ char *kc = rss_xasprintf("%s/config", dir);
    write_file(kc, "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
                   "name: c\n  cluster: {server: 'https://h:6443'}\nusers:\n- name: u\n  user: {token: t}\n");
    _cleanup_free_ char *env = rss_xasprintf("%s/missing:%s", dir, kc);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(rss_kube_new(NULL, &k, &err), 0);
    assert_string_equal(rss_kube_server(k), "https://h:6443");
    _cleanup_free_ char *t5 = kube_token(k, true);
    assert_string_equal(t5, "t");
    rss_kube_free(k);
    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    assert_true(rss_kube_new(NULL, &k, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    unsetenv("KUBECONFIG");
    rm_rf(dir);
}

/* kubectl's loading rules (kube_config_merge.c): the KUBECONFIG list merged, first file wins, relative
 * paths against the file that names them, --context, --kubeconfig alone, ~/.kube/config. */
static void test_kubeconfig_merge(void **state)
{
    (void)state;
    _cleanup_free_ char *dir = tmpdir();
    _cleanup_free_ char *sub = rss_xasprintf("%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    _cleanup_free_ char *a = rss_xasprintf("%s/a", dir), *b = rss_xasprintf("%s/b", sub);
    /* a: the current context (namespace apps) uses cluster c and user u, which only b defines; a
     * context `other` of its own wins over b's of the same name. */
    write_file(a,
               "current-context: mine\ncontexts:\n- name: mine\n  context: {cluster: c, user: u, namespace: "
               "apps}\n- name: other\n  context: {cluster: c, user: u, namespace: from-a}\n");
    write_file(b,
               "current-context: theirs\ncontexts:\n- name: other\n  context: {cluster: c, user: u, "
               "namespace: from-b}\n- name: theirs\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n "
               " cluster: {server: 'https://h:6443', certificate-authority: ca.crt}\nusers:\n- name: u\n  "
               "user: {tokenFile: tok}\n");
    _cleanup_free_ char *env = rss_xasprintf("%s:%s/missing:%s", a, dir, b);
    setenv("KUBECONFIG", env, 1);
    struct kube_config c = {0};
    _cleanup_error_ rss_error_t err = NULL;
    assert_int_equal(kube_config_load_merged(NULL, NULL, &c, &err), 0);
    assert_string_equal(c.server, "https://h:6443");
    assert_string_equal(c.ns, "apps");
    _cleanup_free_ char *ca = rss_xasprintf("%s/ca.crt", sub), *tok = rss_xasprintf("%s/tok", sub);
    assert_string_equal(c.ca_file, ca); /* relative to b, which named it */
    assert_string_equal(c.token_file, tok);
    kube_config_clear(&c);
    assert_int_equal(kube_config_load_merged(NULL, "other", &c, &err), 0);
    assert_string_equal(c.ns, "from-a");
    kube_config_clear(&c);
    assert_int_equal(kube_config_load_merged(NULL, "theirs", &c, &err), 0);
    assert_string_equal(c.ns, "default");
    kube_config_clear(&c);
    assert_true(kube_config_load_merged(NULL, "nope", &c, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    /* --kubeconfig: that file alone (b's own current context); it must exist. */
    assert_int_equal(kube_config_load_merged(b, NULL, &c, &err), 0);
    assert_string_equal(c.ns, "default");
    kube_config_clear(&c);
    assert_true(kube_config_load_merged(a, NULL, &c, &err) < 0); /* a alone has no cluster c */
    rss_error_release(&err);
    _cleanup_free_ char *missing = rss_xasprintf("%s/missing", dir);
    assert_true(kube_config_load_merged(missing, NULL, &c, &err) < 0);
    assert_int_not_equal(rss_error_code(err), RSS_E_NOT_FOUND); /* not "fall back to in-cluster" */
    rss_error_release(&err);
    /* No KUBECONFIG: ~/.kube/config, else nothing to load. */
    unsetenv("KUBECONFIG");
    const char *home = getenv("HOME");
    _cleanup_free_ char *saved = home ? rss_xstrdup(home) : NULL;
    setenv("HOME", dir, 1);
    assert_true(kube_config_load_merged(NULL, NULL, &c, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    rss_error_release(&err);
    _cleanup_free_ char *kdir = rss_xasprintf("%s/.kube", dir), *kc = rss_xasprintf("%s/.kube/config", dir);
    assert_int_equal(mkdir(kdir, 0700), 0);
    write_file(
        kc,
        "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, namespace: home}\nclusters:\n- "
        "name: c\n  cluster: {server: 'https://home:1'}\n");
    assert_int_equal(kube_config_load_merged(NULL, NULL, &c, &err), 0);
    assert_string_equal(c.server, "https://home:1");
    assert_string_equal(c.ns, "home");
    kube_config_clear(&c);
    if (saved)
        setenv("HOME", saved, 1);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_merge),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_microtime),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_status_decoding),
        cmocka_unit_test(test_curl_errors),
        cmocka_unit_test(test_retry_decisions),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_framer),
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_kubeconfig),
        cmocka_unit_test(test_in_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
