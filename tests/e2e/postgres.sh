#!/usr/bin/env bash
# postgres.sh -- rssd end to end with real PostgreSQL 15 streaming replication (apps/postgres: one primary, two standbys, synchronous ANY 1) in the 3-node world: no acknowledged commit lost, no timeline fork left.
#
# rssd from deploy/ as e2e.sh runs it, the RSS from apps/postgres/rss.yaml, the image from
# apps/postgres/image/build.sh (cached per machine) imported into every node's containerd,
# apps/postgres/hooks mounted at /hooks (RSS_WORLD_HOOKS). A writer on the host inserts one row per
# ExecSync (psql in a member container, on the member that last accepted a write, the next one after
# a failure) and records the ids PostgreSQL acknowledged (psql exit 0 and no WARNING: a cancelled
# synchronous-replication wait is a warning on a commit that is only local).
# Scenarios: create; lightsout (all nodes at once, under the writer); staggered (a standby's node dies
# first, writes go on, then all: that standby has the oldest WAL and must not seed); killed (the
# primary's postgres SIGKILLed in its container); api_outage (the API server hangs for twice the fence
# timeout: nothing stops, writes go on); rssd_restart (rssd SIGKILLed on the primary's node: no hook
# runs again, postgres keeps its pid); primary_node_off (the primary's node off for PG_NODE_OFF_S, then
# back); primary_stays_off (the primary's node stays off: the admin's minimumMembers 2 seeds the
# higher standby, a promotion; the old primary rejoins, by pg_rewind when its timeline forked);
# postgres_killed_promote (the same under spec.failover PromoteStandby: one standby promoted, nothing stopped);
# postgres_primary_node_off_promote (the primary's node off under PromoteStandby: one promotion after the
# dead window, nothing stopped, the old primary rejoins once back; by name only: the dead window with the
# 90 s stop timeout makes it about 3 min);
# postgres_freeze_promote, postgres_leader_change_failover, postgres_drain_primary (issue 35's faults 1-3
# under PromoteStandby, as safety_failover.sh has them for the dummy app: the primary's node frozen past the
# dead window and thawed, a leader change while the failover stops the lost primary, a drain of the
# primary's node; the first and the last in the real stage, the leader change by name only);
# postgres_switchover (kubectl rss switchover under the writer: the primary stopped by its hook, the most
# advanced standby promoted, no commit lost; real stage); postgres_drain_switchover (a real kubectl drain of
# the primary's node: its own budget holds its eviction until it handed over; real stage);
# postgres_rollout_switchover (a template change under
# PromoteStandby: the standbys rolled, the primary hands over by a switchover, its pod recreated; kubesim);
# postgres_force_seed_early (issue 35's fault 6, by name: a force-seed before the leader judged the
# primary's node dead is refused with whom, why and until when; after that time it seeds the higher WAL);
# postgres_history_floor (issue 35's fault 4: minimumMembers 1, the members with the WAL off, the one back
# emptied: it never seeds, SeedBelowHistory; then the highest WAL seeds); postgres_suspend_hang (fault 5:
# spec.suspend with the primary's status hanging: each member stopped once, sequences recorded; resume);
# lightsout_nonzero (a lights-out when the primary, the newest WAL, is not ordinal 0); rollout (a pod
# template change: the standbys are rolled by rssd, the primary's pod deleted by hand as rssd asks);
# verify. After each: the seed had the highest sequence, every acknowledged id is on every member,
# every standby streams on the primary's timeline. Where rssd's behaviour today is slow (a lost
# primary stops both standbys and runs a lights-out recovery), the scenario asserts safety and prints
# the times. Which scenarios run by default: the table below (flavour.sh). On the real world the members
# have their own pod addresses: PG_NETWORK=dns (pg_rss). Exit 77 (skip) without root or debootstrap.
# Usage: postgres.sh [all | SCENARIO...]   (or PG_SCENARIOS="...")
set -euo pipefail

if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
    echo "postgres e2e: SKIP (needs root and debootstrap to build the image)"
    exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The agents' fence timeout, as safety.sh: api_outage freezes the API for twice as long plus 5 s.
export E2E_FENCE=${E2E_FENCE:-10s}
FENCE_S=${E2E_FENCE%s}
# shellcheck source=lib.sh disable=SC2154 # repo comes from lib.sh
. "$here/lib.sh"
. "$here/flavour.sh"
# The scenarios in the order they run, each with the world flavour it runs in by default (flavour.sh;
# docs/testing.md): without names those of RSS_WORLD_FLAVOUR's (kubesim: ctest e2e_postgres; real: tests/run.sh's
# real stage), `all` every one, names (or PG_SCENARIOS) the named ones. postgres_create always runs first
# and postgres_verify last. The rest are by name only (above).
table=(postgres_create:kubesim postgres_lightsout:kubesim postgres_staggered:kubesim postgres_killed:kubesim
    postgres_killed_promote:real postgres_api_outage:kubesim postgres_rssd_restart:kubesim
    postgres_primary_node_off:kubesim postgres_primary_stays_off:kubesim postgres_lightsout_nonzero:kubesim
    postgres_rollout:kubesim postgres_history_floor:kubesim postgres_suspend_hang:kubesim postgres_freeze_promote:real
    postgres_drain_primary:real postgres_switchover:real postgres_drain_switchover:real postgres_rollout_switchover:kubesim
    postgres_verify:kubesim)
if [ -n "${PG_SCENARIOS:-}" ]; then
    read -ra sel <<<"$PG_SCENARIOS"
else
    mapfile -t sel < <(select_scenarios "${table[@]}" -- "$@")
    [ "${sel[0]:-}" = postgres_create ] || sel=(postgres_create "${sel[@]}")
    [ "${sel[-1]}" = postgres_verify ] || sel+=(postgres_verify)
fi
R=postgres
C=postgres # the member container's name
export RSS_WORLD_HOOKS=${PG_HOOKS:-$repo/apps/postgres/hooks}
PG_NODE_OFF_S=${PG_NODE_OFF_S:-30}
ms_since() { echo $(($(now_ms) - $1)); }

# ---- the image: built once per machine (cached), imported into every node's containerd
t=$(now_ms)
IMAGE_TAR=$(bash "$repo/apps/postgres/image/build.sh" 2>"$E2E_TMP/image.log" | tail -n 1) ||
    { cat "$E2E_TMP/image.log" >&2; fail "apps/postgres/image/build.sh"; }
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

# pg_rss: apps/postgres/rss.yaml for this world. In the real one the pods have their own addresses on the
# CNI bridges (not the host's loopback): PG_NETWORK=dns, every member on 5432, the peers found by the
# cluster DNS (CoreDNS, tests/realk8s/world-real), as apps/postgres/README.md says for a cluster.
pg_rss() {
    if [ "$(world_flavour)" = real ]; then
        awk '{ print } /- name: PG_NETWORK$/ { getline; sub(/loopback/, "dns"); print }' "$repo/apps/postgres/rss.yaml"
    else
        cat "$repo/apps/postgres/rss.yaml"
    fi
}

# ---- members through ExecSync, as rssd reaches them
# port M: where member M's postgres listens (its socket in /run/pg has the same number).
if [ "$(world_flavour)" = real ]; then port() { echo 5432; }; else port() { echo $((15432 + $1)); }; fi
# mexec M CMD...: ExecSync in member M's container (found on its node); stdout only.
mexec() {
    local m=$1 node cid
    shift
    node=$(member_node "$R" "$m") && [ -n "$node" ] || return 1
    cid=$("$WORLD" crictl "$node" find "$NS" "$(member "$R" "$m")" "$C" 2>/dev/null) || return 1
    "$WORLD" crictl "$node" exec --timeout 30 "$cid" "$@" 2>/dev/null
}
# msql M SQL: one statement through member M's socket (unaligned, no header).
msql() { mexec "$1" psql -X -q -At -h /run/pg -p "$(port "$1")" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "$2"; }
pm_pid_of() { mexec "$1" sh -c 'head -n 1 /data/pgdata/postmaster.pid'; }

