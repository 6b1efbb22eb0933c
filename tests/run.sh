#!/usr/bin/env bash
# tests/run.sh -- install what is missing, build, and run every test (plain and ASan+UBSan builds).
#
# Run as root on Debian bookworm. Exits non-zero on any failure. Environment:
#   RSS_BUILD_DIR   build directory (default: build)
#   RSS_SKIP_ASAN=1 skip the sanitizer build (ctest sanitizers) and valgrind (for quick local loops only)
#   CTEST_ARGS      extra ctest arguments, e.g. "-L unit" or "-R kubesim"
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

# The package list (pkgs) and its installer live in tests/lib/packages.sh (shared with the demo).
source "$top/tests/lib/packages.sh"
rss_install_packages run.sh

if [ "$(id -u)" != 0 ]; then
  echo "run.sh: the real-runtime tests need root (containerd, runc, mounts); run as root" >&2
  exit 1
fi

jobs=$(nproc)
build=${RSS_BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac

echo "== configure and build ($build)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"

echo "== the rssd image (deploy/image/build.sh; cached under /var/cache/rssd-image after the first run)"
t0=$(date +%s)
bash "$top/deploy/image/build.sh" --out "$build/rssd-image.oci.tar" >"$build/image-build.log" 2>&1 ||
    { tail -n 40 "$build/image-build.log" >&2; echo "run.sh: the image build failed" >&2; exit 1; }
echo "   ($(($(date +%s) - t0)) s; every world runs rssd from it)"

# Real helm for kube_deploy_helm: built from its Go module once per machine (minutes), cached per
# version outside the work tree (tests/lib/helm.sh), so the test's own timeout never pays for it.
echo "== helm (tests/lib/helm.sh; cached under /var/cache/rssd-tools after the first run)"
bash "$top/tests/lib/helm.sh" >/dev/null || { echo "run.sh: no helm" >&2; exit 1; }

echo "== house rules (format, string functions, public prefix)"
bash "$top/tests/lib/house_rules.sh" "$build"

# The real-Kubernetes stage runs beside ctest: both are mostly waiting (fence timeouts, dead windows,
# hooks), each world is its own (directories, node addresses, cgroups, network namespace), and one after
# the other they would take about 100 minutes on 2 cores. Its output goes to a log: a summary at the end,
# the log's tail on a failure.
echo "== in the background: real Kubernetes (tests/realk8s: built from source once per machine, then cached; log: $build/real-stage.log)"
real_stage() {
    local t0 rc=0
    t0=$(date +%s)
    bash "$top/tests/realk8s/build.sh"
    # The world's cluster DNS, built once per machine like helm (the world needs it: Galera's peers).
    bash "$top/tests/lib/coredns.sh" >/dev/null || { echo "run.sh: no coredns" >&2; return 1; }
    RSS_BUILD_DIR=$build bash "$top/tests/realk8s/test_world_real.sh"
    # Each suite's real part (tests/e2e/flavour.sh: one flavour per scenario; ctest runs the kubesim part);
    # docs/testing.md says which scenario runs where and why (safety_primary.sh has none there now).
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/e2e.sh"
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/safety.sh"
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/safety_failover.sh"
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/safety_partition.sh"
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/safety_history.sh"
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/galera.sh" || rc=$?
    [ $rc = 0 ] || [ $rc = 77 ] || { echo "run.sh: galera.sh on the real world failed" >&2; return 1; }
    rc=0
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/e2e/postgres.sh" || rc=$?
    [ $rc = 0 ] || [ $rc = 77 ] || { echo "run.sh: postgres.sh on the real world failed" >&2; return 1; }
    RSS_WORLD_FLAVOUR=real RSS_BUILD_DIR=$build bash "$top/tests/chaos/run.sh" --cycles 3
    echo "   (real Kubernetes: $(($(date +%s) - t0)) s)"
}
set -m # its own process group, so that it can be ended whole
(set -e; real_stage) >"$build/real-stage.log" 2>&1 &
real_pid=$!
set +m
# Whatever ends this script ends the background stage too (its worlds tear down on TERM).
trap 'kill -TERM -- -"$real_pid" 2>/dev/null || true' EXIT

echo "== tests"
# e2e.sh (ctest e2e_rssd) runs on the real cluster and, with rssd, kubesim and the world built with
# ASan+UBSan, on kubesim (ctest sanitizers, tests/sanitizers.sh): a third plain run would prove nothing the
# two do not. RSS_SKIP_ASAN=1 runs the plain one instead of the sanitized tree.
skip=(-E '^e2e_rssd$')
[ "${RSS_SKIP_ASAN:-0}" != 1 ] || skip=(-E '^sanitizers$')
# Two at a time, worlds too (each has its own kubesim, containerds, addresses and ports): the e2e suites
# and the chaos short run mostly wait; the model (spin), the fuzz smoke runs and the sanitized build
# (tests/sanitizers.sh) fill the slots with CPU.
t0=$(date +%s)
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j"$jobs" "${skip[@]}" ${CTEST_ARGS:-}
echo "   (ctest: $(($(date +%s) - t0)) s)"
# The protocol simulator's count (tests/sim/proto): its lines from ctest's log, and their sum.
sim_lines=$(grep -h '^[0-9]* schedules of' "$build/Testing/Temporary/LastTest.log" 2>/dev/null || true)
if [ -n "$sim_lines" ]; then
    echo "$sim_lines"
    echo "protocol simulator: $(awk '{ n += $1 } END { print n }' <<<"$sim_lines") schedules, 0 violations"
fi
# From the same log: the chaos short run's summary (ctest chaos_short; its seed replays it), the model's
# verdict (model_check), the sanitized run's (sanitizers) and the fuzz targets' table (fuzz_smoke).
sed -n '/^\[[0-9:]*\] chaos: seed/p; /^== chaos run (seed/,/^recovery (/p; /^check\.sh: /p; /^   (sanitized image/p
    /^target  *s  *execs/,/^<end of output>/{/^<end of output>/!p}' "$build/Testing/Temporary/LastTest.log" 2>/dev/null || true

if [ "${RSS_SKIP_ASAN:-0}" != 1 ]; then
  echo "== unit tests under valgrind"
  ctest --test-dir "$build" -L unit -T memcheck -j"$jobs" --output-on-failure
fi

echo "== real Kubernetes (waiting for the background stage)"
if ! wait "$real_pid"; then
    tail -n 150 "$build/real-stage.log" >&2
    echo "run.sh: the background stage failed (whole log: $build/real-stage.log)" >&2
    exit 1
fi
trap - EXIT
grep -E '^(PASS|FAIL|[0-9]+ passed|violations|   \(|target|[a-z_0-9]+ +[0-9])' "$build/real-stage.log" || true
echo "run.sh: all tests passed"
