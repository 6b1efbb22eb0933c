/*
 * tests/model/rss.pml -- Promela model of rssd's recovery protocol AS IMPLEMENTED (docs/model.md).
 *
 * 3 members rss-x-0..2, member i on node i with node agent i; 2 leader candidates, candidate c running
 * on node c (c = 0, 1); one environment process injecting faults. The Kubernetes API server is a set
 * of linearizable shared variables (one d_step per API request). Every step names the function it
 * mirrors. A member's desired and observed records are one record per member with a version, wherever
 * they are stored (pod annotations, or a per-member object in rssd's namespace: the same protocol).
 * A resourceVersion precondition (CAS) is a per-member bit "written since the LIST" (pchg); the
 * agent's write-ahead CAS compares the desired it decided on with the stored one (only the leader writes it).
 *
 * Safety rules (ARCHITECTURE.md section 6) guarded by a switch each; -DNO_x removes rule x:
 *   NO_RULE7    agent executes a desired whatever its target generation (agent_decide.c)
 *   NO_RULE8    no write-ahead: the hook runs without the CAS'd {starting, pending} (agent_reconcile.c)
 *   NO_RULE9    a new leader decides at once, without fencing every pod first (planner.c fence())
 *   NO_RULE10   a restarted agent takes its Lease view from a stale cache (agent_watch.c)
 *   NO_RULE11   identities shared by instances and client-go's holder==me renewal (election.c)
 *   NO_FLOOR    acquisition ignores the epoch floor (election.c above_floor)
 *   NO_RULE3    the first release: a dead node counts as permission to seed without it (planner.c)
 *   NO_FAILSAFE fence on API loss alone (fence.c, agent_peers.c)
 *   NO_SELFFENCE never fence (fence.c)
 *   NO_FRESH    the leader trusts reports made under any epoch (planner.c derive(), design.md "differs")
 *   NO_PEERAPI  the failsafe ignores that a reached peer still talks to the API (agent_peers.c)
 *   NO_RULE12   NoPrimary stops secondaries when no primary is seen up, also when the primary is only
 *               unobserved: its report is from an older epoch or its node is silent (planner.c running_cluster)
 *   NO_KUBELET  rule 13, the leader's half: a silent node is dead after the dead window even when its
 *               kubelet still reports, i.e. when the agent is absent, not fenced (leader_liveness.c)
 *   MAJORITY_FAILSAFE rule 13, the agent's half: the failsafe keeps members with a strict majority of
 *               agents reached, not every agent hosting a member (agent_peers.c rss_agent_failsafe_keep)
 *   NO_RULE14   a member left out of a minimumMembers recovery whose data may be newer than that seed is
 *               a seed candidate, by sequence, in a later recovery (planner.c recovery)
 *   HOLD_UID    the left-out mark is keyed to the pod: a re-created pod forgets it (the code before)
 * The fixes of the model's findings (docs/model.md), each removable the same way:
 *   NO_RETRACT  F1: no retraction of an unacknowledged start on a dead node (planner.c retract())
 *   NO_REVIVE   F2: a changed observed report does not revive a dead node (leader_liveness.c
 *               leader_liveness_reports)
 *   LATEFENCE   F3: an agent restarted while cut off starts a new fence clock (fence_persist.c absent)
 *   NO_DEADSTART F4: a start written ahead on a node judged dead does not hold up a seed elsewhere
 *               (planner.c derive() dead_start, decide())
 *   NO_FLOORCAS F5: the floor is raised without a CAS and a floor already at this epoch is taken as
 *               ours (leader_apply.c raise_epoch_floor before the fix)
 *   STATUSEPOCH F5's second shape: the status write carries status.epoch (leader_status_patch before
 *               the fix), so a deposed leader's late status write lowers the floor
 * Options: OPTIN (spec.recovery.minimumMembers = 2: rules 2 and 3 not checked, rule 1 is),
 *   PRIMARIES=1 (one primary, the others secondaries), HOLD (left-out marks and rule 14's ghosts, with
 *   OPTIN), LIGHTSOUT and FAULT_RECREATE (with HOLD), FAULT_ADOWN (an agent down), FAULT_GROUP (1/2: two
 *   nodes cut off together), NO_PREMISE (the dead-node premise not asserted, to see what follows),
 *   faults FAULT_LEADER, FAULT_AGENT, FAULT_CTR, FAULT_DELETE, FAULT_OUTAGE, FAULT_PART (0/1/2),
 *   FIX_DEADUNRES (NOT the code: a dead node's unresolved action keeps blocking seeds), PART_IDLE,
 *   bounds MAXT MAXACQ MAXCRASH MAXAR MAXSEQ MAXAID MAXDEL, INITSEQ=abc (initial sequences), WRITES.
 * Properties: rule 1 and rule 2 in HOOK, rule 3 in PLAN, the outage rule in the agent's fence step,
 *   the dead-node premise (rule 13) in the leader's liveness step, rule 12 in PLAN (NoPrimary), rule 14 in
 *   PLAN (recovery) and HOOK (joins). docs/model.md has the results.
 */

#ifndef OPTIN
#define OPTIN 0
#endif
#ifndef NO_RULE3
#define NO_RULE3 0
#endif
#ifndef NO_RULE7
#define NO_RULE7 0
#endif
#ifndef NO_RULE8
#define NO_RULE8 0
#endif
#ifndef NO_RULE9
#define NO_RULE9 0
#endif
#ifndef NO_RULE10
#define NO_RULE10 0
#endif
#ifndef NO_RULE11
#define NO_RULE11 0
#endif
#ifndef NO_FLOOR
#define NO_FLOOR 0
#endif
#ifndef NO_FAILSAFE
#define NO_FAILSAFE 0
#endif
#ifndef NO_SELFFENCE
#define NO_SELFFENCE 0
#endif
#ifndef NO_FRESH
#define NO_FRESH 0       /* the leader takes reports from any epoch (planner.c derive(): m->fresh) */
#endif
#ifndef NO_PEERAPI
#define NO_PEERAPI 0
#endif
#ifndef NO_RETRACT
#define NO_RETRACT 0
#endif
#ifndef NO_REVIVE
#define NO_REVIVE 0
#endif
#ifndef FAULT_LEADER
#define FAULT_LEADER 1   /* leader crash / renew deadline between any two writes, lease expiry, overlap */
#endif
#ifndef FAULT_AGENT
#define FAULT_AGENT 1    /* node agent restarts (memory lost) */
#endif
#ifndef FAULT_CTR
#define FAULT_CTR 1      /* container restarts and application crashes */
#endif
#ifndef FAULT_DELETE
#define FAULT_DELETE 0   /* the leader Lease is deleted (reinstall) */
#endif
#ifndef FAULT_REBOOT
#define FAULT_REBOOT 0   /* a candidate's node reboots (its rssd and its member's container end); the reboot
                            shortcut of election.c: a holder whose Node reports another boot is taken over at once */
#endif
#ifndef NO_BOOTAGREE
#define NO_BOOTAGREE 0   /* mutant: the boot recorded at acquisition without checking that the Node already
                            reports it (election.c boot_record) */
#endif
#ifndef MAXBOOT
#define MAXBOOT 1        /* reboots, all nodes (FAULT_REBOOT) */
#endif
#ifndef FAULT_OUTAGE
#define FAULT_OUTAGE 0   /* API server outage, every node keeps its peers */
#endif
#ifndef FAULT_PART
#define FAULT_PART 0     /* one node cut off: 1 = from API and peers, 2 = also "API only" cuts */
#endif
#ifndef FIX_DEADUNRES
#define FIX_DEADUNRES 0  /* NOT the code: a dead node's unresolved action still blocks a seed (docs/model.md, finding 1) */
#endif
#ifndef PART_IDLE
#define PART_IDLE 0      /* 1: the partition starts only while every desired action was taken up and finished;
                            2: only while no start's hook is in flight (no write-ahead pending) */
#endif
#ifndef NO_DEADSTART
#define NO_DEADSTART 0
#endif
#ifndef NO_FLOORCAS
#define NO_FLOORCAS 0
#endif
#ifndef STATUSEPOCH
#define STATUSEPOCH 0
#endif
#ifndef DELETE_LATE
#define DELETE_LATE 0    /* 1: the Lease is deleted only once its holder's epoch is in status.epoch (with NO_FLOORCAS,
                            finding F5 is the trace without; the NO_FLOOR mutant uses it) */
#endif
#ifndef PRIMARIES
#define PRIMARIES 0      /* 1: spec.primaries 1, the others join as secondaries (the secondary hook); 0: all primary */
#endif
#ifndef NO_RULE12
#define NO_RULE12 0      /* rule 12 removed: NoPrimary stops the secondaries when no primary is seen up, also
                            when the primary is only unobserved (stale report, silent node) */
