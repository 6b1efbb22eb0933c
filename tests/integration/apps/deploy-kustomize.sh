#!/usr/bin/env bash
# deploy-kustomize.sh -- installs, upgrades and uninstalls each kustomize overlay of deploy/ with `kubectl apply -k` against kubesim.
#
# Usage: deploy-kustomize.sh KUBESIM_BINARY SOURCE_DIR
# Checks: kubectl has kustomize built in; `kubectl kustomize` of each overlay is stable (same bytes twice)
# and yields exactly the expected objects; after `apply -k` they exist with the image the base names;
# an upgrade (an overlay on top setting another tag) changes only the image; `delete -k` removes what
# the overlay made and, for the namespace overlay, leaves the user's application namespace alone; the
# namespace overlay keeps rssd, its Leases and records in rssd-system, passes --namespaces=rss-apps, and its
# Role in rss-apps carries exactly the base ClusterRole's namespaced rules (rssd-node-loss the two
# cluster-scoped gets, and nothing else cluster-wide); the microk8s overlay differs from the cluster
# one only in --cri-endpoint and the one socket directory it mounts read-only.
set -euo pipefail

NAME=deploy-kustomize
# shellcheck source=../../lib/kubectl_checks.sh
. "$(dirname "$0")/../../lib/kubectl_checks.sh" "$@"

# The image the base names (its only `images:` entry): NAME:TAG.
kz=$top/deploy/base/kustomization.yaml
image="$(sed -n 's/^ *newName: *//p' "$kz"):$(sed -n 's/^ *newTag: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$kz")"

