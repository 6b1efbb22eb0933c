#!/usr/bin/env bash
# release.sh -- builds what a release of rssd ships, all named by the one version (CMakeLists.txt's project()).
#
# Usage (as root, on Debian bookworm, for the image): deploy/release.sh --out DIR [--build-dir DIR]
#                                                     [--base-url URL] [--image-name REPO] [--no-image]
#                                                     [--no-build]
#   Writes into DIR (docs/release.md says what to upload and how users install from it):
#     rssd-image-VERSION.oci.tar              the image (deploy/image/build.sh), tagged REPO:VERSION
#     rssd-VERSION.tgz                        the Helm chart (helm package deploy/helm/rssd)
#     kubectl-rss_VERSION_linux_ARCH.tar.gz   kubectl-rss (stripped) and LICENSE, byte-for-byte
#                                             reproducible from the same binary
#     rss.yaml                                the krew plugin manifest for that tarball
#     SHA256SUMS                              sha256sum of each of the above (`sha256sum -c SHA256SUMS`)
#   --build-dir DIR   the CMake build of kubectl-rss: Release or RelWithDebInfo, not sanitized, of this
#                     source tree (default build/release, configured RelWithDebInfo when missing);
#                     `cmake --build DIR --target kubectl-rss` brings it up to date first
#   --no-build        package the build dir's kubectl-rss as it is (still checked: build type, version)
#   --base-url URL    where the tarball will be downloadable, for the manifest's uri (default the
#                     project's GitHub release: HOME/releases/download/vVERSION, HOME from Chart.yaml)
#   --image-name REPO the image's repository (default localhost/rss/rssd: the name the chart and
#                     deploy/base use, so an imported archive needs no --set)
#   --no-image        skip the image (not a complete release: says so, and SHA256SUMS lacks it)
#
# One version, checked rather than templated: deploy/helm/rssd/Chart.yaml's version and appVersion and
# deploy/base/kustomization.yaml's newTag must equal CMakeLists.txt's project version, or nothing is
# built. (Templating them at package time would leave the checkout's chart, which `helm install
# deploy/helm/rssd` and the kustomize overlays use, naming another version than the release.)
# Reproducible: the tarball's entries are sorted, owned by 0:0, dated SOURCE_DATE_EPOCH (default: the
# last commit's time) and gzip'd without a name or time, so two runs give the same sha256.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
me=release.sh

die() {
    echo "$me: $*" >&2
    exit 1
}

out=
build_dir=$top/build/release
base_url=
image_name=localhost/rss/rssd
image=1
build=1
while [ $# -gt 0 ]; do
    case $1 in
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift ;;
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a URL"; base_url=${2%/}; shift ;;
    --image-name) [ $# -ge 2 ] || die "--image-name needs a repository"; image_name=$2; shift ;;
    --no-image) image=0 ;;
    --no-build) build=0 ;;
    -h | --help) awk 'NR >= 4 && !/^#/ {exit} NR >= 4 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "$me: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$out" ] || { echo "$me: --out DIR is required (try --help)" >&2; exit 2; }

