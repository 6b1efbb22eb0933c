#!/usr/bin/env bash
# test_rbac.sh -- kubesim's authentication and RBAC authorizer: a decision table (subject, verb, group,
# resource, subresource, namespace, name -> allowed?) asked through SubjectAccessReview, then the same
# rules enforced on real requests (tokens-file users, ServiceAccount tokens from TokenRequest): 403
# Status bodies with the apiserver's message, list/watch/deletecollection, patch vs update,
# resourceNames with a metadata.name field selector, and deploy/rbac.yaml's ServiceAccount.
# usage: test_rbac.sh KUBESIM REPO
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$2
# shellcheck source=lib.sh
. "$here/lib.sh"
ks_start "$1"

# yaml2json FILE: every document of a YAML file, one JSON object per line.
yaml2json() {
  python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print(json.dumps(d))' "$1"
}

# create OBJECT-JSON: POSTs it to its collection as the admin.
create() {
  local o=$1 kind ns plural gv path
  kind=$(jq -r .kind <<<"$o")
  ns=$(jq -r '.metadata.namespace // ""' <<<"$o")
  gv=$(jq -r .apiVersion <<<"$o")
  plural=$(tr '[:upper:]' '[:lower:]' <<<"$kind")s
  [ "$gv" = v1 ] && path=/api/v1 || path=/apis/$gv
  [ -n "$ns" ] && path=$path/namespaces/$ns
  req POST "$path/$plural" "$o"
  [ "$code" = 201 ] || fail "create $kind $(jq -r .metadata.name <<<"$o"): $code $body"
}

for n in team-a team-b ops rssd-system; do
  create "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$n\"}}"
done
while read -r o; do create "$o"; done < <(yaml2json "$repo/deploy/rbac.yaml")
while read -r o; do create "$o"; done < <(yaml2json /dev/stdin <<'YAML'
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
kind: ClusterRole
metadata: {name: pods-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: devs-read, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pods-reader}
subjects: [{kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: one-config, namespace: team-b}
rules:
- {apiGroups: [""], resources: [configmaps], resourceNames: [cfg1], verbs: [get, list, watch, update, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-one-config, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: one-config}
subjects: [{kind: User, name: bob}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: status-reader}
rules: [{apiGroups: ["*"], resources: ["*/status"], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: auditors-status}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: status-reader}
subjects: [{kind: Group, name: auditors}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: apps-admin}
rules: [{apiGroups: [apps], resources: ["*"], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: builder-apps, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: apps-admin}
subjects: [{kind: ServiceAccount, name: builder}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-ghost, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ghost}
subjects: [{kind: User, name: carol}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: aggregate-secrets}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {rbac.example.com/aggregate: "true"}}]
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: secrets-get, labels: {rbac.example.com/aggregate: "true"}}
rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dave-aggregate}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: aggregate-secrets}
subjects: [{kind: User, name: dave}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics-reader}
rules: [{nonResourceURLs: [/metrics, "/debug/*"], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: erin-metrics}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-reader}
subjects: [{kind: User, name: erin}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: nodes-reader}
rules: [{apiGroups: [""], resources: [nodes, namespaces], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: frank-nodes, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nodes-reader}
subjects: [{kind: User, name: frank}]
YAML
)
ok "deploy/rbac.yaml and the test roles created"

