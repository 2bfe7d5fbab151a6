package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// simCustom is a prompt whose simulated model calls the custom tool name
// once with input, written as the sim's directive wants it: a JSON string
// with no spaces.
func simCustom(name, input string) string {
	b, _ := json.Marshal(input)
	return "go sim:custom=" + name + " sim:input=" + strings.ReplaceAll(string(b), " ", `\u0020`)
}

// toolTypes is the type of each tool the request carried, by name.
func toolTypes(t *testing.T, r sim.Received) map[string]string {
	t.Helper()
	var tools []struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		Format *struct {
			Type, Syntax, Definition string
		} `json:"format"`
	}
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatalf("tools %s: %v", r.Tools, err)
	}
	m := map[string]string{}
	for _, tool := range tools {
		m[tool.Name] = tool.Type
		if tool.Type == "custom" && (tool.Format == nil || tool.Format.Type != "grammar" || tool.Format.Syntax != "lark" || tool.Format.Definition == "") {
			t.Errorf("custom tool %s without its grammar: %s", tool.Name, r.Tools)
		}
	}
	return m
}

// checkRequestsValid fails t for every request the simulator received that
// the official Responses API schema refuses.
func checkRequestsValid(t *testing.T, td *testDaemon) {
	t.Helper()
	rs, err := apischema.Responses("ResponsesClientEventResponseCreate")
	if err != nil {
		t.Fatal(err)
	}
	recs := td.sim.Received()
	if len(recs) == 0 {
		t.Fatal("no request was sent")
	}
	for i, r := range recs {
		if err := apischema.Validate(rs, r.Raw); err != nil {
			t.Errorf("request %d is not valid under the official schema: %v\n%.800s", i, err, r.Raw)
		}
	}
}

// With a gpt-5.x-codex model, apply_patch is offered as a custom tool with
// its grammar (and not as a function); the model's custom_tool_call is
// asked about with every file's diff, approval changes the files, and the
// answer goes back as a custom_tool_call_output under the call's id, in an
// incremental request. Every request is valid under the official schema.
func TestApplyPatchCustomToolAsked(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	if stop := ed.prompt(id, simCustom("apply_patch", testPatch)); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	checkPatchApplied(t, td, ed, a, id)
	callID := toolCallID(t, ed)
	if typ, _ := sentOutput(t, td, callID); typ != "custom_tool_call_output" {
		t.Errorf("the call was answered with a %s", typ)
	}
	recs := td.sim.Received()
	if tools := toolTypes(t, recs[0]); tools["apply_patch"] != "custom" || tools["update_plan"] != "function" || tools["exec_command"] != "function" {
		t.Errorf("tools offered %v", tools)
	}
	for _, r := range recs {
		for _, it := range r.Input {
			if strings.Contains(string(it), `"custom_tool_call_output"`) && r.PreviousResponseID == "" {
				t.Errorf("the output went in a full request: %s", r.Raw)
			}
		}
	}
	var raw map[string]string
	if err := json.Unmarshal(mustJSON(t, a.seen[0].ToolCall.RawInput), &raw); err != nil || raw["input"] != testPatch {
		t.Errorf("the permission request's raw input %v (%v)", a.seen[0].ToolCall.RawInput, err)
	}
	checkRequestsValid(t, td)
}

// completion is the update that ended callID, nil if none did.
func completion(ups []acp.SessionUpdate, callID string) *acp.SessionToolCallUpdate {
	for _, u := range ups {
		if tu := u.ToolCallUpdate; tu != nil && string(tu.ToolCallId) == callID && tu.Status != nil && *tu.Status == acp.ToolCallStatusCompleted {
			return tu
		}
	}
	return nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The model's habit with the same model: apply_patch in a heredoc through
// shell. It is applied as a patch after permission and answered as what it
// is, a function call's output.
func TestApplyPatchShellWithCodexModel(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, simCall(t, "shell", map[string]string{"command": "apply_patch <<'EOF'\n" + testPatch + "EOF\n"}))
	checkPatchApplied(t, td, ed, a, id)
	if typ, _ := sentOutput(t, td, toolCallID(t, ed)); typ != "function_call_output" {
		t.Errorf("the shell call was answered with a %s", typ)
	}
	checkRequestsValid(t, td)
}

