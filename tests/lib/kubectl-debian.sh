#!/usr/bin/env bash
# kubectl-debian.sh -- prints the path of Debian's kubectl 1.20 (package kubernetes-client).
#
# Uses /usr/bin/kubectl when that already is 1.20. Otherwise the package would clash with the
# installed kubectl (same /usr/bin/kubectl path), so it is downloaded with `apt-get download` and
# unpacked with `dpkg-deb -x` into a cache directory instead of being installed:
#   ${RSS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rssd}/kubectl-1.20/kubectl
# Exits non-zero (with a message on stderr) when it cannot provide one.
set -euo pipefail

if command -v kubectl >/dev/null 2>&1 &&
  kubectl version --client 2>/dev/null | grep >/dev/null 'Minor:"20"'; then
  command -v kubectl
  exit 0
fi
cache=${RSS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rssd}/kubectl-1.20
if [ -x "$cache/kubectl" ]; then
  echo "$cache/kubectl"
  exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 777 "$tmp" # apt-get download drops privileges to _apt when it can
# A machine that never ran `apt-get update` has no package lists: fetch them once and try again.
(cd "$tmp" && apt-get download -qq kubernetes-client >/dev/null 2>"$tmp/err") ||
  { apt-get update -qq >/dev/null 2>&1 && (cd "$tmp" && apt-get download -qq kubernetes-client >/dev/null 2>"$tmp/err"); } || {
  echo "kubectl-debian.sh: apt-get download kubernetes-client failed: $(cat "$tmp/err")" >&2
  exit 1
}
dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/x"
install -m 0755 "$tmp/x/usr/bin/kubectl" "$cache/kubectl.new"
mv "$cache/kubectl.new" "$cache/kubectl"
echo "$cache/kubectl"
