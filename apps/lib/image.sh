# image.sh -- the apps' image builder (sourced by apps/<app>/image/build.sh): debootstrap bookworm, the
# app's Debian packages in a chroot, stripped, as an OCI archive, cached per machine. Sourced, not run.
# shellcheck shell=bash
#
# The caller sets, then calls app_image_build "$@" (its arguments: [--print-key]):
#   APP      the name in log lines ("galera" -> "galera-image: ...")
#   FORMAT   bump when the image content changes for the same package versions (part of the cache key)
#   PKGS     array: the packages to install
#   IMAGE    the image reference the archive is tagged with
#   CACHE    the cache directory: <key>.tar, key = sha256 of FORMAT, IMAGE and the packages' candidate
#            versions (so a change of this file alone keeps every cached image)
#   SCRIPT   the caller's path, recorded as the layer's creator
#   STRIP    array: rootfs paths (relative, globs allowed) removed besides docs, locales, apt lists, logs
#   DIRS     array: rootfs directories created besides /hooks and /data
# and may define app_image_finish ROOTFS (run in the stripped rootfs before it is archived).
#
# How: debootstrap --variant=minbase from the machine's configured Debian mirror, the host's Debian apt
# sources copied in (so the versions match the host's `apt-cache policy`), the packages installed in the
# chroot without starting services, then the rootfs tarred into a layer and wrapped in an OCI layout with
# tar + sha256sum (tests/lib/oci.sh, as tests/lib/containerd.sh does for busybox). A flock serialises
# concurrent builds. Needs root and debootstrap. Prints the archive's path on the last line of stdout;
# build time and size go to stderr.

# shellcheck source=../../tests/lib/oci.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/oci.sh"

SUITE=bookworm
STRIP=()
DIRS=()
app_image_finish() { :; }

die() {
    echo "$APP-image: $*" >&2
    exit 1
}
log() { echo "$APP-image: $*" >&2; }

# The cache key: FORMAT + the candidate version of every package (and of debootstrap's base).
cache_key() {
    {
        echo "format $FORMAT"
        echo "$IMAGE"
        LC_ALL=C apt-cache policy "${PKGS[@]}" libc6 | awk '/^[^ ]/ { p = $1 } /Candidate:/ { print p, $2 }'
    } | sha256sum | cut -c1-16
}

# The Debian mirror URI the host uses (deb822 debian.sources first, then sources.list).
mirror() {
    local m=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
            /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
        m=$(awk '$1 == "deb" && $0 ~ /bookworm/ && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^(http|https|file):/) { print $i; exit } }' \
            /etc/apt/sources.list)
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

# app_image_build [--print-key]: the archive's path (cached, or built now), or with --print-key the cache key.
app_image_build() {
    key=$(cache_key)
    [ "${1:-}" = --print-key ] && {
        echo "$key"
        exit 0
    }
    out=$CACHE/$key.tar
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    flock 9
    if [ -s "$out" ]; then
        log "cached: $out ($(du -m "$out" | cut -f1) MiB, key $key)"
        echo "$out"
        exit 0
    fi

    [ "$(id -u)" = 0 ] || die "root needed (debootstrap, chroot)"
    command -v debootstrap >/dev/null || die "debootstrap not installed (tests/lib/packages.sh lists it)"
    t0=$(date +%s)
    work=$(mktemp -d "$CACHE/build.XXXXXX")
    rootfs=$work/rootfs
    cleanup() {
        local m
        # Unmount whatever is still mounted under the rootfs (proc), deepest first, then remove the tree.
        awk -v d="$rootfs/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
            umount -l "$m" 2>/dev/null || true
        done
        rm -rf --one-file-system "$work"
    }
    trap cleanup EXIT

    mir=$(mirror)
    log "debootstrap $SUITE from $mir (log: $work/debootstrap.log)"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$mir" >"$work/debootstrap.log" 2>&1 || {
        tail -n 30 "$work/debootstrap.log" >&2
        die "debootstrap failed"
    }
    # The host's Debian sources (with -updates and -security), so versions match the cache key.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
        : >"$rootfs/etc/apt/sources.list"
    elif [ -f /etc/apt/sources.list ]; then
        grep -E '^deb .*debian' /etc/apt/sources.list >"$rootfs/etc/apt/sources.list" || true
    fi
    # No service may start inside the chroot.
    printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
    chmod +x "$rootfs/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    mount -t proc proc "$rootfs/proc"
    log "installing ${PKGS[*]}"
    {
        chroot "$rootfs" apt-get update -q
        DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get install -y -q --no-install-recommends "${PKGS[@]}"
    } >"$work/apt.log" 2>&1 || {
        tail -n 30 "$work/apt.log" >&2
        die "apt-get in the chroot failed"
    }
    umount "$rootfs/proc"
    chroot "$rootfs" dpkg-query -W -f='${Package} ${Version}\n' "${PKGS[@]}" >&2
    chroot "$rootfs" apt-get clean
    # Nothing may stay mounted in the rootfs before it is stripped and tarred (debootstrap binds /dev in lxc).
    if awk -v d="$rootfs/" 'index($5, d) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
        die "something is still mounted under $rootfs"
    fi

    # Strip: docs, man pages, locales, apt lists, logs, and what the app's postinst left (STRIP).
    rm -rf --one-file-system "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
        "$rootfs"/usr/share/locale/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/log/* \
        "$rootfs"/usr/sbin/policy-rc.d "$rootfs"/etc/resolv.conf \
        "$rootfs"/tmp/* "$rootfs"/dev/*
    local p
    for p in "${STRIP[@]}"; do
        # shellcheck disable=SC2086 # STRIP's entries may be globs, expanded in the rootfs on purpose
        rm -rf --one-file-system "$rootfs"/$p
    done
    : >"$rootfs/etc/resolv.conf"
    mkdir -p "$rootfs/hooks" "$rootfs/data" "${DIRS[@]/#/$rootfs/}"
    app_image_finish "$rootfs"

    # One uncompressed layer that keeps the packages' owners (the app's user has its own uid inside), as
    # containerd imports it.
    oci_archive "$rootfs" "$IMAGE" "$SCRIPT" "$work/image.tar" --numeric-owner --xattrs \
        --exclude='./proc/*' --exclude='./sys/*'
    mv "$work/image.tar" "$out"
    t1=$(date +%s)
    log "built $out in $((t1 - t0)) s: $(du -m "$out" | cut -f1) MiB key $key"
    echo "$out"
}
