/* json.h -- typed, NULL-tolerant lookups in cJSON trees by dotted path.
 *
 * Kubernetes objects are deep and every level may be missing; these accessors return NULL (or the
 * default) instead of crashing on a missing or mistyped level, so callers test once at the end:
 *
 *   const char *node = rss_json_str(pod, "spec.nodeName");       NULL when absent or not a string
 *   const cJSON *meta = rss_json_obj(pod, "metadata");            NULL when absent or not an object
 *   long n = rss_json_long(sts, "spec.replicas", 1);              the default when absent
 *
 * A path is a sequence of object keys separated by dots (keys containing dots, such as annotation
 * names, must be looked up with cJSON_GetObjectItemCaseSensitive on the parent object). The returned
 * pointers borrow from `obj`. A NULL `obj` gives NULL (or the default).
 */
#ifndef RSS_JSON_H
#define RSS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* The largest integer every integer below which a double (cJSON's number) holds exactly. */
#define RSS_JSON_INT_MAX 9007199254740992.0 /* 2^53 */

/* The value at `dotted` ("" = obj itself), of any type, or NULL. */
const cJSON *rss_json_path(const cJSON *obj, const char *dotted);

/* The string at `dotted`, or NULL when it is absent or not a string. */
const char *rss_json_str(const cJSON *obj, const char *dotted);

/* The object at `dotted`, or NULL when it is absent or not an object. */
const cJSON *rss_json_obj(const cJSON *obj, const char *dotted);

/* The number at `dotted` truncated to long, or `def` when it is absent or not a number. */
long rss_json_long(const cJSON *obj, const char *dotted, long def);

/* True, with *out set, when v is a number holding a whole integer in [0, 2^53]; false (*out untouched)
 * for anything else: NULL, another type, a fraction, a negative, NaN, or a larger number, which a
 * double no longer holds exactly (and whose cast to an integer type may be undefined). */
bool rss_json_uint53(const cJSON *v, uint64_t *out);

#endif
