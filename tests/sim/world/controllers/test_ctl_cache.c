/* test_ctl_cache.c -- the watch-fed caches: relists replace, old news never resurrects deleted objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "controllers.h"
#include "testutil.h"

static cJSON *obj(const char *name, const char *rv)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "{'metadata':{'name':'%s','namespace':'ns','resourceVersion':'%s'}}", name,
             rv);
    return J(buf);
}

static const char *rv_in(struct ctl_cache *c, const char *name, char *buf)
{
    _cleanup_json_ cJSON *snap = ctl_cache_snapshot(c);
    const cJSON *o = ctl_find(snap, "ns", name);
    if (!o)
        return NULL;
    strcpy(buf, rss_json_str(o, "metadata.resourceVersion"));
    return buf;
}

static void ev(struct ctl_cache *c, enum rss_kube_event e, const char *name, const char *rv)
{
    _cleanup_json_ cJSON *o = obj(name, rv);
    ctl_cache_event(c, e, o);
}

static void list_end(struct ctl_cache *c, const char *rv)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "{'resourceVersion':'%s'}", rv);
    _cleanup_json_ cJSON *meta = J(buf);
    ctl_cache_event(c, RSS_KUBE_SYNC_END, meta);
}

static void test_events_and_relist(void **state)
{
    (void)state;
    char buf[32];
    struct ctl_cache *c = ctl_cache_new("pods");
    assert_string_equal(ctl_cache_resource(c), "pods");
    assert_false(ctl_cache_synced(c));
    ctl_cache_event(c, RSS_KUBE_SYNC_BEGIN, NULL);
    ev(c, RSS_KUBE_ADDED, "a", "5");
    ev(c, RSS_KUBE_ADDED, "b", "6");
    list_end(c, "10");
    assert_true(ctl_cache_synced(c));
    assert_string_equal(rv_in(c, "a", buf), "5");
    ev(c, RSS_KUBE_MODIFIED, "a", "11");
    assert_string_equal(rv_in(c, "a", buf), "11");
    /* An older copy never replaces a newer one. */
    ev(c, RSS_KUBE_MODIFIED, "a", "9");
    assert_string_equal(rv_in(c, "a", buf), "11");
    ev(c, RSS_KUBE_DELETED, "b", "12");
    assert_null(rv_in(c, "b", buf));
    /* A relist drops what it does not contain. */
    ctl_cache_event(c, RSS_KUBE_SYNC_BEGIN, NULL);
    ev(c, RSS_KUBE_ADDED, "c", "13");
    list_end(c, "14");
    assert_null(rv_in(c, "a", buf));
    assert_string_equal(rv_in(c, "c", buf), "13");
    ctl_cache_free(c);
}

static void test_write_through(void **state)
{
    (void)state;
    char buf[32];
    struct ctl_cache *c = ctl_cache_new("pods");
    ctl_cache_event(c, RSS_KUBE_SYNC_BEGIN, NULL);
    list_end(c, "10");
    /* Our create answered at 11, the watch has not delivered it yet: cached at once. */
    _cleanup_json_ cJSON *a11 = obj("a", "11");
    ctl_cache_put(c, a11);
    assert_string_equal(rv_in(c, "a", buf), "11");
    /* The watch then delivers it and its deletion. */
    ev(c, RSS_KUBE_ADDED, "a", "11");
    ev(c, RSS_KUBE_DELETED, "a", "12");
    assert_null(rv_in(c, "a", buf));
    /* A late answer to a write the watch already passed must not resurrect it. */
    ctl_cache_put(c, a11);
    assert_null(rv_in(c, "a", buf));
    /* Without numeric resourceVersions there is no write-through. */
    _cleanup_json_ cJSON *opaque = obj("z", "abc");
    ctl_cache_put(c, opaque);
    assert_null(rv_in(c, "z", buf));
    /* A write answered after a relist's snapshot survives the relist. */
    _cleanup_json_ cJSON *b20 = obj("b", "20");
    ctl_cache_put(c, b20);
    ctl_cache_event(c, RSS_KUBE_SYNC_BEGIN, NULL);
    list_end(c, "15");
    assert_string_equal(rv_in(c, "b", buf), "20");
    ctl_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_and_relist),
        cmocka_unit_test(test_write_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
