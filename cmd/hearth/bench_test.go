package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// hearth bench's flags reach the bench: --modes runs only the modes it
// names, in the report's order, and the cost model's and the turn's flags
// are those the JSON report states. (Package bench tests the measuring.)
func TestBenchFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	args := []string{"bench", "--steps", "2", "--runs", "1", "--file-kb", "1",
		"--handshake", "2ms", "--per-request", "1ms", "--per-input-kb", "100us", "--first-token", "1ms",
		"--tokens-per-second", "20000", "--json", "--modes", "ws-incremental-warm, http-chained"}
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Steps  int                `json:"steps"`
		Runs   int                `json:"runs"`
		FileKB int                `json:"file_kb"`
		Cost   map[string]float64 `json:"cost"`
		Modes  []struct {
			Key string `json:"key"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	var keys []string
	for _, m := range rep.Modes {
		keys = append(keys, m.Key)
	}
	if !slices.Equal(keys, []string{"http-chained", "ws-incremental-warm"}) {
		t.Errorf("modes run: %v, want http-chained and ws-incremental-warm", keys)
	}
	want := map[string]float64{"handshake_ms": 2, "per_request_ms": 1, "per_input_kb_ms": 0.1, "first_token_ms": 1, "tokens_per_second": 20000}
	if rep.Steps != 2 || rep.Runs != 1 || rep.FileKB != 1 || !maps.Equal(rep.Cost, want) {
		t.Errorf("report header: steps %d, runs %d, file %d KiB, cost %v; want 2, 1, 1, %v", rep.Steps, rep.Runs, rep.FileKB, rep.Cost, want)
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--steps", "0"}, {"--plot-steps", "5,x"}, {"--per-request", "-1ms"}, {"extra"}, {"--modes", "ws-full,nope"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"bench"}, args...), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

// TestBenchDefaultsArePeers keeps hearth bench and bench/peer.sh on one cost
// model: sim.ReferenceCost is hearth bench's default, and peer.sh's defaults
// (shell, for hearth sim's flags) must say the same.
func TestBenchDefaultsArePeers(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "bench", "peer.sh"))
	if err != nil {
		t.Fatal(err)
	}
	defaults := make(map[string]string)
	for _, line := range strings.Split(string(script), "\n") {
		name, rest, ok := strings.Cut(line, `="${`)
		if !ok || !strings.HasPrefix(rest, name+":-") || !strings.HasSuffix(rest, `}"`) {
			continue
		}
		defaults[name] = strings.TrimSuffix(strings.TrimPrefix(rest, name+":-"), `}"`)
	}
	ref := sim.ReferenceCost()
	for name, want := range map[string]time.Duration{
		"HANDSHAKE": ref.Handshake, "PER_REQUEST": ref.PerRequest, "PER_INPUT_KB": ref.PerInputKB, "FIRST_TOKEN": ref.FirstToken,
	} {
		got, err := time.ParseDuration(defaults[name])
		if err != nil || got != want {
			t.Errorf("peer.sh: %s defaults to %q, sim.ReferenceCost says %v", name, defaults[name], want)
		}
	}
	if got := defaults["TOKENS_PER_SECOND"]; got != strconv.FormatFloat(ref.TokensPerSecond, 'g', -1, 64) {
		t.Errorf("peer.sh: TOKENS_PER_SECOND defaults to %q, sim.ReferenceCost says %g", got, ref.TokensPerSecond)
	}

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bench", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("bench --help: exit %d: %s", code, errb.String())
	}
	// hearth bench's own defaults, as its help prints them.
	for flag, want := range map[string]string{
		"handshake": ref.Handshake.String(), "per-request": ref.PerRequest.String(), "per-input-kb": ref.PerInputKB.String(),
		"first-token": ref.FirstToken.String(), "tokens-per-second": strconv.FormatFloat(ref.TokensPerSecond, 'g', -1, 64),
	} {
		_, after, ok := strings.Cut(out.String(), "--"+flag+" ")
		lines := strings.SplitN(after, "\n", 3)
		if !ok || len(lines) < 2 || !strings.HasSuffix(lines[1], "(default "+want+")") {
			t.Errorf("bench --%s does not default to %s (sim.ReferenceCost): %q", flag, want, lines[:min(2, len(lines))])
		}
	}
}
