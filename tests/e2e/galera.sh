#!/usr/bin/env bash
# galera.sh -- rssd end to end with a real MariaDB Galera cluster (apps/galera) in the 3-node world: formation, lights-outs, recovery from the highest seqno, no acknowledged row lost.
#
# rssd from deploy/ as e2e.sh runs it, the RSS from apps/galera/rss.yaml, the image from
# apps/galera/image/build.sh imported into every node's containerd, apps/galera/hooks mounted at /hooks
# (RSS_WORLD_HOOKS). A writer on the host inserts one row at a time through ExecSync (mariadb client in
# the member container, round robin over the members) and records the ids the database acknowledged.
# Scenarios: create (seed + 2 joins); staggered (member 0's node dies first, rows go on through the
# other two, then the rest go dark: member 0 has the lowest seqno and must not seed, and joins by IST);
# lightsout (all nodes at once, the default runs it 3 times); killed (mariadbd SIGKILLed in member 1
# while survivor 2 stalls: rssd restarts member 1 and leaves the survivors alone); stays_off (a
# lights-out after which one node stays off: rssd waits, minimumMembers 2 lets it seed the highest of
# two, the third joins when its node returns); api_outage (the API server hangs for twice the fence
# timeout: nothing stops, writes go on); verify. After each: one seed with the highest sequence, rows
# identical on all members (checksum), every acknowledged id present on every member. For
# tests/bench/bench_galera.sh only: load (GALERA_DATA_MB of rows), wiped (a member rejoins by full
# SST), sts (the staggered dark recovered the plain-StatefulSet way, without rssd).
# Prints image build time and size, import time, power-on -> Running and -> writable and where that
# time went (container start, each hook, rssd), rows acked/lost.
# Exit 77 (skip) without root or debootstrap, or when no scenario runs in this world's flavour.
set -euo pipefail

if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
    echo "galera e2e: SKIP (needs root and debootstrap to build the image)"
    exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The agents' fence timeout, as safety.sh: api_outage freezes the API for twice as long plus 5 s.
export E2E_FENCE=${E2E_FENCE:-10s}
FENCE_S=${E2E_FENCE%s}
# shellcheck source=lib.sh disable=SC2154 # repo comes from lib.sh
. "$here/lib.sh"
. "$here/flavour.sh"
R=galera
# GALERA_SCENARIOS: a subset to run (galera_create first), e.g. "galera_create galera_stays_off galera_verify",
# in whichever world RSS_WORLD_FLAVOUR makes. The default: 3 lights-out cycles under the writer, then the
# rest, all on the real world (flavour.sh; docs/testing.md): there the members have their own addresses and find each other by the cluster DNS, as on a cluster. On the kubesim world (ctest
# e2e_galera) the default runs nothing and says so (skip); GALERA_SCENARIOS runs them there, on loopback.
table=(galera_create:real galera_staggered:real galera_lightsout:real galera_lightsout:real galera_lightsout:real
    galera_killed:real galera_stays_off:real galera_api_outage:real galera_verify:real)
if [ -n "${GALERA_SCENARIOS:-}" ]; then
    read -ra scenarios <<<"$GALERA_SCENARIOS"
else
    mapfile -t scenarios < <(select_scenarios "${table[@]}" --)
