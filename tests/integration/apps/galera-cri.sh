#!/usr/bin/env bash
# galera-cri.sh -- runs apps/galera's hooks with real ExecSync on a 3-member MariaDB Galera cluster in a private containerd.
#
# Usage: galera-cri.sh CRI_TOOL SOURCE_DIR
# Builds (or takes from the cache) the image of apps/galera/image/build.sh, runs three host-network
# pods (rss-galera-0..2, volume at /data, hooks at /hooks) and checks: an empty volume's sequence is 0;
# seed bootstraps and primary joins the peers given as <pod>.<service> names; rows written through
# every member; a staggered dark (clean stop, SIGKILL, clean stop) leaves distinct sequences, the
# crashed one from --wsrep-recover; the highest seeds again keeping the cluster's history, the others
# join by IST; rows and checksums identical on all; every listener on 127.0.0.1; a member that cannot
# tell its position exits non-zero with no output. Exit 77 (skip) when the image cannot be built
# because the machine is not root or has no debootstrap.
# shellcheck disable=SC2016 # the single-quoted scripts run in the container's shell
set -euo pipefail

cri_tool=$1
top=$2
[ -x "$cri_tool" ] || {
	echo "galera-cri: cri_tool is not built ($cri_tool)" >&2
	exit 1
}
if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
	echo "galera-cri: SKIP (needs root and debootstrap to build the image)"
	exit 77
fi
export CRI_TOOL=$cri_tool
fixture=$top/tests/lib/containerd.sh
T0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(date +%s.%N)
image_tar=$(bash "$top/apps/galera/image/build.sh" | tail -n 1)
echo "# image: $image_tar ($(du -m "$image_tar" | cut -f1) MiB), ready in $(elapsed "$t") s"