# ---- the decision table, through SubjectAccessReview
# SUBJECT is sa:NS:NAME, user:NAME[:GROUP,...] or group:GROUP; "-" is an empty field.
decide() {
  local subj=$1 verb=$2 group=$3 res=$4 sub=$5 ns=$6 name=$7 user="" groups='[]'
  [ "$group" = - ] && group=""
  [ "$sub" = - ] && sub=""
  [ "$ns" = - ] && ns=""
  [ "$name" = - ] && name=""
  case $subj in
  sa:*)
    IFS=: read -r _ sns sname <<<"$subj"
    user=system:serviceaccount:$sns:$sname
    groups=$(jq -nc --arg n "$sns" '["system:serviceaccounts", "system:serviceaccounts:\($n)", "system:authenticated"]')
    ;;
  user:*)
    IFS=: read -r _ user gl <<<"$subj"
    groups=$(jq -nc --arg g "${gl:-}" '($g | split(",") | map(select(. != ""))) + ["system:authenticated"]')
    ;;
  group:*) groups=$(jq -nc --arg g "${subj#group:}" '[$g, "system:authenticated"]') ;;
  esac
  local attrs
  if [ "${res:0:1}" = / ]; then
    attrs=$(jq -nc --arg v "$verb" --arg p "$res" '{nonResourceAttributes: {verb: $v, path: $p}}')
  else
    attrs=$(jq -nc --arg v "$verb" --arg g "$group" --arg r "$res" --arg s "$sub" --arg ns "$ns" --arg n "$name" \
      '{resourceAttributes: {verb: $v, group: $g, resource: $r, subresource: $s, namespace: $ns, name: $n}}')
  fi
  req POST /apis/authorization.k8s.io/v1/subjectaccessreviews \
    "$(jq -nc --arg u "$user" --argjson g "$groups" --argjson a "$attrs" '{apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview", spec: ({user: $u, groups: $g} + $a)}')"
  [ "$code" = 201 ] || fail "SubjectAccessReview: $code $body"
  jb '"\(.status.allowed) \(.status.reason // "")"'
}

rows=0
while read -r subj verb group res sub ns name want; do
  [ -z "$subj" ] || [ "${subj:0:1}" = "#" ] && continue
  got=$(decide "$subj" "$verb" "$group" "$res" "$sub" "$ns" "$name")
  [ "${got%% *}" = "$want" ] || fail "decision: $subj $verb $group/$res/$sub ns=$ns name=$name: expected $want, got $got"
  rows=$((rows + 1))