fi
if [ ${#scenarios[@]} = 0 ]; then
    echo "galera e2e: SKIP (its scenarios run on the real world: RSS_WORLD_FLAVOUR=real, tests/run.sh's real stage)"
    exit 77
fi
# GALERA_HOOKS: another hooks directory (to compare hook versions on the same scenarios).
export RSS_WORLD_HOOKS=${GALERA_HOOKS:-$repo/apps/galera/hooks}
ms_since() { echo $(($(now_ms) - $1)); }

# ---- the image: built once per machine (cached), imported into every node's containerd
t=$(now_ms)
IMAGE_TAR=$(bash "$repo/apps/galera/image/build.sh" 2>"$E2E_TMP/image.log" | tail -n 1) ||
    { cat "$E2E_TMP/image.log" >&2; fail "apps/galera/image/build.sh"; }
say "image $IMAGE_TAR: $(du -m "$IMAGE_TAR" | cut -f1) MiB, ready in $(ms_since "$t") ms ($(grep -o 'cached\|built .*' "$E2E_TMP/image.log" | sed -n 1p))"

e2e_up 3
import_image() {
    local n pids=() p bad=0
    for n in $("$WORLD" nodes); do
        ctr --address "$RSS_WORLD_DIR/nodes/$n/containerd/containerd.sock" -n k8s.io images import \
            --snapshotter overlayfs "$IMAGE_TAR" >"$E2E_TMP/import-$n.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    [ $bad = 0 ] || fail "image import: $(cat "$E2E_TMP"/import-*.log)"
}
t=$(now_ms)
import_image
say "image imported into 3 containerds in $(ms_since "$t") ms"

# ---- members through ExecSync, as rssd reaches them
# mexec M CMD...: ExecSync in member M's container (found on its node); stdout only.
mexec() {
    local m=$1 node cid
    shift
    node=$(member_node "$R" "$m") && [ -n "$node" ] || return 1
    cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" "$m")" mariadb 2>/dev/null) || return 1
    "$WORLD" crictl "$node" exec --timeout 30 "$cid" "$@" 2>/dev/null
}
# msql M SQL: read-your-writes query through member M's socket.
msql() {
    mexec "$1" mariadb --no-defaults -S /run/galera/mysqld.sock -uroot -N -s \
        -e "SET SESSION wsrep_sync_wait=1; $2"
}
# insert M FROM TO: rows FROM..TO of the distinct data through member M; ROWS counts the acknowledged.
ROWS=$E2E_TMP/rows
insert() {
    local sql="" k
    for ((k = $2; k <= $3; k++)); do sql+="INSERT INTO rss.t VALUES ($k, $1, SHA2('$k', 256)) ON DUPLICATE KEY UPDATE v = v;"; done
    msql "$1" "$sql" >/dev/null || return 1
    seq "$2" "$3" >>"$ROWS"
}
# insert_retry M FROM TO: the same, retried for up to 60 s (a view change blocks writes for seconds).
insert_retry() {
    local end=$(($(date +%s) + 60))
    until insert "$@"; do
        [ "$(date +%s)" -lt "$end" ] || fail "rows $2..$3 through member $1 not accepted within 60 s"
        sleep 1
    done
}
table_sum() { msql "$1" "SELECT COUNT(*), MD5(GROUP_CONCAT(id, '/', via, '/', v ORDER BY id)) FROM rss.t" | tr '\t' ':'; }

# The writer: one INSERT per ExecSync (world-cri straight at the node's runtime), round robin; an id
# is acknowledged when the exec says 0.
WRITER_DIR=$E2E_TMP/writer
WORLD_CRI=$RSS_BUILD_DIR/tests/sim/world/kubelet/world-cri
writer() {
    local id=0 m cids=() eps=() node out
    mkdir -p "$WRITER_DIR"
    until [ -e "$WRITER_DIR/go" ] || [ -e "$WRITER_DIR/stop" ]; do sleep 0.2; done
    while [ ! -e "$WRITER_DIR/stop" ]; do
        id=$((id + 1))
        m=$((id % 3))
        if [ -z "${cids[m]:-}" ]; then
            node=$(member_node "$R" "$m" 2>/dev/null || true)
            eps[m]=$("$WORLD" cri "${node:-none}" 2>/dev/null || true)
            cids[m]=$("$WORLD_CRI" --endpoint "${eps[m]:-none}" find "$NS" "$(member "$R" "$m")" mariadb 2>/dev/null || true)
        fi
        if [ -n "${cids[m]}" ] && out=$("$WORLD_CRI" --endpoint "${eps[m]}" exec --timeout 10 "${cids[m]}" mariadb --no-defaults \
            -S /run/galera/mysqld.sock -uroot -e "INSERT INTO rss.w VALUES ($id, $m)" 2>&1); then
            echo "$id" >>"$WRITER_DIR/acked"
        else
            echo "$id ${out//$'\n'/ }" >>"$WRITER_DIR/failed"
            cids[m]=
            sleep 0.2
        fi
    done
}
acked() { wc -l 2>/dev/null <"$WRITER_DIR/acked" || echo 0; }
# check_acked: every acknowledged id present on every member; prints "acked lost".
check_acked() {
    local m lost=0 n
    sort -n "$WRITER_DIR/acked" >"$E2E_TMP/acked.sorted"
    n=$(wc -l <"$E2E_TMP/acked.sorted")
    for m in 0 1 2; do
        msql "$m" "SELECT id FROM rss.w ORDER BY id" >"$E2E_TMP/present.$m" || fail "reading rss.w on member $m"
        sort -n "$E2E_TMP/present.$m" -o "$E2E_TMP/present.$m"
        local l
        l=$(comm -23 <(sort "$E2E_TMP/acked.sorted") <(sort "$E2E_TMP/present.$m") | wc -l)
        [ "$l" -gt "$lost" ] && lost=$l
    done
    echo "$n $lost"
}

# timeline MARK T0: when, after power-on at T0, the hooks finished (from the hooks logs).
timeline() {
    local mark=$1 t0=$2 s seed last
    ms_of() { echo $(($(date -d "$1" +%s%3N) - t0)); }
    s=$(hook_lines "$mark" "$R" sequence | tail -n 1 | cut -d' ' -f1)
    seed=$(hook_lines "$mark" "$R" seed | tail -n 1 | cut -d' ' -f1)
    last=$(hook_lines "$mark" "$R" primary | tail -n 1 | cut -d' ' -f1)
    note "after power-on: last sequence ${s:+$(ms_of "$s")} ms, seed done ${seed:+$(ms_of "$seed")} ms, last join done ${last:+$(ms_of "$last")} ms"
}

# breakdown MARK T0 T_WRITABLE: where the time from power-on (T0, ms) to writable went, for the
# benchmark: the containers' start (CRI createdAt), each hook's span from the members' hooks.times
# (begin and end, and IST/SST for a join), and what is left, rssd's own overhead: deciding, writing
# desired, the agents noticing it (the hooks run one after the other on the critical path).
breakdown() {
    local mark=$1 t0=$2 tw=$3 m node cid c cmax=0 spans="" hooks_ms=0 seq_ms=0 b e d pod hook rest last
    for m in 0 1 2; do
        node=$(member_node "$R" "$m") || continue
        cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" "$m")" mariadb 2>/dev/null) || continue
        c=$("$WORLD" crictl "$node" inspect "$cid" 2>/dev/null | jq -r '.createdAt / 1000000 | floor') || continue
        [ $((c - t0)) -gt "$cmax" ] && cmax=$((c - t0))
    done
    while read -r b e pod hook rest; do
        d=$(($(date -d "$e" +%s%3N) - $(date -d "$b" +%s%3N)))
        if [ "$hook" = sequence ]; then
            [ "$d" -gt "$seq_ms" ] && seq_ms=$d
        else
            hooks_ms=$((hooks_ms + d))
        fi
        spans+=" ${pod##*-}:$hook $(($(date -d "$b" +%s%3N) - t0))-$(($(date -d "$e" +%s%3N) - t0))${rest#rc=0}"
    done < <(cat "$RSS_WORLD_DIR/pv/$NS/data-$(sts_name "$R")-"*/hooks.times 2>/dev/null | awk -v m="$mark" '$1 > m' | sort)
    note "breakdown: containers started by ${cmax} ms; hooks (member:hook begin-end ms):$spans"
    last=$(cat "$RSS_WORLD_DIR/pv/$NS/data-$(sts_name "$R")-"*/hooks.times 2>/dev/null | awk -v m="$mark" '$1 > m { print $2 }' | sort | tail -n 1)
    last=$(($(date -d "$last" +%s%3N) - t0))
    note "split: container start $cmax ms + sequence (longest) $seq_ms ms + seed and joins $hooks_ms ms + rssd $((last - cmax - seq_ms - hooks_ms)) ms = last hook done $last ms; then $((tw - t0 - last)) ms until the test saw Running and wrote"
}

