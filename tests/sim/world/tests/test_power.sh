#!/usr/bin/env bash
# test_power.sh -- power-off of a node kills its kubelet, host processes and containers (as a power
# loss) and keeps their data; power-on brings them back in a new sandbox. Also: a DaemonSet pod whose
# image is mapped with --host-process runs as a host process with the node's CRI endpoint and the
# world's kubeconfig, dies with the power and comes back with it. Then a full lights-out.
source "$(dirname "$0")/lib.sh"
world_up --nodes 3 --host-process localhost/rss/fake-agent:dev=/bin/sleep

create_sts app 3 anti
wait_until 60 "3 app pods Ready" ready_is app 3
for i in 0 1 2; do
    cri_exec "app-$i" sh -c "echo $i > /data/mine" || fail "write in app-$i"
done
api POST /apis/apps/v1/namespaces/default/daemonsets "$(jq -n '{apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: {name: "agent", namespace: "default"},
    spec: {selector: {matchLabels: {app: "agent"}},
      template: {metadata: {labels: {app: "agent"}},
        spec: {terminationGracePeriodSeconds: 1, containers: [{name: "agent", image: "localhost/rss/fake-agent:dev",
          args: ["3600"], env: [{name: "NODE_NAME", valueFrom: {fieldRef: {fieldPath: "spec.nodeName"}}}]}]}}}}')" >/dev/null
wait_until 60 "3 agent pods Ready" ready_is agent 3

