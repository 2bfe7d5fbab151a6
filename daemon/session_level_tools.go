package daemon

import (
	"bytes"
	"encoding/json"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session"
)

// A session-level tool is a tool of the session itself, not of its
// workspace: what it does is show something to the user (update_plan's
// checklist), so it touches no file and is always allowed — no mode, no
// permission, no preview. The daemon offers these tools after the
// workspace's (workspaceSpecs) and answers them itself (sessionTools.run);
// the agent loop sees them as any other tool. A new one is one row of
// sessionLevelTools.
type sessionLevelTool struct {
	name string
	// spec is its function spec, fixed bytes: every request carries the
	// same.
	spec json.RawMessage
	// kind is the ACP tool kind its calls show with (toolKind) and its
	// result is stored with (the result's view); with hideOutput, a replay
	// knows the output by it.
	kind acp.ToolKind
	// run answers a call in session s, showing the editors what it does.
	run func(s *openSession, call session.ToolCall) session.ToolResult
	// hideCall: live, the call's tool_call updates are not sent: run
	// shows it its own way.
	hideCall bool
	// replay, when set, is what session/load shows of a stored call
	// instead of a tool_call, as run showed it live; false when that was
	// nothing (a refused call).
	replay func(arguments string) (acp.SessionUpdate, bool)
	// hideOutput: the stored result is not replayed (it showed nothing
	// live).
	hideOutput bool
}

// sessionLevelTools are the session-level tools, in the order offered.
var sessionLevelTools = []sessionLevelTool{
	{name: planToolName, spec: planSpec, kind: planKind, run: runPlan, replay: replayPlan, hideCall: true, hideOutput: true},
}

// lookupSessionLevelTool returns the session-level tool the model calls name.
func lookupSessionLevelTool(name string) (sessionLevelTool, bool) {
	for _, t := range sessionLevelTools {
		if t.name == name {
			return t, true
		}
	}
	return sessionLevelTool{}, false
}

// sessionLevelSpecs are the session-level tools' specs, in order.
func sessionLevelSpecs() []json.RawMessage {
	specs := make([]json.RawMessage, 0, len(sessionLevelTools))
	for _, t := range sessionLevelTools {
		specs = append(specs, t.spec)
	}
	return specs
}

// hiddenOutput reports whether a stored tool output's view is that of a
// session-level tool whose output a replay leaves out.
func hiddenOutput(view json.RawMessage) bool {
	for _, t := range sessionLevelTools {
		if t.hideOutput && bytes.Contains(view, []byte(t.kind)) {
			var v session.ToolView
			if json.Unmarshal(view, &v) == nil && v.Kind == string(t.kind) {
				return true
			}
		}
	}
	return false
}