#endif
#ifndef FAULT_ADOWN
#define FAULT_ADOWN 0    /* one node's agent is down (hung, OOM-killed, evicted): no heartbeat, no fence check,
                            its members keep running; it comes back later */
#endif
#ifndef FAULT_GROUP
#define FAULT_GROUP 0    /* two nodes cut off together: 1 = from the API and the third node, reaching each other;
                            2 = also from the API only (both still reach the third node) */
#endif
#ifndef NO_KUBELET
#define NO_KUBELET 0     /* rule 13's leader half removed: a silent node is dead after the dead window although
                            its kubelet still reports (the agent is absent, not fenced) */
#endif
#ifndef MAJORITY_FAILSAFE
#define MAJORITY_FAILSAFE 0 /* rule 13's agent half removed: the failsafe keeps members with a strict majority
                            of agents reached (the code before), not every agent hosting a member */
#endif
#ifndef HOLD
#define HOLD 0           /* the left-out marks of a minimumMembers recovery (status.leftOut), the hold, the
                            history ghosts and the property of rule 14 (with OPTIN) */
#endif
#ifndef NO_RULE14
#define NO_RULE14 0      /* rule 14 removed: a held member is a seed candidate by sequence in a later recovery
                            (the joins keep their hold: the code before) */
#endif
#ifndef HOLD_UID
#define HOLD_UID 0       /* the hold is keyed to the pod: a re-created pod forgets it (the code before) */
#endif
#ifndef LIGHTSOUT
#define LIGHTSOUT 0      /* later lights-outs: every member's container stops at once (HOLD) */
#endif
#ifndef FAULT_RECREATE
#define FAULT_RECREATE 0 /* a left-out member's pod is re-created (rollout, kubectl delete pod) (HOLD) */
#endif
#ifndef NO_PREMISE
#define NO_PREMISE 0     /* 1: the dead-node premise is not asserted, so that a trace goes on to what a wrong
                            dead verdict does (a seed beside a running primary) */
#endif
#define LIVENESS (FAULT_PART || FAULT_ADOWN || FAULT_GROUP)
#define CUTS (FAULT_PART || FAULT_GROUP)
#ifndef LATEFENCE
#define LATEFENCE 0      /* 1: an agent restarted while cut off starts a new fence clock (F3 unfixed) */
#endif

/* ---- bounds ---- */
#ifndef MAXT
#define MAXT 3           /* highest leaseTransitions (epochs 1..3) */
#endif
#ifndef MAXACQ
#define MAXACQ 3         /* acquisitions, all candidates together */
#endif
#ifndef MAXCRASH
#define MAXCRASH 1       /* container restarts + application crashes, all members */
#endif
#ifndef MAXAR
#define MAXAR 1          /* agent restarts, all agents */
#endif
#ifndef MAXSEQ
#define MAXSEQ 3         /* data sequence numbers */
#endif
#ifndef MAXAID
#define MAXAID 7         /* action ids (globally unique here) */
#endif
#ifndef MAXDEL
#define MAXDEL 1         /* Lease deletions (FAULT_DELETE) */
#endif
#ifndef WRITES
#define WRITES 1         /* client writes into a running cluster */
#endif

#define N 3
#define NOHOLDER 3
#define NOSEQ 7

#define R_NONE 0         /* no report yet */
#define R_STOPPED 1
#define R_STARTING 2
#define R_PRIMARY 3
#define R_UNKNOWN 4
#define R_SECONDARY 5
#define ISRUN(r) ((r) == R_PRIMARY || (r) == R_SECONDARY)

#define A_NONE 0
#define A_SEED 1
#define A_PRIM 2
#define A_STOP 3
#define A_SEC 4
#define ISSTART(a) ((a) == A_SEED || (a) == A_PRIM || (a) == A_SEC)

#define RES_NONE 0
#define RES_PENDING 1
#define RES_FINAL 2      /* ok, failed, rejected, interrupted: an acknowledgement */

/* ---------------- API server ---------------- */
/* the member's desired record (written by the leader only) */
byte dEp[N], dAid[N], dAct[N], dGen[N];
/* the member's observed record (written by the member's agent only) */
byte oGen[N], oRole[N], oSeq[N], oLast[N], oLAct[N], oRes[N], oLE[N], oCtr[N];
#define PACKD(k) (dEp[k] + 4 * dAid[k] + 64 * dAct[k] + 512 * dGen[k])
#define PACKO(k) (oGen[k] + 16 * oRole[k] + 128 * oSeq[k] + 1024 * oLast[k] + 16384 * oRes[k] + \
                  65536 * oLE[k] + 262144 * oCtr[k] + 2097152 * oLAct[k])
#define D_EP(d)  ((d) % 4)
#define D_AID(d) (((d) / 4) % 16)
#define D_ACT(d) (((d) / 64) % 8)
#define D_GEN(d) ((d) / 512)
/* Lease rssd-leader */
byte lHolder = NOHOLDER, lTrans = 0;
bool lExpired = false, lGone = true;  /* no Lease before the first acquisition */
#if FAULT_REBOOT
#define NOBOOT 7
/* the reboot shortcut: realBoot[c] is node c's boot (reality), nodeBoot[c] what its Node reports (the
   kubelet updates it some time after the boot); on the Lease, lIdBoot is the boot in the holder's
   identity and lBoot the boot record (NOBOOT: none) */
byte realBoot[2], nodeBoot[2];
byte lIdBoot = 0, lBoot = NOBOOT;
byte boots = 0;
#endif
/* the RSS status.epoch (the epoch floor, leader.c rss_leader_epoch_floor) */
byte floorE = 0;
byte nextAid = 1;
byte acqs = 0;

/* ---------------- reality ---------------- */
bool dbrun[N];           /* the database process runs in member i's container */
byte seq[N];             /* sequence of the data on member i's volume */
byte ctr[N];             /* container id (kubelet restarts make a new one) */
bool apiDown = false;    /* API server outage */
byte cut[N];             /* 1: node cut off from API and peers; 2: from the API only; 3: from the API and
                            the nodes not cut, reaching the other cut node (FAULT_GROUP) */
byte hbT[N];             /* node i's heartbeat as leaders see it: 0 fresh, 1 silent, 2 silent past fence timeout + margin */
byte cutT[N];            /* agent i's fence clock: 0 API ok, 1 counting since the cut, 2 past the fence timeout, 3 counting since a later restart */
bool fev[N];             /* agent i ran its fence check after its fence timeout (fence.c): the leader's
                            margin (+5 s) is assumed to cover the check and the CRI stop */
#if FAULT_ADOWN
bool adown[N];           /* agent i is down: it takes no step (its process hung or is gone) */
#define AUP(i) (!adown[i])
#define ADOWN(i) adown[i]
#else
#define AUP(i) true
#define ADOWN(i) false
#endif
#if PRIMARIES == 1
bool isP[N];             /* member i's database runs (ran last) as the primary, not as a secondary */
#define RUNROLE(i) (dbrun[i] -> (isP[i] -> R_PRIMARY : R_SECONDARY) : R_STOPPED)
#define PRIMRUN(k) (dbrun[k] && isP[k])
#else
#define RUNROLE(i) (dbrun[i] -> R_PRIMARY : R_STOPPED)
#define PRIMRUN(k) dbrun[k]
#endif
#if HOLD
/* RSS status.leftOut (API): bit k = member k was left out of a minimumMembers recovery and has not
   rejoined since; loS[k] the seed's sequence of that recovery */
byte lo = 0;
byte loS[N];
/* ghosts: the history of member k's data (lin[k]: data with one lineage and a lower sequence is a prefix
   of data with a higher one); the current cluster's lineage and its highest acknowledged write */
byte lin[N];
byte curLin = 0, ackSeq = 0, nLin = 0;
byte louts = 0, recre = 0;
#define HAS(k) (lin[k] == curLin && seq[k] >= ackSeq)
#define HELD(k) (BIT(lo, k) && (oSeq[k] == NOSEQ || oSeq[k] > loS[k]))
#endif
#define AAPI(i) (!apiDown && cut[i] == 0 && AUP(i))
#define LAPI(c) (!apiDown && cut[c] == 0)
#define PEER(i, j) (cut[i] != 1 && cut[j] != 1 && (cut[i] == 3) == (cut[j] == 3))

/* ---------------- budgets and ghosts ---------------- */
byte crashes = 0, arestarts = 0;
bool faulted = false;    /* the one outage / partition was used */
byte deleted = 0;        /* Lease deletions so far (at most MAXDEL) */
bool isLG[2];            /* ghost: candidate c believes it leads */
bool dl[2];              /* candidate c's renew deadline passed while it led: at most the one write it
                            checked before (rss_election_leading) may still reach the API, then it stops */