done <<'TABLE'
# subject                     verb             group               resource                 sub       ns           name   allowed
# deploy/rbac.yaml's ServiceAccount: the ClusterRole everywhere, the Lease Role only in rssd-system
sa:rssd-system:rssd           get              clusterlabs.org     replicatedstatefulsets   -         default      db     true
sa:rssd-system:rssd           watch            clusterlabs.org     replicatedstatefulsets   -         -            -      true
sa:rssd-system:rssd           list             clusterlabs.org     replicatedstatefulsets   -         team-a       -      true
sa:rssd-system:rssd           patch            clusterlabs.org     replicatedstatefulsets   -         default      db     true
sa:rssd-system:rssd           update           clusterlabs.org     replicatedstatefulsets   -         default      db     false
sa:rssd-system:rssd           create           clusterlabs.org     replicatedstatefulsets   -         default      -      false
sa:rssd-system:rssd           update           clusterlabs.org     replicatedstatefulsets   status    default      db     true
sa:rssd-system:rssd           patch            clusterlabs.org     replicatedstatefulsets   status    default      db     true
sa:rssd-system:rssd           update           clusterlabs.org     replicatedstatefulsets   finalizers default     db     true
sa:rssd-system:rssd           delete           -                   pods                     -         default      db-0   true
sa:rssd-system:rssd           deletecollection -                   pods                     -         default      -      false
sa:rssd-system:rssd           update           -                   pods                     -         default      db-0   false
sa:rssd-system:rssd           patch            -                   pods                     status    default      db-0   false
sa:rssd-system:rssd           create           apps                statefulsets             -         default      -      true
sa:rssd-system:rssd           update           apps                statefulsets             scale     default      db     false
sa:rssd-system:rssd           create           -                   events                   -         team-b       -      true
sa:rssd-system:rssd           get              -                   events                   -         team-b       e1     false
sa:rssd-system:rssd           update           coordination.k8s.io leases                   -         rssd-system  rssd-leader true
sa:rssd-system:rssd           create           coordination.k8s.io leases                   -         rssd-system  -      true
sa:rssd-system:rssd           delete           coordination.k8s.io leases                   -         rssd-system  x      false
sa:rssd-system:rssd           get              coordination.k8s.io leases                   -         default      rssd-leader false
sa:rssd-system:rssd           list             coordination.k8s.io leases                   -         -            -      false
sa:rssd-system:rssd           get              -                   secrets                  -         default      s      false
sa:rssd-system:rssd           get              -                   /api                     -         -            -      true
sa:rssd-system:rssd           get              -                   /metrics                 -         -            -      false
sa:rssd-system:other          get              clusterlabs.org     replicatedstatefulsets   -         default      db     false
sa:default:rssd               get              clusterlabs.org     replicatedstatefulsets   -         default      db     false
# an edit-like namespaced Role bound to a user
user:alice                    create           -                   pods                     -         team-a       -      true
user:alice                    deletecollection -                   pods                     -         team-a       -      true
user:alice                    get              -                   pods                     log       team-a       p      true
user:alice                    get              -                   pods                     exec      team-a       p      false
user:alice                    create           -                   pods                     -         team-b       -      false
user:alice                    list             -                   pods                     -         -            -      false
user:alice                    update           apps                statefulsets             scale     team-a       web    true
user:alice                    update           apps                statefulsets             status    team-a       web    false
user:alice                    get              -                   secrets                  -         team-a       s      false
user:alice                    get              -                   namespaces               -         team-a       team-a false
# groups, ClusterRole through a RoleBinding
user:gina:devs                watch            -                   pods                     -         team-b       -      true
user:gina:devs                delete           -                   pods                     -         team-b       p      false
user:gina:devs                get              -                   pods                     -         team-a       p      false
group:devs                    list             -                   pods                     -         team-b       -      true
# resourceNames: only requests naming the object
user:bob                      get              -                   configmaps               -         team-b       cfg1   true
user:bob                      get              -                   configmaps               -         team-b       cfg2   false
user:bob                      list             -                   configmaps               -         team-b       -      false
user:bob                      list             -                   configmaps               -         team-b       cfg1   true
user:bob                      update           -                   configmaps               -         team-b       cfg1   true
user:bob                      patch            -                   configmaps               -         team-b       cfg1   false
user:bob                      create           -                   configmaps               -         team-b       -      false
# */status, any group
user:ivan:auditors            get              apps                statefulsets             status    team-a       web    true
user:ivan:auditors            get              -                   pods                     status    -            -      true
user:ivan:auditors            get              apps                statefulsets             -         team-a       web    false
user:ivan:auditors            update           -                   pods                     status    team-a       p      false
# a ServiceAccount subject without namespace takes the RoleBinding's
sa:team-b:builder             create           apps                deployments              -         team-b       -      true
sa:team-b:builder             patch            apps                statefulsets             scale     team-b       web    true
sa:team-b:builder             create           apps                deployments              -         team-a       -      false
sa:team-b:builder             create           -                   pods                     -         team-b       -      false
# a binding to a missing Role grants nothing
user:carol                    get              -                   pods                     -         team-a       p      false
# aggregation
user:dave                     get              -                   secrets                  -         ops          s      true
user:dave                     list             -                   secrets                  -         ops          -      false
# non-resource URLs
user:erin                     get              -                   /metrics                 -         -            -      true
user:erin                     get              -                   /debug/pprof             -         -            -      true
user:erin                     post             -                   /metrics                 -         -            -      false
user:zed                      get              -                   /metrics                 -         -            -      false
user:zed                      get              -                   /version                 -         -            -      true
user:zed                      create           authorization.k8s.io selfsubjectaccessreviews -        -            -      true
user:zed                      create           authorization.k8s.io subjectaccessreviews -            -            -      false
# a cluster-scoped resource only through a ClusterRoleBinding; a namespace object through its own namespace
user:frank                    get              -                   nodes                    -         -            n1     false
user:frank                    get              -                   namespaces               -         team-a       team-a true
user:frank                    list             -                   namespaces               -         -            -      false
# the privileged group
user:root:system:masters      deletecollection -                   secrets                  -         -            -      true
TABLE
ok "$rows authorizer decisions as expected"

# ---- the same rules on real requests
# Users from the tokens file (kube-apiserver's --token-auth-file format); a bare line stays an admin.
cat >"$KS_DIR/tokens" <<'TOKENS'
admin-too
alice-token,alice,uid-alice
gina-token,gina,uid-gina,"devs,qa"
bob-token,bob,uid-bob
TOKENS
ADMIN=$KS_TOKEN
# as TOKEN METHOD PATH [BODY [CONTENT-TYPE]]
as() {
  local KS_TOKEN=$1
  shift
  req "$@"
}
as admin-too GET /api/v1/secrets
expect_http 200 "a bare tokens-file line is still an admin"
as nope GET /api
expect_http 401 "an unknown token: 401"

