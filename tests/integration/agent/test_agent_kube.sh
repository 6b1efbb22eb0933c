#!/usr/bin/env bash
# test_agent_kube.sh -- one real rssd against kubesim and a real containerd, without the world.
#
# Usage: test_agent_kube.sh KUBESIM RSSD AGENT_POD CRI_TOOL SOURCE_DIR
# Step 10 runs it with --namespaces and checks kubesim's request counts by namespace.
# The test plays the leader by hand: it holds the Lease rssd-leader itself (so rssd never leads) and
# writes `desired` into the member records (ConfigMaps <ns>.<pod> in rssd-system, docs/protocol.md); the
# ground truth is the dummy app's /data/hooks.log and the observed report in the record. Synchronisation is
# on rssd's own log lines and the records, never on sleeps.
set -euo pipefail

kubesim=$1 rssd=$2 agent_pod=$3 cri_tool=$4 top=$5
export CRI_TOOL=$cri_tool
fixture=$top/tests/lib/containerd.sh

tmp=$(mktemp -d /tmp/rss-agent.XXXXXX)
chmod 755 "$tmp"
rssd_pid=
cleanup() {
	set +e
	[ -n "$rssd_pid" ] && kill -TERM "$rssd_pid" 2>/dev/null && wait "$rssd_pid" 2>/dev/null
	[ -n "$KS_PID" ] && kill -CONT "$KS_PID" 2>/dev/null && kill -TERM "$KS_PID" 2>/dev/null && wait "$KS_PID" 2>/dev/null
	bash "$fixture" down "$tmp/ctrd" >/dev/null 2>&1
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

checks=0
ok() {
	checks=$((checks + 1))
	echo "ok $checks - $*"
}
fail() {
	echo "FAIL: $*" >&2
	echo "--- rssd log (last 40 lines):" >&2
	tail -n 40 "$tmp"/rssd*.log >&2 || true
	echo "--- hooks.log:" >&2
	cat "$tmp/data/hooks.log" >&2 || true
	exit 1
}
# wait_for DESCRIPTION COMMAND...: polls COMMAND (quietly) for up to 60 s.
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 1 600); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	fail "timed out waiting for: $what"
}

# --- containerd and kubesim ---------------------------------------------------------------------
mkdir -p "$tmp/ctrd" "$tmp/data"
chmod 777 "$tmp/data"
bash "$fixture" up "$tmp/ctrd" >"$tmp/ctrd.log" 2>&1 || {
	cat "$tmp/ctrd.log" >&2
	exit 1
}
eval "$(bash "$fixture" env "$tmp/ctrd")"
# shellcheck source=../../lib/kubesim.sh
. "$top/tests/lib/kubesim.sh"
kubesim_start "$kubesim" "$tmp/sim" "$tmp/kubesim.log" || exit 1
# A fresh cache per simulator: kubectl caches /version and discovery.
k() { kubectl --cache-dir "$tmp/cache" --request-timeout=20s "$@"; }

k apply -f "$top/deploy/crd.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: rssd-system}\n' | k apply -f - >/dev/null
wait_for "the CRD is served" k get rss -n default

# The RSS: apps/dummy's hooks, with a short primary timeout for the hung-hook case.
cat >"$tmp/rss.yaml" <<'YAML'
apiVersion: clusterlabs.org/v1alpha1
kind: ReplicatedStatefulSet
metadata:
  name: dummy
  namespace: default
spec:
  replicas: 1
  reconcileInterval: 1h
  pod:
    commands:
      sequence: {command: ["/hooks/sequence"], timeout: 10s}
      seed: {command: ["/hooks/seed"], timeout: 30s}
      primary: {command: ["/hooks/primary"], timeout: 3s}
      status: {command: ["/hooks/status"], timeout: 10s}
      stop: {command: ["/hooks/stop"], timeout: 30s}
    containers:
    - name: dummy
      image: localhost/rss/busybox:1
      command: ["/bin/sleep", "infinity"]
YAML
k apply -f "$tmp/rss.yaml" >/dev/null

# The member pod (nobody schedules or runs it: the test creates its container below).
cat >"$tmp/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: rss-dummy-0
  namespace: default
  labels: {rss.clusterlabs.org/name: dummy}
spec:
  nodeName: node1
  containers:
  - name: dummy
    image: localhost/rss/busybox:1
