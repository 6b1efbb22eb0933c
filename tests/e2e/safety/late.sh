# safety/late.sh -- the late and missing nodes of a lights-out: waiting for the newest copy, minimumMembers, force-seed, suspend, the journal.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# late_node, stays_off, journal and force_seed run by name only: the protocol simulator's scenarios of the
# same names (tests/sim/proto/scenarios/) check their assertions in ctest.
# shellcheck shell=bash
# ---- 1. the node with the newest copy boots late: no seed until it reports, and rssd says whom it waits for
sc_late_node() {
    ensure_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    local late mark
    late=$(member_node $R 2)
    mark=$(now)
    power_on_except "$late"
    waiting() {
        events_since "$mark" WaitingForMembers "$R" | grep "$(member $R 2)"
        status_message | grep >/dev/null "waiting for 1 of 3 member(s).*$(member $R 2)"
    }
    wait_until 60 "the status and an Event to say rssd waits for $(member $R 2)" waiting
    # Well past the dead window as the leader sees it: its node is "dead", and still no seed.
    sleep $((DEAD_S + 10))
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed primary secondary)
    [ -z "$seeds" ] || fail "started without the member holding the newest copy: $seeds"
    status_message | grep >/dev/null "$(member $R 2) (node $late is down" ||
        fail "the status does not say that $late is down: $(status_message)"
    note "after $((DEAD_S + 10)) s beyond the first report: $(status_message | cut -c1-200)"
    "$WORLD" power-on "$late" >/dev/null 2>&1 || fail "power-on $late"
    recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 90 "a seed once $late is back" recovered
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 2) seed args=[] rc=0" ]] ||
        fail "$(member $R 2) (sequence 60) should seed: $seeds"
    ensure_running
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = 60 ] || fail "the seed's data changed"
}

# ---- 2. the node stays off: by default rssd waits; minimumMembers lets it go on with a Warning
#         naming what may be lost; the member coming back newer than the seed is held, not joined
sc_stays_off() {
    ensure_running
    # Above the history rssd started from: minimumMembers below goes on without a member (history_floor).
    local b
    b=$(history_floor $R)
    power_off_all
    set_sequence $R 0 $((b + 10))
    set_sequence $R 1 $((b + 20))
    set_sequence $R 2 $((b + 60))
    local off mark
    off=$(member_node $R 2)
    mark=$(now)
    power_on_except "$off"
    sleep $((DEAD_S + 5))
    [ -z "$(hook_lines "$mark" "$R" seed primary secondary)" ] || fail "started while a member was missing"
    # The admin opts in.
    rss_patch '{"spec":{"recovery":{"minimumMembers":2}}}'
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 60 "a seed under minimumMembers 2" seeded
    local seeds warn
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds == *" $(member $R 1) seed args=[] rc=0" ]] || fail "$(member $R 1) (20) should seed: $seeds"
    warn=$(events_since "$mark" MemberSkipped "$R")
    grep -q "^Warning .*$(member $R 2)" <<<"$warn" || fail "no Warning naming $(member $R 2): $warn"
    note "Warning: $(head -1 <<<"$warn" | cut -c1-220)"
    wait_until 60 "2 members running" rss_running_n 2
    # The missing member returns with more data than the seed had: held back, with a Warning.
    local mark2
    mark2=$(now)
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    held() { events_since "$mark2" NewerThanSeed "$R" | grep >/dev/null "^Warning .*$(member $R 2)"; }
    wait_until 60 "a NewerThanSeed Warning for $(member $R 2)" held
    sleep 3
    [ -z "$(hook_lines "$mark2" "$R" primary secondary | grep " $(member $R 2) ")" ] ||
        fail "$(member $R 2) was joined over its newer data"
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = $((b + 60)) ] || fail "$(member $R 2)'s data changed while held"
    # The admin decides: let it join (its newer writes are given up), and restore the defaults.
    rss_patch '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}'
    joined() { hook_lines "$mark2" "$R" primary | grep >/dev/null " $(member $R 2) primary .* rc=0$"; }
    wait_until 60 "$(member $R 2) to join after Join" joined
    ensure_running
    rss_patch '{"spec":{"recovery":null}}'
}

