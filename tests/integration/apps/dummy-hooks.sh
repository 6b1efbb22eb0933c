#!/usr/bin/env bash
# dummy-hooks.sh -- runs apps/dummy's hooks under busybox sh in a temp dir standing for /data and checks their contract.
#
# Usage: dummy-hooks.sh [HOOKS_DIR]   (default: apps/dummy/hooks next to this file)
# The hooks see a PATH of busybox applets only, as in the localhost/rss/busybox:1 image.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
hooks=$(cd "${1:-$here/../../../apps/dummy/hooks}" && pwd)
busybox=$(command -v busybox)

tmp=$(mktemp -d /tmp/rss-dummy-hooks.XXXXXX)
cleanup() {
	local pid
	# End every dummyd this test started, by the pids the hooks recorded (dummyd writes its own).
	for f in "$tmp"/run*/pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null || true)
		case $pid in '' | *[!0-9]*) continue ;; esac
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep >/dev/null dummyd; then
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir "$tmp/bin" "$tmp/data" "$tmp/run"
for a in $("$busybox" --list); do ln -s "$busybox" "$tmp/bin/$a"; done

calls=0 # hook invocations, to compare with the lines of hooks.log
# shellcheck source=../../lib/assert.sh
. "$here/../../lib/assert.sh"
# hook NAME ARGS...: run a hook as rssd would (argv), setting $rc and $out; stderr goes to $tmp/err.
hook() {
	local name=$1
	shift
	calls=$((calls + 1))
	set +e
	out=$(env -i PATH="$tmp/bin" DATA_DIR="$tmp/data" RUN_DIR="$tmp/run" POD_NAME=rss-dummy-0 \
		"$tmp/bin/sh" "$hooks/$name" "$@" 2>"$tmp/err")
	rc=$?
	set -e
}
# tool NAME ARGS...: run write/set-sequence (not hooks: they do not log).
tool() {
	local name=$1
	shift
	env -i PATH="$tmp/bin" DATA_DIR="$tmp/data" RUN_DIR="$tmp/run" "$tmp/bin/sh" "$hooks/$name" "$@"
}
daemon_pid() { cat "$tmp/run/pid" 2>/dev/null || true; }
# alive PID: the process exists and is not a zombie.
alive() {
	local st
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1 # gone meanwhile
	[ "$st" != Z ]
}
echo "# sequence counts writes"
hook sequence
expect "sequence on an empty volume" "0:0" "$rc:$out"
expect "write 3 prints the count" 3 "$(tool write 3)"
hook sequence
expect "sequence after 3 writes" "0:3" "$rc:$out"
tool write >/dev/null
hook sequence peer-a.svc
expect "sequence after one more write (peers ignored)" "0:4" "$rc:$out"
expect "set-sequence 42 prints 42" 42 "$(tool set-sequence 42)"
hook sequence
expect "sequence after set-sequence 42" "0:42" "$rc:$out"
expect "writes are serial numbers" 42 "$(tail -n 1 "$tmp/data/writes")"
tool set-sequence 0 >/dev/null
hook sequence
expect "sequence after set-sequence 0" "0:0" "$rc:$out"
tool set-sequence 7 >/dev/null
if tool set-sequence x >/dev/null 2>&1; then bad "set-sequence x accepted"; else ok "set-sequence rejects a non-number"; fi
hook sequence
expect "a rejected set-sequence changes nothing" "0:7" "$rc:$out"

echo "# seed starts a daemon that keeps running"
hook status
expect "status before any start is 7 (stopped)" 7 "$rc"
hook seed
expect "seed exits 0" 0 "$rc"
pid1=$(daemon_pid)
if [ -n "$pid1" ] && alive "$pid1"; then ok "dummyd runs (pid $pid1)"; else bad "no dummyd after seed"; fi
if tr '\0' ' ' <"/proc/$pid1/cmdline" | grep >/dev/null 'dummyd primary'; then ok "dummyd runs as primary"; else bad "dummyd cmdline: $(tr '\0' ' ' <"/proc/$pid1/cmdline")"; fi
# ExecSync returns only once the hook's stdout/stderr are closed: dummyd must not hold them.
expect "dummyd's stdout is /dev/null" /dev/null "$(readlink "/proc/$pid1/fd/1")"
expect "dummyd's stderr is /dev/null" /dev/null "$(readlink "/proc/$pid1/fd/2")"
beat1=$(cut -d' ' -f2 "$tmp/run/heartbeat")
heartbeat_moved() { [ "$(cut -d' ' -f2 "$tmp/run/heartbeat" 2>/dev/null)" != "$beat1" ]; }
if poll 20 heartbeat_moved; then ok "dummyd keeps running (heartbeat advances)"; else bad "gave up waiting: dummyd heartbeat advances"; fi
hook status
expect "status of a running primary is 8" 8 "$rc"

