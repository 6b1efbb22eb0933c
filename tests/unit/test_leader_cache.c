/* test_leader_cache.c -- the leader's watch-fed cache: Lists, events in and out of order, deletions, resync.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "leader_cache.h"
#include "rss/cleanup.h"

/* An object ns/name at resourceVersion rv whose spec.v is `v` (what the tests look at). */
static cJSON *obj(const char *name, const char *rv, const char *v)
{
    _cleanup_free_ char *j = rss_xasprintf("{\"metadata\":{\"namespace\":\"rssd\",\"name\":\"%s\","
                                           "\"resourceVersion\":\"%s\"},\"spec\":{\"v\":\"%s\"}}",
                                           name, rv, v);
    cJSON *o = cJSON_Parse(j);
    assert_non_null(o);
    return o;
}

static void feed(struct leader_cache *c, enum rss_kube_event ev, const char *name, const char *rv,
                 const char *v)
{
    _cleanup_json_ cJSON *o = obj(name, rv, v);
    rss_error_t err = NULL;
    assert_int_equal(leader_cache_feed(c, ev, o, &err), 0);
}

/* A watch (re-)list: SYNC_BEGIN, ADDED per "name=v@rv" item, SYNC_END at list_rv. */
static void sync_list(struct leader_cache *c, const char *list_rv, const char *const *items, size_t n)
{
    rss_error_t err = NULL;
    assert_int_equal(leader_cache_feed(c, RSS_KUBE_SYNC_BEGIN, NULL, &err), 0);
    assert_false(leader_cache_synced(c));
    for (size_t i = 0; i < n; i++) {
        char name[32], v[32], rv[32];
        assert_int_equal(sscanf(items[i], "%31[^=]=%31[^@]@%31s", name, v, rv), 3);
        feed(c, RSS_KUBE_ADDED, name, rv, v);
    }
    _cleanup_json_ cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "resourceVersion", list_rv);
    assert_int_equal(leader_cache_feed(c, RSS_KUBE_SYNC_END, meta, &err), 0);
}

/* spec.v of ns rssd / name, or "-" when absent. */
static char *val(const struct leader_cache *c, const char *name)
{
    _cleanup_json_ cJSON *o = leader_cache_get(c, "rssd", name);
    if (!o)
        return rss_xstrdup("-");
    return rss_xstrdup(cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "v")));
}

#define assert_val(c, name, want)                                                                            \
    do {                                                                                                     \
        _cleanup_free_ char *got_ = val(c, name);                                                            \
        assert_string_equal(got_, want);                                                                     \
    } while (0)

static void test_list_then_events(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    assert_false(leader_cache_synced(c));
    assert_int_equal(leader_cache_heard_ms(c), 0);
    const char *items[] = {"n1=a@5", "n2=b@6"};
    sync_list(c, "7", items, 2);
    assert_true(leader_cache_synced(c));
    assert_true(leader_cache_heard_ms(c) > 0);
    assert_int_equal(leader_cache_size(c), 2);
    feed(c, RSS_KUBE_MODIFIED, "n1", "8", "a2");
    feed(c, RSS_KUBE_ADDED, "n3", "9", "c");
    feed(c, RSS_KUBE_DELETED, "n2", "10", "b");
    assert_val(c, "n1", "a2");
    assert_val(c, "n2", "-");
    assert_val(c, "n3", "c");
    _cleanup_json_ cJSON *l = leader_cache_list(c);
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(l, "items");
    assert_int_equal(cJSON_GetArraySize(its), 2);
    /* key order, and the List's resourceVersion */
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(its, 0), "metadata"), "name")),
        "n1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(l, "metadata"), "resourceVersion")),
                        "7");
    leader_cache_free(c);
}

/* An event older than the copy held never rolls it back (a renewTime seen again would restart nothing,
 * but an older spec would be a lie). */
static void test_out_of_order(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    sync_list(c, "1", NULL, 0);
    feed(c, RSS_KUBE_MODIFIED, "n1", "10", "new");
    feed(c, RSS_KUBE_MODIFIED, "n1", "8", "old");
    assert_val(c, "n1", "new");
    feed(c, RSS_KUBE_MODIFIED, "n1", "10", "same-version");
    assert_val(c, "n1", "new");
    /* Numeric, not string, order: "9" < "10". */
    feed(c, RSS_KUBE_MODIFIED, "n1", "9", "older");
    assert_val(c, "n1", "new");
    feed(c, RSS_KUBE_MODIFIED, "n1", "11", "newer");
    assert_val(c, "n1", "newer");
    leader_cache_free(c);
}

/* A deleted object stays deleted against late events of its past; a newer one brings it back. */
static void test_deleted(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    const char *items[] = {"n1=a@5"};
    sync_list(c, "5", items, 1);
    feed(c, RSS_KUBE_DELETED, "n1", "12", "a");
    assert_val(c, "n1", "-");
    assert_int_equal(leader_cache_size(c), 0);
    feed(c, RSS_KUBE_MODIFIED, "n1", "11", "ghost");
    assert_val(c, "n1", "-");
    _cleanup_json_ cJSON *l = leader_cache_list(c);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items")), 0);
    feed(c, RSS_KUBE_ADDED, "n1", "13", "again");
    assert_val(c, "n1", "again");
    leader_cache_free(c);
}

/* 410 Gone: the watch re-lists. Objects deleted while the watch was away are gone after the re-list,
 * the others carry the List's state, and nothing is synced half way through. */
