package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// customPatchTools offers the workspace's tools with apply_patch as a
// custom tool with its grammar, as a freeform-patch model gets it.
func customPatchTools(w *wsTools) *wsTools {
	c := &wsTools{ts: w.ts, runs: map[string]int{}}
	for _, t := range w.ts.Tools() {
		if t.Grammar != "" {
			c.specs = append(c.specs, t.CustomSpec())
		} else {
			c.specs = append(c.specs, t.Spec())
		}
	}
	return c
}

// checkSchema fails t for every request the simulator received that the
// official Responses API schema refuses.
func checkSchema(t *testing.T, recs []sim.Received) {
	t.Helper()
	rs, err := apischema.Responses("ResponsesClientEventResponseCreate")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if err := apischema.Validate(rs, r.Raw); err != nil {
			t.Errorf("request %d is not valid under the official schema: %v\n%.600s", i, err, r.Raw)
		}
	}
}

// A custom tool call (apply_patch offered with its grammar) runs like a
// function call: the editor hears it pending, running and completed, the
// tool gets {"input": text}, the answer is a custom_tool_call_output under
// the call's id in an incremental request; the transcript keeps both items,
// and a full request (a reopened conversation's warm-up) replays the call
// without its id. Every request is valid under the official schema.
func TestCustomToolCallRoundTrip(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, Model: "gpt-5.3-codex"})
	tools := customPatchTools(e.tools)
	c := e.openWith("s1", tools)
	warm(t, c)
	rec := newRecorder()
	if stop, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("patch a.txt beta gamma")}, rec); err != nil || stop != session.StopEndTurn {
		t.Fatalf("prompt: %s, %v", stop, err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if want := []string{"apply_patch:pending", "apply_patch:in_progress", "apply_patch:completed"}; !slices.Equal(rec.calls, want) {
		t.Errorf("the sink heard %q, want %q", rec.calls, want)
	}
	recs := e.wait(3) // warm-up, the call, the answer
	var call struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
		Name   string `json:"name"`
		Input  string `json:"input"`
	}
	stored, err := e.db.Items().List(context.Background(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range stored {
		if itemType(it.Data) == "custom_tool_call" {
			json.Unmarshal(it.Data, &call)
		}
	}
	if call.CallID == "" || call.ID == "" || call.Name != "apply_patch" || !strings.Contains(call.Input, "+gamma") {
		t.Fatalf("the store holds no custom_tool_call as received: %v", stored)
	}
	checkTranscript(t, e, c) // memory holds it too, as its replay form
	answer := recs[2]
	if answer.PreviousResponseID == "" || len(answer.Input) != 1 {
		t.Fatalf("the output did not go incrementally: previous %q, input %s", answer.PreviousResponseID, answer.Input)
	}
	var out struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	json.Unmarshal(answer.Input[0], &out)
	if out.Type != "custom_tool_call_output" || out.CallID != call.CallID || !strings.HasPrefix(out.Output, "Success. Updated the following files:") {
		t.Fatalf("the call was answered with %s", answer.Input[0])
	}
	if tools.runs[call.CallID] != 1 {
		t.Errorf("the tool ran %d times", tools.runs[call.CallID])
	}

	// A reopened conversation warms up with the whole transcript, in full:
	// the custom call goes without the id the server gave it.
	c.Close()
	c2 := e.reopenWith("s1", tools)
	warm(t, c2)
	full := e.wait(4)[3]
	if full.PreviousResponseID != "" {
		t.Fatalf("the reopened warm-up chained on %s", full.PreviousResponseID)
	}
	var replayed json.RawMessage
	for _, it := range full.Input {
		if itemType(it) == "custom_tool_call" {
			replayed = it
		}
	}
	if replayed == nil || strings.Contains(string(replayed), call.ID) || strings.Contains(string(replayed), `"status"`) ||
		!strings.Contains(string(replayed), call.CallID) {
		t.Fatalf("the full request replays the call as %s", replayed)
	}
	checkSchema(t, e.wait(4))
}

// A transcript ending in a custom tool call with no output (the daemon died
// while it ran) is repaired on open with a custom_tool_call_output, the only
// answer the API pairs with it, and the tool is not run again.
func TestOpenRepairsUnansweredCustomCall(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	ctx := context.Background()
	if err := e.db.CreateSession(ctx, store.Session{ID: "s1", Root: e.root}); err != nil {
		t.Fatal(err)
	}
	call := `{"type":"custom_tool_call","id":"ctc_1","call_id":"call_1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}`
	if _, err := e.db.Items().Append(ctx, "s1", 0, []store.NewItem{
		{Origin: store.OriginInput, Data: session.UserMessage("patch it")},
		{Origin: store.OriginOutput, Data: json.RawMessage(call)},
	}); err != nil {
		t.Fatal(err)
	}
	c := e.reopen("s1")
	tr := session.TranscriptOf(c)
	if len(tr) != 3 || itemType(tr[2]) != "custom_tool_call_output" || !strings.Contains(string(tr[2]), "call_1") {
		t.Fatalf("transcript not repaired: %s", tr)
	}
	if e.tools.runs["call_1"] != 0 {
		t.Fatal("a tool ran again on open")
	}
	warm(t, c)
	checkSchema(t, e.wait(1))
}