#define ID(c) c
#if NO_RULE11
#undef ID
#define ID(c) 0          /* instances share one identity (e.g. the node name) */
#endif

/* resourceVersion preconditions: bit k of pchg[c] = pod k was written since candidate c's LIST
   (tracked only while c has a plan in flight) */
byte lph[2];             /* candidate c's plan phase (Leader's ph) */
#define ph lph[c]
byte pchg[2];
#define TOUCH(k) if :: lph[0] != 0 -> pchg[0] = pchg[0] | (1 << (k)) :: else -> skip fi; \
                 if :: lph[1] != 0 -> pchg[1] = pchg[1] | (1 << (k)) :: else -> skip fi

hidden byte h_k, h_j, h_t, h_best, h_nc, h_nm, h_x;
hidden byte h_keep, h_api, h_claim, h_m, h_cand;
hidden byte mDst, mStale, mObs, mFresh, mCur, mPend, mLive, mUncl, mUnres, mInfl, mRun, mPrimUp, mAct, mAlive, mDead;
#define BIT(m, k) (((m) >> (k)) & 1)

/* leader_liveness.c leader_liveness_reports: bit k of orep[c] = member k's observed report changed
   since candidate c's last LIST of the pods (a sign of life of node k). Only with partitions, where
   liveness is modelled; only while c leads (its baseline starts with its term). */
byte orep[2];
/* finding F4: bit k of hfl = agent k runs a start's hook (ghost: reality); bit k of htmo = the start's
   hook timeout and the stop's have passed since member k's last write-ahead (the planner's clock) */
byte hfl = 0, htmo = 0;
hidden int h_o;
#if LIVENESS
#define OBS_BEGIN(i) h_o = PACKO(i)
#define OBS_END(i) if :: h_o != PACKO(i) && isLG[0] -> orep[0] = orep[0] | (1 << (i)) :: else -> skip fi; \
                   if :: h_o != PACKO(i) && isLG[1] -> orep[1] = orep[1] | (1 << (i)) :: else -> skip fi
#else
#define OBS_BEGIN(i) skip
#define OBS_END(i) skip
#endif

/* =========================== the hooks (reality) =========================== */
/* Rule properties live here: what a hook does to real data is what the rules are about. */
inline HOOK(i, a, ok) {
  if
  :: a == A_SEED ->
       if
       :: dbrun[i] -> ok = 1               /* seed on a running app: no-op */
       :: else ->
            /* RULE 1: never a seed while any other member runs */
            assert(!dbrun[(i + 1) % N] && !dbrun[(i + 2) % N]);
#if !OPTIN
            /* RULE 2: the seed has the highest sequence of all members whose data exists */
            assert(seq[i] >= seq[(i + 1) % N] && seq[i] >= seq[(i + 2) % N]);
#endif
            printf("@@ m%d SEED: bootstraps a new cluster with seq %d (seqs %d %d %d)\n", i, seq[i], seq[0], seq[1], seq[2]);
#if HOLD
            /* a new history forks off the seed's: data of the seed's lineage up to its sequence is a
               prefix of it; data of that lineage beyond it is given up (diverged) */
            nLin++; h_m = lin[i]; h_j = 0;
            do
            :: h_j < N -> if :: h_j == i || (lin[h_j] == h_m && seq[h_j] <= seq[i]) -> lin[h_j] = nLin :: else -> skip fi; h_j++
            :: else -> break
            od;
            curLin = nLin; ackSeq = seq[i];
#endif
#if PRIMARIES == 1
            isP[i] = true;
#endif
            dbrun[i] = true; ok = 1
       fi
  :: a == A_PRIM ->
       if
       :: dbrun[i] -> ok = 1
       :: else ->
            h_j = N;
            if :: dbrun[(i + 1) % N] -> h_j = (i + 1) % N :: else -> skip fi;
            if :: h_j == N && dbrun[(i + 2) % N] -> h_j = (i + 2) % N :: else -> skip fi;
            if
            :: h_j < N ->
#if !OPTIN
                 /* RULE 2: a joiner never holds newer data than the cluster it joins (its writes would be lost) */
                 assert(seq[i] <= seq[h_j]);
#endif
                 printf("@@ m%d PRIMARY: joins m%d, seq %d -> %d\n", i, h_j, seq[i], seq[h_j]);
#if HOLD
                 /* RULE 14: a diverged history is never joined (its given-up writes overwritten) unless
                    the admin released it */
                 assert(lin[i] == curLin);
                 lin[i] = lin[h_j];
#endif
#if PRIMARIES == 1
                 isP[i] = true;
#endif
                 seq[i] = seq[h_j]; dbrun[i] = true; ok = 1
            :: else -> printf("@@ m%d PRIMARY: no running peer, fails\n", i); ok = 0
            fi
       fi
#if PRIMARIES == 1
  :: a == A_SEC ->
       if
       :: dbrun[i] -> ok = 1
       :: else ->
            h_j = N;                       /* a secondary follows the running primary */
            if :: PRIMRUN((i + 1) % N) -> h_j = (i + 1) % N :: else -> skip fi;
            if :: h_j == N && PRIMRUN((i + 2) % N) -> h_j = (i + 2) % N :: else -> skip fi;
            if
            :: h_j < N ->
#if !OPTIN
                 assert(seq[i] <= seq[h_j]);   /* RULE 2 for a joiner */
#endif
#if HOLD
                 assert(lin[i] == curLin);     /* RULE 14, as for a primary's join */
                 lin[i] = lin[h_j];
#endif
                 printf("@@ m%d SECONDARY: follows m%d, seq %d -> %d\n", i, h_j, seq[i], seq[h_j]);
                 seq[i] = seq[h_j]; dbrun[i] = true; isP[i] = false; ok = 1
            :: else -> printf("@@ m%d SECONDARY: no running primary, fails\n", i); ok = 0
            fi
       fi
#endif
  :: a == A_STOP -> dbrun[i] = false; ok = 1
  :: else -> ok = 0
  fi
}

