#!/usr/bin/env bash
# safety.sh -- the safety rules' end-to-end scenarios (ARCHITECTURE rule 3 as corrected, epochs, deposition).
#
# Usage: safety.sh [SCENARIO...]   (default: all, in the order below)
# One 3-node world with rssd from deploy/ and apps/dummy; the agents' fence timeout is shortened to
# 10 s (E2E_FENCE) so that "well past the fence timeout" takes seconds, not minutes. Ground truth: the
# hooks logs and the data on the volumes; rssd's status and Events are checked in addition, since
# saying whom it waits for is part of the behaviour. Prints "PASS/FAIL name" and "N passed, N failed".
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
source "$(dirname "$0")/lib.sh"

R=dummy
# The leader's dead window for the dummy's members: fence timeout 10 s + the 30 s `stop` timeout + 5 s
# for the kill of a failed fence stop + the 5 s margin.
DEAD_S=50
peer() { echo "$(member "$R" "$1").$R-svc"; }
ensure_running() { wait_until "${1:-90}" "$R Running with 3 primaries" rss_running "$R" 3; }
line_time() { awk '{print $1}' <<<"$1"; }

# power_on_except NODE: every node but NODE, in parallel.
power_on_except() {
    local n pids=() p
    for n in $("$WORLD" nodes); do
        [ "$n" = "$1" ] && continue
        "$WORLD" power-on "$n" >/dev/null 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fail "power-on"; done
}
rss_patch() { k patch rss "$R" -n "$NS" --type merge -p "$1" >/dev/null || fail "kubectl patch rss $1"; }
status_message() { rss_json "$R" | jq -r '.status.message // ""'; }

# ---- 1. the node with the newest copy boots late: no seed until it reports, and rssd says whom it waits for
sc_late_node() {
    ensure_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    local late mark
    late=$(member_node $R 2)
    mark=$(now)
    power_on_except "$late"
    waiting() {
        events_since "$mark" WaitingForMembers "$R" | grep "$(member $R 2)"
        status_message | grep -q "waiting for 1 of 3 member(s).*$(member $R 2)"
    }
    wait_until 60 "the status and an Event to say rssd waits for $(member $R 2)" waiting
    # Well past the dead window as the leader sees it: its node is "dead", and still no seed.
    sleep $((DEAD_S + 10))
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed primary secondary)
    [ -z "$seeds" ] || fail "started without the member holding the newest copy: $seeds"
    status_message | grep -q "$(member $R 2) (node $late is down" ||
        fail "the status does not say that $late is down: $(status_message)"
    note "after $((DEAD_S + 10)) s beyond the first report: $(status_message | cut -c1-200)"
    "$WORLD" power-on "$late" >/dev/null 2>&1 || fail "power-on $late"
    recovered() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 90 "a seed once $late is back" recovered
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 2) seed args=[] rc=0" ]] ||
        fail "$(member $R 2) (sequence 60) should seed: $seeds"
    ensure_running
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = 60 ] || fail "the seed's data changed"
}

# ---- 2. the node stays off: by default rssd waits; minimumMembers lets it go on with a Warning
#         naming what may be lost; the member coming back newer than the seed is held, not joined
sc_stays_off() {
    ensure_running
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    local off mark
    off=$(member_node $R 2)
    mark=$(now)
    power_on_except "$off"
    sleep $((DEAD_S + 5))
    [ -z "$(hook_lines "$mark" "$R" seed primary secondary)" ] || fail "started while a member was missing"
    # The admin opts in.
    rss_patch '{"spec":{"recovery":{"minimumMembers":2}}}'
    seeded() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 60 "a seed under minimumMembers 2" seeded
    local seeds warn
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds == *" $(member $R 1) seed args=[] rc=0" ]] || fail "$(member $R 1) (20) should seed: $seeds"
    warn=$(events_since "$mark" MemberSkipped "$R")
    grep -q "^Warning .*$(member $R 2)" <<<"$warn" || fail "no Warning naming $(member $R 2): $warn"
    note "Warning: $(head -1 <<<"$warn" | cut -c1-220)"
    wait_until 60 "2 members running" rss_running_n 2
    # The missing member returns with more data than the seed had: held back, with a Warning.
    local mark2
    mark2=$(now)
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    held() { events_since "$mark2" NewerThanSeed "$R" | grep -q "^Warning .*$(member $R 2)"; }
    wait_until 60 "a NewerThanSeed Warning for $(member $R 2)" held
    sleep 3
    [ -z "$(hook_lines "$mark2" "$R" primary secondary | grep " $(member $R 2) ")" ] ||
        fail "$(member $R 2) was joined over its newer data"
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = 60 ] || fail "$(member $R 2)'s data changed while held"
    # The admin decides: let it join (its newer writes are given up), and restore the defaults.
    rss_patch '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}'
    joined() { hook_lines "$mark2" "$R" primary | grep -q " $(member $R 2) primary .* rc=0$"; }
    wait_until 60 "$(member $R 2) to join after Join" joined
    ensure_running
    rss_patch '{"spec":{"recovery":null}}'
}
rss_running_n() { rss_json "$R" | jq -e --argjson n "$1" '(.status.members.primary // []) | length == $n' >/dev/null; }

# sim VERB QUERY: kubesim's fault injection (docs/kubesim.md), admin token, loopback only.
sim() {
    local ks=$RSS_WORLD_DIR/kubesim
    curl -sS --max-time 5 --cacert "$ks/ca.crt" -H "Authorization: Bearer $(cat "$ks/token")" -X POST \
        "https://127.0.0.1:$(cat "$ks/port")/_sim/$1${2:+?$2}" >/dev/null
}

# ---- 6b. the end of an API outage: the peers renew first and vouch "a peer reaches the API server, this
#          node is cut off" while one agent's own renewals still fail; it asks the API server itself
#          before stopping anything, and stops nothing (chaos seed 20261125, cycles 35 and 83)
sc_outage_end() {
    ensure_running
    peers_current
    local x=2 xn before after mark acts
    [ "$(member_node $R $x)" != "$(leader_node)" ] || x=1
    xn=$(member_node $R $x)
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    # This node's heartbeat renewals fail from now until 2 s after the thaw (the rule also catches the
    # renewals queued in the frozen server), while the others renew as soon as the API answers again.
    sim fail "count=200&code=503&verb=PUT&path=/apis/coordination.k8s.io/v1/namespaces/$RSSD_NS/leases/rssd-node-$xn" ||
        fail "/_sim/fail"
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 2
    sim clear || fail "/_sim/clear"
    ensure_running 90
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the end of the outage made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    rssd_logs "$xn" | grep -q "self-fencing of pod $NS/$(member $R $x) called off" ||
        fail "$xn's agent never got to the fence decision (the race was not reproduced)"
    note "$(member $R $x) on $xn: renewals refused after the thaw, peers vouched 'cut off', its own look called the stop off"
}

# ---- 3. a member record claiming a huge epoch (a broken or older rssd; namespace users cannot write the
#         records, see forgery): the leader ignores it, says why, and keeps managing
sc_huge_epoch() {
    ensure_running
    local mark lt victim vuid
    mark=$(now)
    lt=$(lease_transitions)
    victim=$(member $R 1)
    vuid=$(member_uid $R 1)
    k patch cm "$NS.$victim" -n "$RSSD_NS" --type merge -p "$(jq -cn --arg u "$vuid" '{data: {desiredFor: $u,
        desired: "{\"epoch\":1099511627776,\"action\":\"stop\",\"id\":\"1099511627776-1\",\"generation\":0,\"peers\":[]}"}}')" \
        >/dev/null || fail "patch the record of $victim"
    warned() { events_since "$mark" InvalidEpoch "$R" | grep -q "^Warning .*$victim"; }
    wait_until 30 "an InvalidEpoch Warning" warned
    overwritten() { desired "$victim" | jq -e --argjson e "$lt" '.epoch == $e' >/dev/null; }
    wait_until 30 "the forged desired to be overwritten with epoch $lt" overwritten
    [ -z "$(hook_lines "$mark" "$R" stop)" ] || fail "the forged stop ran: $(hook_lines "$mark" "$R" stop)"
    [ "$(lease_transitions)" = "$lt" ] || fail "leadership changed ($lt -> $(lease_transitions))"
    # Still managing: a deleted member comes back and rejoins.
    local uid
    uid=$(member_uid $R 2)
    k delete pod "$(member $R 2)" -n "$NS" --wait=false >/dev/null
    rejoined() { hook_lines "$mark" "$R" primary | grep -q " $(member $R 2) primary .* rc=0$"; }
    wait_until 90 "$(member $R 2) to rejoin after its pod was deleted" rejoined
    ensure_running
    [ "$(member_uid $R 2)" != "$uid" ] || fail "the pod was not replaced"
    note "$(events_since "$mark" InvalidEpoch "$R" | head -1 | cut -c1-200)"
}

