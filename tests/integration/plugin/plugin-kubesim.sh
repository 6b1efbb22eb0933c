#!/usr/bin/env bash
# plugin-kubesim.sh -- kubectl-rss as real kubectl runs it (`kubectl rss ...`, found on PATH) against kubesim.
#
# Usage: plugin-kubesim.sh KUBESIM_BINARY KUBECTL_RSS_BINARY SOURCE_DIR
# The RSS's status and Events are written as rssd's leader writes them (docs/protocol.md shapes);
# what is judged is what the plugin prints, its exit code, and what it changed on the server.
set -euo pipefail

NAME=plugin-kubesim
plugin=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
set -- "$1" "$3"
# shellcheck source=../../lib/kubectl_checks.sh
. "$here/../../lib/kubectl_checks.sh" "$@"
# The test's own servers (a second kubesim, netpeer.py's proxy and TLS peers), stopped by their PIDs.
extra_pids=()
plugin_cleanup() {
	local p
	for p in "${extra_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	kubectl_checks_cleanup
}
trap plugin_cleanup EXIT

# kubectl discovers plugins on PATH by name: kubectl-rss is `kubectl rss`.
mkdir -p "$tmp/bin"
ln -s "$plugin" "$tmp/bin/kubectl-rss"
export PATH=$tmp/bin:$PATH
# kr ARGS...: `kubectl rss ARGS`; stdout in $tmp/o, stderr in $tmp/e, exit code in $rc.
kr() {
	rc=0
	kubectl rss "$@" >"$tmp/o" 2>"$tmp/e" </dev/null || rc=$? # no kubectl flag may come before a plugin name
}
has() { # has DESCRIPTION FILE TEXT: FILE contains TEXT (fixed string)
	if grep -qF -- "$3" "$2"; then ok "$1"; else
		bad "$1: no '$3' in:"
		sed 's/^/     /' "$2"
	fi
}
annotation() { k -n apps get rss db -o json | jq -r '.metadata.annotations["rss.clusterlabs.org/force-seed"] // "none"'; }

echo "# discovery"
run "kubectl plugin list finds kubectl-rss" bash -c "kubectl plugin list 2>/dev/null | grep >/dev/null '/kubectl-rss$'"
kr --help
expect "kubectl rss --help exits 0" 0 "$rc"
has "--help names every command" "$tmp/o" "force-seed NAME POD"
kr frobnicate db
expect "an unknown command exits 2" 2 "$rc"
has "an unknown command says so" "$tmp/e" "unknown command: frobnicate"
kr status
expect "a missing NAME exits 2" 2 "$rc"

echo "# a lights-out recovery that waits"
run "the CRD" k apply -f "$top/deploy/crd.yaml"
run "the CRD is Established" k wait --for=condition=Established --timeout=30s crd/replicatedstatefulsets.clusterlabs.org
run "namespace apps" k apply -f - <<<'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"apps"}}'
run "the RSS db" bash -c "sed 's/^  name: dummy$/  name: db/' '$top/apps/dummy/rss.yaml' | kubectl --cache-dir '$tmp/cache' -n apps apply -f -"
for i in 0 1 2; do
	k -n apps apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"db-'$i'","labels":{"rss.clusterlabs.org/name":"db"}},
		"spec":{"nodeName":"node-'$i'","containers":[{"name":"app","image":"busybox"}]}}'
done
# status STATUS_JSON: the leader's status write.
status() { k -n apps patch rss db --subresource=status --type=merge -p "{\"status\": $1}" >/dev/null; }
waiting='{"phase":"Recovering","message":"waiting for db-2 (node node-2 down)","replicas":3,"readyReplicas":0,
 "conditions":[{"type":"Recovering","status":"True","reason":"LightsOut","message":"x","lastTransitionTime":"2026-11-27T10:00:00Z"},
  {"type":"WaitingForMembers","status":"True","reason":"WaitingForMembers","message":"waiting for db-2 (node node-2 down)","lastTransitionTime":"2026-11-27T10:00:00Z"}],
 "memberStatus":[{"name":"db-0","ordinal":0,"node":"node-0","role":"stopped","sequence":"42","lastHook":"sequence","lastResult":"ok"},
  {"name":"db-1","ordinal":1,"node":"node-1","role":"stopped","sequence":"40","lastHook":"sequence","lastResult":"ok"},
  {"name":"db-2","ordinal":2,"node":"node-2","state":"unreported","nodeDown":true}],
 "lastRecovery":{"kind":"LightsOut","seed":"db-1","sequence":"17","time":"2026-11-20T08:00:00Z"}}'
status "$waiting"
for e in "1 Normal SeedChosen chose-earlier 2026-11-20T08:00:00Z" "2 Warning MemberMissing db-2-has-not-reported 2026-11-27T10:00:05Z"; do
	set -- $e
	k -n apps apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"Event","metadata":{"name":"db.'$1'"},"type":"'$2'","reason":"'$3'",
		"message":"'$4'","count":1,"lastTimestamp":"'$5'","firstTimestamp":"'$5'",
		"involvedObject":{"apiVersion":"clusterlabs.org/v1alpha1","kind":"ReplicatedStatefulSet","namespace":"apps","name":"db"},
		"source":{"component":"rssd"}}'
done
# An Event of another object with the same name must not show up.
k -n apps apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"Event","metadata":{"name":"other.1"},"type":"Normal","reason":"PodThing",
	"message":"not-about-the-rss","involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"apps","name":"db"},"lastTimestamp":"2026-11-27T10:00:09Z"}'
kr status db -n apps
expect "status exits 0" 0 "$rc"
sed 's/^/     | /' "$tmp/o"
has "status: the phase" "$tmp/o" "phase:     Recovering"
has "status: members wanted, ready, and the shape (spec.primaries unset: all primaries)" "$tmp/o" "3 wanted, 0 ready, all primaries"
has "status: a member's role, sequence and node" "$tmp/o" "$(printf '%-24s  %-10s  %-20s  %-16s' db-0 stopped 42 node-0)"
has "status: the member whose node is down" "$tmp/o" "unreported; node down"
has "status: the last recovery" "$tmp/o" "Last recovery: LightsOut at 2026-11-20T08:00:00Z: db-1 seeded with sequence 17"
has "status: what rssd waits for" "$tmp/o" "rssd waits (WaitingForMembers): waiting for db-2 (node node-2 down)"
has "status: why, in plain words" "$tmp/o" "Why: rssd starts only the copy with the highest sequence"
has "status: the recent events, newest last" "$tmp/o" "MemberMissing"
if grep -q PodThing "$tmp/o"; then bad "status shows an Event of a pod named like the RSS"; else ok "status shows only the RSS's Events"; fi