# recover_and_check MARK T0 N [LOW]: after power-on at T0, wait for one seed and N-1 joins, check the
# seed had the highest sequence (and was not member LOW, if given), the joiners got an IST, and the
# time until the cluster is writable.
recover_and_check() {
    local mark=$1 t0=$2 n=$3 low=${4:-} seeds seqs best s m t_run t_write
    recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null . && [ "$(count_lines "$(hook_lines "$mark" "$R" primary)")" -ge $((n - 1)) ]; }
    wait_until 600 "a seed and $((n - 1)) joins in the hooks logs" recovered
    # With a member missing (minimumMembers) the phase is Degraded.
    running_n() { rss_json "$R" | jq -e --argjson n "$1" '(.status.phase == "Running" or .status.phase == "Degraded") and ((.status.members.primary // []) | length) == $n' >/dev/null; }
    wait_until 300 "$R Running with $n primaries" running_n "$n"
    t_run=$(ms_since "$t0")
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected one seed, got: $seeds"
    [[ $seeds == *" seed args=[] rc=0" ]] || fail "the seed failed: $seeds"
    seqs=$(hook_lines "$mark" "$R" sequence | sed -n 's/^[^ ]* \([^ ]*\) sequence .* out=\([0-9][0-9]*\) rc=0$/\1 \2/p' |
        awk '{ last[$1] = $2 } END { for (p in last) print p, last[p] }' | sort)
    [ "$(count_lines "$seqs")" = "$n" ] || fail "expected a sequence from $n members: $seqs"
    best=$(sort -k2,2n <<<"$seqs" | tail -n 1 | cut -d' ' -f2)
    s=$(awk '{print $2}' <<<"$seeds")
    grep -q "^$s $best$" <<<"$seqs" || fail "the seed $s does not have the highest sequence ($best): $seqs"
    if [ -n "$low" ]; then
        [ "$s" != "$(member "$R" "$low")" ] || fail "member $low (first to die) seeded"
        m=$(awk -v p="$(member "$R" "$low")" '$1 == p { print $2 }' <<<"$seqs")
        [ "$m" -lt "$best" ] || fail "member $low's sequence ($m) is not below the seed's ($best)"
    fi
    for m in $(hook_lines "$mark" "$R" primary | awk '{print $2}'); do
        grep -q "IST received" "$RSS_WORLD_DIR/pv/$NS/data-$m/mysqld.err" || fail "$m never received an IST"
    done
    note "sequences: $(tr '\n' ' ' <<<"$seqs"); seed $s"
    t_write=$(now_ms)
    until msql "${s##*-}" "INSERT INTO rss.t VALUES (0, 0, 'probe') ON DUPLICATE KEY UPDATE v = v" >/dev/null; do
        [ $(($(now_ms) - t_write)) -lt 60000 ] || fail "not writable 60 s after Running"
        sleep 0.2
    done
    t_write=$(now_ms)
    echo 0 >>"$ROWS"
    note "power-on -> Running: $t_run ms; -> writable: $((t_write - t0)) ms"
    timeline "$mark" "$t0"
    breakdown "$mark" "$t0" "$t_write"
}
# rows_identical [MEMBERS]: every row acknowledged to insert (ROWS) and one checksum on the members
# (default 0 1 2).
rows_identical() {
    local want m sum first="" members
    want=$(sort -u "$ROWS" | wc -l)
    members=("$@")
    [ $# -gt 0 ] || members=(0 1 2)
    for m in "${members[@]}"; do
        sum=$(table_sum "$m") || fail "reading rss.t on member $m"
        [ -n "$first" ] || first=$sum
        [ "$sum" = "$first" ] || fail "members differ: $first / $sum (member $m)"
    done
    [ "${first%%:*}" = "$want" ] || fail "expected $want rows, got ${first%%:*}"
    note "rss.t: $want rows, checksum ${first#*:} on members ${members[*]}"
}
# acked_ok: every id the writer saw acknowledged is on every member; notes the counts.
ACKED_MARK=$E2E_TMP/acked.cycle
acked_ok() {
    local r before
    before=$(cat "$ACKED_MARK" 2>/dev/null || echo 0)
    r=$(check_acked)
    echo "${r% *}" >"$ACKED_MARK"
    note "writer: ${r% *} rows acknowledged so far ($((${r% *} - before)) this cycle), ${r#* } lost; $(wc -l 2>/dev/null <"$WRITER_DIR/failed" || echo 0) attempts in all failed (not acknowledged)"
    [ "${r#* }" = 0 ] || fail "${r#* } acknowledged rows lost"
}

# galera_rss: apps/galera/rss.yaml for this world. In the real one the pods have their own addresses on the
# CNI bridges (not the host's loopback): GALERA_NETWORK=dns and POD_IP, as its REAL CLUSTER comments say,
# the peers found by the cluster DNS (CoreDNS, tests/realk8s/world-real).
galera_rss() {
    if [ "$(world_flavour)" = real ]; then
        awk '{ print }
            /- name: GALERA_NETWORK$/ { getline; sub(/loopback/, "dns"); print
                print "      - name: POD_IP"; print "        valueFrom:"; print "          fieldRef:"
                print "            fieldPath: status.podIP" }' "$repo/apps/galera/rss.yaml"
    else
        cat "$repo/apps/galera/rss.yaml"
    fi
}

sc_galera_create() {
    local t0
    t0=$(now_ms)
    galera_rss | k apply -f - >/dev/null || fail "kubectl apply apps/galera/rss.yaml"
    wait_until 600 "$R Running with 3 primaries" rss_running "$R" 3
    note "apply -> Running: $(ms_since "$t0") ms"
    [ "$(count_lines "$(hook_lines 0 "$R" seed)")" = 1 ] || fail "expected one seed: $(hook_lines 0 "$R" seed)"
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
    msql 0 "CREATE DATABASE rss; CREATE TABLE rss.t (id INT PRIMARY KEY, via INT NOT NULL, v CHAR(64) NOT NULL);
        CREATE TABLE rss.w (id INT PRIMARY KEY, via INT NOT NULL)" >/dev/null || fail "create tables"
    insert 0 1 100 || fail "rows 1..100 through member 0"
    insert 1 101 200 || fail "rows 101..200 through member 1"
    insert 2 201 300 || fail "rows 201..300 through member 2"
    rows_identical
    touch "$WRITER_DIR/go"
    sleep 3
}

# Member 0's node dies first; rows go on through the other two (still a primary component); then the
# rest go dark. Ordinal 0, which a plain StatefulSet would start first, has the lowest seqno: it must not
# seed, and it catches up by IST. Members 1 and 2 tie; the lower ordinal of the two seeds.
sc_galera_staggered() {
    local mark t0 n0
    n0=$(member_node "$R" 0)
    "$WORLD" power-off "$n0" >/dev/null 2>&1 || fail "power-off $n0"
    note "$n0 (member 0) off first; rows 301..350 through member 1"
    insert_retry 1 301 350
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    # Member 0 must not seed (a plain StatefulSet would start it first): its sequence is below the seed's.
    recover_and_check "$mark" "$t0" 3 0
    sleep 3
    rows_identical
    acked_ok
}

# All nodes at once, the writer running.
sc_galera_lightsout() {
    local mark t0
    insert_retry 1 401 450
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0" 3
    sleep 3
    rows_identical
    acked_ok
}

# mariadbd of member 1 is SIGKILLed (the container and the node stay up): status says 1, rssd restarts
# it with primary, it rejoins by IST (or needs no transfer); no seed, the others keep serving. Survivor
# 2 stalls 8 s meanwhile (GALERA_KILLED_STALL, 0 = none), so survivor 0 is briefly non-Primary: with
# status saying 1 for that (the hooks before the fix of the status hook) rssd stopped both survivors and the
# cluster did not come back (GALERA_HOOKS=<old hooks> reproduces it).
sc_galera_killed() {
    ensure() { rss_running "$R" 3; }
    wait_until 120 "$R Running with 3 primaries" ensure
    local mark t0 node cid ist0 last join
    # rssd counts a crash within 2 x reconcileInterval (20 s) of the member's last start as one more in
    # a streak and replaces the pod at maxFailures (docs/planner.md): not what this scenario is about,
    # so member 1 has been running 25 s when it is killed (matters when killed runs several times).
    last=$(hook_lines 0 "$R" primary seed | grep " $(member "$R" 1) " | tail -n 1 | cut -d' ' -f1)
    if [ -n "$last" ]; then
        last=$(($(date +%s) - $(date -d "$last" +%s)))
        [ "$last" -ge 25 ] || sleep $((25 - last))
    fi
    ist0=$(grep -c "IST received" "$(claim_dir "$R" 1)/mysqld.err" || true)
    node=$(member_node "$R" 1)
    cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" 1)" mariadb) || fail "no container for member 1"
    mark=$(now)
    t0=$(now_ms)
    "$WORLD" crictl "$node" exec "$cid" sh -c 'kill -KILL "$(cat /run/galera/mysqld.pid)"' >/dev/null 2>&1 ||
        fail "kill mariadbd of member 1"
    # A loaded host (the flake this scenario once had): survivor 2 stalls for 8 s, past Galera's
    # evs.suspect_timeout (5 s), while member 1 is away and rejoining. Survivor 0 is then alone, a
    # non-primary component, until 2 comes back and the two re-form the primary component by themselves.
    # rssd must leave both alone (status 0 during the transition, not 1).
    if [ "${GALERA_KILLED_STALL:-8}" != 0 ]; then
        local n2 c2
        n2=$(member_node "$R" 2)
        c2=$("$WORLD" crictl "$n2" find "$NS" "$(member "$R" 2)" mariadb) || fail "no container for member 2"
        "$WORLD" crictl "$n2" exec "$c2" sh -c "kill -STOP \$(cat /run/galera/mysqld.pid); sleep ${GALERA_KILLED_STALL:-8}; kill -CONT \$(cat /run/galera/mysqld.pid)" >/dev/null 2>&1 ||
            fail "stall member 2"
    fi
    insert_retry 0 451 470
    restarted() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member "$R" 1) primary .* rc=0$"; }
    wait_until 180 "member 1 restarted by rssd" restarted
    wait_until 120 "$R Running with 3 primaries" ensure
    note "mariadbd killed -> Running again: $(ms_since "$t0") ms; hooks: $(hook_lines "$mark" "$R" sequence seed primary stop | awk '{print $2 " " $3 " " $NF}' | tr '\n' ';')"
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed while two members ran: $(hook_lines "$mark" "$R" seed)"
    # The survivors go on serving: rssd must not stop them, whatever transitions they show meanwhile
    # (their status says 0, not 1, while their component re-forms: apps/galera/hooks/status).
    for m in 0 2; do
        ! hook_lines "$mark" "$R" stop primary | grep >/dev/null " $(member "$R" "$m") " ||
            fail "rssd acted on survivor $m: $(hook_lines "$mark" "$R" stop primary | grep " $(member "$R" "$m") ")"
        note "survivor $m's status answers other than 8 meanwhile: $(awk -v m="$mark" '$1 > m' "$(claim_dir "$R" "$m")/status.log" 2>/dev/null | wc -l)"
    done
    # By IST, or with no transfer at all when the survivors wrote nothing meanwhile (they were briefly
    # non-Primary during the stall, and member 1 came back at their position): never a full SST.
    join=$(awk -v m="$mark" '$1 > m && $4 == "primary"' "$(claim_dir "$R" 1)/hooks.times" | tail -n 1)
    [[ $join == *" rc=0"* && $join != *transfer=SST* ]] || fail "member 1 did not rejoin by IST or in step: $join"
    note "member 1 rejoined: ${join##* rc=0}$([[ $join == *transfer=* ]] || echo "no state transfer (already at the group's position)")$([ "$(grep -c "IST received" "$(claim_dir "$R" 1)/mysqld.err" || true)" -gt "$ist0" ] && echo "; IST received")"
    sleep 3
    rows_identical
    acked_ok
}

