#!/usr/bin/env bash
# deploy-kubesim.sh -- applies deploy/ and the RSS manifests with real kubectl to kubesim and checks nothing is pruned.
#
# Usage: deploy-kubesim.sh KUBESIM_BINARY SOURCE_DIR
# tests/integration/apps/rss-operator-example.yaml is rss-operator's example/cluster.yaml exactly as its README
# shows it (../shared/seeds/rss-operator-README.md); it must be accepted unchanged.
set -euo pipefail

NAME=deploy-kubesim
# shellcheck source=../../lib/kubectl_checks.sh
. "$(dirname "$0")/../../lib/kubectl_checks.sh" "$@"
# same_json DESCRIPTION FILE_JSON SERVER_JSON: equal after key sorting; on failure show the diff.
same_json() {
	if [ "$(jq -S . <<<"$2")" = "$(jq -S . <<<"$3")" ]; then ok "$1"; else
		bad "$1"
		diff <(jq -S . <<<"$2") <(jq -S . <<<"$3") | sed 's/^/     /' || true
	fi
}
# has_json DESCRIPTION FILE_JSON SERVER_JSON: every leaf of FILE_JSON is in SERVER_JSON (which may add defaults).
has_json() {
	local missing
	missing=$(jq -n --argjson a "$2" --argjson b "$3" -c \
		'[$a | paths(type != "object" and type != "array")] | map(select(. as $p | ($a | getpath($p)) != ($b | getpath($p))))')
	if [ "$missing" = "[]" ]; then ok "$1"; else bad "$1: differing leaves $missing"; fi
}
run_quiet() { "$@" >"$tmp/out" 2>&1; }

echo "# deploy/"
run "apply deploy/ (namespace first)" k apply -f "$top/deploy/namespace.yaml" -f "$top/deploy/crd.yaml" \
	-f "$top/deploy/rbac.yaml" -f "$top/deploy/flowcontrol.yaml" -f "$top/deploy/daemonset.yaml"
run "the CRD is Established" k wait --for=condition=Established --timeout=30s \
	crd/replicatedstatefulsets.clusterlabs.org
crd_file=$(k create --dry-run=client -o json -f "$top/deploy/crd.yaml")
crd_srv=$(k get crd replicatedstatefulsets.clusterlabs.org -o json)
same_json "CRD schema stored as written" "$(jq '.spec.versions[0].schema' <<<"$crd_file")" \
	"$(jq '.spec.versions[0].schema' <<<"$crd_srv")"
same_json "CRD printer columns stored as written" "$(jq '.spec.versions[0].additionalPrinterColumns' <<<"$crd_file")" \
	"$(jq '.spec.versions[0].additionalPrinterColumns' <<<"$crd_srv")"
run "ServiceAccount rssd exists" k -n rssd-system get serviceaccount rssd
expect "the FlowSchema sends rssd's Leases to its own priority level" "rssd-leases rssd-system/rssd" \
	"$(k get flowschema rssd-leases -o jsonpath='{.spec.priorityLevelConfiguration.name} {.spec.rules[0].subjects[0].serviceAccount.namespace}/{.spec.rules[0].subjects[0].serviceAccount.name}')"
run "PriorityLevelConfiguration rssd-leases exists" k get prioritylevelconfiguration rssd-leases
run "ClusterRole rssd exists" k get clusterrole rssd
run "ClusterRoleBinding rssd exists" k get clusterrolebinding rssd
run "Role rssd-leases exists" k -n rssd-system get role rssd-leases
run "RoleBinding rssd-leases exists" k -n rssd-system get rolebinding rssd-leases
run "Role rssd-records exists" k -n rssd-system get role rssd-records
run "RoleBinding rssd-records exists" k -n rssd-system get rolebinding rssd-records
ds_file=$(k create --dry-run=client -o json -f "$top/deploy/daemonset.yaml")
ds_srv=$(k -n rssd-system get daemonset rssd -o json)
has_json "DaemonSet stored as written" "$(jq .spec <<<"$ds_file")" "$(jq .spec <<<"$ds_srv")"
has_json "ClusterRole rules stored as written" "$(k create --dry-run=client -o json -f "$top/deploy/rbac.yaml" |
	jq -s '.[] | if .kind == "List" then .items[] else . end | select(.kind == "ClusterRole") | .rules')" "$(k get clusterrole rssd -o json | jq .rules)"

# check_rss NAME FILE: apply FILE, read it back, and compare its spec with the file's.
check_rss() {
	local name=$1 file=$2 want got
	run "apply $(basename "$file")" k apply -f "$file"
	want=$(k create --dry-run=client -o json -f "$file")
	got=$(k get rss "$name" -o json 2>/dev/null || echo '{}')
	same_json "rss/$name: no field of the spec was pruned or changed" "$(jq .spec <<<"$want")" "$(jq .spec <<<"$got")"
	RSS_JSON=$got
}

