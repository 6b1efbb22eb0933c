/* action.c -- the meaning of actions and roles that the planner and the agent share (rss/action.h). */
#include "rss/action.h"

bool rss_action_starts(enum rss_action a)
{
    return a == RSS_ACTION_SEED || a == RSS_ACTION_PRIMARY || a == RSS_ACTION_SECONDARY;
}

bool rss_role_running(enum rss_role r)
{
    return r == RSS_ROLE_PRIMARY || r == RSS_ROLE_SECONDARY;
}
