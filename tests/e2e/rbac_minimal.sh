#!/usr/bin/env bash
# rbac_minimal.sh -- least privilege you can show: for each rule of deploy/rbac.yaml (or, with --verbs,
# each verb of each rule), a fresh 3-node world runs rssd with deploy/'s RBAC less that one rule and a
# short scenario (rssd elects a leader, an RSS is created and reaches Running with Events on it,
# lights-out, it is Running again, a member on a lost node is replaced under nodeLossPolicy Replace).
# A rule is needed when the scenario then fails and kubesim denied rssd something (its log's "403:"
# lines); a rule whose removal changes nothing is reported UNNEEDED.
#
# Not in tests/run.sh: about 70 s per rule (the failing wait times out), ~10 minutes in all (--verbs: ~40).
# usage: tests/e2e/rbac_minimal.sh [--verbs] [RULE...]     (RULE: ClusterRole/rssd:N, Role/rssd-leases:N or Role/rssd-records:N)
# Environment: RSS_BUILD_DIR as for the other e2e tests; RBAC_MIN_TIMEOUT (s, default 60) per wait.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

mode=rules
if [ "${1:-}" = --verbs ]; then
    mode=verbs
    shift
fi
T=${RBAC_MIN_TIMEOUT:-60}
R=dummy

# variants: one line per removal, "OBJECT:RULE[:VERB] description"
variants() {
    python3 - "$repo/deploy/rbac.yaml" "$mode" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] not in ("Role", "ClusterRole"):
        continue
    for i, r in enumerate(d.get("rules", [])):
        what = "%s %s %s" % (",".join(r.get("apiGroups", [])) or "core", ",".join(r.get("resources", [])), ",".join(r["verbs"]))
        if sys.argv[2] == "verbs":
            for v in r["verbs"]:
                print("%s/%s:%d:%s %s [-%s]" % (d["kind"], d["metadata"]["name"], i, v, what.replace(" ", "/"), v))
        else:
            print("%s/%s:%d %s" % (d["kind"], d["metadata"]["name"], i, what.replace(" ", "/")))
PY
}

# without SPEC OUT: deploy/rbac.yaml less one rule (or one verb of it), to OUT.
without() {
    python3 - "$repo/deploy/rbac.yaml" "$1" "$2" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
obj, idx, *verb = sys.argv[2].split(":")
kind, name = obj.split("/")
for d in docs:
    if d["kind"] == kind and d["metadata"]["name"] == name:
        i = int(idx)
        if verb:
            d["rules"][i]["verbs"] = [v for v in d["rules"][i]["verbs"] if v != verb[0]]
            if not d["rules"][i]["verbs"]:
                del d["rules"][i]
        else:
            del d["rules"][i]
yaml.safe_dump_all(docs, open(sys.argv[3], "w"), sort_keys=False)
PY
}