echo "# events"
kr events db -n apps
expect "events exits 0" 0 "$rc"
expect "events: oldest first" "SeedChosen MemberMissing" "$(awk 'NR > 1 {print $3}' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"

echo "# history"
kr history db -n apps
expect "history exits 0 without any" 0 "$rc"
has "history: says there is none" "$tmp/o" "No history for apps/db"
# Two episodes as the leader writes them (status.history, leader/planner/planner_timeline.c): through the
# CRD's schema, which must keep every field.
status '{"history":[{"at":"2026-11-20T08:00:00.000Z","reason":"SeedChosen","member":"db-1","message":"db-1 seeds with the highest sequence 17"},
 {"at":"2026-11-20T08:00:09.500Z","reason":"Running","message":"running again, 3 of 3 members ready, 9.5 s after SeedChosen"},
 {"at":"2026-11-27T10:00:00.000Z","reason":"MemberOnDeadNode","member":"db-2","message":"db-2: node node-2 is dead"}]}'
kr history db -n apps
expect "history exits 0" 0 "$rc"
sed 's/^/     | /' "$tmp/o"
expect "history: the reasons, oldest first" "SeedChosen Running MemberOnDeadNode" "$(awk 'NR > 1 && NF {print $2}' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
has "history: who seeded, with its sequence" "$tmp/o" "$(printf '%-24s  %-18s  %-20s  %s' 2026-11-20T08:00:00.000Z SeedChosen db-1 'db-1 seeds with the highest sequence 17')"
has "history: how long the episode took" "$tmp/o" "9.5 s after SeedChosen"
expect "history: a blank line after each episode's Running" 4 "$(grep -n '^$' "$tmp/o" | cut -d: -f1)"
kr history nosuch -n apps
expect "history of an RSS that does not exist exits 1" 1 "$rc"
kr history db -n apps -o json
expect "history -o json exits 0" 0 "$rc"
expect "history -o json: the entries as written" "SeedChosen db-1 Running MemberOnDeadNode db-2" \
	"$(jq -r '.[] | .reason, (.member // empty)' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
kr status db -n apps -o json
expect "status -o json: the RSS object" "db Recovering 42" "$(jq -r '.metadata.name, .status.phase, .status.memberStatus[0].sequence' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
kr events db -n apps -o json
expect "events -o json: the RSS's Events, oldest first" "SeedChosen MemberMissing" "$(jq -r '.[].reason' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
# -o yaml is -o json's document in YAML: read back by PyYAML, the same, for every read command (status with
# values YAML would take for other types: yes, on, a number, a multi-line text, an empty string).
k -n apps annotate rss db --overwrite 'yes=on' '1.5=0x1F' 'multi=a "quoted"
second line: - [x]' 'empty=' >/dev/null
yaml_same() { # [F=JQ] yaml_same DESCRIPTION ARGS...: `kubectl rss ARGS -o yaml` reads back as `-o json` (F: jq
	# filter on both, to drop what changes between the two calls)
	local d=$1 j f=${F:-.}
	shift
	kr "$@" -o json
	j=$(jq -S "$f" "$tmp/o")
	kr "$@" -o yaml
	expect "$d" "$j" "$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' <"$tmp/o" | jq -S "$f")"
}
yaml_same "status -o yaml reads back as -o json" status db -n apps
yaml_same "history -o yaml reads back as -o json" history db -n apps
yaml_same "events -o yaml reads back as -o json" events db -n apps
k -n apps annotate rss db 'yes-' '1.5-' 'multi-' 'empty-' >/dev/null
kr status db -n apps -o wide
expect "an output format other than json or yaml exits 2" 2 "$rc"
has "... and says which one is" "$tmp/e" 'unsupported output format "wide"'
kr suspend db -n apps -o json
expect "-o json on a command that writes exits 2" 2 "$rc"
expect "... and suspends nothing" "" "$(k -n apps get rss db -o jsonpath='{.spec.suspend}')"

echo "# the namespace: -n, the context's, --context, --kubeconfig, the KUBECONFIG list"
kr status db
expect "without -n the context's namespace (default) is used: not found there" 1 "$rc"
has "not found says which RSS in which namespace" "$tmp/e" 'replicatedstatefulset "db" not found in namespace "default"'
# A second kubeconfig with a context whose namespace is apps, listed first in KUBECONFIG: its
# current-context wins; its context reuses the first file's cluster and user (merged as kubectl does).
cat >"$tmp/apps.kubeconfig" <<CFG
apiVersion: v1
kind: Config
current-context: apps-ctx
contexts:
- name: apps-ctx
  context: {cluster: kubesim, user: kubesim-admin, namespace: apps}
CFG
main_cfg=$KUBECONFIG
cluster=$(k config view -o jsonpath='{.contexts[0].context.cluster}')
user=$(k config view -o jsonpath='{.contexts[0].context.user}')
sed -i "s/cluster: kubesim, user: kubesim-admin/cluster: $cluster, user: $user/" "$tmp/apps.kubeconfig"
export KUBECONFIG=$tmp/apps.kubeconfig:$tmp/missing.kubeconfig:$main_cfg
expect "kubectl itself resolves the merged list to namespace apps" apps "$(k config view --minify -o jsonpath='{..namespace}')"
kr status db
expect "the KUBECONFIG list merged: the first file's context and namespace, the second's cluster" 0 "$rc"
has "... and it is the RSS in apps" "$tmp/o" "ReplicatedStatefulSet apps/db"
ctx0=$(KUBECONFIG=$main_cfg k config current-context)
kr status db --context "$ctx0"
expect "--context picks the context (its namespace: default)" 1 "$rc"
has "... so db is looked up in default" "$tmp/e" 'in namespace "default"'
kr status db --context no-such
expect "an unknown --context fails" 1 "$rc"
has "... naming it" "$tmp/e" "no-such"
kr status db --kubeconfig "$main_cfg" -n apps
expect "--kubeconfig alone, with -n" 0 "$rc"
kr status db --kubeconfig "$tmp/missing.kubeconfig"
expect "a --kubeconfig that does not exist fails" 1 "$rc"
export KUBECONFIG=$main_cfg

