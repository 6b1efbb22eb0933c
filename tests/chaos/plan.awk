# plan.awk -- the chaos harness's fault plan of one cycle, drawn from srand(seed): prints shell assignments.
#
# Usage: awk -v seed=S -v cycle=C -v fence=F -v dead=W -v shape=promote|1p|3p -f plan.awk
# The plan depends on (seed, cycle) and the shape the earlier cycles' plans left (run.sh derives it from
# them), so `run.sh --seed S` replays every cycle's plan. W is the leader's dead window in seconds. Output: one
# NAME=VALUE line per variable (values without spaces or quotes; lists comma-separated) and PLAN="..."
# (the human-readable summary, printed before the cycle acts). Times are in seconds; nodes are 1..3,
# members 0..2.
function rint(lo, hi) { return lo + int(rand() * (hi - lo + 1)) }
function pick(list,    n, a) { n = split(list, a, " "); return a[rint(1, n)] }
function add(s) { extras = extras (extras == "" ? "" : ",") s }
function apierr(d,    t) {
    t = pick("5xx 409 429 watchcut latency drop")
    if (t == "5xx") return "api:" d ":fail:" pick("500 503") ":" rint(3, 10) ":-"
    if (t == "409") return "api:" d ":fail:409:" rint(2, 6) ":PATCH"
    if (t == "429") return "api:" d ":fail:429:" rint(2, 6) ":-:" rint(1, 3)
    if (t == "watchcut") return "api:" d ":watchcut:0:0:-"
    if (t == "latency") return "api:" d ":stall:" rint(200, 1500) ":" rint(5, 20) ":-"
    return "api:" d ":drop:0:" rint(2, 5) ":-"
}
BEGIN {
    # A different stream per cycle, fixed by (seed, cycle).
    srand((seed * 7919 + cycle * 104729) % 2147483647)
    F = fence + 0
    r = rand()
    if (r < 0.45) kind = "lightsout"
    else if (r < 0.60) kind = "api_outage"
    else if (r < 0.68) kind = "partition"
    else if (r < 0.80) kind = "app_crash"
    else if (r < 0.90) kind = "rssd_restart"
    else kind = "node_off"
    extras = ""
    s0 = s1 = s2 = -1
    d1 = d2 = d3 = 0
    off = 0
    if (kind == "lightsout") {
        off = rint(0, 4)
        mode = pick("distinct distinct distinct tie equal")
        if (mode == "distinct") {
            s0 = rint(1, 60); do s1 = rint(1, 60); while (s1 == s0); do s2 = rint(1, 60); while (s2 == s0 || s2 == s1)
        } else if (mode == "tie") {
            hi = rint(20, 60); lo = rint(1, hi - 1); who = rint(0, 2)
            s0 = hi; s1 = hi; s2 = hi
            if (who == 0) s0 = lo; else if (who == 1) s1 = lo; else s2 = lo
        } else { s0 = s1 = s2 = rint(1, 60) }
        # Staggered power-on: each node waits 0..2*fence s; often the node holding the newest copy last.
        d1 = rint(0, 2 * F); d2 = rint(0, 2 * F); d3 = rint(0, 2 * F)
        newest_last = (rand() < 0.5) ? 1 : 0
        # Mid-recovery extras, each with its own chance; times count from the first power-on.
        if (rand() < 0.25) add("leaderoff:" rint(2, 2 * F + 4) ":" rint(3, F + 5))
        if (rand() < 0.20) add("nodeoff:" rint(2, 2 * F + 4) ":" rint(1, 3) ":" rint(3, F + 5))
        if (rand() < 0.25) add("rssd:" rint(1, 2 * F + 4) ":" rint(1, 3) ":" pick("TERM KILL"))
        if (rand() < 0.35) add(apierr(rint(0, F)))
        if (rand() < 0.15) add("freeze:" rint(2, 2 * F) ":" pick(int(F / 3) " " (F + 5)))
        if (rand() < 0.35) {
            tgt = rint(0, 2)
            if (rand() < 0.67) { tgt = 0; if (s1 > s0) tgt = 1; if (s2 > (tgt == 0 ? s0 : s1)) tgt = 2 }
            add("knob:" tgt ":" pick("seed seed primary sequence status") ":" pick("fail hang") ":" rint(3, 15))
        }
    } else if (kind == "api_outage") {
        # Frozen API server, shorter or longer than the fence timeout; nothing may stop.
        add("freeze:0:" (rand() < 0.5 ? rint(2, F - 2) : rint(F + 2, 2 * F + 5)))
    } else if (kind == "partition") {
        add("partition:0:" rint(1, 3) ":" rint(F + 3, F + 15))
    } else if (kind == "app_crash") {
        n = rint(1, 2)
        m1 = rint(0, 2); add("crash:0:" m1)
        if (n == 2) { do m2 = rint(0, 2); while (m2 == m1); add("crash:" rint(0, 3) ":" m2) }
        if (rand() < 0.5) add("knob:" m1 ":" pick("primary primary stop status") ":" pick("fail hang") ":" rint(3, 15))
        if (rand() < 0.3) add(apierr(0))
    } else if (kind == "rssd_restart") {
        add("rssd:0:" pick("leader " rint(1, 3)) ":" pick("TERM KILL"))
        if (rand() < 0.4) add("crash:" rint(0, 3) ":" rint(0, 2))
        if (rand() < 0.3) add(apierr(0))
    } else {
        add("nodeoff:0:" pick("leader leader 1 2 3") ":" rint(3, 2 * F + 5))
        if (rand() < 0.3) add(apierr(rint(0, 5)))
    }
    # Drawn last, so that the draws above (and every plan of an older seed) stay as they were.
    # Lights-out: the application's shape for this and the following cycles (spec.primaries 1: one
    # primary, two read-only secondaries; 3: all primaries), and sometimes minimumMembers 2 with a member
    # whose node comes back past the dead window (late), not the newest unless onNewerLateMember is Join.
    primaries = ""; minmem = 0; late = -1; latedelay = 0; joinnewer = 0
    if (kind == "lightsout") {
        primaries = (rand() < 0.5) ? 1 : 3
        if (rand() < 0.3) {
            minmem = 2; late = rint(0, 2); latedelay = 2 * F + rint(5, 10)
            others = -1
            for (i = 0; i <= 2; i++) if (i != late) { v = (i == 0 ? s0 : i == 1 ? s1 : s2); if (v > others) others = v }
            lv = (late == 0 ? s0 : late == 1 ? s1 : s2)
            if (lv > others) {
                if (rand() < 0.5) { if (late == 0) s0 = others; else if (late == 1) s1 = others; else s2 = others }
                else joinnewer = 1
            }
        }
    }
    # rssd restarted, or hung (SIGSTOP) on the primary's node for longer than the dead window.
    if (kind == "rssd_restart" && rand() < 0.4) add("hang:" rint(0, 2) ":" pick("primary primary leader") ":" rint(F + 5, 3 * F))
    # Round 5, drawn after everything above (older seeds keep every draw above): issue 35's faults.
    # Lights-out with spec.primaries 1: the failover policy from this cycle on, PromoteStandby (with
    # synchronousStandbys 1) or Recover. A cycle of one of the four member faults may instead be one of the
    # new kinds (more often under PromoteStandby: `shape` is the one the earlier cycles left, "promote",
    # "1p" or "3p", which run.sh derives from their plans): the whole node of the primary, the leader or
    # another frozen shorter than the fence timeout, between it and the leader's dead window, or past that
    # window (`dead`), then thawed; the primary's node drained (cordoned, the primary's pod deleted,
    # uncordoned after a while); the primary's application crashed and the leader's rssd SIGKILLed or its
    # node powered off while the failover is under way. The api_outage and lightsout cycles stay as they
    # were (the replays quoted in docs/testing.md are api_outage cycles).
    failover = ""
    if (kind == "lightsout" && primaries == 1) failover = (rand() < 0.7) ? "PromoteStandby" : "Recover"
    D = dead + 0; if (D <= F) D = F + 18
    if (kind == "partition" || kind == "app_crash" || kind == "rssd_restart" || kind == "node_off") {
        if (rand() < (shape == "promote" ? 0.75 : 0.4)) {
            extras = ""; primaries = ""; minmem = 0; late = -1; latedelay = 0; joinnewer = 0
            tgt = rint(0, 2) # the member meant by "primary" when every member is one (spec.primaries 3)
            t = rand()
            if (t < 0.4) {
                kind = "node_freeze"
                who = pick("primary primary leader other")
                t = rand()
                if (t < 0.25) d = rint(2, F - 2); else if (t < 0.5) d = rint(F + 2, D - 3); else d = rint(D + 3, D + 12)
                add("nfreeze:0:" who ":" tgt ":" d)
            } else if (t < 0.7) {
                kind = "drain"
                add("drain:0:" tgt ":" rint(5, 25))
            } else {
                kind = "failover_leader"
                add("lfail:0:" tgt ":" pick("rssd rssd node") ":" rint(0, 1500) ":" rint(5, 20))
            }
        }
    }
    print "KIND=" kind
    print "FAILOVER=" failover
    print "PRIMARIES=" primaries
    print "MINMEM=" minmem
    print "LATE=" late
    print "LATEDELAY=" latedelay
    print "JOINNEWER=" joinnewer
    print "OFF=" off
    print "SEQS=" s0 "," s1 "," s2
    print "DELAYS=" d1 "," d2 "," d3
    print "NEWEST_LAST=" (newest_last + 0)
    print "EXTRAS=" extras
    plan = kind
    if (kind == "lightsout")
        plan = plan " off=" off "s seqs=" s0 "/" s1 "/" s2 " (" mode ") power-on delays=" d1 "/" d2 "/" d3 "s" (newest_last ? " newest-last" : "")
    if (primaries != "") plan = plan " primaries=" primaries
    if (failover != "") plan = plan " failover=" failover
    if (minmem) plan = plan " minimumMembers=" minmem " late=" late "@" latedelay "s" (joinnewer ? " join-newer" : "")
    if (extras != "") plan = plan " extras=" extras
    print "PLAN=\"" plan "\""
}
