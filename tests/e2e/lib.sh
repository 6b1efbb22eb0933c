# lib.sh -- shared helpers of the rssd end-to-end tests, demo and benchmark (sourced): world, deploy/, waits, hooks logs.
# shellcheck shell=bash
#
# One private world per run (RSS_WORLD_DIR under /tmp), torn down by an EXIT trap whatever happens.
# Real kubectl (fresh --cache-dir, the dispatcher caches discovery per server) for everything a user
# would do; the hooks logs on the claims' host directories are the ground truth of what ran.
# Every wait has an upper bound and prints what it last saw when it gives up; nothing asserts on
# elapsed time (timings are printed by the demo and tests/bench/bench_recovery.sh).

e2e_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$e2e_here/../.." && pwd)
# shellcheck source=../lib/assert.sh
source "$repo/tests/lib/assert.sh"
# fail (a scenario runs in a subshell of run_scenarios: fail ends that scenario) shows the world's state.
ASSERT_ON_FAIL=diagnostics
WORLD=$repo/tests/sim/world/world
export RSS_BUILD_DIR=${RSS_BUILD_DIR:-$repo/build}
case $RSS_BUILD_DIR in /*) ;; *) RSS_BUILD_DIR=$repo/$RSS_BUILD_DIR ;; esac
E2E_TMP=$(mktemp -d /tmp/rss-e2e.XXXXXX)
RSS_WORLD_DIR=${RSS_WORLD_DIR_OVERRIDE:-$(mktemp -d /tmp/rsse.XXXXXX)}
export RSS_WORLD_DIR
RSSD_NS=rssd-system
NS=default
E2E_KEEP=${E2E_KEEP:-0}
# The RBAC manifest e2e_up applies (tests/e2e/rbac_minimal.sh gives it deploy/rbac.yaml less one rule).
E2E_RBAC=${E2E_RBAC:-$repo/deploy/rbac.yaml}
E2E_BG_PIDS=()

# Short election timings for the world (lease duration / renew deadline / retry period, seconds).
E2E_LEASE=${E2E_LEASE:-3s}
E2E_RENEW=${E2E_RENEW:-2s}
E2E_RETRY=${E2E_RETRY:-500ms}
# RSS_E2E_SANITIZER_DIR: set by tests/run.sh's sanitized stage, whose rssd image is built with
# ASan+UBSan (deploy/image/build.sh --sanitize). The containerized rssd does not see the host's
# ASAN_OPTIONS, so the DaemonSet gets its own, writing reports into this host directory (mounted in
# every container at /rss-sanitizers); at teardown the agents are stopped through SIGTERM, so they
# exit through their normal path and LeakSanitizer reports before the world goes.
RSS_E2E_SANITIZER_DIR=${RSS_E2E_SANITIZER_DIR:-}
# The agents' heartbeat period (--heartbeat-period): the world's short timing, so that the short fence
# timeouts the suites set stay above 3 periods and lights-outs do not wait out 50 s heartbeat Leases;
# empty = rssd's default (10 s).
E2E_HEARTBEAT=${E2E_HEARTBEAT-2s}
# Renewals missed before the leader calls a node silent (--heartbeat-misses); empty = rssd's default (5).
E2E_HEARTBEAT_MISSES=${E2E_HEARTBEAT_MISSES:-}
# The agents' fence timeout (--fence-timeout); empty = rssd's default (30 s).
E2E_FENCE=${E2E_FENCE:-}

now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
now_ms() { date +%s%3N; }
say() { echo "[$(date -u +%H:%M:%S)] $*"; }

# bg CMD...: a background helper (a watch) we own; killed by pid at teardown.
bg() {
    "$@" &
    E2E_BG_PIDS+=($!)
}

e2e_teardown() {
    local rc=$? p
    for p in "${E2E_BG_PIDS[@]}"; do
        kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    if [ "$E2E_KEEP" = 1 ] && [ -e "$RSS_WORLD_DIR/.rss-world" ]; then
        rm -rf "$E2E_TMP"
        return $rc
    fi
    if [ -e "$RSS_WORLD_DIR/.rss-world" ]; then
        [ -z "$RSS_E2E_SANITIZER_DIR" ] || [ -z "$KC" ] || stop_rssd_gracefully
        "$WORLD" down >/dev/null 2>&1 || "$WORLD" down || true
    fi
    rmdir "$RSS_WORLD_DIR" 2>/dev/null || true
    rm -rf "$E2E_TMP"
    return $rc
}
trap e2e_teardown EXIT
trap 'exit 130' INT TERM

KC=
k() { kubectl --kubeconfig "$KC" --cache-dir "$E2E_TMP/kcache" --request-timeout=15s "$@"; }

# diagnostics: what a failure report needs (status, events, hooks logs, rssd logs), to stderr.
diagnostics() {
    [ -e "$RSS_WORLD_DIR/.rss-world" ] || return 0
    set +e # best effort: show everything we can, whatever fails
    {
        echo "---- diagnostics ($(now))"
        k get nodes 2>&1 | sed 's/^/  /'
        k get pods -A -o wide 2>&1 | sed 's/^/  /'
        k get rss -A -o wide 2>&1 | sed 's/^/  /'
        local r
        for r in $(k get rss -n "$NS" -o name 2>/dev/null); do
            echo "  -- $r status:"
            k get "$r" -n "$NS" -o json 2>/dev/null | jq -c '.status | del(.conditions)' | cut -c1-3000 | sed 's/^/  /'
        done
        echo "  -- events (last 25):"
        k get events -n "$NS" -o json 2>/dev/null | jq -r '.items | sort_by(.lastTimestamp // .metadata.creationTimestamp)
            | .[-25:][] | "  \(.lastTimestamp // "-") \(.type) \(.reason) \(.message)"' 2>/dev/null
        echo "  -- leader lease:"
        k get lease rssd-leader -n "$RSSD_NS" -o json 2>/dev/null | jq -c .spec | sed 's/^/  /'
        # A member Pending on its claim (seen once in the real world: 2 minutes, its pod never scheduled).
        echo "  -- claims and volumes:"
        k get pvc -n "$NS" -o wide 2>&1 | sed 's/^/  /'
        k get pv -o wide 2>&1 | sed 's/^/  /'
        [ -s "$RSS_WORLD_DIR/k8s/provisioner.log" ] && tail -n 10 "$RSS_WORLD_DIR/k8s/provisioner.log" | sed 's/^/  provisioner: /'
        echo "  -- hooks logs (last 30 lines, all members, by time):"
        hooks_all | tail -n 30 | sed 's/^/  /'
        local f
        for f in "$RSS_WORLD_DIR"/nodes/*/kubelet/hostproc/*.log "$RSS_WORLD_DIR"/nodes/*/kubelet/logs/"${RSSD_NS}"_*/rssd/*.log; do
            [ -s "$f" ] || continue
            echo "  -- ${f#"$RSS_WORLD_DIR"/} (last 15)"
            tail -n 15 "$f" | cut -c1-300 | sed 's/^/    /'
        done
    } >&2
}

note() { echo "  - $*"; }

# ---- the world and deploy/

rssd_binary() { echo "$RSS_BUILD_DIR/nodeagent/rssd"; }

# rssd_mode: how the world runs rssd (tests/sim/world/world rssd-mode): container (from its image, as
# on a cluster) or host-process (the fallback: $RSS_BUILD_DIR/nodeagent/rssd on the host).
rssd_mode() { cat "$RSS_WORLD_DIR/rssd-mode" 2>/dev/null || echo host-process; }
# world_flavour: kubesim, or real (tests/realk8s/world-real: real apiserver, controllers and kubelets).
world_flavour() { cat "$RSS_WORLD_DIR/flavour" 2>/dev/null || echo kubesim; }
# pod_net CMD...: CMD where the pods' addresses are reachable: the host in the kubesim world (pods on the
# host network), the world's network namespace in the real one (pods on CNI bridges there).
pod_net() {
    if [ "$(world_flavour)" = real ]; then nsenter --net="$RSS_WORLD_DIR/ns/net" "$@"; else "$@"; fi
}

# daemonset_for_world FILE: deploy/daemonset.yaml adapted to the world, written to FILE. The election
# timings are shortened when rssd has the flags, so lights-outs do not wait out 15 s leases. In
# container mode nothing else changes (the world kubelet resolves the hostPaths in each node's own
# root, and each node has an address of its own for the health port). As host processes (the
# fallback, docs/testing.md) the kubelet passes the node's CONTAINER_RUNTIME_ENDPOINT, so a manifest's
# --cri-endpoint goes; the agents share the host's /run, so the fence state goes to a directory of the
# world's, and the health port is 0 (any free port) as before.
daemonset_for_world() {
    local out=$1 help extra=()
    help=$("$(rssd_binary)" --help 2>&1 || true)
    grep -q -- '--lease-duration' <<<"$help" && extra+=("--lease-duration=${E2E_LEASE}")
    grep -q -- '--renew-deadline' <<<"$help" && extra+=("--renew-deadline=${E2E_RENEW}")
    grep -q -- '--retry-period' <<<"$help" && extra+=("--retry-period=${E2E_RETRY}")
    [ -z "${E2E_FENCE:-}" ] || extra+=("--fence-timeout=${E2E_FENCE}")
    [ -z "${E2E_HEARTBEAT:-}" ] || ! grep -q -- '--heartbeat-period' <<<"$help" ||
        extra+=("--heartbeat-period=${E2E_HEARTBEAT}")
    [ -z "$E2E_HEARTBEAT_MISSES" ] || extra+=("--heartbeat-misses=${E2E_HEARTBEAT_MISSES}")
    # --state-dir: the host processes share one /run; each world keeps its agents' fence state in its
    # own directory (the file names carry the node).
    local a sedargs=(-e '/--cri-endpoint=/d')
    [ "$(rssd_mode)" = container ] || sedargs+=(-e 's/--health-port=8476/--health-port=0/'
        -e "s|--state-dir=/run/rssd|--state-dir=$RSS_WORLD_DIR/rssd-state|")
    for a in "${extra[@]}"; do
        sedargs+=(-e "/--health-port=/a\\        - $a")
    done
    if [ -n "$RSS_E2E_SANITIZER_DIR" ] && [ "$(rssd_mode)" = container ]; then
        # One file per pod (the sanitizers append the PID, 1 in every container; a later rssd of the
        # same pod name overwrites an earlier report, but any file fails the run). One log_path in
        # all three: they share it in one process, the last options parsed (LSAN_OPTIONS) winning.
        # shellcheck disable=SC2016 # $(POD_NAME) is for the kubelet to expand
        sedargs+=(-e '/^          value: "2"$/a\        - name: ASAN_OPTIONS\n          value: "log_path=/rss-sanitizers/$(POD_NAME):detect_leaks=1"\n        - name: UBSAN_OPTIONS\n          value: "log_path=/rss-sanitizers/$(POD_NAME):print_stacktrace=1"\n        - name: LSAN_OPTIONS\n          value: "log_path=/rss-sanitizers/$(POD_NAME)"')
    fi
    sed "${sedargs[@]}" "$repo/deploy/daemonset.yaml" >"$out"
    # The anchor above is MALLOC_ARENA_MAX's value: if the manifest changes, say so rather than run a
    # sanitized rssd whose reports go nowhere.
    [ -z "$RSS_E2E_SANITIZER_DIR" ] || [ "$(rssd_mode)" != container ] || grep >/dev/null ASAN_OPTIONS "$out" ||
        fail "could not add the sanitizer options to the DaemonSet (anchor 'value: \"2\"' not found)"
}

# stop_rssd_gracefully: (sanitized run) every rssd pod deleted with its grace period, the DaemonSet
# orphaning them first so none comes back: the world kubelet stops each container with SIGTERM, and
# rssd exits through its normal path (LeakSanitizer runs at exit). `world down` alone would remove the
# sandboxes, which kills the containers. An rssd still running at the end of the grace period
# (30 s) is killed and LeakSanitizer never runs: that leaves a note in the reports' directory, so
# the sanitized run fails rather than passing with its leak check skipped.
stop_rssd_gracefully() {
    local t0 took
    t0=$(date +%s)
    k delete daemonset rssd -n "$RSSD_NS" --cascade=orphan >/dev/null 2>&1 || true
    k delete pods -n "$RSSD_NS" -l app.kubernetes.io/name=rssd --timeout=90s >/dev/null 2>&1 || true
    took=$(($(date +%s) - t0))
    [ "$took" -lt 30 ] ||
        echo "e2e: stopping the rssd pods took ${took} s (grace 30 s): some rssd did not exit on SIGTERM, so their exit-time (leak) reports are missing" |
        tee "$RSS_E2E_SANITIZER_DIR/rssd-stop-$(date +%s).note" >&2
}

# e2e_up NODES: a world with rssd on every node, deploy/ applied as docs/deploy.md says.
e2e_up() {
    local nodes=$1
    [ -x "$(rssd_binary)" ] || fail "rssd is not built ($(rssd_binary)); build it or set RSS_BUILD_DIR"
    local san=()
    [ -z "$RSS_E2E_SANITIZER_DIR" ] || san=(--extra-mount "$RSS_E2E_SANITIZER_DIR:/rss-sanitizers")
    timeout 180 "$WORLD" up --nodes "$nodes" --node-grace 3 "${san[@]}" >"$E2E_TMP/world-up.log" 2>&1 ||
        { cat "$E2E_TMP/world-up.log" >&2; fail "world up --nodes $nodes"; }
    KC=$("$WORLD" kubeconfig)
    export KUBECONFIG=$KC
    if [ "$(rssd_mode)" = host-process ]; then
        grep -q "localhost/rss/rssd:dev=" "$RSS_WORLD_DIR/nodes/node-1/kubelet.args" ||
            fail "the world did not map localhost/rss/rssd:dev to rssd (kubelet.args)"
    fi
    daemonset_for_world "$E2E_TMP/daemonset.yaml"
    k apply -f "$repo/deploy/namespace.yaml" -f "$repo/deploy/crd.yaml" -f "$E2E_RBAC" -f "$repo/deploy/flowcontrol.yaml" \
        -f "$E2E_TMP/daemonset.yaml" >"$E2E_TMP/apply.log" 2>&1 ||
        { cat "$E2E_TMP/apply.log" >&2; fail "kubectl apply deploy/"; }
    k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org >/dev/null ||
        fail "CRD not Established"
    wait_until 60 "$nodes rssd pods Running" rssd_pods_ready "$nodes"
    wait_until 60 "a leader holds rssd-leader" leader_node
    wait_until 30 "$nodes heartbeat Leases" heartbeats_are "$nodes"
}

rssd_pods_json() { k get pods -n "$RSSD_NS" -l app.kubernetes.io/name=rssd -o json; }
rssd_pods_ready() {
    local n
    n=$(rssd_pods_json | jq '[.items[] | select(.metadata.deletionTimestamp == null and .status.phase == "Running"
        and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length')
    echo "ready rssd pods: $n"
    [ "$n" = "$1" ]
}
heartbeats_are() {
    local n
    n=$(k get leases -n "$RSSD_NS" -o json | jq '[.items[] | select(.metadata.name | startswith("rssd-node-"))] | length')
    echo "heartbeat leases: $n"
    [ "$n" -ge "$1" ]
}
# rssd_pod NODE: the rssd pod on NODE; rssd_pid NODE: the pid of its rssd process on the host (the
# host process, or the container's task, rssd being its PID 1).
rssd_pod() { rssd_pods_json | jq -r --arg n "$1" '.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null) | .metadata.name' | sed -n 1p; }
rssd_pid() {
    local id
    id=$(rssd_pods_json | jq -r --arg n "$1" '.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null)
        | .status.containerStatuses[0].containerID // ""' | sed -n 1p)
    case $id in
    hostprocess://*) echo "${id#hostprocess://}" ;;
    containerd://*)
        ctr --address "$RSS_WORLD_DIR/nodes/$1/containerd/containerd.sock" -n k8s.io tasks ls 2>/dev/null |
            awk -v c="${id#containerd://}" '$1 == c && $3 == "RUNNING" {print $2; f = 1} END {exit !f}'
        ;;
    *) return 1 ;;
    esac
}
# rssd_state NODE: the fence state file of the rssd on NODE (its --state-dir on the host).
rssd_state() {
    if [ "$(rssd_mode)" = container ]; then
        echo "$RSS_WORLD_DIR/nodes/$1/root/run/rssd/fence-$1.json"
    else
        echo "$RSS_WORLD_DIR/rssd-state/fence-$1.json"
    fi
}
# rssd_logs [NODE]: what the rssd on NODE (every node without argument) logged, every instance, as
# rssd wrote it (a container's CRI log prefix "TIME STREAM TAG " removed).
rssd_logs() {
    local n f
    for n in ${1:-$("$WORLD" nodes)}; do
        for f in "$RSS_WORLD_DIR/nodes/$n/kubelet/hostproc/"*_rssd.log; do
            [ -e "$f" ] && cat "$f"
        done
        # Restart count order (a glob puts 10.log before 9.log).
        for f in $(ls -d "$RSS_WORLD_DIR/nodes/$n/kubelet/logs/${RSSD_NS}_"*/rssd/*.log 2>/dev/null | sort -V); do
            sed -E 's/^[^ ]+ (stdout|stderr) [FP] //' "$f"
        done
    done
    return 0
}
# heal_on_exit NODE: a scenario (a subshell of run_scenarios) that fails while NODE is cut off heals it
# on the way out; without it one failure left the node partitioned and failed every scenario after it.
# `trap - EXIT` after the scenario's own heal. Never in the top shell: its EXIT trap is the teardown.
heal_on_exit() {
    [ "$BASH_SUBSHELL" -gt 0 ] || return 0
    # shellcheck disable=SC2064 # the node now, not at exit
    trap "\"\$WORLD\" heal '$1' >/dev/null 2>&1 || true" EXIT
}
# undo_on_exit CMD: CMD runs (eval'd, errors ignored) when the scenario's subshell exits, whichever way, as
# heal_on_exit does for a cut: a failure must not leave a node frozen or cordoned, a knob set or a writer
# running for the scenarios after it. Never in the top shell (its EXIT trap is the teardown).
UNDO=()
undo_on_exit() {
    [ "$BASH_SUBSHELL" -gt 0 ] || return 0
    UNDO+=("$1")
    trap 'for u in "${UNDO[@]}"; do eval "$u" >/dev/null 2>&1 || true; done' EXIT
}

# lead_elsewhere NODE: the leadership moved off NODE (its rssd restarted; a few tries: the rssd the DaemonSet
# starts again there may take the released Lease itself), then every rssd pod Ready and a few seconds for
# the agents to re-learn their peers (the failsafe needs them).
lead_elsewhere() {
    local n=$1 h0 nodes
    nodes=$("$WORLD" nodes | wc -l)
    for _ in 1 2 3 4 5; do
        [ "$(leader_node)" = "$n" ] || return 0
        h0=$(leader_holder)
        k delete pod "$(rssd_pod "$n")" -n "$RSSD_NS" --wait=false >/dev/null || fail "delete rssd pod on $n"
        taken() { local h; h=$(leader_holder) && [ -n "$h" ] && [ "$h" != "$h0" ]; }
        wait_until 60 "a new holder of the leader Lease (was $h0)" taken
        wait_until 60 "$nodes rssd pods Running" rssd_pods_ready "$nodes"
        sleep 5
    done
    [ "$(leader_node)" != "$n" ] || fail "the leadership stays on $n"
}

# input_has TEXT: whether standard input contains TEXT, read to its end. `... | grep -q` stops reading at the
# first match, and under pipefail the writer's SIGPIPE then fails the test: a large log (rssd_logs) is
# then "not found" exactly when it matched early (a CI run, restart_cutoff).
input_has() {
    local s
    s=$(cat)
    [[ $s == *"$1"* ]]
}
rssd_pids() { local n; for n in $("$WORLD" nodes); do rssd_pid "$n" || true; done; }
lease_json() { k get lease rssd-leader -n "$RSSD_NS" -o json 2>/dev/null; }
# node_metrics NODE: the /metrics text of NODE's rssd (its address from its heartbeat Lease), or fail.
node_metrics() {
    local addr
    addr=$(k get lease "rssd-node-$1" -n "$RSSD_NS" -o json |
        jq -r '.metadata.annotations["rss.clusterlabs.org/peer"] // "{}" | fromjson | .address // ""')
    [ -n "$addr" ] || { echo "$1: no address in its heartbeat Lease"; return 1; }
    pod_net curl -sS -m 5 "http://$addr/metrics"
}
# leader_node: the node of the current leader (from the Lease holder, "<node>..." identities), or fail.
leader_holder() { lease_json | jq -r '.spec.holderIdentity // ""'; }
leader_node() {
    local h n
    h=$(leader_holder)
    [ -n "$h" ] || {
        echo "no holder"
        return 1
    }
    for n in $("$WORLD" nodes); do
        case $h in "$n" | "$n"[!0-9]*) echo "$n"; return 0 ;; esac
        case $h in *rssd-"$n" | *rssd-"$n"[!0-9]*) echo "$n"; return 0 ;; esac
    done
    echo "holder '$h' names no node"
    return 1
}
lease_transitions() { lease_json | jq -r '.spec.leaseTransitions // 0'; }

# ---- the RSS and its members

# rss_manifest NAME REPLICAS ANTI [minimumMembers]: apps/dummy/rss.yaml with another name/size/affinity.
rss_manifest() {
    local name=$1 replicas=$2 anti=$3
    sed -e "s/^  name: dummy$/  name: $name/" -e "s/^  replicas: 3$/  replicas: $replicas/" \
        -e "s/^    antiAffinity: true$/    antiAffinity: $anti/" "$repo/apps/dummy/rss.yaml"
}
rss_json() { k get rss "$1" -n "$NS" -o json; }
# krss ARGS...: kubectl rss (this build's) on the world, in the test namespace.
krss() { "$RSS_BUILD_DIR/nodeagent/plugin/kubectl-rss" --kubeconfig "$KC" --rssd-namespace "$RSSD_NS" -n "$NS" "$@"; }
rss_phase() { rss_json "$1" | jq -r '.status.phase // ""'; }
# sts_name RSS: the StatefulSet rssd made for it (rss-<name>); member pods are <sts>-<ordinal>.
sts_name() { echo "rss-$1"; }
member() { echo "$(sts_name "$1")-$2"; }
claim_dir() { echo "$RSS_WORLD_DIR/pv/$NS/data-$(member "$1" "$2")"; }
members_json() { k get pods -n "$NS" -l "rss.clusterlabs.org/name=$1" -o json; }
member_node() { k get pod "$(member "$1" "$2")" -n "$NS" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
member_uid() { k get pod "$(member "$1" "$2")" -n "$NS" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
# member_exec RSS ORD CONTAINER CMD...: ExecSync in the member's container (found on its node); stdout only.
member_exec() {
    local rss=$1 o=$2 c=$3 node id
    shift 3
    node=$(member_node "$rss" "$o") && [ -n "$node" ] || return 1
    id=$("$WORLD" crictl "$node" find "$NS" "$(member "$rss" "$o")" "$c" 2>/dev/null) || return 1
    "$WORLD" crictl "$node" exec --timeout 10 "$id" "$@" 2>/dev/null
}

# rss_running NAME N: phase Running, N ready members, N primaries in status.members.primary, and N
# running members by the hooks' own status (the last status line of each member says 8).
rss_running() {
    local name=$1 n=$2 s
    s=$(rss_json "$name") || return 1
    jq -c '{phase: .status.phase, ready: (.status.members.ready // [] | length),
        primary: (.status.members.primary // [] | length), message: .status.message}' <<<"$s"
    jq -e --argjson n "$n" '.status.phase == "Running" and ((.status.members.ready // []) | length) == $n
        and ((.status.members.primary // []) | length) == $n' <<<"$s" >/dev/null
}

# set_sequence NAME ORDINAL N: member's data holds exactly N writes (from the host, as the README says).
set_sequence() {
    local d
    d=$(claim_dir "$1" "$2")
    mkdir -p "$d"
    if [ "$3" -gt 0 ]; then seq 1 "$3" >"$d/writes"; else : >"$d/writes"; fi
}

# hooks_all [RSS]: every hooks.log line of the RSS's members (all RSSes without argument), by time.
hooks_all() {
    local pat=data-rss-${1:-}
    [ -n "${1:-}" ] && pat="data-$(sts_name "$1")-"
    cat "$RSS_WORLD_DIR/pv/$NS/$pat"*/hooks.log 2>/dev/null | sort -s -k1,1
}
# hooks_since MARK [RSS]: the lines strictly after time MARK (as printed by now()).
hooks_since() { hooks_all "${2:-}" | awk -v m="$1" '$1 > m'; }
# hook_lines MARK RSS HOOK...: lines after MARK of the given hooks.
hook_lines() {
    local mark=$1 rss=$2
    shift 2
    local re
    re=$(
        IFS='|'
        echo "$*"
    )
    hooks_since "$mark" "$rss" | awk -v re="^($re)\$" '$3 ~ re'
}
count_lines() { if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l; fi; }
# Lines that do not match the documented format are a test failure of their own.
hooks_malformed() {
    hooks_all "${1:-}" | grep -Ev '^[0-9-]{10}T[0-9:]{8}\.[0-9]{6}Z \S+ (sequence|seed|primary|secondary|status|stop|detach) args=\[[^]]*\]( out=\S*)? rc=([0-9]+|hang)$' || true
}