// An o-series model gets apply_patch as a function taking {input}: the
// plain word patch calls it so, and it applies after permission. A model
// of no patch style (gpt-4o) is not offered apply_patch at all.
func TestApplyPatchStyleByProfile(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "o3" })
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "patch a.txt beta gamma")
	if got := readA(t, td); got != "alpha\ngamma\n" || a.asked() != 1 {
		t.Fatalf("a.txt = %q after %d questions", got, a.asked())
	}
	if typ, out := sentOutput(t, td, toolCallID(t, ed)); typ != "function_call_output" || !strings.HasPrefix(out, "Success. Updated the following files:") {
		t.Errorf("answered with %s %q", typ, out)
	}
	if tools := toolTypes(t, td.sim.Received()[0]); tools["apply_patch"] != "function" || tools["update_plan"] != "function" {
		t.Errorf("o3 was offered %v", tools)
	}
	checkRequestsValid(t, td)

	plain := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-4o" })
	e := plain.connect()
	e.initialize()
	e.prompt(e.newSession(plain.root), "patch a.txt beta gamma")
	if tools := toolTypes(t, plain.sim.Received()[0]); tools["apply_patch"] != "" || tools["edit_file"] != "function" {
		t.Errorf("gpt-4o was offered %v", tools)
	}
	if got := readA(t, plain); got != "alpha\nbeta\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// A session with a custom tool call survives a restart: session/load shows
// the call (its input as raw input) and its result with the diff, as live;
// the first request after the restart, a full one, replays the call without
// its id and is valid; a prompt then chains on it.
func TestCustomToolCallAfterRestart(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, simCustom("apply_patch", testPatch))
	callID := toolCallID(t, ed)
	n := len(td.sim.Received())
	ed.c.Close()
	td.d.Close()

	td.restart()
	ed2 := td.connect()
	ed2.initialize()
	ed2.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	started := false
	for _, u := range ed2.updates() {
		if tc := u.ToolCall; tc != nil && string(tc.ToolCallId) == callID {
			var raw map[string]string
			json.Unmarshal(mustJSON(t, tc.RawInput), &raw)
			started = tc.Kind == acp.ToolKindEdit && raw["input"] == testPatch
		}
	}
	live, replayed := completion(ed.updates(), callID), completion(ed2.updates(), callID)
	if !started || live == nil || replayed == nil || *replayed.Title != "Patch 2 files" ||
		string(mustJSON(t, replayed)) != string(mustJSON(t, live)) {
		t.Fatalf("the replay shows the call %v, its result\n%s\nlive\n%s", started, mustJSON(t, replayed), mustJSON(t, live))
	}
	if stop := ed2.prompt(id, "hi"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := td.waitRequests(n + 2)[n:]
	full := recs[0]
	if full.PreviousResponseID != "" {
		t.Fatalf("the first request after the restart chained: %s", full.Raw)
	}
	var call, output bool
	for _, it := range full.Input {
		var h struct{ Type, ID, Status string }
		json.Unmarshal(it, &h)
		switch h.Type {
		case "custom_tool_call":
			call = h.ID == "" && h.Status == ""
		case "custom_tool_call_output":
			output = true
		}
	}
	if !call || !output {
		t.Errorf("the full request replays the call (without id) %v and its output %v: %s", call, output, full.Raw)
	}
	if recs[1].PreviousResponseID != full.ResponseID {
		t.Errorf("the prompt after the restart did not chain on the re-warm")
	}
	checkRequestsValid(t, td)
}
