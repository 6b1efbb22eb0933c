#!/usr/bin/env bash
# test_kubectl.sh -- real kubectl against kubesim: apply a CRD then a custom resource, get (with the
# short name and printer columns), get -w, describe with events, label/annotate, patch, apply of a
# built-in kind (strategic merge), delete that waits for finalizers, graceful pod deletion, `get pdb`, an
# eviction refused with 429, and `kubectl drain` evicting within the PodDisruptionBudgets and no further.
# usage: test_kubectl.sh KUBESIM modern MINOR   (kubectl 1.27-1.33 on PATH; the dispatcher picks by MINOR)
#        test_kubectl.sh KUBESIM debian         (Debian's kubectl 1.20, see kubectl-debian.sh)
# Exits 77 (ctest: skipped) only when no modern kubectl exists on this machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
kubesim=$1
mode=$2
minor=${3:-32}

if [ "$mode" = debian ]; then
  KUBECTL=$("$here/../../lib/kubectl-debian.sh") || fail "cannot get Debian's kubectl 1.20"
  want_client=20
else
  KUBECTL=$(command -v kubectl || true)
  cm=$("$KUBECTL" version --client -o json 2>/dev/null | jq -r '.clientVersion.minor' 2>/dev/null | tr -dc 0-9 || true)
  if [ -z "$KUBECTL" ] || [ -z "$cm" ] || [ "$cm" -lt 27 ]; then
    echo "no kubectl >= 1.27 on PATH (found '${cm:-none}'); skipping the modern kubectl test"
    exit 77
  fi
  want_client=$minor
fi
ks_start "$kubesim" --minor "$minor" --pod-logs "$KS_TMP/nodes"
kc() { "$KUBECTL" --cache-dir "$KS_TMP/cache" "$@"; }

out=$(kc version -o json 2>/dev/null) || fail "kubectl version: $(kc version 2>&1)"
same "server version" "$(jq -r .serverVersion.gitVersion <<<"$out")" "v1.$minor.0"
same "client kubectl 1.$want_client" "$(jq -r .clientVersion.minor <<<"$out" | tr -dc 0-9)" "$want_client"

cat >"$KS_TMP/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.test.kubesim.io
spec:
  group: test.kubesim.io
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 0}
          status:
            type: object
            properties:
              phase: {type: string}
EOF
cr() {
  cat <<EOF
apiVersion: test.kubesim.io/v1
kind: Gadget
metadata: {name: g1, labels: {app: demo}}
spec: {size: $1}
EOF
}

out=$(kc apply -f "$KS_TMP/crd.yaml" 2>&1) || fail "apply CRD: $out"
contains "apply CRD" "$out" "customresourcedefinition.apiextensions.k8s.io/gadgets.test.kubesim.io created"
out=$(kc wait --for=condition=Established crd/gadgets.test.kubesim.io --timeout=30s 2>&1) || fail "wait: $out"
contains "CRD Established" "$out" "condition met"
cr 2 >"$KS_TMP/cr.yaml"
out=$(kc apply -f "$KS_TMP/cr.yaml" 2>&1) || fail "apply CR: $out"
contains "apply CR" "$out" "gadget.test.kubesim.io/g1 created"
out=$(kc get gadget g1 2>&1) || fail "get: $out"
contains "get by kind shows printer columns" "$out" "SIZE"
out=$(kc get gd 2>&1) || fail "get gd: $out"
contains "get by short name" "$(echo "$out" | tail -1)" "g1"
[ "$(echo "$out" | awk 'NR==2 {print $2}')" = 2 ] || fail "SIZE column: $out"
ok "SIZE column value"
out=$(kc get all 2>&1) || fail "get all: $out"
contains "category all includes the CR" "$out" "gadget.test.kubesim.io/g1"
cr 3 >"$KS_TMP/cr.yaml"
out=$(kc apply -f "$KS_TMP/cr.yaml" 2>&1) || fail "re-apply: $out"
contains "re-apply changed CR" "$out" "configured"
same "re-apply changed spec" "$(kc get gd g1 -o jsonpath='{.spec.size}')" 3
same "generation bumped" "$(kc get gd g1 -o jsonpath='{.metadata.generation}')" 2
out=$(kc apply -f "$KS_TMP/cr.yaml" 2>&1) || fail "re-apply unchanged: $out"
contains "unchanged apply" "$out" "unchanged"
printf 'apiVersion: test.kubesim.io/v1\nkind: Gadget\nmetadata: {name: bad}\nspec: {size: -1}\n' >"$KS_TMP/bad.yaml"
if out=$(kc apply -f "$KS_TMP/bad.yaml" 2>&1); then fail "invalid CR accepted: $out"; fi
contains "schema violation reported" "$out" "spec.size in body should be greater than or equal to 0"