/* ============================== node agent i ============================== */
proctype Agent(byte i)
{
  /* in-memory agent state (agent_member, struct rss_observed m->obs; lost on restart) */
  bool lk = false;       /* lease_known (agent_watch.c see_lease) */
  byte lv = 0;           /* lease_epoch: never goes backwards (rule 10) */
#if NO_RULE8
  int  vD = 0;           /* desired as the pod watch delivered it (may lag) */
#else
  /* With the write-ahead CAS (rule 8) only the current desired can ever be taken up: acting on a
     stale view of the pod is a failed CAS, and a stale rejection changes nothing the leader reads.
     So the agent reads desired at the step itself, which is exact and keeps the state space small. */
#define vD PACKD(i)
#endif
  bool probed = false;
  byte myCtr = 0;        /* m->container_id: the container this agent probed */
  bool weStopped = false;
  bool fdone = false;    /* fence.c fence_member set fence_done */
  bool fst = false;      /* fence.c fence_started */
  bool dirty = false;
  byte aGen = 0, aRole = R_NONE, aSeq = NOSEQ, aLast = 0, aLAct = 0, aRes = RES_NONE, aCtr = 0;
  byte hAct = 0, hCtr = 0;  /* a hook in flight after its write-ahead */
  bool ok;
end:
  do
  /* agent_watch.c agent_watch_lease: quorum GET first, then the watch; see_lease only raises the view */
  :: d_step { AAPI(i) && !lGone && (!lk || lTrans > lv) -> lv = lTrans; lk = true }
#if NO_RULE10
  /* mutant: the first read after a (re)start comes from a watch cache: any value seen before */
  :: atomic { AAPI(i) && !lGone && !lk -> lk = true; lv = 0; do :: lv < lTrans -> lv++ :: break od }
#endif

#if NO_RULE8
  /* agent_watch.c pod watch: the view of desired may lag arbitrarily */
  :: d_step { AAPI(i) && vD != PACKD(i) -> vD = PACKD(i) }
#endif

  /* agent_reconcile.c probe(): a new container or an unprobed one: status, sequence, publish (rule 8) */
  :: d_step { AAPI(i) && hAct == 0 && (!probed || myCtr != ctr[i]) ->
       h_t = aGen;                                      /* rss_agent_generation_for_container */
       if
       :: aRole == R_NONE || aCtr != ctr[i] -> h_t = aGen + 1
       :: else -> skip
       fi;
       h_keep = (aRole != R_NONE && aRes == RES_PENDING);          /* interrupted */
       if
       :: h_keep && aRole != R_NONE && aCtr == ctr[i] && ISSTART(aLAct) && h_t == aGen -> h_t = aGen + 1
       :: else -> skip
       fi;
       h_x = R_UNKNOWN;
       if :: aRole != R_NONE && aCtr == ctr[i] -> h_x = aRole :: else -> skip fi;   /* before */
       h_api = weStopped || (aLAct == A_STOP && aRes == RES_FINAL);                 /* stopped_by_us */
       if :: h_t != aGen -> aSeq = NOSEQ :: else -> skip fi;                        /* drop_sequence */
       h_j = (h_t != aGen);                                                         /* bumped */
       aGen = h_t; aCtr = ctr[i];
       aRole = RUNROLE(i);                                                          /* do_status */
       if
       :: h_x != R_UNKNOWN && !h_j && (ISRUN(h_x) || h_x == R_STARTING) &&
          aRole == R_STOPPED && !h_api -> aGen++                                    /* crash in its container */
       :: else -> skip
       fi;
       aSeq = (aRole == R_STOPPED -> seq[i] : NOSEQ);                               /* do_sequence */
       if :: h_keep -> aRes = RES_FINAL :: else -> skip fi;                         /* "interrupted" */
       myCtr = ctr[i]; weStopped = false; probed = true; fdone = false;
       OBS_BEGIN(i);
       oGen[i] = aGen; oRole[i] = aRole; oSeq[i] = aSeq; oLast[i] = aLast; oLAct[i] = aLAct;
       oRes[i] = aRes; oCtr[i] = aCtr; oLE[i] = (lk -> lv : 0); dirty = false; TOUCH(i); /* publish */
       OBS_END(i);
       assert(aGen < 15)
     }

  /* agent_reconcile.c reconcile(): rss_agent_decide on the pod view, then execute() or reject() */
  :: d_step { AAPI(i) && hAct == 0 && probed && myCtr == ctr[i] && D_ACT(vD) != A_NONE && lk &&
              D_EP(vD) == lv && aLast != D_AID(vD) && cutT[i] != 2 ->
       if
#if !NO_RULE7
       :: D_GEN(vD) != aGen ->                          /* rule 7: stale target generation: reject() */
            aLast = D_AID(vD); aLAct = D_ACT(vD); aRes = RES_FINAL;
            OBS_BEGIN(i);
            oLast[i] = aLast; oLAct[i] = aLAct; oRes[i] = aRes; oLE[i] = lv; TOUCH(i);
            OBS_END(i)
#endif
       :: else ->
#if !NO_RULE8
            if
            :: PACKD(i) == vD ->                        /* execute(): write-ahead CAS on the record's version */
                 aLast = D_AID(vD); aLAct = D_ACT(vD); aRes = RES_PENDING;
                 if :: ISSTART(aLAct) -> aRole = R_STARTING :: else -> skip fi;
                 OBS_BEGIN(i);
                 oGen[i] = aGen; oRole[i] = aRole; oSeq[i] = aSeq; oLast[i] = aLast; oLAct[i] = aLAct;
                 oRes[i] = aRes; oCtr[i] = aCtr; oLE[i] = lv; TOUCH(i);
                 OBS_END(i);
                 hAct = aLAct; hCtr = myCtr;
                 htmo = htmo & ~(1 << i);
                 if :: ISSTART(hAct) -> hfl = hfl | (1 << i) :: else -> skip fi
            :: else -> skip                             /* 409: the hook does not run */
            fi
#else
            aLast = D_AID(vD); aLAct = D_ACT(vD); aRes = RES_PENDING;  /* mutant: memory only */
            hAct = aLAct; hCtr = myCtr;
            if :: ISSTART(hAct) -> hfl = hfl | (1 << i) :: else -> skip fi
#endif
       fi
     }

  /* execute(): the hook (CRI ExecSync, no API needed), then status and sequence */
  :: d_step { hAct != 0 && AUP(i) ->
       if
       :: hCtr != ctr[i] -> aRole = R_UNKNOWN; ok = 0   /* container gone: result interrupted */
       :: else ->
            HOOK(i, hAct, ok);
            if :: hAct == A_STOP && ok -> weStopped = true :: else -> skip fi;
            if :: ISSTART(hAct) && ok -> aGen++; aSeq = NOSEQ; weStopped = false :: else -> skip fi;
            if
            :: ISSTART(hAct) && ok && cutT[i] == 2 ->     /* self-fenced while it started: stop again */
                 dbrun[i] = false; weStopped = true
            :: else -> skip
            fi;
            aRole = RUNROLE(i);
            aSeq = (aRole == R_STOPPED -> seq[i] : NOSEQ)
       fi;
       aRes = RES_FINAL; hAct = 0; hCtr = 0; dirty = true; ok = 0; hfl = hfl & ~(1 << i); assert(aGen < 15) }

  /* agent_reconcile.c: the periodic status (every reconcileInterval, and at a new epoch) of a member not stopped */
  :: d_step { AUP(i) && hAct == 0 && probed && myCtr == ctr[i] && aRole != R_STOPPED && aRole != R_NONE ->
       h_x = aRole;
       aRole = RUNROLE(i);
       if
       :: (ISRUN(h_x) || h_x == R_STARTING) && aRole == R_STOPPED && !weStopped ->
            aGen++; assert(aGen < 15)                   /* rss_agent_status_is_crash */
       :: else -> skip
       fi;
       aSeq = (aRole == R_STOPPED -> seq[i] : NOSEQ);
       if :: h_x != aRole -> dirty = true :: else -> skip fi }

  /* publish_or_log(): merge patch of observed (no CAS); also when the Lease view is newer than the report */
  :: d_step { AAPI(i) && hAct == 0 && probed && (dirty || (lk && oLE[i] != lv)) ->
       OBS_BEGIN(i);
       oGen[i] = aGen; oRole[i] = aRole; oSeq[i] = aSeq; oLast[i] = aLast; oLAct[i] = aLAct;
       oRes[i] = aRes; oCtr[i] = aCtr; oLE[i] = (lk -> lv : 0); dirty = false; TOUCH(i);
       OBS_END(i) }

  /* fence.c agent_fence_check + agent_peers.c rss_agent_failsafe_keep: past the fence timeout, stop
     the member unless this agent reaches every other agent hosting a member of the RSS (rule 13; a
     strict majority before it) and none of them reaches the API server */
  :: d_step { AUP(i) && cutT[i] == 2 && !fst ->
       h_nc = 1; h_api = false;
       h_j = (i + 1) % N;
       if :: PEER(i, h_j) && AUP(h_j) -> h_nc++; if :: AAPI(h_j) -> h_api = true :: else -> skip fi :: else -> skip fi;
       h_j = (i + 2) % N;
       if :: PEER(i, h_j) && AUP(h_j) -> h_nc++; if :: AAPI(h_j) -> h_api = true :: else -> skip fi :: else -> skip fi;
#if NO_PEERAPI
       h_api = false;
#endif
#if MAJORITY_FAILSAFE
       h_keep = !h_api && 2 * h_nc > N;
#else
       h_keep = !h_api && h_nc == N;   /* rule 13: every agent hosting a member reached (Patroni's rule) */
#endif
#if NO_FAILSAFE
       h_keep = false;
#endif
#if NO_SELFFENCE
       h_keep = true;
#endif
       if
       :: !h_keep ->
            /* THE OUTAGE RULE: a healthy member is never stopped unless its node is really cut off */
            assert(!dbrun[i] || cut[i] != 0);
            printf("@@ A%d self-fences m%d (peers reached %d, peer with API %d)\n", i, i, h_nc, h_api);
            dbrun[i] = false; fst = true; fdone = true
       :: else -> skip
       fi; fev[i] = true }

  /* the API is back: fencing ends; a fenced member is re-probed (agent_reconcile.c j->fence_done) */
  :: d_step { AUP(i) && cutT[i] == 0 && (fst || fdone) -> fst = false;
              if :: fdone -> weStopped = true; probed = false; fdone = false :: else -> skip fi }

#if FAULT_AGENT
  /* rssd restarts on this node: memory lost; the next instance reads its own observed record back
     and, from its state file, its fence clock (fence_persist.c; LATEFENCE: without) */
  :: d_step { AUP(i) && arestarts < MAXAR -> arestarts++;
       printf("@@ A%d RESTARTS\n", i);
       lk = false; lv = 0;
#if NO_RULE8
       vD = 0;
#endif
       probed = false; myCtr = 0; weStopped = false; fst = false; fdone = false;
       dirty = false; hAct = 0; hCtr = 0; hfl = hfl & ~(1 << i);
       aGen = oGen[i]; aRole = oRole[i]; aSeq = oSeq[i]; aLast = oLast[i]; aLAct = oLAct[i];
       aRes = oRes[i]; aCtr = oCtr[i];
       if :: cutT[i] != 0 && LATEFENCE -> cutT[i] = 3; fev[i] = false :: else -> skip fi }
#endif
  od
}

