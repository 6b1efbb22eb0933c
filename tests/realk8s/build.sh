#!/usr/bin/env bash
# Builds the pinned real Kubernetes components and etcd from source through the Go module proxy, cached by version.
# Usage: tests/realk8s/build.sh [--print-dir]
#   Prints nothing but the binary directory with --print-dir. A no-op when the cache already holds this build: the
#   cache key is the versions plus a hash of the wrapper modules and the build flags, so a changed pin rebuilds.
# Environment: RSS_K8S_CACHE (default /var/cache/rssd-k8s), RSS_K8S_NICE (default 19: the machine is shared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"

print_dir=0
[ "${1:-}" = "--print-dir" ] && print_dir=1

log() { [ "$print_dir" = 1 ] || echo "realk8s-build: $*" >&2; }

# Upstream's release flags (hack/lib/golang.sh): static, path-free, stripped, SELinux-aware, no test-only code.
tags=selinux,notest
k8s_info=$(curl -fsS "${GOPROXY_INFO:-https://proxy.golang.org}/k8s.io/kubernetes/@v/$K8S_VERSION.info" 2>/dev/null || true)
build_date=$(printf '%s' "$k8s_info" | sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p')
[ -n "$build_date" ] || build_date=1970-01-01T00:00:00Z
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
ver_ld=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ver_ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	ver_ld+=" -X $pkg.gitCommit=module-proxy -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
k8s_ldflags="-s -w$ver_ld"
etcd_ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-proxy"

key=$( (cat "$here/k8s/go.mod" "$here/k8s/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum"
	echo "$tags $k8s_ldflags $etcd_ldflags $K8S_COMMANDS") | sha256sum | cut -c1-12)
dir="$RSS_K8S_CACHE/$K8S_VERSION-etcd-$ETCD_VERSION-$key"
bin="$dir/bin"

complete() {
	local c
	for c in $K8S_COMMANDS etcd; do [ -x "$bin/$c" ] || return 1; done
}

if complete; then
	log "cached in $bin"
	[ "$print_dir" = 0 ] || echo "$bin"
	exit 0
fi

# Go is not Debian's (bookworm has 1.19): the toolchain the machines provide, never one downloaded on the fly.
command -v go >/dev/null || { echo "realk8s-build: go (1.26 or newer) is not installed" >&2; exit 1; }
gov=$(go env GOVERSION)
gov=${gov#go}
[ "$(printf '%s\n' 1.26 "$gov" | sort -V | sed -n 1p)" = 1.26 ] ||
	{ echo "realk8s-build: go $gov is too old (etcd $ETCD_VERSION needs 1.26)" >&2; exit 1; }
mkdir -p "$RSS_K8S_CACHE"
exec 9>"$RSS_K8S_CACHE/.build.lock"
flock 9 # two runs on one machine build once
if complete; then
	[ "$print_dir" = 0 ] || echo "$bin"
	exit 0
fi

tmp=$(mktemp -d "$RSS_K8S_CACHE/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local
nice_n=${RSS_K8S_NICE:-19}
start=$(date +%s)
log "building Kubernetes $K8S_VERSION ($K8S_COMMANDS) and etcd $ETCD_VERSION into $dir (a cold build takes long)"
pkgs=()
for c in $K8S_COMMANDS; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
(cd "$here/k8s" && nice -n "$nice_n" go build -trimpath -tags "$tags" -ldflags "$k8s_ldflags" -o "$tmp/" "${pkgs[@]}") >&2
(cd "$here/etcd" && nice -n "$nice_n" go build -trimpath -ldflags "$etcd_ldflags" -o "$tmp/etcd" go.etcd.io/etcd/server/v3) >&2
"$tmp/kube-apiserver" --version >&2
"$tmp/etcd" --version | sed -n 1p >&2
mkdir -p "$dir"
rm -rf "$bin"
chmod 755 "$tmp"
mv "$tmp" "$bin"
trap - EXIT
log "built in $(($(date +%s) - start)) s"
[ "$print_dir" = 0 ] || echo "$bin"