echo "# an exec credential plugin (client.authentication.k8s.io), as EKS, GKE, AKS and OIDC logins use"
# The plugin gives kubesim's token; a kubeconfig beside it names it by a relative path (resolved against
# the kubeconfig's directory, as client-go does), with env and args; real kubectl reads the same file.
raw=$(k config view --raw -o json)
token=$(jq -r '.users[0].user.token' <<<"$raw")
mkdir -p "$tmp/cred"
cat >"$tmp/cred/login" <<SH
#!/bin/sh
# \$1: the apiVersion to print; LOGIN_MODE from the kubeconfig's env
printf '%s\n' "\$KUBERNETES_EXEC_INFO" >"$tmp/cred/info"
printf '%s %s\n' "\$LOGIN_MODE" "\$*" >"$tmp/cred/args"
case "\$LOGIN_MODE" in
fail) echo "login expired: run the login again" >&2; exit 3 ;;
garbage) echo "not json" ;;
*) printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"}}\n' "\$1" "$token" ;;
esac
SH
chmod +x "$tmp/cred/login"
exec_cfg() { # exec_cfg FILE EXEC_JSON: a kubeconfig whose user is that exec stanza
	jq --argjson e "$2" '.users[0].user = {exec: $e}' <<<"$raw" >"$1"
}
v1='"apiVersion":"client.authentication.k8s.io/v1"'
exec_cfg "$tmp/exec.kubeconfig" '{'"$v1"',"command":"cred/login","args":["client.authentication.k8s.io/v1"],"env":[{"name":"LOGIN_MODE","value":"ok"}],"interactiveMode":"IfAvailable"}'
rc=0
(cd / && kubectl rss status db -n apps --kubeconfig "$tmp/exec.kubeconfig" >"$tmp/o" 2>"$tmp/e" </dev/null) || rc=$?
expect "an exec user: status works (run from another directory)" 0 "$rc"
has "... it is the RSS" "$tmp/o" "ReplicatedStatefulSet apps/db"
has "... the plugin had KUBERNETES_EXEC_INFO, not interactive (stdin is no terminal)" "$tmp/cred/info" '"spec":{"interactive":false}'
expect "... with the kubeconfig's env and args" "ok client.authentication.k8s.io/v1" "$(cat "$tmp/cred/args")"
run "real kubectl reads the same kubeconfig" kubectl --kubeconfig "$tmp/exec.kubeconfig" get rss db -n apps -o name
exec_cfg "$tmp/exec-fail.kubeconfig" '{'"$v1"',"command":"'"$tmp"'/cred/login","args":["x"],"env":[{"name":"LOGIN_MODE","value":"fail"}],"interactiveMode":"Never"}'
kr status db -n apps --kubeconfig "$tmp/exec-fail.kubeconfig"
expect "a failing exec plugin exits 1" 1 "$rc"
has "... saying so" "$tmp/e" "exited 3"
has "... its own words reach the user" "$tmp/e" "login expired"
exec_cfg "$tmp/exec-garbage.kubeconfig" '{'"$v1"',"command":"'"$tmp"'/cred/login","env":[{"name":"LOGIN_MODE","value":"garbage"}],"interactiveMode":"Never"}'
kr status db -n apps --kubeconfig "$tmp/exec-garbage.kubeconfig"
expect "an exec plugin that prints no ExecCredential exits 1" 1 "$rc"
has "... saying so" "$tmp/e" "did not print an ExecCredential"
exec_cfg "$tmp/exec-api.kubeconfig" '{'"$v1"',"command":"'"$tmp"'/cred/login","args":["client.authentication.k8s.io/v1beta1"],"interactiveMode":"Never"}'
kr status db -n apps --kubeconfig "$tmp/exec-api.kubeconfig"
expect "an ExecCredential of another apiVersion exits 1" 1 "$rc"
has "... naming both" "$tmp/e" "printed apiVersion 'client.authentication.k8s.io/v1beta1', the kubeconfig asks for client.authentication.k8s.io/v1"
exec_cfg "$tmp/exec-missing.kubeconfig" '{'"$v1"',"command":"no-such-login-tool","interactiveMode":"Never","installHint":"install no-such-login-tool from your cloud provider"}'
kr status db -n apps --kubeconfig "$tmp/exec-missing.kubeconfig"
expect "an exec plugin that is not installed exits 1" 1 "$rc"
has "... with its install hint" "$tmp/e" "install no-such-login-tool from your cloud provider"
exec_cfg "$tmp/exec-nomode.kubeconfig" '{'"$v1"',"command":"'"$tmp"'/cred/login"}'
kr status db -n apps --kubeconfig "$tmp/exec-nomode.kubeconfig"
expect "v1 without interactiveMode exits 1" 1 "$rc"
has "... saying it is required" "$tmp/e" "interactiveMode is required"
exec_cfg "$tmp/exec-always.kubeconfig" '{'"$v1"',"command":"'"$tmp"'/cred/login","interactiveMode":"Always"}'
kr status db -n apps --kubeconfig "$tmp/exec-always.kubeconfig"
expect "interactiveMode Always without a terminal exits 1" 1 "$rc"
has "... saying a terminal is needed" "$tmp/e" "needs a terminal"
exec_cfg "$tmp/exec-beta.kubeconfig" '{"apiVersion":"client.authentication.k8s.io/v1beta1","command":"'"$tmp"'/cred/login","args":["client.authentication.k8s.io/v1beta1"]}'
kr status db -n apps --kubeconfig "$tmp/exec-beta.kubeconfig"
expect "v1beta1 (interactiveMode optional) works" 0 "$rc"
jq '.users[0].user = {"auth-provider": {name: "oidc"}}' <<<"$raw" >"$tmp/authp.kubeconfig"
kr status db -n apps --kubeconfig "$tmp/authp.kubeconfig"
expect "an auth-provider user exits 1" 1 "$rc"
has "... pointing at its exec plugin" "$tmp/e" "auth-provider is not supported (use its exec credential plugin"

echo "# kubectl's connection flags: --server, --token, --insecure-skip-tls-verify, --as-group without --as"
server=$(jq -r '.clusters[0].cluster.server' <<<"$raw")
jq '.clusters[0].cluster.server = "https://127.0.0.1:1" | .users[0].user = {}' <<<"$raw" >"$tmp/nocred.kubeconfig"
kr status db -n apps --kubeconfig "$tmp/nocred.kubeconfig" --server "$server" --token "$token"
expect "--server and --token over a kubeconfig without either" 0 "$rc"
kr status db -n apps --kubeconfig "$tmp/nocred.kubeconfig" --server "$server" --token wrong-token
expect "a wrong --token exits 1" 1 "$rc"
has "... the server refused it" "$tmp/e" "401"
rc=0
(cd / && HOME=$tmp/nohome KUBECONFIG= kubectl-rss status db -n apps --server "$server" --token "$token" \
	--insecure-skip-tls-verify >"$tmp/o" 2>"$tmp/e" </dev/null) || rc=$?
