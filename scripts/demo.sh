#!/usr/bin/env bash
# Builds agentlog, generates example sessions of every agent into
# examples/generated/home (a home directory laid out like a real machine),
# and runs the main commands on them. Nothing outside this checkout is read
# or written: HOME points at the generated home for every command.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> building (release)"
cargo build --release --locked -p agentlog -p agentlog-bench

root="$PWD/examples/generated"
home="$root/home"
rm -rf "$root"
mkdir -p "$home"

echo "==> generating example sessions of every agent (deterministic, seed 7)"
target/release/agentlog-bench gen --size 3MB --out "$home" --seed 7

al() {
  echo
  echo "\$ agentlog $*"
  env -i HOME="$home" PATH="$PATH" TZ=UTC XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
    target/release/agentlog "$@" || echo "(exit status $?)"
}

al formats
al ls --limit 12
first_pi=$(find "$home/.pi" -name '*.jsonl' | sort | head -n 1)
first_claude=$(find "$home/.claude/projects" -maxdepth 2 -name '*.jsonl' | sort | head -n 1)
claude_id=$(basename "$first_claude" .jsonl)
al show "${claude_id:0:8}" | head -n 40
al tree "$first_pi" | tail -n 12
al context "$first_pi" | head -n 20
al export "$first_pi" --to markdown -o "$root/pi-session.md"
echo "(wrote $root/pi-session.md: $(wc -l < "$root/pi-session.md") lines)"
al convert "$first_claude" --to codex -o "$root/from-claude.codex.jsonl"
al validate "$first_pi" "$first_claude" "$root/from-claude.codex.jsonl"
al index
al search throttle --limit 3
al search 'compact*' --agent gemini --limit 2
al stats --by agent
echo
echo "Example sessions are in $home; run any agentlog command with HOME=$home to explore them."
