#!/usr/bin/env bash
# build.sh -- builds the PostgreSQL OCI image archive (postgresql-15 from Debian bookworm) without a registry, cached per machine.
#
# Usage: apps/postgres/image/build.sh [--print-key]
#   Prints the archive's path on the last line of stdout; build time and size go to stderr.
#   The archive is an OCI image layout (one uncompressed layer) tagged $POSTGRES_IMAGE, importable with
#   `ctr -n k8s.io images import --snapshotter overlayfs ARCHIVE`.
#
# How: apps/lib/image.sh (debootstrap, the packages in a chroot, stripped, an OCI layout). The hooks are
# NOT in this image (tests mount apps/postgres/hooks at /hooks); the Dockerfile beside this script builds
# the same image with the hooks for real clusters.
#
# Cache: $POSTGRES_CACHE_DIR (default /var/cache/rssd-postgres)/<key>.tar, key = sha256 of FORMAT (bump it
# when this script changes what it builds) and of the packages' candidate versions. Needs root and debootstrap.
set -euo pipefail
# shellcheck source=../../lib/image.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/image.sh"

APP=postgres
FORMAT=1 # bump when the image content changes for the same package versions
PKGS=(postgresql-15 postgresql-client-15 procps)
IMAGE=${POSTGRES_IMAGE:-localhost/rss/postgres:1}
CACHE=${POSTGRES_CACHE_DIR:-/var/cache/rssd-postgres}
SCRIPT=apps/postgres/image/build.sh
# The cluster the postinst created (postgres has its own uid inside).
STRIP=(var/lib/postgresql/15 etc/postgresql/15)
DIRS=(run/postgresql)
app_image_finish() { chroot "$1" chown postgres:postgres /run/postgresql; }
app_image_build "$@"
