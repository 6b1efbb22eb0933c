#!/usr/bin/env bash
# test_drain.sh -- real `kubectl drain` in a 2-node world under a PodDisruptionBudget (maxUnavailable 1) of a
# StatefulSet spread by anti-affinity: the first drain evicts within the budget, the world's disruption
# controller then allows nothing (the replacement cannot be placed), so the second drain times out on the
# eviction's 429, and succeeds once the replacement is Ready again.
source "$(dirname "$0")/lib.sh"
if ! KUBECTL=$(command -v kubectl); then
    echo "SKIP: no kubectl on PATH"
    exit 77
fi
world_up --nodes 2

kc() { KUBECONFIG=$("$WORLD" kubeconfig) "$KUBECTL" --cache-dir "$RSS_WORLD_DIR/kcache" "$@"; }
pdb_field() { api GET /apis/policy/v1/namespaces/default/poddisruptionbudgets/web | jq -r "$1"; }
pdb_allowed_is() { [ "$(pdb_field .status.disruptionsAllowed)" = "$1" ]; }
has() { grep -F -- "$1" <<<"$2" >/dev/null; }
web_on() { pods_json web | jq -r --arg n "$1" '.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null) | .metadata.name'; }

create_sts web 2 anti
wait_until 90 "2 web pods Ready" ready_is web 2
api POST /apis/policy/v1/namespaces/default/poddisruptionbudgets '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
  "metadata":{"name":"web"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}}}' >/dev/null
wait_until 30 "the controller allows 1 disruption" pdb_allowed_is 1
expect "expectedPods from the StatefulSet" 2 "$(pdb_field .status.expectedPods)"
expect "observedGeneration" 1 "$(pdb_field .status.observedGeneration)"
first=$(web_on node-1)
[ -n "$first" ] || fail "no web pod on node-1"

# within the budget: evicted, terminated by the kubelet, the node drained
out=$(kc drain node-1 --ignore-daemonsets --timeout=90s 2>&1) || fail "drain node-1: $out"
run "drain node-1 evicts $first" has "pod/$first evicted" "$out"
run "node-1 drained" has "node/node-1 drained" "$out"
# the replacement cannot go anywhere (node-1 cordoned, node-2 taken): the budget is used up
wait_until 30 "the controller allows 0 disruptions" pdb_allowed_is 0
expect "currentHealthy" 1 "$(pdb_field .status.currentHealthy)"
expect "condition" "False InsufficientPods" "$(pdb_field '.status.conditions[] | select(.type == "DisruptionAllowed") | "\(.status) \(.reason)"')"

# beyond the budget: every eviction refused until the timeout, the pod keeps running
second=$(web_on node-2)
if out=$(kc drain node-2 --ignore-daemonsets --timeout=12s 2>&1); then fail "drain node-2 succeeded past the budget: $out"; fi
run "drain node-2 retried on the budget" has "Cannot evict pod as it would violate the pod's disruption budget" "$out"
run "$second still Ready on node-2" pod_ready "$second"
expect "$second not evicted" "$second" "$(web_on node-2)"

# the replacement placed and Ready again: the budget allows one, the drain goes through
kc uncordon node-1 >/dev/null || fail "uncordon node-1"
wait_until 90 "2 web pods Ready again" ready_is web 2
wait_until 30 "the controller allows 1 disruption again" pdb_allowed_is 1
out=$(kc drain node-2 --ignore-daemonsets --timeout=90s 2>&1) || fail "drain node-2 once allowed: $out"
run "drain node-2 evicts $second" has "pod/$second evicted" "$out"
checks_done
