package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestWarmupThenChained(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	tools := []any{fnTool("read_file")}

	warm := c.create(map[string]any{"model": "gpt-test", "instructions": "be brief", "tools": tools,
		"input": []any{userMsg("hi there")}, "generate": false})
	if got := types(warm); !reflect.DeepEqual(got, []string{"response.created", "response.completed"}) {
		t.Fatalf("warm-up events %v", got)
	}
	wr := completed(t, warm)
	if !strings.HasPrefix(wr.ID, "resp_") || len(wr.Output) != 0 || wr.Model != "gpt-test" {
		t.Fatalf("warm-up response id %q output %d model %q", wr.ID, len(wr.Output), wr.Model)
	}

	// An empty delta: the effective input is the warm-up's, so the script answers its message.
	evs := c.create(map[string]any{"model": "gpt-test", "instructions": "be brief", "tools": tools,
		"previous_response_id": wr.ID, "input": []any{}})
	r := completed(t, evs)
	if got := textOf(evs); got != "You said: hi there" {
		t.Fatalf("chained text %q", got)
	}
	if r.ID == wr.ID || r.PreviousResponseID == nil || *r.PreviousResponseID != wr.ID {
		t.Fatalf("chained id %q previous %v", r.ID, r.PreviousResponseID)
	}
	if r.Usage == nil || r.Usage.InputTokensDetails.CachedTokens == 0 {
		t.Fatalf("chained usage %+v: want cached tokens from the warm-up", r.Usage)
	}

	// Chain once more with a new user message, from the latest response.
	evs = c.create(map[string]any{"previous_response_id": r.ID, "input": []any{userMsg("third")}})
	completed(t, evs)
	if got := textOf(evs); got != "You said: third" {
		t.Fatalf("second chained text %q", got)
	}

	recs := waitRecs(t, srv, 3)
	if recs[0].Generate == nil || *recs[0].Generate || recs[0].Outcome != wr.ID || recs[0].Conn != 1 || recs[0].Transport != "ws" {
		t.Fatalf("warm-up record %+v", recs[0])
	}
	if recs[1].PreviousResponseID != wr.ID || recs[1].Outcome != r.ID || recs[1].ResponseID != r.ID || len(recs[1].Input) != 0 {
		t.Fatalf("chained record %+v", recs[1])
	}
	if recs[1].Instructions != "be brief" || recs[1].Model != "gpt-test" || !json.Valid(recs[1].Tools) || recs[1].Bytes != len(recs[1].Raw) {
		t.Fatalf("chained record fields %+v", recs[1])
	}
}

func TestPreviousResponseNotFound(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	evs := c.create(map[string]any{"previous_response_id": "resp_nope", "input": []any{userMsg("x")}})
	if len(evs) != 1 {
		t.Fatalf("events %v, want only the error", types(evs))
	}
	e := evs[0]
	wantError(t, e, 400, "previous_response_not_found")
	if e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != "previous_response_id" ||
		!strings.Contains(e.Error.Message, "resp_nope") || e.StreamID != nil {
		t.Fatalf("error event %s", e.raw)
	}
	// A request-scoped error does not close the socket.
	completed(t, c.create(map[string]any{"input": []any{userMsg("still here")}}))
}

func TestCacheHoldsOnlyLatestAndEvictsOnFailure(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	r1 := completed(t, c.create(map[string]any{"input": []any{userMsg("one")}}))
	r2 := completed(t, c.create(map[string]any{"input": []any{userMsg("two")}}))
	wantError(t, c.create(map[string]any{"previous_response_id": r1.ID, "input": []any{}})[0], 400, "previous_response_not_found")
	// That failed continuation evicted the lane's cached response: r2 is gone too.
	wantError(t, c.create(map[string]any{"previous_response_id": r2.ID, "input": []any{}})[0], 400, "previous_response_not_found")

	r3 := completed(t, c.create(map[string]any{"input": []any{userMsg("three")}}))
	completed(t, c.create(map[string]any{"previous_response_id": r3.ID, "input": []any{}}))
}

