#!/usr/bin/env bash
# test_rssd_image.sh -- rssd from its container image (deploy/image) as a real CRI container in a 1-node world: healthy, leads, runs the dummy app's hooks.
#
# The other world and e2e tests run rssd as a host process (--host-process); this one imports the OCI
# archive deploy/image/build.sh made into the node's containerd and lets the world kubelet run the
# DaemonSet of deploy/daemonset.yaml from it, with the CRI socket's hostPath mount, NODE_NAME and the
# manifest's securityContext (uid 0, every capability dropped, no new privileges, read-only root).
# World-only changes to the manifest: the image tag (so the world does not map it to a host process),
# a free health port (host network), the node's containerd directory as the hostPath, and the world's
# kubeconfig (mounted read-only at its own path) instead of a service account token.
# Skipped (exit 77) without the archive: RSS_IMAGE_ARCHIVE, default $RSS_BUILD_DIR/rssd-image.oci.tar.
source "$(dirname "$0")/lib.sh"
archive=${RSS_IMAGE_ARCHIVE:-$RSS_BUILD_DIR/rssd-image.oci.tar}
if [ ! -s "$archive" ]; then
    echo "SKIP: no image archive at $archive (build it: deploy/image/build.sh)"
    exit 77
fi
for tool in ctr kubectl jq curl; do
    command -v "$tool" >/dev/null || fail "$tool is missing"
done

world_up --nodes 1
node="node-1"
ndir=$RSS_WORLD_DIR/nodes/$node
sock=$ndir/containerd/containerd.sock
export KUBECONFIG
KUBECONFIG=$("$WORLD" kubeconfig)
k() { kubectl --cache-dir "$RSS_WORLD_DIR/kubectl-cache" "$@"; }

# ---- the image into the node's runtime, under a tag the world does not map to a host process
tag=localhost/rss/rssd:container-test
ctr --address "$sock" -n k8s.io images import "$archive" >"$RSS_WORLD_DIR/import.log" 2>&1 ||
    { cat "$RSS_WORLD_DIR/import.log" >&2; fail "ctr images import $archive"; }
src=$(ctr --address "$sock" -n k8s.io images ls -q | awk '/^localhost\/rss\/rssd:/ && !n++')
[ -n "$src" ] || fail "the archive held no localhost/rss/rssd image ($(ctr --address "$sock" -n k8s.io images ls -q | tr '\n' ' '))"
ctr --address "$sock" -n k8s.io images tag --force "$src" "$tag" >/dev/null || fail "ctr images tag"
ok "imported $(basename "$archive") as $src, tagged $tag"

# ---- deploy/ as on a cluster, the DaemonSet adapted to the world
port=$((20000 + RANDOM % 30000))
k apply -f "$repo/deploy/namespace.yaml" -f "$repo/deploy/crd.yaml" -f "$repo/deploy/rbac.yaml" >/dev/null ||
    fail "kubectl apply deploy/"
k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org >/dev/null ||
    fail "CRD not Established"
k create --dry-run=client -o json -f "$repo/deploy/daemonset.yaml" |
    jq --arg tag "$tag" --arg port "$port" --arg crid "$ndir/containerd" --arg ks "$RSS_WORLD_DIR/kubesim" \
        --arg kc "$KUBECONFIG" --arg st "$RSS_WORLD_DIR/rssd-state" '
      .spec.template.spec.containers[0] |= (
        .image = $tag | .imagePullPolicy = "Never"
        | .args = [.args[] | sub("^--health-port=.*"; "--health-port=" + $port)]
        | .ports[0].containerPort = ($port | tonumber)
        | .env += [{name: "KUBECONFIG", value: $kc}]
        | .volumeMounts += [{name: "kubesim", mountPath: $ks, readOnly: true}])
      | .spec.template.spec.volumes |= map(if .name == "cri-socket" then .hostPath.path = $crid
          elif .name == "state" then .hostPath.path = $st else . end)
      | .spec.template.spec.volumes += [{name: "kubesim", hostPath: {path: $ks, type: "Directory"}}]' \
        >"$RSS_WORLD_DIR/daemonset.json"
k apply -f "$RSS_WORLD_DIR/daemonset.json" >/dev/null || fail "kubectl apply the DaemonSet"

