# The pinned real components (sourced). 1.34 is the newest minor whose kubelet still runs on cgroup v1 without
# extra flags and supports containerd 1.6; etcd 3.6 is what 1.34 is tested with.
K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
K8S_COMMANDS="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl"
RSS_K8S_CACHE=${RSS_K8S_CACHE:-/var/cache/rssd-k8s}
