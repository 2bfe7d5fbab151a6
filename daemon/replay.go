package daemon

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// replayItem is the part of a stored item that session/load shows.
type replayItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Content   json.RawMessage `json:"content"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// replay queues the session/update notifications that show a stored
// transcript again, in order, for this client only. It never fills more
// than the replay budget of the outbox: it waits for the editor to read, so
// memory stays bounded however long the transcript. It fails if the editor
// is disconnected meanwhile.
func (c *clientConn) replay(ctx context.Context, sessionID string, items []json.RawMessage) error {
	for _, it := range items {
		b, ok := replayNotification(sessionID, it)
		if !ok {
			continue
		}
		if err := c.enqueueWithin(ctx, notification{method: rpc.MethodSessionUpdate, params: b}, c.replayBudget()); err != nil {
			return err
		}
	}
	return nil
}

// replayNotification is the session/update that shows one stored item: a
// user or agent message, the model's thoughts (its reasoning summaries), a
// tool call or its result. hearth's own context items (AGENTS.md) and
// anything else show nothing (false).
func replayNotification(sessionID string, item json.RawMessage) (json.RawMessage, bool) {
	var r replayItem
	if json.Unmarshal(item, &r) != nil {
		return nil, false
	}
	switch {
	case r.Type == "message" && r.Role == "user":
		if t := messageText(r.Content); t != "" {
			return textNotification(sessionID, "user_message_chunk", t), true
		}
	case r.Type == "message" && r.Role == "assistant":
		if t := messageText(r.Content); t != "" {
			return textNotification(sessionID, "agent_message_chunk", t), true
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
	case r.Type == "function_call":
		u := acp.StartToolCall(acp.ToolCallId(r.CallID), r.Name,
			acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(rawArgs(r.Arguments)))
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(sessionID), Update: u})
		return b, err == nil
	case r.Type == "function_call_output":
		var text string
		json.Unmarshal(r.Output, &text) // an output that is not a string shows as empty
		st := acp.ToolCallStatusCompleted
		if strings.HasPrefix(text, "error:") {
			st = acp.ToolCallStatusFailed
		}
		return toolResultNotification(sessionID, r.CallID, string(st), clip(text, 8<<10)), true
	}
	return nil, false
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
