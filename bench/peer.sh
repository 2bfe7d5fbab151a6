#!/usr/bin/env bash
# bench/peer.sh — hearth next to its peer, OpenAI's Codex CLI (`codex exec`, the npm package,
# unmodified), on the same scripted rollout against the same `hearth sim` (WebSocket provider,
# a cost model): the model reads a 4 KiB file CALLS times, one call per response, then answers.
#
#   codex        codex exec, its `exec_command` tool running `cat data.txt`
#   hearth cold  hearth ask with no daemon running (ask runs one in its process, or starts one)
#   hearth warm  hearth ask with a daemon already holding the workspace
#
# The three run interleaved, ROUNDS times (the order rotates each round); the script prints each
# wall time, the medians, the ratios hearth/codex and the cost model. Everything it installs or
# writes is in a scratch directory, removed at the end (KEEP=1 keeps it).
#
# Environment: ROUNDS (5), CALLS (10), CODEX_VERSION (editors/interop's pin),
# CODEX_DIR (an existing npm prefix holding @openai/codex: skips the install),
# the cost model: HANDSHAKE (120ms), PER_REQUEST (70ms), PER_INPUT_KB (2ms), FIRST_TOKEN (150ms),
# TOKENS_PER_SECOND (1000). The simulator has no separate round-trip time: a 40 ms RTT is folded
# into PER_REQUEST (30 ms + one RTT) and HANDSHAKE (TCP, TLS and the upgrade: three RTTs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

ROUNDS="${ROUNDS:-5}"
CALLS="${CALLS:-10}"
HANDSHAKE="${HANDSHAKE:-120ms}"
PER_REQUEST="${PER_REQUEST:-70ms}"
PER_INPUT_KB="${PER_INPUT_KB:-2ms}"
FIRST_TOKEN="${FIRST_TOKEN:-150ms}"
TOKENS_PER_SECOND="${TOKENS_PER_SECOND:-1000}"
CODEX_VERSION="${CODEX_VERSION:-$(node -p "require('$repo/editors/interop/package.json').dependencies['@openai/codex']")}"
RUN_TIMEOUT=120

scratch="$(mktemp -d "${TMPDIR:-/tmp}/hearth-peer.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $scratch" >&2; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

die() { echo "peer.sh: $*" >&2; exit 1; }

# wait_for CMD...: run CMD every 50 ms until it succeeds, for at most 20 s.
wait_for() {
  local deadline=$((SECONDS + 20))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# --- Codex, into the scratch directory -------------------------------------------------------
if [ -n "${CODEX_DIR:-}" ]; then
  codex_js="$CODEX_DIR/node_modules/@openai/codex/bin/codex.js"
else
  echo "installing @openai/codex@$CODEX_VERSION into $scratch/codex ..." >&2
  mkdir -p "$scratch/codex"
  npm install --prefix "$scratch/codex" --no-audit --no-fund --no-save --loglevel=error \
    "@openai/codex@$CODEX_VERSION" >&2
  codex_js="$scratch/codex/node_modules/@openai/codex/bin/codex.js"
fi
[ -f "$codex_js" ] || die "no Codex at $codex_js"
codex_version="$(node "$codex_js" --version 2>/dev/null | tail -1)"

# --- hearth, the simulator, the workspace ----------------------------------------------------
hearth="$scratch/hearth"
(cd "$repo" && go build -o "$hearth" ./cmd/hearth)

key="sk-peer-$RANDOM$RANDOM"
"$hearth" sim -v --addr 127.0.0.1:0 --api-key "$key" --handshake "$HANDSHAKE" --per-request "$PER_REQUEST" \
  --per-input-kb "$PER_INPUT_KB" --first-token "$FIRST_TOKEN" --tokens-per-second "$TOKENS_PER_SECOND" \
  >"$scratch/sim.log" 2>&1 &
pids+=($!)
wait_for grep -q 'http://' "$scratch/sim.log" || die "hearth sim did not start: $(cat "$scratch/sim.log")"
base="$(grep -o 'http://[^ ]*/v1' "$scratch/sim.log" | head -1)"
cost="$(sed -n 's/.*cost: //p' "$scratch/sim.log" | head -1)"

ws="$scratch/ws"
mkdir -p "$ws"
for _ in $(seq 120); do echo "the quick brown fox jumps over it"; done >"$ws/data.txt"
echo "a workspace for bench/peer.sh" >"$ws/README.md"

# Each client reads the file with its own tool; the simulator's script names it.
hearth_prompt="read the data sim:calls=$CALLS sim:tool=read_file sim:args={\"path\":\"data.txt\"}"
codex_prompt="read the data sim:calls=$CALLS sim:tool=exec_command sim:args={\"cmd\":\"cat\\u0020data.txt\"}"
expect="I called"

# --- Codex's configuration: the WebSocket provider, as editors/interop/codex-sim.test.mjs ------
codex_home="$scratch/codex-home"
mkdir -p "$codex_home" "$scratch/home"
cat >"$codex_home/config.toml" <<EOF
model = "sim-model"
model_provider = "hearth-sim"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.hearth-sim]
name = "hearth sim"
base_url = "$base"
env_key = "HEARTH_SIM_KEY"
wire_api = "responses"
supports_websockets = true
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000
websocket_connect_timeout_ms = 10000

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
tool_suggest = false
daemon_auto_start = false
unbounded_connection_retries = false
api_key_model_discovery = false
EOF

