/* strbuf.c -- a growable string (rss/strbuf.h). */
#include <stdio.h>

#include "rss/cleanup.h"
#include "rss/strbuf.h"

void rss_strbuf_vprintf(struct rss_strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = rss_xrealloc(b->s, b->cap);
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

void rss_strbuf_printf(struct rss_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rss_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

void rss_strbuf_item(struct rss_strbuf *b, const char *fmt, ...)
{
    if (b->len)
        rss_strbuf_printf(b, "; ");
    va_list ap;
    va_start(ap, fmt);
    rss_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *rss_strbuf_str(const struct rss_strbuf *b)
{
    return b->s ? b->s : "";
}
