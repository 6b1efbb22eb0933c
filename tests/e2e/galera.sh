#!/usr/bin/env bash
# galera.sh -- rssd end to end with a real MariaDB Galera cluster (apps/galera) in the 3-node world: formation, lights-outs, recovery from the highest seqno, no acknowledged row lost.
#
# rssd from deploy/ as e2e.sh runs it, the RSS from apps/galera/rss.yaml, the image from
# apps/galera/image/build.sh imported into every node's containerd, apps/galera/hooks mounted at /hooks
# (RSS_WORLD_HOOKS). A writer on the host inserts one row at a time through ExecSync (mariadb client in
# the member container, round robin over the members) and records the ids the database acknowledged.
# Scenarios: create (seed + 2 joins); staggered (member 2's node dies first, rows go on through the
# other two, then the rest go dark: member 2 has the lowest seqno and must not seed, and joins by IST);
# lightsout (all nodes at once, writer running). After each: one seed with the highest sequence, rows
# identical on all members (checksum), every acknowledged id present on every member.
# Prints image build time and size, import time, power-on -> Running and -> writable, rows acked/lost.
# Exit 77 (skip) without root or debootstrap.
set -euo pipefail

if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
    echo "galera e2e: SKIP (needs root and debootstrap to build the image)"
    exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh disable=SC2154 # repo comes from lib.sh
. "$here/lib.sh"
R=galera
export RSS_WORLD_HOOKS=$repo/apps/galera/hooks
peer() { echo "$(member "$R" "$1").$(sts_name "$R")"; }
ms_since() { echo $(($(now_ms) - $1)); }

# ---- the image: built once per machine (cached), imported into every node's containerd
t=$(now_ms)
IMAGE_TAR=$(bash "$repo/apps/galera/image/build.sh" 2>"$E2E_TMP/image.log" | tail -n 1) ||
    { cat "$E2E_TMP/image.log" >&2; fail "apps/galera/image/build.sh"; }
