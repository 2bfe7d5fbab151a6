package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// sdkNotification is what the replay shows of an item, built the slow and
// obvious way: the item decoded whole, the update built with the SDK and
// encoded by it. The replay's own encoders must give these bytes.
func sdkNotification(r replayer, it store.Item) (json.RawMessage, bool) {
	var ri replayItem
	if json.Unmarshal(it.Data, &ri) != nil {
		return nil, false
	}
	var u acp.SessionUpdate
	var v session.ToolView
	switch {
	case ri.Type == "function_call":
		u = acp.StartToolCall(acp.ToolCallId(ri.CallID), ri.Name, acp.WithStartKind(r.kind(ri.Name)),
			acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(rawArgs(ri.Arguments)))
	case ri.Type == "function_call_output" && it.View != nil && json.Unmarshal(it.View, &v) == nil:
		text, images := toolOutput(ri.Output)
		st := acp.ToolCallStatusCompleted
		if v.Failed {
			st = acp.ToolCallStatusFailed
		}
		u = acp.UpdateToolCall(acp.ToolCallId(ri.CallID), toolResultUpdate(r.root, st, text, v, images...)...)
	case ri.Type == "function_call_output":
		text, images := toolOutput(ri.Output)
		st := acp.ToolCallStatusCompleted
		if strings.HasPrefix(text, "error:") {
			st = acp.ToolCallStatusFailed
		}
		u = acp.UpdateToolCall(acp.ToolCallId(ri.CallID), toolResultUpdate("", st, text, session.ToolView{}, images...)...)
	case ri.Type == "message" && ri.Role == "user" && hearthContext(messageText(ri.Content)):
		return nil, false // hearth's framings are not the user's words
	case ri.Type == "message" && ri.Role == "user" && messageText(ri.Content) != "":
		u = acp.UpdateUserMessageText(messageText(ri.Content))
	case ri.Type == "message" && ri.Role == "assistant" && messageText(ri.Content) != "":
		u = acp.UpdateAgentMessageText(messageText(ri.Content))
	case ri.Type == "reasoning":
		var parts []string
		for _, p := range ri.Summary {
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		if len(parts) == 0 {
			return nil, false
		}
		u = acp.UpdateAgentThoughtText(strings.Join(parts, "\n\n"))
	default:
		return nil, false
	}
	if ri.Type == "function_call" {
		return namedToolCall(r.session, u, ri.Name) // ACP 1.34's name, which the SDK lacks
	}
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(r.session), Update: u})
	return b, err == nil
}

// testReplayer replays into a workspace at /w/ork.
var testReplayer = replayer{session: "ses_1", root: "/w/ork", kind: func(name string) acp.ToolKind {
	if name == "read_file" {
		return acp.ToolKindRead
	}
	return acp.ToolKindOther
}}

// replayItems are stored items of every shape the replay meets, with the
// JSON string s in them as it is (raw, when it is a JSON string's inside)
// and as encoding/json writes it.
func replayItems(s string) []store.Item {
	enc, _ := json.Marshal(s)
	strs := []string{string(enc)}
	if json.Valid([]byte(`"` + s + `"`)) {
		strs = append(strs, `"`+s+`"`)
	}
	var items []store.Item
	add := func(data, view string) {
		it := store.Item{Data: json.RawMessage(data)}
		var head struct{ Type string }
		json.Unmarshal(it.Data, &head)
		it.Type = head.Type
		if view != "" {
			it.View = json.RawMessage(view)
		}
		items = append(items, it)
	}
	for _, str := range strs {
		add(`{"type":"message","role":"user","content":`+str+`}`, "")
		add(`{"type":"message","role":"assistant","content":[{"type":"output_text","annotations":[],"text":`+str+`}]}`, "")
		add(`{"type":"reasoning","summary":[{"type":"summary_text","text":`+str+`}],"encrypted_content":"e"}`, "")
		add(`{"type":"function_call","call_id":"c1","name":"read_file","arguments":`+str+`}`, "")
		add(`{"type":"function_call","call_id":`+str+`,"name":`+str+`,"arguments":"{}"}`, "")
		add(`{"type":"function_call_output","call_id":"c1","output":`+str+`}`, "")
		add(`{"type":"function_call_output","call_id":"c1","output":`+str+`}`, `{"title":`+str+`,"kind":"read","locations":[`+str+`,"b.go"]}`)
		add(`{"type":"function_call_output","call_id":"c1","output":"done"}`, `{"title":"Edit a","kind":"edit","locations":["a"],"diff":{"path":`+str+`,"old":`+str+`,"new":`+str+`}}`)
		add(`{"type":"function_call_output","call_id":"c1","output":`+str+`}`, `{"diff":{"path":"n.txt","new":`+str+`},"failed":true}`)
		add(`{"type":"function_call_output","call_id":"c1","output":"x"}`, `{"locations":[ `+str+` , `+str+` ]}`)
	}
	return items
}

