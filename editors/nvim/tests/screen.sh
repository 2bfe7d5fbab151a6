#!/usr/bin/env bash
# What the user sees: Neovim on a real terminal (tmux), asked to edit one
# line of a 200-line file, must show the call's hunk — only the changed lines
# marked — and the permission question on the screen at the same time, on a
# 24-line terminal as on a big one. Usage: screen.sh HEARTH_BIN TMPDIR
set -euo pipefail
bin="$1"
tmp="$2"
here="$(cd "$(dirname "$0")/.." && pwd)"

if ! command -v tmux >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y tmux
fi

# Everything of the user's stays out of reach: the daemon, tmux and Neovim get
# this run's own places.
export TMUX_TMPDIR="$tmp" HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" \
  XDG_DATA_HOME="$tmp/home/.local/share" XDG_STATE_HOME="$tmp/home/.local/state" \
  XDG_CACHE_HOME="$tmp/home/.cache" XDG_RUNTIME_DIR="$tmp/run"
unset OPENAI_API_KEY OPENAI_BASE_URL HEARTH_MODEL HEARTH_CONFIG TMUX
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
export HEARTH_SOCKET="$tmp/scr.sock" HEARTH_DATA_DIR="$tmp/scr-data"
tmx() { tmux -L hearth-screen -f /dev/null "$@"; }

sim_log="$tmp/scr-sim.log"
"$bin" sim --addr 127.0.0.1:0 >"$sim_log" 2>&1 &
sim_pid=$!
cleanup() {
  tmx kill-server 2>/dev/null || true
  "$bin" stop >/dev/null 2>&1 || true
  kill "$sim_pid" 2>/dev/null || true
}
trap cleanup EXIT

# until PATTERN: wait (10 s at most) for the screen to show PATTERN (grep -E).
screen=""
until_shown() {
  local deadline=$((SECONDS + 10))
  while :; do
    screen="$(tmx capture-pane -p -t scr)"
    if grep -qE -- "$1" <<<"$screen"; then return 0; fi
    if [ $SECONDS -ge $deadline ]; then
      echo "FAIL: the screen never showed /$1/:"; echo "$screen"; return 1
    fi
    sleep 0.1
  done
}
shows() { grep -qF -- "$1" <<<"$screen" || { echo "FAIL: $2 — no \"$1\" on:"; echo "$screen"; exit 1; }; }
lacks() { ! grep -qE -- "$1" <<<"$screen" || { echo "FAIL: $2 — /$1/ on:"; echo "$screen"; exit 1; }; }

deadline=$((SECONDS + 10))
until url="$(sed -n 's/.* on \(http:[^ ]*\) .*/\1/p' "$sim_log")" && [ -n "$url" ]; do
  [ $SECONDS -lt $deadline ] || { echo "FAIL: hearth sim did not start"; cat "$sim_log"; exit 1; }
  sleep 0.05
done

cat >"$tmp/scr-init.lua" <<LUA
vim.opt.rtp:prepend('$here')
vim.env.OPENAI_BASE_URL = '$url'
require('hearth').setup({ cmd = { '$bin', 'acp' } })
LUA

for size in 80x24 160x50; do
  ws="$tmp/scr-ws-$size"
  mkdir -p "$ws"
  seq 1 200 | sed 's/^/line /; 100s/.*/goodbye world/' >"$ws/README.md"
  tmx new-session -d -s scr -x "${size%x*}" -y "${size#*x}" -c "$ws" \
    "nvim -u '$tmp/scr-init.lua' -i NONE -n README.md"
  until_shown '^README.md '
  tmx send-keys -t scr ':Hearth edit README.md goodbye hello' Enter
  until_shown 'hearth: allow Edit README.md\?'
  shows '│ @@ -97,7 +97,7 @@' "$size: the hunk's header beside the question"
  shows '│ - goodbye world' "$size: the removed line beside the question"
  shows '│ + hello world' "$size: the added line beside the question"
  shows '│   line 99' "$size: context, unmarked"
  shows '1: Allow once' "$size: the choices"
  lacks '│ [-+] line [0-9]' "$size: an unchanged line marked as changed"
  tmx send-keys -t scr '3' Enter # Reject
  until_shown 'Edit README.md \[failed\]'
  grep -qx 'goodbye world' <(sed -n 100p "$ws/README.md") || { echo "FAIL: $size: the rejected edit changed README.md"; exit 1; }
  tmx send-keys -t scr Escape ':qa!' Enter
  deadline=$((SECONDS + 10))
  while tmx has-session -t scr 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "FAIL: $size: nvim did not quit"; exit 1; }
    sleep 0.05
  done
  echo "ok   the permission question and the call's hunk on one screen ($size)"
done
