package daemon

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
)

// Each stored item shape replays as the update the SDK would build for it,
// whether it goes through the spliced fast path or the decoding one.
func TestReplayNotificationShapes(t *testing.T) {
	long := strings.Repeat("0123456789", 1000) // over the 8 KiB an editor is shown
	tricky := "quote \" backslash \\ tab \t newline \n <html> & \u2028 é \x01"
	enc := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	text := func(kind, s string) *acp.SessionUpdate {
		switch kind {
		case "user":
			u := acp.UpdateUserMessageText(s)
			return &u
		case "agent":
			u := acp.UpdateAgentMessageText(s)
			return &u
		}
		u := acp.UpdateAgentThoughtText(s)
		return &u
	}
	result := func(st acp.ToolCallStatus, s string) *acp.SessionUpdate {
		u := acp.UpdateToolCall("c1", acp.WithUpdateStatus(st), acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(s))}))
		return &u
	}
	withImage := func(u *acp.SessionUpdate, im acp.ContentBlock) *acp.SessionUpdate {
		u.ToolCallUpdate.Content = append(u.ToolCallUpdate.Content, acp.ToolContent(im))
		return u
	}
	cases := []struct {
		item string
		want *acp.SessionUpdate // nil: nothing shown
	}{
		{`{"type":"message","role":"user","content":"plain"}`, text("user", "plain")},
		{`{"type":"message","role":"user","content":` + enc(tricky) + `}`, text("user", tricky)},
		{`{"type":"message","role":"user","content":[{"type":"input_text","text":` + enc(tricky) + `}]}`, text("user", tricky)},
		{` { "type" : "message" , "role" : "assistant" , "content" : [ { "type" : "output_text" , "text" : "spaced" } ] } `, text("agent", "spaced")},
		{`{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","annotations":[],"text":"a"},{"type":"output_text","text":"b"}]}`, text("agent", "ab")},
		{`{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}`, nil},
		{`{"type":"message","role":"user","content":""}`, nil},
		{`{"type":"message","role":"user","content":[]}`, nil},
		{`{"type":"message","role":"developer","content":"AGENTS.md"}`, nil},
		{`{"type":"reasoning","summary":[{"type":"summary_text","text":"one"},{"type":"summary_text","text":"two"}],"encrypted_content":"` + long + `"}`, text("thought", "one\n\ntwo")},
		{`{"type":"reasoning","summary":[],"encrypted_content":"x"}`, nil},
		{`{"type":"function_call_output","call_id":"c1","output":` + enc(tricky) + `}`, result(acp.ToolCallStatusCompleted, tricky)},
		{`{"type":"function_call_output","call_id":"c1","output":"error: no such file"}`, result(acp.ToolCallStatusFailed, "error: no such file")},
		{`{"type":"function_call_output","call_id":"c1","output":` + enc(long) + `}`, result(acp.ToolCallStatusCompleted, long[:8<<10]+"\n…")},
		{`{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"x"},{"type":"input_text","text":"y"}]}`, result(acp.ToolCallStatusCompleted, "x\ny")},
		{`{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"a.png: PNG image"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]}`,
			withImage(result(acp.ToolCallStatusCompleted, "a.png: PNG image"), acp.ImageBlock("iVBORw0KGgo=", "image/png"))},
		{`{"type":"function_call_output","call_id":"c1","output":{"not":"a list"}}`, result(acp.ToolCallStatusCompleted, "")},
		{`{"type":"custom_tool_call_output","call_id":"c1","output":` + enc(tricky) + `}`, result(acp.ToolCallStatusCompleted, tricky)},
		{`{"type":"mystery","content":"x"}`, nil},
		{`not json`, nil},
		{`{"type":"message","role":"user","content":"unterminated}`, nil},
	}
	for _, c := range cases {
		got, ok := replayNotification("ses_1", json.RawMessage(c.item))
		if c.want == nil {
			if ok {
				t.Errorf("%.60s: shown as %s, want nothing", c.item, got)
			}
			continue
		}
		if !ok {
			t.Errorf("%.60s: not shown", c.item)
			continue
		}
		want, _ := json.Marshal(acp.SessionNotification{SessionId: "ses_1", Update: *c.want})
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Errorf("%.60s: invalid JSON %s: %v", c.item, got, err)
			continue
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%.60s:\n got %.300s\nwant %.300s", c.item, got, want)
		}
	}
}

// topFields walks exactly the members of an object, and refuses what is not
// one.
func TestTopFields(t *testing.T) {
	var keys []string
	ok := topFields([]byte(`{"a":"x\"}","b":{"c":[1,{"d":"]"}]},"e":-1.5e3,"f":true,"g":null,"h\\\"":[]}`), func(k, v []byte) {
		keys = append(keys, string(k)+"="+string(v))
	})
	want := []string{`a="x\"}"`, `b={"c":[1,{"d":"]"}]}`, `e=-1.5e3`, `f=true`, `g=null`, `h\\\"=[]`}
	if !ok || !reflect.DeepEqual(keys, want) {
		t.Fatalf("topFields = %v %q, want %q", ok, keys, want)
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":}`, `{"a":1`, `{"a":"x}`, `{"a":1 "b":2}`, `{1:2}`} {
		if topFields([]byte(bad), func(k, v []byte) {}) {
			t.Errorf("topFields accepted %q", bad)
		}
	}
}
