#!/usr/bin/env bash
# The test command: installs what the tests need on a fresh machine, then runs every check CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(hack/test-deps.sh)"
export CARGO_TERM_COLOR=never
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo nextest run --workspace --locked --no-fail-fast --profile ci
cargo test --workspace --doc --locked
