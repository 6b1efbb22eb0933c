#!/usr/bin/env bash
# bench_galera.sh -- lights-out recovery of a real MariaDB Galera cluster (apps/galera) with rssd, N cycles: times and acknowledged rows lost.
#
# Usage: tests/bench/bench_galera.sh [CYCLES]   (default 3; as root; RSS_BUILD_DIR = the build)
# Prints figures, asserts nothing about time (not run by ctest). Runs tests/e2e/galera.sh with the
# scenarios create, CYCLES x lightsout (all nodes off at once, the writer running), verify, then sums up
# per cycle: power-on -> Running, -> writable, when the last sequence / the seed / the last join were
# done, rows acknowledged and lost. Image build and import times are printed first.
set -euo pipefail

cycles=${1:-3}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: bench_galera.sh [CYCLES]" >&2
    exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scen="create"
for ((i = 0; i < cycles; i++)); do scen+=" lightsout"; done
scen+=" verify"
out=$(mktemp /tmp/rss-bench-galera.XXXXXX)
trap 'rm -f "$out"' EXIT
set +e
GALERA_SCENARIOS=$scen bash "$here/../e2e/galera.sh" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
echo
echo "# bench_galera: $cycles lights-out cycles (rc $rc)"
grep -E "image .*ready in|image imported|apply -> Running" "$out" | sed 's/^/  /'
printf '  %-6s %-12s %-12s %-14s %-10s %-15s %s\n' cycle running_ms writable_ms last_seq_ms seed_ms last_join_ms "acked/lost"
awk '
/ == / { c = 0 }
/ == lightsout/ { n++; c = n }
c && /power-on -> Running/ { split($0, a, /Running: | ms; -> writable: | ms/); run[c] = a[2]; wr[c] = a[3] }
c && /after power-on: last sequence/ { split($0, b, /last sequence | ms, seed done | ms, last join done | ms/); ls[c] = b[2]; sd[c] = b[3]; lj[c] = b[4] }
c && /writer: / { match($0, /\([0-9]+ this cycle\), [0-9]+ lost/); s = substr($0, RSTART + 1, RLENGTH - 1); split(s, m, / this cycle\), | lost/); ack[c] = m[1] "/" m[2] }
END { for (i = 1; i <= n; i++) printf "  %-6d %-12s %-12s %-14s %-10s %-15s %s\n", i, run[i], wr[i], ls[i], sd[i], lj[i], ack[i] }
' "$out"
exit "$rc"
