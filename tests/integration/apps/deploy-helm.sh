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
# Hygiene (issue 38 item 7): values.schema.json refuses a bad value and an unknown key; NOTES.txt says
# what was installed, the Pod Security label, how to check it and how to upgrade the CRD; the `helm test`
# hook renders; extraArgs, extraEnv, podAnnotations, podLabels and serviceAccount reach their objects; the
# aggregated ClusterRoles rssd-view and rssd-edit; the FlowSchema's apiVersion follows the server's version.
# The comparisons with kustomize leave out what the overlays do not have (aggregatedRoles, the test hook).
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
# helm template renders for --kube-version (the FlowSchema's apiVersion follows it), and a helm built
# from its module without the release's ldflags defaults to v1.20.0: render for the server installed
# into, kubesim's version, unless a later --kube-version says otherwise (the last flag wins).
kube_version=$(k version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)
h() { if [ "$1" = template ]; then shift; "$helm_bin" template --kube-version "$kube_version" "$@"; else "$helm_bin" "$@"; fi; }
echo "# $(h version --short 2>&1), templates for kube $kube_version"

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
	--set namespace.create=true --set aggregatedRoles=false --skip-tests --output-dir "$tmp/render-cluster"
find "$tmp/render-cluster" -name '*.yaml' | sort | xargs -I{} sh -c 'echo ---; cat "{}"' >"$tmp/helm-cluster.yaml"
same_objects "cluster" "$tmp/cluster.yaml" "$tmp/helm-cluster.yaml"
k kustomize "$top/deploy/overlays/namespace" -o "$tmp/namespace.yaml"
run "helm template (namespaces={rss-apps})" h template rssd "$chart" -n rssd-system --include-crds \
	--set namespace.create=true --set 'namespaces={rss-apps}' --set aggregatedRoles=false --skip-tests \
	--output-dir "$tmp/render-namespace"
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
	--set aggregatedRoles=false --skip-tests --output-dir "$tmp/render-microk8s"
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

echo "# values.schema.json refuses what rssd would refuse"
# refused WHAT FIELD ARGS...: helm template with ARGS fails, and its message names FIELD.
refused() {
	local what=$1 field=$2
	shift 2
	if h template rssd "$chart" "$@" >"$tmp/out" 2>&1; then bad "schema: $what rendered"; elif grep -qF -- "$field" "$tmp/out"; then
		ok "schema: $what refused, naming $field"; else bad "schema: $what refused without naming $field: $(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"; fi
}
refused "logLevel=loud" "'/logLevel': value must be one of" --set logLevel=loud
refused "logFormat=xml" "'/logFormat': value must be one of" --set logFormat=xml
refused "a typo'd top-level key (logLevl)" "additional properties 'logLevl' not allowed" --set logLevl=debug
refused "a typo'd nested key (timings.fenceTimout)" "additional properties 'fenceTimout' not allowed" --set timings.fenceTimout=40s
refused "timings.fenceTimeout=45x" "'/timings/fenceTimeout'" --set timings.fenceTimeout=45x
refused "reconcileWorkers=65" "'/reconcileWorkers'" --set reconcileWorkers=65
refused "hookOutputMax=100" "'/hookOutputMax'" --set hookOutputMax=100
refused "healthPort=http" "'/healthPort'" --set healthPort=http
refused "metrics.podMonitor.interval=soon" "'/metrics/podMonitor/interval'" --set metrics.podMonitor.interval=soon
refused "namespaces={Team_A}" "'/namespaces/0'" --set 'namespaces={Team_A}'
if h lint --strict "$chart" --set logLevel=loud >"$tmp/out" 2>&1; then bad "schema: helm lint passed logLevel=loud"; else
	expect "schema: helm lint refuses logLevel=loud, naming it" 1 "$(grep -c "^\[ERROR\] values.yaml: - at '/logLevel'" "$tmp/out")"; fi
