# assert.sh -- the one assert and wait vocabulary of the shell tests (sourced by bash, never run).
# shellcheck shell=bash
#
# Two kinds of check, so that a test says which it means:
#   fatal    fail MSG, wait_until: the first failure ends the test (or an e2e scenario's subshell),
#            because what follows would only report its consequences.
#   counted  ok, bad, expect, run, checks_done: every check runs and prints one line; checks_done
#            prints the totals and is the test's verdict. For contract tables (hooks, manifests), where
#            seeing every broken line at once is the point.
#
# fail runs the test's diagnostics before it exits: set ASSERT_ON_FAIL to the name of a function that
# prints them (the world's logs, kubesim's log...) to stderr. The counters are the globals `checks` and
# `fails` (tests read them for their own summary lines).
#
# Waits poll; they never assert on how long something took (a deadline is a generous upper bound, and
# timings belong in tests/bench). CMD runs in a subshell with its stdout and stderr captured: it cannot
# set the caller's variables, a CMD that calls fail only ends that attempt, and on a timeout the
# failure shows the last thing CMD printed (so a CMD may echo what it saw before it returns 1).

checks=${checks:-0}
fails=${fails:-0}
ASSERT_ON_FAIL=${ASSERT_ON_FAIL:-}

# fail MSG: fatal. "FAIL: MSG" and the diagnostics on stderr, then exit 1.
fail() {
    echo "FAIL: $*" >&2
    if [ -n "$ASSERT_ON_FAIL" ] && [ -z "${assert_failing:-}" ]; then
        assert_failing=1 # a diagnostics function that fails must not recurse
        "$ASSERT_ON_FAIL" >&2 || true
    fi
    exit 1
}

# ok DESC: a counted check that passed.
ok() {
    checks=$((checks + 1))
    echo "ok $checks - $*"
}

# bad DESC: a counted check that failed; the test goes on.
bad() {
    checks=$((checks + 1))
    fails=$((fails + 1))
    echo "FAIL $checks - $*"
}

# expect DESC EXPECTED ACTUAL: counted string equality; a short one-line value is shown when it passes.
expect() {
    if [ "$2" != "$3" ]; then
        bad "$1: expected '$2', got '$3'"
    elif [ ${#3} -le 60 ] && [[ $3 != *$'\n'* ]]; then
        ok "$1 ($3)"
    else
        ok "$1"
    fi
}

# run DESC CMD...: counted; CMD must succeed, its output is shown (indented) when it does not, and is
# left in $run_out either way.
run() {
    local what=$1
    shift
    if run_out=$("$@" 2>&1); then ok "$what"; else
        bad "$what"
        printf '%s\n' "$run_out" | sed 's/^/     /'
    fi
}

# checks_done: "# N checks, M failed"; returns non-zero when a counted check failed.
checks_done() {
    echo "# $checks checks, $fails failed"
    [ "$fails" = 0 ]
}

# poll SECONDS CMD...: runs CMD every 0.2 s until it succeeds (returns 0) or SECONDS have passed
# (returns 1). CMD's last output is left in $poll_out.
poll() {
    local t=$1 end
    shift
    end=$(($(date +%s) + t))
    poll_out=""
    while :; do
        if poll_out=$("$@" 2>&1); then
            return 0
        fi
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# wait_until SECONDS DESC CMD...: fatal poll; the failure says what was awaited and CMD's last output.
wait_until() {
    local t=$1 what=$2
    shift 2
    poll "$t" "$@" && return 0
    fail "timed out after ${t}s waiting for: $what (last seen: $(printf '%s' "$poll_out" | tail -n 5 | cut -c1-400))"
}