YAML
k apply -f "$tmp/pod.yaml" >/dev/null
uid=$(k get pod rss-dummy-0 -o jsonpath='{.metadata.uid}')
[ -n "$uid" ] || fail "pod has no uid"
seq 1 42 >"$tmp/data/writes"
ids=$("$agent_pod" "$CRI_ENDPOINT" rss-dummy-0 default "$uid" dummy "$top/apps/dummy/hooks" "$tmp/data")
cid=${ids#* }

# desire_for POD RSS JSON: writes desired (for the pod's current uid) into the pod's record, as the leader
# does; creates the record when there is none.
desire_for() {
	local uid
	uid=$(k get pod "$1" -o jsonpath='{.metadata.uid}')
	local data
	data=$(jq -cn --arg d "$3" --arg u "$uid" '{data: {desired: $d, desiredFor: $u}}')
	if ! k get cm -n rssd-system "default.$1" >/dev/null 2>&1; then
		jq -n --arg p "$1" --arg r "$2" --argjson d "$data" '{apiVersion: "v1", kind: "ConfigMap",
			metadata: {name: ("default." + $p), namespace: "rssd-system", labels: {
				"rss.clusterlabs.org/namespace": "default", "rss.clusterlabs.org/rss": $r,
				"rss.clusterlabs.org/member": $p}}} + $d' | k create -f - >/dev/null
	else
		k patch cm -n rssd-system "default.$1" --type merge -p "$data" >/dev/null
	fi
}

# Rule 5: two pods rssd must never touch, each with a real container and a seed waiting for it (in its
# record, and forged on the pod too): a member of the RSS scheduled on another node, and a pod on this
# node whose RSS does not exist. Had rssd taken either for its member, its probe alone would write to
# that pod's hooks.log.
foreign() { # foreign POD NODE RSS DATA_DIR
	mkdir -p "$4"
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {rss.clusterlabs.org/name: $3}
  annotations:
    rss.clusterlabs.org/desired: '{"epoch":2,"action":"seed","id":"2-99","generation":1,"peers":[]}'
spec:
  nodeName: $2
  containers:
  - name: dummy
    image: localhost/rss/busybox:1
YAML
	"$agent_pod" "$CRI_ENDPOINT" "$1" default "$(k get pod "$1" -o jsonpath='{.metadata.uid}')" dummy \
		"$top/apps/dummy/hooks" "$4" >/dev/null || fail "container for $1"
	desire_for "$1" "$3" '{"epoch":2,"action":"seed","id":"2-99","generation":1,"peers":[]}'
}
foreign rss-dummy-1 node2 dummy "$tmp/data-node2"
foreign stranger-0 node1 nosuch "$tmp/data-stranger"

# The leader Lease, held by the test for an hour: rssd's own election never takes it.
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
k apply -f - >/dev/null <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: rssd-leader, namespace: rssd-system}
spec: {holderIdentity: the-test, leaseDurationSeconds: 3600, leaseTransitions: 2, acquireTime: "$now", renewTime: "$now"}
YAML

