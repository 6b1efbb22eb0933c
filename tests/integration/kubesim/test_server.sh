#!/usr/bin/env bash
# test_server.sh -- kubesim's API semantics over HTTPS with curl: auth, resourceVersion, 409/404/422,
# patches, generation, selectors, paging, watch (bookmarks, 410, selector transitions), finalizers,
# graceful pod deletion, garbage collection, CRD validation/pruning/status/Table, and /_sim controls.
# usage: test_server.sh KUBESIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
ks_start "$1"

NS=/api/v1/namespaces/default

# ---- auth, health, discovery
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$KS_DIR/ca.crt" "https://127.0.0.1:$KS_PORT/api/v1/pods")
same "no token: 401" "$code" 401
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer nope" \
  "https://127.0.0.1:$KS_PORT/api/v1/pods")
same "wrong token: 401" "$code" 401
echo "rotated-token-1" >"$KS_DIR/tokens"
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer rotated-token-1" \
  "https://127.0.0.1:$KS_PORT/api/v1/pods")
same "token from DIR/tokens accepted" "$code" 200
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$KS_DIR/ca.crt" "https://127.0.0.1:$KS_PORT/version")
same "/version needs no token" "$code" 200
grep -q "certificate-authority: $KS_DIR/ca.crt" "$KS_DIR/kubeconfig" || \
  grep -q "certificate-authority: $(realpath "$KS_DIR")/ca.crt" "$KS_DIR/kubeconfig" || fail "kubeconfig lacks the CA"
ok "kubeconfig names the CA"
req GET /healthz; expect_http 200 "/healthz"
req GET /api; expect_http 200 "/api"
same "/api lists v1" "$(jb '.versions[0]')" v1
req GET /apis; expect_http 200 "/apis"
same "/apis has coordination.k8s.io" "$(jb '[.groups[].name] | index("coordination.k8s.io") != null')" true
req GET /apis/apps/v1; expect_http 200 "/apis/apps/v1"
same "statefulsets short name sts" "$(jb '.resources[] | select(.name=="statefulsets") | .shortNames[0]')" sts
same "statefulsets/status listed" "$(jb '[.resources[].name] | index("statefulsets/status") != null')" true
req GET /openapi/v3; expect_http 200 "/openapi/v3"
req GET /api/v1/nosuch; expect_http 404 "unknown resource: 404"

# ---- create, resourceVersion, conflicts
req POST $NS/configmaps '{"metadata":{"name":"cm1","labels":{"app":"a","tier":"web"}},"data":{"k":"1"}}'
expect_http 201 "create configmap"
rv1=$(jb .metadata.resourceVersion)
uid1=$(jb .metadata.uid)
[ -n "$uid1" ] && [ "$uid1" != null ] || fail "no uid"
ok "uid assigned"
req POST $NS/configmaps '{"metadata":{"name":"cm1"}}'
expect_http 409 "create existing: 409"
same "reason AlreadyExists" "$(jb .reason)" AlreadyExists
req PUT $NS/configmaps/cm1 "{\"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"$rv1\",\"labels\":{\"app\":\"a\",\"tier\":\"web\"}},\"data\":{\"k\":\"2\"}}"
expect_http 200 "update with current resourceVersion"
rv2=$(jb .metadata.resourceVersion)
[ "$rv2" -gt "$rv1" ] || fail "resourceVersion not increasing: $rv1 -> $rv2"
ok "resourceVersion increases ($rv1 -> $rv2)"
req PUT $NS/configmaps/cm1 "{\"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"$rv1\"},\"data\":{\"k\":\"3\"}}"
expect_http 409 "update with stale resourceVersion: 409"
same "reason Conflict" "$(jb .reason)" Conflict
req PUT $NS/configmaps/cm1 "{\"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"$rv2\",\"labels\":{\"app\":\"a\",\"tier\":\"web\"}},\"data\":{\"k\":\"2\"}}"
expect_http 200 "no-op update"
same "no-op update keeps resourceVersion" "$(jb .metadata.resourceVersion)" "$rv2"
req GET $NS/configmaps/nosuch; expect_http 404 "get missing: 404"
same "NotFound message" "$(jb .message)" 'configmaps "nosuch" not found'
req PUT $NS/configmaps/nosuch '{"metadata":{"name":"nosuch"}}'; expect_http 404 "PUT to a missing configmap: 404"
req POST /api/v1/namespaces/nons/configmaps '{"metadata":{"name":"x"}}'; expect_http 404 "create in a missing namespace: 404"
req POST $NS/configmaps '{"metadata":{"name":"Bad_Name"}}'; expect_http 422 "invalid name: 422"
# Annotations, keys and values together, at most 256 KiB (the real apiserver's limit): on create and update.
ann_body() { # NAME VALUE_BYTES -> a file holding a ConfigMap with one annotation "a" of that many bytes
  printf '{"metadata":{"name":"%s","annotations":{"a":"%s"}}}' "$1" "$(head -c "$2" /dev/zero | tr '\0' v)" >"$KS_TMP/ann.json"
  echo "@$KS_TMP/ann.json"
}
req POST $NS/configmaps "$(ann_body ann 262143)"; expect_http 201 "annotations of 256 KiB: created"
req PUT $NS/configmaps/ann "$(ann_body ann 262144)"; expect_http 422 "annotations over 256 KiB: update refused"
contains "annotations 422 message" "$(jb .message)" "metadata.annotations: Too long: may not be more than 262144 bytes"
req POST $NS/configmaps "$(ann_body ann2 262144)"; expect_http 422 "annotations over 256 KiB: create refused"
req POST $NS/configmaps '{"metadata":{"generateName":"gen-"}}'; expect_http 201 "generateName"
contains "generated name" "$(jb .metadata.name)" "gen-"

