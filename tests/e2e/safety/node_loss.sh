# safety/node_loss.sh -- node loss: a dead node's member replaced (nodeLossPolicy: Replace), and not while its data may be needed.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
# ---- 8. spec.nodeLossPolicy (docs/node-loss.md): a member's node dies and stays off. Each part runs on an
#         RSS of its own without anti-affinity (the world has 3 nodes: the replacement shares a live one).
OOS=node.kubernetes.io/out-of-service
# nl_setup RSS: the RSS Running; sets o, victim, node, uid: a member alone on its node, not the leader's if
# possible (powering that off would cost an election first).
nl_setup() {
    local ln n i best=
    rss_manifest "$1" 3 false | k apply -n "$NS" -f - >/dev/null || fail "apply RSS $1"
    wait_until 120 "$1 Running with 3 primaries" rss_running "$1" 3
    ln=$(leader_node || true)
    for i in 0 1 2; do
        n=$(member_node "$1" $i)
        [ "$(members_json "$1" | jq --arg n "$n" '[.items[] | select(.spec.nodeName == $n)] | length')" = 1 ] || continue
        [ -n "$best" ] || best=$i
        if [ "$n" != "$ln" ]; then
            best=$i
            break
        fi
    done
    o=${best:-2}
    victim=$(member "$1" "$o")
    node=$(member_node "$1" "$o")
    uid=$(member_uid "$1" "$o")
}
# nl_cleanup RSS NODE: the node back on and untainted, the RSS gone (also when the scenario failed).
nl_cleanup() {
    k taint nodes "$2" "$OOS-" >/dev/null 2>&1 || true
    "$WORLD" power-on "$2" >/dev/null 2>&1 || true
    k delete rss "$1" -n "$NS" --wait=false >/dev/null 2>&1 || true
}
nl_message() { rss_json "$1" | jq -r '.status.message // ""'; }

# (a) Wait (the default): not replaced, rssd says why; (b) Replace waits for the out-of-service taint (the
# world's claims have no PV, so their locality is unknown), then the member is recreated on a live node,
# joins with `primary`, never seeds, and its claim and data are untouched.
sc_node_replace() {
    local N=nl o victim node uid mark mark2 pvc data
    nl_setup $N
    # shellcheck disable=SC2064 # expanded now on purpose: the locals are gone when the trap runs
    trap "nl_cleanup $N $node" EXIT
    pvc=$(k get pvc "data-$victim" -n "$NS" -o jsonpath='{.metadata.uid}')
    set_sequence $N "$o" 7 # data of its own, to find untouched on its volume afterwards
    data=$(md5sum <"$(claim_dir $N "$o")/writes")
    mark=$(now)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    said() { nl_message $N | grep >/dev/null "$victim: node $node is dead; waiting for it to come back (spec.nodeLossPolicy: Wait)"; }
    wait_until 90 "the status to say $victim waits for $node (Wait)" said
    events_since "$mark" MemberOnDeadNode $N | grep >/dev/null "$victim" || fail "no MemberOnDeadNode Event"
    sleep 5
    [ "$(member_uid $N "$o")" = "$uid" ] && [ "$(member_node $N "$o")" = "$node" ] || fail "replaced under Wait"
    note "Wait: $(nl_message $N | cut -c1-160)"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"nodeLossPolicy":"Replace"}}' >/dev/null || fail "patch"
    taint_said() { nl_message $N | grep >/dev/null "$victim: node $node is dead; spec.nodeLossPolicy Replace waits for the taint $OOS"; }
    wait_until 30 "the status to say Replace waits for the taint" taint_said
    sleep 3
    [ "$(member_uid $N "$o")" = "$uid" ] || fail "replaced without the taint"
    mark2=$(now)
    k taint nodes "$node" "$OOS=nodeshutdown:NoExecute" >/dev/null || fail "kubectl taint"
    replaced() {
        local u n
        u=$(member_uid $N "$o")
        n=$(member_node $N "$o")
        [ -n "$u" ] && [ "$u" != "$uid" ] && [ -n "$n" ] && [ "$n" != "$node" ]
    }
    wait_until 60 "$victim recreated on a live node" replaced
    joined() { hook_lines "$mark2" $N primary | grep >/dev/null " $victim primary .* rc=0$"; }
    wait_until 90 "$victim to join with primary" joined
    wait_until 60 "$N Running with 3 primaries" rss_running $N 3
    [ -z "$(hook_lines "$mark" $N seed)" ] || fail "a seed ran: $(hook_lines "$mark" $N seed)"
    events_since "$mark2" ReplacingMember $N | grep >/dev/null "^Warning .*$victim: node $node" ||
        fail "no ReplacingMember Warning: $(events_since "$mark2" ReplacingMember $N)"
    rss_json $N | jq -e --arg v "$victim" --arg n "$node" \
        '.status.lastReplacement.member == $v and .status.lastReplacement.fromNode == $n' >/dev/null ||
        fail "status.lastReplacement: $(rss_json $N | jq -c .status.lastReplacement)"
    [ "$(k get pvc "data-$victim" -n "$NS" -o jsonpath='{.metadata.uid}')" = "$pvc" ] ||
        fail "the claim was replaced although its locality is unknown"
    [ "$(md5sum <"$(claim_dir $N "$o")/writes")" = "$data" ] || fail "the member's data changed"
    note "$(events_since "$mark2" ReplacingMember $N | sed -n 1p | cut -c1-220)"
}

