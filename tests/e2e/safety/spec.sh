# safety/spec.sh -- /metrics, an invalid spec, a StatefulSet rssd does not own.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
# metrics NODE: the /metrics text of the rssd on NODE (its address is in its heartbeat Lease).
metrics() {
    local addr
    addr=$(k get lease "rssd-node-$1" -n "$RSSD_NS" -o json |
        jq -r '.metadata.annotations["rss.clusterlabs.org/peer"] // "{}" | fromjson | .address // ""')
    [ -n "$addr" ] || return 1
    pod_net curl -sS -m 5 "http://$addr/metrics"
}
metric() { awk -v k="$2" '$1 == k {print $2}' <<<"$1"; }

# ---- 2e. /metrics: Prometheus text on every agent; the counters move with what happens
sc_metrics() {
    ensure_running
    local n node before after lt leaders=0
    lt=$(lease_transitions)
    for n in $("$WORLD" nodes); do
        after=$(metrics "$n") || fail "no /metrics from $n"
        grep -q '^# TYPE rssd_hook_duration_seconds histogram$' <<<"$after" || fail "$n: no hook histogram"
        [ "$(metric "$after" rssd_resident_memory_bytes)" -gt 1000000 ] || fail "$n: no resident memory"
        if [ "$(metric "$after" rssd_leader)" = 1 ]; then
            leaders=$((leaders + 1))
            [ "$(metric "$after" rssd_leader_epoch)" = "$lt" ] || fail "$n leads with another epoch than the Lease's $lt"
        fi
    done
    [ $leaders = 1 ] || fail "$leaders agents say they lead"
    node=$(member_node $R 2)
    before=$(metrics "$node")
    k delete pod "$(member $R 2)" -n "$NS" --wait=false >/dev/null
    local mark
    mark=$(now)
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 2) primary .* rc=0$"; }
    wait_until 90 "$(member $R 2) to rejoin" joined
    node=$(member_node $R 2)
    after=$(metrics "$node")
    local k1='rssd_hook_runs_total{hook="primary",result="ok"}'
    local b a
    b=$(metric "$before" "$k1")
    a=$(metric "$after" "$k1")
    [ "${a:-0}" -gt "${b:-0}" ] || fail "$node: the primary run was not counted (${b:-0} -> ${a:-0})"
    note "$node: $(grep -E '^rssd_hook_runs_total' <<<"$after" | tr '\n' ' ' | cut -c1-200)"
    ensure_running
}

# ---- 6. an RSS the schema (and its CEL rules, on a real apiserver) accepts but rssd cannot run: status
# Failed, Ready False and Stalled True with the reason (kubectl wait, kstatus), a Warning Event, nothing created
sc_invalid_spec() {
    local mark
    mark=$(now)
    rss_manifest bad 3 false | sed 's/^  reconcileInterval: .*/  reconcileInterval: 500ms/' |
        k apply -n "$NS" -f - >/dev/null || fail "apply the invalid RSS"
    failed() { rss_json bad | jq -e '.status.phase == "Failed" and (.status.message | test("reconcileInterval"))' >/dev/null; }
    wait_until 30 "status Failed naming the field" failed
    rss_json bad | jq -e '.metadata.generation as $g | .status.conditions as $c
        | ($c | map(select(.type == "Ready" and .status == "False" and .reason == "InvalidSpec" and (.message | test("reconcileInterval")))) | length == 1)
        and ($c | map(select(.type == "Stalled" and .status == "True" and .reason == "InvalidSpec")) | length == 1)
        and ($c | map(select(.type == "Reconciling" and .status == "False")) | length == 1)
        and ($c | all(.observedGeneration == $g and (.lastTransitionTime | type) == "string"))' >/dev/null ||
        fail "conditions of the refused RSS: $(rss_json bad | jq -c '[.metadata.generation, .status.conditions]')"
    out=$(k wait --for=condition=Stalled --timeout=5s rss/bad -n "$NS" 2>&1) || fail "kubectl wait --for=condition=Stalled: $out"
    warned() { events_since "$mark" InvalidSpec bad | grep >/dev/null "^Warning .*reconcileInterval"; }
    wait_until 30 "an InvalidSpec Warning" warned
    # The leader's gauge the RssdInvalidSpec alert reads (deploy/monitoring/).
    refused() { node_metrics "$(leader_node)" | grep -xF "rssd_rss_phase{rss_namespace=\"$NS\",rss=\"bad\",phase=\"Failed\"} 1" >/dev/null; }
    wait_until 30 "the leader's rssd_rss_phase Failed for bad" refused
    ! k get sts "$(sts_name bad)" -n "$NS" >/dev/null 2>&1 || fail "a StatefulSet was created for an invalid RSS"
    k delete rss bad -n "$NS" >/dev/null
}

# ---- 7. own before touching: an RSS whose StatefulSet name is taken by someone else's StatefulSet
sc_foreign_sts() {
    local mark before after
    mark=$(now)
    k apply -n "$NS" -f - >/dev/null <<'YAML' || fail "create the foreign StatefulSet"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: rss-other
spec:
  replicas: 1
  serviceName: other-svc
  selector:
    matchLabels: {app: other}
  template:
    metadata:
      labels: {app: other}
    spec:
      containers:
      - name: c
        image: localhost/rss/busybox:1
        command: ["/bin/sleep", "infinity"]
YAML
    before=$(k get sts rss-other -n "$NS" -o json | jq -c '{spec: .spec.replicas, t: .spec.template, o: .metadata.ownerReferences}')
    rss_manifest other 3 false | k apply -n "$NS" -f - >/dev/null || fail "apply RSS other"
    failed() { rss_json other | jq -e '.status.phase == "Failed" and (.status.message | test("StatefulSet rss-other exists and is not owned"))' >/dev/null; }
    wait_until 30 "status Failed naming the foreign StatefulSet" failed
    warned() { events_since "$mark" ForeignObject other | grep >/dev/null "^Warning "; }
    wait_until 30 "a ForeignObject Warning" warned
    sleep 2
    after=$(k get sts rss-other -n "$NS" -o json | jq -c '{spec: .spec.replicas, t: .spec.template, o: .metadata.ownerReferences}')
    [ "$before" = "$after" ] || fail "the foreign StatefulSet changed: $before -> $after"
    k delete rss other -n "$NS" >/dev/null
    k delete sts rss-other -n "$NS" >/dev/null
}
