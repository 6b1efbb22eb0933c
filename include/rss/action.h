/* action.h -- what an action and a role mean to both sides of the protocol: the leader's planner and
 * the node agent ask the same questions of them, and must not answer differently.
 *
 * The actions and roles themselves are the member record's (rss/record_codec.h).
 */
#ifndef RSS_ACTION_H
#define RSS_ACTION_H

#include <stdbool.h>

#include "rss/record_codec.h"

/* True for the actions that start the application (seed, primary, secondary): they need the write-ahead
 * (rule 8), bump the generation when their hook succeeds, and count as a start in flight until done. */
bool rss_action_starts(enum rss_action a);

/* True for the roles in which the application runs and serves (primary, secondary). A member that is
 * starting is not running yet. */
bool rss_role_running(enum rss_role r);

#endif
