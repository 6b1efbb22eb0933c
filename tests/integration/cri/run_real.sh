#!/usr/bin/env bash
# run_real.sh -- runs a test program against a private containerd started by tests/lib/containerd.sh.
#
# Usage: run_real.sh FIXTURE CRI_TOOL PROGRAM [ARGS...]
# Starts containerd in a fresh temp dir, exports CRI_ENDPOINT, RSS_CONTAINERD_DIR,
# RSS_CONTAINERD_FIXTURE and CRI_TOOL, runs PROGRAM and tears the runtime down on every exit path.
# If containerd cannot start, this FAILS (exit 1): a real-runtime test never skips.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: run_real.sh FIXTURE CRI_TOOL PROGRAM [ARGS...]" >&2; exit 2; }
fixture=$1
export CRI_TOOL=$2
shift 2
[ "$(id -u)" = 0 ] || { echo "run_real.sh: needs root (containerd, runc, mounts)" >&2; exit 1; }

dir=$(mktemp -d /tmp/rss-cri.XXXXXX)
down() {
    "$fixture" down "$dir" || true
}
trap down EXIT
trap 'exit 130' INT TERM

if ! env_lines=$("$fixture" up "$dir"); then
    echo "run_real.sh: FAIL: could not start containerd (see above)" >&2
    exit 1
fi
while IFS='=' read -r k v; do
    [ -n "$k" ] && export "$k=$v"
done <<<"$env_lines"
export RSS_CONTAINERD_DIR=$dir RSS_CONTAINERD_FIXTURE=$fixture

rc=0
"$@" || rc=$?
if [ $rc != 0 ] && [ -f "$dir/containerd.log" ]; then
    echo "--- last lines of containerd.log" >&2
    tail -n 30 "$dir/containerd.log" >&2
fi
exit $rc
