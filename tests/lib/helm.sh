#!/usr/bin/env bash
# helm.sh -- prints the path of a real helm binary of the pinned version, building it when missing.
#
# Helm is built from its Go module (helm.sh/helm/v3) through the Go module proxy with the installed
# `go`, and cached outside the work tree, keyed by version:
#   ${RSS_TOOLS_DIR:-/var/cache/rssd-tools}/helm-$RSS_HELM_VERSION/helm
# (falls back to ${XDG_CACHE_HOME:-$HOME/.cache}/rssd-tools when that is not writable). The build
# runs once per machine (a few minutes on 2 cores); later calls only print the path.
# Exits non-zero, with a message on stderr, when it cannot provide one.
set -euo pipefail

version=${RSS_HELM_VERSION:-v3.19.5}
root=${RSS_TOOLS_DIR:-/var/cache/rssd-tools}
if ! mkdir -p "$root" 2>/dev/null || [ ! -w "$root" ]; then
  root=${XDG_CACHE_HOME:-$HOME/.cache}/rssd-tools
  mkdir -p "$root"
fi
dir=$root/helm-$version
if [ -x "$dir/helm" ]; then
  echo "$dir/helm"
  exit 0
fi
command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null 2>&1 || {
  echo "helm.sh: no go toolchain to build helm $version" >&2
  exit 1
}
mkdir -p "$dir"
# Two builds racing (two tests on a fresh machine) must not leave a half-written binary: build into a
# temporary directory and rename, which is atomic on one file system.
tmp=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The version stamp is what `helm version` prints; without it helm reports v3 with no patch level.
if ! GOBIN=$tmp GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
  "helm.sh/helm/v3/cmd/helm@$version" >"$tmp/log" 2>&1; then
  echo "helm.sh: building helm $version failed:" >&2
  tail -20 "$tmp/log" >&2
  exit 1
fi
mv -f "$tmp/helm" "$dir/helm"
echo "$dir/helm"
