package daemon

import (
	"context"
	"encoding/json"

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
	if st, ok := lookupSessionLevelTool(call.Name); ok && st.hideCall {
		return // shown its own way (update_plan: as the plan it sets), not as a tool call
	}
	id := acp.ToolCallId(call.CallID)
	switch status {
	case "pending":
		u.s.broadcastToolCall(acp.StartToolCall(id, call.Name,
			acp.WithStartKind(toolKind(u.s.ws, call.Name)),
			acp.WithStartStatus(acp.ToolCallStatusPending)), call.Name)
	case "in_progress":
		opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
			acp.WithUpdateRawInput(rawArgs(call.Arguments))}
		u.s.broadcast(acp.UpdateToolCall(id, append(opts, u.readView(call)...)...), nil)
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

// readView titles a read of hearth's own after what it reads as it
// starts: reads are never asked about, so no preview did (registry.go).
// Not its location: a read that fails has none, and what the live updates
// leave must be what a replay shows (the result brings it). Other calls
// get nothing here.
func (u updates) readView(call session.ToolCall) []acp.ToolCallUpdateOpt {
	tool, ok := u.s.ws.tools.Lookup(call.Name)
	if !ok || !tool.ReadOnly {
		return nil
	}
	pv, err := u.s.ws.tools.In(u.s.dir).Preview(context.Background(), call.Name, json.RawMessage(call.Arguments))
	if err != nil || pv.Title == "" {
		return nil // Run says what is wrong with the call
	}
	return []acp.ToolCallUpdateOpt{acp.WithUpdateTitle(pv.Title)}
}

// Usage tells the editors how full the model's context is (usage_update):
// they show how much is left; its _meta has the API's rate limits.
func (u updates) Usage(used, size int) {
	u.s.broadcast(acp.SessionUpdate{UsageUpdate: usageUpdate(u.s, used, size)}, nil)
}

// liveOutput shows a running command's output so far in its tool call, on
// every attached editor: each tool_call_update's content replaces the
// last. The workspace calls it, throttled and bounded, until the call
// returns, so the call's final update comes after every one of these.
func (t *sessionTools) liveOutput(call session.ToolCall) func(string) {
	id := acp.ToolCallId(call.CallID)
	return func(out string) {
		t.s.broadcast(acp.UpdateToolCall(id, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(out))})), nil)
	}
}

// toolKind is the ACP kind a call of name shows with: a workspace tool's,
// or a session-level tool's.
func toolKind(w *openWorkspace, name string) acp.ToolKind {
	if t, ok := w.tools.Lookup(name); ok && t.Kind != "" {
		return acp.ToolKind(t.Kind)
	}
	if st, ok := lookupSessionLevelTool(name); ok {
		return st.kind
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
// A client that advertised session.notices gets it as an info notice
// instead (NoticeWith).
func (u updates) Notice(text string) {
	u.NoticeWith(session.NoticeInfo, text)
}

// noticeUpdate is how a notice shows, live and in a replay.
func noticeUpdate(text string) acp.SessionUpdate {
	return acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{
		Content: acp.TextBlock("\n\n> " + text + "\n\n"),
		Meta:    map[string]any{rpc.MetaNotice: true},
	}}
}
