/* condition.h -- one status condition as the Kubernetes API conventions write it, for the planner's
 * status and the leader's report of a spec it refuses.
 */
#ifndef RSS_CONDITION_H
#define RSS_CONDITION_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* Appends {type, status "True"|"False", reason, message, observedGeneration, lastTransitionTime} to arr.
 * observedGeneration is left out when generation < 0 (unknown). lastTransitionTime is kept from the
 * entry of the same type in prev_conditions (an array, or NULL) while its status is the same, else it is
 * now_ms: the time changes only when the status does. */
void rss_condition_add(cJSON *arr, const cJSON *prev_conditions, const char *type, bool status,
                       const char *reason, const char *message, int64_t generation, int64_t now_ms);

#endif
