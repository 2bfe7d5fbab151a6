package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// shortOptions make a run quick: two tool calls, small costs (not zero, so
// that the floor is not zero either).
func shortOptions() Options {
	return Options{Steps: 2, Runs: 2, FileKB: 1, Modes: allModes(), Cost: sim.Cost{Handshake: 2 * time.Millisecond,
		PerRequest: time.Millisecond, PerInputKB: 100 * time.Microsecond, FirstToken: time.Millisecond, TokensPerSecond: 20000}}
}

// TestRunShort runs every mode, briefly, so that the bench cannot rot: its
// JSON parses, every mode is there with a floor and sane counts, and the
// plot is well-formed SVG with one line per mode. No timing is asserted.
func TestRunShort(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "bench.svg")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	o := shortOptions()
	o.JSON, o.Plot, o.PlotSteps, o.PlotRuns = true, plot, []int{1, 3}, 1
	if err := Run(ctx, o, &out); err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if rep.Steps != 2 || rep.Runs != 2 || rep.FloorMethod == "" || rep.Cost["per_request_ms"] != 1.0 {
		t.Fatalf("report header %+v", rep)
	}
	modes := allModes()
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
	byKey := map[string]modeResult{}
	for _, r := range rep.Modes {
		byKey[r.Key] = r
	}
	for key, want := range map[string]requestCounts{
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
func TestRunTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	o := shortOptions()
	o.Runs = 1
	if err := Run(ctx, o, &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range allModes() {
		if !strings.Contains(out.String(), m.name) {
			t.Errorf("the table has no row %q:\n%s", m.name, out.String())
		}
	}
	if !strings.Contains(out.String(), "floor: "+floorMethod) || !strings.Contains(out.String(), "per_request=1ms") {
		t.Errorf("the floor's method or the cost model is missing:\n%s", out.String())
	}
}

// SelectModes keeps the report's order whatever the order asked, and names
// the modes when one is unknown.
func TestSelectModes(t *testing.T) {
	modes, err := SelectModes("ws-incremental-warm, http-chained")
	if err != nil || len(modes) != 2 || modes[0].key != "http-chained" || modes[1].key != "ws-incremental-warm" {
		t.Fatalf("modes %+v, %v; want http-chained then ws-incremental-warm", modes, err)
	}
	if all, err := SelectModes(" "); err != nil || len(all) != len(allModes()) {
		t.Errorf("no keys: %d modes, %v; want all %d", len(all), err, len(allModes()))
	}
	if _, err := SelectModes("ws-full,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "ws-drop-cold") {
		t.Errorf("an unknown mode: %v", err)
	}
}

// The floor is the cost model applied to the minimal inputs: per_request +
// per_input_kb × KiB for each request, plus each response's recorded pacing.
func TestFloorArithmetic(t *testing.T) {
	sizes := minimalInputs("hi", strings.Repeat("x", 1000), 2)
	user := len(`[{"content":[{"text":"hi","type":"input_text"}],"role":"user","type":"message"}]`)
	out := len(`[{"type":"function_call_output","call_id":"call_000000000000000000000000","output":""}]`) + 1000
	if len(sizes) != 3 || sizes[0] != user || sizes[1] != out || sizes[2] != out {
		t.Fatalf("minimal inputs %v, want [%d %d %d]", sizes, user, out, out)
	}
	cost := sim.Cost{PerRequest: 10 * time.Millisecond, PerInputKB: time.Millisecond}
	recs := []sim.Received{{OutputDelay: 5 * time.Millisecond}, {OutputDelay: 7 * time.Millisecond}}
	floor, err := floorOf(cost, recs, []int{2048, 512})
	if want := 10*time.Millisecond + 2*time.Millisecond + 5*time.Millisecond + 10*time.Millisecond + time.Millisecond/2 + 7*time.Millisecond; err != nil || floor != want {
		t.Fatalf("floor %v (%v), want %v", floor, err, want)
	}
	if _, err := floorOf(cost, recs, []int{1, 2, 3}); err == nil {
		t.Fatal("a turn with a request too few has a floor")
	}
}