# rss_pg_running: Running, 3 ready, one primary and two secondaries in the status.
pg_running() {
    local s
    s=$(rss_json "$R") || return 1
    jq -c '{phase: .status.phase, ready: (.status.members.ready // [] | length), primary: .status.members.primary,
        secondary: (.status.members.secondary // [] | length), message: .status.message}' <<<"$s"
    jq -e '.status.phase == "Running" and ((.status.members.ready // []) | length) == 3
        and ((.status.members.primary // []) | length) == 1 and ((.status.members.secondary // []) | length) == 2' <<<"$s" >/dev/null
}
# primary_ordinal: the ordinal of the member rssd reports as primary.
primary_ordinal() {
    local p
    p=$(rss_json "$R" | jq -r '.status.members.primary[0] // ""')
    [ -n "$p" ] || return 1
    echo "${p##*-}"
}

# The writer: one INSERT per ExecSync (world-cri straight at the node's runtime) on the member that
# last took a write; after a failure the next member. Acknowledged: exit 0 and no output at all (psql
# -q prints nothing for a plain INSERT; a WARNING means a commit that may be only local).
WRITER_DIR=$E2E_TMP/writer
WORLD_CRI=$RSS_BUILD_DIR/tests/sim/world/kubelet/world-cri
writer() {
    local id=0 m=0 cids=() eps=() node out
    mkdir -p "$WRITER_DIR"
    until [ -e "$WRITER_DIR/go" ] || [ -e "$WRITER_DIR/stop" ]; do sleep 0.2; done
    while [ ! -e "$WRITER_DIR/stop" ]; do
        id=$((id + 1))
        if [ -z "${cids[m]:-}" ]; then
            node=$(member_node "$R" "$m" 2>/dev/null || true)
            eps[m]=$("$WORLD" cri "${node:-none}" 2>/dev/null || true)
            cids[m]=$("$WORLD_CRI" --endpoint "${eps[m]:-none}" find "$NS" "$(member "$R" "$m")" "$C" 2>/dev/null || true)
        fi
        if [ -n "${cids[m]}" ] && out=$("$WORLD_CRI" --endpoint "${eps[m]}" exec --timeout 10 "${cids[m]}" psql -X -q -At \
            -h /run/pg -p "$(port "$m")" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "INSERT INTO w VALUES ($id, $m)" 2>&1) &&
            [ -z "$out" ]; then
            echo "$id" >>"$WRITER_DIR/acked"
        else
            echo "$id $m ${out//$'\n'/ }" >>"$WRITER_DIR/failed"
            cids[m]=
            m=$(((m + 1) % 3))
            sleep 0.2
        fi
    done
}
acked() { wc -l 2>/dev/null <"$WRITER_DIR/acked" || echo 0; }
# lost_on M: how many acknowledged ids member M lacks (a standby is given 30 s to replay).
lost_on() {
    local m=$1 l end=$(($(date +%s) + 30))
    while :; do
        msql "$m" "SELECT id FROM w" | sort >"$E2E_TMP/present.$m" || { echo 999999; return; }
        l=$(comm -23 <(sort "$WRITER_DIR/acked") "$E2E_TMP/present.$m" | wc -l)
        [ "$l" -gt 0 ] && [ "$(date +%s)" -lt "$end" ] || break
        sleep 1
    done
    echo "$l"
}
# acked_ok: every id the writer saw acknowledged is on every member; notes the counts.
ACKED_MARK=$E2E_TMP/acked.cycle
acked_ok() {
    local before n m l lost=0 per=""
    before=$(cat "$ACKED_MARK" 2>/dev/null || echo 0)
    n=$(acked)
    echo "$n" >"$ACKED_MARK"
    for m in 0 1 2; do
        l=$(lost_on "$m")
        per+=" $m:$l"
        [ "$l" -gt "$lost" ] && lost=$l
    done
    note "writer: $n commits acknowledged so far ($((n - before)) this cycle), lost per member:$per; $(wc -l 2>/dev/null <"$WRITER_DIR/failed" || echo 0) attempts in all not acknowledged"
    [ "$lost" = 0 ] || fail "acknowledged commits lost (member:count):$per"
}
# timelines_ok: the primary's timeline; every standby streams from it on that timeline (no fork left).
timelines_ok() {
    local p m tli st
    p=$(primary_ordinal) || fail "no primary in the status"
    tli=$(msql "$p" "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int") || fail "primary's timeline"
    [ "$(msql "$p" 'SELECT pg_is_in_recovery()')" = f ] || fail "member $p is reported primary but is in recovery"
    for m in 0 1 2; do
        [ "$m" = "$p" ] && continue
        st=""
        for _ in $(seq 1 30); do
            st=$(msql "$m" "SELECT status || ' ' || received_tli || ' ' || sender_port FROM pg_stat_wal_receiver") || true
            [ "$st" = "streaming $tli $(port "$p")" ] && break
            sleep 1
        done
        [ "$st" = "streaming $tli $(port "$p")" ] || fail "member $m is not streaming from member $p on timeline $tli: '$st'"
    done
    note "primary member $p on timeline $tli; both standbys stream from it on that timeline"
}

# seq_of MARK: "pod sequence" of each member's last sequence hook after MARK.
seqs_since() {
    hook_lines "$1" "$R" sequence | sed -n 's/^[^ ]* \([^ ]*\) sequence .* out=\([0-9][0-9]*\) rc=0$/\1 \2/p' |
        awk '{ last[$1] = $2 } END { for (p in last) print p, last[p] }' | sort
}
# write_probe M T0: waits until member M takes a write; notes power-on/fault -> writable.
write_probe() {
    local t
    t=$(now_ms)
    until [ -z "$(msql "$1" "INSERT INTO probe VALUES (DEFAULT)" 2>&1)" ] && msql "$1" 'SELECT 1' >/dev/null; do
        [ $(($(now_ms) - t)) -lt 120000 ] || fail "member $1 not writable 120 s after Running"
        sleep 0.2
    done
}
# recover_and_check MARK T0 [LOW]: after power-on (or a fault) at T0, wait for one seed and two
# secondary starts, Running; the seed had the highest sequence (and was not member LOW); times.
recover_and_check() {
    local mark=$1 t0=$2 low=${3:-} seeds seqs best s m t_run
    recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null 'rc=0$' && [ "$(count_lines "$(hook_lines "$mark" "$R" secondary | grep 'rc=0$')")" -ge 2 ]; }
    wait_until 600 "a seed and 2 standby starts in the hooks logs" recovered
    wait_until 300 "$R Running with a primary and 2 secondaries" pg_running
    t_run=$(ms_since "$t0")
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$(grep 'rc=0$' <<<"$seeds")")" = 1 ] || fail "expected one successful seed, got: $seeds"
    seqs=$(seqs_since "$mark")
    [ "$(count_lines "$seqs")" = 3 ] || fail "expected a sequence from 3 members: $seqs"
    best=$(sort -k2,2n <<<"$seqs" | tail -n 1 | cut -d' ' -f2)
    s=$(grep 'rc=0$' <<<"$seeds" | awk '{print $2}')
    grep -q "^$s $best$" <<<"$seqs" || fail "the seed $s does not have the highest sequence ($best): $seqs"
    if [ -n "$low" ]; then
        [ "$s" != "$(member "$R" "$low")" ] || fail "member $low (first to die) seeded"
        m=$(awk -v p="$(member "$R" "$low")" '$1 == p { print $2 }' <<<"$seqs")
        [ "$m" -lt "$best" ] || fail "member $low's sequence ($m) is not below the seed's ($best)"
    fi
    [ "$(primary_ordinal)" = "${s##*-}" ] || fail "the seed $s is not the reported primary"
    note "sequences: $(tr '\n' ' ' <<<"$seqs"); seed $s ($(awk -v m="$mark" '$1 > m && $4 == "seed" { print $NF }' "$(claim_dir "$R" "${s##*-}")/hooks.times" | tail -n 1))"
    write_probe "${s##*-}"
    note "-> Running: $t_run ms; -> writable: $(ms_since "$t0") ms; hooks: $(hook_lines "$mark" "$R" stop seed secondary | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }')"
}
check_all() {
    sleep 2
    acked_ok
    timelines_ok
}

sc_postgres_create() {
    local t0
    t0=$(now_ms)
    pg_rss | k apply -f - >/dev/null || fail "kubectl apply apps/postgres/rss.yaml"
    wait_until 600 "$R Running with a primary and 2 secondaries" pg_running
    note "apply -> Running: $(ms_since "$t0") ms; primary member $(primary_ordinal)"
    [ "$(count_lines "$(hook_lines 0 "$R" seed)")" = 1 ] || fail "expected one seed: $(hook_lines 0 "$R" seed)"
    [ "$(count_lines "$(hook_lines 0 "$R" secondary | grep 'rc=0$')")" = 2 ] || fail "expected two standby starts: $(hook_lines 0 "$R" secondary)"
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
    msql "$(primary_ordinal)" "CREATE TABLE w (id int PRIMARY KEY, via int NOT NULL); CREATE TABLE probe (id serial PRIMARY KEY)" >/dev/null ||
        fail "create tables"
    touch "$WRITER_DIR/go"
    sleep 3
    [ "$(acked)" -gt 0 ] || fail "the writer got no commit acknowledged: $(tail -n 3 "$WRITER_DIR/failed" 2>/dev/null)"
    check_all
}

# All nodes at once, the writer running.
sc_postgres_lightsout() {
    local mark t0
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0"
    check_all
}

# A standby's node dies first; writes go on (the other standby acknowledges them); then the rest go
# dark. That standby has the oldest WAL: it must not seed.
sc_postgres_staggered() {
    wait_until 120 "$R Running" pg_running
    local p s mark t0 a0
    p=$(primary_ordinal)
    s=$(((p + 1) % 3))
    "$WORLD" power-off "$(member_node "$R" "$s")" >/dev/null 2>&1 || fail "power-off member $s's node"
    a0=$(acked)
    sleep 5
    note "member $s (a standby) off first; $(($(acked) - a0)) commits acknowledged after it"
    [ "$(acked)" -gt "$a0" ] || fail "no commit acknowledged with one standby down"
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0" "$s"
    check_all
}

# The primary's postgres SIGKILLed inside its container (container and node stay up).
sc_postgres_killed() {
    wait_until 120 "$R Running" pg_running
    local p mark t0
    p=$(primary_ordinal)
    # A crash soon after a start counts toward maxFailures (docs/planner.md): not this scenario's subject.
    sleep 20
    mark=$(now)
    t0=$(now_ms)
    mexec "$p" sh -c 'kill -KILL "$(head -n 1 /data/pgdata/postmaster.pid)"' >/dev/null || fail "kill postgres of member $p"
    note "killed the primary's postgres (member $p)"
    recover_and_check "$mark" "$t0"
    # Every start after the kill succeeded the first time: a killed postmaster leaves a zombie and
    # stale lock files in its container, which must not make the restart fail (and count failures).
    [ -z "$(hook_lines "$mark" "$R" seed secondary | grep -v 'rc=0$')" ] ||
        fail "a start failed after the kill: $(hook_lines "$mark" "$R" seed secondary | grep -v 'rc=0$')"
    check_all
}

# spec.failover PromoteStandby (rule 15): the primary's postgres SIGKILLed; the most advanced standby is
# promoted in place, the other standby is repointed without a stop, the old primary rejoins as a standby.
# Judged by the hook logs (no stop on the standbys, one promotion, on a former standby), the writer's
# accounting and the timelines; prints the time to writable. On a build without rule 15 the standbys
# get `stop` (NoPrimary) and the scenario fails.
sc_postgres_killed_promote() {
    wait_until 120 "$R Running" pg_running
    local p mark t0 seeds s o stops
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"failover":"PromoteStandby","synchronousStandbys":1}}' >/dev/null ||
        fail "patch spec.failover"
    p=$(primary_ordinal)
    sleep 20
    mark=$(now)
    t0=$(now_ms)
    mexec "$p" sh -c 'kill -KILL "$(head -n 1 /data/pgdata/postmaster.pid)"' >/dev/null || fail "kill postgres of member $p"
    note "killed the primary's postgres (member $p), spec.failover PromoteStandby"
    promoted() { hook_lines "$mark" "$R" seed | grep >/dev/null 'rc=0$'; }
    wait_until 300 "a promotion in the hooks logs" promoted
    s=$(hook_lines "$mark" "$R" seed | grep 'rc=0$' | awk '{print $2}' | sed -n 1p)
    [ "${s##*-}" != "$p" ] || fail "the old primary $s was seeded, not a standby promoted"
    detached_first "$mark" "$R" "$p" "${s##*-}"
    write_probe "${s##*-}"
    note "kill -> writable on $s: $(ms_since "$t0") ms"
    rejoined() { hook_lines "$mark" "$R" secondary | grep "$(member "$R" "$p") " | grep >/dev/null 'rc=0$'; }
    wait_until 300 "the old primary rejoined as a standby" rejoined
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    note "kill -> Running: $(ms_since "$t0") ms"
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected one promotion, got: $seeds"
    for o in 0 1 2; do
        [ "$o" = "$p" ] && continue
        stops=$(hook_lines "$mark" "$R" stop | grep "$(member "$R" "$o") " || true)
        [ -z "$stops" ] || fail "standby $o was stopped: $stops"
    done
    [ "$(primary_ordinal)" = "${s##*-}" ] || fail "the promoted $s is not the reported primary"
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }'); positions: $(hook_lines "$mark" "$R" sequence | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $(NF-1), $NF }')"
    check_all
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"failover":null,"synchronousStandbys":null}}' >/dev/null ||
        fail "remove spec.failover"
}


