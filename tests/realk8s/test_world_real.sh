#!/usr/bin/env bash
# test_world_real.sh -- the real-Kubernetes world keeps the world's contract: nodes, pods, faults, rssd's install paths and a clean down.
#
# Usage: RSS_BUILD_DIR=build bash tests/realk8s/test_world_real.sh   (root; builds the components when missing)
# A 2-node `world up --real`; judged from the runtimes, the host's mounts, cgroups and processes, and the API.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WORLD=$repo/tests/sim/world/world
export RSS_BUILD_DIR=${RSS_BUILD_DIR:-$repo/build}
case $RSS_BUILD_DIR in /*) ;; *) RSS_BUILD_DIR=$repo/$RSS_BUILD_DIR ;; esac
RSS_WORLD_DIR=$(mktemp -d /tmp/rssr.XXXXXX)
export RSS_WORLD_DIR
tmp=$(mktemp -d /tmp/rssr-t.XXXXXX)
cleanup() {
    "$WORLD" down >/dev/null 2>&1 || true
    rmdir "$RSS_WORLD_DIR" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib/assert.sh
source "$repo/tests/lib/assert.sh"
world_status() { "$WORLD" status 2>&1 || true; }
ASSERT_ON_FAIL=world_status

t0=$(date +%s%3N)
"$WORLD" up --real --nodes 2 --node-grace 3 >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "world up --real"; }
ok "world up --real --nodes 2 in $(($(date +%s%3N) - t0)) ms"
KC=$("$WORLD" kubeconfig)
k() { kubectl --kubeconfig "$KC" --cache-dir "$tmp/kcache" --request-timeout=10s "$@"; }
[ "$(cat "$RSS_WORLD_DIR/flavour")" = real ] || fail "the world does not say it is real"

# Real components, stamped with their version.
ver=$(k version -o json | jq -r .serverVersion.gitVersion)
[ "$ver" = v1.34.4 ] || fail "apiserver version '$ver'"
k get nodes -o json | jq -e '[.items[] | select(.status.nodeInfo.kubeletVersion == "v1.34.4" and
    any(.status.conditions[]; .type == "Ready" and .status == "True"))] | length == 2' >/dev/null ||
    fail "not 2 Ready v1.34.4 kubelets: $(k get nodes -o wide 2>&1)"
ok "apiserver and 2 kubelets v1.34.4, Ready"

# rssd's Kubernetes client on the real server: every watch and request of a process on one HTTP/2 connection,
# kept through a stalled server and left for a new one on a dead path (kube_h2_check judges from the process's
# sockets, a TCP relay of its own and iptables in a network namespace of its own).
"$RSS_BUILD_DIR/tests/integration/kube/kube_h2_check" "$KC" >"$tmp/h2.log" 2>&1 ||
    { cat "$tmp/h2.log" >&2; fail "kube_h2_check"; }
ok "kube client: $(grep -c '^ok:' "$tmp/h2.log") checks passed: one HTTP/2 connection, kept through a stalled server, left on a dead path"

# A pod on node-2: in node-2's runtime, with node-2's /run/containerd as its hostPath, the world's /hooks,
# a projected ServiceAccount token, an address of node-2's pod range.
k apply -f - >/dev/null <<EOF || fail "apply pod"
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  nodeName: node-2
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: localhost/rss/busybox:1
    imagePullPolicy: Never
    command: [sh, -c, 'echo probe up; exec sleep 1000000']
    volumeMounts: [{name: cri, mountPath: /cri}]
  volumes: [{name: cri, hostPath: {path: /run/containerd, type: Directory}}]
EOF
ready() { [ "$(k get pod probe -o jsonpath='{.status.containerStatuses[0].ready}')" = true ]; }
wait_until 60 "pod probe running" ready
cid=$(k get pod probe -o jsonpath='{.status.containerStatuses[0].containerID}')
cid=${cid#containerd://}
sock2=$RSS_WORLD_DIR/nodes/node-2/containerd/containerd.sock
ctr --address "$sock2" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c && $3 == "RUNNING" {f=1} END {exit !f}' ||
    fail "container $cid is not running in node-2's containerd"
ctr --address "$RSS_WORLD_DIR/nodes/node-1/containerd/containerd.sock" -n k8s.io tasks ls | grep >/dev/null "^$cid" &&
    fail "container $cid found in node-1's runtime"
# (through the CRI: ctr exec would make its fifos in the host's /run, which node-2's containerd does not see)
ex() { "$WORLD" crictl node-2 exec "$cid" "$@"; }
[ "$(ex stat -c %i /cri/containerd.sock)" = "$(stat -c %i "$sock2")" ] ||
    fail "the pod's /run/containerd is not node-2's runtime directory"
ex test -x /hooks/status || fail "no /hooks in the container (the runc wrapper's extra mount)"
[ -n "$(ex cat /var/run/secrets/kubernetes.io/serviceaccount/token)" ] || fail "no projected token"
# The apiserver reaches the kubelets (pods/log, exec, what `kubectl rss logs` reads) through the world's
# egress proxy, which dials inside the nodes' network namespace.
[ "$(k logs probe 2>&1)" = "probe up" ] || fail "kubectl logs probe through the apiserver: $(k logs probe 2>&1)"
[ "$(k exec probe -- echo through-the-kubelet 2>&1)" = through-the-kubelet ] ||
    fail "kubectl exec probe through the apiserver: $(k exec probe -- true 2>&1)"
ip=$(k get pod probe -o jsonpath='{.status.podIP}')
[[ $ip == 10.244.2.* ]] || fail "pod IP '$ip' not in node-2's range"
ok "pod on node-2: its runtime, its /run/containerd, /hooks, a projected token, IP $ip; kubectl logs and exec through the apiserver"
# Each node's own boot id (the nodes share one kernel): in its Node, as the kubelet reports it, and in its
# containers' processes as RSS_BOOT_ID (the runc wrapper), which rssd's election compares.
boot_of() { k get node "$1" -o jsonpath='{.status.nodeInfo.bootID}'; }
boot1=$(boot_of node-1)
boot2=$(boot_of node-2)
[ -n "$boot1" ] && [ -n "$boot2" ] && [ "$boot1" != "$boot2" ] ||
    fail "the Nodes' bootIDs are not their own: node-1 '$boot1', node-2 '$boot2'"
[ "$boot1" != "$(cat /proc/sys/kernel/random/boot_id)" ] || fail "node-1 reports the kernel's boot id"
# (the container's own process: an ExecSync gets the env containerd stored, before the wrapper's edit)
pboot=$(ex cat /proc/1/environ | tr '\0' '\n' | sed -n 's/^RSS_BOOT_ID=//p')
[ "$pboot" = "$boot2" ] || fail "the pod's RSS_BOOT_ID '$pboot' is not node-2's bootID $boot2"
ok "boot ids: node-1 $boot1, node-2 $boot2 (the pod's RSS_BOOT_ID)"
# The cluster DNS, as the pod uses it: its resolv.conf from the kubelet's clusterDNS, CoreDNS answering from
# the apiserver (the kubernetes Service's address). Galera's peers are found so.
ex grep -q '^nameserver 10.96.0.10$' /etc/resolv.conf || fail "the pod's resolv.conf: $(ex cat /etc/resolv.conf)"
dns() { ex nslookup kubernetes.default.svc.cluster.local 2>/dev/null | grep >/dev/null '10\.96\.0\.1$'; }
wait_until 30 "kubernetes.default.svc.cluster.local to resolve in the pod" dns
ok "cluster DNS: the pod resolves kubernetes.default.svc.cluster.local to 10.96.0.1"

# rssd installed as a user would, unchanged: kubectl apply -k deploy/overlays/cluster; the DaemonSet's pods
# Ready on both real kubelets (their readiness: connected to the API server with the projected token; they
# start only once their node's CRI runtime answered), a leader Lease taken.
k apply -k "$repo/deploy/overlays/cluster" >"$tmp/apply.log" 2>&1 || { cat "$tmp/apply.log" >&2; fail "apply -k"; }
rssd_ready() {
    k get pods -n rssd-system -l app.kubernetes.io/name=rssd -o json | jq -e '[.items[] | select(.status.phase == "Running"
        and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length == 2' >/dev/null
}
wait_until 120 "2 rssd pods Ready" rssd_ready
leader() { [ -n "$(k get lease rssd-leader -n rssd-system -o jsonpath='{.spec.holderIdentity}')" ]; }
wait_until 60 "a leader" leader
# The audit log records rssd's Lease writes with the Lease the server committed (the chaos oracle's input).
# The apiserver logs a request once it answered it, so the line may come a moment after the Lease changed.
# (One filter over all lines: jq -e judges by the last input's output only.)
holder=$(k get lease rssd-leader -n rssd-system -o jsonpath='{.spec.holderIdentity}')
audited() {
    jq -en --arg h "$holder" 'any(inputs; .objectRef.resource == "leases" and .objectRef.name == "rssd-leader"
        and .responseStatus.code < 300 and .responseObject.spec.holderIdentity == $h)' "$RSS_WORLD_DIR/k8s/audit.log" >/dev/null
}
wait_until 20 "a write of the leader Lease by $holder in the audit log" audited
ok "kubectl apply -k deploy/overlays/cluster: rssd Ready on both nodes, leader $(k get lease rssd-leader -n rssd-system -o jsonpath='{.spec.holderIdentity}')"
# kubectl rss impersonating (--as, --as-group), which kubesim does not implement: the real apiserver
# authorizes the request as rssd's service account (it may list rssd's Leases), and refuses a user with
# no rights.
krss() { "$RSS_BUILD_DIR/nodeagent/plugin/kubectl-rss" --kubeconfig "$KC" "$@"; }
out=$(krss agents --as system:serviceaccount:rssd-system:rssd --as-group system:serviceaccounts 2>&1) ||
    fail "kubectl rss agents as rssd's service account: $out"
[[ $out == *node-1*node-2* ]] || fail "kubectl rss agents as rssd's service account: $out"
out=$(krss agents --as nobody 2>&1) && fail "kubectl rss agents as a user without rights succeeded: $out"
[[ $out == *403* || $out == *orbidden* ]] || fail "kubectl rss agents as nobody: not a 403: $out"
ok "kubectl rss --as: as rssd's service account it lists the agents; as nobody, 403"

# The CRD's CEL rules (x-kubernetes-validations), which run only in a real apiserver: each case of the
# table test_spec checks spec.c with is refused at `kubectl apply` with spec.c's own words, or accepted
# (a server-side dry run: validated, not stored).
cel_cases=0 cel_refused=0
while IFS=$'\t' read -r name spec want; do
    [ "${name:0:1}" = "#" ] && continue
    doc="{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"cel\",\"namespace\":\"default\"},\"spec\":$spec}"
    if out=$(k create --dry-run=server -f - <<<"$doc" 2>&1); then
        [ "$want" = - ] || fail "CEL: $name accepted by the apiserver; spec.c refuses it: $want"
    else
        [ "$want" != - ] || fail "CEL: $name refused by the apiserver, spec.c accepts it: $out"
        [[ $out == *"$want"* ]] || fail "CEL: $name refused, but not in spec.c's words ($want): $out"
        cel_refused=$((cel_refused + 1))
    fi
    cel_cases=$((cel_cases + 1))
done <"$repo/tests/unit/spec_cross_field.tsv"
[ "$cel_cases" -ge 10 ] && [ "$cel_refused" -ge 5 ] || fail "CEL: only $cel_cases cases, $cel_refused refused"
ok "CRD CEL rules: $cel_cases cases of spec_cross_field.tsv, $cel_refused refused at apply in spec.c's words, the rest accepted"

# API Priority and Fairness (deploy/base/flowcontrol.yaml): the real server takes the FlowSchema (not
# dangling: its level exists) and dispatches rssd's own Lease requests (the projected token's
# ServiceAccount) in the rssd-leases level, counted in its metrics; kubesim does not classify.
dangling() { k get flowschema rssd-leases -o jsonpath='{.status.conditions[?(@.type=="Dangling")].status}'; }
wait_until 20 "FlowSchema rssd-leases not dangling" test "$(dangling)" = False
pf_dispatched() {
    k get --raw /metrics | awk '/^apiserver_flowcontrol_dispatched_requests_total\{/ &&
        /flow_schema="rssd-leases"/ && /priority_level="rssd-leases"/ {n += $NF} END {printf "%d\n", n}'
}
pf_some() { [ "$(pf_dispatched)" -gt 0 ]; }
wait_until 20 "rssd's Lease requests dispatched in priority level rssd-leases" pf_some
ok "API Priority and Fairness: $(pf_dispatched) of rssd's Lease requests dispatched in level rssd-leases (FlowSchema not dangling)"

# power-off: the kubelet and the container die, the node goes NotReady; power-on: the pod runs again.
kpid=$(cut -d' ' -f1 "$RSS_WORLD_DIR/nodes/node-2/kubelet.pid")
[ -n "$kpid" ] && kill -0 "$kpid" || fail "no live kubelet on node-2 before power-off"
"$WORLD" power-off node-2 >/dev/null 2>&1 || fail "power-off"
ctr --address "$sock2" -n k8s.io tasks ls | awk -v c="$cid" '$1 == c && $3 == "RUNNING" {f=1} END {exit !f}' &&
    fail "container still running after power-off"
# (a killed process whose parent is gone may stay a zombie until the machine's init reaps it: dead)
# (reaped already: no /proc entry, sed fails; without `|| true` set -e ended this script without a word)
st=$(sed 's/.*) //' "/proc/$kpid/stat" 2>/dev/null | cut -d' ' -f1 || true)
[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || fail "kubelet of node-2 ($kpid, state $st) alive after power-off"
notready() { [ "$(k get node node-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = Unknown ]; }
wait_until 60 "node-2 NotReady (Unknown) after power-off" notready
"$WORLD" power-on node-2 >/dev/null 2>&1 || fail "power-on"
restarted() { [ "$(k get pod probe -o jsonpath='{.status.containerStatuses[0].ready}')" = true ] &&
    [ "$(k get pod probe -o jsonpath='{.status.containerStatuses[0].containerID}')" != "containerd://$cid" ]; }
wait_until 90 "pod probe running again in a new container" restarted
newboot() { [ -n "$(boot_of node-2)" ] && [ "$(boot_of node-2)" != "$boot2" ]; }
wait_until 30 "node-2's Node to report a new boot id after the power-on" newboot
[ "$(boot_of node-1)" = "$boot1" ] || fail "node-1's boot id changed with node-2's power cycle"
ok "power-off killed kubelet and container, node-2 Unknown; power-on: the pod runs again, node-2 in boot $(boot_of node-2)"

# partition: node-2's kubelet and pods reach nothing, the node goes NotReady, but the kubelet still reaches
# its own pods (its probes: from its bridge's address), as on a real node whose network is cut; heal: Ready
# again. A group partition (node-2 --from node-1): node-2's pods lose the apiserver and node-1's pods.
nready() { [ "$(k get node node-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_until 60 "node-2 Ready" nready
pod_ip() { k get pods -n rssd-system -l app.kubernetes.io/name=rssd --field-selector "spec.nodeName=$1" \
    -o jsonpath='{.items[0].status.podIP}'; }
# After the power-on node-2's rssd pod gets a new sandbox: its address is empty until then (a CI rehearsal
# read it too early and waited for "" in vain).
rssd_ips() { [ -n "$(pod_ip node-2)" ] && [ -n "$(pod_ip node-1)" ]; }
wait_until 90 "rssd's pods on both nodes with an address" rssd_ips
rip2=$(pod_ip node-2)
rip1=$(pod_ip node-1)
innet() { nsenter --net="$RSS_WORLD_DIR/ns/net" "$@"; }
health_from() { innet curl -sf --max-time 2 --interface "$1" "http://$rip2:8476/healthz" >/dev/null 2>&1; }
api_from_pod() { ex nc -w 2 10.96.0.1 443 </dev/null >/dev/null 2>&1; }
peer_from_pod() { ex nc -w 2 "$rip1" 8476 </dev/null >/dev/null 2>&1; }
cid=$(k get pod probe -o jsonpath='{.status.containerStatuses[0].containerID}') # (power-on made a new one)
cid=${cid#containerd://}
# (re-read each time: the kubelet may still report the address of the sandbox before the power-off)
reached() {
    rip2=$(pod_ip node-2) && rip1=$(pod_ip node-1) && health_from 10.244.2.1 && health_from 10.244.1.1 &&
        api_from_pod && peer_from_pod
}
wait_until 60 "before the partition: rssd's /healthz on node-2 from 10.244.2.1 and 10.244.1.1, the apiserver and node-1's rssd from the probe pod" reached
rip2=$(pod_ip node-2)
rip1=$(pod_ip node-1)
"$WORLD" partition node-2 >/dev/null 2>&1 || fail "partition"
wait_until 60 "node-2 NotReady under partition" notready
health_from 10.244.2.1 || fail "node-2's kubelet (10.244.2.1) does not reach its own rssd pod under partition"
health_from 10.244.1.1 && fail "node-1's address reaches node-2's rssd pod under partition"
api_from_pod && fail "the probe pod on node-2 reaches the apiserver under partition"
"$WORLD" heal node-2 >/dev/null 2>&1 || fail "heal"
wait_until 60 "node-2 Ready after heal" nready
api_from_pod || fail "the probe pod does not reach the apiserver after heal"
"$WORLD" partition node-2 --from node-1 >/dev/null 2>&1 || fail "group partition"
wait_until 60 "node-2 NotReady under the group partition" notready
api_from_pod && fail "the probe pod on node-2 reaches the apiserver under the group partition"
peer_from_pod && fail "the probe pod on node-2 reaches node-1's rssd under the group partition"
health_from 10.244.2.1 || fail "node-2's kubelet does not reach its own rssd pod under the group partition"
"$WORLD" heal node-2 >/dev/null 2>&1 || fail "heal of the group"
wait_until 60 "node-2 Ready after the group's heal" nready
peer_from_pod || fail "the probe pod does not reach node-1's rssd after the group's heal"
ok "partition: node-2 Unknown, its kubelet still reaches its pods, its pods reach nothing; group partition from node-1: no apiserver, no node-1 pods; heal: Ready"

# api-freeze: nothing answers; api-thaw: answers.
"$WORLD" api-freeze || fail "api-freeze"
kubectl --kubeconfig "$KC" --cache-dir "$tmp/kcache" --request-timeout=3s get ns >/dev/null 2>&1 &&
    fail "the apiserver answered while frozen"
"$WORLD" api-thaw || fail "api-thaw"
k get ns >/dev/null || fail "no answer after api-thaw"
ok "api-freeze: no answer; api-thaw: answers"

# freeze: node-2's kubelet, containerd and containers (the probe's, rssd's) stop at once, the Node goes Unknown;
# thaw: the same processes run again, Ready since the thaw (the real kubelet's transition time), no restart.
cg2=/sys/fs/cgroup/unified/rss-world-$(printf '%s' "$RSS_WORLD_DIR" | cksum | cut -d' ' -f1)/node-2
task_pid() { ctr --address "$sock2" -n k8s.io tasks ls | awk -v c="${1#containerd://}" '$1 == c {print $2}'; }
probe_c=$(k get pod probe -o jsonpath='{.status.containerStatuses[0].containerID}')
rssd_c=$(k get pods -n rssd-system -l app.kubernetes.io/name=rssd -o json |
    jq -r '.items[] | select(.spec.nodeName == "node-2") | .status.containerStatuses[0].containerID')
probe_restarts=$(k get pod probe -o jsonpath='{.status.containerStatuses[0].restartCount}')
pids="kubelet:$(cut -d' ' -f1 "$RSS_WORLD_DIR/nodes/node-2/kubelet.pid") containerd:$(cat "$RSS_WORLD_DIR/nodes/node-2/containerd/containerd.pid")"
pids+=" probe:$(task_pid "$probe_c") rssd:$(task_pid "$rssd_c")"
cg_state() { grep -qx "frozen $2" "/sys/fs/cgroup/unified$(sed -n 's/^0:://p' "/proc/$1/cgroup")/cgroup.events"; }
in_cg2() { [[ $(sed -n 's/^0:://p' "/proc/$1/cgroup") == "${cg2#/sys/fs/cgroup/unified}"* ]]; }
"$WORLD" freeze node-2 >/dev/null 2>&1 || fail "freeze"
for p in $pids; do
    in_cg2 "${p#*:}" || fail "${p%%:*} (${p#*:}) is not below node-2's cgroup: $(cat "/proc/${p#*:}/cgroup")"
    cg_state "${p#*:}" 1 || fail "${p%%:*} (${p#*:}) not frozen"
done
wait_until 60 "node-2 NotReady (Unknown) while frozen" notready
thawed_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
"$WORLD" thaw node-2 >/dev/null 2>&1 || fail "thaw"
for p in $pids; do cg_state "${p#*:}" 0 || fail "${p%%:*} (${p#*:}) not running again after thaw"; done
wait_until 60 "node-2 Ready after thaw" nready
since=$(k get node node-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')
[[ ! $since < $thawed_at ]] || fail "node-2 Ready since $since, before the thaw ($thawed_at)"
[ "$(k get pod probe -o jsonpath='{.status.containerStatuses[0].restartCount}')" = "$probe_restarts" ] ||
    fail "the probe pod restarted across the freeze"
ok "freeze: node-2's kubelet, containerd, probe and rssd ($pids) frozen, node Unknown; thaw: the same processes, Ready since $since"

# Helm on the real apiserver (kube_deploy_helm runs it against kubesim, which runs no pod and has no
# aggregation controller): the chart from the work tree, with the image the world imported, installed
# into a namespace of its own, its DaemonSet Ready on both nodes, `helm test` passing, `helm upgrade`
# rolled out, `helm uninstall` leaving only the CRD. The chart's cluster-wide objects have the names of
# the kustomize install's (ClusterRole rssd, FlowSchema rssd-leases, the CRD), which leaves first.
t0=$(date +%s%3N)
k delete -k "$repo/deploy/overlays/cluster" --wait --timeout=90s >"$tmp/unapply.log" 2>&1 ||
    { cat "$tmp/unapply.log" >&2; fail "kubectl delete -k deploy/overlays/cluster"; }
k get crd replicatedstatefulsets.clusterlabs.org >/dev/null 2>&1 && fail "the CRD is still there after delete -k"
helm_bin=$(bash "$repo/tests/lib/helm.sh") || fail "no helm (tests/lib/helm.sh)"
hm() {
    HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data \
        "$helm_bin" --kubeconfig "$KC" -n rssd-helm "$@"
}
chart=$repo/deploy/helm/rssd
hm install rssd "$chart" --create-namespace --set image.tag=dev --set image.pullPolicy=Never >"$tmp/helm.log" 2>&1 ||
    { cat "$tmp/helm.log" >&2; fail "helm install"; }
hm get manifest rssd >"$tmp/manifest.yaml" || fail "helm get manifest"
# (every object of the release, as the server has it: kubectl get -f fails on the first one missing)
objs=$(k get -f "$tmp/manifest.yaml" -o name 2>&1) || fail "helm install: objects missing: $objs"
[ "$(grep -c '^apiVersion: flowcontrol.apiserver.k8s.io/v1$' "$tmp/manifest.yaml")" = 2 ] ||
    fail "helm install: the FlowSchema and PriorityLevelConfiguration not at flowcontrol v1 for $ver: $(grep flowcontrol "$tmp/manifest.yaml")"
k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org >/dev/null ||
    fail "helm install: the CRD (crds/) is not Established"
hdangling() { k get flowschema rssd-leases -o jsonpath='{.status.conditions[?(@.type=="Dangling")].status}'; }
wait_until 20 "helm's FlowSchema rssd-leases not dangling" test "$(hdangling)" = False
# (the real clusterrole-aggregation controller copies rssd-view's rules into view, rssd-edit's into edit)
aggregated() {
    k get clusterrole view edit -o json | jq -e '[.items[] | any(.rules[]; .apiGroups == ["clusterlabs.org"])] == [true, true]' >/dev/null
}
wait_until 30 "view and edit to aggregate rssd-view's and rssd-edit's rules" aggregated
# A refusal of the chart's CRD's CEL rules (the first refused case of spec_cross_field.tsv).
IFS=$'\t' read -r cname cspec cwant < <(awk -F'\t' '$1 !~ /^#/ && $3 != "-"' "$repo/tests/unit/spec_cross_field.tsv")
out=$(k create --dry-run=server -f - <<<"{\"apiVersion\":\"clusterlabs.org/v1alpha1\",\"kind\":\"ReplicatedStatefulSet\",\"metadata\":{\"name\":\"cel\",\"namespace\":\"default\"},\"spec\":$cspec}" 2>&1) &&
    fail "helm's CRD accepts $cname: $out"
[[ $out == *"$cwant"* ]] || fail "helm's CRD refuses $cname, not in spec.c's words ($cwant): $out"
hpods() {
    k get pods -n rssd-helm -l app.kubernetes.io/name=rssd -o json | jq -c '[.items[] |
        select(.metadata.ownerReferences[0].kind == "DaemonSet" and .metadata.deletionTimestamp == null) |
        {node: .spec.nodeName, image: .spec.containers[0].image, args: .spec.containers[0].args,
         ready: (.status.phase == "Running" and any(.status.conditions[]?; .type == "Ready" and .status == "True"))}] | sort_by(.node)'
}
hready() { hpods | jq -e 'map(select(.ready)) | map(.node) == ["node-1", "node-2"]' >/dev/null || { hpods; return 1; }; }
wait_until 90 "the chart's DaemonSet Ready on node-1 and node-2" hready
[ "$(hpods | jq -r 'map(.image) | unique | join(" ")')" = localhost/rss/rssd:dev ] || fail "helm's rssd pods: $(hpods)"
ok "helm install on the real apiserver: $(wc -l <<<"$objs") objects accepted (RBAC, flowcontrol v1 not dangling, aggregated roles in view and edit), the CRD Established and refusing $cname, rssd Ready on both nodes"
hm test rssd --timeout 90s >"$tmp/helm-test.log" 2>&1 || { cat "$tmp/helm-test.log" >&2; fail "helm test"; }
grep -E >/dev/null '^Phase: +Succeeded' "$tmp/helm-test.log" || { cat "$tmp/helm-test.log" >&2; fail "helm test: no Succeeded phase"; }
ok "helm test: the hook pod's kubectl-rss agents, as rssd's ServiceAccount, passed"
uid=$(k -n rssd-helm get daemonset rssd -o jsonpath='{.metadata.uid}')
hm upgrade rssd "$chart" --reuse-values --set logLevel=debug >"$tmp/helm.log" 2>&1 ||
    { cat "$tmp/helm.log" >&2; fail "helm upgrade"; }
dsargs=$(k -n rssd-helm get daemonset rssd -o json | jq -c '[.metadata.uid, (.spec.template.spec.containers[0].args | index("--log-level=debug") != null)]')
[ "$dsargs" = "[\"$uid\",true]" ] || fail "helm upgrade: the DaemonSet ($uid) has not --log-level=debug: $dsargs"
[ "$(hm list -o json | jq -r '.[0] | "\(.revision) \(.status)"')" = "2 deployed" ] || fail "helm upgrade: $(hm list 2>&1)"
k -n rssd-helm rollout status daemonset/rssd --timeout=120s >/dev/null || fail "helm upgrade: the DaemonSet did not roll out"
hdebug() { hready && hpods | jq -e 'all(.args | index("--log-level=debug") != null)' >/dev/null; }
wait_until 30 "rssd Ready on both nodes with --log-level=debug" hdebug
ok "helm upgrade --set logLevel=debug: revision 2, the same DaemonSet rolled out, both pods Ready with --log-level=debug"
hm uninstall rssd --wait --timeout 60s >"$tmp/helm.log" 2>&1 || { cat "$tmp/helm.log" >&2; fail "helm uninstall"; }
left=$(k get -f "$tmp/manifest.yaml" -o name --ignore-not-found 2>&1) || fail "after helm uninstall: $left"
[ -z "$left" ] || fail "helm uninstall left: $left"
[ -z "$(hm list -q)" ] || fail "helm uninstall: the release is still listed"
k get crd replicatedstatefulsets.clusterlabs.org >/dev/null || fail "helm uninstall deleted the CRD (crds/ is kept)"
unaggregated() { k get clusterrole view edit -o json | jq -e '[.items[].rules[] | select(.apiGroups == ["clusterlabs.org"])] == []' >/dev/null; }
wait_until 30 "view and edit to lose rssd's rules" unaggregated
k delete namespace rssd-helm --wait=false >/dev/null || fail "delete namespace rssd-helm"
ok "helm uninstall: every object of the release gone, view and edit without rssd's rules, the CRD kept; helm's steps in $(($(date +%s%3N) - t0)) ms"

# down leaves nothing: no process naming the world, no mount below it, no cgroup, no directory.
t0=$(date +%s%3N)
"$WORLD" down >/dev/null 2>&1 || fail "down"
ok "down in $(($(date +%s%3N) - t0)) ms"
[ ! -e "$RSS_WORLD_DIR" ] || fail "$RSS_WORLD_DIR still exists"
left=""
for f in $(grep -l -- "$RSS_WORLD_DIR" /proc/[0-9]*/cmdline 2>/dev/null || true); do
    p=${f#/proc/}
    p=${p%%/*}
    # (the grep itself, and this shell, are gone or ours)
    [ "$p" != $$ ] && kill -0 "$p" 2>/dev/null && left+=" $p:$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)"
done
[ -z "$left" ] || fail "processes left:$left"
grep -q -- "$RSS_WORLD_DIR" /proc/self/mountinfo && fail "mounts left: $(grep -- "$RSS_WORLD_DIR" /proc/self/mountinfo)"
cg=rss-world-$(printf '%s' "$RSS_WORLD_DIR" | cksum | cut -d' ' -f1)
compgen -G "/sys/fs/cgroup/*/$cg" >/dev/null && fail "cgroups left: $(ls -d /sys/fs/cgroup/*/"$cg")"
ok "nothing left"
echo "test_world_real: all passed"
