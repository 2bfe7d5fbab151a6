#!/usr/bin/env bash
# bench/peer.sh — hearth next to its peer, OpenAI's Codex CLI (`codex exec`, the npm package,
# unmodified), on the same scripted rollout against the same `hearth sim` (WebSocket provider,
# a cost model): the model reads a 4 KiB file CALLS times, one call per response, then answers.
#
#   codex        codex exec, its `exec_command` tool running `cat data.txt`
#   hearth cold  hearth ask with no daemon running (ask runs one in its process, or starts one)
#   hearth warm  hearth ask with a daemon already holding the workspace
#
# TOOL=shell (make peer-shell): hearth reads with its shell tool too, `cat data.txt` run sandboxed
# in full-auto (--mode full-auto: commands run without asking, the network off, as its default
# is there), and two more clients run the same rollout through read_file as the reference:
#
#   hearth cold read_file, hearth warm read_file
#
# The clients run interleaved, ROUNDS times (the order rotates each round); the script prints each
# wall time, the medians, the ratios hearth/codex, the cost model and each client's own time per
# tool round trip: from a response's end to the request that carries its call's output, read from
# the simulator's log (-v: when each request arrived and was answered) — the tool's run and the
# client's work around it, with none of the server's time. With TOOL=shell it prints hearth's own
# time per sandboxed command: its shell round trip less its read_file round trip, and the same from
# the walls (each wall less the time the cost model charged its responses, the difference over
# CALLS). Everything it installs or writes is in a scratch directory, removed at the end (KEEP=1
# keeps it).
#
# It also prints each client's wire bytes per rollout (the simulator's count of its connections'
# bytes, both ways, handshakes and compressed frames included) and their ratio to Codex's.
#
# Environment: ROUNDS (5), CALLS (10), TOOL (read_file, or shell), DEFLATE (the simulator's answer to
# permessage-deflate: takeover, no-takeover or off), HEARTH_BIN (a hearth binary to run as the
# client, to measure another build against this simulator; default: built here), SHELL_NETWORK (with
# TOOL=shell: hearth's HEARTH_SHELL_NETWORK, on for commands with the network; unset: full-auto's
# default, off), CODEX_VERSION (editors/interop's pin),
# CODEX_DIR (an existing npm prefix holding @openai/codex: skips the install),
# the cost model: HANDSHAKE (120ms), PER_REQUEST (70ms), PER_INPUT_KB (2ms), FIRST_TOKEN (150ms),
# TOKENS_PER_SECOND (1000). The simulator has no separate round-trip time: a 40 ms RTT is folded
# into PER_REQUEST (30 ms + one RTT) and HANDSHAKE (TCP, TLS and the upgrade: three RTTs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

ROUNDS="${ROUNDS:-5}"
CALLS="${CALLS:-10}"
TOOL="${TOOL:-read_file}"
DEFLATE="${DEFLATE:-takeover}"
HANDSHAKE="${HANDSHAKE:-120ms}"
PER_REQUEST="${PER_REQUEST:-70ms}"
PER_INPUT_KB="${PER_INPUT_KB:-2ms}"
FIRST_TOKEN="${FIRST_TOKEN:-150ms}"
TOKENS_PER_SECOND="${TOKENS_PER_SECOND:-1000}"
CODEX_VERSION="${CODEX_VERSION:-$(node -p "require('$repo/editors/interop/package.json').dependencies['@openai/codex']")}"
RUN_TIMEOUT=120
case "$TOOL" in read_file | shell) ;; *) echo "peer.sh: TOOL=$TOOL: want read_file or shell" >&2; exit 2 ;; esac

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
simbin="$hearth"
if [ -n "${HEARTH_BIN:-}" ]; then hearth="$HEARTH_BIN"; fi

key="sk-peer-$RANDOM$RANDOM"
"$simbin" sim -v --deflate "$DEFLATE" --addr 127.0.0.1:0 --api-key "$key" --handshake "$HANDSHAKE" --per-request "$PER_REQUEST" \
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
read_prompt="read the data sim:calls=$CALLS sim:tool=read_file sim:args={\"path\":\"data.txt\"}"
shell_prompt="read the data sim:calls=$CALLS sim:tool=shell sim:args={\"command\":\"cat\\u0020data.txt\"}"
codex_prompt="read the data sim:calls=$CALLS sim:tool=exec_command sim:args={\"cmd\":\"cat\\u0020data.txt\"}"
if [ "$TOOL" = shell ]; then hearth_prompt="$shell_prompt"; else hearth_prompt="$read_prompt"; fi
# Codex's commands in its sandbox that writes the workspace, as hearth's full-auto; read-only for reads.
codex_sandbox=read-only
if [ "$TOOL" = shell ]; then codex_sandbox=workspace-write; fi

