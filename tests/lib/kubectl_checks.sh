# kubectl_checks.sh -- fixture for the shell tests that drive real kubectl against a private kubesim (sourced).
# shellcheck shell=bash
#
# Usage: NAME=... ; . tests/lib/kubectl_checks.sh KUBESIM_BINARY SOURCE_DIR
# Checks the tools, starts kubesim (tests/lib/kubesim.sh) in a temporary directory removed on exit, and
# defines: $top (the source dir), $tmp, k (kubectl with a fresh cache: the dispatcher caches /version
# and discovery, kube-api.md 4.1), and tests/lib/assert.sh (ok / bad / expect / run count checks,
# checks_done prints "# N checks, M failed" and returns non-zero on a failure).

kubesim=$1
top=$(cd "$2" && pwd)
[ -x "$kubesim" ] || {
	echo "$NAME: kubesim is not built ($kubesim)" >&2
	exit 1
}
for tool in kubectl jq; do
	command -v "$tool" >/dev/null || {
		echo "$NAME: $tool is missing" >&2
		exit 1
	}
done

tmp=$(mktemp -d "/tmp/rss-$NAME.XXXXXX")
# shellcheck source=kubesim.sh
. "$top/tests/lib/kubesim.sh"
kubectl_checks_cleanup() {
	kubesim_stop
	rm -rf "$tmp"
}
trap kubectl_checks_cleanup EXIT
kubesim_start "$kubesim" "$tmp/sim" "$tmp/kubesim.log" || exit 1
k() { kubectl --cache-dir "$tmp/cache" "$@"; }

# shellcheck source=assert.sh
. "$top/tests/lib/assert.sh"
