/* jsontext.c -- JSON as text, the way the real API server's JSON patch `test` operation compares it.
 *
 * kube-apiserver applies JSON patches with evanphx/json-patch v4 to the object as Go's encoding/json wrote
 * it. Its `test` compares objects by keys and arrays by elements, but every other value (string, number,
 * boolean) by its compacted JSON text: the request's own bytes against Go's encoding of the stored value.
 * So, checked against v1.34: a stored 6 fails a test for 6.0 or 6e0, a stored "a<b" fails a test for "a<b"
 * (Go writes "a\u003cb") and passes one for "a\u003cb", a stored "é" fails a test for "\u00e9". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"
#include "rss/strbuf.h"
#include "kubesim.h"

static const char *ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The end of the value that starts at p (the text is valid JSON: cJSON parsed it already). */
static const char *skip(const char *p, const char *e)
{
    p = ws(p, e);
    if (p >= e)
        return e;
    if (*p == '"') {
        for (p++; p < e && *p != '"'; p++)
            if (*p == '\\')
                p++;
        return p < e ? p + 1 : e;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < e; p++) {
            if (*p == '"') {
                p = skip(p, e) - 1;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if ((*p == '}' || *p == ']') && --depth == 0) {
                return p + 1;
            }
        }
        return e;
    }
    while (p < e && !strchr(",}] \t\n\r", *p))
        p++;
    return p;
}

struct span {
    const char *s, *e;
};

/* The elements of the array at p, or the members (key, value, key, value, ...) of the object at p. */
static struct span *items(const char *p, const char *e, bool object, size_t *n)
{
    struct span *v = NULL;
    size_t cap = 0;
    *n = 0;
    p = ws(p, e) + 1;
    for (;;) {
        p = ws(p, e);
        if (p >= e || *p == ']' || *p == '}')
            return v;
        for (int k = 0; k < (object ? 2 : 1); k++) {
            p = ws(p, e);
            struct span *it = rss_xarray_push(&v, n, &cap, sizeof(*v));
            it->s = p;
            p = it->e = skip(p, e);
            p = ws(p, e);
            if (object && !k && p < e && *p == ':')
                p++;
        }
        p = ws(p, e);
        if (p < e && *p == ',')
            p++;
    }
}

static bool is_null(struct span v)
{
    const char *s = ws(v.s, v.e);
    return v.e - s >= 4 && !strncmp(s, "null", 4);
}

/* A member key as Go decodes it. */
static char *key_of(struct span k)
{
    _cleanup_json_ cJSON *j = cJSON_ParseWithLength(k.s, (size_t)(k.e - k.s));
    return rss_xstrdup(cJSON_IsString(j) ? j->valuestring : "");
}

bool ks_jsontext_op_value(const char *raw, size_t len, int index, const char **s, const char **e)
{
    const char *end = raw + len, *p = ws(raw, end);
    if (p >= end || *p != '[')
        return false;
    size_t n = 0, nm = 0;
    _cleanup_free_ struct span *ops = items(p, end, false, &n);
    if (index < 0 || (size_t)index >= n || *ws(ops[index].s, end) != '{')
        return false;
    _cleanup_free_ struct span *m = items(ops[index].s, ops[index].e, true, &nm);
    bool found = false;
    for (size_t i = 0; i + 1 < nm; i += 2) { /* a repeated key: Go keeps the last */
        _cleanup_free_ char *k = key_of(m[i]);
        if (!strcmp(k, "value")) {
            *s = m[i + 1].s;
            *e = m[i + 1].e;
            found = true;
        }
    }
    return found;
}

/* ---- Go's encoding/json of a stored value ---- */

static void put(struct rss_strbuf *b, const char *s)
{
    rss_strbuf_printf(b, "%s", s);
}