# ---- 2b. the admin's override: force-seed a member while the policy waits; refused while members run.
#          force_seed_running (in the default table) is the annotation's path through the API server: a
#          Warning, the annotation removed; force_seed, the whole (by name), is the simulator's force_seed
force_seed_refused_running() {
    local mark
    mark=$(now)
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$(member $R 1)" >/dev/null || fail "annotate"
    refused() { events_since "$mark" ForceSeedRefused "$R" | grep >/dev/null "^Warning .*a member runs"; }
    wait_until 30 "the force-seed to be refused while members run" refused
    wait_until 30 "the refused annotation to be removed" force_seed_removed
    [ -z "$(hook_lines "$mark" "$R" seed stop)" ] || fail "a hook ran on a refused force-seed: $(hook_lines "$mark" "$R" seed stop)"
}
force_seed_removed() { [ -z "$(rss_json "$R" | jq -r '.metadata.annotations["rss.clusterlabs.org/force-seed"] // ""')" ]; }
sc_force_seed_running() {
    ensure_running
    force_seed_refused_running
}
sc_force_seed() {
    ensure_running
    local mark off
    force_seed_refused_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    off=$(member_node $R 2)
    mark=$(now)
    power_on_except "$off"
    # Issue 35, fault 6: the admin asks before the leader judged $off dead. Refused (its member last said
    # primary and may run), and the Warning says whom, why, and when the leader will know.
    unjudged() {
        grep -q "node $off is silent" <<<"$(status_message)" &&
            [ "$(rss_json "$R" | jq -r '[.status.memberStatus[] | select(.ordinal < 2) | .role + (.state // "")] | join(" ")')" = "stopped stopped" ]
    }
    wait_until 60 "the two members back reported stopped, $off silent" unjudged
    local early ends ends_s
    early=$(now)
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$(member $R 0)" >/dev/null || fail "annotate"
    refused_early() { grep -q "^Warning " <<<"$(events_since "$early" ForceSeedRefused "$R")"; }
    wait_until 30 "the early force-seed to be refused" refused_early
    local warning
    warning=$(events_since "$early" ForceSeedRefused "$R" | sed -n 1p)
    [[ $warning == *"force-seed of $(member $R 0) refused: a member runs or may run: $(member $R 2) last reported primary"*"its node $off has been silent since "*"; the leader judges $off dead (its members stopped) when its dead window ends at "*"and $off's kubelet is seen down: retry after that"* ]] ||
        fail "the refusal does not say whom, why and until when: $warning"
    note "${warning:0:400}"
    wait_until 30 "the refused annotation to be removed" force_seed_removed
    ends=$(sed -n 's/.*dead window ends at \([^ ]*\) (in.*/\1/p' <<<"$warning")
    ends_s=$(date -d "$ends" +%s) || fail "no time in: $warning"
    waiting() { status_message | grep >/dev/null "waiting for 1 of 3 member(s).*$(member $R 2)"; }
    wait_until 90 "the recovery to wait for $(member $R 2)" waiting
    # The time said is when the leader knows: not before it (the dead verdict also needs the kubelet read
    # down, every 5 s, and the next plan).
    [ "$(date +%s)" -ge $((ends_s - 1)) ] || fail "the leader judged $off before the time it gave ($ends)"
    [ "$(date +%s)" -le $((ends_s + DEAD_S)) ] || fail "the leader judged $off long after the time it gave ($ends)"
    note "the leader judged $off at $(date -u +%H:%M:%S), the time it gave $ends (rounded up to the second)"
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$(member $R 0)" >/dev/null || fail "annotate"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null " $(member $R 0) seed args=\[\] rc=0$"; }
    wait_until 30 "$(member $R 0) to seed on the admin's word" seeded
    events_since "$mark" ForceSeed "$R" | grep >/dev/null "^Warning .*force-seed by the admin: $(member $R 0) seeds (sequence 10)" ||
        fail "no ForceSeed Warning: $(events_since "$mark" ForceSeed "$R")"
    wait_until 30 "the used annotation to be removed" force_seed_removed
    [ "$(rss_json "$R" | jq -r .status.lastRecovery.kind)" = ForceSeed ] || fail "lastRecovery does not say ForceSeed"
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 1) primary .* rc=0$"; }
    wait_until 30 "$(member $R 1) to join" joined
    # The member that was missing has more data than the forced seed: it is held, not joined.
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    held() { events_since "$mark" NewerThanSeed "$R" | grep >/dev/null "^Warning .*$(member $R 2)"; }
    wait_until 60 "$(member $R 2) (60) to be held back" held
    rss_patch '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}'
    joined2() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 2) primary .* rc=0$"; }
    wait_until 60 "$(member $R 2) to join after Join" joined2
    ensure_running
    rss_patch '{"spec":{"recovery":null}}'
}