# --- Codex's configuration: the WebSocket provider, as editors/interop/codex-sim.test.mjs ------
codex_home="$scratch/codex-home"
mkdir -p "$codex_home" "$scratch/home"
cat >"$codex_home/config.toml" <<EOF
model = "sim-model"
model_provider = "hearth-sim"
approval_policy = "never"
sandbox_mode = "$codex_sandbox"
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
if [ "$TOOL" = shell ] && [ -n "${SHELL_NETWORK:-}" ]; then
  cold_env+=("HEARTH_SHELL_NETWORK=$SHELL_NETWORK")
  warm_env+=("HEARTH_SHELL_NETWORK=$SHELL_NETWORK")
fi
mkdir -p "$scratch/cold" "$scratch/warm"

# A cold ask must not find or leave a daemon: --no-daemon where ask has it (ask that starts a
# daemon itself), else ask runs one in its process when no socket answers.
# (The help is read whole first: grep -q stops reading at its match, and under pipefail the
# writer's SIGPIPE would make the test fail at random, and cold asks start a daemon.)
cold_args=()
ask_help="$("$hearth" ask --help 2>&1 || true)"
if [[ "$ask_help" == *-no-daemon* ]]; then cold_args=(--no-daemon); fi
# The shell runs without asking in full-auto: commands run, sandboxed, with no terminal to ask on.
mode_args=()
if [ "$TOOL" = shell ]; then mode_args=(--mode full-auto); fi

run_codex() {
  timeout "$RUN_TIMEOUT" "${codex_env[@]}" node "$codex_js" exec --strict-config --skip-git-repo-check --ephemeral \
    --color never --cd "$ws" "$codex_prompt" </dev/null
}
run_cold() { timeout "$RUN_TIMEOUT" "${cold_env[@]}" "$hearth" ask "${cold_args[@]}" "${mode_args[@]}" --cwd "$ws" "$hearth_prompt" </dev/null; }
run_warm() { timeout "$RUN_TIMEOUT" "${warm_env[@]}" "$hearth" ask "${mode_args[@]}" --cwd "$ws" "$hearth_prompt" </dev/null; }
run_cold_read() { timeout "$RUN_TIMEOUT" "${cold_env[@]}" "$hearth" ask "${cold_args[@]}" --cwd "$ws" "$read_prompt" </dev/null; }
run_warm_read() { timeout "$RUN_TIMEOUT" "${warm_env[@]}" "$hearth" ask --cwd "$ws" "$read_prompt" </dev/null; }

# What each client's answer says once it has run the rollout: the simulator's "I called TOOL N
# time(s)", then the last result, which holds the file.
declare -A expect=([codex]="I called exec_command $CALLS time" [cold]="I called $TOOL $CALLS time" [warm]="I called $TOOL $CALLS time"
  [cold_read]="I called read_file $CALLS time" [warm_read]="I called read_file $CALLS time")

# time_ms NAME: runs run_NAME, checks it finished the rollout, prints its wall time in ms.
time_ms() {
  local name="$1" out="$scratch/$1.out" t0 t1
  t0=$(date +%s%N)
  if ! "run_$name" >"$out" 2>&1; then die "$name failed: $(tail -20 "$out")"; fi
  t1=$(date +%s%N)
  grep -q "${expect[$name]}" "$out" || die "$name did not finish the rollout: $(tail -20 "$out")"
  grep -q "the quick brown fox" "$out" || die "$name: no file in the last result: $(tail -20 "$out")"
  if [ "${#cold_args[@]}" -gt 0 ] && [ -S "$scratch/cold/hearth.sock" ]; then
    die "a cold ask left a daemon on $scratch/cold/hearth.sock: the cold runs would not be cold"
  fi
  echo $(((t1 - t0) / 1000000))
}

