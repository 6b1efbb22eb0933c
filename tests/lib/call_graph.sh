#!/usr/bin/env bash
# call_graph.sh -- the call graph between the files of one product library, read from its object files
# (what each file calls in the others), and the circles in it. Usage:
#   tests/lib/call_graph.sh OBJECT_DIR            prints "caller -> callee: functions", one line a pair
#   tests/lib/call_graph.sh --circles OBJECT_DIR  prints the files of each circle; exits 1 when there is one
# OBJECT_DIR is a CMake target's object folder, e.g. build/nodeagent/CMakeFiles/rss_agent.dir. Only calls
# between files of that library count: a circle is files that cannot be read bottom up.
set -uo pipefail
circles=0
[ "${1:-}" = --circles ] && { circles=1; shift; }
dir=${1:?usage: call_graph.sh [--circles] OBJECT_DIR}
shopt -s nullglob globstar
objs=("$dir"/**/*.o)
[ ${#objs[@]} -gt 0 ] || { echo "call_graph.sh: no object files under $dir" >&2; exit 2; }
declare -A def
name() { local b=${1#"$dir"/}; echo "${b%.c.o}"; }
for o in "${objs[@]}"; do
    while read -r s; do def[$s]=$(name "$o"); done < <(nm --defined-only -g "$o" | awk '$2 == "T" {print $3}')
done
edges=$(for o in "${objs[@]}"; do
    caller=$(name "$o")
    while read -r s; do
        [ -n "${def[$s]:-}" ] && [ "${def[$s]}" != "$caller" ] && echo "$caller ${def[$s]} $s"
    done < <(nm -u "$o" | awk '{print $2}')
done | sort)
if [ $circles = 0 ]; then
    awk '{k = $1 " -> " $2; a[k] = a[k] (a[k] ? ", " : "") $3} END {for (k in a) print k ": " a[k]}' <<<"$edges" | sort
    exit 0
fi
# tsort names the files of every loop it breaks on stderr.
loops=$(awk '{print $1, $2}' <<<"$edges" | sort -u | tsort 2>&1 >/dev/null | grep -v 'input contains a loop')
[ -z "$loops" ] && exit 0
echo "circle:"$'\n'"$loops"
exit 1