# ---- 2c. a planned full stop and start (spec.suspend): every member stopped one at a time, the last
#          primary last, replicas 0 with the volumes kept; on resume the highest sequence seeds. The last
#          primary's `status` hangs throughout (issue 35, fault 5): its `stop` returned 0, which is its word
#          that it stopped, so the suspend completes (it used to stop it again every 10 s, for ever) and
#          records the sequence its agent asked after the stop
sc_suspend() {
    ensure_running
    local mark stops knob
    knob=$(claim_dir $R 0)/hang-status
    if [ "$BASH_SUBSHELL" -gt 0 ]; then
        # shellcheck disable=SC2064 # the path now, not at exit
        trap "rm -f '$knob'" EXIT
    fi
    set_sequence $R 0 7
    mark=$(now)
    : >"$knob"
    rss_patch '{"spec":{"suspend":true}}'
    suspended() { [ "$(rss_phase "$R")" = Suspended ] && [ "$(members_json "$R" | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R Suspended with no pods left" suspended
    stops=$(hook_lines "$mark" "$R" stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) $(member $R 1) $(member $R 0) " ] || fail "stop order (each once): '$stops'"
    grep -q " $(member $R 0) status .* rc=hang$" <<<"$(hook_lines "$mark" "$R" status)" ||
        fail "$(member $R 0)'s status never hung: the scenario tried nothing"
    [ "$(rss_json "$R" | jq '.status.suspended.sequences | length')" = 3 ] || fail "no sequences recorded at stop"
    [ "$(rss_json "$R" | jq -r --arg p "$(member $R 0)" '.status.suspended.sequences[$p]')" = 7 ] ||
        fail "$(member $R 0)'s sequence at stop is not its 7 writes: $(rss_json "$R" | jq -c .status.suspended)"
    note "stopped in order: $stops; at stop: $(rss_json "$R" | jq -c .status.suspended.sequences)"
    rm -f "$knob"
    trap - EXIT
    # While suspended, the data changes (a restore, say): the member with the most seeds on resume.
    set_sequence $R 0 5
    set_sequence $R 1 50
    set_sequence $R 2 30
    mark=$(now)
    rss_patch '{"spec":{"suspend":false}}'
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 90 "a seed after resume" seeded
    [[ $(hook_lines "$mark" "$R" seed) == *" $(member $R 1) seed args=[] rc=0" ]] ||
        fail "$(member $R 1) (50) should seed: $(hook_lines "$mark" "$R" seed)"
    ensure_running 90
    rss_patch '{"spec":{"suspend":null}}'
}

# ---- 2f. the journal (spec.recovery.replication: Synchronous): a member lost early (its node died while
#          the others ran on and wrote) is left out of the next lights-out recovery with the proof; one
#          lost last is waited for
journal_confirmed() { # journal_confirmed POD: its journal record has a confirmed witness
    rss_json $R | jq -e --arg p "$1" '[.status.journal[]? | select(.member == $p) | .witnesses[]? |
        select(.confirmed)] | length > 0' >/dev/null
}
sc_journal() {
    ensure_running
    local ln x=-1 i xn last mark seeds ev nodes01=()
    ln=$(leader_node) || fail "no leader: $ln"
    for i in 2 1 0; do [ "$(member_node $R $i)" != "$ln" ] && { x=$i; break; }; done
    [ $x -ge 0 ] || fail "every member is on the leader's node"
    last=$(rss_json $R | jq -r --arg p "$(member $R $x)" '.status.memberStatus[] | select(.name == $p) | .lastSequence // ""')
    [ -n "$last" ] || fail "$(member $R $x) has no lastSequence in its memberStatus"
    rss_patch '{"spec":{"recovery":{"replication":"Synchronous"}}}'
    xn=$(member_node $R $x)
    for i in 0 1 2; do [ $i = $x ] || nodes01+=("$i"); done
    "$WORLD" power-off "$xn" >/dev/null 2>&1 || fail "power-off $xn"
    # The member is down once its node is dead (DEAD_S), then the window: DEAD_S + two 10 s reconcile
    # intervals + the 10 s status timeout.
    wait_until $((2 * DEAD_S + 30 + 40)) "a confirmed journal witness for $(member $R $x)" journal_confirmed "$(member $R $x)"
    note "journal: $(rss_json $R | jq -c --arg p "$(member $R $x)" '.status.journal[] | select(.member == $p)')"
    # The others wrote on; then they go dark too, and the lost member's node stays off.
    for i in "${nodes01[@]}"; do "$WORLD" power-off "$(member_node $R $i)" >/dev/null 2>&1 || fail power-off; done
    set_sequence $R "${nodes01[0]}" $((last + 10))
    set_sequence $R "${nodes01[1]}" $((last + 5))
    mark=$(now)
    power_on_except "$xn"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 90 "a seed without $(member $R $x), proven behind" seeded
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds == *" $(member $R "${nodes01[0]}") seed args=[] rc=0" && $(count_lines "$seeds") = 1 ]] ||
        fail "$(member $R "${nodes01[0]}") ($((last + 10))) should seed once: $seeds"
    ev=$(events_since "$mark" LeftOutBehind $R)
    grep -q "^Normal .*$(member $R $x) is left out" <<<"$ev" || fail "no LeftOutBehind for $(member $R $x): $ev"
    [ -z "$(events_since "$mark" MemberSkipped $R)" ] || fail "a MemberSkipped Warning: nothing was skipped on a guess"
    note "$(head -1 <<<"$ev" | cut -c1-260)"
    wait_until 60 "2 members running" rss_running_n 2
    "$WORLD" power-on "$xn" >/dev/null 2>&1 || fail "power-on $xn"
    ensure_running 120
    # Lost last: two go dark, the third a moment later; the two come back, the third stays off: wait.
    for i in "${nodes01[@]}"; do "$WORLD" power-off "$(member_node $R $i)" >/dev/null 2>&1 || fail power-off; done
    sleep 3
    "$WORLD" power-off "$xn" >/dev/null 2>&1 || fail "power-off $xn"
    mark=$(now)
    power_on_except "$xn"
    sleep $((DEAD_S + 10))
    [ -z "$(hook_lines "$mark" "$R" seed primary secondary)" ] || fail "started while the member lost last was missing"
    [[ $(status_message) == *"$(member $R $x)"* ]] || fail "the status does not say it waits for $(member $R $x): $(status_message)"
    note "waits: $(status_message | cut -c1-200)"
    "$WORLD" power-on "$xn" >/dev/null 2>&1 || fail "power-on $xn"
    ensure_running 120
    rss_patch '{"spec":{"recovery":null}}'
}

rss_running_n() { rss_json "$R" | jq -e --argjson n "$1" '(.status.members.primary // []) | length == $n' >/dev/null; }
