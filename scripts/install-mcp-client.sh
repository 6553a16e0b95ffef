#!/usr/bin/env bash
# Installs the official Python MCP SDK (`mcp` on PyPI, pinned) once into
# target/mcp-client/venv, the real MCP client the protocol tests of
# `agentlog mcp` (crates/cli/tests/mcp.rs) drive it with, and prints
# the venv's python. A second run only checks. On failure it says why on
# stderr and exits 1; the tests then fail under CI and skip elsewhere.
set -uo pipefail
cd "$(dirname "$0")/.."
version=2.3.0
venv="$PWD/target/mcp-client/venv"
stamp="$venv/.installed-mcp-$version"
if [ ! -e "$stamp" ]; then
  py=python3
  command -v "$py" >/dev/null 2>&1 || { echo "python3 is not available" >&2; exit 1; }
  [ -x "$venv/bin/pip" ] || "$py" -m venv "$venv" >&2 || { echo "python3 -m venv failed" >&2; exit 1; }
  timeout 300 "$venv/bin/pip" install -q "mcp==$version" >&2 || { echo "could not install mcp==$version from PyPI" >&2; exit 1; }
  "$venv/bin/python" -c 'import mcp.client.stdio, mcp.client.streamable_http' >&2 \
    || { echo "mcp $version installed but its clients do not import" >&2; exit 1; }
  touch "$stamp"
fi
echo "$venv/bin/python"
