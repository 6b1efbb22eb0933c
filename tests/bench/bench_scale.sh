#!/usr/bin/env bash
# bench_scale.sh -- rssd at scale on 5 nodes: 10 RSS x 3 lights-out (and one slow RSS), one RSS of 3/9/27 (K=1, K=4): time, API requests by verb/resource, idle load, memory, CPU.
#
# Usage: tests/bench/bench_scale.sh   (as root; RSS_BUILD_DIR = the build; BENCH_IDLE_S = idle window, 30;
#        BENCH_IDLE_ONLY=1: stop after the two idle figures; BENCH_ONE_LIGHTSOUT=1: after the first 10x3 lights-out;
#        BENCH_NEW_EPOCH=1: after idle-10x3, delete the leader's rssd pod and count each agent's Lease GETs over
#        BENCH_IDLE_S (the re-reads a new epoch causes); E2E_LEASE/E2E_RENEW/E2E_RETRY/E2E_HEARTBEAT = rssd's
#        timings, the world's short ones by default: 15s/10s/2s/10s measure a real deployment's)
# Prints figures, asserts nothing about time (not run by ctest). One 5-node world, one run, in order:
#   idle-0      no RSS: each rssd's requests per minute (the leader's node = agent + leader)
#   10x3        10 RSS of 3 members (no anti-affinity), idle window, then a cluster-wide lights-out
#   10x3-again  the same lights-out again (the control for the next one)
#   10x3-slow   the same lights-out with r0's seed/primary/secondary hooks sleeping BENCH_SLOW_S (3) s
#   1x3, 1x9, 1x27 (K=1), 1x27 (K=4)   one RSS `b` scaled up, a lights-out at each size (idle at 3 and 27)
# API figures count rssd's requests only (kubesim's /_sim/stats "by", User-Agent "rssd/0.1 (<node>)"),
# from the power-on to the last RSS Running; "net" subtracts rssd's own idle rate over that window.
# They include each agent's start after the power cut (discovery, Lease GETs, watches): a fixed cost
# per node, which is why the per-member figures are read as the growth from one size to the next.
# Times (per RSS, as bench_recovery.sh): total = last sequence report -> last join returned; hooks =
# the hooks' run time on the critical path (rssd's "hook X exited ... after M ms"); overhead = total -
# hooks (with joinConcurrency K > 1 the joins overlap: hooks is their sum, overhead undefined); joined =
# power-on -> its last join returned (its status says Running shortly after; right after the power-on
# it may still say Running from before the cut, so that is not polled per RSS). Memory: VmRSS/RssAnon/VmHWM of each
# node's rssd after the recovery; CPU: utime+stime of each rssd since its start at the power-on.
set -euo pipefail
source "$(dirname "$0")/../e2e/lib.sh"

IDLE_S=${BENCH_IDLE_S:-30}
SLOW_S=${BENCH_SLOW_S:-3}
NODES=5
ms_of() { date -u -d "$1" +%s%3N; }
stats() { k get --raw /_sim/stats; }
CLK=$(getconf CLK_TCK)

# A POST without a body through kubectl is awkward; curl with the world's admin token is simpler.
sim_post() {
    local port token
    port=$(cat "$RSS_WORLD_DIR/kubesim/port" 2>/dev/null || true)
    token=$(cat "$RSS_WORLD_DIR/kubesim/token" 2>/dev/null || true)
    if [ -n "$port" ] && [ -n "$token" ]; then
        curl -sS --cacert "$RSS_WORLD_DIR/kubesim/ca.crt" -H "Authorization: Bearer $token" -X POST \
            "https://127.0.0.1:$port/_sim/$1" >/dev/null
    else
        k create --raw "/_sim/$1" -f /dev/null >/dev/null
    fi
}

