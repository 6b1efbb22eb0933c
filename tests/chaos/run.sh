#!/usr/bin/env bash
# run.sh -- the chaos harness: one 3-node world with rssd and apps/dummy, recovery cycles under random faults from a printed, replayable seed.
#
# Usage: run.sh [--cycles N] [--seed S] [--first C] [--keep]
#   --cycles N  cycles to run (default 8); --seed S the run's seed (default: random, printed)
#   --first C   start at cycle C (plans depend on seed and cycle only: `--seed S --first C --cycles 1`
#               replays cycle C's plan alone on a fresh world; `--seed S --cycles C` replays up to it)
#   --keep      leave the world up at the end (E2E_KEEP=1)
# Each cycle prints its plan, then acts; every fault is logged with its time in $CHAOS_DIR/events.log.
# Under spec.primaries 1 a writer writes through the primary's own write tool and replicates each write to
# the standbys that follow it (the dummy app has no replication: the harness plays it, as a synchronous
# standby would take it); a write is acknowledged once one standby has it, and logged.
# At the end tests/chaos/oracle judges the run from the ground truth only (the hooks logs and data on
# the volumes, the harness's own fault and write log, the API server's Lease write log) and prints the table.
# Exit status: 0 no violation, 1 violations or a harness failure (FAIL: ...), 2 usage. See docs/testing.md.
# The logs ($CHAOS_DIR: events.log, leases.tsv, the volumes' hooks logs) stay after a failure or --keep.
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
chaos_here=$(cd "$(dirname "$0")" && pwd)
CYCLES=8
SEED=
FIRST=1
while [ $# -gt 0 ]; do
    case $1 in
    --cycles) CYCLES=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --first) FIRST=$2; shift 2 ;;
    --keep) export E2E_KEEP=1; shift ;;
    *) echo "usage: run.sh [--cycles N] [--seed S] [--first C] [--keep]" >&2; exit 2 ;;
    esac
done
[ -n "$SEED" ] || SEED=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % 1000000 ))
[[ $SEED =~ ^[0-9]+$ && $CYCLES =~ ^[0-9]+$ && $FIRST =~ ^[0-9]+$ ]] || { echo "run.sh: numbers only" >&2; exit 2; }
source "$chaos_here/../e2e/lib.sh"

R=dummy
F=${E2E_FENCE%s}
STOP_S=8                  # the RSS's stop timeout (apps/dummy's 30 s cut to 8 s below)
DEAD=$((F + STOP_S + 10)) # the leader's dead window: fence timeout + stop timeout + 5 s kill + 5 s margin
# P10's bound on two primaries at once after a thaw: the woken agent's next fence check (every second), its
# read of its Node (2.5 s at most, fence.c node_proves_alive) and the `stop` hook, which may run its whole
# timeout before its line is written (docs/testing.md, "Chaos runs").
THAW_BOUND=${CHAOS_THAW_BOUND:-$((3 + STOP_S)).5}
BOUND=${CHAOS_BOUND:-180} # every member running within BOUND s after the faults end
CHAOS_KEEP=${E2E_KEEP:-0}
[ -z "${CHAOS_DIR:-}" ] || CHAOS_KEEP=1
CHAOS_DIR=${CHAOS_DIR:-$(mktemp -d /tmp/rss-chaos.XXXXXX)}
mkdir -p "$CHAOS_DIR"
EVENTS=$CHAOS_DIR/events.log
: >"$EVENTS"
MAP=$CHAOS_DIR/map # "ordinal node" of each member, refreshed whenever the API answers
BGP=()

ev() { echo "$(now) @$*" >>"$EVENTS"; }
ev_at() { local t=$1; shift; echo "$t @$*" >>"$EVENTS"; } # TIME MSG: an event that happened at TIME

# sim VERB [QUERY]: kubesim's fault injection (docs/kubesim.md), admin token, loopback only. A real
# apiserver has none: there the draw's API error bursts are logged as skipped and not injected, and the
# oracle judges the cycle without them (api-error-skipped excuses nothing).
sim() {
    [ "$(world_flavour)" = kubesim ] || return 1
    local ks=$RSS_WORLD_DIR/kubesim
    curl -sS --max-time 5 --cacert "$ks/ca.crt" -H "Authorization: Bearer $(cat "$ks/token")" -X "${3:-POST}" \
        "https://127.0.0.1:$(cat "$ks/port")/_sim/$1${2:+?$2}" >/dev/null 2>&1
}
refresh_map() {
    local out="" i n
    for i in 0 1 2; do
        n=$(member_node $R $i) || return 1
        [ -n "$n" ] || return 1
        out+="$i $n"$'\n'
    done
    printf '%s' "$out" >"$MAP"
}
node_of() { awk -v i="$1" '$1 == i {print $2}' "$MAP"; }
members_on() { awk -v n="$1" '$2 == n {printf "%s%s", sep, "'"$(sts_name $R)"'-" $1; sep = ","}' "$MAP"; }
pick_node() { # 1..3, or "leader"
    if [ "$1" = leader ]; then leader_node 2>/dev/null || echo node-1; else echo "node-$1"; fi
}

