# kubesim.sh -- the one shell fixture that starts and stops a private kubesim (sourced, not run).
# shellcheck shell=bash
#
# kubesim_start KUBESIM DIR LOG [ARGS...]: starts `KUBESIM --dir DIR ARGS...` in the background (its output
#   in LOG) and waits up to 30 s until it is ready. Sets KS_PID, KS_DIR, KS_PORT, KS_TOKEN and exports
#   KUBECONFIG=DIR/kubeconfig. Returns non-zero, with the log on stderr, when it does not come up.
# kubesim_stop: SIGTERM, then waits for it; KS_RC is its exit code (0 expected). Safe when not started.
# The C tests use the same steps through tests/lib/simfix.c.

KS_PID=
kubesim_start() {
    local bin=$1 dir=$2 log=$3 i
    shift 3
    KS_DIR=$dir
    "$bin" --dir "$dir" "$@" >"$log" 2>&1 &
    KS_PID=$!
    for i in $(seq 1 300); do
        [ -f "$dir/ready" ] && break
        kill -0 "$KS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -f "$dir/ready" ]; then
        echo "kubesim did not come up:" >&2
        cat "$log" >&2
        return 1
    fi
    KS_PORT=$(cat "$dir/port")
    KS_TOKEN=$(cat "$dir/token")
    export KUBECONFIG=$dir/kubeconfig
}

kubesim_stop() {
    KS_RC=0
    [ -n "$KS_PID" ] || return 0
    kill -TERM "$KS_PID" 2>/dev/null || true
    wait "$KS_PID" || KS_RC=$?
    KS_PID=
}
