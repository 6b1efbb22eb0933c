# flavour.sh -- which of a suite's scenarios run by default in this world: the suite's table of one flavour per scenario (sourced).
#
# Every scenario runs by default in ONE world flavour, so that tests/run.sh pays for each once: `real` (the
# real Kubernetes of tests/realk8s, run in tests/run.sh's real stage: the proof) where it passes there, `kubesim`
# (ctest) where it needs kubesim's fault injection or asserts something only the kubesim world has.
# docs/testing.md says why, scenario by scenario.

# select_scenarios NAME:FLAVOUR... -- [ARG...]: prints the scenarios to run, one a line, in the table's order.
# No ARG: those of the flavour RSS_WORLD_FLAVOUR names (kubesim when unset), which the world will be made
# as; `all`: every scenario of the table; otherwise the ARGs as given (any flavour: a hand run).
select_scenarios() {
    local t names=() want=${RSS_WORLD_FLAVOUR:-kubesim} picked=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        names+=("${1%%:*}")
        [ "${1#*:}" = "$want" ] && picked+=("${1%%:*}")
        case ${1#*:} in real | kubesim) ;; *) echo "select_scenarios: $1: flavour real or kubesim" >&2; return 2 ;; esac
        shift
    done
    [ "${1:-}" = -- ] && shift
    if [ $# = 0 ]; then
        [ ${#picked[@]} = 0 ] || printf '%s\n' "${picked[@]}"
    elif [ "$*" = all ]; then
        printf '%s\n' "${names[@]}"
    else
        printf '%s\n' "$@"
    fi
}