req POST "$NS/configmaps?dryRun=All" '{"metadata":{"name":"dry"}}'; expect_http 201 "dry-run create answers"
req GET $NS/configmaps/dry; expect_http 404 "dry-run create stores nothing"
req PATCH "$NS/configmaps/cm1?dryRun=All" '{"data":{"dry":"1"}}' application/merge-patch+json; expect_http 200 "dry-run patch"
req GET $NS/configmaps/cm1
same "dry-run patch stores nothing" "$(jb .data.dry)" null

# ---- Lease rules
L=/apis/coordination.k8s.io/v1/namespaces/default/leases
req PUT $L/l1 '{"metadata":{"name":"l1"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}}'
expect_http 201 "PUT to a missing Lease creates it"
lrv=$(jb .metadata.resourceVersion)
req PUT $L/l1 '{"metadata":{"name":"l1"},"spec":{"holderIdentity":"b"}}'
expect_http 422 "Lease PUT without resourceVersion: 422"
contains "422 message" "$(jb .message)" "must be specified for an update"
req PUT $L/l1 "{\"metadata\":{\"name\":\"l1\",\"resourceVersion\":\"$lrv\"},\"spec\":{\"holderIdentity\":\"b\",\"leaseTransitions\":1}}"
expect_http 200 "Lease PUT with resourceVersion"
req PUT $L/l1 "{\"metadata\":{\"name\":\"l1\",\"resourceVersion\":\"$lrv\"},\"spec\":{\"holderIdentity\":\"c\"}}"
expect_http 409 "Lease PUT with stale resourceVersion: 409"
req POST $L '{"metadata":{"name":"l1"},"spec":{}}'; expect_http 409 "Lease POST existing: 409"
req GET /_sim/leases-log; expect_http 200 "leases-log"
same "leases-log has the 2 successful writes" "$(jb 'length')" 2
same "leases-log order" "$(jb '[.[].holderIdentity] | join(",")')" "a,b"
same "leases-log verbs" "$(jb '[.[].verb] | join(",")')" "PUT,PUT"
same "leases-log transitions" "$(jb '.[1].leaseTransitions')" 1

