package session

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func items(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// The prefix rule of responses-websocket.md §4.3, case by case.
func TestPlanPrefixRule(t *testing.T) {
	conn := &wsConn{cache: map[string]string{"lane": "resp_1"}}
	other := &wsConn{cache: map[string]string{"lane": "resp_1"}}
	set := settings{Model: "m", Instructions: "i"}.key()
	base := &baseline{conn: conn, lane: "lane", settings: set,
		input: items(`{"a":1}`, `{"u":1}`), output: items(`{"o":1}`), responseID: "resp_1"}

	cases := []struct {
		name     string
		base     *baseline
		conn     *wsConn
		set      []byte
		full     []json.RawMessage
		disabled bool
		wantPrev string
		wantSend int
		reason   string
	}{
		{"extends: only the new items", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false, "resp_1", 1, ""},
		{"empty delta is allowed", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false, "resp_1", 0, ""},
		{"changed instructions → full", base, conn, settings{Model: "m", Instructions: "j"}.key(), items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false, "", 4, reasonSettings},
		{"changed tools → full", base, conn, settings{Model: "m", Instructions: "i", Tools: json.RawMessage(`[{}]`)}.key(), items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false, "", 3, reasonSettings},
		{"input not a prefix → full", base, conn, set, items(`{"a":2}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false, "", 4, reasonNotPrefix},
		{"output replaced → full", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"x":1}`, `{"u":2}`), false, "", 4, reasonNotPrefix},
		{"shorter input → full", base, conn, set, items(`{"a":1}`), false, "", 1, reasonNotPrefix},
		{"byte difference counts", base, conn, set, items(`{"a": 1}`, `{"u":1}`, `{"o":1}`), false, "", 3, reasonNotPrefix},
		{"other connection → full", base, other, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false, "", 3, reasonNewConnection},
		{"no baseline → full", nil, conn, set, items(`{"u":1}`), false, "", 1, reasonNoBaseline},
		{"disabled → full", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), true, "", 4, reasonDisabled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			send, prev, reason := plan(tc.base, tc.conn, "lane", tc.set, tc.full, tc.disabled)
			if prev != tc.wantPrev || len(send) != tc.wantSend || reason != tc.reason {
				t.Fatalf("got prev=%q send=%d reason=%q; want prev=%q send=%d reason=%q", prev, len(send), reason, tc.wantPrev, tc.wantSend, tc.reason)
			}
			if prev != "" && len(send) > 0 && string(send[0]) != string(tc.full[len(tc.full)-len(send)]) {
				t.Fatalf("delta is not the tail of the input")
			}
		})
	}
	// The server lost the response (evicted, or a failed continuation).
	conn.cache["lane"] = "resp_other"
	if _, prev, reason := plan(base, conn, "lane", set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false); prev != "" || reason != reasonNotCached {
		t.Fatalf("evicted baseline: prev=%q reason=%q", prev, reason)
	}
}

// The bytes-saved arithmetic matches encoding the full request.
func TestBytesSavedMatchesFullEncoding(t *testing.T) {
	full := items(`{"type":"message","role":"user"}`, `{"type":"function_call","call_id":"c1"}`, `{"type":"function_call_output","call_id":"c1","output":"x"}`)
	ev := createEvent{Type: "response.create", settings: settings{Model: "m"}, StreamID: "l", PreviousResponseID: "resp_abc", Input: full[2:]}
	inc, _ := marshalFrame(ev)
	ev.PreviousResponseID, ev.Input = "", full
	whole, _ := marshalFrame(ev)
	saved := -len(`,"previous_response_id":""`) - len("resp_abc")
	for _, it := range full[:2] {
		saved += len(it) + 1
	}
	if saved != len(whole)-len(inc) {
		t.Fatalf("computed %d bytes saved, encoding says %d", saved, len(whole)-len(inc))
	}
}

// The spliced frame is byte for byte the encoding/json encoding of the same
// event, whether it encodes the settings or splices their encoding, and an
// empty item is refused rather than sent as a broken frame.
func TestMarshalFrameSplicesItems(t *testing.T) {
	no := false
	sets := []settings{
		{Model: "m", Tools: json.RawMessage(`[{"type":"function"}]`)},
		{Model: "m<x>", Instructions: "be <brief> & \"exact\"\n", Tools: json.RawMessage(`[{"type":"function","name":"a"}]`), ToolChoice: "auto",
			ParallelToolCalls: true, Reasoning: &reasoning{Effort: "low", Summary: "auto"}, Include: []string{"reasoning.encrypted_content"}, PromptCacheKey: "s1"},
	}
	for _, set := range sets {
		// Items are spliced as they are (encoding/json would escape <, > and &
		// in them): these need no escaping, so the bytes must match.
		for _, in := range [][]json.RawMessage{nil, items(`{"a":1}`), items(`{"type":"message","content":"é"}`, `[1,2]`, `"s"`)} {
			for _, ev := range []createEvent{
				{Type: "response.create", settings: set, StreamID: "l", Input: in},
				{Type: "response.create", settings: set, Generate: &no, PreviousResponseID: "resp_1", Input: in, encoded: set.key()},
			} {
				got, err := marshalFrame(ev)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Input == nil {
					ev.Input = []json.RawMessage{}
				}
				want, _ := json.Marshal(ev)
				if !bytes.Equal(got, want) {
					t.Fatalf("marshalFrame:\n got %s\nwant %s", got, want)
				}
			}
		}
	}
	// An item with characters encoding/json escapes is the same JSON value.
	ev := createEvent{Type: "response.create", settings: sets[0], Input: items(`{"type":"message","content":"<b> & é"}`)}
	got, _ := marshalFrame(ev)
	want, _ := json.Marshal(ev)
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
		t.Fatalf("marshalFrame:\n got %s\nwant %s", got, want)
	}
	if _, err := marshalFrame(createEvent{Input: []json.RawMessage{nil}}); err == nil {
		t.Fatal("an empty item was encoded")
	}
}
