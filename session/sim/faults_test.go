package sim

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestFaultRefuseUpgrade(t *testing.T) {
	for _, status := range []int{426, 429, 500, 401} {
		srv, base := newSim(t, Options{})
		srv.InjectFault(Fault{Kind: FaultRefuseUpgrade, Status: status, Count: 2})
		for i := 0; i < 2; i++ {
			_, resp, err := dialRaw(base, nil)
			if err == nil || resp == nil || resp.StatusCode != status {
				t.Fatalf("status %d, attempt %d: err %v resp %v", status, i, err, resp)
			}
			resp.Body.Close()
		}
		completed(t, dial(t, base).create(map[string]any{"input": "x"}))
		if srv.Handshakes() != 3 || srv.PendingFaults() != 0 {
			t.Fatalf("status %d: handshakes %d pending %d", status, srv.Handshakes(), srv.PendingFaults())
		}
		// A refused upgrade does not affect HTTP: the 426 fallback works.
		if resp := postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil); resp.StatusCode != 200 {
			t.Fatalf("HTTP after refusal: %d", resp.StatusCode)
		}
	}
}

func TestFaultCloseMidResponse(t *testing.T) {
	for _, code := range []int{websocket.CloseNormalClosure, websocket.CloseInternalServerErr, CloseAbrupt} {
		srv, base := newSim(t, Options{})
		srv.InjectFault(Fault{Kind: FaultCloseMidResponse, AfterEvents: 3, CloseCode: code})
		c := dial(t, base)
		c.send(map[string]any{"type": "response.create", "input": "a few words here"})
		for i := 0; i < 3; i++ {
			if e := c.read(); isTerminal(e.Type) {
				t.Fatalf("code %d: terminal event %s before the close", code, e.Type)
			}
		}
		want := code
		if code == CloseAbrupt {
			want = websocket.CloseAbnormalClosure // gorilla's name for EOF without a close frame
		}
		if got := c.closeCode(); got != want {
			t.Fatalf("close code %d, want %d", got, want)
		}
		if recs := waitRecs(t, srv, 1); recs[0].Outcome != OutcomeFaultClosed || recs[0].Fault != FaultCloseMidResponse || recs[0].ResponseID == "" {
			t.Fatalf("record %+v", recs[0])
		}
		// The fault is used up: a new connection works.
		completed(t, dial(t, base).create(map[string]any{"input": "x"}))
	}
}

func TestFaultCloseMidResponseHTTP(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultCloseMidResponse, AfterEvents: 2})
	sse, err := readSSE(postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil))
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(sse) != 2 {
		t.Fatalf("events %d err %v, want 2 events then an unexpected EOF", len(sse), err)
	}
	if recs := waitRecs(t, srv, 1); recs[0].Outcome != OutcomeFaultClosed {
		t.Fatalf("outcome %q", recs[0].Outcome)
	}
}

func TestFaultCloseAfterResponse(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultCloseAfterResponse, CloseCode: websocket.CloseInternalServerErr})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"input": "x"}))
	if got := c.closeCode(); got != websocket.CloseInternalServerErr {
		t.Fatalf("close code %d", got)
	}
}

func TestFaultJunkFrames(t *testing.T) {
	for _, kind := range []FaultKind{FaultBinaryFrame, FaultMalformedFrame} {
		srv, base := newSim(t, Options{})
		srv.InjectFault(Fault{Kind: kind, AfterEvents: 1})
		c := dial(t, base)
		c.send(map[string]any{"type": "response.create", "input": "x"})
		c.read()
		mt, data, err := c.next()
		if err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		switch kind {
		case FaultBinaryFrame:
			if mt != websocket.BinaryMessage {
				t.Fatalf("frame type %d, want binary", mt)
			}
		case FaultMalformedFrame:
			if mt != websocket.TextMessage || json.Valid(data) {
				t.Fatalf("frame %d %q, want malformed text", mt, data)
			}
		}
		// The stream carries on (a client is expected to drop it) with unbroken sequence numbers.
		if e := c.read(); *e.Seq != 1 {
			t.Fatalf("%v: event after the junk has sequence_number %d", kind, *e.Seq)
		}
		if e := last(c.untilTerminal()); e.Type != "response.completed" {
			t.Fatalf("%v: terminal %s", kind, e.raw)
		}
	}
}

func TestFaultMalformedSSE(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultMalformedFrame})
	sse, err := readSSE(postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil))
	if err != nil || len(sse) < 2 {
		t.Fatalf("%d events, err %v", len(sse), err)
	}
	if json.Valid(sse[0].data) {
		t.Fatalf("first event is valid JSON: %s", sse[0].data)
	}
}

func TestFaultRateLimitWS(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultRateLimit, Match: func(r Received) bool { return r.StreamID == "b" }})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"stream_id": "a", "input": "x"})) // not matched
	evs := c.create(map[string]any{"stream_id": "b", "input": "x"})
	wantError(t, evs[0], 429, "rate_limit_exceeded")
	if len(evs) != 1 || evs[0].lane() != "b" || !strings.Contains(evs[0].Error.Message, "Please try again in 1.5s") {
		t.Fatalf("events %v: %s", types(evs), evs[0].raw)
	}
	completed(t, c.create(map[string]any{"stream_id": "b", "input": "x"})) // used up
	if recs := waitRecs(t, srv, 3); recs[0].Fault != FaultNone || recs[1].Fault != FaultRateLimit || recs[1].Outcome != "rate_limit_exceeded" {
		t.Fatalf("records %+v", recs)
	}
}