static void go_string(struct rss_strbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    put(b, "\"");
    while (*p) {
        unsigned c = *p;
        if (c < 0x80) {
            const char *esc = c == '"'    ? "\\\""
                              : c == '\\' ? "\\\\"
                              : c == '\b' ? "\\b"
                              : c == '\f' ? "\\f"
                              : c == '\n' ? "\\n"
                              : c == '\r' ? "\\r"
                              : c == '\t' ? "\\t"
                                          : NULL;
            if (esc)
                put(b, esc);
            else if (c < 0x20 || c == '<' || c == '>' || c == '&') /* HTML-safe, as json.Marshal */
                rss_strbuf_printf(b, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
            else
                rss_strbuf_printf(b, "%c", (char)c);
            p++;
            continue;
        }
        /* UTF-8 as utf8.DecodeRune takes it: an invalid byte is U+FFFD; U+2028 and U+2029 are escaped. */
        int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        unsigned lo = c == 0xe0   ? 0xa0
                      : c == 0xf0 ? 0x90
                                  : 0x80,
                 hi = c == 0xed   ? 0x9f
                      : c == 0xf4 ? 0x8f
                                  : 0xbf;
        bool ok = len > 0 && p[1] >= lo && p[1] <= hi;
        for (int i = 2; ok && i < len; i++)
            ok = p[i] >= 0x80 && p[i] <= 0xbf;
        if (!ok) {
            put(b, "\\ufffd");
            p++;
            continue;
        }
        if (len == 3 && c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            rss_strbuf_printf(b, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
        else
            rss_strbuf_printf(b, "%.*s", len, (const char *)p);
        p += len;
    }
    put(b, "\"");
}

/* An integer within int64 as Go's int64; anything else as float64: the shortest digits that read back,
 * in 'f' form for 1e-6 <= |d| < 1e21, else 'e' form with e-07 written e-7 (encoding/json's floatEncoder). */
static void go_number(struct rss_strbuf *b, double d)
{
    if (d == floor(d) && fabs(d) < 9.2e18) {
        rss_strbuf_printf(b, "%lld", (long long)d);
        return;
    }
    char e[40] = "";
    for (int prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec, d);
        if (strtod(e, NULL) == d)
            break;
    }
    char digits[24];
    size_t nd = 0;
    const char *p = e;
    bool neg = *p == '-';
    p += neg;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof(digits) - 1)
            digits[nd++] = *p;
    digits[nd] = '\0';
    int x = atoi(p + 1); /* the value is d.ddd x 10^x */
    if (neg)
        put(b, "-");
    double a = fabs(d);
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        rss_strbuf_printf(b, "%c%s%s", digits[0], nd > 1 ? "." : "", digits + 1);
        rss_strbuf_printf(b, "e%c%s%d", x < 0 ? '-' : '+',
                          x < 0 && x > -10   ? ""
                          : x >= 0 && x < 10 ? "0"
                                             : "",
                          abs(x));
        return;
    }
    if (x < 0) {
        put(b, "0.");
        for (int i = -1; i > x; i--)
            put(b, "0");
        put(b, digits);
        return;
    }
    for (int i = 0; i <= x || i < (int)nd; i++) {
        if (i == x + 1)
            put(b, ".");
        rss_strbuf_printf(b, "%c", i < (int)nd ? digits[i] : '0');
    }
}

/* The request's text without insignificant white space (json.Compact). */
static char *compact(struct span v)
{
    struct rss_strbuf b = {0};
    bool in = false;
    for (const char *p = v.s; p < v.e; p++) {
        if (!in && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            continue;
        if (in && *p == '\\' && p + 1 < v.e) {
            rss_strbuf_printf(&b, "%c%c", p[0], p[1]);
            p++;
            continue;
        }
        if (*p == '"')
            in = !in;
        rss_strbuf_printf(&b, "%c", *p);
    }
    return b.s ? b.s : rss_xstrdup("");
}

bool ks_jsontext_null(const char *s, const char *e)
{
    return is_null((struct span){s, e});
}

bool ks_jsontext_equal(const cJSON *stored, const char *s, const char *e)
{
    s = ws(s, e);
    size_t n = 0;
    if (cJSON_IsObject(stored)) {
        if (s >= e || *s != '{')
            return false;
        _cleanup_free_ struct span *m = items(s, e, true, &n);
        int distinct = 0;
        for (size_t i = 0; i + 1 < n; i += 2) {
            _cleanup_free_ char *k = key_of(m[i]);
            bool later = false; /* a repeated key: Go's map keeps the last */
            for (size_t j = i + 2; j + 1 < n && !later; j += 2) {
                _cleanup_free_ char *kj = key_of(m[j]);
                later = !strcmp(k, kj);
            }
            if (later)
                continue;
            distinct++;
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(stored, k);
            if (!c)
                return false;
            bool rn = is_null(m[i + 1]), sn = cJSON_IsNull(c);
            if (rn != sn || (!rn && !ks_jsontext_equal(c, m[i + 1].s, m[i + 1].e)))
                return false;
        }
        return distinct == cJSON_GetArraySize(stored);
    }
    if (cJSON_IsArray(stored)) {
        if (s >= e || *s != '[')
            return false;
        _cleanup_free_ struct span *v = items(s, e, false, &n);
        if ((int)n != cJSON_GetArraySize(stored))
            return false;
        for (size_t i = 0; i < n; i++) {
            const cJSON *c = cJSON_GetArrayItem(stored, (int)i);
            bool rn = is_null(v[i]), sn = cJSON_IsNull(c);
            if (rn != sn || (!rn && !ks_jsontext_equal(c, v[i].s, v[i].e)))
                return false;
        }
        return true;
    }
    struct rss_strbuf go = {0};
    if (cJSON_IsString(stored))
        go_string(&go, stored->valuestring);
    else if (cJSON_IsNumber(stored))
        go_number(&go, stored->valuedouble);
    else
        put(&go, cJSON_IsTrue(stored) ? "true" : cJSON_IsFalse(stored) ? "false" : "null");
    _cleanup_free_ char *raw = compact((struct span){s, skip(s, e)});
    bool eq = go.s && !strcmp(go.s, raw);
    free(go.s);
    return eq;
}
