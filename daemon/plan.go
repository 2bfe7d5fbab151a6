package daemon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session"
)

// The plan tool. update_plan lets the model keep a checklist of its work;
// each call is shown to every attached editor as an ACP plan update (the
// whole list each time), live and in session/load replays, never as a tool
// call.
//
// It is a session-level tool of the daemon (session_level_tools.go: its
// row), rather than in session as a tool the loop answers itself: a plan is something to show the user, and
// the daemon is what holds the editors (the broadcast, the replay) and
// assembles the tool list by the model's profile; the agent loop stays a
// loop over whatever Tools it is given, and a conversation with no one to
// show a plan to (hearth bench's) is not offered one. It touches nothing, so
// it is always allowed: no mode, no permission, nothing to preview.

// planToolName is the tool's name (issue 23: a public contract).
const planToolName = "update_plan"

// planKind is the ACP tool kind of update_plan's result as stored (its
// view): ACP's kind for planning. A replay shows the call as a plan and
// leaves out its output by it.
const planKind = acp.ToolKindThink

// planSpec is update_plan's function spec, fixed bytes.
var planSpec = json.RawMessage(`{"type":"function","name":"update_plan","description":` +
	`"Keep a short plan of the task you are working on, shown to the user as a checklist. Use it for work of several ` +
	`steps: give every step each time (the list replaces the last one), a few words each, with its status: pending, ` +
	`in_progress or completed. At most one step is in progress at a time; mark a step completed as soon as it is done. ` +
	`Skip it for a task of one step.",` +
	`"parameters":{"type":"object","properties":{` +
	`"explanation":{"type":"string","description":"Optional: why the plan changed."},` +
	`"plan":{"type":"array","description":"Every step of the plan, in order.","items":{"type":"object","properties":{` +
	`"step":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},` +
	`"required":["step","status"],"additionalProperties":false}}},` +
	`"required":["plan"],"additionalProperties":false},"strict":false}`)

// planStep is one step of an update_plan call.
type planStep struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

const planExample = `{"plan":[{"step":"Read the parser","status":"completed"},{"step":"Fix the bug","status":"in_progress"},{"step":"Run the tests","status":"pending"}]}`

// parsePlan reads update_plan's arguments; a non-empty msg is the error
// for the model, saying what is wrong and showing a valid call.
func parsePlan(arguments string) (steps []planStep, msg string) {
	var a struct {
		Explanation *string     `json:"explanation"`
		Plan        *[]planStep `json:"plan"`
	}
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Sprintf("invalid arguments for update_plan (%s); e.g. %s", strings.TrimPrefix(err.Error(), "json: "), planExample)
	}
	if a.Plan == nil {
		return nil, `missing required argument "plan" for update_plan; e.g. ` + planExample
	}
	running := 0
	for i, s := range *a.Plan {
		switch {
		case strings.TrimSpace(s.Step) == "":
			return nil, fmt.Sprintf("step %d of the plan has no text; give each step a few words", i+1)
		case s.Status != "pending" && s.Status != "in_progress" && s.Status != "completed":
			return nil, fmt.Sprintf("step %d (%q) has status %q; a status is pending, in_progress or completed", i+1, s.Step, s.Status)
		case s.Status == "in_progress":
			if running > 0 {
				return nil, fmt.Sprintf("steps %d and %d are both in_progress; at most one step may be in progress: "+
					"mark the others pending or completed", running, i+1)
			}
			running = i + 1
		}
	}
	return *a.Plan, ""
}

// runPlan answers an update_plan call: the plan goes to every editor
// attached to s, the model hears it was taken (or what was wrong).
func runPlan(s *openSession, call session.ToolCall) session.ToolResult {
	steps, msg := parsePlan(call.Arguments)
	if msg != "" {
		return session.ToolResult{Output: msg, IsError: true, Title: "Update plan", Kind: string(planKind)}
	}
	s.broadcast(planUpdate(steps), nil)
	return session.ToolResult{Output: "Plan updated", Title: "Update plan", Kind: string(planKind)}
}

// planUpdate is the ACP plan update that shows steps: each step's text,
// its status, medium priority (update_plan has none).
func planUpdate(steps []planStep) acp.SessionUpdate {
	entries := make([]acp.PlanEntry, 0, len(steps))
	for _, s := range steps {
		entries = append(entries, acp.PlanEntry{Content: s.Step, Status: acp.PlanEntryStatus(s.Status),
			Priority: acp.PlanEntryPriorityMedium})
	}
	return acp.UpdatePlan(entries...)
}

// replayPlan is the plan a stored update_plan call set, as it was shown
// live; false for a call that was refused (no plan was shown).
func replayPlan(arguments string) (acp.SessionUpdate, bool) {
	steps, msg := parsePlan(arguments)
	if msg != "" {
		return acp.SessionUpdate{}, false
	}
	return planUpdate(steps), true
}