# rssd_by FILE: "client verb resource count" of rssd's requests in a stats snapshot.
rssd_by() { jq -r '.by[] | select(.client | startswith("rssd/")) | "\(.client | sub("^rssd/[^ ]* \\("; "") | sub("\\)$"; "")) \(.verb) \(.resource) \(.count)"' "$1"; }
rssd_total() { rssd_by "$1" | awk '{s += $4} END {print s + 0}'; }

# idle LABEL: rssd's requests per minute per node over IDLE_S with nothing happening.
declare -A IDLE_RATE # requests per 1000 s, all rssd together (for the "net" figures)
idle() {
    local label=$1 f=$E2E_TMP/idle-$1.json ln
    sim_post stats-reset
    sleep "$IDLE_S"
    stats >"$f"
    ln=$(leader_node || true)
    IDLE_RATE[$label]=$(($(rssd_total "$f") * 1000 / IDLE_S))
    echo
    echo "idle load, $label: rssd requests per minute per node over ${IDLE_S} s (leader on $ln)"
    rssd_by "$f" | awk -v s="$IDLE_S" -v ln="$ln" '
        { per[$1] += $4; key = $2 " " $3; by[$1, key] += $4; keys[key] = 1 }
        END {
            for (n in per) { printf "  %-8s %7.1f/min%s:", n, per[n] * 60 / s, n == ln ? " (leader)" : ""
                for (k in keys) if (by[n, k]) printf " %s=%.1f", k, by[n, k] * 60 / s
                printf "\n" }
        }' | sort
    rssd_by "$f" | awk -v s="$IDLE_S" -v ln="$ln" '
        { per[$1] += $4 }
        END { a = 0; na = 0; for (n in per) if (n != ln) { a += per[n]; na++ }
              if (na) printf "  one agent: %.1f requests/min; the leader on top of its agent: %.1f requests/min\n", a / na * 60 / s, (per[ln] - a / na) * 60 / s }'
}