expect "no kubeconfig at all: --server, --token and --insecure-skip-tls-verify are the connection" 0 "$rc"
rc=0
(cd / && HOME=$tmp/nohome KUBECONFIG= kubectl-rss status db -n apps --server "$server" --token "$token" \
	>"$tmp/o" 2>"$tmp/e" </dev/null) || rc=$?
expect "... without --insecure-skip-tls-verify the server's certificate is checked (the system's CAs do not know kubesim's)" 1 "$rc"
kr status db -n apps --as-group admins
expect "--as-group without --as exits 1" 1 "$rc"
has "... saying why" "$tmp/e" "--as-group needs --as"

echo "# the TLS name, CA, client certificate, cluster, user, timeout and proxy settings, each beside real kubectl"
# A second kubesim whose certificate, from a test CA, names only kubesim.test (no IP address, and a name no
# resolver knows): https://127.0.0.1:PORT verifies only with tls-server-name kubesim.test, and a request
# that gets through went to the URL's host. kubesim keeps the certificate it finds when its CA key signed it.
command -v openssl >/dev/null || fail "openssl is missing"
tls=$tmp/tls
mkdir -p "$tls" "$tmp/sim2"
mkcert() { # mkcert NAME SUBJECT EXTENSIONS: $tls/NAME.key and NAME.crt, signed by the test CA
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/$1.key" -out "$tls/$1.csr" \
		-subj "$2" 2>/dev/null
	openssl x509 -req -in "$tls/$1.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
		-out "$tls/$1.crt" -extfile <(printf '%s\n' "$3") 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tls/ca.key" -out "$tls/ca.crt" \
	-days 2 -subj /CN=plugin-test-ca 2>/dev/null
mkcert server /CN=kubesim.test $'subjectAltName=DNS:kubesim.test\nextendedKeyUsage=serverAuth'
mkcert user /CN=rss-test-user extendedKeyUsage=clientAuth
mkcert other /CN=other-user extendedKeyUsage=clientAuth
cp "$tls/ca.crt" "$tls/ca.key" "$tls/server.crt" "$tls/server.key" "$tmp/sim2/"
"$kubesim" --dir "$tmp/sim2" >"$tmp/kubesim2.log" 2>&1 &
extra_pids+=($!)
wait_until 30 "the second kubesim is ready" test -f "$tmp/sim2/ready"
expect "the second kubesim serves the test certificate" "$(openssl x509 -in "$tls/server.crt" -noout -fingerprint)" \
	"$(openssl x509 -in "$tmp/sim2/server.crt" -noout -fingerprint)"
port2=$(cat "$tmp/sim2/port")
raw2=$(KUBECONFIG=$tmp/sim2/kubeconfig k config view --raw -o json)
# plain: its own kubeconfig (https://127.0.0.1:PORT, the test CA, the admin token); named: with the TLS name.
plain=$tmp/sim2/kubeconfig
named=$tmp/named.kubeconfig
jq '.clusters[0].cluster["tls-server-name"] = "kubesim.test"' <<<"$raw2" >"$named"
n=0
# same DESC WANT ARGS...: the plugin (`kubectl rss agents ARGS`: it lists the heartbeat Leases) and real
# kubectl (`kubectl get leases -n rssd-system ARGS`) with the same kubeconfig and flags both succeed (WANT
# 0) or both fail (WANT 1). The plugin's exit code is left in $prc, its stderr in $tmp/e; kubectl's in $tmp/ke.
same() {
	local d=$1 want=$2 krc=0
	shift 2
	kr agents "$@"
	prc=$rc
	n=$((n + 1))
	kubectl --cache-dir "$tmp/kcache.$n" get leases -n rssd-system "$@" >/dev/null 2>"$tmp/ke" </dev/null || krc=1
	expect "$d: kubectl-rss and kubectl" "$want $want" "$([ "$prc" = 0 ] && echo 0 || echo 1) $krc"
}
same "server 127.0.0.1 and a certificate naming only kubesim.test: refused" 1 --kubeconfig "$plain"
has "... the plugin says the TLS verification failed" "$tmp/e" "TLS verification of the server's certificate failed"
has "... kubectl too" "$tmp/ke" "x509"
same "tls-server-name kubesim.test in the kubeconfig" 0 --kubeconfig "$named"
same "--tls-server-name kubesim.test" 0 --kubeconfig "$plain" --tls-server-name kubesim.test
same "--tls-server-name of a name the certificate does not have" 1 --kubeconfig "$named" --tls-server-name wrong.test
has "... the plugin says the TLS verification failed" "$tmp/e" "TLS verification of the server's certificate failed"
has "... for that name" "$tmp/e" "wrong.test"
same "--server drops the kubeconfig's tls-server-name" 1 --kubeconfig "$named" --server "https://127.0.0.1:$port2"
same "... unless --tls-server-name comes with it" 0 --kubeconfig "$named" --server "https://127.0.0.1:$port2" \
	--tls-server-name kubesim.test
# The CA: the first kubesim's CA does not know the test CA's certificate.
other_ca=$(jq -r '.clusters[0].cluster["certificate-authority"]' <<<"$raw")
jq --arg ca "$other_ca" '.clusters[0].cluster["certificate-authority"] = $ca' "$named" >"$tmp/wrongca.kubeconfig"
same "a kubeconfig with another CA" 1 --kubeconfig "$tmp/wrongca.kubeconfig"
same "--certificate-authority replaces it" 0 --kubeconfig "$tmp/wrongca.kubeconfig" --certificate-authority "$tls/ca.crt"
jq '.clusters[0].cluster |= (del(.["certificate-authority"]) | .["insecure-skip-tls-verify"] = true)' "$named" \
	>"$tmp/insecure.kubeconfig"
same "a kubeconfig with insecure-skip-tls-verify" 0 --kubeconfig "$tmp/insecure.kubeconfig"
same "--certificate-authority replaces insecure-skip-tls-verify too (verified, against another CA: refused)" 1 \
	--kubeconfig "$tmp/insecure.kubeconfig" --certificate-authority "$other_ca"
has "... by the TLS verification" "$tmp/e" "TLS verification of the server's certificate failed"
same "--insecure-skip-tls-verify replaces the kubeconfig's CA" 0 --kubeconfig "$plain" --insecure-skip-tls-verify
same "--insecure-skip-tls-verify=false is no flag" 1 --kubeconfig "$plain" --insecure-skip-tls-verify=false
same "--certificate-authority with --insecure-skip-tls-verify is refused" 1 --kubeconfig "$plain" \
	--certificate-authority "$tls/ca.crt" --insecure-skip-tls-verify
has "... saying why" "$tmp/e" "together with insecure-skip-tls-verify is refused"
same "a --certificate-authority that does not exist" 1 --kubeconfig "$named" --certificate-authority "$tls/nope.crt"
has "... names it" "$tmp/e" "cannot read the certificate authority '$tls/nope.crt' (--certificate-authority)"

# --cluster and --user: a kubeconfig whose context points at a cluster that is not there, with no user.
jq --arg s "https://127.0.0.1:$port2" --arg ca "$tls/ca.crt" --arg t "$(cat "$tmp/sim2/token")" -n '{apiVersion: "v1", kind: "Config",
	clusters: [{name: "off", cluster: {server: "https://127.0.0.1:1"}},
		{name: "sim2", cluster: {server: $s, "certificate-authority": $ca, "tls-server-name": "kubesim.test"}}],
	users: [{name: "anon", user: {}}, {name: "admin", user: {token: $t}}],
	contexts: [{name: "ctx", context: {cluster: "off", user: "anon"}}]}' >"$tmp/nocontext.kubeconfig"