# A lights-out after which member 2's node stays off: rssd waits; with minimumMembers 2 it seeds the
# highest of the two, the cluster serves writes; member 2 returns later and joins by IST.
sc_galera_stays_off() {
    local mark t0 off n mark2
    off=$(member_node "$R" 2)
    insert_retry 2 471 480
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    for n in $("$WORLD" nodes); do
        [ "$n" = "$off" ] || "$WORLD" power-on "$n" >/dev/null 2>&1 || fail "power-on $n"
    done
    sleep 20
    [ -z "$(hook_lines "$mark" "$R" seed primary)" ] || fail "started while a member was missing: $(hook_lines "$mark" "$R" seed primary)"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":2}}}' >/dev/null || fail "patch minimumMembers"
    recover_and_check "$mark" "$t0" 2
    insert_retry 0 481 500
    rows_identical 0 1
    mark2=$(now)
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    joined() { hook_lines "$mark2" "$R" primary | grep >/dev/null " $(member "$R" 2) primary .* rc=0$"; }
    wait_until 300 "member 2 to join after its node came back" joined
    grep -q "IST received" "$(claim_dir "$R" 2)/mysqld.err" || fail "member 2 never received an IST"
    wait_until 120 "$R Running with 3 primaries" rss_running "$R" 3
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":null}}' >/dev/null || fail "patch recovery null"
    sleep 3
    rows_identical
    acked_ok
}

