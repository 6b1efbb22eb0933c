# safety/lib.sh -- what the safety scenarios of every theme share (sourced by tests/e2e/safety.sh after tests/e2e/lib.sh).
# shellcheck shell=bash

R=dummy
# The leader's dead window for the dummy's members: fence timeout 10 s + the 30 s `stop` timeout + 5 s
# for the kill of a failed fence stop + the 5 s margin.
DEAD_S=50
FENCE_S=${E2E_FENCE%s}
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

# sim VERB QUERY: kubesim's fault injection (docs/kubesim.md), admin token, loopback only.
sim() {
    local ks=$RSS_WORLD_DIR/kubesim
    curl -sS --max-time 5 --cacert "$ks/ca.crt" -H "Authorization: Bearer $(cat "$ks/token")" -X POST \
        "https://127.0.0.1:$(cat "$ks/port")/_sim/$1${2:+?$2}" >/dev/null
}

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