run "schema: good values of every kind pass" h template rssd "$chart" --set timings.fenceTimeout=1m30s \
	--set timings.leaseDuration=500ms --set timings.retryPeriod=2000 --set reconcileWorkers=64 --set hookOutputMax=65536 \
	--set logLevel=warn --set logFormat=text --set-string reconcileWorkers=4 --set metrics.podMonitor.interval=1m
expect "schema: values.yaml has no key the schema lacks (top level)" "" \
	"$(python3 -c 'import sys, json, yaml
v = yaml.safe_load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
def walk(v, s, at):
    for k, x in v.items():
        p = s.get("properties", {})
        if k not in p: print(at + k)
        elif isinstance(x, dict) and p[k].get("additionalProperties") is False: walk(x, p[k], at + k + ".")
walk(v, s, "")' "$chart/values.yaml" "$chart/values.schema.json" | tr '\n' ' ')"

echo "# extraArgs, extraEnv, podAnnotations, podLabels, serviceAccount"
h template rssd "$chart" -n rssd-system --set 'extraArgs={--fence-timeout=40s,--log-level=debug}' \
	--set 'extraEnv[0].name=TZ' --set 'extraEnv[0].value=UTC' --set podAnnotations.team=db \
	--set podLabels.tier=infra --set podLabels.app\\.kubernetes\\.io/name=other \
	--set serviceAccount.name=rssd-agent --set serviceAccount.annotations.iam=role-x >"$tmp/extra.yaml"
objs=$(k create --dry-run=client -o json -f "$tmp/extra.yaml" | jq -c 'if .kind == "List" then .items[] else . end')
ds=$(jq -c 'select(.kind == "DaemonSet")' <<<"$objs")
expect "extraArgs: after the chart's own arguments" '["--state-dir=/run/rssd","--fence-timeout=40s","--log-level=debug"]' \
	"$(jq -c '.spec.template.spec.containers[0].args[-3:]' <<<"$ds")"
expect "extraEnv: after the chart's own variables" '{"name":"TZ","value":"UTC"} MALLOC_ARENA_MAX' \
	"$(jq -c '.spec.template.spec.containers[0].env[-1]' <<<"$ds") $(jq -r '.spec.template.spec.containers[0].env[-2].name' <<<"$ds")"
expect "podAnnotations, podLabels: on the pod template; the selector's label stays rssd" \
	'{"team":"db"} {"app.kubernetes.io/name":"rssd","tier":"infra"} {"app.kubernetes.io/name":"rssd"}' \
	"$(jq -c '.spec.template.metadata.annotations' <<<"$ds") $(jq -c '.spec.template.metadata.labels' <<<"$ds") $(jq -c '.spec.selector.matchLabels' <<<"$ds")"
expect "podLabels: a podLabels app.kubernetes.io/name is dropped, not rendered as a duplicate key" 0 \
	"$(grep -c 'app.kubernetes.io/name: other' "$tmp/extra.yaml" || true)"
expect "serviceAccount.name, .annotations: the ServiceAccount, the DaemonSet and every binding's subject" \
	'rssd-agent {"iam":"role-x"} rssd-agent ["rssd-agent"] rssd-agent' \
	"$(jq -r 'select(.kind == "ServiceAccount") | "\(.metadata.name) \(.metadata.annotations | tojson)"' <<<"$objs") $(jq -r '.spec.template.spec.serviceAccountName' <<<"$ds") $(jq -s -c '[.[] | select(.kind | endswith("Binding")) | .subjects[].name] | unique' <<<"$objs") $(jq -r 'select(.kind == "FlowSchema") | .spec.rules[0].subjects[0].serviceAccount.name' <<<"$objs")"
