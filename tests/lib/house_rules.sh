#!/usr/bin/env bash
# house_rules.sh -- checks the house rules of docs/design.md#house-rules on the product code, so they
# are not only written down. Usage: tests/lib/house_rules.sh BUILD_DIR. Exits non-zero on a breach.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: house_rules.sh BUILD_DIR}
fail=0
breach() { echo "house rules: $*" >&2; fail=1; }

product=$(git ls-files 'nodeagent/*.c' 'nodeagent/*.h' 'leader/*.c' 'leader/*.h' 'include/*.h')

# 1. The banned C library calls (include/rss/banned.h) are a compile error in product code: the
#    build enforces it (-include in nodeagent/ and leader/). Check here that the header still bites
#    and that every product directory is compiled with it.
# Each line is a valid call: without the header it compiles, with it it must not.
while read -r f call; do
    snippet="#include <stdarg.h>
char d[64]; const char *s = \"x\"; va_list ap; time_t t;
void u(void) { (void)$call; }"
    cc -std=c11 -D_GNU_SOURCE -include stdio.h -include stdlib.h -include string.h -include time.h \
        -x c - -c -o /dev/null <<<"$snippet" 2>/dev/null || { breach "the check's own call of $f does not compile"; continue; }
    if cc -std=c11 -D_GNU_SOURCE -include include/rss/banned.h -x c - -c -o /dev/null <<<"$snippet" 2>/dev/null; then
        breach "include/rss/banned.h does not make a call of $f a compile error"
    fi
done <<'CALLS'
strcpy strcpy(d, s)
strcat strcat(d, s)
strncpy strncpy(d, s, 1)
strncat strncat(d, s, 1)
sprintf sprintf(d, "%s", s)
vsprintf vsprintf(d, s, ap)
strtok strtok(d, s)
gmtime gmtime(&t)
localtime localtime(&t)
atoi atoi(s)
CALLS
for d in nodeagent leader; do
    grep -q 'include/rss/banned.h' "$d/CMakeLists.txt" || breach "$d/CMakeLists.txt does not compile with -include rss/banned.h"
done

# 2. Every file formatted by the committed .clang-format.
if ! out=$(git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run -Werror 2>&1); then
    breach "not clang-formatted (run clang-format -i on these):"$'\n'"$(grep 'error:' <<<"$out" | head -20)"
fi

# 3. printf-like functions carry a format attribute: enforced by the compiler
#    (-Wsuggest-attribute=format with -Werror, set in the top-level CMakeLists.txt).

# 4. The rss_ prefix means public: every global function of the product libraries named rss_* is
#    declared in include/rss/, and every other global function is not (internal ones are static, or
#    shared between a module's files through its *_internal.h under a module prefix).
for lib in "$build"/nodeagent/common/librss_base.a "$build"/nodeagent/common/librss_protocol.a "$build"/nodeagent/common/librss_kube.a "$build"/nodeagent/common/librss_cri.a "$build"/leader/librss_planner.a "$build"/nodeagent/librss_agent_core.a "$build"/nodeagent/librss_agent.a "$build"/leader/librss_leader.a; do
    [ -f "$lib" ] || { breach "missing $lib (build first)"; continue; }
    while read -r sym; do
        case "$sym" in
        rss_*) grep -qw "$sym" include/rss/*.h || breach "$sym in $(basename "$lib") has the public prefix but is not in include/rss/" ;;
        *) ! grep -qw "$sym" include/rss/*.h || breach "$sym is declared in include/rss/ without the rss_ prefix" ;;
        esac
    done < <(nm --defined-only -g "$lib" 2>/dev/null | awk '$2 == "T" {print $3}')
done

# 5. The planner and the agent's core are pure: their libraries reach neither the Kubernetes nor the CRI
#    client, nor their libraries, nor a clock, a sleep or a thread (the build makes the clients a link error
#    for the test_planner_* tests and tests/sim/proto too; this says it in words).
for lib in leader/librss_planner.a nodeagent/librss_agent_core.a; do
    if [ -f "$build/$lib" ] &&
        hits=$(nm -u "$build/$lib" | grep -E ' (rss_(kube|cri|record|clock|thread)_|kube_|cri_|curl_|grpc_|MHD_|pthread_|clock_gettime|nanosleep|usleep|sleep|time)$'); then
        breach "$lib calls I/O, a clock or a thread (it must stay pure):"$'\n'"$hits"
    fi
done

# 6. No call circle between the files of a library (tests/lib/call_graph.sh draws the graph): a reader
#    reads each library bottom up.
for dir in nodeagent/CMakeFiles/rss_agent.dir nodeagent/CMakeFiles/rss_agent_core.dir leader/CMakeFiles/rss_leader.dir leader/CMakeFiles/rss_planner.dir \
    nodeagent/common/CMakeFiles/rss_base.dir \
    nodeagent/common/CMakeFiles/rss_protocol.dir nodeagent/common/CMakeFiles/rss_kube.dir \
    nodeagent/common/CMakeFiles/rss_cri.dir; do
    [ -d "$build/$dir" ] || { breach "missing $build/$dir (build first)"; continue; }
    out=$(tests/lib/call_graph.sh --circles "$build/$dir") || breach "a call circle in ${dir%.dir}:"$'\n'"$out"
done

# 7. The test scripts run under pipefail, so a reader that stops at its first line kills the writer
#    with SIGPIPE and fails the pipe at random: `others_of | head -n 1` failed a CI run, and a negated
#    `! log | grep -q X` would pass exactly when X was there. Read to the end: `sed -n 1p`,
#    `grep X >/dev/null`, or input_has (tests/e2e/lib.sh).
if hits=$(git ls-files '*.sh' .ci/run tests/sim/world/world tests/realk8s/world-real |
    xargs grep -nE '^[^#]*[^|]\|\s*(grep\s+-[a-zA-Z]*[qm]|head\s+-(n\s*)?1\b)'); then
    breach "a pipe read only in part (grep -q, grep -m, head -1) under pipefail:"$'\n'"$hits"
fi

[ $fail = 0 ] && echo "house rules: ok"
exit $fail