# ---- 3b. forgery: a user with an edit-like Role in the application namespace (can patch
#          pods, cannot touch rssd-system) tries each forgery of the old annotation protocol. Nothing runs,
#          the right member seeds, rssd says why (IgnoredAnnotation), and the records answer 403.
ku() { kubectl --kubeconfig "$KC" --cache-dir "$E2E_TMP/kcache-mallory" --request-timeout=15s --token mallory-token "$@"; }
attacker_setup() {
    k apply -f - >/dev/null <<YAML || fail "the attacker's Role"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: edit, namespace: $NS}
rules:
- apiGroups: [""]
  resources: [pods, services, configmaps, persistentvolumeclaims]
  verbs: [create, delete, deletecollection, get, list, patch, update, watch]
- apiGroups: [apps]
  resources: [statefulsets, statefulsets/scale]
  verbs: [create, delete, deletecollection, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: mallory-edit, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: edit}
subjects: [{kind: User, name: mallory, apiGroup: rbac.authorization.k8s.io}]
YAML
    grep -q '^mallory-token,' "$RSS_WORLD_DIR/kubesim/tokens" 2>/dev/null ||
        echo 'mallory-token,mallory,uid-mallory' >>"$RSS_WORLD_DIR/kubesim/tokens"
    can() { [ "$(ku auth can-i "$@" 2>/dev/null)" = yes ]; }
    wait_until 10 "the attacker to be able to patch pods in $NS" can patch pods -n "$NS"
    ! can patch configmaps -n "$RSSD_NS" || fail "the attacker may patch configmaps in $RSSD_NS"
}
ignored_for() { events_since "$1" IgnoredAnnotation "$R" | grep -q "^Warning .*pod $2 carries"; }
sc_forgery() {
    ensure_running
    attacker_setup
    local mark lt victim other first gen out
    mark=$(now)
    lt=$(lease_transitions)
    first=$(member $R 0)
    victim=$(member $R 1)
    other=$(member $R 2)
    gen=$(observed "$victim" | jq -r '.generation // 0')
    # (a) a stop at the current epoch and generation on a running member; (b) peers that would be
    # appended to every periodic status/sequence run.
    ku annotate pod "$victim" -n "$NS" --overwrite \
        "rss.clusterlabs.org/desired={\"epoch\":$lt,\"action\":\"stop\",\"id\":\"$lt-900\",\"generation\":$gen,\"peers\":[]}" \
        >/dev/null || fail "the attacker could not annotate $victim (the fixture is wrong)"
    ku annotate pod "$other" -n "$NS" --overwrite \
        "rss.clusterlabs.org/desired={\"epoch\":$lt,\"action\":\"none\",\"peers\":[\"attacker.example.com\",\"x;reboot\"]}" \
        >/dev/null || fail "annotate $other"
    # (d) the records themselves: 403 for every write, and no read either.
    local w
    for w in "patch cm $NS.$victim -n $RSSD_NS --type merge -p {\"data\":{\"desired\":\"x\"}}" \
        "create cm $NS.rss-evil-0 -n $RSSD_NS --from-literal=desired=x" \
        "delete cm $NS.$victim -n $RSSD_NS" "get cm $NS.$victim -n $RSSD_NS"; do
        # shellcheck disable=SC2086
        out=$(ku $w 2>&1) && fail "the attacker could: kubectl $w"
        grep -qi forbidden <<<"$out" || fail "kubectl $w: not a 403: $out"
    done
    note "record writes in $RSSD_NS: 403 (patch, create, delete, get)"
    wait_until 30 "an IgnoredAnnotation Warning for $victim" ignored_for "$mark" "$victim"
    wait_until 30 "an IgnoredAnnotation Warning for $other" ignored_for "$mark" "$other"
    # Past a reconcileInterval (10 s): every member ran its periodic status with the leader's peers.
    sleep 12
    [ -z "$(hook_lines "$mark" "$R" stop)" ] || fail "the forged stop ran: $(hook_lines "$mark" "$R" stop)"
    ! hooks_since "$mark" "$R" | grep -q attacker.example.com ||
        fail "the forged peers reached a hook: $(hooks_since "$mark" "$R" | grep attacker.example.com | head -2)"
    hooks_since "$mark" "$R" | grep -q " status " || fail "no periodic status ran in 12 s (the check above proves nothing)"
    rss_running "$R" 3 || fail "not Running with 3 primaries after the forgeries"
    [ "$(lease_transitions)" = "$lt" ] || fail "leadership changed ($lt -> $(lease_transitions))"
    # (c) a forged observed in a lights-out: $first claims the highest sequence; $other really has it.
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    local fake
    fake=$(jq -cn --argjson e "$lt" '{containerId: "", generation: 1, role: "stopped", status: 7, sequence: "999999",
        leaseEpoch: $e, time: (now | strftime("%Y-%m-%dT%H:%M:%SZ"))}')
    mark=$(now)
    ku annotate pod "$first" -n "$NS" --overwrite "rss.clusterlabs.org/observed=$fake" >/dev/null || fail "annotate $first"
    power_on_all
    seeded() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 120 "a seed after the lights-out" seeded
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $other seed args=[] rc=0" ]] ||
        fail "$other (sequence 60) should seed, not the forged $first: $seeds"
    ensure_running 120
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = 60 ] || fail "the seed's data changed"
    wait_until 30 "an IgnoredAnnotation Warning for $first" ignored_for "$mark" "$first"
    note "$(events_since "$mark" IgnoredAnnotation "$R" | head -1 | cut -c1-220)"
    for w in "$first" "$victim" "$other"; do
        k annotate pod "$w" -n "$NS" rss.clusterlabs.org/desired- rss.clusterlabs.org/observed- >/dev/null || true
    done
}

# ---- 3c. the namespace overlay. rssd runs with deploy/overlays/namespace's RBAC (a Role in
#          rss-apps, no cluster-wide grant but the two node-loss gets) and --namespaces=rss-apps: an RSS
#          there is created and runs; an RSS in another namespace, created first, is left alone (no
#          StatefulSet, no hook, no record, no status), and kubesim counted no request of rssd in that
#          namespace nor any LIST/WATCH across every namespace. Then the cluster-wide install comes back.
ns_overlay_rbac() { # the overlay's own RBAC objects (its Role, RoleBinding, ClusterRole and binding), as JSON
    k kustomize "$repo/deploy/overlays/namespace" | k create --dry-run=client -o json -f - |
        jq -c 'if .kind == "List" then .items[] else . end | select((.kind | test("Role")) and
            (.metadata.name == "rssd-apps" or .metadata.name == "rssd-node-loss"))'
}
rssd_args_are() { # rssd_args_are yes|no: 3 Ready rssd pods, each with (or without) --namespaces=rss-apps
    local n
    n=$(rssd_pods_json | jq --arg w "$1" '[.items[] | select(.metadata.deletionTimestamp == null and
        .status.phase == "Running" and any(.status.conditions[]?; .type == "Ready" and .status == "True")
        and ((.spec.containers[0].args | index("--namespaces=rss-apps")) != null) == ($w == "yes"))] | length')
    echo "rssd pods as wanted: $n"
    [ "$n" = 3 ]
}
ns_restore() {
    set +e
    k delete rss dummy -n rss-apps --wait=false >/dev/null 2>&1
    k delete rss dummy -n rss-elsewhere --wait=false >/dev/null 2>&1
    k apply -f "$E2E_RBAC" >/dev/null 2>&1
    ns_overlay_rbac | k delete -f - --ignore-not-found >/dev/null 2>&1
    k apply -f "$E2E_TMP/daemonset.yaml" >/dev/null 2>&1
    set -e
}
sc_namespaced() {
    ensure_running
    trap ns_restore EXIT # this scenario runs in a subshell: the trap is its own
    local mark apps=rss-apps other=rss-elsewhere stats bad lines n
    for n in $apps $other; do
        k apply -f - <<<"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$n\"}}" >/dev/null ||
            fail "namespace $n"
    done
    # The overlay's rights replace the base's cluster-wide ones (the ClusterRoleBinding rssd goes).
    ns_overlay_rbac | k apply -f - >/dev/null || fail "apply the namespace overlay's RBAC"
    k delete clusterrolebinding rssd >/dev/null || fail "delete the base's ClusterRoleBinding rssd"
    sed '/--health-port=/a\        - --namespaces=rss-apps' "$E2E_TMP/daemonset.yaml" >"$E2E_TMP/daemonset-ns.yaml"
    k apply -f "$E2E_TMP/daemonset-ns.yaml" >/dev/null || fail "apply the DaemonSet with --namespaces"
    wait_until 120 "every rssd restarted with --namespaces=rss-apps" rssd_args_are yes
    wait_until 60 "a leader" leader_node
    # Count from here, and end every watch so that each is made again within the count.
    sim stats-reset || fail "kubesim stats-reset"
    sim watch-cut || fail "kubesim watch-cut"
    mark=$(now)
    # The other namespace's RSS first: by the time rss-apps' runs, rssd would long have acted on it.
    rss_manifest dummy 2 false | k apply -n $other -f - >/dev/null || fail "apply the RSS in $other"
    rss_manifest dummy 2 false | k apply -n $apps -f - >/dev/null || fail "apply the RSS in $apps"
    # The lib's helpers read $NS: point them at rss-apps for these checks.
    local ns0=$NS
    NS=$apps
    wait_until 120 "$apps/dummy Running with 2 primaries" rss_running dummy 2
    lines=$(hook_lines "$mark" dummy seed primary)
    [ "$(count_lines "$(grep ' seed ' <<<"$lines")")" = 1 ] || fail "$apps: expected one seed: $lines"
    note "$apps/dummy: $(count_lines "$lines") start hooks ran ($(awk '{print $2 "/" $3}' <<<"$lines" | tr '\n' ' '))"
    NS=$ns0
    [ -z "$(k get sts -n $other -o name 2>/dev/null)" ] || fail "a StatefulSet in $other: $(k get sts -n $other -o name)"
    [ -z "$(k get svc -n $other -o name 2>/dev/null)" ] || fail "a Service in $other"
    [ -z "$(cat "$RSS_WORLD_DIR/pv/$other"/*/hooks.log 2>/dev/null)" ] || fail "a hook ran in $other"
    [ "$(k get rss dummy -n $other -o json | jq -c '.status // {}')" = "{}" ] || fail "rssd wrote the status in $other"
    [ -z "$(k get cm -n "$RSSD_NS" -l rss.clusterlabs.org/namespace=$other -o name)" ] || fail "records for $other"
    stats=$(curl -sS --max-time 5 --cacert "$RSS_WORLD_DIR/kubesim/ca.crt" \
        -H "Authorization: Bearer $(cat "$RSS_WORLD_DIR/kubesim/token")" \
        "https://127.0.0.1:$(cat "$RSS_WORLD_DIR/kubesim/port")/_sim/stats") || fail "kubesim stats"
    bad=$(jq -c --arg o "$other" '[.byNamespace[] | select((.client | startswith("rssd/")) and (.namespace == $o or
        (.namespace == "" and (.verb == "LIST" or .verb == "WATCH") and .resource != "discovery")))]' <<<"$stats")
    [ "$bad" = "[]" ] || fail "rssd asked outside $apps: $bad"
    jq -e --arg a "$apps" 'any(.byNamespace[]; (.client | startswith("rssd/")) and .namespace == $a and .verb == "WATCH")' \
        <<<"$stats" >/dev/null || fail "no WATCH of rssd in $apps counted (the check above would prove nothing)"
    note "no request of rssd in $other, none across namespaces; $(jq '[.byNamespace[] | select((.client |
        startswith("rssd/")) and .namespace == "rss-apps") | .count] | add' <<<"$stats") in $apps"
    trap - EXIT
    ns_restore
    wait_until 120 "every rssd back to the cluster-wide install" rssd_args_are no
    k delete namespace $apps $other --wait=false >/dev/null 2>&1 || true
    ensure_running 90
}