# how_of MARK ORDINAL HOOK: how= of member ORDINAL's last HOOK begun after MARK in its hooks.times
# ("restart" when the hook said nothing: a stop and start without rewind).
how_of() {
    awk -v m="$1" -v h="$3" '$1 > m && $4 == h { w = "restart"; for (i = 6; i <= NF; i++) if ($i ~ /^how=/) w = substr($i, 5) } END { print w }' \
        "$(claim_dir "$R" "$2")/hooks.times"
}
# iso_ms TIME: a hooks.log/hooks.times time (UTC, microseconds) in epoch milliseconds.
iso_ms() { date -u -d "$1" +%s%3N; }

# spec.failover PromoteStandby (rule 15) with the primary's node powered off and staying off. With the
# `detach` hook of apps/postgres and spec.silentNodePolicy Promote (rule 19) the leader promotes once the
# node's heartbeat is silent, before its dead verdict: the promotion must begin before the dead window
# ends, and each standby that answered detached first. With PG_NO_DETACH=1 (the policy Wait, the hook
# removed from the spec) the leader may promote only
# after its dead verdict (the dead window: fence timeout + 5 s + the stop hook's timeout + LEADER_KILL_MS,
# counted from the node's last heartbeat renewal, which is at most one heartbeat period + 1 s before the
# power-off). Judged by the hook logs: no stop on the standbys,
# exactly one promotion (a former standby's seed, begun no earlier than that bound), the other standby
# repointed; writes go on with the node still off; once the node is back the old primary rejoins with
# `secondary`, and every member is on the new primary's timeline with every acknowledged commit.
# Without the opt-in (row 8) both standbys get `stop` and the scenario fails.
sc_postgres_primary_node_off_promote() {
    wait_until 120 "$R Running" pg_running
    local p node mark t0 s sp o stops stop_ms dw lower begin a0 hb_s policy=Promote
    [ "${PG_NO_DETACH:-0}" != 1 ] || policy=Wait
    k patch rss "$R" -n "$NS" --type merge -p "{\"spec\":{\"failover\":\"PromoteStandby\",\"synchronousStandbys\":1,\"silentNodePolicy\":\"$policy\"}}" >/dev/null ||
        fail "patch spec.failover"
    [ "${PG_NO_OPT_IN:-0}" != 1 ] || { k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"failover":null,"silentNodePolicy":null}}' >/dev/null &&
        note "PG_NO_OPT_IN=1: spec.failover removed again (the scenario must fail)"; }
    local detach0 early=yes
    detach0=$(rss_json "$R" | jq -c '.spec.pod.commands.detach')
    if [ "${PG_NO_DETACH:-0}" = 1 ]; then
        k patch rss "$R" -n "$NS" --type json -p '[{"op":"remove","path":"/spec/pod/commands/detach"}]' >/dev/null ||
            fail "remove the detach hook"
        undo_on_exit "k patch rss $R -n $NS --type merge -p '{\"spec\":{\"pod\":{\"commands\":{\"detach\":$detach0}}}}'"
        early=no
    fi
    [ "$early" = no ] || [ "$detach0" != null ] || fail "the spec has no detach hook"
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    sleep 20
    stop_ms=$(rss_json "$R" | jq -r '.spec.pod.commands.stop.timeout // "90s"')
    stop_ms=$((${stop_ms%s} * 1000))
    hb_s=${E2E_HEARTBEAT%s}
    dw=$(((FENCE_S + 5) * 1000 + stop_ms + 5000))
    mark=$(now)
    t0=$(now_ms)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    note "the primary's node $node (member $p) off, spec.failover $(rss_json "$R" | jq -r '.spec.failover // "unset"'); dead window $dw ms"
    standby_stops() { hook_lines "$mark" "$R" stop | grep -v " $(member "$R" "$p") " || true; }
    standbys_not_stopped() {
        stops=$(standby_stops)
        [ -z "$stops" ] || fail "a standby was stopped: $stops"
    }
    # A stop on a standby ends the wait too: it fails at once instead of after the timeout.
    promoted() { hook_lines "$mark" "$R" seed | grep >/dev/null 'rc=0$' || [ -n "$(standby_stops)" ]; }
    wait_until $((dw / 1000 + 240)) "a promotion in the hooks logs" promoted
    standbys_not_stopped
    s=$(hook_lines "$mark" "$R" seed | grep 'rc=0$' | awk '{print $2}' | sed -n 1p)
    sp=${s##*-}
    [ "$sp" != "$p" ] || fail "the old primary $s was seeded with its node off"
    begin=$(awk -v m="$mark" '$1 > m && $4 == "seed" { print $1; exit }' "$(claim_dir "$R" "$sp")/hooks.times")
    begin=$(iso_ms "$begin")
    lower=$((t0 + dw - (hb_s + 1) * 1000))
    if [ "$early" = yes ]; then
        [ "$begin" -lt $((t0 + dw)) ] || fail "the promotion began $((begin - t0)) ms after the power-off, not before the dead window ($dw ms)"
        detached_first "$mark" "$R" "$p" "$sp"
    else
        [ "$begin" -ge "$lower" ] || fail "the promotion began $((begin - t0)) ms after the power-off, before the dead verdict (>= $((lower - t0)) ms)"
    fi
    write_probe "$sp"
    note "node off -> promotion begun: $((begin - t0)) ms (dead window $dw ms, detach hook: $early); node off -> writable on $s: $(ms_since "$t0") ms"
    # The node stays off a while longer: the new primary acknowledges commits with its one standby.
    a0=$(acked)
    sleep 15
    [ "$(acked)" -gt "$a0" ] || fail "no commit acknowledged on the new primary with the old one's node off"
    note "$(($(acked) - a0)) commits acknowledged in 15 s with the old primary's node still off"
    standbys_not_stopped
    "$WORLD" power-on "$node" >/dev/null 2>&1 || fail "power-on $node"
    rejoined() { hook_lines "$mark" "$R" secondary | grep "$(member "$R" "$p") " | grep >/dev/null 'rc=0$'; }
    wait_until 300 "the old primary rejoined as a standby" rejoined
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    note "node off -> Running with the old primary back: $(ms_since "$t0") ms"
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed)")" = 1 ] || fail "expected one promotion, got: $(hook_lines "$mark" "$R" seed)"
    standbys_not_stopped
    [ "$(primary_ordinal)" = "$sp" ] || fail "the promoted $s is not the reported primary"
    for o in 0 1 2; do
        [ "$o" = "$sp" ] && continue
        note "member $o's secondary: how=$(how_of "$mark" "$o" secondary)"
    done
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }'); positions: $(hook_lines "$mark" "$R" sequence | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $(NF-1), $NF }')"
    check_all
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"failover":null,"synchronousStandbys":null,"silentNodePolicy":null}}' >/dev/null ||
        fail "remove spec.failover"
}
# ---- issue 35's faults 1-3 under spec.failover PromoteStandby, as safety_failover.sh has them for the dummy
#      app, here with the writer's accounting: every acknowledged commit on every member, every standby on
#      the new primary's timeline (check_all). Judged by the hooks logs (lib.sh: failover_ended,
#      no_standby_stopped, promoted_one, secondary_of). By name only (PG_SCENARIOS), about 1.5-3 min each.

