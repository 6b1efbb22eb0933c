#!/usr/bin/env bash
# build.sh -- builds the rssd image from deploy/image/Dockerfile with buildah on a locally debootstrapped Debian base, exports it as an OCI archive.
#
# Usage (as root, on Debian bookworm): deploy/image/build.sh [--tag REF]... [--out FILE] [--import SOCKET]
#                                      [--no-cache] [--refresh-base] [--sanitize]
#   No registry needed: the bases the Dockerfile names (debian:bookworm, debian:bookworm-slim) are made
#   here with `debootstrap --variant=minbase` and imported into a private containers-storage under
#   $RSSD_IMAGE_CACHE (default /var/cache/rssd-image), keyed by the suite's package index (so by the
#   package versions). Then `buildah bud` the unchanged Dockerfile, reusing cached layers, and export
#   an OCI archive that `ctr -n k8s.io images import` takes.
#   --tag REF        name the image REF (repeatable; default localhost/rss/rssd:VERSION and :dev; the
#                    archive carries the first)
#   --out FILE       the OCI archive (default build/rssd-image.oci.tar)
#   --import SOCKET  also import the archive into the containerd at SOCKET (namespace k8s.io)
#   --no-cache       rebuild every Dockerfile layer (the bases stay cached)
#   --refresh-base   debootstrap the bases again even if the cached ones match
#   --sanitize       rssd built with ASan+UBSan (RSS_SANITIZE, with debug info, not stripped) and the
#                    sanitizers' runtimes installed: the image of tests/run.sh's sanitized e2e run,
#                    never a release (default tag localhost/rss/rssd:asan, default out
#                    build/rssd-image-asan.oci.tar)
# The Dockerfile's RUN steps call apt-get, so the build reaches Debian's mirror (as debootstrap does).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

cache=${RSSD_IMAGE_CACHE:-/var/cache/rssd-image}
mirror=${RSSD_IMAGE_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
# Storage driver: overlay where the kernel mounts an overlayfs on the cache's filesystem (here: a
# cached build in 14 s), else vfs (plain copies: works anywhere, but every step copies whole trees:
# 150 s for the same cached build, 2.5 GB on disk). RSSD_IMAGE_STORAGE_DRIVER forces one.
driver=${RSSD_IMAGE_STORAGE_DRIVER:-}
version=$(sed -n 's/^project(rssd VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
out=
tags=()
import_sock=
no_cache=()
refresh=0
sanitize=0
while [ $# -gt 0 ]; do
    case $1 in
    --tag) tags+=("$2"); shift ;;
    --out) out=$2; shift ;;
    --import) import_sock=$2; shift ;;
    --no-cache) no_cache=(--no-cache) ;;
    --refresh-base) refresh=1 ;;
    --sanitize) sanitize=1 ;;
    -h | --help) awk 'NR >= 4 && !/^#/ {exit} NR >= 4 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
