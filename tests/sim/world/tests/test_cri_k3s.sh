#!/usr/bin/env bash
# test_cri_k3s.sh -- a node laid out as k3s and RKE2 lay theirs out (containerd's socket in /run/k3s/containerd), with a stale socket of an uninstalled runtime at /run/containerd: rssd from deploy/daemonset.yaml, unchanged, finds the live runtime and runs hooks through it.
#
# `world up --cri-dir /run/k3s/containerd` puts the node's containerd directory at that path of its root
# (world-kubelet --host-root) and points the node's kubelet at the socket there, as k3s configures its
# kubelet; /run/containerd does not exist until the test leaves a socket file there that nothing listens
# on (a containerd that was stopped or removed). rssd runs from its image, with no --cri-endpoint: it
# must skip the stale socket, take k3s's because that runtime answers and runs rssd's own pod, reach it
# through the read-only mount the DaemonSet makes, and run the dummy app's hooks there.
# Skipped (exit 77) without the image archive: RSS_IMAGE_ARCHIVE, default $RSS_BUILD_DIR/rssd-image.oci.tar.
source "$(dirname "$0")/lib.sh"
need_image_archive ctr kubectl jq python3

RSS_WORLD_RSSD=container world_up --nodes 1 --cri-dir /run/k3s/containerd
export KUBECONFIG
KUBECONFIG=$("$WORLD" kubeconfig)
k() { kubectl --cache-dir "$RSS_WORLD_DIR/kubectl-cache" "$@"; }
d=$RSS_WORLD_DIR/nodes/node-1
root=$d/root
sock=$d/containerd/containerd.sock

# ---- the node: k3s's layout, the kubelet on k3s's socket, and a stale socket where containerd's would be
[ "$(stat -L -c %d:%i "$root/run/k3s/containerd/containerd.sock")" = "$(stat -L -c %d:%i "$sock")" ] ||
    fail "the node's containerd socket is not at /run/k3s/containerd/containerd.sock of its root"
[ ! -e "$root/run/containerd" ] || fail "the node has a /run/containerd before the test made one"
grep -qx -- "unix://$root/run/k3s/containerd/containerd.sock" "$d/kubelet.args" ||
    fail "the node's kubelet is not on k3s's socket: $(tr '\n' ' ' <"$d/kubelet.args")"
mkdir -p "$root/run/containerd"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$root/run/containerd/containerd.sock"
[ -S "$root/run/containerd/containerd.sock" ] || fail "no stale socket file made"
ok "node-1: containerd at /run/k3s/containerd, its kubelet there, a stale socket at /run/containerd/containerd.sock"

# ---- deploy/ as it is
k apply -f "$repo/deploy/namespace.yaml" -f "$repo/deploy/crd.yaml" -f "$repo/deploy/rbac.yaml" \
    -f "$repo/deploy/daemonset.yaml" >/dev/null || fail "kubectl apply deploy/"
rssd_pod() { k -n rssd-system get pods -l app.kubernetes.io/name=rssd -o json | jq '.items[0] // {}'; }
ready() { rssd_pod | jq -e 'any(.status.conditions[]?; .type == "Ready" and .status == "True")' >/dev/null; }
wait_until 90 "rssd Ready on node-1" ready
cid=$(rssd_pod | jq -r '.status.containerStatuses[0].containerID')
cid=${cid#containerd://}
pid=$(ctr --address "$sock" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c {print $2}')
[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "no task for rssd's container $cid"
ok "rssd Ready from deploy/daemonset.yaml (pid $pid, no --cri-endpoint: $(tr '\0' ' ' <"/proc/$pid/cmdline"))"

# What it found, in its own words, from its container log.
log=$(find "$d/kubelet/logs" -path '*rssd*' -name '*.log' -print0 | xargs -0 cat 2>/dev/null)
log_has() { grep -qF -- "$1" <<<"$log"; }
log_has "at unix:///run/k3s/containerd/containerd.sock" || fail "rssd's log does not say it took k3s's socket"
log_has "/run/containerd/containerd.sock (containerd): a stale socket: nothing listens" ||
    fail "rssd's log does not say it skipped the stale socket"
log_has "runs pod rssd-system/$(rssd_pod | jq -r .metadata.name)" || fail "rssd's log does not say the runtime runs its pod"
ok "rssd: $(grep -o 'CRI runtime [^(]*([^)]*) at [^ ,]*' <<<"$log" | sed -n 1p)"
# Through the DaemonSet's read-only mount of the node's own directory.
[ "$(stat -L -c %d:%i "/proc/$pid/root/run/k3s/containerd/containerd.sock")" = "$(stat -L -c %d:%i "$sock")" ] ||
    fail "rssd does not see node-1's runtime at /run/k3s/containerd"
awk '$5 == "/run/k3s/containerd" {print $6}' "/proc/$pid/mountinfo" | grep >/dev/null '^ro' ||
    fail "/run/k3s/containerd is not mounted read-only in rssd's container: $(grep ' /run/k3s/containerd ' "/proc/$pid/mountinfo")"
ok "rssd reaches node-1's runtime through a read-only mount of /run/k3s/containerd"

# ---- it runs hooks there
k create --dry-run=client -o json -f "$repo/apps/dummy/rss.yaml" | jq '.spec.replicas = 1' | k apply -f - >/dev/null ||
    fail "kubectl apply the dummy RSS"
running() { k get rss dummy -o json | jq -e '.status.primaries == 1' >/dev/null; }
wait_until 90 "the RSS to report its primary" running
hooks=$RSS_WORLD_DIR/pv/default/data-rss-dummy-0/hooks.log
grep -q ' sequence ' "$hooks" && grep -q ' seed ' "$hooks" || fail "no sequence and seed hooks ran in rss-dummy-0"
ok "hooks ran in rss-dummy-0 through k3s's containerd:$(awk '{print $3}' "$hooks" | tr '\n' ' ' | sed 's/^/ /')"
