package daemon

import (
	"encoding/json"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/store"
)

// replayItem is the part of a stored item that session/load shows.
type replayItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    any             `json:"output"`
	Content   json.RawMessage `json:"content"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// replay turns the stored transcript into the session/update notifications
// that show it again: user and agent messages, the model's thoughts (its
// reasoning summaries), tool calls and their results.
// hearth's own context items (AGENTS.md) are not shown.
func replay(items []store.Item) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	for _, it := range items {
		var r replayItem
		if json.Unmarshal(it.Data, &r) != nil {
			continue
		}
		switch {
		case r.Type == "message" && r.Role == "user":
			if t := messageText(r.Content); t != "" {
				out = append(out, acp.UpdateUserMessageText(t))
			}
		case r.Type == "message" && r.Role == "assistant":
			if t := messageText(r.Content); t != "" {
				out = append(out, acp.UpdateAgentMessageText(t))
			}
		case r.Type == "reasoning":
			var parts []string
			for _, p := range r.Summary {
				if p.Text != "" {
					parts = append(parts, p.Text)
				}
			}
			if len(parts) > 0 {
				out = append(out, acp.UpdateAgentThoughtText(strings.Join(parts, "\n\n")))
			}
		case r.Type == "function_call":
			out = append(out, acp.StartToolCall(acp.ToolCallId(r.CallID), r.Name,
				acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(rawArgs(r.Arguments))))
		case r.Type == "function_call_output":
			text, _ := r.Output.(string)
			st := acp.ToolCallStatusCompleted
			if strings.HasPrefix(text, "error:") {
				st = acp.ToolCallStatusFailed
			}
			out = append(out, acp.UpdateToolCall(acp.ToolCallId(r.CallID), acp.WithUpdateStatus(st),
				acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(clip(text, 8<<10)))})))
		}
	}
	return out
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