power_off() { # NODE
    ev "poweroff $1 members=$(members_on "$1")"
    "$WORLD" power-off "$1" >/dev/null 2>&1 || true
}
power_on() { # NODE
    "$WORLD" power-on "$1" >/dev/null 2>&1 || { sleep 2; "$WORLD" power-on "$1" >/dev/null 2>&1; } || true
    ev "poweron $1 members=$(members_on "$1")"
}
rssd_restart() { # NODE SIG
    local pid
    pid=$(rssd_pid "$1") || { ev "rssd-restart-skipped $1 (no pid)"; return 0; }
    ev "rssd-restart $1 $2 pid=$pid"
    kill "-$2" "$pid" 2>/dev/null || true
}
api_error() { # D:TYPE:A:B:VERB[:RETRY]
    local t a b verb ra q
    IFS=: read -r _ _ t a b verb ra <<<"$1"
    case $t in
    fail)
        q="count=$b&code=$a"
        [ -n "${ra:-}" ] && q+="&retryAfter=$ra"
        [ "$verb" = - ] || q+="&verb=$verb"
        sim fail "$q" ;;
    stall) sim stall "count=$b&ms=$a" ;;
    drop) sim drop "count=$b" ;;
    watchcut) sim watch-cut ;;
    esac || { ev "api-error-skipped $t $a $b $verb ${ra:-}"; return 0; }
    ev "api-error $t $a $b $verb ${ra:-}"
}
knob_path() { echo "$(claim_dir $R "$1")/$3-$2"; } # ordinal hook fail|hang
set_knob() { # ORD HOOK fail|hang
    if [ "$3" = fail ]; then echo 1 >"$(knob_path "$@")"; else touch "$(knob_path "$@")"; fi
    ev "knob $(member $R "$1") $3-$2"
}
clear_knob() { rm -f "$(knob_path "$@")"; ev "knob-off $(member $R "$1") $3-$2"; }
crash() { # ORD: dummyd exits 3 within a second, its container lives on
    touch "$(claim_dir $R "$1")/crash"
    ev "crash $(member $R "$1")"
}
freeze() { # SECONDS STEADY(0|1)
    ev "freeze ${1}s steady=$2"
    "$WORLD" api-freeze || true
    sleep "$1"
    "$WORLD" api-thaw || true
    ev "thaw"
}
node_cycle() { # 1..3|leader SECONDS: power the node off, and on again after SECONDS
    local n
    n=$(pick_node "$1")
    power_off "$n"
    sleep "$2"
    power_on "$n"
}
rssd_restart_on() { rssd_restart "$(pick_node "$1")" "$2"; } # 1..3|leader SIG
# rssd_hang primary|leader SECONDS: the rssd process on that node stopped (SIGSTOP) and continued after
# SECONDS: a hung or starved agent. Its node and kubelet stay up: an absent agent, not a dead node.
rssd_hang() {
    local n pid p
    if [ "$1" = primary ]; then
        p=$(rss_json $R 2>/dev/null | jq -r '.status.members.primary[0] // ""' | sed 's/.*-//')
        n=$(node_of "${p:-0}")
    else
        n=$(pick_node leader)
    fi
    pid=$(rssd_pid "$n") || { ev "rssd-hang-skipped $n (no pid)"; return 0; }
    ev "rssd-hang $n ${2}s pid=$pid"
    kill -STOP "$pid" 2>/dev/null || true
    sleep "$2"
    kill -CONT "$pid" 2>/dev/null || true
    ev "rssd-resume $n"
}
partition_for() { # NODE SECONDS
    ev "partition $1"
    "$WORLD" partition "$1" >/dev/null 2>&1 || true
    sleep "$2"
    "$WORLD" heal "$1" >/dev/null 2>&1 || true
    ev "heal $1"
}
# The member the last probe found running as primary (under spec.primaries 1), else the plan's member T.
PRIMARY_ORD=
primary_ord() { if [ "$SHAPE" = 1 ] && [ -n "$PRIMARY_ORD" ]; then echo "$PRIMARY_ORD"; else echo "$1"; fi; }
# node_freeze primary|leader|other T SECONDS: the whole node stopped (`world freeze`: kubelet, containerd,
# rssd, the members and their hooks) and thawed after SECONDS, state intact. "other": neither the primary's
# nor the leader's node.
node_freeze() {
    local n p l x
    p=$(node_of "$(primary_ord "$2")")
    case $1 in
    primary) n=$p ;;
    leader) n=$(pick_node leader) ;;
    *)
        l=$(leader_node 2>/dev/null || echo -)
        n=node-$(($2 + 1))
        for x in $("$WORLD" nodes); do [ "$x" != "$p" ] && [ "$x" != "$l" ] && n=$x; done ;;
    esac
    touch "$CHAOS_DIR/frozen.$n"
    if ! "$WORLD" freeze "$n" >/dev/null 2>&1; then
        ev "nfreeze-failed $n"
        rm -f "$CHAOS_DIR/frozen.$n"
        return 0
    fi
    ev "nfreeze $n members=$(members_on "$n") ${3}s $1"
    sleep "$3"
    # Logged before the thaw: the window P10 measures starts no later than the node runs again.
    ev "nthaw $n members=$(members_on "$n")"
    "$WORLD" thaw "$n" >/dev/null 2>&1 || "$WORLD" thaw "$n" >/dev/null || true
    rm -f "$CHAOS_DIR/frozen.$n"
}
# drain_primary T SECONDS: what `kubectl drain` does to the primary's node: cordoned, the primary's pod
# deleted (its containers end with it; the replacement stays Pending, anti-affinity); uncordoned SECONDS
# after the start. @pod-gone: the old pod left the API (its kubelet confirmed its containers ended).
drain_primary() {
    local o n pod uid u i t0
    o=$(primary_ord "$1")
    n=$(node_of "$o")
    pod=$(member $R "$o")
    t0=$(date +%s)
    uid=$(member_uid $R "$o") || uid=
    k cordon "$n" >/dev/null 2>&1 || { ev "drain-failed $n (cordon)"; return 0; }
    k delete pod "$pod" -n "$NS" --wait=false >/dev/null 2>&1 || true
    ev "drain $n $pod"
    for ((i = 0; i < 200; i++)); do
        if u=$(k get pod "$pod" -n "$NS" --ignore-not-found -o jsonpath='{.metadata.uid}' 2>/dev/null) && [ "$u" != "$uid" ]; then
            break
        fi
        sleep 0.3
    done
    ev "pod-gone $pod"
    while [ "$(date +%s)" -lt $((t0 + $2)) ]; do sleep 0.5; done
    for i in 1 2 3 4 5; do k uncordon "$n" >/dev/null 2>&1 && break; sleep 2; done
    ev "uncordon $n"
}
# leader_fail T rssd|node MS SECONDS: the primary's application crashes; once the leader acts on it (the
# crashed primary's `stop`, which a failover issues first, in the hooks logs) and MS ms more, the leader's
# rssd is SIGKILLed or its node powered off for SECONDS: a new term in the middle of the failover. The
# other members' `sequence` takes 3 s meanwhile (delay-sequence): the positions are asked then, and the
# whole failover took half a second without it.
leader_fail() {
    local o mark i l t0 x seen=
    o=$(primary_ord "$1")
    l=$(pick_node leader)
    for x in 0 1 2; do
        [ "$x" = "$o" ] && continue
        echo 3 >"$(claim_dir $R $x)/delay-sequence"
        ev "knob $(member $R $x) delay-sequence"
    done
    mark=$(now)
    t0=$(now_ms)
    crash "$o"
    for ((i = 0; i < 400; i++)); do
        seen=$(awk -v m="$mark" -v p="$(member $R "$o")" '$1 > m && $2 == p && $3 == "stop" { print "stop"; exit }' \
            "$(claim_dir $R "$o")/hooks.log" 2>/dev/null)
        [ -z "$seen" ] || break
        sleep 0.1
    done
    sleep "$(awk -v ms="$3" 'BEGIN { printf "%.3f", ms / 1000 }')"
    ev "lfail $2 leader=$l member=$(member $R "$o") after=$(($(now_ms) - t0))ms seen=${seen:-nothing}"
    if [ "$2" = rssd ]; then
        rssd_restart "$l" KILL
        sleep 5
    else
        power_off "$l"
        sleep "$4"
        power_on "$l"
    fi
    for x in 0 1 2; do
        [ -e "$(claim_dir $R $x)/delay-sequence" ] || continue
        rm -f "$(claim_dir $R $x)/delay-sequence"
        ev "knob-off $(member $R $x) delay-sequence"
    done
}
# ---- the writer (spec.primaries 1): one write at a time through the primary's own write tool, replicated
# to every running standby that follows that primary (its peers, the secondary hook's arguments, name it),
# as synchronous replication would: the standby takes the primary's writes up to this one (set-sequence:
# catch-up, and a rewind of a diverged tail). Acknowledged once one standby has it (the RSS's
# synchronousStandbys 1, PostgreSQL's ANY 1). Logged: @w (written), @sync, @ack, and @wamb-w / @wamb-s when
# the runtime did not answer (a frozen node resumes such an exec after its thaw: the oracle accepts either
# outcome at the next @truth). Paused around every @truth (the harness reads the volumes then).
SVC=
WPAUSE=$CHAOS_DIR/writer.pause
WPAUSED=$CHAOS_DIR/writer.paused
SHAPEF=$CHAOS_DIR/shape
WRITER_PID=
# shellcheck disable=SC2016 # expanded in the member's container
W_ROLE='. /hooks/lib.sh; if dummy_alive; then echo "role $(cat "$RUN_DIR/role") $(cat "$RUN_DIR/peers" 2>/dev/null)"; else echo "role down"; fi'
# shellcheck disable=SC2016
W_WRITE='. /hooks/lib.sh; if dummy_alive && [ "$(cat "$RUN_DIR/role")" = primary ]; then echo "w $(/hooks/write 1)"; else echo no; fi'
# shellcheck disable=SC2016
W_SYNC='. /hooks/lib.sh; if dummy_alive && [ "$(cat "$RUN_DIR/role")" = secondary ] && grep -qwF "$1" "$RUN_DIR/peers"; then echo "s $(/hooks/set-sequence "$2")"; else echo no; fi'
# The writer calls the node's runtime directly (world-cri, the node's CRI endpoint and the member's
# container id cached): through `world crictl` a round took 2 s on the busy machine. It leaves alone a node
# the harness froze (frozen.NODE: its runtime would not answer) or powered off.
W_CRI=${RSS_WORLD_CRI:-$RSS_BUILD_DIR/tests/sim/world/kubelet/world-cri}
declare -A W_EP=() W_ID=()
w_node() { # ORD: the member's node, when the writer may ask it
    local n
    n=$(node_of "$1")
    [ -n "$n" ] && [ ! -e "$RSS_WORLD_DIR/nodes/$n/off" ] && [ ! -e "$CHAOS_DIR/frozen.$n" ] && echo "$n"
}
# w_ids: the endpoint and container id of every member the writer may ask, found where not cached.
w_ids() {
    local o n id
    for o in 0 1 2; do
        n=$(w_node $o) || continue
        [ -n "${W_EP[$n]:-}" ] || W_EP[$n]=$("$WORLD" cri "$n" 2>/dev/null) || continue
        [ -n "${W_ID[$o]:-}" ] && continue
        id=$("$W_CRI" --endpoint "${W_EP[$n]}" find "$NS" "$(member $R $o)" dummy 2>/dev/null) && W_ID[$o]=$id
    done
}
# w_exec ORD SCRIPT [ARG...]: SCRIPT in member ORD's container (busybox sh; the scripts always exit 0); its
# output. 3: not asked (node off or frozen, no container known); any other failure: asked, and the runtime
# did not answer (the caller drops the cached id: w_forget).
w_exec() {
    local o=$1 n r
    shift
    n=$(w_node "$o") && [ -n "${W_EP[$n]:-}" ] && [ -n "${W_ID[$o]:-}" ] || return 3
    "$W_CRI" --endpoint "${W_EP[$n]}" exec --timeout 5 "${W_ID[$o]}" sh -c "$@" 2>/dev/null || { r=$?; [ $r != 3 ] || r=1; return $r; }
}
w_forget() { W_ID[$1]=; }
# w_primary: the one member whose dummyd runs as primary (none when none or two do).
w_primary() {
    local x r n=0 p=
    for x in 0 1 2; do (w_exec $x "$W_ROLE" >"$CHAOS_DIR/w.role.$x" || echo "role ?" >"$CHAOS_DIR/w.role.$x") & done
    wait
    for x in 0 1 2; do
        read -r _ r _ <"$CHAOS_DIR/w.role.$x" || r=
        [ "$r" = "?" ] && w_forget $x
        [ "$r" = primary ] && { p=$x; n=$((n + 1)); }
    done
    [ $n = 1 ] && echo "$p"
}
writer_round() {
    local p=$WP out s x rc r r1 r2 t acks=0
    w_ids
    if [ -z "$p" ]; then
        w_primary >"$CHAOS_DIR/w.primary" || return 1
        p=$(cat "$CHAOS_DIR/w.primary")
        WP=$p
    fi
    rc=0
    out=$(w_exec "$p" "$W_WRITE") || rc=$?
    if [ $rc != 0 ]; then
        [ $rc = 3 ] || ev "wamb-w $(member $R "$p")"
        w_forget "$p"
        WP=
        return 1
    fi
    case $out in "w "[0-9]*) s=${out#w } ;; *) WP=; return 1 ;; esac
    ev "w $(member $R "$p") $s"
    for x in 0 1 2; do
        [ "$x" = "$p" ] && continue
        (
            rc=0
            out=$(w_exec $x "$W_SYNC" sh "$(member $R "$p").$SVC" "$s") || rc=$?
            echo "$(now) $rc $out" >"$CHAOS_DIR/w.sync.$x"
        ) &
    done
    wait
    for x in 0 1 2; do
        [ "$x" = "$p" ] && continue
        read -r t rc r1 r2 <"$CHAOS_DIR/w.sync.$x" || continue
        if [ "$rc" = 0 ] && [ "$r1" = s ] && [ "$r2" = "$s" ]; then
            ev_at "$t" "sync $(member $R $x) $s from=$(member $R "$p")"
            acks=$((acks + 1))
        elif { [ "$rc" != 0 ] && [ "$rc" != 3 ]; } || { [ "$rc" = 0 ] && [ -z "${r1:-}" ]; }; then
            # Asked, and no answer: the sync may still happen (a frozen node resumes it at its thaw).
            ev_at "$t" "wamb-s $(member $R $x) $s from=$(member $R "$p")"
            w_forget $x
        fi
    done
    [ $acks = 0 ] || ev "ack $(member $R "$p") $s"
}
writer_loop() {
    set +e
    WP=
    while :; do
        if [ -e "$WPAUSE" ]; then
            touch "$WPAUSED"
            WP=
            sleep 0.2
            continue
        fi
        if [ "$(cat "$SHAPEF" 2>/dev/null)" = 1 ]; then
            writer_round || sleep 0.5
            sleep 0.5
        else
            sleep 1
        fi
    done
}
writer_start() {
    touch "$WPAUSE"
    writer_loop &
    WRITER_PID=$!
    E2E_BG_PIDS+=("$WRITER_PID")
}
# writer_pause: returns once the writer finished its round and waits (so the volumes hold still).
writer_pause() {
    [ -n "$WRITER_PID" ] || return 0
    rm -f "$WPAUSED"
    touch "$WPAUSE"
    local i
    for ((i = 0; i < 300; i++)); do [ -e "$WPAUSED" ] && return 0; sleep 0.1; done
    fail "the writer did not pause within 30 s"
}
writer_resume() { rm -f "$WPAUSE"; }