# ---- 4. a member that keeps failing: stopped, then replaced once; the replacement starts clean
sc_keeps_failing() {
    ensure_running
    local v=1 m mark uid
    m=$(member $R $v)
    uid=$(member_uid $R $v)
    mark=$(now)
    echo 1 >"$(claim_dir $R $v)/fail-primary"
    # Crash it: the agent sees status 1 (failed), the leader stops it and restarts it; primary fails.
    local node id
    node=$(member_node $R $v)
    id=$("$WORLD" crictl "$node" find "$NS" "$m" dummy) || fail "no container for $m"
    "$WORLD" crictl "$node" exec "$id" sh -c 'kill -9 "$(cat /run/dummy/pid)"' >/dev/null 2>&1 || true
    # The knob goes as soon as the leader gives up on the pod, so the replacement's first start works.
    deleting() {
        local u
        u=$(k get pod "$m" -n "$NS" -o json 2>/dev/null | jq -r 'if .metadata.deletionTimestamp then "deleting" else .metadata.uid end')
        [ "$u" = deleting ] || [ -z "$u" ] || [ "$u" != "$uid" ]
    }
    wait_until 180 "$m to be deleted after repeated failures" deleting
    rm -f "$(claim_dir $R $v)/fail-primary"
    replaced() { local u; u=$(member_uid $R $v); [ -n "$u" ] && [ "$u" != "$uid" ]; }
    wait_until 60 "$m to be recreated" replaced
    local stops fails
    stops=$(hook_lines "$mark" "$R" stop | grep " $m " || true)
    [ -n "$stops" ] || fail "$m was deleted without a stop first"
    fails=$(hook_lines "$mark" "$R" primary | grep -c " $m primary .* rc=1$" || true)
    note "$fails failed starts, then: $(events_since "$mark" DeletingPod "$R" | head -1 | cut -c1-160)"
    ensure_running 120
    local f
    f=$(rss_json "$R" | jq -r --argjson o $v '.status.memberStatus[] | select(.ordinal == $o) | .failures')
    [ "$f" = 0 ] || fail "the replacement inherited $f failures"
    local deletes
    deletes=$(events_since "$mark" DeletingPod "$R" | wc -l)
    [ "$deletes" = 1 ] || fail "expected one DeletingPod Event, got $deletes"
}

# ---- 5. reinstall: delete the DaemonSet and the Lease, apply deploy/ again: management resumes above
#         every epoch the cluster has seen, and a crashed member is restarted
sc_reinstall() {
    ensure_running
    local epoch0 mark
    epoch0=$(rss_json "$R" | jq -r '.status.epoch')
    k delete -f "$E2E_TMP/daemonset.yaml" --wait=false >/dev/null || fail "delete DaemonSet"
    gone() { [ "$(rssd_pods_json | jq '.items | length')" = 0 ]; }
    wait_until 60 "every rssd pod gone" gone
    k delete lease rssd-leader -n "$RSSD_NS" >/dev/null || fail "delete the leader Lease"
    mark=$(now)
    # A member crashes while no rssd runs.
    local node id m
    m=$(member $R 0)
    node=$(member_node $R 0)
    id=$("$WORLD" crictl "$node" find "$NS" "$m" dummy) || fail "no container for $m"
    "$WORLD" crictl "$node" exec "$id" sh -c 'kill -9 "$(cat /run/dummy/pid)"' >/dev/null 2>&1 || true
    k apply -f "$E2E_TMP/daemonset.yaml" >/dev/null || fail "apply DaemonSet"
    wait_until 60 "3 rssd pods Running" rssd_pods_ready 3
    wait_until 60 "a leader" leader_node
    local lt
    lt=$(lease_transitions)
    [ "$lt" -gt "$epoch0" ] || fail "new epoch $lt is not above the last recorded epoch $epoch0"
    restarted() { hook_lines "$mark" "$R" primary | grep -q " $m primary .* rc=0$"; }
    wait_until 90 "$m restarted by the new leader" restarted
    ensure_running
    note "epoch before $epoch0, after reinstall $lt"
}