// The replay's notifications are byte for byte the SDK's, for texts of
// every kind: plain, with what encoding/json escapes, stored in another
// encoding than encoding/json's, long enough to be clipped at or across a
// character; for arguments of every shape; for views of every shape.
func TestReplayMatchesSDK(t *testing.T) {
	long := strings.Repeat("0123456789", 900)
	texts := []string{
		"", "plain", "error: no such file", `\u0065rror: escaped`, `quote \" backslash \\ newline \n tab \t`,
		`<html> & "quotes"`, `\u003chtml\u003e \u0026`, `\/ slash`, `\u0041 \u00e9 \u001B \u001b \b \f`,
		"é \u2028 \u2029 raw", `\u2028 \u2029 escaped`, `\ud83d\ude00 pair`, `\ud83d lone`,
		long, long + "<tail>", long[:8191] + "é" + long, long[:8190] + "é" + long, long[:8191] + `\n` + long,
		long[:8191] + `\u2028` + long, long[:8191] + `\u003c` + long, "<" + long, long[:8192] + `\"`,
		`{"path":"a.txt"}`, `{\"path\":\"a.txt\"}`, `{\"b\":1,\"a\":2}`, `{\"a\": 1}`, `{\"a\":1.5,\"b\":-0,\"c\":01}`,
		`{\"n\":123456789012345678,\"m\":-12,\"z\":0,\"e\":1e3}`, `{\"a\":[1,{\"c\":null,\"b\":true}],\"d\":false}`,
		`{\"a\":1,\"a\":2}`, `{\"a\\u0062\":1}`, `{\"x\":\"<\"}`, `null`, ` null `, `\"str\"`, `[1,2]`, `not json`, `{`,
		`{ \"b\" : 1 ,\n \"a\" : [ 1 , 2 ] }`, `{\"a\":1,}`, `{\"a\":1 \"b\":2}`, `{\"a\":[1,]}`, `[1 2]`, `{\"a\"}`, `{,}`, `{}`, `[]`, `{\"\":1}`,
		`{\"é\":1,\"a\":2}`, `{\"a\":tru}`, `{\"a\":nul}`, `{\"a\":1}x`, `{\"a\":-}`, `{\"b\":{\"d\":1,\"c\":2},\"a\":0}`,
		strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100), strings.Repeat(`{\"a\":`, 70) + `1` + strings.Repeat(`}`, 70),
	}
	var items []store.Item
	for _, s := range texts {
		items = append(items, replayItems(s)...)
	}
	for _, data := range []string{
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]}`,
		`{"type":"reasoning","summary":[ { "text" : "a" } , {"text":"","type":"summary_text"} ]}`,
		`{"type":"reasoning","summary":[]}`, `{"type":"reasoning","summary":null}`, `{"type":"reasoning","summary":[{"Text":"x"}]}`,
		`{"type":"reasoning","summary":[null,{"text":"y"}]}`, `{"type":"reasoning","summary":[{"text":"a"},]}`,
		`{"type":"reasoning","summary":[{"text":1}]}`, `{"type":"reasoning","summary":"x"}`, `{"type":"reasoning","summary":[{"text":null}]}`,
		`{"type":"reasoning","summary":[{"text":"a"}],"summary":[{"text":"b"}]}`, `{"type":"reasoning","summary":[{"text":"a\u0041<"}]}`,
	} {
		items = append(items, store.Item{Type: "reasoning", Data: json.RawMessage(data)})
	}
	for _, view := range []string{
		`{"locations":[]}`, `{"locations":null}`, `{"locations":[null]}`, `{"locations":["a",]}`, `{"locations":["a" "b"]}`,
		`{"locations":"a"}`, `{"locations":[1]}`, `{"locations":["a"],"locations":["b","c"]}`, `{"title":"t","Title":"u"}`,
		`{"diff":null}`, `{"diff":{"path":"p","new":"n"},"diff":{"path":"q","new":"m"}}`, `{"diff":{"path":"p","old":"","new":"n"}}`,
		`{"diff":{"path":"p","old":null,"new":null}}`, `{"diff":{"path":"p","new":1}}`, `{"diff":{"path":"p","New":"x"}}`, `{"diff":"x"}`,
		`{"failed":false}`, `{"failed":null}`, `{"failed":1}`, `{"title":null,"kind":null}`, `{}`, `[]`, `null`, `{"title":"a"`,
	} {
		items = append(items, store.Item{Type: "function_call_output", View: json.RawMessage(view),
			Data: json.RawMessage(`{"type":"function_call_output","call_id":"c1","output":"out"}`)})
	}
	for _, it := range items {
		want, wok := sdkNotification(testReplayer, it)
		got, ok := testReplayer.notification(it)
		if ok != wok || string(got) != string(want) {
			t.Errorf("%.80s (view %.60s): %s", it.Data, it.View, differ(got, want, ok, wok))
		}
	}
}

// Fuzzed texts, stored raw and encoded, replay as the SDK shows them.
func FuzzReplayMatchesSDK(f *testing.F) {
	for _, s := range []string{"plain", `a\"b`, "<é\u2028>", `\u00e9`, `{\"a\":1}`, strings.Repeat("é", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if enc, _ := json.Marshal(s); utf8.ValidString(s) {
			for _, max := range []int{len(s), math.MaxInt} {
				if cut, ok := canonicalPrefix(enc, max); !ok || cut != len(enc) {
					t.Fatalf("json.Marshal's own encoding %s not taken as it is (up to %d bytes): %d %v", enc, max, cut, ok)
				}
			}
		}
		for _, it := range replayItems(s) {
			want, wok := sdkNotification(testReplayer, it)
			got, ok := testReplayer.notification(it)
			if ok != wok || string(got) != string(want) {
				t.Fatalf("%.80s (view %.60s): %s", it.Data, it.View, differ(got, want, ok, wok))
			}
		}
	})
}