start_rssd() { # start_rssd LOGFILE [HEALTH_PORT [ARGS...]]
	local log=$1 hport=${2:-0}
	shift $(($# < 2 ? $# : 2))
	"$rssd" --node node1 --namespace rssd-system --cri-endpoint "$CRI_ENDPOINT" --health-port "$hport" \
		--health-address 127.0.0.1 --heartbeat-period 1s --log-level info "$@" >"$log" 2>&1 &
	rssd_pid=$!
}
stop_rssd() {
	kill -TERM "$rssd_pid"
	local rc=0
	wait "$rssd_pid" || rc=$?
	rssd_pid=
	[ "$rc" = 0 ] || fail "rssd exited $rc on SIGTERM"
}
# The report in rss-dummy-0's record, only when it is about the pod's current uid.
observed() {
	k get cm -n rssd-system default.rss-dummy-0 -o json 2>/dev/null |
		jq -r --arg u "$uid" 'if .data.observedFor == $u then .data.observed // "" else "" end'
}
obs() { observed | jq -r "$1"; }
obs_is() { [ "$(obs "$1")" = "$2" ]; }
desire() { desire_for rss-dummy-0 dummy "$1"; }
hooks() { cut -d' ' -f3 "$tmp/data/hooks.log" | tr '\n' ' '; }
count() { grep -c " $1 " "$tmp/data/hooks.log" || true; }

# --- 1. probe first ----------------------------------------------------------------------------
start_rssd "$tmp/rssd1.log"
wait_for "the first observed report" obs_is .sequence 42
[ "$(hooks)" = "status sequence " ] || fail "probe: expected 'status sequence', hooks ran: $(hooks)"
obs_is .role stopped || fail "probe: role $(obs .role)"
obs_is .containerId "$cid" || fail "probe: containerId $(obs .containerId), want $cid"
obs_is .leaseEpoch 2 || fail "probe: leaseEpoch $(obs .leaseEpoch)"
gen=$(obs .generation)
ok "probe first: status then sequence (42), role stopped, generation $gen, epoch 2"

# --- 2. seed executes once ---------------------------------------------------------------------
desire "{\"epoch\":2,\"action\":\"seed\",\"id\":\"2-1\",\"generation\":$gen,\"peers\":[]}"
wait_for "seed 2-1 reported" obs_is .lastAction.result ok
obs_is .lastAction.id 2-1 || fail "seed: lastAction $(observed)"
obs_is .role primary || fail "seed: role $(obs .role)"
[ "$(count seed)" = 1 ] || fail "seed ran $(count seed) times"
gen2=$(obs .generation)
[ "$gen2" = $((gen + 1)) ] || fail "seed: generation $gen2, want $((gen + 1))"
ok "seed 2-1 ran once, role primary, generation $gen -> $gen2"

# --- 3. stale epoch and stale generation ---------------------------------------------------------
desire "{\"epoch\":1,\"action\":\"stop\",\"id\":\"1-9\",\"generation\":$gen2}"
wait_for "the stale epoch decision" grep -q "1-9: epoch 1 is older" "$tmp/rssd1.log"
[ "$(count stop)" = 0 ] || fail "a stop of epoch 1 ran"
obs_is .lastAction.id 2-1 || fail "stale epoch changed lastAction: $(observed)"
ok "stop of a deposed epoch (1 < 2) is not executed"

desire "{\"epoch\":2,\"action\":\"stop\",\"id\":\"2-2\",\"generation\":$gen}"
wait_for "stale generation rejected" obs_is .lastAction.result rejected
obs_is .lastAction.id 2-2 || fail "reject: $(observed)"
[ "$(count stop)" = 0 ] || fail "a stop for an old generation ran"
ok "stop for generation $gen (member in $gen2) is rejected: $(obs .lastAction.message)"

# --- 4. no re-run across an rssd restart ---------------------------------------------------------
desire "{\"epoch\":2,\"action\":\"seed\",\"id\":\"2-1\",\"generation\":$gen,\"peers\":[]}"
wait_for "old seed ignored" grep -q "seed 2-1: already taken up" "$tmp/rssd1.log"
stop_rssd
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_rssd "$tmp/rssd2.log" "$port"
wait_for "re-probe after restart" grep -q "probed container" "$tmp/rssd2.log"
wait_for "restart decision" grep -q "seed 2-1: already taken up" "$tmp/rssd2.log"
[ "$(count seed)" = 1 ] || fail "seed ran $(count seed) times after a restart"
obs_is .role primary || fail "after restart: role $(obs .role)"
obs_is .generation "$gen2" || fail "after restart: generation $(obs .generation), want $gen2"
ok "after SIGTERM and a new rssd: seed 2-1 not re-run, generation $gen2 kept, role primary"
health() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$1"; }
ready_ok() { [ "$(health readyz)" = 200 ]; }
wait_for "readyz" ready_ok
[ "$(health healthz)" = 200 ] || fail "healthz: $(health healthz)"
[ "$(health nope)" = 404 ] || fail "unknown path: $(health nope)"
ok "/healthz and /readyz answer 200 on 127.0.0.1:$port"

# --- 5. a garbage sequence is an error, never 0 ----------------------------------------------------
printf 'abc\n' >"$tmp/data/garbage-sequence"
desire "{\"epoch\":2,\"action\":\"stop\",\"id\":\"2-3\",\"generation\":$gen2}"
wait_for "stop 2-3 reported" obs_is '.lastAction.id + " " + .lastAction.result' "2-3 ok"
obs_is .role stopped || fail "stop: role $(obs .role)"
obs_is .sequence null || fail "garbage sequence published as $(obs .sequence)"
[ "$(obs .sequenceError)" != null ] || fail "no sequenceError: $(observed)"
[ "$(count stop)" = 1 ] || fail "stop ran $(count stop) times"
ok "stop 2-3 ran once; garbage sequence -> sequenceError: $(obs .sequenceError)"
rm -f "$tmp/data/garbage-sequence"

# --- 6. a hung hook is killed at its timeout -------------------------------------------------------
gen3=$(obs .generation)
touch "$tmp/data/hang-primary"
desire "{\"epoch\":2,\"action\":\"primary\",\"id\":\"2-4\",\"generation\":$gen3,\"peers\":[\"rss-dummy-1.dummy-svc\"]}"
wait_for "primary 2-4 reported" obs_is .lastAction.id 2-4
wait_for "primary 2-4 final" obs_is '.lastAction.result != "pending"' true
obs_is .lastAction.result timeout || fail "hung primary: $(observed)"
grep -q "primary args=\[rss-dummy-1.dummy-svc\] rc=hang" "$tmp/data/hooks.log" || fail "no hang line with the peers"
sleeps=$("$cri_tool" --endpoint "$CRI_ENDPOINT" exec "$cid" ps -o args | grep -c 'sleep infinity' || true)
[ "$sleeps" = 1 ] || fail "the hung hook's sleep survived: $sleeps 'sleep infinity' processes"
ok "hung primary killed at its 3 s timeout, reported timeout: $(obs .lastAction.message)"
rm -f "$tmp/data/hang-primary"

# --- 7. rssd stops while a hook runs: the next instance reports it interrupted, never re-runs it ----
gen3=$(obs .generation)
touch "$tmp/data/hang-seed"
desire "{\"epoch\":2,\"action\":\"seed\",\"id\":\"2-6\",\"generation\":$gen3,\"peers\":[]}"
wait_for "the seed hangs" grep -q "seed args=\[\] rc=hang" "$tmp/data/hooks.log"
stop_rssd
grep -q "hook(s) still running" "$tmp/rssd2.log" || fail "rssd did not stop while the hook ran"
grep -q "running hook" "$tmp/rssd2.log" || fail "hook runs are not logged"
rm -f "$tmp/data/hang-seed"
start_rssd "$tmp/rssd3.log" 0 --fence-timeout 4s
wait_for "interrupted reported" obs_is '.lastAction.id + " " + .lastAction.result' "2-6 interrupted"
wait_for "decision after restart" grep -q "seed 2-6: already taken up" "$tmp/rssd3.log"
[ "$(count seed)" = 2 ] || fail "seed ran $(count seed) times, want 2 (one hung)"
[ "$(obs .generation)" = $((gen3 + 1)) ] || fail "interrupted start: generation $(obs .generation), want $((gen3 + 1))"
ok "seed 2-6 interrupted by an rssd stop: reported interrupted, not re-run, generation $gen3 -> $((gen3 + 1))"

# --- 8. self-fencing: the API server stops answering while the member runs, and no peer can vouch
#        (the RSS status lists no member nodes: there is no leader in this test) --------------------
gen4=$(obs .generation)
desire "{\"epoch\":2,\"action\":\"primary\",\"id\":\"2-5\",\"generation\":$gen4,\"peers\":[]}"
wait_for "primary 2-5 reported" obs_is '.lastAction.id + " " + .lastAction.result + " " + .role' "2-5 ok primary"
stops=$(count stop)
kill -STOP "$KS_PID"
wait_for "self-fencing" grep -q "self-fencing pod default/" "$tmp/rssd3.log"
stopped_once() { [ "$(count stop)" = $((stops + 1)) ]; }
wait_for "the fencing stop" stopped_once
kill -CONT "$KS_PID"
wait_for "fenced state published" obs_is .role stopped
# (the record write that says "stopped" may land before the next heartbeat renewal ends the cut-off)
wait_for "the end of self-fencing logged" grep -q "reachable again" "$tmp/rssd3.log"
[ "$(count primary)" = 2 ] || fail "primary ran $(count primary) times, want 2"
obs_is .generation "$((gen4 + 1))" || fail "fencing: generation $(obs .generation), want $((gen4 + 1)) (no crash bump)"
ok "API unreachable > fence timeout: member stopped once, stopped role published once the API is back"
stop_rssd

# --- 9. rule 5: after all of the above, the two foreign pods were never touched --------------------
for f in "$tmp/data-node2" "$tmp/data-stranger"; do
	[ ! -e "$f/hooks.log" ] || fail "a hook ran in a pod that is not this node's member: $(cat "$f/hooks.log")"
done
for p in rss-dummy-1 stranger-0; do
	[ -z "$(k get cm -n rssd-system "default.$p" -o jsonpath='{.data.observed}')" ] ||
		fail "rssd reported on $p, which is not its member"
done
ok "rule 5: no hook and no report for a member on another node, nor for a pod whose RSS does not exist"

# --- 10. --namespaces: a member in a namespace rssd does not manage is never seen, never asked about --
# Same node, real container, a seed waiting in its record: with --namespaces default, rssd must neither
# run a hook there nor send kubesim a single request in that namespace or across every namespace
# (kubesim's request counts by namespace, for rssd's User-Agent, are the ground truth).
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n' | k apply -f - >/dev/null
sed 's/namespace: default/namespace: other/' "$tmp/rss.yaml" | k apply -f - >/dev/null
sed 's/namespace: default/namespace: other/' "$tmp/pod.yaml" | k apply -f - >/dev/null
ouid=$(k get pod -n other rss-dummy-0 -o jsonpath='{.metadata.uid}')
mkdir -p "$tmp/data-other"
"$agent_pod" "$CRI_ENDPOINT" rss-dummy-0 other "$ouid" dummy "$top/apps/dummy/hooks" "$tmp/data-other" >/dev/null ||
	fail "container for other/rss-dummy-0"
jq -n --arg u "$ouid" '{apiVersion: "v1", kind: "ConfigMap",
	metadata: {name: "other.rss-dummy-0", namespace: "rssd-system", labels: {
		"rss.clusterlabs.org/namespace": "other", "rss.clusterlabs.org/rss": "dummy",
		"rss.clusterlabs.org/member": "rss-dummy-0"}},
	data: {desired: "{\"epoch\":2,\"action\":\"seed\",\"id\":\"2-77\",\"generation\":1,\"peers\":[]}",
		desiredFor: $u}}' | k create -f - >/dev/null
sim() { curl -sf --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" "$@"; }
sim -X POST "https://127.0.0.1:$KS_PORT/_sim/stats-reset" >/dev/null || fail "stats-reset"
start_rssd "$tmp/rssd4.log" 0 --namespaces default
wait_for "the default member probed" grep -q "probed container" "$tmp/rssd4.log"
grep -q "managing namespace default only" "$tmp/rssd4.log" || fail "no 'managing namespace default only' line"
# The probe and the seed would have started together had rssd seen the other member; give a second more.
sleep 1
stop_rssd
[ ! -e "$tmp/data-other/hooks.log" ] || fail "a hook ran in other/rss-dummy-0: $(cat "$tmp/data-other/hooks.log")"
[ -z "$(k get cm -n rssd-system other.rss-dummy-0 -o jsonpath='{.data.observed}')" ] ||
	fail "rssd reported on other/rss-dummy-0"
sim "https://127.0.0.1:$KS_PORT/_sim/stats" >"$tmp/stats.json" || fail "stats"
mine='.byNamespace[] | select(.client == "rssd/0.1 (node1)")'
bad=$(jq -c "[$mine | select(.namespace == \"other\" or (.namespace == \"\" and
	(.resource == \"pods\" or .resource == \"replicatedstatefulsets\" or .resource == \"statefulsets\")))]" \
	"$tmp/stats.json")
[ "$bad" = "[]" ] || fail "rssd --namespaces default asked outside it: $bad"
watched=$(jq "[$mine | select(.namespace == \"default\" and .verb == \"WATCH\" and
	(.resource == \"pods\" or .resource == \"replicatedstatefulsets\"))] | length" "$tmp/stats.json")
[ "$watched" = 2 ] || fail "expected WATCHes of pods and RSSs in default, got $watched kinds: $(cat "$tmp/stats.json")"
ok "--namespaces default: other/rss-dummy-0 (same node, seed waiting) untouched; no request in other or across namespaces"
echo "all $checks checks passed"
