#!/usr/bin/env bash
# bench_recovery.sh -- lights-out recovery of 3, 5 and 9 dummy members with rssd: time, overhead, memory, API requests.
#
# Usage: tests/bench/bench_recovery.sh [SIZES...]   (default: 3 5 9; as root; RSS_BUILD_DIR = the build)
# Prints figures, asserts nothing about time (not run by ctest). One 3-node world; an RSS `b` of N
# members without anti-affinity (so 9 fit on 3 nodes); the dummy hooks return at once (no data to sync).
#
# Figures per size, from the hooks.log lines (each written when its hook returns) and the host clock:
#   total        last member's sequence report (the leader can decide from there) -> last join done
#   hooks        the hooks' own run time on the critical path: seed + its status check, then per join
#                primary (+ its status check, but for the last join), as rssd measured each ExecSync (its
#                log's "hook X exited ... after M ms")
#   overhead     total - hooks: election, watches, leader planning, member record round trips
#   lease_wait   last report -> new leader (Lease acquireTime), 0 when it led before: without a proof
#                that the dead leader is gone every candidate waits one lease duration (3 s in this world)
#                from its first look at the Lease; the reboot shortcuts (docs/election.md) are that proof
#                after a power cut, and "takeover:" below names the one that fired
#   overhead_leading  overhead once a leader leads: (last join - max(last report, acquire)) - hooks
#   wall         power-on command -> kubectl shows Running (includes the world's container restarts)
#   api          kubesim GET /_sim/stats total during the recovery, and the same minus the world's idle
#                rate (kubelets, controllers, heartbeats) over as long a window; on the real world
#                (RSS_WORLD_FLAVOUR=real) rssd's requests only, from the apiserver's audit log
#   rss          VmRSS/RssAnon of each node's rssd process after the recovery: VmRSS counts the pages
#                of the shared libraries (gRPC, abseil, OpenSSL, libcurl, GnuTLS) it maps; RssAnon is
#                rssd's own memory
set -euo pipefail
source "$(dirname "$0")/../e2e/lib.sh"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(3 5 9)
B=b
ms_of() { date -u -d "$1" +%s%3N; }
# API requests so far: kubesim counts every client's; on the real world the apiserver's audit log counts
# rssd's (its service accounts', one line per completed request; tests/realk8s/world-real).
stats_total() {
    if [ "$(world_flavour)" = real ]; then
        grep -c '"username":"system:serviceaccount:rssd-system:' "$RSS_WORLD_DIR/k8s/audit.log" || true
    else
        k get --raw /_sim/stats | jq .total
    fi
}
say "bench_recovery: ${RSS_WORLD_FLAVOUR:-kubesim} world of 3 nodes, build $RSS_BUILD_DIR"
e2e_up 3
# The world's idle API request rate (no RSS yet): kubelets, controllers, rssd heartbeats.
s0=$(stats_total)
sleep 5
idle_rate=$((($(stats_total) - s0) * 1000 / 5)) # requests per 1000 s