# The first tag is the one the archive carries: the version, which deploy/base/kustomization.yaml names.
# Without --sanitize no build argument differs from the Dockerfile's defaults: the release image.
bargs=()
if [ "$sanitize" = 1 ]; then
    [ ${#tags[@]} -gt 0 ] || tags=(localhost/rss/rssd:asan)
    [ -n "$out" ] || out=$top/build/rssd-image-asan.oci.tar
    bargs=(--build-arg "RSS_CMAKE_OPTS=-DRSS_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" --build-arg STRIP=true
        --build-arg "RUNTIME_EXTRA_PACKAGES=libasan8 libubsan1 libatomic1")
fi
[ ${#tags[@]} -gt 0 ] || tags=("localhost/rss/rssd:$version" localhost/rss/rssd:dev)
[ -n "$out" ] || out=$top/build/rssd-image.oci.tar
if [ "$(id -u)" != 0 ]; then
    echo "build.sh: run as root (debootstrap and buildah's chroot isolation need it)" >&2
    exit 1
fi
for tool in debootstrap buildah jq; do
    command -v "$tool" >/dev/null || {
        echo "build.sh: $tool is missing (apt-get install $tool)" >&2
        exit 1
    }
done

now() { date +%s%3N; }
t_all=$(now)
t_step=$t_all
step() {
    t_step=$(now)
    echo "==> $*"
}
took() { local ms=$(($(now) - t_step)); printf '    (%d.%03d s)\n' $((ms / 1000)) $((ms % 1000)); }

mkdir -p "$cache" "$(dirname "$out")"
# One build at a time per cache: the storage and the base tarballs are shared.
exec 9>"$cache/lock"
flock 9
if [ -z "$driver" ]; then
    probe=$(mktemp -d "$cache/probe.XXXXXX")
    mkdir "$probe/l" "$probe/u" "$probe/w" "$probe/m"
    driver=vfs
    if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
        umount "$probe/m"
        driver=overlay
    fi
    rm -rf "$probe"
fi
# One storage per driver: containers-storage refuses to open a root made with another driver.
B=(buildah --root "$cache/storage-$driver" --runroot "$cache/run-$driver" --storage-driver "$driver")
echo "build.sh: storage driver $driver, cache $cache"

# ---- the bases, keyed by the package versions
# The suite's Packages index fixes every version debootstrap installs. Its checksum (as apt last
# fetched it; the host's sources name the same mirror) plus debootstrap's version and options are the
# key. Without apt lists, fall back to the month: the base is then refreshed monthly.
index_sum() {
    local f=
    for f in /var/lib/apt/lists/*_debian_dists_"${suite}"_InRelease; do break; done
    if [ -f "$f" ]; then
        sed -n '/^SHA256:/,$p' "$f" | grep " main/binary-amd64/Packages.xz\$" | sed -n 1p | awk '{print $1}'
    else
        date +%Y-%m
    fi
}
key=$(printf '%s\n' "$(dpkg-query -W -f '${Version}' debootstrap)" "$suite" minbase "$mirror" "$(index_sum)" |
    sha256sum | cut -c1-16)
base_tar=$cache/base-$suite-$key.tar
slim_tar=$cache/base-$suite-slim-$key.tar
if [ "$refresh" = 1 ] || [ ! -s "$base_tar" ] || [ ! -s "$slim_tar" ]; then
    step "debootstrap --variant=minbase $suite (key $key)"
    root=$cache/rootfs.$$
    rm -rf "$root"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
        tail -n 20 "$cache/debootstrap.log" >&2
        echo "build.sh: debootstrap failed (log: $cache/debootstrap.log)" >&2
        exit 1
    }
    # The sources the official images have: the suite, its updates and security.
    rm -f "$root/etc/apt/sources.list"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/* "$root"/tmp/*
    dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Package}=${Version}\n' >"$cache/base-$suite-$key.packages"
    tar --numeric-owner --xattrs -C "$root" -cf "$base_tar.tmp" . && mv "$base_tar.tmp" "$base_tar"
    # -slim: what the official bookworm-slim drops (documentation, manuals, locales), and the dpkg
    # configuration that keeps them out of later installs.
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/*
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    tar --numeric-owner --xattrs -C "$root" -cf "$slim_tar.tmp" . && mv "$slim_tar.tmp" "$slim_tar"
    rm -rf "$root"
    # Older bases are stale now.
    find "$cache" -maxdepth 1 -name "base-$suite-*" -not -name "*$key*" -delete
    took
fi

# import_base TAR NAME: TAR as the image NAME in the private storage, unless it is there already.
import_base() {
    local tar=$1 name=$2 have c
    have=$("${B[@]}" inspect --type image --format '{{index .OCIv1.Config.Labels "io.rssd.base-key"}}' "$name" 2>/dev/null || true)
    [ "$have" = "$key" ] && return 0
    step "importing $(basename "$tar") as $name"
    c=$("${B[@]}" from --pull=never scratch)
    "${B[@]}" add "$c" "$tar" / >/dev/null
    "${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
        --label io.rssd.base-key="$key" "$c"
    "${B[@]}" commit --quiet --rm "$c" "$name" >/dev/null
    took
}
# Fully qualified, so the Dockerfile's short names resolve to them with --pull=never.
import_base "$base_tar" docker.io/library/debian:bookworm
import_base "$slim_tar" docker.io/library/debian:bookworm-slim

# ---- the image
step "buildah bud -f deploy/image/Dockerfile ${tags[*]}"
targs=()
for t in "${tags[@]}"; do targs+=(--tag "$t"); done
"${B[@]}" bud --pull=never --isolation chroot --layers "${no_cache[@]}" --build-arg JOBS=2 "${bargs[@]}" \
    -f "$top/deploy/image/Dockerfile" "${targs[@]}" "$top" >"$cache/bud.log" 2>&1 || {
    tail -n 30 "$cache/bud.log" >&2
    echo "build.sh: buildah bud failed (log: $cache/bud.log)" >&2
    exit 1
}
took

step "exporting $out"
rm -f "$out"
"${B[@]}" push --quiet "${tags[0]}" "oci-archive:$out:${tags[0]}"
took
# Sizes: the archive (gzip layers, what a registry stores and a node pulls) and unpacked (the layers'
# tar streams, about what the node's snapshotter holds).
unpacked=0
manifest=$(tar -xOf "$out" index.json | jq -r '.manifests[0].digest' | sed 's/:/\//')
for layer in $(tar -xOf "$out" "blobs/$manifest" | jq -r '.layers[].digest' | sed 's/:/\//'); do
    n=$(tar -xOf "$out" "blobs/$layer" | gzip -dc | wc -c)
    unpacked=$((unpacked + n))
done
archive=$(stat -c %s "$out")
echo "image ${tags[*]}: archive $((archive / 1024)) KiB, unpacked $((unpacked / 1024)) KiB"
if [ -n "$import_sock" ]; then
    step "ctr -n k8s.io images import (containerd at $import_sock)"
    ctr --address "$import_sock" -n k8s.io images import "$out"
    took
fi
ms=$(($(now) - t_all))
printf 'build.sh: done in %d.%03d s\n' $((ms / 1000)) $((ms % 1000))
