#!/usr/bin/env bash
# Runs every check and test of agentlog: formatting, lints, and the whole
# test suite (unit, integration, CLI, fuzz harnesses, crash tests, and the
# conformance tests against real peers where they can be installed).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/fixtures ]; then
  echo "error: ../shared/fixtures is missing; the tests read the real sample files from there" >&2
  exit 1
fi

# Tools the tests use that a fresh machine may lack (installed once).
bash scripts/setup-test-deps.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
