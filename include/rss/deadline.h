/* deadline.h -- a deadline shared between threads that, once seen passed, stays passed.
 *
 * The leader's term is valid until a deadline that each Lease renewal moves on. Other threads ask
 * "still valid?"; the election thread moves it after a renewal. A renewal answered (or processed) after
 * the deadline must not revive a term that a reader already saw end: that reader has stopped acting on
 * it, and a deadline moved on behind its back would leave the Lease renewed by a leader that no longer
 * leads (no reconcile ever again, and no successor either). So the first reader to see the deadline
 * passed clears it, and a move is a compare-and-swap from the value the mover last saw.
 */
#ifndef RSS_DEADLINE_H
#define RSS_DEADLINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The deadline in monotonic nanoseconds; 0 = none (passed, or never set). */
typedef atomic_int_least64_t rss_deadline_t;

/* Sets the deadline unconditionally (a new term). */
void rss_deadline_set(rss_deadline_t *d, int64_t at_ns);

/* Clears it (the term ends now). */
void rss_deadline_clear(rss_deadline_t *d);

/* The current value, for waits; 0 when passed or cleared. Does not clear. */
int64_t rss_deadline_peek(rss_deadline_t *d);

/* True while now_ns is before the deadline. The first call that finds it passed clears it, so every
 * later rss_deadline_alive and rss_deadline_move see it passed too. */
bool rss_deadline_alive(rss_deadline_t *d, int64_t now_ns);

/* Moves the deadline from `seen` (the value the caller read before its renewal) to `to_ns`. False,
 * and nothing moved, when it changed meanwhile: cleared by a reader that saw it pass, or by a resign.
 * The caller must then end the term. */
bool rss_deadline_move(rss_deadline_t *d, int64_t seen, int64_t to_ns);

#endif
