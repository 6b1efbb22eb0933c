/* journal.pml -- the journal rule (docs/planner.md, "Proven behind by the journal"): a recovery that leaves
 * out a missing member proven behind never seeds a member with less data than any member has.
 *
 * Time is discrete (ticks, at most TMAX). Members run, commit and go down (a crash, a dead node), never to
 * come back before the lights-out; the leader sees each member's running state late, by up to LAG ticks
 * (report lag: a status round, a heartbeat's lease), and keeps the journal from what it sees, as
 * planner.c journal_update() does: a member seen going down gets a record with the members seen running
 * at that plan and the one before as witnesses; a witness is confirmed when, WINDOW ticks or more after
 * the record, it is still seen running; one seen down before that is dropped. Then every member goes
 * down (the lights-out), the leader sees the truth, some members come back and the rest stay off. The
 * recovery goes on only when every missing member is proven behind: a confirmed witness came back with
 * a sequence above the missing member's last known one (its sequence before it started: 0 here). The
 * seed is the highest member that came back. The property: it holds every commit any member holds.
 *
 * Replication: synchronous (default: a commit reaches every running member at once: Galera's primary
 * component) or -DASYNC (a commit lands on one running member and reaches the others later), which the
 * rule must not be trusted with: spin finds the loss. Mutants: -DWINDOW=1 with -DLAG=3 (a window shorter
 * than the lag), -DNO_CONFIRM (an unconfirmed witness counts); -DNO_PAST (no "committed past" check) stays
 * safe with synchronous replication: that check is defence in depth. A witness is confirmed at the
 * earliest one plan after its record, so a window of LAG - 1 ticks is still safe here; the code's window
 * is larger than its lag by at least a status round. tests/model/check.sh runs them (docs/model.md).
 */
#ifndef N
#define N 3
#endif
#ifndef LAG
#define LAG 2
#endif
#ifndef WINDOW
#define WINDOW LAG /* the code's window (dead-node window + 2 status rounds + a status timeout) >= the lag */
#endif
#ifndef TMAX
#define TMAX 7
#endif
#ifndef MAXSEQ
#define MAXSEQ 3
#endif

#ifdef NO_CONFIRM
#define COUNTS(x, y) wit[(x) * N + (y)]
#else
#define COUNTS(x, y) conf[(x) * N + (y)]
#endif
#ifdef NO_PAST
#define PAST(y) true
#else
#define PAST(y) (seq[y] > 0) /* above the missing member's last known sequence (0: all start equal) */
#endif

byte t;
byte seq[N];       /* commits the member's data holds */
bool up[N];        /* the application runs (it is in the primary component) */
byte changed[N];   /* tick of its last change of up */
bool seen[N];      /* the leader's view: running */
bool seen_prev[N]; /* ... at the previous plan */
bool rec[N];       /* a journal record */
byte rec_at[N];
bool wit[N * N];   /* wit[x * N + y]: y is a witness of x's record */
bool conf[N * N];  /* ... confirmed */
bool present[N];   /* came back after the lights-out */

inline commit()
{
    top = 0;
    for (i : 0 .. N - 1) {
        if
        :: seq[i] > top -> top = seq[i]
        :: else
        fi
    }
    if
    :: top < MAXSEQ ->
#ifdef ASYNC
        /* acknowledged by one running member; the others get it later (replicate) */
        if
        :: up[0] -> seq[0] = top + 1
        :: up[1] -> seq[1] = top + 1
        :: up[2] -> seq[2] = top + 1
        fi
#else
        for (i : 0 .. N - 1) {
            if
            :: up[i] -> seq[i] = top + 1
            :: else
            fi
        }
#endif
    :: else
    fi
}

#ifdef ASYNC
inline replicate()
{
    for (a : 0 .. N - 1) {
        for (b : 0 .. N - 1) {
            if
            :: up[a] && up[b] && seq[a] > seq[b] -> seq[b] = seq[a]
            :: true
            fi
        }
    }
}
#endif

/* The leader's view moves towards the truth, at the latest LAG ticks after a change. */
inline observe()
{
    for (i : 0 .. N - 1) {
        seen_prev[i] = seen[i];
        if
        :: seen[i] != up[i] && t - changed[i] >= LAG -> seen[i] = up[i]
        :: seen[i] != up[i] && t - changed[i] < LAG -> if
                                                      :: seen[i] = up[i]
                                                      :: true
                                                      fi
        :: else
        fi
    }
}

inline journal()
{
    for (x : 0 .. N - 1) {
        if
        :: seen[x] ->
            rec[x] = false;
            for (y : 0 .. N - 1) {
                wit[x * N + y] = false;
                conf[x * N + y] = false
            }
        :: !seen[x] && rec[x] ->
            for (y : 0 .. N - 1) {
                if
                :: wit[x * N + y] && !conf[x * N + y] && !seen[y] -> wit[x * N + y] = false
                :: wit[x * N + y] && !conf[x * N + y] && seen[y] && t - rec_at[x] >= WINDOW ->
                    conf[x * N + y] = true
                :: else
                fi
            }
        :: !seen[x] && !rec[x] && seen_prev[x] ->
            rec[x] = true;
            rec_at[x] = t;
            for (y : 0 .. N - 1) {
                wit[x * N + y] = (y != x && seen[y] && seen_prev[y])
            }
        :: else
        fi
    }
}

/* Every missing member proven behind by a witness that came back; the seed is the highest present. */
inline recover()
{
    go = true;
    for (x : 0 .. N - 1) {
        if
        :: !present[x] ->
            proven = false;
            for (y : 0 .. N - 1) {
                if
                :: rec[x] && COUNTS(x, y) && present[y] && PAST(y)
                    -> proven = true
                :: else
                fi
            }
            go = go && proven
        :: else
        fi
    }
    if
    :: go ->
        best = 255;
        for (x : 0 .. N - 1) {
            if
            :: present[x] && (best == 255 || seq[x] > seq[best]) -> best = x
            :: else
            fi
        }
        for (x : 0 .. N - 1) {
            assert(seq[best] >= seq[x]) /* no member holds a commit the seed lacks */
        }
    :: else /* waits: always safe */
    fi
}

active proctype world()
{
    /* the inlines' locals (Promela has no block scope) */
    byte i, x, y, a, b, top, best;
    bool go, proven;
    for (i : 0 .. N - 1) {
        up[i] = true;
        seen[i] = true;
        seen_prev[i] = true
    }
    /* Any number of commits and crashes may happen within a tick; the leader looks once per tick. */
    do
    :: commit()
#ifdef ASYNC
    :: replicate()
#endif
    :: up[0] -> up[0] = false; changed[0] = t
    :: up[1] -> up[1] = false; changed[1] = t
    :: up[2] -> up[2] = false; changed[2] = t
    :: t < TMAX ->
        t++;
        observe();
        journal()
    :: t >= TMAX -> break
    od;
    /* The lights-out: everyone down; the leader then sees it (a new leader reads the same journal). */
    for (i : 0 .. N - 1) {
        up[i] = false
    }
    /* Which nodes come back: at least one. */
    for (i : 0 .. N - 1) {
        if
        :: present[i] = true
        :: present[i] = false
        fi
    }
    if
    :: present[0] || present[1] || present[2] -> recover()
    :: else
    fi
}
