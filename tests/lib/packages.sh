# packages.sh -- the Debian packages rssd's build, tests and demo need, and their installer (sourced).
# shellcheck shell=bash
#
# Used by tests/run.sh and deploy/local/demo.sh. Add a package to `pkgs` here, not in the scripts.

pkgs=(cmake gcc make pkg-config git
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev libcjson-dev libssl-dev
      libcmocka-dev libmicrohttpd-dev libyaml-dev
      containerd runc busybox-static openssl tar coreutils iproute2 util-linux procps
      valgrind clang-format curl jq iptables spin                      # spin: tests/model
      buildah debootstrap                 # deploy/image/build.sh, apps/galera/image/build.sh
      clang libclang-rt-14-dev            # tests/fuzz: clang-14 and its libFuzzer/sanitizer runtimes
      prometheus python3-yaml             # promtool: tests/monitoring; python3-yaml: kube_deploy_helm
      containernetworking-plugins python3)  # tests/realk8s: the pods' CNI bridge, nsforward.py

# Only tests/bench/bench_postgres.sh (not run by tests/run.sh) needs these: Patroni beside rssd.
bench_postgres_pkgs=(postgresql-15 patroni etcd-server python3-etcd)

# rss_install_packages WHO: installs the missing ones with apt-get (root needed only when something is
# missing); WHO prefixes the messages. kubectl: any on PATH will do (the tests check 1.27-1.33 and
# Debian's 1.20); else Debian's.
rss_install_packages() {
    local who=$1 p missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep >/dev/null 'install ok installed' || missing+=("$p")
    done
    command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
    [ ${#missing[@]} -gt 0 ] || return 0
    if [ "$(id -u)" != 0 ]; then
        echo "$who: missing packages (${missing[*]}); run as root so apt-get can install them" >&2
        return 1
    fi
    echo "$who: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
