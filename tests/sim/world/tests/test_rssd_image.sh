#!/usr/bin/env bash
# test_rssd_image.sh -- rssd from its container image (deploy/image) on every node of a 2-node world, from deploy/base/daemonset.yaml with only the image tag changed: healthy, leads, runs hooks.
#
# The world kubelet runs the DaemonSet as a real kubelet would: the CRI socket's hostPath
# /run/containerd is each node's own runtime (world-kubelet --host-root), the health port binds the
# pod IP (each node a loopback address of its own), the ServiceAccount token is projected at
# /var/run/secrets/kubernetes.io/serviceaccount with KUBERNETES_SERVICE_HOST/PORT (rssd's in-cluster
# config), the probes hit /healthz and /readyz, and the manifest's securityContext holds (uid 0, every
# capability dropped, no new privileges, read-only root). Prints rssd's memory in its container.
# Skipped (exit 77) without the archive: RSS_IMAGE_ARCHIVE, default $RSS_BUILD_DIR/rssd-image.oci.tar.
source "$(dirname "$0")/lib.sh"
need_image_archive ctr kubectl jq curl

world_up --nodes 2
export KUBECONFIG
KUBECONFIG=$("$WORLD" kubeconfig)
k() { kubectl --cache-dir "$RSS_WORLD_DIR/kubectl-cache" "$@"; }
sock() { echo "$RSS_WORLD_DIR/nodes/$1/containerd/containerd.sock"; }

# ---- the image into every node's runtime, under a tag the world does not map to a host process
tag=localhost/rss/rssd:container-test
for node in node-1 node-2; do
    ctr --address "$(sock $node)" -n k8s.io images import "$archive" >"$RSS_WORLD_DIR/import.log" 2>&1 ||
        { cat "$RSS_WORLD_DIR/import.log" >&2; fail "ctr images import $archive on $node"; }
    src=$(ctr --address "$(sock $node)" -n k8s.io images ls -q | awk '/^localhost\/rss\/rssd:/ && !n++')
    [ -n "$src" ] || fail "the archive held no localhost/rss/rssd image"
    ctr --address "$(sock $node)" -n k8s.io images tag --force "$src" "$tag" >/dev/null || fail "ctr images tag"
done
ok "imported $(basename "$archive") as $src into both nodes, tagged $tag"

# ---- deploy/ as on a cluster; the DaemonSet differs from deploy/base/daemonset.yaml in its image only
k apply -f "$repo/deploy/base/namespace.yaml" -f "$repo/deploy/base/crd.yaml" -f "$repo/deploy/base/rbac.yaml" >/dev/null ||
    fail "kubectl apply deploy/base"
k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org >/dev/null ||
    fail "CRD not Established"
k create --dry-run=client -o json -f "$repo/deploy/base/daemonset.yaml" |
    jq --arg tag "$tag" '.spec.template.spec.containers[0].image = $tag' >"$RSS_WORLD_DIR/daemonset.json"
diff <(k create --dry-run=client -o json -f "$repo/deploy/base/daemonset.yaml" | jq -S 'del(.spec.template.spec.containers[0].image)') \
    <(jq -S 'del(.spec.template.spec.containers[0].image)' "$RSS_WORLD_DIR/daemonset.json") >/dev/null ||
    fail "the applied DaemonSet differs from deploy/base/daemonset.yaml beyond the image"
k apply -f "$RSS_WORLD_DIR/daemonset.json" >/dev/null || fail "kubectl apply the DaemonSet"

rssd_pods() { k -n rssd-system get pods -l app.kubernetes.io/name=rssd -o json; }
# Ready comes from the readiness probe on /readyz now, not from the container running.
all_ready() {
    rssd_pods | jq -e '[.items[] | select(.status.containerStatuses[0].containerID // "" | startswith("containerd://"))
        | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length == 2' >/dev/null
}
# (Ready needs the pod, record and RSS lists; 60 s was once too short on a loaded 2-core machine)
wait_until 120 "both rssd pods run containerd containers and are Ready (readiness probe)" all_ready
ok "rssd runs in a container on both nodes, Ready by its readiness probe"