echo "# rss-operator's example/cluster.yaml, unchanged"
check_rss example "$top/tests/integration/apps/rss-operator-example.yaml"
expect "example: status hook timeout kept" 60s "$(jq -r .spec.pod.commands.status.timeout <<<"$RSS_JSON")"
expect "example: reconcileInterval kept as a string" '"30s"' "$(jq -c .spec.reconcileInterval <<<"$RSS_JSON")"
expect "example: antiAffinity kept" true "$(jq -r .spec.pod.antiAffinity <<<"$RSS_JSON")"
expect "example: container image kept" quay.io/beekhof/dummy:latest "$(jq -r '.spec.pod.containers[0].image' <<<"$RSS_JSON")"

echo "# apps/dummy/rss.yaml"
check_rss dummy "$top/apps/dummy/rss.yaml"
expect "dummy: container command kept" '["/bin/sh","-c","trap '"'"'exit 0'"'"' TERM; sleep 2147483647 & wait"]' "$(jq -c '.spec.pod.containers[0].command' <<<"$RSS_JSON")"
expect "dummy: volumeMount kept" /data "$(jq -r '.spec.pod.containers[0].volumeMounts[0].mountPath' <<<"$RSS_JSON")"
expect "dummy: claim template metadata kept" data "$(jq -r '.spec.pod.volumeClaimTemplates[0].metadata.name' <<<"$RSS_JSON")"
expect "dummy: claim template storage kept" 64Mi "$(jq -r '.spec.pod.volumeClaimTemplates[0].spec.resources.requests.storage' <<<"$RSS_JSON")"
dummy_spec=$(jq .spec <<<"$RSS_JSON")

echo "# apps/galera/rss.yaml"
check_rss galera "$top/apps/galera/rss.yaml"
expect "galera: the env (a fieldRef, plain values) kept" POD_NAME:metadata.name,GALERA_NETWORK:loopback "$(jq -r '[.spec.pod.containers[0].env[] | select(.name == "POD_NAME" or .name == "GALERA_NETWORK") | .name + ":" + (.value // .valueFrom.fieldRef.fieldPath)] | join(",")' <<<"$RSS_JSON")"

echo "# rss-operator fields beyond the example, and rssd's recovery extension"
cat >"$tmp/variant.yaml" <<'EOF'
apiVersion: clusterlabs.org/v1alpha1
kind: ReplicatedStatefulSet
metadata:
  name: variant