printf '\n%-4s %-9s %-9s %-9s %-11s %-15s %-8s %-6s %-15s %s\n' N total_ms hooks_ms overhead lease_wait overhead_leading wall_ms joins "api(raw/-idle)" "rssd VmRSS/RssAnon kB"
results=()
for n in "${sizes[@]}"; do
    rss_manifest $B "$n" false | k apply -n "$NS" -f - >/dev/null || fail "create $B with $n"
    wait_until 300 "$B Running with $n" rss_running $B "$n"
    power_off_all
    wait_heartbeats_expired # a real power cut: the agents' heartbeats run out before anything returns
    for ((i = 0; i < n; i++)); do set_sequence $B $i $((100 + (i * 7) % n)); done
    mark=$(now)
    a0=$(stats_total)
    t0=$(now_ms)
    power_on_all
    recovered() { hook_lines "$mark" $B seed | grep >/dev/null . && [ "$(count_lines "$(hook_lines "$mark" $B primary secondary)")" -ge $((n - 1)) ]; }
    wait_until 300 "a seed and $((n - 1)) joins in the hooks logs" recovered
    wait_until 120 "$B Running with $n after the lights-out" rss_running $B "$n"
    wall=$(($(now_ms) - t0))
    a1=$(stats_total)
    win_s=$(((wall + 999) / 1000))
    api=$((a1 - a0))
    api_adj=$((api - idle_rate * win_s / 1000))
    seqs=$(hook_lines "$mark" $B sequence)
    last_report=$(awk '{print $2, $1}' <<<"$seqs" | sort -s -u -k1,1 | awk '{print $2}' | sort | tail -1)
    seedl=$(hook_lines "$mark" $B seed | sed -n 1p)
    joins=$(hook_lines "$mark" $B primary secondary)
    last_join=$(tail -1 <<<"$joins" | awk '{print $1}')
    [ -n "$seedl" ] && [ -n "$last_join" ] || fail "no seed or join in the hooks logs"
    total=$(($(ms_of "$last_join") - $(ms_of "$last_report")))
    njoins=$(count_lines "$joins")
    # The hooks' own run time on the critical path, as rssd measured each ExecSync ("hook X exited N
    # after M ms" in its logs): every seed/primary/secondary, plus the status that checks its result.
    hooks=$(rssd_logs | awk -v m="$mark" '$1 > m' | sort -s -k1,1 | awk '
        { pod = ""; for (i = 1; i <= NF; i++) if ($i == "pod") { pod = $(i + 1); break } }
        /because checking the result of the action/ { pend[pod] = 1 }
        / hook (seed|primary|secondary) exited / { for (i = 1; i <= NF; i++) if ($i == "after") sum += $(i + 1) }
        / hook status exited / && pend[pod] { for (i = 1; i <= NF; i++) if ($i == "after") { sum += $(i + 1); last = $(i + 1) }; pend[pod] = 0 }
        END { print sum - last }')   # the status check after the last join ends past the window
    acq=$(lease_json | jq -r '.spec.acquireTime // ""')
    start=$(ms_of "$last_report")
    [ -n "$acq" ] && [ "$(ms_of "$acq")" -gt "$start" ] && start=$(ms_of "$acq")
    lease_wait=$((start - $(ms_of "$last_report")))
    after=$(($(ms_of "$last_join") - start - hooks))
    mem=""
    for nd in $("$WORLD" nodes); do
        p=$(rssd_pid "$nd") || continue
        mem="$mem $nd=$(awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} END {print r "/" a}' "/proc/$p/status")"
    done
    printf '%-4s %-9s %-9s %-9s %-11s %-15s %-8s %-6s %-15s %s\n' "$n" "$total" "$hooks" "$((total - hooks))" "$lease_wait" "$after" "$wall" "$njoins" "$api/$api_adj" "$mem"
    # How the new leader got the dead leader's Lease (election.c logs each shortcut): "waited" when by none.
    how=$(rssd_logs | awk -v m="$mark" '$1 > m' | sed -n 's/.*election: the Lease holder [^ ]* \(ran on this node before it rebooted\|acquired on node [^ ]* in boot [^ ]*, which now reports boot [^:]*\).*/\1/p' | sed -n 1p)
    results+=("N=$n takeover: ${how:-waited out the lease (no reboot shortcut fired)}")
    results+=("N=$n seed=$(awk '{print $2}' <<<"$seedl") (sequence $(sed -n 's/.* out=\([^ ]*\).*/\1/p' <<<"$(grep " $(awk '{print $2}' <<<"$seedl") " <<<"$seqs" | sed -n 1p)"))")
    k delete rss $B -n "$NS" --wait=false >/dev/null
    podsgone() { [ "$(members_json $B | jq '.items | length')" = 0 ]; }
    wait_until 120 "pods of $B gone" podsgone
done
echo
printf '%s\n' "${results[@]}"
echo "idle API rate of the world: $((idle_rate / 1000)).$(printf '%03d' $((idle_rate % 1000))) requests/s"
echo "goals: overhead < 300 ms for 3 members, < 1000 ms for 9; rssd < 10 MB (10240 kB) resident"