node_ip() { k get node "$1" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'; }
for i in 1 2; do
    node=node-$i
    ip=$(node_ip $node)
    [[ $ip == 127.* ]] || fail "$node has InternalIP '$ip', not a loopback address"
    pj=$(rssd_pods | jq --arg n "$node" '.items[] | select(.spec.nodeName == $n)')
    [ "$(jq -r .status.podIP <<<"$pj")" = "$ip" ] || fail "rssd on $node has podIP $(jq -r .status.podIP <<<"$pj")"
    cid=$(jq -r '.status.containerStatuses[0].containerID' <<<"$pj")
    cid=${cid#containerd://}
    pid=$(ctr --address "$(sock $node)" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c {print $2}')
    if [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then fail "no task for container $cid on $node"; fi
    [ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "/usr/bin/rssd --health-port=8476 --health-address=$ip --state-dir=/run/rssd " ] ||
        fail "the container on $node runs '$(tr '\0' ' ' <"/proc/$pid/cmdline")'"
    grep -q '^Uid:[[:space:]]*0[[:space:]]' "/proc/$pid/status" || fail "rssd is not uid 0: $(grep ^Uid "/proc/$pid/status")"
    grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$pid/status" ||
        fail "rssd has capabilities: $(grep ^Cap "/proc/$pid/status" | tr '\n' ' ')"
    grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$pid/status" || fail "rssd may gain privileges (NoNewPrivs 0)"
    envs=$(tr '\0' '\n' <"/proc/$pid/environ")
    grep -qx "NODE_NAME=$node" <<<"$envs" || fail "rssd lacks NODE_NAME=$node"
    grep -qx "POD_IP=$ip" <<<"$envs" || fail "rssd lacks POD_IP=$ip"
    grep -q '^KUBERNETES_SERVICE_HOST=' <<<"$envs" || fail "rssd lacks KUBERNETES_SERVICE_HOST"
    ! grep -q '^KUBECONFIG=\|^CONTAINER_RUNTIME_ENDPOINT=' <<<"$envs" ||
        fail "the container got KUBECONFIG or CONTAINER_RUNTIME_ENDPOINT (only host processes should)"
    # (/var/run is a symlink to /run in the image; an absolute link under /proc/PID/root leads to the host)
    [ -s "/proc/$pid/root/run/secrets/kubernetes.io/serviceaccount/token" ] || fail "no projected token in rssd's container"
    [ "$(stat -L -c %d:%i "/proc/$pid/root/")" != "$(stat -c %d:%i /)" ] || fail "rssd shares the host's root"
    # Its CRI socket is its own node's runtime (the hostPath resolved in the node's root).
    [ "$(stat -L -c %d:%i "/proc/$pid/root/run/containerd/containerd.sock")" = "$(stat -L -c %d:%i "$(sock $node)")" ] ||
        fail "rssd on $node does not see $node's containerd socket at /run/containerd"
    curl -fsS --max-time 2 "http://$ip:8476/readyz" >/dev/null || fail "no /readyz on $ip:8476"
    curl -fsS --max-time 2 "http://$ip:8476/healthz" >/dev/null || fail "no /healthz on $ip:8476"
    ok "$node: pid $pid /usr/bin/rssd uid 0, CapEff 0, NoNewPrivs 1, in-cluster config, its own /run/containerd, health on $ip:8476"
done

leads() { k -n rssd-system get lease rssd-leader -o jsonpath='{.spec.holderIdentity}' | grep >/dev/null .; }
wait_until 60 "rssd holds the Lease rssd-leader" leads
peers() {
    local i a
    for i in 1 2; do
        a=$(k -n rssd-system get lease rssd-node-node-$i -o json |
            jq -r '.metadata.annotations["rss.clusterlabs.org/peer"] // "{}" | fromjson | .address // ""')
        [ "$a" = "$(node_ip node-$i):8476" ] || return 1
    done
}
wait_until 60 "both heartbeat Leases to publish the pod IP as the peer address" peers
ok "leader $(k -n rssd-system get lease rssd-leader -o jsonpath='{.spec.holderIdentity}'); peers at $(node_ip node-1):8476 and $(node_ip node-2):8476"

# ---- it runs hooks: a 2-member dummy RSS (one member per node: each rssd execs through its own runtime)
k create --dry-run=client -o json -f "$repo/apps/dummy/rss.yaml" | jq '.spec.replicas = 2' | k apply -f - >/dev/null ||
    fail "kubectl apply the dummy RSS"
primaries() { k get rss dummy -o json | jq -e '.status.primaries == 2' >/dev/null; }
wait_until 120 "the RSS reports 2 primaries" primaries
for m in 0 1; do
    hooks=$RSS_WORLD_DIR/pv/default/data-rss-dummy-$m/hooks.log
    grep -q sequence "$hooks" || fail "no sequence hook ran in rss-dummy-$m"
done
ok "hooks ran in both members: $(cat "$RSS_WORLD_DIR"/pv/default/data-rss-dummy-*/hooks.log | awk '{print $2}' | sort | uniq -c | tr -s ' \n' ' ')"
# The fence state: in the node's own /run/rssd (the hostPath), naming the member on that node.
for i in 1 2; do
    state=$RSS_WORLD_DIR/nodes/node-$i/root/run/rssd/fence-node-$i.json
    saved() { jq -e 'any(.pods[]; .metadata.name | startswith("rss-dummy-"))' "$state" >/dev/null; }
    wait_until 30 "the fence state $state to list a member" saved
done
ok "fence state kept in each node's /run/rssd"

# ---- rssd's memory in its container (figures, not asserts)
for i in 1 2; do
    cid=$(rssd_pods | jq -r --arg n "node-$i" '.items[] | select(.spec.nodeName == $n) | .status.containerStatuses[0].containerID')
    cid=${cid#containerd://}
    pid=$(ctr --address "$(sock node-$i)" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c {print $2}')
    cg=$(awk -F: '$2 == "memory" || $2 == "" {print $3; exit}' "/proc/$pid/cgroup")
    cgmem=
    for f in "/sys/fs/cgroup/memory$cg/memory.usage_in_bytes" "/sys/fs/cgroup$cg/memory.current" "/sys/fs/cgroup/unified$cg/memory.current"; do
        [ -r "$f" ] && { cgmem=$(($(cat "$f") / 1024)); break; }
    done
    echo "memory: rssd on node-$i: $(awk '/^VmRSS|^VmHWM/ {printf "%s %s kB ", $1, $2}' "/proc/$pid/status")cgroup ${cgmem:-?} kB"
done
ok "rssd from its image on every node: container, probes, in-cluster config, per-node socket and address, leader, hooks"
