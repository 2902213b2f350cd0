#!/usr/bin/env bash
# Stops what hack/local-up.sh started with the same FLOTILLA_DATA_DIR (default ~/.flotilla): `flotilla up` or
# `flotilla controller-manager`, the Pull member's `flotilla agent` (kind and kube modes), the example webhook, and in kube mode the real clusters (their state stays in the
# data dir; the next local-up starts them afresh). kind clusters are left alone (`kind delete clusters ...`).
# --keep-clusters stops only Flotilla's own processes (local-up.sh does that before a rerun).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${FLOTILLA_DATA_DIR:-$HOME/.flotilla}
keep_clusters=false
case "${1:-}" in
  --keep-clusters) keep_clusters=true ;;
  "") ;;
  *) echo "usage: hack/local-down.sh [--keep-clusters]" >&2; exit 2 ;;
esac

# Stops the flotilla process whose pid $1 holds, if it still is one.
stop() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q flotilla "/proc/$pid/cmdline" 2>/dev/null; then
    echo "local-down: stopping the previous flotilla (pid $pid)" >&2
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "local-down: pid $pid did not stop; stop it and run again" >&2
      return 1
    fi
  fi
  rm -f "$file"
}

# The agents first: they would otherwise report to a control plane that is going away.
for agent_pid in "$data_dir"/agent-*.pid; do
  [ -e "$agent_pid" ] && stop "$agent_pid"
done
stop "$data_dir/flotilla-up.pid"
stop "$data_dir/webhook-example.pid"
if [ "$keep_clusters" = false ] && [ -d "$data_dir/kube" ]; then
  for cluster in "$data_dir"/kube/*/; do
    [ -d "$cluster/pids" ] || continue
    echo "local-down: stopping cluster $(basename "$cluster")" >&2
    "$root/hack/kube.sh" down "${cluster%/}"
  done
fi