expect "serviceAccount.create=false: no ServiceAccount, the DaemonSet still names rssd" "0 rssd" \
	"$(h template rssd "$chart" --set serviceAccount.create=false | k create --dry-run=client -o json -f - |
		jq -s -r '[.[] | if .kind == "List" then .items[] else . end] | "\([.[] | select(.kind == "ServiceAccount")] | length) \(.[] | select(.kind == "DaemonSet") | .spec.template.spec.serviceAccountName)"')"
expect "defaults: no pod annotations, the selector's label only, no extra arguments or variables" \
	'null {"app.kubernetes.io/name":"rssd"} 3 5' \
	"$(h template rssd "$chart" --show-only templates/daemonset.yaml | k create --dry-run=client -o json -f - |
		jq -r '.spec.template | "\(.metadata.annotations) \(.metadata.labels | tojson) \(.spec.containers[0].args | length) \(.spec.containers[0].env | length)"')"

echo "# aggregated ClusterRoles for RSS objects"
agg=$(h template rssd "$chart" --show-only templates/aggregated-roles.yaml | k create --dry-run=client -o json -f - |
	jq -s -c '[.[] | if .kind == "List" then .items[] else . end] | map({name: .metadata.name,
		agg: (.metadata.labels | with_entries(select(.key | startswith("rbac.authorization.k8s.io/"))) | keys),
		rules: [.rules[] | "\(.resources | join(",")):\(.verbs | join(","))"]})')
expect "aggregatedRoles: rssd-view (view) reads RSS objects and their status; rssd-edit (edit, admin) also changes them" \
	'[{"name":"rssd-view","agg":["rbac.authorization.k8s.io/aggregate-to-view"],"rules":["replicatedstatefulsets,replicatedstatefulsets/status:get,list,watch"]},{"name":"rssd-edit","agg":["rbac.authorization.k8s.io/aggregate-to-admin","rbac.authorization.k8s.io/aggregate-to-edit"],"rules":["replicatedstatefulsets:get,list,watch,create,update,patch,delete","replicatedstatefulsets/status:get,list,watch"]}]' \
	"$agg"
expect "aggregatedRoles=false: neither" 0 \
	"$(h template rssd "$chart" --set aggregatedRoles=false | grep -c 'name: rssd-\(view\|edit\)$' || true)"

echo "# the helm test hook (kubesim runs no pods: its rendering only)"
t=$(h template rssd "$chart" -n ops --set image.tag=1.2.3 --show-only templates/tests/agents.yaml | k create --dry-run=client -o json -f -)
expect "helm test: a Pod with the test hook, rssd's ServiceAccount and image, never restarted" \
	"Pod ops test rssd localhost/rss/rssd:1.2.3 Never" \
	"$(jq -r '[.kind, .metadata.namespace, .metadata.annotations["helm.sh/hook"], .spec.serviceAccountName, .spec.containers[0].image, .spec.restartPolicy] | join(" ")' <<<"$t")"
# (a pod the DaemonSet's selector matched, without an owner, the real DaemonSet controller adopts and deletes)
expect "helm test: its pod is not the DaemonSet's (app.kubernetes.io/name)" rssd-test \
	"$(jq -r '.metadata.labels["app.kubernetes.io/name"]' <<<"$t")"
script=$(jq -r '.spec.containers[0].command | join(" ")' <<<"$t")
expect "helm test: it runs kubectl-rss agents on the release namespace, failing without a live heartbeat" "yes yes yes" \
	"$(for p in 'kubectl-rss --rssd-namespace ops agents) || exit 1' '*"No rssd heartbeat"*' '*"(expired)"*) exit 1'; do
		if grep -qF -- "$p" <<<"$script"; then echo yes; else echo no; fi; done | tr '\n' ' ' | sed 's/ $//')"
run "helm test: the image has kubectl-rss (deploy/image/Dockerfile)" grep -q 'COPY --from=build /build/nodeagent/plugin/kubectl-rss /usr/bin/kubectl-rss' "$top/deploy/image/Dockerfile"

