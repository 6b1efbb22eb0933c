# lib.sh -- helpers of kubesim's own shell tests: call it with curl, and assert. Sourced, not run. Every
# test gets a temp dir and a trap that stops what it started; kubesim itself comes from the one shell
# fixture, tests/lib/kubesim.sh.

# shellcheck source=../../lib/kubesim.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/kubesim.sh"
KS_TMP=$(mktemp -d /tmp/kubesim-test.XXXXXX)
BG_PIDS=()
# shellcheck source=../../lib/assert.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/assert.sh"

ks_cleanup() {
  local p
  for p in "${BG_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  kubesim_stop
  rm -rf "$KS_TMP"
}
trap ks_cleanup EXIT

kubesim_diagnostics() {
  if [ -n "${KS_DIR:-}" ] && [ -f "$KS_TMP/kubesim.log" ]; then
    echo "--- last kubesim log lines:"
    tail -n 20 "$KS_TMP/kubesim.log"
  fi
}
ASSERT_ON_FAIL=kubesim_diagnostics

# ks_start KUBESIM [extra args]: starts kubesim on a free port; sets KS_DIR, KS_PORT, KS_TOKEN.
ks_start() {
  local bin=$1
  shift
  kubesim_start "$bin" "$KS_TMP/sim" "$KS_TMP/kubesim.log" --debug "$@" || fail "kubesim did not come up"
}

# ks_stop: SIGTERM must make kubesim exit 0 (ASan builds fail here on leaks).
ks_stop() {
  kubesim_stop
  same "kubesim exits 0 on SIGTERM" "$KS_RC" 0
}

# req METHOD PATH [BODY [CONTENT-TYPE]]: sets $code and $body (and $KS_TMP/headers).
req() {
  local m=$1 p=$2 d=${3-} ct=${4:-application/json}
  local args=(-sS --cacert "$KS_DIR/ca.crt" -H "Authorization: Bearer $KS_TOKEN" -X "$m"
              -o "$KS_TMP/body" -D "$KS_TMP/headers" -w '%{http_code}')
  if [ -n "$d" ]; then
    args+=(-H "Content-Type: $ct" --data-binary "$d")
  fi
  code=$(curl "${args[@]}" "https://127.0.0.1:$KS_PORT$p") || code="curl-error-$?"
  body=$(cat "$KS_TMP/body" 2>/dev/null || true)
}

# expect_http CODE DESCRIPTION: the last req answered CODE (fatal).
expect_http() {
  [ "$code" = "$1" ] || fail "$2: expected HTTP $1, got $code: $body"
  ok "$2"
}

# jb FILTER: jq on the last body.
jb() {
  jq -r "$1" <<<"$body"
}

# same DESCRIPTION ACTUAL EXPECTED: fatal equality (the counted one is expect, tests/lib/assert.sh).
same() {
  [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"
  ok "$1"
}

# contains DESCRIPTION HAYSTACK NEEDLE
contains() {
  case "$2" in
  *"$3"*) ok "$1" ;;
  *) fail "$1: '$3' not found in: $2" ;;
  esac
}

