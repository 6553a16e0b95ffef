#!/usr/bin/env bash
# Installs ripgrep (the peer the index benchmark compares search against)
# when it is missing and apt-get is usable. Exits 0 either way; the
# benchmark skips the comparison with a message when rg is still missing.
set -uo pipefail
command -v rg >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ripgrep for the search benchmark" >&2
  apt-get update -qq >/dev/null 2>&1 \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null 2>&1 \
    || echo "warning: could not install ripgrep; the comparison with rg will be skipped" >&2
else
  echo "warning: ripgrep is missing and cannot be installed here (needs root and apt-get)" >&2
fi
exit 0
