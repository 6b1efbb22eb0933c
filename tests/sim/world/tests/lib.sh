# lib.sh -- shared helpers of the world tests (sourced): a private world dir, API calls, waits, manifests.
#
# Every test gets its own RSS_WORLD_DIR, so tests never touch a world someone started by hand, and
# `world down` runs from the EXIT trap whatever happens. Waits poll with a generous upper bound;
# nothing asserts on elapsed time (timings live in tests/bench/bench_world.sh).
set -euo pipefail

lib_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$lib_here/../../../.." && pwd)
WORLD=$repo/tests/sim/world/world
export RSS_BUILD_DIR=${RSS_BUILD_DIR:-$repo/build}
RSS_WORLD_DIR=$(mktemp -d /tmp/rssw.XXXXXX)
export RSS_WORLD_DIR
IMAGE=localhost/rss/busybox:1

# shellcheck source=../../../lib/assert.sh
source "$repo/tests/lib/assert.sh"
# world_diagnostics: the world's state and the tail of every log, for fail (tests/lib/assert.sh).
world_diagnostics() {
    if [ -d "$RSS_WORLD_DIR" ] && [ -e "$RSS_WORLD_DIR/.rss-world" ]; then
        "$WORLD" status >&2 2>&1 || true
        local f
        # (the containers' own output too: a containerised rssd logs there)
        for f in "$RSS_WORLD_DIR"/*.log "$RSS_WORLD_DIR"/nodes/*/kubelet.log "$RSS_WORLD_DIR"/nodes/*/kubelet/logs/*/*/*.log; do
            [ -s "$f" ] || continue
            echo "--- $f" >&2
            tail -n 25 "$f" >&2
        done
    fi
}
ASSERT_ON_FAIL=world_diagnostics

world_cleanup() {
    "$WORLD" down || true
    rmdir "$RSS_WORLD_DIR" 2>/dev/null || true
}
trap world_cleanup EXIT

# api METHOD PATH [JSON]: a request to the world's API server; prints the body; fails on >= 400.
api() {
    local method=$1 path=$2 body=${3:-}
    local ks=$RSS_WORLD_DIR/kubesim
    local args=(-sS --max-time 20 -X "$method" --cacert "$ks/ca.crt"
        -H "Authorization: Bearer $(cat "$ks/token")" -H "Accept: application/json" -w '\n%{http_code}')
    [ -n "$body" ] && args+=(-H "Content-Type: ${CONTENT_TYPE:-application/json}" --data-binary "$body")
    local out code
    out=$(curl "${args[@]}" "https://127.0.0.1:$(cat "$ks/port")$path")
    code=${out##*$'\n'}
    out=${out%$'\n'*}
    if [ "$code" -ge 400 ]; then
        echo "$out" >&2
        return 1
    fi
    printf '%s\n' "$out"
}
merge_patch() { CONTENT_TYPE=application/merge-patch+json api PATCH "$1" "$2"; }

pods_json() { api GET "/api/v1/namespaces/default/pods?labelSelector=app%3D$1"; }
pod_get() { api GET "/api/v1/namespaces/default/pods/$1"; }
# Number of pods of app $1 that are Running and Ready.
ready_count() {
    pods_json "$1" | jq '[.items[] | select(.metadata.deletionTimestamp == null and .status.phase == "Running"
        and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}
ready_is() { [ "$(ready_count "$1")" = "$2" ]; }
container_ids() { pods_json "$1" | jq -r '.items[].status.containerStatuses[]?.containerID // empty'; }
# all_replaced APP N FILE: N pods of APP Ready, and none reports a container id listed in FILE (the
# ids before a power cut: a status from before the cut does not count).
all_replaced() {
    ready_is "$1" "$2" || return 1
    ! container_ids "$1" | grep >/dev/null -xF -f "$3"
}
pod_count_is() { [ "$(pods_json "$1" | jq '.items | length')" = "$2" ]; }
pod_node() { pod_get "$1" | jq -r '.spec.nodeName // ""'; }
pod_uid() { pod_get "$1" | jq -r .metadata.uid; }
pod_ready() {
    pod_get "$1" | jq -e '.status.phase == "Running" and any(.status.conditions[]?; .type == "Ready" and
        .status == "True")' >/dev/null
}
# The running container NAME of pod POD on its node, through the node's CRI (not the API).
cri_find() { # pod [container]
    local node
    node=$(pod_node "$1")
    [ -n "$node" ] || return 1
    "$WORLD" crictl "$node" find default "$1" "${2:-main}"
}
# cri_exec POD CMD...: runs CMD in the pod's container through the node's CRI ExecSync.
cri_exec() {
    local pod=$1 id
    shift
    id=$(cri_find "$pod") || return 1
    "$WORLD" crictl "$(pod_node "$pod")" exec "$id" "$@"
}

# sts_json NAME REPLICAS [anti]: a busybox StatefulSet with a PVC "data" at /data, the downward-API
# env rssd's hooks use, and (with "anti") required pod anti-affinity on kubernetes.io/hostname.
sts_json() {
    local name=$1 replicas=$2 anti=${3:-}
    jq -n --arg name "$name" --argjson replicas "$replicas" --arg image "$IMAGE" --arg anti "$anti" '{
      apiVersion: "apps/v1", kind: "StatefulSet",
      metadata: {name: $name, namespace: "default"},
      spec: {
        replicas: $replicas, serviceName: $name, podManagementPolicy: "Parallel",
        selector: {matchLabels: {app: $name}},
        template: {
          metadata: {labels: {app: $name}},
          spec: ({
            terminationGracePeriodSeconds: 5,
            containers: [{
              name: "main", image: $image,
              command: ["/bin/sh", "-c", "trap \"exit 0\" TERM; echo started $POD_NAME; sleep 3600 & wait"],
              env: [
                {name: "POD_NAME", valueFrom: {fieldRef: {fieldPath: "metadata.name"}}},
                {name: "POD_NAMESPACE", valueFrom: {fieldRef: {fieldPath: "metadata.namespace"}}},
                {name: "NODE_NAME", valueFrom: {fieldRef: {fieldPath: "spec.nodeName"}}},
                {name: "SERVICE_NAME", value: $name}
              ],
              volumeMounts: [{name: "data", mountPath: "/data"}]
            }]
          } + (if $anti == "anti" then {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
                {labelSelector: {matchLabels: {app: $name}}, topologyKey: "kubernetes.io/hostname"}]}}}
               else {} end))
        },
        volumeClaimTemplates: [{metadata: {name: "data"},
          spec: {accessModes: ["ReadWriteOnce"], resources: {requests: {storage: "1Gi"}}}}]
      }
    }'
}
create_sts() { api POST /apis/apps/v1/namespaces/default/statefulsets "$(sts_json "$@")" >/dev/null; }
scale_sts() { merge_patch "/apis/apps/v1/namespaces/default/statefulsets/$1" "{\"spec\":{\"replicas\":$2}}" >/dev/null; }

world_up() {
    "$WORLD" up "$@" || fail "world up $*"
}

# need_image_archive TOOL...: for the tests that run rssd from its image. Sets archive (RSS_IMAGE_ARCHIVE,
# default $RSS_BUILD_DIR/rssd-image.oci.tar, which tests/run.sh builds); exits 77 (ctest's skip) without
# it, and fails when a TOOL is missing.
need_image_archive() {
    archive=${RSS_IMAGE_ARCHIVE:-$RSS_BUILD_DIR/rssd-image.oci.tar}
    if [ ! -s "$archive" ]; then
        echo "SKIP: no image archive at $archive (build it: deploy/image/build.sh)"
        exit 77
    fi
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || fail "$tool is missing"
    done
}
