package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseEvent checks the parser of one server frame, as read from the
// WebSocket or from one SSE data block: it never panics; it returns either
// an error or an event, never both or neither; an event comes from a JSON
// object, has the non-empty type that object names; and apiError, on any event, never panics and carries the
// nested error object's fields when there is one (WebSocket), the flat ones
// when there is not (SSE), and the status either way.
//
//	go test ./session -run '^$' -fuzz FuzzParseEvent -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzParseEvent.
func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`))
	f.Add([]byte(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"not found","param":"previous_response_id"}}`))
	f.Add([]byte(`{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,"sequence_number":3}`))
	f.Add([]byte(`{"sequence_number":1}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		orig := bytes.Clone(frame)
		e, err := parseEvent(frame, 1<<30)
		if (e == nil) == (err == nil) {
			t.Fatalf("parseEvent(%q) = %v, %v: want exactly one of an event and an error", frame, e, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "server frame ") {
				t.Fatalf("parseEvent(%q) error %q does not say it is about the server frame", frame, err)
			}
			return
		}
		if !bytes.Equal(frame, orig) {
			t.Fatalf("parseEvent modified its input: %q, was %q", frame, orig)
		}
		trimmed := bytes.TrimSpace(frame)
		if !json.Valid(frame) || len(trimmed) == 0 || trimmed[0] != '{' {
			t.Fatalf("parseEvent accepted %q, which is not a JSON object", frame)
		}
		if e.Type == "" {
			t.Fatalf("parseEvent(%q) returned an event with no type", frame)
		}
		// The type as a plain decode reads it (same field matching rules).
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(frame, &head); err != nil || head.Type != e.Type {
			t.Fatalf("parseEvent(%q) type %q, a plain decode reads %q (%v)", frame, e.Type, head.Type, err)
		}
		// Every field as encoding/json decodes it, when it can (the
		// streaming parse keeps values compact).
		var ref Event
		if json.Unmarshal(frame, &ref) == nil {
			sameEvent(t, frame, e, &ref)
		}

		ae := e.apiError()
		if ae == nil {
			t.Fatalf("apiError of %q is nil", frame)
		}
		want := APIError{Status: e.Status, Code: e.Code, Message: e.Message, Param: e.Param}
		if n := e.Error; n != nil {
			want = APIError{Status: e.Status, Type: n.Type, Code: n.Code, Message: n.Message, Param: n.Param}
		}
		if *ae != want {
			t.Fatalf("apiError of %q = %+v, want %+v", frame, *ae, want)
		}
		msg := ae.Error()
		if !strings.HasPrefix(msg, "responses API error") || (ae.Message != "" && !strings.Contains(msg, ae.Message)) ||
			(ae.Code != "" && !strings.Contains(msg, ae.Code)) {
			t.Fatalf("APIError %+v reads %q: want the code and the message", *ae, msg)
		}
	})
}

// sameEvent fails unless e, the stream parser's, holds what ref, the
// encoding/json decode of frame, does; kept JSON values compact.
func sameEvent(t *testing.T, frame []byte, e, ref *Event) {
	t.Helper()
	compact := func(b []byte) string {
		if b == nil {
			return "<nil>"
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return "invalid: " + string(b)
		}
		return buf.String()
	}
	type flat struct {
		Type, StreamID, Delta, Code, Message, Param string
		Seq                                         string
		Status, SummaryIndex                        int
		Error                                       string
		Item                                        string
		Response                                    string
	}
	view := func(e *Event) flat {
		f := flat{Type: e.Type, StreamID: e.StreamID, Delta: e.Delta, Code: e.Code, Message: e.Message, Param: e.Param,
			Status: e.Status, SummaryIndex: e.SummaryIndex, Item: compact(e.Item)}
		if len(e.Item) > itemKeep {
			f.Item = "<dropped>"
		}
		if e.Seq != nil {
			f.Seq = fmt.Sprint(*e.Seq)
		}
		if e.Error != nil {
			f.Error = fmt.Sprintf("%+v", *e.Error)
		}
		if r := e.Response; r != nil {
			var out []string
			for _, it := range r.Output {
				out = append(out, compact(it))
			}
			f.Response = fmt.Sprintf("%s %s %v %+v %+v %+v %q", r.ID, r.Status, r.Output == nil, r.Error, r.IncompleteDetails, r.Usage, out)
		}
		return f
	}
	got, want := view(e), view(ref)
	if want.Item == "<dropped>" {
		got.Item = want.Item
	}
	if got != want {
		t.Fatalf("parseEvent(%q):\n got %+v\nwant %+v (encoding/json)", frame, got, want)
	}
}
