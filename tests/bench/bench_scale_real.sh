#!/usr/bin/env bash
# bench_scale_real.sh -- rssd at scale on a real kube-apiserver and etcd: hundreds of rssd processes, hundreds of RSS objects, idle load and lights-outs.
#
# Usage: tests/bench/bench_scale_real.sh [--nodes N] [--sizes 10,100,300] [--idle S] [--masters] [--keep]
#   RSSD_ARGS = more flags for every rssd (e.g. "--reconcile-workers 1": the serial leader, to compare).
#   RSS_BUILD_DIR = the build (default ./build; needs rssd and scale_cri). Prints figures; asserts nothing
#   about performance. Defaults: 200 nodes, sizes 10,100,300, idle windows of 120 s.
#
# The world: the pinned etcd and kube-apiserver (tests/realk8s/build.sh builds them when the cache lacks
# them), the real controller-manager (the StatefulSet controller makes the pods; the node lifecycle
# controller is off, there are no kubelets) and scheduler. No kubelets: scale_sim.py creates the Nodes
# (Ready, each with a bootID) and writes every bound pod's status as a kubelet would (its first container
# running with the id the fake CRI answers). One scale_cri process serves every node's CRI socket and
# answers every hook at once (tests/bench/scale_cri.c). One real rssd process per node, with its own
# node name, CRI socket and state dir, at the default timings (lease 15 s, retry 2 s), as rssd's
# ServiceAccount would run on a cluster: a client certificate for system:serviceaccount:rssd-system:rssd,
# authorized by deploy/base/rbac.yaml, its Leases in their own API priority level (deploy/base/
# flowcontrol.yaml). --masters: as user `rssd` in system:masters instead, which RBAC does not check and
# API Priority and Fairness exempts (every run before 2 December).
#
# A lights-out: SIGUSR1 to scale_cri and scale_sim.py at once: every container is new (new id, one more
# restart in the pod status), its application stopped, with a new sequence. The agents see a new container
# (pod event, CRI list), probe it (status 7, then sequence) and report; the leader seeds and joins.
# The times are judged from what the API server delivered (scale_sim.py's watches, one clock): "last
# sequence report" = the last member record whose observed reports a sequence (role stopped) after the
# power-on; "last Running" = the last RSS whose status phase, having left Running after the power-on,
# is Running again.
#
# Figures: requests by verb and resource from the API server's audit log (only rssd's user is audited;
# each rssd names its node in its User-Agent; a window is judged by the events' stage times, and the
# leader is the node that renewed rssd-leader most in it), etcd writes (etcd_mvcc_put_total, proposals committed)
# and watch events (apiserver_watch_events_total) from /metrics deltas, VmRSS and CPU from /proc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${RSS_BUILD_DIR:-$repo/build}
nodes=200 sizes=10,100,300 idle=120 keep=0 masters=0
while [ $# -gt 0 ]; do
    case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --masters) masters=1; shift ;;
    *) echo "usage: $0 [--nodes N] [--sizes 10,100,300] [--idle S] [--masters] [--keep]" >&2; exit 2 ;;
    esac
done
say() { echo "bench_scale_real: $*" >&2; }
die() { say "$*"; exit 1; }
rssd=$build/nodeagent/rssd
[ -x "$rssd" ] || rssd=$build/rssd
scale_cri=$build/tests/bench/scale_cri
[ -x "$rssd" ] && [ -x "$scale_cri" ] || die "no rssd or scale_cri in $build"
K8S_BIN=$(bash "$repo/tests/realk8s/build.sh" --print-dir) || die "building the Kubernetes components failed"
[ "$(ulimit -n)" -ge $((nodes * 20 + 1000)) ] || ulimit -n $((nodes * 20 + 1000)) || die "ulimit -n too low for $nodes nodes"

