package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// customTool is a custom tool of the given name taking input in the given
// format (nil: none, i.e. text).
func customTool(name string, format any) map[string]any {
	t := map[string]any{"type": "custom", "name": name, "description": "test tool"}
	if format != nil {
		t["format"] = format
	}
	return t
}

var larkFormat = map[string]any{"type": "grammar", "syntax": "lark", "definition": `start: "x"`}

// A custom tool call streams as the API's: the item added with an empty
// input, the input in deltas, custom_tool_call_input.done with the whole
// input, the item done; the response's output holds the item. The client
// continues the chain with a custom_tool_call_output under its call id, and
// the model's answer quotes it.
func TestCustomToolCallEvents(t *testing.T) {
	_, base := newSim(t, Options{Reasoning: ReasoningNever})
	c := dial(t, base)
	tools := []any{fnTool("read_file"), customTool("apply_patch", larkFormat)}
	evs := c.create(map[string]any{"tools": tools, "input": []any{userMsg("patch a.txt beta gamma")}})
	patch := patchText("a.txt", "beta", "gamma")
	var got []string
	var deltas strings.Builder
	for _, e := range evs {
		if e.Type == "response.custom_tool_call_input.delta" {
			deltas.WriteString(e.Delta)
			if len(got) > 0 && got[len(got)-1] == e.Type {
				continue
			}
		}
		got = append(got, e.Type)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.output_item.done", "response.completed"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if deltas.String() != patch || evs[len(evs)-3].Input != patch {
		t.Errorf("input deltas %q, done %q; want %q", deltas.String(), evs[len(evs)-3].Input, patch)
	}
	if added := evs[2].Item; added == nil || added.Type != "custom_tool_call" || added.Input != "" {
		t.Errorf("added item %s", evs[2].raw)
	}
	r := completed(t, evs)
	var item outItem
	if len(r.Output) != 1 || json.Unmarshal(r.Output[0], &item) != nil || item.Type != "custom_tool_call" ||
		!strings.HasPrefix(item.ID, "ctc_") || !strings.HasPrefix(item.CallID, "call_") || item.Name != "apply_patch" || item.Input != patch {
		t.Fatalf("output %s", r.Output)
	}
	if !reflect.DeepEqual(*evs[len(evs)-2].Item, item) {
		t.Errorf("output_item.done %s differs from the output", evs[len(evs)-2].raw)
	}

	next := c.create(map[string]any{"tools": tools, "previous_response_id": r.ID, "input": []any{
		map[string]any{"type": "custom_tool_call_output", "call_id": item.CallID, "output": "Applied the patch"}}})
	if got := textOf(next); got != "I called apply_patch 1 time(s). Last result:\nApplied the patch" {
		t.Errorf("answer %q", got)
	}
}

// An output is paired with a call of its own kind before it, as the API
// pairs them: an output for a call id never issued, or a function output
// for a custom call, is refused (400, param input); the right one passes.
func TestToolOutputsArePaired(t *testing.T) {
	_, base := newSim(t, Options{Reasoning: ReasoningNever})
	c := dial(t, base)
	call := map[string]any{"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": "x"}
	fcall := map[string]any{"type": "function_call", "call_id": "call_2", "name": "read_file", "arguments": "{}"}
	cases := []struct {
		input []any
		msg   string // "" = accepted
	}{
		{[]any{userMsg("hi"), call, map[string]any{"type": "custom_tool_call_output", "call_id": "call_1", "output": "ok"}}, ""},
		{[]any{userMsg("hi"), fcall, map[string]any{"type": "function_call_output", "call_id": "call_2", "output": "ok"}}, ""},
		{[]any{userMsg("hi"), map[string]any{"type": "custom_tool_call_output", "call_id": "call_9", "output": "ok"}},
			"No tool call found for custom tool call output with call_id call_9."},
		{[]any{userMsg("hi"), call, map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "ok"}},
			"No tool call found for function call output with call_id call_1."},
		{[]any{userMsg("hi"), map[string]any{"type": "custom_tool_call_output", "call_id": "call_1", "output": "ok"}, call},
			"No tool call found for custom tool call output with call_id call_1."},
	}
	for i, tc := range cases {
		e := last(c.create(map[string]any{"input": tc.input}))
		if tc.msg == "" {
			if e.Type != "response.completed" {
				t.Errorf("case %d refused: %s", i, e.raw)
			}
			continue
		}
		if e.Type != "error" || e.Status != 400 || e.Error == nil || e.Error.Message != tc.msg || e.Error.Param == nil || *e.Error.Param != "input" {
			t.Errorf("case %d: %s, want 400 %q", i, e.raw, tc.msg)
		}
	}
	// Chained: the call is in the cached response, the output in the new input.
	first := completed(t, c.create(map[string]any{"tools": []any{customTool("apply_patch", nil)},
		"input": []any{userMsg("go sim:custom=apply_patch")}}))
	var item outItem
	json.Unmarshal(first.Output[len(first.Output)-1], &item)
	if e := last(c.create(map[string]any{"previous_response_id": first.ID, "input": []any{
		map[string]any{"type": "custom_tool_call_output", "call_id": item.CallID, "output": "ok"}}})); e.Type != "response.completed" {
		t.Errorf("the chained output was refused: %s", e.raw)
	}
}