// Views hearth stores (session.ToolView, encoded) all go through the
// replay's own encoder, not the SDK's.
func TestStoredViewsScan(t *testing.T) {
	for i, v := range []session.ToolView{
		{Title: "Read a.txt", Kind: "read", Locations: []string{"a.txt"}},
		{Title: "Edit a.txt", Kind: "edit", Locations: []string{"a.txt"}, Diff: &session.Diff{Path: "a.txt", Old: "a\n<b>\n", New: "a\n\tc\n"}},
		{Title: "Write n.txt", Diff: &session.Diff{Path: "n.txt", New: "fresh\n"}, Failed: true},
		{Failed: true},
	} {
		b, _ := json.Marshal(v)
		if _, ok := scanView(b); !ok {
			t.Errorf("view %d %s: not scanned", i, b)
		}
		it := store.Item{Type: "function_call_output", Data: json.RawMessage(`{"type":"function_call_output","call_id":"c","output":"ok"}`), View: b}
		want, _ := sdkNotification(testReplayer, it)
		if got, ok := testReplayer.notification(it); !ok || string(got) != string(want) {
			t.Errorf("view %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// copiedStrings are the strings of a stored item that its replay copies as
// they are when they are in encoding/json's form: a message's text, a tool's
// output, a view's diff.
func copiedStrings(t *testing.T, it store.Item) [][]byte {
	ri, ok := scanReplayItem(it.Data)
	if !ok {
		t.Fatalf("item %d not scanned: %.80s", it.Seq, it.Data)
	}
	var out [][]byte
	if raw := messageRaw(ri.Content); raw != nil {
		out = append(out, raw)
	}
	if len(ri.Output) > 0 && ri.Output[0] == '"' {
		out = append(out, ri.Output)
	}
	if it.View != nil {
		v, ok := scanView(it.View)
		if !ok {
			t.Fatalf("item %d: view %s not scanned", it.Seq, it.View)
		}
		for _, raw := range [][]byte{v.old, v.new} {
			if raw != nil {
				out = append(out, raw)
			}
		}
	}
	return out
}

// differ shows where got and want part.
func differ(got, want []byte, ok, wok bool) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("shown %v, want %v; they part at byte %d of %d/%d:\n got …%.160s\nwant …%.160s", ok, wok, i, len(got), len(want), got[from:], want[from:])
}

// A session made through the daemon — every tool, results with views,
// diffs, failures — replays in the SDK's bytes, without the SDK's decoding
// and encoding of each update: the texts hearth stored are copied as they
// are, and an item takes about ten allocations, where the SDK's maps take a
// hundred.
func TestReplayOfDaemonSession(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	id, _ := buildSession(t, td, 300)
	e := td.dialRaw(t)
	for _, p := range []string{
		`new sim:calls=1 sim:tool=write_file sim:args={"path":"n.txt","content":"fresh\u0020<text>\u0020&\u0020more\n"}`,
		`run sim:calls=1 sim:tool=shell sim:args={"command":"echo\u0020hi"}`,
		`bad sim:calls=1 sim:tool=read_file sim:args={"path":"missing.txt"}`,
	} {
		e.mustCall(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(p)}}, nil)
	}
	items, err := td.d.db.Items().List(context.Background(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	td.d.mu.Lock()
	w := td.d.sessions[string(id)].ws
	td.d.mu.Unlock()
	r := replayer{session: string(id), root: w.root.Path(), kind: func(name string) acp.ToolKind { return toolKind(w, name) }}
	views, diffs := 0, 0
	for _, it := range items {
		want, wok := sdkNotification(r, it)
		got, ok := r.notification(it)
		if ok != wok || string(got) != string(want) {
			t.Errorf("item %d %.80s (view %.60s): %s", it.Seq, it.Data, it.View, differ(got, want, ok, wok))
		}
		if it.View != nil {
			views++
		}
		for _, raw := range copiedStrings(t, it) {
			if cut, ok := canonicalPrefix(raw, math.MaxInt); !ok || cut != len(raw) {
				t.Errorf("item %d: %.80s not taken as stored", it.Seq, raw)
			}
		}
		if bytes.Contains(got, []byte(`"type":"diff"`)) {
			diffs++
		}
	}
	if views < len(items)/4 || diffs == 0 {
		t.Fatalf("%d items, %d with a view, %d diffs: not the session wanted", len(items), views, diffs)
	}
	allocs := testing.AllocsPerRun(5, func() {
		for _, it := range items {
			r.notification(it)
		}
	}) / float64(len(items))
	sdk := testing.AllocsPerRun(1, func() {
		for _, it := range items {
			sdkNotification(r, it)
		}
	}) / float64(len(items))
	if allocs > 16 {
		t.Errorf("%.1f allocations an item (the SDK's way: %.1f), want at most 16", allocs, sdk)
	}
	t.Logf("%d items: %.1f allocations an item, the SDK's way %.1f", len(items), allocs, sdk)
}