echo "# primary with peers"
hook primary rss-dummy-1.dummy-svc rss-dummy-2.dummy-svc
expect "primary while running as primary exits 0" 0 "$rc"
expect "the same dummyd keeps running" "$pid1" "$(daemon_pid)"
expect "peers recorded" "rss-dummy-1.dummy-svc rss-dummy-2.dummy-svc" "$(cat "$tmp/run/peers")"
if grep -q ' rss-dummy-0 primary args=\[rss-dummy-1.dummy-svc rss-dummy-2.dummy-svc\] rc=0$' "$tmp/data/hooks.log"; then
	ok "hooks.log has the primary line with its peers"
else
	bad "no primary line with peers in hooks.log"
fi

echo "# secondary switches role"
hook secondary rss-dummy-1.dummy-svc
expect "secondary exits 0" 0 "$rc"
pid2=$(daemon_pid)
if [ "$pid2" != "$pid1" ] && alive "$pid2"; then ok "dummyd restarted as secondary (pid $pid2)"; else bad "no new dummyd for secondary"; fi
if alive "$pid1"; then bad "old dummyd $pid1 still runs"; else ok "old dummyd $pid1 is gone"; fi
hook status
expect "status of a running secondary is 0" 0 "$rc"

echo "# detach (rssd's optional hook: a running secondary stops following its primary)"
hook detach rss-dummy-1.dummy-svc
expect "detach of a running secondary exits 0" 0 "$rc"
expect "its primary is forgotten" "" "$(cat "$tmp/run/peers")"
expect "the same dummyd keeps running" "$pid2" "$(daemon_pid)"
hook status
expect "a detached secondary still runs as secondary" 0 "$rc"

echo "# stop"
hook stop
expect "stop exits 0" 0 "$rc"
if alive "$pid2"; then bad "dummyd $pid2 still runs after stop"; else ok "dummyd is gone once stop returns"; fi
hook status
expect "status after stop is 7" 7 "$rc"
hook detach
expect "detach of a stopped member exits 1" 1 "$rc"
hook stop
expect "stop when stopped exits 0" 0 "$rc"

echo "# a crashed dummyd is reported as failed"
hook primary
expect "primary without peers exits 0" 0 "$rc"
pid3=$(daemon_pid)
touch "$tmp/data/crash"
dead3() { ! alive "$pid3"; }
if poll 20 dead3; then ok "dummyd exited on the crash knob"; else bad "gave up waiting: dummyd crashes on the crash knob"; fi
hook status
expect "status after a crash is 1 (failed)" 1 "$rc"
hook stop
expect "stop after a crash exits 0" 0 "$rc"
hook status
expect "status after stop is 7 again" 7 "$rc"

echo "# garbage knob"
touch "$tmp/data/garbage-sequence"
hook sequence
expect "empty garbage-sequence prints not-a-number, exit 0" "0:not-a-number" "$rc:$out"
echo 18446744073709551616 >"$tmp/data/garbage-sequence"
hook sequence
expect "garbage-sequence content is printed verbatim" "0:18446744073709551616" "$rc:$out"
rm "$tmp/data/garbage-sequence"
hook sequence
expect "without the knob sequence is the count again" "0:7" "$rc:$out"

echo "# fail knob"
echo 3 >"$tmp/data/fail-primary"
hook primary
expect "fail-primary containing 3 makes primary exit 3" 3 "$rc"
hook status
expect "a failed primary started nothing" 7 "$rc"
rm "$tmp/data/fail-primary"

