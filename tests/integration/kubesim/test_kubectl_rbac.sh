#!/usr/bin/env bash
# test_kubectl_rbac.sh -- real kubectl against kubesim's RBAC: deploy/ applied, then `kubectl auth can-i`
# (SelfSubjectAccessReview, protobuf) must give the expected answer for deploy/'s ServiceAccount (its
# token from `kubectl create token`), an edit-like namespaced Role user, a resourceNames user and
# the admin; `auth can-i --list` and a Forbidden error as kubectl prints it.
# usage: test_kubectl_rbac.sh KUBESIM REPO modern MINOR | test_kubectl_rbac.sh KUBESIM REPO debian
# Exits 77 (ctest: skipped) only when no modern kubectl exists on this machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
kubesim=$1
repo=$2
mode=$3
minor=${4:-32}

if [ "$mode" = debian ]; then
  KUBECTL=$("$here/../../lib/kubectl-debian.sh") || fail "cannot get Debian's kubectl 1.20"
else
  KUBECTL=$(command -v kubectl || true)
  cm=$("$KUBECTL" version --client -o json 2>/dev/null | jq -r '.clientVersion.minor' 2>/dev/null | tr -dc 0-9 || true)
  if [ -z "$KUBECTL" ] || [ -z "$cm" ] || [ "$cm" -lt 27 ]; then
    echo "no kubectl >= 1.27 on PATH (found '${cm:-none}'); skipping the modern kubectl test"
    exit 77
  fi
fi
ks_start "$kubesim" --minor "$minor"
kc() { "$KUBECTL" --cache-dir "$KS_TMP/cache" "$@"; }

kc apply -f "$repo/deploy/namespace.yaml" >/dev/null || fail "apply namespace.yaml"
kc apply -f "$repo/deploy/crd.yaml" >/dev/null || fail "apply crd.yaml"
kc wait --for condition=Established crd/replicatedstatefulsets.clusterlabs.org --timeout=30s >/dev/null ||
  fail "CRD not Established"
out=$(kc apply -f "$repo/deploy/rbac.yaml" 2>&1) || fail "apply rbac.yaml: $out"
contains "kubectl apply deploy/rbac.yaml" "$out" "clusterrole.rbac.authorization.k8s.io/rssd created"
out=$(kc apply -f "$repo/deploy/rbac.yaml" 2>&1) || fail "re-apply rbac.yaml: $out"
contains "re-apply of deploy/rbac.yaml" "$out" "clusterrole.rbac.authorization.k8s.io/rssd unchanged"
cat >"$KS_TMP/roles.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: edit, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [pods, services, configmaps, persistentvolumeclaims]
  verbs: [create, delete, deletecollection, get, list, patch, update, watch]
- apiGroups: [apps]
  resources: [statefulsets, deployments, statefulsets/scale, deployments/scale]
  verbs: [create, delete, deletecollection, get, list, patch, update, watch]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-edit, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: edit}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: one-config, namespace: team-b}
rules:
- {apiGroups: [""], resources: [configmaps], resourceNames: [cfg1], verbs: [get, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-one-config, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: one-config}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
YAML
out=$(kc apply -f "$KS_TMP/roles.yaml" 2>&1) || fail "apply roles: $out"
ok "edit-like Role and resourceNames Role applied"

printf 'alice-token,alice,uid-alice\nbob-token,bob,uid-bob\n' >"$KS_DIR/tokens"
if [ "$mode" = debian ]; then
  # kubectl 1.20 has no `create token`: the TokenRequest by hand.
  RSSD=$(curl -sS --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" -H 'Content-Type: application/json' \
    -X POST -d '{"spec":{}}' "https://127.0.0.1:$KS_PORT/api/v1/namespaces/rssd-system/serviceaccounts/rssd/token" |
    jq -r .status.token)
else
  RSSD=$(kc create token rssd -n rssd-system) || fail "kubectl create token"
  out=$(kc create token nobody -n rssd-system 2>&1) && fail "create token for a missing ServiceAccount succeeded"
  contains "kubectl create token for a missing ServiceAccount" "$out" 'serviceaccounts "nobody" not found'
fi
[ -n "$RSSD" ] && [ "$RSSD" != null ] || fail "no token for rssd-system/rssd"
ok "a token for deploy/'s ServiceAccount rssd-system/rssd"

cases=0
set -f # the arguments hold literal '*'
while read -r who want args; do
  [ -z "$who" ] || [ "${who:0:1}" = "#" ] && continue
  case $who in
  rssd) tok=$RSSD ;;
  alice) tok=alice-token ;;
  bob) tok=bob-token ;;
  admin) tok=$KS_TOKEN ;;
  esac
  # shellcheck disable=SC2086
  got=$(kc auth can-i $args --token "$tok" 2>/dev/null || true)
  got=${got%% *}
  [ "$got" = "$want" ] || fail "kubectl auth can-i $args as $who: expected $want, got '$got' ($(kc auth can-i $args --token "$tok" 2>&1 || true))"
  cases=$((cases + 1))
