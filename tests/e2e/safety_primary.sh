#!/usr/bin/env bash
# safety_primary.sh -- one primary with read-only secondaries (spec.primaries: 1) through the faults that matter.
#
# Usage: safety_primary.sh [SCENARIO...]   (default: those of the world flavour, table at the end; `all`; `primary_create` first)
# One 3-node world with rssd from deploy/ and apps/dummy in primaries: 1 mode (a primary and two
# secondaries); fence timeout 10 s (E2E_FENCE) and a `stop` timeout of 5 s (STOP_S: the dummy stops at
# once), so the leader's dead window is 10 + 5 + 5 (kill) + 5 (margin) = 25 s. Ground truth: the
# dummy app's hooks logs and its server processes (the pid in each container's /run/dummy/pid: the same
# pid is the same run of the application). Rule 12 (unobserved is not stopped) and rule 13 (an absent
# agent is not a dead node) are what most scenarios check: rssd restarted, evicted or hung must not stop
# a running member. Prints "PASS/FAIL name" and "N passed, N failed".
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/flavour.sh"

R=dummy
FENCE_S=${E2E_FENCE%s}
STOP_S=5
DEAD_S=$((FENCE_S + STOP_S + 10))
HANG_S=${E2E_HANG_S:-60}

# running_1p: Running, 3 ready, exactly 1 primary and 2 secondaries by the status; the status hooks'
# own words are checked through dummyd_roles.
running_1p() {
    local s
    s=$(rss_json "$R") || return 1
    jq -c '{phase: .status.phase, ready: (.status.members.ready // [] | length),
        primary: (.status.members.primary // []), secondary: (.status.members.secondary // []),
        message: .status.message}' <<<"$s"
    jq -e '.status.phase == "Running" and ((.status.members.ready // []) | length) == 3
        and ((.status.members.primary // []) | length) == 1
        and ((.status.members.secondary // []) | length) == 2' <<<"$s" >/dev/null
}
ensure_running() { wait_until "${1:-90}" "$R Running with 1 primary and 2 secondaries" running_1p; }
primary_ordinal() { rss_json "$R" | jq -r '.status.members.primary[0] // ""' | sed 's/.*-//'; }

# dummyd_pids: "<pod> <pid> <role>" of each member's running application, from inside its container.
dummyd_pids() {
    local i node id
    for i in 0 1 2; do
        node=$(member_node $R $i)
        id=$("$WORLD" crictl "$node" find "$NS" "$(member $R $i)" dummy) || return 1
        echo "$(member $R $i) $("$WORLD" crictl "$node" exec "$id" sh -c 'echo $(cat /run/dummy/pid) $(cat /run/dummy/role)' 2>/dev/null)"
    done
}

# untouched MARK BEFORE WHAT: no hook but `status` and `sequence` ran since MARK, and every member runs
# the same application process in the same role as in BEFORE (dummyd_pids).
untouched() {
    local mark=$1 before=$2 what=$3 acts after
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "$what made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after $what"
    [ "$before" = "$after" ] || fail "$what restarted an application: before [$before] after [$after]"
}

no_event_since() {
    local mark=$1 reason=$2 e
    e=$(events_since "$mark" "$reason" "$R")
    [ -z "$e" ] || fail "unexpected $reason Event: $e"
}

rssd_ready_on() {
    rssd_pods_json | jq -e --arg n "$1" '[.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null
        and .status.phase == "Running" and any(.status.conditions[]?; .type == "Ready" and .status == "True"))]
        | length == 1' >/dev/null
}

# ---- 1. create: one primary (seed), two secondaries joined with the primary as their peer
sc_primary_create() {
    local mark
    mark=$(now)
    sed -e 's/^  replicas: 3$/  replicas: 3\n  primaries: 1/' -e "/^      stop:\$/{n;s/timeout: 30s/timeout: ${STOP_S}s/}" \
        "$repo/apps/dummy/rss.yaml" | k apply -n "$NS" -f - >/dev/null ||
        fail "apply the dummy RSS with primaries: 1"
    ensure_running 120
    local seeds secs
    seeds=$(hook_lines "$mark" "$R" seed primary)
    secs=$(hook_lines "$mark" "$R" secondary)
    [ "$(count_lines "$seeds")" = 1 ] || fail "one seed/primary start expected: $seeds"
    [ "$(count_lines "$secs")" = 2 ] || fail "two secondary starts expected: $secs"
    dummyd_pids | grep -c " primary$" | grep >/dev/null -x 1 || fail "not exactly one dummyd primary: $(dummyd_pids)"
}

# ---- 2. the rssd pods on the leader's node and on the primary's node are
#         deleted together (a DaemonSet update, an eviction): the primary's report predates the new
#         leader's epoch for a moment, which is not a stopped primary; nothing may be stopped
sc_restart_leader_and_primary() {
    ensure_running
    local p pnode lnode before mark n
    p=$(primary_ordinal)
    pnode=$(member_node $R "$p")
    lnode=$(leader_node) || fail "no leader"
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    for n in $(printf '%s\n' "$pnode" "$lnode" | sort -u); do
        k delete pod -n "$RSSD_NS" "$(rssd_pod "$n")" --wait=false >/dev/null || fail "delete rssd pod on $n"
    done
    sleep 2
    wait_until 90 "every rssd pod Ready again" rssd_pods_ready 3
    sleep $((DEAD_S + 5)) # past the dead window of the new leader's clock
    ensure_running
    untouched "$mark" "$before" "restarting rssd on $lnode (leader) and $pnode (primary)"
    no_event_since "$mark" NoPrimary
    note "rssd restarted on $pnode and $lnode: primary and secondaries untouched"
}

# ---- 3. rssd on the primary's node hangs (SIGSTOP) for HANG_S; node, kubelet and application are
#         fine (when that rssd leads, another takes over and sees the same). Its members count as
#         possibly running (rule 13: the kubelet reports the node Ready), the secondaries are not
#         stopped for a primary nobody sees (rule 12), and the status says why.
sc_hang_primary_agent() {
    ensure_running
    local p pnode pid before mark
    p=$(primary_ordinal)
    pnode=$(member_node $R "$p")
    pid=$(rssd_pid "$pnode") || fail "no rssd pid on $pnode"
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    local t0
    t0=$(date +%s)
    kill -STOP "$pid" || fail "SIGSTOP rssd ($pid) on $pnode"
    # shellcheck disable=SC2064 # the pid now, whatever fails later
    trap "kill -CONT $pid 2>/dev/null || true" EXIT
    # Past the dead window the leader still counts the members as running: the kubelet is Ready.
    absent() { events_since "$mark" PrimaryUnobserved "$R" | grep >/dev/null "^Warning .*$(member $R "$p") was primary.*an absent agent, not a dead node"; }
    wait_until $((DEAD_S + 30)) "a Warning that the leader waits for the unseen primary of an absent agent" absent
    local left=$((t0 + HANG_S - $(date +%s)))
    [ "$left" -le 0 ] || sleep "$left"
    local acts
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "while rssd on $pnode hung: $acts"
    # The kubelet's liveness probe (3 x 10 s) restarts an rssd hung longer than about 30 s, as a real
    # kubelet does: then the stopped process is gone and a new one runs.
    kill -CONT "$pid" 2>/dev/null || note "rssd on $pnode was restarted by its liveness probe during the hang"
    ensure_running 60
    sleep 5
    untouched "$mark" "$before" "rssd on $pnode hung for ${HANG_S} s"
    no_event_since "$mark" NoPrimary
    note "rssd on $pnode stopped ${HANG_S} s: primary and secondaries untouched; $(rssd_logs "$pnode" | grep -c "did not run for") stall line(s) in its log"
}

# ---- 3b. rssd on the primary's node alone restarts (another node leads): its report predates nothing,
#          but the member is unobserved until the new process probed it
sc_restart_primary() {
    ensure_running
    local p pnode before mark
    p=$(primary_ordinal)
    pnode=$(member_node $R "$p")
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    k delete pod -n "$RSSD_NS" "$(rssd_pod "$pnode")" --wait=false >/dev/null || fail "delete rssd pod on $pnode"
    sleep 2
    wait_until 90 "every rssd pod Ready again" rssd_pods_ready 3
    sleep 5
    ensure_running
    untouched "$mark" "$before" "restarting rssd on $pnode (primary)"
    no_event_since "$mark" NoPrimary
}

# ---- 4. the leader's rssd alone restarts: a leader change, nothing else
sc_leader_change() {
    ensure_running
    local lnode before mark samples
    lnode=$(leader_node) || fail "no leader"
    before=$(dummyd_pids) || fail "no dummyd pids"
    # The members' rss-active-member labels (client Services) every 0.2 s through the change: none of the
    # running members may lose it (a plan made before the agents re-probed under the new epoch set it to
    # "false" on every one).
    samples="$RSS_WORLD_DIR/labels-leader-change.txt"
    : >"$samples"
    sample_labels() {
        while :; do
            k get pods -n "$NS" -l "rss.clusterlabs.org/name=$R" \
                -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.labels.rss-active-member} {end}' \
                >>"$samples" 2>/dev/null
            echo >>"$samples"
            sleep 0.2
        done
    }
    [ "$(sample_labels_once)" = "3" ] || fail "not every member labelled active before the change"
    bg sample_labels
    local sampler=$!
    mark=$(now)
    k delete pod -n "$RSSD_NS" "$(rssd_pod "$lnode")" --wait=false >/dev/null || fail "delete the leader's rssd"
    sleep 2
    wait_until 90 "every rssd pod Ready again" rssd_pods_ready 3
    sleep 5
    ensure_running
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null || true
    untouched "$mark" "$before" "a leader change (rssd on $lnode restarted)"
    ! grep -q "=false" "$samples" || fail "a running member lost rss-active-member during the leader change: $(grep -m1 "=false" "$samples")"
    say "  rss-active-member stayed true on every member in all $(grep -c "=true" "$samples") samples"
}

# How many members carry rss-active-member=true now.
sample_labels_once() {
    k get pods -n "$NS" -l "rss.clusterlabs.org/name=$R" \
        -o jsonpath='{range .items[*]}{.metadata.labels.rss-active-member}{"\n"}{end}' 2>/dev/null | grep -c '^true$'
}

# ---- 5. the primary's application crashes: a member observed failed under this epoch justifies the
#         new recovery; the highest sequence seeds, the others join as secondaries
sc_app_crash() {
    ensure_running
    local p pnode id mark
    p=$(primary_ordinal)
    pnode=$(member_node $R "$p")
    id=$("$WORLD" crictl "$pnode" find "$NS" "$(member $R "$p")" dummy) || fail "no container"
    mark=$(now)
    "$WORLD" crictl "$pnode" exec "$id" sh -c 'kill -KILL $(cat /run/dummy/pid)' >/dev/null 2>&1 || fail "kill dummyd"
    recovered() { hook_lines "$mark" "$R" seed primary | grep >/dev/null "rc=0"; }
    wait_until 90 "a new primary after the crash" recovered
    ensure_running 90
    [ "$(count_lines "$(hook_lines "$mark" "$R" seed primary)")" = 1 ] ||
        fail "one new primary expected: $(hook_lines "$mark" "$R" seed primary)"
}

# ---- 6. lights-out: the newest copy seeds (it was a secondary before), the others join as secondaries
sc_lights_out() {
    ensure_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 70
    set_sequence $R 2 20
    local mark
    mark=$(now)
    power_on_all
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null "rc=0"; }
    wait_until 120 "a seed after the lights-out" seeded
    ensure_running 120
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed primary)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 1) "* ]] ||
        fail "$(member $R 1) (70) must be the one primary: $seeds"
    [ "$(count_lines "$(hook_lines "$mark" "$R" secondary)")" = 2 ] || fail "two secondaries expected"
    [ "$(wc -l <"$(claim_dir $R 1)/writes")" = 70 ] || fail "the seed's data changed"
    note "seed: $seeds"
}

