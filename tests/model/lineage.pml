/*
 * tests/model/lineage.pml -- rules 15-18 together: a single primary replaced by promoting a standby, with
 * the failover's state in the member records (rule 16), the newer history kept when two primaries run
 * (rule 17) and a woken agent's fence (rule 18), under term changes, lost status writes, a whole-node
 * freeze and thaw, and a scale-down (docs/model.md, "Rules 16-18").
 *
 * failover.pml is rule 15's arithmetic alone (S-k+1 answers, read after the loss, the highest). This model
 * is the protocol around it, as leader/planner/ implements it at aeb5b7e (rules 16 and 17 since b4b5504, a
 * standby on a silent node passed over since 80df9e6) and fence.c rule 18: NM members, member i on node i
 * with agent i; one leader whose plan is one atomic step (a LIST, the pure planner, the record CASes; a
 * term change can only fall between two plans, and there is one leader at a time: rss.pml checks the
 * election); one agents process (the agents of every node); one data process (the application); one
 * faults process. Every step names the function it mirrors.
 *
 * The data is exact: a write makes a new entry (1..MAXW); a member's data is the list of entries it holds
 * (d, ln); a standby streams from its upstream (up) the next entry of the upstream's list; a primary
 * acknowledges an entry it wrote once K of its followers hold it (the application's `ANY K`); a member
 * that joins a primary as a secondary keeps the common prefix of its list and the primary's and drops
 * the rest (pg_rewind); a promotion keeps the standby's list, and the new primary appends to it. No
 * history bookkeeping is needed: two diverged histories are two lists.
 *
 * Properties (assertions):
 *   P1    a promoted standby holds every acknowledged entry (its `seed` hook, execute());
 *   P2    after a rewind, and after a pod is removed by a scale-down, every acknowledged entry is still held
 *         by some member of the cluster (an acknowledged commit is never lost);
 *   P3    a primary acknowledges an entry only while it holds every entry acknowledged so far (two primaries
 *         never both acknowledge: one of the two histories is lost whichever is kept);
 *   R16   a failover never forgets the primary it replaces (FailoverFallback "no member is known to have
 *         been the primary" stops every standby of a cluster whose primary rssd knew);
 *   AVAIL a FailoverFallback for too few standbys (it stops every standby) only when, in truth, fewer than
 *         S-k+1 standbys run following the lost primary;
 *   LIVE  once the faults are over and nothing moves, a primary runs and the leader sees it up, unless the
 *         failover fell back for a reason the rules allow, and no standby stays detached (its primary could
 *         acknowledge nothing under ANY K) (NO_LIVE: not checked).
 *
 * The rules, each removable (-DNO_x puts back the code before it):
 *   NO_MARK      rule 16: the failover's state only in status.failover and the roles of the last status
 *                (lost_primary(), the request, the repoint list, no follows(): the code before b4b5504)
 *   NO_NEWER     rule 17, both halves: NO_HOLDAT (a hold ends when its member runs, no `at`, so no
 *                diverged primary) and NO_NEWMARK (two primaries resolved by ordinal, the highest stopped)
 *   NO_WAKEFENCE rule 18: a woken agent's fence is called off by the API server's answer
 *   S_REPLICAS   the promotion quorum S counts only ordinals below spec.replicas (the code before b4b5504)
 *   NO_FOLLOWS   every running standby is asked and counted, also one that still follows an older primary
 *   NO_SCALEFLOOR the scale-down removes a stopped standby's pod without writing its last sequence into the
 *                primary's mark (scaledAway), and the promotion does not fall back below it (model finding L4)
 *   NO_REATTACH  rule 19: a failover that promoted nobody leaves its detached standbys detached
 *   NO_ANSWERGUARD rule 19: an answer given before the standby's re-attach counts, and a request a
 *                re-attach retired is waited for (answered(), request_live())
 *   EARLY        rule 19's second half: a primary on a silent node is replaced without the dead verdict
 *                (planner_failover_early(): the code does it only under spec.silentNodePolicy Promote, which
 *                needs a `detach` hook, so EARLY is DETACH here; -DEARLY=1 -DDETACH=0 is the mutant)
 *   DETACH       (a switch on, not off) a standby stops streaming from its primary when it answers a position
 *                request: rule 19, the code with a `detach` hook in the spec; without one `sequence` only reads
 * Not the code (proposed fixes of the model's open findings, docs/model.md; a check that sets one says so):
 *   FIX_VOIDMARK     a mark whose start a new term fenced before its agent took it up names no primary
 *   FIX_STALESTANDBY a live standby whose report predates this epoch holds the promotion up (80df9e6 passes
 *                    it over, meant for a standby on a silent node)
 * Scenario: NM (3, or 4 with SCALE), K, MAXW writes, CRASH primary crashes, TERMS term changes, LOSTST lost
 *   status writes, FREEZE (node 0 freezes once with its member primary, and thaws), THAW_LATE (the thaw comes
 *   before the dead verdict or once no standby follows m0: issue 35's measured order), SCALE (spec.replicas
 *   lowered from NM to NM-1 at any time), KEEP_POD (the scale-down never removes the pod: only the failover
 *   during the scale-down), MAXID (action ids; a run that needs more stops planning: LIVE is not judged), PART
 *   (node 0 cut off from the API once with its member primary: agent 0 silent, member 0 still writing and
 *   streaming; the cut heals, or outlasts the fence timeout: agent 0 stops m0 and the leader judges it dead).
 */

