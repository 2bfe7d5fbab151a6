#!/usr/bin/env bash
# bench/shell-rt.sh — a sandboxed command's round trip through a warm daemon, beside a read's.
#
# A `hearth serve` holds a workspace; `hearth ask --mode full-auto` runs a rollout of CALLS calls
# (one per response) of its shell tool, `cat data.txt` (4 KiB), then the same rollout through
# read_file, against `hearth sim -v --per-request 20ms`. The round trip is read from the simulator's
# log: from a response's end to the arrival of the request carrying its call's output — the tool
# and the client's work around it, none of the server's. It prints the medians and the shell round
# trip less the read_file one: what a command costs beyond a read.
#
# BASE_BIN=/path/to/other/hearth runs a second daemon from that binary beside this build's, the
# rollouts of the two interleaved in each round (ABBA), for a side-by-side comparison in one run.
#
# Environment: ROUNDS (6), CALLS (10), BASE_BIN, PER_REQUEST (20ms: the simulator's time per request; peer.sh's
# cost model spaces commands 220 ms apart, and the CPUs are colder at each). Everything is in a scratch directory, removed at
# the end; nothing of the user's HEARTH_*, OPENAI_*, XDG_* or HOME is read.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
ROUNDS="${ROUNDS:-6}"
CALLS="${CALLS:-10}"
PER_REQUEST="${PER_REQUEST:-20ms}"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/hearth-shellrt.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
die() { echo "shell-rt.sh: $*" >&2; exit 1; }
wait_for() {
  local deadline=$((SECONDS + 20))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

(cd "$repo" && go build -o "$scratch/hearth" ./cmd/hearth)
declare -A bin=([this]="$scratch/hearth")
builds=(this)
if [ -n "${BASE_BIN:-}" ]; then
  bin[base]="$BASE_BIN"
  builds+=(base)
fi

key="sk-shellrt-$RANDOM$RANDOM"
"$scratch/hearth" sim -v --addr 127.0.0.1:0 --api-key "$key" --per-request "$PER_REQUEST" >"$scratch/sim.log" 2>&1 &
pids+=($!)
wait_for grep -q 'http://' "$scratch/sim.log" || die "hearth sim did not start: $(cat "$scratch/sim.log")"
base_url="$(grep -o 'http://[^ ]*/v1' "$scratch/sim.log" | head -1)"

ws="$scratch/ws"
mkdir -p "$ws" "$scratch/home"
for _ in $(seq 120); do echo "the quick brown fox jumps over it"; done >"$ws/data.txt"

env_of() { # BUILD
  echo env -i "PATH=$PATH" "HOME=$scratch/home" "TMPDIR=${TMPDIR:-/tmp}" "LANG=${LANG:-C.UTF-8}" \
    "OPENAI_BASE_URL=$base_url" "OPENAI_API_KEY=$key" HEARTH_MODEL=sim-model \
    "HEARTH_SOCKET=$scratch/$1/hearth.sock" "HEARTH_DATA_DIR=$scratch/$1/data"
}
for b in "${builds[@]}"; do
  mkdir -p "$scratch/$b"
  $(env_of "$b") "${bin[$b]}" serve >"$scratch/$b/serve.log" 2>&1 &
  pids+=($!)
done
for b in "${builds[@]}"; do
  wait_for test -S "$scratch/$b/hearth.sock" || die "$b: hearth serve did not start: $(cat "$scratch/$b/serve.log")"
done

shell_prompt="read sim:calls=$CALLS sim:tool=shell sim:args={\"command\":\"cat\\u0020data.txt\"}"
read_prompt="read sim:calls=$CALLS sim:tool=read_file sim:args={\"path\":\"data.txt\"}"
run() { # BUILD TOOL
  local out="$scratch/$1.out"
  if [ "$2" = shell ]; then
    timeout 120 $(env_of "$1") "${bin[$1]}" ask --mode full-auto --cwd "$ws" "$shell_prompt" </dev/null >"$out" 2>&1
  else
    timeout 120 $(env_of "$1") "${bin[$1]}" ask --cwd "$ws" "$read_prompt" </dev/null >"$out" 2>&1
  fi || die "$1 $2 failed: $(tail -20 "$out")"
  grep -q "I called $2 $CALLS time" "$out" || die "$1 $2 did not finish the rollout: $(tail -20 "$out")"
}

for b in "${builds[@]}"; do run "$b" shell; run "$b" read_file; done # untimed: the workspace opens, the cell starts
order=()
for b in "${builds[@]}"; do order+=("$b shell" "$b read_file"); done
if [ "${#builds[@]}" = 2 ]; then order=("this shell" "base shell" "this read_file" "base read_file" "base shell" "this shell" "base read_file" "this read_file"); fi
: >"$scratch/runs"
for _ in $(seq "$ROUNDS"); do
  for o in "${order[@]}"; do
    from=$(($(wc -l <"$scratch/sim.log") + 1))
    run $o
    echo "${o/ /-} $from" >>"$scratch/runs"
  done
done
sleep 0.2 # the last answer's log line

# Each run's round trips: a generating request's arrival less the answer of the response it chains on.
awk -v runs="$scratch/runs" '
  BEGIN { while ((getline l < runs) > 0) { split(l, f, " "); n++; name[n] = f[1]; from[n] = f[2] } }
  FNR == from[k + 1] && k < n { k++ }
  k > 0 && /^request / && / generate=- / {
    for (i = 2; i <= NF; i++) { key = substr($i, 1, index($i, "=") - 1); v[key] = substr($i, index($i, "=") + 1) }
    if ((k SUBSEP v["prev"]) in answered) print name[k], (v["at_us"] - answered[k, v["prev"]]) / 1000
    answered[k, v["outcome"]] = v["answered_us"]
  }' "$scratch/sim.log" >"$scratch/gaps"

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
for b in "${builds[@]}"; do
  s="$(awk -v k="$b-shell" '$1 == k {print $2}' "$scratch/gaps" | median)"
  r="$(awk -v k="$b-read_file" '$1 == k {print $2}' "$scratch/gaps" | median)"
  n="$(awk -v k="$b-shell" '$1 == k' "$scratch/gaps" | wc -l)"
  label="this build"
  if [ "$b" = base ]; then label="$BASE_BIN"; fi
  awk -v s="$s" -v r="$r" -v n="$n" -v l="$label" \
    'BEGIN {printf "%s: median of %d round trips: shell %.2f ms, read_file %.2f ms; shell less read_file %.2f ms\n", l, n, s, r, s - r}'
done
echo "rollout: $CALLS calls per ask, $ROUNDS rounds; hearth sim --per-request $PER_REQUEST; full-auto (sandboxed, no network)"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
