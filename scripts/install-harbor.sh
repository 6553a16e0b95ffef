#!/usr/bin/env bash
# Installs Harbor (PyPI `harbor`, default 0.25.0), whose Pydantic models and
# trajectory validator check the ATIF trajectories agentlog writes, into a
# venv at target/peers/harbor on the Python 3.13 of
# scripts/install-python313.sh (Harbor needs Python >= 3.12). Idempotent.
# Prints the venv's python on success; on failure says why on stderr and
# exits 1. pip gets at most 900 s.
set -uo pipefail
version=${1:-0.25.0}
cd "$(dirname "$0")/.."
dir="$PWD/target/peers/harbor"
venv="$dir/venv"
python="$venv/bin/python"
check() {
  "$python" -c 'import importlib.metadata as m, sys
from harbor.models.trajectories import Trajectory  # noqa: F401
sys.exit(m.version("harbor") != sys.argv[1])' "$version" 2>/dev/null
}
if check; then
  echo "$python"
  exit 0
fi
py=$(bash scripts/install-python313.sh) || { echo "no Python 3.13 for Harbor" >&2; exit 1; }
if ! "$python" -c 'import sys, pip; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
  # Debian's ensurepip looks for its wheels in the system's
  # /usr/share/python-wheels; pip is installed from the unpacked one.
  wheel=$(ls "$(dirname "$py")"/../share/python-wheels/pip-*.whl 2>/dev/null | head -n 1)
  [ -n "$wheel" ] || { echo "the unpacked Python 3.13 has no pip wheel" >&2; exit 1; }
  { rm -rf "$venv" && mkdir -p "$dir" && "$py" -m venv --without-pip "$venv" \
    && "$python" "$wheel/pip" install -q --no-index "$wheel"; } \
    || { echo "could not make a Python 3.13 venv for Harbor" >&2; exit 1; }
fi
timeout 900 "$venv/bin/pip" install -q --disable-pip-version-check "harbor==$version"
case $? in
  0) ;;
  124) echo "pip install harbor==$version timed out" >&2; exit 1 ;;
  *) echo "pip could not install harbor==$version" >&2; exit 1 ;;
esac
check || { echo "harbor==$version installed, but its trajectory models do not import" >&2; exit 1; }
echo "$python"