# ---- the one version, and everything that names it
version=$(sed -n 's/^project(rssd VERSION \([^ )]*\).*/\1/p' "$top/CMakeLists.txt")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    die "no x.y.z version in $top/CMakeLists.txt's project(rssd VERSION ...) line (found '$version')"
chart=$top/deploy/helm/rssd
# yaml_scalar FILE KEY: the top-level KEY's value, quotes removed.
yaml_scalar() { sed -n "s/^$2:[[:space:]]*//p" "$1" | sed -n 1p | sed 's/[[:space:]]*#.*//; s/^"\(.*\)"$/\1/; s/^'"'"'\(.*\)'"'"'$/\1/'; }
drift=()
chart_version=$(yaml_scalar "$chart/Chart.yaml" version)
chart_app=$(yaml_scalar "$chart/Chart.yaml" appVersion)
kust_tag=$(sed -n 's/^[[:space:]]*newTag:[[:space:]]*//p' "$top/deploy/base/kustomization.yaml" | sed -n 1p | tr -d "\"'")
[ "$chart_version" = "$version" ] || drift+=("deploy/helm/rssd/Chart.yaml version is '$chart_version'")
[ "$chart_app" = "$version" ] || drift+=("deploy/helm/rssd/Chart.yaml appVersion is '$chart_app'")
[ "$kust_tag" = "$version" ] || drift+=("deploy/base/kustomization.yaml newTag is '$kust_tag'")
if [ ${#drift[@]} -gt 0 ]; then
    {
        echo "$me: version drift: CMakeLists.txt's project version is $version, but"
        printf '  %s\n' "${drift[@]}"
        echo "$me: set them to $version (or bump the project version to what you meant; docs/release.md)"
    } >&2
    exit 1
fi
home=$(yaml_scalar "$chart/Chart.yaml" home)
[ -n "$base_url" ] || base_url=${home%/}/releases/download/v$version

# ---- tools, architecture, the date the tarball's entries carry
for tool in cmake tar gzip sha256sum strip dpkg; do
    command -v "$tool" >/dev/null || die "$tool is missing"
done
tar --version 2>/dev/null | grep 'GNU tar' >/dev/null || die "GNU tar is needed (--sort=name)"
# helm: $HELM, else on PATH, else the pinned one the tests build (tests/lib/helm.sh, cached).
helm_bin=${HELM:-}
[ -n "$helm_bin" ] || helm_bin=$(command -v helm || true)
[ -n "$helm_bin" ] || helm_bin=$(bash "$top/tests/lib/helm.sh") || die "no helm (set HELM or put helm on PATH)"
case $(dpkg --print-architecture) in
amd64) arch=amd64 ;;
arm64) arch=arm64 ;;
*) die "dpkg architecture $(dpkg --print-architecture) has no krew name here (amd64, arm64)" ;;
esac
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$top" log -1 --format=%ct 2>/dev/null) ||
        die "not a git checkout: set SOURCE_DATE_EPOCH (seconds) for the tarball's dates"
fi
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH is not a number of seconds ('$SOURCE_DATE_EPOCH')"
export SOURCE_DATE_EPOCH

echo "$me: rssd $version, linux/$arch, dated @$SOURCE_DATE_EPOCH, into $out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Everything is made in a scratch directory beside the outputs, then moved in: a failed run leaves no
# half release, and no artifact of an earlier run is mistaken for this one's.
work=$(mktemp -d "$out/.release.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- kubectl-rss from the build directory
cache=$build_dir/CMakeCache.txt
if [ ! -f "$cache" ]; then
    echo "==> configuring $build_dir (RelWithDebInfo)"
    cmake -S "$top" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >"$work/cmake.log" 2>&1 ||
        { tail -20 "$work/cmake.log" >&2; die "configuring $build_dir failed"; }
fi
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
[ "$(cd "$(cache_get CMAKE_HOME_DIRECTORY)" 2>/dev/null && pwd)" = "$top" ] ||
    die "$build_dir is a build of $(cache_get CMAKE_HOME_DIRECTORY), not of $top"
case $(cache_get CMAKE_BUILD_TYPE) in
Release | RelWithDebInfo) ;;
*) die "$build_dir is a '$(cache_get CMAKE_BUILD_TYPE)' build: a release ships Release or RelWithDebInfo" ;;
esac
for opt in RSS_SANITIZE RSS_SANITIZE_THREAD; do
    [ "$(cache_get "$opt")" != ON ] || die "$build_dir is built with $opt=ON: never a release"
done
if [ "$build" = 1 ]; then
    echo "==> cmake --build $build_dir --target kubectl-rss"
    cmake --build "$build_dir" --target kubectl-rss -j"$(nproc)" >"$work/build.log" 2>&1 ||
        { tail -30 "$work/build.log" >&2; die "building kubectl-rss failed"; }
fi
bin=$build_dir/nodeagent/plugin/kubectl-rss
[ -x "$bin" ] || die "no $bin after the build"
said=$("$bin" version) || die "$bin version failed"
[ "$said" = "kubectl-rss $version" ] || die "$bin says '$said', not 'kubectl-rss $version'"