# (c) the dead node's member held the highest sequence during a lights-out: not replaced under Wait nor
# under Replace with the taint (nothing runs: its data may be needed); once the admin allows going on
# (minimumMembers 2) the survivors' highest seeds, the lost member is replaced, never seeds, and the
# replacement (same claim: the newer data) is held back like any late member newer than the seed.
sc_node_replace_highest() {
    local N=nlh o victim node uid mark i s=10 seeds
    nl_setup $N
    # shellcheck disable=SC2064 # expanded now on purpose: the locals are gone when the trap runs
    trap "nl_cleanup $N $node" EXIT
    power_off_all
    for i in 0 1 2; do
        if [ "$i" = "$o" ]; then set_sequence $N "$i" 60; else set_sequence $N "$i" $s && s=$((s + 10)); fi
    done
    mark=$(now)
    power_on_except "$node"
    sleep $((DEAD_S + 5))
    [ -z "$(hook_lines "$mark" $N seed primary secondary)" ] || fail "started while $victim was missing (Wait)"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"nodeLossPolicy":"Replace"}}' >/dev/null || fail "patch"
    k taint nodes "$node" "$OOS=nodeshutdown:NoExecute" >/dev/null || fail "kubectl taint"
    said() { nl_message $N | grep >/dev/null "$victim (node $node is down.*Replace replaces a member only while a primary runs"; }
    wait_until 30 "the status to say why $victim is not replaced" said
    sleep 5
    [ -z "$(hook_lines "$mark" $N seed primary secondary)" ] || fail "started while $victim was missing (Replace)"
    [ "$(member_uid $N "$o")" = "$uid" ] || fail "replaced during the lights-out"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":2}}}' >/dev/null || fail "patch"
    replaced() { local u; u=$(member_uid $N "$o"); [ -n "$u" ] && [ "$u" != "$uid" ]; }
    wait_until 90 "$victim replaced once a primary runs" replaced
    held() { events_since "$mark" NewerThanSeed $N | grep >/dev/null "^Warning .*$victim"; }
    wait_until 60 "the replacement (sequence 60) held back" held
    seeds=$(hook_lines "$mark" $N seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" rc=0" ]] && [[ $seeds != *" $victim "* ]] &&
        [ "$(wc -l <"$(claim_dir $N "$(awk '{print $2}' <<<"$seeds" | sed 's/.*-//')")/writes")" = 20 ] ||
        fail "one seed, on the survivor with 20: $seeds"
    events_since "$mark" ReplacingMember $N | grep >/dev/null "^Warning .*$victim: node $node" ||
        fail "ReplacingMember: $(events_since "$mark" ReplacingMember $N)"
    # The admin gives up the newer writes: it joins with primary, still never seeds.
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}' >/dev/null
    joined() { hook_lines "$mark" $N primary | grep >/dev/null " $victim primary .* rc=0$"; }
    wait_until 60 "$victim to join with primary" joined
    [ -z "$(hook_lines "$mark" $N seed | grep " $victim ")" ] || fail "the replacement seeded"
    [ "$(wc -l <"$(claim_dir $N "$o")/writes")" = 60 ] || fail "the volume changed"
    note "seed: $seeds"
}