# fig_rss RSS MARK T0_MS: "joined total hooks overhead joins" of one RSS's recovery after MARK (see the
# header); joined = power-on (T0_MS) -> its last join returned.
fig_rss() {
    local r=$1 mark=$2 t0=$3 seqs last_report joins last_join hooks
    seqs=$(hook_lines "$mark" "$r" sequence)
    last_report=$(awk '{print $2, $1}' <<<"$seqs" | sort -s -u -k1,1 | awk '{print $2}' | sort | tail -1)
    joins=$(hook_lines "$mark" "$r" primary secondary)
    last_join=$(tail -1 <<<"$joins" | awk '{print $1}')
    if [ -z "$last_report" ] || [ -z "$last_join" ]; then
        echo "- - - - 0"
        return
    fi
    hooks=$(rssd_logs | awk -v m="$mark" '$1 > m' | sort -s -k1,1 | awk -v p="default/rss-$r-" '
        { pod = ""; for (i = 1; i <= NF; i++) if ($i == "pod") { pod = $(i + 1); break } }
        index(pod, p) != 1 { next }
        /because checking the result of the action/ { pend[pod] = 1 }
        / hook (seed|primary|secondary) exited / { for (i = 1; i <= NF; i++) if ($i == "after") sum += $(i + 1) }
        / hook status exited / && pend[pod] { for (i = 1; i <= NF; i++) if ($i == "after") { sum += $(i + 1); last = $(i + 1) }; pend[pod] = 0 }
        END { print sum - last + 0 }')
    local total=$(($(ms_of "$last_join") - $(ms_of "$last_report")))
    echo "$(($(ms_of "$last_join") - t0)) $total $hooks $((total - hooks)) $(count_lines "$joins")"
}

# running_map: "name ready replicas phase" of every RSS in one LIST.
running_map() { k get rss -n "$NS" -o json | jq -r '.items[] | "\(.metadata.name) \((.status.members.ready // []) | length) \(.spec.replicas) \(.status.phase // "")"'; }

# mem_cpu: per node "node VmRSS/RssAnon/VmHWM kB cpu_s" of rssd.
mem_cpu() {
    local nd p
    for nd in $("$WORLD" nodes); do
        p=$(rssd_pid "$nd") || continue
        local st ticks
        st=$(cat "/proc/$p/stat")
        st=${st##*) }
        ticks=$(awk '{print $12 + $13}' <<<"$st")
        printf '  %-7s %s kB  cpu %s s\n' "$nd" "$(awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^VmHWM/ {h = $2} END {print r "/" a "/" h}' "/proc/$p/status")" \
            "$(awk -v t="$ticks" -v c="$CLK" 'BEGIN {printf "%.2f", t / c}')"
    done
}

# lightsout LABEL N_MEMBERS_TOTAL RSS...: power cut of every node, sequences set, power on, wait for all
# RSS Running; prints the per-RSS table, rssd's requests by verb/resource, memory and CPU.
declare -A NET TOT WALL
lightsout() {
    local label=$1 nm=$2
    shift 2
    local rsses=("$@") r i n
    power_off_all
    wait_heartbeats_expired
    for r in "${rsses[@]}"; do
        n=$(k get rss "$r" -n "$NS" -o jsonpath='{.spec.replicas}')
        for ((i = 0; i < n; i++)); do set_sequence "$r" "$i" $((100 + (i * 7) % n)); done
    done
    local mark t0
    mark=$(now)
    sim_post stats-reset
    t0=$(now_ms)
    power_on_all
    local end=$(($(date +%s) + 900)) left
    while :; do
        left=0
        while read -r name ready repl phase; do
            [[ " ${rsses[*]} " == *" $name "* ]] || continue
            [ "$phase" = Running ] && [ "$ready" = "$repl" ] || left=$((left + 1))
        done < <(running_map)
        # Running only counts once the hooks logs show the seed and every join of this lights-out.
        if [ "$left" = 0 ]; then
            local ok=1
            for r in "${rsses[@]}"; do
                n=$(k get rss "$r" -n "$NS" -o jsonpath='{.spec.replicas}')
                [ "$(count_lines "$(hook_lines "$mark" "$r" seed)")" -ge 1 ] &&
                    [ "$(count_lines "$(hook_lines "$mark" "$r" primary secondary)")" -ge $((n - 1)) ] || ok=0
            done
            [ $ok = 1 ] && break
        fi
        [ "$(date +%s)" -lt "$end" ] || fail "$label: not every RSS Running after 900 s: $(running_map | tr '\n' ';')"
        sleep 0.3
    done
    local wall=$(($(now_ms) - t0)) f=$E2E_TMP/rec-$label.json
    stats >"$f"
    local tot net
    tot=$(rssd_total "$f")
    net=$((tot - IDLE_RATE[${IDLE_REF:-idle-0}] * wall / 1000000))
    TOT[$label]=$tot
    NET[$label]=$net
    WALL[$label]=$wall
    echo
    echo "lights-out $label: ${#rsses[@]} RSS, $nm members on $NODES nodes; last RSS Running $wall ms after power-on"
    printf '  %-5s %-9s %-9s %-9s %-9s %-6s\n' RSS joined_ms total_ms hooks_ms overhead joins
    local sumov=0 nov=0 fr ov
    for r in "${rsses[@]}"; do
        fr=$(fig_rss "$r" "$mark" "$t0")
        # shellcheck disable=SC2086 # five fields
        printf '  %-5s %-9s %-9s %-9s %-9s %-6s\n' "$r" $fr
        read -r _ _ _ ov _ <<<"$fr"
        [ "$ov" = - ] || [ "${K:-1}" != 1 ] || { sumov=$((sumov + ov)); nov=$((nov + 1)); }
    done
    [ $nov = 0 ] || echo "  mean overhead per RSS: $((sumov / nov)) ms"
    [ "${K:-1}" = 1 ] || echo "  joinConcurrency $K: joins overlap, so hooks_ms is the sum of all start hooks and overhead is not defined; compare total_ms with K=1"
    echo "  rssd requests: $tot raw, $net net of idle (per member: $(awk -v a="$net" -v b="$nm" 'BEGIN {printf "%.1f", a / b}'), per RSS: $(awk -v a="$net" -v b="${#rsses[@]}" 'BEGIN {printf "%.1f", a / b}'))"
    echo "  by verb and resource (all nodes; per member):"
    rssd_by "$f" | awk '{c[$2 " " $3] += $4} END {for (k in c) print c[k], k}' | sort -k2,3 |
        awk -v m="$nm" '{printf "    %-6s %-28s %6d  %6.2f\n", $2, $3, $1, $1 / m}'
    echo "  by node:"
    rssd_by "$f" | awk '{c[$1] += $4} END {for (k in c) printf "    %-7s %d\n", k, c[k]}' | sort
    echo "  watch events sent to rssd (kubesim's /_sim/stats watchEvents; the leader's node counts its leader too):"
    jq -r '.watchEvents[]? | select(.client | startswith("rssd/")) | "\(.resource) \(.count)"' "$f" |
        awk '{c[$1] += $2; t += $2} END {for (k in c) printf "    %-28s %d\n", k, c[k]; printf "    %-28s %d\n", "(all)", t + 0}' | sort
    jq -r '.watchEvents[]? | select(.client | startswith("rssd/")) | "\(.client | sub("^rssd/[^ ]* \\("; "") | sub("\\)$"; "")) \(.resource) \(.count)"' "$f" |
        awk -v ln="$(leader_node || true)" '{c[$1] = c[$1] " " $2 "=" $3; t[$1] += $3}
            END {for (k in c) printf "    %-7s %6d:%s%s\n", k, t[k], c[k], k == ln ? " (leader)" : ""}' | sort
    echo "  rssd memory VmRSS/RssAnon/VmHWM and CPU seconds since the power-on:"
    mem_cpu
}

say "bench_scale: world of $NODES nodes, build $RSS_BUILD_DIR"
e2e_up $NODES
idle idle-0

# ---- 10 RSS x 3
RS=()
for i in $(seq 0 9); do
    RS+=("r$i")
    rss_manifest "r$i" 3 false | k apply -n "$NS" -f - >/dev/null || fail "create r$i"
done
all_running() { [ "$(running_map | awk '$4 == "Running" && $2 == $3' | wc -l)" = "$1" ]; }
wait_until 600 "10 RSS Running" all_running 10
idle idle-10x3
if [ "${BENCH_NEW_EPOCH:-0}" = 1 ]; then
    # A new leader epoch: every agent republishes its members' `observed` (docs/protocol.md, leaseEpoch),
    # and the leader's node runs a new agent. Each agent's Lease GETs over the next IDLE_S: the peers'
    # heartbeat Leases its record watch made it re-read (agent_peers_reread.c) plus its 60 s refresh.
    ln0=$(leader_node) || fail "no leader"
    sim_post stats-reset
    k delete pod -n "$RSSD_NS" "$(rssd_pod "$ln0")" --wait=false >/dev/null || fail "delete rssd on $ln0"
    sleep "$IDLE_S"
    stats >"$E2E_TMP/epoch.json"
    echo
    echo "after a new leader epoch (rssd on $ln0 deleted, leader now $(leader_node || true)): GETs of Leases per agent over ${IDLE_S} s"
    rssd_by "$E2E_TMP/epoch.json" | awk -v ln="$ln0" '$2 == "GET" && $3 ~ /leases/ { g[$1] += $4 }
        END { for (n in g) printf "  %-8s %d%s\n", n, g[n], n == ln ? " (its new agent)" : "" }' | sort
fi
[ "${BENCH_IDLE_ONLY:-0}" != 1 ] || exit 0
IDLE_REF=idle-10x3
lightsout 10x3 30 "${RS[@]}"
[ "${BENCH_ONE_LIGHTSOUT:-0}" != 1 ] || exit 0
# The same again: a control for the slow variant, which is the second lights-out of these RSS (the
# world's runtimes restart more containers each time, so the second is not the first's equal).
lightsout 10x3-again 30 "${RS[@]}"
# r0's start hooks sleep first (a wrapper: sh -c 'sleep S; exec HOOK "$@"'; the peers stay the arguments).
slow_patch=$(jq -cn --arg s "$SLOW_S" '{spec: {pod: {commands: (["seed", "primary", "secondary"] | map({key: ., value:
    {command: ["/bin/sh", "-c", ("sleep " + $s + "; exec /hooks/" + . + " \"$@\""), .]}}) | from_entries)}}}')
