#!/usr/bin/env bash
# The test command: installs what the tests need on a fresh machine, then runs every check CI runs. The e2e
# scenarios run in both worlds: each embedded-world test starts its own Flotilla in-process; the kube world (real
# kube-apiservers with real workload controllers and KWOK nodes, `flotilla controller-manager` and the example
# webhook) is started here once, with hack/local-up.sh in kube mode, and stopped when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
eval "$(hack/test-deps.sh)"
export CARGO_TERM_COLOR=never
# Incremental state for a build from scratch is gigabytes that no later build here reads; CI's disk ran out.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo nextest run --workspace --locked --profile ci --no-run

kube_world=$(mktemp -d "${TMPDIR:-/tmp}/flotilla-kube-world.XXXXXX")
stop_kube_world() {
  FLOTILLA_DATA_DIR="$kube_world/data" hack/local-down.sh || true
  rm -rf "$kube_world"
}
trap stop_kube_world EXIT
echo "test: starting the kube world (state in $kube_world)" >&2
# The controller manager's four listeners, distinct and from below the ephemeral range (hack/free-ports.py).
{ read -r metrics_port; read -r webhook_port; read -r karmada_webhook_port; read -r aggregated_port; } \
  < <(python3 hack/free-ports.py 4)
PATH="$root/.venv/bin:$PATH" FLOTILLA_LOCAL_UP_MODE=kube FLOTILLA_DATA_DIR="$kube_world/data" KUBE_DIR="$kube_world/kube" \
  FLOTILLA_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/flotilla" FLOTILLA_METRICS_ADDR="127.0.0.1:$metrics_port" \
  FLOTILLA_WEBHOOK_ADDR="127.0.0.1:$webhook_port" FLOTILLA_KARMADA_WEBHOOK_ADDR="127.0.0.1:$karmada_webhook_port" \
  FLOTILLA_AGGREGATED_APISERVER_ADDR="127.0.0.1:$aggregated_port" \
  FLOTILLA_READY_TIMEOUT=180 \
  hack/local-up.sh --webhook-example >&2 || { tail -n 50 "$kube_world"/data/*.log >&2 || true; exit 1; }
export FLOTILLA_E2E_KUBE_DIR="$kube_world/kube"
# Where local-up left the pid files and restart scripts of the controller manager and member3's agent (the e2e
# scenario `pull` restarts both).
export FLOTILLA_E2E_DATA_DIR="$kube_world/data"

status=0
cargo nextest run --workspace --locked --no-fail-fast --profile ci || status=$?
cargo test --workspace --doc --locked || status=$?
if [ "$status" -ne 0 ]; then
  echo "test: the kube world's controller manager log ends:" >&2
  tail -n 40 "$kube_world/data/flotilla-up.log" >&2 || true
  echo "test: the kube world's member3 agent log ends:" >&2
  tail -n 20 "$kube_world/data/agent-member3.log" >&2 || true
fi
exit "$status"
