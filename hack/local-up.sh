#!/usr/bin/env bash
# Starts a local Flotilla and leaves ~/.kube/karmada.config (context karmada-apiserver) and
# ~/.kube/members.config (contexts member1..N) in place, as Karmada's hack/local-up-karmada.sh does.
#
# Modes (FLOTILLA_LOCAL_UP_MODE):
#   embedded  `flotilla up` in the background (data dir ~/.flotilla): API servers, simulated members and controllers
#             in one process.
#   kind      kind clusters karmada-host and member1..N (needs a working Docker and kind).
#   kube      real clusters on loopback built by hack/kube.sh: kube-apiserver and etcd for karmada-host, and for
#             each member also kube-controller-manager, kube-scheduler and KWOK's fake Nodes (needs Go; the first
#             run builds them, about 13 minutes on 2 cores; about 0.5 GB for karmada-host and 0.65 GB per member).
#   auto      (default) kind when Docker and kind work, else embedded.
# In kind and kube modes Flotilla's CRDs are installed in karmada-host (the karmada-apiserver), `flotilla
# controller-manager` runs against it in the background, the members are joined with `flotilla join`, except
# member3, which is registered in Pull mode with `flotilla register` and served by a `flotilla agent` process
# (hack/local-up-clusters.sh). In every mode member3 is a Pull member, as in Karmada's local-up.
# hack/local-down.sh stops whatever this script started.
#
# Arguments are passed to `flotilla up` (e.g. --webhook-example, --members 2); in kind and kube modes only
# --members N and --webhook-example.
# Environment: FLOTILLA_LOCAL_UP_MODE, FLOTILLA_DATA_DIR (default ~/.flotilla), FLOTILLA_PROFILE (debug or release,
# default debug: the first build is much faster), FLOTILLA_READY_TIMEOUT (seconds, default 60), KUBE_DIR (default
# ~/.kube), FLOTILLA_BIN (a flotilla binary to use instead of building one), FLOTILLA_FEATURE_GATES (the controller
# manager's --feature-gates, default AllAlpha=true,AllBeta=true as in Karmada's local-up), FLOTILLA_CONTROLLERS (its
# --controllers, default *,hpaScaleTargetMarker,deploymentReplicasSyncer as in Karmada's deployment).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${FLOTILLA_DATA_DIR:-$HOME/.flotilla}
profile=${FLOTILLA_PROFILE:-debug}
ready_timeout=${FLOTILLA_READY_TIMEOUT:-60}
kube_dir=${KUBE_DIR:-$HOME/.kube}
mode=${FLOTILLA_LOCAL_UP_MODE:-auto}
pid_file="$data_dir/flotilla-up.pid"
webhook_pid_file="$data_dir/webhook-example.pid"
out_file="$data_dir/flotilla-up.out"
log_file="$data_dir/flotilla-up.log"

say() { echo "local-up: $*" >&2; }
fail() { echo "local-up: error: $*" >&2; exit 1; }

# A working Docker means the daemon answers, not just that the CLI is installed.
have_kind() { command -v docker >/dev/null 2>&1 && command -v kind >/dev/null 2>&1 && docker info >/dev/null 2>&1; }
case "$mode" in
  auto) if have_kind; then mode=kind; else say "no working Docker and kind found; starting the embedded environment."; mode=embedded; fi ;;
  kind) have_kind || fail "FLOTILLA_LOCAL_UP_MODE=kind needs a working Docker and kind" ;;
  kube) command -v go >/dev/null 2>&1 || fail "FLOTILLA_LOCAL_UP_MODE=kube needs Go to build kube-apiserver and its companions" ;;
  embedded) ;;
  *) fail "FLOTILLA_LOCAL_UP_MODE must be auto, embedded, kind or kube, not '$mode'" ;;
esac

if [ -n "${FLOTILLA_BIN:-}" ]; then
  bin=$FLOTILLA_BIN
  [ -x "$bin" ] || fail "FLOTILLA_BIN=$bin is not an executable"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
else
  case "$profile" in
    debug) build_flags=() ;;
    release) build_flags=(--release) ;;
    *) fail "FLOTILLA_PROFILE must be debug or release, not '$profile'" ;;
  esac
  command -v cargo >/dev/null 2>&1 || fail "cargo is not installed (see https://rustup.rs)"
  say "building flotilla ($profile)..."
  # Cargo names the binary it built: wherever CARGO_TARGET_DIR or the profile put it.
  build_out=$(cd "$root" && cargo build --locked "${build_flags[@]}" -p flotilla --message-format=json-render-diagnostics) \
    || fail "the build failed"
  bin=$(sed -n 's/.*"executable":"\([^"]*\/flotilla\)".*/\1/p' <<<"$build_out" | tail -n 1)
  [ -n "$bin" ] && [ -x "$bin" ] || fail "cargo reported no flotilla binary"
fi

mkdir -p "$data_dir/bin" "$kube_dir"
# The binary this script runs, under a name that does not depend on the profile or target dir (README uses it).
ln -sfn "$bin" "$data_dir/bin/flotilla"

# A previous run of this script on the same data dir: stop its processes first (the store resumes on the next
# start; kind and kube clusters that still run are kept).
FLOTILLA_DATA_DIR=$data_dir "$root/hack/local-down.sh" --keep-clusters || fail "could not stop the previous run"

if [ "$mode" = kind ] || [ "$mode" = kube ]; then
  if [ "$mode" = kube ]; then
    say "building (once) and starting real clusters with hack/kube.sh..."
    "$root/hack/kube.sh" build >/dev/null || fail "building the Kubernetes binaries failed"
  fi
  # shellcheck source=hack/local-up-clusters.sh
  . "$root/hack/local-up-clusters.sh"
  exit 0
fi

: >"$out_file"
# Keep the previous run's log for a look at what happened before the restart.
[ -s "$log_file" ] && mv -f "$log_file" "$log_file.1"
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

Flotilla is running (pid $pid; log $log_file, the previous run's in $log_file.1; data $data_dir).
Its binary is linked as $data_dir/bin/flotilla.

  export KUBECONFIG=$kube_dir/karmada.config        # context karmada-apiserver
  kubectl get clusters
  kubectl apply -f <your manifests and PropagationPolicy>
  kubectl --kubeconfig $kube_dir/members.config --context member1 get deployments

member3 (with 3 or more members) is a Pull cluster, served by an agent inside \`flotilla up\` as karmada-agent
would serve it; the members' kubeconfig still reaches it directly.

What it did with each template: $(cat "$data_dir/status.url" 2>/dev/null || echo "the status page") in a browser, or
\`$data_dir/bin/flotilla status --data-dir $data_dir\`.

To stop it:  kill $pid     (running this script again restarts it and keeps every object)
EOF
