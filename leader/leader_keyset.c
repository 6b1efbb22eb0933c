/* leader_keyset.c -- a sorted set of strings: what the leader already did this term ("ns/name/uid"). */
#include <stdlib.h>
#include <string.h>

#include "leader_internal.h"
#include "rss/cleanup.h"

static size_t keyset_find(const struct leader_keyset *s, const char *key, bool *found)
{
    size_t lo = 0, hi = s->n;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->keys[mid], key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool leader_keyset_has(const struct leader_keyset *s, const char *key)
{
    bool found;
    keyset_find(s, key, &found);
    return found;
}

void leader_keyset_add(struct leader_keyset *s, const char *key)
{
    bool found;
    size_t i = keyset_find(s, key, &found);
    if (found)
        return;
    rss_xarray_push(&s->keys, &s->n, &s->cap, sizeof(*s->keys)); /* kept sorted: make room at i */
    memmove(s->keys + i + 1, s->keys + i, (s->n - 1 - i) * sizeof(*s->keys));
    s->keys[i] = rss_xstrdup(key);
}

void leader_keyset_del(struct leader_keyset *s, const char *key)
{
    bool found;
    size_t i = keyset_find(s, key, &found);
    if (!found)
        return;
    free(s->keys[i]);
    memmove(s->keys + i, s->keys + i + 1, (s->n - 1 - i) * sizeof(*s->keys));
    s->n--;
}

void leader_keyset_del_prefix(struct leader_keyset *s, const char *prefix)
{
    /* Sorted: the keys that start with prefix follow one another from where prefix would go. */
    bool found;
    size_t i = keyset_find(s, prefix, &found), j = i, n = strlen(prefix);
    while (j < s->n && !strncmp(s->keys[j], prefix, n))
        free(s->keys[j++]);
    if (j == i)
        return; /* none (and an empty set has no array to move) */
    memmove(s->keys + i, s->keys + j, (s->n - j) * sizeof(*s->keys));
    s->n -= j - i;
}

void leader_keyset_clear(struct leader_keyset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    *s = (struct leader_keyset){0};
}