k patch rss r0 -n "$NS" --type merge -p "$slow_patch" >/dev/null
lightsout 10x3-slow 30 "${RS[@]}"
for r in "${RS[@]}"; do k delete rss "$r" -n "$NS" --wait=false >/dev/null; done
podsgone() { [ "$(k get pods -n "$NS" -o json | jq '[.items[] | select(.metadata.labels["rss.clusterlabs.org/name"] != null)] | length')" = 0 ]; }
wait_until 300 "the members of r0..r9 gone" podsgone

# ---- one RSS: 3, 9, 27 members (K=1), then 27 with joinConcurrency 4
rss_manifest b 3 false | k apply -n "$NS" -f - >/dev/null || fail "create b"
wait_until 300 "b Running with 3" rss_running b 3
idle idle-1x3
IDLE_REF=idle-1x3
lightsout 1x3 3 b
for n in 9 27; do
    k patch rss b -n "$NS" --type merge -p "{\"spec\":{\"replicas\":$n}}" >/dev/null
    wait_until 900 "b Running with $n" rss_running b "$n"
    [ "$n" != 27 ] || idle idle-1x27
    lightsout "1x$n" "$n" b
done
k patch rss b -n "$NS" --type merge -p '{"spec":{"joinConcurrency":4}}' >/dev/null
K=4
lightsout 1x27-K4 27 b

