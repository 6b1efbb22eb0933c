/* hash.c -- FNV-1a (see rss/hash.h). */
#include "rss/hash.h"

uint64_t rss_hash_fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}