// A custom tool is checked as the API checks it: a name, and a format that
// is text or a grammar (lark or regex) with a definition.
func TestCustomToolShape(t *testing.T) {
	_, base := newSim(t, Options{Reasoning: ReasoningNever})
	c := dial(t, base)
	cases := []struct {
		tool       any
		code, para string // "" = accepted
	}{
		{customTool("apply_patch", larkFormat), "", ""},
		{customTool("apply_patch", nil), "", ""},
		{customTool("apply_patch", map[string]any{"type": "text"}), "", ""},
		{customTool("apply_patch", map[string]any{"type": "grammar", "syntax": "regex", "definition": "x+"}), "", ""},
		{map[string]any{"type": "custom"}, "missing_required_parameter", "tools[1].name"},
		{customTool("", nil), "invalid_type", "tools[1].name"},
		{customTool("p", map[string]any{"type": "json"}), "invalid_value", "tools[1].format.type"},
		{customTool("p", map[string]any{"type": "grammar", "syntax": "ebnf", "definition": "x"}), "invalid_value", "tools[1].format.syntax"},
		{customTool("p", map[string]any{"type": "grammar", "syntax": "lark"}), "missing_required_parameter", "tools[1].format.definition"},
		{customTool("p", map[string]any{"type": "grammar", "syntax": "lark", "definition": 3}), "invalid_type", "tools[1].format.definition"},
	}
	for i, tc := range cases {
		e := last(c.create(map[string]any{"tools": []any{fnTool("read_file"), tc.tool}, "input": "hi"}))
		if tc.code == "" {
			if e.Type != "response.completed" {
				t.Errorf("case %d refused: %s", i, e.raw)
			}
			continue
		}
		if e.Type != "error" || e.Status != 400 || e.Error == nil || e.Error.Code != tc.code || e.Error.Param == nil || *e.Error.Param != tc.para {
			t.Errorf("case %d: %s, want 400 %s on %s", i, e.raw, tc.code, tc.para)
		}
	}
}

// The plain words patch and plan, and the sim:custom directive: patch is a
// custom call when the request offers apply_patch as a custom tool, a
// function call taking {input} when it offers a function, nothing when it
// offers neither; plan sets update_plan's steps, the first in progress.
func TestPatchAndPlanWords(t *testing.T) {
	patch := patchText("a.txt", "beta", "gamma delta")
	fnArgs, _ := json.Marshal(map[string]string{"input": patch})
	cases := []struct {
		text   string
		tools  json.RawMessage
		call   string
		args   string
		custom bool
	}{
		{"patch a.txt beta gamma delta", toolsJSON(t, fnTool("shell"), customTool("apply_patch", larkFormat)), "apply_patch", patch, true},
		{"patch a.txt beta gamma delta", toolsJSON(t, fnTool("shell"), fnTool("apply_patch")), "apply_patch", string(fnArgs), false},
		{"patch a.txt beta gamma delta", toolsJSON(t, fnTool("shell")), "", "", false},
		{"patch a.txt", toolsJSON(t, customTool("apply_patch", nil)), "", "", false},
		{"plan read it; fix it ;test it", toolsJSON(t, fnTool("update_plan")), "update_plan",
			`{"plan":[{"status":"in_progress","step":"read it"},{"status":"pending","step":"fix it"},{"status":"pending","step":"test it"}]}`, false},
		{"plan", toolsJSON(t, fnTool("update_plan")), "", "", false},
		{"plan a; b", toolsJSON(t, fnTool("shell")), "", "", false},
		{`go sim:custom=apply_patch sim:input="***\u0020Begin\u0020Patch\n***\u0020End\u0020Patch\n"`, toolsJSON(t, fnTool("shell")), "apply_patch", "*** Begin Patch\n*** End Patch\n", true},
		{"go sim:custom=apply_patch", nil, "apply_patch", "", true},
	}
	for _, c := range cases {
		p := planTurn(raws(t, userMsg(c.text)), c.tools, true)
		if p.callName != c.call || p.callArgs != c.args || p.custom != c.custom {
			t.Errorf("%q: plan %+v, want call %q %q custom %v", c.text, p, c.call, c.args, c.custom)
		}
	}
	for _, w := range []string{"patch PATH", "plan STEP", "sim:custom=", "sim:input="} {
		if !strings.Contains(WordsHelp, w) {
			t.Errorf("the help does not name %q", w)
		}
	}
}
