package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Custom tools (docs/ARCHITECTURE.md, "The Responses protocol": tools): a request's tool
// {type: "custom", name, description?, format?} takes freeform text rather
// than JSON arguments; format is {type: "text"} (the default) or
// {type: "grammar", syntax: "lark"|"regex", definition}. The model answers
// with a custom_tool_call item {type, id, call_id, name, input}, streamed as
// response.custom_tool_call_input.delta* and .done between the item's added
// and done events, and the client continues with a custom_tool_call_output
// {call_id, output}.

// toolSpec holds the fields of a request's tool the simulator checks or
// reads.
type toolSpec struct {
	Type   string          `json:"type"`
	Name   json.RawMessage `json:"name"`
	Format json.RawMessage `json:"format"`
}

// checkTools refuses a custom tool the API would: one without a name, or
// with a format that is not text or a grammar of a known syntax with a
// definition. Other tools pass as before.
func (r *request) checkTools() {
	var list []json.RawMessage
	if json.Unmarshal(r.tools, &list) != nil {
		return // not an array: refused by the parse already
	}
	for i, raw := range list {
		if e := checkHostedTool(i, raw); e != nil { // search.go
			r.fail(*e)
			return
		}
		var t toolSpec
		if json.Unmarshal(raw, &t) != nil || t.Type != "custom" {
			continue
		}
		at := "tools[" + strconv.Itoa(i) + "]"
		var name string
		if len(t.Name) == 0 || isNull(t.Name) {
			r.fail(invalidRequest("missing_required_parameter", at+".name", "Missing required parameter: '%s.name'.", at))
			return
		}
		if json.Unmarshal(t.Name, &name) != nil || name == "" {
			r.fail(invalidRequest("invalid_type", at+".name", "Invalid type for '%s.name': expected a non-empty string.", at))
			return
		}
		if e := checkFormat(at+".format", t.Format); e != nil {
			r.fail(*e)
			return
		}
	}
}

// checkFormat checks a custom tool's format; absent or null is text.
func checkFormat(at string, raw json.RawMessage) *apiError {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var f struct {
		Type       string          `json:"type"`
		Syntax     string          `json:"syntax"`
		Definition json.RawMessage `json:"definition"`
	}
	if json.Unmarshal(raw, &f) != nil {
		e := invalidRequest("invalid_type", at, "Invalid type for '%s': expected an object.", at)
		return &e
	}
	switch f.Type {
	case "text":
		return nil
	case "grammar":
	default:
		e := invalidRequest("invalid_value", at+".type", "Invalid value: '%s'. Supported values are: 'text' and 'grammar'.", f.Type)
		return &e
	}
	if f.Syntax != "lark" && f.Syntax != "regex" {
		e := invalidRequest("invalid_value", at+".syntax", "Invalid value: '%s'. Supported values are: 'lark' and 'regex'.", f.Syntax)
		return &e
	}
	var def string
	if len(f.Definition) == 0 || isNull(f.Definition) {
		e := invalidRequest("missing_required_parameter", at+".definition", "Missing required parameter: '%s.definition'.", at)
		return &e
	}
	if json.Unmarshal(f.Definition, &def) != nil {
		e := invalidRequest("invalid_type", at+".definition", "Invalid type for '%s.definition': expected a string.", at)
		return &e
	}
	return nil
}

// customTools lists the names of the custom tools, in order.
func customTools(tools json.RawMessage) []string {
	var list []toolSpec
	_ = json.Unmarshal(tools, &list)
	var names []string
	for _, t := range list {
		var name string
		if t.Type == "custom" && json.Unmarshal(t.Name, &name) == nil && name != "" {
			names = append(names, name)
		}
	}
	return names
}

// checkOutputs refuses a tool output among the new items (effective from
// index from) that answers no call of its own kind before it: the API
// pairs a function_call_output with a function_call and a
// custom_tool_call_output with a custom_tool_call by call_id, and refuses
// an output it cannot pair. The search goes back from the output and stops
// at the first item naming its call_id, so the usual output, right after
// its call, costs no scan of a long transcript.
func checkOutputs(effective []json.RawMessage, from int) *apiError {
	for i := from; i < len(effective); i++ {
		it := effective[i]
		if !bytes.Contains(it, []byte(`_output"`)) {
			continue // most items: no decode
		}
		var o struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(it, &o) != nil {
			continue
		}
		var want, kind string
		switch o.Type {
		case "function_call_output":
			want, kind = "function_call", "function call"
		case "custom_tool_call_output":
			want, kind = "custom_tool_call", "custom tool call"
		default:
			continue
		}
		if !callBefore(effective[:i], want, o.CallID) {
			e := invalidRequest("", "input", "No tool call found for %s output with call_id %s.", kind, o.CallID)
			return &e
		}
	}
	return nil
}

// callBefore reports whether items hold a call of type typ with callID.
func callBefore(items []json.RawMessage, typ, callID string) bool {
	if callID == "" {
		return false
	}
	quoted, _ := json.Marshal(callID)
	for i := len(items) - 1; i >= 0; i-- {
		if !bytes.Contains(items[i], quoted) {
			continue
		}
		var c struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(items[i], &c) == nil && c.Type == typ && c.CallID == callID {
			return true
		}
	}
	return false
}

// streamCustom streams a custom tool call: the item added with an empty
// input, the input in deltas, its done event, then the item done.
func (r *reply) streamCustom(ctx context.Context, index int, name, input string) (json.RawMessage, error) {
	id, callID := newID("ctc"), newID("call")
	item := map[string]any{"type": "custom_tool_call", "id": id, "call_id": callID, "name": name, "input": ""}
	if err := r.emit(ctx, "response.output_item.added", map[string]any{"output_index": index, "item": item}, false); err != nil {
		return nil, err
	}
	for k, d := range splitRunes(input, 12) {
		if k > 0 {
			if err := r.pause(ctx, r.cost.tokenGap()); err != nil {
				return nil, err
			}
		}
		ev := map[string]any{"item_id": id, "output_index": index, "delta": d}
		if err := r.emit(ctx, "response.custom_tool_call_input.delta", ev, false); err != nil {
			return nil, err
		}
		r.outTokens++
	}
	ev := map[string]any{"item_id": id, "output_index": index, "input": input}
	if err := r.emit(ctx, "response.custom_tool_call_input.done", ev, false); err != nil {
		return nil, err
	}
	done := map[string]any{"type": "custom_tool_call", "id": id, "call_id": callID, "name": name, "input": input}
	if err := r.emit(ctx, "response.output_item.done", map[string]any{"output_index": index, "item": done}, false); err != nil {
		return nil, err
	}
	return json.Marshal(done)
}

// patchText is the one-hunk patch of the plain word patch: in path, the
// line old becomes the line new.
func patchText(path, old, new string) string {
	return fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** End Patch\n", path, old, new)
}
