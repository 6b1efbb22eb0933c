# safety/rollout.sh -- rolling updates of the application, with and without an API outage in the middle.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
# ---- 2e'. rolling update of the application: a template change rolls one member at a time under rssd
#           (stop, pod recreated by the OnDelete StatefulSet, join), the highest ordinal first; a member
#           that fails after its update halts the rollout with a Warning until it runs again
revisions_current() {
    local want
    want=$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.status.updateRevision}')
    [ -n "$want" ] && members_json $R | jq -e --arg w "$want" '(.items | length) == 3 and
        all(.items[]; .metadata.labels["controller-revision-hash"] == $w and .metadata.deletionTimestamp == null)' >/dev/null
}
sc_app_rollout() {
    ensure_running
    local mark containers stops lines
    [ "$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.spec.updateStrategy.type}')" = OnDelete ] ||
        fail "the StatefulSet is not OnDelete"
    mark=$(now)
    echo 1 >"$(claim_dir $R 2)/fail-primary" # the first member rolled will not come back
    start_rollout "$mark"
    halted() { events_since "$mark" RolloutHalted $R | grep >/dev/null "^Warning .*$(member $R 2) failed after its update"; }
    wait_until 150 "a RolloutHalted Warning naming $(member $R 2)" halted
    stops=$(hook_lines "$mark" $R stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) " ] || fail "while halted only $(member $R 2) may have stopped: '$stops'"
    note "halted: $(events_since "$mark" RolloutHalted $R | sed -n 1p)"
    rm -f "$(claim_dir $R 2)/fail-primary"
    rollout_finished "$mark"
}

# start_rollout MARK: a change of the pod template (an env var), which rolls every member.
start_rollout() {
    local containers
    containers=$(rss_json $R | jq -c --arg v "$1" '.spec.pod.containers | .[0].env = ((.[0].env // []) | map(select(.name != "ROLLOUT")) + [{name: "ROLLOUT", value: $v}])')
    rss_patch "{\"spec\":{\"pod\":{\"containers\":$containers}}}"
}
# rollout_finished MARK: waits for the rollout started at MARK to end, then judges it from the hook logs:
# no seed, the highest ordinal stopped first, never two members down at once.
rollout_finished() {
    local lines stops
    done_() { revisions_current && rss_running $R 3; }
    wait_until 300 "every member on the new revision and running" done_
    lines=$(hook_lines "$1" $R stop primary secondary seed)
    [ -z "$(grep ' seed ' <<<"$lines")" ] || fail "a seed during the rollout: $(grep ' seed ' <<<"$lines")"
    stops=$(hook_lines "$1" $R stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) $(member $R 1) $(member $R 0) " ] || fail "stop order: '$stops'"
    # Never two members down: a member is down from its stop until its next successful start.
    awk '$NF == "rc=0" { if ($3 == "stop") down[$2] = 1; else delete down[$2]; n = 0; for (d in down) n++;
        if (n > 1) { print "two members down at " $1; bad = 1 } } END { exit bad }' <<<"$lines" ||
        fail "more than one member down: $lines"
    note "stops in order: $stops; $(count_lines "$(hook_lines "$1" $R primary secondary)") starts (with the failed ones)"
}

# ---- 2e''. an API outage in the middle of a rolling update, between the first member's stop and its pod's
#            deletion: the others keep running through it (no stop, no restart), and the rollout ends
#            afterwards as usual
sc_app_rollout_outage() {
    ensure_running
    peers_current
    local mark t_freeze t_thaw m2 before after acts
    m2=$(member $R 2)
    # The stop ends inside the outage, before anyone can report it: long enough for the test to see it run,
    # read the others' pids through CRI and freeze the API (seconds on a busy machine: 4 s was too short on
    # the real world with three worlds up), well inside the 30 s stop timeout and the 25 s outage.
    echo 12 >"$(claim_dir $R 2)/delay-stop"
    mark=$(now)
    start_rollout "outage-$mark"
    local node2 id2
    node2=$(member_node $R 2)
    id2=$("$WORLD" crictl "$node2" find "$NS" "$m2" dummy) || fail "no container of $m2"
    stop_runs() { "$WORLD" crictl "$node2" exec "$id2" ps -o args 2>/dev/null | grep >/dev/null '/hooks/stop'; }
    wait_until 60 "$m2's stop hook to run" stop_runs
    # The others' application pids, read through CRI only (the API is frozen when they are read again).
    local i ids=()
    for i in 0 1; do
        ids+=("$(member_node $R $i) $("$WORLD" crictl "$(member_node $R $i)" find "$NS" "$(member $R $i)" dummy)") ||
            fail "no container of $(member $R $i)"
    done
    app_pids() {
        local n c
        for i in 0 1; do
            read -r n c <<<"${ids[$i]}"
            echo "$(member $R $i) $("$WORLD" crictl "$n" exec "$c" cat /run/dummy/pid 2>/dev/null)"
        done
    }
    before=$(app_pids)
    [ "$(grep -cE ' [0-9]+$' <<<"$before")" = 2 ] || fail "the others run no application: $before"
    t_freeze=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    after=$(app_pids)
    t_thaw=$(now)
    "$WORLD" api-thaw || fail "api-thaw"
    rm -f "$(claim_dir $R 2)/delay-stop"
    hook_lines "$t_freeze" $R stop | awk -v t="$t_thaw" '$1 < t' | grep >/dev/null " $m2 stop .*rc=0" ||
        fail "$m2's stop did not end inside the outage: $(hook_lines "$mark" $R stop)"
    acts=$(hook_lines "$mark" $R stop seed primary secondary | awk -v t="$t_thaw" -v m="$m2" '$1 < t && $2 != m')
    [ -z "$acts" ] || fail "the outage made rssd act on the members still running: $acts"
    [ "$before" = "$after" ] || fail "an application restarted in the outage: before [$before] after [$after]"
    note "API frozen $((2 * FENCE_S + 5)) s while $m2's stop ran: the others kept running (pids $(awk '{print $2}' <<<"$after" | tr '\n' ' '))"
    rollout_finished "$mark"
}
