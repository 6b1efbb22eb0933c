#!/usr/bin/env bash
# test_probes.sh -- the world kubelet's node address, httpGet probes and projected ServiceAccount volume, on a busybox httpd pod.
#
# Each node has a loopback address of its own (127.A.B.N, A.B from the world) as InternalIP, and every pod on it (host
# network) that address as podIP. Readiness follows an httpGet probe (Ready goes False when the page
# answers 404 and True again when it is back); failing liveness restarts the container (restartCount
# and a new container id from the node's runtime). Every runtime container gets the ServiceAccount
# volume (token, ca.crt, namespace) and KUBERNETES_SERVICE_HOST/PORT, and the token is accepted by the
# API server. Timing-free: every wait has a bound, nothing asserts on elapsed time.
source "$(dirname "$0")/lib.sh"
world_up --nodes 2

# ---- node addresses
node_ip() { api GET "/api/v1/nodes/$1" | jq -r '.status.addresses[] | select(.type == "InternalIP") | .address'; }
ip1=$(node_ip node-1)
ip2=$(node_ip node-2)
[[ $ip1 =~ ^127\.[0-9]+\.[0-9]+\.1$ ]] && [ "$ip2" = "${ip1%.1}.2" ] || fail "node InternalIPs are '$ip1' and '$ip2'"
[ "$ip1" != 127.0.0.1 ] || fail "node-1 has the shared 127.0.0.1"
ok "nodes have InternalIPs $ip1 and $ip2 (loopback addresses of their own)"

port=$((20000 + RANDOM % 30000))
# The pod serves /w on its pod IP; /w/ready.html and /w/live.html are what the probes ask for.
api POST /api/v1/namespaces/default/pods "$(jq -n --arg image "$IMAGE" --argjson port "$port" '{
  apiVersion: "v1", kind: "Pod", metadata: {name: "web", namespace: "default", labels: {app: "web"}},
  spec: {nodeName: "node-2", terminationGracePeriodSeconds: 1,
    containers: [{name: "main", image: $image,
      command: ["/bin/sh", "-c", "mkdir -p /w && echo ok >/w/ready.html && echo ok >/w/live.html && exec httpd -f -p $(POD_IP):\($port) -h /w"],
      env: [{name: "POD_IP", valueFrom: {fieldRef: {fieldPath: "status.podIP"}}}],
      ports: [{name: "http", containerPort: $port}],
      readinessProbe: {httpGet: {path: "/ready.html", port: "http"}, periodSeconds: 1, failureThreshold: 2},
      livenessProbe: {httpGet: {path: "/live.html", port: $port}, periodSeconds: 1, failureThreshold: 3}}]}}')" >/dev/null ||
    fail "create pod web"
wait_until 60 "web Ready" pod_ready web
ip=$(pod_get web | jq -r .status.podIP)
[ "$ip" = "$ip2" ] || fail "web's podIP is '$ip', want node-2's $ip2"
curl -fsS --max-time 2 "http://$ip2:$port/ready.html" >/dev/null || fail "httpd does not answer on the pod IP"
! curl -fsS --max-time 2 "http://$ip1:$port/ready.html" >/dev/null 2>&1 || fail "httpd answers on node-1's address"
ok "web Ready through its readiness probe, serving on its pod IP $ip:$port only"

# ---- the projected ServiceAccount volume and the kubernetes service env
sa=/var/run/secrets/kubernetes.io/serviceaccount
[ "$(cri_exec web cat $sa/namespace)" = default ] || fail "no namespace file in $sa"
cri_exec web grep -q "BEGIN CERTIFICATE" $sa/ca.crt || fail "no ca.crt in $sa"
token=$(cri_exec web cat $sa/token) || fail "no token in $sa"
! cri_exec web sh -c "echo x >$sa/token" 2>/dev/null || fail "the token volume is writable"
envs=$(cri_exec web env)
host=$(sed -n 's/^KUBERNETES_SERVICE_HOST=//p' <<<"$envs")
kport=$(sed -n 's/^KUBERNETES_SERVICE_PORT=//p' <<<"$envs")
[ "$host:$kport" = "127.0.0.1:$(cat "$RSS_WORLD_DIR/kubesim/port")" ] || fail "KUBERNETES_SERVICE_HOST/PORT are '$host:$kport'"
who=$(curl -sS --max-time 5 --cacert "$RSS_WORLD_DIR/kubesim/ca.crt" -H "Authorization: Bearer $token" \
    -o /dev/null -w '%{http_code}' "https://$host:$kport/api/v1/namespaces/default/pods/web")