rssd_pod() { k -n rssd-system get pods -l app.kubernetes.io/name=rssd -o json; }
rssd_running() {
    rssd_pod | jq -e '.items[0].status.containerStatuses[0].state.running != null and
        (.items[0].status.containerStatuses[0].containerID | startswith("containerd://"))' >/dev/null
}
wait_until 60 "the rssd pod runs a containerd container" rssd_running
cid=$(rssd_pod | jq -r '.items[0].status.containerStatuses[0].containerID')
cid=${cid#containerd://}
ok "rssd runs in container ${cid:0:12} (not a host process)"

# The process inside: rssd, as root with no capabilities and no_new_privs (the manifest's
# securityContext, passed by the kubelet to CRI), the node's name from the downward API.
pid=$(ctr --address "$sock" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c {print $2}')
if [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then fail "no task for container $cid"; fi
[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "/usr/bin/rssd --health-port=$port --state-dir=/run/rssd " ] ||
    fail "the container runs '$(tr '\0' ' ' <"/proc/$pid/cmdline")'"
grep -q '^Uid:[[:space:]]*0[[:space:]]' "/proc/$pid/status" || fail "rssd is not uid 0: $(grep ^Uid "/proc/$pid/status")"
grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$pid/status" ||
    fail "rssd has capabilities: $(grep ^Cap "/proc/$pid/status" | tr '\n' ' ')"
grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$pid/status" || fail "rssd may gain privileges (NoNewPrivs 0)"
tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "NODE_NAME=$node" || fail "rssd lacks NODE_NAME=$node"
! tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^CONTAINER_RUNTIME_ENDPOINT=' ||
    fail "the container got CONTAINER_RUNTIME_ENDPOINT (only host processes should)"
[ "$(stat -L -c %d:%i "/proc/$pid/root/")" != "$(stat -c %d:%i /)" ] || fail "rssd shares the host's root"
[ -x "/proc/$pid/root/usr/bin/rssd" ] || fail "no /usr/bin/rssd in the container's root"
ok "pid $pid: /usr/bin/rssd, uid 0, CapEff 0, NoNewPrivs 1, NODE_NAME=$node"

# ---- healthy: /healthz and /readyz (API server and CRI socket reached, watches synced), and it leads
healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" && curl -fsS --max-time 2 "http://127.0.0.1:$port/healthz"; }
# (Ready needs the pod, record and RSS lists; 60 s was once too short on a loaded 2-core machine)
wait_until 120 "rssd /readyz and /healthz answer 200 on port $port" healthy
leads() {
    k -n rssd-system get lease rssd-leader -o jsonpath='{.spec.holderIdentity}' | grep -q .
}
wait_until 60 "rssd holds the Lease rssd-leader" leads
ok "rssd is ready (found the CRI socket /run/containerd/containerd.sock by itself) and leads: $(k -n rssd-system get lease rssd-leader -o jsonpath='{.spec.holderIdentity}')"

# ---- it runs hooks: a 1-member dummy RSS gets its sequence read and is seeded, through CRI ExecSync
k create --dry-run=client -o json -f "$repo/apps/dummy/rss.yaml" | jq '.spec.replicas = 1' | k apply -f - >/dev/null ||
    fail "kubectl apply the dummy RSS"
hooks=$RSS_WORLD_DIR/pv/default/data-rss-dummy-0/hooks.log
ran() { grep -q "$1" "$hooks"; }
wait_until 90 "the sequence hook ran in rss-dummy-0 ($hooks)" ran sequence
wait_until 90 "rss-dummy-0 was seeded" ran seed
primary() { k get rss dummy -o json | jq -e '.status.primaries == 1' >/dev/null; }
wait_until 60 "the RSS reports 1 primary" primary
ok "hooks ran from the containerised rssd: $(tr '\n' ' ' <"$hooks" | cut -c1-200)"
# The fence state (a hostPath, writable under the read-only root): written after heartbeats, naming
# the member it would have to fence after a restart while cut off.
state=$RSS_WORLD_DIR/rssd-state/fence-$node.json
saved() { jq -e 'any(.pods[]; .metadata.name == "rss-dummy-0")' "$state" >/dev/null; }
wait_until 30 "the fence state $state to list rss-dummy-0" saved
ok "fence state kept in the hostPath: $(jq -c '{bootId, apiOkBootMs, pods: (.pods | length), rss: (.rss | length)}' "$state")"
ok "rssd from its image: container, securityContext, healthy, leader, hooks"
