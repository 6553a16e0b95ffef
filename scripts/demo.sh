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

echo "==> generating example sessions of every agent (seed 7, dated over the last two weeks)"
target/release/agentlog-bench gen --demo --size 3MB --out "$home" --seed 7

al() {
  echo
  echo "\$ agentlog $*"
  env -i HOME="$home" PATH="$PATH" TZ=UTC XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
    target/release/agentlog "$@" || echo "(exit status $?)"
}

# The first N lines of the output, and a line saying how many more there
# were when it is cut (awk reads it all: no SIGPIPE to the writer).
first() {
  awk -v n="$1" 'NR <= n { print } END { if (NR > n) printf "… (%d more lines, cut by the demo)\n", NR - n }'
}

# The session id a file's name ends with (`<time>_<uuid>.jsonl`,
# `<uuid>.jsonl`): commands name sessions by id, not by long paths.
id_of() {
  local stem
  stem=$(basename "$1" .jsonl)
  echo "${stem##*_}"
}

al formats
al ls --limit 12
al ls --agent claude --since 7d --limit 5
# `sed -n` rather than `head` where a pipeline is cut short: head exits
# early, the writer before it may die of SIGPIPE, and pipefail ends the
# demo (whether it does depends on timing).
first_pi=$(find "$home/.pi" -name '*.jsonl' | sort | sed -n 1p)
first_claude=$(find "$home/.claude/projects" -maxdepth 2 -name '*.jsonl' | sort | sed -n 1p)
pi_id=$(id_of "$first_pi")
claude_id=$(id_of "$first_claude")
al show "${claude_id:0:8}" | first 40
branched_pi=$(grep -l '"parentId"' "$home"/.pi/agent/sessions/*/*.jsonl | while read -r f; do
  if [ "$(grep -o '"parentId":"[0-9a-f]*"' "$f" | sort | uniq -d | sed -n 1p)" ]; then echo "$f"; fi
done | sed -n 1p)
branched_id=$(id_of "${branched_pi:-$first_pi}")
al tree "${branched_id:0:8}" | first 24
al context "${pi_id:0:8}" | first 20
out=examples/generated
al export "${pi_id:0:8}" --to markdown -o "$out/pi-session.md"
echo "($out/pi-session.md: $(wc -l < "$out/pi-session.md") lines)"
al convert "${claude_id:0:8}" --to codex -o "$out/from-claude.codex.jsonl"
al validate "${pi_id:0:8}" "${claude_id:0:8}" "$out/from-claude.codex.jsonl"
al index
al search tokenizer --limit 3
al search 'migrat*' --agent gemini --limit 2
al stats --by agent
al export "${claude_id:0:8}" --to html -o "$out/claude-session.html"
echo "($out/claude-session.html is one self-contained page; open it in a browser)"

echo
echo "\$ agentlog serve"
serve_log="$root/serve.log"
env -i HOME="$home" PATH="$PATH" TZ=UTC XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
  target/release/agentlog serve --port 0 >"$serve_log" 2>&1 &
serve_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$serve_log" | sed -n 1p || true)
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -n "$url" ]; then
  echo "serving the example sessions at $url"
  if command -v curl >/dev/null 2>&1; then
    echo "(the list page: $(curl -s "$url" | grep -o '[0-9,]* found' | sed -n 1p))"
  fi
else
  echo "(serve did not start: $(cat "$serve_log"))"
fi
kill "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
echo "(stopped; run it yourself with: HOME=$home target/release/agentlog serve)"
bin="$PWD/target/release/agentlog"
echo
echo "Example sessions are in $home; run any agentlog command with HOME=$home to explore them."
echo "The agentlog binary is $bin ($(du -h "$bin" | cut -f1))."
echo "To run it as \`agentlog\` from anywhere, put it on your PATH, e.g.:"
echo "  export PATH=\"$PWD/target/release:\$PATH\"     # this shell only"
echo "  install -m 755 \"$bin\" ~/.local/bin/            # for good (~/.local/bin is on most PATHs)"