# events REASON [RSS]: "type reason message" of the Events with that reason in NS (involvedObject RSS).
events() {
    k get events -n "$NS" -o json | jq -r --arg r "$1" --arg o "${2:-}" '.items[] | select(.reason == $r and
        ($o == "" or .involvedObject.name == $o)) | "\(.type) \(.reason) \(.message)"'
}
# events_since MARK REASON [RSS]: like events, only those last seen at or after MARK (second resolution).
events_since() {
    local m=${1%.*}
    m=${m%Z}Z
    k get events -n "$NS" -o json | jq -r --arg m "$m" --arg r "$2" --arg o "${3:-}" '.items[] | select(.reason == $r
        and ($o == "" or .involvedObject.name == $o)
        and ((.lastTimestamp // .eventTime // .metadata.creationTimestamp // "") | sub("\\.[0-9]+"; "")) >= $m)
        | "\(.type) \(.reason) \(.message)"'
}

# ---- a failover under spec.failover PromoteStandby (rule 15), judged by the hooks logs: one primary LOST,
#      the others its standbys (safety_failover.sh, postgres.sh)

# peer_dns RSS ORD: member ORD's name as the hooks get it in their arguments (<pod>.<service>).
peer_dns() { echo "$(member "$1" "$2").$(k get sts "$(sts_name "$1")" -n "$NS" -o jsonpath='{.spec.serviceName}')"; }
# others_of RSS ORD: the ordinals of the RSS's other members (spec.replicas), one a line.
others_of() {
    local o n
    n=$(rss_json "$1" | jq -r '.spec.replicas')
    for ((o = 0; o < n; o++)); do [ "$o" = "$2" ] || echo "$o"; done
}
# stops_of MARK RSS ORD...: the `stop` lines of those members since MARK.
stops_of() {
    local mark=$1 rss=$2 o re=""
    shift 2
    for o in "$@"; do re+="${re:+|} $(member "$rss" "$o") "; done
    hook_lines "$mark" "$rss" stop | grep -E "$re" || true
}
# failover_ended MARK RSS LOST: (a wait) the first successful `seed` since MARK, or anything that rules a
# clean failover out: a standby stopped, a Warning FailoverFallback. no_standby_stopped and promoted_one judge.
failover_ended() {
    # shellcheck disable=SC2046 # one ordinal a word
    [ -n "$(hook_lines "$1" "$2" seed | grep 'rc=0$' || true)" ] || [ -n "$(stops_of "$1" "$2" $(others_of "$2" "$3"))" ] ||
        [ -n "$(events_since "$1" FailoverFallback "$2")" ] ||
        { echo "no promotion yet; status.failover $(rss_json "$2" | jq -c '.status.failover // {}')"; return 1; }
}
# no_standby_stopped MARK RSS LOST: fails when a standby of LOST was stopped or FailoverFallback came since MARK.
no_standby_stopped() {
    local st fb
    # shellcheck disable=SC2046 # one ordinal a word
    st=$(stops_of "$1" "$2" $(others_of "$2" "$3"))
    fb=$(events_since "$1" FailoverFallback "$2")
    [ -z "$fb" ] || fail "Warning FailoverFallback: $fb (stops: ${st:-none})"
    [ -z "$st" ] || fail "a standby was stopped: $st"
}
# promoted_one MARK RSS LOST: prints the ordinal of the one member started as primary since MARK, a former
# standby of LOST; fails on none, on more, and on LOST itself.
promoted_one() {
    local seeds s
    seeds=$(hook_lines "$1" "$2" seed primary)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" rc=0" ]] || fail "one promotion expected since the fault: ${seeds:-none}"
    s=$(awk '{ print $2 }' <<<"$seeds")
    s=${s##*-}
    [ "$s" != "$3" ] || fail "the lost primary $(member "$2" "$3") was started again as primary: $seeds"
    echo "$s"
}
# detached_first MARK RSS LOST PROMOTED: (rule 19) the promoted member, and every other standby of LOST that
# ran `sequence` since MARK, ran `detach` first and it exited 0: from their own hooks logs, each standby's
# first detach/sequence line since MARK is a detach with rc=0, and the promoted one has one.
detached_first() {
    local o first
    for o in $(others_of "$2" "$3"); do
        first=$(hook_lines "$1" "$2" detach sequence | grep " $(member "$2" "$o") " | sed -n 1p || true)
        if [ -z "$first" ]; then
            [ "$o" != "$4" ] || fail "the promoted member $o gave no position (no detach or sequence in its hooks log)"
            continue
        fi
        [[ $first == *" detach "*" rc=0" ]] ||
            fail "member $o's position was not given after a detach that exited 0 (rule 19): $first"
    done
}
# secondary_of MARK RSS ORD NEW: member ORD started as a secondary of member NEW alone since MARK (a
# repoint, a rejoin).
secondary_of() {
    hook_lines "$1" "$2" secondary | grep " $(member "$2" "$3") secondary args=\[$(peer_dns "$2" "$4")\] rc=0$" >/dev/null
}

# The member records (docs/protocol.md): ConfigMap "$NS.<pod>" in rssd-system holds desired/observed,
# each with the pod uid it was written for. A value for another uid belongs to an older pod: absent.
# record POD: the record as JSON ({} when there is none).
record() { k get cm "$NS.$1" -n "$RSSD_NS" -o json 2>/dev/null || echo '{}'; }
# record_field POD KEY: data.KEY of the pod's record as JSON, when data.KEYFor is the pod's uid ({} else).
record_field() {
    local uid
    uid=$(k get pod "$1" -n "$NS" -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
    record "$1" | jq -c --arg u "$uid" --arg k "$2" \
        'if $u != "" and .data[$k + "For"] == $u then (.data[$k] // "{}" | fromjson) else {} end'
}
# observed POD / desired POD: the member's protocol records as JSON ({} when absent).
observed() { record_field "$1" observed; }
desired() { record_field "$1" desired; }
# records_json RSS: the List of the RSS's member records.
records_json() {
    k get cm -n "$RSSD_NS" -l "rss.clusterlabs.org/namespace=$NS,rss.clusterlabs.org/rss=$1" -o json
}
# history_floor RSS: the highest sequence rssd itself started a primary of RSS from (its records' primary
# marks and status.lastRecovery; docs/rules.md rule 3): a recovery that goes on without members never seeds
# below it. A scenario that writes the members' data by hand and then goes on without one builds on it, as
# a real application's history only grows.
history_floor() {
    local a b
    a=$(records_json "$1" | jq '[.items[].data.primary // empty | fromjson | (.sequence // "0") | tonumber] | max // 0')
    b=$(rss_json "$1" | jq '.status.lastRecovery.sequence // "0" | tonumber')
    echo $((a > b ? a : b))
}
# last_action_ids RSS: "pod id result" of every member's observed lastAction, sorted.
last_action_ids() {
    local recs
    recs=$(records_json "$1")
    members_json "$1" | jq -r --argjson recs "$recs" '.items[] | .metadata as $m
        | ([$recs.items[] | select(.metadata.labels["rss.clusterlabs.org/member"] == $m.name
            and .data.observedFor == $m.uid) | .data.observed][0] // "{}") | fromjson
        | $m.name + " " + (.lastAction.id // "-") + " " + (.lastAction.result // "-")' | sort
}
# power_off_all / power_on_all: a lights-out in two halves, so a test can change the data in between.
# power_off_all: every node off at once, as in a power cut. One after the other, the last node's agent
# outlives the others by seconds (on the real world a power-off takes about a second, more on a busy
# machine): it sees its peers go, may take the leadership and see its member run as the last primary, and
# the recovery then waits the dead window for that member (rule 12), which a lights-out test does not mean.
power_off_all() {
    local n pids=() bad=0 p
    for n in $("$WORLD" nodes); do
        "$WORLD" power-off "$n" >"$E2E_TMP/power-off-$n.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    [ $bad = 0 ] || fail "power-off: $(cat "$E2E_TMP"/power-off-*.log)"
}
power_on_all() { # in parallel, as after a power cut
    local n pids=() bad=0 p
    for n in $("$WORLD" nodes); do
        "$WORLD" power-on "$n" >"$E2E_TMP/power-on-$n.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    [ $bad = 0 ] || fail "power-on: $(cat "$E2E_TMP"/power-on-*.log)"
}
# wait_heartbeats_expired: every agent's heartbeat Lease has run out (the nodes were off long enough
# for the leader to know their agents are gone, as after any real power cut).
heartbeats_expired() {
    k get leases -n "$RSSD_NS" -o json | jq -e '[.items[] | select(.metadata.name | startswith("rssd-node-"))
        | ((.spec.renewTime | sub("\\.[0-9]+"; "") | fromdateiso8601) + .spec.leaseDurationSeconds + 1) < now] | all' >/dev/null
}
wait_heartbeats_expired() { wait_until 60 "the agents' heartbeat Leases to expire" heartbeats_expired; }

# run_scenarios FIRST_IS_FATAL SCENARIO...: runs sc_<name> for each, each in a subshell with set -e;
# prints "PASS/FAIL name (seconds)" (a failing command that ended a scenario is named) and the closing "N passed, N failed" line; returns non-zero when any
# failed. FIRST_IS_FATAL=1 stops after a failing first scenario (the others build on it).
run_scenarios() {
    local fatal=$1 s rc t0 dt passed=0 failed=0 first=1 failed_names=()
    shift
    for s in "$@"; do
        say "== $s"
        t0=$(now_ms)
        set +e
        (
            # set -e ends a scenario at a failing command that fail() did not report: say which
            # (in this shell, not in a command substitution's), with the world's state as fail shows it.
            set -eE
            sc_pid=$BASHPID
            trap 'sc_rc=$?; [ "$BASHPID" != "$sc_pid" ] ||
                fail "exit $sc_rc from: $BASH_COMMAND (${BASH_SOURCE[0]##*/}:$LINENO)"' ERR
            "sc_$s"
        )
        rc=$?
        set -e
        dt=$((($(now_ms) - t0) / 100))
        if [ $rc = 0 ]; then
            passed=$((passed + 1))
            echo "PASS $s ($((dt / 10)).$((dt % 10)) s)"
        else
            failed=$((failed + 1))
            failed_names+=("$s")
            echo "FAIL $s ($((dt / 10)).$((dt % 10)) s)"
            [ "$fatal$first" = 11 ] && break
        fi
        first=0
    done
    echo "$passed passed, $failed failed${failed_names:+ (${failed_names[*]})}"
    [ $failed = 0 ]
}
