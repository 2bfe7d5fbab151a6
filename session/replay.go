package session

import (
	"bytes"
	"encoding/json"
)

// The replay form of an item is what goes back to the model as input
// (docs/ARCHITECTURE.md, "The flow of a turn"). Under store:false the server refuses any
// input item that carries the id of an earlier output item — it looks the
// id up and finds nothing — so every item drops its top-level "id" and
// "status". A reasoning item keeps its summary and encrypted_content (the
// model's sealed thinking); one without encrypted_content carries nothing
// and is left out. The transcript in the store keeps items exactly as
// received; only requests use this form, and the incremental rule compares
// replay forms.

// replayForm returns item as it is sent as input, and false when it is
// left out. Items without id or status (everything hearth writes itself)
// come back byte for byte.
func replayForm(item json.RawMessage) (json.RawMessage, bool) {
	if !mayCarry(item) {
		return item, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil || m == nil {
		return item, true // not an object: sent as is, the server says what is wrong
	}
	if bytes.Equal(m["type"], []byte(`"reasoning"`)) {
		enc, ok := m["encrypted_content"]
		if !ok || bytes.Equal(enc, []byte("null")) || bytes.Equal(enc, []byte(`""`)) {
			return nil, false
		}
	}
	_, hasID := m["id"]
	_, hasStatus := m["status"]
	if !hasID && !hasStatus {
		return item, true
	}
	delete(m, "id")
	delete(m, "status")
	b, err := json.Marshal(m)
	if err != nil {
		return item, true
	}
	return b, true
}

// mayCarry is a cheap test that item may hold an id, a status or be a
// reasoning item: most input items (user messages, tool outputs) skip the
// decode.
func mayCarry(item json.RawMessage) bool {
	return bytes.Contains(item, []byte(`"id"`)) || bytes.Contains(item, []byte(`"status"`)) ||
		bytes.Contains(item, []byte(`"reasoning"`))
}

// replayForms appends the replay forms of items to dst.
func replayForms(dst, items []json.RawMessage) []json.RawMessage {
	for _, it := range items {
		if r, ok := replayForm(it); ok {
			dst = append(dst, r)
		}
	}
	return dst
}