# scenario: the short run; prints the step it got to, fails at the first step that does not happen.
scenario() {
    (
        set -e
        echo "step: world up with rssd"
        timeout 180 "$WORLD" up --nodes 3 --node-grace 3 >"$E2E_TMP/world-up.log" 2>&1 || fail "world up"
        KC=$("$WORLD" kubeconfig)
        export KUBECONFIG=$KC
        daemonset_for_world "$E2E_TMP/daemonset.yaml"
        k apply -f "$repo/deploy/namespace.yaml" -f "$repo/deploy/crd.yaml" -f "$E2E_RBAC" \
            -f "$E2E_TMP/daemonset.yaml" >"$E2E_TMP/apply.log" 2>&1 || fail "kubectl apply deploy/"
        k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org >/dev/null
        echo "step: rssd pods Ready, a leader, heartbeats"
        wait_until "$T" "3 rssd pods Running" rssd_pods_ready 3
        wait_until "$T" "a leader holds rssd-leader" leader_node
        wait_until "$T" "3 heartbeat Leases" heartbeats_are 3
        echo "step: create an RSS, Running"
        k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null
        wait_until "$T" "$R Running with 3 primaries" rss_running "$R" 3
        echo "step: Events recorded on the RSS"
        has_events() { k get events -n "$NS" -o json | jq -e --arg o "$R" 'any(.items[]; .involvedObject.name == $o)' >/dev/null; }
        wait_until "$T" "an Event on $R" has_events
        echo "step: lights-out, Running again"
        power_off_all
        wait_heartbeats_expired
        local mark
        mark=$(now)
        power_on_all
        recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null . && [ "$(count_lines "$(hook_lines "$mark" "$R" primary secondary)")" -ge 2 ]; }
        wait_until "$T" "a seed and 2 joins after the lights-out" recovered
        wait_until "$T" "$R Running after the lights-out" rss_running "$R" 3
        # nodeLossPolicy Replace (nodes/persistentvolumes get, persistentvolumeclaims get/delete): a node
        # that is not the leader's is tainted out-of-service and powered off; its member's pod is replaced
        # (it stays Pending: anti-affinity and 3 nodes; the rights are what this step shows).
        echo "step: a member on a lost node replaced (nodeLossPolicy Replace)"
        local o=0 ln vnode uid
        ln=$(leader_node)
        [ "$(member_node "$R" 0)" != "$ln" ] || o=1
        vnode=$(member_node "$R" $o)
        uid=$(member_uid "$R" $o)
        k patch rss "$R" -n "$NS" --type merge -p '{"spec":{"nodeLossPolicy":"Replace"}}' >/dev/null
        k taint nodes "$vnode" node.kubernetes.io/out-of-service=nodeshutdown:NoExecute >/dev/null
        "$WORLD" power-off "$vnode" >/dev/null 2>&1
        replaced() { local u; u=$(member_uid "$R" $o); [ -n "$u" ] && [ "$u" != "$uid" ]; }
        wait_until $((T + 40)) "$(member "$R" $o) replaced" replaced
        echo "step: done"
    ) >"$E2E_TMP/scenario.log" 2>&1
}

# denied: the distinct requests kubesim refused to rssd (names of objects elided).
denied() {
    { grep -ho '403: .*' "$RSS_WORLD_DIR/kubesim.log" 2>/dev/null || true; } | { grep 'system:serviceaccount:rssd-system:rssd' || true; } |
        sed -E 's/^403: //; s/^([a-z0-9.]+) "[^"]*" is/\1 NAME is/; s/ is forbidden: User "[^"]*" cannot / /' | sort | uniq -c |
        sort -rn | head -5 || true
}

run_one() { # SPEC DESCRIPTION
    local spec=$1 desc=$2 rc=0
    if [ "$spec" = none ]; then
        E2E_RBAC=$repo/deploy/rbac.yaml
    else
        E2E_RBAC=$E2E_TMP/rbac-less.yaml
        without "$spec" "$E2E_RBAC"
    fi
    export E2E_RBAC
    local t0
    t0=$(date +%s)
    scenario || rc=$?
    local reached d
    reached=$(grep '^step: ' "$E2E_TMP/scenario.log" | tail -1 | sed 's/^step: //' || true)
    d=$(denied)
    if [ "$spec" = none ]; then
        if [ $rc = 0 ] && [ -z "$d" ]; then
            echo "CONTROL full deploy/rbac.yaml: scenario passes, nothing denied ($(($(date +%s) - t0)) s)"
        else
            echo "CONTROL FAILED: the full RBAC does not pass (reached: $reached; denied: ${d:-none})"
            grep -E 'FAIL|timed out' "$E2E_TMP/scenario.log" | head -3
            RESULT=1
        fi
    elif [ $rc != 0 ] && [ -n "$d" ]; then
        echo "NEEDED   $spec ($desc): fails at '$reached' ($(($(date +%s) - t0)) s); denied:"
        sed 's/^/           /' <<<"$d"
    elif [ $rc != 0 ]; then
        echo "FAILED?  $spec ($desc): fails at '$reached' but kubesim denied nothing"
        grep -E 'FAIL|timed out' "$E2E_TMP/scenario.log" | head -2 | sed 's/^/           /'
    elif [ -n "$d" ]; then
        echo "DENIED   $spec ($desc): the scenario passes but kubesim denied:"
        sed 's/^/           /' <<<"$d"
    else
        echo "UNNEEDED $spec ($desc): the scenario passes and nothing was denied"
    fi
    "$WORLD" down >/dev/null 2>&1 || true
}

RESULT=0
say "rbac_minimal: mode $mode, wait timeout ${T}s"
run_one none "control"
if [ $# -gt 0 ]; then
    for s in "$@"; do run_one "$s" "$s"; done
else
    while read -r spec desc; do
        run_one "$spec" "$desc"
    done < <(variants)
fi
exit $RESULT
