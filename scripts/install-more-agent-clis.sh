#!/usr/bin/env bash
# Installs the real agent CLIs whose session files agentlog reads beyond the
# first five (OpenCode, Qwen Code, GitHub Copilot CLI, Kilo Code, Continue,
# Cline, Factory Droid from npm; Aider, Mistral Vibe 3.x and 2.x, Kimi
# Code CLI and OpenHands from PyPI, the last three on the Python 3.13 of scripts/install-python313.sh), each
# pinned, each into its own directory target/agents/<name>, so the
# conformance tests can run them
# against the loopback mock model server. Idempotent: an installed CLI is
# skipped. Usage: install-more-agent-clis.sh [NAME...] (default: all).
# A CLI that cannot be installed is reported on stderr; the script goes on
# and exits 1 at the end if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD/target/agents"
mkdir -p "$root" || exit 1

# name|kind|package spec|file that proves the install
# (Droid: the wrapper package is at 0.225.1, its Linux binary at 0.225.2)
clis=(
  "opencode|npm|opencode-ai@1.18.33|node_modules/.bin/opencode"
  "qwen|npm|@qwen-code/qwen-code@0.24.4 node@22|node_modules/.bin/qwen"
  "copilot|npm|@github/copilot@1.0.102|node_modules/.bin/copilot"
  "kilo|npm|@kilocode/cli@7.7.7|node_modules/.bin/kilo"
  "continue|npm|@continuedev/cli@1.5.47|node_modules/.bin/cn"
  "cline|npm|cline@3.0.65|node_modules/.bin/cline"
  "droid|npm|@factory/cli@0.225.1 @factory/cli-linux-x64@0.225.2|node_modules/.bin/droid"
  "aider|pypi|aider-chat==0.86.2|venv/bin/aider"
  # (Vibe 3.0.3 pins a certifi release the registry no longer serves; 2.20.0
  # is the last 2.x that keeps sessions in the 2.x layout)
  "vibe|pypi313|mistral-vibe==3.0.2|venv/bin/vibe"
  "vibe2|pypi313|mistral-vibe==2.20.0|venv/bin/vibe"
  # (kimi-cli 1.52.0 only prints that it is no longer maintained)
  "kimi|pypi313|kimi-cli==1.51.0|venv/bin/kimi"
  # openhands-ai 0.x runs headless, with its event store; the 1.x CLI
  # (`openhands`, a terminal program) keeps conversations of its own
  "openhands|pypi313|openhands-ai==0.62.0|venv/lib/python3.13/site-packages/openhands/core/main.py"
  "openhands1|pypi313|openhands==1.2.1|venv/bin/openhands"
)

want=("$@")
failed=0
for spec in "${clis[@]}"; do
  IFS='|' read -r name kind pkgs proof <<<"$spec"
  if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $name "* ]]; then
    continue
  fi
  dir="$root/$name"
  [ -e "$dir/$proof" ] && continue
  mkdir -p "$dir" || { failed=1; continue; }
  echo "installing $name ($pkgs) into $dir" >&2
  case $kind in
    npm)
      command -v npm >/dev/null 2>&1 || { echo "npm is not available for $name" >&2; failed=1; continue; }
      [ -e "$dir/package.json" ] || echo "{\"name\":\"agentlog-$name\",\"private\":true}" > "$dir/package.json"
      # shellcheck disable=SC2086
      (cd "$dir" && timeout 600 npm install --no-audit --no-fund --silent $pkgs) \
        || { echo "npm could not install $pkgs" >&2; failed=1; continue; }
      ;;
    pypi)
      command -v python3 >/dev/null 2>&1 || { echo "python3 is not available for $name" >&2; failed=1; continue; }
      if [ ! -x "$dir/venv/bin/pip" ]; then
        python3 -m venv "$dir/venv" || { echo "python3 -m venv failed for $name" >&2; failed=1; continue; }
      fi
      # shellcheck disable=SC2086
      timeout 900 "$dir/venv/bin/pip" install -q --disable-pip-version-check $pkgs \
        || { echo "pip could not install $pkgs" >&2; failed=1; continue; }
      ;;
    pypi313)
      py=$(bash scripts/install-python313.sh) || { echo "no Python 3.13 for $name" >&2; failed=1; continue; }
      if ! "$dir/venv/bin/python" -c 'import sys, pip; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
        # Debian's ensurepip looks for its wheels in the system's
        # /usr/share/python-wheels; pip is installed from the unpacked one.
        wheel=$(ls "$(dirname "$py")"/../share/python-wheels/pip-*.whl | head -n 1)
        { rm -rf "$dir/venv" && "$py" -m venv --without-pip "$dir/venv" \
          && "$dir/venv/bin/python" "$wheel/pip" install -q --no-index "$wheel"; } \
          || { echo "could not make a Python 3.13 venv for $name" >&2; failed=1; continue; }
      fi
      # shellcheck disable=SC2086
      timeout 900 "$dir/venv/bin/pip" install -q --disable-pip-version-check $pkgs \
        || { echo "pip could not install $pkgs" >&2; failed=1; continue; }
      ;;
  esac
  [ -e "$dir/$proof" ] || { echo "$name installed but $proof is missing" >&2; failed=1; }
done
exit $failed