# The API server hangs for twice the fence timeout while the writer runs: the agents reach each other,
# so nothing stops; no hook but status runs, mariadbd keeps its pid and keeps acknowledging writes.
sc_galera_api_outage() {
    # No wait for the agents' 10 s re-read of their peers' heartbeat Leases: a node that rebooted in the
    # scenario before (stays_off) has a new failsafe key, and its member's report, which Running waits
    # for, makes the other agents read its Lease within a second (nodeagent/agent_peers_reread.c).
    wait_until 120 "$R Running with 3 primaries" rss_running "$R" 3
    local m node cid pids=() after mark a0 a1 acts
    for m in 0 1 2; do
        node=$(member_node "$R" "$m")
        cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" "$m")" mariadb) || fail "no container for member $m"
        pids[m]="$node $cid $("$WORLD" crictl "$node" exec "$cid" cat /run/galera/mysqld.pid)"
    done
    mark=$(now)
    a0=$(acked)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    a1=$(acked)
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    wait_until 90 "$R Running with 3 primaries" rss_running "$R" 3
    acts=$(hook_lines "$mark" "$R" stop seed primary)
    [ -z "$acts" ] || fail "the API outage made rssd act on the members: $acts"
    for m in 0 1 2; do
        # shellcheck disable=SC2086 # "node cid pid", split on purpose
        set -- ${pids[m]}
        after=$("$WORLD" crictl "$1" exec "$2" cat /run/galera/mysqld.pid) || fail "member $m's container is gone"
        [ "$after" = "$3" ] || fail "mariadbd of member $m restarted ($3 -> $after)"
    done
    [ "$a1" -gt "$a0" ] || fail "no write acknowledged while the API was frozen"
    note "API frozen $((2 * FENCE_S + 5)) s: no action, same mariadbd pids, $((a1 - a0)) rows acknowledged meanwhile"
    sleep 3
    rows_identical
    acked_ok
}

