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

# Every step runs even when an earlier one fails, so one run reports every
# failure; the script exits non-zero when any step failed.
failed=()
step() {
  if ! "$@"; then
    failed+=("$*")
  fi
}
step cargo fmt --all -- --check
step cargo clippy --workspace --all-targets --locked -- -D warnings
step cargo test --workspace --all-targets --locked --no-fail-fast
step cargo test --workspace --doc --locked --no-fail-fast

if [ "${#failed[@]}" -gt 0 ]; then
  echo >&2
  echo "error: ${#failed[@]} step(s) failed:" >&2
  for f in "${failed[@]}"; do
    echo "  $f" >&2
  done
  exit 1
fi
echo "all checks and tests passed"