echo
echo "== growth (rssd requests net of idle; overhead from the tables above)"
printf '  %-10s %-8s %-8s %-10s %-10s %s\n' run members total net net/member wall_ms
for l in 1x3 1x9 1x27 1x27-K4 10x3 10x3-again 10x3-slow; do
    case $l in 1x3) m=3 ;; 1x9) m=9 ;; 1x27*) m=27 ;; 10x3*) m=30 ;; esac
    printf '  %-10s %-8s %-8s %-10s %-10s %s\n' "$l" "$m" "${TOT[$l]}" "${NET[$l]}" "$(awk -v a="${NET[$l]}" -v b="$m" 'BEGIN {printf "%.1f", a / b}')" "${WALL[$l]}"
done
echo "  marginal requests per added member: 3->9 $(awk -v a="${NET[1x3]}" -v b="${NET[1x9]}" 'BEGIN {printf "%.1f", (b - a) / 6}'), 9->27 $(awk -v a="${NET[1x9]}" -v b="${NET[1x27]}" 'BEGIN {printf "%.1f", (b - a) / 18}')"
echo "  per RSS: 1 RSS of 3 ${NET[1x3]}, 10 RSS of 3 $(awk -v a="${NET[10x3]}" 'BEGIN {printf "%.1f", a / 10}') each"
echo "idle rssd requests/s (all nodes): $(for l in idle-0 idle-10x3 idle-1x3 idle-1x27; do printf '%s %s  ' "$l" "$(awk -v a="${IDLE_RATE[$l]}" 'BEGIN {printf "%.2f", a / 1000}')"; done)"
echo "(shared 2-core machine: times are noisy; repeat for ranges)"