spec:
  replicas: 5
  primaries: 2
  reconcileInterval: 45
  paused: false
  chaosLevel: 0
  recovery:
    minimumMembers: 2
    maxFailures: 5
  servicePorts: [{name: galera, port: 3306, targetPort: galera}]
  nodeSelector: {disktype: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}]
  serviceAccountName: galera
  service: {name: variant-svc, sessionAffinity: None}
  pod:
    antiAffinity: false
    securityContext: {runAsUser: 1000, fsGroup: 1000}
    commands:
      sequence: {command: ["/sequence.sh", "--quiet"], timeout: 15}
      primary: {command: ["/start.sh"], timeout: 2m}
      secondary: {command: ["/start.sh", "--read-only"]}
      status: {command: ["/check.sh"]}
      stop: {command: ["/stop.sh"]}
    containers:
    - name: db
      image: example/db:1
      env: [{name: MODE, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
      ports: [{containerPort: 3306, name: galera}]
      resources: {limits: {memory: 1Gi}}
    - name: sidecar
      image: example/sidecar:1
    volumes: [{name: cfg, configMap: {name: db-cfg}}]
EOF
check_rss variant "$tmp/variant.yaml"
expect "variant: a bare-number reconcileInterval stays a number" 45 "$(jq -c .spec.reconcileInterval <<<"$RSS_JSON")"
expect "variant: a misspelt hook name is kept for rssd to report" '["/x"]' \
	"$(k create --dry-run=client -o json -f "$top/apps/dummy/rss.yaml" |
		jq '.metadata.name = "typo" | .spec.pod.commands.secondry = {command: ["/x"]}' |
		k apply -f - >/dev/null 2>&1 && k get rss typo -o json | jq -c .spec.pod.commands.secondry.command)"

echo "# the schema rejects bad manifests"
bad_manifest() { # bad_manifest NAME DESCRIPTION JQ_FILTER: the dummy manifest, renamed and broken
	k create --dry-run=client -o json -f "$top/apps/dummy/rss.yaml" |
		jq --arg n "$1" ".metadata.name = \$n | del(.metadata.annotations) | $3" >"$tmp/$1.json"
	if run_quiet k apply -f "$tmp/$1.json"; then bad "$2 was accepted"; else ok "$2 is rejected: $(tail -n 1 "$tmp/out")"; fi
	if run_quiet k get rss "$1"; then bad "$2 was stored"; fi
}
bad_manifest bad-no-sequence "a manifest without the sequence hook" 'del(.spec.pod.commands.sequence)'
bad_manifest bad-empty-command "a hook with an empty command" '.spec.pod.commands.stop.command = []'
bad_manifest bad-min-members "recovery.minimumMembers 0" '.spec.recovery = {minimumMembers: 0}'
bad_manifest bad-max-failures "recovery.maxFailures 0" '.spec.recovery = {maxFailures: 0}'
bad_manifest bad-replicas "replicas as a word" '.spec.replicas = "three"'
bad_manifest bad-no-containers "no containers" '.spec.pod.containers = []'

echo "# status subresource and printer columns"
status='{"status":{"phase":"Running","reason":"Recovered","message":"3 of 3 members run","observedGeneration":1,
 "replicas":3,"readyReplicas":3,"primaries":3,
 "conditions":[{"type":"Available","status":"True","reason":"MembersRunning","message":"ok",
   "lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}],
 "members":{"ready":["rss-dummy-0","rss-dummy-1","rss-dummy-2"],"unready":[],
   "primary":["rss-dummy-0","rss-dummy-1","rss-dummy-2"],"secondary":[],"failed":[]},
 "memberStatus":[{"name":"rss-dummy-0","node":"node-1","ordinal":0,"podUID":"u-0","generation":2,
   "sequence":"18446744073709551615","role":"primary","lastHook":"seed","lastResult":"ok","lastExitCode":0,
   "lastActionId":"4-1","failures":0}],
 "recovery":{"seedOrdinal":0,"seedSequence":"18446744073709551615"},"lastActionSeq":1,"epoch":4,
 "primary":"rss-dummy-0,rss-dummy-1,rss-dummy-2"}}'
run "patch the status subresource" k patch rss dummy --subresource=status --type=merge -p "$status"
got=$(k get rss dummy -o json)
same_json "status stored without pruning" "$(jq .status <<<"$status")" "$(jq .status <<<"$got")"
same_json "a status write leaves the spec alone" "$dummy_spec" "$(jq .spec <<<"$got")"
table=$(k get rss 2>&1) || true
printf '     %s\n' "${table//$'\n'/$'\n'     }"
expect "kubectl get rss shows the printer columns" "NAME PHASE PRIMARIES READY PRIMARY WAITING LAST-RECOVERY AGE" \
	"$(head -n 1 <<<"$table" | tr -s ' ')"
row=$(grep '^dummy ' <<<"$table" | tr -s ' ' | cut -d' ' -f1-5)
expect "the dummy row shows phase, primaries, ready and the primaries' names" "dummy Running 3 3 rss-dummy-0,rss-dummy-1,rss-dummy-2" "$row"
for n in example dummy variant; do
	if grep -q "^$n " <<<"$table"; then ok "kubectl get rss lists $n"; else bad "kubectl get rss does not list $n"; fi
done
wide=$(k get rss dummy -o wide 2>&1 | sed -n 1p | tr -s ' ')
expect "-o wide adds the message column" "NAME PHASE PRIMARIES READY PRIMARY WAITING LAST-RECOVERY AGE MESSAGE" "$wide"
run "the long resource name works too" k get replicatedstatefulsets.clusterlabs.org dummy

echo "# priority: the DaemonSet's pods as the DaemonSet controller makes them"
expect "the DaemonSet asks for system-node-critical" system-node-critical \
	"$(jq -r .spec.template.spec.priorityClassName <<<"$ds_file")"
# pod_of CLASS NAME: a pod in rssd-system from the DaemonSet's template, with priorityClassName CLASS.
pod_of() {
	jq --arg c "$1" --arg n "$2" '{apiVersion: "v1", kind: "Pod", metadata: {name: $n, namespace: "rssd-system",
		labels: .spec.template.metadata.labels}, spec: (.spec.template.spec + {priorityClassName: $c, nodeName: "n1"})}' <<<"$ds_file"
}
run "an agent pod with system-node-critical is admitted outside kube-system (Kubernetes 1.17+)" \
	k create -f - <<<"$(pod_of system-node-critical rssd-prio)"
expect "admission resolved the class into spec.priority and preemptionPolicy" "2000001000 PreemptLowerPriority" \
	"$(k -n rssd-system get pod rssd-prio -o jsonpath='{.spec.priority} {.spec.preemptionPolicy}')"
if k create -f - <<<"$(pod_of no-such-class rssd-prio2)" >"$tmp/out" 2>&1; then
	bad "a pod naming a PriorityClass that does not exist was admitted"
elif grep -q 'is forbidden: no PriorityClass with name no-such-class was found' "$tmp/out"; then
	ok "a pod naming a PriorityClass that does not exist is refused as kube-apiserver does"
else bad "an unknown PriorityClass refused with another message: $(cat "$tmp/out")"; fi
k -n rssd-system delete pod rssd-prio --grace-period=0 --wait=false >/dev/null 2>&1 || true

checks_done
