/* base64.h -- the standard base64 alphabet with padding (RFC 4648 section 4), both ways.
 *
 * One codec for the kubeconfig's certificate data and the failsafe's keys and signatures. Decoding
 * skips ASCII white space (kubeconfig data may be wrapped) and rejects everything else that is not a
 * canonical quantum: a character outside the alphabet, a length that is not a multiple of 4 once the
 * white space is gone, padding other than one or two '=' at the very end.
 */
#ifndef RSS_BASE64_H
#define RSS_BASE64_H

#include <stddef.h>

/* The encoding of len bytes: a new NUL-terminated string (caller frees). Never fails. */
char *rss_base64_encode(const void *data, size_t len);

/* The decoded bytes, NUL-terminated for convenience (caller frees), their count in *len; NULL when
 * `in` is not base64 as above (*len untouched). */
char *rss_base64_decode(const char *in, size_t *len);

#endif
