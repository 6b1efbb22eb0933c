#!/usr/bin/env bash
# safety_history.sh -- rule 14 end to end: a member left out of a recovery under minimumMembers holds a
# history the cluster gave up; it never seeds a later recovery and is not joined over its writes until
# the admin releases it, whatever happens to its pod or to the RSS in between.
#
# Usage: safety_history.sh [SCENARIO...]   (default: those of the world flavour, table at the end; `all`;
# each later scenario starts from the held member the first one makes, and makes it again if it is not there)
# One 3-node world with rssd from deploy/ and apps/dummy. Ground truth: the hook logs and the writes on
# the volumes; rssd's Events and records are checked in addition. Prints "PASS/FAIL name" and
# "N passed, N failed".
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/flavour.sh"

R=dummy
H=2 # the ordinal left out and held
held_pod() { member $R $H; }
ensure_running() { wait_until 90 "$R Running with 3 primaries" rss_running "$R" 3; }
# primaries_n N: N members run as primaries (the phase stays Degraded while the held one is out).
primaries_n() { rss_json "$R" | jq -e --argjson n "$1" '(.status.members.primary // []) | length == $n' >/dev/null; }
two_primaries() { wait_until 90 "2 members running as primaries" primaries_n 2; }
rss_patch() { k patch rss "$R" -n "$NS" --type merge -p "$1" >/dev/null || fail "kubectl patch rss $1"; }
writes() { wc -l <"$(claim_dir $R "$1")/writes"; }
power_on_except() {
    local n pids=() p
    for n in $("$WORLD" nodes); do
        [ "$n" = "$1" ] && continue
        "$WORLD" power-on "$n" >/dev/null 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fail "power-on"; done
}
# started_since MARK ORDINAL: the start hooks (seed, primary, secondary) that ran on the member since MARK.
started_since() { hook_lines "$1" $R seed primary secondary | grep " $(member $R "$2") " || true; }
# reported POD: the agent reported a sequence (or a sequence error) for the pod's current incarnation.
reported() { observed "$1" | jq -e 'has("sequence") or has("sequenceError")' >/dev/null; }
hold_in_record() { record "$(held_pod)" | jq -e '.data.leftOut // "" | length > 0' >/dev/null; }
# new_pod_judged MARK: the held member's new pod reported its sequence, or was (wrongly) started since MARK.
new_pod_judged() { reported "$(held_pod)" || [ -n "$(started_since "$1" $H)" ]; }
held_warning() { events_since "$1" NewerThanSeed $R | grep >/dev/null "^Warning .*$(held_pod)"; }

# The held member must be untouched since MARK: no start hook, its HB+120 writes as they were.
still_held() {
    local s
    s=$(started_since "$1" $H)
    [ -z "$s" ] || fail "$(held_pod) was started over the writes it is held for: $s"
    [ "$(writes $H)" = $((HB + 120)) ] || fail "$(held_pod)'s data changed while held: $(writes $H) writes"
}

# make_held: lights-out with 100/100/120 (above HB, the history rssd started from: history_floor; a
# recovery without a member never seeds below it), the node of ordinal 2 stays off, minimumMembers 2 seeds
# 100 without it, the cluster acknowledges 5 more writes (105/105), ordinal 2 comes back and is held.
HB=0
make_held() {
    ensure_running
    HB=$(history_floor $R)
    rss_patch '{"spec":{"recovery":{"minimumMembers":2}}}'
    power_off_all
    set_sequence $R 0 $((HB + 100))
    set_sequence $R 1 $((HB + 100))
    set_sequence $R $H $((HB + 120))
    local off mark
    off=$(member_node $R $H)
    mark=$(now)
    power_on_except "$off"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 90 "a seed under minimumMembers 2 without $(held_pod)" seeded
    events_since "$mark" MemberSkipped "$R" | grep >/dev/null "^Warning .*$(held_pod)" || fail "no MemberSkipped Warning"
    two_primaries
    # The running cluster acknowledges 5 writes: on both members, as a replicated write is.
    seq $((HB + 101)) $((HB + 105)) >>"$(claim_dir $R 0)/writes"
    seq $((HB + 101)) $((HB + 105)) >>"$(claim_dir $R 1)/writes"
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    wait_until 60 "a NewerThanSeed Warning for $(held_pod)" held_warning "$mark"
    still_held "$mark"
}
ensure_held() {
    if ! hold_in_record || [ "$(writes $H)" != $((HB + 120)) ]; then make_held; fi
}

