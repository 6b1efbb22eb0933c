/* fuzz_base64.c -- rss/base64.h on arbitrary input. Asserts beyond "no crash": the input, read as
 * text, decodes exactly when an independent model accepts it (white space dropped, a multiple of 4
 * characters of the alphabet, at most two '=' and only at the end), to the length the model gives;
 * what decodes encodes back to the input without its white space, but for the unused low bits of the
 * last character; and the input, read as bytes, survives encode -> decode. */
#include "fuzz.h"
#include "rss/base64.h"

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The input without white space, and whether it is base64; *len its decoded length. */
static bool model(const char *s, char *stripped, size_t *len)
{
    size_t n = 0, pad = 0;
    bool ok = true;
    for (const char *p = s; *p; p++) {
        if (strchr(" \t\n\r\v\f", *p))
            continue;
        stripped[n++] = *p;
        if (*p == '=')
            pad++;
        else if (pad || !strchr(ALPHABET, *p))
            ok = false;
    }
    stripped[n] = '\0';
    if (!ok || n % 4 || pad > 2)
        return false;
    *len = n / 4 * 3 - pad;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* As bytes: encode -> decode is the identity. */
    char *e = rss_base64_encode(data, size);
    FUZZ_CHECK(strlen(e) == 4 * ((size + 2) / 3));
    size_t n = 0;
    char *d = rss_base64_decode(e, &n);
    FUZZ_CHECK(d && n == size && memcmp(d, data, size) == 0);
    free(d);
    free(e);

    /* As text: decoded exactly as the model says. */
    char *s = fuzz_strndup(data, size);
    char *stripped = malloc(strlen(s) + 1);
    size_t want = 0;
    bool ok = model(s, stripped, &want);
    n = 12345;
    d = rss_base64_decode(s, &n);
    FUZZ_CHECK(!d == !ok);
    if (d) {
        FUZZ_CHECK(n == want && d[n] == '\0');
        char *back = rss_base64_encode(d, n);
        size_t bl = strlen(back);
        FUZZ_CHECK(bl == strlen(stripped));
        /* Equal but for the last data character, which may carry low bits the bytes do not keep. */
        size_t last = bl;
        while (last && stripped[last - 1] == '=')
            last--;
        FUZZ_CHECK(bl == 0 || memcmp(back, stripped, last ? last - 1 : 0) == 0);
        FUZZ_CHECK(strcmp(back + last, stripped + last) == 0);
        free(back);
    } else {
        FUZZ_CHECK(n == 12345);
    }
    free(d);
    free(stripped);
    free(s);
    return 0;
}
