/* fuzz_status.c -- the Kubernetes Status decoder (kube_http_error: an HTTP error answer, or a watch ERROR
 * event, turned into an rss error): input = 2 bytes of HTTP status + the body. Asserts beyond "no crash":
 * the error code and detail follow the documented table (404 NOT_FOUND, 409 CONFLICT / AlreadyExists
 * EXISTS, 410 GONE, 401/403 UNAUTHORIZED, 413 TOO_LARGE, 429/5xx UNAVAILABLE, other 4xx INVALID, else
 * INTERNAL), where a Status body's own `code` in [100, 599] overrides the HTTP one, and the message names
 * the code and the Status message. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "kube_internal.h"

static enum rss_errc expected(long code, const char *reason)
{
    switch (code) {
    case 404:
        return RSS_E_NOT_FOUND;
    case 409:
        return reason && !strcmp(reason, "AlreadyExists") ? RSS_E_EXISTS : RSS_E_CONFLICT;
    case 410:
        return RSS_E_GONE;
    case 401:
    case 403:
        return RSS_E_UNAUTHORIZED;
    case 413:
        return RSS_E_TOO_LARGE;
    case 429:
        return RSS_E_UNAVAILABLE;
    default:
        if (code >= 500 && code <= 599)
            return RSS_E_UNAVAILABLE;
        if (code >= 400 && code <= 499)
            return RSS_E_INVALID;
        return RSS_E_INTERNAL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 64 * 1024)
        return 0;
    long http = (long)(data[0] << 8 | data[1]) % 700;
    const char *body = (const char *)data + 2;
    size_t len = size - 2;
    cJSON *st = len ? cJSON_ParseWithLength(body, len) : NULL;
    long code = http;
    const char *reason = NULL, *message = NULL;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(st, "kind");
    if (cJSON_IsObject(st) && cJSON_IsString(kind) && !strcmp(kind->valuestring, "Status")) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(st, "reason");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(st, "code");
        reason = cJSON_IsString(r) ? r->valuestring : NULL;
        message = cJSON_IsString(m) ? m->valuestring : NULL;
        if (cJSON_IsNumber(c) && c->valueint >= 100 && c->valueint <= 599)
            code = c->valueint;
    }
    rss_error_t err = NULL;
    FUZZ_CHECK(kube_http_error(http, body, len, "GET /x", &err) < 0);
    FUZZ_CHECK(err && rss_error_code(err) == expected(code, reason) && err->detail == code);
    char want[32];
    snprintf(want, sizeof(want), "HTTP %ld", code);
    FUZZ_CHECK(err->msg && !strncmp(err->msg, "GET /x: ", 8) && strstr(err->msg, want));
    if (message && !memchr(message, '%', strlen(message)))
        FUZZ_CHECK(strstr(err->msg, message));
    rss_error_release(&err);
    cJSON_Delete(st);
    return 0;
}
