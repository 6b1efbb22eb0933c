#!/usr/bin/env bash
# test_freeze.sh -- `world freeze NODE` stops everything of the node at once (kubelet, host processes, its
# runtime, its containers and what hooks started in them) with its state intact, and `thaw` resumes it:
# the same processes, nothing restarted. Meanwhile the node's Lease stops renewing and the Node goes
# Ready=Unknown; after the thaw the kubelet posts Ready=True again with a lastTransitionTime of the thaw,
# as a real kubelet does. Then power-off of a frozen node, and `down` with a frozen node.
source "$(dirname "$0")/lib.sh"
world_up --nodes 3 --node-grace 4 --host-process localhost/rss/fake-agent:dev=/bin/sleep
CG=/sys/fs/cgroup/unified/rss-world-$(printf '%s' "$RSS_WORLD_DIR" | cksum | cut -d' ' -f1)
[ -e "$CG/node-2/cgroup.freeze" ] || fail "no v2 freezer for node-2 at $CG/node-2"

node_json() { api GET "/api/v1/nodes/$1"; }
ready_field() { node_json "$1" | jq -r --arg f "$2" '.status.conditions[] | select(.type == "Ready") | .[$f]'; }
renew_time() { api GET "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/$1" | jq -r .spec.renewTime; }
since0=$(ready_field node-2 lastTransitionTime)
beat0=$(ready_field node-2 lastHeartbeatTime)

# One ticker per node, writing to a hostPath (the node's own tree under the world, readable from here
# while the node is frozen), and a DaemonSet pod that runs as a host process on every node.
for i in 1 2 3; do
    api POST /api/v1/namespaces/default/pods "$(jq -n --arg image "$IMAGE" --arg node "node-$i" '{apiVersion: "v1",
        kind: "Pod", metadata: {name: ("tick-" + ($node | ltrimstr("node-"))), namespace: "default", labels: {app: "tick"}},
        spec: {nodeName: $node, terminationGracePeriodSeconds: 1,
          containers: [{name: "main", image: $image, volumeMounts: [{name: "t", mountPath: "/ticks"}],
            command: ["/bin/sh", "-c", "while :; do date +%s >>/ticks/main; sleep 0.2; done"]}],
          volumes: [{name: "t", hostPath: {path: "/ticks", type: "DirectoryOrCreate"}}]}}')" >/dev/null
done
api POST /apis/apps/v1/namespaces/default/daemonsets "$(jq -n '{apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: {name: "agent", namespace: "default"},
    spec: {selector: {matchLabels: {app: "agent"}},
      template: {metadata: {labels: {app: "agent"}},
        spec: {terminationGracePeriodSeconds: 1, containers: [{name: "agent", image: "localhost/rss/fake-agent:dev",
          args: ["3600"]}]}}}}')" >/dev/null
wait_until 60 "3 tick pods Ready" ready_is tick 3
wait_until 60 "3 agent pods Ready" ready_is agent 3

