#!/usr/bin/env bash
# Installs the real agent CLIs the conformance harness drives, at pinned
# versions, from npm into target/agents/<name> (once; a second run only
# checks). Usage: install-agent-clis.sh [NAME...] (default: all of them).
# Prints one line per agent, "<name> <path of its entry point>", and exits 1
# when any of the requested ones could not be installed (it says why on
# stderr). npm gets at most 300 s per package. The installs run in parallel.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD/target/agents"

# name | npm package@version | entry point inside node_modules
pins() {
  cat <<'PINS'
claude @anthropic-ai/claude-code@2.1.330 .bin/claude
codex @openai/codex@0.169.0 .bin/codex
gemini @google/gemini-cli@0.61.0 .bin/gemini
pi @mariozechner/pi-coding-agent@0.73.1 .bin/pi
node22 node@22 .bin/node
acpx acpx@0.19.1 .bin/acpx
PINS
}

want=("$@")
selected() {
  [ ${#want[@]} -eq 0 ] && return 0
  local w
  for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

if ! command -v npm >/dev/null 2>&1 || ! node --version >/dev/null 2>&1; then
  echo "node and npm are not available (scripts/setup-test-deps.sh installs them)" >&2
  exit 1
fi

install_one() {
  local name=$1 spec=$2 entry=$3
  local dir="$root/$name"
  local stamp="$dir/.installed-$(echo "$spec" | tr '/@' '__')"
  if [ -e "$stamp" ] && [ -e "$dir/node_modules/$entry" ]; then
    return 0
  fi
  mkdir -p "$dir" || return 1
  echo "{\"name\":\"agentlog-agent-$name\",\"private\":true}" > "$dir/package.json" || return 1
  (cd "$dir" && timeout 300 npm install --no-audit --no-fund --silent --no-save "$spec" >"$dir/npm.log" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc = 124 ] && echo "$name: npm install $spec timed out" >&2 \
      || echo "$name: npm install $spec failed (see $dir/npm.log)" >&2
    return 1
  fi
  if [ ! -e "$dir/node_modules/$entry" ]; then
    echo "$name: $spec installed but $entry is missing" >&2
    return 1
  fi
  touch "$stamp"
}

pids=()
names=()
while read -r name spec entry; do
  selected "$name" || continue
  install_one "$name" "$spec" "$entry" &
  pids+=($!)
  names+=("$name")
done < <(pins)

status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=1
done
while read -r name spec entry; do
  selected "$name" || continue
  p="$root/$name/node_modules/$entry"
  [ -e "$p" ] && echo "$name $p"
done < <(pins)
exit $status
