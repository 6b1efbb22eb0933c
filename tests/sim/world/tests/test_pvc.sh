#!/usr/bin/env bash
# test_pvc.sh -- PVC data survives container restarts and pod deletion and recreation: written and
# read through the CRI's ExecSync (no kubectl), also checked in the claim's host directory.
source "$(dirname "$0")/lib.sh"
world_up --nodes 3

create_sts db 1
wait_until 60 "db-0 Ready" pod_ready db-0
uid1=$(pod_uid db-0)
cri_exec db-0 sh -c 'echo 42 > /data/seq && echo $POD_NAME > /data/owner' || fail "writing /data via CRI exec"
hostdir=$RSS_WORLD_DIR/pv/default/data-db-0
[ "$(cat "$hostdir/seq")" = 42 ] || fail "host dir $hostdir/seq does not hold 42"
ok "data written through CRI ExecSync lands in the claim's host directory"

# The container dies: the kubelet restarts it (restartCount 1) with the same volume.
cid=$(cri_find db-0)
cri_exec db-0 sh -c 'kill 1' || true
restarted() { pod_get db-0 | jq -e '.status.containerStatuses[0].restartCount >= 1 and .status.containerStatuses[0].ready' >/dev/null; }
wait_until 30 "db-0's container to be restarted" restarted
[ "$(cri_find db-0)" != "$cid" ] || fail "still the same container after its exit"
[ "$(cri_exec db-0 cat /data/seq)" = 42 ] || fail "data lost across a container restart"
ok "container restart keeps the data (restartCount $(pod_get db-0 | jq .status.containerStatuses[0].restartCount))"

api DELETE /api/v1/namespaces/default/pods/db-0 >/dev/null
recreated() { [ "$(pod_uid db-0)" != "$uid1" ] && pod_ready db-0; }
wait_until 60 "db-0 recreated and Ready" recreated
[ "$(cri_exec db-0 cat /data/seq)" = 42 ] || fail "data lost across pod deletion and recreation"
[ "$(cri_exec db-0 cat /data/owner)" = db-0 ] || fail "owner file lost"
ok "pod deletion and recreation keep the PVC data (new uid $(pod_uid db-0))"