# all_on: a node that overlapping faults left off (a power-off racing its own power-on) goes on again.
all_on() {
    local n
    for n in $("$WORLD" nodes); do
        local pid=""
        read -r pid _ <"$RSS_WORLD_DIR/nodes/$n/kubelet.pid" 2>/dev/null || true
        if [ -e "$RSS_WORLD_DIR/nodes/$n/off" ] || [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then
            ev "left-off $n"
            power_on "$n"
        fi
    done
}
# later SECONDS CMD...: CMD in the background after SECONDS; the cycle's fault window waits for it.
later() {
    local d=$1
    shift
    (sleep "$d"; "$@") &
    BGP+=($!)
    E2E_BG_PIDS+=($!)
}
wait_later() {
    local p
    for p in "${BGP[@]}"; do wait "$p" || true; done
    BGP=()
    E2E_BG_PIDS=()
    [ -z "$WRITER_PID" ] || E2E_BG_PIDS+=("$WRITER_PID")
}

# dummyd_pids: "ordinal container:pid" of each member's application, read in its container (ground truth).
dummyd_pids() {
    local i n id
    for i in 0 1 2; do
        n=$(node_of $i)
        id=$("$WORLD" crictl "$n" find "$NS" "$(member $R $i)" dummy 2>/dev/null) || { echo "$i none"; continue; }
        echo "$i ${id:0:12}:$("$WORLD" crictl "$n" exec "$id" cat /run/dummy/pid 2>/dev/null || echo none)"
    done | tr '\n' ' '
}
# probe: runs the application's own status hook in every member's container (it logs its line in
# hooks.log, which the oracle reads); true when all three answer 8 (running as primary), or with
# SHAPE 1 (spec.primaries 1) when one answers 8 and the two others 0 (running as secondaries).
# FAILOVER: spec.failover under SHAPE 1 (PromoteStandby, with synchronousStandbys 1, or Recover).
SHAPE=3
FAILOVER=Recover
shape_tag() { if [ "$SHAPE" != 1 ]; then echo 3p; elif [ "$FAILOVER" = PromoteStandby ]; then echo promote; else echo 1p; fi; }
probe() {
    local i n id rc ok=0 n8=0 n0=0 p=
    refresh_map 2>/dev/null || return 1
    for i in 0 1 2; do
        n=$(node_of $i)
        id=$("$WORLD" crictl "$n" find "$NS" "$(member $R $i)" dummy 2>/dev/null) || return 1
        rc=0
        "$WORLD" crictl "$n" exec --timeout 8 "$id" env POD_NAME="$(member $R $i)" /hooks/status >/dev/null 2>&1 || rc=$?
        case $rc in 8) n8=$((n8 + 1)); [ -n "$p" ] || p=$i ;; 0) n0=$((n0 + 1)) ;; *) ok=1 ;; esac
    done
    [ $ok = 0 ] || return 1
    PRIMARY_ORD=$p
    if [ "$SHAPE" = 1 ]; then [ $n8 = 1 ] && [ $n0 = 2 ]; else [ $n8 = 3 ]; fi
}
# running_hint: rssd's status says Running in the current shape (a cheap hint before the probe).
running_hint() {
    rss_json $R 2>/dev/null | jq -e --argjson p "$SHAPE" '.status.phase == "Running"
        and ((.status.members.ready // []) | length) == 3 and ((.status.members.primary // []) | length) == $p' >/dev/null
}
# release_holds: under minimumMembers another fault (a leader's node off, a node cycled) can leave out a
# member other than the late one, with newer data than the seed: rule 14 holds it (NewerThanSeed) and it
# never runs again until the admin decides. The harness decides as an admin would, once per member and
# cycle (`rss.clusterlabs.org/release-hold`), and logs it: the oracle then expects it to join.
release_holds() {
    local p
    for p in $(rss_json $R 2>/dev/null | jq -r '.status.memberStatus[]? | select(.leftOut.held == true) | .name'); do
        [[ " ${RELEASED:-} " == *" $p "* ]] && continue
        k annotate rss $R -n "$NS" --overwrite "rss.clusterlabs.org/release-hold=$p" >/dev/null 2>&1 || continue
        RELEASED="${RELEASED:-} $p"
        ev "release $p"
    done
}
# await_running: every member running (rssd's status first, as a cheap hint, then the probe); records
# probe-ok or probe-fail; false after BOUND s.
await_running() {
    local end=$(($(date +%s) + BOUND)) last=0
    RELEASED=""
    while [ "$(date +%s)" -lt $end ]; do
        [ "${MINMEM:-0}" -gt 0 ] && release_holds
        if running_hint || [ $(($(date +%s) - last)) -ge 10 ]; then
            last=$(date +%s)
            if probe; then
                ev "probe-ok"
                return 0
            fi
        fi
        sleep 0.5
    done
    ev "probe-fail after ${BOUND}s"
    return 1
}
# record_truth: the data on every volume (ground truth for the oracle: sequence = lines of writes).
record_truth() {
    local i f out=""
    for i in 0 1 2; do
        f=$(claim_dir $R $i)/writes
        if [ -e "$f" ]; then out+=" $(member $R $i)=$(wc -l <"$f")"; else out+=" $(member $R $i)=none"; fi
    done
    ev "truth$out"
}
# lease_log: the API server's log of Lease writes (kubesim /_sim/leases-log; on the real cluster its audit
# log, k8s/audit.log), rssd-leader's epoch changes as "wall-time leaseTransitions holder", written to
# leases.tsv (kubesim's CLOCK_MONOTONIC mapped to UTC; the audit log's stageTimestamp is UTC already).
lease_log() {
    if [ "$(world_flavour)" = real ]; then
        # Only the writes the server committed (2xx): a refused one (409 on a stale resourceVersion) moved
        # no epoch. The audit log is written in completion order; the oracle wants time order.
        jq -r 'select(.stage == "ResponseComplete" and .objectRef.resource == "leases"
                and .objectRef.name == "rssd-leader" and .responseStatus.code >= 200 and .responseStatus.code < 300
                and .responseObject.spec != null)
            | "\(.stageTimestamp) \(.responseObject.spec.leaseTransitions // 0) \(.responseObject.spec.holderIdentity // "-")"' \
            "$RSS_WORLD_DIR/k8s/audit.log" 2>/dev/null | sort >"$CHAOS_DIR/leases.tsv.new" &&
            mv "$CHAOS_DIR/leases.tsv.new" "$CHAOS_DIR/leases.tsv" || true
        return 0
    fi
    local ks=$RSS_WORLD_DIR/kubesim off
    off=$(python3 -c 'import time; print("%.6f" % (time.time() - time.monotonic()))')
    curl -sS --max-time 10 --cacert "$ks/ca.crt" -H "Authorization: Bearer $(cat "$ks/token")" \
        "https://127.0.0.1:$(cat "$ks/port")/_sim/leases-log" 2>/dev/null |
        jq -r --argjson off "$off" '.[] | select(.name == "rssd-leader") | ((.monoNs / 1e9) + $off) as $t | ($t | floor) as $s
            | "\($s | strftime("%Y-%m-%dT%H:%M:%S")).\((($t - $s) * 1e6 | floor | tostring) as $u | ("000000" + $u)[-6:])Z \(.leaseTransitions // 0) \(.holderIdentity // "-")"' \
        >"$CHAOS_DIR/leases.tsv.new" 2>/dev/null && mv "$CHAOS_DIR/leases.tsv.new" "$CHAOS_DIR/leases.tsv" || true
}

# plan_of CYCLE: the cycle's plan (plan.awk), in the shape the earlier cycles left.
plan_of() { awk -v seed="$SEED" -v cycle="$1" -v fence="$F" -v dead="$DEAD" -v shape="$(shape_tag)" -f "$chaos_here/plan.awk"; }
# set_shape PRIMARIES FAILOVER: the shape a lights-out's plan draws (FAILOVER empty with 3 primaries).
set_shape() { SHAPE=$1; FAILOVER=${2:-Recover}; [ "$SHAPE" = 1 ] || FAILOVER=Recover; }
# data_base: what a lights-out's data build on: the highest sequence rssd started a primary from (rule 3's
# floor: a recovery without a member never seeds below it) and the most writes on any volume, so that the
# history only grows, as a real application's does.
data_base() {
    local b i n m=0
    b=$(history_floor $R 2>/dev/null) || b=0
    for i in 0 1 2; do
        n=0
        [ ! -e "$(claim_dir $R $i)/writes" ] || n=$(wc -l <"$(claim_dir $R $i)/writes")
        [ "$n" -gt "$m" ] && m=$n
    done
    echo $((b > m ? b : m))
}

# ---- one cycle
run_cycle() {
    local c=$1 plan KIND FAILOVER_DRAW OFF SEQS DELAYS NEWEST_LAST EXTRAS PLAN PRIMARIES MINMEM LATE LATEDELAY JOINNEWER x t d base
    plan=$(plan_of "$c" | sed 's/^FAILOVER=/FAILOVER_DRAW=/')
    eval "$plan"
    say "-- cycle $c/$((FIRST + CYCLES - 1)) (seed $SEED): $PLAN"
    refresh_map || true
    writer_pause
    ev "cycle $c seed=$SEED kind=$KIND plan=${PLAN// /_}"
    record_truth
    # Under spec.primaries 1 the writer runs a few seconds before the faults: acknowledged writes up to them.
    [ "$KIND" = lightsout ] || [ "$SHAPE" != 1 ] || { writer_resume; sleep 3; }
    if [ "$KIND" = api_outage ]; then
        sleep 12 # the agents re-list each other's addresses every 10 s (peers_current in tests/e2e/safety/lib.sh)
        ev "pids $(dummyd_pids)"
    fi
    local seqs delays
    IFS=, read -r -a seqs <<<"$SEQS"
    IFS=, read -r -a delays <<<"$DELAYS"
    IFS=, read -r -a extras <<<"$EXTRAS"
    ev "fault-start"
    if [ "$KIND" = lightsout ]; then
        local n i
        base=$(data_base)
        for n in $("$WORLD" nodes); do power_off "$n"; done
        # The drawn sequences on top of the history so far (a new history: the oracle starts over).
        for i in 0 1 2; do set_sequence $R $i $((seqs[i] + base)); done
        ev "history-reset base=$base"
        record_truth
        # Every member is off: the shape and the recovery policy change without a rollout or a stop.
        if [ -n "$PRIMARIES" ]; then
            local s0=$SHAPE f0=$FAILOVER patch
            set_shape "$PRIMARIES" "$FAILOVER_DRAW"
            if [ "$SHAPE" != "$s0" ] || [ "$FAILOVER" != "$f0" ]; then
                patch="{\"spec\":{\"primaries\":$SHAPE,\"failover\":null,\"synchronousStandbys\":null}}"
                [ "$FAILOVER" = PromoteStandby ] &&
                    patch="{\"spec\":{\"primaries\":1,\"failover\":\"PromoteStandby\",\"synchronousStandbys\":1}}"
                k patch rss $R -n "$NS" --type merge -p "$patch" >/dev/null || fail "patch the shape ($patch)"
                echo "$SHAPE" >"$SHAPEF"
                ev "shape primaries=$SHAPE failover=$FAILOVER"
            fi
        fi
        if [ "$MINMEM" -gt 0 ]; then
            local join=null
            [ "$JOINNEWER" = 1 ] && join='"Join"'
            k patch rss $R -n "$NS" --type merge \
                -p "{\"spec\":{\"recovery\":{\"minimumMembers\":$MINMEM,\"onNewerLateMember\":$join}}}" >/dev/null ||
                fail "patch minimumMembers"
            ev "minmem $MINMEM late=$(member $R "$LATE") join=$JOINNEWER"
        fi
        if [ "$NEWEST_LAST" = 1 ]; then # the newest copy's node comes last
            local max=0 newest=0 dmax=0
            for i in 0 1 2; do [ "${seqs[$i]}" -gt $max ] && { max=${seqs[$i]}; newest=$i; }; done
            for i in 0 1 2; do [ "${delays[$i]}" -gt $dmax ] && dmax=${delays[$i]}; done
            n=$(node_of $newest)
            delays[${n#node-} - 1]=$dmax
        fi
        if [ "$MINMEM" -gt 0 ]; then # the late member's node comes back past the dead window
            n=$(node_of "$LATE")
            delays[${n#node-} - 1]=$LATEDELAY
        fi
        sleep "$OFF"
        for i in 1 2 3; do later "${delays[$((i - 1))]}" power_on "node-$i"; done
    fi
    writer_resume
    for x in "${extras[@]}"; do
        [ -n "$x" ] || continue
        local a b cc e
        IFS=: read -r t d a b cc e _ <<<"$x"
        case $t in
        leaderoff) later "$d" node_cycle leader "$a" ;;
        nodeoff) later "$d" node_cycle "$a" "$b" ;;
        rssd) later "$d" rssd_restart_on "$a" "$b" ;;
        api) later "$d" api_error "$x" ;;
        freeze) later "$d" freeze "$a" "$([ "$KIND" = api_outage ] && echo 1 || echo 0)" ;;
        partition) later "$d" partition_for "node-$a" "$b" ;;
        crash) later "$d" crash "$a" ;;
        hang) later "$d" rssd_hang "$a" "$b" ;;
        nfreeze) later "$d" node_freeze "$a" "$b" "$cc" ;;
        drain) later "$d" drain_primary "$a" "$b" ;;
        lfail) later "$d" leader_fail "$a" "$b" "$cc" "$e" ;;
        knob)
            set_knob "$d" "$a" "$b"
            later "$cc" clear_knob "$d" "$a" "$b" ;;
        esac
    done
    if [ "$KIND" = api_outage ]; then
        wait_later
        sleep 3
        ev "pids $(dummyd_pids)"
    fi
    wait_later
    sim clear || true
    all_on
    ev "fault-end"
    local t0
    t0=$(now_ms)
    if await_running; then
        say "   every member running $((($(now_ms) - t0) / 1000)) s after the faults ended"
        LIVENESS_FAILS=0
    else
        say "   NOT every member running ${BOUND} s after the faults ended"
        diagnostics 2>&1 | tail -n 40 | sed 's/^/   /' || true
        LIVENESS_FAILS=$((LIVENESS_FAILS + 1))
    fi
    if [ "$MINMEM" -gt 0 ]; then # back to the default: wait for every member
        k patch rss $R -n "$NS" --type merge \
            -p '{"spec":{"recovery":{"minimumMembers":null,"onNewerLateMember":null}}}' >/dev/null || fail "patch minimumMembers back"
        ev "minmem 0"
    fi
    # The cycle's end: the volumes as they are, and the primary holds every acknowledged write (P11).
    writer_pause
    record_truth
    ev "check-acked"
    ev "cycle-end $c"
    lease_log
}

