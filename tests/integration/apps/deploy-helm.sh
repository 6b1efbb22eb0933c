#!/usr/bin/env bash
# deploy-helm.sh -- the Helm chart deploy/helm/rssd with real helm: lint, the same objects as the kustomize overlays, install/upgrade/uninstall against kubesim.
#
# Usage: deploy-helm.sh KUBESIM_BINARY SOURCE_DIR
# helm is the pinned release built from its Go module by tests/lib/helm.sh (cached per version).
# Checks: `helm lint` (default values, and a namespace list); `helm template --include-crds` with
# namespace.create=true equals `kubectl kustomize deploy/overlays/cluster` object by object (Helm's own
# bookkeeping labels aside), and with namespaces={rss-apps} equals deploy/overlays/namespace; values
# reach the DaemonSet (timings, priority class, node selector, resources, criSocket: with MicroK8s's socket
# the chart equals deploy/overlays/microk8s, a socket in /run mounts the file); the monitoring objects equal
# deploy/monitoring/; `helm install` creates every object in kubesim, `helm upgrade` changes the image
# of the same DaemonSet, `helm uninstall` removes everything but the CRD (crds/ is never deleted).
set -euo pipefail

NAME=deploy-helm
# shellcheck source=../../lib/kubectl_checks.sh
. "$(dirname "$0")/../../lib/kubectl_checks.sh" "$@"
chart=$top/deploy/helm/rssd

helm_bin=$(bash "$top/tests/lib/helm.sh") || {
	echo "$NAME: no helm" >&2
	exit 1
}
# Helm's state (repositories, cache, plugins) in the test's own directory, never the user's.
export HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data
h() { "$helm_bin" "$@"; }
echo "# $(h version --short 2>&1)"

