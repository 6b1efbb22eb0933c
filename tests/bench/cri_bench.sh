#!/usr/bin/env bash
# cri_bench.sh -- runs cri_bench against a private containerd (tests/lib/containerd.sh) and prints its figures.
#
# Usage: cri_bench.sh [BUILD_DIR] [N]      (defaults: build, 50)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
n=${2:-50}
case "$build" in /*) ;; *) build=$top/$build ;; esac
bench=$build/tests/bench/cri_bench
export CRI_TOOL=$build/tests/lib/cri_tool
[ -x "$bench" ] && [ -x "$CRI_TOOL" ] || { echo "cri_bench.sh: build cri_bench and cri_tool in $build first" >&2; exit 1; }
fixture=$top/tests/lib/containerd.sh
dir=$(mktemp -d /tmp/rss-bench.XXXXXX)
trap '"$fixture" down "$dir" || true' EXIT
trap 'exit 130' INT TERM
env_lines=$("$fixture" up "$dir") || { echo "cri_bench.sh: containerd did not start" >&2; exit 1; }
eval "$env_lines"
"$bench" --endpoint "$CRI_ENDPOINT" -n "$n"