dir=$(mktemp -d /tmp/rss-gcri.XXXXXX)
cleanup() {
	bash "$fixture" down "$dir/ctrd" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
bash "$fixture" up "$dir/ctrd" >"$dir/up.log" 2>&1 || {
	cat "$dir/up.log" >&2
	exit 1
}
eval "$(bash "$fixture" env "$dir/ctrd")"
export CRI_ENDPOINT
t=$(date +%s.%N)
ctr --address "$CONTAINERD_ADDRESS" -n k8s.io images import --snapshotter overlayfs "$image_tar" >/dev/null
echo "# image imported in $(elapsed "$t") s"

# shellcheck source=../../lib/assert.sh
. "$top/tests/lib/assert.sh"

# Ports far from the e2e world's (offset 1000): mysql 14306+i, gcomm 15567+10i (+1 IST, +2 SST).
OFFSET=1000
declare -a cid
hook_runs=(0 0 0 0)
for i in 0 1 2 3; do
	mkdir -p "$dir/data$i"
	ids=$("$cri_tool" run-pod --mount "$dir/data$i:/data" --mount "$top/apps/galera/hooks:/hooks:ro" \
		--env "POD_NAME=rss-galera-$i" --env "GALERA_PORT_OFFSET=$OFFSET" rss-galera-$i localhost/rss/galera:1)
	cid[i]=${ids#* }
done
peer() { echo "rss-galera-$1.galera"; }

# x M [-t S] CMD...: ExecSync in member M; sets $rc, $out (stdout) and $err (stderr).
x() {
	local m=$1 t=120
	shift
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	case $1 in /hooks/*) hook_runs[m]=$((hook_runs[m] + 1)) ;; esac
	set +e
	out=$("$cri_tool" exec -t "$t" "${cid[m]}" "$@" 2>"$dir/err")
	rc=$?
	set -e
	err=$(cat "$dir/err")
}
# q M SQL: a query through member M's socket, read-your-writes (wsrep_sync_wait=1).
q() {
	x "$1" mariadb --no-defaults -S /run/galera/mysqld.sock -uroot -N -s -e "SET SESSION wsrep_sync_wait=1; $2"
	[ "$rc" = 0 ] || echo "query on $1 failed ($rc): $err" >&2
}
# insert M FROM TO: rows FROM..TO written through member M, one autocommit INSERT each.
insert() {
	local sql="" k
	for ((k = $2; k <= $3; k++)); do sql+="INSERT INTO rss.t VALUES ($k, $1, SHA2('$k', 256));"; done
	q "$1" "$sql"
}
table_sum() { # member -> "count:checksum"
	q "$1" "SELECT COUNT(*), MD5(GROUP_CONCAT(id, '/', via, '/', v ORDER BY id)) FROM rss.t"
	out=${out/$'\t'/:}
}

x 0 /hooks/sequence
expect "sequence of an empty volume" "0:0" "$rc:$out"
x 0 /hooks/status
expect "status before anything ran" 7 "$rc"

t=$(date +%s.%N)
x 0 /hooks/seed
expect "seed bootstraps a new cluster" 0 "$rc"
echo "# seed: $(elapsed "$t") s"
x 0 /hooks/status
expect "status of the seed" 8 "$rc"
t=$(date +%s.%N)
x 1 /hooks/primary "$(peer 0)"
expect "primary joins <pod>.<service> of the seed" 0 "$rc"
x 2 /hooks/primary "$(peer 0)" "$(peer 1)"
expect "primary joins two peers" 0 "$rc"
echo "# first joins (SST): $(elapsed "$t") s"
q 0 "SHOW STATUS LIKE 'wsrep_cluster_size'"
expect "cluster size" "wsrep_cluster_size	3" "$out"
q 0 "SHOW STATUS LIKE 'wsrep_cluster_state_uuid'"
uuid=${out#*	}

q 0 "CREATE DATABASE rss; CREATE TABLE rss.t (id INT PRIMARY KEY, via INT NOT NULL, v CHAR(64) NOT NULL)"
insert 0 1 100
insert 1 101 200
insert 2 201 300
for i in 0 1 2; do
	table_sum "$i"
	sums[i]=$out
done
expect "300 rows, one checksum on all members" "${sums[0]} ${sums[0]} ${sums[0]}" "${sums[0]} ${sums[1]} ${sums[2]}"
expect "300 rows" 300 "${sums[0]%%:*}"

# A staggered dark: member 2 stops cleanly, then member 0; member 1 goes on alone (still the primary
# component: clean leaves) and crashes (SIGKILL) last, so its position must come from --wsrep-recover.
x 2 /hooks/stop
expect "stop member 2" 0 "$rc"
x 2 sh -c 'sed -n "s/^seqno: *//p" /data/mysql/grastate.dat'
expect "a clean stop leaves a real seqno in grastate" yes "$([ "${out:--1}" -ge 0 ] && echo yes || echo "no ($out)")"
insert 0 301 350
x 0 /hooks/stop
expect "stop member 0" 0 "$rc"
insert 1 351 400
x 1 sh -c 'kill -KILL "$(cat /run/galera/mysqld.pid)"'
sleep 1
x 1 /hooks/status
expect "status of a crashed member" 1 "$rc"
x 2 /hooks/status
expect "status of a stopped member" 7 "$rc"

declare -a seqs
for i in 0 1 2; do
	x "$i" /hooks/sequence "$(peer 0)"
	seqs[i]=$out
	echo "# sequence of member $i: rc=$rc out=$out; ${err//$'\n'/ }"
	expect "sequence of member $i" 0 "$rc"
	[ "$i" = 1 ] && expect "the crashed member's sequence comes from --wsrep-recover" yes \
		"$(grep -q source=wsrep-recover <<<"$err" && echo yes || echo no)"
done
expect "sequences ordered by what each saw (1 > 0 > 2)" yes \
	"$([ "${seqs[1]}" -gt "${seqs[0]}" ] && [ "${seqs[0]}" -gt "${seqs[2]}" ] && echo yes || echo no)"
best=0
for i in 1 2; do [ "${seqs[i]}" -gt "${seqs[best]}" ] && best=$i; done

t=$(date +%s.%N)
x "$best" /hooks/seed
expect "the highest member ($best) seeds again" 0 "$rc"
q "$best" "SHOW STATUS LIKE 'wsrep_cluster_state_uuid'"
expect "the cluster keeps its history (uuid)" "$uuid" "${out#*	}"
q "$best" "SHOW STATUS LIKE 'wsrep_last_committed'"
expect "the seed continues at its sequence" yes "$([ "${out#*	}" -ge "${seqs[best]}" ] && echo yes || echo no)"
for i in 0 1 2; do
	[ "$i" = "$best" ] && continue
	x "$i" sh -c 'grep -c "IST received" /data/mysqld.err || true'
	ist_before=${out:-0}
	x "$i" /hooks/primary "$(peer "$best")"
	expect "member $i joins the seed" 0 "$rc"
	x "$i" sh -c 'grep -c "IST received" /data/mysqld.err || true'
	expect "member $i caught up by IST" yes "$([ "${out:-0}" -gt "$ist_before" ] && echo yes || echo "no ($ist_before -> $out)")"
done
echo "# recovery (seed + 2 joins): $(elapsed "$t") s"
for i in 0 1 2; do
	x "$i" /hooks/status
	expect "status of member $i after recovery" 8 "$rc"
	table_sum "$i"
	sums[i]=$out
done
expect "400 rows, one checksum on all members" "${sums[0]} ${sums[0]} ${sums[0]}" "${sums[0]} ${sums[1]} ${sums[2]}"
expect "no acknowledged row lost" 400 "${sums[0]%%:*}"
insert 2 401 410
table_sum 0
expect "writable after recovery" 410 "${out%%:*}"

# Every listener of the members is on loopback (mysql 14306.., gcomm/IST/SST 15567..).
bad=$(ss -Hltn | awk '{ print $4 }' | awk -F: -v o=$OFFSET '{ p = $NF } (p >= 13306 + o && p < 13316 + o) || (p >= 14567 + o && p < 14600 + o) { if ($0 !~ /^127\.0\.0\.1:/) print }')
listening=$(ss -Hltn | awk '{ print $4 }' | awk -F: -v o=$OFFSET '{ p = $NF } (p >= 13306 + o && p < 13316 + o) || (p >= 14567 + o && p < 14600 + o)' | wc -l)
expect "every member listener bound to 127.0.0.1 ($listening listening)" "" "$bad"

# How each join got its state, from hooks.times: the first joins copied everything (SST), the joins
# after the staggered dark caught up by IST.
for i in 0 1 2; do
	[ "$i" = "$best" ] && continue
	expect "member $i: its last join recorded as IST in hooks.times" "rc=0 transfer=IST" \
		"$(grep " primary " "$dir/data$i/hooks.times" | tail -n 1 | grep -o 'rc=.*')"
done
expect "member 2: its first join recorded as SST in hooks.times" "rc=0 transfer=SST" \
	"$(grep " primary " "$dir/data2/hooks.times" | sed -n 1p | grep -o 'rc=.*')"

# A member outside any primary component is in a transition rssd must not act on (status 0, not 1)
# until GALERA_NONPRIMARY_GRACE has passed: the survivor of two crashed peers goes non-Primary.
surv=$best
for i in 0 1 2; do
	[ "$i" = "$surv" ] || x "$i" sh -c 'kill -KILL "$(cat /run/galera/mysqld.pid)"'
done
for _ in $(seq 1 60); do
	q "$surv" "SHOW STATUS LIKE 'wsrep_cluster_status'"
	[ "${out#*	}" = non-Primary ] && break
	sleep 0.5
done
expect "the survivor's component after its two peers crashed" non-Primary "${out#*	}"
x "$surv" /hooks/status
expect "status of a member in a non-primary component, within the grace" 0 "$rc"
hook_runs[surv]=$((hook_runs[surv] + 1))
x "$surv" env GALERA_NONPRIMARY_GRACE=0 /hooks/status
expect "status of a member non-Primary beyond the grace" 1 "$rc"
x "$surv" sh -c 'grep -c "cluster .non-Primary." /data/status.log'
expect "status.log explains both answers" 2 "$out"

# Positions that cannot be told: an initialised datadir that never ran with wsrep, and one whose
# InnoDB files are gone after a crash (grastate says -1).
x 3 sh -c 'mkdir -p /data/mysql && chown mysql:mysql /data/mysql && mariadb-install-db --no-defaults --user=mysql --datadir=/data/mysql --skip-test-db >/dev/null 2>&1'
x 3 /hooks/sequence "$(peer 0)"
expect "sequence of a datadir without history: non-zero, no output" "1:" "$rc:$out"
x 2 sh -c 'kill -KILL "$(cat /run/galera/mysqld.pid)" 2>/dev/null; sleep 1; rm -f /data/mysql/ibdata1 /data/mysql/ib_logfile0'
x 2 /hooks/sequence
expect "sequence of a crashed datadir without InnoDB files: non-zero, no output" "1:" "$rc:$out"

# hooks.log: one line per hook run, in apps/dummy's format.
re='^[0-9-]{10}T[0-9:]{8}\.[0-9]{6}Z \S+ (sequence|seed|primary|secondary|status|stop) args=\[[^]]*\]( out=\S*)? rc=([0-9]+|hang)$'
for i in 0 1 2 3; do
	expect "member $i: one hooks.log line per hook run" "${hook_runs[i]}" "$(grep -c . "$dir/data$i/hooks.log")"
	expect "member $i: every hooks.log line in the dummy format" 0 "$(grep -cvP "$re" "$dir/data$i/hooks.log" || true)"
done
grep -h . "$dir"/data[0-2]/hooks.log | sort | sed 's/^/# /'

echo "# $checks checks, $fails failed, $(elapsed "$T0") s"
[ "$fails" = 0 ]