/* ============================ leader candidate c ============================ */
#define P_IDLE 0
#define P_APPLY 1        /* plan made: verify the Lease if a pod claims a newer epoch, the floor */
#define P_FENCE 2        /* fencing patches */
#define P_ACT 3          /* the one desired patch */
#if FAULT_DELETE && (NO_FLOORCAS || STATUSEPOCH)
#define P_STATUS 4       /* status written (carries status.epoch: the code before F5's fix) */
#else
#define P_STATUS P_IDLE  /* the status write does not carry status.epoch (leader_status_patch) */
#endif

inline LEADER_RESET() {
  isL = false; isLG[c] = false; dl[c] = false; ep = 0; ph = P_IDLE; claim = false; fm = 0; flr = false;
  pAct = 0; pS = 0; pGen = 0; pchg[c] = 0;
#if HOLD
  pLo = 0;
#endif
  lsil = 0; ldead = 0
}

/* planner.c derive(), decide(), running_cluster(), joins(), recovery(): one plan from one LIST */
inline PLAN() {
  mObs = 0; mFresh = 0; mCur = 0; mPend = 0; mLive = 0; mUncl = 0; mUnres = 0; mInfl = 0;
  mRun = 0; mPrimUp = 0; mAct = 0; mAlive = 0; mDead = 0;
  h_claim = false; fm = 0; mStale = 0; mDst = 0;
#if LIVENESS && !NO_REVIVE
  /* leader_liveness_reports on this LIST: a changed report revives its node (finding F2's fix) */
  lsil = lsil & ~orep[c]; ldead = ldead & ~orep[c];
#endif
  orep[c] = 0;
  h_k = 0;
  do
  :: h_k < N ->
       /* epoch_claims(): a pod claims a newer epoch */
       if :: dEp[h_k] > ep || oLE[h_k] > ep -> h_claim = true :: else -> skip fi;
       /* fence(): every pod without our epoch */
       if :: dEp[h_k] != ep -> fm = fm | (1 << h_k) :: else -> skip fi;
       /* derive() */
       h_x = 1 << h_k;
       if :: BIT(ldead, h_k) -> mDead = mDead | h_x :: else -> skip fi;
       if :: !BIT(lsil, h_k) && !BIT(ldead, h_k) -> mAlive = mAlive | h_x :: else -> skip fi;
       if
       :: oRole[h_k] != R_NONE ->
            mObs = mObs | h_x;
            if :: oLE[h_k] == ep || NO_FRESH -> mFresh = mFresh | h_x :: else -> skip fi;
            if :: (oLE[h_k] == ep || NO_FRESH) && oCtr[h_k] == ctr[h_k] -> mCur = mCur | h_x :: else -> skip fi;
            if :: oRes[h_k] == RES_PENDING -> mPend = mPend | h_x :: else -> skip fi
       :: else -> skip
       fi;
       if
       :: BIT(mObs, h_k) && !BIT(mDead, h_k) &&
          (oRole[h_k] == R_STARTING || ISRUN(oRole[h_k]) || BIT(mPend, h_k)) -> mLive = mLive | h_x
       :: else -> skip
       fi;
       if
       :: BIT(mObs, h_k) && !BIT(mDead, h_k) && !BIT(mLive, h_k) && oRole[h_k] == R_UNKNOWN -> mUncl = mUncl | h_x
       :: else -> skip
       fi;
       if
       :: dEp[h_k] == ep && dAct[h_k] != A_NONE && (FIX_DEADUNRES || !BIT(mDead, h_k)) &&
          !(BIT(mObs, h_k) && oLast[h_k] == dAid[h_k] && oRes[h_k] != RES_PENDING) &&
          !(BIT(mObs, h_k) && oGen[h_k] > dGen[h_k]) -> mUnres = mUnres | h_x
       :: else -> skip
       fi;
       /* derive(): stale_start, an unacknowledged start on a dead node (finding F1's fix: retract()) */
       if
       :: dEp[h_k] == ep && ISSTART(dAct[h_k]) && BIT(mDead, h_k) &&
          !(BIT(mObs, h_k) && oLast[h_k] == dAid[h_k] && oRes[h_k] != RES_PENDING) &&
          !(BIT(mObs, h_k) && oGen[h_k] > dGen[h_k]) -> mStale = mStale | h_x
       :: else -> skip
       fi;
       /* derive(): dead_start, a start written ahead on a node judged dead whose hook may still run
          (finding F4's fix): until its hook timeout and the stop's have passed, no seed */
       if
       :: BIT(mDead, h_k) && BIT(mObs, h_k) && oRes[h_k] == RES_PENDING && ISSTART(oLAct[h_k]) &&
          !BIT(htmo, h_k) && !NO_DEADSTART -> mDst = mDst | h_x
       :: else -> skip
       fi;
       if
       :: (BIT(mUnres, h_k) && ISSTART(dAct[h_k])) || (BIT(mLive, h_k) && oRole[h_k] == R_STARTING) ||
          (BIT(mPend, h_k) && ISSTART(oLAct[h_k])) -> mInfl = mInfl | h_x
       :: else -> skip
       fi;
       if
       :: BIT(mCur, h_k) && !BIT(mDead, h_k) && ISRUN(oRole[h_k]) && !BIT(mPend, h_k) ->
            mRun = mRun | h_x;              /* running: a primary or a secondary */
            if :: BIT(mAlive, h_k) && oRole[h_k] == R_PRIMARY -> mPrimUp = mPrimUp | h_x :: else -> skip fi
       :: else -> skip
       fi;
       if
       :: BIT(mAlive, h_k) && BIT(mCur, h_k) && !BIT(mUnres, h_k) && !BIT(mPend, h_k) -> mAct = mAct | h_x
       :: else -> skip
       fi;
       h_k++
  :: else -> break
  od;
#if NO_RULE9
  fm = 0;
#endif
#if !NO_RETRACT && !FIX_DEADUNRES
  /* retract(): desired {epoch, none} on each stale start, a CAS like a fencing patch (the same write),
     and nothing else decided in this plan (plan.retracting: LEADER_REPLAN) */
  if :: fm == 0 && mStale != 0 -> fm = mStale; printf("@@ L%d retracts starts on dead nodes %d\n", c, mStale) :: else -> skip fi;
#endif
  claim = h_claim; pAct = A_NONE;
  if
  :: fm != 0 -> ph = P_APPLY; pchg[c] = 0                     /* a fencing plan: nothing else */
  :: else ->
       if
       :: mLive != 0 ->                                        /* running_cluster() */
            if
            :: mPrimUp == 0 ->
                 if
                 :: mInfl != 0 -> skip                         /* WaitingForStart */
#if !NO_RULE12
                 /* rule 12: a member whose report is not under this epoch or whose node is silent (not
                    judged dead) may be a running primary: wait for it (WaitingForMembers) */
                 :: mInfl == 0 && (mDead | (mCur & mAlive)) != 7 -> skip
                 :: mInfl == 0 && (mDead | (mCur & mAlive)) == 7 ->
#else
                 :: else ->                                    /* NoPrimary: stop a running member */
#endif
                      h_k = 0;
                      do
                      :: h_k < N && BIT(mLive, h_k) && BIT(mAct, h_k) && BIT(mRun, h_k) ->
                           printf("@@ L%d NoPrimary: stops m%d (current+alive %d, dead %d)\n", c, h_k, mCur & mAlive, mDead);
#if PRIMARIES == 1
                           /* RULE 12: the leader stops a secondary for "no primary" only when no primary runs */
                           assert(!PRIMRUN(0) && !PRIMRUN(1) && !PRIMRUN(2));
#endif
                           pAct = A_STOP; pS = h_k; break
                      :: h_k < N && !(BIT(mLive, h_k) && BIT(mAct, h_k) && BIT(mRun, h_k)) -> h_k++
                      :: h_k >= N -> break
                      od
                 fi
            :: else ->
                 h_t = 0;                                      /* a member on a live node not reported under our epoch */
                 h_k = 0;
                 do
                 :: h_k < N -> if :: BIT(mAlive, h_k) && BIT(mObs, h_k) && !BIT(mFresh, h_k) -> h_t = 1 :: else -> skip fi; h_k++
                 :: else -> break
                 od;
                 if
                 :: mInfl == 0 && h_t == 0 ->                  /* joins(): highest sequence first, then lowest ordinal */
                      h_best = N; h_k = 0;
                      do
                      :: h_k < N ->
                           if
                           :: BIT(mAct, h_k) && oRole[h_k] == R_STOPPED &&
#if HOLD
                              !HELD(h_k) &&                    /* hold_newer(): NewerThanSeed */
#endif
                              (h_best == N || (oSeq[h_k] != NOSEQ && (oSeq[h_best] == NOSEQ || oSeq[h_k] > oSeq[h_best]))) -> h_best = h_k
                           :: else -> skip
                           fi; h_k++
                      :: else -> break
                      od;
                      if :: h_best < N -> pAct = (PRIMARIES == 1 -> A_SEC : A_PRIM); pS = h_best :: else -> skip fi
                 :: else -> skip
                 fi
            fi
       :: mLive == 0 && (mUncl != 0 || mUnres != 0 || mDst != 0) -> skip   /* rule 8: wait for every action to resolve (F4: and a dead node's start) */
       :: mLive == 0 && mUncl == 0 && mUnres == 0 && mDst == 0 ->           /* recovery() */
            h_nc = 0; h_nm = 0; h_best = N; h_k = 0; h_cand = 0;
            do
            :: h_k < N ->
                 if
#if HOLD && !NO_RULE14
                 /* rule 14: a member left out of a recovery that may hold writes the cluster gave up is
                    never a candidate until it rejoined */
                 :: HELD(h_k) -> h_nm++
#endif
#if NO_RULE3
                 :: BIT(mDead, h_k) -> skip                    /* the first release: a dead node is permission */
                 :: !BIT(mDead, h_k) && (!BIT(mAlive, h_k) || !BIT(mCur, h_k) || oRole[h_k] != R_STOPPED ||
                    oSeq[h_k] == NOSEQ)
#else
                 :: BIT(mDead, h_k) || !BIT(mAlive, h_k) || !BIT(mCur, h_k) || oRole[h_k] != R_STOPPED ||
                    oSeq[h_k] == NOSEQ
#endif
                    -> h_nm++                                  /* missing (rule 3 as corrected) */
                 :: else -> h_nc++; h_cand = h_cand | (1 << h_k);
                      if :: h_best == N || oSeq[h_k] > oSeq[h_best] -> h_best = h_k :: else -> skip fi
                 fi; h_k++
            :: else -> break
            od;
            if
            :: h_best < N && (h_nm == 0 || (OPTIN && h_nc >= 2)) ->
#if !OPTIN
                 /* RULE 3: no seed before every member reported (a candidate of this epoch) */
                 assert(h_nc == N);
#endif
                 printf("@@ L%d plans seed m%d, candidates %d (left out %d)\n", c, h_best, h_cand, 7 & ~h_cand);
#if HOLD
                 /* RULE 14 (and rule 2 among the candidates): the seed's data holds every write the
                    current cluster acknowledged whenever a candidate's does; only writes held by members
                    left out can be given up (the admin's opt-in) */
                 assert(HAS(h_best) || !((BIT(h_cand, 0) && HAS(0)) || (BIT(h_cand, 1) && HAS(1)) || (BIT(h_cand, 2) && HAS(2))));
                 pLo = 7 & ~h_cand;                            /* status.leftOut, written with the seed */
#endif
                 pAct = A_SEED; pS = h_best
            :: else -> skip                                    /* WaitingForMembers */
            fi
       fi;
       if
       :: pAct != A_NONE -> ph = P_APPLY; pGen = oGen[pS]; pchg[c] = 0
       :: else -> ph = P_STATUS
       fi
  fi
#if HOLD
  ; lo = lo & ~mRun                                            /* a left-out member that rejoined is released */
#endif
}

