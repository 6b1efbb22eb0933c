/* failover.pml -- rule 15 (spec.failover PromoteStandby): promoting the most advanced standby of a lost
 * single primary never loses an acknowledged commit (docs/model.md, "Rule 15").
 *
 * One primary streams its log, in order, to S standbys; a commit is acknowledged once K of them hold it
 * (`ANY K`: synchronous_standby_names). Any standby may fall behind or go down (it then never reports),
 * the primary may crash at any moment. The leader sees the primary lost, writes a position request, and
 * counts the answers read after it (a standby answers with the log it holds when it reads); with NEED
 * answers it promotes the highest, ties to the lowest ordinal. The property: the promoted standby holds
 * every acknowledged commit.
 *
 *   -DNEED=K      promote on K answers instead of S-K+1: spin finds the loss (the answers can all come
 *                 from standbys the last acknowledged commit did not reach)
 *   -DNO_FENCE    answers read before the primary was lost count: spin finds the loss (the primary
 *                 acknowledged more after the read)
 *   -DNO_MAX      promote the first answer, not the highest: spin finds the loss
 */
#ifndef S
#define S 3
#endif
#ifndef K
#define K 1
#endif
#ifndef NEED
#define NEED (S - K + 1)
#endif
#ifndef MAXC
#define MAXC 3
#endif
#ifndef MAXDOWN
#define MAXDOWN 1
#endif

byte written = 0;      /* the primary's log end */
byte acked = 0;        /* the highest acknowledged commit (the writer's accounting) */
byte pos[S];           /* the log each standby holds */
bool down[S];          /* a standby that went down: it never answers */
byte ndown = 0;
bool primary_up = true;
bool requested = false;
bool answered[S];
byte answer[S];
byte nans = 0;
bool promoted = false;
byte best = 255;

inline count_holding(c, n)
{
    n = 0;
    i = 0;
    do
    :: i < S -> if :: pos[i] >= c -> n++ :: else -> skip fi; i++
    :: else -> break
    od
}

active proctype world()
{
    byte i, n, who;
    /* a state where nothing moves is the fallback (too few answers): the lights-out path, not modelled */
end:
    do
    /* the primary writes the next commit */
    :: atomic { primary_up && written < MAXC -> written++ }
    /* the log reaches a standby, in order (also after the crash: bytes already in flight) */
    :: atomic { select(who : 0 .. S - 1);
                if :: !down[who] && pos[who] < written -> pos[who]++ :: else -> skip fi }
    /* the primary acknowledges the next commit once K standbys hold it */
    :: atomic { primary_up && acked < written -> count_holding(acked + 1, n);
                if :: n >= K -> acked++ :: else -> skip fi }
    /* faults */
    :: atomic { primary_up -> primary_up = false }
    :: atomic { ndown < MAXDOWN -> select(who : 0 .. S - 1);
                if :: !down[who] -> down[who] = true; ndown++ :: else -> skip fi }
    /* the leader asks once it saw the primary lost (rule 15, step 2) */
    :: atomic { !requested &&
#ifdef NO_FENCE
                true
#else
                !primary_up
#endif
                -> requested = true }
    /* a standby answers: what it holds when it reads */
    :: atomic { requested && !promoted -> select(who : 0 .. S - 1);
                if
                :: !down[who] && !answered[who] -> answered[who] = true; answer[who] = pos[who]; nans++
                :: else -> skip
                fi }
    /* the promotion: the primary is lost and NEED answers came */
    :: atomic { !primary_up && !promoted && nans >= NEED ->
                i = 0;
                do
                :: i < S ->
                   if
#ifdef NO_MAX
                   :: answered[i] && best == 255 -> best = i
#else
                   :: answered[i] && (best == 255 || answer[i] > answer[best]) -> best = i
#endif
                   :: else -> skip
                   fi;
                   i++
                :: else -> break
                od;
                promoted = true;
                /* the promoted standby's log must hold every acknowledged commit */
                assert(pos[best] >= acked) }
    :: promoted -> break
    od
}
