#!/usr/bin/env bash
# house_rules.sh -- checks the house rules of docs/design.md#house-rules on the product code, so they
# are not only written down. Usage: tests/lib/house_rules.sh BUILD_DIR. Exits non-zero on a breach.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: house_rules.sh BUILD_DIR}
fail=0
breach() { echo "house rules: $*" >&2; fail=1; }

product=$(git ls-files 'nodeagent/*.c' 'nodeagent/*.h' 'leader/*.c' 'leader/*.h' 'include/*.h')

# 1. No unbounded string functions in product code.
if hits=$(grep -nwE 'strcpy|strcat|sprintf|vsprintf|gets' $product | grep -vE '^\S+:[0-9]+:\s*(/\*|\*)'); then
    breach "unbounded string functions (use snprintf, memcpy, stpcpy or rss_strbuf):"$'\n'"$hits"
fi

# 2. Every file formatted by the committed .clang-format.
if ! out=$(git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run -Werror 2>&1); then
    breach "not clang-formatted (run clang-format -i on these):"$'\n'"$(grep 'error:' <<<"$out" | head -20)"
fi

# 3. printf-like functions carry a format attribute: enforced by the compiler
#    (-Wsuggest-attribute=format with -Werror, set in the top-level CMakeLists.txt).

# 4. The rss_ prefix means public: every global function of the product libraries named rss_* is
#    declared in include/rss/, and every other global function is not (internal ones are static, or
#    shared between a module's files through its *_internal.h under a module prefix).
for lib in "$build"/nodeagent/common/librss_common.a "$build"/nodeagent/librss_agent.a "$build"/leader/librss_leader.a; do
    [ -f "$lib" ] || { breach "missing $lib (build first)"; continue; }
    while read -r sym; do
        case "$sym" in
        rss_*) grep -qw "$sym" include/rss/*.h || breach "$sym in $(basename "$lib") has the public prefix but is not in include/rss/" ;;
        *) ! grep -qw "$sym" include/rss/*.h || breach "$sym is declared in include/rss/ without the rss_ prefix" ;;
        esac
    done < <(nm --defined-only -g "$lib" 2>/dev/null | awk '$2 == "T" {print $3}')
done

[ $fail = 0 ] && echo "house rules: ok"
exit $fail
