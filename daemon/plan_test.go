package daemon

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// plans is the plan updates among ups, and whether any tool call or
// update names callID.
func plans(ups []acp.SessionUpdate, callID string) (entries [][]acp.PlanEntry, shownAsCall bool) {
	for _, u := range ups {
		if u.Plan != nil {
			entries = append(entries, u.Plan.Entries)
		}
		if (u.ToolCall != nil && string(u.ToolCall.ToolCallId) == callID) ||
			(u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == callID) {
			shownAsCall = true
		}
	}
	return entries, shownAsCall
}

// planCallID is the call id of the session's update_plan call, as the
// simulator saw it.
func planCallID(t *testing.T, td *testDaemon) string {
	t.Helper()
	for _, r := range td.sim.Received() {
		for _, it := range r.Input {
			var o struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
			}
			json.Unmarshal(it, &o)
			if o.Type == "function_call_output" {
				return o.CallID
			}
		}
	}
	t.Fatal("no tool output was sent")
	return ""
}

// update_plan's call reaches every attached editor as an ACP plan update —
// the steps, their statuses, medium priority — and never as a tool call;
// it asks nobody (the editor answers no permission request), the model
// hears "Plan updated", and session/load shows the same plan again.
func TestUpdatePlanShownAsPlan(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect() // answers no permission request: the plan needs none
	ed.initialize()
	id := ed.newSession(td.root)
	watcher := td.connect()
	watcher.initialize()
	watcher.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if stop := ed.prompt(id, "plan read the parser; fix the bug; run the tests"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	callID := planCallID(t, td)
	if out := toolOutputFor(t, td, callID); out != "Plan updated" {
		t.Fatalf("the model got %q", out)
	}
	want := []acp.PlanEntry{
		{Content: "read the parser", Status: acp.PlanEntryStatusInProgress, Priority: acp.PlanEntryPriorityMedium},
		{Content: "fix the bug", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityMedium},
		{Content: "run the tests", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityMedium},
	}
	live, asCall := plans(ed.updates(), callID)
	if len(live) != 1 || !reflect.DeepEqual(live[0], want) || asCall {
		t.Fatalf("live: plans %+v, shown as a tool call %v", live, asCall)
	}
	watcher.waitFor("the plan", func(ups []acp.SessionUpdate) bool { p, _ := plans(ups, callID); return len(p) == 1 })

	late := td.connect()
	late.initialize()
	late.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	replayed, asCall := plans(late.updates(), callID)
	if len(replayed) != 1 || !reflect.DeepEqual(replayed[0], want) || asCall {
		t.Fatalf("replay: plans %+v, shown as a tool call %v", replayed, asCall)
	}
}

// A plan with two steps in progress is refused with a message that says
// why; no plan reaches the editor, live or replayed.
func TestUpdatePlanRefusesTwoInProgress(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	args := map[string]any{"plan": []map[string]string{{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}}}
	ed.prompt(id, simCall(t, "update_plan", args))
	callID := planCallID(t, td)
	if out := toolOutputFor(t, td, callID); !strings.Contains(out, "steps 1 and 2 are both in_progress; at most one step may be in progress") {
		t.Fatalf("the model got %q", out)
	}
	if p, asCall := plans(ed.updates(), callID); len(p) != 0 || asCall {
		t.Fatalf("live: plans %+v, shown as a tool call %v", p, asCall)
	}
	late := td.connect()
	late.initialize()
	late.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if p, asCall := plans(late.updates(), callID); len(p) != 0 || asCall {
		t.Fatalf("replay: plans %+v, shown as a tool call %v", p, asCall)
	}
}

// parsePlan takes what the spec describes and says what is wrong with
// anything else; an empty plan is a plan (it clears the checklist), sent
// as an empty list of entries.
func TestParsePlan(t *testing.T) {
	cases := []struct{ args, err string }{
		{`{"plan":[{"step":"a","status":"completed"},{"step":"b","status":"in_progress"},{"step":"c","status":"pending"}]}`, ""},
		{`{"explanation":"narrowed","plan":[]}`, ""},
		{`{}`, `missing required argument "plan"`},
		{`{"plan":[{"step":"a","status":"done"}]}`, `step 1 ("a") has status "done"`},
		{`{"plan":[{"step":" ","status":"pending"}]}`, "step 1 of the plan has no text"},
		{`{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"pending"},{"step":"c","status":"in_progress"}]}`, "steps 1 and 3 are both in_progress"},
		{`{"plan":"a, b"}`, "invalid arguments for update_plan"},
		{`{"plan":[],"priority":"high"}`, `unknown field "priority"`},
		{`not json`, "invalid arguments for update_plan"},
	}
	for _, c := range cases {
		_, msg := parsePlan(c.args)
		if (c.err == "") != (msg == "") || !strings.Contains(msg, c.err) {
			t.Errorf("%s: %q, want %q", c.args, msg, c.err)
		}
	}
	b, err := json.Marshal(planUpdate(nil))
	if err != nil || string(b) != `{"entries":[],"sessionUpdate":"plan"}` {
		t.Errorf("an empty plan is sent as %s (%v)", b, err)
	}
	if !json.Valid(planSpec) {
		t.Error("the spec is not JSON")
	}
}

// Whatever the model sends, parsePlan never panics, accepts only plans of
// known statuses with text and at most one step in progress, and the update
// it makes is valid JSON.
func FuzzParsePlan(f *testing.F) {
	f.Add(`{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"pending"}]}`)
	f.Add(`{"explanation":"x","plan":[]}`)
	f.Add(`{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`)
	f.Add(`{"plan":null}`)
	f.Fuzz(func(t *testing.T, args string) {
		steps, msg := parsePlan(args)
		if msg != "" {
			if steps != nil {
				t.Fatalf("refused with steps %v", steps)
			}
			return
		}
		running := 0
		for _, s := range steps {
			switch s.Status {
			case "in_progress":
				running++
			case "pending", "completed":
			default:
				t.Fatalf("accepted status %q", s.Status)
			}
			if strings.TrimSpace(s.Step) == "" {
				t.Fatal("accepted a step without text")
			}
		}
		if running > 1 {
			t.Fatalf("accepted %d steps in progress", running)
		}
		if b, err := json.Marshal(planUpdate(steps)); err != nil || !json.Valid(b) {
			t.Fatalf("update %s: %v", b, err)
		}
	})
}
