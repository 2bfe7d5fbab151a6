package session

import (
	"encoding/json"
	"testing"

	"github.com/hearthd/hearth/session/responses"
)

func items(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// The incremental rule's prefix test, case by case.
func TestPlanPrefixRule(t *testing.T) {
	conn := &fakeLink{cache: map[string]string{"lane": "resp_1"}}
	other := &fakeLink{cache: map[string]string{"lane": "resp_1"}}
	set := responses.Settings{Model: "m", Instructions: "i"}.Key()
	base := &baseline{conn: conn, lane: "lane", settings: set,
		input: items(`{"a":1}`, `{"u":1}`), output: items(`{"o":1}`), responseID: "resp_1"}

	cases := []struct {
		name     string
		base     *baseline
		conn     *fakeLink
		set      []byte
		full     []json.RawMessage
		disabled bool
		wantPrev string
		wantSend int
		reason   string
	}{
		{"extends: only the new items", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false, "resp_1", 1, ""},
		{"empty delta is allowed", base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false, "resp_1", 0, ""},
		{"changed instructions → full", base, conn, responses.Settings{Model: "m", Instructions: "j"}.Key(), items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false, "", 4, reasonSettings},
		{"changed tools → full", base, conn, responses.Settings{Model: "m", Instructions: "i", Tools: json.RawMessage(`[{}]`)}.Key(), items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false, "", 3, reasonSettings},
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
			send, prev, reason := plan(tc.base, tc.conn, tc.set, tc.full, tc.disabled)
			if prev != tc.wantPrev || len(send) != tc.wantSend || reason != tc.reason {
				t.Fatalf("got prev=%q send=%d reason=%q; want prev=%q send=%d reason=%q", prev, len(send), reason, tc.wantPrev, tc.wantSend, tc.reason)
			}
			if prev != "" && len(send) > 0 && string(send[0]) != string(tc.full[len(tc.full)-len(send)]) {
				t.Fatalf("delta is not the tail of the input")
			}
		})
	}
	// A fork: a new lane of the connection continues the response another
	// lane holds, sending only the new items.
	parent := &baseline{conn: &fakeLink{cache: map[string]string{"parent": "resp_9", "lane": "resp_1"}}, lane: "parent", settings: set,
		input: items(`{"a":1}`, `{"u":1}`), output: items(`{"o":1}`), responseID: "resp_9"}
	if send, prev, reason := plan(parent, parent.conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`, `{"u":2}`), false); prev != "resp_9" || len(send) != 1 || reason != "" {
		t.Fatalf("fork on another lane: prev=%q send=%d reason=%q", prev, len(send), reason)
	}
	// The server lost the response (evicted, or a failed continuation).
	conn.cache["lane"] = "resp_other"
	if _, prev, reason := plan(base, conn, set, items(`{"a":1}`, `{"u":1}`, `{"o":1}`), false); prev != "" || reason != reasonNotCached {
		t.Fatalf("evicted baseline: prev=%q reason=%q", prev, reason)
	}
}

// fakeLink is the part of a connection plan reads: the responses the
// server holds per lane.
type fakeLink struct{ cache map[string]string }

func (*fakeLink) Transport() string           { return "ws" }
func (l *fakeLink) Cached(lane string) string { return l.cache[lane] }
func (*fakeLink) Alive() bool                 { return true }

// The bytes-saved arithmetic matches encoding the full request.
func TestBytesSavedMatchesFullEncoding(t *testing.T) {
	full := items(`{"type":"message","role":"user"}`, `{"type":"function_call","call_id":"c1"}`, `{"type":"function_call_output","call_id":"c1","output":"x"}`)
	ev := responses.Create{Type: "response.create", Settings: responses.Settings{Model: "m"}, StreamID: "l", PreviousResponseID: "resp_abc", Input: full[2:]}
	inc, _ := ev.Frame()
	ev.PreviousResponseID, ev.Input = "", full
	whole, _ := ev.Frame()
	if saved := savedBytes("resp_abc", full[:2]); saved != len(whole)-len(inc) {
		t.Fatalf("computed %d bytes saved, encoding says %d", saved, len(whole)-len(inc))
	}
	if saved := savedBytes("resp_abc", nil); saved != 0 {
		t.Fatalf("nothing left out saved %d bytes", saved)
	}
}