#ifndef NM
#define NM 3
#endif
#ifndef K
#define K 1
#endif
#ifndef MAXW
#define MAXW 2
#endif
#ifndef CRASH
#define CRASH 1
#endif
#ifndef TERMS
#define TERMS 0
#endif
#ifndef LOSTST
#define LOSTST 0
#endif
#ifndef FREEZE
#define FREEZE 0
#endif
#ifndef SCALE
#define SCALE 0
#endif
#ifndef KEEP_POD
#define KEEP_POD 0
#endif
#ifndef MAXID
#define MAXID 24
#endif
#ifndef NO_MARK
#define NO_MARK 0
#endif
#ifndef NO_NEWER
#define NO_NEWER 0
#endif
#if NO_NEWER
#define NO_HOLDAT 1
#define NO_NEWMARK 1
#endif
#ifndef NO_HOLDAT
#define NO_HOLDAT 0
#endif
#ifndef NO_NEWMARK
#define NO_NEWMARK 0
#endif
#ifndef NO_WAKEFENCE
#define NO_WAKEFENCE 0
#endif
#ifndef S_REPLICAS
#define S_REPLICAS 0
#endif
#ifndef FIX_VOIDMARK
#define FIX_VOIDMARK 0
#endif
#ifndef THAW_LATE
#define THAW_LATE 0
#endif
#ifndef NO_LIVE
#define NO_LIVE 0
#endif
#ifndef FIX_STALESTANDBY
#define FIX_STALESTANDBY 0
#endif
#ifndef NO_FOLLOWS
#define NO_FOLLOWS 0
#endif
#ifndef DETACH
#define DETACH 0
#endif
#ifndef NO_SCALEFLOOR
#define NO_SCALEFLOOR 0
#endif
#ifndef PART
#define PART 0
#endif
/* rule 19's second half: with a `detach` hook (DETACH) a primary on a silent node is replaced without
 * waiting for the dead verdict (planner_failover_early()); -DEARLY=1 -DDETACH=0 is the mutant */
#ifndef EARLY
#define EARLY DETACH
#endif
#ifndef NO_REATTACH
#define NO_REATTACH 0
#endif
#ifndef NO_ANSWERGUARD
#define NO_ANSWERGUARD 0
#endif

#define NONE 255
/* roles (observed.role) */
#define STOPPED 0
#define PRIMARY 1
#define SECONDARY 2
/* desired actions */
#define A_NONE 0
#define A_SEED 1 /* the seed of a running standby: a promotion */
#define A_SEC 2  /* secondary with peer dpeer: a join or a repoint */
#define A_STOP 3

/* ---- the truth: what runs, and the data ---- */
byte role[NM];       /* what the member's process is */
byte up[NM];         /* a secondary's upstream (NONE: none) */
bool det[NM];        /* DETACH: it stopped streaming from its upstream when it answered a position request */
byte ln[NM];         /* entries held */
byte d[NM * MAXW];   /* d[i * MAXW + k]: the k-th entry member i holds */
byte wby[MAXW + 1];  /* the member that wrote entry e */
byte nw = 0;         /* entries written */
byte acked = 0;      /* bit e: entry e acknowledged to its client */
bool frozen = false; /* node 0 (agent 0 and member 0) takes no step */
bool wasdead = false;  /* node 0 was judged dead during this freeze: its Node was read not Ready */
bool wake = false;   /* agent 0 woke past its fence timeout with its Node not Ready meanwhile (rule 18) */
bool cut = false;    /* PART: node 0 is cut off from the API (agent 0 silent); member 0 runs on, and its
                      * standbys still reach it */
bool cutdone = false;
bool silent0 = false; /* the leader sees node 0's heartbeat silent (not judged dead) */

/* ---- the member records (rssd-system ConfigMaps) ---- */
byte orole[NM];    /* observed.role */
bool ofresh[NM];   /* observed under this leader's epoch (planner_derive.c `fresh`, `current`) */
byte oack[NM];     /* observed.last.id: the last action done (any result) */
byte olast[NM];    /* the last start done with result ok (planner_lineage_started_after()) */
byte opfor[NM];    /* observed.positionFor */
byte opos[NM];     /* observed.position */
byte dact[NM];     /* desired.action */
byte did[NM];      /* desired.id */
byte dpeer[NM];    /* desired peers (one) */
byte dreq[NM];     /* desired.positionRequest */
byte mark[NM];     /* the primary mark's action (0: none), rule 16 */
bool mprom[NM];    /* the mark is a promotion's (promotedOver) */
byte sfl[NM];      /* the mark's scaledAway: the highest last sequence of a standby removed while it was primary */
bool hold[NM];     /* leftOut (rule 14), with no bound: the failover's */
byte hat[NM];      /* the hold's `at` (rule 17) */
/* ---- the status ---- */
byte s_lost = NONE; /* status.failover.lost */
byte s_req = 0;     /* status.failover.request */
byte s_prom = NONE; /* status.failover.promoted */
byte s_rep = 0;     /* status.failover.repoint (NO_MARK only), a bit per ordinal */
#if NO_MARK
byte s_role[NM];    /* status.memberStatus[].role (NO_MARK only: the code since reads the marks) */
#endif
/* ---- the leader ---- */
byte nid;             /* the next action id (ids of all terms in one increasing sequence) */
byte epfirst = 1;     /* the first id of this term: an id of this epoch is >= epfirst */
bool dead0 = false;   /* this leader judged node 0 dead (rule 13; reset per term) */
bool fence = false;   /* a new term has not fenced yet (rule 9) */
bool dirty = true;    /* something the leader reads changed since its last plan */
byte target = NM;     /* spec.replicas */
byte sts = NM;        /* StatefulSet replicas: the pods that exist are ordinals below it */
bool fellback = false; /* the failover fell back to the lights-out path (not modelled further) */
bool lightsout = false; /* nothing runs any more: the lights-out row (not modelled further) */
bool exhausted = false; /* MAXID reached: the leader stops */
bool faults_over = false;
byte ncrash = 0, nterm = 0, nlost = 0;

#define AT(j, k) d[(j) * MAXW + (k)]
#if THAW_LATE
/* the thaw comes before the dead verdict (no failover begun), or once no standby follows m0 any more (the
 * failover's repoint done: the measured order of issue 35's fault 1) */
