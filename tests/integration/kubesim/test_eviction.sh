#!/usr/bin/env bash
# test_eviction.sh -- kubesim's PodDisruptionBudgets (policy/v1: discovery, generation, status, Table) and
# the pods/eviction subresource with curl, answer by answer as the real apiserver's eviction.go gives them:
# 404, terminal and budget-less pods deleted (DeleteOptions honoured), 429 while the budget is unobserved
# or used up, the decrement with disruptedPods, unready pods, several budgets, and RBAC on pods/eviction.
# usage: test_eviction.sh KUBESIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
ks_start "$1"

NS=/api/v1/namespaces/default
PDB=/apis/policy/v1/namespaces/default/poddisruptionbudgets

# ---- discovery
req GET /apis/policy/v1; expect_http 200 "/apis/policy/v1"
same "pdb short name" "$(jb '.resources[] | select(.name=="poddisruptionbudgets") | .shortNames[0]')" pdb
same "pdb namespaced" "$(jb '.resources[] | select(.name=="poddisruptionbudgets") | .namespaced')" true
same "poddisruptionbudgets/status listed" "$(jb '[.resources[].name] | index("poddisruptionbudgets/status") != null')" true
req GET /apis; expect_http 200 "/apis"
same "/apis has policy" "$(jb '[.groups[].name] | index("policy") != null')" true
req GET /api/v1; expect_http 200 "/api/v1"
same "pods/eviction is a policy/v1 Eviction" \
  "$(jb '.resources[] | select(.name=="pods/eviction") | "\(.group)/\(.version) \(.kind) \(.verbs|join(","))"')" \
  "policy/v1 Eviction create"

# ---- the budget object: generation on spec changes, status subresource, Table columns
req POST $PDB '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web"},"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":9}}'
expect_http 201 "create pdb"
same "generation 1" "$(jb .metadata.generation)" 1
same "create drops status" "$(jb '.status.disruptionsAllowed // "none"')" none
req PATCH $PDB/web '{"spec":{"minAvailable":1}}' application/merge-patch+json; expect_http 200 "patch pdb spec"
same "spec change bumps generation" "$(jb .metadata.generation)" 2
req PATCH $PDB/web/status '{"status":{"observedGeneration":2,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}' application/merge-patch+json
expect_http 200 "status subresource"
same "status write keeps generation" "$(jb .metadata.generation)" 2
tbl() { curl -sS --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "https://127.0.0.1:$KS_PORT$1"; }
t=$(tbl $PDB)
same "Table columns" "$(jq -r '[.columnDefinitions[].name] | join(",")' <<<"$t")" \
  "Name,Min Available,Max Unavailable,Allowed Disruptions,Age"
same "Table row" "$(jq -r '.rows[0].cells[0:4] | map(tostring) | join(",")' <<<"$t")" "web,1,N/A,1"

# ---- pods: a running ready one and an unready one of app=web, a Succeeded one, one without budget
pod() { # NAME LABEL READY PHASE
  req POST $NS/pods "{\"metadata\":{\"name\":\"$1\",\"labels\":{\"app\":\"$2\"}},\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"
  expect_http 201 "create pod $1"
  req PUT $NS/pods/$1/status "$(jq -c --arg r "$3" --arg p "$4" '.status.phase=$p | .status.conditions=[{type:"Ready",status:$r}]' <<<"$body")"
  expect_http 200 "pod $1 $4, Ready=$3"
}
evict() { # POD [DELETEOPTIONS]
  req POST $NS/pods/$1/eviction "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$1\"}${2:+,\"deleteOptions\":$2}}"
}
pod w1 web True Running
pod w2 web True Running
pod w3 web False Running
pod done web True Succeeded
pod free other True Running

evict nosuch; expect_http 404 "evict a missing pod"
same "404 message" "$(jb .message)" 'pods "nosuch" not found'
req POST $NS/pods/w1/eviction '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"w2"}}'
expect_http 400 "name in URL and body differ"
same "400 message" "$(jb .message)" "name in URL does not match name in Eviction object"
req GET $NS/pods/w1/eviction; expect_http 405 "GET on eviction"
req POST "$NS/pods/free/eviction?dryRun=All" '{"metadata":{"name":"free"},"deleteOptions":{"dryRun":["Nope"]}}'
expect_http 500 "dry-run options that differ"
same "dry-run mismatch message" "$(jb .message)" "Non-matching dry-run options in request and content: [All] and [Nope]"
req POST "$NS/pods/free/eviction?dryRun=All" '{"metadata":{"name":"free"}}'
expect_http 201 "apiVersion and kind default to policy/v1 Eviction (dry run)"
req POST $NS/pods/free/eviction '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"free"}}'
expect_http 400 "a body of another kind"

# a terminal pod goes without looking at the budget
evict done; expect_http 201 "evict a Succeeded pod"
same "201 Status Success" "$(jb '"\(.kind) \(.status) \(.code)"')" "Status Success 201"
req GET $NS/pods/done; expect_http 404 "the Succeeded pod is gone"
# no budget: deleted with the DeleteOptions (grace period, preconditions)
evict free '{"preconditions":{"uid":"not-its-uid"}}'; expect_http 409 "eviction with a wrong uid precondition"
contains "precondition message" "$(jb .message)" "Precondition failed: UID in precondition: not-its-uid"
evict free '{"gracePeriodSeconds":7}'; expect_http 201 "evict a pod without a budget"
req GET $NS/pods/free; expect_http 200 "graceful: the pod stays Terminating"
same "the eviction's grace period" "$(jb .metadata.deletionGracePeriodSeconds)" 7
same "DisruptionTarget condition" \
  "$(jb '.status.conditions[] | select(.type=="DisruptionTarget") | "\(.status) \(.reason) \(.message)"')" \
  "True EvictionByEvictionAPI Eviction API: evicting"

