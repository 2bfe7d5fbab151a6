package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// replayItem is the part of a stored item that session/load shows.
type replayItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"` // a custom tool call's
	Output    json.RawMessage `json:"output"`
	Content   json.RawMessage `json:"content"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// replayer shows stored items as the session/updates an editor was shown
// live. Built per session/load.
type replayer struct {
	session string
	root    string                         // the workspace's absolute path, for locations and diffs
	kind    func(tool string) acp.ToolKind // the kind of a tool by name, as the live view gives it
	// compaction: the editor advertised session.compaction, so compactions
	// show as such (compaction_update.go).
	compaction bool
}

// replay queues the session/update notifications that show stored items
// again, in order, into one editor's outbox only. It never fills more than the
// replay budget of the outbox: it waits for the editor to read, so memory
// stays bounded however long the transcript. It fails if the editor is
// disconnected meanwhile.
func (r replayer) replay(ctx context.Context, out *outbox, items []store.Item) error {
	for _, it := range items {
		if session.FromCompaction(it.View) {
			continue // the API's compaction: the model's view, not something that happened
		}
		if shown, err := r.replayCompaction(ctx, out, it); err != nil {
			return err
		} else if shown {
			continue
		}
		b, ok := r.notification(it)
		if ok {
			if err := out.enqueueWithin(ctx, notification{method: rpc.MethodSessionUpdate, params: b}, out.replayBudget()); err != nil {
				return err
			}
		}
		if it.Type != "message" {
			continue // only a user's message carries images: no search of the others' bytes
		}
		for _, b := range userImageUpdates(r.session, it.Data) {
			if err := out.enqueueWithin(ctx, notification{method: rpc.MethodSessionUpdate, params: b}, out.replayBudget()); err != nil {
				return err
			}
		}
	}
	return nil
}

// notification is the session/update that shows it: for a tool call
// (function or custom), its kind as live; for a tool result with a stored
// view, the title, locations and diff the live view showed. A
// session-level tool's call shows as it did live (update_plan's as the plan
// it set), and its result not at all.
func (r replayer) notification(it store.Item) (json.RawMessage, bool) {
	if kind, ok := session.Shown(it.View); ok {
		return shownNotification(r.session, kind, it.Data)
	}
	switch it.Type {
	case "function_call", "custom_tool_call":
		call, ok := scanReplayItem(it.Data)
		if !ok && json.Unmarshal(it.Data, &call) != nil {
			return nil, false
		}
		switch {
		case it.Type == "custom_tool_call":
			u := acp.StartToolCall(acp.ToolCallId(call.CallID), call.Name, acp.WithStartKind(r.kind(call.Name)),
				acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(map[string]string{"input": call.Input}))
			return namedToolCall(r.session, u, call.Name)
		}
		if st, ok := lookupSessionLevelTool(call.Name); ok && st.replay != nil {
			u, shown := st.replay(call.Arguments)
			if !shown {
				return nil, false // refused live: nothing was shown
			}
			b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(r.session), Update: u})
			return b, err == nil
		}
		return toolCallNotification(r.session, call.CallID, call.Name, r.kind(call.Name), call.Arguments), true
	case "web_search_call":
		return searchNotification(r.session, it.Data)
	case "function_call_output", "custom_tool_call_output":
		if hiddenOutput(it.View) {
			return nil, false
		}
		if it.View == nil {
			break // older rows, and results with nothing more to show
		}
		ri, ok := scanReplayItem(it.Data)
		if !ok {
			break
		}
		if b, ok := toolViewNotification(r.session, r.root, ri.CallID, ri.Output, it.View); ok {
			return b, true
		}
		var v session.ToolView // a shape only the SDK shows: images, an unusual view
		if json.Unmarshal(it.View, &v) != nil {
			break
		}
		text, images := toolOutput(ri.Output)
		st := acp.ToolCallStatusCompleted
		if v.Failed {
			st = acp.ToolCallStatusFailed
		}
		u := toolResultUpdate(r.root, st, text, v, images...)
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(r.session),
			Update: acp.UpdateToolCall(acp.ToolCallId(ri.CallID), u...)})
		return b, err == nil
	}
	return replayNotification(r.session, it.Data)
}

// shownNotification shows again an item kept for the editor only, as it
// was shown: what the user was shown of an answer before cancelling its
// turn (marked rpc.MetaCancelled), a command the user typed, a notice.
func shownNotification(sessionID, kind string, item json.RawMessage) (json.RawMessage, bool) {
	r, ok := scanReplayItem(item)
	if !ok {
		return nil, false
	}
	text := messageText(r.Content)
	if text == "" {
		return nil, false
	}
	var u acp.SessionUpdate
	switch kind {
	case session.ShownCancelled:
		u = acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.TextBlock(text),
			Meta: map[string]any{rpc.MetaCancelled: true}}}
	case session.ShownCommand:
		u = acp.UpdateUserMessageText(text)
	case session.ShownNotice:
		u = noticeUpdate(text)
	default:
		return nil, false // a kind this hearth does not know
	}
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(sessionID), Update: u})
	return b, err == nil
}

// toolResultUpdate is the tool_call_update that ends a call: its status,
// title, output (clipped), images, diff and locations. The live view and the
// replay both build it here, so they cannot drift apart.
func toolResultUpdate(root string, st acp.ToolCallStatus, output string, v session.ToolView, images ...acp.ContentBlock) []acp.ToolCallUpdateOpt {
	opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(st)}
	if v.Title != "" {
		opts = append(opts, acp.WithUpdateTitle(v.Title))
	}
	content := []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(clip(output, maxShownOutput)))}
	for _, im := range images {
		content = append(content, acp.ToolContent(im))
	}
	if d := v.Diff; d != nil {
		content = append(content, diffBlock(root, d.Path, d.Old, d.New))
	}
	opts = append(opts, acp.WithUpdateContent(content))
	if len(v.Locations) > 0 {
		locs := make([]acp.ToolCallLocation, 0, len(v.Locations))
		for _, p := range v.Locations {
			locs = append(locs, acp.ToolCallLocation{Path: root + "/" + p})
		}
		opts = append(opts, acp.WithUpdateLocations(locs))
	}
	return opts
}

// replayNotification is the session/update that shows one stored item: a
// user or agent message, the model's thoughts (its reasoning summaries), or
// a tool's result as text (replayer.notification shows tool calls, and
// results with a stored view). hearth's own context items (the
// environment, the permissions, AGENTS.md) and anything else show nothing
// (false).
func replayNotification(sessionID string, item json.RawMessage) (json.RawMessage, bool) {
	r, ok := scanReplayItem(item)
	if !ok && json.Unmarshal(item, &r) != nil {
		return nil, false
	}
	switch {
	case r.Type == "message" && r.Role == "user" && mayBeContext(r.Content) && hearthContext(messageText(r.Content)):
		return nil, false // hearth's own framing of the environment or AGENTS.md, not the user's words
	case r.Type == "message" && (r.Role == "user" || r.Role == "assistant"):
		kind := "user_message_chunk"
		if r.Role == "assistant" {
			kind = "agent_message_chunk"
		}
		if raw := messageRaw(r.Content); raw != nil {
			return rawTextNotification(sessionID, kind, raw)
		}
		if t := messageText(r.Content); t != "" {
			return textNotification(sessionID, kind, t), true
		}
	case r.Type == "reasoning":
		var parts []string
		for _, p := range r.Summary {
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		if len(parts) > 0 {
			return textNotification(sessionID, "agent_thought_chunk", strings.Join(parts, "\n\n")), true
		}
	case r.Type == "function_call_output" || r.Type == "custom_tool_call_output":
		if raw := r.Output; len(raw) >= 2 && raw[0] == '"' {
			st := acp.ToolCallStatusCompleted
			if textHasPrefix(raw, "error:") {
				st = acp.ToolCallStatusFailed
			}
			return rawToolResultNotification(sessionID, r.CallID, string(st), raw)
		}
		text, images := toolOutput(r.Output)
		st := acp.ToolCallStatusCompleted
		if strings.HasPrefix(text, "error:") {
			st = acp.ToolCallStatusFailed
		}
		if len(images) > 0 {
			b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(sessionID),
				Update: acp.UpdateToolCall(acp.ToolCallId(r.CallID), toolResultUpdate("", st, text, session.ToolView{}, images...)...)})
			return b, err == nil
		}
		return toolResultNotification(sessionID, r.CallID, string(st), clip(text, maxShownOutput)), true
	}
	return nil, false
}

// scanReplayItem fills a replayItem from an item's top-level fields
// without decoding the rest (topFields); false if the item is not an object
// it can walk.
func scanReplayItem(item []byte) (r replayItem, ok bool) {
	bad := false
	str := func(raw []byte, dst *string) {
		if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
			*dst = string(raw[1 : len(raw)-1])
		} else if json.Unmarshal(raw, dst) != nil {
			bad = true
		}
	}
	ok = topFields(item, func(key, value []byte) {
		switch string(key) {
		case "type":
			str(value, &r.Type)
		case "role":
			str(value, &r.Role)
		case "call_id":
			str(value, &r.CallID)
		case "name":
			str(value, &r.Name)
		case "arguments":
			str(value, &r.Arguments)
		case "input":
			str(value, &r.Input)
		case "output":
			r.Output = value
		case "content":
			r.Content = value
		case "summary":
			if !scanSummary(value, &r) {
				bad = true
			}
		}
	})
	return r, ok && !bad
}

// The wire forms of the session/updates that carry the bulk of a replay
// and of a streamed answer, encoded in one pass. The SDK's encoder goes
// through maps and encodes every level again (most of a long replay's
// time); these give the same bytes (TestFastUpdatesMatchSDK).
type (
	textContent struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}
	textChunk struct {
		Content       textContent `json:"content"`
		SessionUpdate string      `json:"sessionUpdate"`
	}
	toolContent struct {
		Content textContent `json:"content"`
		Type    string      `json:"type"`
	}
	toolResult struct {
		Content       []toolContent `json:"content"`
		SessionUpdate string        `json:"sessionUpdate"`
		Status        string        `json:"status"`
		ToolCallID    string        `json:"toolCallId"`
	}
	wireNotification[U any] struct {
		SessionID string `json:"sessionId"`
		Update    U      `json:"update"`
	}
)

// textNotification is a session/update of kind user_message_chunk,
// agent_message_chunk or agent_thought_chunk carrying text.
func textNotification(sessionID, kind, text string) json.RawMessage {
	b, _ := json.Marshal(wireNotification[textChunk]{SessionID: sessionID,
		Update: textChunk{Content: textContent{Text: text, Type: "text"}, SessionUpdate: kind}})
	return b
}

// toolResultNotification is a tool_call_update with a status and text.
func toolResultNotification(sessionID, callID, status, text string) json.RawMessage {
	b, _ := json.Marshal(wireNotification[toolResult]{SessionID: sessionID, Update: toolResult{
		Content:       []toolContent{{Content: textContent{Text: text, Type: "text"}, Type: "content"}},
		SessionUpdate: "tool_call_update", Status: status, ToolCallID: callID}})
	return b
}

// rawTextNotification is textNotification for text already encoded as a
// JSON string (raw), copied when it is in encoding/json's form.
func rawTextNotification(sessionID, kind string, raw []byte) (json.RawMessage, bool) {
	b := make([]byte, 0, len(raw)+len(sessionID)+96)
	b = append(b, `{"sessionId":`...)
	b = appendString(b, sessionID)
	b = append(b, `,"update":{"content":{"text":`...)
	b, ok := appendText(b, raw, math.MaxInt)
	b = append(b, `,"type":"text"},"sessionUpdate":`...)
	b = appendString(b, kind)
	return append(b, "}}"...), ok
}

// rawToolResultNotification is toolResultNotification for text already
// encoded as a JSON string, clipped as an editor is shown it.
func rawToolResultNotification(sessionID, callID, status string, raw []byte) (json.RawMessage, bool) {
	b := make([]byte, 0, min(len(raw), maxShownOutput+16)+len(sessionID)+len(callID)+160)
	b = append(b, `{"sessionId":`...)
	b = appendString(b, sessionID)
	b = append(b, `,"update":{"content":[{"content":{"text":`...)
	b, ok := appendText(b, raw, maxShownOutput)
	b = append(b, `,"type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":`...)
	b = appendString(b, status)
	b = append(b, `,"toolCallId":`...)
	b = appendString(b, callID)
	return append(b, "}}"...), ok
}

// textHasPrefix says whether the JSON string raw's value starts with
// prefix (plain ASCII).
func textHasPrefix(raw []byte, prefix string) bool {
	if len(raw) > len(prefix) && canonicalPlain(raw[1:1+len(prefix)]) {
		return string(raw[1:1+len(prefix)]) == prefix
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.HasPrefix(s, prefix)
}

// messageRaw is a message's text as a JSON string, when its content is a
// non-empty string or a single text part (nearly every message); nil
// otherwise (messageText then joins the parts).
func messageRaw(content []byte) []byte {
	content = bytes.TrimSpace(content)
	if len(content) > 2 && content[0] == '"' {
		return content
	}
	if len(content) < 2 || content[0] != '[' {
		return nil
	}
	i := skipSpace(content, 1)
	end := valueEnd(content, i)
	if end < 0 || skipSpace(content, end) != len(content)-1 {
		return nil // empty, malformed, or more than one part
	}
	var typ, text []byte
	if !topFields(content[i:end], func(key, value []byte) {
		switch string(key) {
		case "type":
			typ = value
		case "text":
			text = value
		}
	}) {
		return nil
	}
	switch string(typ) {
	case `"input_text"`, `"output_text"`, `"text"`:
		if len(text) > 2 && text[0] == '"' {
			return text
		}
	}
	return nil
}

// messageText joins the text parts of a message's content (a string or a
// list of input_text/output_text parts).
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
