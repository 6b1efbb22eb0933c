{{/* _helpers.tpl -- names and labels shared by the templates. */}}

{{/* The labels of every object: the kustomize base's, plus Helm's own bookkeeping. */}}
{{- define "rssd.labels" -}}
app.kubernetes.io/name: rssd
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The ServiceAccount every binding names. */}}
{{- define "rssd.subject" -}}
- kind: ServiceAccount
  name: {{ include "rssd.serviceAccount" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/* The rules rssd needs in an application namespace (deploy/base/rbac.yaml's ClusterRole, less the
cluster-scoped nodes and persistentvolumes, which rssd-node-loss grants). */}}
{{- define "rssd.appRules" -}}
- apiGroups: ["clusterlabs.org"]
  resources: ["replicatedstatefulsets"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["clusterlabs.org"]
  resources: ["replicatedstatefulsets/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["clusterlabs.org"]
  resources: ["replicatedstatefulsets/finalizers"]
  verbs: ["update"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "patch", "delete"]
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "create", "patch", "delete"]
{{- end -}}

{{/* The volume of one criSocketDirs entry, named after its path as the kustomize base names them:
/run/k3s/containerd -> cri-run-k3s-containerd. */}}
{{- define "rssd.criVolume" -}}
{{- printf "cri%s" (regexReplaceAll "[^a-z0-9]+" (lower .) "-") | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The ServiceAccount rssd runs as: serviceAccount.name (rssd), created by the chart unless
serviceAccount.create is false. */}}
{{- define "rssd.serviceAccount" -}}
{{- .Values.serviceAccount.name | default "rssd" -}}
{{- end -}}