#if NM > 3
#define FOLLOWS0(j) (role[j] == SECONDARY && up[j] == 0)
#define THAW_OK (!wasdead || !(FOLLOWS0(1) || FOLLOWS0(2) || FOLLOWS0(3)))
#else
#define FOLLOWS0(j) (role[j] == SECONDARY && up[j] == 0)
#define THAW_OK (!wasdead || !(FOLLOWS0(1) || FOLLOWS0(2)))
#endif
#else
#define THAW_OK true
#endif
#define FROZEN(i) ((i) == 0 && frozen)
#define CUT(i) ((i) == 0 && cut)
#define EXISTS(i) ((i) < sts)
#if MAXW == 1
#define HOLDS(j, e) (ln[j] >= 1 && AT(j, 0) == (e))
#elif MAXW == 2
#define HOLDS(j, e) ((ln[j] >= 1 && AT(j, 0) == (e)) || (ln[j] >= 2 && AT(j, 1) == (e)))
#else
#define HOLDS(j, e) ((ln[j] >= 1 && AT(j, 0) == (e)) || (ln[j] >= 2 && AT(j, 1) == (e)) || (ln[j] >= 3 && AT(j, 2) == (e)))
#endif
#define ACKED(e) ((acked >> (e)) & 1)
/* member j's data is a prefix of member p's (streaming needs it: another timeline is refused) */
#if MAXW == 1
#define PREFIX(j, p) (ln[j] < 1 || AT(j, 0) == AT(p, 0))
#elif MAXW == 2
#define PREFIX(j, p) ((ln[j] < 1 || AT(j, 0) == AT(p, 0)) && (ln[j] < 2 || AT(j, 1) == AT(p, 1)))
#else
#define PREFIX(j, p) ((ln[j] < 1 || AT(j, 0) == AT(p, 0)) && (ln[j] < 2 || AT(j, 1) == AT(p, 1)) && (ln[j] < 3 || AT(j, 2) == AT(p, 2)))
#endif

/* the leader's view (planner_derive.c derive(), planner_load()) */
#define FDEAD(i) ((i) == 0 && dead0)
#define UNRES(i) (dact[i] != A_NONE && did[i] != oack[i])
#define STARTING(i) (UNRES(i) && (dact[i] == A_SEED || dact[i] == A_SEC))
#define RUNNING(i) (EXISTS(i) && ofresh[i] && !FDEAD(i) && (orole[i] == PRIMARY || orole[i] == SECONDARY))
#define LIVE(i) (EXISTS(i) && !FDEAD(i) && (orole[i] == PRIMARY || orole[i] == SECONDARY))
#define SILENT(i) ((i) == 0 && silent0 && !dead0)
#define PUP(i) (RUNNING(i) && orole[i] == PRIMARY && !dv[i] && !SILENT(i))
#define SBY(i) (RUNNING(i) && orole[i] == SECONDARY && !UNRES(i) && !SILENT(i))
#define ACTIONABLE(i) (EXISTS(i) && !FDEAD(i) && ofresh[i] && !UNRES(i) && !SILENT(i))
/* answered(): an answer to req, unless the member started since (a re-attach) */
#if NO_ANSWERGUARD
#define ANSWERED(i, r) (opfor[i] == (r))
#else
#define ANSWERED(i, r) (opfor[i] == (r) && olast[i] < (r))
#endif
#if NO_MARK || NO_FOLLOWS
#define FOLLOWS(m, lo) true
#else
/* planner_failover.c follows(): started after the lost primary was made primary */
#define FOLLOWS(m, lo) (mark[lo] == 0 || olast[m] > mark[lo])
#endif
#if FIX_VOIDMARK
/* NOT the code: a mark counts once its start was done (or is still on the record to be done); a mark whose
 * desired a new term fenced before the agent took it up names no primary */
#define MARKED(i) (olast[i] >= mark[i] || (dact[i] == A_SEED && did[i] == mark[i]))
#else
#define MARKED(i) true
#endif
#if FIX_STALESTANDBY
/* NOT the code: only a standby on a silent node is passed over (none in the model); one whose report
 * predates this epoch is waited for, as before 80df9e6 */
#define PASSED_OVER(i) false
#else
/* planner_failover_promote() since 80df9e6: a live standby that does not run (a silent node, or a report
 * from before this epoch) holds up nothing, and is neither asked nor counted */
#define PASSED_OVER(i) (orole[i] == SECONDARY)
#endif
#if S_REPLICAS
#define COUNTED(m) ((m) < target)
#else
#define COUNTED(m) true
#endif

/* every acknowledged entry held by member j */
inline holds_all(j, ok)
{
    ok = true;
    e = 1;
    do
    :: e <= nw -> if :: ACKED(e) && !HOLDS(j, e) -> ok = false :: else -> skip fi; e++
    :: else -> break
    od
}

/* P2: every acknowledged entry is held by a member of the cluster */
inline assert_none_lost()
{
    e = 1;
    do
    :: e <= nw ->
       if
       :: ACKED(e) ->
          k = 0; ok = false;
          do
          :: k < NM -> if :: EXISTS(k) && HOLDS(k, e) -> ok = true :: else -> skip fi; k++
          :: else -> break
          od;
          if :: !ok -> printf("@@ P2 violated: acknowledged entry %d is on no member any more\n", e) :: else -> skip fi;
          assert(ok)
       :: else -> skip
       fi;
       e++
    :: else -> break
    od
}

/* planner_issue(): a new desired (it carries no position request) */
inline issue(m, a, p)
{
    dact[m] = a; did[m] = nid; dpeer[m] = p; dreq[m] = 0; dec[m] = true; nid++; chg = true;
    /* planner_lineage_issue(): a secondary start removes the member's mark (it follows a primary now); a
     * promotion writes one (failover_promote()) */
    if :: a == A_SEC -> mark[m] = 0; mprom[m] = false; sfl[m] = 0 :: else -> skip fi;
    if
    :: a == A_SEED -> printf("@@ leader (plan): seed (promote) m%d, action %d, its primary mark\n", m, did[m])
    :: a == A_SEC -> printf("@@ leader (plan): secondary m%d with peer m%d, action %d\n", m, p, did[m])
    :: a == A_STOP -> printf("@@ leader (plan): stop m%d, action %d\n", m, did[m])
    fi
}

