#!/usr/bin/env bash
# Installs claude-code-log 1.7.0 (the peer the HTML export benchmark runs
# beside agentlog) once into target/peers/venv-ccl and prints its path. On
# failure it says why on stderr and exits 1; the benchmark then skips the
# comparison with a message.
set -uo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/target/peers/venv-ccl"
if [ ! -x "$venv/bin/claude-code-log" ]; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed" >&2; exit 1; }
  timeout 300 "$venv/bin/pip" install -q claude-code-log==1.7.0 >&2 || { echo "could not install claude-code-log" >&2; exit 1; }
fi
echo "$venv/bin/claude-code-log"
