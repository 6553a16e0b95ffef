#!/usr/bin/env bash
# Installs tmux (the real terminal the picker's tests drive `agentlog pick`
# in, with send-keys and capture-pane) when it is missing and apt-get is
# usable. Exits 0 either way; the picker tests fail under CI and skip with a
# message elsewhere when tmux is still missing.
set -uo pipefail
command -v tmux >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing tmux for the picker tests" >&2
  for attempt in 1 2 3 4 5 6; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null 2>&1 && break
    # Another apt may hold the dpkg lock; the package lists may be stale.
    [ "$attempt" = 2 ] && apt-get update -qq >/dev/null 2>&1
    sleep 10
  done
  command -v tmux >/dev/null 2>&1 || echo "warning: could not install tmux; the picker tests will not run" >&2
else
  echo "warning: tmux is missing and cannot be installed here (needs root and apt-get)" >&2
fi
exit 0
