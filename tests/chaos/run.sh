#!/usr/bin/env bash
# run.sh -- the chaos harness: one 3-node world with rssd and apps/dummy, recovery cycles under random faults from a printed, replayable seed.
#
# Usage: run.sh [--cycles N] [--seed S] [--first C] [--keep]
#   --cycles N  cycles to run (default 8); --seed S the run's seed (default: random, printed)
#   --first C   start at cycle C (plans depend on seed and cycle only: `--seed S --first C --cycles 1`
#               replays cycle C's plan alone on a fresh world; `--seed S --cycles C` replays up to it)
#   --keep      leave the world up at the end (E2E_KEEP=1)
# Each cycle prints its plan, then acts; every fault is logged with its time in $CHAOS_DIR/events.log.
# At the end tests/chaos/oracle judges the run from the ground truth only (the hooks logs and data on
# the volumes, the harness's own fault log, the API server's Lease write log) and prints the table.
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
SHAPE=3
probe() {
    local i n id rc ok=0 n8=0 n0=0
    refresh_map 2>/dev/null || return 1
    for i in 0 1 2; do
        n=$(node_of $i)
        id=$("$WORLD" crictl "$n" find "$NS" "$(member $R $i)" dummy 2>/dev/null) || return 1
        rc=0
        "$WORLD" crictl "$n" exec --timeout 8 "$id" env POD_NAME="$(member $R $i)" /hooks/status >/dev/null 2>&1 || rc=$?
        case $rc in 8) n8=$((n8 + 1)) ;; 0) n0=$((n0 + 1)) ;; *) ok=1 ;; esac
    done
    [ $ok = 0 ] || return 1
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

# ---- one cycle
run_cycle() {
    local c=$1 plan KIND OFF SEQS DELAYS NEWEST_LAST EXTRAS PLAN PRIMARIES MINMEM LATE LATEDELAY JOINNEWER x t d
    plan=$(awk -v seed="$SEED" -v cycle="$c" -v fence="$F" -f "$chaos_here/plan.awk")
    eval "$plan"
    say "-- cycle $c/$((FIRST + CYCLES - 1)) (seed $SEED): $PLAN"
    refresh_map || true
    ev "cycle $c seed=$SEED kind=$KIND plan=${PLAN// /_}"
    record_truth
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
        for n in $("$WORLD" nodes); do power_off "$n"; done
        for i in 0 1 2; do set_sequence $R $i "${seqs[$i]}"; done
        record_truth
        # Every member is off: the shape and the recovery policy change without a rollout or a stop.
        if [ -n "$PRIMARIES" ] && [ "$PRIMARIES" != "$SHAPE" ]; then
            k patch rss $R -n "$NS" --type merge -p "{\"spec\":{\"primaries\":$PRIMARIES}}" >/dev/null || fail "patch primaries"
            SHAPE=$PRIMARIES
            ev "shape primaries=$SHAPE"
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
    for x in "${extras[@]}"; do
        [ -n "$x" ] || continue
        local a b cc
        IFS=: read -r t d a b cc _ <<<"$x"
        case $t in
        leaderoff) later "$d" node_cycle leader "$a" ;;
        nodeoff) later "$d" node_cycle "$a" "$b" ;;
        rssd) later "$d" rssd_restart_on "$a" "$b" ;;
        api) later "$d" api_error "$x" ;;
        freeze) later "$d" freeze "$a" "$([ "$KIND" = api_outage ] && echo 1 || echo 0)" ;;
        partition) later "$d" partition_for "node-$a" "$b" ;;
        crash) later "$d" crash "$a" ;;
        hang) later "$d" rssd_hang "$a" "$b" ;;
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
    ev "cycle-end $c"
    lease_log
}


say "chaos: seed $SEED, cycles $FIRST..$((FIRST + CYCLES - 1)), fence timeout ${F}s, bound ${BOUND}s, log $CHAOS_DIR, awk $(readlink -f "$(command -v awk)")"
T_START=$(date +%s)
e2e_up 3
# The shape the cycles before FIRST left (the last lights-out's draw), so that a replay of one cycle
# runs it in the shape the whole run had there.
for ((c = 1; c < FIRST; c++)); do
    p=$(awk -v seed="$SEED" -v cycle="$c" -v fence="$F" -f "$chaos_here/plan.awk" | sed -n 's/^PRIMARIES=//p')
    [ -z "$p" ] || SHAPE=$p
done
# apps/dummy with short hook timeouts, so a hanging hook costs seconds.
sed -e 's/timeout: 30s/timeout: 8s/' -e 's/timeout: 10s/timeout: 5s/' \
    -e "s/^  replicas: 3\$/  replicas: 3\n  primaries: $SHAPE/" "$repo/apps/dummy/rss.yaml" |
    k apply -n "$NS" -f - >/dev/null || fail "apply apps/dummy"
wait_until 120 "$R Running" running_hint
ev "shape primaries=$SHAPE"
refresh_map || fail "no members"
await_running || fail "the members never ran before the first cycle"
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
claims=()
for i in 0 1 2; do claims+=("$(claim_dir $R $i)"); done
rc=0
bash "$chaos_here/oracle" --events "$EVENTS" --leases "$CHAOS_DIR/leases.tsv" --seed "$SEED" --fence "$F" "${claims[@]}" || rc=$?
if [ $rc != 0 ] || [ "$CHAOS_KEEP" = 1 ]; then
    cp -r "${claims[@]}" "$CHAOS_DIR/" 2>/dev/null || true
    say "chaos: logs kept in $CHAOS_DIR"
else
    rm -rf "$CHAOS_DIR"
fi
exit $rc