# Benchmark scenarios (tests/bench/bench_galera.sh), not in the default list.

# load: GALERA_DATA_MB (default 1024) MiB of rows into rss.big through member 0, 32 MiB per
# transaction (512 rows of 64 KiB, made by the server: INSERT ... SELECT over a sequence table), so
# every member holds that much data before the lights-outs that follow.
sc_galera_load() {
    local mb=${GALERA_DATA_MB:-1024} chunks c t0 m
    chunks=$(((mb + 31) / 32))
    msql 0 "CREATE TABLE IF NOT EXISTS rss.big (id INT PRIMARY KEY, b LONGBLOB NOT NULL)" >/dev/null || fail "create rss.big"
    t0=$(now_ms)
    for ((c = 0; c < chunks; c++)); do
        msql 0 "USE rss; INSERT INTO big SELECT $((c * 512)) + seq, REPEAT(SHA2($c * 512 + seq, 256), 1024) FROM seq_1_to_512" >/dev/null ||
            fail "loading chunk $c of $chunks"
    done
    note "loaded $((chunks * 32)) MiB (rss.big, $((chunks * 512)) rows of 64 KiB) through member 0 in $(ms_since "$t0") ms"
    for m in 0 1 2; do
        [ "$(msql "$m" "SELECT COUNT(*) FROM rss.big")" = $((chunks * 512)) ] || fail "member $m lacks rows of rss.big"
        note "member $m: datadir $(du -sm "$(claim_dir "$R" "$m")/mysql" | cut -f1) MiB"
    done
}

