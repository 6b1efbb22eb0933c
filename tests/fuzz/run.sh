#!/usr/bin/env bash
# tests/fuzz/run.sh -- builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a while.
#
#   bash tests/fuzz/run.sh [--seconds N] [TARGET...]      (default: 15 s each, every target)
#
# Each target starts from its committed seed corpus (tests/fuzz/corpus/<target>/, never written) plus
# the inputs it found before (<build>/corpus/<target>/, kept between runs). One fuzzer at a time, one
# process each. Prints a table of executions and coverage per target; exits non-zero when any target
# reported a crash, a sanitizer error, a leak, a timeout or a violated property: the input is then in
# <build>/artifacts/ and the log's last lines are printed (see docs/fuzzing.md to reproduce).
# Environment: RSS_FUZZ_BUILD_DIR (default: build-fuzz), CC (default: clang).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
seconds=15
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
build=${RSS_FUZZ_BUILD_DIR:-$top/build-fuzz}
cc=${CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1 || [ "$("$cc" --version | grep -c clang)" = 0 ]; then
  echo "fuzz/run.sh: needs clang with libFuzzer (Debian: clang libclang-rt-14-dev; tests/lib/packages.sh)" >&2
  exit 1
fi

jobs=$(nproc); [ "$jobs" -gt 2 ] && jobs=2
cmake -S "$top/tests/fuzz" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
if [ ${#targets[@]} = 0 ]; then
  for f in "$top"/tests/fuzz/fuzz_*.c; do t=${f##*/fuzz_}; targets+=("${t%.c}"); done
fi

mkdir -p "$build/artifacts" "$build/logs"
failed=()
rows=()
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz/run.sh: no target $t" >&2; exit 1; }
  mkdir -p "$build/corpus/$t"
  log=$build/logs/$t.log
  rc=0
  # -timeout: one input running over 10 s is a hang; -rss_limit_mb: the machine is shared.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1536 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "$top/tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  result=ok
  if [ "$rc" != 0 ]; then
    result="FAILED (rc $rc)"
    failed+=("$t")
  fi
  rows+=("$(printf '%-11s %5s %11s %9s %6s %7s %6s  %s' "$t" "$seconds" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result")")
  echo "   fuzz_$t: $result"
done

printf '%-11s %5s %11s %9s %6s %7s %6s  %s\n' target s execs exec/s cov ft corpus result
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    echo "---- fuzz_$t ($build/logs/$t.log):" >&2
    grep -E 'property violated|safety rule|ERROR:|runtime error|SUMMARY|Test unit written|^plan:' -A3 \
      "$build/logs/$t.log" | head -n 40 >&2 || tail -n 30 "$build/logs/$t.log" >&2
    echo "   reproduce: $build/fuzz_$t $build/artifacts/$t-<crash-file>" >&2
  done
  echo "fuzz/run.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