w=$(mktemp -d /tmp/bench-scale-real.XXXXXX)
pids=()
cleanup() {
    trap "" INT TERM
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    if [ -s "$w/rssd.pids" ]; then
        while read -r _ p; do kill -TERM "$p" 2>/dev/null || true; done <"$w/rssd.pids"
    fi
    sleep 2
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    if [ -s "$w/rssd.pids" ]; then
        while read -r _ p; do kill -KILL "$p" 2>/dev/null || true; done <"$w/rssd.pids"
    fi
    [ "$keep" = 1 ] && say "kept $w" || rm -rf "$w"
}
trap cleanup EXIT
trap "exit 130" INT TERM
bg() { # LOG CMD...: a process of this bench, ended by cleanup
    local log=$1
    shift
    setsid "$@" </dev/null >>"$log.log" 2>&1 &
    pids+=($!)
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # SECONDS WHAT CMD...
    local t=$1 what=$2 i
    shift 2
    for ((i = 0; i < t; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    die "timed out after ${t}s waiting for $what"
}

# ---- certificates: a CA, the apiserver, admin (kubectl, controllers, the simulator: not audited), rssd
pki=$w/pki
mkdir -p "$pki" "$w/logs" "$w/cri" "$w/state"
openssl genrsa -out "$pki/ca.key" 2048 2>/dev/null
openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=bench-ca" -days 2 -out "$pki/ca.crt" 2>/dev/null
cert() { # NAME CN O SAN
    local ext=$pki/$1.ext subj="/CN=$2"
    [ -z "$3" ] || subj="/O=$3$subj"
    openssl genrsa -out "$pki/$1.key" 2048 2>/dev/null
    { echo "keyUsage=critical,digitalSignature,keyEncipherment"
      if [ -n "$4" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$4"
      else echo "extendedKeyUsage=clientAuth"; fi; } >"$ext"
    openssl req -new -key "$pki/$1.key" -subj "$subj" 2>/dev/null |
        openssl x509 -req -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 -extfile "$ext" \
            -out "$pki/$1.crt" 2>/dev/null
}
cert apiserver kube-apiserver "" "IP:127.0.0.1,DNS:localhost"
cert admin admin system:masters ""
if [ "$masters" = 1 ]; then
    rssd_user=rssd
    cert rssd rssd system:masters ""
else
    rssd_user=system:serviceaccount:rssd-system:rssd
    cert rssd "$rssd_user" system:serviceaccounts ""
fi
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
etcd_port=$(free_port) peer_port=$(free_port) api_port=$(free_port)
server=https://127.0.0.1:$api_port
echo "$server" >"$pki/server"
kubeconfig() { # FILE USER
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: b, cluster: {server: "$server", certificate-authority: "$pki/ca.crt"}}]
users: [{name: u, user: {client-certificate: "$pki/$2.crt", client-key: "$pki/$2.key"}}]
contexts: [{name: b, context: {cluster: b, user: u}}]
current-context: b
EOF
}
kubeconfig "$w/admin.kubeconfig" admin
kubeconfig "$w/rssd.kubeconfig" rssd
kc() { "$K8S_BIN/kubectl" --kubeconfig "$w/admin.kubeconfig" --request-timeout=30s "$@"; }
cat >"$w/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["$rssd_user"]
- level: None
EOF

# ---- etcd, apiserver, controller-manager, scheduler
mkdir -p "$w/etcd"
bg "$w/logs/etcd" "$K8S_BIN/etcd" --name bench --data-dir "$w/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "bench=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn \
    --listen-metrics-urls "http://127.0.0.1:$(free_port)" --quota-backend-bytes 8589934592
etcd_url=http://127.0.0.1:$etcd_port
bg "$w/logs/apiserver" "$K8S_BIN/kube-apiserver" --etcd-servers "$etcd_url" --bind-address 127.0.0.1 \
    --secure-port "$api_port" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.key" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --authorization-mode RBAC --endpoint-reconciler-type none \
    --advertise-address 10.96.0.1 --audit-policy-file "$w/audit-policy.yaml" --audit-log-path "$w/audit.log" \
    --audit-log-maxsize 0 --audit-log-mode batch --max-requests-inflight 2000 --max-mutating-requests-inflight 1000 \
    -v=1
wait_for 90 "the apiserver" kc get --raw /readyz
bg "$w/logs/controller-manager" "$K8S_BIN/kube-controller-manager" --kubeconfig "$w/admin.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$(free_port)" --service-account-private-key-file "$pki/sa.key" \
    --root-ca-file "$pki/ca.crt" --controllers '*,-nodelifecycle' \
    --leader-elect=false --kube-api-qps 500 --kube-api-burst 1000 --concurrent-statefulset-syncs 20 -v=1
bg "$w/logs/scheduler" "$K8S_BIN/kube-scheduler" --kubeconfig "$w/admin.kubeconfig" --bind-address 127.0.0.1 \
    --secure-port "$(free_port)" --leader-elect=false --kube-api-qps 500 --kube-api-burst 1000 -v=1
kc create namespace rssd-system >/dev/null
kc create namespace bench >/dev/null
kc apply -f "$repo/deploy/base/crd.yaml" >/dev/null
# rssd's RBAC and API priority, as installed (the ServiceAccount object is there, unused: rssd presents
# a certificate with its name).
[ "$masters" = 1 ] || kc apply -f "$repo/deploy/base/rbac.yaml" -f "$repo/deploy/base/flowcontrol.yaml" >/dev/null
wait_for 60 "the CRD" kc get replicatedstatefulsets -A
wait_for 60 "the default ServiceAccount" kc get serviceaccount default -n bench
say "control plane up at $server ($w); creating $nodes Nodes"
python3 "$here/scale_sim.py" "$pki" nodes "$nodes"
bg "$w/logs/scale_cri" "$scale_cri" "$w/cri" "$nodes"
bg "$w/logs/scale_sim" python3 "$here/scale_sim.py" "$pki" run "$w"
cri_pid=${pids[-2]} sim_pid=${pids[-1]}
wait_for 30 "the CRI sockets" test -S "$w/cri/node-$nodes.sock"

# ---- one rssd per node, 20 a second (a real cluster's DaemonSet does not start them all in one instant)
say "starting $nodes rssd"
t_start=$(date +%s)
for ((i = 1; i <= nodes; i++)); do
    n=node-$i
    mkdir -p "$w/state/$n"
    # shellcheck disable=SC2086 # RSSD_ARGS is split into flags on purpose
    RSS_BOOT_ID=$(printf 'b%07d' "$i") setsid "$rssd" --node "$n" --namespace rssd-system \
        --kubeconfig "$w/rssd.kubeconfig" --cri-endpoint "unix://$w/cri/$n.sock" --health-port 0 \
        --health-address 127.0.0.1 --peer-address 127.0.0.1 --state-dir "$w/state/$n" --log-level warn \
        ${RSSD_ARGS:-} </dev/null >"$w/logs/rssd-$n.log" 2>&1 &
    echo "$n $!" >>"$w/rssd.pids"
    ((i % 20)) || sleep 1
done
leader_node() { kc get lease -n rssd-system rssd-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | sed -E "s/^(node-[0-9]+)_.*/\1/"; }
has_leader() { [ -n "$(leader_node)" ]; }
wait_for 120 "a leader" has_leader
alive=$(while read -r _ p; do kill -0 "$p" 2>/dev/null && echo; done <"$w/rssd.pids" | wc -l)
say "leader: $(leader_node); $alive of $nodes rssd alive, started in $(($(date +%s) - t_start)) s"

snap() { python3 "$here/scale_report.py" snap "$pki" "$etcd_url" "$1"; }
# The established connections to the API server, from the kernel's socket table: in all, and per rssd
# (one HTTP/2 connection per process since 2 December; about 14 on HTTP/1.1 before).
conns() { # LABEL
    ss -Htnp state established "( dport = :$api_port )" 2>/dev/null | grep -o 'pid=[0-9]*' | sed 's/pid=//' |
        python3 -c '
import sys, statistics
rssd = {l.split()[1] for l in open(sys.argv[2]) if l.strip()}
per = {}
for l in sys.stdin:
    per[l.strip()] = per.get(l.strip(), 0) + 1
mine = [n for p, n in per.items() if p in rssd]
print("connections to the API server, %s: %d in all, %d from %d rssd (median %s, max %s per rssd)" % (
    sys.argv[1], sum(per.values()), sum(mine), len(mine),
    statistics.median(mine) if mine else "-", max(mine) if mine else "-"))' "$1" "$w/rssd.pids"
}
# An idle window: metric deltas, rssd's requests from the audit log, memory and the leader's CPU.
measure_idle() { # LABEL
    local label=$1 t0 t1 leader cpu0 cpu1 out
    cpu0=$(python3 "$here/scale_report.py" procs "$w/rssd.pids" "$(leader_node)" | sed -n 's/^CPU [^ ]* //p')
    snap "$w/idle-$label-0.json"
    sleep "$idle"
    snap "$w/idle-$label-1.json"
    local c
    c=$(conns "idle, $label")
    sleep 5 # the audit log is written in batches
    echo "=== idle, $label: $idle s window, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$c"
    python3 "$here/scale_report.py" delta "$w/idle-$label-0.json" "$w/idle-$label-1.json"
    out=$(python3 "$here/scale_report.py" audit-window "$w/audit.log" "$w/idle-$label-0.json" "$w/idle-$label-1.json")
    echo "$out"
    leader=$(echo "$out" | sed -n 's/^leader: \([^ ]*\).*/\1/p')
    idle_rate=$(echo "$out" | sed -n 's|^rssd requests: .* = \([0-9.]*\)/s$|\1|p')
    python3 "$here/scale_report.py" procs "$w/rssd.pids" "$leader" | grep -v '^CPU'
    cpu1=$(python3 "$here/scale_report.py" procs "$w/rssd.pids" "$leader" | sed -n 's/^CPU [^ ]* //p')
    echo "leader CPU in the window: $(echo "scale=2; ($cpu1 - $cpu0) * 100 / $idle" | bc)% of one core (if the leader did not change)"
}
rss_yaml() { # NAME
    cat <<EOF
apiVersion: clusterlabs.org/v1alpha1
kind: ReplicatedStatefulSet
metadata: {name: $1, namespace: bench}
spec:
  replicas: 3
  reconcileInterval: 60s
  pod:
    antiAffinity: true
    commands:
      sequence: {timeout: 10s, command: ["/hooks/sequence"]}
      seed: {timeout: 30s, command: ["/hooks/seed"]}
      primary: {timeout: 30s, command: ["/hooks/primary"]}
      secondary: {timeout: 30s, command: ["/hooks/secondary"]}
      status: {timeout: 10s, command: ["/hooks/status"]}
      stop: {timeout: 30s, command: ["/hooks/stop"]}
    containers:
    - name: app
      image: scale/none:1
      command: ["/bin/sleep", "infinity"]
EOF
}
n_running() { kc get replicatedstatefulsets -n bench -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$' || true; }
all_running() { [ "$(n_running)" = "$1" ]; }
wait_running() { # N TIMEOUT
    local i
    for ((i = 0; i < $2; i += 5)); do
        all_running "$1" && return 0
        sleep 5
    done
    say "after $2 s only $(n_running) of $1 RSS Running"
    return 1
}

echo "=== bench_scale_real: $nodes nodes, rssd $rssd (built $(date -u -r "$rssd" +%FT%TZ)), scripts at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo ?), $(nproc) cores, rssd as $rssd_user, started $(date -u +%FT%TZ)"
sleep 30 # past every agent's start-up (its first 30 s of peer reads)
measure_idle "no RSS"
python3 "$here/scale_report.py" probes "$w/rssd.pids" || true

have=0 boot=1
IFS=, read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
    [ $((size * 3)) -le $((nodes * 100)) ] || die "$size RSS do not fit on $nodes nodes"
    say "creating RSS $((have + 1))..$size"
    t0=$(date +%s)
    for ((r = have; r < size; r++)); do rss_yaml "r$r"; echo "---"; done | kc apply -f - >/dev/null
    have=$size
    wait_running "$size" 1800 || { echo "=== $size RSS: not all Running after creation, stopping here"; break; }
    echo "=== $size RSS of 3 created and Running in $(($(date +%s) - t0)) s"
    sleep 30
    measure_idle "$size RSS"

    boot=$((boot + 1))
    say "lights-out $boot with $size RSS"
    snap "$w/lo-$boot-0.json"
    python3 "$here/scale_report.py" cpu "$w/cpu-$boot-0.json" "$w/rssd.pids" "${pids[1]}" "${pids[0]}"
    kill -USR1 "$cri_pid" "$sim_pid"
    ok=1
    sleep 10
    c=$(conns "lights-out + 10 s")
    wait_running "$size" 1800 || ok=0
    snap "$w/lo-$boot-1.json"
    python3 "$here/scale_report.py" cpu "$w/cpu-$boot-1.json" "$w/rssd.pids" "${pids[1]}" "${pids[0]}"
    sleep 5
    echo "=== lights-out with $size RSS of 3 ($((size * 3)) members), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$c"
    python3 "$here/scale_report.py" lights "$w/events.log" "$boot" || true
    # Members stopped by self-fencing (agents log each at warn) since the run began: the API server's
    # overload must not look like this node's isolation.
    echo "self-fenced so far: $(cat "$w"/logs/rssd-node-*.log | grep -c 'self-fencing pod ' || true) member(s) by $(grep -l 'self-fencing pod ' "$w"/logs/rssd-node-*.log 2>/dev/null | wc -l) agent(s); $(grep -l 'asking the other agents' "$w"/logs/rssd-node-*.log 2>/dev/null | wc -l) agent(s) went past the fence timeout without an answer from the API server"
    python3 "$here/scale_report.py" probes "$w/rssd.pids" || true
    python3 "$here/scale_report.py" cpu-window "$w/cpu-$boot-0.json" "$w/cpu-$boot-1.json"
    python3 "$here/scale_report.py" delta "$w/lo-$boot-0.json" "$w/lo-$boot-1.json"
    out=$(python3 "$here/scale_report.py" audit-window "$w/audit.log" "$w/lo-$boot-0.json" "$w/lo-$boot-1.json")
    echo "$out"
    # Net of idle: the window's requests less the idle rate measured before it, per member.
    echo "$out" | sed -n 's|^rssd requests: \([0-9]*\) in \([0-9.]*\) s = .*|\1 \2|p' |
        awk -v idle="${idle_rate:-0}" -v m=$((size * 3)) '{printf "rssd requests net of idle (%s/s): %.0f, per member %.1f (all in the window: %.1f per member)\n", idle, $1 - idle * $2, ($1 - idle * $2) / m, $1 / m}'
    python3 "$here/scale_report.py" procs "$w/rssd.pids" "$(echo "$out" | sed -n 's/^leader: \([^ ]*\).*/\1/p')" | grep -v '^CPU'
    kill -USR2 "$cri_pid"
    sleep 1
    echo "hooks run (all lights-outs so far): $(tr '\n' ' ' <"$w/cri/hooks.txt")"
    [ "$ok" = 1 ] || { echo "=== stopping: not every RSS came back"; break; }
done
echo "=== apiserver VmRSS $(grep VmRSS "/proc/${pids[1]}/status" | awk '{print $2/1024 " MB"}'), etcd VmRSS $(grep VmRSS "/proc/${pids[0]}/status" | awk '{print $2/1024 " MB"}')"
echo "=== done $(date -u +%FT%TZ)"
