# lib.sh -- code shared by the dummy app's hooks (sourced, never run): paths, test knobs, hooks.log, dummyd state.
# shellcheck shell=sh
#
# Runs under busybox sh with busybox applets only. See apps/dummy/README.md for the contract.

DATA_DIR=${DATA_DIR:-/data}    # the member's persistent volume
RUN_DIR=${RUN_DIR:-/run/dummy} # dies with the container, so a stale pid can never look alive
export DATA_DIR RUN_DIR
POD=${POD_NAME:-$(hostname 2>/dev/null)}
POD=${POD:-unknown}

# Where the hooks live, so one hook can start dummyd whatever the mount point is.
case $0 in
*/*) DUMMY_HOOKS=${0%/*} ;;
*) DUMMY_HOOKS=. ;;
esac

# dummy_adjtimex: the kernel clock's state (a function so that a test can show both kinds of fraction:
# busybox sh runs its own applets before anything on PATH).
dummy_adjtimex() { adjtimex 2>/dev/null; }

# dummy_now: UTC time as 2026-11-21T12:00:00.123456Z. busybox date has no %N, but adjtimex (read-only,
# no privilege needed) prints the kernel's timeval; where it is refused the fraction is .000000.
# When the clock's status has STA_NANO (0x2000, set by an NTP daemon), the kernel puts nanoseconds in
# tv_usec: CI met such a machine, and unpadded 9-digit fractions broke the format and the ordering.
dummy_now() {
	_s=
	_u=
	_st=0
	while read -r _k _v _r; do
		case $_k in
		status:) _st=$_v ;;
		time.tv_sec:) _s=$_v ;;
		time.tv_usec:) _u=$_v ;;
		esac
	done <<EOF
$(dummy_adjtimex)
EOF
	case $_st in *[!0-9]* | '') _st=0 ;; esac
	case $_u in *[!0-9]*) _u= ;; esac
	if [ -n "$_u" ] && { [ $((_st & 8192)) -ne 0 ] || [ "$_u" -ge 1000000 ]; }; then
		_u=$((_u / 1000))
	fi
	if [ -n "$_s" ] && [ -n "$_u" ] && _d=$(date -u -d "@$_s" +%Y-%m-%dT%H:%M:%S 2>/dev/null); then
		printf '%s.%06dZ' "$_d" "$_u"
	else
		printf '%s.000000Z' "$(date -u +%Y-%m-%dT%H:%M:%S)"
	fi
}

# dummy_log RC [OUT]: append this hook's one line to hooks.log. O_APPEND of one short line is atomic,
# so concurrent hooks never interleave. OUT (sequence only) has its whitespace squashed to '_'.
dummy_log() {
	_line="$(dummy_now) $POD $DUMMY_HOOK args=[$DUMMY_ARGS]"
	if [ $# -ge 2 ]; then
		_line="$_line out=$(printf '%s' "$2" | tr '\n\t ' '___')"
	fi
	printf '%s rc=%s\n' "$_line" "$1" >>"$DATA_DIR/hooks.log" 2>/dev/null
	# spec.pod.commandEnv: what rssd said about the decision (apps/dummy/README.md, hooks-env.log).
	if [ -n "${RSS_EPOCH:-}" ]; then
		printf '%s %s %s epoch=%s generation=%s action=%s id=%s\n' "$(dummy_now)" "$POD" "$DUMMY_HOOK" \
			"$RSS_EPOCH" "${RSS_GENERATION:-}" "${RSS_ACTION:--}" "${RSS_ACTION_ID:--}" \
			>>"$DATA_DIR/hooks-env.log" 2>/dev/null
	fi
}

# dummy_finish RC [OUT]: log, then exit with RC.
dummy_finish() {
	dummy_log "$@"
	exit "$1"
}

# dummy_begin HOOK ARGS...: remember who we are and apply the test knobs.
#   DATA_DIR/hang-HOOK  : log rc=hang, then sleep forever (exec, so killing the hook kills the sleep)
#   DATA_DIR/fail-HOOK  : do nothing and exit with the file's number (default 1)
#   DATA_DIR/delay-HOOK : sleep the file's number of seconds first, then run as usual
dummy_begin() {
	DUMMY_HOOK=$1
	shift
	DUMMY_ARGS="$*"
	if [ -e "$DATA_DIR/delay-$DUMMY_HOOK" ]; then
		_s=$(cat "$DATA_DIR/delay-$DUMMY_HOOK" 2>/dev/null)
		case $_s in
		'' | *[!0-9]*) _s=1 ;;
		esac
		sleep "$_s"
	fi
	if [ -e "$DATA_DIR/hang-$DUMMY_HOOK" ]; then
		dummy_log hang
		exec sleep infinity
	fi
	if [ -e "$DATA_DIR/fail-$DUMMY_HOOK" ]; then
		_rc=$(cat "$DATA_DIR/fail-$DUMMY_HOOK" 2>/dev/null)
		case $_rc in
		'' | *[!0-9]*) _rc=1 ;;
		esac
		echo "$DUMMY_HOOK: failing on purpose ($DATA_DIR/fail-$DUMMY_HOOK)" >&2
		dummy_finish "$_rc"
	fi
}

# dummy_count: number of writes on the volume (lines of DATA_DIR/writes).
dummy_count() {
	if [ -f "$DATA_DIR/writes" ]; then
		_n=$(wc -l <"$DATA_DIR/writes") || return 1
		echo $((_n + 0))
	else
		echo 0
	fi
}

# dummy_alive: true if dummyd runs; sets DUMMY_PID. The container's PID 1 (sleep) never reaps, so a
# dead dummyd lingers as a zombie; and PIDs restart low in a new container, so check it is ours.
dummy_alive() {
	DUMMY_PID=
	_pid=$(cat "$RUN_DIR/pid" 2>/dev/null) || return 1
	case $_pid in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ -r "/proc/$_pid/stat" ] || return 1
	read -r _stat 2>/dev/null <"/proc/$_pid/stat" || return 1
	_st=${_stat##*) }
	case ${_st%% *} in
	Z | X | x) return 1 ;;
	esac
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$_pid/cmdline") in
	*dummyd*) ;;
	*) return 1 ;;
	esac
	DUMMY_PID=$_pid
}

# dummy_stop: stop dummyd (TERM, then KILL after 10 s) and wait until it is gone. True once stopped.
dummy_stop() {
	if dummy_alive; then
		kill -TERM "$DUMMY_PID" 2>/dev/null
		_i=0
		while dummy_alive; do
			_i=$((_i + 1))
			if [ $_i -eq 200 ]; then
				kill -KILL "$DUMMY_PID" 2>/dev/null
			elif [ $_i -gt 300 ]; then
				echo "stop: dummyd $DUMMY_PID does not die" >&2
				return 1
			fi
			sleep 0.05
		done
	fi
	rm -f "$RUN_DIR/pid" "$RUN_DIR/role" "$RUN_DIR/peers" "$RUN_DIR/heartbeat"
}

# dummy_start ROLE: run dummyd in ROLE (primary|secondary), the peers being this hook's args.
# Already running in ROLE: nothing to do. Running in the other role: restart it in this one.
dummy_start() {
	[ -d "$DATA_DIR" ] || {
		echo "$DUMMY_HOOK: no data volume at $DATA_DIR" >&2
		return 1
	}
	mkdir -p "$RUN_DIR" || return 1
	if dummy_alive; then
		if [ "$(cat "$RUN_DIR/role" 2>/dev/null)" = "$1" ]; then
			echo "$DUMMY_HOOK: dummyd $DUMMY_PID already runs as $1" >&2
			printf '%s\n' "$DUMMY_ARGS" >"$RUN_DIR/peers"
			return 0
		fi
		dummy_stop || return 1
	fi
	rm -f "$RUN_DIR/pid"
	printf '%s\n' "$1" >"$RUN_DIR/role" || return 1
	printf '%s\n' "$DUMMY_ARGS" >"$RUN_DIR/peers" || return 1
	# ExecSync returns only when the hook's stdout and stderr are closed: detach dummyd from them.
	setsid sh "$DUMMY_HOOKS/dummyd" "$1" </dev/null >/dev/null 2>&1 &
	_i=0
	while [ $_i -lt 200 ]; do
		dummy_alive && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "$DUMMY_HOOK: dummyd did not start" >&2
	return 1
}