static void test_resync_after_gone(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    const char *first[] = {"n1=a@5", "n2=b@6", "n3=c@7"};
    sync_list(c, "7", first, 3);
    const char *again[] = {"n1=a9@90", "n3=c@7"};
    sync_list(c, "100", again, 2);
    assert_true(leader_cache_synced(c));
    assert_val(c, "n1", "a9");
    assert_val(c, "n2", "-");
    assert_val(c, "n3", "c");
    assert_int_equal(leader_cache_size(c), 2);
    /* Events at or below the List's version for an object it lacked are its past: dropped. */
    feed(c, RSS_KUBE_MODIFIED, "n2", "95", "ghost");
    assert_val(c, "n2", "-");
    feed(c, RSS_KUBE_ADDED, "n4", "101", "d");
    assert_val(c, "n4", "d");
    leader_cache_free(c);
}

/* The reader's own LIST (leader_cache_replace) races the watch: what the watch delivered after that
 * List was taken survives it, and what the List had not yet seen deleted stays deleted. */
static void test_replace_races_watch(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    const char *first[] = {"n1=a@5", "n2=b@6"};
    sync_list(c, "6", first, 2);
    feed(c, RSS_KUBE_MODIFIED, "n1", "20", "from-watch");
    feed(c, RSS_KUBE_DELETED, "n2", "21", "b");
    feed(c, RSS_KUBE_ADDED, "n3", "22", "c");
    _cleanup_json_ cJSON *list = cJSON_Parse("{\"metadata\":{\"resourceVersion\":\"15\"},\"items\":["
                                             "{\"metadata\":{\"namespace\":\"rssd\",\"name\":\"n1\","
                                             "\"resourceVersion\":\"10\"},\"spec\":{\"v\":\"old\"}},"
                                             "{\"metadata\":{\"namespace\":\"rssd\",\"name\":\"n2\","
                                             "\"resourceVersion\":\"6\"},\"spec\":{\"v\":\"b\"}}]}");
    assert_non_null(list);
    leader_cache_replace(c, list, 42);
    assert_int_equal(leader_cache_heard_ms(c), 42);
    assert_val(c, "n1", "from-watch");
    assert_val(c, "n2", "-");
    assert_val(c, "n3", "c");
    /* A newer List wins over everything, tombstones included. */
    _cleanup_json_ cJSON *newer = cJSON_Parse("{\"metadata\":{\"resourceVersion\":\"30\"},\"items\":["
                                              "{\"metadata\":{\"namespace\":\"rssd\",\"name\":\"n2\","
                                              "\"resourceVersion\":\"25\"},\"spec\":{\"v\":\"b2\"}}]}");
    leader_cache_replace(c, newer, 43);
    assert_val(c, "n1", "-");
    assert_val(c, "n2", "b2");
    assert_val(c, "n3", "-");
    leader_cache_free(c);
}

/* Opaque versions (not integers): no order is known, so the server's order is taken. */
static void test_opaque_versions(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    sync_list(c, "x", NULL, 0);
    feed(c, RSS_KUBE_ADDED, "n1", "b", "1");
    feed(c, RSS_KUBE_MODIFIED, "n1", "a", "2");
    assert_val(c, "n1", "2");
    feed(c, RSS_KUBE_MODIFIED, "n1", "99999999999999999999999", "3"); /* over 64 bits: opaque */
    assert_val(c, "n1", "3");
    leader_cache_free(c);
}

/* Objects without a name and events without an object are ignored, not crashed on. */
static void test_malformed(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    rss_error_t err = NULL;
    assert_int_equal(leader_cache_feed(c, RSS_KUBE_MODIFIED, NULL, &err), 0);
    _cleanup_json_ cJSON *o = cJSON_Parse("{\"metadata\":{\"resourceVersion\":\"3\"}}");
    assert_int_equal(leader_cache_feed(c, RSS_KUBE_ADDED, o, &err), 0);
    assert_int_equal(leader_cache_size(c), 0);
    /* An event before any List: kept (the watch lists first; a reader must check synced). */
    feed(c, RSS_KUBE_ADDED, "n1", "4", "a");
    assert_false(leader_cache_synced(c));
    assert_val(c, "n1", "a");
    leader_cache_free(c);
}

/* Many objects, inserted out of key order: each is found, and a List of half removes the other half. */
static void test_many(void **state)
{
    (void)state;
    struct leader_cache *c = leader_cache_new();
    sync_list(c, "1", NULL, 0);
    for (int i = 999; i >= 0; i--) {
        char name[16], rv[16];
        snprintf(name, sizeof(name), "n%03d", i);
        snprintf(rv, sizeof(rv), "%d", 10 + i);
        feed(c, RSS_KUBE_ADDED, name, rv, name);
    }
    assert_int_equal(leader_cache_size(c), 1000);
    assert_val(c, "n500", "n500");
    _cleanup_json_ cJSON *list = cJSON_Parse("{\"metadata\":{\"resourceVersion\":\"5000\"},\"items\":[]}");
    cJSON *its = cJSON_GetObjectItemCaseSensitive(list, "items");
    for (int i = 0; i < 1000; i += 2) {
        char name[16];
        snprintf(name, sizeof(name), "n%03d", i);
        cJSON_AddItemToArray(its, obj(name, "4000", "listed"));
    }
    leader_cache_replace(c, list, 7);
    assert_int_equal(leader_cache_size(c), 500);
    assert_val(c, "n500", "listed");
    assert_val(c, "n501", "-");
    leader_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_then_events),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_deleted),
        cmocka_unit_test(test_resync_after_gone),
        cmocka_unit_test(test_replace_races_watch),
        cmocka_unit_test(test_opaque_versions),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
