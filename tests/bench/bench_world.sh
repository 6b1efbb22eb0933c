#!/usr/bin/env bash
# bench_world.sh -- times the test world: a 3-node world and 9 pods up, a full lights-out cycle without
# rssd (until all 9 containers run again), and down. Prints figures; asserts nothing about time.
#
# Usage: tests/bench/bench_world.sh [ROUNDS]   (default 1; RSS_BUILD_DIR as for tests/sim/world/world)
set -euo pipefail
rounds=${1:-1}
# The world alone: no rssd image import (it adds about 7 s to `up` with 3 nodes).
export RSS_WORLD_RSSD=${RSS_WORLD_RSSD:-host-process}
source "$(cd "$(dirname "$0")/../sim/world/tests" && pwd)/lib.sh"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
for ((r = 1; r <= rounds; r++)); do
    t=$(now)
    "$WORLD" up --nodes 3 >/dev/null 2>&1 || fail "world up"
    up=$(since "$t")
    t=$(now)
    create_sts bench 9
    wait_until 120 "9 pods Ready" ready_is bench 9
    pods=$(since "$t")
    ids=$RSS_WORLD_DIR/.bench-ids
    container_ids bench >"$ids"
    t=$(now)
    "$WORLD" lights-out >/dev/null 2>&1 || fail "lights-out" # all off, all on: returns once kubelets registered
    lo=$(since "$t")
    wait_until 120 "9 new containers Ready" all_replaced bench 9 "$ids"
    cycle=$(since "$t")
    t=$(now)
    "$WORLD" down >/dev/null 2>&1
    down=$(since "$t")
    echo "round $r: world up (3 nodes Ready) ${up}s; 9 pods Ready ${pods}s; lights-out until all 9" \
        "containers run again ${cycle}s (of which power-off + kubelets back ${lo}s); down ${down}s"
done
