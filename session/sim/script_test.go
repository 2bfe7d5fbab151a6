package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func raws(t *testing.T, items ...any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func toolsJSON(t *testing.T, tools ...any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlanHeuristics(t *testing.T) {
	both := toolsJSON(t, fnTool("read_file"), fnTool("list_dir"))
	codex := toolsJSON(t, fnTool("shell"), map[string]any{"type": "custom", "name": "apply_patch"}, map[string]any{"type": "web_search"})
	cases := []struct {
		name  string
		text  any // string content or parts
		tools json.RawMessage
		call  string
		args  string
		text2 string
	}{
		{"read path", "please read `main.go`.", both, "read_file", `{"path":"main.go"}`, ""},
		{"read nested path", "Read docs/a b", both, "read_file", `{"path":"docs/a"}`, ""},
		{"read dot dot", "read ..", both, "read_file", `{"path":".."}`, ""},
		{"read quoted", `read "x.txt",`, both, "read_file", `{"path":"x.txt"}`, ""},
		{"list", "list the directory", both, "list_dir", `{"path":"."}`, ""},
		{"files", "which FILES are here?", both, "list_dir", `{"path":"."}`, ""},
		{"already is not read", "already done", both, "", "", "You said: already done"},
		{"no tool offered", "read main.go", toolsJSON(t, fnTool("list_dir")), "", "", "You said: read main.go"},
		{"codex tools", "list files", codex, "", "", "You said: list files"},
		{"no tools", "hello", nil, "", "", "You said: hello"},
		{"plain string content", "hi", nil, "", "", "You said: hi"},
		{"tokens", "sim:tokens=4", nil, "", "", "tok0 tok1 tok2 tok3"},
		{"tokens in chunks", "sim:tokens=4 sim:chunk=3", nil, "", "", "tok0 tok1 tok2 tok3"},
		{"calls default tool", "sim:calls=2", both, "read_file", `{"path":"."}`, ""},
		{"calls named tool and args", `sim:calls=1 sim:tool=grep sim:args={"q":1,"r":[2]}`, both, "grep", `{"q":1,"r":[2]}`, ""},
		{"calls bad args", `sim:calls=1 sim:args={oops`, both, "read_file", `{"path":"."}`, ""},
		{"calls without any tool", "sim:calls=1", nil, "", "", "You said: sim:calls=1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var msg any = userMsg(tc.text.(string))
			if tc.name == "plain string content" {
				msg = map[string]any{"role": "user", "content": tc.text}
			}
			p := planTurn(raws(t, map[string]any{"type": "message", "role": "user", "content": "earlier"}, msg), tc.tools, true)
			if p.callName != tc.call || p.callArgs != tc.args || p.text != tc.text2 {
				t.Fatalf("plan %+v, want call %q %s text %q", p, tc.call, tc.args, tc.text2)
			}
		})
	}
}

func TestPlanCountsOutputsOfTheCurrentTurnOnly(t *testing.T) {
	tools := toolsJSON(t, fnTool("read_file"))
	call := func(id string) map[string]any {
		return map[string]any{"type": "function_call", "call_id": id, "name": "read_file", "arguments": "{}"}
	}
	out := func(id, text string) map[string]any {
		return map[string]any{"type": "function_call_output", "call_id": id, "output": text}
	}
	old := []any{userMsg("sim:calls=1"), call("c0"), out("c0", "old"), map[string]any{"type": "reasoning", "summary": []any{}}}
	// A new turn with the same directive starts counting again.
	p := planTurn(raws(t, append(old, userMsg("sim:calls=2"), call("c1"), out("c1", "r1"))...), tools, true)
	if p.callName != "read_file" {
		t.Fatalf("after 1 of 2 outputs: %+v", p)
	}
	long := make([]string, 30)
	for i := range long {
		long[i] = fmt.Sprintf("line %d", i)
	}
	items := append(old, userMsg("sim:calls=2"), call("c1"), out("c1", "r1"), call("c2"),
		map[string]any{"type": "function_call_output", "call_id": "c2", "output": []any{map[string]any{"type": "input_text", "text": strings.Join(long, "\n")}}})
	p = planTurn(raws(t, items...), tools, true)
	want := "I called read_file 2 time(s). Last result:\n" + strings.Join(long[:20], "\n") + "\n[the simulator quotes the first 20 of the result's 30 lines]"
	if p.callName != "" || p.text != want {
		t.Fatalf("after 2 of 2 outputs: %+v", p)
	}
}

// sim:parallel=K makes up to K calls per response, never more than the
// calls left, and one at a time when the request turns parallel calls off.
func TestParallelCalls(t *testing.T) {
	tools := toolsJSON(t, fnTool("read_file"))
	msg := map[string]any{"type": "message", "role": "user", "content": "sim:calls=5 sim:parallel=3"}
	items := []any{msg}
	for i, want := range []int{3, 2} {
		p := planTurn(raws(t, items...), tools, true)
		if p.callName != "read_file" || p.calls != want {
			t.Fatalf("response %d: %+v, want %d calls", i, p, want)
		}
		for j := range p.calls {
			id := fmt.Sprintf("c%d-%d", i, j)
			items = append(items, map[string]any{"type": "function_call", "call_id": id, "name": "read_file", "arguments": "{}"},
				map[string]any{"type": "function_call_output", "call_id": id, "output": "x"})
		}
	}
	if p := planTurn(raws(t, items...), tools, true); p.callName != "" {
		t.Fatalf("after 5 outputs: %+v", p)
	}
	if p := planTurn(raws(t, msg), tools, false); p.calls != 1 {
		t.Fatalf("parallel_tool_calls false: %d calls", p.calls)
	}
}

func TestSplitWordsConcatenatesExactly(t *testing.T) {
	for _, s := range []string{"", "one", "You said: hi", "  lead", "trail  ", "a\nb\n\nc", "héllo wörld ", "I called x 1 time(s). Last result:\nl1\nl2"} {
		parts := splitWords(s)
		if strings.Join(parts, "") != s {
			t.Fatalf("%q split into %q", s, parts)
		}
		for _, p := range parts {
			if strings.TrimSpace(p) == "" {
				t.Fatalf("%q: whitespace-only delta in %q", s, parts)
			}
		}
	}
	if got := splitWords("tok0 tok1 tok2"); len(got) != 3 || got[1] != " tok1" {
		t.Fatalf("deltas %q", got)
	}
	if got := splitRunes("äöüabcdefghijklmn", 12); len(got) != 2 || strings.Join(got, "") != "äöüabcdefghijklmn" {
		t.Fatalf("rune chunks %q", got)
	}
}

// TestFunctionCallScript drives sim:calls=3 over four chained responses, feeding outputs back.
func TestFunctionCallScript(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	tools := []any{fnTool("read_file"), fnTool("list_dir")}
	input := []any{userMsg(`sim:calls=3 sim:tool=list_dir sim:args={"path":"src"}`)}
	prev := ""
	for i := 1; i <= 3; i++ {
		req := map[string]any{"tools": tools, "input": input}
		if prev != "" {
			req["previous_response_id"] = prev
		}
		evs := c.create(req)
		r := completed(t, evs)
		if len(r.Output) != 2 { // sim-model reasons: a reasoning item, then the call
			t.Fatalf("response %d has %d output items", i, len(r.Output))
		}
		var item outItem
		if err := json.Unmarshal(r.Output[1], &item); err != nil {
			t.Fatal(err)
		}
		if item.Type != "function_call" || item.Name != "list_dir" || item.Arguments != `{"path":"src"}` ||
			!strings.HasPrefix(item.ID, "fc_") || !strings.HasPrefix(item.CallID, "call_") || item.Status != "completed" {
			t.Fatalf("response %d item %s", i, r.Output[1])
		}
		var args strings.Builder
		var done string
		for _, e := range evs {
			switch e.Type {
			case "response.function_call_arguments.delta":
				args.WriteString(e.Delta)
			case "response.function_call_arguments.done":
				done = e.Arguments
			case "response.output_text.delta":
				t.Fatalf("response %d streamed text", i)
			}
		}
		if args.String() != item.Arguments || done != item.Arguments {
			t.Fatalf("argument deltas %q done %q, item %q", args.String(), done, item.Arguments)
		}
		prev = r.ID
		input = []any{map[string]any{"type": "function_call_output", "call_id": item.CallID,
			"output": fmt.Sprintf("result %d\nsecond line", i)}}
	}
	evs := c.create(map[string]any{"tools": tools, "input": input, "previous_response_id": prev})
	completed(t, evs)
	if got, want := textOf(evs), "I called list_dir 3 time(s). Last result:\nresult 3\nsecond line"; got != want {
		t.Fatalf("final text %q, want %q", got, want)
	}
	if recs := waitRecs(t, srv, 4); len(recs[3].Input) != 1 || recs[3].PreviousResponseID != prev {
		t.Fatalf("last record %+v", recs[3])
	}
}

func TestHeuristicsOverWebSocket(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	tools := []any{fnTool("read_file"), fnTool("list_dir")}
	r := completed(t, c.create(map[string]any{"tools": tools, "input": []any{userMsg("read go.mod please")}}))
	var item outItem
	_ = json.Unmarshal(r.Output[len(r.Output)-1], &item)
	if item.Name != "read_file" || item.Arguments != `{"path":"go.mod"}` {
		t.Fatalf("read: %s", r.Output)
	}
	evs := c.create(map[string]any{"tools": tools, "previous_response_id": r.ID, "input": []any{
		map[string]any{"type": "function_call_output", "call_id": item.CallID, "output": "module x"}}})
	if got := textOf(evs); got != "I called read_file 1 time(s). Last result:\nmodule x" {
		t.Fatalf("answer %q", got)
	}
	r = completed(t, c.create(map[string]any{"tools": tools, "input": "list the files"}))
	_ = json.Unmarshal(r.Output[len(r.Output)-1], &item)
	if item.Name != "list_dir" || item.Arguments != `{"path":"."}` {
		t.Fatalf("list: %s", r.Output)
	}
}

// sim:steps makes its calls in order, one per response, the session ID
// the last output gave in place of "$session", then answers.
func TestPlanSteps(t *testing.T) {
	tools := toolsJSON(t, fnTool("exec_command"), fnTool("write_stdin"))
	prompt := userMsg(`sim:steps=[["exec_command",{"cmd":"python3\u0020-i","tty":true}],["write_stdin",{"session_id":"$session","chars":"print(6*7)\n"}]]`)
	call := func(id, name string) map[string]any {
		return map[string]any{"type": "function_call", "call_id": id, "name": name, "arguments": "{}"}
	}
	out := func(id, text string) map[string]any {
		return map[string]any{"type": "function_call_output", "call_id": id, "output": text}
	}
	p := planTurn(raws(t, prompt), tools, true)
	if p.callName != "exec_command" || p.callArgs != `{"cmd":"python3\u0020-i","tty":true}` {
		t.Fatalf("first step: %+v", p)
	}
	items := []any{prompt, call("c1", "exec_command"), out("c1", "Chunk ID: ab12cd\nProcess running with session ID 1001\nOutput:\n>>> ")}
	p = planTurn(raws(t, items...), tools, true)
	if p.callName != "write_stdin" || p.callArgs != `{"session_id":1001,"chars":"print(6*7)\n"}` {
		t.Fatalf("second step: %+v", p)
	}
	items = append(items, call("c2", "write_stdin"), out("c2", "Process running with session ID 1001\nOutput:\n42\n"))
	if p = planTurn(raws(t, items...), tools, true); p.callName != "" || !strings.Contains(p.text, "42") {
		t.Fatalf("after the steps: %+v", p)
	}
	if p = planTurn(raws(t, userMsg(`sim:steps=nope`)), tools, true); p.callName != "" {
		t.Fatalf("bad steps: %+v", p)
	}
}
