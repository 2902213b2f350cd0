#!/usr/bin/env bash
# Starts a local Flotilla and leaves ~/.kube/karmada.config (context karmada-apiserver) and
# ~/.kube/members.config (contexts member1..N) in place, as Karmada's hack/local-up-karmada.sh does.
#
# With a working Docker and kind it creates kind clusters karmada-host and member1..N, installs Flotilla's CRDs
# in karmada-host (which then serves as the karmada-apiserver), runs `flotilla controller-manager` against it in
# the background and joins the members with `flotilla join` (hack/local-up-kind.sh). Otherwise it runs the
# embedded environment, `flotilla up`, in the background (data dir ~/.flotilla).
#
# Arguments are passed to `flotilla up` (e.g. --webhook-example, --members 2); in kind mode only --members N.
# Environment: FLOTILLA_LOCAL_UP_MODE (auto, embedded or kind; default auto), FLOTILLA_DATA_DIR (default
# ~/.flotilla), FLOTILLA_PROFILE (debug or release, default debug: the first build is much faster),
# FLOTILLA_READY_TIMEOUT (seconds, default 60), KUBE_DIR (default ~/.kube), FLOTILLA_BIN (a flotilla binary to
# use instead of building one).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${FLOTILLA_DATA_DIR:-$HOME/.flotilla}
profile=${FLOTILLA_PROFILE:-debug}
ready_timeout=${FLOTILLA_READY_TIMEOUT:-60}
kube_dir=${KUBE_DIR:-$HOME/.kube}
mode=${FLOTILLA_LOCAL_UP_MODE:-auto}
pid_file="$data_dir/flotilla-up.pid"
out_file="$data_dir/flotilla-up.out"
log_file="$data_dir/flotilla-up.log"

say() { echo "local-up: $*" >&2; }
fail() { echo "local-up: error: $*" >&2; exit 1; }

# A working Docker means the daemon answers, not just that the CLI is installed.
have_kind() { command -v docker >/dev/null 2>&1 && command -v kind >/dev/null 2>&1 && docker info >/dev/null 2>&1; }
case "$mode" in
  auto) if have_kind; then mode=kind; else say "no working Docker and kind found; starting the embedded environment."; mode=embedded; fi ;;
  kind) have_kind || fail "FLOTILLA_LOCAL_UP_MODE=kind needs a working Docker and kind" ;;
  embedded) ;;
  *) fail "FLOTILLA_LOCAL_UP_MODE must be auto, embedded or kind, not '$mode'" ;;
esac

if [ -n "${FLOTILLA_BIN:-}" ]; then
  bin=$FLOTILLA_BIN
  [ -x "$bin" ] || fail "FLOTILLA_BIN=$bin is not an executable"
else
  case "$profile" in
    debug) build_flags=(); bin="$root/target/debug/flotilla" ;;
    release) build_flags=(--release); bin="$root/target/release/flotilla" ;;
    *) fail "FLOTILLA_PROFILE must be debug or release, not '$profile'" ;;
  esac
  command -v cargo >/dev/null 2>&1 || fail "cargo is not installed (see https://rustup.rs)"
  say "building flotilla ($profile)..."
  (cd "$root" && cargo build --locked "${build_flags[@]}" -p flotilla >&2) || fail "the build failed"
fi

mkdir -p "$data_dir" "$kube_dir"

# A previous run of this script on the same data dir: stop it first (the store resumes on the next start).
stop_previous() {
  if [ -f "$pid_file" ]; then
    old=$(cat "$pid_file")
    if [ -n "$old" ] && kill -0 "$old" 2>/dev/null && grep -q flotilla "/proc/$old/cmdline" 2>/dev/null; then
      say "stopping the previous flotilla (pid $old)"
      kill -TERM "$old"
      for _ in $(seq 1 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$old" 2>/dev/null && fail "pid $old did not stop; stop it and run again"
    fi
    rm -f "$pid_file"
  fi
}
stop_previous

if [ "$mode" = kind ]; then
  # shellcheck source=hack/local-up-kind.sh
  . "$root/hack/local-up-kind.sh"
  exit 0
fi

: >"$out_file"
nohup "$bin" up --data-dir "$data_dir" "$@" >"$out_file" 2>"$log_file" </dev/null &
pid=$!
echo "$pid" >"$pid_file"
say "flotilla up started (pid $pid), waiting for it to be ready..."

deadline=$((SECONDS + ready_timeout))
until grep -q '^ready: ' "$out_file"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 20 "$log_file" >&2 || true
    rm -f "$pid_file"
    fail "flotilla up exited before it was ready (log: $log_file)"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    tail -n 20 "$log_file" >&2 || true
    fail "flotilla up was not ready within ${ready_timeout}s (log: $log_file; still running as pid $pid)"
  fi
  sleep 0.1
done

line=$(grep -m1 '^ready: ' "$out_file")
karmada_config=$(sed -n 's/.*karmada=\([^ ]*\).*/\1/p' <<<"$line")
members_config=$(sed -n 's/.*members=\([^ ]*\).*/\1/p' <<<"$line")
cp "$karmada_config" "$kube_dir/karmada.config"
cp "$members_config" "$kube_dir/members.config"
chmod 600 "$kube_dir/karmada.config" "$kube_dir/members.config"

cat <<EOF

Flotilla is running (pid $pid; log $log_file; data $data_dir).

  export KUBECONFIG=$kube_dir/karmada.config        # context karmada-apiserver
  kubectl get clusters
  kubectl apply -f <your manifests and PropagationPolicy>
  kubectl --kubeconfig $kube_dir/members.config --context member1 get deployments

To stop it:  kill $pid     (running this script again restarts it and keeps every object)
EOF