# ---- patches
req PATCH $NS/configmaps/cm1 '{"data":{"m":"x","k":null}}' application/merge-patch+json
expect_http 200 "merge patch"
same "merge patch result" "$(jb '.data | to_entries | map(.key+"="+.value) | join(",")')" "m=x"
req PATCH $NS/configmaps/cm1 '[{"op":"test","path":"/data/m","value":"x"},{"op":"add","path":"/data/j","value":"y"}]' application/json-patch+json
expect_http 200 "json patch with test"
same "json patch added" "$(jb .data.j)" y
req PATCH $NS/configmaps/cm1 '[{"op":"test","path":"/data/m","value":"WRONG"},{"op":"add","path":"/data/z","value":"1"}]' application/json-patch+json
expect_http 422 "json patch failed test: 422"
req PATCH $NS/configmaps/cm1 '{"metadata":{"resourceVersion":"1"},"data":{"q":"1"}}' application/merge-patch+json
expect_http 409 "patch with stale resourceVersion precondition: 409"
req PATCH $NS/configmaps/nosuch '{"data":{}}' application/merge-patch+json; expect_http 404 "patch missing: 404"
req PATCH $NS/configmaps/cm1 '{}' text/plain; expect_http 415 "unknown patch type: 415"

# strategic merge on a pod: containers merged by name, env by name
req POST $NS/pods '{"metadata":{"name":"p1","labels":{"app":"a"}},"spec":{"nodeName":"node-1","containers":[{"name":"a","image":"i:1","env":[{"name":"X","value":"1"}]},{"name":"b","image":"j:1"}]}}'
expect_http 201 "create pod"
same "pod status defaulted to Pending" "$(jb .status.phase)" Pending
req PATCH $NS/pods/p1 '{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"a","image":"i:2","env":[{"name":"Y","value":"2"}]}]}}' application/strategic-merge-patch+json
expect_http 200 "strategic merge patch"
same "SMP keeps both containers" "$(jb '[.spec.containers[].name] | join(",")')" "a,b"
same "SMP updated image" "$(jb '.spec.containers[0].image')" "i:2"
same "SMP merged env by name" "$(jb '[.spec.containers[0].env[].name] | join(",")')" "X,Y"

# ---- status subresource and generation (apps/v1)
S=/apis/apps/v1/namespaces/default/statefulsets
req POST $S '{"metadata":{"name":"s1"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"s"}},"template":{"metadata":{"labels":{"app":"s"}},"spec":{"containers":[{"name":"c","image":"x"}]}}},"status":{"replicas":9}}'
expect_http 201 "create statefulset"
same "generation 1" "$(jb .metadata.generation)" 1
same "create drops status" "$(jb .status.replicas)" null
req PATCH $S/s1 '{"spec":{"replicas":3}}' application/merge-patch+json
same "spec change bumps generation" "$(jb .metadata.generation)" 2
req PATCH $S/s1 '{"metadata":{"labels":{"x":"y"}}}' application/merge-patch+json
same "label change keeps generation" "$(jb .metadata.generation)" 2
req PATCH $S/s1/status '{"status":{"replicas":3,"readyReplicas":2},"spec":{"replicas":7}}' application/merge-patch+json
expect_http 200 "patch /status"
same "/status writes status" "$(jb .status.readyReplicas)" 2
same "/status ignores spec" "$(jb .spec.replicas)" 3
same "/status keeps generation" "$(jb .metadata.generation)" 2
req PATCH $S/s1 '{"status":{"readyReplicas":0}}' application/merge-patch+json
same "main endpoint ignores status" "$(jb .status.readyReplicas)" 2
req GET $S/s1/scale; expect_http 200 "GET scale"
same "scale replicas" "$(jb .spec.replicas)" 3

# ---- lists: selectors and paging
for i in 1 2 3 4 5; do
  req POST $NS/configmaps "{\"metadata\":{\"name\":\"page$i\",\"labels\":{\"page\":\"p$i\"}},\"data\":{}}"