# The default ServiceAccount has no RBAC grants: authenticated (403), not anonymous garbage (401).
[ "$who" = 403 ] || [ "$who" = 200 ] || fail "the projected token is not accepted by the API server (HTTP $who)"
ok "ServiceAccount volume at $sa (token read-only, accepted: HTTP $who), KUBERNETES_SERVICE_HOST/PORT $host:$kport"

# ---- readiness follows the probe, without restarting anything
cid0=$(pod_get web | jq -r '.status.containerStatuses[0].containerID')
cri_exec web rm /w/ready.html || fail "rm ready.html"
not_ready() { ! pod_ready web; }
wait_until 30 "web not Ready once /ready.html answers 404" not_ready
[ "$(pod_get web | jq -r '.status.containerStatuses[0].containerID')" = "$cid0" ] || fail "readiness restarted the container"
cri_exec web sh -c "echo ok >/w/ready.html" || fail "restore ready.html"
wait_until 30 "web Ready again" pod_ready web
ok "readiness: not Ready on 404, Ready again when the page is back, same container $cid0"

# ---- failing liveness restarts the container
cri_exec web rm /w/live.html || fail "rm live.html"
restarted() {
    pod_get web | jq -e --arg c "$cid0" '.status.containerStatuses[0] | .restartCount >= 1 and .containerID != $c
        and .state.running != null' >/dev/null
}
wait_until 60 "web's container restarted by its liveness probe" restarted
wait_until 30 "web Ready after the restart" pod_ready web
grep -q "failed liveness probe" "$RSS_WORLD_DIR/nodes/node-2/kubelet.log" || fail "the kubelet did not log the liveness failure"
ok "liveness: the container was restarted ($(pod_get web | jq -c '.status.containerStatuses[0] | {restartCount, containerID}'))"

# ---- a partition cuts the node's containers too (their cgroups are below the node's, --cgroup-parent)
if command -v iptables >/dev/null && [ -d /sys/fs/cgroup/unified ]; then
    kport=$(cat "$RSS_WORLD_DIR/kubesim/port")
    reach() { cri_exec web nc -w 2 127.0.0.1 "$kport" </dev/null; }
    reach || fail "web cannot reach the API server before the partition"
    lfail() { grep -c "failed liveness probe" "$RSS_WORLD_DIR/nodes/node-2/kubelet.log" || true; }
    lf0=$(lfail)
    "$WORLD" partition node-2 >/dev/null 2>&1 || fail "partition node-2"
    ! reach 2>/dev/null || fail "web reaches the API server although node-2 is partitioned"
    ! curl -fsS --max-time 2 "http://$ip2:$port/live.html" >/dev/null 2>&1 ||
        fail "web answers the host (127.0.0.1) although node-2 is partitioned"
    # The node still talks to itself: its kubelet's probes (liveness every 1 s, 3 failures restart) pass.
    sleep 30
    [ "$(lfail)" = "$lf0" ] || fail "the kubelet's liveness probes failed during the partition ($lf0 -> $(lfail) failures logged)"
    "$WORLD" heal node-2 >/dev/null 2>&1 || fail "heal node-2"
    reach || fail "web cannot reach the API server after the heal"
    ok "partition: node-2's container is cut off with its node (its kubelet's probes still pass), and reaches the API server again after the heal"
else
    echo "skip: partition (no iptables or no cgroup v2 hierarchy at /sys/fs/cgroup/unified)"
fi
