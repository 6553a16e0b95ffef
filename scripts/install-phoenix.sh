#!/usr/bin/env bash
# Installs Arize Phoenix (PyPI arize-phoenix, pinned) and the official
# OpenTelemetry protobuf messages (opentelemetry-proto) into
# target/phoenix/venv, for the OTLP tests: crates/cli/tests/otel.rs starts
# Phoenix on loopback, pushes sessions to it and reads them back through its
# API, and parses `export --to otel` with the protobuf messages. Phoenix
# needs Python >= 3.10 and < 3.14: the system's python3 when it fits, else
# Debian 13's Python 3.13 unpacked by scripts/install-python313.sh.
# Idempotent. Prints the venv's python on success.
set -euo pipefail
cd "$(dirname "$0")/.."
phoenix_version=20.26.1
proto_version=1.45.2
dir="$PWD/target/phoenix"
venv="$dir/venv"
py="$venv/bin/python"
check() {
  "$py" - "$phoenix_version" "$proto_version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
assert version("arize-phoenix") == sys.argv[1], version("arize-phoenix")
assert version("opentelemetry-proto") == sys.argv[2], version("opentelemetry-proto")
spec = find_spec("phoenix")  # found, not imported (importing it takes seconds)
assert spec and any((Path(d) / "server" / "main.py").is_file()
                    for d in spec.submodule_search_locations), "no phoenix.server.main"
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
from google.protobuf import json_format  # noqa: F401
PY
}
if [ -x "$py" ] && check; then
  echo "$py"
  exit 0
fi
fits() { "$1" -c 'import sys, venv, ensurepip; sys.exit(not ((3, 10) <= sys.version_info[:2] < (3, 14)))' 2>/dev/null; }
base=""
if command -v python3 >/dev/null 2>&1 && fits python3; then
  base=python3
else
  base=$(bash scripts/install-python313.sh) || { echo "no Python between 3.10 and 3.13 for Phoenix" >&2; exit 1; }
fi
mkdir -p "$dir"
if [ ! -x "$venv/bin/pip" ]; then
  rm -rf "$venv"
  if ! "$base" -m venv "$venv" 2>/dev/null; then
    # Debian's unpacked Python 3.13 has no ensurepip wheels where it looks.
    wheel=$(ls "$(dirname "$base")"/../share/python-wheels/pip-*.whl | head -n 1)
    rm -rf "$venv" && "$base" -m venv --without-pip "$venv" \
      && "$py" "$wheel/pip" install -q --no-index "$wheel" \
      || { echo "could not make a venv for Phoenix" >&2; exit 1; }
  fi
fi
timeout 1800 "$venv/bin/pip" install -q --disable-pip-version-check \
  "arize-phoenix==$phoenix_version" "opentelemetry-proto==$proto_version" \
  || { echo "pip could not install arize-phoenix==$phoenix_version opentelemetry-proto==$proto_version" >&2; exit 1; }
check || { echo "Phoenix was installed but is not what was asked for (see: $py -c 'import phoenix.server.main')" >&2; exit 1; }
# Its server must start: import it once (slow; the check above only finds it).
"$py" -c 'import phoenix.server.main' || { echo "Phoenix was installed but its server does not import" >&2; exit 1; }
echo "$py"
