/* strbuf.h -- a growable string for messages built piece by piece (status, Events, logs). */
#ifndef RSS_STRBUF_H
#define RSS_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Zero-initialise; free(b.s) when done. s is NULL until something was appended. */
struct rss_strbuf {
    char *s;
    size_t len, cap;
};

void rss_strbuf_vprintf(struct rss_strbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void rss_strbuf_printf(struct rss_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends "; " first when the buffer is not empty: for lists of reasons. */
void rss_strbuf_item(struct rss_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string so far ("" when empty); owned by b. */
const char *rss_strbuf_str(const struct rss_strbuf *b);

#endif
