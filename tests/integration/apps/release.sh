#!/usr/bin/env bash
# release.sh -- deploy/release.sh makes a complete, consistent, reproducible release (docs/release.md).
#
# Usage: release.sh BUILD_DIR SOURCE_DIR
#   BUILD_DIR is ctest's build (the plugin is taken from it, as `deploy/release.sh --build-dir` would);
#   exits 77 (skip) when it is not a release build (Debug, sanitized), which release.sh rightly refuses,
#   or without root, debootstrap or buildah for the image.
# One full run (with the image, ~25 s with build.sh's cache warm), then checks: every artifact there and
# non-empty; `sha256sum -c SHA256SUMS`; the krew manifest parses (python3's yaml, else grep) with the
# fields krew reads and its sha256 is the tarball's; `kubectl krew install --manifest --archive` (krew
# built once from its Go module, skipped without go) installs a kubectl-rss that names the version; the
# tarball holds LICENSE and an executable kubectl-rss whose `version` names it; `helm show chart` gives
# the version and appVersion, `helm template` a DaemonSet on the archive's image; the image archive's
# index.json names REPO:VERSION and its manifest blob is there.
# A second run with --no-image (the image is not what is compared, and a second build would double the
# test's time) and --no-build (the same binary, whatever else changes in the tree meanwhile) must give
# the byte-identical plugin tarball. Last, a Chart.yaml whose version drifted, in a temporary copy of
# the tree, makes release.sh fail at once (its last words the drift's), naming the file and both
# versions, and build or write nothing.
set -euo pipefail

NAME=release
build=$(cd "$1" && pwd)
top=$(cd "$2" && pwd)
# shellcheck source=../../lib/assert.sh
. "$top/tests/lib/assert.sh"

cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
case $(cache_get CMAKE_BUILD_TYPE) in
Release | RelWithDebInfo) ;;
*) echo "$NAME: SKIP: $build is a '$(cache_get CMAKE_BUILD_TYPE)' build, not a release build" >&2; exit 77 ;;
esac
for opt in RSS_SANITIZE RSS_SANITIZE_THREAD; do
    [ "$(cache_get "$opt")" != ON ] || { echo "$NAME: SKIP: $build is built with $opt=ON" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "$NAME: SKIP: the image build needs root" >&2; exit 77; }
for tool in debootstrap buildah jq; do
    command -v "$tool" >/dev/null || { echo "$NAME: SKIP: no $tool for the image build" >&2; exit 77; }
done

