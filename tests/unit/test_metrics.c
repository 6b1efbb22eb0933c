/* test_metrics.c -- the /metrics exposition: the leader's per-RSS gauges follow the status, go with the RSS
 * and the term. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rss/cleanup.h"
#include "rss/metrics.h"
#include "rss/strbuf.h"

/* The whole exposition, as GET /metrics serves it (caller frees). */
static char *scrape(void)
{
    struct rss_strbuf b = {0};
    rss_metrics_render(&b);
    return b.s;
}

static cJSON *status(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    return j;
}

static void test_rss_gauges(void **state)
{
    (void)state;
    rss_metrics_rss_clear();
    _cleanup_json_ cJSON *waiting =
        status("{\"phase\":\"Recovering\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
               "\"reason\":\"X\"},"
               "{\"type\":\"WaitingForMembers\",\"status\":\"True\",\"reason\":\"WaitingForMembers\"}],"
               "\"memberStatus\":[{\"pod\":\"db-0\",\"leftOut\":{\"seedSequence\":\"5\",\"held\":true}},"
               "{\"pod\":\"db-1\",\"leftOut\":{\"seedSequence\":\"5\"}},{\"pod\":\"db-2\"}]}");
    rss_metrics_rss_status("apps", "db", waiting);
    _cleanup_free_ char *a = scrape();
    assert_non_null(
        strstr(a, "\nrssd_rss_phase{rss_namespace=\"apps\",rss=\"db\",phase=\"Recovering\"} 1\n"));
    assert_non_null(
        strstr(a, "\nrssd_rss_waiting{rss_namespace=\"apps\",rss=\"db\",reason=\"WaitingForMembers\"} 1\n"));
    /* Only the member that is held counts, not every member left out. */
    assert_non_null(strstr(a, "\nrssd_rss_members_held{rss_namespace=\"apps\",rss=\"db\"} 1\n"));
    assert_non_null(strstr(a, "# TYPE rssd_rss_phase gauge\n"));

    /* The next status replaces the series: one phase per RSS, no waiting series once it stops waiting. */
    _cleanup_json_ cJSON *running =
        status("{\"phase\":\"Running\",\"conditions\":[{\"type\":\"WaitingForMembers\",\"status\":\"False\","
               "\"reason\":\"NotWaiting\"}],\"memberStatus\":[]}");
    rss_metrics_rss_status("apps", "db", running);
    rss_metrics_rss_status("apps", "other", waiting);
    _cleanup_free_ char *b = scrape();
    assert_non_null(strstr(b, "rssd_rss_phase{rss_namespace=\"apps\",rss=\"db\",phase=\"Running\"} 1\n"));
    assert_null(strstr(b, "phase=\"Recovering\"} 1\nrssd_rss_phase{rss_namespace=\"apps\",rss=\"db\""));
    assert_null(strstr(b, "rssd_rss_waiting{rss_namespace=\"apps\",rss=\"db\""));
    assert_non_null(strstr(b, "rssd_rss_members_held{rss_namespace=\"apps\",rss=\"db\"} 0\n"));
    assert_non_null(strstr(b, "rssd_rss_waiting{rss_namespace=\"apps\",rss=\"other\""));

    /* A deleted RSS drops out; a term that ends drops every series. */
    rss_metrics_rss_forget("apps", "other");
    _cleanup_free_ char *c = scrape();
    assert_null(strstr(c, "rss=\"other\""));
    assert_non_null(strstr(c, "rss=\"db\""));
    rss_metrics_rss_clear();
    _cleanup_free_ char *d = scrape();
    assert_null(strstr(d, "rssd_rss_phase{"));
    assert_non_null(strstr(d, "# TYPE rssd_rss_phase gauge\n"));
}

/* A label value with a quote, a backslash or a newline must not break the exposition. */
static void test_escaping(void **state)
{
    (void)state;
    rss_metrics_rss_clear();
    _cleanup_json_ cJSON *odd = status("{\"phase\":\"A\\\"b\\\\c\\nd\"}");
    rss_metrics_rss_status("ns", "x", odd);
    _cleanup_free_ char *a = scrape();
    assert_non_null(strstr(a, "phase=\"A\\\"b\\\\c\\nd\"} 1\n"));
    rss_metrics_rss_status(NULL, "x", odd);
    rss_metrics_rss_status("ns", "y", NULL);
    _cleanup_free_ char *b = scrape();
    assert_null(strstr(b, "rss=\"y\""));
    rss_metrics_rss_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rss_gauges),
        cmocka_unit_test(test_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
