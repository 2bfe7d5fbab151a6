package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func decodeHTTPError(t *testing.T, resp *http.Response, status int, code string) apiErr {
	t.Helper()
	var body struct {
		Error apiErr `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decoding error body: %v", err)
	}
	if resp.StatusCode != status || body.Error.Code != code {
		t.Fatalf("HTTP %d code %q, want %d %q", resp.StatusCode, body.Error.Code, status, code)
	}
	return body.Error
}

func TestSSEStreamsTheSameEvents(t *testing.T) {
	// Without reasoning items (those: TestReasoningOverSSE).
	srv := New(Options{Reasoning: ReasoningNever})
	ts := httptest.NewServer(srv) // as a plain http.Handler
	t.Cleanup(func() { ts.Close(); srv.Close() })
	base := ts.URL + "/v1"

	resp := postResponses(t, base, map[string]any{"model": "m", "stream": true, "store": false,
		"tools": []any{fnTool("read_file")}, "input": []any{userMsg("hello there")}}, nil)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("HTTP %d %q", resp.StatusCode, ct)
	}
	sse, err := readSSE(resp)
	if err != nil {
		t.Fatalf("reading SSE: %v", err)
	}
	var evs []event
	for i, s := range sse {
		e := decode(t, s.data)
		if e.Type != s.name || e.Seq == nil || *e.Seq != i || e.StreamID != nil {
			t.Fatalf("SSE event %d: name %q data %s", i, s.name, s.data)
		}
		evs = append(evs, e)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.content_part.added", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done",
		"response.content_part.done", "response.output_item.done", "response.completed"}
	if got := types(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v", got)
	}
	r := completed(t, evs)
	if textOf(evs) != "You said: hello there" || r.Model != "m" {
		t.Fatalf("text %q model %q", textOf(evs), r.Model)
	}
	recs := waitRecs(t, srv, 1)
	if recs[0].Transport != "http" || recs[0].Conn != 0 || recs[0].Outcome != r.ID {
		t.Fatalf("record %+v", recs[0])
	}
}

func TestSSEFlatErrorMidStream(t *testing.T) {
	srv, base := newSim(t, Options{})
	srv.InjectFault(Fault{Kind: FaultRateLimit, AfterEvents: 2})
	sse, err := readSSE(postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(sse) != 3 || sse[2].name != "error" {
		t.Fatalf("events %+v", sse)
	}
	var flat map[string]any
	if err := json.Unmarshal(sse[2].data, &flat); err != nil {
		t.Fatal(err)
	}
	if flat["type"] != "error" || flat["code"] != "rate_limit_exceeded" || !strings.Contains(flat["message"].(string), "Please try again in 1.5s") {
		t.Fatalf("flat error %s", sse[2].data)
	}
	if _, nested := flat["error"]; nested {
		t.Fatalf("SSE error is nested: %s", sse[2].data)
	}
}

func TestHTTPRejections(t *testing.T) {
	srv, base := newSim(t, Options{})
	cases := []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"stream": true, "store": false, "previous_response_id": "resp_x", "input": "x"}, 400, "previous_response_not_found"},
		{map[string]any{"stream": true, "generate": false, "input": "x"}, 400, "unsupported_parameter"},
		{map[string]any{"stream": true, "stream_id": "a", "input": "x"}, 400, "unsupported_parameter"},
		{map[string]any{"stream": true, "input": 5}, 400, "invalid_type"},
	}
	for _, tc := range cases {
		decodeHTTPError(t, postResponses(t, base, tc.body, nil), tc.status, tc.code)
	}
	srv.InjectFault(Fault{Kind: FaultRateLimit})
	e := decodeHTTPError(t, postResponses(t, base, map[string]any{"stream": true, "input": "x"}, nil), 429, "rate_limit_exceeded")
	if !strings.Contains(e.Message, "Please try again in 1.5s") {
		t.Fatalf("message %q", e.Message)
	}
	recs := waitRecs(t, srv, 5)
	if recs[0].Outcome != "previous_response_not_found" || recs[4].Fault != FaultRateLimit {
		t.Fatalf("records %+v", recs)
	}
}

func TestHTTPWithoutStreamReturnsJSON(t *testing.T) {
	_, base := newSim(t, Options{})
	resp := postResponses(t, base, map[string]any{"input": "sim:tokens=3"}, nil)
	var r responseObj
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var item outItem
	if len(r.Output) == 2 { // a reasoning item, then the message
		_ = json.Unmarshal(r.Output[1], &item)
	}
	if resp.StatusCode != 200 || r.Status != "completed" || len(item.Content) != 1 || item.Content[0].Text != "tok0 tok1 tok2" {
		t.Fatalf("HTTP %d response %+v", resp.StatusCode, r)
	}
}

func TestAuth(t *testing.T) {
	srv, base := newSim(t, Options{APIKey: "sk-test"})
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"sk-test"}}} {
		_, resp, err := dialRaw(base, h)
		if err == nil || resp == nil || resp.StatusCode != 401 {
			t.Fatalf("WebSocket with %v: err %v resp %v", h, err, resp)
		}
		decodeHTTPError(t, resp, 401, "invalid_api_key")
		decodeHTTPError(t, postResponses(t, base, map[string]any{"stream": true, "input": "x"}, h), 401, "invalid_api_key")
	}
	good := http.Header{"Authorization": {"Bearer sk-test"}}
	conn, _, err := dialRaw(base, good)
	if err != nil {
		t.Fatalf("dial with the key: %v", err)
	}
	c := &client{t: t, conn: conn}
	t.Cleanup(func() { conn.Close() })
	completed(t, c.create(map[string]any{"input": "x"}))
	if resp := postResponses(t, base, map[string]any{"stream": true, "input": "x"}, good); resp.StatusCode != 200 {
		t.Fatalf("HTTP with the key: %d", resp.StatusCode)
	}
	if srv.Handshakes() != 4 {
		t.Fatalf("handshakes %d, want 4 (3 refused + 1)", srv.Handshakes())
	}
}

func TestRoutes(t *testing.T) {
	_, base := newSim(t, Options{})
	resp, err := http.Get(base + "/files")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodDelete, base+"/responses", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	// Any prefix before /responses is accepted.
	c := &client{t: t}
	c.conn, _, err = dialRaw(strings.TrimSuffix(base, "/v1")+"/openai/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	completed(t, c.create(map[string]any{"input": "x"}))
}