echo "# hang knob"
touch "$tmp/data/hang-seed"
calls=$((calls + 1))
set +e
# The host's timeout (GNU: 124 when it had to kill), as the runtime enforces the ExecSync timeout.
# shellcheck disable=SC2016 # $$ and $0 are for the inner shell
timeout 2 env -i PATH="$tmp/bin" DATA_DIR="$tmp/data" RUN_DIR="$tmp/run" POD_NAME=rss-dummy-0 \
	"$tmp/bin/sh" -c 'echo $$ >"$0"; exec sh "$1" peer.svc' "$tmp/hang.pid" "$hooks/seed" >/dev/null 2>&1
rc=$?
set -e
expect "a hanging seed is killed by timeout" 124 "$rc"
hang_pid=$(cat "$tmp/hang.pid")
if alive "$hang_pid"; then bad "the hung hook $hang_pid survived its timeout"; else ok "killing the hook killed the hang (pid $hang_pid)"; fi
expect "the hang is logged before hanging" "rc=hang" "$(tail -n 1 "$tmp/data/hooks.log" | sed 's/.* //')"
rm "$tmp/data/hang-seed"
hook status
expect "a hung seed started nothing" 7 "$rc"

echo "# hooks found relative to the current directory"
calls=$((calls + 1))
set +e
(cd "$hooks" && env -i PATH="$tmp/bin" DATA_DIR="$tmp/data" RUN_DIR="$tmp/run" POD_NAME=rss-dummy-0 \
	"$tmp/bin/sh" status >/dev/null 2>&1)
rc=$?
set -e
expect "sh status run from the hooks dir" 7 "$rc"

echo "# no volume"
set +e
env -i PATH="$tmp/bin" DATA_DIR="$tmp/nonexistent" RUN_DIR="$tmp/run2" "$tmp/bin/sh" "$hooks/sequence" >/dev/null 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then ok "sequence without a volume fails (rc $rc)"; else bad "sequence without a volume exits 0"; fi

echo "# time from adjtimex, in microseconds or nanoseconds"
# The kernel puts nanoseconds in tv_usec when the clock status has STA_NANO (0x2000, set by NTP daemons):
# a CI machine did, and the log's fractions became 9 unpadded digits. A stand-in dummy_adjtimex shows both.
fake_now() {
	env -i PATH="$tmp/bin" FAKE_STATUS="$1" FAKE_USEC="$2" "$tmp/bin/sh" -c ". '$hooks/lib.sh'
		dummy_adjtimex() { printf '    status:       %s\\n    time.tv_sec:  1796268909\\n    time.tv_usec: %s\\n' \"\$FAKE_STATUS\" \"\$FAKE_USEC\"; }
		dummy_now"
}
expect "microseconds are printed as they are" 2026-12-03T03:35:09.045728Z "$(fake_now '65 (PLL | UNSYNC)' 45728)"
expect "STA_NANO nanoseconds become microseconds" 2026-12-03T03:35:09.045728Z "$(fake_now '8256 (UNSYNC)' 45728870)"
expect "a 9-digit fraction is nanoseconds whatever the status says" 2026-12-03T03:35:09.457288Z "$(fake_now 64 457288870)"
now=$(fake_now 0 x12)
case $now in *.000000Z) ok "an unreadable fraction gives .000000 ($now)" ;; *) bad "an unreadable fraction gave $now" ;; esac

echo "# hooks.log format"
re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z rss-dummy-0 (sequence|seed|primary|secondary|status|stop|detach) args=\[[^]]*\]( out=[^ ]*)? rc=([0-9]+|hang)$'
lines=$(wc -l <"$tmp/data/hooks.log")
expect "one hooks.log line per hook run" "$calls" "$lines"
badlines=$(grep -Evc "$re" "$tmp/data/hooks.log" || true)
expect "every hooks.log line matches the documented format" 0 "$badlines"
grep -Ev "$re" "$tmp/data/hooks.log" | sed 's/^/     bad line: /' || true
expect "sequence lines carry out=" "$(grep -c ' sequence ' "$tmp/data/hooks.log")" "$(grep -c ' sequence args=\[[^]]*\] out=' "$tmp/data/hooks.log")"
if grep -q ' sequence args=\[\] out=18446744073709551616 rc=0$' "$tmp/data/hooks.log"; then ok "garbage output is logged"; else bad "garbage output not logged"; fi
# Times never go backwards within one log (ISO strings sort as times).
if sort -c <(cut -d' ' -f1 "$tmp/data/hooks.log") 2>/dev/null; then ok "log times are ordered"; else bad "log times out of order"; fi

checks_done
