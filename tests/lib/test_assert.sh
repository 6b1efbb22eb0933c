#!/usr/bin/env bash
# test_assert.sh -- tests/lib/assert.sh keeps its documented semantics: what fails, what counts, what a wait shows.
#
# Usage: test_assert.sh   (ctest shell_assert). Each case runs the library in a child bash and judges its
# exit status and output, so a library that stopped failing (or failed too eagerly) is caught here
# rather than by a suite that silently passes.
set -euo pipefail
# The verdict must not rest on the library under test: the outer run judges the inner one's lines.
if [ -z "${TEST_ASSERT_INNER:-}" ]; then
    out=$(TEST_ASSERT_INNER=1 bash "$0" 2>&1) && rc=0 || rc=$?
    printf '%s\n' "$out"
    ! grep -q '^FAIL' <<<"$out" && [ "$rc" = 0 ] && grep -q '^# [0-9]* checks, 0 failed$' <<<"$out"
    exit
fi
lib=$(cd "$(dirname "$0")" && pwd)/assert.sh
# shellcheck source=assert.sh
. "$lib"

# child SCRIPT: runs SCRIPT with the library sourced; sets $child_rc and $child_out (stdout and stderr).
child() {
    set +e
    child_out=$(bash -c "set -euo pipefail; . '$lib'; $1" 2>&1)
    child_rc=$?
    set -e
}

child 'fail "boom"; echo after'
expect "fail exits 1" 1 "$child_rc"
expect "fail says FAIL: MSG and nothing runs after it" "FAIL: boom" "$child_out"

child 'fail "boom" || true; echo after'
expect "fail exits even where a failing command would not end the shell" "1 FAIL: boom" "$child_rc $child_out"

child 'diag() { echo "the diagnostics"; false; }; ASSERT_ON_FAIL=diag; fail x'
expect "fail runs ASSERT_ON_FAIL (even a failing one) and still exits 1" "1 FAIL: x|the diagnostics" \
    "$child_rc $(tr '\n' '|' <<<"$child_out" | sed 's/|$//')"

child 'diag() { fail inner; }; ASSERT_ON_FAIL=diag; fail outer'
expect "a diagnostics function that fails does not recurse" "1 FAIL: outer|FAIL: inner" \
    "$child_rc $(tr '\n' '|' <<<"$child_out" | sed 's/|$//')"

child 'ok a; expect b 1 2; expect c 3 3; run d false; run e true; echo "[$checks $fails]"; checks_done'
expect "counted checks go on after a failure and checks_done fails" 1 "$child_rc"
[[ $child_out == *"FAIL 2 - b: expected '1', got '2'"* ]] && ok "bad line for expect" || bad "bad line for expect: $child_out"
[[ $child_out == *"[5 2]"* && $child_out == *"# 5 checks, 2 failed"* ]] && ok "counters" || bad "counters: $child_out"

child 'ok a; expect b 1 1; checks_done'
expect "checks_done passes when nothing failed" 0 "$child_rc"

child 'n=0; f() { echo "seen $((n += 1))"; return 1; }; wait_until 1 "never" f'
expect "wait_until fails after its deadline" 1 "$child_rc"
[[ $child_out == *"timed out after 1s waiting for: never (last seen: seen 1)"* ]] &&
    ok "the failure shows CMD's last output (CMD in a subshell: its counter never moves)" ||
    bad "wait_until's failure: $child_out"

child 'f() { [ -e "$1" ] || { touch "$1"; return 1; }; }; t=$(mktemp -u); wait_until 5 "the file" f "$t"; rm -f "$t"; echo done'
expect "wait_until returns once CMD succeeds" "0 done" "$child_rc $child_out"

child 'f() { fail "inside"; }; g() { [ -e "$1" ] || { touch "$1"; f; }; }; t=$(mktemp -u); wait_until 5 "x" g "$t"; rm -f "$t"; echo survived'
expect "a CMD that calls fail only ends that attempt" "0 survived" "$child_rc $child_out"

child 'if poll 1 false; then echo yes; else echo "no [$poll_out]"; fi; poll 1 echo hi && echo "[$poll_out]"'
expect "poll returns 1 on its deadline, 0 on success, output in poll_out" "no []|[hi]" "$(tr '\n' '|' <<<"$child_out" | sed 's/|$//')"

checks_done
