#!/usr/bin/env bash
# Installs the peers the end-to-end benchmark (`agentlog-bench e2e`) runs
# beside agentlog, once, into target/peers/venv: agentsview and fast-resume
# from PyPI (pinned), plus ripgrep (scripts/install-ripgrep.sh). Prints the
# venv's bin directory. A peer that cannot be installed is reported on
# stderr; the benchmark then prints that it skipped that peer.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-ripgrep.sh
venv="$PWD/target/peers/venv"
if [ ! -x "$venv/bin/pip" ]; then
  python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
fi
for pkg in agentsview==0.46.1 fast-resume==2.14.0; do
  name=${pkg%%==*}
  if ! "$venv/bin/pip" show "$name" >/dev/null 2>&1; then
    timeout 300 "$venv/bin/pip" install -q "$pkg" >&2 || echo "warning: could not install $pkg" >&2
  fi
done
echo "$venv/bin"
