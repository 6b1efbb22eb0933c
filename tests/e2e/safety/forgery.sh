# safety/forgery.sh -- forged and foreign records: a huge epoch, a namespace user's forgeries, the namespace overlay, an upgrade from the annotation era.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
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
    warned() { events_since "$mark" InvalidEpoch "$R" | grep >/dev/null "^Warning .*$victim"; }
    wait_until 30 "an InvalidEpoch Warning" warned
    overwritten() { desired "$victim" | jq -e --argjson e "$lt" '.epoch == $e' >/dev/null; }
    wait_until 30 "the forged desired to be overwritten with epoch $lt" overwritten
    [ -z "$(hook_lines "$mark" "$R" stop)" ] || fail "the forged stop ran: $(hook_lines "$mark" "$R" stop)"
    [ "$(lease_transitions)" = "$lt" ] || fail "leadership changed ($lt -> $(lease_transitions))"
    # Still managing: a deleted member comes back and rejoins.
    local uid
    uid=$(member_uid $R 2)
    k delete pod "$(member $R 2)" -n "$NS" --wait=false >/dev/null
    rejoined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $(member $R 2) primary .* rc=0$"; }
    wait_until 90 "$(member $R 2) to rejoin after its pod was deleted" rejoined
    ensure_running
    [ "$(member_uid $R 2)" != "$uid" ] || fail "the pod was not replaced"
    note "$(events_since "$mark" InvalidEpoch "$R" | sed -n 1p | cut -c1-200)"
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
ignored_for() { events_since "$1" IgnoredAnnotation "$R" | grep >/dev/null "^Warning .*pod $2 carries"; }
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
    ! hooks_since "$mark" "$R" | grep >/dev/null attacker.example.com ||
        fail "the forged peers reached a hook: $(hooks_since "$mark" "$R" | grep attacker.example.com | head -2)"
    hooks_since "$mark" "$R" | grep >/dev/null " status " || fail "no periodic status ran in 12 s (the check above proves nothing)"
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
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null .; }
    wait_until 120 "a seed after the lights-out" seeded
    local seeds
    seeds=$(hook_lines "$mark" "$R" seed)
    [ "$(count_lines "$seeds")" = 1 ] && [[ $seeds == *" $other seed args=[] rc=0" ]] ||
        fail "$other (sequence 60) should seed, not the forged $first: $seeds"
    ensure_running 120
    [ "$(wc -l <"$(claim_dir $R 2)/writes")" = 60 ] || fail "the seed's data changed"
    wait_until 30 "an IgnoredAnnotation Warning for $first" ignored_for "$mark" "$first"
    note "$(events_since "$mark" IgnoredAnnotation "$R" | sed -n 1p | cut -c1-220)"
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
    # (Nodes are cluster-scoped, not "across namespaces": the overlay's ClusterRole lets the leader watch the
    # cordoned ones.)
    bad=$(jq -c --arg o "$other" '[.byNamespace[] | select((.client | startswith("rssd/")) and (.namespace == $o or
        (.namespace == "" and (.verb == "LIST" or .verb == "WATCH") and .resource != "discovery" and .resource != "nodes")))]' <<<"$stats")
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
        first2=$(hooks_since "$mark" $R | awk -v p="$m" '$2 == p {print $3}' | sed -n 1p)
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
        note "one IgnoredAnnotation per pod: $(events_since "$mark" IgnoredAnnotation $R | sed -n 1p | cut -c1-160)"
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