# Clean environments: nothing of the user's OPENAI_*, CODEX_*, HEARTH_*, XDG_* or HOME.
base_env=(env -i "PATH=$PATH" "HOME=$scratch/home" "TMPDIR=${TMPDIR:-/tmp}" "LANG=${LANG:-C.UTF-8}")
codex_env=("${base_env[@]}" "CODEX_HOME=$codex_home" "HEARTH_SIM_KEY=$key")
hearth_env=("${base_env[@]}" "OPENAI_BASE_URL=$base" "OPENAI_API_KEY=$key" "HEARTH_MODEL=sim-model")
cold_env=("${hearth_env[@]}" "HEARTH_SOCKET=$scratch/cold/hearth.sock" "HEARTH_DATA_DIR=$scratch/cold/data")
warm_env=("${hearth_env[@]}" "HEARTH_SOCKET=$scratch/warm/hearth.sock" "HEARTH_DATA_DIR=$scratch/warm/data")
mkdir -p "$scratch/cold" "$scratch/warm"

# A cold ask must not find or leave a daemon: --no-daemon where ask has it (ask that starts a
# daemon itself), else ask runs one in its process when no socket answers.
cold_args=()
if "$hearth" ask --help 2>&1 | grep -q -- '-no-daemon'; then cold_args=(--no-daemon); fi

run_codex() {
  timeout "$RUN_TIMEOUT" "${codex_env[@]}" node "$codex_js" exec --strict-config --skip-git-repo-check --ephemeral \
    --color never --cd "$ws" "$codex_prompt" </dev/null
}
run_cold() { timeout "$RUN_TIMEOUT" "${cold_env[@]}" "$hearth" ask "${cold_args[@]}" --cwd "$ws" "$hearth_prompt" </dev/null; }
run_warm() { timeout "$RUN_TIMEOUT" "${warm_env[@]}" "$hearth" ask --cwd "$ws" "$hearth_prompt" </dev/null; }

# time_ms NAME: runs run_NAME, checks it finished the rollout, prints its wall time in ms.
time_ms() {
  local name="$1" out="$scratch/$1.out" t0 t1
  t0=$(date +%s%N)
  if ! "run_$name" >"$out" 2>&1; then die "$name failed: $(tail -20 "$out")"; fi
  t1=$(date +%s%N)
  grep -q "$expect" "$out" || die "$name did not finish the rollout: $(tail -20 "$out")"
  echo $(((t1 - t0) / 1000000))
}

# --- the warm daemon: hearth serve, holding the workspace after one ask -----------------------
"${warm_env[@]}" "$hearth" serve >"$scratch/serve.log" 2>&1 &
pids+=($!)
wait_for test -S "$scratch/warm/hearth.sock" || die "hearth serve did not start: $(cat "$scratch/serve.log")"
time_ms warm >/dev/null # opens the workspace in the daemon (untimed)
time_ms codex >/dev/null # Codex's first run (untimed): its binary and caches, as hearth's warm-up run

# --- the rounds ------------------------------------------------------------------------------
declare -A times=([codex]="" [cold]="" [warm]="")
order=(codex cold warm)
echo "round  codex_ms  hearth_cold_ms  hearth_warm_ms"
for r in $(seq "$ROUNDS"); do
  declare -A t=()
  for i in 0 1 2; do
    name="${order[$(((i + r) % 3))]}"
    t[$name]="$(time_ms "$name")"
    times[$name]+="${t[$name]} "
  done
  printf '%5d  %8d  %14d  %14d\n' "$r" "${t[codex]}" "${t[cold]}" "${t[warm]}"
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
mc="$(echo "${times[codex]}" | median)"
mcold="$(echo "${times[cold]}" | median)"
mwarm="$(echo "${times[warm]}" | median)"
echo
echo "median ms: codex $mc, hearth cold $mcold, hearth warm $mwarm"
awk -v c="$mc" -v h="$mcold" -v w="$mwarm" 'BEGIN {printf "hearth/codex wall time: cold %.2f×, warm %.2f×\n", h / c, w / c}'
echo
echo "rollout: $CALLS read calls of a 4 KiB file, one per response, then the answer; $ROUNDS interleaved rounds"
echo "cost model (hearth sim): $cost"
echo "requests the simulator answered (all runs): $(grep -c 'transport=ws' "$scratch/sim.log") over WebSocket, $(grep -c 'transport=http' "$scratch/sim.log") over HTTP"
echo "codex: @openai/codex $codex_version (codex exec, WebSocket provider); hearth: $(cd "$repo" && git rev-parse --short HEAD)${cold_args[*]:+, cold with ${cold_args[*]}}"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
