# safety/hooks.sh -- hooks that fail, print garbage or megabytes, the hook environment, and a reinstall of rssd.
# Sourced by tests/e2e/safety.sh (the runner, with tests/e2e/lib.sh and safety/lib.sh); defines sc_* only.
# shellcheck shell=bash
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
    note "$fails failed starts, then: $(events_since "$mark" DeletingPod "$R" | sed -n 1p | cut -c1-160)"
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
    restarted() { hook_lines "$mark" "$R" primary | grep >/dev/null " $m primary .* rc=0$"; }
    wait_until 90 "$m restarted by the new leader" restarted
    ensure_running
    note "epoch before $epoch0, after reinstall $lt"
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
    garbage() { hook_lines "$mark" "$R" sequence | grep >/dev/null " $(member $R 1) sequence .* out=lots-of-writes "; }
    wait_until 60 "$(member $R 1)'s garbage sequence" garbage
    sleep 3
    [ -z "$(hook_lines "$mark" "$R" seed)" ] || fail "seeded while a member's sequence was garbage"
    mark2=$(now)
    rm -f "$(claim_dir $R 1)/garbage-sequence"
    asked() { hook_lines "$mark2" "$R" sequence | grep >/dev/null " $(member $R 1) sequence .* out=40 rc=0$"; }
    wait_until 30 "$(member $R 1) to be asked again (reconcileInterval 10 s)" asked
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null " $(member $R 1) seed "; }
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
    seeded() { hook_lines "$mark" "$R" seed | grep >/dev/null " $(member $R 1) seed "; }
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

# ---- 2d. spec.pod.commandEnv: a hook learns the epoch, generation and action it carries out, and they
#          are the leader's (an application could refuse a deposed leader's command by itself)
sc_hook_env() {
    ensure_running
    local mark v=2 m line obs lt
    m=$(member $R $v)
    mark=$(now)
    k delete pod "$m" -n "$NS" --wait=false >/dev/null
    joined() { hook_lines "$mark" "$R" primary | grep >/dev/null " $m primary .* rc=0$"; }
    wait_until 90 "$m to rejoin" joined
    line=$(awk -v t="$mark" -v p="$m" '$1 > t && $2 == p && $3 == "primary"' "$(claim_dir $R $v)/hooks-env.log" | tail -1)
    obs=$(observed "$m")
    lt=$(lease_transitions)
    [[ $line == *" epoch=$lt "* ]] || fail "hooks-env.log: '$line' lacks epoch=$lt"
    [[ $line == *" action=primary id=$(jq -r .lastAction.id <<<"$obs")" ]] || fail "hooks-env.log: '$line' vs observed $obs"
    note "$line"
    ensure_running
}