echo "# objects the server's version serves (--kube-version)"
for kv in 1.20.0:v1beta1:assuredConcurrencyShares 1.23.0:v1beta2:assuredConcurrencyShares \
	1.27.0:v1beta3:nominalConcurrencyShares 1.34.0:v1:nominalConcurrencyShares; do
	IFS=: read -r v api shares <<<"$kv"
	r=$(h template rssd "$chart" --kube-version "$v" | python3 -c 'import sys, yaml, json
for d in yaml.safe_load_all(sys.stdin):
    if d: print(json.dumps(d))' | jq -s -c '[.[] | select(.apiVersion | startswith("flowcontrol."))] |
		"\(map(.apiVersion) | unique | join(" ")) \(map(.spec.limited // {} | keys[]) | map(select(endswith("Shares"))) | join(" "))"' -r)
	expect "kube $v: PriorityLevelConfiguration and FlowSchema at flowcontrol $api ($shares)" \
		"flowcontrol.apiserver.k8s.io/$api $shares" "$r"
done
refused_kv=$(h template rssd "$chart" --kube-version 1.19.0 2>&1 || true)
expect "kube 1.19: refused by Chart.yaml's kubeVersion" 1 "$(grep -c 'incompatible with Kubernetes v1.19.0' <<<"$refused_kv")"

echo "# install, upgrade, uninstall against kubesim"
run "helm install (--create-namespace)" h install rssd "$chart" -n rssd-system --create-namespace
install_out=$run_out
# NOTES.txt: each line the user needs, as helm install prints it.
for line in "rssd 0.1.0 is installed in namespace rssd-system: DaemonSet rssd (image localhost/rss/rssd:0.1.0)" \
	"kubectl label namespace rssd-system pod-security.kubernetes.io/enforce=privileged" \
	"kubectl -n rssd-system get ds rssd" "kubectl rss agents --rssd-namespace rssd-system" \
	"helm test rssd -n rssd-system" "kubectl apply --server-side -f crds/crd.yaml"; do
	if grep -qF -- "$line" <<<"$install_out"; then ok "install: NOTES says '$line'"; else
		bad "install: NOTES lacks '$line'"; printf '%s\n' "$install_out" | sed 's/^/     /'; fi
done
h template rssd "$chart" -n rssd-system --include-crds --skip-tests >"$tmp/installed.yaml"
missing=()
while read -r kind ref; do
	ns=${ref%%/*} name=${ref#*/}
	if [ "$ns" = - ]; then k get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref"); else
		k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || missing+=("$kind $ref")
	fi
done < <(norm "$tmp/installed.yaml" | cut -d' ' -f1,2)
if [ ${#missing[@]} = 0 ]; then ok "install: every object exists"; else bad "install: missing ${missing[*]}"; fi
expect "install: the aggregated ClusterRoles exist" "rssd-edit rssd-view" \
	"$(k get clusterrole rssd-view rssd-edit -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
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
h template rssd "$chart" -n rssd-system --set 'namespaces={rss-apps}' --skip-tests >"$tmp/final.yaml"
run "helm uninstall" h uninstall rssd -n rssd-system
left=()
while read -r kind ref; do
	[ "$kind" = CustomResourceDefinition ] && continue
	ns=${ref%%/*} name=${ref#*/}
	if [ "$ns" = - ]; then ! k get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref"); else
		! k -n "$ns" get "$kind" "$name" >/dev/null 2>&1 || left+=("$kind $ref")
	fi
done < <(norm "$tmp/final.yaml" | cut -d' ' -f1,2 | grep -v '^Namespace ')
if [ ${#left[@]} = 0 ]; then ok "uninstall: every object of the release is gone"; else bad "uninstall: left behind ${left[*]}"; fi
run "uninstall: the CRD stays (Helm never deletes crds/; docs/deploy.md)" k get crd replicatedstatefulsets.clusterlabs.org
run "uninstall: the user's application namespace stays" k get namespace rss-apps

checks_done