jq '.["current-context"] = "ctx"' "$tmp/nocontext.kubeconfig" >"$tmp/multi.kubeconfig"
same "the context's cluster is not there" 1 --kubeconfig "$tmp/multi.kubeconfig"
same "--cluster sim2, the context's user (none): unauthorized" 1 --kubeconfig "$tmp/multi.kubeconfig" --cluster sim2
has "... the server said so" "$tmp/e" "401"
same "--cluster sim2 --user admin" 0 --kubeconfig "$tmp/multi.kubeconfig" --cluster sim2 --user admin
same "--user admin alone keeps the context's cluster" 1 --kubeconfig "$tmp/multi.kubeconfig" --user admin
same "--cluster and --user need no current-context" 0 --kubeconfig "$tmp/nocontext.kubeconfig" --cluster sim2 --user admin
same "a --user that is not in the kubeconfig" 1 --kubeconfig "$tmp/multi.kubeconfig" --cluster sim2 --user nosuch
has "... names it" "$tmp/e" "user 'nosuch' not found"
same "a --cluster that is not in the kubeconfig" 1 --kubeconfig "$tmp/multi.kubeconfig" --cluster nosuch --user admin
has "... names it" "$tmp/e" "cluster 'nosuch' not found"

# What goes over the wire: a TLS peer (netpeer.py) with the same certificate, which asks for a client
# certificate and logs the SNI, the client certificate's name and each request's Host header.
python3 "$here/netpeer.py" tls "$tls/server.crt" "$tls/server.key" "$tls/ca.crt" "$tmp/peer.port" "$tmp/peer.log" echo &
extra_pids+=($!)
python3 "$here/netpeer.py" tls "$tls/server.crt" "$tls/server.key" "$tls/ca.crt" "$tmp/silent.port" "$tmp/silent.log" silent &
extra_pids+=($!)
python3 "$here/netpeer.py" proxy "$tmp/proxy.port" "$tmp/proxy.log" &
extra_pids+=($!)
for p in peer silent proxy; do wait_until 10 "netpeer $p listens" test -s "$tmp/$p.port"; done
peer_port=$(cat "$tmp/peer.port")
jq --arg s "https://127.0.0.1:$peer_port" '.clusters[0].cluster.server = $s | .users[0].user = {}' "$named" >"$tmp/peer.kubeconfig"
seen() { sort -u "$tmp/peer.log" | tr '\n' ' ' | sed 's/ $//'; } # what the peer logged, once each
: >"$tmp/peer.log"
kr agents --kubeconfig "$tmp/peer.kubeconfig" --client-certificate "$tls/user.crt" --client-key "$tls/user.key"
expect "the plugin: SNI the TLS name, Host the URL's, the --client-certificate" \
	"client rss-test-user host 127.0.0.1:$peer_port sni kubesim.test" "$(seen)"
: >"$tmp/peer.log"
kubectl --cache-dir "$tmp/kcache.peer" get leases -n rssd-system --kubeconfig "$tmp/peer.kubeconfig" \
	--client-certificate "$tls/user.crt" --client-key "$tls/user.key" >/dev/null 2>&1 </dev/null || true
expect "... kubectl the same" "client rss-test-user host 127.0.0.1:$peer_port sni kubesim.test" "$(seen)"
# The user's certificate data: the flags replace it (client-go since kubernetes#133917; kubectl 1.34 and
# older refuse the two together, so there is no kubectl to compare with).
jq --arg c "$(base64 -w0 "$tls/other.crt")" --arg k "$(base64 -w0 "$tls/other.key")" \
	'.users[0].user = {"client-certificate-data": $c, "client-key-data": $k}' "$tmp/peer.kubeconfig" >"$tmp/peer-data.kubeconfig"
: >"$tmp/peer.log"
kr agents --kubeconfig "$tmp/peer-data.kubeconfig"
expect "the kubeconfig's client certificate data" "client other-user" "$(grep client "$tmp/peer.log" | sort -u)"
: >"$tmp/peer.log"
kr agents --kubeconfig "$tmp/peer-data.kubeconfig" --client-certificate "$tls/user.crt" --client-key "$tls/user.key"
expect "... --client-certificate and --client-key replace it" "client rss-test-user" "$(grep client "$tmp/peer.log" | sort -u)"
same "a --client-key file that does not exist" 1 --kubeconfig "$named" --client-certificate "$tls/user.crt" \
	--client-key "$tls/nope.key"
has "... names the file and the flag" "$tmp/e" "cannot read the client key '$tls/nope.key' (--client-key): No such file or directory"
same "--client-certificate without a key" 1 --kubeconfig "$named" --client-certificate "$tls/user.crt"
has "... says a key is needed" "$tmp/e" "the client certificate has no key"

# --request-timeout against a peer that completes TLS and never answers.
jq --arg s "https://127.0.0.1:$(cat "$tmp/silent.port")" '.clusters[0].cluster.server = $s' "$named" >"$tmp/silent.kubeconfig"
same "--request-timeout=1s against a server that does not answer" 1 --kubeconfig "$tmp/silent.kubeconfig" --request-timeout=1s
if grep -Eq 'timed out after 1[0-9]{3} milliseconds' "$tmp/e"; then ok "... after 1 s"; else
	bad "... after 1 s: $(cat "$tmp/e")"