# pg_failover_on [STOP]: spec.failover PromoteStandby with synchronousStandbys 1 (the members' ANY 1), and the
# `stop` hook's command and timeout set to STOP (JSON) when given; all undone when the scenario ends.
pg_failover_on() {
    local stop0
    stop0=$(rss_json "$R" | jq -c '.spec.pod.commands.stop')
    k patch rss "$R" -n "$NS" --type merge -p "$(jq -nc --argjson stop "${1:-null}" '{spec: ({failover: "PromoteStandby",
        synchronousStandbys: 1} + if $stop then {pod: {commands: {stop: $stop}}} else {} end)}')" >/dev/null ||
        fail "patch spec.failover"
    undo_on_exit "k patch rss $R -n $NS --type merge -p '{\"spec\":{\"failover\":null,\"synchronousStandbys\":null,\"pod\":{\"commands\":{\"stop\":$stop0}}}}'"
    sleep 3 # the leader and the agents have the spec
}
pm_pids() { local m; for m in 0 1 2; do echo "$m $(pm_pid_of "$m" 2>/dev/null || echo -)"; done; }
hooks_short() { awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }'; }

# Fault 1: the primary's whole node frozen (kubelet, containerd, rssd, postgres) past the dead window; the
# most advanced standby is promoted and acknowledges commits with the other; then the node thaws. The old
# primary wakes up as a primary: it must be stopped (its agent's wake fence, rule 18, or the leader's
# DivergedPrimary, rule 17) and rejoin as a standby of the promoted one (pg_rewind: its WAL forked), the
# promoted one is never stopped, and no acknowledged commit is lost. The stop timeout is 15 s here (a fast
# shutdown takes about a second), or the dead window would keep the node frozen for 2 minutes.
sc_postgres_freeze_promote() {
    wait_until 120 "$R Running" pg_running
    local p node mark t0 s o a0 mark_thaw t_thaw stops dw
    pg_failover_on '{"timeout":"15s","command":["/hooks/stop"]}'
    dw=$((FENCE_S + 15 + 10))
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    lead_elsewhere "$node"
    wait_until 120 "$R Running" pg_running
    mark=$(now)
    t0=$(now_ms)
    "$WORLD" freeze "$node" >/dev/null || fail "freeze $node"
    undo_on_exit "\"\$WORLD\" thaw $node"
    note "froze $node (primary member $p), leader on $(leader_node), dead window $dw s"
    wait_until $((dw + 150)) "a promotion while $node is frozen" failover_ended "$mark" "$R" "$p"
    no_standby_stopped "$mark" "$R" "$p"
    s=$(promoted_one "$mark" "$R" "$p")
    detached_first "$mark" "$R" "$p" "$s"
    write_probe "$s"
    note "member $s promoted; node frozen -> writable on it: $(ms_since "$t0") ms"
    a0=$(acked)
    more() { [ "$(acked)" -ge $((a0 + 10)) ]; }
    wait_until 90 "10 commits acknowledged by the promoted member $s with $node frozen" more
    mark_thaw=$(now)
    t_thaw=$(now_ms)
    "$WORLD" thaw "$node" >/dev/null || fail "thaw $node"
    stopped() { [ -n "$(stops_of "$mark_thaw" "$R" "$p" "$s")" ]; }
    wait_until 60 "a stop of the old primary $p after the thaw" stopped
    stops=$(stops_of "$mark_thaw" "$R" "$s")
    [ -z "$stops" ] || fail "the promoted member $s was stopped after the thaw: $stops ($(events_since "$mark" Demoting "$R"))"
    note "node frozen $((t_thaw - t0)) ms; old primary stopped $(($(iso_ms "$(stops_of "$mark_thaw" "$R" "$p" | sed -n 1p | awk '{ print $1 }')") - t_thaw)) ms after the thaw; DivergedPrimary: $(events_since "$mark" DivergedPrimary "$R" | sed -n 1p | cut -c1-100)"
    wait_until 300 "the old primary $p rejoined as a standby of $s" secondary_of "$mark_thaw" "$R" "$p" "$s"
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the reported primary"
    [ -z "$(stops_of "$mark" "$R" "$s")" ] || fail "the promoted member $s was stopped: $(stops_of "$mark" "$R" "$s")"
    no_standby_stopped "$mark" "$R" "$p"
    promoted_one "$mark" "$R" "$p" >/dev/null
    o=$(others_of "$R" "$p" | grep -vx "$s")
    secondary_of "$mark" "$R" "$o" "$s" || fail "the other standby $o was not repointed to $s"
    note "old primary's rejoin: how=$(how_of "$mark_thaw" "$p" secondary); hooks: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# Fault 2: the primary's postgres killed while its `stop` is slow (20 s: the stop command wrapped in a
# sleep); while status.failover names the lost primary the leader's rssd pod is deleted. The new leader
# carries the failover on: no FailoverFallback, no `stop` on a standby, one promotion, the other standby
# repointed, the old primary rejoined as a standby, no acknowledged commit lost.
sc_postgres_leader_change_failover() {
    wait_until 120 "$R Running" pg_running
    local p node lnode mark t0 s o terms
    pg_failover_on '{"timeout":"90s","command":["/bin/sh","-c","sleep 20; exec /hooks/stop"]}'
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    lead_elsewhere "$node"
    lnode=$(leader_node) || fail "no leader"
    sleep 20 # a crash soon after a start counts toward maxFailures (postgres_killed_promote)
    mark=$(now)
    t0=$(now_ms)
    mexec "$p" sh -c 'kill -KILL "$(head -n 1 /data/pgdata/postmaster.pid)"' >/dev/null || fail "kill postgres of member $p"
    names_lost() { rss_json "$R" | jq -e --argjson p "$p" '.status.failover.lost == $p' >/dev/null; }
    wait_until 30 "status.failover naming the lost primary $p" names_lost
    [ -z "$(stops_of "$mark" "$R" "$p")" ] || fail "the slow stop of $p ended before the leader change"
    terms=$(lease_transitions)
    k delete pod -n "$RSSD_NS" "$(rssd_pod "$lnode")" --wait=false >/dev/null || fail "delete the leader's rssd pod on $lnode"
    note "killed the primary's postgres (member $p); the leader's rssd on $lnode deleted while status.failover named it"
    wait_until 300 "a promotion after the leader change" failover_ended "$mark" "$R" "$p"
    no_standby_stopped "$mark" "$R" "$p"
    s=$(promoted_one "$mark" "$R" "$p")
    [ "$(lease_transitions)" -gt "$terms" ] || fail "no new leader term since the leader's rssd was deleted"
    write_probe "$s"
    note "member $s promoted by the leader on $(leader_node); kill -> writable: $(ms_since "$t0") ms"
    o=$(others_of "$R" "$p" | grep -vx "$s")
    wait_until 120 "the other standby $o repointed to $s" secondary_of "$mark" "$R" "$o" "$s"
    wait_until 300 "the old primary $p rejoined as a standby of $s" secondary_of "$mark" "$R" "$p" "$s"
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the reported primary"
    no_standby_stopped "$mark" "$R" "$p"
    promoted_one "$mark" "$R" "$p" >/dev/null
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# Fault 3: a drain by hand of the primary's node: the primary's pod deleted (its container ends with the
# pod: postgres killed after the grace period, the image's PID 1 ignores SIGTERM), the node cordoned right
# after (a cordon first makes the primary hand over: postgres_drain_switchover). A promotion, no standby
# stopped, commits go on; the replacement pod stays Pending while the node is cordoned and nothing else
# happens; after the uncordon it joins as a standby of the new primary.
sc_postgres_drain_primary() {
    wait_until 120 "$R Running" pg_running
    local p node pod uid0 mark t0 s o a0 quiet before
    pg_failover_on
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    pod=$(member "$R" "$p")
    uid0=$(member_uid "$R" "$p")
    mark=$(now)
    t0=$(now_ms)
    k delete pod "$pod" -n "$NS" --wait=false >/dev/null || fail "delete the primary's pod $pod"
    k cordon "$node" >/dev/null || fail "cordon $node"
    undo_on_exit "k uncordon $node"
    wait_until 300 "a promotion after the drain" failover_ended "$mark" "$R" "$p"
    no_standby_stopped "$mark" "$R" "$p"
    s=$(promoted_one "$mark" "$R" "$p")
    write_probe "$s"
    note "deleted $pod (the primary), cordoned $node: member $s promoted, writable $(ms_since "$t0") ms after the delete"
    o=$(others_of "$R" "$p" | grep -vx "$s")
    wait_until 120 "the other standby $o repointed to $s" secondary_of "$mark" "$R" "$o" "$s"
    quiet=$(now)
    before=$(pm_pids | grep -v "^$p ")
    a0=$(acked)
    sleep 15
    [ -z "$(hook_lines "$quiet" "$R" stop seed primary secondary)" ] ||
        fail "rssd acted while the node was cordoned: $(hook_lines "$quiet" "$R" stop seed primary secondary | hooks_short)"
    [ "$before" = "$(pm_pids | grep -v "^$p ")" ] || fail "a postgres restarted while cordoned: before [$before] after [$(pm_pids | tr '\n' ' ')]"
    k get pod "$pod" -n "$NS" -o json | jq -e --arg u "$uid0" '.metadata.uid != $u and .status.phase == "Pending"
        and (.spec.nodeName // "") == ""' >/dev/null || fail "the replacement of $pod is not Pending"
    [ "$(acked)" -gt "$a0" ] || fail "no commit acknowledged while the node was cordoned"
    note "15 s cordoned: the replacement Pending, no action, $(($(acked) - a0)) commits acknowledged"
    k uncordon "$node" >/dev/null || fail "uncordon $node"
    wait_until 300 "the replacement $pod joined as a standby of $s" secondary_of "$mark" "$R" "$p" "$s"
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the reported primary"
    no_standby_stopped "$mark" "$R" "$p"
    promoted_one "$mark" "$R" "$p" >/dev/null
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# A planned switchover (issue 36 item 3) under the writer: kubectl rss switchover stops the primary with its
# `stop` hook (a fast shutdown: PostgreSQL sends its standbys the WAL it wrote before it exits), the most
# advanced standby is promoted, the other repointed without a stop, the old primary rejoins as a standby of
# the new one; every acknowledged commit on every member, one timeline. Writable: the request to the
# first write the new primary acknowledged.
sc_postgres_switchover() {
    wait_until 120 "$R Running" pg_running
    local p s o mark t0 out
    pg_failover_on
    p=$(primary_ordinal)
    mark=$(now)
    t0=$(now_ms)
    out=$(krss switchover "$R" --yes 2>&1) || fail "kubectl rss switchover: $out"
    wait_until 120 "the switchover's promotion" failover_ended "$mark" "$R" "$p"
    no_standby_stopped "$mark" "$R" "$p"
    s=$(promoted_one "$mark" "$R" "$p")
    write_probe "$s"
    note "switchover from member $p: member $s promoted, writable $(ms_since "$t0") ms after the request"
    [ -n "$(stops_of "$mark" "$R" "$p")" ] || fail "the old primary $p was not stopped by its stop hook"
    o=$(others_of "$R" "$p" | grep -vx "$s")
    wait_until 120 "the other standby $o repointed to $s" secondary_of "$mark" "$R" "$o" "$s"
    wait_until 300 "the old primary $p rejoined as a standby of $s" secondary_of "$mark" "$R" "$p" "$s"
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the reported primary"
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# A real `kubectl drain` of the primary's node (issue 36 item 3): the primary's own PodDisruptionBudget
# refuses its eviction until it handed over (its stop hook, the most advanced standby promoted on another
# node, the other repointed); the drain's retry then evicts it and completes; after the uncordon its
# replacement rejoins as a standby. One promotion, no standby stopped, every acknowledged commit on every
# member.
sc_postgres_drain_switchover() {
    wait_until 120 "$R Running" pg_running
    local p node pod s o mark t0 dpid drained out="$E2E_TMP/postgres-drain.out"
    pg_failover_on
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    pod=$(member "$R" "$p")
    mark=$(now)
    t0=$(now_ms)
    undo_on_exit "k uncordon $node"
    k drain "$node" --pod-selector="rss.clusterlabs.org/name=$R" --ignore-daemonsets --delete-emptydir-data \
        --timeout=180s >"$out" 2>&1 &
    dpid=$!
    wait_until 120 "the drain's switchover" failover_ended "$mark" "$R" "$p"
    no_standby_stopped "$mark" "$R" "$p"
    s=$(promoted_one "$mark" "$R" "$p")
    write_probe "$s"
    note "drain of $node: member $s promoted, writable $(ms_since "$t0") ms after kubectl drain began"
    detached_first "$mark" "$R" "$p" "$s"
    [ -n "$(stops_of "$mark" "$R" "$p")" ] || fail "the old primary $p was not stopped by its stop hook"
    [ "$(member_node "$R" "$s")" != "$node" ] || fail "member $s on the cordoned $node was promoted"
    wait "$dpid" || fail "kubectl drain $node: $(tail -n 5 "$out")"
    drained=$(ms_since "$t0")
    grep >/dev/null "evicting pod $NS/$pod" "$out" || fail "kubectl drain did not evict $pod: $(cat "$out")"
    o=$(others_of "$R" "$p" | grep -vx "$s")
    wait_until 120 "the other standby $o repointed to $s" secondary_of "$mark" "$R" "$o" "$s"
    k uncordon "$node" >/dev/null || fail "uncordon $node"
    wait_until 300 "$pod back as a standby of $s" secondary_of "$mark" "$R" "$p" "$s"
    wait_until 120 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the reported primary"
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed primary)")" = 1 ] || fail "one promotion expected: $(hook_lines "$mark" "$R" seed primary | hooks_short)"
    note "kubectl drain: the eviction refused $(grep -c 'disruption budget' "$out") time(s), drained in $drained ms (the old pod's grace period included); hooks: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# The rolling update under PromoteStandby (issue 36 item 3): nothing deleted by hand. rssd rolls both
# standbys, then the primary hands over (a switchover: its stop hook, the most advanced standby promoted,
# the other repointed), and its stopped pod is recreated from the new template and rejoins as a standby.
# One promotion and no other seed; every acknowledged commit on every member.
sc_postgres_rollout_switchover() {
    wait_until 120 "$R Running" pg_running
    local p s mark t0 containers want
    pg_failover_on
    p=$(primary_ordinal)
    mark=$(now)
    t0=$(now_ms)
    containers=$(rss_json "$R" | jq -c --arg v "$mark" '.spec.pod.containers | .[0].env = ((.[0].env // []) | map(select(.name != "ROLLOUT")) + [{name: "ROLLOUT", value: $v}])')
    k patch rss "$R" -n "$NS" --type merge -p "{\"spec\":{\"pod\":{\"containers\":$containers}}}" >/dev/null || fail "patch the template"
    rolled() {
        want=$(k get sts "$(sts_name "$R")" -n "$NS" -o jsonpath='{.status.updateRevision}')
        [ -n "$want" ] && members_json "$R" | jq -e --arg w "$want" '(.items | length) == 3 and all(.items[];
            .metadata.labels["controller-revision-hash"] == $w and .metadata.deletionTimestamp == null)' >/dev/null && pg_running
    }
    wait_until 420 "every member on the new revision and Running, no pod deleted by hand" rolled
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed primary)")" = 1 ] || fail "one promotion expected: $(hook_lines "$mark" "$R" seed primary | hooks_short)"
    s=$(promoted_one "$mark" "$R" "$p")
    [ "$(primary_ordinal)" = "$s" ] || fail "the promoted member $s is not the primary"
    secondary_of "$mark" "$R" "$p" "$s" || fail "the old primary $p did not rejoin as a standby of $s: $(hook_lines "$mark" "$R" secondary | hooks_short)"
    events_since "$mark" Switchover "$R" | grep >/dev/null "rolling update to revision" || fail "no Switchover Event of the rolling update"
    note "rolled in $(ms_since "$t0") ms, the primary handed over to $s: $(hook_lines "$mark" "$R" stop seed secondary | hooks_short)"
    check_all
}

# The API server hangs for twice the fence timeout while the writer runs: the agents reach each other,
# so nothing stops; no hook but status runs, postgres keeps its pid and keeps acknowledging commits.
sc_postgres_api_outage() {
    wait_until 120 "$R Running" pg_running
    local m pids=() mark a0 a1 acts p
    p=$(primary_ordinal)
    for m in 0 1 2; do pids[m]=$(pm_pid_of "$m") || fail "no postmaster pid on member $m"; done
    mark=$(now)
    a0=$(acked)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    a1=$(acked)
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    wait_until 90 "$R Running" pg_running
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    # Safety: the primary is never touched, nothing seeds, and no standby is stopped either: a new
    # leader after the thaw that sees the primary's report from before its epoch waits for a current one
    # (rule 12: unobserved is not stopped) instead of judging "no primary" (NoPrimary) and stopping the
    # standbys, as rssd did before that rule.
    ! grep -q " $(member "$R" "$p") \| seed " <<<"$acts" || fail "the API outage made rssd act on the primary or seed: $acts"
    [ "$(pm_pid_of "$p")" = "${pids[p]}" ] || fail "the primary's postgres (member $p) restarted"
    [ "$a1" -gt "$a0" ] || fail "no commit acknowledged while the API was frozen"
    note "API frozen $((2 * FENCE_S + 5)) s: the primary untouched (same postmaster pid), $((a1 - a0)) commits acknowledged meanwhile"
    [ -z "$acts" ] || fail "the API outage made rssd act on standbys: $(awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }' <<<"$acts")($(events_since "$mark" NoPrimary "$R" | sed -n 1p))"
    for m in 0 1 2; do
        [ "$(pm_pid_of "$m")" = "${pids[m]}" ] || fail "postgres of member $m restarted without a hook"
    done
    note "no action at all, same postmaster pids everywhere"
    check_all
}

# rssd SIGKILLed on the primary's node: it comes back, re-probes (status), runs nothing else; postgres
# keeps its pid, commits go on.
sc_postgres_rssd_restart() {
    wait_until 120 "$R Running" pg_running
    local p node pid mark before a0 acts
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    pid=$(rssd_pid "$node") || fail "no rssd pid on $node"
    before=$(pm_pid_of "$p")
    mark=$(now)
    a0=$(acked)
    kill -KILL "$pid"
    newpid() {
        local q
        q=$(rssd_pid "$node") || return 1
        [ "$q" != "$pid" ] && [ -d "/proc/$q" ]
    }
    wait_until 60 "rssd restarted on $node" newpid
    reprobed() { hooks_since "$mark" "$R" | awk -v p="$(member "$R" "$p")" '$2 == p && $3 == "status"' | grep >/dev/null .; }
    wait_until 60 "member $p probed by the new agent" reprobed
    sleep 5
    wait_until 60 "$R Running" pg_running
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "hooks ran after the rssd restart: $acts"
    [ "$(pm_pid_of "$p")" = "$before" ] || fail "the primary's postgres restarted"
    [ "$(acked)" -gt "$a0" ] || fail "no commit acknowledged across the rssd restart"
    note "rssd $pid killed on $node (the primary's); back, re-probed, no action; $(($(acked) - a0)) commits acknowledged meanwhile"
    check_all
}

# The primary's node powers off for PG_NODE_OFF_S seconds, then comes back. Today rssd stops both
# standbys (no primary on a live node) and, since the lost member may hold the newest WAL (rule 3),
# seeds nothing until it is back: safe, and an outage as long as the node is off.
sc_postgres_primary_node_off() {
    wait_until 120 "$R Running" pg_running
    local p node mark t0 t_on acts
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    mark=$(now)
    t0=$(now_ms)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    sleep "$PG_NODE_OFF_S"
    acts=$(hook_lines "$mark" "$R" seed primary secondary)
    [ -z "$acts" ] || fail "a start while the primary's node was off: $acts"
    note "primary member $p's node off $PG_NODE_OFF_S s: no start meanwhile; stops: $(hook_lines "$mark" "$R" stop | awk '{ printf "%s ", $2 }')"
    t_on=$(now_ms)
    "$WORLD" power-on "$node" >/dev/null 2>&1 || fail "power-on $node"
    recover_and_check "$mark" "$t0"
    note "the node's power-on -> writable: $(ms_since "$t_on") ms"
    check_all
}

# power_on_rejoin NODE ORD RECOVERY: powers NODE on again; member ORD (the old primary) rejoins with
# `secondary`, or is held back (NewerThanSeed) until spec.recovery is RECOVERY (JSON) with onNewerLateMember
# Join (its unacknowledged WAL given up). Sets REJOIN_MARK (before the power-on) and REJOIN_HELD (yes/no).
power_on_rejoin() {
    local node=$1 o=$2 rec=$3
    REJOIN_MARK=$(now)
    REJOIN_HELD=no
    "$WORLD" power-on "$node" >/dev/null 2>&1 || fail "power-on $node"
    rejoined() { hook_lines "$REJOIN_MARK" "$R" secondary | grep >/dev/null " $(member "$R" "$o") secondary .*rc=0$"; }
    back() { rejoined || events_since "$REJOIN_MARK" NewerThanSeed "$R" | grep >/dev/null .; }
    wait_until 300 "the old primary to rejoin or be held back" back
    rejoined && return 0
    REJOIN_HELD=yes
    note "held back: $(events_since "$REJOIN_MARK" NewerThanSeed "$R" | sed -n 1p)"
    k patch rss "$R" -n "$NS" --type merge \
        -p "{\"spec\":{\"recovery\":$(jq -c '. + {onNewerLateMember: "Join"}' <<<"$rec")}}" >/dev/null ||
        fail "patch onNewerLateMember"
    wait_until 300 "the old primary to rejoin" rejoined
}

# The primary's node stays off. The admin sets minimumMembers 2 (docs/operations.md): the higher
# standby is seeded, a promotion to a new timeline (every acknowledged commit is on at least one
# standby: ANY 1). The old primary's node then returns: it rejoins as a standby (pg_rewind when its WAL
# went past the fork); if it comes back with a higher sequence than the seed had, rssd holds it back
# (NewerThanSeed) and the admin lets it join (onNewerLateMember: Join: its unacknowledged WAL is given up).
sc_postgres_primary_stays_off() {
    wait_until 120 "$R Running" pg_running
    local p node mark t0 s
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    mark=$(now)
    t0=$(now_ms)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    sleep 15
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed while the primary's node was off"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":2}}}' >/dev/null || fail "patch minimumMembers"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null 'rc=0$'; }
    wait_until 300 "a seed among the two standbys" seeded
    s=$(hook_lines "$mark" "$R" seed | grep 'rc=0$' | awk '{print $2}')
    [ "${s##*-}" != "$p" ] || fail "the old primary seeded while its node was off"
    best=$(seqs_since "$mark" | sort -k2,2n | tail -n 1 | cut -d' ' -f2)
    [ "$(seqs_since "$mark" | awk -v s="$s" '$1 == s { print $2 }')" = "$best" ] ||
        fail "the seed $s is not the higher standby: $(seqs_since "$mark" | tr '\n' ' ')"
    two() { [ "$(primary_ordinal)" = "${s##*-}" ] && hook_lines "$mark" "$R" secondary | grep >/dev/null 'rc=0$'; }
    wait_until 300 "the new primary and one standby" two
    write_probe "${s##*-}"
    note "node off -> writable on $s: $(ms_since "$t0") ms (including 15 s before the admin's minimumMembers); seed: $(awk -v m="$mark" '$1 > m && $4 == "seed" { print $NF }' "$(claim_dir "$R" "${s##*-}")/hooks.times" | tail -n 1)"
    power_on_rejoin "$node" "$p" '{"minimumMembers":2}'
    wait_until 120 "$R Running" pg_running
    note "old primary $p rejoined ($(awk -v m="$REJOIN_MARK" '$1 > m && $4 == "secondary" { print $NF }' "$(claim_dir "$R" "$p")/hooks.times" | tail -n 1); held back first: $REJOIN_HELD)"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":null}}' >/dev/null || fail "patch recovery null"
    check_all
}

