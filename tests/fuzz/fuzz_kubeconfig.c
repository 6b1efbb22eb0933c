/* fuzz_kubeconfig.c -- the kubeconfig reader (kube_config_parse_kubeconfig: JSON, or YAML through
 * kube_yaml_parse; certificate data through rss_base64_decode). Asserts beyond "no crash": a rejection
 * is RSS_E_INVALID with a message and leaves the config untouched; an accepted config has a server
 * without a trailing '/', a namespace, a client certificate exactly when it has a key, data or a file
 * for each PEM but not both, relative file paths resolved under the config's directory, and parsing is
 * deterministic. The YAML parser alone must agree with itself too (parse -> print -> parse as JSON is
 * the same tree). */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "kube_internal.h"

#define DIR "/nonexistent-kubeconfig-dir"

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool mem_eq(const char *a, size_t al, const char *b, size_t bl)
{
    return (!a && !b) || (a && b && al == bl && memcmp(a, b, al) == 0);
}

static void check_path(const char *p)
{
    if (p)
        FUZZ_CHECK(p[0] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    char *text = fuzz_strndup(data, size);
    struct kube_config c = {0}, c2 = {0};
    rss_error_t err = NULL;
    if (kube_config_parse_kubeconfig(text, DIR, &c, &err) < 0) {
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID && err->msg);
        FUZZ_CHECK(!c.server && !c.ns && !c.token && !c.ca_data);
        rss_error_release(&err);
    } else {
        FUZZ_CHECK(c.server && c.ns);
        size_t sl = strlen(c.server);
        FUZZ_CHECK(sl == 0 || c.server[sl - 1] != '/');
        FUZZ_CHECK((c.cert_data || c.cert_file) == (c.key_data || c.key_file));
        FUZZ_CHECK(!(c.ca_data && c.ca_file) && !(c.cert_data && c.cert_file) && !(c.key_data && c.key_file));
        FUZZ_CHECK(!(c.token && c.token_file));
        check_path(c.ca_file);
        check_path(c.cert_file);
        check_path(c.key_file);
        check_path(c.token_file);
        FUZZ_CHECK(kube_config_parse_kubeconfig(text, DIR, &c2, &err) == 0);
        FUZZ_CHECK(str_eq(c.server, c2.server) && str_eq(c.ns, c2.ns) && str_eq(c.token, c2.token) &&
                   str_eq(c.token_file, c2.token_file) && str_eq(c.ca_file, c2.ca_file) &&
                   mem_eq(c.ca_data, c.ca_len, c2.ca_data, c2.ca_len) &&
                   mem_eq(c.cert_data, c.cert_len, c2.cert_data, c2.cert_len) &&
                   mem_eq(c.key_data, c.key_len, c2.key_data, c2.key_len) && c.insecure == c2.insecure);
        kube_config_clear(&c);
        kube_config_clear(&c2);
    }
    cJSON *y = NULL;
    if (kube_yaml_parse(text, &y, &err) == 0) {
        char *printed = cJSON_PrintUnformatted(y);
        if (printed) { /* cJSON refuses to print some trees (e.g. very deep ones) */
            cJSON *back = cJSON_Parse(printed);
            FUZZ_CHECK(back && cJSON_Compare(back, y, true));
            cJSON_Delete(back);
            free(printed);
        }
        cJSON_Delete(y);
    } else {
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID);
        rss_error_release(&err);
    }
    free(text);
    return 0;
}