# ---- 5a. an upgrade from the annotation era. The pods carry the old rssd's `desired` and
#          `observed` annotations and there are no member records; the new rssd ignores the annotations,
#          probes every member (status) before anything else, keeps the running members running, and says so
#          with one Warning IgnoredAnnotation per pod (in one leader term, however many passes).
ignored_count() { # ignored_count POD: the count of the IgnoredAnnotation Event(s) naming POD since the mark
    local m=${1%.*}
    k get events -n "$NS" -o json | jq --arg p "$2" --arg m "${m%Z}Z" '[.items[] | select(.reason == "IgnoredAnnotation"
        and (.message | startswith("pod " + $p + " carries"))
        and ((.lastTimestamp // .eventTime // .metadata.creationTimestamp // "") | sub("\\.[0-9]+"; "")) >= $m)
        | (.count // 1)] | add // 0'
}
sc_annotation_upgrade() {
    ensure_running
    local mark lt i m first2 n
    k delete -f "$E2E_TMP/daemonset.yaml" --wait=false >/dev/null || fail "delete DaemonSet"
    gone() { [ "$(rssd_pods_json | jq '.items | length')" = 0 ]; }
    wait_until 60 "every rssd pod gone" gone
    # What the annotation-era rssd left: its last desired and observed on each pod, no records.
    for i in 0 1 2; do
        m=$(member $R $i)
        k annotate pod "$m" -n "$NS" --overwrite "rss.clusterlabs.org/desired=$(desired "$m")" \
            "rss.clusterlabs.org/observed=$(observed "$m")" >/dev/null || fail "annotate $m"
    done
    k delete cm -n "$RSSD_NS" -l "rss.clusterlabs.org/namespace=$NS,rss.clusterlabs.org/rss=$R" >/dev/null ||
        fail "delete the records"
    lt=$(lease_transitions)
    mark=$(now)
    k apply -f "$E2E_TMP/daemonset.yaml" >/dev/null || fail "apply DaemonSet"
    wait_until 60 "3 rssd pods Running" rssd_pods_ready 3
    ensure_running 90
    # Probe first: each member's first hook since the upgrade is its status (a running member needs no
    # sequence), and no hook starts or stops anything.
    for i in 0 1 2; do
        m=$(member $R $i)
        first2=$(hooks_since "$mark" $R | awk -v p="$m" '$2 == p {print $3}' | head -1)
        [ "$first2" = status ] || fail "$m: first hook after the upgrade: '$first2'"
    done
    [ -z "$(hook_lines "$mark" $R stop seed primary secondary)" ] ||
        fail "a running member was stopped or started: $(hook_lines "$mark" $R stop seed primary secondary)"
    # Past a reconcileInterval (10 s): more passes, still one Warning per pod.
    sleep 12
    if [ "$(lease_transitions)" = $((lt + 1)) ]; then
        for i in 0 1 2; do
            n=$(ignored_count "$mark" "$(member $R $i)")
            [ "$n" = 1 ] || fail "$(member $R $i): $n IgnoredAnnotation Warnings, want 1"
        done
        note "one IgnoredAnnotation per pod: $(events_since "$mark" IgnoredAnnotation $R | head -1 | cut -c1-160)"
    else
        for i in 0 1 2; do
            [ "$(ignored_count "$mark" "$(member $R $i)")" -ge 1 ] || fail "no IgnoredAnnotation for $(member $R $i)"
        done
        note "leadership changed hands during the start ($lt -> $(lease_transitions)): one Warning per pod and term not counted"
    fi
    rss_running "$R" 3 >/dev/null || fail "not Running after the upgrade"
    for i in 0 1 2; do
        k annotate pod "$(member $R $i)" -n "$NS" rss.clusterlabs.org/desired- rss.clusterlabs.org/observed- >/dev/null || true
    done
}

# ---- 5b. a garbage sequence, then fixed data: the member is asked again within reconcileInterval (10 s
#          in apps/dummy/rss.yaml) and the recovery proceeds, without anyone restarting its container
sc_garbage_fixed() {
    ensure_running
    power_off_all
    set_sequence $R 0 15
    set_sequence $R 1 40
    set_sequence $R 2 25
    printf 'lots-of-writes' >"$(claim_dir $R 1)/garbage-sequence"
    local mark mark2
    mark=$(now)
    power_on_all
    garbage() { hook_lines "$mark" "$R" sequence | grep -q " $(member $R 1) sequence .* out=lots-of-writes "; }
    wait_until 60 "$(member $R 1)'s garbage sequence" garbage
    sleep 3
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "seeded while a member's sequence was garbage"
    mark2=$(now)
    rm -f "$(claim_dir $R 1)/garbage-sequence"
    asked() { hook_lines "$mark2" "$R" sequence | grep -q " $(member $R 1) sequence .* out=40 rc=0$"; }
    wait_until 30 "$(member $R 1) to be asked again (reconcileInterval 10 s)" asked
    seeded() { hook_lines "$mark" "$R" seed | grep -q " $(member $R 1) seed "; }
    wait_until 30 "$(member $R 1) (40) to seed" seeded
    ensure_running
}

# rssd_hwm: "node VmHWM-kB" of every rssd (the peak resident memory of each process so far).
rssd_hwm() {
    local n pid
    for n in $("$WORLD" nodes); do
        pid=$(rssd_pid "$n") || continue
        echo "$n $(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")"
    done
}
LIMIT_KB=$(awk '/limits:/ {l=1} l && /memory:/ {sub(/Mi/, "", $2); print $2 * 1024; exit}' "$repo/deploy/daemonset.yaml")

# ---- 5c. a `sequence` hook printing 16 MB, then a 1.4 MB RSS: rssd stays under its memory limit
#          and reports the hook as "output too large" (never as a sequence)
sc_noisy() {
    ensure_running
    power_off_all
    set_sequence $R 0 15
    set_sequence $R 1 40
    set_sequence $R 2 25
    head -c 16777216 /dev/zero | tr '\0' 7 >"$(claim_dir $R 1)/garbage-sequence"
    local mark
    mark=$(now)
    power_on_all
    too_large() { observed "$(member $R 1)" | jq -e '.sequenceError // "" | test("output too large")' >/dev/null; }
    wait_until 60 "$(member $R 1) to report its sequence output as too large" too_large
    sleep 2
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "seeded while a member's sequence was unusable"
    local hwm
    hwm=$(rssd_hwm)
    note "VmHWM after a 16 MB sequence output (kB): $(tr '\n' ' ' <<<"$hwm")"
    # Without the cap the 16 MB were held three times over (71 MB); with it nothing grows.
    awk '$2 >= 40960 {bad=1} END {exit bad}' <<<"$hwm" || fail "a 16 MB hook output made an rssd grow past 40 MB: $hwm"
    rm -f "$(claim_dir $R 1)/garbage-sequence"
    seeded() { hook_lines "$mark" "$R" seed | grep -q " $(member $R 1) seed "; }
    wait_until 40 "$(member $R 1) (40) to seed once its hook is sane" seeded
    ensure_running
    # A 1.4 MB RSS (the etcd object limit is 1.5 MB): every agent and the leader parse it.
    awk 'BEGIN { v = sprintf("%1000s", ""); gsub(/ /, "v", v); printf "["; for (i = 0; i < 1400; i++) printf "%s{\"name\":\"E%d\",\"value\":\"%s\"}", (i ? "," : ""), i, v; printf "]" }' \
        >"$E2E_TMP/env.json"
    rss_manifest big 1 false | k apply -n "$NS" -f - >/dev/null || fail "create RSS big"
    # Without kubectl's last-applied annotation: replace would copy the whole object into it, over the
    # apiserver's 256 KiB limit on annotations.
    k get rss big -n "$NS" -o json | jq --slurpfile e "$E2E_TMP/env.json" '.spec.pod.containers[0].env = $e[0] | del(.metadata.resourceVersion)
        | del(.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"])' \
        >"$E2E_TMP/big.json"
    note "RSS big: $(wc -c <"$E2E_TMP/big.json") bytes"
    # kubectl replace reads the object's resourceVersion first; the leader's status writes in between
    # make that a conflict now and then: try again, as a user would.
    local try
    for try in 1 2 3 4 5; do
        k replace -f "$E2E_TMP/big.json" >/dev/null 2>"$E2E_TMP/replace.err" && break
        grep -q Conflict "$E2E_TMP/replace.err" && [ $try -lt 5 ] || fail "replace RSS big with 1.4 MB: $(head -c 300 "$E2E_TMP/replace.err")"
        sleep 1
    done
    big_sts() { k get sts rss-big -n "$NS" -o json | jq -e '.spec.template.spec.containers[0].env | length >= 1400' >/dev/null; }
    wait_until 60 "the leader to build the 1.4 MB StatefulSet" big_sts
    sleep 3
    hwm=$(rssd_hwm)
    note "VmHWM after the 1.4 MB RSS (kB): $(tr '\n' ' ' <<<"$hwm")"
    awk -v l=$LIMIT_KB '$2 >= l {bad=1} END {exit bad}' <<<"$hwm" || fail "an rssd reached its memory limit: $hwm"
    k delete rss big -n "$NS" >/dev/null
}

# dummyd_pids: "pod pid" of each member's application (from its run state, through the runtime).
dummyd_pids() {
    local i node id
    for i in 0 1 2; do
        node=$(member_node $R $i)
        id=$("$WORLD" crictl "$node" find "$NS" "$(member $R $i)" dummy) || return 1
        echo "$(member $R $i) $("$WORLD" crictl "$node" exec "$id" cat /run/dummy/pid 2>/dev/null)"
    done
}
FENCE_S=${E2E_FENCE%s}
# peers_learned: every agent knows where the two others answer now, and with which key: what each
# agent saved of its peers in its fence state file (written after every acknowledged heartbeat) equals
# what each peer publishes in its heartbeat Lease. (Log lines "answers at" are not enough: an rssd
# restarted in the same boot keeps its key, and on the same port its peers have nothing new to learn.)
peers_learned() {
    local n m f have missing=""
    declare -A want
    for m in $("$WORLD" nodes); do
        want[$m]=$(k get lease "rssd-node-$m" -n "$RSSD_NS" -o json 2>/dev/null |
            jq -r '.metadata.annotations["rss.clusterlabs.org/peer"] // "{}" | fromjson | "\(.address) \(.key)"')
    done
    for n in "${!want[@]}"; do
        f=$(rssd_state "$n")
        for m in "${!want[@]}"; do
            [ "$n" != "$m" ] || continue
            have=$(jq -r --arg m "$m" '[.peers[]? | select(.node == $m) | "\(.address) \(.key)"][0] // ""' "$f" 2>/dev/null)
            [ -n "$have" ] && [ "$have" = "${want[$m]}" ] || missing="$missing $n->$m"
        done
    done
    echo "peer addresses not yet current:${missing:- none}"
    [ -z "$missing" ]
}
peers_current() {
    wait_until 45 "the agents to learn each other's addresses" peers_learned
    sleep 11
}

# ---- 8. the API server hangs for twice the fence timeout: the agents reach each other, so nothing
#         stops (failsafe); no hook but `status` runs, the applications never restart
sc_api_outage() {
    ensure_running
    peers_current
    local before after mark
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    local acts
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the API outage made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    local kept
    kept=$(rssd_logs | grep -c "keeps running although the API server" || true)
    [ "$kept" -ge 3 ] || fail "the agents did not say why they kept their members ($kept lines)"
    note "API frozen $((2 * FENCE_S + 5)) s: no action, same pids ($(tr '\n' ' ' <<<"$after"))"
}

# ---- 8a. the same outage right after a lights-out whose nodes booted seconds apart (found by the chaos
#          harness, tests/chaos): the first agent up read the others' Leases before they had published
#          their new addresses, kept the stale ones for 30 s, reached no peer and stopped its member
sc_outage_after_lightsout() {
    ensure_running
    power_off_all
    "$WORLD" power-on node-1 >/dev/null 2>&1 || fail "power-on node-1"
    sleep 4
    power_on_except node-1
    ensure_running 90
    sleep 3 # more than the 2 s listing period of agents that just started
    local before after mark acts
    before=$(dummyd_pids) || fail "no dummyd pids"
    mark=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    sleep 3
    ensure_running 90
    acts=$(hook_lines "$mark" "$R" stop seed primary secondary)
    [ -z "$acts" ] || fail "the API outage after the lights-out made rssd act on the members: $acts"
    after=$(dummyd_pids) || fail "no dummyd pids after"
    [ "$before" = "$after" ] || fail "an application restarted: before [$before] after [$after]"
    note "API frozen $((2 * FENCE_S + 5)) s, ~10 s after a staggered lights-out: no action, same pids"
}

# ---- 8b. the same outage with every member stopped before it, and distinct data written during it:
#          after it the highest sequence seeds, once every member reported (the heartbeats look old
#          after an outage only because nobody could write: no node may count as dead for it)
sc_outage_stopped() {
    ensure_running
    power_off_all
    local i
    for i in 0 1 2; do printf 'unreadable' >"$(claim_dir $R $i)/garbage-sequence"; done
    local mark
    mark=$(now)
    power_on_all
    reported() { [ "$(hook_lines "$mark" "$R" sequence | grep -c "out=unreadable")" -ge 3 ]; }
    wait_until 60 "all 3 members stopped, with no usable sequence" reported
    "$WORLD" api-freeze || fail "api-freeze"
    set_sequence $R 0 10
    set_sequence $R 1 60
    set_sequence $R 2 30
    for i in 0 1 2; do rm -f "$(claim_dir $R $i)/garbage-sequence"; done
    sleep $((2 * FENCE_S + 5))
    "$WORLD" api-thaw || fail "api-thaw"
    seeded() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 90 "a seed after the outage" seeded
    local seeds t
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $(member $R 1) seed args=[] rc=0" ]] ||
        fail "$(member $R 1) (sequence 60) should seed: $seeds"
    t=$(line_time "$seeds")
    for i in 0:10 1:60 2:30; do
        hook_lines "$mark" "$R" sequence | awk -v t="$t" '$1 < t' | grep -q " $(member $R "${i%%:*}") sequence .* out=${i#*:} rc=0$" ||
            fail "seeded before $(member $R "${i%%:*}") reported ${i#*:}"
    done
    ensure_running 90
}

# ---- 9. one node cut off from the API server and from the other agents: its member stops within the
#         fence timeout, the others keep running; after heal it rejoins with `primary`, never `seed`
sc_partition() {
    ensure_running
    local v=2 node mark t0 m
    node=$(member_node $R $v)
    [ "$node" != "$(leader_node)" ] || { v=1; node=$(member_node $R $v); }
    m=$(member $R $v)
    mark=$(now)
    "$WORLD" partition "$node" || fail "partition $node"
    # From when the cut is in force: under load `world partition` itself took seconds, which once made
    # this bound fail although the agent fenced 11 s after the cut.
    t0=$(now_ms)
    # The partition drops what the node sends; what the API server sends may still arrive. Watch
    # events must not count as "the API hears me" (only an acknowledged heartbeat does, as for the
    # leader), so the member pod changes every second to keep events coming.
    local stop_touch=$E2E_TMP/stop-touch toucher
    rm -f "$stop_touch"
    (for _ in $(seq $((FENCE_S + 25))); do
        [ -e "$stop_touch" ] && break
        k annotate pod "$m" -n "$NS" --overwrite "e2e-touch=$(now_ms)" >/dev/null 2>&1 || true
        sleep 1
    done) &
    toucher=$!
    stopped() { hook_lines "$mark" "$R" stop | grep -q " $m stop "; }
    # (On a failure the loop ends by itself within its bound.)
    wait_until $((FENCE_S + 20)) "$m to stop on the partitioned $node" stopped
    local dt=$(($(now_ms) - t0))
    touch "$stop_touch"
    wait $toucher
    note "partitioned $node: $m stopped after $dt ms (fence timeout ${FENCE_S} s, the leader's dead margin +5 s)"
    [ "$dt" -le $(((FENCE_S + 5) * 1000)) ] ||
        fail "$m stopped after $dt ms: later than the leader may judge its node dead ($((FENCE_S + 5)) s)"
    sleep 5
    local others
    others=$(hook_lines "$mark" "$R" stop seed primary secondary | grep -v " $m " || true)
    [ -z "$others" ] || fail "the members that kept their network were acted on: $others"
    "$WORLD" heal "$node" || fail "heal $node"
    rejoined() { hook_lines "$mark" "$R" primary | grep -q " $m primary .* rc=0$"; }
    wait_until 90 "$m to rejoin with primary after heal" rejoined
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed after a partition: $(hook_lines "$mark" "$R" seed)"
    ensure_running 90
}

# ---- 9a. the same cut, and rssd on that node restarted (SIGKILL) while it is cut off (finding F3,
#          docs/model.md): the new process resumes its predecessor's fence clock and tables from its
#          state dir (rss/fencestate.h) and stops the member within the restore grace (3 s) of its start;
#          before, it knew no member while cut off and never stopped it. (The leader's own bound, fence
#          timeout + 5 s after the cut, cannot be checked here: the world's kubelet restarts a container
#          only after its API calls time out, 10 s each, so the new process starts about 20 s after the
#          kill. The model checks that bound: check.sh restart_cut, F3_LATEFENCE.)
sc_restart_cutoff() {
    ensure_running
    local v=2 node mark t0 m pid
    node=$(member_node $R $v)
    [ "$node" != "$(leader_node)" ] || { v=1; node=$(member_node $R $v); }
    m=$(member $R $v)
    pid=$(rssd_pid "$node") || fail "no rssd pid on $node"
    # The agent saves its state after each acknowledged heartbeat (every 2 s): the member must be in it.
    saved() { jq -e --arg m "$m" 'any(.pods[]; .metadata.name == $m) and (.rss | length) > 0' \
        "$(rssd_state "$node")" >/dev/null; }
    wait_until 20 "the fence state of $node to list $m" saved
    mark=$(now)
    "$WORLD" partition "$node" || fail "partition $node"
    t0=$(now_ms)
    sleep 1
    kill -KILL "$pid"
    # The pod's status cannot reach the API: the new process shows in the kubelet's log of rssd.
    rssd_log_since() { rssd_logs "$node" | awk -v m="$mark" '$1 > m'; }
    restarted() { rssd_log_since | grep -q "rssd starting"; }
    wait_until $((FENCE_S + 40)) "rssd restarted on the partitioned $node" restarted
    stopped() { hook_lines "$mark" "$R" stop | grep -q " $m stop "; }
    wait_until 20 "$m to stop on the partitioned $node after its rssd restarted" stopped
    local started stop_at dt
    started=$(date -d "$(rssd_log_since | grep -m1 "rssd starting" | cut -d' ' -f1)" +%s%3N)
    stop_at=$(date -d "$(hook_lines "$mark" "$R" stop | grep -m1 " $m stop " | cut -d' ' -f1)" +%s%3N)
    dt=$((stop_at - started))
    note "partitioned $node, its rssd killed 1 s later and restarted after $((started - t0)) ms: $m stopped $dt ms after the new rssd started"
    rssd_log_since | grep -q "fence clock continues" ||
        fail "the restarted rssd did not resume the fence clock (no log line)"
    # The restore grace (3 s) and the `stop` hook; a new fence clock would wait the fence timeout (10 s).
    [ "$dt" -le 6000 ] || fail "$m stopped $dt ms after the restarted rssd started: its fence clock did not resume"
    local others
    others=$(hook_lines "$mark" "$R" stop seed primary secondary | grep -v " $m " || true)
    [ -z "$others" ] || fail "the members that kept their network were acted on: $others"
    local healed
    healed=$(now)
    "$WORLD" heal "$node" || fail "heal $node"
    # From the heal on: the first requests after it can hang for the client timeout (10 s) and fence
    # once more; the next scenario must start with the member back for good.
    rejoined() { hook_lines "$healed" "$R" primary | grep -q " $m primary .* rc=0$"; }
    wait_until 90 "$m to rejoin with primary after heal" rejoined
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "a seed after a partition: $(hook_lines "$mark" "$R" seed)"
    # A request sent during the cut and answered after the heal stamps the fence clock with its send
    # time, and the next one may hang for the client timeout (10 s): the agent can fence once more.
    # Past that window, its heartbeat must be fresh again (the state file's CLOCK_BOOTTIME stamp
    # against /proc/uptime, the same clock), and the member running.
    sleep 12
    hb_fresh() {
        local up stamp
        up=$(awk '{printf "%d", $1 * 1000}' /proc/uptime)
        stamp=$(jq -r '.apiOkBootMs' "$(rssd_state "$node")")
        echo "last acknowledged heartbeat $((up - stamp)) ms ago"
        [ $((up - stamp)) -lt 4000 ]
    }
    wait_until 30 "the heartbeat of $node to be fresh" hb_fresh
    ensure_running 90
}

# ---- 2b. the admin's override: force-seed a member while the policy waits; refused while members run
sc_force_seed() {
    ensure_running
    local mark off
    mark=$(now)
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$(member $R 1)" >/dev/null || fail "annotate"
    refused() { events_since "$mark" ForceSeedRefused "$R" | grep -q "^Warning .*a member runs"; }
    wait_until 30 "the force-seed to be refused while members run" refused
    removed() { [ -z "$(rss_json "$R" | jq -r '.metadata.annotations["rss.clusterlabs.org/force-seed"] // ""')" ]; }
    wait_until 30 "the refused annotation to be removed" removed
    power_off_all
    set_sequence $R 0 10
    set_sequence $R 1 20
    set_sequence $R 2 60
    off=$(member_node $R 2)
    mark=$(now)
    power_on_except "$off"
    waiting() { status_message | grep -q "waiting for 1 of 3 member(s).*$(member $R 2)"; }
    wait_until 60 "the recovery to wait for $(member $R 2)" waiting
    k annotate rss "$R" -n "$NS" "rss.clusterlabs.org/force-seed=$(member $R 0)" >/dev/null || fail "annotate"
    seeded() { hook_lines "$mark" "$R" seed | grep -q " $(member $R 0) seed args=\[\] rc=0$"; }
    wait_until 30 "$(member $R 0) to seed on the admin's word" seeded
    events_since "$mark" ForceSeed "$R" | grep -q "^Warning .*force-seed by the admin: $(member $R 0) seeds (sequence 10)" ||
        fail "no ForceSeed Warning: $(events_since "$mark" ForceSeed "$R")"
    wait_until 30 "the used annotation to be removed" removed
    [ "$(rss_json "$R" | jq -r .status.lastRecovery.kind)" = ForceSeed ] || fail "lastRecovery does not say ForceSeed"
    joined() { hook_lines "$mark" "$R" primary | grep -q " $(member $R 1) primary .* rc=0$"; }
    wait_until 30 "$(member $R 1) to join" joined
    # The member that was missing has more data than the forced seed: it is held, not joined.
    "$WORLD" power-on "$off" >/dev/null 2>&1 || fail "power-on $off"
    held() { events_since "$mark" NewerThanSeed "$R" | grep -q "^Warning .*$(member $R 2)"; }
    wait_until 60 "$(member $R 2) (60) to be held back" held
    rss_patch '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}'
    joined2() { hook_lines "$mark" "$R" primary | grep -q " $(member $R 2) primary .* rc=0$"; }
    wait_until 60 "$(member $R 2) to join after Join" joined2
    ensure_running
    rss_patch '{"spec":{"recovery":null}}'
}

# ---- 2c. a planned full stop and start (spec.suspend): every member stopped one at a time, the last
#          primary last, replicas 0 with the volumes kept; on resume the highest sequence seeds
sc_suspend() {
    ensure_running
    local mark stops
    mark=$(now)
    rss_patch '{"spec":{"suspend":true}}'
    suspended() { [ "$(rss_phase "$R")" = Suspended ] && [ "$(members_json "$R" | jq '.items | length')" = 0 ]; }
    wait_until 90 "$R Suspended with no pods left" suspended
    stops=$(hook_lines "$mark" "$R" stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) $(member $R 1) $(member $R 0) " ] || fail "stop order: '$stops'"
    [ "$(rss_json "$R" | jq '.status.suspended.sequences | length')" = 3 ] || fail "no sequences recorded at stop"
    note "stopped in order: $stops; at stop: $(rss_json "$R" | jq -c .status.suspended.sequences)"
    # While suspended, the data changes (a restore, say): the member with the most seeds on resume.
    set_sequence $R 0 5
    set_sequence $R 1 50
    set_sequence $R 2 30
    mark=$(now)
    rss_patch '{"spec":{"suspend":false}}'
    seeded() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 90 "a seed after resume" seeded
    [[ $(hook_lines "$mark" "$R" seed) == *" $(member $R 1) seed args=[] rc=0" ]] ||
        fail "$(member $R 1) (50) should seed: $(hook_lines "$mark" "$R" seed)"
    ensure_running 90
    rss_patch '{"spec":{"suspend":null}}'
}

# ---- 2d. spec.pod.commandEnv: a hook learns the epoch, generation and action it carries out, and they
#          are the leader's (an application could refuse a deposed leader's command by itself)
sc_hook_env() {
    ensure_running
    local mark v=2 m line obs lt
    m=$(member $R $v)
    mark=$(now)
    k delete pod "$m" -n "$NS" --wait=false >/dev/null
    joined() { hook_lines "$mark" "$R" primary | grep -q " $m primary .* rc=0$"; }
    wait_until 90 "$m to rejoin" joined
    line=$(awk -v t="$mark" -v p="$m" '$1 > t && $2 == p && $3 == "primary"' "$(claim_dir $R $v)/hooks-env.log" | tail -1)
    obs=$(observed "$m")
    lt=$(lease_transitions)
    [[ $line == *" epoch=$lt "* ]] || fail "hooks-env.log: '$line' lacks epoch=$lt"
    [[ $line == *" action=primary id=$(jq -r .lastAction.id <<<"$obs")" ]] || fail "hooks-env.log: '$line' vs observed $obs"
    note "$line"
    ensure_running
}

# ---- 2e'. rolling update of the application: a template change rolls one member at a time under rssd
#           (stop, pod recreated by the OnDelete StatefulSet, join), the highest ordinal first; a member
#           that fails after its update halts the rollout with a Warning until it runs again
revisions_current() {
    local want
    want=$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.status.updateRevision}')
    [ -n "$want" ] && members_json $R | jq -e --arg w "$want" '(.items | length) == 3 and
        all(.items[]; .metadata.labels["controller-revision-hash"] == $w and .metadata.deletionTimestamp == null)' >/dev/null
}
sc_app_rollout() {
    ensure_running
    local mark containers stops lines
    [ "$(k get sts "$(sts_name $R)" -n "$NS" -o jsonpath='{.spec.updateStrategy.type}')" = OnDelete ] ||
        fail "the StatefulSet is not OnDelete"
    mark=$(now)
    echo 1 >"$(claim_dir $R 2)/fail-primary" # the first member rolled will not come back
    start_rollout "$mark"
    halted() { events_since "$mark" RolloutHalted $R | grep -q "^Warning .*$(member $R 2) failed after its update"; }
    wait_until 150 "a RolloutHalted Warning naming $(member $R 2)" halted
    stops=$(hook_lines "$mark" $R stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) " ] || fail "while halted only $(member $R 2) may have stopped: '$stops'"
    note "halted: $(events_since "$mark" RolloutHalted $R | head -1)"
    rm -f "$(claim_dir $R 2)/fail-primary"
    rollout_finished "$mark"
}
# start_rollout MARK: a change of the pod template (an env var), which rolls every member.
start_rollout() {
    local containers
    containers=$(rss_json $R | jq -c --arg v "$1" '.spec.pod.containers | .[0].env = ((.[0].env // []) | map(select(.name != "ROLLOUT")) + [{name: "ROLLOUT", value: $v}])')
    rss_patch "{\"spec\":{\"pod\":{\"containers\":$containers}}}"
}
# rollout_finished MARK: waits for the rollout started at MARK to end, then judges it from the hook logs:
# no seed, the highest ordinal stopped first, never two members down at once.
rollout_finished() {
    local lines stops
    done_() { revisions_current && rss_running $R 3; }
    wait_until 300 "every member on the new revision and running" done_
    lines=$(hook_lines "$1" $R stop primary secondary seed)
    [ -z "$(grep ' seed ' <<<"$lines")" ] || fail "a seed during the rollout: $(grep ' seed ' <<<"$lines")"
    stops=$(hook_lines "$1" $R stop | awk '{print $2}' | tr '\n' ' ')
    [ "$stops" = "$(member $R 2) $(member $R 1) $(member $R 0) " ] || fail "stop order: '$stops'"
    # Never two members down: a member is down from its stop until its next successful start.
    awk '$NF == "rc=0" { if ($3 == "stop") down[$2] = 1; else delete down[$2]; n = 0; for (d in down) n++;
        if (n > 1) { print "two members down at " $1; bad = 1 } } END { exit bad }' <<<"$lines" ||
        fail "more than one member down: $lines"
    note "stops in order: $stops; $(count_lines "$(hook_lines "$1" $R primary secondary)") starts (with the failed ones)"
}

# ---- 2e''. an API outage in the middle of a rolling update, between the first member's stop and its pod's
#            deletion: the others keep running through it (no stop, no restart), and the rollout ends
#            afterwards as usual
sc_app_rollout_outage() {
    ensure_running
    peers_current
    local mark t_freeze t_thaw m2 before after acts
    m2=$(member $R 2)
    echo 4 >"$(claim_dir $R 2)/delay-stop" # the stop ends inside the outage, before anyone can report it
    mark=$(now)
    start_rollout "outage-$mark"
    local node2 id2
    node2=$(member_node $R 2)
    id2=$("$WORLD" crictl "$node2" find "$NS" "$m2" dummy) || fail "no container of $m2"
    stop_runs() { "$WORLD" crictl "$node2" exec "$id2" ps -o args 2>/dev/null | grep -q '/hooks/stop'; }
    wait_until 60 "$m2's stop hook to run" stop_runs
    # The others' application pids, read through CRI only (the API is frozen when they are read again).
    local i ids=()
    for i in 0 1; do
        ids+=("$(member_node $R $i) $("$WORLD" crictl "$(member_node $R $i)" find "$NS" "$(member $R $i)" dummy)") ||
            fail "no container of $(member $R $i)"
    done
    app_pids() {
        local n c
        for i in 0 1; do
            read -r n c <<<"${ids[$i]}"
            echo "$(member $R $i) $("$WORLD" crictl "$n" exec "$c" cat /run/dummy/pid 2>/dev/null)"
        done
    }
    before=$(app_pids)
    [ "$(grep -cE ' [0-9]+$' <<<"$before")" = 2 ] || fail "the others run no application: $before"
    t_freeze=$(now)
    "$WORLD" api-freeze || fail "api-freeze"
    sleep $((2 * FENCE_S + 5))
    after=$(app_pids)
    t_thaw=$(now)
    "$WORLD" api-thaw || fail "api-thaw"
    rm -f "$(claim_dir $R 2)/delay-stop"
    hook_lines "$t_freeze" $R stop | awk -v t="$t_thaw" '$1 < t' | grep -q " $m2 stop .*rc=0" ||
        fail "$m2's stop did not end inside the outage: $(hook_lines "$mark" $R stop)"
    acts=$(hook_lines "$mark" $R stop seed primary secondary | awk -v t="$t_thaw" -v m="$m2" '$1 < t && $2 != m')
    [ -z "$acts" ] || fail "the outage made rssd act on the members still running: $acts"
    [ "$before" = "$after" ] || fail "an application restarted in the outage: before [$before] after [$after]"
    note "API frozen $((2 * FENCE_S + 5)) s while $m2's stop ran: the others kept running (pids $(awk '{print $2}' <<<"$after" | tr '\n' ' '))"
    rollout_finished "$mark"
}

# ---- 2f. the journal (spec.recovery.replication: Synchronous): a member lost early (its node died while
#          the others ran on and wrote) is left out of the next lights-out recovery with the proof; one
#          lost last is waited for
journal_confirmed() { # journal_confirmed POD: its journal record has a confirmed witness
    rss_json $R | jq -e --arg p "$1" '[.status.journal[]? | select(.member == $p) | .witnesses[]? |
        select(.confirmed)] | length > 0' >/dev/null
}
sc_journal() {
    ensure_running
    local ln x=-1 i xn last mark seeds ev nodes01=()
    ln=$(leader_node) || fail "no leader: $ln"
    for i in 2 1 0; do [ "$(member_node $R $i)" != "$ln" ] && { x=$i; break; }; done
    [ $x -ge 0 ] || fail "every member is on the leader's node"
    last=$(rss_json $R | jq -r --arg p "$(member $R $x)" '.status.memberStatus[] | select(.name == $p) | .lastSequence // ""')
    [ -n "$last" ] || fail "$(member $R $x) has no lastSequence in its memberStatus"
    rss_patch '{"spec":{"recovery":{"replication":"Synchronous"}}}'
    xn=$(member_node $R $x)
    for i in 0 1 2; do [ $i = $x ] || nodes01+=("$i"); done
    "$WORLD" power-off "$xn" >/dev/null 2>&1 || fail "power-off $xn"
    # The member is down once its node is dead (DEAD_S), then the window: DEAD_S + two 10 s reconcile
    # intervals + the 10 s status timeout.
    wait_until $((2 * DEAD_S + 30 + 40)) "a confirmed journal witness for $(member $R $x)" journal_confirmed "$(member $R $x)"
    note "journal: $(rss_json $R | jq -c --arg p "$(member $R $x)" '.status.journal[] | select(.member == $p)')"
    # The others wrote on; then they go dark too, and the lost member's node stays off.
    for i in "${nodes01[@]}"; do "$WORLD" power-off "$(member_node $R $i)" >/dev/null 2>&1 || fail power-off; done
    set_sequence $R "${nodes01[0]}" $((last + 10))
    set_sequence $R "${nodes01[1]}" $((last + 5))
    mark=$(now)
    power_on_except "$xn"
    seeded() { hook_lines "$mark" "$R" seed | grep -q .; }
    wait_until 90 "a seed without $(member $R $x), proven behind" seeded
    seeds=$(hook_lines "$mark" "$R" seed)
    [[ $seeds == *" $(member $R "${nodes01[0]}") seed args=[] rc=0" && $(count_lines "$seeds") = 1 ]] ||
        fail "$(member $R "${nodes01[0]}") ($((last + 10))) should seed once: $seeds"
    ev=$(events_since "$mark" LeftOutBehind $R)
    grep -q "^Normal .*$(member $R $x) is left out" <<<"$ev" || fail "no LeftOutBehind for $(member $R $x): $ev"
    [ -z "$(events_since "$mark" MemberSkipped $R)" ] || fail "a MemberSkipped Warning: nothing was skipped on a guess"
    note "$(head -1 <<<"$ev" | cut -c1-260)"
    wait_until 60 "2 members running" rss_running_n 2
    "$WORLD" power-on "$xn" >/dev/null 2>&1 || fail "power-on $xn"
    ensure_running 120
    # Lost last: two go dark, the third a moment later; the two come back, the third stays off: wait.
    for i in "${nodes01[@]}"; do "$WORLD" power-off "$(member_node $R $i)" >/dev/null 2>&1 || fail power-off; done
    sleep 3
    "$WORLD" power-off "$xn" >/dev/null 2>&1 || fail "power-off $xn"
    mark=$(now)
    power_on_except "$xn"
    sleep $((DEAD_S + 10))
    [ -z "$(hook_lines "$mark" "$R" seed primary secondary)" ] || fail "started while the member lost last was missing"
    [[ $(status_message) == *"$(member $R $x)"* ]] || fail "the status does not say it waits for $(member $R $x): $(status_message)"
    note "waits: $(status_message | cut -c1-200)"
    "$WORLD" power-on "$xn" >/dev/null 2>&1 || fail "power-on $xn"
    ensure_running 120
    rss_patch '{"spec":{"recovery":null}}'
}

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
    joined() { hook_lines "$mark" "$R" primary | grep -q " $(member $R 2) primary .* rc=0$"; }
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

