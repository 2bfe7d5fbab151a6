package sim

import (
	"strings"
	"testing"
)

// A server that ignores stream_id: no echo, one FIFO lane, one cache slot per connection.
func TestLanesIgnore(t *testing.T) {
	_, base := newSim(t, Options{Lanes: LanesIgnore, Cost: Cost{TokensPerSecond: 1000}})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "stream_id": "a", "input": "first sim:tokens=5"})
	c.send(map[string]any{"type": "response.create", "stream_id": "b", "input": "second"})
	evs := c.readLanes(2)
	for _, e := range evs {
		if strings.Contains(string(e.raw), "stream_id") {
			t.Fatalf("event echoes stream_id: %s", e.raw)
		}
	}
	firstDone := indexOf(evs, "", "response.completed")
	for i, e := range evs {
		if e.Type == "response.created" && i != 0 && i < firstDone {
			t.Fatal("the second response started before the first completed")
		}
	}
	if textOf(evs[:firstDone]) != "tok0 tok1 tok2 tok3 tok4" || textOf(evs[firstDone:]) != "You said: second" {
		t.Fatalf("texts %q / %q", textOf(evs[:firstDone]), textOf(evs[firstDone:]))
	}
	// One cache slot: "b" continues the response made on "a"; an invalid name is ignored too.
	r := completed(t, c.create(map[string]any{"stream_id": "a", "input": "one"}))
	evs = c.create(map[string]any{"stream_id": "not a valid name!", "previous_response_id": r.ID, "input": []any{}})
	if textOf(evs) != "You said: one" || last(evs).StreamID != nil {
		t.Fatalf("continuation across names: %s", last(evs).raw)
	}
}

func TestLanesRefuse(t *testing.T) {
	srv, base := newSim(t, Options{Lanes: LanesRefuse})
	c := dial(t, base)
	e := c.create(map[string]any{"stream_id": "a", "input": "x"})[0]
	wantError(t, e, 400, "unknown_parameter")
	if e.StreamID != nil || *e.Error.Param != "stream_id" || e.Error.Message != "Unknown parameter: 'stream_id'." {
		t.Fatalf("refusal %s", e.raw)
	}
	completed(t, c.create(map[string]any{"input": "x"})) // the connection stays open
	if recs := waitRecs(t, srv, 2); recs[0].Outcome != "unknown_parameter" || recs[0].StreamID != "a" {
		t.Fatalf("record %+v", recs[0])
	}
}

func TestParseModes(t *testing.T) {
	for _, m := range []LaneMode{LanesOn, LanesIgnore, LanesRefuse} {
		if got, err := ParseLaneMode(m.String()); err != nil || got != m {
			t.Fatalf("lane mode %v: %v %v", m, got, err)
		}
	}
	for _, m := range []ReasoningMode{ReasoningAuto, ReasoningAlways, ReasoningNever} {
		if got, err := ParseReasoningMode(m.String()); err != nil || got != m {
			t.Fatalf("reasoning mode %v: %v %v", m, got, err)
		}
	}
	if _, err := ParseLaneMode("off"); err == nil {
		t.Fatal("ParseLaneMode accepted off")
	}
	if _, err := ParseReasoningMode("yes"); err == nil {
		t.Fatal("ParseReasoningMode accepted yes")
	}
}