# A process started through ExecSync that outlives its exec, as the dummy app's hooks start dummyd.
marker=exec-ticker-${RSS_WORLD_DIR##*/}
cid=$(cri_find tick-2) || fail "no container of tick-2"
"$WORLD" crictl node-2 exec "$cid" sh -c "setsid sh -c 'while :; do date +%s >>/ticks/exec; sleep 0.2; done' $marker \
    </dev/null >/dev/null 2>&1 &" || fail "exec of the ticker in tick-2"
# (grep says 2 when a process it listed is gone before it reads it)
# (grep says 2 when a process it listed is gone before it reads it; the exec's own shell names the
# marker too until it exits: wait for the one left; the pattern does not match grep's own command line)
marker_pids() { { grep -l -- "exec-ticke[r]-${RSS_WORLD_DIR##*/}" /proc/[0-9]*/cmdline 2>/dev/null || true; } | sed -n 's|/proc/\([0-9]*\)/.*|\1|p'; }
one_marker() { [ "$(marker_pids | wc -l)" = 1 ]; }
wait_until 10 "the exec'd ticker to run alone" one_marker
xpid=$(marker_pids)

T2=$RSS_WORLD_DIR/nodes/node-2/root/ticks
T1=$RSS_WORLD_DIR/nodes/node-1/root/ticks
agent2=$(pods_json agent | jq -r '.items[] | select(.spec.nodeName == "node-2") | .metadata.name')
hp=$(pod_get "$agent2" | jq -r '.status.containerStatuses[0].containerID')
[[ $hp == hostprocess://* ]] || fail "agent on node-2 has container id '$hp'"
hpid=${hp#hostprocess://}
read -r kpid _ <"$RSS_WORLD_DIR/nodes/node-2/kubelet.pid"
read -r dpid _ <"$RSS_WORLD_DIR/nodes/node-2/containerd/containerd.pid"
# Every process of tick-2's container (its shell and its sleeps come and go: the shell is enough).
uid2=$(pod_uid tick-2)
cpids=$(cat "$CG/node-2/pod$uid2/$cid/cgroup.procs")
[ -n "$cpids" ] || fail "no process in tick-2's container cgroup"
cinit=$(head -1 <<<"$cpids")
restarts() { pod_get "$1" | jq -c '[.status.containerStatuses[] | .restartCount, .containerID]'; }
r_tick=$(restarts tick-2)
r_agent=$(restarts "$agent2")
ok "node-2: kubelet $kpid, containerd $dpid, host process $hpid, container init $cinit, exec'd ticker $xpid"

# The kubelet keeps the Ready transition time while it posts the same status (several updates by now).
beat_advanced() { [ "$(ready_field node-2 lastHeartbeatTime)" != "$beat0" ]; }
wait_until 30 "node-2's Ready heartbeat to advance" beat_advanced
expect "node-2's Ready lastTransitionTime across status updates" "$since0" "$(ready_field node-2 lastTransitionTime)"

# pid_frozen PID: the kernel says the process's cgroup (unified hierarchy) is frozen.
pid_cg() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
pid_frozen() { grep -qx 'frozen 1' "/sys/fs/cgroup/unified$(pid_cg "$1")/cgroup.events"; }
pid_running() { [ -d "/proc/$1" ] && grep -qx 'frozen 0' "/sys/fs/cgroup/unified$(pid_cg "$1")/cgroup.events"; }
size() { stat -c %s "$1"; }

"$WORLD" freeze node-2 || fail "freeze node-2"
for p in "kubelet $kpid" "containerd $dpid" "host-process $hpid" "container-init $cinit" "exec-ticker $xpid"; do
    run "$p frozen" pid_frozen "${p#* }"
done
s_main=$(size "$T2/main")
s_exec=$(size "$T2/exec")
s_other=$(size "$T1/main")
renew2=$(renew_time node-2)
renew1=$(renew_time node-1)
sleep 2.5
expect "node-2's container ticks while frozen (bytes)" "$s_main" "$(size "$T2/main")"
expect "node-2's exec'd ticker while frozen (bytes)" "$s_exec" "$(size "$T2/exec")"
run "node-1's container ticks on" test "$(size "$T1/main")" -gt "$s_other"
expect "node-2's Lease renewTime while frozen" "$renew2" "$(renew_time node-2)"
run "node-1's Lease renewed" test "$(renew_time node-1)" != "$renew1"
st=$("$WORLD" status 2>&1)
grep -Eq '^node-2 +frozen ' <<<"$st" || fail "world status does not show node-2 frozen: $st"
"$WORLD" crictl node-2 ps >/dev/null 2>&1 && fail "crictl against a frozen node answered"
"$WORLD" restart-kubelet node-2 >/dev/null 2>&1 && fail "restart-kubelet of a frozen node went on"
unknown() { [ "$(ready_field node-2 status)" = Unknown ]; }
wait_until 30 "node-2 Ready=Unknown after the node grace" unknown
for n in node-1 node-3; do expect "$n Ready while node-2 is frozen" True "$(ready_field "$n" status)"; done
checks_done || fail "counted checks failed"
ok "frozen: node-2's kubelet, runtime, host process, container and exec'd process stopped; Lease silent, Node Unknown"

thawed_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
"$WORLD" thaw node-2 || fail "thaw node-2"
for p in "kubelet $kpid" "containerd $dpid" "host-process $hpid" "container-init $cinit" "exec-ticker $xpid"; do
    run "$p runs again (same pid)" pid_running "${p#* }"
done
grows() { [ "$(size "$1")" -gt "$2" ]; }
wait_until 10 "node-2's container to tick again" grows "$T2/main" "$s_main"
wait_until 10 "the exec'd ticker to tick again" grows "$T2/exec" "$s_exec"
renewed() { [ "$(renew_time node-2)" != "$renew2" ]; }
wait_until 10 "node-2's Lease renewed" renewed
ready_again() { [ "$(ready_field node-2 status)" = True ]; }
wait_until 30 "node-2 Ready again" ready_again
since=$(ready_field node-2 lastTransitionTime)
run "node-2's Ready lastTransitionTime $since is the thaw's ($thawed_at or later)" test ! "$since" \< "$thawed_at"
sleep 1 # the kubelet's pod workers have looked at the runtime again
expect "tick-2 restarts and container" "$r_tick" "$(restarts tick-2)"
expect "$agent2 restarts and container" "$r_agent" "$(restarts "$agent2")"
checks_done || fail "counted checks failed"
ok "thawed: the same processes run again, nothing restarted, Ready since $since"

# power-off of a frozen node: everything of it dies without running first; the runtime records the exits.
"$WORLD" freeze node-2 || fail "freeze node-2 again"
"$WORLD" power-off node-2 || fail "power-off of frozen node-2"
dead() { [ ! -d "/proc/$1" ] || grep >/dev/null '^State:.*[ZX]' "/proc/$1/status"; }
for p in "kubelet $kpid" "host-process $hpid" "container-init $cinit" "exec-ticker $xpid"; do
    run "$p dead after power-off" dead "${p#* }"
done
run "containerd $dpid runs after power-off (as after any power-off here)" pid_running "$dpid"
state=$("$WORLD" crictl node-2 ps --json | jq -r --arg id "$cid" 'select(.id == $id) | .state')
expect "tick-2's container after power-off" CONTAINER_EXITED "$state"
checks_done || fail "counted checks failed"
"$WORLD" power-on node-2 || fail "power-on"
back() { id=$(cri_find tick-2) && [ "$id" != "$cid" ] && pod_ready tick-2; }
wait_until 60 "tick-2 back in a new container" back
ok "power-off of a frozen node: kubelet, host process and containers dead, the runtime saw it; power-on brings them back"

# down with a frozen node: it thaws it and leaves nothing.
read -r kpid3 _ <"$RSS_WORLD_DIR/nodes/node-3/kubelet.pid"
read -r dpid3 _ <"$RSS_WORLD_DIR/nodes/node-3/containerd/containerd.pid"
"$WORLD" freeze node-3 || fail "freeze node-3"
"$WORLD" down || fail "down with node-3 frozen"
for p in "$kpid3" "$dpid3"; do run "node-3's process $p gone after down" dead "$p"; done
run "no cgroup left" test ! -d "$CG"
run "no world directory left" test ! -e "$RSS_WORLD_DIR/.rss-world"
checks_done || fail "counted checks failed"
ok "down with a frozen node: nothing left"
