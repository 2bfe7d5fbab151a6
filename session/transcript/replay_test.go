package transcript

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The replay form drops an item's top-level id and status (a web search's
// keeps its status), keeps the rest
// byte for byte in its order, and leaves out a reasoning item with nothing
// sealed; made in place, it is the item's own bytes.
func TestReplayForm(t *testing.T) {
	cases := []struct{ item, want string }{
		{`{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","text":"a \"id\":1 }"}],"role":"assistant"}`,
			`{"type":"message","content":[{"type":"output_text","text":"a \"id\":1 }"}],"role":"assistant"}`},
		{`{"type":"function_call","call_id":"c","name":"n","arguments":"{\"id\":\"x\"}","id":"fc_1","status":"completed"}`,
			`{"type":"function_call","call_id":"c","name":"n","arguments":"{\"id\":\"x\"}"}`},
		{` { "status" : "completed" , "type":"message", "content" : [ {"id":1} ] } `, `{"type":"message","content" : [ {"id":1} ]}`},
		{`{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"sealed"}`, `{"type":"reasoning","summary":[],"encrypted_content":"sealed"}`},
		{`{"id":"rs_1","type":"reasoning","summary":[]}`, ``},
		{`{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":null}`, ``},
		{`{"type":"function_call_output","call_id":"c","output":"ok"}`, `{"type":"function_call_output","call_id":"c","output":"ok"}`},
		// The hosted web search's item keeps its status: the API requires it beside the action.
		{`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q","status":1}}`,
			`{"type":"web_search_call","status":"completed","action":{"type":"search","query":"q","status":1}}`},
		{`{"status":"completed","action":{"type":"search"},"type":"web_search_call"}`,
			`{"status":"completed","action":{"type":"search"},"type":"web_search_call"}`},
		{`{"id":"x"}`, `{}`},
		{`["id","status"]`, `["id","status"]`},
		{`{"id":"x",}`, `{"id":"x",}`},
	}
	for _, tc := range cases {
		form, ok := ReplayForm(json.RawMessage(tc.item))
		if ok != (tc.want != "") || (ok && string(form) != tc.want) {
			t.Errorf("ReplayForm(%s) = %s, %v; want %s", tc.item, form, ok, tc.want)
		}
		own := []byte(tc.item)
		in, inOK := ReplayInPlace(own)
		if inOK != ok || string(in) != string(form) {
			t.Errorf("ReplayInPlace(%s) = %s, %v; want %s, %v", tc.item, in, inOK, form, ok)
		}
		if inOK && len(in) > 0 && &in[0] != &own[0] {
			t.Errorf("ReplayInPlace(%s) made a copy", tc.item)
		}
		if ok && json.Valid([]byte(tc.item)) && !json.Valid(form) {
			t.Errorf("ReplayForm(%s) = %s: not JSON", tc.item, form)
		}
	}
	plain := json.RawMessage(`{"type":"message","role":"user","content":"hi"}`)
	if form, _ := ReplayForm(plain); !bytes.Equal(form, plain) || &form[0] != &plain[0] {
		t.Errorf("an item without id or status was copied or changed: %s", form)
	}
}