init
{
    byte i;
    atomic {
        nid = NM + 1;
        i = 0;
        do
        :: i < NM ->
           /* m0 was seeded by action 1 (its primary mark); each standby joined it after (action i+1) */
           if
           :: i == 0 -> role[i] = PRIMARY; up[i] = NONE; mark[i] = 1
           :: else -> role[i] = SECONDARY; up[i] = 0
           fi;
           orole[i] = role[i]; ofresh[i] = true; oack[i] = i + 1; olast[i] = i + 1;
#if NO_MARK
           s_role[i] = role[i];
#endif
           i++
        :: else -> break
        od;
        run data(); run agents(); run leader(); run faults()
    }
}

/* ---- the application: client writes, streaming, acknowledgements ---- */
#define WRITE(p) :: atomic { role[p] == PRIMARY && !FROZEN(p) && EXISTS(p) && nw < MAXW -> \
                      nw++; AT(p, ln[p]) = nw; ln[p]++; wby[nw] = p; printf("@@ m%d writes entry %d\n", p, nw) }
#define STREAM(i) :: atomic { role[i] == SECONDARY && up[i] != NONE && !det[i] && EXISTS(i) && !FROZEN(i) && \
                       role[up[i]] == PRIMARY && !FROZEN(up[i]) && ln[i] < ln[up[i]] && PREFIX(i, up[i]) -> \
                       AT(i, ln[i]) = AT(up[i], ln[i]); ln[i]++; printf("@@ m%d receives entry %d from m%d\n", i, AT(i, ln[i] - 1), up[i]) }
#define FH(j, p, e) ((role[j] == SECONDARY && up[j] == (p) && !det[j] && EXISTS(j) && HOLDS(j, e)) -> 1 : 0)
#if NM > 3
#define NHOLD(p, e) (FH(0, p, e) + FH(1, p, e) + FH(2, p, e) + FH(3, p, e))
#else
#define NHOLD(p, e) (FH(0, p, e) + FH(1, p, e) + FH(2, p, e))
#endif
/* P3: the primary that acknowledges holds every entry acknowledged so far */
#define ACK(p, e) :: atomic { e <= nw && wby[e] == p && !ACKED(e) && role[p] == PRIMARY && !FROZEN(p) && \
                       EXISTS(p) && HOLDS(p, e) && NHOLD(p, e) >= K -> \
                       printf("@@ m%d acknowledges entry %d\n", p, e); holds_all(p, ok); \
                       if :: !ok -> printf("@@ P3 violated: m%d acknowledges beside an acknowledged entry it lacks\n", p) \
                       :: else -> skip fi; assert(ok); acked = acked | (1 << e) }
#if MAXW == 1
#define ACKS(p) ACK(p, 1)
#elif MAXW == 2
#define ACKS(p) ACK(p, 1) ACK(p, 2)
#else
#define ACKS(p) ACK(p, 1) ACK(p, 2) ACK(p, 3)
#endif
#if NM > 3
#define EACH(F) F(0) F(1) F(2) F(3)
#else
#define EACH(F) F(0) F(1) F(2)
#endif

proctype data()
{
    byte e, k;
    bool ok;
end:
    do
    EACH(WRITE)
    EACH(STREAM)
    EACH(ACKS)
    od
}

/* ---- the agents (agent_reconcile.c): report, execute the desired, answer position requests ---- */
/* publish: a report under the agent's Lease view, the current epoch */
#define REPORT(i) :: atomic { EXISTS(i) && !FROZEN(i) && !CUT(i) && (orole[i] != role[i] || !ofresh[i]) -> \
                       printf("@@ agent %d reports m%d %d (1 primary, 2 secondary, 0 stopped)\n", i, i, role[i]); \
                       orole[i] = role[i]; ofresh[i] = true; dirty = true }
/* execute(): the hook, then the report (the write-ahead is not modelled: a plan sees an action either
 * not taken up or done) */
#define EXEC(i) :: atomic { EXISTS(i) && !FROZEN(i) && !CUT(i) && dact[i] != A_NONE && did[i] != oack[i] -> \
                     execute(i); oack[i] = did[i]; orole[i] = role[i]; ofresh[i] = true; dirty = true; \
                     printf("@@ agent %d: action %d done, m%d is %d (1 primary, 2 secondary, 0 stopped), holds %d entries\n", i, did[i], i, role[i], ln[i]) }
/* do_position(): the `sequence` hook on a running standby, after it saw the request */
#define ANSWER(i) :: atomic { EXISTS(i) && !FROZEN(i) && !CUT(i) && dreq[i] != 0 && opfor[i] != dreq[i] && \
                       role[i] == SECONDARY -> opfor[i] = dreq[i]; opos[i] = ln[i]; detach(i); \
                       printf("@@ agent %d answers request %d: position %d\n", i, dreq[i], ln[i]); \
                       orole[i] = role[i]; ofresh[i] = true; dirty = true }

inline detach(i)
{
#if DETACH
    det[i] = true
#else
    skip
#endif
}

inline execute(i)
{
    if
    :: dact[i] == A_SEED && role[i] == SECONDARY ->
       /* the seed hook on a running standby promotes it (HOOK_SEED) */
       holds_all(i, ok);
       if :: !ok -> printf("@@ P1 violated: the promoted m%d lacks an acknowledged entry\n", i) :: else -> skip fi;
       assert(ok); /* P1 */
       role[i] = PRIMARY; up[i] = NONE; olast[i] = did[i]
    :: dact[i] == A_SEC && dpeer[i] != NONE && role[dpeer[i]] == PRIMARY && !FROZEN(dpeer[i]) ->
       /* the secondary hook: follow the peer, rewinding what it does not hold (pg_rewind) */
       p = dpeer[i];
       k = 0;
       do
       :: k < ln[i] && k < ln[p] && AT(i, k) == AT(p, k) -> k++
       :: else -> break
       od;
       ln[i] = k;
       role[i] = SECONDARY; up[i] = p; det[i] = false; olast[i] = did[i];
       assert_none_lost() /* P2 */
    :: dact[i] == A_STOP -> role[i] = STOPPED; up[i] = NONE
    :: else -> skip /* the hook failed (a seed of a member that is not a running standby, a secondary
                     * without a running primary): the report says so, nothing changed */
    fi
}