tmp=$(mktemp -d "/tmp/rss-$NAME.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^project(rssd VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arch=$(dpkg --print-architecture)
# Both runs date the tarball alike even if someone commits between them.
SOURCE_DATE_EPOCH=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
helm_bin=$(bash "$top/tests/lib/helm.sh") || { echo "$NAME: no helm" >&2; exit 1; }
export HELM=$helm_bin HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data
echo "# rssd $version, linux/$arch, build $build"

out=$tmp/out
if ! bash "$top/deploy/release.sh" --build-dir "$build" --out "$out" --base-url https://example.invalid/rel \
    >"$tmp/run1.log" 2>&1; then
    sed 's/^/     /' "$tmp/run1.log"
    fail "deploy/release.sh failed"
fi
sed -n '/ in .*:$/,$p' "$tmp/run1.log"

image=rssd-image-$version.oci.tar chart=rssd-$version.tgz plugin=kubectl-rss_${version}_linux_${arch}.tar.gz
for f in "$image" "$chart" "$plugin" rss.yaml SHA256SUMS; do
    if [ -s "$out/$f" ]; then ok "$f there ($(stat -c %s "$out/$f") bytes)"; else bad "$f missing or empty"; fi
done
run "SHA256SUMS verifies" bash -c "cd '$out' && sha256sum -c SHA256SUMS"
words() { LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'; }
expect "SHA256SUMS covers every artifact" "$(printf '%s\n' "$chart" "$image" "$plugin" rss.yaml | words)" \
    "$(awk '{print $2}' "$out/SHA256SUMS" | words)"

# ---- the krew manifest: parsed, the fields krew reads, the tarball's sha256
plugin_sum=$(sha256sum "$out/$plugin" | cut -d' ' -f1)
if python3 -c 'import yaml' 2>/dev/null; then
    fields=$(python3 - "$out/rss.yaml" <<'EOF'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
p = d["spec"]["platforms"]
print(d["apiVersion"], d["kind"], d["metadata"]["name"], d["spec"]["version"], len(p))
for q in p:
    m = q["selector"]["matchLabels"]
    print(m["os"], m["arch"], q["uri"], q["sha256"], q["bin"],
          ",".join("%s>%s" % (f["from"], f["to"]) for f in q["files"]))
EOF
) || fields="(does not parse)"
    expect "rss.yaml parses, with krew's fields" \
        "krew.googlecontainertools.github.com/v1alpha2 Plugin rss v$version 1
linux $arch https://example.invalid/rel/$plugin $plugin_sum kubectl-rss kubectl-rss>.,LICENSE>." "$fields"
else
    # No YAML parser: the fields line by line.
    expect "rss.yaml's sha256 is the tarball's" "$plugin_sum" "$(sed -n 's/^ *sha256: *//p' "$out/rss.yaml")"
    expect "rss.yaml's version" "v$version" "$(sed -n 's/^  version: *//p' "$out/rss.yaml")"
fi

# ---- krew itself installs it from the files, as docs/release.md tells users: krew v0.4.3 built from
# its Go module once per machine (cached like helm, tests/lib/helm.sh), the check skipped without go.
krew_version=v0.4.3
krew_dir=${RSS_TOOLS_DIR:-/var/cache/rssd-tools}
{ mkdir -p "$krew_dir" 2>/dev/null && [ -w "$krew_dir" ]; } || krew_dir=${XDG_CACHE_HOME:-$HOME/.cache}/rssd-tools
krew_dir=$krew_dir/krew-$krew_version
if [ ! -x "$krew_dir/kubectl-krew" ]; then
    command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
    if command -v go >/dev/null 2>&1; then
        mkdir -p "$krew_dir"
        kb=$(mktemp -d "$krew_dir/build.XXXXXX")
        if GOBIN=$kb GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install "sigs.k8s.io/krew/cmd/krew@$krew_version" >"$kb/log" 2>&1; then
            mv -f "$kb/krew" "$krew_dir/kubectl-krew"
        else
            tail -5 "$kb/log" | sed 's/^/     /'
        fi
        rm -rf "$kb"
    fi
fi
if [ -x "$krew_dir/kubectl-krew" ]; then
    mkdir -p "$tmp/krewpath"
    ln -s "$krew_dir/kubectl-krew" "$tmp/krewpath/kubectl-krew"
    run "kubectl krew install --manifest=rss.yaml --archive=$plugin" env PATH="$tmp/krewpath:$PATH" \
        KREW_ROOT="$tmp/krew" kubectl krew install --manifest="$out/rss.yaml" --archive="$out/$plugin" </dev/null
    expect "krew's kubectl-rss version" "kubectl-rss $version" "$("$tmp/krew/bin/kubectl-rss" version 2>&1)"
else
    echo "# no krew $krew_version (no go to build it): the krew install not tried"
fi

# ---- the plugin tarball
mkdir "$tmp/plugin"
run "the plugin tarball unpacks" tar -xzf "$out/$plugin" -C "$tmp/plugin"
expect "the plugin tarball's entries, root-owned" "-rw-r--r-- 0/0 LICENSE -rwxr-xr-x 0/0 kubectl-rss" \
    "$(tar -tvzf "$out/$plugin" --numeric-owner | awk '{printf "%s %s %s ", $1, $2, $6}' | sed 's/ $//')"
if [ -x "$tmp/plugin/kubectl-rss" ]; then
    expect "kubectl-rss version names the release" "kubectl-rss $version" "$("$tmp/plugin/kubectl-rss" version 2>&1)"
else
    bad "no executable kubectl-rss in the tarball"
fi
run "LICENSE is the repository's" cmp "$tmp/plugin/LICENSE" "$top/LICENSE"

# ---- the chart
expect "helm show chart: version and appVersion" "version: $version appVersion: $version" \
    "$("$helm_bin" show chart "$out/$chart" 2>&1 | grep -E '^(version|appVersion):' | sort -r | tr -d '"' | tr '\n' ' ' | sed 's/ $//')"

# The chart's default image is the archive's tag: an imported archive needs no --set.
expect "helm template: the DaemonSet runs the archive's image" "localhost/rss/rssd:$version" \
    "$("$helm_bin" template rssd "$out/$chart" 2>&1 | sed -n 's/^ *image: "\(.*\)"$/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//')"

# ---- the image archive
ref=$(tar -xOf "$out/$image" index.json 2>/dev/null |
    jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"] // "none"' 2>&1) || ref="(no index.json)"
expect "the image archive's index.json names the version's tag" "localhost/rss/rssd:$version" "$ref"
manifest=$(tar -xOf "$out/$image" index.json 2>/dev/null | jq -r '.manifests[0].digest' | sed 's/:/\//') || manifest=none
run "the image archive holds its manifest and config" bash -o pipefail -c \
    "tar -xOf '$out/$image' 'blobs/$manifest' | jq -e '.config.digest and (.layers | length > 0)'"

# ---- reproducible: a second run gives the same tarball
# --no-build: the same binary (others editing this tree must not make a rebuild between the runs);
# the two runs' binary sums are shown when the tarballs differ.
if bash "$top/deploy/release.sh" --build-dir "$build" --out "$tmp/out2" --no-image --no-build >"$tmp/run2.log" 2>&1; then
    sum2=$(sha256sum "$tmp/out2/$plugin" | cut -d' ' -f1)
    expect "a second run's plugin tarball is byte-identical" "$plugin_sum" "$sum2"
    [ "$sum2" = "$plugin_sum" ] || grep -h "^==> $plugin" "$tmp/run1.log" "$tmp/run2.log" | sed 's/^/     /'
else
    bad "the second run failed"
    sed 's/^/     /' "$tmp/run2.log"
fi

# ---- drift: Chart.yaml's version apart from CMakeLists.txt's, in a copy of the tree
mkdir -p "$tmp/tree/deploy/helm" "$tmp/tree/deploy/base" "$tmp/tree/deploy/image" "$tmp/tree/tests/lib"
cp "$top/CMakeLists.txt" "$top/LICENSE" "$tmp/tree/"
cp "$top/deploy/release.sh" "$tmp/tree/deploy/"
cp -r "$top/deploy/helm/rssd" "$tmp/tree/deploy/helm/"
cp "$top/deploy/base/kustomization.yaml" "$tmp/tree/deploy/base/"
sed -i 's/^version: .*/version: 9.9.9/' "$tmp/tree/deploy/helm/rssd/Chart.yaml"
if bash "$tmp/tree/deploy/release.sh" --out "$tmp/out3" --build-dir "$tmp/nobuild" >"$tmp/run3.log" 2>&1; then
    bad "a drifted Chart.yaml version: release.sh succeeded"
elif grep -q "version drift: CMakeLists.txt's project version is $version" "$tmp/run3.log" &&
    grep -q "Chart.yaml version is '9.9.9'" "$tmp/run3.log" &&
    tail -n 1 "$tmp/run3.log" | grep "set them to $version" >/dev/null; then
    ok "a drifted Chart.yaml version: release.sh fails, naming both ($(sed -n 2p "$tmp/run3.log" | sed 's/^ *//'))"
else
    bad "a drifted Chart.yaml version: release.sh fails, but not saying why"
    sed 's/^/     /' "$tmp/run3.log"
fi
if [ -e "$tmp/out3" ] && [ -n "$(ls -A "$tmp/out3")" ] || [ -e "$tmp/nobuild" ]; then
    bad "the drifted run built or wrote something"
else
    ok "the drifted run wrote nothing"
fi

checks_done
