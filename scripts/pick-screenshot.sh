#!/usr/bin/env bash
# Makes docs/screenshots/pick.png: `agentlog pick` on generated demo sessions
# in a 100x30 tmux pane, a search typed, the pane captured with its
# attributes (capture-pane -e), turned into an HTML page (the terminal's
# default colours: dark text on white; bold, underline, dim and reverse as
# the terminal shows them) and photographed by headless Chromium
# (scripts/install-chromium.sh).
#
#   scripts/pick-screenshot.sh [AGENTLOG] [QUERY]
#
# AGENTLOG defaults to target/release/agentlog (else target/debug), with
# agentlog-bench beside it; QUERY to "tokeni".
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
  for b in target/release/agentlog target/debug/agentlog; do
    [ -x "$b" ] && { bin=$b; break; }
  done
fi
[ -x "${bin:-}" ] || { echo "no agentlog binary: cargo build -p agentlog -p agentlog-bench" >&2; exit 1; }
bin=$(realpath "$bin")
bench="$(dirname "$bin")/agentlog-bench"
[ -x "$bench" ] || { echo "no $bench: cargo build -p agentlog-bench" >&2; exit 1; }
query=${2:-tokeni}
command -v tmux >/dev/null || { echo "tmux is missing: scripts/install-tmux.sh" >&2; exit 1; }
command -v chromium >/dev/null || { echo "chromium is missing: scripts/install-chromium.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'tmux -S "$work/sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT
home="$work/home"
"$bench" gen --demo --size 3MB --seed 4 --out "$home" >/dev/null
env -i HOME="$home" PATH="$PATH" XDG_DATA_HOME="$home/.local/share" "$bin" index >/dev/null 2>&1
printf 'set -g status off\nset -g escape-time 0\n' > "$work/tmux.conf"
env -i HOME="$home" PATH="$PATH" TERM=xterm-256color LANG=C.UTF-8 TZ=UTC \
  XDG_DATA_HOME="$home/.local/share" AGENTLOG_NO_BACKGROUND=1 \
  tmux -S "$work/sock" -f "$work/tmux.conf" new-session -d -s pick -x 100 -y 30 "'$bin' pick"
for _ in $(seq 100); do
  tmux -S "$work/sock" capture-pane -p -t pick | head -1 | grep -q 'sessions *$' && break
  sleep 0.1
done
tmux -S "$work/sock" send-keys -t pick -l "$query"
sleep 1
tmux -S "$work/sock" send-keys -t pick Down
sleep 2
tmux -S "$work/sock" capture-pane -e -p -t pick > "$work/pane.ansi"

python3 - "$work/pane.ansi" "$work/pane.html" <<'EOF'
import html, re, sys
src = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
out = []
# tmux carries attributes from one line to the next.
bold = dim = under = rev = False
for line in src:
    parts = re.split(r"(\x1b\[[0-9;]*m)", line)
    cells = []
    for p in parts:
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", p)
        if m:
            for c in (m.group(1) or "0").split(";"):
                c = int(c or 0)
                if c == 0: bold = dim = under = rev = False
                elif c == 1: bold = True
                elif c == 2: dim = True
                elif c == 4: under = True
                elif c == 7: rev = True
                elif c == 22: bold = dim = False
                elif c == 24: under = False
                elif c == 27: rev = False
            continue
        if not p:
            continue
        cls = " ".join(n for n, on in (("b", bold), ("d", dim), ("u", under), ("r", rev)) if on)
        cells.append(f'<span class="{cls}">{html.escape(p)}</span>' if cls else html.escape(p))
    out.append("".join(cells))
page = """<!doctype html><meta charset="utf-8"><style>
body { margin: 0; background: #fff; }
pre { margin: 0; padding: 12px; font: 14px/17px "DejaVu Sans Mono", monospace; color: #1e1e1e; background: #fff; }
.b { font-weight: bold; } .d { opacity: .6; } .u { text-decoration: underline; }
.r { background: #1e1e1e; color: #fff; }
</style><pre>""" + "\n".join(out) + "</pre>"
open(sys.argv[2], "w", encoding="utf-8").write(page)
EOF

mkdir -p docs/screenshots
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --force-device-scale-factor=2 --window-size=868,534 \
  --screenshot="$PWD/docs/screenshots/pick.png" "file://$work/pane.html" >/dev/null 2>&1
echo "wrote docs/screenshots/pick.png"
