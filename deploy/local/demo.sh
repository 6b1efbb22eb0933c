#!/usr/bin/env bash
# demo.sh -- the README's main command: a 3-node test world with rssd, the dummy app, a lights-out and its recovery, as a timeline.
#
# Usage (as root, on Debian bookworm): deploy/local/demo.sh [--keep] [--app dummy|galera] [--real]
#   Installs what is missing (apt-get), builds into build/ (RSS_BUILD_DIR), starts a 3-node test world
#   (docs/testing.md) in /tmp/rss-world (RSS_WORLD_DIR), applies deploy/ with kubectl as a user would,
#   creates apps/dummy (or apps/galera: real MariaDB Galera, image built once by apps/galera/image/build.sh),
#   writes data, cuts the power of every node, and shows who came back first and why.
#   Leaves nothing running, unless --keep: then the world stays up and the script says how to explore it.
#   --real: the same on real Kubernetes (etcd, kube-apiserver, controller-manager, scheduler, kubelets built
#   from source by tests/realk8s/build.sh, about 15 min once per machine) instead of kubesim.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

keep=0
app=dummy
real=0
while [ $# -gt 0 ]; do
    a=$1
    shift
    case $a in
    --keep) keep=1 ;;
    --real) real=1 ;;
    --app=*) app=${a#*=} ;;
    --app)
        app=${1:-}
        shift || true
        ;;
    -h | --help)
        sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "demo: unknown argument $a (try --help)" >&2
        exit 2
        ;;
    esac
done
case $app in
dummy | galera) ;;
*)
    echo "demo: --app dummy or --app galera, not '$app'" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" != 0 ]; then
    echo "demo: run as root (it starts private containerds, mounts and runc containers)" >&2
    exit 1
fi

t_start=$(date +%s%3N)
bold() { if [ -t 1 ]; then printf '\033[1m%s\033[0m\n' "$*"; else printf '%s\n' "$*"; fi; }
secs() { # MS -> "1.234 s"
    printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000))
}
step_t0=0
step() {
    step_t0=$(date +%s%3N)
    bold "==> $*"
}
took() { echo "    ($(secs $(($(date +%s%3N) - step_t0))))"; }

step "Packages"
# shellcheck source=../../tests/lib/packages.sh
source "$top/tests/lib/packages.sh"
rss_install_packages demo
took

build=${RSS_BUILD_DIR:-$top/build}
step "Building into $build"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >"$build.demo-build.log" 2>&1 || {
    tail -n 30 "$build.demo-build.log" >&2
    echo "demo: build failed (full log: $build.demo-build.log)" >&2
    exit 1
}
rm -f "$build.demo-build.log"
took

if [ "$app" = galera ]; then
    step "The Galera image (apps/galera/image/build.sh: debootstrap + MariaDB 10.11 + Galera 4, cached per machine)"
    image_tar=$("$top/apps/galera/image/build.sh" 2> >(sed 's/^/    /' >&2) | tail -n 1)
    echo "    $image_tar ($(du -m "$image_tar" | cut -f1) MiB)"
    took
    # The world's kubelets mount the app's hooks at /hooks (the image has none).
    export RSS_WORLD_HOOKS=$top/apps/galera/hooks
fi

if [ $real = 1 ]; then
    step "Real Kubernetes: the components (tests/realk8s/build.sh, cached per machine) and the rssd image"
    bash "$top/tests/realk8s/build.sh" 2> >(sed 's/^/    /' >&2)
    bash "$top/deploy/image/build.sh" --out "$build/rssd-image.oci.tar" >"$build.demo-image.log" 2>&1 || {
        tail -n 30 "$build.demo-image.log" >&2
        echo "demo: the rssd image build failed (full log: $build.demo-image.log)" >&2
        exit 1
    }
    rm -f "$build.demo-image.log"
    export RSS_WORLD_FLAVOUR=real
    took
fi

export RSS_BUILD_DIR=$build
world_dir=${RSS_WORLD_DIR:-/tmp/rss-world}
for pf in "$world_dir/kubesim.pid" "$world_dir/k8s/apiserver.pid"; do
    [ -e "$world_dir/.rss-world" ] && [ -e "$pf" ] || continue
    read -r p _ <"$pf" || true
    if [ -n "${p:-}" ] && [ -d "/proc/$p" ]; then
        echo "demo: a world is already up in $world_dir; take it down first: tests/sim/world/world down" >&2
        exit 1
    fi
