#!/usr/bin/env bash
# tests/sanitizers.sh -- the ASan+UBSan build: its unit tests, then rssd, kubesim and the world built with the sanitizers through the e2e scenarios of e2e.sh.
#
# Run by ctest as `sanitizers` (label asan), beside the suites that mostly wait; by hand:
#   RSS_BUILD_DIR=build bash tests/sanitizers.sh
# The sanitized tree is <build>-asan. Every report of any process goes to a file under a temporary
# directory; one file fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=${RSS_BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
jobs=$(nproc)

echo "== unit tests under ASan+UBSan"
cmake -S . -B "$build-asan" -DRSS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build-asan" -j"$jobs" >"$build-asan/build.log" 2>&1 ||
    { tail -n 40 "$build-asan/build.log" >&2; echo "sanitizers.sh: the sanitized build failed" >&2; exit 1; }
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$build-asan" --output-on-failure -j"$jobs" -L unit

echo "== rssd, kubesim and the world built with ASan+UBSan, through the e2e scenarios"
san=$(mktemp -d /tmp/rss-sanitizers.XXXXXX)
t0=$(date +%s)
# rssd runs from an image of its own, built from the same sources with ASan+UBSan; kubesim and the world are
# the sanitized tree's binaries. The e2e lib gives the rssd pods their sanitizer options (reports into $san
# too) and stops them through SIGTERM before the world goes (LeakSanitizer).
bash "$top/deploy/image/build.sh" --sanitize --out "$build-asan/rssd-image-asan.oci.tar" \
    >"$build-asan/image-build.log" 2>&1 ||
    { tail -n 40 "$build-asan/image-build.log" >&2; echo "sanitizers.sh: the sanitized image build failed" >&2; exit 1; }
RSS_WORLD_RSSD=container RSS_IMAGE_ARCHIVE="$build-asan/rssd-image-asan.oci.tar" RSS_E2E_SANITIZER_DIR=$san \
    ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1" UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1" \
    LSAN_OPTIONS="log_path=$san/lsan" ctest --test-dir "$build-asan" --output-on-failure -R '^e2e_rssd$'
if compgen -G "$san/*" >/dev/null; then
    head -n 40 "$san"/* >&2
    echo "sanitizers.sh: sanitizer reports from the running daemons (above; all in $san)" >&2
    exit 1
fi
rm -rf "$san"
echo "   (sanitized image and e2e: $(($(date +%s) - t0)) s, no report)"