# ---- 1. a second lights-out with every member back: the held member (120) never seeds; the members with
#         the 5 acknowledged writes (105) do, and the held one stays held
sc_held_second_lightsout() {
    make_held
    hold_in_record || fail "the hold is not in $(held_pod)'s record (rssd-system)"
    power_off_all
    local mark seeds
    mark=$(now)
    power_on_all
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 120 "a seed after the second lights-out" seeded
    sleep 5
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "one seed expected: $seeds"
    [[ $seeds != *" $(held_pod) "* ]] || fail "the held member seeded; the 5 acknowledged writes are lost: $seeds"
    [[ $seeds == *" rc=0" ]] || fail "the seed failed: $seeds"
    local o
    o=$(awk '{print $2}' <<<"$seeds" | sed 's/.*-//')
    [ "$(writes "$o")" = $((HB + 105)) ] || fail "the seed $(member $R "$o") should hold the 105 acknowledged writes: $(writes "$o")"
    two_primaries
    still_held "$mark"
    note "seed: $seeds"
}

# ---- 2. kubectl delete pod of the held member: the new pod is held as the old one was
sc_held_delete_pod() {
    ensure_held
    local mark uid
    mark=$(now)
    uid=$(member_uid $R $H)
    k delete pod "$(held_pod)" -n "$NS" --wait=false >/dev/null || fail "delete pod"
    recreated() { local u; u=$(member_uid $R $H); [ -n "$u" ] && [ "$u" != "$uid" ] && new_pod_judged "$mark"; }
    wait_until 90 "$(held_pod) recreated and reporting" recreated
    sleep 10
    still_held "$mark"
    rss_json $R | jq -e --argjson o $H '.status.memberStatus[] | select(.ordinal == $o) | .leftOut.held' >/dev/null ||
        fail "the status does not say $(held_pod) is held"
}

# ---- 2b. the held member's node goes down and its pod is force-deleted, as the pod garbage collector does
#          once the Node object is deleted: the pod made again when the node is back is still held
sc_held_node_gone() {
    ensure_held
    local mark uid node
    mark=$(now)
    uid=$(member_uid $R $H)
    node=$(member_node $R $H)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    k delete pod "$(held_pod)" -n "$NS" --grace-period=0 --force >/dev/null 2>&1 || fail "force-delete pod"
    "$WORLD" power-on "$node" >/dev/null 2>&1 || fail "power-on $node"
    recreated() { local u; u=$(member_uid $R $H); [ -n "$u" ] && [ "$u" != "$uid" ] && new_pod_judged "$mark"; }
    wait_until 120 "$(held_pod) recreated and reporting" recreated
    sleep 10
    still_held "$mark"
    two_primaries
}

# ---- 3. a rolling update (a template change) recreates the held member's pod first: still held
sc_held_rollout() {
    ensure_held
    local mark uid containers
    mark=$(now)
    uid=$(member_uid $R $H)
    containers=$(rss_json $R | jq -c --arg v "$mark" '.spec.pod.containers | .[0].env = ((.[0].env // []) | map(select(.name != "ROLLOUT")) + [{name: "ROLLOUT", value: $v}])')
    rss_patch "{\"spec\":{\"pod\":{\"containers\":$containers}}}"
    recreated() { local u; u=$(member_uid $R $H); [ -n "$u" ] && [ "$u" != "$uid" ] && new_pod_judged "$mark"; }
    wait_until 120 "the rollout to recreate $(held_pod)" recreated
    sleep 10
    still_held "$mark"
}

# ---- 4. the RSS is deleted and created again (its status is gone): the hold lives in the member's
#         record in rssd-system; the recovery of the re-created RSS seeds 105, never the held 120
sc_held_recreate_rss() {
    ensure_held
    local mark seeds
    k delete rss $R -n "$NS" --wait=false >/dev/null || fail "delete rss"
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 120 "the members' pods to go with the RSS" gone
    # The leader's full pass (at least once a minute) drops the records of RSSs that no longer exist:
    # once the others' are gone, the held member's must still be there.
    dropped() { [ "$(record "$(member $R 0)")" = "{}" ]; }
    wait_until 90 "the other members' records dropped with the RSS" dropped
    hold_in_record || fail "the record with the hold was dropped with the RSS"
    mark=$(now)
    k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 120 "a seed of the re-created RSS" seeded
    sleep 5
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds != *" $(held_pod) "* ]] || fail "the held member seeded the re-created RSS: $seeds"
    two_primaries
    still_held "$mark"
    wait_until 60 "a NewerThanSeed Warning for $(held_pod) after the re-creation" held_warning "$mark"
    note "seed: $seeds"
}

# ---- 5. suspend and resume: every pod goes and comes back; the resume's recovery never seeds the held
#         member and it stays held
sc_held_suspend_resume() {
    ensure_held
    local mark seeds
    rss_patch '{"spec":{"suspend":true}}'
    suspended() { [ "$(rss_phase "$R")" = Suspended ] && [ "$(members_json "$R" | jq '.items | length')" = 0 ]; }
    wait_until 120 "$R Suspended with no pods left" suspended
    mark=$(now)
    rss_patch '{"spec":{"suspend":false}}'
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 120 "a seed after resume" seeded
    sleep 5
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds != *" $(held_pod) "* ]] || fail "the held member seeded the resume: $seeds"
    two_primaries
    still_held "$mark"
    rss_patch '{"spec":{"suspend":null}}'
}

