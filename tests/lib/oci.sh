# oci.sh -- oci_archive: an OCI image archive (one uncompressed layer) from a root filesystem, as containerd imports it (sourced).
# shellcheck shell=bash
#
# oci_archive ROOTFS IMAGE_REF CREATED_BY OUT [LAYER_TAR_OPTION]...
#   Tars ROOTFS into one layer (options: the caller's, e.g. --owner=0 for a reproducible busybox, or
#   --xattrs to keep a distribution's owners), writes the config (Cmd /bin/sleep infinity: the hooks
#   start the application, never the image), the manifest, index.json with the names containerd and
#   the OCI layout expect, and tars the layout to OUT. Needs tar, sha256sum, stat; uses OUT.d as scratch.
oci_archive() {
    local rootfs=$1 ref=$2 created_by=$3 out=$4
    shift 4
    local oci=$out.d arch layer_sha layer_size cfg_sha cfg_size man_sha man_size
    rm -rf "$oci"
    mkdir -p "$oci/blobs/sha256"
    tar -C "$rootfs" --sort=name "$@" -cf "$oci/layer.tar" .
    layer_sha=$(sha256sum "$oci/layer.tar" | cut -d' ' -f1)
    layer_size=$(stat -c %s "$oci/layer.tar")
    mv "$oci/layer.tar" "$oci/blobs/sha256/$layer_sha"
    case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64) arch=arm64 ;;
    *) arch=$(uname -m) ;;
    esac
    printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["/bin/sleep","infinity"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"%s"}]}' \
        "$arch" "$layer_sha" "$created_by" >"$oci/config.json"
    cfg_sha=$(sha256sum "$oci/config.json" | cut -d' ' -f1)
    cfg_size=$(stat -c %s "$oci/config.json")
    mv "$oci/config.json" "$oci/blobs/sha256/$cfg_sha"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
        "$cfg_sha" "$cfg_size" "$layer_sha" "$layer_size" >"$oci/manifest.json"
    man_sha=$(sha256sum "$oci/manifest.json" | cut -d' ' -f1)
    man_size=$(stat -c %s "$oci/manifest.json")
    mv "$oci/manifest.json" "$oci/blobs/sha256/$man_sha"
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
        "$man_sha" "$man_size" "$ref" "${ref##*:}" >"$oci/index.json"
    printf '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
    tar -C "$oci" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out" .
    rm -rf "$oci"
}
