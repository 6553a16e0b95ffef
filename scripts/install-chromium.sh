#!/usr/bin/env bash
# Installs what the browser tests of `agentlog serve` and the HTML export
# need: Debian's headless-capable `chromium`, and the npm package
# playwright-core (the CDP driver, no bundled browser) into
# target/peers/browser. Exits 0 either way; the browser tests fail under CI
# and skip with a message elsewhere when either is still missing.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium for the browser tests" >&2
    for attempt in 1 2 3 4 5 6; do
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 && break
      # Another apt may hold the dpkg lock; the package lists may be stale.
      [ "$attempt" = 3 ] && apt-get update -qq >/dev/null 2>&1
      sleep 10
    done
    command -v chromium >/dev/null 2>&1 || echo "warning: could not install chromium; the browser tests will not run" >&2
  else
    echo "warning: chromium is missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi
dir="$PWD/target/peers/browser"
if [ ! -e "$dir/node_modules/playwright-core/package.json" ] && command -v npm >/dev/null 2>&1; then
  mkdir -p "$dir"
  [ -e "$dir/package.json" ] || echo '{"name":"browser-tests","private":true}' > "$dir/package.json"
  (cd "$dir" && timeout 240 npm install --ignore-scripts --no-audit --no-fund --silent playwright-core@1.65.1) \
    || echo "warning: could not install playwright-core; the browser tests will not run" >&2
fi
exit 0