say "chaos: seed $SEED, cycles $FIRST..$((FIRST + CYCLES - 1)), fence timeout ${F}s, dead window ${DEAD}s, bound ${BOUND}s, log $CHAOS_DIR, awk $(readlink -f "$(command -v awk)")"
T_START=$(date +%s)
e2e_up 3
# The shape the cycles before FIRST left (the last lights-out's draw), so that a replay of one cycle
# runs it in the shape the whole run had there (and draws its plan as the whole run did).
for ((c = 1; c < FIRST; c++)); do
    p=$(plan_of "$c")
    pr=$(sed -n 's/^PRIMARIES=//p' <<<"$p")
    [ -z "$pr" ] || set_shape "$pr" "$(sed -n 's/^FAILOVER=//p' <<<"$p")"
done
# apps/dummy with short hook timeouts, so a hanging hook costs seconds.
shape_lines="  primaries: $SHAPE"
[ "$FAILOVER" = PromoteStandby ] && shape_lines+="\n  failover: PromoteStandby\n  synchronousStandbys: 1"
sed -e 's/timeout: 30s/timeout: '"$STOP_S"'s/' -e 's/timeout: 10s/timeout: 5s/' \
    -e "s/^  replicas: 3\$/  replicas: 3\n$shape_lines/" "$repo/apps/dummy/rss.yaml" |
    k apply -n "$NS" -f - >/dev/null || fail "apply apps/dummy"
