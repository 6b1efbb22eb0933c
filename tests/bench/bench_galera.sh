#!/usr/bin/env bash
# bench_galera.sh -- lights-out recovery of a real MariaDB Galera cluster (apps/galera) with rssd, N cycles, optionally with bulk data and beside a plain StatefulSet's way: times and acknowledged rows lost.
#
# Usage: tests/bench/bench_galera.sh [--data-mb MB] [--sts] [CYCLES]   (as root; RSS_BUILD_DIR = the build)
#   CYCLES      lights-out cycles (all nodes off at once, the writer running), default 3
#   --data-mb   first load MB MiB per member (rss.big, 64 KiB rows, 32 MiB transactions), then the
#               cycles, then a wiped member rejoining by full SST of that data
#   --sts       then a staggered dark (ordinal 0's node first, rows go on without it) recovered twice
#               over: by rssd, and the way a plain StatefulSet would (ordinal 0 bootstraps first, no
#               sequence compared, the others join it in order), with what happened to the data
# Prints figures, asserts nothing about time (not run by ctest). Runs tests/e2e/galera.sh with the
# matching GALERA_SCENARIOS, then sums up per cycle: power-on -> Running, -> writable, when the last
# sequence / the seed / the last join were done, rows acknowledged and lost, and the split of the
# recovery into container start, hooks (each join's IST or SST) and rssd's own overhead.
# Needs about 3 x MB x 1.1 of free disk under /tmp (the world's volumes), removed at the end.
set -euo pipefail

usage() {
    echo "usage: bench_galera.sh [--data-mb MB] [--sts] [CYCLES]" >&2
    exit 2
}
cycles=3 data_mb=0 sts=0
while [ $# -gt 0 ]; do
    case $1 in
    --data-mb)
        [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage
        data_mb=$2
        shift 2
        ;;
    --sts)
        sts=1
        shift
        ;;
    [1-9]*)
        [[ $1 =~ ^[1-9][0-9]*$ ]] || usage
        cycles=$1
        shift
        ;;
    *) usage ;;
    esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scen="galera_create"
[ "$data_mb" = 0 ] || scen+=" galera_load"
for ((i = 0; i < cycles; i++)); do scen+=" galera_lightsout"; done
[ "$data_mb" = 0 ] || scen+=" galera_wiped"
if [ "$sts" = 1 ]; then scen+=" galera_staggered galera_sts"; else scen+=" galera_verify"; fi
out=$(mktemp /tmp/rss-bench-galera.XXXXXX)
trap 'rm -f "$out"' EXIT
echo "# bench_galera: scenarios $scen; disk before: $(df -h /tmp | awk 'NR == 2 {print $4 " free"}')"
set +e
GALERA_DATA_MB=$data_mb GALERA_SCENARIOS=$scen bash "$here/../e2e/galera.sh" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
echo
echo "# bench_galera: $cycles lights-out cycles$([ "$data_mb" = 0 ] || echo ", $data_mb MiB per member")$([ "$sts" = 0 ] || echo ", beside a plain StatefulSet") (rc $rc)"
grep -E "image .*ready in|image imported|apply -> Running|loaded .* MiB|datadir .* MiB|wiped member" "$out" | sed 's/^ *-* */  /'
printf '  %-6s %-12s %-12s %-14s %-10s %-15s %s\n' cycle running_ms writable_ms last_seq_ms seed_ms last_join_ms "acked/lost"
awk '
/ == / { c = 0 }
/ == galera_(lightsout|staggered)/ { n++; c = n; kind[c] = $NF }
c && /power-on -> Running/ { split($0, a, /Running: | ms; -> writable: | ms/); run[c] = a[2]; wr[c] = a[3] }
c && /after power-on: last sequence/ { split($0, b, /last sequence | ms, seed done | ms, last join done | ms/); ls[c] = b[2]; sd[c] = b[3]; lj[c] = b[4] }
c && /writer: / { match($0, /\([0-9]+ this cycle\), [0-9]+ lost/); s = substr($0, RSTART + 1, RLENGTH - 1); split(s, m, / this cycle\), | lost/); ack[c] = m[1] "/" m[2] }
c && /split: / { sub(/^ *- split: /, ""); split_[c] = $0 }
c && /breakdown: / { sub(/^ *- breakdown: /, ""); bd[c] = $0 }
END {
    for (i = 1; i <= n; i++) printf "  %-6s %-12s %-12s %-14s %-10s %-15s %s\n", i (kind[i] == "galera_staggered" ? "s" : ""), run[i], wr[i], ls[i], sd[i], lj[i], ack[i]
    print "  where the time went (s = the staggered dark, recovered by rssd):"
    for (i = 1; i <= n; i++) { printf "  %-6s %s\n         %s\n", i (kind[i] == "galera_staggered" ? "s" : ""), split_[i], bd[i] }
}
' "$out"
if [ "$sts" = 1 ]; then
    echo "  the same staggered dark the plain-StatefulSet way (ordinal 0 first, no sequence check):"
    grep -E "^ *- sts: " "$out" | sed 's/^ *- sts: /    /'
fi
exit "$rc"
