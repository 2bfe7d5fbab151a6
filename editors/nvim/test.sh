#!/usr/bin/env bash
# Headless Neovim tests of the hearth plugin against the real `hearth acp`
# and `hearth sim`. Installs Neovim (Debian's package) when it is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if ! command -v nvim >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y neovim
fi

# Short: the daemon's unix socket lives in it (paths are limited to 108 bytes).
tmp="$(mktemp -d /tmp/hnv.XXXXXX)"
cleanup() {
  # The Lua test stops the daemon it caused to start; if it could not (it
  # crashed or timed out), ask the socket for the daemon's pid.
  if [ -S "$tmp/s.sock" ] && [ -x "$tmp/hearth" ]; then
    pid="$(HEARTH_SOCKET="$tmp/s.sock" "$tmp/hearth" status --json 2>/dev/null |
      sed -n 's/^ *"pid": *\([0-9][0-9]*\).*/\1/p' | head -n1 || true)"
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$here/doc/tags"
  rm -rf "$tmp"
}
trap cleanup EXIT

rm -f "$here/doc/tags" # the plugin must build them itself
(cd "$repo" && go build -o "$tmp/hearth" ./cmd/hearth)
# hearth's test MCP server (mcp/mcptest): the mcp package's test binary serves it.
(cd "$repo" && go test -c -o "$tmp/mcp-server" ./mcp)

cd "$here"
nvim --version | head -n1
HEARTH_BIN="$tmp/hearth" HEARTH_TEST_TMP="$tmp" HEARTH_MCP_SERVER="$tmp/mcp-server" \
  timeout 600 nvim --headless -u NONE -i NONE -n \
  --cmd "set rtp^=$here" -c "luafile $here/tests/run.lua"

# The same plugin on a real terminal: what the screen shows.
bash "$here/tests/screen.sh" "$tmp/hearth" "$tmp"