# ---- 6. an RSS the schema accepts but rssd cannot run: status Failed, a Warning Event, nothing created
sc_invalid_spec() {
    local mark
    mark=$(now)
    rss_manifest bad 3 false | sed 's/^spec:$/spec:\n  recovery:\n    minimumMembers: 5/' |
        k apply -n "$NS" -f - >/dev/null || fail "apply the invalid RSS"
    failed() { rss_json bad | jq -e '.status.phase == "Failed" and (.status.message | test("minimumMembers"))' >/dev/null; }
    wait_until 30 "status Failed naming the field" failed
    warned() { events_since "$mark" InvalidSpec bad | grep -q "^Warning .*minimumMembers"; }
    wait_until 30 "an InvalidSpec Warning" warned
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
    warned() { events_since "$mark" ForeignObject other | grep -q "^Warning "; }
    wait_until 30 "a ForeignObject Warning" warned
    sleep 2
    after=$(k get sts rss-other -n "$NS" -o json | jq -c '{spec: .spec.replicas, t: .spec.template, o: .metadata.ownerReferences}')
    [ "$before" = "$after" ] || fail "the foreign StatefulSet changed: $before -> $after"
    k delete rss other -n "$NS" >/dev/null
    k delete sts rss-other -n "$NS" >/dev/null
}

