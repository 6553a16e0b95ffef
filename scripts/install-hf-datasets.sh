#!/usr/bin/env bash
# Installs Hugging Face `datasets` (the library that loads training sets)
# once into target/peers/venv-datasets and prints the venv's python. The
# dataset tests (crates/cli/tests/dataset.rs) load agentlog's output with
# it. On failure it says why on stderr and exits 1; the tests then fail
# with CI set and skip with a message elsewhere.
set -uo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/target/peers/venv-datasets"
py="$venv/bin/python"
if ! [ -x "$py" ] || ! "$py" -c 'import datasets' >/dev/null 2>&1; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed" >&2; exit 1; }
  timeout 900 "$venv/bin/pip" install -q 'datasets>=3,<6' >&2 || { echo "could not install datasets from PyPI" >&2; exit 1; }
fi
echo "$py"
