#!/usr/bin/env bash
# test_oracle.sh -- the chaos oracle's round-5 properties on hand-made logs: a clean freeze and promotion passes, issue 35's fault 1 and its kin are flagged.
#
# No world: each case writes an events.log and three members' hooks.log and writes files, as run.sh and
# apps/dummy would, runs tests/chaos/oracle on them and checks the violations it prints by property. The
# traces are the shapes the chaos runs meet (docs/testing.md, "Chaos runs"): under PromoteStandby the
# primary's node frozen past the dead window, a standby promoted and taking writes, then the thaw.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/assert.sh
source "$here/../lib/assert.sh"
tmp=$(mktemp -d /tmp/rss-oracle-test.XXXXXX)
# RSS_ORACLE_TEST_KEEP=1 keeps each case's logs and the oracle's output (oracle.out) for a look.
if [ "${RSS_ORACLE_TEST_KEEP:-0}" = 1 ]; then echo "# logs in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

T() { printf '2026-12-06T10:%02d:%02d.000000Z' $(($1 / 60)) $(($1 % 60)); } # SECONDS -> a time
ev() { echo "$(T "$1") @$2" >>"$d/events.log"; }                          # SECONDS EVENT
hook() { echo "$(T "$1") rss-dummy-$2 $3 rc=$4" >>"$d/data-rss-dummy-$2/hooks.log"; } # SECONDS ORD "HOOK args=[..]" RC
data() { for i in 0 1 2; do seq 1 "$1" >"$d/data-rss-dummy-$i/writes"; done; }     # the volumes at the end
# write_round SECONDS PRIMARY N FOLLOWER...: the writer's write N on PRIMARY, replicated and acknowledged.
write_round() {
    local t=$1 p=$2 n=$3 f
    shift 3
    ev "$t" "w rss-dummy-$p $n"
    for f in "$@"; do ev "$t" "sync rss-dummy-$f $n from=rss-dummy-$p"; done
    ev "$t" "ack rss-dummy-$p $n"
}
# new_case NAME: a fresh directory; the shape is one primary (rss-dummy-0) and two standbys under
# PromoteStandby, with 10 writes everywhere.
new_case() {
    d=$tmp/$1
    mkdir -p "$d"/data-rss-dummy-{0,1,2}
    ev 0 "dead-window 28"
    ev 0 "shape primaries=1 failover=PromoteStandby"
    ev 1 "cycle 1 seed=1 kind=node_freeze plan=x"
    ev 1 "truth rss-dummy-0=10 rss-dummy-1=10 rss-dummy-2=10"
    hook 2 0 "status args=[]" 8
    hook 2 1 "secondary args=[rss-dummy-0.svc]" 0
    hook 2 2 "secondary args=[rss-dummy-0.svc]" 0
}
# freeze_promote: write 11 acknowledged on rss-dummy-0, its node frozen for 35 s, rss-dummy-1 promoted
# (both standbys at 11), rss-dummy-2 repointed, write 12 on the promoted one; the thaw at 39 s.
freeze_promote() {
    write_round 3 0 11 1 2
    ev 4 "nfreeze node-1 members=rss-dummy-0 35s primary"
    hook 33 1 "sequence args=[] out=11" 0
    hook 33 2 "sequence args=[] out=11" 0
    hook 34 1 "seed args=[]" 0
    hook 35 2 "secondary args=[rss-dummy-1.svc]" 0
    write_round 36 1 12 2
    ev 39 "nthaw node-1 members=rss-dummy-0"
}
# oracle_says NAME: "PROPERTY COUNT" of every violation the oracle printed (sorted), or "none".
oracle_says() {
    local out
    out=$(bash "$here/oracle" --events "$d/events.log" --seed 1 --fence 10 --thaw-bound 11.5 "$d"/data-rss-dummy-{0,1,2} 2>&1) || true
    printf '%s\n' "$out" >"$d/oracle.out"
    out=$(sed -n 's/^VIOLATION cycle [0-9]* (seed [0-9]*) \([A-Za-z0-9-]*\):.*/\1/p' <<<"$out" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
    echo "${out:-none}"
}

# 1. The product's way since rules 17 and 18: the thawed primary stopped by its agent 2 s after the thaw,
#    rejoined as a standby of the promoted one; writes go on. Nothing to report; the promotion counts.
new_case clean
freeze_promote
hook 41 0 "stop args=[]" 0
hook 43 0 "secondary args=[rss-dummy-1.svc]" 0
write_round 45 1 13 2 0
ev 50 "truth rss-dummy-0=13 rss-dummy-1=13 rss-dummy-2=13"
ev 50 "check-acked"
data 13
expect "a frozen primary, a promotion, the thawed one stopped within the bound" none "$(oracle_says)"
run "the table counts the promotion and the writes" grep -q 'promotions: 1; writes: 3 made, 3 acknowledged' "$d/oracle.out"
run "the table measures the overlap after the thaw" grep -q '1 after a thaw (longest 2.0 s)' "$d/oracle.out"

# 2. Issue 35's fault 1 (the code before b4b5504): after the thaw the leader stops the promoted member
#    and joins it under the old primary 12 s later; the old primary takes the next write. Two primaries
#    past the bound (P10), and write 12, acknowledged by the promoted one, gone (P11).
new_case fault1
freeze_promote
hook 51 1 "stop args=[]" 0
hook 51 1 "secondary args=[rss-dummy-0.svc]" 0
write_round 52 0 12 1
ev 55 "truth rss-dummy-0=12 rss-dummy-1=12 rss-dummy-2=12"
ev 55 "check-acked"
data 12
expect "the promoted member demoted under the thawed primary" "P10-two-primaries 1, P11-acked-write-lost 1" "$(oracle_says)"

# 3. The same demotion within the bound: P10 is quiet, the lost write is still caught (by count alone it
#    would not be: the old primary's history also has 12 writes).
new_case fault1_fast
freeze_promote
hook 41 1 "stop args=[]" 0
hook 41 1 "secondary args=[rss-dummy-0.svc]" 0
write_round 42 0 12 1
ev 45 "truth rss-dummy-0=12 rss-dummy-1=12 rss-dummy-2=12"
ev 45 "check-acked"
data 12
expect "a fast demotion of the promoted member" "P11-acked-write-lost 1" "$(oracle_says)"

# 4. A promotion while the old primary runs, its node not frozen (P1), of the standby with fewer writes
#    (P2): write 11 reached rss-dummy-2 only. The promoted one lacks write 11 (P11).
new_case promote_beside
write_round 3 0 11 2
hook 34 1 "seed args=[]" 0
hook 50 0 "stop args=[]" 0
ev 55 "truth rss-dummy-0=11 rss-dummy-1=10 rss-dummy-2=11"
data 11
seq 1 10 >"$d/data-rss-dummy-1/writes"
expect "a promotion beside a running primary, of the lower standby" \
    "P1-promoted-beside-primary 1, P10-two-primaries 1, P11-acked-write-lost 1, P2-promoted-not-highest 1" "$(oracle_says)"

# 5. A frozen primary is no running primary: the promotion during the freeze is not P1, and the old
#    primary stopped by its agent at the thaw is not P9 (rule 18); a volume changed behind the harness's
#    back is P7.
new_case frozen_p1_p7
freeze_promote
hook 40 0 "stop args=[]" 0
hook 42 0 "secondary args=[rss-dummy-1.svc]" 0
ev 45 "truth rss-dummy-0=11 rss-dummy-1=12 rss-dummy-2=15"
data 12
seq 1 11 >"$d/data-rss-dummy-0/writes"
seq 1 15 >"$d/data-rss-dummy-2/writes"
expect "a promotion during a freeze, a wake's stop, a changed volume" "P7-data-changed 1" "$(oracle_says)"

# 5b. Rule 19: the primary's node cut off from the API (a partition), both standbys detached before their
#     positions, one promoted while the old primary still runs (its self-fence stops it 3 s later): no P1,
#     the overlap within P10's bound. The same with one standby that never detached: P1.
for detach2 in yes no; do
    new_case "cut_detached_$detach2"
    write_round 3 0 11 1 2
    ev 4 "partition node-1"
    hook 14 1 "detach args=[]" 0
    hook 14 1 "sequence args=[] out=11" 0
    [ "$detach2" = no ] || hook 14 2 "detach args=[]" 0
    hook 14 2 "sequence args=[] out=11" 0
    hook 15 1 "seed args=[]" 0
    hook 16 2 "secondary args=[rss-dummy-1.svc]" 0
    write_round 17 1 12 2
    hook 18 0 "stop args=[]" 0
    ev 20 "heal node-1"
    hook 22 0 "secondary args=[rss-dummy-1.svc]" 0
    write_round 23 1 13 2 0
    ev 25 "truth rss-dummy-0=13 rss-dummy-1=13 rss-dummy-2=13"
    ev 25 "check-acked"
    data 13
    if [ "$detach2" = yes ]; then
        expect "a promotion beside a cut-off primary, every standby detached" none "$(oracle_says)"
    else
        expect "a promotion beside a cut-off primary, a standby not detached" "P1-promoted-beside-primary 1" "$(oracle_says)"
    fi
done

# 6. A drain (round 5's drain kind): the primary's pod deleted, a standby promoted a second later, before the
#    harness saw the old pod leave the API: no P1 (the leader promotes once the pod is gone), and the
#    overlap is within P10's bound.
new_case drain
write_round 3 0 11 1 2
ev 4 "drain node-1 rss-dummy-0"
hook 5 1 "seed args=[]" 0
ev 6 "pod-gone rss-dummy-0"
hook 6 2 "secondary args=[rss-dummy-1.svc]" 0
write_round 7 1 12 2
ev 10 "truth rss-dummy-0=11 rss-dummy-1=12 rss-dummy-2=12"
ev 10 "check-acked"
data 12
seq 1 11 >"$d/data-rss-dummy-0/writes"
expect "a promotion before the drained pod is seen gone" none "$(oracle_says)"

checks_done
