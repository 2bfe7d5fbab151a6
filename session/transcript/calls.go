package transcript

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/hearthd/hearth/store"
)

// Call is a tool call in the view that has no output.
type Call struct {
	CallID string
	Custom bool // a custom_tool_call (answered with a custom_tool_call_output)
}

// Repair answers the view's tool calls that have no output — the daemon
// died mid-tool, or a tool's output could not be committed — with answer's
// items, committed at once, so that the next request is valid. The tool is
// never run again.
func (t *Transcript) Repair(ctx context.Context, turnID int64, answer func(Call) json.RawMessage) error {
	t.mu.Lock()
	missing := unanswered(t.l.committed)
	t.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	fix := make([]store.NewItem, len(missing))
	for i, call := range missing {
		fix[i] = store.NewItem{Origin: store.OriginInput, Data: answer(call)}
	}
	return t.Commit(ctx, turnID, fix)
}

// Mend repairs the calls whose outputs a failed commit dropped (Flush):
// such a call would make every request invalid.
func (t *Transcript) Mend(ctx context.Context, turnID int64, answer func(Call) json.RawMessage) error {
	t.mu.Lock()
	broken := t.l.unanswered
	t.mu.Unlock()
	if !broken {
		return nil
	}
	if err := t.Repair(ctx, turnID, answer); err != nil {
		return err
	}
	t.mu.Lock()
	t.l.unanswered = false
	t.mu.Unlock()
	return nil
}

// outputCallID reads the call id of an output item hearth wrote itself
// (function_call_output or custom_tool_call_output, fields in a fixed
// order) without decoding its output: a third of a long session's items,
// and most of its bytes; opening it decoded them all.
func outputCallID(it json.RawMessage) (string, bool) {
	rest, ok := bytes.CutPrefix(it, []byte(`{"type":"function_call_output","call_id":"`))
	if !ok {
		rest, ok = bytes.CutPrefix(it, []byte(`{"type":"custom_tool_call_output","call_id":"`))
	}
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// unanswered lists the tool calls (function or custom) with no output.
func unanswered(items []json.RawMessage) []Call {
	answered := map[string]bool{}
	var calls []Call
	for _, it := range items {
		if id, ok := outputCallID(it); ok {
			answered[id] = true
			continue
		}
		if !bytes.Contains(it, []byte(`"function_call`)) && !bytes.Contains(it, []byte(`"custom_tool_call`)) {
			continue // most items: no decode
		}
		var h struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(it, &h)
		switch h.Type {
		case "function_call", "custom_tool_call":
			calls = append(calls, Call{CallID: h.CallID, Custom: h.Type == "custom_tool_call"})
		case "function_call_output", "custom_tool_call_output":
			answered[h.CallID] = true
		}
	}
	var missing []Call
	for _, call := range calls {
		if !answered[call.CallID] {
			missing = append(missing, call)
		}
	}
	return missing
}