# get -w: prints the current row, then a row per change
kc get gd -w >"$KS_TMP/watch.out" 2>&1 &
wpid=$!
BG_PIDS+=("$wpid")
wait_until 60 "get -w prints the object" grep -q "^g1 " "$KS_TMP/watch.out" && ok "get -w prints the object"
kc patch gd g1 --type=merge -p '{"spec":{"size":7}}' >/dev/null
wait_until 60 "get -w prints the change" grep -Eq "^g1 +7 " "$KS_TMP/watch.out" && ok "get -w prints the change"
kill "$wpid"
wait "$wpid" 2>/dev/null || true

out=$(kc label gd g1 color=red 2>&1) || fail "label: $out"
contains "label" "$out" "labeled"
same "label stored" "$(kc get gd g1 -o jsonpath='{.metadata.labels.color}')" red
out=$(kc annotate gd g1 note=hello 2>&1) || fail "annotate: $out"
contains "annotate" "$out" "g1 annotate"
same "annotation stored" "$(kc get gd g1 -o jsonpath='{.metadata.annotations.note}')" hello
same "label selector via kubectl" "$(kc get gd -l color=red -o name)" "gadget.test.kubesim.io/g1"
out=$(kc patch gd g1 --type=json -p '[{"op":"replace","path":"/spec/size","value":5}]' 2>&1) || fail "json patch: $out"
same "json patch" "$(kc get gd g1 -o jsonpath='{.spec.size}')" 5
if [ "$mode" = modern ]; then
  out=$(kc patch gd g1 --subresource=status --type=merge -p '{"status":{"phase":"Ready"}}' 2>&1) || fail "status patch: $out"
  same "status subresource patch" "$(kc get gd g1 -o jsonpath='{.status.phase}')" Ready
fi

# describe shows core/v1 events of the object
uid=$(kc get gd g1 -o jsonpath='{.metadata.uid}')
req POST /api/v1/namespaces/default/events "{\"metadata\":{\"name\":\"g1.ev1\"},\"involvedObject\":{\"apiVersion\":\"test.kubesim.io/v1\",\"kind\":\"Gadget\",\"name\":\"g1\",\"namespace\":\"default\",\"uid\":\"$uid\"},\"reason\":\"Tested\",\"message\":\"kubesim event for g1\",\"type\":\"Normal\",\"count\":1,\"source\":{\"component\":\"test\"},\"firstTimestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"lastTimestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}"
expect_http 201 "post an event"
out=$(kc describe gd g1 2>&1) || fail "describe: $out"
contains "describe shows the spec" "$out" "Size:"
contains "describe shows the event" "$out" "kubesim event for g1"
out=$(kc get events 2>&1) || fail "get events: $out"
contains "get events" "$out" "Tested"

# a built-in kind through client-side apply (strategic merge patch)
sts() {
  cat <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s1}
spec:
  serviceName: s1
  replicas: 2
  selector: {matchLabels: {app: s1}}
  template:
    metadata: {labels: {app: s1}}
    spec:
      containers:
      - name: c
        image: $1
        env: [{name: A, value: "1"}]
EOF
}
sts busybox:1 >"$KS_TMP/sts.yaml"
out=$(kc apply -f "$KS_TMP/sts.yaml" 2>&1) || fail "apply sts: $out"
contains "apply statefulset" "$out" "created"
sts busybox:2 >"$KS_TMP/sts.yaml"
out=$(kc apply -f "$KS_TMP/sts.yaml" 2>&1) || fail "re-apply sts: $out"
contains "re-apply statefulset" "$out" "configured"
same "SMP changed the image" "$(kc get sts s1 -o jsonpath='{.spec.template.spec.containers[0].image}')" busybox:2
same "SMP kept env" "$(kc get sts s1 -o jsonpath='{.spec.template.spec.containers[0].env[0].name}')" A
out=$(kc get sts 2>&1) || fail "get sts: $out"
contains "get sts" "$out" "s1"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1}\ndata: {a: b}\n' >"$KS_TMP/cm.yaml"
out=$(kc create -f "$KS_TMP/cm.yaml" 2>&1) || fail "create -f: $out"
same "kubectl create -f" "$(kc get cm cm1 -o jsonpath='{.data.a}')" b