proctype agents()
{
    byte e, k, p;
    bool ok;
end:
    do
    EACH(REPORT)
    EACH(EXEC)
    EACH(ANSWER)
    /* the heartbeat renews after the thaw: the leader sees node 0 alive again (leader_liveness.c) */
    :: atomic { !frozen && !cut && (dead0 || silent0) -> dead0 = false; silent0 = false; dirty = true; printf("@@ agent 0's heartbeat: node 0 alive again\n") }
    /* rule 18 (fence.c wake_check()): a wake past the fence timeout with the Node not Ready meanwhile stops
     * every member; the API server's answer never calls it off */
    :: atomic { !frozen && wake -> wake = false;
#if !NO_WAKEFENCE
                if
                :: role[0] != STOPPED -> role[0] = STOPPED; up[0] = NONE; orole[0] = STOPPED; ofresh[0] = true;
                   dirty = true; printf("@@ agent 0 wakes: rule 18 stops m0\n")
                :: else -> skip
                fi
#endif
       }
    od
}

/* ---- the faults ---- */
#define CRASHP(p) :: atomic { ncrash < CRASH && role[p] == PRIMARY && !FROZEN(p) && EXISTS(p) -> \
                       ncrash++; role[p] = STOPPED; printf("@@ m%d (primary) crashes\n", p) }
proctype faults()
{
    byte i;
end:
    do
    /* the primary's process dies (its agent reports it stopped) */
    EACH(CRASHP)
    /* node 0 freezes whole (kubelet, rssd, the member: a paused VM) with its member primary */
    :: atomic { FREEZE && !frozen && !wasdead && role[0] == PRIMARY -> frozen = true; printf("@@ node 0 freezes\n") }
    /* the dead window passes (heartbeat silent, Node not Ready): the leader judges node 0 dead, although
     * its member still runs, frozen (the premise of rule 13 that a freeze breaks) */
    :: atomic { frozen && !dead0 -> dead0 = true; wasdead = true; dirty = true; printf("@@ leader judges node 0 dead (m0 still runs, frozen)\n") }
    /* the thaw: everything of node 0 runs again at once */
    :: atomic { frozen && THAW_OK -> frozen = false; wake = wasdead; printf("@@ node 0 thaws (m0 still primary)\n") }
    /* a term change: the new leader forgets the status's failover, judges liveness afresh, fences first */
    :: atomic { nterm < TERMS -> nterm++; epfirst = nid; fence = true; dead0 = false; dirty = true;
                printf("@@ term change: a new leader (ids from %d)\n", nid);
                i = 0;
                do :: i < NM -> ofresh[i] = false; i++ :: else -> break od }
    /* spec.replicas lowered by one (a scale-down under way) */
    :: atomic { SCALE && target == NM -> target = NM - 1; dirty = true; printf("@@ spec.replicas lowered to %d\n", NM - 1) }
    /* PART: node 0 cut off from the API (rssd and kubelet silent), its member primary and still reached by
     * its standbys and clients; the leader sees the heartbeat silent at once */
    :: atomic { PART && !cut && !cutdone && !frozen && role[0] == PRIMARY -> cut = true; cutdone = true; silent0 = true;
                dirty = true; printf("@@ node 0 is cut off from the API (m0 runs on)\n") }
    /* the cut outlasts the fence timeout: agent 0 stops its member (rule 13), then the leader judges it dead */
    :: atomic { cut && !dead0 -> role[0] = STOPPED; up[0] = NONE; dead0 = true; wasdead = true; dirty = true;
                printf("@@ agent 0 self-fences (m0 stopped), the leader judges node 0 dead\n") }
    :: atomic { cut -> cut = false; printf("@@ node 0 reaches the API again\n") }
    :: atomic { !frozen && !cut -> faults_over = true; break }
    od
}

