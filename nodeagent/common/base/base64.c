/* base64.c -- the one base64 codec (see rss/base64.h). */
#include <stdint.h>
#include <string.h>

#include "rss/base64.h"
#include "rss/cleanup.h"

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *rss_base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    char *out = rss_xmalloc(4 * ((len + 2) / 3) + 1), *o = out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        *o++ = ALPHABET[v >> 18 & 63];
        *o++ = ALPHABET[v >> 12 & 63];
        *o++ = i + 1 < len ? ALPHABET[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? ALPHABET[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

static int value(char c)
{
    const char *p = c ? strchr(ALPHABET, c) : NULL;
    return p ? (int)(p - ALPHABET) : -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char *rss_base64_decode(const char *in, size_t *len)
{
    size_t n = strlen(in);
    _cleanup_free_ char *out = rss_xmalloc(n / 4 * 3 + 1);
    size_t o = 0, pad = 0, quantum = 0;
    uint32_t v = 0;
    const char *p = in;
    for (; *p; p++) {
        if (is_space(*p))
            continue;
        int d = 0;
        if (*p == '=') {
            /* Padding fills the last two places of a quantum at most, and nothing follows it. */
            if (quantum < 2)
                return NULL;
            pad++;
        } else if (pad || (d = value(*p)) < 0) {
            return NULL;
        }
        v = v << 6 | (uint32_t)d;
        if (++quantum < 4)
            continue;
        out[o++] = (char)(v >> 16);
        if (pad < 2)
            out[o++] = (char)(v >> 8 & 0xff);
        if (pad < 1)
            out[o++] = (char)(v & 0xff);
        quantum = 0;
        v = 0;
        if (pad)
            break;
    }
    /* A quantum left open is a wrong length; after the padded one only white space may follow. */
    if (quantum)
        return NULL;
    if (pad)
        for (p++; *p; p++)
            if (!is_space(*p))
                return NULL;
    out[o] = '\0';
    *len = o;
    return TAKE_PTR(out);
}
