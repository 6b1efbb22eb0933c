#!/usr/bin/env bash
# safety.sh -- the safety rules' end-to-end scenarios (ARCHITECTURE rule 3 as corrected, epochs, deposition).
#
# Usage: safety.sh [all | SCENARIO...]   (default: those of this world's flavour, table below)
# One 3-node world with rssd from deploy/ and apps/dummy; the agents' fence timeout is shortened to
# 10 s (E2E_FENCE) so that "well past the fence timeout" takes seconds, not minutes. Ground truth: the
# hooks logs and the data on the volumes; rssd's status and Events are checked in addition, since
# saying whom it waits for is part of the behaviour. Prints "PASS/FAIL name" and "N passed, N failed".
set -euo pipefail
export E2E_FENCE=${E2E_FENCE:-10s}
here=$(dirname "$0")
source "$here/lib.sh"
source "$here/safety/lib.sh"
source "$here/flavour.sh"
# The scenarios, one file per theme; the table below is the order they run in.
for theme in "$here"/safety/*.sh; do
    [ "$(basename "$theme")" = lib.sh ] || source "$theme"
done

# The scenarios in the order they run, each with the world flavour it runs in by default (flavour.sh):
# `safety.sh` runs those of RSS_WORLD_FLAVOUR's (kubesim: ctest e2e_safety; real: tests/run.sh's real stage),
# `safety.sh all` every one, `safety.sh NAME...` the named ones. Why not real: docs/testing.md.
# late_node, stays_off, journal and force_seed are protocol timing: their assertions run in the protocol simulator
# (tests/sim/proto/scenarios/, ctest sim_scenario_*), in virtual time; here they run by name only.
table=(force_seed_running:real suspend:real hook_env:real app_rollout:real
    app_rollout_outage:kubesim metrics:real garbage_fixed:real noisy:real api_outage:real
    outage_end:kubesim outage_after_lightsout:kubesim outage_after_reboot:kubesim outage_stopped:kubesim partition:real restart_cutoff:real
    huge_epoch:real forgery:kubesim namespaced:kubesim annotation_upgrade:real keeps_failing:real
    node_replace:kubesim node_replace_highest:kubesim invalid_spec:real foreign_sts:real reinstall:real)
mapfile -t sel < <(select_scenarios "${table[@]}" -- "$@")
[ ${#sel[@]} -gt 0 ] || { say "safety: no scenario runs in the ${RSS_WORLD_FLAVOUR:-kubesim} world by default"; exit 0; }

say "safety: world of 3 nodes (build $RSS_BUILD_DIR, world $RSS_WORLD_DIR, fence timeout $E2E_FENCE)"
e2e_up 3
k apply -n "$NS" -f "$repo/apps/dummy/rss.yaml" >/dev/null || fail "apply apps/dummy/rss.yaml"
run_scenarios 0 "${sel[@]}"