victim=$(pod_node app-1)
vdir=$RSS_WORLD_DIR/nodes/$victim
agent=$(pods_json agent | jq -r --arg n "$victim" '.items[] | select(.spec.nodeName == $n) | .metadata.name')
hp=$(pod_get "$agent" | jq -r '.status.containerStatuses[0].containerID')
[[ $hp == hostprocess://* ]] || fail "agent container id is '$hp'"
hpid=${hp#hostprocess://}
[ "$(tr '\0' ' ' <"/proc/$hpid/cmdline")" = "/bin/sleep 3600 " ] || fail "host process $hpid is not /bin/sleep 3600"
tr '\0' '\n' <"/proc/$hpid/environ" | grep >/dev/null -x "CONTAINER_RUNTIME_ENDPOINT=$("$WORLD" cri "$victim")" ||
    fail "host process lacks the node's CONTAINER_RUNTIME_ENDPOINT"
# Its kubeconfig carries the token of the pod's ServiceAccount (here "default"), not the admin's.
kc=$(tr '\0' '\n' <"/proc/$hpid/environ" | sed -n 's/^KUBECONFIG=//p')
[ -n "$kc" ] && [ "$kc" != "$("$WORLD" kubeconfig)" ] || fail "host process has KUBECONFIG '$kc', not its pod's own"
tokfile=$(sed -n 's/^ *tokenFile: //p' "$kc")
[[ $(cat "$tokfile") == kubesim-sa:default:default:* ]] || fail "host process kubeconfig $kc has no token of default/default"
who=$(curl -sS --cacert "$RSS_WORLD_DIR/kubesim/ca.crt" -H "Authorization: Bearer $(cat "$tokfile")" \
    -H 'Content-Type: application/json' -X POST "https://127.0.0.1:$(cat "$RSS_WORLD_DIR/kubesim/port")/apis/authorization.k8s.io/v1/selfsubjectrulesreviews" \
    -d '{"spec":{"namespace":"default"}}' | jq -r '.kind')
[ "$who" = SelfSubjectRulesReview ] || fail "the host process's token is not accepted ($who)"
tr '\0' '\n' <"/proc/$hpid/environ" | grep >/dev/null -x "NODE_NAME=$victim" || fail "host process lacks NODE_NAME"
ok "DaemonSet pod $agent runs as host process $hpid with the node's endpoints"

# A kubelet crash alone changes nothing: the new kubelet adopts the running container and host process.
cid=$(cri_find app-1)
"$WORLD" restart-kubelet "$victim" || fail "restart-kubelet"
sleep 2 # a few sync passes of the new kubelet
[ "$(cri_find app-1)" = "$cid" ] || fail "app-1's container changed across a kubelet restart"
[ "$(pod_get "$agent" | jq -r '.status.containerStatuses[0].containerID')" = "$hp" ] ||
    fail "the host process changed across a kubelet restart"
pod_get app-1 | jq -e '.status.containerStatuses[0].restartCount == 0' >/dev/null || fail "app-1 restarted"
[ -d "/proc/$hpid" ] || fail "host process $hpid died with the kubelet"
ok "kubelet restart on $victim: container and host process adopted, nothing restarted"

read -r kpid _ <"$vdir/kubelet.pid"
"$WORLD" power-off "$victim" || fail "power-off"
[ ! -d "/proc/$kpid" ] || grep >/dev/null '^State:.*Z' "/proc/$kpid/status" || fail "kubelet $kpid survived power-off"
[ ! -d "/proc/$hpid" ] || grep >/dev/null '^State:.*Z' "/proc/$hpid/status" || fail "host process $hpid survived power-off"
state=$("$WORLD" crictl "$victim" ps --json | jq -r --arg id "$cid" 'select(.id == $id) | .state')
[ "$state" = CONTAINER_EXITED ] || fail "app-1's container is '$state' after power-off"
[ "$(cat "$RSS_WORLD_DIR/pv/default/data-app-1/mine")" = 1 ] || fail "app-1's data gone after power-off"
ok "power-off of $victim: kubelet, host process and containers dead, data on disk"

"$WORLD" power-on "$victim" || fail "power-on"
back() {
    local id
    id=$(cri_find app-1) && [ "$id" != "$cid" ] && pod_get app-1 | jq -e --arg c "containerd://$id" \
        '.status.containerStatuses[0].containerID == $c and .status.containerStatuses[0].ready' >/dev/null
}
wait_until 60 "app-1 back on $victim" back
[ "$(pod_node app-1)" = "$victim" ] || fail "app-1 moved"
[ "$(cri_exec app-1 cat /data/mine)" = 1 ] || fail "app-1's data lost across power-off/on"
pod_get app-1 | jq -e --arg old "containerd://$cid" '.status.containerStatuses[0] | .restartCount >= 1 and
    .lastState.terminated.exitCode == 137 and .lastState.terminated.containerID == $old' >/dev/null ||
    fail "restartCount/lastState after power-on: $(pod_get app-1 | jq -c .status.containerStatuses)"
sandboxes=$("$WORLD" crictl "$victim" pods --json | jq -s --arg p app-1 '[.[] | select(.name == $p)] |
    (map(.attempt) | max | tostring) + " " + (length | tostring) + " " + (map(.state) | unique | join(","))')
[ "$sandboxes" = '"1 1 READY"' ] || fail "app-1's sandboxes after power-on (max attempt, count, states): $sandboxes"
agent_back() {
    local id
    id=$(pod_get "$agent" | jq -r '.status.containerStatuses[0].containerID')
    [ "$id" != "$hp" ] && [ -d "/proc/${id#hostprocess://}" ] && pod_ready "$agent"
}
wait_until 30 "the host process back on $victim" agent_back
ok "power-on of $victim: app-1 back in sandbox attempt 1 with its data, host process restarted"

old=$RSS_WORLD_DIR/old-ids
{ container_ids app; container_ids agent; } >"$old"
"$WORLD" lights-out || fail "lights-out"
wait_until 90 "3 app pods back after lights-out" all_replaced app 3 "$old"
wait_until 60 "3 agent pods back after lights-out" all_replaced agent 3 "$old"
for i in 0 1 2; do
    [ "$(cri_exec "app-$i" cat /data/mine)" = "$i" ] || fail "app-$i's data after lights-out"
done
ok "lights-out: every pod back with its data"
