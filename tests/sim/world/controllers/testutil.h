/* testutil.h -- helpers for the world-controllers unit tests: JSON from single-quoted literals. */
#ifndef RSS_WORLD_CONTROLLERS_TESTUTIL_H
#define RSS_WORLD_CONTROLLERS_TESTUTIL_H

#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

/* Parses a JSON literal written with single quotes ("{'a':'b'}"), aborting on a typo; caller frees. */
static inline cJSON *J(const char *text)
{
    char *s = strdup(text);
    if (!s)
        abort();
    for (char *p = s; *p; p++) {
        if (*p == '\'')
            *p = '"';
    }
    cJSON *j = cJSON_Parse(s);
    free(s);
    if (!j)
        abort();
    return j;
}

#endif