func TestNewConnectionHasEmptyCache(t *testing.T) {
	srv, base := newSim(t, Options{})
	r := completed(t, dial(t, base).create(map[string]any{"input": []any{userMsg("one")}}))
	c2 := dial(t, base)
	wantError(t, c2.create(map[string]any{"previous_response_id": r.ID, "input": []any{}})[0], 400, "previous_response_not_found")
	recs := waitRecs(t, srv, 2)
	if recs[0].Conn != 1 || recs[1].Conn != 2 || srv.Handshakes() != 2 {
		t.Fatalf("conns %d %d handshakes %d", recs[0].Conn, recs[1].Conn, srv.Handshakes())
	}
}

func TestEventSequence(t *testing.T) {
	_, base := newSim(t, Options{Model: "sim-x", Reasoning: ReasoningNever}) // reasoning: TestReasoningItemAndSummary
	c := dial(t, base)
	evs := c.create(map[string]any{"input": []any{userMsg("hello simulated world")}})
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if got := types(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for i, e := range evs {
		if e.Seq == nil || *e.Seq != i {
			t.Fatalf("event %d (%s) sequence_number %v", i, e.Type, e.Seq)
		}
		if e.StreamID != nil {
			t.Fatalf("default-lane event carries stream_id: %s", e.raw)
		}
	}
	const text = "You said: hello simulated world"
	if textOf(evs) != text || evs[9].Text != text {
		t.Fatalf("deltas %q done %q", textOf(evs), evs[9].Text)
	}
	r := completed(t, evs)
	if r.Object != "response" || r.Status != "completed" || r.Model != "sim-x" || len(r.Output) != 1 {
		t.Fatalf("response %+v", r)
	}
	var item outItem
	if err := json.Unmarshal(r.Output[0], &item); err != nil {
		t.Fatal(err)
	}
	if item.Type != "message" || !strings.HasPrefix(item.ID, "msg_") || item.Role != "assistant" || item.Status != "completed" ||
		len(item.Content) != 1 || item.Content[0].Type != "output_text" || item.Content[0].Text != text || item.Content[0].Annotations == nil {
		t.Fatalf("output item %s", r.Output[0])
	}
	if u := r.Usage; u == nil || u.InputTokens == 0 || u.OutputTokens != (itemsBytes(r.Output)+3)/4 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Fatalf("usage %+v", r.Usage)
	}
	// A second response numbers its events from 0 again.
	if evs := c.create(map[string]any{"input": "plain string input"}); *evs[0].Seq != 0 || textOf(evs) != "You said: plain string input" {
		t.Fatalf("second response: first seq %d text %q", *evs[0].Seq, textOf(evs))
	}
}

// background is rejected; stream is accepted and ignored, as the real API
// does for OpenAI's own clients (Codex sends stream:true on every frame).
func TestRejectsBackgroundAcceptsStream(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	evs := c.create(map[string]any{"background": true, "input": "x"})
	wantError(t, evs[0], 400, "unsupported_parameter")
	if evs[0].Error.Type != "invalid_request_error" || *evs[0].Error.Param != "background" {
		t.Fatalf("background: %s", evs[0].raw)
	}
	completed(t, c.create(map[string]any{"stream": true, "input": "x"}))
	completed(t, c.create(map[string]any{"stream": true, "generate": false, "input": "x"}))
	// Unknown and ignored fields are accepted.
	completed(t, c.create(map[string]any{"input": "x", "reasoning": map[string]any{"effort": "low"}, "include": []any{},
		"tool_choice": "auto", "parallel_tool_calls": false, "prompt_cache_key": "k", "text": map[string]any{},
		"service_tier": "auto", "metadata": map[string]any{}, "client_metadata": map[string]any{}, "store": false, "x_unknown": 1}))
}

func TestUnknownEventTypeKeepsConnection(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	c.send(map[string]any{"type": "session.update", "input": "x"})
	wantError(t, c.read(), 400, "unknown_event_type")
	completed(t, c.create(map[string]any{"input": "x"}))
}