done
export RSS_WORLD_DIR_OVERRIDE=$world_dir
E2E_KEEP=$keep
# shellcheck source=../../tests/e2e/lib.sh
source "$top/tests/e2e/lib.sh"

step "Starting a 3-node test world and applying deploy/ (namespace, CRD, RBAC, DaemonSet)"
e2e_up 3
echo "    nodes: $(k get nodes --no-headers | awk '{print $1 "=" $2}' | tr '\n' ' ')"
echo "    rssd:  $(rssd_pods_json | jq -r '.items[] | "\(.metadata.name)@\(.spec.nodeName)"' | tr '\n' ' ')"
echo "    leader: $(leader_holder) (Lease rssd-system/rssd-leader)"
took

R=$app
# mexec ORDINAL CMD...: ExecSync in the member's container, through its node's runtime.
mexec() {
    local m node id
    m=$(member "$R" "$1")
    node=$(member_node "$R" "$1")
    shift
    id=$("$WORLD" crictl "$node" find "$NS" "$m" "$ctr")
    "$WORLD" crictl "$node" exec "$id" "$@"
}
msql() { mexec "$1" mariadb --no-defaults -S /run/galera/mysqld.sock -uroot -N -s -e "SET SESSION wsrep_sync_wait=1; $2"; }
if [ "$app" = galera ]; then
    ctr=mariadb
    step "Importing the image into every node's containerd"
    for n in $("$WORLD" nodes); do
        ctr --address "$RSS_WORLD_DIR/nodes/$n/containerd/containerd.sock" -n k8s.io images import \
            --snapshotter overlayfs "$image_tar" >/dev/null &
    done
    wait
    took
    step "Creating the Galera app (apps/galera/rss.yaml: 3 MariaDB members, anti-affinity, loopback only)"
    k apply -f "$top/apps/galera/rss.yaml" >/dev/null
    wait_until 600 "$R Running" rss_running "$R" 3
else
    ctr=dummy
    step "Creating the dummy app (apps/dummy/rss.yaml: 3 members, anti-affinity)"
    k apply -f "$top/apps/dummy/rss.yaml" >/dev/null
    wait_until 120 "$R Running" rss_running "$R" 3
fi
k get rss "$R"
took

if [ "$app" = galera ]; then
    step "Writing rows (through the runtime, mariadb in the containers); member 2's node dies first"
    rows() { # ordinal from to
        local sql="" k
        for ((k = $2; k <= $3; k++)); do sql+="INSERT INTO demo.t VALUES ($k, $1);"; done
        msql "$1" "$sql" >/dev/null
    }
    msql 0 "CREATE DATABASE demo; CREATE TABLE demo.t (id INT PRIMARY KEY, via INT NOT NULL)" >/dev/null
    rows 0 1 100
    rows 1 101 200
    rows 2 201 300
    echo "    300 rows, 100 through each member"
    "$WORLD" power-off "$(member_node "$R" 2)" >/dev/null 2>&1
    echo "    $(member "$R" 2)'s node loses power; 50 more rows through $(member "$R" 0) (2 of 3 still a primary component)"
    until rows 0 301 350 2>/dev/null; do sleep 1; done
    took
else
    step "Writing data (through the runtime, as a client would): the members drift apart"
    write() { mexec "$1" /hooks/write "$2" >/dev/null; } # ordinal count
    for i in 0 1 2; do write $i 100; done
    write 2 20 # member 2 took the last writes before the power cut
    write 0 7
    for i in 0 1 2; do
        echo "    $(member "$R" $i) on $(member_node "$R" $i): $(wc -l <"$(claim_dir "$R" $i)/writes") writes"
    done
    took
fi

step "Lights-out: every node loses power, then comes back"
power_off_all
echo "    all 3 nodes off: kubelets, rssd and every container killed; data stays on the volumes"
sleep 3
echo "    power back after $(secs $(($(date +%s%3N) - step_t0)))"
mark=$(now)
t_on=$(date +%s%3N)
power_on_all
echo "    all 3 nodes on again"
took
step "Recovery"
# The status may still say Running from before the cut: wait for what the hooks logs show.
recovered() { hook_lines "$mark" "$R" seed | grep >/dev/null . && [ "$(count_lines "$(hook_lines "$mark" "$R" primary secondary)")" -ge 2 ]; }
wait_until 600 "a seed and 2 joins in the hooks logs" recovered
wait_until 300 "$R Running after the lights-out" rss_running "$R" 3
took

