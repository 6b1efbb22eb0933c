/* fuzz.h -- what the libFuzzer targets share: a property check that stops the run, and a byte reader
 * for the structured targets. */
#ifndef RSS_FUZZ_H
#define RSS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A violated property: print what and where, then abort so that libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);                    \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/* The input as a NUL-terminated string (embedded NULs end it early, as they would for a C caller). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Reads bytes from the front of the input; past the end every read gives 0. */
struct fuzz_reader {
    const uint8_t *p;
    size_t left;
};

static inline uint8_t fuzz_u8(struct fuzz_reader *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->p++;
}

static inline bool fuzz_bool(struct fuzz_reader *r)
{
    return fuzz_u8(r) & 1;
}

/* A value in [0, n) (n >= 1). */
static inline unsigned fuzz_below(struct fuzz_reader *r, unsigned n)
{
    return fuzz_u8(r) % n;
}

#endif