done <<'TABLE'
# who   answer  kubectl auth can-i arguments
rssd    yes     list replicatedstatefulsets.clusterlabs.org --all-namespaces
rssd    yes     watch rss -n default
rssd    yes     patch replicatedstatefulsets/db -n default
rssd    no      update replicatedstatefulsets/db -n default
rssd    no      delete replicatedstatefulsets/db -n default
rssd    yes     update replicatedstatefulsets/db --subresource=status -n default
rssd    yes     patch replicatedstatefulsets --subresource=status -n team-a
rssd    yes     watch pods --all-namespaces
rssd    yes     delete pods/db-0 -n default
rssd    no      deletecollection pods -n default
rssd    no      update pods/db-0 -n default
rssd    no      patch pods/db-0 --subresource=status -n default
rssd    yes     create statefulsets.apps -n team-b
rssd    yes     delete statefulsets.apps/db -n default
rssd    no      patch statefulsets.apps/db --subresource=scale -n default
rssd    yes     create services -n default
rssd    yes     create events -n team-a
rssd    no      list events -n team-a
rssd    yes     update leases.coordination.k8s.io/rssd-leader -n rssd-system
rssd    yes     create leases.coordination.k8s.io -n rssd-system
rssd    no      update leases.coordination.k8s.io/rssd-leader -n default
rssd    no      delete leases.coordination.k8s.io/rssd-leader -n rssd-system
rssd    no      get secrets -n default
rssd    no      create serviceaccounts/rssd --subresource=token -n rssd-system
rssd    yes     get /healthz
rssd    yes     get /version
rssd    no      get /metrics
alice   yes     create pods -n team-a
alice   yes     deletecollection pods -n team-a
alice   yes     get pods --subresource=log -n team-a
alice   no      get pods --subresource=exec -n team-a
alice   no      create pods -n team-b
alice   no      list pods --all-namespaces
alice   yes     update statefulsets.apps --subresource=scale -n team-a
alice   no      update statefulsets.apps --subresource=status -n team-a
alice   no      get secrets -n team-a
alice   no      * * -n team-a
bob     yes     get configmaps/cfg1 -n team-b
bob     no      get configmaps/cfg2 -n team-b
bob     no      list configmaps -n team-b
bob     yes     update configmaps/cfg1 -n team-b
bob     no      patch configmaps/cfg1 -n team-b
admin   yes     * *
admin   yes     deletecollection secrets --all-namespaces
TABLE
set +f
ok "$cases kubectl auth can-i answers as expected"

out=$(kc auth can-i --list -n rssd-system --token "$RSSD" 2>&1) || fail "auth can-i --list: $out"
contains "auth can-i --list shows the Lease rule in rssd-system" "$out" "leases.coordination.k8s.io"
contains "auth can-i --list shows the status rule" "$out" "replicatedstatefulsets.clusterlabs.org/status"
out=$(kc get secrets -n default --token "$RSSD" 2>&1) && fail "rssd listed secrets"
contains "kubectl prints the Forbidden error" "$out" \
  'Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:rssd-system:rssd" cannot list resource "secrets" in API group "" in the namespace "default"'
out=$(kc get pods -A --token "$RSSD" 2>&1) || fail "rssd cannot list pods: $out"
ok "kubectl get pods -A as rssd"

ks_stop
echo "all $checks checks passed"