# ---- 8. spec.nodeLossPolicy (docs/node-loss.md): a member's node dies and stays off. Each part runs on an
#         RSS of its own without anti-affinity (the world has 3 nodes: the replacement shares a live one).
OOS=node.kubernetes.io/out-of-service
# nl_setup RSS: the RSS Running; sets o, victim, node, uid: a member alone on its node, not the leader's if
# possible (powering that off would cost an election first).
nl_setup() {
    local ln n i best=
    rss_manifest "$1" 3 false | k apply -n "$NS" -f - >/dev/null || fail "apply RSS $1"
    wait_until 120 "$1 Running with 3 primaries" rss_running "$1" 3
    ln=$(leader_node || true)
    for i in 0 1 2; do
        n=$(member_node "$1" $i)
        [ "$(members_json "$1" | jq --arg n "$n" '[.items[] | select(.spec.nodeName == $n)] | length')" = 1 ] || continue
        [ -n "$best" ] || best=$i
        if [ "$n" != "$ln" ]; then
            best=$i
            break
        fi
    done
    o=${best:-2}
    victim=$(member "$1" "$o")
    node=$(member_node "$1" "$o")
    uid=$(member_uid "$1" "$o")
}
# nl_cleanup RSS NODE: the node back on and untainted, the RSS gone (also when the scenario failed).
nl_cleanup() {
    k taint nodes "$2" "$OOS-" >/dev/null 2>&1 || true
    "$WORLD" power-on "$2" >/dev/null 2>&1 || true
    k delete rss "$1" -n "$NS" --wait=false >/dev/null 2>&1 || true
}
nl_message() { rss_json "$1" | jq -r '.status.message // ""'; }

