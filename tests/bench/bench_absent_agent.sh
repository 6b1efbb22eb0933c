#!/usr/bin/env bash
# bench_absent_agent.sh -- rssd restarted, hung or evicted on each node in turn, both application shapes: do the members stay untouched, and for how long?
#
# Usage: tests/bench/bench_absent_agent.sh [HANG_S] [EVICT_S]   (defaults 60 and 35; RSS_BUILD_DIR = the build;
#        BENCH_SHAPES="3 1" the spec.primaries values, in that order)
# One 3-node world (tests/e2e/lib.sh), apps/dummy with spec.primaries 3 (all primaries), then 1 (a
# primary and two read-only secondaries). On each node in turn: its rssd pod deleted (a restart, as a
# DaemonSet update does), its rssd process stopped with SIGSTOP for HANG_S s (a hung or starved agent),
# and its rssd kept away for EVICT_S s (an eviction or a crash loop: the process is killed whenever the
# kubelet starts it again). Prints one line per fault: the node, what it hosted (leader, primary,
# secondary), how long the fault lasted, the stop/start hooks run on the members meanwhile and until
# every member ran again, whether every application process is the same one (the pid in its
# container), and how long rssd took to report the RSS Running again. Asserts nothing (not in ctest).
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
source "$(dirname "$0")/../e2e/lib.sh"

HANG_S=${1:-60}
EVICT_S=${2:-35}
R=dummy

shape_running() { # PRIMARIES
    rss_json $R 2>/dev/null | jq -e --argjson p "$1" '.status.phase == "Running"
        and ((.status.members.ready // []) | length) == 3 and ((.status.members.primary // []) | length) == $p' >/dev/null
}
dummyd_pids() {
    local i node id
    for i in 0 1 2; do
        node=$(member_node $R $i)
        id=$("$WORLD" crictl "$node" find "$NS" "$(member $R $i)" dummy) || return 1
        echo "$i:$("$WORLD" crictl "$node" exec "$id" cat /run/dummy/pid 2>/dev/null)"
    done | tr '\n' ' '
}
hosts() { # NODE: what it hosts
    local n=$1 what="" i p
    [ "$(leader_node 2>/dev/null)" = "$n" ] && what="leader,"
    p=$(rss_json $R | jq -r '.status.members.primary[]?')
    for i in 0 1 2; do
        [ "$(member_node $R $i)" = "$n" ] || continue
        if grep -qx "$(member $R $i)" <<<"$p"; then what+="primary"; else what+="secondary"; fi
    done
    echo "$what"
}
# keep_away NODE SECONDS: kill the node's rssd whenever it runs, for SECONDS (eviction / crash loop).
keep_away() {
    local end=$(($(date +%s) + $2)) pid
    while [ "$(date +%s)" -lt "$end" ]; do
        pid=$(rssd_pid "$1" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null || true
        sleep 0.5
    done
}

fault() { # SHAPE NODE KIND
    local shape=$1 n=$2 kind=$3 before after mark t0 t1 t2 acts host pid
    wait_until 120 "Running with $shape primaries" shape_running "$shape" >/dev/null
    sleep 3
    host=$(hosts "$n")
    before=$(dummyd_pids)
    mark=$(now)
    t0=$(now_ms)
    case $kind in
    restart) k delete pod -n "$RSSD_NS" "$(rssd_pod "$n")" --wait=false >/dev/null ;;
    hang)
        pid=$(rssd_pid "$n")
        kill -STOP "$pid"
        sleep "$HANG_S"
        kill -CONT "$pid" ;;
    evict) keep_away "$n" "$EVICT_S" ;;
    esac
    t1=$(now_ms)
    wait_until 180 "every rssd pod Ready" rssd_pods_ready 3 >/dev/null
    wait_until 180 "Running with $shape primaries" shape_running "$shape" >/dev/null
    t2=$(now_ms)
    sleep 3
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary | awk '{print $2 ":" $3}' | tr '\n' ' ')
    after=$(dummyd_pids)
    printf '%-10s %-7s %-8s %-20s fault %5.1f s  Running again %5.1f s after  hooks: %-30s  applications %s\n' \
        "primaries=$shape" "$n" "$kind" "$host" "$(bc <<<"scale=1; ($t1 - $t0) / 1000")" \
        "$(bc <<<"scale=1; ($t2 - $t1) / 1000")" "${acts:-none}" "$([ "$before" = "$after" ] && echo same || echo "RESTARTED ($before -> $after)")"
}

say "bench_absent_agent: world of 3 nodes (build $RSS_BUILD_DIR, fence timeout $E2E_FENCE, hang ${HANG_S} s, away ${EVICT_S} s)"
e2e_up 3
k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null
for shape in ${BENCH_SHAPES:-3 1}; do
    # 3 -> 1: the leader demotes the highest primaries one at a time; they rejoin as secondaries.
    k patch rss $R -n "$NS" --type merge -p "{\"spec\":{\"primaries\":$shape}}" >/dev/null
    for n in $("$WORLD" nodes); do
        for kind in restart hang evict; do
            fault "$shape" "$n" "$kind"
        done
    done
done
