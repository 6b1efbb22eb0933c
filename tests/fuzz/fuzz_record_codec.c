/* fuzz_record_codec.c -- the coordination-state decoders: `desired` and `observed` as read from the member
 * records (rss/record.h; rss_recordcodec_{desired,observed}_decode; the first input byte picks which, the
 * rest is the JSON). Asserts beyond "no crash": a failure leaves *out zeroed with an RSS_E_INVALID message; a
 * success round-trips: decode -> encode -> decode gives an equal struct, and encoding that again gives the
 * same bytes; decoded values respect the documented caps (peers, text lengths, epochs/generations <= 2^53);
 * a deep copy of a desired equals it. */
#include "fuzz.h"
#include "rss/record_codec.h"
#include "rss/error.h"

#define MAX_53 (1ULL << 53)

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool desired_eq(const struct rss_desired *a, const struct rss_desired *b)
{
    if (a->epoch != b->epoch || !rss_action_id_equal(a->id, b->id) || a->action != b->action ||
        a->generation != b->generation || a->n_peers != b->n_peers || !str_eq(a->reason, b->reason))
        return false;
    for (size_t i = 0; i < a->n_peers; i++)
        if (!str_eq(a->peers[i], b->peers[i]))
            return false;
    return true;
}

static bool last_eq(const struct rss_last_action *a, const struct rss_last_action *b)
{
    if (a->present != b->present)
        return false;
    return !a->present ||
           (rss_action_id_equal(a->id, b->id) && a->action == b->action && a->result == b->result &&
            a->exit_code == b->exit_code && str_eq(a->message, b->message));
}

static bool observed_eq(const struct rss_observed *a, const struct rss_observed *b)
{
    return str_eq(a->container_id, b->container_id) && a->generation == b->generation && a->role == b->role &&
           a->status_code == b->status_code && a->has_sequence == b->has_sequence &&
           (!a->has_sequence || a->sequence == b->sequence) && str_eq(a->sequence_error, b->sequence_error) &&
           last_eq(&a->last, &b->last) && a->lease_epoch == b->lease_epoch && a->time_ms == b->time_ms &&
           str_eq(a->agent, b->agent);
}

static bool zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static void fuzz_desired(const char *json)
{
    struct rss_desired d, d2, copy = {0};
    rss_error_t err = NULL;
    memset(&d, 0x5a, sizeof(d));
    if (rss_recordcodec_desired_decode(json, &d, &err) < 0) {
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID && err->msg);
        FUZZ_CHECK(zero(&d, sizeof(d)));
        rss_error_release(&err);
        return;
    }
    FUZZ_CHECK(err == NULL);
    FUZZ_CHECK(d.epoch <= MAX_53 && d.generation <= MAX_53);
    FUZZ_CHECK(d.n_peers <= RSS_RECORD_MAX_PEERS && (d.n_peers == 0 || d.peers));
    FUZZ_CHECK(!d.reason || strlen(d.reason) <= RSS_RECORD_MAX_TEXT);
    char *enc = rss_recordcodec_desired_encode(&d);
    FUZZ_CHECK(enc);
    if (rss_recordcodec_desired_decode(enc, &d2, &err) < 0) {
        fprintf(stderr, "re-encoded desired does not decode: %s\n  input: %s\n  encoded: %s\n",
                err && err->msg ? err->msg : "?", json, enc);
        abort();
    }
    FUZZ_CHECK(desired_eq(&d, &d2));
    char *enc2 = rss_recordcodec_desired_encode(&d2);
    FUZZ_CHECK(enc2 && strcmp(enc, enc2) == 0);
    rss_recordcodec_desired_copy(&copy, &d);
    FUZZ_CHECK(desired_eq(&d, &copy));
    free(enc);
    free(enc2);
    rss_recordcodec_desired_clear(&d);
    rss_recordcodec_desired_clear(&d2);
    rss_recordcodec_desired_clear(&copy);
}

static void fuzz_observed(const char *json)
{
    struct rss_observed o, o2;
    rss_error_t err = NULL;
    memset(&o, 0x5a, sizeof(o));
    if (rss_recordcodec_observed_decode(json, &o, &err) < 0) {
        FUZZ_CHECK(err && rss_error_code(err) == RSS_E_INVALID && err->msg);
        FUZZ_CHECK(zero(&o, sizeof(o)));
        rss_error_release(&err);
        return;
    }
    FUZZ_CHECK(err == NULL);
    FUZZ_CHECK(o.generation <= MAX_53 && o.lease_epoch <= MAX_53);
    FUZZ_CHECK(o.container_id && strlen(o.container_id) <= RSS_RECORD_MAX_TEXT);
    char *enc = rss_recordcodec_observed_encode(&o);
    FUZZ_CHECK(enc);
    if (rss_recordcodec_observed_decode(enc, &o2, &err) < 0) {
        fprintf(stderr, "re-encoded observed does not decode: %s\n  input: %s\n  encoded: %s\n",
                err && err->msg ? err->msg : "?", json, enc);
        abort();
    }
    FUZZ_CHECK(observed_eq(&o, &o2));
    char *enc2 = rss_recordcodec_observed_encode(&o2);
    FUZZ_CHECK(enc2 && strcmp(enc, enc2) == 0);
    free(enc);
    free(enc2);
    rss_recordcodec_observed_clear(&o);
    rss_recordcodec_observed_clear(&o2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > RSS_RECORD_MAX_LEN + 16)
        return 0;
    char *json = fuzz_strndup(data + 1, size - 1);
    if (data[0] & 1)
        fuzz_observed(json);
    else
        fuzz_desired(json);
    free(json);
    return 0;
}