ms_of() { date -u -d "$1" +%s%3N; }
rel() { # ISO -> "+1.234 s" after the power came back
    local d=$(($(ms_of "$1") - t_on))
    if [ $d -lt 0 ]; then printf -- '-%s' "$(secs $((-d)))"; else printf '+%s' "$(secs $d)"; fi
}
echo
bold "Timeline after the power came back (from each member's /data/hooks.log, the ground truth)"
lines=$(hook_lines "$mark" "$R" sequence seed primary secondary stop)
while read -r t pod hook rest; do
    [ -n "${t:-}" ] || continue
    case $hook in
    sequence) what="reports sequence $(sed -n 's/.* out=\([^ ]*\).*/\1/p' <<<"$rest")" ;;
    seed) what="SEEDS: bootstraps the cluster ($rest)" ;;
    *) what="starts as $hook, joining ${rest% rc=*} (${rest##* })" ;;
    esac
    printf '  %-10s %-12s %s\n' "$(rel "$t")" "$pod" "$what"
done <<<"$lines"
echo
bold "Summary"
for i in 0 1 2; do
    s=$(hook_lines "$mark" "$R" sequence | awk -v p="$(member "$R" $i)" '$2 == p' | sed -n 1p | sed -n 's/.* out=\([^ ]*\).*/\1/p')
    echo "  $(member "$R" $i): sequence ${s:-?}"
done
seedl=$(hook_lines "$mark" "$R" seed | sed -n 1p)
echo "  seeded: $(awk '{print $2}' <<<"$seedl") at $(rel "$(awk '{print $1}' <<<"$seedl")")"
why=$(events_since "$mark" SeedChosen "$R" | tail -1)
echo "  why (Event SeedChosen): ${why#* SeedChosen }"
echo "  joined, in order: $(hook_lines "$mark" "$R" primary secondary | sed 's/^[^ ]* \([^ ]*\) [^ ]* args=\(\[[^]]*\]\).*/\1 with peers \2;/' | tr '\n' ' ')"
last_seq=$(hook_lines "$mark" "$R" sequence | awk '{print $2, $1}' | sort -u -k1,1 | awk '{print $2}' | sort | tail -1)
last_join=$(hook_lines "$mark" "$R" primary secondary | tail -1 | awk '{print $1}')
acq=$(lease_json | jq -r '.spec.acquireTime // ""')
echo "  power on -> all members reported: $(rel "$last_seq")"
[ -z "$acq" ] || echo "  power on -> new leader elected:    $(rel "$acq") (the old leader's node rebooted, so its new rssd need not wait out the old Lease)"
echo "  all reported -> seed done:        $(secs $(($(ms_of "$(awk '{print $1}' <<<"$seedl")") - $(ms_of "$last_seq"))))"
echo "  seed done -> last join done:      $(secs $(($(ms_of "$last_join") - $(ms_of "$(awk '{print $1}' <<<"$seedl")"))))"
echo "  status now: $(k get rss "$R" --no-headers)"
if [ "$app" = galera ]; then
    for i in 0 1 2; do
        echo "  $(member "$R" $i): $(msql $i "SELECT CONCAT(COUNT(*), ' rows, checksum ', MD5(GROUP_CONCAT(id, '/', via ORDER BY id))) FROM demo.t")"
    done
fi
echo "  whole demo: $(secs $(($(date +%s%3N) - t_start)))"

if [ "$keep" = 1 ]; then
    echo
    bold "The world stays up (--keep). Explore it:"
    cat <<EOF
  export KUBECONFIG=$KC
  kubectl get rss,statefulsets,pods -o wide
  kubectl get rss $R -o yaml                 # status: members, phase, per-member sequence and last hook
  kubectl get events --sort-by=.lastTimestamp  # every decision and why
  kubectl get lease -n rssd-system             # the leader Lease and the agents' heartbeats
  cat $RSS_WORLD_DIR/pv/default/data-rss-$R-*/hooks.log
  RSS_WORLD_DIR=$RSS_WORLD_DIR tests/sim/world/world lights-out   # another power cut
  RSS_WORLD_DIR=$RSS_WORLD_DIR tests/sim/world/world status
  RSS_WORLD_DIR=$RSS_WORLD_DIR tests/sim/world/world down         # when you are done
EOF
fi
