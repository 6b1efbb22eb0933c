# safety/api_outage.sh -- API server outages: the failsafe keeps running members running, and the end of an outage stops nothing.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
# ---- 6b. the end of an API outage: the peers renew first and vouch "a peer reaches the API server, this
#          node is cut off" while one agent's own renewals still fail; it asks the API server itself
#          before stopping anything, and stops nothing (chaos seed 20261125, cycles 35 and 83)
sc_outage_end() {
    ensure_running
    peers_current
    local x=2 xn before after mark acts
    [ "$(member_node $R $x)" != "$(leader_node)" ] || x=1
    xn=$(member_node $R $x)
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    # This node's heartbeat renewals fail from now until 2 s after the thaw (the rule also catches the
    # renewals queued in the frozen server), while the others renew as soon as the API answers again.
    sim fail "count=200&code=503&verb=PUT&path=/apis/coordination.k8s.io/v1/namespaces/$RSSD_NS/leases/rssd-node-$xn" ||
        fail "/_sim/fail"
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 2
    sim clear || fail "/_sim/clear"
    ensure_running 90
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the end of the outage made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    rssd_logs "$xn" | input_has "self-fencing of pod $NS/$(member $R $x) called off" ||
        fail "$xn's agent never got to the fence decision (the race was not reproduced)"
    note "$(member $R $x) on $xn: renewals refused after the thaw, peers vouched 'cut off', its own look called the stop off"
}

# dummyd_pids: "pod pid" of each member's application (from its run state, through the runtime).
dummyd_pids() {
    local i node id
    for i in 0 1 2; do
        node=$(member_node $R $i)
        id=$("$WORLD" crictl "$node" find "$NS" "$(member $R $i)" dummy) || return 1
        echo "$(member $R $i) $("$WORLD" crictl "$node" exec "$id" cat /run/dummy/pid 2>/dev/null)"
    done
}

# ---- 8. the API server hangs for twice the fence timeout: the agents reach each other, so nothing
#         stops (failsafe); no hook but `status` runs, the applications never restart
sc_api_outage() {
    ensure_running
    peers_current
    local before after mark
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    local acts
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the API outage made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    local kept
    kept=$(rssd_logs | grep -c "keeps running although the API server" || true)
    [ "$kept" -ge 3 ] || fail "the agents did not say why they kept their members ($kept lines)"
    note "API frozen $((2 * FENCE_S + 5)) s: no action, same pids ($(tr '\n' ' ' <<<"$after"))"
}

# ---- 8a. the same outage right after a lights-out whose nodes booted seconds apart (found by the chaos
#          harness, tests/chaos): the first agent up read the others' Leases before they had published
#          their new addresses, kept the stale ones for 30 s, reached no peer and stopped its member
sc_outage_after_lightsout() {
    ensure_running
    power_off_all
    "$WORLD" power-on node-1 >/dev/null 2>&1 || fail "power-on node-1"
    sleep 4
    power_on_except node-1
    ensure_running 90
    sleep 3 # more than the 2 s listing period of agents that just started
    local before after mark acts
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the API outage after the lights-out made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    note "API frozen $((2 * FENCE_S + 5)) s, ~10 s after a staggered lights-out: no action, same pids"
}

# ---- 8c. the same outage right after one hosting node rebooted: its new agent has a new failsafe key,
#          and the API freezes as soon as its member runs again, well within the 10 s period at which the
#          agents re-read their peers' heartbeat Leases. They held its old key, could not vouch for it,
#          and every agent stopped its healthy member; now its member's new report makes them read its
#          Lease at once (and the rebooted agent, which read its peers' Leases only at its heartbeats,
#          stopped the member it had just started: it now reads them as soon as its watches name them).
#          Judged from the hook logs and the applications' pids.
sc_outage_after_reboot() {
    ensure_running
    peers_current
    # Past the other agents' first 30 s, in which they re-read every 2 s (a fresh world's): their 10 s
    # period is what this scenario is about.
    sleep 20
    local x=2 xn before after mark acts t_on gap
    [ "$(member_node $R $x)" != "$(leader_node)" ] || x=1
    xn=$(member_node $R $x)
    "$WORLD" power-off "$xn" >/dev/null 2>&1 || fail "power-off $xn"
    sleep 2
    mark=$(now)
    t_on=$(date +%s)
    "$WORLD" power-on "$xn" >/dev/null 2>&1 || fail "power-on $xn"
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R $x) primary .* rc=0$"; }
    wait_until 90 "$(member $R $x) to start again on $xn" joined
    ensure_running 30 # its agent reported it running: the record the others watch
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    gap=$(($(date +%s) - t_on))
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the API outage ${gap} s after $xn's power-on made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    note "API frozen $((2 * FENCE_S + 5)) s as soon as $(member $R $x) ran again, ${gap} s after $xn's power-on: no action, same pids ($(rssd_logs | grep -c "read the heartbeat Lease of $xn: a new agent" || true) early reads of $xn's Lease logged)"
}

# ---- 8b. the same outage with every member stopped before it, and distinct data written during it:
#          after it the highest sequence seeds, once every member reported (the heartbeats look old
#          after an outage only because nobody could write: no node may count as dead for it)
sc_outage_stopped() {
    ensure_running
    power_off_all
    local i
    for i in 0 1 2; do printf 'unreadable' >"$(claim_dir $R $i)/garbage-sequence"; done
    local mark
    mark=$(now)
    power_on_all
    reported() { [ "$(hook_lines "$mark" "$R" sequence | grep -c "out=unreadable")" -ge 3 ]; }
    wait_until 60 "all 3 members stopped, with no usable sequence" reported
    "$WORLD" api-freeze || fail "api-freeze"
    set_sequence $R 0 10
    set_sequence $R 1 60
    set_sequence $R 2 30
    for i in 0 1 2; do rm -f "$(claim_dir $R $i)/garbage-sequence"; done
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 90 "a seed after the outage" seeded
    local seeds t
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 1) seed args=[] rc=0" ]] ||
        fail "$(member $R 1) (sequence 60) should seed: $seeds"
    t=$(line_time "$seeds")
    for i in 0:10 1:60 2:30; do
        hook_lines "$mark" "$R" sequence | awk -v t="$t" '$1 < t' | grep >/dev/null " $(member $R "${i%%:*}") sequence .* out=${i#*:} rc=0$" ||
            fail "seeded before $(member $R "${i%%:*}") reported ${i#*:}"
    done
    ensure_running 90
}
