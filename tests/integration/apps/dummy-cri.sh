#!/usr/bin/env bash
# dummy-cri.sh -- runs apps/dummy's hooks with real ExecSync in a busybox container of a private containerd.
#
# Usage: dummy-cri.sh CRI_TOOL SOURCE_DIR
# What only a real runtime shows: seed returns although dummyd keeps running (its stdio is detached),
# the container's PID 1 (sleep) leaves a stopped dummyd as a zombie that status must see through, and
# a hung hook is killed at the ExecSync timeout with nothing left behind.
# shellcheck disable=SC2016 # the single-quoted scripts run in the container's shell
set -euo pipefail

cri_tool=$1
top=$2
[ -x "$cri_tool" ] || {
	echo "dummy-cri: cri_tool is not built ($cri_tool)" >&2
	exit 1
}
export CRI_TOOL=$cri_tool
fixture=$top/tests/lib/containerd.sh

dir=$(mktemp -d /tmp/rss-dcri.XXXXXX)
cleanup() { bash "$fixture" down "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
bash "$fixture" up "$dir" >"$dir.log" 2>&1 || {
	cat "$dir.log" >&2
	rm -f "$dir.log"
	exit 1
}
rm -f "$dir.log"
eval "$(bash "$fixture" env "$dir")"
export CRI_ENDPOINT

# shellcheck source=../../lib/assert.sh
. "$top/tests/lib/assert.sh"

ids=$("$cri_tool" run-pod rss-dummy-0)
cid=${ids#* }
# x [-t S] CMD...: ExecSync in the member container; sets $rc and $out, counts hook runs in $hook_runs.
hook_runs=0
x() {
	local t=30
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	case $1 in
	/hooks/sequence | /hooks/seed | /hooks/primary | /hooks/secondary | /hooks/status | /hooks/stop)
		hook_runs=$((hook_runs + 1))
		;;
	esac
	set +e
	out=$("$cri_tool" exec -t "$t" "$cid" "$@" 2>/dev/null)
	rc=$?
	set -e
}

# The image holds busybox only: copy the hooks in through argv (ExecSync has no stdin).
x mkdir -p /hooks /data
for f in "$top"/apps/dummy/hooks/*; do
	x sh -c 'printf "%s" "$2" >"/hooks/$1" && chmod 755 "/hooks/$1"' sh "$(basename "$f")" "$(cat "$f")
"
done
expect "hooks copied into the container" 0 "$rc"

x /hooks/set-sequence 12
x /hooks/sequence peer.svc
expect "sequence in the container" "0:12" "$rc:$out"
x /hooks/status
expect "status before start" 7 "$rc"
x -t 10 /hooks/seed
expect "seed returns through ExecSync while dummyd keeps running" 0 "$rc"
x /hooks/status
expect "status after seed" 8 "$rc"
x /hooks/stop
expect "stop" 0 "$rc"
x sh -c 'for p in /proc/[0-9]*; do read -r s <$p/stat; r=${s##*) }; [ "${r%% *}" = Z ] && echo z; done | wc -l'
zombies=$out
x /hooks/status
expect "status sees through the zombie dummyd ($zombies zombie(s) under PID 1)" 7 "$rc"
x /hooks/secondary peer.svc
x /hooks/status
expect "status of a secondary" 0 "$rc"
x touch /data/crash
for _ in $(seq 1 100); do # until dummyd has died (generous deadline, not a timing check)
	x /hooks/status
	[ "$rc" = 8 ] || [ "$rc" = 0 ] || break
	sleep 0.1
done
expect "status after a crash" 1 "$rc"
x /hooks/stop
x touch /data/hang-stop
x -t 2 /hooks/stop
if [ "$rc" != 0 ]; then expect "a hung stop fails at its ExecSync timeout" nonzero nonzero; else expect "a hung stop fails at its ExecSync timeout" nonzero 0; fi
x sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done | grep -c "^sleep infinity" || true'
expect "the hung hook's sleep is gone (PID 1 runs as /bin/sleep, not counted)" 0 "$out"
x rm /data/hang-stop
x cat /data/hooks.log
expect "one hooks.log line per hook run" "$hook_runs" "$(grep -c . <<<"$out")"
expect "the last line is the hang" "rc=hang" "$(tail -n 1 <<<"$out" | sed 's/.* //')"

checks_done
