#!/usr/bin/env bash
# e2e.sh -- rssd end to end on one 3-node test world: create, lights-outs, failures, the rssd DaemonSet
# rollout, in sequence.
#
# Usage: e2e.sh [SCENARIO...]   (default: all, in the order below; names as printed)
# Environment: RSS_BUILD_DIR (the build with nodeagent/rssd), E2E_KEEP=1 leaves the world up.
# Prints "PASS name" / "FAIL name" per scenario and a final "N passed, N failed" line; exits non-zero
# when any failed. The ground truth is the hooks.log of each member on its claim's host directory
# (apps/dummy/README.md), not rssd's own status, which is checked in addition.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

R=dummy
svc() { echo "$R-svc"; }
peer() { echo "$(member "$R" "$1").$(svc)"; }

# ensure_running: the precondition of every scenario that uses the shared RSS.
ensure_running() { wait_until "${1:-60}" "$R Running with 3 primaries" rss_running "$R" 3; }

# line_time LINE: its timestamp; line_field LINE N.
line_time() { awk '{print $1}' <<<"$1"; }
args_of() { sed -n 's/.* args=\[\([^]]*\)\].*/\1/p' <<<"$1"; }

# ---- 1. create -> Running with 3 primaries and a correct status
# plugin_logs: kubectl rss logs on the world's RSS (sc_create).
plugin_logs() {
    local lg lj nd i
    lg=$(krss logs "$R" 2>&1) || fail "kubectl rss logs: $lg"
    for i in 0 1 2; do
        nd=$(member_node "$R" $i)
        awk -v n="$nd" -v p="$NS/$(member $R $i)" '$1 == n && index($0, "pod " p ": hook ") {f = 1} END {exit !f}' <<<"$lg" ||
            fail "kubectl rss logs: no hook line of $(member $R $i) from $nd: $(sed -n 1,5p <<<"$lg")"
    done
    lj=$(krss logs "$R" -o json 2>&1) || fail "kubectl rss logs -o json: $lj"
    # In time order: the kubelet's RFC3339Nano drops a fraction's trailing zeros, so compare with 9 digits.
    jq -e --arg r "$NS/$R" --arg m "$NS/$(sts_name "$R")-" 'def t: capture("^(?<s>[^.Z+]*)(\\.(?<f>[0-9]*))?")
        | .s + "." + ((.f // "") + "000000000")[:9];
        length > 5 and ([.[].time | t] == ([.[].time | t] | sort))
        and all(.[]; (.line | test($r + "([^A-Za-z0-9._-]|$)") or contains($m)))' <<<"$lj" >/dev/null ||
        fail "kubectl rss logs -o json: not in time order, or a line not about $R: $(jq -c '.[:3]' <<<"$lj")"
    [ "$(krss logs "$R" --tail 2 | wc -l)" = 2 ] || fail "kubectl rss logs --tail 2: not 2 lines"
    lg=$(krss logs "${R:0:3}" 2>&1) || fail "kubectl rss logs ${R:0:3}: $lg"
    [[ $lg == "No line about $NS/${R:0:3} "* ]] || fail "kubectl rss logs ${R:0:3} shows lines of $R: $(sed -n 1,3p <<<"$lg")"
    note "kubectl rss logs: $(jq length <<<"$lj") lines about $R from $(jq -r '[.[].node] | unique | join(" ")' <<<"$lj")"
    # kubectl rss report: every part read in a world where rssd runs, its log lines those of logs.
    local rd
    rm -rf "$E2E_TMP/report" "$E2E_TMP/report.tar"
    lg=$(krss report "$R" -f "$E2E_TMP/report.tar" 2>&1) || fail "kubectl rss report: $lg"
    mkdir -p "$E2E_TMP/report" && tar -xf "$E2E_TMP/report.tar" -C "$E2E_TMP/report" || fail "tar -xf the report"
    rd=$(ls -d "$E2E_TMP/report/"*)
    grep -F "(nothing: every part was read)" "$rd/README.txt" >/dev/null || fail "kubectl rss report: parts not read: $(cat "$rd/README.txt")"
    [ "$(grep -c "pod $NS/$(member $R 0): hook " "$rd/rssd-logs.txt")" -ge 1 ] || fail "kubectl rss report: no hook line of $(member $R 0) in rssd-logs.txt"
    [ "$(python3 -c 'import sys, yaml; print(len(yaml.safe_load(open(sys.argv[1]))))' "$rd/records.yaml")" = 3 ] ||
        fail "kubectl rss report: not 3 member records"
    note "kubectl rss report: $(tar -tf "$E2E_TMP/report.tar" | wc -l) files, $(wc -l <"$rd/rssd-logs.txt") log lines"
}

sc_create() {
    local mark
    mark=$(now)
    k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
    wait_until 120 "$R Running with 3 primaries" rss_running "$R" 3
    local seeds prim stops
    seeds=$(hook_lines "$mark" "$R" seed)
    prim=$(hook_lines "$mark" "$R" primary)
    stops=$(hook_lines "$mark" "$R" stop secondary)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected one seed, got: $seeds"
    # Fresh volumes: every sequence is 0, a tie, so the lowest ordinal seeds.
    [[ $seeds == *" $(member $R 0) seed args=[] rc=0" ]] || fail "seed line: $seeds"
    [ "$(count_lines "$prim")" = 2 ] || fail "expected 2 primary lines, got: $prim"
    [ -z "$stops" ] || fail "unexpected stop/secondary: $stops"
    local p1 p2
    p1=$(sed -n 1p <<<"$prim")
    p2=$(sed -n 2p <<<"$prim")
    [[ $(line_time "$p1") > $(line_time "$seeds") ]] || fail "a primary started before the seed: $p1"
    [[ $p1 == *" $(member $R 1) primary args=[$(peer 0)] rc=0" ]] || fail "first join: $p1"
    [[ $p2 == *" $(member $R 2) primary args=[$(peer 0) $(peer 1)] rc=0" ]] || fail "second join: $p2"
    local i last
    for i in 0 1 2; do
        last=$(hooks_all "$R" | awk -v p="$(member $R $i)" '$2 == p && $3 == "status"' | tail -1)
        [[ $last == *" rc=8" ]] || fail "last status of $(member $R $i): '$last'"
    done
    local bad
    bad=$(hooks_malformed "$R")
    [ -z "$bad" ] || fail "malformed hooks.log lines: $bad"
    # kubectl rss agents: every node's rssd, this build's version, a fresh heartbeat, the leader the Lease names.
    local ag ln
    ln=$(leader_node) || fail "no leader: $ln"
    ag=$("$RSS_BUILD_DIR/nodeagent/plugin/kubectl-rss" --kubeconfig "$KC" agents --rssd-namespace "$RSSD_NS" 2>&1) ||
        fail "kubectl rss agents: $ag"
    local ver
    ver=$(sed -n 's/^project(rssd VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
    [ "$(awk -v v="$ver" 'NR > 1 && NF && $2 == v && $5 == "ago" {print $1}' <<<"$ag" | sort | tr '\n' ' ')" = "$("$WORLD" nodes | sort | tr '\n' ' ')" ] ||
        fail "kubectl rss agents does not show every node's rssd $ver with a heartbeat: $ag"
    [ "$(awk 'NR > 1 && $6 == "yes" {print $1}' <<<"$ag")" = "$ln" ] || fail "kubectl rss agents names another leader than $ln: $ag"
    # kubectl rss logs (pods/log of every rssd pod, from the kubelet's files): each member's start, from
    # the agent on its node, in time order; nothing about another RSS, not even one whose name $R extends.
    # The real apiserver reads the kubelets through the world's egress proxy; kubesim serves pods/log from
    # the kubelets' files (test_kubectl.sh).
    plugin_logs
    # kubectl: status, labels, owned objects, spread.
    local s
    s=$(rss_json "$R")
    jq -e '.status.replicas == 3 and .status.readyReplicas == 3 and (.status.members.primary | sort) ==
        ["rss-dummy-0","rss-dummy-1","rss-dummy-2"] and ((.status.members.failed // []) | length) == 0' <<<"$s" >/dev/null ||
        fail "status: $(jq -c '.status | del(.memberStatus, .memberStatuses, .conditions)' <<<"$s")"
    [ "$(k get pods -n "$NS" -l "rss.clusterlabs.org/name=$R,rss-active-member=true" -o name | wc -l)" = 3 ] ||
        fail "not 3 pods labelled rss-active-member=true"
    k get svc "$(svc)" -n "$NS" -o json | jq -e '.spec.clusterIP == "None" and .spec.publishNotReadyAddresses == true
        and any(.metadata.ownerReferences[]?; .kind == "ReplicatedStatefulSet" and .controller == true)' >/dev/null ||
        fail "headless Service $(svc) missing or wrong"
    k get sts "$(sts_name $R)" -n "$NS" -o json | jq -e '.spec.serviceName == "dummy-svc" and
        any(.metadata.ownerReferences[]?; .kind == "ReplicatedStatefulSet" and .controller == true)' >/dev/null ||
        fail "StatefulSet $(sts_name $R) missing or not owned"
    [ "$(members_json "$R" | jq '[.items[].spec.nodeName] | unique | length')" = 3 ] || fail "members not spread over 3 nodes"
    [ -n "$(events_since "$mark" Bootstrap "$R" | grep "new cluster: $(member $R 0) bootstraps, all 3 members empty")" ] || fail "no Bootstrap Event for the new cluster"
    note "seed $(member $R 0) at $(line_time "$seeds"); joins: $(awk '{print $2}' <<<"$prim" | tr '\n' ' ')"
    note "kubectl get rss: $(k get rss "$R" -n "$NS" --no-headers 2>&1)"
    # The printer columns, as kubectl prints them: the primaries by name; nothing waits.
    local cols
    cols=$(k get rss "$R" -n "$NS")
    [[ $(sed -n 1p <<<"$cols") == *PRIMARY*WAITING* ]] || fail "kubectl get rss has no PRIMARY and WAITING columns: $cols"
    [ "$(rss_json "$R" | jq -r '.status.primary')" = "$(member $R 0),$(member $R 1),$(member $R 2)" ] ||
        fail "status.primary: $(rss_json "$R" | jq -c '.status | {primary, waiting}')"
    # kubectl describe tells the story: conditions with reasons, then the Events in order, a burst of
    # waits folded into one Event.
    local d
    d=$(k describe rss "$R" -n "$NS") || fail "kubectl describe rss"
    grep -q "Last Recovery:" <<<"$d" || fail "describe shows no Last Recovery"
    local t
    for t in Ready Available Degraded Recovering WaitingForMembers; do
        grep -q "Type: *$t\b" <<<"$d" || fail "describe shows no $t condition"
    done
    grep -qE "Reason: *AllMembersReady" <<<"$d" || fail "describe: Ready is not AllMembersReady"
    local evs
    evs=$(sed -n '/^Events:/,$p' <<<"$d")
    grep -q "Normal *Bootstrap .*new cluster: $(member $R 0) bootstraps" <<<"$evs" || fail "describe Events: no Bootstrap: $evs"
    # A burst of waits is one Event; a new one may only begin once the last was created a fold window
    # (10 s) before. (On the real cluster the members start later, their claims bound by a provisioner
    # first, and a second WaitingForMembers Event is then right.)
    local close
    close=$(k get events -n "$NS" -o json | jq --arg o "$R" '[.items[] | select(.reason == "WaitingForMembers"
        and .involvedObject.name == $o) | (.firstTimestamp // .eventTime // .metadata.creationTimestamp)
        | sub("\\.[0-9]+"; "") | fromdateiso8601] | sort | . as $t | [range(1; length) | $t[.] - $t[. - 1]]
        | map(select(. < 9)) | length')
    [ "$close" = 0 ] || fail "describe Events: the waits were not folded ($close begun within the fold window): $evs"
    awk '/Bootstrap/{b=NR} /Joining/{if(!j)j=NR} END{exit !(b && j && b < j)}' <<<"$evs" || fail "describe Events out of order: $evs"
}

# ---- 2. restart rssd on a node (SIGKILL: no Lease release, no goodbye) -> no hook runs twice
sc_agent_restart() {
    ensure_running
    local leader node pid ids_before ids_after mark
    leader=$(leader_node) || fail "no leader"
    node=$(member_node "$R" 1)
    [ "$node" != "$leader" ] || node=$(member_node "$R" 2)
    pid=$(rssd_pid "$node") || fail "no rssd pid on $node"
    ids_before=$(last_action_ids "$R")
    mark=$(now)
    kill -KILL "$pid"
    newpid() {
        local p
        p=$(rssd_pid "$node") || return 1
        echo "rssd pid on $node: $p"
        [ "$p" != "$pid" ] && [ -d "/proc/$p" ]
    }
    wait_until 60 "rssd restarted on $node" newpid
    # The new instance probes its member and republishes observed before anything else (rule 8).
    local m
    m=$(members_json "$R" | jq -r --arg n "$node" '.items[] | select(.spec.nodeName == $n) | .metadata.name')
    reprobed() { hooks_since "$mark" "$R" | awk -v p="$m" '$2 == p && $3 == "status"' | grep >/dev/null .; }
    wait_until 60 "$m probed by the new agent" reprobed
    sleep 2
    ensure_running 30
    local again
    again=$(hook_lines "$mark" "$R" seed primary secondary stop)
    [ -z "$again" ] || fail "hooks ran again after the agent restart: $again"
    ids_after=$(last_action_ids "$R")
    [ "$ids_before" = "$ids_after" ] || fail "lastAction changed: before [$ids_before] after [$ids_after]"
    note "killed rssd $pid on $node; it came back, re-probed $m (status only), actions unchanged"
}

# released_by HOLDER: "release->acquire N ms" from kubesim's Lease write log: HOLDER emptied the leader
# Lease (a release) before the next holder acquired it. Fails the scenario when there was no release.
# A real apiserver keeps no such log: there the test's own watch of the leader Lease (lease_watch_start,
# before the handover) records the same sequence, every update being one event of the watch, in order.
released_by() {
    local log rel
    if [ "$(world_flavour)" = real ]; then
        [ -s "$E2E_TMP/leases-watch" ] || fail "no watch of the leader Lease (lease_watch_start)"
        log=$(jq -s -c . "$E2E_TMP/leases-watch")
    else
        log=$(k get --raw /_sim/leases-log) || fail "GET /_sim/leases-log"
    fi
    rel=$(jq -r --arg h "$1" '[.[] | select(.name == "rssd-leader")] as $l
        | ($l | map(.holderIdentity == $h) | rindex(true)) as $i
        | if $i == null or $i + 1 >= ($l | length) then "none"
          else ($l[$i + 1:] | map(select(.holderIdentity != "" )) | first) as $acq
          | ($l[$i + 1:] | map(select(.holderIdentity == "")) | first) as $rel
          | if $rel == null or $acq == null then "none"
            else "release->acquire \((($acq.monoNs - $rel.monoNs) / 1e6 | floor)) ms" end end' <<<"$log")
    [ "$rel" != none ] || fail "no Lease release by $1 in /_sim/leases-log: $(jq -c '[.[] | select(.name == "rssd-leader")][-4:]' <<<"$log")"
    echo "$rel"
}
lease_watch_start() {
    [ "$(world_flavour)" = real ] || return 0
    : >"$E2E_TMP/leases-watch"
    # shellcheck disable=SC2016 # expanded by the inner shell
    bg setsid bash -c 'kubectl --kubeconfig "$1" --cache-dir "$2/kcache-watch" get lease rssd-leader -n "$3" --watch \
        -o json --request-timeout=0 | jq --unbuffered -c "{name: .metadata.name, holderIdentity: (.spec.holderIdentity // \"\")}" |
        while read -r l; do jq -c --arg t "$(date +%s%N)" ". + {monoNs: (\$t | tonumber)}" <<<"$l"; done >>"$2/leases-watch"' \
        _ "$KC" "$E2E_TMP" "$RSSD_NS"
    wait_until 10 "the leader Lease watch" test -s "$E2E_TMP/leases-watch"
}
# members_untouched MARK IDS_BEFORE: after an rssd rollout, the members ran on as primaries: no hook but
# status ran since MARK, every status said running (rc=8), and no member's lastAction changed.
members_untouched() {
    local again st
    sleep 2
    ensure_running 30
    again=$(hook_lines "$1" "$R" seed primary secondary stop)
    [ -z "$again" ] || fail "hooks ran during the rollout: $again"
    st=$(hook_lines "$1" "$R" status | grep -v ' rc=8$' || true)
    [ -z "$st" ] || fail "a member was not running as primary during the rollout: $st"
    [ "$2" = "$(last_action_ids "$R")" ] || fail "lastAction changed: before [$2] after [$(last_action_ids "$R")]"
}

# ---- 3. DaemonSet rollout: rssd restarted node by node, leader included; members never stop
# (rssd as a container: a real image swap v1 -> v2 by the DaemonSet's RollingUpdate; as host processes,
# the pods deleted one by one)
sc_rssd_rollout() {
    if [ "$(rssd_mode)" = container ]; then
        sc_rssd_rollout_image
        return
    fi
    ensure_running
    local mark ids_before lt_before leader0 n old
    mark=$(now)
    ids_before=$(last_action_ids "$R")
    lt_before=$(lease_transitions)
    leader0=$(leader_node) || fail "no leader"
    local handover=""
    for n in $("$WORLD" nodes); do
        old=$(rssd_pods_json | jq -r --arg n "$n" '.items[] | select(.spec.nodeName == $n) | .metadata.uid')
        local was_leader=0 lt0 holder0 t0
        [ "$(leader_node 2>/dev/null || true)" = "$n" ] && was_leader=1
        lt0=$(lease_transitions)
        holder0=$(leader_holder)
        t0=$(now_ms)
        k delete pod -n "$RSSD_NS" "$(rssd_pod "$n")" --wait=false >/dev/null || fail "delete rssd pod on $n"
        replaced() {
            rssd_pods_json | jq -e --arg n "$n" --arg u "$old" 'any(.items[]; .spec.nodeName == $n and .metadata.uid != $u
                and .metadata.deletionTimestamp == null and .status.phase == "Running"
                and any(.status.conditions[]?; .type == "Ready" and .status == "True"))' >/dev/null
        }
        if [ $was_leader = 1 ]; then
            moved() {
                local h
                h=$(leader_holder)
                echo "holder '$h'"
                [ -n "$h" ] && [ "$h" != "$holder0" ]
            }
            wait_until 60 "leadership to move off $n" moved
            handover="${handover:+$handover | }$n: $(($(now_ms) - t0)) ms from the delete to a new holder ($(leader_holder)), leaseTransitions $lt0 -> $(lease_transitions)"
            [ "$(lease_transitions)" -gt "$lt0" ] || fail "leaseTransitions did not grow ($lt0)"
            # The old leader released (holderIdentity emptied by an update) before the new one acquired.
            handover="$handover; $(released_by "$holder0")"
        fi
        wait_until 60 "a new rssd pod Ready on $n" replaced
    done
    members_untouched "$mark" "$ids_before"
    [ -n "$handover" ] || fail "the leader ($leader0) was never restarted"
    note "status lines during rollout: $(count_lines "$(hook_lines "$mark" "$R" status)") (all rc=8); leader was $leader0, now $(leader_node)"
    note "handover: $handover; lease duration ${E2E_LEASE}"
    [ "$(lease_transitions)" -gt "$lt_before" ] || fail "leaseTransitions $lt_before -> $(lease_transitions)"
}

# The image rollout: localhost/rss/rssd:dev (v1, as deployed) -> :v2 (the same archive under a second
# tag: a new image reference is what a release changes), applied with `kubectl set image`; the
# world's DaemonSet controller replaces one pod at a time once the previous one is Ready (its
# readiness probe on /readyz). Timings are printed, not asserted.
sc_rssd_rollout_image() {
    ensure_running
    local mark ids_before lt_before holder0 leader0 v2=localhost/rss/rssd:v2
    mark=$(now)
    ids_before=$(last_action_ids "$R")
    lt_before=$(lease_transitions)
    holder0=$(leader_holder)
    leader0=$(leader_node) || fail "no leader"
    lease_watch_start
    "$WORLD" tag-image localhost/rss/rssd:dev "$v2" || fail "world tag-image"
    local t0 n done_at=() order=() all old_uids
    # A real kubelet reports in status.containerStatuses[].image the runtime's name for the image, which
    # for one image under several tags (dev, v2 and the archive's own) need not be the one the spec names:
    # a new pod is told by its uid, not by the image its status reports.
    old_uids=$(rssd_pods_json | jq -c '[.items[].metadata.uid]')
    t0=$(now_ms)
    # The release also switches the log to JSON (--log-format=json), as a log pipeline's user would:
    # one patch, one rollout.
    k patch -n "$RSSD_NS" ds/rssd --type json -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$v2\"},
        {\"op\": \"add\", \"path\": \"/spec/template/spec/containers/0/args/-\", \"value\": \"--log-format=json\"}]" >/dev/null ||
        fail "kubectl patch the DaemonSet to $v2 with --log-format=json"
    # Each node's new pod: running v2 and Ready; recorded in the order the nodes finish.
    while :; do
        all=$(rssd_pods_json) || all='{"items":[]}'
        for n in $("$WORLD" nodes); do
            [[ " ${order[*]} " == *" $n "* ]] && continue
            if jq -e --arg n "$n" --arg img "$v2" --argjson old "$old_uids" 'any(.items[]; .spec.nodeName == $n
                and .metadata.deletionTimestamp == null and .spec.containers[0].image == $img
                and (.metadata.uid as $u | $old | any(. == $u) | not)
                and any(.status.conditions[]?; .type == "Ready" and .status == "True"))' <<<"$all" >/dev/null; then
                order+=("$n")
                done_at+=("$(($(now_ms) - t0))")
            fi
        done
        [ "${#order[@]}" = "$("$WORLD" nodes | wc -l)" ] && break
        [ $(($(now_ms) - t0)) -lt 240000 ] || fail "the rollout to $v2 did not finish in 240 s (done: ${order[*]})"
        sleep 0.2
    done
    local total=$(($(now_ms) - t0)) i steps=""
    for i in "${!order[@]}"; do steps="${steps:+$steps, }${order[$i]} ${done_at[$i]} ms"; done
    # The pods were replaced, not restarted in place: only v2 pods remain, all Ready.
    rssd_pods_json | jq -e --arg img "$v2" '[.items[] | select(.spec.containers[0].image != $img)] | length == 0' >/dev/null ||
        fail "pods of the old image remain"
    # Leadership moved by release: the old holder emptied the Lease before another acquired it.
    local rel
    rel=$(released_by "$holder0")
    [ "$(lease_transitions)" -gt "$lt_before" ] || fail "leaseTransitions $lt_before -> $(lease_transitions)"
    [ "$(leader_holder)" != "$holder0" ] || fail "the leader's pod was replaced but $holder0 still holds the Lease"
    members_untouched "$mark" "$ids_before"
    json_logs_about "$R"
    # kubectl rss logs reads the JSON lines by their rss field.
    local lj
    lj=$(krss logs "$R" -o json --since 10m 2>&1) || fail "kubectl rss logs -o json: $lj"
    jq -e --arg r "$NS/$R" '[.[].line | select(startswith("{")) | fromjson | .rss] | length > 0 and all(. == $r)' <<<"$lj" >/dev/null ||
        fail "kubectl rss logs after --log-format=json: no JSON line, or one about another RSS: $(jq -c '.[-3:]' <<<"$lj")"
    note "image rollout dev -> v2 (RollingUpdate, maxUnavailable 1): $total ms in all; Ready on v2 at: $steps"
    note "leader was $leader0 ($holder0), now $(leader_node); handover $rel; leaseTransitions $lt_before -> $(lease_transitions); status lines during rollout: $(count_lines "$(hook_lines "$mark" "$R" status)") (all rc=8)"
}

# json_logs_about RSS: every line of each node's new rssd (--log-format=json) is one JSON object with
# time, level, component and msg; the status hooks each agent runs for RSS's members carry rss, member,
# action "status" and the epoch they ran under, taken from where the agent knew them.
json_logs_about() {
    local n uid f lines objs about want="$NS/$1" ms
    ms=$(for n in 0 1 2; do member "$1" $n; done | jq -R . | jq -cs .)
    # The CRI log's lines, each rejoined from its partial (P) pieces, the "TIME STREAM TAG " prefix gone.
    cri_lines() { awk '{t = $3; sub(/^[^ ]+ [^ ]+ [FP] /, ""); buf = buf $0; if (t == "F") {print buf; buf = ""}}' "$1"; }
    for n in $("$WORLD" nodes); do
        uid=$(rssd_pods_json | jq -r --arg n "$n" '.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null) | .metadata.uid')
        f=$(ls -d "$RSS_WORLD_DIR/nodes/$n/kubelet/logs/${RSSD_NS}_"*"_$uid"/rssd/*.log 2>/dev/null | sort -V | sed -n '$p')
        [ -n "$f" ] || fail "$n: no log file of rssd pod $uid"
        hooked() {
            about=$(cri_lines "$f" | jq -c --arg r "$want" --argjson ms "$ms" \
                'select(.rss == $r and .action == "status" and (.member as $m | $ms | index($m)) and .epoch > 0 and (.msg | test("hook status")))' 2>&1)
            [ -n "$about" ]
        }
        wait_until 60 "$n: a JSON line about a status hook of $want" hooked
        hooked # (wait_until runs it in a subshell: again here, for the note's example)
        lines=$(cri_lines "$f" | grep -c .)
        objs=$(cri_lines "$f" | jq -e 'select(type == "object" and (.time | type) == "string"
            and (.level | IN("error", "warn", "info", "debug")) and .component == "rssd" and (.msg | type) == "string")' 2>&1 |
            jq -s length 2>&1) || fail "$n: rssd's log is not all JSON objects: $(sed -n 1,3p "$f")"
        [ "$objs" = "$lines" ] || fail "$n: $objs of $lines log lines are JSON objects with time, level, component, msg"
    done
    note "--log-format=json: every line an object; e.g. $(sed -n 1p <<<"$about")"
}

# ---- 4. delete a member pod -> failover back to Running
sc_failover() {
    ensure_running
    local mark uid v=1
    uid=$(member_uid "$R" $v)
    mark=$(now)
    k delete pod "$(member $R $v)" -n "$NS" --grace-period=1 --wait=false >/dev/null || fail "delete pod"
    recreated() { local u; u=$(member_uid "$R" $v); [ -n "$u" ] && [ "$u" != "$uid" ]; }
    wait_until 60 "$(member $R $v) recreated" recreated
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R $v) primary .* rc=0$"; }
    wait_until 90 "$(member $R $v) started again as primary" joined
    ensure_running 60
    local seeds others p
    seeds=$(hook_lines "$mark" "$R" seed)
    [ -z "$seeds" ] || fail "a seed during failover: $seeds"
    others=$(hook_lines "$mark" "$R" seed primary secondary stop | awk -v p="$(member $R $v)" '$2 != p')
    [ -z "$others" ] || fail "other members were touched: $others"
    p=$(hook_lines "$mark" "$R" primary | sed -n 1p)
    [ "$(args_of "$p")" = "$(peer 0) $(peer 2)" ] || fail "failover peers: $p"
    note "$(member $R $v) rejoined: $p"
}

# ---- 5. lights-out, distinct sequences: the highest seeds, the others join after it, in order
sc_lightsout() {
    ensure_running
    power_off_all
    wait_heartbeats_expired
    set_sequence $R 0 10
    set_sequence $R 1 30
    set_sequence $R 2 20
    local mark t0
    mark=$(now)
    t0=$(now_ms)
    power_on_all
    recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null . && [ "$(count_lines "$(hook_lines "$mark" "$R" primary secondary)")" -ge 2 ]; }
    wait_until 120 "a seed and 2 joins in the hooks logs" recovered
    wait_until 60 "$R Running after the lights-out" rss_running "$R" 3
    local total=$(($(now_ms) - t0))
    local seeds prim s p1 p2
    seeds=$(hook_lines "$mark" "$R" seed)
    prim=$(hook_lines "$mark" "$R" primary secondary)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected one seed, got: $seeds"
    [[ $seeds == *" $(member $R 1) seed args=[] rc=0" ]] || fail "seed is not $(member $R 1) (sequence 30): $seeds"
    for s in 0:10 1:30 2:20; do
        hook_lines "$mark" "$R" sequence | grep >/dev/null " $(member $R "${s%%:*}") sequence .* out=${s#*:} rc=0$" ||
            fail "no sequence ${s#*:} reported by $(member $R "${s%%:*}")"
    done
    # Nothing else started until the seed succeeded (the seed's line is written when it returns).
    local early
    early=$(awk -v t="$(line_time "$seeds")" '$1 <= t' <<<"$prim")
    [ -z "$early" ] || fail "started before the seed finished: $early"
    [ "$(count_lines "$prim")" = 2 ] || fail "expected 2 joins, got: $prim"
    p1=$(sed -n 1p <<<"$prim")
    p2=$(sed -n 2p <<<"$prim")
    [[ $p1 == *" $(member $R 2) primary args=[$(peer 1)] rc=0" ]] || fail "first join should be $(member $R 2) (20) with [$(peer 1)]: $p1"
    [[ $p2 == *" $(member $R 0) primary args=[$(peer 1) $(peer 2)] rc=0" ]] || fail "second join should be $(member $R 0) (10): $p2"
    local stops
    stops=$(hook_lines "$mark" "$R" stop)
    [ -z "$stops" ] || fail "stop ran during recovery: $stops"
    # Rule 2's pin (in the seed's record and the status) goes once a primary runs: none lingers to block a
    # later recovery.
    no_pins() { records_json "$R" | jq -e '[.items[].data.recoveryPin // empty] | length == 0' >/dev/null &&
        rss_json "$R" | jq -e '.status.recovery == null' >/dev/null; }
    wait_until 30 "no recovery pin left in $R's records and status" no_pins
    # status.history (kubectl rss history) tells the morning after what the hooks logs show: the seed the
    # hooks ran, with its sequence, then a Running entry that closes the episode.
    local hist
    hist_since() { rss_json "$R" | jq -c --arg m "$mark" '[.status.history // [] | .[] | select(.at > $m)]'; }
    history_closed() { hist_since | jq -e 'length >= 2 and .[-1].reason == "Running"' >/dev/null; }
    wait_until 30 "status.history to close the lights-out with Running" history_closed
    hist=$(hist_since)
    jq -e --arg p "$(member $R 1)" '[.[] | select(.reason == "SeedChosen")] | length == 1 and .[0].member == $p
        and (.[0].message | test("30"))' <<<"$hist" >/dev/null ||
        fail "status.history does not name the seed the hooks ran ($(member $R 1), 30): $hist"
    "$RSS_BUILD_DIR/nodeagent/plugin/kubectl-rss" --kubeconfig "$KC" history "$R" -n "$NS" >"$E2E_TMP/history.txt" 2>&1 ||
        fail "kubectl rss history: $(cat "$E2E_TMP/history.txt")"
    grep "SeedChosen" "$E2E_TMP/history.txt" | grep >/dev/null "$(member $R 1)" || fail "kubectl rss history: $(cat "$E2E_TMP/history.txt")"
    note "history: $(jq -r '.[-1].message' <<<"$hist")"
    note "seed $(member $R 1) (30) at $(line_time "$seeds"), then $(awk '{print $2}' <<<"$prim" | tr '\n' ' ')"
    note "power-on to Running: ${total} ms; SeedChosen: $(events_since "$mark" SeedChosen "$R" | tail -1 | cut -c1-200)"
}

# ---- 6. a garbage sequence: no seed until the policy allows it, a Warning Event, a clear message
sc_garbage() {
    ensure_running
    # Above the history rssd started from: the policy below goes on without a member (history_floor).
    local b
    b=$(history_floor $R)
    power_off_all
    wait_heartbeats_expired
    set_sequence $R 0 $((b + 15))
    set_sequence $R 1 $((b + 40))
    set_sequence $R 2 $((b + 25))
    printf 'lots-of-writes' >"$(claim_dir $R 1)/garbage-sequence"
    local mark
    mark=$(now)
    power_on_all
    reported() {
        local n
        n=$(hook_lines "$mark" "$R" sequence | awk '{print $2}' | sort -u | wc -l)
        echo "members that ran sequence: $n"
        [ "$n" = 3 ]
    }
    wait_until 90 "3 members ran sequence" reported
    warned() { events_since "$mark" SequenceError "$R" | grep >/dev/null "^Warning "; }
    wait_until 60 "a Warning SequenceError Event" warned
    msg() {
        local m
        m=$(rss_json "$R" | jq -r '.status.message // ""')
        echo "message: $m"
        [[ $m == *"$(member $R 1)"* ]]
    }
    wait_until 30 "the status message to name $(member $R 1)" msg
    sleep 3 # a seed would have been issued by now: every other member reported long ago
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed)
    [ -z "$seeds" ] || fail "seeded with a member's sequence unreadable: $seeds"
    local ev message
    ev=$(events_since "$mark" SequenceError "$R" | tail -1)
    message=$(rss_json "$R" | jq -r '.status.message')
    [ "$(rss_json "$R" | jq -r '.status.waiting')" = SequenceError ] ||
        fail "status.waiting (the Waiting column) is not SequenceError: $(rss_json "$R" | jq -c '.status | {phase, waiting}')"
    note "event: ${ev:0:200}"
    note "status.message: ${message:0:200}"
    # No eviction while the recovery waits (the budget the leader keeps allows none): a node's drain
    # now could take a member whose sequence the recovery needs.
    zero() { [ "$(pdb_json | jq -r .spec.maxUnavailable)" = 0 ]; }
    wait_until 30 "the PodDisruptionBudget at maxUnavailable 0 while Recovering" zero
    local ev_out
    if ev_out=$(k create --raw "/api/v1/namespaces/$NS/pods/$(member $R 2)/eviction" -f - 2>&1 <<<"{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$(member $R 2)\",\"namespace\":\"$NS\"}}"); then
        fail "$(member $R 2) was evicted while $R was Recovering: $ev_out"
    fi
    [[ $ev_out == *"disruption budget"* ]] || fail "the eviction during the recovery failed, but not on the budget: $ev_out"
    note "eviction while Recovering refused: ${ev_out:0:160}"
    # The policy allows going on with 2 members: the highest valid sequence (25) seeds.
    k patch rss "$R" -n "$NS" --type=merge -p '{"spec":{"recovery":{"minimumMembers":2}}}' >/dev/null ||
        fail "patch minimumMembers"
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 60 "a seed once minimumMembers=2" seeded
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 2) seed args=[] rc=0" ]] ||
        fail "expected $(member $R 2) (25) to seed: $seeds"
    rm -f "$(claim_dir $R 1)/garbage-sequence"
    # Rule 14: the member left out with an unreadable sequence may hold newer writes (40, once readable,
    # above the seed's 25): it is held, never joined over them, until the admin releases it.
    held() { events_since "$mark" NewerThanSeed "$R" | grep >/dev/null "^Warning .*$(member $R 1)"; }
    wait_until 60 "a Warning NewerThanSeed: $(member $R 1) is held" held
    local joined
    joined=$(hook_lines "$mark" "$R" primary secondary | grep " $(member $R 1) " || true)
    [ -z "$joined" ] || fail "$(member $R 1) was joined over the writes it may hold: $joined"
    # The admin's way: kubectl rss release-hold (it sets the annotation once the leader's refusals pass).
    local out
    out=$("$RSS_BUILD_DIR/nodeagent/plugin/kubectl-rss" --kubeconfig "$KC" release-hold "$R" "$(member $R 1)" -n "$NS" --yes 2>&1) ||
        fail "kubectl rss release-hold: $out"
    [[ $out == *"$(member $R 1) was left out of the recovery that seeded sequence $((b + 25))"* ]] || fail "kubectl rss release-hold: $out"
    wait_until 90 "$R Running after the release of $(member $R 1)" rss_running "$R" 3
    rss_json "$R" | jq -e --arg m "$mark" --arg p "$(member $R 1)" '[.status.history[] | select(.at > $m) | .reason + " " + (.member // "")]
        | [index("NewerThanSeed " + $p), index("HoldReleased " + $p)] | all(. != null) and .[0] < .[1]' >/dev/null ||
        fail "status.history lacks $(member $R 1) held then released: $(rss_json "$R" | jq -c '.status.history')"
    note "with minimumMembers=2: seed $(member $R 2); $(member $R 1) held, joined once released; joins: $(hook_lines "$mark" "$R" primary secondary | while read -r l; do printf '%s [%s]; ' "$(awk '{print $2}' <<<"$l")" "$(args_of "$l")"; done)"
    k patch rss "$R" -n "$NS" --type=merge -p '{"spec":{"recovery":null}}' >/dev/null || fail "unset recovery"
}

# ---- 7. the leader's node dies in the middle of a recovery: the new leader finishes, one seed in all
sc_leader_dies() {
    ensure_running
    local n L S mark seedm
    power_off_all
    wait_heartbeats_expired
    # The leader will be the first node back; the newest data is on another node's member.
    L=$(member_node $R 0)
    set_sequence $R 0 10
    set_sequence $R 1 50
    set_sequence $R 2 30
    seedm=$(member $R 1)
    S=$(member_node $R 1)
    [ "$S" != "$L" ] || fail "members 0 and 1 share node $L"
    mark=$(now)
    local lt0
    lt0=$(lease_transitions)
    "$WORLD" power-on "$L" >/dev/null 2>&1 || fail "power-on $L"
    is_leader() { [ "$(leader_node)" = "$L" ] && [ "$(lease_transitions)" -gt "$lt0" ]; }
    wait_until 60 "$L to lead alone" is_leader
    say "  $L leads alone (epoch $(lease_transitions)); powering on the others"
    for n in $("$WORLD" nodes); do [ "$n" = "$L" ] || "$WORLD" power-on "$n" >/dev/null 2>&1 || fail "power-on $n"; done
    # Kill the leader's node as soon as the seed has run (poll the log fast; bounded).
    local seeded="" end=$(($(date +%s) + 120))
    while [ "$(date +%s)" -lt $end ]; do
        seeded=$(hook_lines "$mark" "$R" seed)
        [ -n "$seeded" ] && break
        sleep 0.05
    done
    [ -n "$seeded" ] || fail "no seed within 120 s"
    "$WORLD" power-off "$L" >/dev/null 2>&1 || fail "power-off $L"
    say "  seed done; $L (leader) powered off"
    local joined_at_kill
    joined_at_kill=$(hook_lines "$mark" "$R" primary | awk '{print $2}' | tr '\n' ' ')
    [[ $seeded == *" $seedm seed args=[] rc=0" ]] || fail "seed is not $seedm (50): $seeded"
    new_leader() { local l; l=$(leader_node) && [ "$l" != "$L" ]; }
    wait_until 60 "a new leader" new_leader
    local other
    other=$(member $R 2)
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $other primary args=\[$(peer 1)\] rc=0$"; }
    wait_until 90 "$other to join under the new leader $(leader_node 2>/dev/null)" joined
    say "  new leader $(leader_node); $other joined; powering $L on again"
    "$WORLD" power-on "$L" >/dev/null 2>&1 || fail "power-on $L"
    rejoined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 0) primary "; }
    wait_until 90 "$(member $R 0) to rejoin after $L is back" rejoined
    say "  $(member $R 0) rejoined"
    wait_until 60 "$R Running after $L is back" rss_running "$R" 3
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "expected exactly one seed over the run, got: $seeds"
    hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 0) primary args=\[$(peer 1) $(peer 2)\] rc=0$" ||
        fail "$(member $R 0) did not rejoin with [$(peer 1) $(peer 2)]: $(hook_lines "$mark" "$R" primary)"
    note "leader $L killed right after the seed on $S (joined at that moment: ${joined_at_kill:-none}; $(member $R 0) on $L not yet started); new leader $(leader_node) finished; seeds over the run: 1"
}

# ---- 8. a hung hook is killed at its timeout and reported
sc_hang() {
    ensure_running
    local v=2 m mark
    m=$(member $R $v)
    k patch rss "$R" -n "$NS" --type=merge -p '{"spec":{"pod":{"commands":{"primary":{"timeout":"4s"}}}}}' >/dev/null ||
        fail "patch primary timeout"
    touch "$(claim_dir $R $v)/hang-primary"
    mark=$(now)
    k delete pod "$m" -n "$NS" --grace-period=1 --wait=false >/dev/null || fail "delete $m"
    hung() { hook_lines "$mark" "$R" primary | grep >/dev/null " $m primary .* rc=hang$"; }
    wait_until 90 "$m's primary to hang" hung
    local t_hang
    t_hang=$(now_ms)
    # The running hook already sleeps forever; removing the knob lets the retry succeed.
    rm -f "$(claim_dir $R $v)/hang-primary"
    say "  $m's primary hangs (knob removed for the retry)"
    # Reported: a Warning Event saying the runtime killed it at its timeout.
    reported() { events_since "$mark" ActionFailed "$R" | grep "^Warning" | grep >/dev/null "timed out"; }
    wait_until 60 "a Warning ActionFailed Event for the timeout" reported
    local dt=$(($(now_ms) - t_hang)) warn ms
    warn=$(events_since "$mark" ActionFailed "$R" | grep "^Warning" | grep "timed out" | sed -n 1p)
    ms=$(rss_json "$R" | jq -c --arg m "$m" '[(.status.memberStatus // .status.memberStatuses // [])[] | select(.name == $m)][0]
        | {lastHook, lastResult, lastExitCode, failures}')
    ok_again() { hook_lines "$mark" "$R" primary | grep >/dev/null " $m primary .* rc=0$"; }
    wait_until 90 "$m started by a retry" ok_again
    wait_until 60 "$R Running again after the hang" rss_running "$R" 3
    # The hung hook (an exec'd `sleep infinity`) is gone (the container's own PID 1 sleeps otherwise).
    local node id ps
    node=$(member_node $R $v)
    id=$("$WORLD" crictl "$node" find "$NS" "$m" dummy) || fail "no container of $m"
    ps=$("$WORLD" crictl "$node" exec "$id" ps -o pid,args 2>&1 || true)
    [ "$(grep -c 'sleep infinity' <<<"$ps")" = 0 ] || fail "the hung hook still runs in $m: $ps"
    k patch rss "$R" -n "$NS" --type=merge -p '{"spec":{"pod":{"commands":{"primary":{"timeout":"30s"}}}}}' >/dev/null ||
        fail "restore primary timeout"
    note "hang logged; Warning Event seen ${dt} ms later (timeout 4s); member status then: $ms; the retry started it; no hung process left"
    note "event: ${warn:0:200}"
}

# ---- 9. scale 3 -> 5 -> 3: stop ran on the removed members before their pods went
sc_scale() {
    local S=sc
    rss_manifest $S 3 false | k apply -n "$NS" -f - >/dev/null || fail "create RSS $S"
    wait_until 120 "$S Running with 3" rss_running $S 3
    local w=$E2E_TMP/scale-watch
    # Every pod event of the set, stamped with our (the host's) clock, as `kubectl get -w` shows them.
    setsid bash -c 'kubectl --kubeconfig "$1" --cache-dir "$2" get pods -n "$3" -l "rss.clusterlabs.org/name=$4" -w \
        --output-watch-events -o json | jq --unbuffered -r "\"\(.type) \(.object.metadata.name) \(.object.metadata.deletionTimestamp // \"-\")\"" |
        while read -r l; do echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ) $l"; done' _ "$KC" "$E2E_TMP/kcache" "$NS" "$S" >"$w" 2>&1 &
    local wpid=$!
    E2E_BG_PIDS+=("$wpid")
    # kubectl scale, through the CRD's scale subresource, as a user scales a StatefulSet.
    k scale rss $S -n "$NS" --replicas=5 >/dev/null || fail "kubectl scale rss $S --replicas=5"
    [ "$(k get rss $S -n "$NS" -o jsonpath='{.spec.replicas}')" = 5 ] || fail "kubectl scale did not set spec.replicas"
    wait_until 120 "$S Running with 5" rss_running $S 5
    [ "$(k get --raw "/apis/clusterlabs.org/v1alpha1/namespaces/$NS/replicatedstatefulsets/$S/scale" | jq -r '.status.replicas')" = 5 ] ||
        fail "the scale subresource does not report 5 replicas"
    local mark
    mark=$(now)
    k scale rss $S -n "$NS" --replicas=3 >/dev/null || fail "kubectl scale rss $S --replicas=3"
    # The pods are deleted with their grace period (30 s: the container's sleep ignores SIGTERM), so
    # wait for the deletion to be requested, which is what must come after the stop.
    deleting() {
        local i
        for i in 3 4; do
            awk -v p="$(member $S $i)" '$3 == p && ($2 == "DELETED" || $4 != "-") {f = 1} END {exit !f}' "$w" || return 1
        done
    }
    wait_until 120 "$(member $S 3) and $(member $S 4) deleted" deleting
    wait_until 60 "$S Running with 3" rss_running $S 3
    kill -- -"$wpid" 2>/dev/null || true
    local i st del
    for i in 3 4; do
        st=$(hook_lines "$mark" $S stop | awk -v p="$(member $S $i)" '$2 == p' | sed -n 1p)
        [[ $st == *" rc=0" ]] || fail "no successful stop on $(member $S $i): '$st'"
        del=$(awk -v p="$(member $S $i)" '$3 == p && ($2 == "DELETED" || $4 != "-") {print $1; exit}' "$w")
        [ -n "$del" ] || fail "the watch never saw $(member $S $i) deleted: $(tail -5 "$w")"
        [[ $(line_time "$st") < $del ]] || fail "$(member $S $i): stop at $(line_time "$st") not before deletion at $del"
        note "$(member $S $i): stop at $(line_time "$st"), pod deletion seen at $del"
    done
    local other
    other=$(hook_lines "$mark" $S stop seed | awk -v a="$(member $S 3)" -v b="$(member $S 4)" '$2 != a && $2 != b')
    [ -z "$other" ] || fail "stop/seed on members that stay: $other"
    # Deleting the RSS removes its StatefulSet and Service (owner references).
    k delete rss $S -n "$NS" --wait=false >/dev/null || fail "delete RSS $S"
    stsgone() { ! k get sts "$(sts_name $S)" -n "$NS" >/dev/null 2>&1 && ! k get svc "$S-svc" -n "$NS" >/dev/null 2>&1; }
    wait_until 60 "StatefulSet and Service of $S removed with it" stsgone
}

# ---- 10. ties: ordinals 2 and 10 hold the same highest sequence; 2 must win (numeric, not string)
sc_ties() {
    local T=tie i
    for ((i = 0; i <= 10; i++)); do set_sequence $T $i 7; done
    set_sequence $T 2 50
    set_sequence $T 10 50
    local mark
    mark=$(now)
    rss_manifest $T 11 false | k apply -n "$NS" -f - >/dev/null || fail "create RSS $T"
    seeded() { hook_lines "$mark" $T seed | grep >/dev/null .; }
    wait_until 180 "a seed among the 11 members of $T" seeded
    local seeds
    seeds=$(hook_lines "$mark" $T seed)
    [ "$(count_lines "$seeds")" = 1 ] || fail "more than one seed: $seeds"
    [[ $seeds == *" $(member $T 2) seed args=[] rc=0" ]] || fail "ordinal 2 should win the tie with 10: $seeds"
    local nseq
    nseq=$(awk -v t="$(line_time "$seeds")" '$1 < t' <<<"$(hook_lines "$mark" $T sequence)" | awk '{print $2}' | sort -u | wc -l)
    [ "$nseq" = 11 ] || fail "seeded before all 11 members reported a sequence ($nseq)"
    note "seed $(member $T 2) after all 11 reported; $(events_since "$mark" SeedChosen $T | tail -1 | cut -c1-200)"
    k delete rss $T -n "$NS" --wait=false >/dev/null || fail "delete RSS $T"
}

# ---- 11. a power blip: every node off, and one back (and leading) before the others' heartbeats
# expired (the other lights-out scenarios keep the nodes off longer). The leader must not take the
# silent members' last reports ("primary") for a running cluster: the highest sequence still seeds.
sc_blip() {
    ensure_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    local mark n F lt0
    mark=$(now)
    lt0=$(lease_transitions)
    F=$(member_node $R 0)
    "$WORLD" power-on "$F" >/dev/null 2>&1 || fail "power-on $F"
    is_leader() { [ "$(leader_node)" = "$F" ] && [ "$(lease_transitions)" -gt "$lt0" ]; }
    wait_until 60 "$F to lead alone" is_leader
    sleep 2
    for n in $("$WORLD" nodes); do [ "$n" = "$F" ] || "$WORLD" power-on "$n" >/dev/null 2>&1 || fail "power-on $n"; done
    recovered() { [ "$(count_lines "$(hook_lines "$mark" "$R" seed primary secondary)")" -ge 3 ]; }
    wait_until 120 "3 starts in the hooks logs" recovered
    wait_until 60 "$R Running after the blip" rss_running "$R" 3
    local seeds starts
    seeds=$(hook_lines "$mark" "$R" seed)
    starts=$(hook_lines "$mark" "$R" seed primary secondary)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 2) seed args=[] rc=0" ]] ||
        fail "after a short power cut $(member $R 2) (sequence 60) should seed; starts were: $starts"
    note "starts: $(awk '{print $2, $3}' <<<"$starts" | tr '\n' ';')"
}

# ---- /metrics as Prometheus reads it: every agent's scrape passes `promtool check metrics` (the lint
# Prometheus applies), the leader's carries the per-RSS gauges the alerts use (deploy/monitoring/), and
# every metric the Grafana dashboard queries is in some agent's scrape.
sc_promtool() {
    ensure_running
    command -v promtool >/dev/null || fail "promtool is missing (Debian package prometheus)"
    local n text out leaders=0 scraped=""
    for n in $("$WORLD" nodes); do
        text=$(node_metrics "$n") || fail "$n: no /metrics: $text"
        scraped+=$text$'\n'
        out=$(promtool check metrics <<<"$text" 2>&1) || fail "$n: promtool check metrics: $out"
        # The build and the process collector's metrics, as every Prometheus client exports them.
        local ver m
        ver=$(sed -n 's/^project(rssd VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
        grep -xF "rssd_build_info{version=\"$ver\"} 1" <<<"$text" >/dev/null || fail "$n: no rssd_build_info for $ver"
        for m in process_start_time_seconds process_resident_memory_bytes process_virtual_memory_bytes \
            process_open_fds process_max_fds; do
            awk -v m="$m" '$1 == m && $2 > 0 {f = 1} END {exit !f}' <<<"$text" || fail "$n: $m missing or not positive"
        done
        # (an idle agent may have used less than the 10 ms the counter shows)
        awk '$1 == "process_cpu_seconds_total" && $2 >= 0 {f = 1} END {exit !f}' <<<"$text" ||
            fail "$n: no process_cpu_seconds_total"
        awk -v now="$(date +%s)" '$1 == "process_start_time_seconds" && $2 > now - 3600 && $2 <= now + 5 {f = 1} END {exit !f}' <<<"$text" ||
            fail "$n: process_start_time_seconds is not within the last hour: $(grep ^process_start <<<"$text")"
        if grep -q '^rssd_leader 1$' <<<"$text"; then
            leaders=$((leaders + 1))
            grep -qF "rssd_rss_phase{rss_namespace=\"$NS\",rss=\"$R\",phase=\"Running\"} 1" <<<"$text" ||
                fail "the leader on $n exports no rssd_rss_phase Running for $NS/$R: $(grep '^rssd_rss' <<<"$text" | tr '\n' ' ')"
            grep -qF "rssd_rss_members_held{rss_namespace=\"$NS\",rss=\"$R\"} 0" <<<"$text" ||
                fail "the leader on $n exports no rssd_rss_members_held 0 for $NS/$R"
        elif grep -q '^rssd_rss_phase{' <<<"$text"; then
            fail "$n does not lead but exports per-RSS gauges"
        fi
    done
    [ $leaders = 1 ] || fail "$leaders agents say they lead"
    # Every metric the Grafana dashboard (deploy/monitoring/dashboard.json) queries is in a real scrape of
    # some node: as a sample, or as a family rssd declares (# TYPE; a histogram's _bucket, _sum and _count)
    # whose series are absent for now (rssd_rss_waiting while nothing waits).
    local want have m missing=""
    want=$(bash "$repo/tests/monitoring/promtool.sh" --dashboard-metrics "$repo") ||
        fail "tests/monitoring/promtool.sh --dashboard-metrics failed (its error above)"
    [ -n "$want" ] || fail "the dashboard's queries name no metric"
    have=$(awk '/^# TYPE / {print $3; if ($4 == "histogram") print $3 "_bucket\n" $3 "_sum\n" $3 "_count"; next}
        /^[a-zA-Z_:]/ {sub(/[{ ].*/, ""); print}' <<<"$scraped" | sort -u)
    for m in $want; do
        grep -xF "$m" <<<"$have" >/dev/null || missing+=" $m"
    done
    [ -z "$missing" ] || fail "the dashboard queries metrics no node's /metrics has:$missing"
    note "promtool check metrics: clean on every node; the dashboard's $(wc -w <<<"$want") metrics all scraped"
}

# ---- drains within the PodDisruptionBudget the leader keeps (issue 38 item 3): `kubectl drain` of one
# member's node evicts it; the next node's drain is refused while that member is away (its replacement
# Pending on the cordoned node, anti-affinity), and the member there keeps running; after the uncordon the
# member rejoins. The budget's maxUnavailable 0 while Recovering: sc_garbage.
pdb_json() { k get pdb "$(sts_name "$R")" -n "$NS" -o json 2>/dev/null; }
sc_drain() {
    ensure_running 120
    local uid A B podB uidB mark out
    uid=$(rss_json "$R" | jq -r .metadata.uid)
    budget_ready() { pdb_json | jq -e --arg u "$uid" --arg r "$R" '.spec.maxUnavailable == 1
        and .spec.selector.matchLabels == {"rss.clusterlabs.org/name": $r}
        and .metadata.ownerReferences[0].uid == $u and .metadata.ownerReferences[0].controller
        and .status.disruptionsAllowed == 1 and .status.currentHealthy == 3' >/dev/null; }
    wait_until 60 "the PodDisruptionBudget $(sts_name "$R"): maxUnavailable 1, owned by $R, one disruption allowed" budget_ready
    A=$(member_node $R 0)
    B=$(member_node $R 1)
    podB=$(member $R 1)
    uidB=$(member_uid $R 1)
    mark=$(now)
    undo_on_exit "k uncordon $A $B"
    out=$(k drain "$A" --pod-selector="rss.clusterlabs.org/name=$R" --ignore-daemonsets --delete-emptydir-data --timeout=120s 2>&1) ||
        fail "kubectl drain $A within the budget: $out"
    [[ $out == *"evicting pod $NS/$(member $R 0)"* ]] || fail "kubectl drain $A did not evict $(member $R 0): $out"
    note "drain $A: $(tail -n 1 <<<"$out")"
    # The member is away (its replacement Pending on the cordoned node): the budget allows no more.
    used() { pdb_json | jq -e '.status.disruptionsAllowed == 0' >/dev/null; }
    wait_until 60 "the budget used up while $(member $R 0) is away" used
    if out=$(k drain "$B" --pod-selector="rss.clusterlabs.org/name=$R" --ignore-daemonsets --timeout=15s 2>&1); then
        fail "kubectl drain $B evicted a second member: $out"
    fi
    [[ $out == *"disruption budget"* ]] || fail "kubectl drain $B failed, but not on the budget: $out"
    [ "$(member_uid $R 1)" = "$uidB" ] || fail "$podB was replaced during the refused drain"
    local stops
    stops=$(hook_lines "$mark" "$R" stop | grep " $podB " || true)
    [ -z "$stops" ] || fail "$podB was stopped during the refused drain: $stops"
    note "drain $B refused: $(grep -m1 'disruption budget' <<<"$out" | cut -c1-160)"
    k uncordon "$A" "$B" >/dev/null || fail "uncordon"
    wait_until 180 "$R Running with 3 after the uncordon" rss_running "$R" 3
    rejoined() { hook_lines "$mark" "$R" primary secondary | grep >/dev/null " $(member $R 0) "; }
    wait_until 30 "$(member $R 0) to rejoin (its hooks log)" rejoined
    wait_until 60 "the budget to allow one disruption again" budget_ready
}

all=(create promtool agent_restart rssd_rollout failover lightsout garbage leader_dies hang scale ties blip drain)
sel=("$@")
[ ${#sel[@]} -gt 0 ] || sel=("${all[@]}")

say "e2e: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR)"
t_up=$(now_ms)
e2e_up 3
say "world up with rssd on 3 nodes in $(($(now_ms) - t_up)) ms; leader $(leader_node); DaemonSet args: $(grep -A6 'args:' "$E2E_TMP/daemonset.yaml" | grep -- '- --' | tr -d ' ' | tr '\n' ' ')"
run_scenarios 1 "${sel[@]}"
