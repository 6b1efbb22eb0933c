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
here=$(dirname "$0")
source "$here/lib.sh"
source "$here/safety/lib.sh"
# The scenarios, one file per theme; `all` below is the order they run in.
for theme in "$here"/safety/*.sh; do
    [ "$(basename "$theme")" = lib.sh ] || source "$theme"
done

all=(late_node stays_off journal force_seed suspend hook_env app_rollout app_rollout_outage metrics garbage_fixed noisy api_outage outage_end outage_after_lightsout outage_stopped partition restart_cutoff huge_epoch forgery namespaced annotation_upgrade keeps_failing node_replace node_replace_highest invalid_spec foreign_sts
    reinstall)
sel=("$@")
[ ${#sel[@]} -gt 0 ] || sel=("${all[@]}")

say "safety: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
run_scenarios 0 "${sel[@]}"
