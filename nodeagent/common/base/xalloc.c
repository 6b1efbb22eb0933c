/* xalloc.c -- allocation that aborts on exhaustion instead of returning NULL. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rss/cleanup.h"

static void *oom(void *p)
{
    if (!p) {
        fputs("rssd: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *rss_xmalloc(size_t n)
{
    return oom(malloc(n ? n : 1));
}

void *rss_xcalloc(size_t nmemb, size_t n)
{
    return oom(calloc(nmemb ? nmemb : 1, n ? n : 1));
}

void *rss_xrealloc(void *p, size_t n)
{
    return oom(realloc(p, n ? n : 1));
}

char *rss_xstrdup(const char *s)
{
    return oom(strdup(s ? s : ""));
}

char *rss_xasprintf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        oom(NULL);
    return s;
}

char *rss_xstrndup(const char *s, size_t n)
{
    return oom(strndup(s ? s : "", n));
}

void *rss_xarray_push(void *arrayp, size_t *n, size_t *cap, size_t size)
{
    char **array = arrayp;
    if (*n >= *cap) {
        size_t c = *cap ? *cap : 4;
        while (c <= *n) {
            if (c > SIZE_MAX / 2)
                oom(NULL);
            c *= 2;
        }
        if (c > SIZE_MAX / size)
            oom(NULL);
        *array = rss_xrealloc(*array, c * size);
        *cap = c;
    }
    char *e = *array + *n * size;
    memset(e, 0, size);
    (*n)++;
    return e;
}