# (a) Wait (the default): not replaced, rssd says why; (b) Replace waits for the out-of-service taint (the
# world's claims have no PV, so their locality is unknown), then the member is recreated on a live node,
# joins with `primary`, never seeds, and its claim and data are untouched.
sc_node_replace() {
    local N=nl o victim node uid mark mark2 pvc data
    nl_setup $N
    # shellcheck disable=SC2064 # expanded now on purpose: the locals are gone when the trap runs
    trap "nl_cleanup $N $node" EXIT
    pvc=$(k get pvc "data-$victim" -n "$NS" -o jsonpath='{.metadata.uid}')
    set_sequence $N "$o" 7 # data of its own, to find untouched on its volume afterwards
    data=$(md5sum <"$(claim_dir $N "$o")/writes")
    mark=$(now)
    "$WORLD" power-off "$node" >/dev/null 2>&1 || fail "power-off $node"
    said() { nl_message $N | grep -q "$victim: node $node is dead; waiting for it to come back (spec.nodeLossPolicy: Wait)"; }
    wait_until 90 "the status to say $victim waits for $node (Wait)" said
    events_since "$mark" MemberOnDeadNode $N | grep -q "$victim" || fail "no MemberOnDeadNode Event"
    sleep 5
    [ "$(member_uid $N "$o")" = "$uid" ] && [ "$(member_node $N "$o")" = "$node" ] || fail "replaced under Wait"
    note "Wait: $(nl_message $N | cut -c1-160)"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"nodeLossPolicy":"Replace"}}' >/dev/null || fail "patch"
    taint_said() { nl_message $N | grep -q "$victim: node $node is dead; spec.nodeLossPolicy Replace waits for the taint $OOS"; }
    wait_until 30 "the status to say Replace waits for the taint" taint_said
    sleep 3
    [ "$(member_uid $N "$o")" = "$uid" ] || fail "replaced without the taint"
    mark2=$(now)
    k taint nodes "$node" "$OOS=nodeshutdown:NoExecute" >/dev/null || fail "kubectl taint"
    replaced() {
        local u n
        u=$(member_uid $N "$o")
        n=$(member_node $N "$o")
        [ -n "$u" ] && [ "$u" != "$uid" ] && [ -n "$n" ] && [ "$n" != "$node" ]
    }
    wait_until 60 "$victim recreated on a live node" replaced
    joined() { hook_lines "$mark2" $N primary | grep -q " $victim primary .* rc=0$"; }
    wait_until 90 "$victim to join with primary" joined
    wait_until 60 "$N Running with 3 primaries" rss_running $N 3
    [ -z "$(hook_lines "$mark" $N seed)" ] || fail "a seed ran: $(hook_lines "$mark" $N seed)"
    events_since "$mark2" ReplacingMember $N | grep -q "^Warning .*$victim: node $node" ||
        fail "no ReplacingMember Warning: $(events_since "$mark2" ReplacingMember $N)"
    rss_json $N | jq -e --arg v "$victim" --arg n "$node" \
        '.status.lastReplacement.member == $v and .status.lastReplacement.fromNode == $n' >/dev/null ||
        fail "status.lastReplacement: $(rss_json $N | jq -c .status.lastReplacement)"
    [ "$(k get pvc "data-$victim" -n "$NS" -o jsonpath='{.metadata.uid}')" = "$pvc" ] ||
        fail "the claim was replaced although its locality is unknown"
    [ "$(md5sum <"$(claim_dir $N "$o")/writes")" = "$data" ] || fail "the member's data changed"
    note "$(events_since "$mark2" ReplacingMember $N | head -1 | cut -c1-220)"
}