func TestClientProtocolErrorsCloseTheConnection(t *testing.T) {
	srv, base := newSim(t, Options{})
	cases := []struct {
		name string
		mt   int
		data string
		code int
	}{
		{"binary", websocket.BinaryMessage, `{"type":"response.create"}`, websocket.CloseUnsupportedData},
		{"no type", websocket.TextMessage, `{"input":"x"}`, websocket.CloseProtocolError},
		{"type not a string", websocket.TextMessage, `{"type":5}`, websocket.CloseProtocolError},
		{"not JSON", websocket.TextMessage, `hello`, websocket.CloseProtocolError},
	}
	for i, tc := range cases {
		c := dial(t, base)
		if err := c.conn.WriteMessage(tc.mt, []byte(tc.data)); err != nil {
			t.Fatal(err)
		}
		if got := c.closeCode(); got != tc.code {
			t.Fatalf("%s: close code %d, want %d", tc.name, got, tc.code)
		}
		if recs := waitRecs(t, srv, i+1); recs[i].Outcome != OutcomeProtocolError {
			t.Fatalf("%s: outcome %q", tc.name, recs[i].Outcome)
		}
	}
}

func TestAnswersPings(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	pong := make(chan string, 1)
	c.conn.SetPongHandler(func(data string) error { pong <- data; return nil })
	if err := c.conn.WriteMessage(websocket.PingMessage, []byte("p1")); err != nil {
		t.Fatal(err)
	}
	completed(t, c.create(map[string]any{"input": "x"})) // reading processes the pong
	select {
	case got := <-pong:
		if got != "p1" {
			t.Fatalf("pong %q", got)
		}
	default:
		t.Fatal("no pong before the response's events")
	}
}

func TestMaxAgeAnswersNextCreate(t *testing.T) {
	srv, base := newSim(t, Options{MaxAge: 1}) // 1 ns: already over the limit at the first create
	c := dial(t, base)
	evs := c.create(map[string]any{"stream_id": "a", "input": "x"})
	wantError(t, evs[0], 400, "websocket_connection_limit_reached")
	if evs[0].StreamID != nil {
		t.Fatalf("connection-wide error carries stream_id: %s", evs[0].raw)
	}
	if code := c.closeCode(); code != websocket.CloseNormalClosure {
		t.Fatalf("close code %d", code)
	}
	if recs := waitRecs(t, srv, 1); recs[0].Outcome != "websocket_connection_limit_reached" {
		t.Fatalf("outcome %q", recs[0].Outcome)
	}
}

func TestMaxAgePushedOnIdleSocket(t *testing.T) {
	_, base := newSim(t, Options{MaxAge: 30_000_000, PushAgeLimit: true}) // 30 ms
	c := dial(t, base)
	wantError(t, c.read(), 400, "websocket_connection_limit_reached") // nothing sent: pushed
	if code := c.closeCode(); code != websocket.CloseNormalClosure {
		t.Fatalf("close code %d", code)
	}
}

func TestPermessageDeflate(t *testing.T) {
	_, base := newSim(t, Options{})
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: ioTimeout}
	conn, resp, err := d.Dial(wsURL(base), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ext := resp.Header.Get("Sec-Websocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q", ext)
	}
	c := &client{t: t, conn: conn}
	if got := textOf(c.create(map[string]any{"input": strings.Repeat("compressible ", 200)})); !strings.HasPrefix(got, "You said: compressible") {
		t.Fatalf("text %q", got)
	}
}

// sim:chunk groups the answer's words into deltas, and OnDelta hears each
// one as it is written, with its lane.
func TestChunkedDeltasAndOnDelta(t *testing.T) {
	type heard struct{ lane, delta string }
	got := make(chan heard, 16)
	_, base := newSim(t, Options{Reasoning: ReasoningNever, OnDelta: func(conn int, lane, delta string, at time.Time) {
		if at.IsZero() {
			t.Error("OnDelta without a time")
		}
		got <- heard{lane, delta}
	}})
	c := dial(t, base)
	evs := c.create(map[string]any{"stream_id": "l1", "input": []any{userMsg("sim:tokens=5 sim:chunk=2")}})
	completed(t, evs)
	var deltas []string
	for _, e := range evs {
		if e.Type == "response.output_text.delta" {
			deltas = append(deltas, e.Delta)
		}
	}
	want := []string{"tok0 tok1", " tok2 tok3", " tok4"}
	if !reflect.DeepEqual(deltas, want) {
		t.Fatalf("deltas %q, want %q", deltas, want)
	}
	for _, w := range want {
		if h := <-got; h.lane != "l1" || h.delta != w {
			t.Fatalf("OnDelta heard %+v, want lane l1 and %q", h, w)
		}
	}
}