fi
kr agents --kubeconfig "$tmp/silent.kubeconfig" --request-timeout=2
expect "--request-timeout=2 (seconds) fails" 1 "$rc"
if grep -Eq 'timed out after 2[0-9]{3} milliseconds' "$tmp/e"; then ok "... after 2 s"; else
	bad "... after 2 s: $(cat "$tmp/e")"
fi
rc=0
timeout 4 kubectl rss agents --kubeconfig "$tmp/silent.kubeconfig" --request-timeout=0 >/dev/null 2>&1 </dev/null || rc=$?
krc=0
timeout 4 kubectl --cache-dir "$tmp/kcache.silent" get leases -n rssd-system --kubeconfig "$tmp/silent.kubeconfig" \
	--request-timeout=0 >/dev/null 2>&1 </dev/null || krc=$?
expect "--request-timeout=0: no timeout, both still wait after 4 s (timeout's 124)" "124 124" "$rc $krc"
same "--request-timeout=1m against kubesim" 0 --kubeconfig "$named" --request-timeout=1m
same "--request-timeout=abc" 1 --kubeconfig "$named" --request-timeout=abc
expect "... is bad usage for the plugin" 2 "$prc"
has "... naming the flag" "$tmp/e" '--request-timeout "abc" is not a duration'

# proxy-url: the CONNECT proxy logs what it was asked; with a TLS name the CONNECT still names the server
# URL's host. no_proxy does not apply to a kubeconfig's proxy (kubectl ignores it there; libcurl would match
# it against the TLS name, the URL's host it is given).
proxy_port=$(cat "$tmp/proxy.port")
jq --arg p "http://127.0.0.1:$proxy_port" '.clusters[0].cluster["proxy-url"] = $p' "$named" >"$tmp/proxy.kubeconfig"
: >"$tmp/proxy.log"
kr agents --kubeconfig "$tmp/proxy.kubeconfig"
expect "proxy-url: the plugin works through the proxy" 0 "$rc"
expect "... which it asked to CONNECT to the server URL's host" "CONNECT 127.0.0.1:$port2" "$(sort -u "$tmp/proxy.log")"
: >"$tmp/proxy.log"
run "... real kubectl works through it" kubectl --cache-dir "$tmp/kcache.proxy" get leases -n rssd-system --kubeconfig "$tmp/proxy.kubeconfig"
expect "... asking the same" "CONNECT 127.0.0.1:$port2" "$(sort -u "$tmp/proxy.log")"
: >"$tmp/proxy.log"
NO_PROXY=127.0.0.1,localhost,kubesim.test no_proxy=127.0.0.1,localhost,kubesim.test kr agents --kubeconfig "$tmp/proxy.kubeconfig"
expect "... no_proxy set: the plugin still goes through the proxy" "0 CONNECT 127.0.0.1:$port2" "$rc $(sort -u "$tmp/proxy.log")"
: >"$tmp/proxy.log"
run "... kubectl too" env NO_PROXY=127.0.0.1,localhost,kubesim.test no_proxy=127.0.0.1,localhost,kubesim.test kubectl --cache-dir "$tmp/kcache.noproxy" \
	get leases -n rssd-system --kubeconfig "$tmp/proxy.kubeconfig"
expect "... through the proxy" "CONNECT 127.0.0.1:$port2" "$(sort -u "$tmp/proxy.log")"
jq '.clusters[0].cluster["proxy-url"] = "http://127.0.0.1:1"' "$named" >"$tmp/deadproxy.kubeconfig"
same "a proxy-url where no proxy listens" 1 --kubeconfig "$tmp/deadproxy.kubeconfig"

echo "# force-seed: the leader's refusals, shown before anything is set, in the leader's words"
# The heartbeat Leases the plugin reads for the words (rssd's namespace, --rssd-namespace): node-1's agent
# is alive, node-2's has been silent for 20 s (its fence timeout 10 s, the RSS's stop timeout 30 s: the
# leader's dead window ends 50 s after its last renewal), node-0 has none.
run "namespace rssd-system" k apply -f - <<<'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rssd-system"}}'
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000000Z; }
lease() { # lease NODE RENEW_EPOCH_SECONDS [DURATION_SECONDS (10)]
	k -n rssd-system apply -f - >/dev/null <<<'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
		"metadata":{"name":"rssd-node-'$1'","annotations":{"rss.clusterlabs.org/fence-timeout":"10000"}},
		"spec":{"holderIdentity":"'$1'","leaseDurationSeconds":'"${3:-10}"',"renewTime":"'"$(iso "$2")"'"}}'
}
node() { # node NAME READY: a Node whose kubelet says Ready True or False
	k apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"Node","metadata":{"name":"'$1'"}}'
	k patch node "$1" --subresource=status --type=merge \
		-p '{"status":{"conditions":[{"type":"Ready","status":"'$2'","reason":"x","message":"x"}]}}' >/dev/null
}
t0=$(date +%s)
lease node-1 "$t0"
lease node-2 $((t0 - 20))
running=$(jq -c '.memberStatus[1].role = "primary" | .phase = "Degraded"' <<<"$waiting")
status "$running"
kr force-seed db db-0 -n apps --yes
expect "force-seed while a member runs exits 1" 1 "$rc"
has "... refused, naming the member that runs and why, as the leader's Warning says it" "$tmp/e" \
	"force-seed of db-0 refused: a member runs or may run: db-1 last reported primary, on node node-1 whose agent is alive: it runs, and a force-seed is for a cluster where nothing runs"
expect "... and the annotation is not set" none "$(annotation)"
starting=$(jq -c '.memberStatus[1].role = "stopped" | .memberStatus[0].role = "starting" | .memberStatus[0].lastHook = "primary" | .memberStatus[0].lastResult = "pending"' <<<"$waiting")
status "$starting"
kr force-seed db db-1 -n apps --yes
expect "force-seed while a start is in flight is refused" 1 "$rc"
has "... the one in flight named, on a node without a heartbeat Lease" "$tmp/e" \
	"db-0 has its primary in flight (written ahead, not finished), and its node node-0 has no heartbeat Lease: the leader cannot judge it"
# Issue 35, fault 6: one node off after a lights-out, the admin's force-seed before the leader judged it.
silent=$(jq -c '.memberStatus[2] = {"name":"db-2","ordinal":2,"node":"node-2","role":"primary","lastHook":"primary","lastResult":"ok"}' <<<"$waiting")
status "$silent"
kr force-seed db db-1 -n apps --yes
expect "force-seed while a primary's node is silent is refused" 1 "$rc"
has "... naming it, its node silent since its last renewal, and when the dead window ends" "$tmp/e" \
	"force-seed of db-1 refused: a member runs or may run: db-2 last reported primary, and its node node-2 has been silent since $(iso $((t0 - 20)) | sed 's/\.000000Z/Z/'); the leader judges node-2 dead (its members stopped) when its dead window ends at $(iso $((t0 + 30)) | sed 's/\.000000Z/Z/') (in "
