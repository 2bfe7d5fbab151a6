package daemon

import (
	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// updates turns a turn's progress into ACP session/update notifications
// for every client attached to the session. Created per turn; called one
// call at a time, from the goroutine running the turn — Text and Thought
// also from the model connection's reader while the turn waits for it
// (session.Sink) — so it only queues: enqueue never blocks.
type updates struct{ s *openSession }

func (u updates) Text(delta string) {
	u.s.broadcastText(delta, false)
}

// Thought relays the model's reasoning summary as agent_thought_chunk.
func (u updates) Thought(delta string) {
	u.s.broadcastText(delta, true)
}

func (u updates) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	id := acp.ToolCallId(call.CallID)
	switch status {
	case "pending":
		u.s.broadcast(acp.StartToolCall(id, call.Name,
			acp.WithStartKind(toolKind(u.s.ws, call.Name)),
			acp.WithStartStatus(acp.ToolCallStatusPending)), nil)
	case "in_progress":
		u.s.broadcast(acp.UpdateToolCall(id,
			acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
			acp.WithUpdateRawInput(rawArgs(call.Arguments))), nil)
	default:
		st := acp.ToolCallStatusCompleted
		if status == "failed" {
			st = acp.ToolCallStatusFailed
		}
		opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(st)}
		if res != nil {
			opts = toolResultUpdate(u.s.ws.root.Path(), st, res.Output,
				session.ToolView{Title: res.Title, Locations: res.Locations, Diff: res.Diff}, imageViews(res.Images)...)
		}
		u.s.broadcast(acp.UpdateToolCall(id, opts...), nil)
	}
}

func toolKind(w *openWorkspace, name string) acp.ToolKind {
	if t, ok := w.tools.Lookup(name); ok && t.Kind != "" {
		return acp.ToolKind(t.Kind)
	}
	return acp.ToolKindOther
}

// clip bounds what an editor is shown of a tool's output; the model gets
// all of it.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n…"
}

// Notice shows a transport notice (fallback, retry) in the answer itself:
// every ACP client renders agent messages, not every one renders more. Its
// _meta marks it (rpc.MetaNotice), so a client that keeps the answer apart
// from diagnostics (hearth ask: stdout and stderr) can.
func (u updates) Notice(text string) {
	u.s.broadcast(acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{
		Content: acp.TextBlock("\n\n> " + text + "\n\n"),
		Meta:    map[string]any{rpc.MetaNotice: true},
	}}, nil)
}
