#!/usr/bin/env bash
# promtool.sh -- checks deploy/monitoring/ with Prometheus's own promtool: the rules parse, and each alert fires (and stays quiet) as rules_test.yaml says.
#
# Usage: promtool.sh SOURCE_DIR
#        promtool.sh --dashboard-metrics SOURCE_DIR   (prints the metric names dashboard.json's queries use)
# The rule file tested is cut out of prometheusrule.yaml (its spec, de-indented), so what is tested is
# what ships. Then the Grafana dashboard, deploy/monitoring/dashboard.json: valid JSON, every panel titled
# and queried, every query valid PromQL (promtool check rules, as a recording rule), using only metrics
# rssd's source exports. Needs promtool (Debian package prometheus) and jq.
set -euo pipefail
names_only=""
if [ "${1:-}" = --dashboard-metrics ]; then
	names_only=1
	shift
fi
top=$(cd "$1" && pwd)
dash=$top/deploy/monitoring/dashboard.json
# jq: every query of the dashboard as {where, expr, names}. expr is the panel's PromQL with Grafana's
# variables replaced by values Prometheus accepts (each template variable by .*, $__rate_interval,
# $__interval and $__range by 5m); a query variable's label_values(SELECTOR, label) counts as SELECTOR.
# names: the metric names the expr selects, by a small PromQL tokenizer (strings, label matchers,
# ranges, numbers and by/without/on/ignoring/group_x (labels) dropped; an identifier before "(" is a
# function, aggregations and keywords are not names).
dash_queries=$(
	cat <<'JQ'
def names:
  [scan("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`"
        + "|\\{(?:[^}\"]|\"(?:[^\"\\\\]|\\\\.)*\")*\\}|\\[[^\\]]*\\]"
        + "|(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)"
        + "|[0-9.][0-9A-Za-z_.]*|[A-Za-z_:][A-Za-z0-9_:]*(?:\\s*\\()?")
   | select(test("^[A-Za-z_:][A-Za-z0-9_:]*$"))
   | select(ascii_downcase | IN("by", "without", "on", "ignoring", "group_left", "group_right", "bool",
       "and", "or", "unless", "offset", "atan2", "inf", "nan", "sum", "min", "max", "avg", "group",
       "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile") | not)]
  | unique;
[.templating.list[]? | .name] as $vars
| def grafana: reduce $vars[] as $v (.;
      gsub("\\$\\{" + $v + "\\}|\\$" + $v + "(?![A-Za-z0-9_])"; ".*"))
    | gsub("\\$\\{?__(rate_interval|interval|range)\\}?"; "5m");
[ (.panels[]? | ., .panels[]? | select(.type != "row") | . as $p | .targets[]?
    | {where: "panel \($p.id) \"\($p.title)\" target \(.refId)", expr: (.expr // "" | grafana)}),
  (.templating.list[]? | select(.type == "query")
    | {where: "variable \(.name)",
       expr: ((.query | if type == "object" then .query else . end) // ""
              | (capture("^\\s*label_values\\((?<s>.*),\\s*[A-Za-z_][A-Za-z0-9_]*\\s*\\)\\s*$").s // .)
              | grafana)}) ]
| map(. + {names: (.expr | names)})
JQ
)
if [ -n "$names_only" ]; then
	jq -r "$dash_queries"' | [.[].names[]] | unique[]' "$dash"
	exit
fi
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

# The Grafana dashboard.
command -v jq >/dev/null || {
	echo "promtool.sh: jq is missing (apt-get install jq)" >&2
	exit 1
}
if out=$(jq -e 'type == "object" and (.panels | length > 0)' "$dash" 2>&1); then
	ok "dashboard.json is valid JSON, with panels"
else
	bad "dashboard.json is valid JSON, with panels: $out"
	checks_done
	exit 1
fi
# Every panel (also those inside a collapsed row) has a title and a query; rows only a title.
untitled=$(jq -r '[.panels[]? | ., .panels[]?] | .[] | select((.title // "") == "")
	| "panel \(.id // "?") (\(.type // "?"))"' "$dash")
expect "every panel has a title" "" "$untitled"
unqueried=$(jq -r '[.panels[]? | ., .panels[]?] | .[] | select(.type != "row")
	| select([.targets[]? | select((.expr // "") != "")] | length == 0) | "\(.title // .id)"' "$dash")
expect "every panel has a target with an expr" "" "$unqueried"
dups=$(jq -r '[.panels[]? | ., .panels[]? | .id] | group_by(.) | map(select(length > 1)[0])[]' "$dash")
expect "panel ids are unique" "" "$dups"
# Each panel's and target's datasource is the template variable, so an import picks the user's Prometheus.
foreign=$(jq -r '[.panels[]? | ., .panels[]? | select(.type != "row") | ., .targets[]?]
	| .[] | select(.datasource.uid != "${datasource}") | "\(.title // .refId): \(.datasource)"' "$dash")
expect "every panel and target queries \${datasource}" "" "$foreign"
varq=$(jq -r '.templating.list[]? | select(.type == "datasource" or .type == "query")
	| "\(.name)=\(.query | if type == "object" then .query else . end)"' "$dash")
expect "the template variables" 'datasource=prometheus
namespace=label_values(rssd_rss_phase, rss_namespace)
rss=label_values(rssd_rss_phase{rss_namespace=~"$namespace"}, rss)' "$varq"
# Grafana's variables in the queries are the dashboard's own or Grafana's built-in ones (a typo in a
# label matcher's regex would still be valid PromQL).
undefined=$(jq -r '[.templating.list[]? | .name] as $v | [.panels[]? | ., .panels[]? | .targets[]?.expr // empty]
	| [.[] | scan("\\$\\{?([A-Za-z_][A-Za-z0-9_]*)")[0]] | unique
	| map(select(IN($v[]) or IN("__rate_interval", "__interval", "__range") | not)) | join(" ")' "$dash")
expect "every variable the queries use is defined" "" "$undefined"

# Each query, as a recording rule of a rule file of its own, so that promtool's complaint names it.
queries=$(jq -c "$dash_queries"'[]' "$dash")
[ -n "$queries" ] || bad "the dashboard has no queries"
# The metrics rssd exports: every "rssd_..." or "process_..." string in its C source.
exported=$(grep -rhoE --include='*.c' --include='*.h' '"(rssd|process)_[a-z0-9_]+' \
	"$top/nodeagent" "$top/leader" "$top/include" | tr -d '"' | sort -u)
[ "$(wc -l <<<"$exported")" -ge 20 ] || bad "found only these metric names in the source: $exported"
i=0 badexpr="" unknown="" nameless=""
while read -r q; do
	i=$((i + 1))
	where=$(jq -r .where <<<"$q")
	jq -n --argjson q "$q" --arg r "dashboard:query_$i" \
		'{groups: [{name: "dashboard", rules: [{record: $r, expr: $q.expr}]}]}' >"$tmp/dash_$i.json"
	if ! out=$(promtool check rules "$tmp/dash_$i.json" 2>&1); then
		badexpr+=$'\n'"  $where: $(jq -r .expr <<<"$q" | tr -s ' \n' ' ')"$'\n'"    $(grep -v '^Checking\|^$' <<<"$out" | tr '\n' ' ')"
	fi
	names=$(jq -r '.names[]' <<<"$q")
	[ -n "$names" ] || nameless+=" $where;"
	for m in $names; do
		grep -xF "$m" <<<"$exported" >/dev/null || unknown+=$'\n'"  $where uses $m"
	done
done <<<"$queries"
expect "every dashboard query ($i) parses as PromQL (promtool check rules)" "" "$badexpr"
expect "every dashboard query selects a metric" "" "$nameless"
expect "every metric the dashboard uses is one rssd's source exports" "" "$unknown"
checks_done
