#!/usr/bin/env bash
# promtool.sh -- checks deploy/monitoring/ with Prometheus's own promtool: the rules parse, and each alert fires (and stays quiet) as rules_test.yaml says.
#
# Usage: promtool.sh SOURCE_DIR
# The rule file tested is cut out of prometheusrule.yaml (its spec, de-indented), so what is tested is
# what ships. Needs promtool (Debian package prometheus).
set -euo pipefail
top=$(cd "$1" && pwd)
command -v promtool >/dev/null || {
	echo "promtool.sh: promtool is missing (apt-get install prometheus)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/rss-promtool.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rule=$top/deploy/monitoring/prometheusrule.yaml
# Everything under `spec:`, two spaces less: a plain Prometheus rule file.
sed -n '/^spec:$/,$p' "$rule" | sed '1d; s/^  //' >"$tmp/rules.yaml"
cp "$top/tests/monitoring/rules_test.yaml" "$tmp/"
# shellcheck source=../lib/assert.sh
. "$top/tests/lib/assert.sh"
echo "# promtool $(promtool --version 2>&1 | sed -n 1p)"
run "promtool check rules" promtool check rules "$tmp/rules.yaml"
expected=$(grep -c '^    - alert:' "$rule")
tested=$(grep -o 'alertname: [A-Za-z]*' "$tmp/rules_test.yaml" | sort -u | wc -l)
expect "every alert has a test" "$expected" "$tested"
run "promtool test rules" bash -c 'cd "$1" && promtool test rules rules_test.yaml' _ "$tmp"
# Every alert's runbook_url points at its own section of docs/operations.md, which exists.
missing=""
for a in $(sed -n 's/^    - alert: //p' "$rule"); do
	lower=$(tr '[:upper:]' '[:lower:]' <<<"$a")
	awk -v a="$a" '$0 ~ "- alert: " a "$" {f = 1} f && /runbook_url:/ {print; exit}' "$rule" |
		grep -F "docs/operations.md#$lower\"" >/dev/null || missing+=" $a(url)"
	grep -x "### $a" "$top/docs/operations.md" >/dev/null || missing+=" $a(section)"
done
expect "every alert's runbook_url names its section of docs/operations.md" "" "$missing"
checks_done
