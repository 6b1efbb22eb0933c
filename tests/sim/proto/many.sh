#!/usr/bin/env bash
# tests/sim/proto/many.sh -- a long simulator run, split over the machine's cores: seeds FIRST..FIRST+N-1,
# each core a contiguous slice. Not in CI (ctest runs 10,000): 1,000,000 schedules take about 100 minutes
# on 2 cores here. Prints each slice's line and the total; exits 1 on the first violation (its replay line
# is in the slice's output).
#
#   bash tests/sim/proto/many.sh [N] [FIRST]       (default: 1000000 1; RSS_BUILD_DIR: default build/)
set -euo pipefail
cd "$(dirname "$0")/../../.."
n=${1:-1000000}
first=${2:-1}
sim=${RSS_BUILD_DIR:-build}/tests/sim/proto/sim_proto
[ -x "$sim" ] || { echo "many.sh: no $sim (build first)" >&2; exit 2; }
cores=$(nproc)
slice=$(((n + cores - 1) / cores))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pids=()
for ((k = 0; k < cores; k++)); do
  from=$((first + k * slice))
  count=$((n - k * slice < slice ? n - k * slice : slice))
  [ "$count" -gt 0 ] || break
  "$sim" --schedules "$count" --first "$from" >"$tmp/$k.out" 2>&1 &
  pids+=($!)
done
rc=0
for k in "${!pids[@]}"; do
  wait "${pids[$k]}" || rc=1
  tail -n 3 "$tmp/$k.out"
done
[ $rc = 0 ] && echo "many.sh: $n schedules (seeds $first..$((first + n - 1))), 0 violations"
exit $rc