# ---- the plugin tarball
plugin_tgz=kubectl-rss_${version}_linux_${arch}.tar.gz
echo "==> $plugin_tgz (from $bin, sha256 $(sha256sum "$bin" | cut -d' ' -f1))"
mkdir "$work/plugin"
# Stripped like the image's copy: RelWithDebInfo's debug info is most of the file.
strip -o "$work/plugin/kubectl-rss" "$bin"
cp "$top/LICENSE" "$work/plugin/LICENSE"
chmod 0755 "$work/plugin/kubectl-rss"
chmod 0644 "$work/plugin/LICENSE"
# (--sort=name orders what directories hold; the names given are in C order already.)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" --format=gnu \
    -C "$work/plugin" -cf - LICENSE kubectl-rss | gzip -n -9 >"$work/$plugin_tgz"
plugin_sum=$(sha256sum "$work/$plugin_tgz" | cut -d' ' -f1)

# ---- the chart
chart_tgz=rssd-$version.tgz
echo "==> $chart_tgz ($("$helm_bin" version --short 2>/dev/null || echo helm))"
# Helm's state in the scratch directory, never the user's.
HELM_CACHE_HOME=$work/helm/cache HELM_CONFIG_HOME=$work/helm/config HELM_DATA_HOME=$work/helm/data \
    "$helm_bin" package "$chart" --version "$version" --app-version "$version" -d "$work" >"$work/helm.log" 2>&1 ||
    { cat "$work/helm.log" >&2; die "helm package failed"; }
[ -s "$work/$chart_tgz" ] || { cat "$work/helm.log" >&2; die "helm package wrote no $chart_tgz"; }

# ---- the krew manifest
echo "==> rss.yaml (uri $base_url/$plugin_tgz)"
cat >"$work/rss.yaml" <<EOF
# rss.yaml -- krew plugin manifest for kubectl-rss $version (made by deploy/release.sh).
# Install: kubectl krew install --manifest=rss.yaml [--archive=$plugin_tgz]
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: rss
spec:
  version: v$version
  homepage: $home
  shortDescription: Status and day-2 actions for rssd recoveries
  description: |
    kubectl rss shows what rssd (a DaemonSet that starts replicated stateful
    applications newest copy first after a lights-out) knows and does: status,
    events and history of a ReplicatedStatefulSet, every node's agent, and the
    day-2 actions (suspend, resume, force-seed, release-hold) with confirmation.
  caveats: |
    kubectl-rss is linked against the shared libcurl, libyaml and libcJSON
    (Debian/Ubuntu: apt-get install libcurl4 libyaml-0-2 libcjson1).
    It talks to the API server only; rssd itself is installed separately
    (Helm chart rssd-$version.tgz, or deploy/ of the release).
  platforms:
  - selector:
      matchLabels:
        os: linux
        arch: $arch
    uri: $base_url/$plugin_tgz
    sha256: $plugin_sum
    bin: kubectl-rss
    files:
    - from: kubectl-rss
      to: .
    - from: LICENSE
      to: .
EOF

# ---- the image (last: the slow part)
image_tar=rssd-image-$version.oci.tar
artifacts=("$chart_tgz" "$plugin_tgz" rss.yaml)
if [ "$image" = 1 ]; then
    echo "==> $image_tar ($image_name:$version, deploy/image/build.sh)"
    command -v jq >/dev/null || die "jq is missing"
    bash "$top/deploy/image/build.sh" --tag "$image_name:$version" --out "$work/$image_tar" 2>&1 | sed 's/^/    /' ||
        die "deploy/image/build.sh failed"
    ref=$(tar -xOf "$work/$image_tar" index.json | jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"] // empty')
    [ "$ref" = "$image_name:$version" ] || [ "$ref" = "$version" ] ||
        die "the image archive names '$ref', not $image_name:$version"
    artifacts=("$image_tar" "${artifacts[@]}")
else
    echo "$me: --no-image: no $image_tar, so this is not a complete release" >&2
fi

# ---- checksums, then move everything into place
(cd "$work" && sha256sum "${artifacts[@]}" >SHA256SUMS)
for f in "${artifacts[@]}" SHA256SUMS; do
    mv -f "$work/$f" "$out/$f"
done
[ "$image" = 1 ] || rm -f "$out/$image_tar" # an older run's image is not this release's
echo "$me: rssd $version in $out:"
(cd "$out" && for f in "${artifacts[@]}" SHA256SUMS; do printf '  %-44s %10s bytes\n' "$f" "$(stat -c %s "$f")"; done)