as alice-token POST /api/v1/namespaces/team-a/configmaps '{"metadata":{"name":"cfg1"},"data":{"a":"1"}}'
expect_http 201 "alice creates in team-a (Role edit)"
as alice-token POST /api/v1/namespaces/team-b/configmaps '{"metadata":{"name":"cfg1"},"data":{"a":"1"}}'
expect_http 403 "alice cannot create in team-b"
same "403 message: name-less create" "$(jb .message)" \
  'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"'
same "403 Status reason and details" "$(jb '[.kind, .status, .reason, .code, .details.kind, (.details.name // "-")] | join(" ")')" \
  "Status Failure Forbidden 403 configmaps -"
as "$ADMIN" POST /api/v1/namespaces/team-b/configmaps '{"metadata":{"name":"cfg1"},"data":{"a":"1"}}'
expect_http 201 "the admin creates team-b/cfg1"
as "$ADMIN" POST /api/v1/namespaces/team-b/configmaps '{"metadata":{"name":"cfg2"},"data":{"a":"2"}}'
expect_http 201 "the admin creates team-b/cfg2"
as alice-token GET /api/v1/namespaces/team-b/configmaps/cfg1
expect_http 403 "alice cannot get in team-b"
same "403 message: named get" "$(jb .message)" \
  'configmaps "cfg1" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "team-b"'
same "403 details name" "$(jb .details.name)" cfg1
as alice-token GET /api/v1/configmaps
expect_http 403 "alice cannot list across namespaces"
same "403 message: cluster scope" "$(jb .message)" \
  'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" at the cluster scope'
as alice-token GET "/api/v1/namespaces/team-b/pods?watch=1&timeoutSeconds=1"
expect_http 403 "a watch is authorized too"
same "403 message: watch" "$(jb .message)" \
  'pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "team-b"'
as alice-token PUT /apis/apps/v1/namespaces/team-a/statefulsets/web/status '{"metadata":{"name":"web"}}'
expect_http 403 "alice cannot update statefulsets/status"
same "403 message: subresource" "$(jb .message)" \
  'statefulsets.apps "web" is forbidden: User "alice" cannot update resource "statefulsets/status" in API group "apps" in the namespace "team-a"'
same "403 details group" "$(jb .details.group)" apps
as alice-token GET /apis/example.com/v1/namespaces/team-a/widgets
expect_http 403 "an unknown resource is still 403 for who may not (authorization before routing)"
as "$ADMIN" GET /apis/example.com/v1/namespaces/team-a/widgets
expect_http 404 "and 404 for the admin"
as alice-token POST /api '{}'
expect_http 403 "a non-resource POST"
same "403 message: non-resource" "$(jb .message)" 'forbidden: User "alice" cannot post path "/api"'
as alice-token GET /apis
expect_http 200 "discovery for every authenticated user"
as alice-token DELETE /api/v1/namespaces/team-a/configmaps
expect_http 200 "alice deletecollection in team-a"

# groups from the tokens file; list vs watch vs delete
as gina-token GET /api/v1/namespaces/team-b/pods
expect_http 200 "gina (group devs) lists pods in team-b"
as gina-token GET "/api/v1/namespaces/team-b/pods?watch=true&timeoutSeconds=1"
expect_http 200 "gina watches pods in team-b"
as gina-token DELETE /api/v1/namespaces/team-b/pods
expect_http 403 "gina cannot deletecollection"
same "403 message: deletecollection" "$(jb .message)" \
  'pods is forbidden: User "gina" cannot deletecollection resource "pods" in API group "" in the namespace "team-b"'

