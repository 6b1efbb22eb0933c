/* deadline.c -- a deadline that stays passed once a reader saw it pass (see rss/deadline.h). */
#include "rss/deadline.h"

void rss_deadline_set(rss_deadline_t *d, int64_t at_ns)
{
    atomic_store(d, at_ns);
}

void rss_deadline_clear(rss_deadline_t *d)
{
    atomic_store(d, 0);
}

int64_t rss_deadline_peek(rss_deadline_t *d)
{
    return atomic_load(d);
}

bool rss_deadline_alive(rss_deadline_t *d, int64_t now_ns)
{
    for (;;) {
        int64_t at = atomic_load(d);
        if (at == 0)
            return false;
        if (now_ns < at)
            return true;
        /* Seen passed: make it so for everyone. Losing the CAS means a mover (or a clear) came first:
         * look again, so that no reader answers false while the deadline stands moved. */
        if (atomic_compare_exchange_strong(d, &at, 0))
            return false;
    }
}

bool rss_deadline_move(rss_deadline_t *d, int64_t seen, int64_t to_ns)
{
    if (seen == 0)
        return false;
    return atomic_compare_exchange_strong(d, &seen, to_ns);
}