has "... and when to retry" "$tmp/e" "s) and node-2's kubelet is seen down: retry after that; rssd would refuse the annotation too"
lease node-2 $((t0 - 120))
node node-2 True
kr force-seed db db-1 -n apps --yes
expect "past the dead window with the kubelet Ready: refused" 1 "$rc"
has "... an absent agent, not a dead node" "$tmp/e" "past its dead window, but node-2's kubelet is not seen down: an absent agent, not a dead node"
node node-2 False
kr force-seed db db-1 -n apps --yes
expect "past the dead window with the kubelet down, the status not caught up: refused" 1 "$rc"
has "... the leader judges it at its next plan" "$tmp/e" "with its kubelet down: the leader judges it dead (its members stopped) at its next plan; retry in a few seconds"
status "$waiting"
kr force-seed db db-7 -n apps --yes
expect "force-seed of a pod that is no member exits 1" 1 "$rc"
has "... refused: no such member pod" "$tmp/e" "force-seed of db-7 refused: no such member pod"
expect "... and the annotation is not set" none "$(annotation)"
kr force-seed db db-1 -n apps
expect "force-seed without --yes and no terminal exits 1" 1 "$rc"
has "... and says --yes is needed" "$tmp/e" "--yes"
expect "... and the annotation is not set" none "$(annotation)"
kr force-seed db db-1 -n apps --yes
expect "force-seed of a stopped member while nothing runs exits 0" 0 "$rc"
has "... warns about the member with a higher sequence" "$tmp/o" "WARNING: db-0 has a higher sequence: 42"
has "... and about the member that never reported" "$tmp/o" "WARNING: db-2 did not report a sequence"
expect "... and the annotation names the pod" db-1 "$(annotation)"
k -n apps annotate rss db rss.clusterlabs.org/force-seed- >/dev/null
k -n apps delete pod db-2 --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
kr force-seed db db-2 -n apps --yes
expect "force-seed of a member whose pod is gone is refused (the planner's 'no such member pod')" 1 "$rc"

echo "# agents and version"
# node-1's agent renews now (a version annotation, as rssd writes it) and leads; node-2's heartbeat is 2
# minutes old (no version: an rssd from before the annotation). Lease and leader hour-long: a slow run
# (valgrind, a loaded machine) must not see them expire.
lease node-1 "$(date +%s)" 3600
k -n rssd-system annotate lease rssd-node-node-1 rss.clusterlabs.org/version=0.1.0 >/dev/null
lease_leader() { # lease_leader HOLDER RENEW_EPOCH_SECONDS [DURATION_SECONDS (3600)]
	k -n rssd-system apply -f - >/dev/null <<<'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"rssd-leader"},
		"spec":{"holderIdentity":"'$1'","leaseDurationSeconds":'"${3:-3600}"',"renewTime":"'"$(iso "$2")"'"}}'
}
lease_leader node-1_aaaaaaaa_1_00000000 "$(date +%s)"
kr agents
expect "agents exits 0" 0 "$rc"
sed 's/^/     | /' "$tmp/o"
expect "agents: one line per heartbeat Lease, by node" "node-1 node-2" "$(awk 'NR > 1 && NF {print $1}' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
has "agents: node-1's version, fresh heartbeat, leader" "$tmp/o" "$(printf '%-24s  %-10s' node-1 0.1.0)"
expect "agents: node-1 leads" yes "$(awk '$1 == "node-1" {print $(NF-2)}' "$tmp/o")"
has "agents: node-2's heartbeat expired, its version unknown" "$tmp/o" "$(printf '%-24s  %-10s' node-2 '(older)')"
has "... (expired)" "$tmp/o" "(expired)"
lease_leader node-1_aaaaaaaa_1_00000000 $(($(date +%s) - 60)) 15
kr agents
has "agents: an expired leader Lease means no leader" "$tmp/o" "No leader: the Lease rssd-leader is expired."
kr agents -o json
expect "agents -o json: node, version, leader, expired" "node-1 0.1.0 false false node-2 - false true" \
	"$(jq -r '.[] | .node, (.version // "-"), .leader, .expired' "$tmp/o" | tr '\n' ' ' | sed 's/ $//')"
F='del(.[].heartbeatAgeMs)' yaml_same "agents -o yaml reads back as -o json (but the heartbeat's age)" agents
kr agents --rssd-namespace nowhere
expect "agents where rssd does not run exits 0" 0 "$rc"
has "... and says so" "$tmp/o" "No rssd heartbeat in namespace nowhere"
kr agents db
expect "agents takes no argument" 2 "$rc"
kr version
expect "version exits 0" 0 "$rc"
has "version: the plugin's" "$tmp/o" "kubectl-rss 0.1.0"

echo "# suspend and resume"
kr suspend db -n apps
expect "suspend exits 0" 0 "$rc"
expect "suspend sets spec.suspend" true "$(k -n apps get rss db -o jsonpath='{.spec.suspend}')"
kr suspend db -n apps
expect "suspend again changes nothing and says so" 0 "$rc"
has "... already" "$tmp/o" "already suspended"
kr resume db -n apps
expect "resume clears spec.suspend" false "$(k -n apps get rss db -o jsonpath='{.spec.suspend}')"
kr suspend nope -n apps
expect "suspend of an RSS that does not exist exits 1" 1 "$rc"

