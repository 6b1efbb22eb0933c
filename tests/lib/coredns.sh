#!/usr/bin/env bash
# coredns.sh -- prints the path of a CoreDNS binary of the pinned version, building it when missing.
#
# The real world's cluster DNS (tests/realk8s/world-real): galera's members find each other by their
# headless Service names, which only a DNS server watching the real apiserver answers. CoreDNS is built from
# its Go module (github.com/coredns/coredns) through the Go module proxy with the installed `go`, through a
# small wrapper module whose main imports only the plugins the world's Corefile uses (kubernetes, errors,
# cache): the full plugin set pulls in every cloud SDK and takes many times longer to build. The binary is
# cached outside the work tree, keyed by version, like helm (tests/lib/helm.sh):
#   ${RSS_TOOLS_DIR:-/var/cache/rssd-tools}/coredns-$RSS_COREDNS_VERSION/coredns
# The pinned version is the last one built against client-go v0.34 (the real world's Kubernetes minor).
# Exits non-zero, with a message on stderr, when it cannot provide one.
set -euo pipefail

version=${RSS_COREDNS_VERSION:-v1.13.2}
root=${RSS_TOOLS_DIR:-/var/cache/rssd-tools}
if ! mkdir -p "$root" 2>/dev/null || [ ! -w "$root" ]; then
  root=${XDG_CACHE_HOME:-$HOME/.cache}/rssd-tools
  mkdir -p "$root"
fi
dir=$root/coredns-$version
if [ -x "$dir/coredns" ]; then
  echo "$dir/coredns"
  exit 0
fi
command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null 2>&1 || {
  echo "coredns.sh: no go toolchain to build coredns $version" >&2
  exit 1
}
mkdir -p "$dir"
# Two builds racing must not leave a half-written binary: build in a temporary directory and rename.
tmp=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/main.go" <<'GO'
// The world's cluster DNS: CoreDNS with the plugins its Corefile uses, nothing else.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func main() { coremain.Run() }
GO
build() {
  cd "$tmp"
  go mod init rssd.test/coredns
  go get "github.com/coredns/coredns@$version"
  go mod tidy
  CGO_ENABLED=0 nice -n 10 go build -trimpath -o coredns \
    -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$version" .
}
if ! (build) >"$tmp/log" 2>&1; then
  echo "coredns.sh: building coredns $version failed:" >&2
  tail -20 "$tmp/log" >&2
  exit 1
fi
mv -f "$tmp/coredns" "$dir/coredns"
echo "$dir/coredns"