# run_stats FROM TO: from the simulator's log lines FROM to TO-1 (one run's), the time the cost
# model charged the generating requests (ms), then the run's own time per tool round trip (ms,
# one per round trip: a request's arrival less the answer of the response it chains on, both
# generated — the run's CALLS tool round trips; none when the client chained no request).
run_stats() {
  sed -n "$1,$(($2 - 1))p" "$scratch/sim.log" | awk '
    /^request / && / generate=- / {
      for (i = 2; i <= NF; i++) { k = substr($i, 1, index($i, "=") - 1); f[k] = substr($i, index($i, "=") + 1) }
      charged += f["modelled_us"]
      if (f["prev"] in answered) gaps = gaps sprintf(" %.2f", (f["at_us"] - answered[f["prev"]]) / 1000)
      answered[f["outcome"]] = f["answered_us"]
    }
    END { printf "%.1f%s\n", charged / 1000, gaps }'
}

# run_wire FROM TO: the wire bytes the client sent and received in the requests of the simulator's
# log lines FROM to TO-1, each request's share of its connection: from the previous answer on it
# to its own.
run_wire() {
  sed -n "$1,$(($2 - 1))p" "$scratch/sim.log" | awk '
    /^request / { for (i = 2; i <= NF; i++) { k = substr($i, 1, index($i, "=") - 1); f[k] = substr($i, index($i, "=") + 1) }; s += f["wire_in"]; r += f["wire_out"] }
    END { print s + 0, r + 0 }'
}

# --- the warm daemon: hearth serve, holding the workspace after one ask -----------------------
"${warm_env[@]}" "$hearth" serve >"$scratch/serve.log" 2>&1 &
pids+=($!)
wait_for test -S "$scratch/warm/hearth.sock" || die "hearth serve did not start: $(cat "$scratch/serve.log")"
time_ms warm >/dev/null # opens the workspace in the daemon (untimed)
time_ms codex >/dev/null # Codex's first run (untimed): its binary and caches, as hearth's warm-up run
names=(codex cold warm)
if [ "$TOOL" = shell ]; then
  names+=(cold_read warm_read)
  time_ms warm_read >/dev/null
  # hearth's shell runs sandboxed: the helper sets no_new_privs for Landlock; full-auto's commands
  # have a network namespace of their own unless SHELL_NETWORK=on.
  probe="sim:calls=1 sim:tool=shell sim:args={\"command\":\"grep\\u0020NoNewPrivs\\u0020/proc/self/status;readlink\\u0020/proc/self/ns/net\"}"
  timeout "$RUN_TIMEOUT" "${warm_env[@]}" "$hearth" ask "${mode_args[@]}" --cwd "$ws" "$probe" </dev/null >"$scratch/probe.out" 2>&1 ||
    die "the sandbox probe failed: $(tail -20 "$scratch/probe.out")"
  grep -Eq 'NoNewPrivs:[[:space:]]*1' "$scratch/probe.out" || die "hearth's shell did not run sandboxed: $(tail -20 "$scratch/probe.out")"
  if grep -Fqx "$(readlink /proc/self/ns/net)" "$scratch/probe.out"; then sandbox_net="the host's network"; else sandbox_net="a network namespace of its own (no network)"; fi
fi

