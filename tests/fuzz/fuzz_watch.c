/* fuzz_watch.c -- the watch stream: the line framer (kube_framer_feed) and the watch event decoder
 * (kube_watch.c's on_line: ADDED/MODIFIED/DELETED/BOOKMARK/ERROR, resourceVersion tracking, 410 ->
 * re-list) on an arbitrary byte stream. kube_watch.c is included here to reach its static decoder.
 * Asserts beyond "no crash": the stream fed whole and the same stream fed in random chunks (sizes from
 * a PRNG seeded by the input, empty chunks included) decode alike: the same events with the same
 * objects in the same order, the same result and error code, the same resume resourceVersion, 410 flag
 * and event count; the framer never delivers a line with '\n' in it nor one longer than its cap. */
#include "../../nodeagent/common/kube/kube_watch.c"

#include "fuzz.h"
#include "rss/json.h"

#define LINE_MAX_BYTES 2048

struct record {
    char *s;
    size_t len, cap;
};

static void rec_add(struct record *r, const char *fmt, const char *a, const char *b)
{
    int n = snprintf(NULL, 0, fmt, a, b);
    if (r->len + (size_t)n + 1 > r->cap) {
        r->cap = (r->len + (size_t)n + 1) * 2;
        r->s = realloc(r->s, r->cap);
        if (!r->s)
            abort();
    }
    snprintf(r->s + r->len, r->cap - r->len, fmt, a, b);
    r->len += (size_t)n;
}

static int on_event(void *ud, enum rss_kube_event e, const cJSON *obj, rss_error_t *err)
{
    struct record *r = ud;
    static const char *names[] = {"SYNC_BEGIN", "SYNC_END", "ADDED", "MODIFIED", "DELETED"};
    FUZZ_CHECK(e >= RSS_KUBE_ADDED && e <= RSS_KUBE_DELETED && cJSON_IsObject(obj));
    char *text = cJSON_PrintUnformatted(obj);
    FUZZ_CHECK(text);
    rec_add(r, "%s %s\n", names[e], text);
    free(text);
    const char *name = rss_json_str(obj, "metadata.name");
    if (name && !strcmp(name, "fail")) /* the consumer gives up: the stream must stop there */
        return rss_error_make(err, RSS_E_CANCELLED, 0, "consumer stopped");
    return 0;
}

struct outcome {
    struct record rec;
    int r;
    enum rss_errc code;
    char *rv;
    bool gone, cb_error;
    int events;
};

static int check_line(void *ud, char *line, size_t len, rss_error_t *err)
{
    FUZZ_CHECK(len <= LINE_MAX_BYTES && !memchr(line, '\n', len));
    return on_line(ud, line, len, err);
}

static void run(const uint8_t *data, size_t size, bool chunked, uint64_t seed, struct outcome *out)
{
    memset(out, 0, sizeof(*out));
    struct watcher w = {.fn = on_event, .ud = &out->rec, .framer = {.max = LINE_MAX_BYTES}};
    rss_error_t err = NULL;
    size_t off = 0;
    uint64_t x = seed | 1;
    int r = 0;
    while (off < size && r >= 0) {
        size_t n = size - off;
        if (chunked) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n = (size_t)(x % 17 == 0 ? 0 : x % 64 + 1);
            if (n > size - off)
                n = size - off;
        }
        r = kube_framer_feed(&w.framer, (const char *)data + off, n, check_line, &w, &err);
        off += n;
    }
    out->r = r < 0 ? -1 : 0;
    out->code = err ? rss_error_code(err) : 0;
    FUZZ_CHECK((r < 0) == (err != NULL));
    out->rv = w.rv;
    out->gone = w.gone;
    out->cb_error = w.cb_error;
    out->events = w.events;
    rss_error_release(&err);
    kube_framer_free(&w.framer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    uint64_t seed = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 1099511628211ULL;
    struct outcome a, b;
    run(data, size, false, 0, &a);
    run(data, size, true, seed, &b);
    FUZZ_CHECK(a.r == b.r && a.code == b.code);
    FUZZ_CHECK(a.rec.len == b.rec.len && (a.rec.len == 0 || memcmp(a.rec.s, b.rec.s, a.rec.len) == 0));
    FUZZ_CHECK((!a.rv && !b.rv) || (a.rv && b.rv && !strcmp(a.rv, b.rv)));
    FUZZ_CHECK(a.gone == b.gone && a.cb_error == b.cb_error && a.events == b.events);
    FUZZ_CHECK(!a.gone || a.code == RSS_E_GONE);
    FUZZ_CHECK(!a.cb_error || a.r < 0);
    free(a.rec.s);
    free(b.rec.s);
    free(a.rv);
    free(b.rv);
    return 0;
}