echo "# a held member, a halted rollout, no status yet"
held=$(jq -c '.phase = "Degraded" | .conditions[1] = {"type":"WaitingForMembers","status":"True","reason":"RolloutHalted","message":"rolling update to revision r2 halted: db-1 failed after its update","lastTransitionTime":"2026-11-27T10:00:00Z"}
	| .memberStatus[2] = {"name":"db-2","ordinal":2,"role":"stopped","sequence":"50","leftOut":{"seedSequence":"42","held":true}}' <<<"$waiting")
status "$held"
k -n apps patch rss db --type=merge -p '{"spec":{"primaries":1}}' >/dev/null
kr status db -n apps
has "status: one primary with read-only secondaries" "$tmp/o" "one primary, the others read-only secondaries"
has "status: a held member in words" "$tmp/o" "Held back: db-2 came back with newer data (sequence 50) than the seed had (42)"
has "status: a halted rollout in words" "$tmp/o" "Why: a member failed after its update, so the rolling update stops"
rh_annotation() { k -n apps get rss db -o json | jq -r '.metadata.annotations["rss.clusterlabs.org/release-hold"] // "none"'; }
kr release-hold db db-0 -n apps --yes
expect "release-hold of a member that is not held exits 1" 1 "$rc"
has "... in the leader's words" "$tmp/e" "release-hold of db-0 refused: it is not held (not left out of a recovery, or it has rejoined since)"
kr release-hold db db-9 -n apps --yes
expect "release-hold of no member exits 1" 1 "$rc"
has "... no such member" "$tmp/e" "release-hold of db-9 refused: no such member"
kr release-hold db db-2 -n apps
expect "release-hold without --yes and no terminal exits 1" 1 "$rc"
expect "... and sets nothing" none "$(rh_annotation)"
kr release-hold db db-2 -n apps --yes
expect "release-hold of the held member exits 0" 0 "$rc"
has "... says what it was left out of and its sequence" "$tmp/o" "db-2 was left out of the recovery that seeded sequence 42; its own sequence: 50 (held back"
has "... warns what is replaced" "$tmp/o" "WARNING: once released it joins the running cluster, which replaces its writes beyond sequence 42"
expect "... and sets the annotation" db-2 "$(rh_annotation)"
k -n apps annotate rss db rss.clusterlabs.org/release-hold- >/dev/null
# The leader writes its status every few seconds, each write a new version: a conflict on a version
# whose facts (generation, members' roles, sequences, left-out marks) are the same is retried on it.
sim_fail() { curl -sk --max-time 5 -X POST -H "Authorization: Bearer $(cat "$tmp/sim/token")" \
	"https://127.0.0.1:$(cat "$tmp/sim/port")/_sim/fail?$1" >/dev/null; }
sim_fail "count=1&code=409&verb=PATCH&path=/apis/clusterlabs.org/v1alpha1/namespaces/apps/replicatedstatefulsets/db"
kr release-hold db db-2 -n apps --yes
expect "release-hold after a conflict on the same facts exits 0" 0 "$rc"
expect "... and sets the annotation" db-2 "$(rh_annotation)"
k -n apps annotate rss db rss.clusterlabs.org/release-hold- >/dev/null
sim_fail "count=5&code=409&verb=PATCH&path=/apis/clusterlabs.org/v1alpha1/namespaces/apps/replicatedstatefulsets/db"
kr release-hold db db-2 -n apps --yes
expect "release-hold that keeps conflicting exits 1" 1 "$rc"
has "... and says to run it again" "$tmp/e" "apps/db changed while it was checked; nothing was set, run the command again"
expect "... and sets nothing" none "$(rh_annotation)"
curl -sk --max-time 5 -X POST -H "Authorization: Bearer $(cat "$tmp/sim/token")" "https://127.0.0.1:$(cat "$tmp/sim/port")/_sim/clear" >/dev/null
k -n apps apply -f - >/dev/null <<<'{"apiVersion":"clusterlabs.org/v1alpha1","kind":"ReplicatedStatefulSet","metadata":{"name":"fresh"},"spec":'"$(k -n apps get rss db -o json | jq -c .spec)"'}'
kr status fresh -n apps
expect "status of an RSS no leader handled yet exits 0" 0 "$rc"
has "... and says rssd has not handled it" "$tmp/o" "No status yet"

echo "# report"
# A member whose container has an env value (as a password often is) and a member record, as rssd writes them.
k -n apps apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"rss-db-9","labels":{"rss.clusterlabs.org/name":"db"},
	"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"PASSWORD\":\"s3cret-report\"}"}},
	"spec":{"nodeName":"node-1","containers":[{"name":"app","image":"busybox","env":[{"name":"PASSWORD","value":"s3cret-report"},
	{"name":"FROM","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}}'
k create namespace rssd-system >/dev/null 2>&1 || true
k -n rssd-system apply -f - >/dev/null <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"rec-apps-rss-db-9",
	"labels":{"rss.clusterlabs.org/namespace":"apps","rss.clusterlabs.org/rss":"db","rss.clusterlabs.org/member":"rss-db-9"}},
	"data":{"observed":"{\"role\":\"primary\"}"}}'
kr report db -n apps -f "$tmp/r.tar"
expect "report exits 0" 0 "$rc"
has "report: says what it wrote" "$tmp/o" "Wrote $tmp/r.tar"
run "report: real tar reads it" tar -tvf "$tmp/r.tar"
mkdir -p "$tmp/r"
tar -xf "$tmp/r.tar" -C "$tmp/r"
d=$(ls "$tmp/r")
expect "report: one directory named for the RSS" 1 "$(ls "$tmp/r" | grep -c '^rss-report-apps-db-[0-9]*T[0-9]*Z$')"
expect "report: its files" "README.txt events.yaml leases.yaml pods.yaml records.yaml rss.yaml rssd-logs.txt" \
	"$(ls "$tmp/r/$d" | tr '\n' ' ' | sed 's/ $//')"
expect "report: no env value, no last-applied copy of one" "" "$(grep -rl 's3cret-report' "$tmp/r" || true)"
has "report: the env value replaced" "$tmp/r/$d/pods.yaml" "REDACTED by kubectl rss report"
has "report: a valueFrom kept" "$tmp/r/$d/pods.yaml" "metadata.name"
expect "report: rss.yaml is the RSS (YAML read back)" "db apps" \
	"$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(d["metadata"]["name"], d["metadata"]["namespace"])' "$tmp/r/$d/rss.yaml")"
expect "report: the member record" "rss-db-9" \
	"$(python3 -c 'import sys, yaml; print(" ".join(i["metadata"]["labels"]["rss.clusterlabs.org/member"] for i in yaml.safe_load(open(sys.argv[1]))))' "$tmp/r/$d/records.yaml")"
has "report: README counts the redactions" "$tmp/r/$d/README.txt" "Redacted: 1 container env value(s)"
has "report: README names what could not be read (no StatefulSet here)" "$tmp/r/$d/README.txt" "statefulset.yaml (the StatefulSet rssd made): "
kr report db -n apps -f "$tmp/r.tar"
expect "report: an existing file is not overwritten (exit 1)" 1 "$rc"
has "report: ... and says so" "$tmp/e" "an existing file is not overwritten"
kr report nosuch -n apps -f "$tmp/r2.tar"
expect "report of an RSS that does not exist exits 1" 1 "$rc"
expect "report of an RSS that does not exist writes nothing" no "$([ -e "$tmp/r2.tar" ] && echo yes || echo no)"

checks_done
