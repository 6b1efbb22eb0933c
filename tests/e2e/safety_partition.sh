#!/usr/bin/env bash
# safety_partition.sh -- partial partitions and stalled rollouts, for one primary with secondaries.
#
# Usage: safety_partition.sh [SCENARIO...]   (default: those of the world flavour, table at the end; `all`)
# One 3-node world with rssd from deploy/ and apps/dummy in `spec.primaries: 1` mode; the agents' fence
# timeout is 10 s (E2E_FENCE). Ground truth: the hooks logs on the volumes (who ran seed/primary/
# secondary/stop, when); rssd's Events are checked in addition where saying so is the behaviour.
# Prints "PASS/FAIL name" and "N passed, N failed".
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/flavour.sh"

FENCE_S=${E2E_FENCE%s}
# The fence timeout + the leader's 5 s margin: a cut node's members must have begun (here: ended, the
# stop is quick) their self-fence by then; the leader's dead window adds the stop timeout and the kill.
DEAD_S=$((FENCE_S + 5))

# sp_manifest NAME [IMAGE]: the dummy app with one primary and two secondaries.
sp_manifest() {
    rss_manifest "$1" 3 true | sed -e 's/^  replicas: 3$/  replicas: 3\n  primaries: 1/' \
        -e "s|^      image: localhost/rss/busybox:1$|      image: ${2:-localhost/rss/busybox:1}|"
}
# one_primary NAME: Running, 3 ready members, exactly one of them primary.
one_primary() {
    local s
    s=$(rss_json "$1") || return 1
    jq -c '{phase: .status.phase, ready: (.status.members.ready // [] | length),
        primary: .status.members.primary, message: .status.message}' <<<"$s"
    jq -e '.status.phase == "Running" and ((.status.members.ready // []) | length) == 3
        and ((.status.members.primary // []) | length) == 1' <<<"$s" >/dev/null
}
primary_member() { rss_json "$1" | jq -r '.status.members.primary[0] // ""'; }
node_of() { k get pod "$1" -n "$NS" -o jsonpath='{.spec.nodeName}'; }
ms_of() { date -d "$1" +%s%3N; } # a hooks.log time -> epoch ms

# primaries_overlap MARK RSS PRIMARY: from MARK on, the hooks logs replayed in time order, starting
# with PRIMARY running as the one primary: prints every seed/primary that completed while another
# member was still running as primary (a member runs as primary from its seed/primary rc=0 until its
# next stop). A hook's line is written when it ends, so a start that overlaps a stop by less than the
# hooks' own run time is not seen; anything longer is.
primaries_overlap() {
    hooks_since "$1" "$2" | awk -v p="$3" '
        BEGIN { prim[p] = 1 }
        $3 == "stop" { delete prim[$2]; next }
        ($3 == "seed" || $3 == "primary") && $NF == "rc=0" {
            for (m in prim) if (m != $2) print $1 " " $2 " " $3 " while " m " ran as primary"
            prim[$2] = 1
            next
        }
        $3 == "secondary" && $NF == "rc=0" { delete prim[$2] }'
}

# ---- 1. split brain through a partial partition (rule 13): the leader's node keeps the API server; the
#         two other nodes, the primary's among them, lose it and the leader's node but reach each other.
#         The leader sees them silent for its dead window and takes their members as stopped: they must
#         be (the failsafe keeps members running only with every hosting agent reached), and no member
#         may start as primary on the leader's side while the old primary still runs.

sc_split_brain() {
    local R=sp L P pm mark t0 group="" n others m t
    # Ordinal 0 is scheduled first, on node-1 (the world's scheduler: least loaded, then by name), and
    # a new cluster whose members all reported seeds ordinal 0 (equal sequences: the lowest ordinal):
    # the leader goes elsewhere before the RSS exists, so that the primary ends up on the cut side
    # (moving it later would restart rssd next to a primary). minimumMembers 1 (the admin's opt-in to
    # go on without silent members, which is what makes a split brain possible) comes once it runs:
    # with it at creation the first member to report seeds, wherever it is.
    lead_elsewhere node-1
    sp_manifest $R | k apply -n "$NS" -f - >/dev/null || fail "apply $R"
    wait_until 120 "$R Running with one primary" one_primary $R
    k patch rss $R -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":1}}}' >/dev/null ||
        fail "patch minimumMembers"
    L=$(leader_node) || fail "no leader"
    pm=$(primary_member $R)
    P=$(node_of "$pm")
    for n in $("$WORLD" nodes); do
        [ "$n" = "$L" ] || group=${group:+$group,}$n
    done
    note "leader on $L; primary $pm on $P; cut: $group from the API server and $L"
    [ "$P" != "$L" ] || note "the primary runs on the leader's node: the failsafe is checked, a split brain cannot happen"
    local cut_members=()
    for m in $(members_json $R | jq -r '.items[] | "\(.metadata.name)=\(.spec.nodeName)"'); do
        [ "${m#*=}" = "$L" ] || cut_members+=("${m%=*}")
    done
    [ ${#cut_members[@]} = 2 ] || fail "expected 2 members on the cut side: ${cut_members[*]}"
    mark=$(now)
    "$WORLD" partition "$group" --from "$L" || fail "partition $group --from $L"
    heal_on_exit "$group"
    t0=$(now_ms)
    all_stopped() {
        local m
        for m in "${cut_members[@]}"; do
            hook_lines "$mark" $R stop | grep >/dev/null " $m stop " || {
                echo "$m has not stopped"
                return 1
            }
        done
    }
    # Before the fix the failsafe (a majority of agents together) kept both running: this waits in vain.
    wait_until $((DEAD_S + 15)) "both members on the cut side to self-fence" all_stopped
    for m in "${cut_members[@]}"; do
        t=$(hook_lines "$mark" $R stop | grep " $m stop " | sed -n 1p | cut -d' ' -f1)
        note "$m stopped $(($(ms_of "$t") - t0)) ms after the cut"
        [ $(($(ms_of "$t") - t0)) -le $((DEAD_S * 1000)) ] ||
            fail "$m stopped $(($(ms_of "$t") - t0)) ms after the cut: later than the leader may judge its node dead (${DEAD_S} s)"
    done
    # Give the leader time to act on its dead verdict (minimumMembers 1 lets it seed on its side).
    sleep $((DEAD_S + 10))
    others=$(primaries_overlap "$mark" $R "$pm")
    [ -z "$others" ] || fail "two primaries: $others"
    for m in "${cut_members[@]}"; do
        [ -z "$(hook_lines "$mark" $R seed primary secondary | grep " $m ")" ] || fail "$m started while cut off"
    done
    note "on the leader's side: $(hook_lines "$mark" $R seed primary secondary stop | grep -v -e " ${cut_members[0]} " -e " ${cut_members[1]} " | awk '{print $2, $3, $NF}' | tr '\n' ';')"
    "$WORLD" heal "$group" || fail "heal $group"
    trap - EXIT
    # What the cluster does after the heal is the planner's business (a held member, a rejoin): here
    # only that it never runs two primaries while it settles.
    sleep 20
    others=$(primaries_overlap "$mark" $R "$pm")
    [ -z "$others" ] || fail "two primaries after the heal: $others"
    k delete rss $R -n "$NS" --wait=false >/dev/null || true
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R's pods to go" gone
}

# ---- 2. a typo in the image tag during a rolling update: the new pod never starts. rssd says so with a
#         Warning (not only a Normal "waiting"), stops no one else, and once the template is fixed it
#         recreates the stuck pod from it (the StatefulSet is OnDelete: nobody else would).
sc_image_typo() {
    local R=rt mark stuck uid0 stops reason others
    sp_manifest $R | sed 's/^      imagePullPolicy: Never$/      imagePullPolicy: IfNotPresent/' |
        k apply -n "$NS" -f - >/dev/null || fail "apply $R"
    wait_until 120 "$R Running with one primary" one_primary $R
    mark=$(now)
    k patch rss $R -n "$NS" --type json \
        -p '[{"op":"replace","path":"/spec/pod/containers/0/image","value":"localhost/rss/busybox:no-such-tag"}]' \
        >/dev/null || fail "patch the image"
    # The first member to roll: the highest-ordinal secondary. Its new pod stays Pending.
    stuck_pod() {
        members_json $R | jq -r '.items[] | select(.status.phase == "Pending" and .metadata.deletionTimestamp == null)
            | "\(.metadata.name) \(.metadata.uid) \([.status.containerStatuses[]?.state.waiting.reason // empty] | join(","))"' |
            grep .
    }
    wait_until 90 "a member's new pod to stay Pending on the missing image" stuck_pod
    read -r stuck uid0 reason <<<"$(stuck_pod | sed -n 1p)"
    image_reason() { stuck_pod | grep -E "^$stuck .*(ErrImagePull|ImagePullBackOff)"; }
    # The world's kubelet reports it as a real one does: ErrImagePull, then ImagePullBackOff.
    wait_until 30 "the kubelet to report ErrImagePull/ImagePullBackOff for $stuck" image_reason
    warned() { events_since "$mark" RolloutHalted $R | grep "^Warning .*$stuck.*cannot start"; }
    # Before the fix only Normal RollingUpdate "waiting for ... (unknown)" came: this waits in vain.
    wait_until 60 "a Warning that $stuck cannot start" warned
    note "$(events_since "$mark" RolloutHalted $R | sed -n 1p | cut -c1-220)"
    sleep 10
    stops=$(hook_lines "$mark" $R stop seed primary secondary)
    [ "$(count_lines "$stops")" = 1 ] && [[ $stops == *" $stuck stop "* ]] ||
        fail "only $stuck should have been stopped while its pod cannot start: $stops"
    # The admin fixes the template.
    k patch rss $R -n "$NS" --type json \
        -p '[{"op":"replace","path":"/spec/pod/containers/0/image","value":"localhost/rss/busybox:1"}]' \
        >/dev/null || fail "patch the image back"
    recreated() { local u; u=$(k get pod "$stuck" -n "$NS" -o jsonpath='{.metadata.uid}' 2>/dev/null) && [ -n "$u" ] && [ "$u" != "$uid0" ]; }
    # Before the fix the Pending pod stayed for good (4 minutes seen), the admin had to delete it.
    wait_until 60 "$stuck to be recreated from the fixed template" recreated
    events_since "$mark" RollingUpdate $R | grep >/dev/null "$stuck never started a container" ||
        fail "no RollingUpdate event says why $stuck was deleted"
    joined() { hook_lines "$mark" $R secondary primary | grep >/dev/null " $stuck \(secondary\|primary\) .* rc=0$"; }
    wait_until 60 "$stuck to join again" joined
    wait_until 120 "$R Running with one primary" one_primary $R
    [ -z "$(hook_lines "$mark" $R seed)" ] || fail "a seed during a rollout: $(hook_lines "$mark" $R seed)"
    others=$(hook_lines "$mark" $R stop | grep -v " $stuck " || true)
    [ -z "$others" ] || fail "members stopped beside $stuck: $others"
    k delete rss $R -n "$NS" --wait=false >/dev/null || true
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R's pods to go" gone
}

# with_data RSS: every member's volume holds 5 writes (as a database that was written to). The failovers
# below seed a secondary without the cut member (minimumMembers 1); an empty member never seeds without
# every member once the cluster ran (rule 3), so an RSS nobody wrote to would wait instead.
with_data() {
    local o
    for o in 0 1 2; do set_sequence "$1" $o 5; done
}

# ---- 3. the leader's dead verdict takes the silent node's members as stopped, but the agent's fence runs
#         the `stop` hook, which may take up to its timeout (30 s here, 10 min by default). A primary
#         whose `stop` takes 20 s on a node cut off from everything: the leader must not seed a secondary
#         (minimumMembers 1) while the old primary still runs (it did 16 s after the cut, with fence
#         timeout + 5 s as the window), and must fail over once the window (fence timeout + the stop
#         timeout + the kill + the margin) has passed.
sc_slow_fence_stop() {
    local R=sf pm P L mark others
    lead_elsewhere node-1
    sp_manifest $R | k apply -n "$NS" -f - >/dev/null || fail "apply $R"
    wait_until 120 "$R Running with one primary" one_primary $R
    k patch rss $R -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":1}}}' >/dev/null ||
        fail "patch minimumMembers"
    with_data $R
    pm=$(primary_member $R)
    P=$(node_of "$pm")
    # Ordinal 0 is not always on node-1 (earlier scenarios' pods count in the scheduler's load): the cut
    # node must not lead; a restart of rssd beside the primary stops nothing (rule 12).
    lead_elsewhere "$P"
    wait_until 60 "$R Running with one primary" one_primary $R
    L=$(leader_node) || fail "no leader"
    [ "$P" != "$L" ] || fail "setup: the primary $pm runs on the leader's node $L"
    # The agent publishes its fence timeout for the leader's window (the longer of the two counts).
    local pub
    pub=$(k get lease "rssd-node-$P" -n "$RSSD_NS" -o json |
        jq -r '.metadata.annotations["rss.clusterlabs.org/fence-timeout"] // ""')
    [ "$pub" = "$((FENCE_S * 1000))" ] || fail "node $P's heartbeat Lease publishes fence timeout '$pub'"
    echo 20 >"$RSS_WORLD_DIR/pv/$NS/data-$pm/delay-stop"
    mark=$(now)
    "$WORLD" partition "$P" || fail "partition $P"
    heal_on_exit "$P"
    # The window: fence timeout + the 30 s stop timeout + the 5 s kill + the 5 s margin; then a pass.
    failed_over() { [ -n "$(hook_lines "$mark" $R seed primary | grep -v " $pm " | grep ' rc=0$')" ]; }
    wait_until $((DEAD_S + 30 + 5 + 40)) "a failover away from $pm" failed_over
    # A hook's line is written when it ends: the old primary's fence stop ends about fence timeout + 20 s
    # after the cut, and only then does the overlap show.
    old_stopped() { hook_lines "$mark" $R stop | grep >/dev/null " $pm "; }
    wait_until 60 "the old primary $pm's fence stop to end" old_stopped
    others=$(primaries_overlap "$mark" $R "$pm")
    rm -f "$RSS_WORLD_DIR/pv/$NS/data-$pm/delay-stop"
    "$WORLD" heal "$P" || fail "heal $P"
    trap - EXIT
    note "hooks: $(hook_lines "$mark" $R seed primary secondary stop | awk '{print $1, $2, $3, $NF}' | tr '\n' ';')"
    [ -z "$others" ] || fail "two primaries: $others"
    k delete rss $R -n "$NS" --wait=false >/dev/null || true
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R's pods to go" gone
}

# ---- 4. the fence's last resort: a primary whose `stop` hangs (past its 30 s timeout) on a node cut off
#         from everything. The runtime kills the hook at its timeout; the application would still run
#         beside the member the leader seeds after its dead window, so the agent kills the container
#         (CRI StopContainer, timeout 0) within the window's kill allowance. Judged from the container:
#         after the heal, the old primary's first `status` says stopped (7), or its container was
#         restarted (the kubelet's restartCount), never "running as primary".
sc_hung_fence_stop() {
    local R=hf pm P L mark heal first restarts
    lead_elsewhere node-1
    sp_manifest $R | k apply -n "$NS" -f - >/dev/null || fail "apply $R"
    wait_until 120 "$R Running with one primary" one_primary $R
    k patch rss $R -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":1}}}' >/dev/null ||
        fail "patch minimumMembers"
    with_data $R
    pm=$(primary_member $R)
    P=$(node_of "$pm")
    # The cut node must not be the leader's: move the leadership off the primary's node (a restart of
    # rssd there stops nothing, rule 12). Where the scheduler put ordinal 0 decides which node that is.
    lead_elsewhere "$P"
    wait_until 60 "$R Running with one primary" one_primary $R
    L=$(leader_node) || fail "no leader"
    [ "$P" != "$L" ] || fail "setup: the primary $pm runs on the leader's node $L"
    restarts=$(k get pod "$pm" -n "$NS" -o jsonpath='{.status.containerStatuses[0].restartCount}')
    touch "$RSS_WORLD_DIR/pv/$NS/data-$pm/hang-stop"
    mark=$(now)
    "$WORLD" partition "$P" || fail "partition $P"
    heal_on_exit "$P"
    failed_over() { [ -n "$(hook_lines "$mark" $R seed primary | grep -v " $pm " | grep ' rc=0$')" ]; }
    wait_until $((DEAD_S + 30 + 5 + 40)) "a failover away from $pm" failed_over
    [ -n "$(hook_lines "$mark" $R stop | grep " $pm .*rc=hang")" ] || fail "$pm's fence stop did not hang"
    rm -f "$RSS_WORLD_DIR/pv/$NS/data-$pm/hang-stop"
    heal=$(now)
    "$WORLD" heal "$P" || fail "heal $P"
    trap - EXIT
    probed() {
        [ -n "$(hook_lines "$heal" $R status stop | grep " $pm ")" ] && return 0
        local r
        r=$(k get pod "$pm" -n "$NS" -o jsonpath='{.status.containerStatuses[0].restartCount}') || return 1
        [ "${r:-0}" -gt "${restarts:-0}" ]
    }
    wait_until 60 "$pm probed or restarted after the heal" probed
    first=$(hook_lines "$heal" $R status stop | grep " $pm " | sed -n 1p || true)
    note "after the heal: ${first:-no hook yet}; restarts $restarts -> $(k get pod "$pm" -n "$NS" -o jsonpath='{.status.containerStatuses[0].restartCount}')"
    case $first in
    *" status "*" rc=8" | *" status "*" rc=0") fail "$pm still ran after its hung fence stop: $first" ;;
    esac
    k delete rss $R -n "$NS" --wait=false >/dev/null || true
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R's pods to go" gone
}

# ---- 5. rssd stopped (SIGTERM: an eviction, a DaemonSet update, a liveness kill) while its fence stop
#         hangs on a cut node: the process kills the member's container before it exits, well before the
#         stop timeout would have (30 s), so the leader's dead window holds whether or not the next rssd
#         starts in time (a crash-loop back-off once started it only after the heal, its primary still
#         running beside the one the leader had seeded). Judged by the member's container on the node (CRI).
sc_fence_stop_sigterm() {
    local R=ht pm P L mark cid t
    lead_elsewhere node-1
    sp_manifest $R | k apply -n "$NS" -f - >/dev/null || fail "apply $R"
    wait_until 120 "$R Running with one primary" one_primary $R
    pm=$(primary_member $R)
    P=$(node_of "$pm")
    lead_elsewhere "$P"
    wait_until 60 "$R Running with one primary" one_primary $R
    L=$(leader_node) || fail "no leader"
    [ "$P" != "$L" ] || fail "setup: the primary $pm runs on the leader's node $L"
    cid=$("$WORLD" crictl "$P" find "$NS" "$pm" dummy) || fail "no container of $pm"
    touch "$RSS_WORLD_DIR/pv/$NS/data-$pm/hang-stop"
    mark=$(now)
    "$WORLD" partition "$P" || fail "partition $P"
    heal_on_exit "$P"
    hung() { [ -n "$(hook_lines "$mark" $R stop | grep " $pm .*rc=hang")" ]; }
    wait_until $((FENCE_S + 30)) "$pm's fence stop to hang" hung
    t=$(now_ms)
    kill -TERM "$(rssd_pid "$P")" || fail "no rssd on $P"
    killed() { ! "$WORLD" crictl "$P" exec "$cid" true >/dev/null 2>&1; }
    wait_until 15 "$pm's container $cid killed by the stopping rssd (the stop timeout is 30 s)" killed
    note "container of $pm gone $(($(now_ms) - t)) ms after rssd's SIGTERM"
    rm -f "$RSS_WORLD_DIR/pv/$NS/data-$pm/hang-stop"
    "$WORLD" heal "$P" || fail "heal $P"
    trap - EXIT
    k delete rss $R -n "$NS" --wait=false >/dev/null || true
    gone() { [ "$(members_json $R | jq '.items | length')" = 0 ]; }
    wait_until 120 "$R's pods to go" gone
}

# The scenarios in the order they run, each with the world flavour it runs in by default (flavour.sh; why:
# docs/testing.md): without names those of RSS_WORLD_FLAVOUR's (kubesim: ctest; real: tests/run.sh's real
# stage), `all` every one, names the named ones.
table=(split_brain:real image_typo:kubesim slow_fence_stop:kubesim hung_fence_stop:kubesim fence_stop_sigterm:kubesim)
mapfile -t sel < <(select_scenarios "${table[@]}" -- "$@")
[ ${#sel[@]} -gt 0 ] || { say "safety_partition: no scenario runs in the ${RSS_WORLD_FLAVOUR:-kubesim} world by default"; exit 0; }

say "safety_partition: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
run_scenarios 0 "${sel[@]}"