# norm FILE: one line per object, "Kind ns/name <sorted JSON>", without Helm's bookkeeping labels.
norm() {
	k create --dry-run=client -o json -f "$1" |
		jq -c 'if .kind == "List" then .items[] else . end |
			.metadata.labels |= (if . then del(.["helm.sh/chart"], .["app.kubernetes.io/managed-by"],
				.["app.kubernetes.io/instance"], .["app.kubernetes.io/version"]) else . end) |
			"\(.kind) \(.metadata.namespace // "-")/\(.metadata.name) \(. | tojson)"' -r |
		jq -R -r 'split(" ") as $w | "\($w[0]) \($w[1]) \($w[2:] | join(" ") | fromjson | tojson)"' |
		sort
}
# same_objects WHAT KUSTOMIZE_FILE HELM_FILE: the same object names, and each object equal.
same_objects() {
	local what=$1 a b
	a=$(norm "$2") b=$(norm "$3")
	expect "$what: the same objects" "$(cut -d' ' -f1,2 <<<"$a")" "$(cut -d' ' -f1,2 <<<"$b")"
	local differ=() line key
	while read -r line; do
		key=$(cut -d' ' -f1,2 <<<"$line")
		if [ "$(grep -F "$key " <<<"$b" | sed -n 1p | jq -S -R 'split(" ")[2:] | join(" ") | fromjson' 2>/dev/null)" != \
			"$(jq -S -R 'split(" ")[2:] | join(" ") | fromjson' <<<"$line")" ]; then
			differ+=("$key")
			diff <(jq -S -R 'split(" ")[2:] | join(" ") | fromjson' <<<"$line") \
				<(grep -F "$key " <<<"$b" | sed -n 1p | jq -S -R 'split(" ")[2:] | join(" ") | fromjson' 2>/dev/null) |
				sed 's/^/     /' | head -30 || true
		fi
	done <<<"$a"
	if [ ${#differ[@]} = 0 ]; then ok "$what: every object equal"; else bad "$what: objects differ: ${differ[*]}"; fi
}

# Helm warns about every symbolic link in a chart, so the chart carries copies; they must stay copies.
for pair in "crds/crd.yaml base/crd.yaml" "files/podmonitor.yaml monitoring/podmonitor.yaml" \
	"files/prometheusrule.yaml monitoring/prometheusrule.yaml"; do
	set -- $pair
	if cmp -s "$chart/$1" "$top/deploy/$2"; then ok "the chart's $1 is deploy/$2"; else
		bad "the chart's $1 differs from deploy/$2 (copy it again)"; fi
done

echo "# lint"
run "helm lint (default values)" h lint --strict "$chart"
run "helm lint (a namespace list, metrics on)" h lint --strict "$chart" --set 'namespaces={a,b}' \
	--set metrics.podMonitor.enabled=true --set metrics.prometheusRule.enabled=true

echo "# helm template against the kustomize overlays"
k kustomize "$top/deploy/overlays/cluster" -o "$tmp/cluster.yaml"
run "helm template (cluster-wide, namespace.create)" h template rssd "$chart" -n rssd-system --include-crds \
	--set namespace.create=true --output-dir "$tmp/render-cluster"
find "$tmp/render-cluster" -name '*.yaml' | sort | xargs -I{} sh -c 'echo ---; cat "{}"' >"$tmp/helm-cluster.yaml"
same_objects "cluster" "$tmp/cluster.yaml" "$tmp/helm-cluster.yaml"
k kustomize "$top/deploy/overlays/namespace" -o "$tmp/namespace.yaml"
run "helm template (namespaces={rss-apps})" h template rssd "$chart" -n rssd-system --include-crds \
	--set namespace.create=true --set 'namespaces={rss-apps}' --output-dir "$tmp/render-namespace"
find "$tmp/render-namespace" -name '*.yaml' | sort | xargs -I{} sh -c 'echo ---; cat "{}"' >"$tmp/helm-namespace.yaml"
same_objects "namespace" "$tmp/namespace.yaml" "$tmp/helm-namespace.yaml"
# Two namespaces: a Role and RoleBinding in each, both in --namespaces.
h template rssd "$chart" -n rssd-system --set 'namespaces={team-a,team-b}' >"$tmp/two.yaml"
expect "two namespaces: a Role and a RoleBinding rssd-apps in each" \
	"Role team-a/rssd-apps Role team-b/rssd-apps RoleBinding team-a/rssd-apps RoleBinding team-b/rssd-apps" \
	"$(norm "$tmp/two.yaml" | cut -d' ' -f1,2 | grep rssd-apps | tr '\n' ' ' | sed 's/ $//')"
expect "two namespaces: --namespaces lists both" "--namespaces=team-a,team-b" \
	"$(k create --dry-run=client -o json -f "$tmp/two.yaml" | jq -r 'if .kind == "List" then .items[] else . end |
		select(.kind == "DaemonSet") | .spec.template.spec.containers[0].args[0]')"

echo "# values reach the DaemonSet"
h template rssd "$chart" -n ops --set timings.fenceTimeout=45s --set timings.leaseDuration=20s \
	--set logLevel=debug --set logFormat=json --set reconcileWorkers=8 --set priorityClassName=my-class --set nodeSelector.disk=ssd \
	--set resources.limits.memory=256Mi --set image.repository=reg.example/rssd --set image.tag=1.2.3 \
	--set criSocket=unix:///var/run/crio/crio.sock >"$tmp/values.yaml"
ds=$(k create --dry-run=client -o json -f "$tmp/values.yaml" | jq -c 'if .kind == "List" then .items[] else . end | select(.kind == "DaemonSet")')
expect "values: the arguments" '["--cri-endpoint=unix:///var/run/crio/crio.sock","--health-port=8476","--health-address=$(POD_IP)","--state-dir=/run/rssd","--lease-duration=20s","--fence-timeout=45s","--reconcile-workers=8","--log-level=debug","--log-format=json"]' \
	"$(jq -c '.spec.template.spec.containers[0].args' <<<"$ds")"
expect "values: image, priority class, node selector, memory limit, CRI socket, namespace" \
	"reg.example/rssd:1.2.3 my-class ssd 256Mi /var/run/crio Directory /var/run/crio true 2 ops" \
	"$(jq -r '[.spec.template.spec.containers[0].image, .spec.template.spec.priorityClassName,
		.spec.template.spec.nodeSelector.disk, .spec.template.spec.containers[0].resources.limits.memory,
		.spec.template.spec.volumes[0].hostPath.path, .spec.template.spec.volumes[0].hostPath.type,
		.spec.template.spec.containers[0].volumeMounts[0].mountPath,
		.spec.template.spec.containers[0].volumeMounts[0].readOnly,
		(.spec.template.spec.volumes | length), .metadata.namespace] | join(" ")' <<<"$ds")"
h template rssd "$chart" -n rssd-system --set priorityClassName= >"$tmp/noprio.yaml"
expect "values: an empty priorityClassName leaves the field out" null \
	"$(k create --dry-run=client -o json -f "$tmp/noprio.yaml" | jq -c 'if .kind == "List" then .items[] else . end |
		select(.kind == "DaemonSet") | .spec.template.spec.priorityClassName')"

echo "# criSocket: the runtime's socket (docs/platforms.md)"
# MicroK8s's socket renders the DaemonSet of deploy/overlays/microk8s, object by object.
k kustomize "$top/deploy/overlays/microk8s" -o "$tmp/microk8s.yaml"
run "helm template (criSocket: MicroK8s's containerd)" h template rssd "$chart" -n rssd-system --include-crds \
	--set namespace.create=true --set criSocket=unix:///var/snap/microk8s/common/run/containerd.sock \
	--output-dir "$tmp/render-microk8s"
find "$tmp/render-microk8s" -name '*.yaml' | sort | xargs -I{} sh -c 'echo ---; cat "{}"' >"$tmp/helm-microk8s.yaml"
same_objects "criSocket=MicroK8s's socket against overlays/microk8s" "$tmp/microk8s.yaml" "$tmp/helm-microk8s.yaml"
run "helm lint (criSocket set)" h lint --strict "$chart" --set criSocket=unix:///run/k0s/containerd.sock
# ds_of ARGS...: the DaemonSet's pod spec rendered with ARGS, as JSON.
ds_of() { h template rssd "$chart" -n rssd-system --show-only templates/daemonset.yaml "$@" |
	k create --dry-run=client -o json -f - | jq -c .spec.template.spec; }
d=$(ds_of --set criSocket=unix:///run/cri-dockerd.sock)
expect "criSocket directly in /run (cri-dockerd): the socket file is mounted, never all of /run" \
	"--cri-endpoint=unix:///run/cri-dockerd.sock /run/cri-dockerd.sock Socket /run/cri-dockerd.sock true" \
	"$(jq -r '[.containers[0].args[0], .volumes[0].hostPath.path, .volumes[0].hostPath.type,
		.containers[0].volumeMounts[0].mountPath, .containers[0].volumeMounts[0].readOnly] | map(tostring) | join(" ")' <<<"$d")"
d=$(ds_of --set criSocket=/run/k0s/containerd.sock)
expect "criSocket as a bare path: unix:// added, its directory mounted" "--cri-endpoint=unix:///run/k0s/containerd.sock /run/k0s" \
	"$(jq -r '[.containers[0].args[0], .volumes[0].hostPath.path] | join(" ")' <<<"$d")"
d=$(ds_of --set 'criSocketDirs={/run/containerd,/var/lib/rancher/x_y.z}')
expect "criSocketDirs: each directory a read-only mount and a DirectoryOrCreate volume, named after its path" \
	'[{"mountPath":"/run/containerd","name":"cri-run-containerd","readOnly":true},{"mountPath":"/var/lib/rancher/x_y.z","name":"cri-var-lib-rancher-x-y-z","readOnly":true},{"mountPath":"/run/rssd","name":"state"}] ["cri-run-containerd:/run/containerd:DirectoryOrCreate","cri-var-lib-rancher-x-y-z:/var/lib/rancher/x_y.z:DirectoryOrCreate","state:/run/rssd:DirectoryOrCreate"] false' \
	"$(jq -c '.containers[0].volumeMounts' <<<"$d") $(jq -c '[.volumes[] | "\(.name):\(.hostPath.path):\(.hostPath.type)"]' <<<"$d") $(jq -c '.containers[0].args | any(startswith("--cri-endpoint"))' <<<"$d")"
if h template rssd "$chart" --set criSocket=run/x.sock >"$tmp/out" 2>&1; then bad "criSocket=run/x.sock (relative) rendered"; else
	expect "criSocket relative: refused, naming the form" 1 "$(grep -c 'expected unix:///absolute/path.sock' "$tmp/out")"; fi

echo "# the monitoring objects are deploy/monitoring's"
h template rssd "$chart" -n rssd-system --set metrics.podMonitor.enabled=true \
	--set metrics.prometheusRule.enabled=true --show-only templates/monitoring.yaml >"$tmp/mon.yaml"
# kubectl knows no PodMonitor without its CRD: compare as YAML parsed by Python.
mon_json() { python3 -c 'import sys, yaml, json
for d in yaml.safe_load_all(open(sys.argv[1])):
    if not d: continue
    for k in ("helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"):
        d["metadata"].get("labels", {}).pop(k, None)
    print(json.dumps(d, sort_keys=True))' "$@" | sort; }
expect "monitoring: the PodMonitor and PrometheusRule equal deploy/monitoring/" \
	"$({ cat "$top/deploy/monitoring/podmonitor.yaml"; echo ---; cat "$top/deploy/monitoring/prometheusrule.yaml"; } >"$tmp/mon-plain.yaml"; mon_json "$tmp/mon-plain.yaml")" \
	"$(mon_json "$tmp/mon.yaml")"

echo "# install, upgrade, uninstall against kubesim"
run "helm install (--create-namespace)" h install rssd "$chart" -n rssd-system --create-namespace
h template rssd "$chart" -n rssd-system --include-crds >"$tmp/installed.yaml"
missing=()
while read -r kind ref; do
	ns=${ref%%/*} name=${ref#*/}
	if [ "$ns" = - ]; then k get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref"); else
		k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref")
	fi
done < <(norm "$tmp/installed.yaml" | cut -d' ' -f1,2)
if [ ${#missing[@]} = 0 ]; then ok "install: every object exists"; else bad "install: missing ${missing[*]}"; fi
run "install: the CRD is Established" k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org
ds_image() { k -n rssd-system get daemonset rssd -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.priorityClassName}'; }
expect "install: the DaemonSet runs the chart's image at system-node-critical" "localhost/rss/rssd:0.1.0 system-node-critical" "$(ds_image)"
expect "install: helm lists the release as deployed" deployed "$(h list -n rssd-system -o json | jq -r '.[0].status')"
uid=$(k -n rssd-system get daemonset rssd -o jsonpath='{.metadata.uid}')
run "helm upgrade (image.tag=9.9.9)" h upgrade rssd "$chart" -n rssd-system --set image.tag=9.9.9
expect "upgrade: the image changed" "localhost/rss/rssd:9.9.9 system-node-critical" "$(ds_image)"
expect "upgrade: the same DaemonSet (a rolling update, not a reinstall)" "$uid" \
	"$(k -n rssd-system get daemonset rssd -o jsonpath='{.metadata.uid}')"
expect "upgrade: revision 2" 2 "$(h list -n rssd-system -o json | jq -r '.[0].revision')"
run "helm upgrade to namespaces={rss-apps} (the user made rss-apps)" bash -c \
	"$(declare -f k); tmp=$tmp; k apply -f - <<<'{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"rss-apps\"}}' && \
	 '$helm_bin' upgrade rssd '$chart' -n rssd-system --set 'namespaces={rss-apps}'"
if k get clusterrole rssd >/dev/null 2>&1; then bad "upgrade to a namespace list: ClusterRole rssd is still there"; else
	ok "upgrade to a namespace list: ClusterRole rssd is gone"; fi
run "upgrade to a namespace list: Role rssd-apps in rss-apps" k -n rss-apps get role rssd-apps
run "helm uninstall" h uninstall rssd -n rssd-system
left=()
while read -r kind ref; do
	[ "$kind" = CustomResourceDefinition ] && continue
	ns=${ref%%/*} name=${ref#*/}
	if [ "$ns" = - ]; then ! k get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref"); else
		! k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref")
	fi
done < <(norm "$tmp/helm-namespace.yaml" | cut -d' ' -f1,2 | grep -v '^Namespace ')
if [ ${#left[@]} = 0 ]; then ok "uninstall: every object of the release is gone"; else bad "uninstall: left behind ${left[*]}"; fi
run "uninstall: the CRD stays (Helm never deletes crds/; docs/deploy.md)" k get crd replicatedstatefulsets.clusterlabs.org
run "uninstall: the user's application namespace stays" k get namespace rss-apps

checks_done