/* a late leader (dl) sends the one write it had checked, then stops */
#define LATE() if :: dl[c] && isL -> LEADER_RESET() :: else -> skip fi

proctype Leader(byte c)
{
  bool isL = false;
  byte ep = 0;
  byte maxT = 0;         /* election.c max_transitions: in memory only */
  bool claim = false;
  byte fm = 0;           /* pods to fence */
  byte pAct = 0, pS = 0, pGen = 0;
  byte lsil = 0, ldead = 0;   /* leader_liveness.c: nodes seen silent / dead on this leader's clock */
  bool flr = false;      /* leader.c floors: this term raised the RSS's epoch floor */
#if HOLD
  byte pLo = 0;          /* the members a planned seed leaves out */
#endif
end:
  do
#if FAULT_DELETE
  /* election.c try_acquire_or_renew: a follower observes the Lease (max_transitions; it matters only
     once the Lease was deleted, so it is modelled only then) */
  :: d_step { !isL && LAPI(c) && !lGone && lTrans > maxT -> maxT = lTrans }
#endif

  /* election.c: acquire a missing (POST), released or expired Lease: a new term, transitions + 1,
     above the epoch floor (rule 11) */
  :: d_step { !isL && LAPI(c) && acqs < MAXACQ &&
              (lGone || lHolder == NOHOLDER || lExpired || (NO_RULE11 && lHolder == ID(c))
#if FAULT_REBOOT
               /* rss_election_holder_rebooted: the holder ran on this node in an earlier boot */
               || (lHolder == ID(c) && lIdBoot != realBoot[c])
               /* holder_node_rebooted: the holder's Node reports another boot than the one recorded */
               || (lHolder < 2 && lHolder != ID(c) && lBoot != NOBOOT && nodeBoot[lHolder] != lBoot)
#endif
              ) ->
#if FAULT_REBOOT
       /* THE REBOOT SHORTCUT NEVER MAKES TWO LEADERS: a holder taken over before its Lease expired is
          not running (its node rebooted since it acquired) */
       if
       :: !lGone && lHolder != NOHOLDER && !lExpired ->
            printf("@@ L%d takes over from rebooted holder L%d\n", c, lHolder);
            assert(!isLG[lHolder])
       :: else -> skip
       fi;
#endif
       if
       :: lGone -> h_t = maxT + 1
       :: else -> h_t = (lTrans > maxT -> lTrans : maxT) + 1
       fi;
#if NO_RULE11
       if :: !lGone && lHolder == ID(c) -> h_t = lTrans :: else -> skip fi;  /* client-go holder == me */
#endif
#if !NO_FLOOR
       if :: floorE >= h_t -> h_t = floorE + 1 :: else -> skip fi;         /* above_floor() */
#endif
       if
       :: h_t <= MAXT ->
            acqs++; lTrans = h_t; lHolder = ID(c); lExpired = false; lGone = false;
#if FAULT_REBOOT
            lIdBoot = realBoot[c];
            if :: NO_BOOTAGREE || nodeBoot[c] == realBoot[c] -> lBoot = realBoot[c] :: else -> lBoot = NOBOOT fi;
#endif
            isL = true; isLG[c] = true; ep = h_t; ph = P_IDLE; flr = false;
#if FAULT_DELETE
            maxT = (h_t > maxT -> h_t : maxT);
#endif
            lsil = 0; ldead = 0; orep[c] = 0;                  /* leader_liveness_start: a new term */
            printf("@@ L%d ACQUIRES: epoch %d (floor %d)\n", c, ep, floorE)
       :: else -> skip
       fi }

#if FAULT_LEADER
  /* renew deadline passed or the process paused/crashed: stops acting (possibly long after the Lease
     expired and was taken: rss_election_leading is checked before each write, a paused process may
     still send one) */
  :: d_step { isL -> printf("@@ L%d stops acting\n", c); LEADER_RESET() }
#endif

#if FAULT_REBOOT
  /* node c reboots: its rssd ends (a new process starts, memory lost) and so does its member's container;
     the kubelet reports the new boot in the Node later */
  :: d_step { boots < MAXBOOT -> boots++; realBoot[c]++; LEADER_RESET(); maxT = 0;
              dbrun[c] = false; ctr[c]++; printf("@@ node %d REBOOTS (boot %d)\n", c, realBoot[c]) }
  :: d_step { nodeBoot[c] != realBoot[c] -> nodeBoot[c] = realBoot[c]; printf("@@ Node %d reports boot %d\n", c, realBoot[c]) }
#endif

#if LIVENESS
#if FAULT_DELETE
  :: d_step { maxT != 0 -> maxT = 0; LEADER_RESET() }         /* crash: rssd restarts, memory lost */
#endif

  /* leader.c: the 1 s LIST of the heartbeat Leases (leader_liveness_update) */
  :: d_step { isL && LAPI(c) ->
       h_k = 0;
       do
       :: h_k < N ->
            if
            :: hbT[h_k] == 0 -> lsil = lsil & ~(1 << h_k); ldead = ldead & ~(1 << h_k)
            :: hbT[h_k] >= 1 && !BIT(lsil, h_k) -> lsil = lsil | (1 << h_k)   /* not renewed in its duration */
            /* a restarted agent's later clock holds nobody up; an agent that is down ran no fence check
               (the leader's dead window passes all the same); rule 13: only a node whose kubelet no longer
               reports (Node not Ready: it lost the API too) is dead, a silent agent on a Ready node is absent */
            :: hbT[h_k] == 2 && BIT(lsil, h_k) && (fev[h_k] || cutT[h_k] == 3 || ADOWN(h_k)) &&
               (NO_KUBELET || cut[h_k] != 0) ->
                 /* THE DEAD-NODE PREMISE: a node this leader judges dead has no running member
                    (planner.c treats its members as fenced) */
                 printf("@@ L%d judges node %d dead (m%d running: %d)\n", c, h_k, h_k, dbrun[h_k]);
#if !NO_PREMISE
                 assert(!dbrun[h_k]);
#endif
                 ldead = ldead | (1 << h_k); lsil = lsil & ~(1 << h_k)
            :: else -> skip
            fi; h_k++
       :: else -> break
       od; h_k = 0 }
#endif

  /* leader_reconcile.c plan_round: one LIST of the member pods, rss_planner_plan */
  :: d_step { isL && !dl[c] && LAPI(c) && ph == P_IDLE -> PLAN() }

  /* leader_apply.c leader_apply: rss_election_verify when a pod claims a newer epoch, then
     raise_epoch_floor: once per term, status.epoch raised to this epoch by a CAS, only from below,
     before any pod carries this epoch; a floor already at (or above) this epoch that this term did
     not raise means another leader of this epoch: write nothing, step down (rss_election_resign;
     modelled as the Lease expiring: the code's own re-acquisition is one of the allowed successors) */
  :: d_step { isL && LAPI(c) && ph == P_APPLY ->
       if
       :: claim && !(lHolder == ID(c) && lTrans == ep && !lGone) -> printf("@@ L%d deposed (verify)\n", c); LEADER_RESET()
#if FAULT_DELETE && !NO_FLOORCAS
       :: !(claim && !(lHolder == ID(c) && lTrans == ep && !lGone)) && !flr && floorE >= ep ->
            printf("@@ L%d floor %d taken: steps down\n", c, floorE);
            if :: !lGone && lHolder == ID(c) && lTrans == ep -> lExpired = true :: else -> skip fi;
            LEADER_RESET()
#endif
       :: else ->
#if FAULT_DELETE
#if NO_FLOORCAS
            if :: floorE < ep -> floorE = ep :: else -> skip fi;   /* the floor matters only after a deletion */
#else
            if :: !flr -> floorE = ep; flr = true :: else -> skip fi;   /* the CAS (floorE < ep here) */
#endif
#endif
            ph = (fm != 0 -> P_FENCE : P_ACT)
       fi; LATE() }

  /* apply_patches: fence patches desired {epoch, none}, each a CAS on the LIST's record version */
  :: d_step { isL && LAPI(c) && ph == P_FENCE ->
       h_k = 0;
       do
       :: h_k < N && !BIT(fm, h_k) -> h_k++
       :: h_k < N && BIT(fm, h_k) -> break
       :: h_k >= N -> break
       od;
       if
       :: h_k >= N -> ph = P_STATUS                            /* then LEADER_REPLAN: a fresh LIST */
       :: h_k < N && !BIT(pchg[c], h_k) ->                      /* CAS on the LIST's version */
            dEp[h_k] = ep; dAct[h_k] = A_NONE; dAid[h_k] = 0; dGen[h_k] = 0; fm = fm & ~(1 << h_k); TOUCH(h_k)
       :: else -> ph = P_IDLE; fm = 0                          /* 409: re-LIST and re-plan */
       fi;
       if :: ph != P_FENCE -> pchg[c] = 0 :: else -> skip fi;
       LATE() }

  /* apply_patches: the decision, desired {epoch, id, action, generation}, CAS on the LIST's record version */
  :: d_step { isL && LAPI(c) && ph == P_ACT && nextAid <= MAXAID ->
       if
       :: !BIT(pchg[c], pS) ->                                 /* CAS on the LIST's version */
            dEp[pS] = ep; dAid[pS] = nextAid; dAct[pS] = pAct; dGen[pS] = pGen; nextAid++; TOUCH(pS);
#if HOLD
            /* the left-out marks (status.leftOut, by ordinal: they outlive the pod), with the seed */
            if :: pAct == A_SEED && BIT(pLo, 0) && !BIT(lo, 0) -> lo = lo | 1; loS[0] = oSeq[pS] :: else -> skip fi;
            if :: pAct == A_SEED && BIT(pLo, 1) && !BIT(lo, 1) -> lo = lo | 2; loS[1] = oSeq[pS] :: else -> skip fi;
            if :: pAct == A_SEED && BIT(pLo, 2) && !BIT(lo, 2) -> lo = lo | 4; loS[2] = oSeq[pS] :: else -> skip fi;
#endif
            printf("@@ L%d desired m%d: act %d id %d gen %d epoch %d\n", c, pS, pAct, dAid[pS], pGen, ep);
            ph = P_STATUS
       :: else -> ph = P_IDLE
       fi;
       pAct = 0; pS = 0; pGen = 0; pchg[c] = 0;
#if HOLD
       pLo = 0;
#endif
       LATE() }

  /* apply_status before F5's fix: the status carried status.epoch = this leader's epoch */
#if FAULT_DELETE && (NO_FLOORCAS || STATUSEPOCH)
  :: d_step { isL && LAPI(c) && ph == P_STATUS -> floorE = ep; ph = P_IDLE; LATE() }
#endif
  od
}