# resourceNames: bob may get/list/watch/update cfg1 only, by name; patch is not update
as bob-token GET /api/v1/namespaces/team-b/configmaps/cfg1
expect_http 200 "bob gets cfg1"
as bob-token GET /api/v1/namespaces/team-b/configmaps/cfg2
expect_http 403 "bob cannot get cfg2"
as bob-token GET /api/v1/namespaces/team-b/configmaps
expect_http 403 "bob cannot list configmaps (resourceNames never match a name-less list)"
as bob-token GET "/api/v1/namespaces/team-b/configmaps?fieldSelector=metadata.name%3Dcfg1"
expect_http 200 "bob lists with fieldSelector metadata.name=cfg1"
same "only cfg1 listed" "$(jb '[.items[].metadata.name] | join(",")')" cfg1
as bob-token GET "/api/v1/namespaces/team-b/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dcfg1"
expect_http 200 "bob watches cfg1 by field selector"
rv=$(as bob-token GET /api/v1/namespaces/team-b/configmaps/cfg1 && jb .metadata.resourceVersion)
as bob-token PUT /api/v1/namespaces/team-b/configmaps/cfg1 \
  "{\"metadata\":{\"name\":\"cfg1\",\"resourceVersion\":\"$rv\"},\"data\":{\"a\":\"3\"}}"
expect_http 200 "bob updates cfg1"
as bob-token PATCH /api/v1/namespaces/team-b/configmaps/cfg1 '{"data":{"a":"4"}}' application/merge-patch+json
expect_http 403 "bob cannot patch cfg1 (patch is its own verb)"
as bob-token POST /api/v1/namespaces/team-b/configmaps '{"metadata":{"name":"cfg1b"}}'
expect_http 403 "bob cannot create (create never matches resourceNames)"

# ServiceAccount tokens: TokenRequest (JSON; kubectl sends protobuf, test_kubectl.sh covers it)
as "$ADMIN" POST /api/v1/namespaces/team-b/serviceaccounts '{"metadata":{"name":"builder"}}'
expect_http 201 "ServiceAccount team-b/builder"
as "$ADMIN" GET /api/v1/namespaces/team-b/serviceaccounts/default
expect_http 200 "every namespace has its default ServiceAccount"
as "$ADMIN" POST /api/v1/namespaces/team-b/serviceaccounts/builder/token \
  '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}'
expect_http 201 "TokenRequest"
same "TokenRequest kind" "$(jb .kind)" TokenRequest
SA_TOKEN=$(jb .status.token)
as "$ADMIN" POST /api/v1/namespaces/team-b/serviceaccounts/nobody/token '{"spec":{}}'
expect_http 404 "TokenRequest for a missing ServiceAccount"
as "$SA_TOKEN" POST /api/v1/namespaces/team-b/serviceaccounts/builder/token '{"spec":{}}'
expect_http 403 "a ServiceAccount cannot mint tokens without create serviceaccounts/token"
same "403 message: serviceaccounts/token" "$(jb .message)" \
  'serviceaccounts "builder" is forbidden: User "system:serviceaccount:team-b:builder" cannot create resource "serviceaccounts/token" in API group "" in the namespace "team-b"'
as "$SA_TOKEN" POST /apis/apps/v1/namespaces/team-b/statefulsets \
  '{"metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}'
expect_http 201 "the builder ServiceAccount creates a StatefulSet in team-b"
as "$SA_TOKEN" GET /apis/apps/v1/namespaces/team-b/statefulsets/web/scale
expect_http 200 "and reads its scale"
as "$SA_TOKEN" GET /api/v1/namespaces/team-b/pods
expect_http 403 "but cannot list pods"
same "403 message: ServiceAccount user" "$(jb .message)" \
  'pods is forbidden: User "system:serviceaccount:team-b:builder" cannot list resource "pods" in API group "" in the namespace "team-b"'
as "$SA_TOKEN" POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews \
  '{"spec":{"resourceAttributes":{"verb":"create","group":"apps","resource":"deployments","namespace":"team-b"}}}'
expect_http 201 "SelfSubjectAccessReview"
same "SelfSubjectAccessReview allowed with the RBAC reason" "$(jb '[.status.allowed, .status.reason] | join(" ")')" \
  'true RBAC: allowed by RoleBinding "builder-apps/team-b" of ClusterRole "apps-admin" to ServiceAccount "builder/team-b"'