done
sel() { req GET "$NS/configmaps?labelSelector=$1"; jb '[.items[].metadata.name] | join(",")'; }
same "selector =" "$(sel 'page%3Dp2')" page2
same "selector ==" "$(sel 'page%3D%3Dp3')" page3
same "selector in" "$(sel 'page+in+(p1,p4)')" "page1,page4"
same "selector notin + exists" "$(sel 'page,page+notin+(p1,p2,p3)')" "page4,page5"
same "selector != (missing label matches)" "$(sel 'app!%3Da')" "$(req GET "$NS/configmaps"; jb '[.items[] | select(.metadata.labels.app != "a") | .metadata.name] | join(",")')"
same "selector !key" "$(sel '!page')" "$(req GET "$NS/configmaps"; jb '[.items[] | select(.metadata.labels.page == null) | .metadata.name] | join(",")')"
req GET "$NS/configmaps?fieldSelector=metadata.name%3Dpage5"
same "field selector metadata.name" "$(jb '[.items[].metadata.name] | join(",")')" page5
req GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1"
same "field selector spec.nodeName (all namespaces)" "$(jb '[.items[].metadata.name] | join(",")')" p1
req GET "$NS/configmaps?fieldSelector=spec.nodeName%3Dx"; expect_http 400 "unsupported field label: 400"
req GET "$NS/configmaps?labelSelector=page&limit=2"
same "limit 2" "$(jb '.items | length')" 2
cont=$(jb .metadata.continue)
[ -n "$cont" ] && [ "$cont" != null ] || fail "no continue token"
seen=$(jb '[.items[].metadata.name] | join(",")')
while [ -n "$cont" ] && [ "$cont" != null ]; do
  req GET "$NS/configmaps?labelSelector=page&limit=2&continue=$cont"
  seen="$seen,$(jb '[.items[].metadata.name] | join(",")')"
  cont=$(jb .metadata.continue)
done
same "paging returns every item once" "$seen" "page1,page2,page3,page4,page5"

# ---- watch
req GET $NS/configmaps/cm1
wrv=$(jb .metadata.resourceVersion)
curl -sS -N --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  "https://127.0.0.1:$KS_PORT$NS/configmaps?watch=1&resourceVersion=$wrv&allowWatchBookmarks=true&timeoutSeconds=3&labelSelector=app%3Da" \
  >"$KS_TMP/watch1" 2>&1 &
wpid=$!
BG_PIDS+=("$wpid")
sleep 0.3
req PATCH $NS/configmaps/cm1 '{"data":{"w":"1"}}' application/merge-patch+json
req PATCH $NS/configmaps/cm1 '{"metadata":{"labels":{"app":"b"}}}' application/merge-patch+json
req PATCH $NS/configmaps/page1 '{"data":{"w":"1"}}' application/merge-patch+json
wait "$wpid" || fail "watch curl failed: $(cat "$KS_TMP/watch1")"
types=$(jq -r 'select(.type!="BOOKMARK") | .type + ":" + .object.metadata.name' "$KS_TMP/watch1" | paste -sd, -)
same "watch events (label transition gives DELETED)" "$types" "MODIFIED:cm1,DELETED:cm1"
grep -q '"type":"BOOKMARK"' "$KS_TMP/watch1" || fail "no BOOKMARK in: $(cat "$KS_TMP/watch1")"
ok "watch sends bookmarks"
last_bm=$(jq -r 'select(.type=="BOOKMARK") | .object.metadata.resourceVersion' "$KS_TMP/watch1" | tail -1)
req GET $NS/configmaps/page1
same "last bookmark carries the latest resourceVersion" "$last_bm" "$(jb .metadata.resourceVersion)"
curl -sS -N --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  "https://127.0.0.1:$KS_PORT$NS/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dpage2" >"$KS_TMP/watch2"
same "watch without resourceVersion: synthetic ADDED" "$(jq -r '.type + ":" + .object.metadata.name' "$KS_TMP/watch2")" "ADDED:page2"
req POST /_sim/compact; expect_http 200 "compact"
curl -sS -N --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  "https://127.0.0.1:$KS_PORT$NS/configmaps?watch=1&resourceVersion=$wrv&timeoutSeconds=5" >"$KS_TMP/watch3"
same "too old resourceVersion: ERROR event" "$(jq -r '.type' "$KS_TMP/watch3")" ERROR
same "ERROR carries 410 Expired" "$(jq -r '(.object.code|tostring) + " " + .object.reason' "$KS_TMP/watch3")" "410 Expired"