# ---- 7. a secondary's node is lost (powered off past the dead window): the primary and the other
#         secondary run on untouched; back on, the member rejoins as a secondary
sc_node_loss() {
    ensure_running
    local p s snode before mark
    p=$(primary_ordinal)
    s=$(((p + 1) % 3))
    snode=$(member_node $R "$s")
    [ "$(leader_node)" != "$snode" ] || s=$(((p + 2) % 3))
    snode=$(member_node $R "$s")
    before=$(dummyd_pids | grep -v "^$(member $R "$s") ") || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" power-off "$snode" >/dev/null 2>&1 || fail "power-off $snode"
    sleep $((DEAD_S + 10))
    local acts
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary | grep -v " $(member $R "$s") " || true)
    [ -z "$acts" ] || fail "the loss of $snode made rssd act on the others: $acts"
    "$WORLD" power-on "$snode" >/dev/null 2>&1 || fail "power-on $snode"
    # Until it rejoined, the status never counts the member ready: its report from before the power-off
    # still matched the pod's container for seconds (a CI run saw "3 of 3 ready" 0.2 s before the rejoin),
    # and it is superseded by the new rssd's Lease (leader_liveness_superseded). Each status read comes
    # before the look at the hook log, so a read that lists the member while no `secondary` ran is a lie.
    local m ready t0 reads=0
    m=$(member $R "$s")
    rejoined() { hook_lines "$mark" "$R" secondary | grep >/dev/null " $m secondary "; }
    t0=$(date +%s)
    while :; do
        ready=$(k get rss "$R" -n "$NS" -o jsonpath='{.status.members.ready}' 2>/dev/null || true)
        rejoined && break
        grep -q "\"$m\"" <<<"$ready" && fail "the status counted $m ready before it rejoined: $ready"
        reads=$((reads + 1))
        [ $(($(date +%s) - t0)) -lt 120 ] || fail "$m did not rejoin as secondary"
        sleep 0.2
    done
    say "  the status left $m out of the ready members in all $reads reads before its rejoin"
    ensure_running 120
    [ "$before" = "$(dummyd_pids | grep -v "^$(member $R "$s") ")" ] || fail "the others' applications restarted"
}