/* planner_failover.c planner_failover_promote(): only when no primary is up */
inline failover_promote()
{
    /* lost_primary() */
#if NO_MARK
    lost = NONE;
    if
    :: ns_lost != NONE && ns_prom == NONE -> lost = ns_lost
    :: else ->
       i = 0;
       do
       :: i < NM && lost == NONE -> if :: EXISTS(i) && (s_role[i] == PRIMARY || orole[i] == PRIMARY) -> lost = i
                                   :: else -> skip fi; i++
       :: else -> break
       od
    fi;
#else
    lost = top;
#endif
    if
    :: lost == NONE ->
       /* FailoverFallback "no member is known to have been the primary": every standby stopped */
       printf("@@ R16 violated: FailoverFallback, no member is known to have been the primary\n");
       assert(false) /* R16 */
    :: else ->
       gone = !EXISTS(lost);
       if
       :: ns_lost != lost -> ns_lost = lost; ns_req = 0; ns_prom = NONE; ns_rep = 0
       :: else -> skip
       fi;
       stopped = gone || (ofresh[lost] && !FDEAD(lost) && orole[lost] == STOPPED && !UNRES(lost));
       waiting = !FDEAD(lost) && !stopped && !(EARLY && SILENT(lost));
       i = 0;
       do
       :: i < NM -> if :: i != lost && (UNRES(i) || (LIVE(i) && !SBY(i) && !PASSED_OVER(i))) -> waiting = true
                    :: else -> skip fi; i++
       :: else -> break
       od;
       if
       :: waiting -> skip
       :: else ->
          nS = 0; nrun = 0;
          i = 0;
          do
          :: i < NM ->
             if
             :: i != lost && (EXISTS(i) || i < target) && COUNTED(i) -> nS++;
                if :: EXISTS(i) && SBY(i) && FOLLOWS(i, lost) -> nrun++ :: else -> skip fi
             :: else -> skip
             fi;
             i++
          :: else -> break
          od;
          need = nS - K + 1;
          if
          :: nrun < need ->
             /* AVAIL: too few standbys run, in truth: the fallback stops the standbys of a running cluster */
             k = 0;
             i = 0;
             do
             :: i < NM -> if :: i != lost && EXISTS(i) && COUNTED(i) && role[i] == SECONDARY && up[i] == lost -> k++
                          :: else -> skip fi; i++
             :: else -> break
             od;
             if
             :: k >= need -> printf("@@ AVAIL violated: FailoverFallback with %d of %d standbys seen, %d run\n", nrun, need, k)
             :: else -> skip
             fi;
             assert(k < need); /* AVAIL */
             fellback = true; /* too few standbys run: FailoverFallback */
             printf("@@ leader (plan): FailoverFallback, %d of %d standbys run\n", nrun, need)
          :: else ->
             /* the request of this term, made after the lost one became primary */
#if NO_MARK
             floor = 0;
             same = ns_req != 0 && ns_req >= epfirst;
#else
             floor = mark[lost];
             same = ns_req != 0 && ns_req >= epfirst && ns_req > floor;
             /* its status write lost: the newest on a following standby's record */
             if
             :: !same ->
                req = 0;
                i = 0;
                do
                :: i < NM -> if :: i != lost && EXISTS(i) && SBY(i) && FOLLOWS(i, lost) && dreq[i] >= epfirst &&
                                   dreq[i] > floor && dreq[i] > req -> req = dreq[i] :: else -> skip fi; i++
                :: else -> break
                od;
                if
                :: req != 0 -> ns_lost = lost; ns_req = req; ns_prom = NONE; same = true;
                   printf("@@ leader (plan): request %d taken from the records\n", req)
                :: else -> skip
                fi
             :: else -> skip
             fi;
#endif
             /* request_live(): every following standby carries it or answered it, none started since */
             if
             :: same && !NO_ANSWERGUARD ->
                i = 0;
                do
                :: i < NM -> if :: i != lost && EXISTS(i) && SBY(i) && FOLLOWS(i, lost) &&
                                   (olast[i] > ns_req || (dreq[i] != ns_req && opfor[i] != ns_req)) -> same = false
                             :: else -> skip fi; i++
                :: else -> break
                od
             :: else -> skip
             fi;
             if
             :: !same ->
                /* step 2: ask now, after the loss was seen */
                req = nid; nid++;
                ns_lost = lost; ns_req = req; ns_prom = NONE; ns_rep = 0;
                printf("@@ leader (plan): m%d lost, position request %d to its standbys\n", lost, req);
                i = 0;
                do
                :: i < NM -> if :: i != lost && EXISTS(i) && SBY(i) && FOLLOWS(i, lost) && COUNTED(i) && !dec[i] ->
                                   dreq[i] = req; chg = true :: else -> skip fi; i++
                :: else -> break
                od
             :: else ->
                req = ns_req; nans = 0; best = NONE;
                i = 0;
                do
                :: i < NM ->
                   if
                   :: i != lost && EXISTS(i) && SBY(i) && FOLLOWS(i, lost) && COUNTED(i) && ANSWERED(i, req) ->
                      nans++; if :: best == NONE || opos[i] > opos[best] -> best = i :: else -> skip fi
                   :: else -> skip
                   fi;
                   i++
                :: else -> break
                od;
                if
                :: nans < need -> skip /* waiting for the positions (the deadline is not modelled) */
                :: nans >= need && best >= target -> fellback = true; /* the most advanced is being scaled away */
                   printf("@@ leader (plan): FailoverFallback, the most advanced is scaled away\n")
                :: nans >= need && best < target && opos[best] < sfl[lost] -> fellback = true;
                   /* L4's fix: a standby removed while lost was primary held more than any answer */
                   printf("@@ leader (plan): FailoverFallback, a scaled-away standby held %d, the best answer %d\n", sfl[lost], opos[best])
                :: else ->
                   /* step 3: promote; rule 16: its mark in the same CAS */
                   issue(best, A_SEED, NONE);
                   mark[best] = did[best]; mprom[best] = true; sfl[best] = 0;
                   ns_prom = best; ns_rep = 0;
                   /* step 4: the lost primary and the standbys that do not run are held (no bound) */
                   i = 0;
                   do
                   :: i < NM ->
                      if
                      :: i == best -> skip
                      :: i != best && (i == lost || (EXISTS(i) && !SBY(i))) -> hv[i] = true
#if NO_MARK
                      :: else -> ns_rep = ns_rep | (1 << i)
#else
                      :: else -> skip
#endif
                      fi;
                      i++
                   :: else -> break
                   od
                fi
             fi
          fi
       fi
    fi
}

/* planner_failover_repoint(): running standbys that still follow the replaced primary, one at a time */
inline failover_repoint()
{
    issued = false; pend = false;
#if NO_MARK
    np = ns_prom;
    if
    :: np != NONE && ns_rep != 0 && ns_req != 0 && PUP(np) ->
       i = 0;
       do
       :: i < NM ->
          if
          :: (ns_rep >> i) & 1 ->
             if
             :: olast[i] > ns_req || !EXISTS(i) || !SBY(i) -> ns_rep = ns_rep & ~(1 << i)
             :: else -> if :: !issued && ACTIONABLE(i) && !dec[i] -> issue(i, A_SEC, np); issued = true
                        :: else -> skip fi
             fi
          :: else -> skip
          fi;
          i++
       :: else -> break
       od;
       if :: ns_rep == 0 -> ns_lost = NONE; ns_req = 0; ns_prom = NONE :: else -> skip fi
    :: else -> skip
    fi
#else
    np = top;
    if
    :: np != NONE && mprom[np] && EXISTS(np) && PUP(np) ->
       i = 0;
       do
       :: i < NM ->
          if
          :: i != np && EXISTS(i) && SBY(i) && olast[i] <= mark[np] -> pend = true;
             if :: !issued && ACTIONABLE(i) && !dec[i] -> issue(i, A_SEC, np); issued = true :: else -> skip fi
          :: else -> skip
          fi;
          i++
       :: else -> break
       od;
       if :: !pend -> ns_lost = NONE; ns_req = 0; ns_prom = NONE :: else -> skip fi
    :: else -> skip
    fi
#endif
}