# wiped: member 2's mariadbd is SIGKILLed and its datadir wiped (a replaced disk): rssd rejoins it by a
# full SST of the whole datadir; the time from the kill to Running again.
sc_galera_wiped() {
    ensure() { rss_running "$R" 3; }
    wait_until 120 "$R Running with 3 primaries" ensure
    local mark t0 node cid
    node=$(member_node "$R" 2)
    cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" 2)" mariadb) || fail "no container for member 2"
    mark=$(now)
    t0=$(now_ms)
    # Frozen (SIGSTOP) while its datadir goes, then killed: rssd reacts to the crash only once the
    # datadir is gone, and never races the wipe with its own primary hook.
    "$WORLD" crictl "$node" exec "$cid" sh -c 'p=$(cat /run/galera/mysqld.pid); kill -STOP "$p" && rm -rf /data/mysql && kill -KILL "$p"' >/dev/null 2>&1 ||
        fail "kill and wipe member 2"
    restarted() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member "$R" 2) primary .* rc=0$"; }
    wait_until 600 "member 2 rejoined by rssd" restarted
    wait_until 120 "$R Running with 3 primaries" ensure
    note "wiped member rejoined -> Running again: $(ms_since "$t0") ms; its join: $(awk -v m="$mark" '$1 > m && $4 == "primary"' "$(claim_dir "$R" 2)/hooks.times" | tail -n 1)"
    note "member 2: datadir $(du -sm "$(claim_dir "$R" 2)/mysql" | cut -f1) MiB after the SST"
    sleep 3
    rows_identical
}