# ---- 6. the admin releases the hold (annotation, audited by a Warning): it joins, the annotation is
#         used once, and the hold goes from the record once it runs
sc_held_release() {
    ensure_held
    local mark
    mark=$(now)
    k annotate rss $R -n "$NS" "rss.clusterlabs.org/release-hold=$(held_pod)" >/dev/null || fail "annotate"
    joined() { hook_lines "$mark" $R primary secondary | grep >/dev/null " $(held_pod) .* rc=0$"; }
    wait_until 60 "$(held_pod) to join once released" joined
    events_since "$mark" HoldReleased $R | grep >/dev/null "^Warning .*$(held_pod)" || fail "no HoldReleased Warning"
    [ -z "$(hook_lines "$mark" $R seed)" ] || fail "a seed on release: $(hook_lines "$mark" $R seed)"
    ensure_running
    unannotated() { [ "$(rss_json $R | jq -r '.metadata.annotations["rss.clusterlabs.org/release-hold"] // ""')" = "" ]; }
    wait_until 30 "the release-hold annotation removed" unannotated
    nohold() { ! hold_in_record; }
    wait_until 30 "the hold removed from the record once it runs" nohold
    rss_patch '{"spec":{"recovery":null}}'
}

# ---- 8. the history rssd started from (rule 3's floor; issue 35, fault 4): a lights-out recovers the
#         cluster at HB+50; at the next one the two members holding the data stay off and the third comes
#         back empty. minimumMembers 1 accepts losing what only the absent members hold, never starting an
#         empty database in place of the one rssd recovered: no seed, a Warning SeedBelowHistory; with the
#         others back the highest seeds. Before the floor, the empty member seeded (MemberSkipped).
sc_history_floor() {
    ensure_running
    local b mark on
    b=$(history_floor $R)
    power_off_all
    set_sequence $R 0 $((b + 50))
    set_sequence $R 1 $((b + 50))
    set_sequence $R $H $((b + 40))
    mark=$(now)
    power_on_all
    seeded() { hook_lines "$mark" $R seed | grep >/dev/null .; }
    wait_until 90 "the recovery at $((b + 50))" seeded
    ensure_running
    [ "$(history_floor $R)" -ge $((b + 50)) ] || fail "the recovery at $((b + 50)) left no floor: $(history_floor $R)"
    rss_patch '{"spec":{"recovery":{"minimumMembers":1}}}'
    on=$(member_node $R $H)
    power_off_all
    set_sequence $R $H 0 # its volume re-created, empty
    mark=$(now)
    "$WORLD" power-on "$on" >/dev/null 2>&1 || fail "power-on $on"
    below() { events_since "$mark" SeedBelowHistory $R | grep >/dev/null "^Warning .*$(held_pod)"; }
    wait_until 150 "a Warning SeedBelowHistory once the other nodes are judged dead" below
    sleep 3
    [ -z "$(hook_lines "$mark" $R seed primary secondary)" ] ||
        fail "an empty member seeded below the history: $(hook_lines "$mark" $R seed primary secondary)"
    note "$(events_since "$mark" SeedBelowHistory $R | sed -n 1p | cut -c1-240)"
    power_on_except "$on"
    wait_until 90 "a seed once the members with the data are back" seeded
    # Either of the two members at b+50 may seed: with minimumMembers 1 the first to report reaches the
    # floor and seeds without waiting for the other (a CI run: member 1's agent reported first).
    local seeds
    seeds=$(hook_lines "$mark" $R seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "one seed expected: $seeds"
    [[ $seeds == *" $(member $R 0) seed args=[] rc=0" || $seeds == *" $(member $R 1) seed args=[] rc=0" ]] ||
        fail "$(member $R 0) or $(member $R 1) ($((b + 50))) should seed: $seeds"
    ensure_running
    rss_patch '{"spec":{"recovery":null}}'
}

# The scenarios in the order they run, each with the world flavour it runs in by default (flavour.sh; why:
# docs/testing.md): without names those of RSS_WORLD_FLAVOUR's (kubesim: ctest; real: tests/run.sh's real
# stage), `all` every one, names the named ones.
table=(held_second_lightsout:kubesim held_delete_pod:kubesim held_node_gone:kubesim held_rollout:kubesim
    held_recreate_rss:kubesim held_suspend_resume:kubesim held_release:kubesim history_floor:real)
mapfile -t sel < <(select_scenarios "${table[@]}" -- "$@")
[ ${#sel[@]} -gt 0 ] || { say "safety_history: no scenario runs in the ${RSS_WORLD_FLAVOUR:-kubesim} world by default"; exit 0; }

say "safety_history: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
run_scenarios 0 "${sel[@]}"