# delete waits while a finalizer holds the object
kc patch gd g1 --type=merge -p '{"metadata":{"finalizers":["test.kubesim.io/hold"]}}' >/dev/null
kc delete gd g1 >"$KS_TMP/delete.out" 2>&1 &
dpid=$!
BG_PIDS+=("$dpid")
has_deletion_ts() { [ -n "$(kc get gd g1 -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
wait_until 60 "delete sets deletionTimestamp" has_deletion_ts && ok "delete sets deletionTimestamp"
kill -0 "$dpid" 2>/dev/null || fail "kubectl delete returned while a finalizer remained: $(cat "$KS_TMP/delete.out")"
ok "kubectl delete still waiting"
kc patch gd g1 --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
wait "$dpid" || fail "kubectl delete failed: $(cat "$KS_TMP/delete.out")"
contains "delete reports deletion" "$(cat "$KS_TMP/delete.out")" 'deleted'
if out=$(kc get gd g1 2>&1); then fail "g1 still exists: $out"; fi
contains "object gone" "$out" "NotFound"

# graceful pod deletion: the pod stays Terminating until the (simulated) kubelet removes it
cat >"$KS_TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  nodeName: node-1
  containers: [{name: c, image: busybox}]
EOF
kc apply -f "$KS_TMP/pod.yaml" >/dev/null || fail "apply pod"
out=$(kc delete pod p1 --wait=false 2>&1) || fail "delete pod: $out"
same "pod grace period" "$(kc get pod p1 -o jsonpath='{.metadata.deletionGracePeriodSeconds}')" 30
out=$(kc get pod p1 2>&1) || fail "get pod: $out"
contains "pod shows Terminating" "$out" "Terminating"
puid=$(kc get pod p1 -o jsonpath='{.metadata.uid}')
req DELETE /api/v1/namespaces/default/pods/p1 "{\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"$puid\"}}"
expect_http 200 "kubelet removes the pod"
if out=$(kc get pod p1 2>&1); then fail "pod still exists: $out"; fi
ok "pod gone"

# kubectl logs: pods/log from the CRI files a world kubelet keeps (--pod-logs DIR/<node>/kubelet/logs/
# <ns>_<pod>_<uid>/<container>/<restart>.log), partial lines joined, with the real server's parameters
# and error messages.
cat >"$KS_TMP/pod2.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  nodeName: node-1
  containers: [{name: a, image: busybox}, {name: b, image: busybox}]
EOF
kc apply -f "$KS_TMP/pod2.yaml" >/dev/null || fail "apply pod p2"
p2uid=$(kc get pod p2 -o jsonpath='{.metadata.uid}')
ld="$KS_TMP/nodes/node-1/kubelet/logs/default_p2_$p2uid/a"
mkdir -p "$ld"
out=$(kc logs p2 -c a 2>&1) && fail "kubectl logs before the container wrote: $out"
contains "logs: no file yet" "$out" 'container "a" in pod "p2" is waiting to start'
printf '%s\n' '2026-12-07T10:00:00.000000001Z stderr F old one' >"$ld/0.log"
old=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%S.000000000Z)
new=$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)
printf '%s\n' "$old stdout F first" "$new stderr P sec" "$new stderr P ond" "$new stderr F  line" \
  "$new stdout F third" >"$ld/1.log"
same "logs: lines, partial pieces joined" "$(kc logs p2 -c a)" "$(printf 'first\nsecond line\nthird')"
same "logs --tail 1" "$(kc logs p2 -c a --tail 1)" "third"
same "logs --since 1h" "$(kc logs p2 -c a --since 1h)" "$(printf 'second line\nthird')"
same "logs --timestamps" "$(kc logs p2 -c a --timestamps --tail 1)" "$new third"
same "logs --previous" "$(kc logs p2 -c a --previous)" "old one"
same "logs --limit-bytes 3" "$(kc logs p2 -c a --limit-bytes 3)" "fir"
# (kubectl names the first container itself; the server's answer to a request without one:)
req GET /api/v1/namespaces/default/pods/p2/log
expect_http 400 "logs without a container of a 2-container pod"
contains "logs: a container must be named" "$body" "a container name must be specified for pod p2, choose one of: [a b]"
out=$(kc logs p2 -c nope 2>&1) && fail "kubectl logs -c nope: $out"
contains "logs: unknown container" "$out" "container nope is not valid for pod p2"
out=$(kc logs p2 -c b --previous 2>&1) && fail "kubectl logs -c b --previous: $out"
contains "logs: no previous instance" "$out" 'previous terminated container "b" in pod "p2" not found'