/* planner_failover_reattach(): a failover that promoted nobody ends once its primary runs again; the
 * request leaves every record, and one detached standby follows that primary again */
inline reattach()
{
    issued = false;
#if !NO_REATTACH
    np = top;
    i = 0;
    do :: i < NM && np == NONE -> if :: PUP(i) -> np = i :: else -> skip fi; i++ :: else -> break od;
    if
    :: np != NONE && PUP(np) && ns_prom == NONE ->
       if :: ns_req != 0 && ns_lost == np -> ns_lost = NONE; ns_req = 0; ns_rep = 0 :: else -> skip fi;
       i = 0;
       do
       :: i < NM ->
          if
          :: i != np && EXISTS(i) && SBY(i) && !dec[i] && DETACH && opfor[i] != 0 && olast[i] < opfor[i] && !issued ->
             issue(i, A_SEC, np); issued = true
          :: i != np && EXISTS(i) && !dec[i] && dreq[i] != 0 -> dreq[i] = 0; chg = true
          :: else -> skip
          fi;
          i++
       :: else -> break
       od
    :: else -> skip
    fi
#endif
}

/* planner_running.c joins(): a stopped member below replicas joins the running primary (no-bound holds
 * never hold one back) */
inline joins()
{
    np = NONE;
    i = 0;
    do :: i < NM -> if :: PUP(i) && np == NONE -> np = i :: else -> skip fi; i++ :: else -> break od;
    i = 0;
    do
    :: i < NM ->
       if
       :: np != NONE && !issued && EXISTS(i) && ACTIONABLE(i) && !dec[i] && orole[i] == STOPPED && i < target ->
          issue(i, A_SEC, np); issued = true; joined = true
       :: else -> skip
       fi;
       i++
    :: else -> break
    od
}

/* planner_running.c too_many_primaries(): under one primary the newest mark is kept (rule 17) */
inline too_many_primaries()
{
#if NO_NEWMARK
    keep = NONE;
#else
    keep = NONE;
    if :: top != NONE && PUP(top) -> keep = top :: else -> skip fi;
#endif
    n = 0; victim = NONE;
    i = 0;
    do
    :: i < NM ->
       if
       :: RUNNING(i) && orole[i] == PRIMARY && !dv[i] && i < target -> n++;
          if
          :: keep == NONE -> victim = i
          :: keep != NONE && i != keep && victim == NONE -> victim = i
          :: else -> skip
          fi
       :: else -> skip
       fi;
       i++
    :: else -> break
    od;
    if
    :: n > 1 && !unres && victim != NONE && ACTIONABLE(victim) && !dec[victim] -> issue(victim, A_STOP, NONE)
    :: else -> skip
    fi
}

/* planner_scale.c planner_scale_down(): stop from the highest ordinal; replicas lowered past confirmed
 * stopped members (the StatefulSet then removes their pods) */
inline scale_down()
{
    if
    :: sts > target ->
       next = sts;
       do
       :: next > target && (!EXISTS(next - 1) || FDEAD(next - 1) ||
                            (ofresh[next - 1] && orole[next - 1] == STOPPED && !UNRES(next - 1))) -> next--
       :: else -> break
       od;
       if
       :: next < sts && !KEEP_POD ->
#if !NO_SCALEFLOOR
          /* planner_scale.c scaled_away(): the removed standbys' last sequences into the newest mark, in
           * the same plan (its record patch is written before the replicas) */
          i = 0; smk = NONE;
          do
          :: i < NM -> if :: EXISTS(i) && mark[i] != 0 && i < next && (smk == NONE || mark[i] > mark[smk]) -> smk = i
                       :: else -> skip fi; i++
          :: else -> break
          od;
          i = next;
          do
          :: i < sts -> if :: smk != NONE && ln[i] > sfl[smk] -> sfl[smk] = ln[i] :: else -> skip fi; i++
          :: else -> break
          od;
#endif
          sts = next; chg = true; printf("@@ leader (plan): replicas lowered to %d (pod removed)\n", next);
          assert_none_lost() /* P2 */
       :: else -> skip
       fi;
       if
       :: next > target && !dec[next - 1] && ACTIONABLE(next - 1) && RUNNING(next - 1) ->
          ok = false;
          i = 0;
          do :: i < target -> if :: PUP(i) -> ok = true :: else -> skip fi; i++ :: else -> break od;
          if :: ok -> issue(next - 1, A_STOP, NONE) :: else -> skip fi
       :: else -> skip
       fi
    :: else -> skip
    fi
}