# the budget is not observed yet: 429 "still being processed"
req PATCH $PDB/web '{"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}},"metadata":{"labels":{"x":"y"}}}' application/merge-patch+json
req PATCH $PDB/web '{"spec":{"maxUnavailable":1,"minAvailable":null}}' application/merge-patch+json
same "generation 3" "$(jb .metadata.generation)" 3
evict w1; expect_http 429 "eviction while the budget is unobserved"
same "429 reason" "$(jb .reason)" TooManyRequests
same "429 message" "$(jb .message)" "Cannot evict pod as it would violate the pod's disruption budget."
same "429 cause" "$(jb '.details.causes[0] | "\(.reason): \(.message)"')" \
  "DisruptionBudget: The disruption budget web is still being processed by the server."
req GET $NS/pods/w1; same "the pod stays" "$(jb '.metadata.deletionTimestamp // "none"')" none

# observed, one disruption allowed: the decrement, disruptedPods, then the pod's deletion
req PATCH $PDB/web/status '{"status":{"observedGeneration":3,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":2,"expectedPods":3,"conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods","message":"","observedGeneration":3,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' application/merge-patch+json
expect_http 200 "controller's status"
req POST "$NS/pods/w1/eviction?dryRun=All" '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"w1"}}'
expect_http 201 "dry-run eviction"
req GET $PDB/web; same "dry run keeps the budget" "$(jb .status.disruptionsAllowed)" 1
req GET $NS/pods/w1; same "dry run keeps the pod" "$(jb '.metadata.deletionTimestamp // "none"')" none
evict w1; expect_http 201 "eviction within the budget"
req GET $PDB/web
same "disruptionsAllowed decremented" "$(jb .status.disruptionsAllowed)" 0
[ "$(jb '.status.disruptedPods.w1 // empty')" != "" ] || fail "w1 not in disruptedPods: $body"
ok "w1 in disruptedPods"
same "condition InsufficientPods" "$(jb '.status.conditions[0] | "\(.status) \(.reason)"')" "False InsufficientPods"
req GET $NS/pods/w1; [ "$(jb '.metadata.deletionTimestamp // empty')" != "" ] || fail "w1 not deleted: $body"
ok "w1 Terminating"

# used up: 429 with the DisruptionBudget cause
evict w2; expect_http 429 "eviction beyond the budget"
same "429 cause when used up" "$(jb '.details.causes[0] | "\(.reason): \(.message)"')" \
  "DisruptionBudget: The disruption budget web needs 2 healthy pods and has 2 currently"
req GET $NS/pods/w2; same "w2 stays" "$(jb '.metadata.deletionTimestamp // "none"')" none
# an unready pod, IfHealthyBudget: refused while the budget is not met...
req PATCH $PDB/web/status '{"status":{"currentHealthy":1}}' application/merge-patch+json
evict w3; expect_http 429 "unready pod, budget not met: refused"
# ...and deleted without a decrement once it is
req PATCH $PDB/web/status '{"status":{"currentHealthy":2}}' application/merge-patch+json
evict w3; expect_http 201 "unready pod, budget met: evicted"
req GET $PDB/web; same "no decrement for an unready pod" "$(jb .status.disruptionsAllowed)" 0
req GET $NS/pods/w3; [ "$(jb '.metadata.deletionTimestamp // empty')" != "" ] || fail "w3 not deleted: $body"
ok "w3 Terminating"

# negative budget: 403
req PATCH $PDB/web/status '{"status":{"disruptionsAllowed":-1}}' application/merge-patch+json
evict w2; expect_http 403 "negative disruptionsAllowed"
same "403 message" "$(jb .message)" 'poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative'

# two budgets: the REST returns a Failure Status (code 500) as its object
req POST $PDB '{"metadata":{"name":"web2"},"spec":{"maxUnavailable":"50%","selector":{"matchExpressions":[{"key":"app","operator":"In","values":["web"]}]}}}'
expect_http 201 "second pdb"
evict w2; expect_http 201 "two budgets: answered as the create's object"
same "two budgets: Failure 500" "$(jb '"\(.status) \(.code)"')" "Failure 500"
same "two budgets: message" "$(jb .message)" \
  "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
req GET $NS/pods/w2; same "w2 still stays" "$(jb '.metadata.deletionTimestamp // "none"')" none
t=$(tbl $PDB/web2)
same "percent and N/A cells" "$(jq -r '.rows[0].cells[1:4] | map(tostring) | join(",")' <<<"$t")" "N/A,50%,0"

# RBAC: eviction is create on pods/eviction
printf 'evtoken,evicter,u1\nnotoken,nobody,u2\n' >"$KS_DIR/tokens"
req POST /apis/rbac.authorization.k8s.io/v1/clusterroles '{"metadata":{"name":"evicter"},"rules":[{"apiGroups":[""],"resources":["pods/eviction"],"verbs":["create"]}]}'
expect_http 201 "role evicter"
req POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings '{"metadata":{"name":"evicter"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"evicter"},"subjects":[{"kind":"User","name":"evicter"}]}'
expect_http 201 "binding evicter"
KS_TOKEN_ADMIN=$KS_TOKEN
KS_TOKEN=notoken
evict w2; expect_http 403 "eviction without create on pods/eviction"
same "403 names pods/eviction" "$(jb .message)" \
  'pods "w2" is forbidden: User "nobody" cannot create resource "pods/eviction" in API group "" in the namespace "default"'
KS_TOKEN=evtoken
evict nosuch; expect_http 404 "create on pods/eviction is enough to ask"
KS_TOKEN=$KS_TOKEN_ADMIN
ks_stop

echo "test_eviction: all $checks checks passed"
