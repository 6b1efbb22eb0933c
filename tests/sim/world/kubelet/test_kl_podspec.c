/* test_kl_podspec.c -- unit tests of the kubelet simulator's Pod translation: env, $(VAR), mounts, hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kubelet.h"
#include "rss/cleanup.h"

static const char *pod_text =
    "{\"metadata\":{\"name\":\"db-1\",\"namespace\":\"prod\",\"uid\":\"u-1\","
    "\"labels\":{\"app\":\"db\"},\"annotations\":{\"a/b\":\"x y\"}},"
    "\"spec\":{\"nodeName\":\"node-9\",\"serviceAccountName\":\"sa\","
    "\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"data-db-1\"}},"
    "{\"name\":\"scratch\",\"emptyDir\":{}},"
    "{\"name\":\"host\",\"hostPath\":{\"path\":\"/HOSTDIR\",\"type\":\"DirectoryOrCreate\"}},"
    "{\"name\":\"cm\",\"configMap\":{\"name\":\"x\"}}]}}";

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    assert_non_null(j);
    return j;
}

static const char *env_value(const struct kl_env *e, const char *key)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->keys[i], key))
            return e->values[i];
    return NULL;
}

static void test_expand(void **state)
{
    (void)state;
    struct kl_env env = {0};
    kl_env_add(&env, "A", "1");
    kl_env_add(&env, "B", "two");
    kl_env_add(&env, "A", "one"); /* a later definition replaces the earlier one */
    const char *cases[][2] = {
        {"$(A)-$(B)", "one-two"},
        {"$$(A)", "$(A)"},
        {"$(C)", "$(C)"},
        {"$(A", "$(A"},
        {"x$", "x$"},
        {"$$$$", "$$"},
        {"", ""},
        {"a$(B)b$(A)c", "atwobonec"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        _cleanup_free_ char *out = kl_env_expand(&env, cases[i][0]);
        assert_string_equal(out, cases[i][1]);
    }
    assert_int_equal(env.n, 2);
    kl_env_clear(&env);
}

static void test_env_resolve(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *pod = parse(pod_text);
    _cleanup_json_ cJSON *ctr = parse(
        "{\"env\":[{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}},"
        "{\"name\":\"NS\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.namespace\"}}},"
        "{\"name\":\"NODE\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"spec.nodeName\"}}},"
        "{\"name\":\"IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}},"
        "{\"name\":\"APP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.labels['app']\"}}},"
        "{\"name\":\"ANN\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.annotations['a/b']\"}}},"
        "{\"name\":\"NONE\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.labels['zz']\"}}},"
        "{\"name\":\"SERVICE_NAME\",\"value\":\"db-svc\"},"
        "{\"name\":\"FQDN\",\"value\":\"$(POD_NAME).$(SERVICE_NAME)\"}]}");
    struct kl_env env = {0};
    rss_error_t err = NULL;
    assert_int_equal(kl_env_resolve(pod, ctr, "node-1", "127.0.1.1", &env, &err), 0);
    assert_null(err);
    assert_string_equal(env_value(&env, "POD_NAME"), "db-1");
    assert_string_equal(env_value(&env, "NS"), "prod");
    assert_string_equal(env_value(&env, "NODE"), "node-1"); /* the kubelet's own node */
    assert_string_equal(env_value(&env, "IP"), "127.0.1.1");
    assert_string_equal(env_value(&env, "APP"), "db");
    assert_string_equal(env_value(&env, "ANN"), "x y");
    assert_string_equal(env_value(&env, "NONE"), "");
    assert_string_equal(env_value(&env, "FQDN"), "db-1.db-svc");
    kl_env_clear(&env);

    _cleanup_json_ cJSON *bad =
        parse("{\"env\":[{\"name\":\"S\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}}]}");
    assert_true(kl_env_resolve(pod, bad, "node-1", NULL, &env, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    _cleanup_json_ cJSON *badpath =
        parse("{\"env\":[{\"name\":\"S\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"spec.nope\"}}}]}");
    assert_true(kl_env_resolve(pod, badpath, "node-1", NULL, &env, &err) < 0);
    rss_error_release(&err);
}

static void test_strv(void **state)
{
    (void)state;
    struct kl_env env = {0};
    kl_env_add(&env, "N", "3");
    _cleanup_json_ cJSON *arr = parse("[\"sleep\",\"$(N)\",\"$$(N)\"]");
    char **v = kl_strv_from_json(arr, &env);
    assert_string_equal(v[0], "sleep");
    assert_string_equal(v[1], "3");
    assert_string_equal(v[2], "$(N)");
    assert_null(v[3]);
    kl_strv_free(v);
    assert_null(kl_strv_from_json(NULL, &env));
    kl_env_clear(&env);
}

static const struct rss_cri_mount *find_mount(const struct kl_mounts *m, const char *path)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->items[i].container_path, path))
            return &m->items[i];
    return NULL;
}