/* ---- the leader: one plan (planner_running_cluster() and what it calls) per step ---- */
proctype leader()
{
    byte i, m, e, k, n, lost, best, req, top, np, victim, keep, nrun, nS, need, nans, seq0, nup, next, floor, smk;
    bool ok, chg, lose, stopped, inflight, stale, joined, anydiv, unres, issued, pend, same, gone, waiting;
    bool dv[NM], hv[NM], dec[NM];
    byte ns_lost, ns_req, ns_prom, ns_rep;
end:
    do
    :: dirty && !fellback && !lightsout && !exhausted ->
       if
       :: nlost < LOSTST -> lose = true
       :: true -> lose = false
       fi;
       d_step {
           dirty = false; chg = false;
           if
           :: nid + NM + 2 > MAXID -> exhausted = true
           :: else -> skip
           fi;
           i = 0;
           do :: i < NM -> dec[i] = false; i++ :: else -> break od;
           ns_lost = s_lost; ns_req = s_req; ns_prom = s_prom; ns_rep = s_rep; /* planner_failover_load() */
           if
           :: exhausted -> skip
           :: !exhausted && fence ->
              /* rule 9, planner_fence(): desired none on every record; the status carries no failover */
              fence = false;
              i = 0;
              do
              :: i < NM -> if :: EXISTS(i) -> dact[i] = A_NONE; dreq[i] = 0 :: else -> skip fi; i++
              :: else -> break
              od;
              ns_lost = NONE; ns_req = 0; ns_prom = NONE; ns_rep = 0; chg = true
           :: else ->
              /* planner_hold_load(): a hold ends with a start after its mark (rule 17), or (before) when the
               * member runs at all */
              seq0 = nid - 1;
              i = 0;
              do
              :: i < NM ->
                 hv[i] = hold[i];
#if NO_HOLDAT
                 if :: hv[i] && RUNNING(i) -> hv[i] = false :: else -> skip fi;
                 dv[i] = false;
#else
                 if :: hv[i] && RUNNING(i) && olast[i] > hat[i] -> hv[i] = false :: else -> skip fi;
                 /* planner_load(): diverged, a primary running while held */
                 dv[i] = hv[i] && RUNNING(i) && orole[i] == PRIMARY;
#endif
                 i++
              :: else -> break
              od;
              /* planner_lineage_load(): the newest mark */
              top = NONE;
              i = 0;
              do
              :: i < NM -> if :: EXISTS(i) && mark[i] != 0 && MARKED(i) && (top == NONE || mark[i] > mark[top]) -> top = i
                           :: else -> skip fi; i++
              :: else -> break
              od;
              nup = 0; inflight = false; anydiv = false; unres = false;
              i = 0;
              do
              :: i < NM -> if :: PUP(i) -> nup++ :: else -> skip fi;
                           if :: STARTING(i) -> inflight = true :: else -> skip fi;
                           if :: UNRES(i) -> unres = true :: else -> skip fi; i++
              :: else -> break
              od;
              /* stop_diverged() (rule 17) */
              i = 0;
              do
              :: i < NM ->
                 if
                 :: dv[i] -> anydiv = true; if :: ACTIONABLE(i) && !dec[i] -> issue(i, A_STOP, NONE) :: else -> skip fi
                 :: else -> skip
                 fi;
                 i++
              :: else -> break
              od;
              if
              :: nup == 0 ->
                 stopped = false; /* here: some member is live (the running-cluster row) */
                 i = 0;
                 do :: i < NM -> if :: LIVE(i) -> stopped = true :: else -> skip fi; i++ :: else -> break od;
                 waiting = false;
                 i = 0;
                 do
                 :: i < NM -> if :: LIVE(i) && orole[i] == PRIMARY && !PUP(i) && !dv[i] && !(EARLY && SILENT(i)) -> waiting = true
                              :: else -> skip fi; i++
                 :: else -> break
                 od;
                 if
                 :: !stopped -> lightsout = true; /* nothing runs: the lights-out row, not modelled */
                    printf("@@ leader (plan): nothing runs: lights-out row\n")
                 :: stopped && (inflight || anydiv || waiting) -> skip /* WaitingForStart, rule 17, rule 12 */
                 :: else -> failover_promote()
                 fi
              :: else ->
                 /* the running cluster: wait for reports under this epoch, then repoint, join, too many */
                 stale = false;
                 i = 0;
                 do :: i < NM -> if :: EXISTS(i) && !FDEAD(i) && !ofresh[i] && i < target -> stale = true
                                 :: else -> skip fi; i++ :: else -> break od;
                 joined = false;
                 if
                 :: !stale && !inflight -> failover_repoint(); joined = issued;
                    if :: !joined -> reattach(); joined = issued :: else -> skip fi;
                    if :: !joined -> joins() :: else -> skip fi
                 :: else -> skip
                 fi;
                 if :: !inflight && !stale && !joined -> too_many_primaries() :: else -> skip fi;
                 scale_down()
              fi;
              /* planner_hold_persist(): new holds get the plan's mark */
              i = 0;
              do
              :: i < NM ->
                 if
                 :: EXISTS(i) && hv[i] != hold[i] -> if :: hv[i] -> hat[i] = seq0 :: else -> hat[i] = 0 fi;
                    hold[i] = hv[i]; chg = true
                 :: else -> skip
                 fi;
                 i++
              :: else -> break
              od
           fi;
           /* the status write (leader_apply.c): lost with the Lease, or a failed PATCH */
           if
           :: lose -> nlost++; printf("@@ leader: the status write is lost\n")
           :: else ->
              if
              :: s_lost != ns_lost || s_req != ns_req || s_prom != ns_prom || s_rep != ns_rep -> chg = true
              :: else -> skip
              fi;
              s_lost = ns_lost; s_req = ns_req; s_prom = ns_prom; s_rep = ns_rep;
              i = 0;
#if NO_MARK
              do :: i < NM -> if :: s_role[i] != orole[i] -> s_role[i] = orole[i]; chg = true :: else -> skip fi; i++
                 :: else -> break od;
#endif
              skip
           fi;
           if :: chg -> dirty = true :: else -> skip fi
       }
    /* LIVE: nothing moves and the faults are over */
    :: timeout && faults_over && !exhausted && !NO_LIVE ->
       if
       :: fellback -> skip
       :: else ->
          ok = false;
          i = 0;
          do :: i < NM -> if :: role[i] == PRIMARY && orole[i] == PRIMARY && RUNNING(i) -> ok = true
                          :: else -> skip fi; i++ :: else -> break od;
          if :: !ok -> printf("@@ LIVE violated: nothing moves and no primary runs\n") :: else -> skip fi;
          assert(ok); /* LIVE */
          /* LIVE, rule 19: no standby stays detached (under ANY K the primary could acknowledge nothing) */
          i = 0;
          do
          :: i < NM -> if :: EXISTS(i) && role[i] == SECONDARY && det[i] -> ok = false;
                          printf("@@ LIVE violated: m%d stays detached\n", i) :: else -> skip fi; i++
          :: else -> break
          od;
          assert(ok)
       fi;
       break
    od
}