# (c) the dead node's member held the highest sequence during a lights-out: not replaced under Wait nor
# under Replace with the taint (nothing runs: its data may be needed); once the admin allows going on
# (minimumMembers 2) the survivors' highest seeds, the lost member is replaced, never seeds, and the
# replacement (same claim: the newer data) is held back like any late member newer than the seed.
sc_node_replace_highest() {
    local N=nlh o victim node uid mark i s=10 seeds
    nl_setup $N
    # shellcheck disable=SC2064 # expanded now on purpose: the locals are gone when the trap runs
    trap "nl_cleanup $N $node" EXIT
    power_off_all
    for i in 0 1 2; do
        if [ "$i" = "$o" ]; then set_sequence $N "$i" 60; else set_sequence $N "$i" $s && s=$((s + 10)); fi
    done
    mark=$(now)
    power_on_except "$node"
    sleep $((DEAD_S + 5))
    [ -z "$(hook_lines "$mark" $N seed primary secondary)" ] || fail "started while $victim was missing (Wait)"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"nodeLossPolicy":"Replace"}}' >/dev/null || fail "patch"
    k taint nodes "$node" "$OOS=nodeshutdown:NoExecute" >/dev/null || fail "kubectl taint"
    said() { nl_message $N | grep -q "$victim (node $node is down.*Replace replaces a member only while a primary runs"; }
    wait_until 30 "the status to say why $victim is not replaced" said
    sleep 5
    [ -z "$(hook_lines "$mark" $N seed primary secondary)" ] || fail "started while $victim was missing (Replace)"
    [ "$(member_uid $N "$o")" = "$uid" ] || fail "replaced during the lights-out"
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"recovery":{"minimumMembers":2}}}' >/dev/null || fail "patch"
    replaced() { local u; u=$(member_uid $N "$o"); [ -n "$u" ] && [ "$u" != "$uid" ]; }
    wait_until 90 "$victim replaced once a primary runs" replaced
    held() { events_since "$mark" NewerThanSeed $N | grep -q "^Warning .*$victim"; }
    wait_until 60 "the replacement (sequence 60) held back" held
    seeds=$(hook_lines "$mark" $N seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" rc=0" ]] && [[ $seeds != *" $victim "* ]] &&
        [ "$(wc -l <"$(claim_dir $N "$(awk '{print $2}' <<<"$seeds" | sed 's/.*-//')")/writes")" = 20 ] ||
        fail "one seed, on the survivor with 20: $seeds"
    events_since "$mark" ReplacingMember $N | grep -q "^Warning .*$victim: node $node" ||
        fail "ReplacingMember: $(events_since "$mark" ReplacingMember $N)"
    # The admin gives up the newer writes: it joins with primary, still never seeds.
    k patch rss $N -n "$NS" --type merge -p '{"spec":{"recovery":{"onNewerLateMember":"Join"}}}' >/dev/null
    joined() { hook_lines "$mark" $N primary | grep -q " $victim primary .* rc=0$"; }
    wait_until 60 "$victim to join with primary" joined
    [ -z "$(hook_lines "$mark" $N seed | grep " $victim ")" ] || fail "the replacement seeded"
    [ "$(wc -l <"$(claim_dir $N "$o")/writes")" = 60 ] || fail "the volume changed"
    note "seed: $seeds"
}

all=(late_node stays_off journal force_seed suspend hook_env app_rollout app_rollout_outage metrics garbage_fixed noisy api_outage outage_end outage_after_lightsout outage_stopped partition restart_cutoff huge_epoch forgery namespaced annotation_upgrade keeps_failing node_replace node_replace_highest invalid_spec foreign_sts
    reinstall)
sel=("$@")
[ ${#sel[@]} -gt 0 ] || sel=("${all[@]}")

say "safety: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
run_scenarios 0 "${sel[@]}"
