#!/usr/bin/env bash
# test_updown.sh -- a 3-node world comes up (nodes Ready, leases renewed, kubectl works, a pod runs on
# the real runtime) and `world down` leaves nothing: no processes, mounts, cgroups, sockets or netns.
source "$(dirname "$0")/lib.sh"

netns_before=$(ls /run/netns 2>/dev/null | sort || true)
world_up --nodes 3

# Nodes: registered, Ready, labelled, each with a Lease in kube-node-lease that keeps being renewed.
nodes=$(api GET /api/v1/nodes | jq -r '[.items[].metadata.name] | sort | join(" ")')
[ "$nodes" = "node-1 node-2 node-3" ] || fail "nodes are '$nodes'"
for n in node-1 node-2 node-3; do
    api GET "/api/v1/nodes/$n" | jq -e --arg n "$n" '.metadata.labels["kubernetes.io/hostname"] == $n and
        any(.status.conditions[]; .type == "Ready" and .status == "True")' >/dev/null || fail "$n not Ready"
done
ok "3 nodes Ready with kubernetes.io/hostname labels"
renew1=$(api GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2 | jq -r .spec.renewTime)
[ "$(api GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2 | jq -r .spec.holderIdentity)" = node-2 ] ||
    fail "lease holder"
lease_renewed() {
    [ "$(api GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2 | jq -r .spec.renewTime)" != "$renew1" ]
}
wait_until 15 "node-2's lease to be renewed" lease_renewed
ok "node leases held and renewed"

if command -v kubectl >/dev/null 2>&1; then
    KUBECONFIG=$("$WORLD" kubeconfig) kubectl get nodes --no-headers 2>&1 | grep -c ' Ready' | grep >/dev/null -x 3 ||
        fail "kubectl get nodes: $(KUBECONFIG=$("$WORLD" kubeconfig) kubectl get nodes 2>&1)"
    ok "kubectl sees 3 Ready nodes"
fi

# A bare pod bound to node-2 runs on node-2's own containerd.
api POST /api/v1/namespaces/default/pods "$(jq -n --arg image "$IMAGE" '{apiVersion: "v1", kind: "Pod",
    metadata: {name: "bare", namespace: "default", labels: {app: "bare"}},
    spec: {nodeName: "node-2", terminationGracePeriodSeconds: 1,
           containers: [{name: "main", image: $image, command: ["/bin/sh", "-c", "sleep 3600 & wait"]}]}}')" >/dev/null
wait_until 60 "pod bare Ready" pod_ready bare
cid=$("$WORLD" crictl node-2 find default bare main) || fail "no container for bare on node-2"
for n in node-1 node-3; do
    [ "$("$WORLD" crictl "$n" ps --json | jq -s 'length')" = 0 ] || fail "$n has containers"
done
pod_get bare | jq -e --arg c "containerd://$cid" '.status.containerStatuses[0].containerID == $c' >/dev/null ||
    fail "pod status does not report containerd://$cid"
ok "pod bare runs on node-2 only, status reports its CRI container"

# Everything that must be gone after `down`.
pids=()
for f in "$RSS_WORLD_DIR"/*.pid "$RSS_WORLD_DIR"/nodes/*/kubelet.pid "$RSS_WORLD_DIR"/nodes/*/containerd/containerd.pid; do
    read -r p _ <"$f"
    pids+=("$p")
done
ids=()
shim_socks=()
for n in node-1 node-2 node-3; do
    d=$RSS_WORLD_DIR/nodes/$n/containerd
    while read -r _ p _; do pids+=("$p"); done < <(ctr --address "$d/containerd.sock" -n k8s.io tasks ls | tail -n +2)
    for t in "$d"/state/io.containerd.runtime.v2.task/k8s.io/*/; do
        [ -d "$t" ] || continue
        ids+=("$(basename "$t")")
        a=$(cat "$t/address" 2>/dev/null || true)
        [ -n "$a" ] && shim_socks+=("${a#unix://}")
    done
done
[ ${#ids[@]} -ge 2 ] || fail "expected a sandbox and a container task, found ${#ids[@]}"
[ ${#pids[@]} -ge 9 ] || fail "expected at least 9 processes (kubesim, controllers, 3x kubelet+containerd, tasks)"

"$WORLD" down || fail "world down"

for p in "${pids[@]}"; do
    st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$p/status" 2>/dev/null || true)
    [ -z "$st" ] || [ "$st" = Z ] || fail "process $p still alive after down: $(tr '\0' ' ' <"/proc/$p/cmdline")"
done
[ ! -e "$RSS_WORLD_DIR" ] || fail "$RSS_WORLD_DIR still exists"
! grep -qF "$RSS_WORLD_DIR" /proc/self/mountinfo || fail "mounts left: $(grep -F "$RSS_WORLD_DIR" /proc/self/mountinfo)"
for id in "${ids[@]}"; do
    for c in /sys/fs/cgroup/*/k8s.io/"$id" /sys/fs/cgroup/unified/k8s.io/"$id"; do
        [ ! -e "$c" ] || fail "cgroup $c left"
    done
done
for s in "${shim_socks[@]}"; do
    [ ! -e "$s" ] || fail "shim socket $s left"
done
pgrep -f "$RSS_WORLD_DIR" >/dev/null && fail "processes mentioning $RSS_WORLD_DIR: $(pgrep -af "$RSS_WORLD_DIR")"
netns_after=$(ls /run/netns 2>/dev/null | sort || true)
[ "$netns_before" = "$netns_after" ] || fail "network namespaces changed: '$netns_before' -> '$netns_after'"
ok "down left no processes (${#pids[@]} checked), mounts, cgroups (${#ids[@]} tasks), shim sockets or netns"
