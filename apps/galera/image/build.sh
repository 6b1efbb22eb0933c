#!/usr/bin/env bash
# build.sh -- builds the Galera OCI image archive (MariaDB 10.11 + Galera 4 from Debian bookworm) without a registry, cached per machine.
#
# Usage: apps/galera/image/build.sh [--print-key]
#   Prints the archive's path on the last line of stdout; build time and size go to stderr.
#   The archive is an OCI image layout (one uncompressed layer) tagged $GALERA_IMAGE, importable with
#   `ctr -n k8s.io images import --snapshotter overlayfs ARCHIVE`.
#
# How: apps/lib/image.sh (debootstrap, the packages in a chroot, stripped, an OCI layout). The hooks are
# NOT in this image (tests mount apps/galera/hooks at /hooks); the Dockerfile beside this script builds
# the same image with the hooks for real clusters.
#
# Cache: $GALERA_CACHE_DIR (default /var/cache/rssd-galera)/<key>.tar, key = sha256 of FORMAT (bump it when
# this script changes what it builds) and of the packages' candidate versions. Needs root and debootstrap.
set -euo pipefail
# shellcheck source=../../lib/image.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/image.sh"

APP=galera
FORMAT=1 # bump when the image content changes for the same package versions
PKGS=(mariadb-server mariadb-client galera-4 rsync mariadb-backup socat procps iproute2)
IMAGE=${GALERA_IMAGE:-localhost/rss/galera:1}
CACHE=${GALERA_CACHE_DIR:-/var/cache/rssd-galera}
SCRIPT=apps/galera/image/build.sh
# The datadir the postinst created, and MariaDB's test suite. mysql is uid 100 inside.
STRIP=('var/lib/mysql/*' usr/share/mysql/mysql-test)
DIRS=(run/mysqld)
app_image_build "$@"