/* ============================== environment ============================== */
#if PART_IDLE == 2
/* no hook in flight: no write-ahead still pending (with NO_DEADSTART, finding F4 is the trace without
   this; F1 and F2 are checked with it, so that their traces are their own) */
#define PARTOK (oRes[0] != RES_PENDING && oRes[1] != RES_PENDING && oRes[2] != RES_PENDING)
#elif PART_IDLE
#define SETTLED(k) (oRes[k] != RES_PENDING && (dAct[k] == A_NONE || oLast[k] == dAid[k]))
#define PARTOK (SETTLED(0) && SETTLED(1) && SETTLED(2) && lph[0] == 0 && lph[1] == 0)
#else
#define PARTOK true
#endif
proctype Env()
{
end:
  do
  :: false -> skip
#if FAULT_CTR
  :: d_step { crashes < MAXCRASH -> crashes++; dbrun[0] = false; ctr[0]++; printf("@@ container m0 restarts\n") }
  :: d_step { crashes < MAXCRASH -> crashes++; dbrun[1] = false; ctr[1]++; printf("@@ container m1 restarts\n") }
  :: d_step { crashes < MAXCRASH -> crashes++; dbrun[2] = false; ctr[2]++; printf("@@ container m2 restarts\n") }
  :: d_step { crashes < MAXCRASH && dbrun[0] -> crashes++; dbrun[0] = false; printf("@@ m0 app crashes\n") }
  :: d_step { crashes < MAXCRASH && dbrun[1] -> crashes++; dbrun[1] = false; printf("@@ m1 app crashes\n") }
  :: d_step { crashes < MAXCRASH && dbrun[2] -> crashes++; dbrun[2] = false; printf("@@ m2 app crashes\n") }
#endif
#if WRITES
  /* a client write committed by the running cluster */
  :: d_step { (PRIMRUN(0) || PRIMRUN(1) || PRIMRUN(2)) ->   /* with a secondary: replicated synchronously */
       h_t = 0;
       if :: dbrun[0] && seq[0] > h_t -> h_t = seq[0] :: else -> skip fi;
       if :: dbrun[1] && seq[1] > h_t -> h_t = seq[1] :: else -> skip fi;
       if :: dbrun[2] && seq[2] > h_t -> h_t = seq[2] :: else -> skip fi;
       if
       :: h_t < MAXSEQ ->
            if :: dbrun[0] -> seq[0] = h_t + 1 :: else -> skip fi;
            if :: dbrun[1] -> seq[1] = h_t + 1 :: else -> skip fi;
            if :: dbrun[2] -> seq[2] = h_t + 1 :: else -> skip fi;
#if HOLD
            ackSeq = h_t + 1;
#endif
            skip
       :: else -> skip
       fi }
#endif
#if FAULT_LEADER
  /* the holder did not renew in time (it may still act until its renew deadline, or paused) */
  :: d_step { lHolder != NOHOLDER && !lExpired && !lGone -> lExpired = true;
              /* the holder's renew deadline (< lease duration) passed before others can see it expire */
              if :: isLG[0] && ID(0) == lHolder -> dl[0] = true :: else -> skip fi;
              if :: isLG[1] && ID(1) == lHolder -> dl[1] = true :: else -> skip fi }
#endif
#if FAULT_DELETE
  /* the Lease is deleted (DaemonSet and Lease deleted, deploy/ applied again) */
  :: d_step { deleted < MAXDEL && !lGone && (!DELETE_LATE || floorE >= lTrans) -> deleted++; lGone = true; lHolder = NOHOLDER; lTrans = 0; lExpired = false;
              printf("@@ Lease DELETED\n") }
#endif
#if FAULT_OUTAGE
  /* API server outage: every agent loses the API, none loses its peers */
  :: d_step { !faulted -> faulted = true; apiDown = true;
              cutT[0] = 1; cutT[1] = 1; cutT[2] = 1; printf("@@ API OUTAGE begins\n") }
  :: d_step { apiDown && cutT[0] == 1 && cutT[1] == 1 && cutT[2] == 1 -> cutT[0] = 2; cutT[1] = 2; cutT[2] = 2 }  /* fence timeout */
  :: d_step { apiDown -> apiDown = false;
              h_k = 0;
              do
              :: h_k < N -> if :: cut[h_k] == 0 -> cutT[h_k] = 0; fev[h_k] = false :: else -> hbT[h_k] = 1 fi; h_k++
              :: else -> break
              od; h_k = 0; printf("@@ API OUTAGE ends\n") }
#endif
#if FAULT_PART
  /* node k cut off (from the API and its peers, or from the API only); heals later */
  :: d_step { !faulted && PARTOK -> faulted = true; cut[0] = 1; hbT[0] = 1; cutT[0] = 1; printf("@@ node 0 cut off (API and peers)\n") }
  :: d_step { !faulted && PARTOK -> faulted = true; cut[1] = 1; hbT[1] = 1; cutT[1] = 1; printf("@@ node 1 cut off (API and peers)\n") }
  :: d_step { !faulted && PARTOK -> faulted = true; cut[2] = 1; hbT[2] = 1; cutT[2] = 1; printf("@@ node 2 cut off (API and peers)\n") }
#if FAULT_PART >= 2
  :: d_step { !faulted && PARTOK -> faulted = true; cut[0] = 2; hbT[0] = 1; cutT[0] = 1; printf("@@ node 0 cut off (API only)\n") }
  :: d_step { !faulted && PARTOK -> faulted = true; cut[2] = 2; hbT[2] = 1; cutT[2] = 1; printf("@@ node 2 cut off (API only)\n") }
#endif
#endif
#if FAULT_GROUP
  /* two nodes cut off together from the API and from the third node (the leader's, when it leads from
     there), still reaching each other: each side's agents count their reachable peers */
  :: d_step { !faulted && PARTOK -> faulted = true; cut[1] = 3; cut[2] = 3; hbT[1] = 1; hbT[2] = 1; cutT[1] = 1; cutT[2] = 1;
              printf("@@ nodes 1, 2 cut off together (API and node 0)\n") }
  :: d_step { !faulted && PARTOK -> faulted = true; cut[0] = 3; cut[2] = 3; hbT[0] = 1; hbT[2] = 1; cutT[0] = 1; cutT[2] = 1;
              printf("@@ nodes 0, 2 cut off together (API and node 1)\n") }
#if FAULT_GROUP >= 2
  /* two nodes cut off from the API only: they still reach the third node, which has the API */
  :: d_step { !faulted && PARTOK -> faulted = true; cut[1] = 2; cut[2] = 2; hbT[1] = 1; hbT[2] = 1; cutT[1] = 1; cutT[2] = 1;
              printf("@@ nodes 1, 2 cut off together (API only)\n") }
  :: d_step { !faulted && PARTOK -> faulted = true; cut[0] = 2; cut[2] = 2; hbT[0] = 1; hbT[2] = 1; cutT[0] = 1; cutT[2] = 1;
              printf("@@ nodes 0, 2 cut off together (API only)\n") }
#endif
#endif
#if FAULT_ADOWN
  /* node k's agent is down (SIGSTOP, OOM kill, eviction, a slow image pull): no heartbeat, no fence
     check, no report; the node, its kubelet and its members are fine. It comes back later. */
  :: d_step { !faulted -> faulted = true; adown[0] = true; hbT[0] = 1; printf("@@ agent 0 DOWN\n") }
  :: d_step { !faulted -> faulted = true; adown[1] = true; hbT[1] = 1; printf("@@ agent 1 DOWN\n") }
  :: d_step { !faulted -> faulted = true; adown[2] = true; hbT[2] = 1; printf("@@ agent 2 DOWN\n") }
  :: d_step { adown[0] || adown[1] || adown[2] -> adown[0] = false; adown[1] = false; adown[2] = false;
              hbT[0] = 0; hbT[1] = 0; hbT[2] = 0; printf("@@ agent back\n") }
#endif
#if HOLD && LIGHTSOUT
  /* a later lights-out: every member's container stops at once (a hook in flight is interrupted) */
  :: d_step { louts < LIGHTSOUT && (dbrun[0] || dbrun[1] || dbrun[2]) -> louts++;
              dbrun[0] = false; dbrun[1] = false; dbrun[2] = false; ctr[0]++; ctr[1]++; ctr[2]++;
              printf("@@ LIGHTS OUT again (seqs %d %d %d)\n", seq[0], seq[1], seq[2]) }
#endif
#if HOLD && FAULT_RECREATE
  /* a left-out member's pod is re-created (rollout, kubectl delete pod, suspend/resume): a new container */
  :: d_step { recre < FAULT_RECREATE && BIT(lo, 0) -> recre++; dbrun[0] = false; ctr[0]++; if :: HOLD_UID -> lo = lo & ~1 :: else -> skip fi; printf("@@ pod m0 re-created\n") }
  :: d_step { recre < FAULT_RECREATE && BIT(lo, 1) -> recre++; dbrun[1] = false; ctr[1]++; if :: HOLD_UID -> lo = lo & ~2 :: else -> skip fi; printf("@@ pod m1 re-created\n") }
  :: d_step { recre < FAULT_RECREATE && BIT(lo, 2) -> recre++; dbrun[2] = false; ctr[2]++; if :: HOLD_UID -> lo = lo & ~4 :: else -> skip fi; printf("@@ pod m2 re-created\n") }
#endif
#if LIVENESS
  /* time: the fence timeout passes (agent's clock fires), then the leader's margin (+5 s) */
  :: d_step { (hbT[0] == 1 || hbT[1] == 1 || hbT[2] == 1) && !apiDown ->
       h_k = 0;
       do
       :: h_k < N -> if :: hbT[h_k] == 1 -> hbT[h_k] = 2; if :: cutT[h_k] == 1 -> cutT[h_k] = 2 :: else -> skip fi :: else -> skip fi; h_k++
       :: else -> break
       od; h_k = 0 }
#endif
#if CUTS
  :: d_step { (cutT[0] == 3 || cutT[1] == 3 || cutT[2] == 3) ->
       if :: cutT[0] == 3 -> cutT[0] = 2 :: else -> skip fi;
       if :: cutT[1] == 3 -> cutT[1] = 2 :: else -> skip fi;
       if :: cutT[2] == 3 -> cutT[2] = 2 :: else -> skip fi }
  /* the start's hook timeout and the stop timeout pass since member k's write-ahead (planner.c
     dead_start_until). What the code assumes of that time: by then the hook is over (the runtime
     enforces its timeout) and a fenced agent has stopped the member again, so this event comes only
     when that holds in reality (no start's hook in flight, the member not running). */
  :: d_step { (cut[0] != 0 || cut[1] != 0 || cut[2] != 0) ->
       h_k = 0;
       do
       :: h_k < N ->
            if
            :: oRes[h_k] == RES_PENDING && ISSTART(oLAct[h_k]) && !BIT(htmo, h_k) && !BIT(hfl, h_k) &&
               !dbrun[h_k] -> htmo = htmo | (1 << h_k)
            :: else -> skip
            fi; h_k++
       :: else -> break
       od; h_k = 0 }
  /* the partition heals */
  :: d_step { (cut[0] != 0 || cut[1] != 0 || cut[2] != 0) ->
       cut[0] = 0; cut[1] = 0; cut[2] = 0;
       h_k = 0;
       do
       :: h_k < N -> if :: !apiDown -> hbT[h_k] = 0; cutT[h_k] = 0; fev[h_k] = false :: else -> hbT[h_k] = 0 fi; h_k++
       :: else -> break
       od; h_k = 0; printf("@@ partition heals\n") }
#endif
  od
}

init {
  atomic {
#ifdef INITSEQ
    seq[0] = (INITSEQ / 100) % 10; seq[1] = (INITSEQ / 10) % 10; seq[2] = INITSEQ % 10;
#else
    if :: seq[0] = 1 :: seq[0] = 2 fi;
    if :: seq[1] = 1 :: seq[1] = 2 fi;
    if :: seq[2] = 1 :: seq[2] = 2 fi;
#endif
    ctr[0] = 1; ctr[1] = 1; ctr[2] = 1;
#if HOLD
    /* the cluster before the lights-out acknowledged every write some member holds */
    ackSeq = (seq[0] > seq[1] -> seq[0] : seq[1]); ackSeq = (seq[2] > ackSeq -> seq[2] : ackSeq);
#endif
    printf("@@ lights out over: all stopped, data seq m0=%d m1=%d m2=%d\n", seq[0], seq[1], seq[2]);
    run Env();
    run Agent(0); run Agent(1); run Agent(2);
    run Leader(0); run Leader(1)
  }
}