# ---- finalizers
req POST $NS/configmaps '{"metadata":{"name":"fin","finalizers":["test/hold"]}}'
req DELETE $NS/configmaps/fin; expect_http 200 "delete with finalizer"
[ "$(jb .metadata.deletionTimestamp)" != null ] || fail "no deletionTimestamp: $body"
ok "deletionTimestamp set"
req GET $NS/configmaps/fin; expect_http 200 "object stays while finalizers remain"
frv=$(jb .metadata.resourceVersion)
req PATCH $NS/configmaps/fin '{"metadata":{"finalizers":["test/hold","test/new"]}}' application/merge-patch+json
expect_http 422 "no new finalizers while deleting"
req PATCH $NS/configmaps/fin '{"metadata":{"finalizers":null}}' application/merge-patch+json
expect_http 200 "remove the last finalizer"
req GET $NS/configmaps/fin; expect_http 404 "object gone after its last finalizer"
req GET "$NS/configmaps?watch=1&resourceVersion=$frv&timeoutSeconds=1"
same "watch sees MODIFIED then DELETED" "$(jq -r '.type' <<<"$body" | paste -sd, -)" "MODIFIED,DELETED"

# ---- pods: graceful deletion, preconditions
req GET $NS/pods/p1
puid=$(jb .metadata.uid)
req DELETE $NS/pods/p1; expect_http 200 "graceful pod delete"
same "deletionGracePeriodSeconds defaults to 30" "$(jb .metadata.deletionGracePeriodSeconds)" 30
req GET $NS/pods/p1; expect_http 200 "pod with nodeName stays until the kubelet deletes it"
req DELETE $NS/pods/p1 '{"gracePeriodSeconds":0,"preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}'
expect_http 409 "uid precondition mismatch: 409"
req DELETE $NS/pods/p1 "{\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"$puid\"}}"
expect_http 200 "kubelet-style delete"
same "pod DELETE returns the object" "$(jb .kind)" Pod
req GET $NS/pods/p1; expect_http 404 "pod gone"
req POST $NS/pods '{"metadata":{"name":"p2"},"spec":{"containers":[{"name":"a","image":"i"}]}}'
req DELETE $NS/pods/p2; expect_http 200 "delete unscheduled pod"
req GET $NS/pods/p2; expect_http 404 "unscheduled pod deleted at once"

# ---- CRDs
CRD='{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.test.kubesim.io"},
 "spec":{"group":"test.kubesim.io","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget","shortNames":["wg"]},
 "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
   "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Phase","type":"string","jsonPath":".status.phase"}],
   "schema":{"openAPIV3Schema":{"type":"object","properties":{
     "spec":{"type":"object","required":["size"],"properties":{"size":{"type":"integer","minimum":0,"maximum":10},
       "mode":{"type":"string","enum":["fast","slow"]},"extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
       "port":{"x-kubernetes-int-or-string":true},"tags":{"type":"array","items":{"type":"string"}}}},
     "status":{"type":"object","properties":{"phase":{"type":"string"}}}}}}}]}}'
req POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$CRD"; expect_http 201 "create CRD"
same "CRD Established" "$(jb '.status.conditions[] | select(.type=="Established") | .status')" True
req POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{"metadata":{"name":"bad.x.io"},"spec":{"group":"x.io","names":{"plural":"things","kind":"Thing"},"versions":[]}}'
expect_http 422 "invalid CRD: 422"
req GET /apis/test.kubesim.io/v1; expect_http 200 "CR discovery at once"
same "CR short name in discovery" "$(jb '.resources[0].shortNames[0]')" wg
W=/apis/test.kubesim.io/v1/namespaces/default/widgets
req POST $W '{"apiVersion":"test.kubesim.io/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3,"junk":1,"extra":{"keep":1},"port":"http","tags":["a"]},"status":{"phase":"X"},"junkTop":2}'
expect_http 201 "create CR"
same "unknown spec field pruned" "$(jb .spec.junk)" null
same "unknown top-level field pruned" "$(jb .junkTop)" null
same "preserve-unknown-fields kept" "$(jb .spec.extra.keep)" 1
same "int-or-string accepts a string" "$(jb .spec.port)" http
same "create drops status" "$(jb .status)" null
same "CR generation 1" "$(jb .metadata.generation)" 1
wrv=$(jb .metadata.resourceVersion)
req POST $W '{"metadata":{"name":"w2"},"spec":{"size":30,"mode":"medium","tags":[1]}}'
expect_http 422 "schema violations: 422"
contains "maximum message" "$(jb .message)" "spec.size in body should be less than or equal to 10"
contains "enum message" "$(jb .message)" 'Unsupported value: "medium"'
contains "items type message" "$(jb .message)" "spec.tags[0] in body must be of type string"
req POST $W '{"metadata":{"name":"w3"},"spec":{}}'
expect_http 422 "required field missing: 422"
same "required cause" "$(jb '.details.causes[0].field + " " + .details.causes[0].message')" "spec.size Required value"
req POST "$W?fieldValidation=Strict" '{"metadata":{"name":"w4"},"spec":{"size":1,"bogus":1}}'
expect_http 400 "fieldValidation=Strict rejects unknown fields"
contains "strict message" "$(jb .message)" 'unknown field "spec.bogus"'
req PUT $W/w1 '{"metadata":{"name":"w1"},"spec":{"size":4}}'
expect_http 422 "CR PUT without resourceVersion: 422"
req PUT $W/nosuch '{"metadata":{"name":"nosuch","resourceVersion":"1"},"spec":{"size":4}}'
expect_http 404 "CR PUT to missing: 404"
req PATCH $W/w1 '{"spec":{"size":5},"status":{"phase":"Bad"}}' application/merge-patch+json
same "CR spec change bumps generation" "$(jb .metadata.generation)" 2
same "CR main endpoint ignores status" "$(jb .status)" null
req PATCH $W/w1/status '{"status":{"phase":"Ready"},"spec":{"size":9},"metadata":{"labels":{"no":"pe"}}}' application/merge-patch+json
expect_http 200 "CR /status patch"
same "CR /status sets status" "$(jb .status.phase)" Ready
same "CR /status ignores spec" "$(jb .spec.size)" 5
same "CR /status ignores labels" "$(jb .metadata.labels)" null
same "CR /status keeps generation" "$(jb .metadata.generation)" 2
# JSON patch as kube-apiserver v1.34 applies it (each row checked there): a failed operation is a 422 that
# names nothing; `test` compares objects by keys, arrays by elements, anything else by its text against Go's
# encoding of the stored value (rssd's status write tests status.epoch this way).
JP=application/json-patch+json
req PATCH $W/w1/status '[{"op":"test","path":"/status/phase","value":"Ready"},{"op":"add","path":"/status","value":{"phase":"Next"}}]' $JP
expect_http 200 "json patch of /status: test, then the whole status"
same "the whole status replaced" "$(jb .status.phase)" Next
req PATCH $W/w1/status '[{"op":"test","path":"/status/phase","value":"Ready"},{"op":"add","path":"/status","value":{"phase":"Late"}}]' $JP
expect_http 422 "a failed test refuses the whole patch"
same "failed test: reason Invalid" "$(jb .reason)" Invalid
same "failed test: the real server's message" "$(jb .message)" "the server rejected our request due to an error in our request"
same "failed test: empty details" "$(jb '.details | tostring')" "{}"
req GET $W/w1; same "nothing of a refused patch lands" "$(jb .status.phase)" Next
req PATCH $W/w1 '[{"op":"test","path":"/spec/size","value":5}]' $JP; expect_http 200 "test of a number: same text"
req PATCH $W/w1 '[{"op":"test","path":"/spec/size","value": 5 }]' $JP; expect_http 200 "test of a number: white space aside"
req PATCH $W/w1 '[{"op":"test","path":"/spec/size","value":5.0}]' $JP; expect_http 422 "test of a number: 5.0 is not the text 5"
req PATCH $W/w1 '[{"op":"test","path":"/spec/size","value":6,"value":5}]' $JP; expect_http 200 "test: a repeated value, the last counts"
req PATCH $W/w1/status '{"status":{"phase":"a<b é"}}' application/merge-patch+json; expect_http 200 "a status with < and é"
req PATCH $W/w1 '[{"op":"test","path":"/status/phase","value":"a<b é"}]' $JP; expect_http 422 "test of a string: Go writes < as \\u003c"
req PATCH $W/w1 '[{"op":"test","path":"/status/phase","value":"a\u003cb é"}]' $JP; expect_http 200 "test of a string: Go's text"
req PATCH $W/w1 '[{"op":"test","path":"/status/phase","value":"a\u003cb \u00e9"}]' $JP; expect_http 422 "test of a string: Go writes é as is"
req PATCH $W/w1 '[{"op":"test","path":"/spec/extra","value":{ "keep" : 1 }}]' $JP; expect_http 200 "test of an object: by keys"
req PATCH $W/w1 '[{"op":"test","path":"/spec/tags","value":["a"]}]' $JP; expect_http 200 "test of an array: by elements"
req PATCH $W/w1 '[{"op":"test","path":"/spec/nothere","value":null}]' $JP; expect_http 200 "test: a missing member equals null"
req PATCH $W/w1 '[{"op":"test","path":"/spec/no/where","value":null}]' $JP; expect_http 422 "test: a missing parent fails"
req PATCH $W/w1 '[{"op":"replace","path":"/spec/mode","value":"fast"}]' $JP; expect_http 200 "replace of a missing member adds it"
same "replaced member" "$(jb .spec.mode)" fast
req PATCH $W/w1 '[{"op":"replace","path":"/spec/tags/1","value":"b"}]' $JP; expect_http 422 "replace past an array's end: 422"
req PATCH $W/w1 '[{"op":"frob","path":"/spec/size","value":1}]' $JP; expect_http 422 "an unknown operation: 422"
req PATCH $W/w1 '[{"op":"add","value":1}]' $JP; expect_http 422 "an operation without a path: 422"
req PATCH $W/w1 '"x"' $JP; expect_http 400 "a patch that is not an array: 400"
same "not an array: the decoder's message" "$(jb .message)" "error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp"
req PATCH $W/w1 'null' $JP; expect_http 200 "a null patch changes nothing"
req PATCH $W/w1/status '[{"op":"add","path":"/status","value":{"phase":"Ready"}}]' $JP; expect_http 200 "status back"
req PATCH $W/w1 '[{"op":"remove","path":"/spec/mode"}]' $JP; expect_http 200 "spec back"
req PATCH $W/w1 '{"spec":{"size":11}}' application/merge-patch+json; expect_http 422 "patch violating schema: 422"
req PATCH $W/w1 '{"spec":{"size":1}}' application/strategic-merge-patch+json; expect_http 415 "SMP on a CR: 415"
code=$(curl -sS -o "$KS_TMP/table" -w '%{http_code}' --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json' "https://127.0.0.1:$KS_PORT$W")
same "Table request" "$code" 200
same "Table columns" "$(jq -r '[.columnDefinitions[].name] | join(",")' "$KS_TMP/table")" "Name,Size,Phase"
same "Table row" "$(jq -r '.rows[0].cells[0:3] | map(tostring) | join(",")' "$KS_TMP/table")" "w1,5,Ready"

# ---- garbage collection: dependents of a deleted owner go
req GET $W/w1
wuid=$(jb .metadata.uid)
req POST $NS/services "{\"metadata\":{\"name\":\"svc-owned\",\"ownerReferences\":[{\"apiVersion\":\"test.kubesim.io/v1\",\"kind\":\"Widget\",\"name\":\"w1\",\"uid\":\"$wuid\",\"controller\":true}]},\"spec\":{\"ports\":[{\"port\":80}]}}"
expect_http 201 "create owned service"
req POST $S "{\"metadata\":{\"name\":\"sts-owned\",\"ownerReferences\":[{\"apiVersion\":\"test.kubesim.io/v1\",\"kind\":\"Widget\",\"name\":\"w1\",\"uid\":\"$wuid\"}]},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}}}}}"
expect_http 201 "create owned statefulset"
req DELETE $W/w1; expect_http 200 "delete owner CR"
same "CR delete answers a Status" "$(jb '.kind + " " + .status')" "Status Success"
req GET $NS/services/svc-owned; expect_http 404 "owned service collected"
req GET $S/sts-owned; expect_http 404 "owned statefulset collected"
req POST $W '{"metadata":{"name":"w5"},"spec":{"size":1}}'
req DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.kubesim.io; expect_http 200 "delete CRD"
req GET $W/w5; expect_http 404 "CRD delete removes its resources"

# ---- /_sim controls
req POST "/_sim/stats-reset"; expect_http 200 "stats-reset"
req POST "/_sim/fail?count=2&code=503&retryAfter=1&path=/api/v1/namespaces/default/configmaps&verb=GET"
expect_http 200 "arm fail"
req GET $NS/configmaps/cm1; expect_http 503 "injected failure 1"
grep -qi '^Retry-After: 1' "$KS_TMP/headers" || fail "no Retry-After header"
ok "Retry-After header"
same "injected Status reason" "$(jb .reason)" ServiceUnavailable
req PUT $NS/configmaps/cm1 '{}'; [ "$code" != 503 ] || fail "fail rule matched another verb"
ok "fail rule honours verb"
req GET $NS/configmaps/cm1; expect_http 503 "injected failure 2"
req GET $NS/configmaps/cm1; expect_http 200 "failures used up"
req GET /_sim/stats; expect_http 200 "stats"
same "stats count GETs" "$(jb .requests.GET)" 3
same "stats count PUTs" "$(jb .requests.PUT)" 1
same "stats by client, verb, resource" "$(jb '[.by[] | select((.client | startswith("curl/")) and .resource == "configmaps") | "\(.verb)=\(.count)"] | sort | join(",")')" "GET=3,PUT=1"
req POST "/_sim/drop?count=1&path=$NS/configmaps"
req GET $NS/configmaps/cm1
case "$code" in curl-error-*) ok "dropped connection" ;; *) fail "drop: got $code" ;; esac
req GET $NS/configmaps/cm1; expect_http 200 "drop used up"
req POST "/_sim/stall?count=1&ms=300&path=$NS/configmaps"
start=$(date +%s%N)
req GET $NS/configmaps/cm1; expect_http 200 "stalled request answers"
[ $(( ($(date +%s%N) - start) / 1000000 )) -ge 300 ] || fail "stall shorter than 300 ms"
ok "stall delayed the answer"
req POST /_sim/pause; expect_http 200 "pause"
curl -sS -o "$KS_TMP/paused" -w '%{http_code}' --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  "https://127.0.0.1:$KS_PORT$NS/configmaps/cm1" >"$KS_TMP/paused.code" &
ppid_=$!
BG_PIDS+=("$ppid_")
sleep 0.5
[ ! -s "$KS_TMP/paused.code" ] || fail "a request was answered while paused"
ok "paused request blocks"
req POST /_sim/resume; expect_http 200 "resume"
wait "$ppid_"
same "request answered after resume" "$(cat "$KS_TMP/paused.code")" 200
curl -sS -N --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" \
  "https://127.0.0.1:$KS_PORT$NS/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=30" >"$KS_TMP/cut" 2>/dev/null &
cpid=$!
BG_PIDS+=("$cpid")
wait_until 60 "watch stream open" grep -q ADDED "$KS_TMP/cut" && ok "watch stream open"
req POST /_sim/watch-cut; expect_http 200 "watch-cut"
if wait "$cpid"; then fail "cut watch ended cleanly"; fi
ok "cut watch ends with an error"
tail -c 1 "$KS_TMP/cut" | od -An -c | grep >/dev/null '\\n' && fail "cut watch ended on a full line"
ok "cut watch ends mid-line"

ks_stop
echo "test_server: all $checks checks passed"