say "image $IMAGE_TAR: $(du -m "$IMAGE_TAR" | cut -f1) MiB, ready in $(ms_since "$t") ms ($(grep -o 'cached\|built .*' "$E2E_TMP/image.log" | head -1))"

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
# insert M FROM TO: rows FROM..TO of the distinct data through member M.
insert() {
    local sql="" k
    for ((k = $2; k <= $3; k++)); do sql+="INSERT INTO rss.t VALUES ($k, $1, SHA2('$k', 256));"; done
    msql "$1" "$sql" >/dev/null
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

# The writer: one INSERT per ExecSync, round robin; an id is acknowledged when the exec says 0.
WRITER_DIR=$E2E_TMP/writer
writer() {
    local id=0 m cids=() nodes=() out
    mkdir -p "$WRITER_DIR"
    until [ -e "$WRITER_DIR/go" ] || [ -e "$WRITER_DIR/stop" ]; do sleep 0.2; done
    while [ ! -e "$WRITER_DIR/stop" ]; do
        id=$((id + 1))
        m=$((id % 3))
        if [ -z "${cids[m]:-}" ]; then
            nodes[m]=$(member_node "$R" "$m" 2>/dev/null || true)
            cids[m]=$("$WORLD" crictl "${nodes[m]:-none}" find "$NS" "$(member "$R" "$m")" mariadb 2>/dev/null || true)
        fi
        if [ -n "${cids[m]}" ] && out=$("$WORLD" crictl "${nodes[m]}" exec --timeout 10 "${cids[m]}" mariadb --no-defaults \
            -S /run/galera/mysqld.sock -uroot -e "INSERT INTO rss.w VALUES ($id, $m)" 2>&1); then
            echo "$id" >>"$WRITER_DIR/acked"
        else
            echo "$id ${out//$'\n'/ }" >>"$WRITER_DIR/failed"
            cids[m]=
            sleep 0.2
        fi
    done
}
acked() { wc -l <"$WRITER_DIR/acked" 2>/dev/null || echo 0; }
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

# recover_and_check MARK T0 LOW: after power-on at T0, wait for one seed and two joins, check the seed
# had the highest sequence (and was not member LOW, if given), rows, checksums and the writer's ids.
recover_and_check() {
    local mark=$1 t0=$2 low=${3:-} seeds seqs best s m t_run t_write
    recovered() { hook_lines "$mark" "$R" seed | grep -q . && [ "$(count_lines "$(hook_lines "$mark" "$R" primary)")" -ge 2 ]; }
    wait_until 600 "a seed and 2 joins in the hooks logs" recovered
    wait_until 300 "$R Running after the lights-out" rss_running "$R" 3
    t_run=$(ms_since "$t0")
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected one seed, got: $seeds"
    [[ $seeds == *" seed args=[] rc=0" ]] || fail "the seed failed: $seeds"
    seqs=$(hook_lines "$mark" "$R" sequence | sed -n 's/^[^ ]* \([^ ]*\) sequence .* out=\([0-9][0-9]*\) rc=0$/\1 \2/p' |
        awk '{ last[$1] = $2 } END { for (p in last) print p, last[p] }' | sort)
    [ "$(count_lines "$seqs")" = 3 ] || fail "expected a sequence from all 3 members: $seqs"
    best=$(sort -k2,2n <<<"$seqs" | tail -n 1 | cut -d' ' -f2)
    s=$(awk '{print $2}' <<<"$seeds")
    grep -q "^$s $best$" <<<"$seqs" || fail "the seed $s does not have the highest sequence ($best): $seqs"
    if [ -n "$low" ]; then
        [ "$s" != "$(member "$R" "$low")" ] || fail "member $low (first to die) seeded"
        m=$(awk -v p="$(member "$R" "$low")" '$1 == p { print $2 }' <<<"$seqs")
        [ "$m" -lt "$best" ] || fail "member $low's sequence ($m) is not below the seed's ($best)"
    fi
    for m in 0 1 2; do
        [ "$(member "$R" "$m")" = "$s" ] && continue
        grep -q "IST received" "$(claim_dir "$R" "$m")/mysqld.err" || fail "member $m never received an IST"
    done
    note "sequences: $(tr '\n' ' ' <<<"$seqs"); seed $s"
    t_write=$(now_ms)
    until msql 0 "INSERT INTO rss.t VALUES (0, 0, 'probe') ON DUPLICATE KEY UPDATE v = v" >/dev/null; do
        [ $(($(now_ms) - t_write)) -lt 60000 ] || fail "not writable 60 s after Running"
        sleep 0.2
    done
    note "power-on -> Running: $t_run ms; -> writable: $(ms_since "$t0") ms"
}
rows_identical() {
    local a b c
    a=$(table_sum 0) b=$(table_sum 1) c=$(table_sum 2)
    [ "$a" = "$b" ] && [ "$b" = "$c" ] || fail "members differ: $a / $b / $c"
    [ "${a%%:*}" = "$1" ] || fail "expected $1 rows, got ${a%%:*}"
    note "rss.t: $1 rows, checksum ${a#*:} on all members"
}

sc_create() {
    local t0
    t0=$(now_ms)
    k apply -f "$repo/apps/galera/rss.yaml" >/dev/null || fail "kubectl apply apps/galera/rss.yaml"
    wait_until 600 "$R Running with 3 primaries" rss_running "$R" 3
    note "apply -> Running: $(ms_since "$t0") ms"
    [ "$(count_lines "$(hook_lines 0 "$R" seed)")" = 1 ] || fail "expected one seed: $(hook_lines 0 "$R" seed)"
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
    msql 0 "CREATE DATABASE rss; CREATE TABLE rss.t (id INT PRIMARY KEY, via INT NOT NULL, v CHAR(64) NOT NULL);
        CREATE TABLE rss.w (id INT PRIMARY KEY, via INT NOT NULL)" >/dev/null || fail "create tables"
    insert 0 1 100 && insert 1 101 200 && insert 2 201 300 || fail "the first rows"
    rows_identical 300
    touch "$WRITER_DIR/go"
    sleep 3
}

sc_staggered() {
    local mark t0 n2
    n2=$(member_node "$R" 2)
    "$WORLD" power-off "$n2" >/dev/null 2>&1 || fail "power-off $n2"
    note "$n2 (member 2) off; rows 301..350 through member 0"
    insert_retry 0 301 350
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0" 2
    sleep 3
    rows_identical 351
    local r
    r=$(check_acked)
    note "writer: ${r% *} rows acknowledged so far, ${r#* } lost"
    [ "${r#* }" = 0 ] || fail "${r#* } acknowledged rows lost"
}

sc_lightsout() {
    local mark t0 before
    before=$(acked)
    insert_retry 1 401 450
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0"
    sleep 3
    rows_identical 401
    touch "$WRITER_DIR/stop"
    sleep 1
    local r
    r=$(check_acked)
    note "writer: ${r% *} rows acknowledged in all ($(( ${r% *} - before )) this cycle), ${r#* } lost; $(wc -l <"$WRITER_DIR/failed" 2>/dev/null || echo 0) attempts failed (not acknowledged)"
    [ "${r#* }" = 0 ] || fail "${r#* } acknowledged rows lost"
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
}

# The writer belongs to this shell (teardown kills it by pid); it starts once create made its table.
mkdir -p "$WRITER_DIR"
bg writer

run_scenarios 1 create staggered lightsout