as "$SA_TOKEN" POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews '{"spec":{"namespace":"team-b"}}'
expect_http 201 "SelfSubjectRulesReview"
same "rules of the builder in team-b" "$(jb '[.status.resourceRules[] | select(.apiGroups == ["apps"]) | .verbs[]] | join(",")')" "*"
as "$SA_TOKEN" POST /apis/authorization.k8s.io/v1/subjectaccessreviews \
  '{"spec":{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"team-a"}}}'
expect_http 403 "SubjectAccessReview needs its own permission"
# OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs update on the owner's finalizers
sts_owned() {
  jq -nc --argjson block "$2" '{metadata: {name: $ARGS.positional[0], ownerReferences: [{apiVersion: "v1", kind: "ConfigMap",
    name: "cfg1", uid: "u-cfg1", blockOwnerDeletion: $block}]}, spec: {selector: {matchLabels: {a: "b"}},
    template: {metadata: {labels: {a: "b"}}, spec: {containers: [{name: "c", image: "i"}]}}}}' --args "$1"
}
as "$SA_TOKEN" POST /apis/apps/v1/namespaces/team-b/statefulsets "$(sts_owned owned true)"
expect_http 403 "blockOwnerDeletion on an owner whose finalizers one cannot update"
same "403 message: OwnerReferencesPermissionEnforcement" "$(jb .message)" \
  'statefulsets.apps "owned" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can'"'"'t set finalizers on: , <nil>'
as "$SA_TOKEN" POST /apis/apps/v1/namespaces/team-b/statefulsets "$(sts_owned owned false)"
expect_http 201 "the same owner reference without blockOwnerDeletion"
as "$ADMIN" POST /apis/rbac.authorization.k8s.io/v1/namespaces/team-b/roles \
  '{"metadata":{"name":"cm-finalizers"},"rules":[{"apiGroups":[""],"resources":["configmaps/finalizers"],"verbs":["update"]}]}'
as "$ADMIN" POST /apis/rbac.authorization.k8s.io/v1/namespaces/team-b/rolebindings \
  '{"metadata":{"name":"builder-cm-finalizers"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-finalizers"},"subjects":[{"kind":"ServiceAccount","name":"builder","namespace":"team-b"}]}'
as "$SA_TOKEN" POST /apis/apps/v1/namespaces/team-b/statefulsets "$(sts_owned owned2 true)"
expect_http 201 "blockOwnerDeletion with update on configmaps/finalizers"
as "$ADMIN" DELETE /api/v1/namespaces/team-b/serviceaccounts/builder
expect_http 200 "delete the ServiceAccount"
as "$SA_TOKEN" GET /apis/apps/v1/namespaces/team-b/statefulsets
expect_http 401 "its tokens die with it"
as "$ADMIN" POST /api/v1/namespaces/team-b/serviceaccounts '{"metadata":{"name":"builder"}}'
as "$SA_TOKEN" GET /apis/apps/v1/namespaces/team-b/statefulsets
expect_http 401 "and a new ServiceAccount of the same name does not revive them (uid)"

# deploy/rbac.yaml's ServiceAccount, on real requests
as "$ADMIN" POST /api/v1/namespaces/rssd-system/serviceaccounts/rssd/token '{"spec":{}}'
RSSD=$(jb .status.token)
as "$RSSD" PUT /apis/coordination.k8s.io/v1/namespaces/rssd-system/leases/rssd-leader \
  '{"metadata":{"name":"rssd-leader"},"spec":{"holderIdentity":"a"}}'
expect_http 201 "rssd creates its Lease by PUT in rssd-system"
as "$RSSD" PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/rssd-leader \
  '{"metadata":{"name":"rssd-leader"},"spec":{"holderIdentity":"a"}}'
expect_http 403 "but not in default"
as "$RSSD" GET "/api/v1/pods?labelSelector=a%3Db&watch=1&timeoutSeconds=1"
expect_http 200 "rssd watches pods cluster-wide"
as "$RSSD" POST /api/v1/namespaces/default/events '{"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"R","message":"m"}'
expect_http 201 "rssd creates events"
as "$RSSD" PUT /api/v1/namespaces/default/events/e1 '{"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"R","message":"m"}'
expect_http 403 "rssd cannot update events"
as "$RSSD" GET /api/v1/namespaces/default/secrets
expect_http 403 "rssd cannot list secrets"

ks_stop
echo "all $checks checks passed"
