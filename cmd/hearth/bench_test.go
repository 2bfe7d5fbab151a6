package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// benchShortArgs make hearth bench quick: two tool calls, small costs (not
// zero, so that the floor is not zero either).
var benchShortArgs = []string{"bench", "--steps", "2", "--runs", "2", "--file-kb", "1",
	"--handshake", "2ms", "--per-request", "1ms", "--per-input-kb", "100us", "--first-token", "1ms",
	"--tokens-per-second", "20000"}

// TestBenchShort runs hearth bench end to end, briefly, so that the command
// cannot rot: its JSON parses, every mode is there with a floor and sane
// counts, and the plot is well-formed SVG with one line per mode. No timing
// is asserted.
func TestBenchShort(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "bench.svg")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	args := append(append([]string(nil), benchShortArgs...), "--json", "--plot", plot, "--plot-steps", "1,3")
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if rep.Steps != 2 || rep.Runs != 2 || rep.FloorMethod == "" || rep.Cost["per_request_ms"] != 1.0 {
		t.Fatalf("report header %+v", rep)
	}
	modes := benchModes()
	if len(rep.Modes) != len(modes) {
		t.Fatalf("%d modes in the report, want %d", len(rep.Modes), len(modes))
	}
	for i, m := range modes {
		r := rep.Modes[i]
		req := r.Requests
		switch {
		case r.Key != m.key || r.Name != m.name:
			t.Errorf("mode %d is %q (%s), want %q", i, r.Key, r.Name, m.key)
		case r.FloorMS <= 0 || r.Turn.Median <= 0 || len(r.Turn.All) != 2 || r.Turn.P90 < r.Turn.Median:
			t.Errorf("%s: floor %v, turn %+v", r.Key, r.FloorMS, r.Turn)
		case req.Full+req.Incremental != 3 || req.Warmup != 0:
			t.Errorf("%s: requests %+v, want 3 generating ones (two calls and the answer), no warm-up in the turn", r.Key, req)
		case r.JSONBytes <= 0 || r.WireBytes <= 0 || r.Overhead <= 0:
			t.Errorf("%s: bytes %d/%d, overhead %v", r.Key, r.JSONBytes, r.WireBytes, r.Overhead)
		}
	}
	// What distinguishes the modes, in counts (not times).
	byKey := map[string]benchModeResult{}
	for _, r := range rep.Modes {
		byKey[r.Key] = r
	}
	for key, want := range map[string]benchRequests{
		"http-full": {Full: 3}, "http-chained": {Full: 1, Incremental: 2}, "ws-full": {Full: 3},
		"ws-incremental": {Full: 1, Incremental: 2}, "ws-incremental-warm": {Incremental: 3},
		"ws-drop-rewarm": {Incremental: 3}, "ws-drop-cold": {Full: 1, Incremental: 2},
	} {
		if got := byKey[key].Requests; got != want {
			t.Errorf("%s: requests %+v, want %+v", key, got, want)
		}
	}
	for key, want := range map[string]int{"http-full": 0, "ws-incremental": 1, "ws-incremental-warm": 0, "ws-drop-rewarm": 0, "ws-drop-cold": 1} {
		if got := byKey[key].Handshakes; got != want {
			t.Errorf("%s: %d handshakes in the turn, want %d", key, got, want)
		}
	}
	if f := byKey["ws-incremental-warm"].FloorMS; byKey["ws-full"].FloorMS != f || byKey["http-chained"].FloorMS != f {
		t.Errorf("the floor depends on the mode: %v %v %v", f, byKey["ws-full"].FloorMS, byKey["http-chained"].FloorMS)
	}

	if rep.Plot == nil || rep.Plot.File != plot || len(rep.Plot.Floor) != 2 || len(rep.Plot.Series) != len(modes) {
		t.Fatalf("plot %+v", rep.Plot)
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	root, lines := checkXML(t, svg)
	if root != "svg" || lines != len(modes)+1 {
		t.Fatalf("SVG root %q with %d polylines, want svg with %d (the modes and the floor)", root, lines, len(modes)+1)
	}
}

// checkXML parses doc to its end and returns its root element and the
// number of polyline elements.
func checkXML(t *testing.T, doc []byte) (root string, polylines int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return root, polylines
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "polyline" {
				polylines++
			}
		}
	}
}

// The table names every mode and says how the floor is computed.
func TestBenchTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	args := append(append([]string(nil), benchShortArgs...), "--runs", "1")
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, m := range benchModes() {
		if !strings.Contains(out.String(), m.name) {
			t.Errorf("the table has no row %q:\n%s", m.name, out.String())
		}
	}
	if !strings.Contains(out.String(), "floor: "+floorMethod) || !strings.Contains(out.String(), "per_request=1ms") {
		t.Errorf("the floor's method or the cost model is missing:\n%s", out.String())
	}
}

// --modes runs only the modes it names, in the report's order.
func TestBenchModesSelected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	args := append(append([]string(nil), benchShortArgs...), "--runs", "1", "--json", "--modes", "ws-incremental-warm, http-chained")
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	var keys []string
	for _, m := range rep.Modes {
		keys = append(keys, m.Key)
	}
	if !slices.Equal(keys, []string{"http-chained", "ws-incremental-warm"}) {
		t.Fatalf("modes run: %v, want http-chained and ws-incremental-warm", keys)
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

// The floor is the cost model applied to the minimal inputs: per_request +
// per_input_kb × KiB for each request, plus each response's recorded pacing.
func TestBenchFloorArithmetic(t *testing.T) {
	sizes := minimalInputs("hi", strings.Repeat("x", 1000), 2)
	user := len(`[{"content":[{"text":"hi","type":"input_text"}],"role":"user","type":"message"}]`)
	out := len(`[{"type":"function_call_output","call_id":"call_000000000000000000000000","output":""}]`) + 1000
	if len(sizes) != 3 || sizes[0] != user || sizes[1] != out || sizes[2] != out {
		t.Fatalf("minimal inputs %v, want [%d %d %d]", sizes, user, out, out)
	}
	cost := sim.Cost{PerRequest: 10 * time.Millisecond, PerInputKB: time.Millisecond}
	recs := []sim.Received{{OutputDelay: 5 * time.Millisecond}, {OutputDelay: 7 * time.Millisecond}}
	floor, err := benchFloor(cost, recs, []int{2048, 512})
	if want := 10*time.Millisecond + 2*time.Millisecond + 5*time.Millisecond + 10*time.Millisecond + time.Millisecond/2 + 7*time.Millisecond; err != nil || floor != want {
		t.Fatalf("floor %v (%v), want %v", floor, err, want)
	}
	if _, err := benchFloor(cost, recs, []int{1, 2, 3}); err == nil {
		t.Fatal("a turn with a request too few has a floor")
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