# Issue 35's fault 6 with PostgreSQL (by name): a lights-out, every node back but the primary's. An admin's
# force-seed of the standby with the higher WAL before the leader judged that node dead is refused, and the
# Warning says whom (the old primary, last reported primary), why (its node silent) and when the leader
# will know (its dead window's end); the annotation is removed. After that time the same force-seed seeds
# it: no acknowledged commit is lost (ANY 1: each is on a standby, and the higher WAL holds them all). The
# old primary's node returns and it rejoins (pg_rewind), or is held back (NewerThanSeed) until Join.
sc_postgres_force_seed_early() {
    wait_until 120 "$R Running" pg_running
    local p node mark n best early warning ends ends_s
    p=$(primary_ordinal)
    node=$(member_node "$R" "$p")
    sleep 2
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    for n in $("$WORLD" nodes); do
        [ "$n" = "$node" ] || "$WORLD" power-on "$n" >/dev/null 2>&1 || fail "power-on $n"
    done
    two_seqs() { [ "$(count_lines "$(seqs_since "$mark")")" -ge 2 ]; }
    wait_until 120 "the two members back to report their sequences" two_seqs
    best=$(seqs_since "$mark" | sort -k2,2n | tail -n 1 | cut -d' ' -f1)
    # Asked once the leader calls the node silent (a new leader has seen its heartbeat stand still), and
    # before its dead window ends.
    silent() { rss_json "$R" | jq -r '.status.message // ""' | grep >/dev/null "node $node is silent"; }
    wait_until 60 "the leader to call $node silent" silent
    early=$(now)
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$best" >/dev/null || fail "annotate"
    refused() { grep -q "^Warning " <<<"$(events_since "$early" ForceSeedRefused "$R")"; }
    wait_until 30 "the early force-seed to be refused" refused
    warning=$(events_since "$early" ForceSeedRefused "$R" | sed -n 1p)
    [[ $warning == *"force-seed of $best refused: a member runs or may run: $(member "$R" "$p") last reported primary"*"its node $node has been silent since "*"dead window ends at "*"retry after that"* ]] ||
        fail "the refusal does not say whom, why and until when: $warning"
    note "${warning:0:300}"
    removed() { [ -z "$(rss_json "$R" | jq -r '.metadata.annotations["rss.clusterlabs.org/force-seed"] // ""')" ]; }
    wait_until 30 "the refused annotation to be removed" removed
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed while the primary's node was off: $(hook_lines "$mark" "$R" seed)"
    ends=$(sed -n 's/.*dead window ends at \([^ ]*\) (in.*/\1/p' <<<"$warning")
    ends_s=$(date -d "$ends" +%s) || fail "no time in: $warning"
    while [ "$(date +%s)" -le "$ends_s" ]; do sleep 1; done
    judged() { rss_json "$R" | jq -r '.status.message // ""' | grep >/dev/null "waiting for 1 of 3 member(s)"; }
    wait_until 60 "the leader to judge $node dead" judged
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$best" >/dev/null || fail "annotate again"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null " $best seed args=\[\] rc=0$"; }
    wait_until 60 "$best to seed on the admin's word" seeded
    events_since "$mark" ForceSeed "$R" | grep >/dev/null "^Warning .*force-seed by the admin: $best seeds" ||
        fail "no ForceSeed Warning: $(events_since "$mark" ForceSeed "$R")"
    joined() { hook_lines "$mark" "$R" secondary | grep >/dev/null 'rc=0$'; }
    wait_until 120 "the other standby to join $best" joined
    write_probe "${best##*-}"
    power_on_rejoin "$node" "$p" '{}'
    wait_until 120 "$R Running" pg_running
    note "force-seed of $best after $node's dead window; the old primary rejoined (held back first: $REJOIN_HELD)"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":null}}' >/dev/null || fail "patch recovery null"
    check_all
}

