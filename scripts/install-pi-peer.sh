#!/usr/bin/env bash
# Installs the real pi (npm @mariozechner/pi-coding-agent@VERSION) once into
# target/peers/pi and prints the path of its session-manager module, for the
# conformance tests and the pi_open benchmark. On failure it prints why on
# stderr and exits 1; npm gets at most 240 s (an offline machine can make it
# retry for minutes).
set -uo pipefail
version=${1:?usage: install-pi-peer.sh VERSION}
cd "$(dirname "$0")/.."
dir="$PWD/target/peers/pi"
module="$dir/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"
if ! node --version >/dev/null 2>&1; then
  echo "node is not available" >&2
  exit 1
fi
if [ ! -e "$module" ]; then
  mkdir -p "$dir" || exit 1
  [ -e "$dir/package.json" ] || echo '{"name":"pi-peer","private":true}' > "$dir/package.json" || exit 1
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not available" >&2
    exit 1
  fi
  (cd "$dir" && timeout 240 npm install --ignore-scripts --no-audit --no-fund --silent \
    "@mariozechner/pi-coding-agent@$version")
  case $? in
    0) ;;
    124) echo "npm install timed out" >&2; exit 1 ;;
    *) echo "npm could not install the package" >&2; exit 1 ;;
  esac
  [ -e "$module" ] || { echo "npm could not install the package" >&2; exit 1; }
fi
echo "$module"
