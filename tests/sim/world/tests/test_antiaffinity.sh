#!/usr/bin/env bash
# test_antiaffinity.sh -- required anti-affinity spreads 3 replicas over 3 nodes and a 4th stays
# Pending; the kubelet's labels and annotations are on the real CRI sandboxes and containers.
source "$(dirname "$0")/lib.sh"
world_up --nodes 3

create_sts spread 4 anti
wait_until 60 "3 spread pods Ready" ready_is spread 3
spread_nodes=$(pods_json spread | jq -r '[.items[] | select(.status.phase == "Running") | .spec.nodeName] | sort | join(" ")')
[ "$spread_nodes" = "node-1 node-2 node-3" ] || fail "running replicas on '$spread_nodes'"
pending() {
    pods_json spread | jq -e '[.items[] | select(.status.phase == "Pending" and (.spec.nodeName // "") == "" and
        any(.status.conditions[]?; .type == "PodScheduled" and .status == "False"))] | length == 1' >/dev/null
}
wait_until 30 "one spread pod Pending and unschedulable" pending
sleep 2
pending || fail "the 4th replica did not stay Pending"
[ "$(ready_count spread)" = 3 ] || fail "ready count changed"
ok "3 replicas on 3 nodes, the 4th Pending: $(pods_json spread | jq -r '.items[] | select(.status.phase == "Pending") |
    .metadata.name + " " + ((.status.conditions[]? | select(.type == "PodScheduled") | .reason) // "")')"

# Kubelet labels on the real CRI objects (cri-grpc.md section 2).
for i in 0 1 2; do
    p=spread-$i
    pj=$(pod_get "$p") || continue
    [ "$(echo "$pj" | jq -r .status.phase)" = Running ] || continue
    node=$(echo "$pj" | jq -r .spec.nodeName)
    uid=$(echo "$pj" | jq -r .metadata.uid)
    c=$("$WORLD" crictl "$node" ps --json | jq -c --arg uid "$uid" 'select(.labels["io.kubernetes.pod.uid"] == $uid and .state == "CONTAINER_RUNNING")')
    [ -n "$c" ] || fail "no running CRI container labelled with $p's uid on $node"
    echo "$c" | jq -e --arg p "$p" '.labels == {"io.kubernetes.pod.name": $p, "io.kubernetes.pod.namespace": "default",
        "io.kubernetes.pod.uid": .labels["io.kubernetes.pod.uid"], "io.kubernetes.container.name": "main"}
        and .name == "main" and .annotations["io.kubernetes.container.restartCount"] == (.attempt | tostring)
        and (.annotations["io.kubernetes.container.hash"] | length) > 0
        and .annotations["io.kubernetes.container.terminationMessagePath"] == "/dev/termination-log"
        and .annotations["io.kubernetes.pod.terminationGracePeriod"] == "5"' >/dev/null ||
        fail "container labels/annotations of $p: $c"
    s=$("$WORLD" crictl "$node" pods --json | jq -c --arg uid "$uid" 'select(.uid == $uid and .state == "READY")')
    echo "$s" | jq -e --arg p "$p" --arg uid "$uid" '.name == $p and .namespace == "default" and
        .labels["io.kubernetes.pod.name"] == $p and .labels["io.kubernetes.pod.namespace"] == "default" and
        .labels["io.kubernetes.pod.uid"] == $uid and .labels.app == "spread"' >/dev/null ||
        fail "sandbox labels of $p: $s"
    id=$(echo "$c" | jq -r .id)
    echo "$pj" | jq -e --arg id "containerd://$id" '.status.containerStatuses[0].containerID == $id' >/dev/null ||
        fail "$p's status does not name containerd://$id"
done
ok "kubelet labels and annotations are on the CRI containers and sandboxes, status names the containers"
