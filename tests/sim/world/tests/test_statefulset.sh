#!/usr/bin/env bash
# test_statefulset.sh -- StatefulSet scale up and down on a 3-node world: pods <name>-<ordinal> run on
# the real runtime, scale-down removes the highest ordinals and their containers, PVCs stay.
source "$(dirname "$0")/lib.sh"
world_up --nodes 3

create_sts web 2
wait_until 60 "2 web pods Ready" ready_is web 2
scale_sts web 5
wait_until 60 "5 web pods Ready" ready_is web 5
names=$(pods_json web | jq -r '[.items[].metadata.name] | sort | join(" ")')
[ "$names" = "web-0 web-1 web-2 web-3 web-4" ] || fail "pods after scale-up: $names"
for i in 0 1 2 3 4; do
    cri_find "web-$i" >/dev/null || fail "no running CRI container for web-$i on $(pod_node "web-$i")"
done
ok "scaled up to 5: web-0..web-4 run in the nodes' runtimes"

# The pods' env came from the downward API and the template.
out=$(cri_exec web-3 sh -c 'echo $POD_NAME $POD_NAMESPACE $NODE_NAME $SERVICE_NAME') || fail "exec in web-3"
[ "$out" = "web-3 default $(pod_node web-3) web" ] || fail "env in web-3: '$out'"
ok "downward-API env: $out"

node4=$(pod_node web-4)
id4=$(cri_find web-4)
scale_sts web 2
wait_until 60 "scale-down to 2 pods" pod_count_is web 2
names=$(pods_json web | jq -r '[.items[].metadata.name] | sort | join(" ")')
[ "$names" = "web-0 web-1" ] || fail "pods after scale-down: $names"
gone_from_runtime() { ! "$WORLD" crictl "$node4" ps --json | jq -e --arg id "$id4" 'select(.id == $id)' >/dev/null; }
wait_until 30 "web-4's container removed from $node4" gone_from_runtime
ok "scaled down to 2: web-2..web-4 and their containers are gone"

pvcs=$(api GET /api/v1/namespaces/default/persistentvolumeclaims | jq -r '[.items[].metadata.name] | sort | join(" ")')
[ "$pvcs" = "data-web-0 data-web-1 data-web-2 data-web-3 data-web-4" ] || fail "PVCs after scale-down: $pvcs"
[ -d "$RSS_WORLD_DIR/pv/default/data-web-4" ] || fail "the host dir of data-web-4 is gone"
ok "PVCs and their host directories are kept after scale-down"

scale_sts web 3
wait_until 60 "3 web pods Ready again" ready_is web 3
ok "scaled up again to 3"