# sts: the same staggered dark (member 0's node first, rows go on through member 1, then all) recovered
# the way a plain StatefulSet would, without rssd (the RSS is paused: rssd only watches): ordinal 0
# starts first and bootstraps (a StatefulSet starts pod 0 first and waits for it), no sequence
# compared; then ordinals 1 and 2 join it, in order. States what happened to the acknowledged rows.
# Leaves the cluster broken: the last scenario of a run. Prints "sts:" lines for the benchmark.
mexec_long() { # mexec_long M CMD...: as mexec, with a 200 s timeout and stderr kept
    local m=$1 node cid
    shift
    node=$(member_node "$R" "$m") && [ -n "$node" ] || return 1
    cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" "$m")" mariadb 2>/dev/null) || return 1
    "$WORLD" crictl "$node" exec --timeout 200 "$cid" env POD_NAME="$(member "$R" "$m")" GALERA_START_TIMEOUT=90 "$@"
}
sc_galera_sts() {
    wait_until 120 "$R Running with 3 primaries" rss_running "$R" 3
    local n0 mark t0 seqs rc t seq0 m lost0 lostw missing
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"paused":true}}' >/dev/null || fail "pause the RSS"
    n0=$(member_node "$R" 0)
    "$WORLD" power-off "$n0" >/dev/null 2>&1 || fail "power-off $n0"
    insert_retry 1 601 650
    sleep 2
    touch "$WRITER_DIR/stop"
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    # rssd's agents read each new container's sequence by themselves (and do nothing else, paused):
    # what a StatefulSet never looks at, kept here to show what ordinal 0 had.
    three() { [ "$(hook_lines "$mark" "$R" sequence | awk '{print $2}' | sort -u | wc -l)" = 3 ]; }
    wait_until 120 "the three members' sequences (read by the paused agents)" three
    seqs=$(hook_lines "$mark" "$R" sequence | sed -n 's/^[^ ]* \([^ ]*\) sequence .* out=\([0-9]*\) rc=0$/\1 \2/p' | sort -u | tr '\n' ' ')
    echo "  - sts: sequences after the dark: $seqs(a StatefulSet compares none)"
    seq0=$(grep -o "$(member "$R" 0) [0-9]*" <<<"$seqs" | cut -d' ' -f2)
    [ -n "$seq0" ] || fail "no sequence from member 0"
    # 1. pod 0 bootstraps as a StatefulSet's entrypoint does (--wsrep-new-cluster, grastate untouched).
    t=$(now_ms)
    set +e
    # shellcheck disable=SC2016 # runs in the member's shell
    mexec_long 0 sh -c '. /hooks/lib.sh; write_config && recover_position &&
        start_mariadbd --wsrep-new-cluster --wsrep_cluster_address=gcomm:// --wsrep_start_position="$POS"' >/dev/null 2>"$E2E_TMP/sts-boot.err"
    rc=$?
    set -e
    echo "  - sts: ordinal 0 bootstraps at $(ms_since "$t0") ms after power-on: rc $rc after $(ms_since "$t") ms: $(grep -o 'It may not be safe to bootstrap[^.]*' "$(claim_dir "$R" 0)/mysqld.err" | tail -n 1)"
    [ "$rc" != 0 ] || fail "Galera let ordinal 0 bootstrap with safe_to_bootstrap 0"
    grep -q "It may not be safe to bootstrap" "$(claim_dir "$R" 0)/mysqld.err" || fail "ordinal 0's bootstrap failed for another reason"
    # 2. The admin's usual way out (the error message says it): safe_to_bootstrap: 1 on pod 0, which the
    # StatefulSet keeps restarting; the seed hook does exactly that.
    t=$(now_ms)
    mexec_long 0 /hooks/seed >/dev/null 2>>"$E2E_TMP/sts-boot.err" || fail "forced bootstrap of ordinal 0"
    echo "  - sts: after safe_to_bootstrap: 1 by hand, ordinal 0 is Primary and writable in $(ms_since "$t") ms, at sequence $seq0"
    msql 0 "INSERT INTO rss.t VALUES (0, 0, 'probe') ON DUPLICATE KEY UPDATE v = v" >/dev/null || fail "ordinal 0 not writable"
    # 3. Ordinals 1 and 2 join it, in order, with their own (higher) positions.
    for m in 1 2; do
        t=$(now_ms)
        set +e
        mexec_long "$m" /hooks/primary "$(member "$R" 0).$R-svc" >/dev/null 2>"$E2E_TMP/sts-join-$m.err"
        rc=$?
        set -e
        echo "  - sts: ordinal $m joins: rc $rc after $(ms_since "$t") ms: $(grep -o 'Reversing history[^.]*' "$(claim_dir "$R" "$m")/mysqld.err" | tail -n 1)"
    done
    # What ordinal 0 serves: the acknowledged rows it lacks.
    lost0=$(comm -23 <(sort -u "$ROWS") <(msql 0 "SELECT id FROM rss.t" | sort -u) | wc -l)
    lostw=$(comm -23 <(sort -u "$WRITER_DIR/acked") <(msql 0 "SELECT id FROM rss.w" | sort -u) | wc -l)
    echo "  - sts: the cluster ordinal 0 formed serves $((lost0 + lostw)) fewer acknowledged rows ($lost0 of rss.t, $lostw of the writer's $(wc -l <"$WRITER_DIR/acked"))"
    # 4. What then? The joiners refuse (their data is still on disk); the usual next step, wiping them so
    # they SST from ordinal 0, makes the loss final. Shown on member 2 only: member 1 keeps the evidence.
    mexec_long 2 sh -c 'rm -rf /data/mysql' >/dev/null 2>&1 || fail "wipe member 2"
    t=$(now_ms)
    mexec_long 2 /hooks/primary "$(member "$R" 0).$R-svc" >/dev/null 2>>"$E2E_TMP/sts-join-2.err" || fail "member 2's SST from ordinal 0"
    missing=$(($(comm -23 <(sort -u "$ROWS") <(msql 2 "SELECT id FROM rss.t" | sort -u) | wc -l) +
        $(comm -23 <(sort -u "$WRITER_DIR/acked") <(msql 2 "SELECT id FROM rss.w" | sort -u) | wc -l)))
    echo "  - sts: after wiping ordinal 2 (the usual fix), it joined by full SST in $(ms_since "$t") ms and lacks $missing acknowledged rows too: lost for good once ordinal 1 is wiped as well"
    [ "$((lost0 + lostw))" -gt 0 ] || fail "the StatefulSet way lost nothing: the scenario did not put ordinal 0 behind"
}

sc_galera_verify() {
    touch "$WRITER_DIR/stop"
    sleep 2
    acked_ok
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
    note "hook runs: $(hooks_all "$R" | awk '{print $3}' | sort | uniq -c | tr -s ' \n' ' ')"
}

# The writer belongs to this shell (teardown kills it by pid); it starts once create made its table.
mkdir -p "$WRITER_DIR"
bg writer
run_scenarios 1 "${scenarios[@]}"
