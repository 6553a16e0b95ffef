#!/usr/bin/env bash
# Installs the real ccusage (npm ccusage@VERSION, default 20.0.24; 20.0.26
# fails to start here) once into target/peers/ccusage and prints the path of
# its command, for the token-total comparison test. On failure it prints why
# on stderr and exits 1; npm gets at most 240 s.
set -uo pipefail
version=${1:-20.0.24}
cd "$(dirname "$0")/.."
dir="$PWD/target/peers/ccusage"
bin="$dir/node_modules/.bin/ccusage"
if ! node --version >/dev/null 2>&1; then
  echo "node is not available" >&2
  exit 1
fi
if [ ! -x "$bin" ]; then
  mkdir -p "$dir" || exit 1
  [ -e "$dir/package.json" ] || echo '{"name":"ccusage-peer","private":true}' > "$dir/package.json" || exit 1
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not available" >&2
    exit 1
  fi
  (cd "$dir" && timeout 240 npm install --no-audit --no-fund --silent "ccusage@$version")
  case $? in
    0) ;;
    124) echo "npm install timed out" >&2; exit 1 ;;
    *) echo "npm could not install ccusage@$version" >&2; exit 1 ;;
  esac
  [ -x "$bin" ] || { echo "npm could not install ccusage@$version" >&2; exit 1; }
fi
echo "$bin"