func TestFaultRateLimitMidStreamEvictsParent(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	r := completed(t, c.create(map[string]any{"input": "x"}))
	srv.InjectFault(Fault{Kind: FaultRateLimit, AfterEvents: 2})
	evs := c.create(map[string]any{"previous_response_id": r.ID, "input": []any{}})
	if got := types(evs); len(got) != 3 || got[2] != "error" || *evs[2].Seq != 2 {
		t.Fatalf("events %v", got)
	}
	wantError(t, evs[2], 429, "rate_limit_exceeded")
	wantError(t, c.create(map[string]any{"previous_response_id": r.ID, "input": []any{}})[0], 400, "previous_response_not_found")
}

func TestFaultResponseFailed(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultResponseFailed})
	c := dial(t, base)
	evs := c.create(map[string]any{"input": "x"})
	if got := types(evs); len(got) != 3 || got[2] != "response.failed" {
		t.Fatalf("events %v", got)
	}
	if r := evs[2].Response; r.Status != "failed" || r.Error == nil || r.Error.Code != "server_error" {
		t.Fatalf("failed response %s", evs[2].raw)
	}
	// A failed response cannot be continued.
	wantError(t, c.create(map[string]any{"previous_response_id": evs[2].Response.ID, "input": []any{}})[0], 400, "previous_response_not_found")
	if recs := waitRecs(t, srv, 1); recs[0].Outcome != OutcomeFailed {
		t.Fatalf("outcome %q", recs[0].Outcome)
	}
}

func TestFaultResponseIncomplete(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultResponseIncomplete})
	c := dial(t, base)
	evs := c.create(map[string]any{"input": "sim:tokens=6"})
	e := last(evs)
	if e.Type != "response.incomplete" || e.Response.Status != "incomplete" || e.Response.IncompleteDetails == nil ||
		e.Response.IncompleteDetails.Reason != "max_output_tokens" {
		t.Fatalf("terminal %s", e.raw)
	}
	if got := textOf(evs); got != "tok0 tok1 tok2" {
		t.Fatalf("truncated text %q", got)
	}
	if recs := waitRecs(t, srv, 1); recs[0].Outcome != OutcomeIncomplete {
		t.Fatalf("outcome %q", recs[0].Outcome)
	}
}

func TestFaultDropCache(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	r := completed(t, c.create(map[string]any{"input": "x"}))
	srv.InjectFault(Fault{Kind: FaultDropCache})
	wantError(t, c.create(map[string]any{"previous_response_id": r.ID, "input": []any{}})[0], 400, "previous_response_not_found")
}

func TestFaultConnectionLimit(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	completed(t, c.create(map[string]any{"input": "x"}))
	srv.InjectFault(Fault{Kind: FaultConnectionLimit})
	wantError(t, c.create(map[string]any{"input": "x"})[0], 400, "websocket_connection_limit_reached")
	if code := c.closeCode(); code != websocket.CloseNormalClosure {
		t.Fatalf("close code %d", code)
	}
	completed(t, dial(t, base).create(map[string]any{"input": "x"}))
}

func TestFaultSilence(t *testing.T) {
	const hold = 80 * time.Millisecond
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultSilence, Delay: hold, AfterEvents: 2})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": "x"})
	c.read()
	c.read()
	start := time.Now()
	c.read()
	if held := time.Since(start); held < hold {
		t.Fatalf("third event after %v, want at least %v", held, hold)
	}
	c.untilTerminal()
	// Used up: the next response is not held.
	start = time.Now()
	completed(t, c.create(map[string]any{"input": "x"}))
	if d := time.Since(start); d >= hold {
		t.Fatalf("second response took %v", d)
	}
}

func TestFaultCountAndOrder(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultResponseFailed, Count: 2})
	srv.InjectFault(Fault{Kind: FaultResponseIncomplete})
	c := dial(t, base)
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, last(c.create(map[string]any{"input": "x"})).Type)
	}
	want := "response.failed response.failed response.incomplete response.completed"
	if strings.Join(got, " ") != want {
		t.Fatalf("terminals %v, want %s", got, want)
	}
	srv.InjectFault(Fault{Kind: FaultResponseFailed})
	srv.ClearFaults()
	if srv.PendingFaults() != 0 || last(c.create(map[string]any{"input": "x"})).Type != "response.completed" {
		t.Fatal("ClearFaults left a fault")
	}
}

func TestFaultsOnWarmupAndValidation(t *testing.T) {
	srv, base := newSim(t, Options{ReadLimit: 4096})
	srv.InjectFault(Fault{Kind: FaultResponseFailed})
	c := dial(t, base)
	// A request that fails validation does not use the fault up...
	wantError(t, c.create(map[string]any{"background": true, "input": "x"})[0], 400, "unsupported_parameter")
	// ...the warm-up after it gets it.
	evs := c.create(map[string]any{"generate": false, "input": "x"})
	if got := types(evs); len(got) != 2 || got[1] != "response.failed" {
		t.Fatalf("warm-up events %v", got)
	}
	if recs := waitRecs(t, srv, 2); recs[0].Fault != FaultNone || recs[1].Fault != FaultResponseFailed {
		t.Fatalf("faults %v %v", recs[0].Fault, recs[1].Fault)
	}
	// Oversized input: HTTP answers 413, WebSocket closes with 1009 (message too big).
	big := map[string]any{"stream": true, "input": strings.Repeat("z", 5000)}
	if resp := postResponses(t, base, big, nil); resp.StatusCode != 413 {
		t.Fatalf("HTTP oversized body: %d", resp.StatusCode)
	}
	c.send(map[string]any{"type": "response.create", "input": strings.Repeat("z", 5000)})
	if code := c.closeCode(); code != websocket.CloseMessageTooBig {
		t.Fatalf("oversized frame: close code %d", code)
	}
}
