/* hash.h -- FNV-1a, 64 bits: a cheap fingerprint of a text, to notice that it changed.
 *
 * Not a defence against anyone choosing the text: use it to detect changes between rssd's own reads,
 * and where a hash is stored (the StatefulSet's spec-hash annotation) its value must never change.
 */
#ifndef RSS_HASH_H
#define RSS_HASH_H

#include <stdint.h>

/* The FNV-1a hash of the NUL-terminated string s (offset basis 14695981039346656037). */
uint64_t rss_hash_fnv1a(const char *s);

#endif
