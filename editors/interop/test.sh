#!/usr/bin/env bash
# Interop suite: hearth against software that is not part of the project
# (the official ACP SDK, the official openai SDK, the ws package, OpenAI's Codex CLI);
# every ACP message hearth sends is checked against the official schema (schema-check.mjs).
# Installs the pinned npm deps when missing, builds hearth, runs node --test.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

# Missing, or older than the lockfile (a dependency was added or bumped).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # --engine-strict=false: openai 7.x declares node >=22 but runs on node 20.
  npm ci --no-audit --no-fund --engine-strict=false
fi

bindir="$(mktemp -d "${TMPDIR:-/tmp}/hearth-interop-bin.XXXXXX")"
trap 'rm -rf "$bindir"' EXIT
(cd "$repo" && go build -o "$bindir/hearth" ./cmd/hearth)
export HEARTH_BIN="$bindir/hearth"

node --test
