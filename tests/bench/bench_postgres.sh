#!/usr/bin/env bash
# bench_postgres.sh -- rssd and Patroni side by side on PostgreSQL 15 (same packages, same writer, same faults): time to writable and acknowledged commits lost per fault; prints figures, asserts nothing.
#
# Usage: tests/bench/bench_postgres.sh [--no-rssd] [--no-patroni] [--promote] [--failover-only] [CYCLES]
#        (CYCLES per fault, default 1)
#
# rssd: tests/e2e/postgres.sh with the fault scenarios (killed, primary_node_off, lightsout, staggered,
# api_outage) in the 3-node world; its "->" lines are the figures. --promote adds the same two
# primary faults under spec.failover PromoteStandby (killed_promote, primary_node_off_promote: one
# standby promoted, nothing stopped) beside the default path. --failover-only keeps the two primary
# faults only (the primary's postgres killed, the primary's node off), for rssd and Patroni.
# Patroni (Debian's patroni 3.0, python3-etcd, etcd-server 3.4 with the v2 API as the DCS) runs three
# members as host processes on 127.0.0.1 (postgres 25432-25434, REST 28008-28010, etcd 22379/22380),
# synchronous_mode on (the same guarantee as rssd's ANY 1), use_pg_rewind on, the host's postgresql-15.
# A "node" is a Patroni process and its postmaster: "node off" SIGKILLs both (and its postgres
# children), "power on" starts Patroni again. Faults: the primary's postgres SIGKILLed; the primary's
# node off (back after the measure); a lights-out (every node off, power-on staggered 0 s / 5 s /
# 10 s; the DCS stays up, as a control plane on other machines would); a DCS outage (etcd SIGSTOPped
# for 40 s). Each at Patroni's defaults (ttl 30, loop_wait 10, retry_timeout 10) and tuned (ttl 10,
# loop_wait 2, retry_timeout 4). The writer inserts one row per psql call on the member that last took
# one (the next after a failure) and records the acknowledged ids; time to writable = from the fault to
# the first acknowledged write after it; lost = acknowledged ids missing on the leader at the end of the
# cycle. Needs root (postgres runs as the postgres user).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
RUN_RSSD=1
RUN_PATRONI=1
PROMOTE=0
FAILOVER_ONLY=0
CYCLES=1
for a in "$@"; do
    case $a in
    --no-rssd) RUN_RSSD=0 ;;
    --no-patroni) RUN_PATRONI=0 ;;
    --promote) PROMOTE=1 ;;
    --failover-only) FAILOVER_ONLY=1 ;;
    *[!0-9]* | '') echo "usage: $0 [--no-rssd] [--no-patroni] [--promote] [--failover-only] [CYCLES]" >&2; exit 2 ;;
    *) CYCLES=$a ;;
    esac
done
PG_BIN=/usr/lib/postgresql/15/bin
now_ms() { date +%s%3N; }
say() { echo "[$(date -u +%H:%M:%S)] $*"; }

if [ $RUN_RSSD = 1 ]; then
    say "== rssd (tests/e2e/postgres.sh)"
    list="postgres_create"
    for _ in $(seq 1 "$CYCLES"); do
        list+=" postgres_killed postgres_primary_node_off"
        [ $PROMOTE = 0 ] || list+=" postgres_killed_promote postgres_primary_node_off_promote"
        [ $FAILOVER_ONLY = 1 ] || list+=" postgres_lightsout postgres_staggered postgres_api_outage"
    done
    PG_SCENARIOS="$list postgres_verify" bash "$repo/tests/e2e/postgres.sh" 2>&1 |
        grep -E '^(PASS|FAIL|\[|  - (killed|sequences|->|primary member .* node off|API frozen|KNOWN|writer|the node|kill ->|node off ->|the primary.s node|member [0-9].s secondary))' | sed 's/^/  rssd| /'
fi
[ $RUN_PATRONI = 1 ] || exit 0
[ "$(id -u)" = 0 ] || { echo "bench_postgres: root needed" >&2; exit 1; }
# Patroni's side only: its packages are not in tests/run.sh's list (bench_postgres_pkgs).
# shellcheck source=../lib/packages.sh
source "$repo/tests/lib/packages.sh"
# shellcheck source=../lib/assert.sh
source "$repo/tests/lib/assert.sh"
missing=()
for p in "${bench_postgres_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep >/dev/null 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench_postgres: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for c in patroni etcd "$PG_BIN/postgres"; do
    command -v "$c" >/dev/null || { echo "bench_postgres: $c missing" >&2; exit 1; }
done