# Issue 35's fault 4 with PostgreSQL: under minimumMembers 1, a lights-out where the members holding the WAL
# stay off and the one whose node comes back has an emptied volume (a re-created PersistentVolume). Its
# `sequence` is 0, below the history rssd already started from (the marks, lastRecovery): it must never
# seed (no initdb in place of the database; Warning SeedBelowHistory once the others are judged dead).
# Once they are back the highest WAL seeds, the emptied member joins by pg_basebackup, no commit lost.
sc_postgres_history_floor() {
    wait_until 120 "$R Running" pg_running
    local e on n mark
    e=$(others_of "$R" "$(primary_ordinal)" | sed -n 1p)
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":1}}}' >/dev/null ||
        fail "patch spec.recovery.minimumMembers"
    undo_on_exit "k patch rss $R -n $NS --type merge -p '{\"spec\":{\"recovery\":null}}'"
    on=$(member_node "$R" "$e")
    sleep 2
    power_off_all
    rm -rf "$(claim_dir "$R" "$e")/pgdata"
    mark=$(now)
    "$WORLD" power-on "$on" >/dev/null 2>&1 || fail "power-on $on"
    below() { events_since "$mark" SeedBelowHistory "$R" | grep >/dev/null "^Warning "; }
    wait_until 300 "a Warning SeedBelowHistory once the other nodes are judged dead" below
    sleep 3
    [ -z "$(hook_lines "$mark" "$R" seed primary secondary)" ] ||
        fail "the emptied member $e started: $(hook_lines "$mark" "$R" seed primary secondary)"
    note "member $e emptied, alone: $(events_since "$mark" SeedBelowHistory "$R" | sed -n 1p | cut -c1-260)"
    for n in $("$WORLD" nodes); do
        [ "$n" = "$on" ] || "$WORLD" power-on "$n" >/dev/null 2>&1 || fail "power-on $n"
    done
    wait_until 300 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed | grep 'rc=0$')")" = 1 ] || fail "one seed expected: $(hook_lines "$mark" "$R" seed)"
    [ "$(primary_ordinal)" != "$e" ] || fail "the emptied member $e is the primary"
    note "hooks: $(hook_lines "$mark" "$R" stop seed secondary | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }')"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"recovery":null}}' >/dev/null || fail "reset spec.recovery"
    check_all
}