# --- the rounds ------------------------------------------------------------------------------
declare -A label=([codex]=codex [cold]="hearth cold" [warm]="hearth warm" [cold_read]="hearth cold read_file" [warm_read]="hearth warm read_file")
if [ "$TOOL" = shell ]; then label[cold]="hearth cold shell"; label[warm]="hearth warm shell"; fi
declare -A times=() ownrt=() outside=() sent=() recv=() wire=()
runs=() # NAME:WALL_MS:FIRST_LOG_LINE, in the order they ran
n="${#names[@]}"
header="round"
for name in "${names[@]}"; do header+="  ${label[$name]// /_}_ms"; done
echo "$header"
for r in $(seq "$ROUNDS"); do
  declare -A t=()
  for i in $(seq 0 $((n - 1))); do
    name="${names[$(((i + r) % n))]}"
    from=$(($(wc -l <"$scratch/sim.log") + 1))
    t[$name]="$(time_ms "$name")"
    times[$name]+="${t[$name]} "
    runs+=("$name:${t[$name]}:$from")
  done
  row="$(printf '%5d' "$r")"
  for name in "${names[@]}"; do row+="$(printf "  %$((${#label[$name]} + 3))d" "${t[$name]}")"; done
  echo "$row"
done
sleep 0.2 # the last answer's log line

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Each run's own time per round trip and its wall less the time charged (its log lines end where
# the next run's begin).
end=$(($(wc -l <"$scratch/sim.log") + 1))
for i in "${!runs[@]}"; do
  IFS=: read -r name wall from <<<"${runs[$i]}"
  to="$end"
  if [ $((i + 1)) -lt "${#runs[@]}" ]; then to="${runs[$((i + 1))]##*:}"; fi
  read -r charged gaps <<<"$(run_stats "$from" "$to")"
  [ -z "$gaps" ] || ownrt[$name]+="$(echo "$gaps" | median) "
  outside[$name]+="$(awk -v w="$wall" -v c="$charged" 'BEGIN {printf "%.1f", w - c}') "
  read -r ws wr <<<"$(run_wire "$from" "$to")"
  sent[$name]+="$ws "
  recv[$name]+="$wr "
  wire[$name]+="$((ws + wr)) "
done

declare -A med=() medrt=() medout=() medwire=() medsent=() medrecv=()
for name in "${names[@]}"; do
  med[$name]="$(echo "${times[$name]}" | median)"
  medwire[$name]="$(echo "${wire[$name]}" | median)"
  medsent[$name]="$(echo "${sent[$name]}" | median)"
  medrecv[$name]="$(echo "${recv[$name]}" | median)"
  medrt[$name]="$(echo "${ownrt[$name]:-}" | median)"
  medout[$name]="$(echo "${outside[$name]}" | median)"
done
echo
line="median ms:"
for name in "${names[@]}"; do line+=" ${label[$name]} ${med[$name]},"; done
echo "${line%,}"
line="hearth/codex wall time:"
for name in "${names[@]:1}"; do line+="$(awk -v h="${med[$name]}" -v c="${med[codex]}" -v l="${label[$name]#hearth }" 'BEGIN {printf " %s %.2f×,", l, h / c}')"; done
echo "${line%,}"
line="own time per tool round trip, median ms:"
for name in "${names[@]}"; do line+=" ${label[$name]} $(awk -v m="${medrt[$name]}" 'BEGIN {if (m == "-") print m; else printf "%.1f", m}'),"; done
echo "${line%,}"
line="wire bytes per rollout, median KiB (sent + received):"
for name in "${names[@]}"; do line+="$(awk -v b="${medwire[$name]}" -v s="${medsent[$name]}" -v r="${medrecv[$name]}" -v l="${label[$name]}" 'BEGIN {printf " %s %.1f (%.1f + %.1f),", l, b / 1024, s / 1024, r / 1024}')"; done
echo "${line%,}"
line="hearth/codex wire bytes (sent):"
for name in "${names[@]:1}"; do line+="$(awk -v h="${medwire[$name]}" -v c="${medwire[codex]}" -v hs="${medsent[$name]}" -v cs="${medsent[codex]}" -v l="${label[$name]#hearth }" 'BEGIN {printf " %s %.2f× (%.2f×),", l, h / c, hs / cs}')"; done
echo "${line%,}"
if [ "$TOOL" = shell ]; then
  for k in cold warm; do
    awk -v s="${medrt[$k]}" -v r="${medrt[${k}_read]}" -v os="${medout[$k]}" -v oread="${medout[${k}_read]}" -v c="$CALLS" -v k="$k" \
      'BEGIN {printf "hearth %s: own time per sandboxed command %.1f ms (shell round trip less read_file round trip); from the walls less the time charged, %.1f ms\n", k, s - r, (os - oread) / c}'
  done
  echo "hearth's shell: full-auto, sandboxed (no_new_privs, Landlock), commands in $sandbox_net"
fi
echo
if [ "$TOOL" = shell ]; then
  echo "rollout: $CALLS calls, one per response, each reading a 4 KiB file (codex: exec_command \`cat data.txt\`; hearth: shell \`cat data.txt\`, and read_file for the read_file runs), then the answer; $ROUNDS interleaved rounds"
else
  echo "rollout: $CALLS read calls of a 4 KiB file, one per response, then the answer; $ROUNDS interleaved rounds"
fi
echo "cost model (hearth sim): $cost; permessage-deflate: $DEFLATE"
echo "requests the simulator answered (all runs): $(grep -c 'transport=ws' "$scratch/sim.log") over WebSocket, $(grep -c 'transport=http' "$scratch/sim.log") over HTTP"
echo "codex: @openai/codex $codex_version (codex exec, WebSocket provider); hearth: ${HEARTH_BIN:-$(cd "$repo" && git rev-parse --short HEAD)}${cold_args[*]:+, cold with ${cold_args[*]}}"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