wait_until 120 "$R Running" running_hint
echo "$SHAPE" >"$SHAPEF"
ev "dead-window $DEAD"
ev "shape primaries=$SHAPE failover=$FAILOVER"
refresh_map || fail "no members"
await_running || fail "the members never ran before the first cycle"
SVC=$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.spec.serviceName}') && [ -n "$SVC" ] || fail "no serviceName on $(sts_name $R)"
writer_start
say "world up in $(($(date +%s) - T_START)) s"
LIVENESS_FAILS=0
c=$FIRST
while [ "$c" -lt $((FIRST + CYCLES)) ]; do
    run_cycle "$c"
    if [ "$LIVENESS_FAILS" -ge 2 ]; then
        say "two cycles in a row did not recover: stopping the run"
        break
    fi
    c=$((c + 1))
done
say "chaos: $((c - FIRST + (c < FIRST + CYCLES ? 1 : 0))) cycles in $(($(date +%s) - T_START)) s"
writer_pause
kill "$WRITER_PID" 2>/dev/null || true
wait "$WRITER_PID" 2>/dev/null || true
claims=()
for i in 0 1 2; do claims+=("$(claim_dir $R $i)"); done
rc=0
bash "$chaos_here/oracle" --events "$EVENTS" --leases "$CHAOS_DIR/leases.tsv" --seed "$SEED" --fence "$F" \
    --thaw-bound "$THAW_BOUND" "${claims[@]}" || rc=$?
if [ $rc != 0 ] || [ "$CHAOS_KEEP" = 1 ]; then
    cp -r "${claims[@]}" "$CHAOS_DIR/" 2>/dev/null || true
    say "chaos: logs kept in $CHAOS_DIR"
else
    rm -rf "$CHAOS_DIR"
fi
exit $rc