# A lights-out while the primary is not ordinal 0 (after primary_stays_off), and ordinal 0 (a standby)
# went dark first, so its WAL is strictly older: the seed is not ordinal 0, which a StatefulSet would
# start first. (With every member dark at once, synchronous standbys often end at the primary's exact
# WAL position; a tie goes to the lowest ordinal, rightly, and proves nothing here.)
sc_postgres_lightsout_nonzero() {
    wait_until 120 "$R Running" pg_running
    local p mark t0 a0 s
    p=$(primary_ordinal)
    [ "$p" != 0 ] || fail "the primary is ordinal 0: run primary_stays_off first"
    "$WORLD" power-off "$(member_node "$R" 0)" >/dev/null 2>&1 || fail "power-off member 0's node"
    a0=$(acked)
    sleep 5
    [ "$(acked)" -gt "$a0" ] || fail "no commit acknowledged with member 0 down"
    note "member 0 (a standby) off first; $(($(acked) - a0)) commits acknowledged after it"
    power_off_all
    wait_heartbeats_expired
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recover_and_check "$mark" "$t0" 0
    s=$(hook_lines "$mark" "$R" seed | grep 'rc=0$' | awk '{print $2}')
    [ "${s##*-}" != 0 ] || fail "ordinal 0 seeded although its WAL was the oldest (member $p was the primary)"
    check_all
}