# ---- 8. the API server hangs for twice the fence timeout: nothing is stopped, no application restarts
sc_primary_api_outage() {
    ensure_running
    sleep 12 # every agent re-listed its peers' addresses (the failsafe needs them)
    local before mark
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    sleep $((DEAD_S + 2))
    untouched "$mark" "$before" "an API outage of $((2 * FENCE_S + 5)) s"
}

# ---- 9. suspend and resume: secondaries stop first, then the primary; resume seeds the highest
sc_primary_suspend() {
    ensure_running
    local mark
    mark=$(now)
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "suspend"
    suspended() { [ "$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.spec.replicas}')" = 0 ]; }
    wait_until 90 "replicas 0" suspended
    local stops
    stops=$(hook_lines "$mark" "$R" stop | awk '{print $2}')
    [ "$(count_lines "$stops")" = 3 ] || fail "three stops expected: $stops"
    k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"suspend":false}}' >/dev/null || fail "resume"
    ensure_running 120
}

# ---- 10. a new RSS under minimumMembers gives its members a moment to report: no MemberSkipped
#          Warning on create (its members have no data to lose, but the Warning is noise)
sc_new_min_members() {
    local N=dm mark
    mark=$(now)
    rss_manifest $N 3 true | sed -e 's/^  replicas: 3$/  replicas: 3\n  primaries: 1\n  recovery:\n    minimumMembers: 2/' |
        k apply -n "$NS" -f - >/dev/null || fail "apply $N with minimumMembers 2"
    up() { rss_json $N | jq -e '.status.phase == "Running" and ((.status.members.ready // []) | length) == 3' >/dev/null; }
    wait_until 120 "$N Running with 3 members" up
    local skipped
    skipped=$(events_since "$mark" MemberSkipped $N)
    [ -z "$skipped" ] || fail "a new cluster skipped a member: $skipped"
    [ "$(count_lines "$(hook_lines "$mark" $N seed)")" = 1 ] || fail "one seed expected: $(hook_lines "$mark" $N seed)"
    k delete rss $N -n "$NS" --wait=false >/dev/null || true
}

# The scenarios in the order they run, each with the world flavour it runs in by default (flavour.sh; why:
# docs/testing.md): without names those of RSS_WORLD_FLAVOUR's (kubesim: ctest; real: tests/run.sh's real
# stage), `all` every one, names the named ones.
table=(primary_create:kubesim restart_leader_and_primary:kubesim restart_primary:kubesim hang_primary_agent:kubesim
    leader_change:kubesim app_crash:kubesim node_loss:kubesim primary_api_outage:kubesim lights_out:kubesim
    primary_suspend:kubesim new_min_members:kubesim)
mapfile -t sel < <(select_scenarios "${table[@]}" -- "$@")
[ ${#sel[@]} -gt 0 ] || { say "safety_primary: no scenario runs in the ${RSS_WORLD_FLAVOUR:-kubesim} world by default"; exit 0; }
[ "${sel[0]}" = primary_create ] || sel=(primary_create "${sel[@]}")

say "safety_primary: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
run_scenarios 1 "${sel[@]}"
