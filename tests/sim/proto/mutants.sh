#!/usr/bin/env bash
# tests/sim/proto/mutants.sh -- each mutant re-introduces a fault the planner once had, or removes a rule;
# the simulator must find it within its CI budget (the agent core's too). Prints one line per mutant: the seed that found it and
# the time, or MISSED; exits 1 when a mutant that must be caught is not.
#
#   bash tests/sim/proto/mutants.sh [--schedules N] [NAME...]     (default budget: 10000 schedules)
#
# Works on a copy of the tree in a temporary directory (the checkout is never edited): configures it once,
# then per mutant applies one sed edit to one planner file, rebuilds sim_proto (one file recompiles) and
# runs it. A mutant whose edit does not apply fails the script: the code moved, update the pattern.
set -euo pipefail
cd "$(dirname "$0")/../../.."
top=$PWD
budget=10000
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --schedules) budget=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) only+=("$1"); shift ;;
  esac
done

# One mutant per line, tab-separated: name, must be caught ("yes", or "no: why the simulator cannot reach
# it yet"), the file (the planner's or the agent core's), the sed script (basic regular expressions: `|` and
# `+` are literal). wake_*: issue 35's woken agent that calls its fence off (rule 18), in the agent core.
mutants=$(cat <<'EOF'
seed_lowest	yes	leader/planner/planner_recovery.c	s/if (!t->best || m->seq > t->best->seq) {/if (!t->best || m->seq < t->best->seq) {/
seed_beside_running	yes	leader/planner/planner_derive.c	s/(m->role == RSS_ROLE_STARTING || rss_role_running(m->role) || m->pending);/false;/
no_fencing	no: no old leader writes after the change here (the store has no resourceVersions yet, so rule 9's race with a deposed leader's CAS cannot happen)	leader/planner/planner.c	s/out->fencing = planner_fence(&c);/out->fencing = false;/
dead_is_silent	yes	leader/planner/planner_derive.c	s/m->fenced_dead = m->has_node && !in->node_alive && in->node_dead;/m->fenced_dead = m->has_node \&\& !in->node_alive;/
undetached_counts	yes	leader/planner/planner_failover.c	s/\*has_pos = o->has_position && !\*undetached;/*has_pos = o->has_position;/
two_primaries_by_ordinal	no: masked by rule 17's hold (the old primary's hold is written before the promotion, so stop_diverged() stops it first in every schedule, scenario thaw_before_fence; test_two_primaries_newer_mark_wins covers the fallback)	leader/planner/planner_running.c	s/c->spec->primaries == 1 && c->top && c->top->primary_up ? c->top : NULL;/NULL;/
failover_record_dropped_at_new_term	no: equivalent since the records' primary marks (rule 16): a new term finds the lost primary there and asks again (scenario leader_change_failover passes with it; the model's lineage_NO_MARK is the fault it stood for)	leader/planner/planner.c	s|out->fencing = planner_fence(&c); /\* row 3|if ((out->fencing = planner_fence(\&c))) { cJSON_Delete(c.new_failover); c.new_failover = NULL; } /* row 3|
wake_never_fences	yes	nodeagent/agent_decide.c	s/return RSS_AGENT_WAKE_FENCE;/return RSS_AGENT_WAKE_LOOK;/
wake_answer_calls_off	yes	nodeagent/agent_decide.c	s/if (!cJSON_IsObject(node)) {/if (true) { snprintf(why, size, "the API server answered"); return true; } if (!cJSON_IsObject(node)) {/
failsafe_never_keeps	yes	nodeagent/agent_decide.c	s/if (peer_has_api)/if (peer_has_api || hosting)/
failsafe_majority	no: the partitions cut nodes from the API server, never from each other, so no leader sits on a minority side with it; and a majority kept through a shared outage cannot acknowledge more than the applications' own quorum allows	nodeagent/agent_decide.c	s/return hosting > 0 \&\& reached == hosting;/return reached * 2 > hosting;/
quorum_below_replicas	yes	leader/planner/planner_failover.c	s/if (m == lost || (!m->exists && (int)m->ordinal >= c->target))/if (m == lost || (int)m->ordinal >= c->target)/
EOF
)

tmp=$(mktemp -d /tmp/rss-mutants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp"
# (the working tree as it is, new files included: a mutant run before a commit)
cmake -S "$tmp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$tmp/build" --target sim_proto -j"$(nproc)" >/dev/null

rc=0
printf '%-38s %-8s %-10s %s\n' mutant result seed "time (s)"
while IFS=$'\t' read -r name must file script; do
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then
    continue
  fi
  cp "$top/$file" "$tmp/$file"
  sed -i "$script" "$tmp/$file"
  if cmp -s "$top/$file" "$tmp/$file"; then
    echo "mutants.sh: $name: the edit did not apply to $file (the code moved: update the pattern)" >&2
    rc=1
    continue
  fi
  cmake --build "$tmp/build" --target sim_proto -j"$(nproc)" >"$tmp/build.log" 2>&1 || {
    tail -n 20 "$tmp/build.log" >&2
    echo "mutants.sh: $name: does not build" >&2
    rc=1
    cp "$top/$file" "$tmp/$file"
    continue
  }
  t0=$(date +%s.%N)
  out=$("$tmp/build/tests/sim/proto/sim_proto" --schedules "$budget" 2>&1) && found=no || found=yes
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$found" = yes ]; then
    seed=$(sed -n 's/^VIOLATION seed \([0-9]*\).*/\1/p' <<<"$out")
    what=$(sed -n 's/^VIOLATION seed [0-9]* ([^)]*) at t=[0-9]* s: \(P[0-9]\).*/\1/p' <<<"$out")
    printf '%-38s %-8s %-10s %s %s\n' "$name" "found" "${seed:-?}" "$secs" "${what:-(no property: a crash?)}"
    [ -n "$seed" ] || { echo "$out" | tail -n 5 >&2; rc=1; }
  else
    printf '%-38s %-8s %-10s %s %s\n' "$name" "MISSED" "-" "$secs" "${must#no: }"
    [ "$must" != yes ] || rc=1
  fi
  cp "$top/$file" "$tmp/$file"
done <<<"$mutants"
exit $rc