# A pod template change: rssd rolls the standbys itself (stop, pod recreated, secondary); it never
# stops the only primary and says so, so the primary's pod is deleted by hand as its message asks.
sc_postgres_rollout() {
    wait_until 120 "$R Running" pg_running
    local p mark t0 containers want waiting t_del
    p=$(primary_ordinal)
    mark=$(now)
    t0=$(now_ms)
    containers=$(rss_json "$R" | jq -c --arg v "$mark" '.spec.pod.containers | .[0].env = ((.[0].env // []) | map(select(.name != "ROLLOUT")) + [{name: "ROLLOUT", value: $v}])')
    k patch rss "$R" -n "$NS" --type merge -p "{\"spec\":{\"pod\":{\"containers\":$containers}}}" >/dev/null || fail "patch the template"
    standbys_rolled() {
        want=$(k get sts "$(sts_name "$R")" -n "$NS" -o jsonpath='{.status.updateRevision}')
        [ -n "$want" ] && members_json "$R" | jq -e --arg w "$want" --arg p "$(member "$R" "$p")" '[.items[] | select(.metadata.name != $p
            and .metadata.labels["controller-revision-hash"] == $w and .metadata.deletionTimestamp == null)] | length == 2' >/dev/null &&
            pg_running
    }
    wait_until 300 "both standbys on the new revision and running" standbys_rolled
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed while rolling the standbys"
    [ "$(primary_ordinal)" = "$p" ] || fail "the primary moved while rolling the standbys"
    note "standbys rolled in $(ms_since "$t0") ms: $(hook_lines "$mark" "$R" stop secondary | awk '{ sub("rss-postgres-", "", $2); printf "%s:%s:%s ", $2, $3, $NF }')"
    waiting() { rss_json "$R" | jq -r '.status.message // ""' | grep >/dev/null 'delete the pod by hand'; }
    wait_until 60 "rssd's message asking for the primary's pod to be deleted" waiting
    note "rssd: $(rss_json "$R" | jq -r '.status.message')"
    mark=$(now)
    t_del=$(now_ms)
    k delete pod "$(member "$R" "$p")" -n "$NS" --wait=false >/dev/null || fail "delete the primary's pod"
    recover_and_check "$mark" "$t_del"
    rolled() {
        want=$(k get sts "$(sts_name "$R")" -n "$NS" -o jsonpath='{.status.updateRevision}')
        members_json "$R" | jq -e --arg w "$want" '(.items | length) == 3 and all(.items[]; .metadata.labels["controller-revision-hash"] == $w)' >/dev/null
    }
    wait_until 120 "every member on the new revision" rolled
    check_all
}

# Issue 35's fault 5 with PostgreSQL: spec.suspend while the primary's `status` hangs (a wrapper around the
# hook sleeps while /data/hang-status exists, after leaving /data/status-hung as its trace). Each member is
# stopped once, highest ordinal first, the primary last: its `stop` returning 0 is the member's word that
# postgres stopped, the hung `status` after it does not make rssd stop it again; every sequence at stop
# recorded (an LSN, the hung one too); then a resume seeds the highest WAL, no commit lost.
sc_postgres_suspend_hang() {
    wait_until 120 "$R Running" pg_running
    local p mark stops knob status0 seqs
    p=$(primary_ordinal)
    knob=$(claim_dir "$R" "$p")/hang-status
    status0=$(rss_json "$R" | jq -c '.spec.pod.commands.status')
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"pod":{"commands":{"status":{"timeout":"20s","command":["/bin/sh","-c","if [ -e /data/hang-status ]; then touch /data/status-hung; exec sleep 3600; fi; exec /hooks/status"]}}}}}' >/dev/null ||
        fail "patch the status command"
    undo_on_exit "rm -f $knob; k patch rss $R -n $NS --type merge -p '{\"spec\":{\"suspend\":null,\"pod\":{\"commands\":{\"status\":$status0}}}}'"
    sleep 3
    rm -f "$(claim_dir "$R" "$p")/status-hung"
    : >"$knob"
    mark=$(now)
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "suspend"
    suspended() { [ "$(rss_phase "$R")" = Suspended ] && [ "$(members_json "$R" | jq '.items | length')" = 0 ]; }
    wait_until 180 "$R Suspended with no pods left" suspended
    [ -e "$(claim_dir "$R" "$p")/status-hung" ] || fail "member $p's status never hung: the scenario tried nothing"
    stops=$(hook_lines "$mark" "$R" stop | awk '{print $2}' | tr '\n' ' ')
    [ "$(tr ' ' '\n' <<<"$stops" | grep -c .)" = 3 ] && [ "$(tr ' ' '\n' <<<"$stops" | grep -c "^$(member "$R" "$p")\$")" = 1 ] ||
        fail "each member stopped once expected: '$stops'"
    [[ $stops == *"$(member "$R" "$p") " ]] || fail "the primary $p is not stopped last: '$stops'"
    seqs=$(rss_json "$R" | jq -c '.status.suspended.sequences')
    [ "$(jq 'length' <<<"$seqs")" = 3 ] || fail "no sequence at stop for every member: $seqs"
    jq -e --arg m "$(member "$R" "$p")" '.[$m] | tostring | test("^[0-9]+$")' <<<"$seqs" >/dev/null ||
        fail "the hung primary's sequence at stop is not an LSN: $seqs"
    note "stopped: $stops; at stop: $seqs"
    rm -f "$knob"
    k patch rss "$R" -n "$NS" --type merge -p "{\"spec\":{\"suspend\":false,\"pod\":{\"commands\":{\"status\":$status0}}}}" >/dev/null ||
        fail "resume"
    wait_until 300 "$R Running with a primary and 2 secondaries" pg_running
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed | grep 'rc=0$')")" = 1 ] || fail "one seed expected: $(hook_lines "$mark" "$R" seed)"
    [ "$(primary_ordinal)" = "$p" ] || note "member $(primary_ordinal) seeded (its WAL as high as $p's)"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"suspend":null}}' >/dev/null || fail "reset spec.suspend"
    check_all
}

sc_postgres_verify() {
    touch "$WRITER_DIR/stop"
    sleep 2
    acked_ok
    timelines_ok
    [ -z "$(hooks_malformed "$R")" ] || fail "malformed hooks.log lines: $(hooks_malformed "$R")"
    note "hook runs: $(hooks_all "$R" | awk '{print $3}' | sort | uniq -c | tr -s ' \n' ' ')"
}

# The writer belongs to this shell (teardown kills it by pid); it starts once create made its table.
mkdir -p "$WRITER_DIR"
bg writer
say "postgres: $(world_flavour) world, scenarios: ${sel[*]}"
run_scenarios 1 "${sel[@]}"