# PodDisruptionBudgets and kubectl drain: the budgets' status is written here as the disruption controller
# would (no controller runs in this test); drain finds pods/eviction in discovery and evicts.
req POST /api/v1/nodes '{"metadata":{"name":"node-d","labels":{"kubernetes.io/hostname":"node-d"}}}'
expect_http 201 "node to drain"
req POST /apis/apps/v1/namespaces/default/daemonsets '{"metadata":{"name":"dd"},"spec":{"selector":{"matchLabels":{"app":"dd"}},"template":{"metadata":{"labels":{"app":"dd"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}'
expect_http 201 "daemonset"
dsuid=$(jb .metadata.uid)
dpod() { # NAME APP OWNER_KIND OWNER_UID: a Running, Ready pod on node-d with a controller
  req POST /api/v1/namespaces/default/pods "{\"metadata\":{\"name\":\"$1\",\"labels\":{\"app\":\"$2\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"$3\",\"name\":\"$2\",\"uid\":\"$4\",\"controller\":true}]},\"spec\":{\"nodeName\":\"node-d\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"
  expect_http 201 "pod $1 on node-d"
  req PUT "/api/v1/namespaces/default/pods/$1/status" "$(jq -c '.status.phase="Running" | .status.conditions=[{type:"Ready",status:"True"}]' <<<"$body")"
  expect_http 200 "pod $1 Running and Ready"
}
dpod da-0 da StatefulSet 11111111-1111-1111-1111-111111111111
dpod db-0 db StatefulSet 22222222-2222-2222-2222-222222222222
dpod dd-node-d dd DaemonSet "$dsuid"
printf '%s\n' 'apiVersion: policy/v1' 'kind: PodDisruptionBudget' 'metadata: {name: da}' \
  'spec: {maxUnavailable: 1, selector: {matchLabels: {app: da}}}' '---' 'apiVersion: policy/v1' \
  'kind: PodDisruptionBudget' 'metadata: {name: db}' 'spec: {minAvailable: "100%", selector: {matchLabels: {app: db}}}' \
  >"$KS_TMP/pdb.yaml"
out=$(kc apply -f "$KS_TMP/pdb.yaml" 2>&1) || fail "apply pdbs: $out"
contains "apply pdb" "$out" "poddisruptionbudget.policy/da created"
pdb_status() { # NAME ALLOWED HEALTHY DESIRED
  req PATCH "/apis/policy/v1/namespaces/default/poddisruptionbudgets/$1/status" \
    "{\"status\":{\"observedGeneration\":1,\"disruptionsAllowed\":$2,\"currentHealthy\":$3,\"desiredHealthy\":$4,\"expectedPods\":1}}" \
    application/merge-patch+json
  expect_http 200 "pdb $1 status: $2 allowed"
}
pdb_status da 1 1 0
pdb_status db 0 1 1
out=$(kc get pdb 2>&1) || fail "get pdb: $out"
same "get pdb header" "$(sed -n 1p <<<"$out" | tr -s ' ')" "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"
same "get pdb da row" "$(echo "$out" | awk '$1=="da" {print $2, $3, $4}')" "N/A 1 1"
same "get pdb db row" "$(echo "$out" | awk '$1=="db" {print $2, $3, $4}')" "100% N/A 0"
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db-0","namespace":"default"}}' >"$KS_TMP/evict.json"
out=$(kc create --raw /api/v1/namespaces/default/pods/db-0/eviction -f "$KS_TMP/evict.json" 2>&1) &&
  fail "eviction beyond the budget accepted: $out"
contains "eviction refused: 429" "$out" "TooManyRequests"
contains "eviction refused: the budget's words" "$out" "Cannot evict pod as it would violate the pod's disruption budget."
# drain: da-0 goes (its budget allows one), db-0 is refused until the timeout, the DaemonSet pod stays
if out=$(kc drain node-d --ignore-daemonsets --timeout=12s 2>&1); then fail "drain succeeded past a budget: $out"; fi
contains "drain cordons" "$out" "cordoned"
contains "drain ignores the DaemonSet pod" "$out" "default/dd-node-d"
contains "drain evicts da-0" "$out" "pod/da-0 evicted"
contains "drain retries db-0 on the budget" "$out" "Cannot evict pod as it would violate the pod's disruption budget"
same "node cordoned" "$(kc get node node-d -o jsonpath='{.spec.unschedulable}')" true
if o2=$(kc get pod da-0 2>&1); then fail "da-0 still exists after drain: $o2"; fi
ok "da-0 evicted"
same "da's budget used" "$(kc get pdb da -o jsonpath='{.status.disruptionsAllowed}')" 0
[ -n "$(kc get pdb da -o jsonpath='{.status.disruptedPods.da-0}')" ] || fail "da-0 not in da's disruptedPods"
ok "da-0 in disruptedPods"
same "db-0 kept" "$(kc get pod db-0 -o jsonpath='{.metadata.name}')" db-0
pdb_status db 1 1 0
out=$(kc drain node-d --ignore-daemonsets --timeout=30s 2>&1) || fail "drain once the budget allows: $out"
contains "drain evicts db-0" "$out" "pod/db-0 evicted"
# (kubectl 1.20 ends with "node/node-d evicted", later ones with "drained")
grep -Eq '^node/node-d (drained|evicted)$' <<<"$out" || fail "drain did not finish: $out"
ok "node drained"
same "the DaemonSet pod stays" "$(kc get pod dd-node-d -o jsonpath='{.metadata.name}')" dd-node-d
ks_stop

echo "test_kubectl ($mode, server 1.$minor): all $checks checks passed"