static void test_mounts(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/kl-podspec.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    _cleanup_free_ char *pv = rss_xasprintf("%s/pv", tmpl);
    _cleanup_free_ char *sd = rss_xasprintf("%s/state", tmpl);
    _cleanup_free_ char *hostdir = rss_xasprintf("%s/host", tmpl);
    _cleanup_free_ char *text = rss_xstrdup(pod_text);
    /* point the hostPath volume into the temp dir */
    _cleanup_free_ char *podtext = NULL;
    {
        char *at = strstr(text, "/HOSTDIR");
        *at = '\0';
        podtext = rss_xasprintf("%s%s%s", text, hostdir, at + strlen("/HOSTDIR"));
    }
    struct rss_cri_mount extra[] = {
        {.container_path = "/hooks", .host_path = "/opt/hooks", .readonly = true},
        {.container_path = "/data", .host_path = "/must/not/win", .readonly = false},
    };
    struct kl kl = {.pv_dir = pv, .state_dir = sd, .extra_mounts = extra, .n_extra_mounts = 2};
    _cleanup_json_ cJSON *pod = parse(podtext);
    _cleanup_json_ cJSON *ctr = parse("{\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/data\"},"
                                      "{\"name\":\"data\",\"mountPath\":\"/logs\",\"subPath\":\"logs\"},"
                                      "{\"name\":\"scratch\",\"mountPath\":\"/tmp/s\"},"
                                      "{\"name\":\"host\",\"mountPath\":\"/h\",\"readOnly\":true}]}");
    struct kl_mounts m = {0};
    rss_error_t err = NULL;
    assert_int_equal(kl_mounts_resolve(&kl, pod, ctr, &m, &err), 0);
    assert_int_equal(m.n, 5);
    _cleanup_free_ char *claim = rss_xasprintf("%s/prod/data-db-1", pv);
    _cleanup_free_ char *logs = rss_xasprintf("%s/logs", claim);
    _cleanup_free_ char *scratch = rss_xasprintf("%s/pods/u-1/volumes/scratch", sd);
    assert_string_equal(find_mount(&m, "/data")->host_path, claim);
    assert_string_equal(find_mount(&m, "/logs")->host_path, logs);
    assert_string_equal(find_mount(&m, "/tmp/s")->host_path, scratch);
    assert_string_equal(find_mount(&m, "/h")->host_path, hostdir);
    assert_true(find_mount(&m, "/h")->readonly);
    assert_string_equal(find_mount(&m, "/hooks")->host_path, "/opt/hooks");
    assert_true(find_mount(&m, "/hooks")->readonly);
    struct stat st;
    assert_int_equal(stat(logs, &st), 0);
    assert_int_equal(stat(scratch, &st), 0);
    assert_int_equal(stat(hostdir, &st), 0); /* DirectoryOrCreate */
    kl_mounts_clear(&m);

    _cleanup_json_ cJSON *cm = parse("{\"volumeMounts\":[{\"name\":\"cm\",\"mountPath\":\"/c\"}]}");
    assert_true(kl_mounts_resolve(&kl, pod, cm, &m, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    _cleanup_json_ cJSON *missing = parse("{\"volumeMounts\":[{\"name\":\"nope\",\"mountPath\":\"/c\"}]}");
    assert_true(kl_mounts_resolve(&kl, pod, missing, &m, &err) < 0);
    rss_error_release(&err);
    _cleanup_json_ cJSON *escape =
        parse("{\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/c\",\"subPath\":\"../../etc\"}]}");
    assert_true(kl_mounts_resolve(&kl, pod, escape, &m, &err) < 0);
    rss_error_release(&err);
    _cleanup_json_ cJSON *badpod =
        parse("{\"metadata\":{\"namespace\":\"prod\",\"uid\":\"u\"},\"spec\":{\"volumes\":"
              "[{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"../x\"}}]}}");
    _cleanup_json_ cJSON *d = parse("{\"volumeMounts\":[{\"name\":\"d\",\"mountPath\":\"/d\"}]}");
    assert_true(kl_mounts_resolve(&kl, badpod, d, &m, &err) < 0);
    rss_error_release(&err);

    /* With a host root (each simulated node its own tree), hostPath P is <root>/P: created for
     * DirectoryOrCreate, required for Directory, never escaping by "..". */
    _cleanup_free_ char *root = rss_xasprintf("%s/root", tmpl);
    kl.host_root = root;
    _cleanup_json_ cJSON *hpod =
        parse("{\"metadata\":{\"namespace\":\"p\",\"uid\":\"u\"},\"spec\":{\"volumes\":["
              "{\"name\":\"st\",\"hostPath\":{\"path\":\"/run/rssd\",\"type\":\"DirectoryOrCreate\"}},"
              "{\"name\":\"sock\",\"hostPath\":{\"path\":\"/run/containerd\",\"type\":\"Directory\"}},"
              "{\"name\":\"up\",\"hostPath\":{\"path\":\"/run/../../etc\"}}]}}");
    _cleanup_json_ cJSON *hst = parse("{\"volumeMounts\":[{\"name\":\"st\",\"mountPath\":\"/run/rssd\"}]}");
    _cleanup_json_ cJSON *hsock =
        parse("{\"volumeMounts\":[{\"name\":\"sock\",\"mountPath\":\"/run/containerd\"}]}");
    _cleanup_json_ cJSON *hup = parse("{\"volumeMounts\":[{\"name\":\"up\",\"mountPath\":\"/e\"}]}");
    assert_int_equal(kl_mounts_resolve(&kl, hpod, hst, &m, &err), 0);
    _cleanup_free_ char *rssd_dir = rss_xasprintf("%s/run/rssd", root);
    assert_string_equal(find_mount(&m, "/run/rssd")->host_path, rssd_dir);
    assert_int_equal(stat(rssd_dir, &st), 0);
    kl_mounts_clear(&m);
    assert_true(kl_mounts_resolve(&kl, hpod, hsock, &m, &err) < 0); /* type Directory: must exist */
    assert_int_equal(rss_error_code(err), RSS_E_NOT_FOUND);
    rss_error_release(&err);
    _cleanup_free_ char *ctd = rss_xasprintf("%s/run/containerd", root);
    assert_int_equal(mkdir(ctd, 0755), 0);
    assert_int_equal(kl_mounts_resolve(&kl, hpod, hsock, &m, &err), 0);
    assert_string_equal(find_mount(&m, "/run/containerd")->host_path, ctd);
    kl_mounts_clear(&m);
    assert_true(kl_mounts_resolve(&kl, hpod, hup, &m, &err) < 0);
    assert_int_equal(rss_error_code(err), RSS_E_INVALID);
    rss_error_release(&err);
    assert_int_equal(kl_rm_rf(tmpl), 0);
}

static void test_hash_and_hostmap(void **state)
{
    (void)state;
    _cleanup_json_ cJSON *a = parse("{\"name\":\"c\",\"image\":\"i\"}");
    _cleanup_json_ cJSON *b = parse("{\"name\":\"c\",\"image\":\"j\"}");
    _cleanup_free_ char *ha = kl_json_hash(a), *ha2 = kl_json_hash(a), *hb = kl_json_hash(b);
    assert_string_equal(ha, ha2);
    assert_string_not_equal(ha, hb);
    assert_int_equal(strlen(ha), 8);
    struct kl_hostmap maps[] = {{"localhost/rss/rssd:dev", "/usr/bin/rssd"}};
    struct kl kl = {.hostmaps = maps, .n_hostmaps = 1};
    assert_string_equal(kl_hostmap_lookup(&kl, "localhost/rss/rssd:dev"), "/usr/bin/rssd");
    assert_null(kl_hostmap_lookup(&kl, "localhost/rss/busybox:1"));
    assert_null(kl_hostmap_lookup(&kl, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand), cmocka_unit_test(test_env_resolve),      cmocka_unit_test(test_strv),
        cmocka_unit_test(test_mounts), cmocka_unit_test(test_hash_and_hostmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