# build.sh tags the image with the project's version; the base must name the same release.
expect "the base's image tag is the project version (CMakeLists.txt)" \
	"$(sed -n 's/^project(rssd VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")" "${image##*:}"

echo "# kubectl $(k version --client 2>/dev/null | tr '\n' ' ')"
if k version --client 2>/dev/null | grep >/dev/null '^Kustomize Version: v[0-9]'; then ok "kubectl has kustomize built in"; else
	bad "kubectl reports no Kustomize Version (kubectl apply -k needs kubectl 1.14 or later)"
fi

# objects FILE: "Kind namespace/name" per object of a multi-document YAML, sorted.
objects() {
	k create --dry-run=client -o json -f "$1" |
		jq -r 'if .kind == "List" then .items[] else . end | "\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)"' |
		sort
}
# exist OVERLAY FILE: every object of the rendered FILE is on the server.
exist() {
	local kind name ns missing=()
	while read -r kind ref; do
		ns=${ref%%/*} name=${ref#*/}
		if [ "$ns" = - ]; then
			k get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref")
		else
			k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref")
		fi
	done < <(objects "$2")
	if [ ${#missing[@]} = 0 ]; then ok "$1: every object exists"; else bad "$1: missing ${missing[*]}"; fi
}
# gone OVERLAY FILE: no object of FILE is on the server.
gone() {
	local kind name ns left=()
	while read -r kind ref; do
		ns=${ref%%/*} name=${ref#*/}
		if [ "$ns" = - ]; then
			! k get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref")
		else
			! k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref")
		fi
	done < <(objects "$2")
	if [ ${#left[@]} = 0 ]; then ok "$1: delete -k removed every object"; else bad "$1: left behind ${left[*]}"; fi
}
# render OVERLAY: kubectl kustomize twice into $tmp/OVERLAY.yaml; the two must be byte-identical.
render() {
	local o=$1
	run "kubectl kustomize deploy/overlays/$o" k kustomize "$top/deploy/overlays/$o" -o "$tmp/$o.yaml"
	k kustomize "$top/deploy/overlays/$o" -o "$tmp/$o.again.yaml" 2>/dev/null || true
	if cmp -s "$tmp/$o.yaml" "$tmp/$o.again.yaml"; then ok "$o: kustomize output is stable"; else
		bad "$o: kustomize output differs between two runs"
	fi
}
ds_image() { k -n "$1" get daemonset rssd -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].imagePullPolicy}'; }

echo "# overlays/cluster: rssd in rssd-system, every namespace managed"
render cluster
expect "cluster: the objects" "ClusterRole -/rssd
ClusterRoleBinding -/rssd
CustomResourceDefinition -/replicatedstatefulsets.clusterlabs.org
DaemonSet rssd-system/rssd
FlowSchema -/rssd-leases
Namespace -/rssd-system
PriorityLevelConfiguration -/rssd-leases
Role rssd-system/rssd-leases
Role rssd-system/rssd-records
RoleBinding rssd-system/rssd-leases
RoleBinding rssd-system/rssd-records
ServiceAccount rssd-system/rssd" "$(objects "$tmp/cluster.yaml")"
expect "cluster: the Namespace comes first in the rendered output" Namespace \
	"$(k create --dry-run=client -o json -f "$tmp/cluster.yaml" | jq -rs '[.[] | if .kind == "List" then .items[] else . end][0].kind')"
run "cluster: kubectl apply -k" k apply -k "$top/deploy/overlays/cluster"
run "cluster: the CRD is Established" k wait --for=condition=Established --timeout=30s \
	crd/replicatedstatefulsets.clusterlabs.org
exist cluster "$tmp/cluster.yaml"
expect "cluster: the DaemonSet runs the base's image" "$image IfNotPresent" "$(ds_image rssd-system)"
# Everything but the image is the plain manifest's (the world applies that one with kubectl -f).
plain=$(k create --dry-run=client -o json -f "$top/deploy/base/daemonset.yaml" |
	jq -S '.spec | del(.template.spec.containers[0].image, .template.spec.containers[0].imagePullPolicy)')
rendered=$(k create --dry-run=client -o json -f "$tmp/cluster.yaml" | jq -S 'if .kind == "List" then .items[] else . end |
	select(.kind == "DaemonSet") | .spec | del(.template.spec.containers[0].image, .template.spec.containers[0].imagePullPolicy)')
expect "cluster: the DaemonSet is deploy/daemonset.yaml but for the image" "$plain" "$rendered"
run "cluster: applying again changes nothing" k apply -k "$top/deploy/overlays/cluster"
if grep -q -v ' unchanged$' <<<"$run_out"; then bad "cluster: a second apply -k changed: $(grep -v ' unchanged$' <<<"$run_out" | tr '\n' ';')"; fi

# Upgrade as docs/deploy.md says: an overlay of one's own on top that sets the new tag.
mkdir -p "$tmp/upgrade"
# kustomize takes no absolute paths in resources.
cat >"$tmp/upgrade/kustomization.yaml" <<EOF
resources:
- $(realpath --relative-to="$tmp/upgrade" "$top/deploy/overlays/cluster")
images:
- name: localhost/rss/rssd
  newTag: "9.9.9"
EOF
uid=$(k -n rssd-system get daemonset rssd -o jsonpath='{.metadata.uid}')
run "cluster: upgrade (apply -k of an overlay setting tag 9.9.9)" k apply -k "$tmp/upgrade"
expect "cluster: the upgrade changed the image" "${image%:*}:9.9.9 IfNotPresent" "$(ds_image rssd-system)"
expect "cluster: the upgrade kept the DaemonSet (same uid: a rolling update, not a reinstall)" "$uid" \
	"$(k -n rssd-system get daemonset rssd -o jsonpath='{.metadata.uid}')"
# --ignore-not-found: deleting the Namespace takes what is in it first (kubesim at once, a cluster soon).
run "cluster: kubectl delete -k" k delete -k "$top/deploy/overlays/cluster" --ignore-not-found
gone cluster "$tmp/cluster.yaml"

echo "# overlays/microk8s: the cluster install with MicroK8s's containerd socket (docs/platforms.md)"
render microk8s
expect "microk8s: the cluster overlay's objects" "$(objects "$tmp/cluster.yaml")" "$(objects "$tmp/microk8s.yaml")"
ds_spec() { k create --dry-run=client -o json -f "$1" | jq -c 'if .kind == "List" then .items[] else . end |
	select(.kind == "DaemonSet") | .spec.template.spec'; }
m=$(ds_spec "$tmp/microk8s.yaml")
expect "microk8s: --cri-endpoint first, then the base's arguments" \
	'["--cri-endpoint=unix:///var/snap/microk8s/common/run/containerd.sock","--health-port=8476","--health-address=$(POD_IP)","--state-dir=/run/rssd"]' \
	"$(jq -c '.containers[0].args' <<<"$m")"
expect "microk8s: the socket's directory read-only in place of the base's three, the state kept" \
	'[{"mountPath":"/var/snap/microk8s/common/run","name":"cri-socket","readOnly":true},{"mountPath":"/run/rssd","name":"state"}] [{"hostPath":{"path":"/var/snap/microk8s/common/run","type":"Directory"},"name":"cri-socket"},{"hostPath":{"path":"/run/rssd","type":"DirectoryOrCreate"},"name":"state"}]' \
	"$(jq -c '.containers[0].volumeMounts' <<<"$m") $(jq -c '.volumes' <<<"$m")"
expect "microk8s: the rest of the DaemonSet is the base's" \
	"$(ds_spec "$tmp/cluster.yaml" | jq -S 'del(.containers[0].args, .containers[0].volumeMounts, .volumes)')" \
	"$(jq -S 'del(.containers[0].args, .containers[0].volumeMounts, .volumes)' <<<"$m")"
run "microk8s: kubectl apply -k" k apply -k "$top/deploy/overlays/microk8s"
exist microk8s "$tmp/microk8s.yaml"
expect "microk8s: the DaemonSet on the server has the endpoint" "--cri-endpoint=unix:///var/snap/microk8s/common/run/containerd.sock" \
	"$(k -n rssd-system get daemonset rssd -o jsonpath='{.spec.template.spec.containers[0].args[0]}')"
run "microk8s: kubectl delete -k" k delete -k "$top/deploy/overlays/microk8s" --ignore-not-found
gone microk8s "$tmp/microk8s.yaml"

echo "# overlays/namespace: rssd in rssd-system, only rss-apps managed, Roles there"
render namespace
expect "namespace: the objects" "ClusterRole -/rssd-node-loss
ClusterRoleBinding -/rssd-node-loss
CustomResourceDefinition -/replicatedstatefulsets.clusterlabs.org
DaemonSet rssd-system/rssd
FlowSchema -/rssd-leases
Namespace -/rssd-system
PriorityLevelConfiguration -/rssd-leases
Role rss-apps/rssd-apps
Role rssd-system/rssd-leases
Role rssd-system/rssd-records
RoleBinding rss-apps/rssd-apps
RoleBinding rssd-system/rssd-leases
RoleBinding rssd-system/rssd-records
ServiceAccount rssd-system/rssd" "$(objects "$tmp/namespace.yaml")"
# The one place naming the application namespace is the --namespaces argument; the Role follows it.
ds_args() { k create --dry-run=client -o json -f "$1" | jq -c 'if .kind == "List" then .items[] else . end |
	select(.kind == "DaemonSet") | .spec.template.spec.containers[0].args'; }
expect "namespace: the DaemonSet passes --namespaces=rss-apps" \
	'["--namespaces=rss-apps","--health-port=8476","--health-address=$(POD_IP)","--state-dir=/run/rssd"]' "$(ds_args "$tmp/namespace.yaml")"
mkdir -p "$tmp/other-ns"
cp "$top/deploy/overlays/namespace/rbac.yaml" "$tmp/other-ns/"
sed 's|value: --namespaces=rss-apps|value: --namespaces=team-db|; s|\.\./\.\./base|'"$(realpath --relative-to="$tmp/other-ns" "$top/deploy/base")"'|' \
	"$top/deploy/overlays/namespace/kustomization.yaml" >"$tmp/other-ns/kustomization.yaml"
k kustomize "$tmp/other-ns" -o "$tmp/other-ns.yaml" 2>"$tmp/out" || bad "kustomize of a copy naming team-db: $(cat "$tmp/out")"
expect "namespace: changing the one --namespaces value moves the Role and RoleBinding with it" \
	"Role team-db/rssd-apps RoleBinding team-db/rssd-apps" \
	"$(objects "$tmp/other-ns.yaml" | grep -E '^Role(Binding)? .*/rssd-apps$' | tr '\n' ' ' | sed 's/ $//')"
expect "namespace: the placeholder namespace never reaches the output" 0 \
	"$(grep -c set-from-namespaces-flag "$tmp/namespace.yaml" "$tmp/other-ns.yaml" | awk -F: '{s += $2} END {print s}')"
# `kubectl create namespace` would send protobuf, which kubesim does not read: the same object as JSON.
run "namespace: the user creates the application namespace" k apply -f - <<<'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rss-apps"}}'
run "namespace: kubectl apply -k" k apply -k "$top/deploy/overlays/namespace"
exist namespace "$tmp/namespace.yaml"
expect "namespace: the DaemonSet runs the base's image" "$image IfNotPresent" "$(ds_image rssd-system)"
expect "namespace: every binding's subject is the ServiceAccount in rssd-system" "rssd-system/rssd rssd-system/rssd rssd-system/rssd rssd-system/rssd" \
	"$(for b in "rolebinding -n rss-apps rssd-apps" "rolebinding -n rssd-system rssd-leases" "rolebinding -n rssd-system rssd-records" "clusterrolebinding rssd-node-loss"; do
		# shellcheck disable=SC2086
		k get $b -o jsonpath='{.subjects[0].namespace}/{.subjects[0].name}{" "}'
	done | sed 's/ $//')"
base_all=$(k create --dry-run=client -o json -f "$top/deploy/base/rbac.yaml" |
	jq -S 'if .kind == "List" then .items[] else . end | select(.kind == "ClusterRole") | .rules')
# Cluster-scoped resources (nodeLossPolicy's gets on nodes and PVs) cannot be granted by a Role: the
# overlay's rssd-node-loss ClusterRole carries that rule instead, and nothing else.
cluster_scoped='["nodes","persistentvolumes"]'
base_rules=$(jq -S --argjson c "$cluster_scoped" 'map(select((.resources - $c) | length > 0))' <<<"$base_all")
expect "namespace: Role rssd-apps has exactly the base ClusterRole's namespaced rules" "$base_rules" \
	"$(k -n rss-apps get role rssd-apps -o json | jq -S .rules)"
expect "namespace: ClusterRole rssd-node-loss is exactly the base's cluster-scoped rule" \
	"$(jq -c --argjson c "$cluster_scoped" 'map(select((.resources - $c) | length == 0))' <<<"$base_all")" \
	"$(k get clusterrole rssd-node-loss -o json | jq -c .rules)"
expect "namespace: no other ClusterRole or ClusterRoleBinding of rssd" "clusterrole.rbac.authorization.k8s.io/rssd-node-loss clusterrolebinding.rbac.authorization.k8s.io/rssd-node-loss" \
	"$(k get clusterroles,clusterrolebindings -l app.kubernetes.io/name=rssd -o name | sort | tr '\n' ' ' | sed 's/ $//')"
run "namespace: kubectl delete -k" k delete -k "$top/deploy/overlays/namespace" --ignore-not-found
gone namespace "$tmp/namespace.yaml"
run "namespace: the user's application namespace stays" k get namespace rss-apps

checks_done