B=$(mktemp -d /tmp/rss-bench-pg.XXXXXX)
chown postgres:postgres "$B"
PIDS_ETCD=
declare -A PAT_PID
cleanup() {
    local i p
    for i in 0 1 2; do node_off "$i" 2>/dev/null; done
    [ -z "$PIDS_ETCD" ] || { kill -CONT "$PIDS_ETCD" 2>/dev/null; kill "$PIDS_ETCD" 2>/dev/null; wait "$PIDS_ETCD" 2>/dev/null; }
    [ -z "${WRITER_PID:-}" ] || { kill "$WRITER_PID" 2>/dev/null; wait "$WRITER_PID" 2>/dev/null; }
    [ -z "${BENCH_KEEP_LOGS:-}" ] || cp "$B"/*.log "$BENCH_KEEP_LOGS"/ 2>/dev/null
    rm -rf "$B"
}
trap cleanup EXIT

as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
psql_m() { as_pg "$PG_BIN/psql" -X -q -At -h 127.0.0.1 -p $((25432 + $1)) -U postgres -d postgres -v ON_ERROR_STOP=1 -c "$2" 2>&1; }

etcd_start() {
    rm -rf "$B/etcd"
    setsid etcd --name e0 --data-dir "$B/etcd" --listen-client-urls http://127.0.0.1:22379 \
        --advertise-client-urls http://127.0.0.1:22379 --listen-peer-urls http://127.0.0.1:22380 \
        --initial-advertise-peer-urls http://127.0.0.1:22380 --initial-cluster e0=http://127.0.0.1:22380 \
        --enable-v2=true >"$B/etcd.log" 2>&1 &
    PIDS_ETCD=$!
    for _ in $(seq 1 50); do curl -fsS http://127.0.0.1:22379/version >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "etcd did not start: $(tail -n 5 "$B/etcd.log")" >&2
    exit 1
}

# config MEMBER TTL LOOP RETRY
config() {
    local i=$1
    mkdir -p "$B/sock$i"
    chown postgres:postgres "$B/sock$i"
    cat >"$B/p$i.yml" <<EOF
scope: rssbench
name: pg$i
restapi:
  listen: 127.0.0.1:$((28008 + i))
  connect_address: 127.0.0.1:$((28008 + i))
etcd:
  host: 127.0.0.1:22379
bootstrap:
  dcs:
    ttl: $2
    loop_wait: $3
    retry_timeout: $4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        wal_log_hints: "on"
        max_wal_senders: 10
        wal_keep_size: 512MB
        shared_buffers: 32MB
        max_connections: 40
  initdb:
  - encoding: UTF8
  - locale: C
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$((25432 + i))
  connect_address: 127.0.0.1:$((25432 + i))
  data_dir: $B/pg$i
  bin_dir: $PG_BIN
  pgpass: $B/pgpass$i
  authentication:
    superuser:
      username: postgres
      password: bench
    replication:
      username: postgres
      password: bench
  parameters:
    unix_socket_directories: '$B/sock$i'
EOF
    chown postgres:postgres "$B/p$i.yml"
}
node_on() {
    setsid setpriv --reuid=postgres --regid=postgres --init-groups -- patroni "$B/p$1.yml" >>"$B/patroni$1.log" 2>&1 </dev/null &
    PAT_PID[$1]=$!
    disown "$!"
}
# node_off I: the node's power cut: Patroni, its postmaster and the postmaster's children, SIGKILL.
node_off() {
    local p pm
    p=${PAT_PID[$1]:-}
    pm=$(head -n 1 "$B/pg$1/postmaster.pid" 2>/dev/null)
    [ -z "$p" ] || kill -KILL "$p" 2>/dev/null
    if [ -n "$pm" ] && [ -d "/proc/$pm" ]; then
        kill -KILL "$pm" $(ps -o pid= --ppid "$pm") 2>/dev/null
    fi
    [ -z "$p" ] || while [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; do sleep 0.05; done
    PAT_PID[$1]=
}
leader() {
    local i
    for i in 0 1 2; do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((28008 + i))/primary")" = 200 ] && { echo "$i"; return 0; }
    done
    return 1
}
# healthy: a leader, two streaming replicas, and a synchronous standby named in the DCS (until then
# Patroni's synchronous mode promotes nobody: a fault in that window is not failed over at all).
healthy() {
    local l
    l=$(leader) || return 1
    [ "$(psql_m "$l" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 2 ] &&
        curl -s http://127.0.0.1:22379/v2/keys/service/rssbench/sync | jq -e '.node.value | fromjson | .sync_standby != null' >/dev/null
}
WD=$B/writer
writer() {
    local id=0 m=0 out t
    while [ ! -e "$WD/stop" ]; do
        id=$((id + 1))
        t=$(now_ms)
        if out=$(timeout 10 setpriv --reuid=postgres --regid=postgres --init-groups -- "$PG_BIN/psql" -X -q -At -h 127.0.0.1 \
            -p $((25432 + m)) -U postgres -d postgres -v ON_ERROR_STOP=1 -c "INSERT INTO w VALUES ($id, $m)" 2>&1) && [ -z "$out" ]; then
            echo "$id $t $(now_ms)" >>"$WD/acked"
        else
            m=$(((m + 1) % 3))
            sleep 0.2
        fi
    done
}
# first_ack_after T: the acknowledgement time of the first write sent after T (one in flight at T
# does not prove the cluster writable).
first_ack_after() { awk -v t="$1" '$2 > t { print $3; exit }' "$WD/acked" 2>/dev/null; }
# lost_on_leader: acknowledged ids missing on the leader (the acknowledged ones read first: one
# acknowledged after the leader was read is not missing); the first few ids go to $B/missing.
lost_on_leader() {
    local l
    l=$(leader) || { echo "?"; return; }
    cut -d' ' -f1 "$WD/acked" | sort >"$B/acked.snap"
    psql_m "$l" "SELECT id FROM w" | sort >"$B/present"
    comm -23 "$B/acked.snap" "$B/present" >"$B/missing"
    wc -l <"$B/missing"
}

# measure NAME T0: waits for the first acknowledged write after T0, then a healthy cluster; prints a row.
ROWS=()
measure() {
    local name=$1 t0=$2 tw lost took
    poll 300 sh -c "awk -v t=$t0 '\$2 > t { f = 1 } END { exit !f }' '$WD/acked'" || true
    tw=$(first_ack_after "$t0")
    took="not writable within 300 s"
    [ -z "$tw" ] || took="$((tw - t0)) ms"
    [ -z "${3:-}" ] || eval "$3"
    poll 300 healthy || true
    sleep 2
    lost=$(lost_on_leader)
    ROWS+=("$SETTING|$name|$took|$lost|pg$(leader || echo '?')")
    echo "  patroni($SETTING) $name: fault -> writable $took; acknowledged lost: $lost$([ "$lost" = 0 ] || echo " (ids $(head -n 5 "$B/missing" | tr '\n' ' '))"); $(wc -l <"$WD/acked") acknowledged so far"
}

run_setting() { # run_setting NAME TTL LOOP RETRY
    SETTING=$1
    local i l t0
    etcd_start
    rm -rf "$B"/pg? "$WD"
    mkdir -p "$WD"
    for i in 0 1 2; do config "$i" "$2" "$3" "$4"; done
    node_on 0
    poll 120 leader || { echo "no Patroni leader: $(tail -n 20 "$B/patroni0.log")"; exit 1; }
    node_on 1
    node_on 2
    poll 180 healthy || { echo "Patroni not healthy: $(tail -n 5 "$B"/patroni*.log)"; exit 1; }
    psql_m "$(leader)" "CREATE TABLE w (id int PRIMARY KEY, via int NOT NULL)" >/dev/null
    writer &
    WRITER_PID=$!
    sleep 3
    for _ in $(seq 1 "$CYCLES"); do
        # The primary's postgres SIGKILLed (Patroni stays).
        l=$(leader)
        t0=$(now_ms)
        kill -KILL "$(head -n 1 "$B/pg$l/postmaster.pid")"
        measure "primary's postgres killed" "$t0"
        # The primary's node off; back once the measure is taken.
        l=$(leader)
        node_off "$l"
        t0=$(now_ms) # after the cut: a write sent before it may still be acknowledged
        measure "primary's node off" "$t0" "node_on $l"
        [ $FAILOVER_ONLY = 0 ] || continue
        # Lights-out: every node off, power-on staggered (the DCS stays up).
        sleep 2
        for i in 0 1 2; do node_off "$i"; done
        sleep 5
        t0=$(now_ms)
        node_on 0
        sleep 5
        node_on 1
        sleep 5
        node_on 2
        measure "lights-out (power-on 0/5/10 s)" "$t0"
        # DCS outage: etcd frozen 40 s.
        sleep 2
        t0=$(now_ms)
        local a0
        a0=$(wc -l <"$WD/acked")
        kill -STOP "$PIDS_ETCD"
        sleep 40
        echo "  patroni($SETTING) DCS frozen 40 s: $(($(wc -l <"$WD/acked") - a0)) commits acknowledged meanwhile, longest gap between acknowledgements (or until the thaw): $(awk -v t="$t0" -v e="$(now_ms)" 'BEGIN { p = t } $3 > t { if ($3 - p > g) g = $3 - p; p = $3 } END { if (e - p > g) g = e - p; print g + 0 }' "$WD/acked") ms; $(cat "$B"/patroni*.log | grep -c -i demot) Patroni log lines about demoting"
        kill -CONT "$PIDS_ETCD"
        measure "DCS outage 40 s (after thaw)" "$(now_ms)"
    done
    touch "$WD/stop"
    wait "$WRITER_PID" 2>/dev/null
    WRITER_PID=
    for i in 0 1 2; do node_off "$i"; done
    kill "$PIDS_ETCD" 2>/dev/null
    wait "$PIDS_ETCD" 2>/dev/null
    PIDS_ETCD=
}

say "== Patroni $(patroni --version | awk '{print $2}'), etcd $(etcd --version | awk 'NR == 1 {print $3}'), $CYCLES cycle(s) per fault"
run_setting defaults 30 10 10
run_setting tuned 10 2 4
echo
echo "| Patroni setting | fault | fault -> writable | acknowledged lost | leader after |"
echo "|---|---|---|---|---|"
for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
