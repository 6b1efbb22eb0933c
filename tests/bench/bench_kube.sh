#!/usr/bin/env bash
# bench_kube.sh -- prints the kube client and election figures (bench_kube against a private kubesim).
#
# Usage: bench_kube.sh [BUILD_DIR] [N] [RUNS]      (defaults: build, 2000, 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
bench=$build/tests/integration/election/bench_kube
[ -x "$bench" ] || { echo "bench_kube.sh: build bench_kube in $build first" >&2; exit 1; }
"$bench" --kubesim "$build/tests/sim/kubesim/kubesim" --candidate "$build/tests/integration/election/rss_candidate" \
  -n "${2:-2000}" --runs "${3:-3}"
