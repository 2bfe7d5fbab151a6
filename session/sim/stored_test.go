package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// sseResponse posts body and returns the SSE events and the terminal event's response.
func sseResponse(t *testing.T, base string, body map[string]any) ([]event, *responseObj) {
	t.Helper()
	sse, err := readSSE(postResponses(t, base, body, nil))
	if err != nil {
		t.Fatalf("reading SSE: %v", err)
	}
	var evs []event
	for _, s := range sse {
		evs = append(evs, decode(t, s.data))
	}
	return evs, completed(t, evs)
}

// Over HTTP, store:true (or absent) keeps a response and previous_response_id continues from it
// on another connection, charged for the new input only; store:false keeps nothing.
func TestHTTPChainsStoredResponses(t *testing.T) {
	srv, base := newSim(t, Options{Reasoning: ReasoningNever})
	tools := []any{fnTool("read_file")}
	first := userMsg(`go sim:calls=2 sim:tool=read_file sim:args={"path":"a"}`)
	_, r1 := sseResponse(t, base, map[string]any{"stream": true, "tools": tools, "input": []any{first}})
	var call outItem
	if len(r1.Output) != 1 || json.Unmarshal(r1.Output[0], &call) != nil || call.Type != "function_call" {
		t.Fatalf("first response output %s", r1.Output)
	}
	out := map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "contents of a"}
	// postResponses uses a new connection per call: the store is the server's, not the connection's.
	_, r2 := sseResponse(t, base, map[string]any{"stream": true, "store": true, "tools": tools,
		"previous_response_id": r1.ID, "input": []any{out}})
	if len(r2.Output) != 1 || json.Unmarshal(r2.Output[0], &call) != nil || call.Type != "function_call" {
		t.Fatalf("second response continues the script with another call; output %s", r2.Output)
	}
	if r2.PreviousResponseID == nil || *r2.PreviousResponseID != r1.ID || r2.Usage.InputTokensDetails.CachedTokens == 0 {
		t.Fatalf("second response: previous %v usage %+v", r2.PreviousResponseID, r2.Usage)
	}
	// A store:false response is not kept.
	out2 := map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "again"}
	_, r3 := sseResponse(t, base, map[string]any{"stream": true, "store": false, "tools": tools,
		"previous_response_id": r2.ID, "input": []any{out2}})
	if r3.Output == nil || !strings.Contains(string(r3.Output[0]), "I called read_file 2 time(s)") {
		t.Fatalf("third response (two outputs in the turn) should answer: %s", r3.Output)
	}
	decodeHTTPError(t, postResponses(t, base, map[string]any{"stream": true, "previous_response_id": r3.ID,
		"input": []any{userMsg("more")}}, nil), 400, "previous_response_not_found")

	recs := waitRecs(t, srv, 4)
	outBytes, _ := json.Marshal(out)
	if recs[1].PreviousResponseID != r1.ID || recs[1].InputBytes != len(outBytes)+2 { // the input field: [item]
		t.Fatalf("chained record: previous %q input bytes %d, want %q %d", recs[1].PreviousResponseID, recs[1].InputBytes, r1.ID, len(outBytes)+2)
	}
	if recs[3].Outcome != "previous_response_not_found" {
		t.Fatalf("continuing a store:false response: outcome %q", recs[3].Outcome)
	}
}

// The store keeps the latest MaxStoredResponses: the oldest is forgotten first.
func TestResponseStoreBound(t *testing.T) {
	var s responseStore
	for i := 0; i <= MaxStoredResponses; i++ {
		s.put(newID("resp")+string(rune('a'+i%26)), nil, 0, nil)
	}
	first := s.order[0]
	s.put("resp_last", nil, 0, nil)
	if _, ok := s.lookup(first); ok || len(s.byID) != MaxStoredResponses {
		t.Fatalf("kept %d, oldest still there: %v", len(s.byID), ok)
	}
	if _, ok := s.lookup("resp_last"); !ok {
		t.Fatal("the newest response is not kept")
	}
}

// Received.OutputDelay is the cost model's pacing: FirstToken, then one gap between
// consecutive deltas ("You said: hello there" streams as four words: three gaps).
func TestOutputDelayRecorded(t *testing.T) {
	srv, base := newSim(t, Options{Reasoning: ReasoningNever,
		Cost: Cost{FirstToken: 3 * time.Millisecond, TokensPerSecond: 500}})
	evs, _ := sseResponse(t, base, map[string]any{"stream": true, "input": []any{userMsg("hello there")}})
	deltas := 0
	for _, e := range evs {
		if e.Type == "response.output_text.delta" {
			deltas++
		}
	}
	recs := waitRecs(t, srv, 1)
	want := 3*time.Millisecond + time.Duration(deltas-1)*2*time.Millisecond
	if deltas != 4 || recs[0].OutputDelay != want {
		t.Fatalf("%d deltas, OutputDelay %v, want %v", deltas, recs[0].OutputDelay, want)
	}
	if took := recs[0].AnsweredAt.Sub(recs[0].At); took < want {
		t.Fatalf("answered %v after arrival, less than the pacing %v", took, want)
	}
}

// DropConnections ends every WebSocket without a close frame.
func TestDropConnections(t *testing.T) {
	srv, base := newSim(t, Options{})
	c1, c2 := dial(t, base), dial(t, base)
	completed(t, c1.create(map[string]any{"input": "x"}))
	completed(t, c2.create(map[string]any{"input": "y"}))
	if n := srv.DropConnections(); n != 2 {
		t.Fatalf("dropped %d connections, want 2", n)
	}
	for _, c := range []*client{c1, c2} {
		if code := c.closeCode(); code != -1 && code != 1006 {
			t.Fatalf("close code %d, want an abrupt end", code)
		}
	}
}
