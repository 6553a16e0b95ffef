#!/usr/bin/env bash
# The archive's figures, as a user meets them, on a generated home:
# - the cold `agentlog index` with the archive (the default) and without
#   (AGENTLOG_ARCHIVE=off), and their ratio;
# - the archive's size against the corpus, `cp -r` and `tar | zstd -3` of
#   the same tree, in the same run;
# - one append captured and indexed: the `search` right after it;
# - a rebuild of the index from the archive alone (every session file
#   gone) against a rebuild from the files.
#
# bash scripts/bench-archive.sh [SIZE]    (SIZE as agentlog-bench gen takes
# it, 1GB by default; 10GB for the large corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1GB}"
cargo build --release --locked -q -p agentlog -p agentlog-bench
bin="$PWD/target/release"
work="$(mktemp -d "${TMPDIR:-/tmp}/agentlog-bench-archive.XXXXXX")"
trap 'rm -rf "$work"' EXIT
home="$work/home"
mkdir -p "$home"
"$bin/agentlog-bench" gen --size "$size" --out "$home" --seed 11 >/dev/null
corpus=$(du -sb "$home" | cut -f1)

al() {
  env -i HOME="$home" PATH="$PATH" XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$home/.config" \
    AGENTLOG_NO_BACKGROUND=1 "$@"
}
secs() { # the wall time of a command, in seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
mb() { echo "scale=1; $1 / 1000000" | bc -l; }
ratio() { echo "scale=3; $1 / $2" | bc -l; }

sync
off=$(secs al AGENTLOG_ARCHIVE=off "$bin/agentlog" index)
rm -rf "$work/data"
sync
on=$(secs al "$bin/agentlog" index)
archive=$(du -sb "$work/data/agentlog/archive" | cut -f1)
cp_s=$(secs cp -r "$home" "$work/copy")
rm -rf "$work/copy"
zstd_s=$(secs sh -c "tar -C '$home' -cf - . | zstd -3 -q -T0 -o '$work/home.tar.zst'")
zstd_b=$(stat -c %s "$work/home.tar.zst")

# One append to the newest Claude session, then a search as a user runs it.
f=$(find "$home/.claude/projects" -name '*.jsonl' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2)
printf '%s\n' '{"type":"user","uuid":"bench-append","parentUuid":null,"sessionId":"bench","timestamp":"2026-12-01T10:00:00Z","message":{"role":"user","content":"zanzibarword appended"}}' >>"$f"
append=$(secs al "$bin/agentlog" search zanzibarword)

files_rebuild=$(secs al "$bin/agentlog" index --rebuild)
mkdir "$work/gone" && mv "$home/.claude" "$home/.codex" "$home/.gemini" "$home/.pi" "$work/gone/" 2>/dev/null || true
kept_rebuild=$(secs al "$bin/agentlog" index --rebuild)
listed=$(al "$bin/agentlog" ls --json | grep -c '"deleted"' || true)

echo "corpus: $(mb "$corpus") MB of generated sessions ($size)"
printf 'cold index: %.2f s with the archive, %.2f s without: %.2fx (target <= 1.3x)\n' "$on" "$off" "$(ratio "$on" "$off")"
printf 'first capture: %.0f MB/s (the archive'"'"'s share of the cold index; target >= 200)\n' "$(echo "$(mb "$corpus") / ($on - $off)" | bc -l)"
printf 'archive: %s MB, %.3fx the corpus (target <= 0.15x); tar | zstd -3: %s MB (%.3fx) in %.2f s; cp -r: %.2f s\n' \
  "$(mb "$archive")" "$(ratio "$archive" "$corpus")" "$(mb "$zstd_b")" "$(ratio "$zstd_b" "$corpus")" "$zstd_s" "$cp_s"
printf 'search right after an append (capture + index + search): %.0f ms\n' "$(echo "$append * 1000" | bc -l)"
printf 'rebuild: %.2f s from the files, %.2f s from the archive alone: %.2fx (target <= 1.5x); %s sessions listed as deleted\n' \
  "$files_rebuild" "$kept_rebuild" "$(ratio "$kept_rebuild" "$files_rebuild")" "$listed"
