#!/usr/bin/env bash
# Tests of the VS Code extension, on a clean clone:
#   type-check (tsc) → bundle → node tests (the ACP client against the real
#   `hearth acp` + `hearth sim`, permissions/modes/diffs included; the bundled
#   extension against a stand-in vscode API and the real daemon; one stand-in
#   ACP agent for a relay crash the real one cannot produce) → the chat webview
#   in headless Chromium (writes screenshot.png)
#   → `vsce package` into a temp dir.
# Ends with "vscode: N passed, M failed" and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
REPO=$(cd ../.. && pwd)
TMP=$(mktemp -d /tmp/hearth-vscode.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

STEP=setup
trap 'status=$?; if [ $status -ne 0 ]; then echo "vscode: FAILED at step: $STEP (exit $status)"; fi' ERR
step() {
  STEP=$1
  echo
  echo "== $1"
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

step "install"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
if [ ! -x /usr/bin/chromium ]; then
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

step "build hearth"
(cd "$REPO" && go build -o "$TMP/hearth" ./cmd/hearth)
export HEARTH_BIN="$TMP/hearth"
# hearth's test MCP server (mcp/mcptest): the mcp package's test binary serves it.
(cd "$REPO" && go test -c -o "$TMP/mcp-server" ./mcp)
export HEARTH_MCP_SERVER="$TMP/mcp-server"

step "tsc"
rm -rf out
npx tsc -p tsconfig.json
npx tsc -p tsconfig.ui.json
npx tsc -p src/webview/tsconfig.json

step "bundle"
# The production bundle: the tests exercise exactly what the .vsix ships.
node build.mjs --production

# Runs node's test runner on $@, human-readable on stdout, TAP kept for the tally.
PASS=0
FAIL=0
run_tests() {
  local tap="$TMP/$STEP.tap" rc=0
  node --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" "$@" || rc=$?
  local p f c
  p=$(grep -E '^# pass [0-9]+' "$tap" | tail -1 | awk '{print $3}')
  f=$(grep -E '^# fail [0-9]+' "$tap" | tail -1 | awk '{print $3}')
  c=$(grep -E '^# cancelled [0-9]+' "$tap" | tail -1 | awk '{print $3}')
  f=$((${f:-0} + ${c:-0}))
  PASS=$((PASS + ${p:-0}))
  FAIL=$((FAIL + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then FAIL=$((FAIL + 1)); fi
  return 0
}

step "node tests"
run_tests out/test/units.test.js out/test/acp.test.js out/test/permissions.test.js out/test/files.test.js out/test/fake-agent.test.js out/test/extension.test.js out/test/mcp.test.js

step "ui test (headless chromium)"
run_tests out/test/ui.test.js
[ -s "$HERE/screenshot.png" ] && echo "screenshot: $HERE/screenshot.png"

step "vsce package"
VERSION=$(node -p 'require("./package.json").version')
VSIX="$TMP/hearth-$VERSION.vsix"
npx vsce package --no-dependencies --skip-license --out "$VSIX" </dev/null
LISTING=$(unzip -l "$VSIX")
vsix_ok=1
for f in extension/package.json extension/readme.md extension/dist/extension.cjs extension/dist/webview.js extension/media/chat.css extension/media/hearth.svg; do
  if ! grep -q " $f\$" <<<"$LISTING"; then
    echo "$VSIX lacks $f"
    vsix_ok=0
  fi
done
if grep -qE ' extension/(node_modules|src|test|out)/' <<<"$LISTING"; then
  echo "$VSIX carries sources or node_modules"
  vsix_ok=0
fi
if [ "$vsix_ok" = 1 ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
echo "packaged $(basename "$VSIX") ($(wc -c <"$VSIX") bytes)"

trap - ERR
echo
echo "vscode: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ] || exit 1
