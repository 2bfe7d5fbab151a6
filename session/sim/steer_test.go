package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// steerEv is the part of a steering event the tests read.
type steerEv struct {
	Type  string `json:"type"`
	Steer struct {
		ID                 string          `json:"id"`
		PreviousResponseID string          `json:"previous_response_id"`
		Input              json.RawMessage `json:"input"`
	} `json:"steer"`
	Error         *apiErr          `json:"error"`
	Reason        string           `json:"reason"`
	RequiredInput []map[string]any `json:"required_input"`
}

func steerOf(t *testing.T, e event) steerEv {
	t.Helper()
	var s steerEv
	if err := json.Unmarshal(e.raw, &s); err != nil {
		t.Fatalf("decode %s: %v", e.raw, err)
	}
	return s
}

func (c *client) steer(prevID string, input any) {
	c.t.Helper()
	c.send(map[string]any{"type": "response.steer", "previous_response_id": prevID, "input": input})
}

// until reads events until one of type typ, returning them all.
func (c *client) until(typ string) []event {
	c.t.Helper()
	var evs []event
	for {
		e := c.read()
		evs = append(evs, e)
		if e.Type == typ {
			return evs
		}
	}
}

func TestSteerStreamingResponseEndsSteeredAndSucceeds(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": []any{userMsg("slow")}})
	first := c.until("response.output_text.delta")
	id := first[0].Response.ID
	c.steer(id, "say banana")

	evs := c.until("response.incomplete")
	var accepted steerEv
	for _, e := range evs {
		if e.Type == "response.steer.accepted" {
			accepted = steerOf(t, e)
		}
	}
	if accepted.Steer.ID == "" || accepted.Steer.PreviousResponseID != id {
		t.Fatalf("no response.steer.accepted for %s before the end: %v", id, types(evs))
	}
	end := last(evs).Response
	if end.IncompleteDetails == nil || end.IncompleteDetails.Reason != "steered" || len(end.Output) == 0 {
		t.Fatalf("steered end %s", last(evs).raw)
	}
	var kept outItem
	_ = json.Unmarshal(end.Output[len(end.Output)-1], &kept)
	if partial := textOf(append(first, evs...)); partial == "" || kept.Status != "incomplete" || kept.Content[0].Text != partial {
		t.Fatalf("partial answer %q, kept %+v", partial, kept)
	}

	succ := c.untilTerminal()
	created := succ[0]
	if created.Type != "response.created" || created.Response.PreviousResponseID == nil || *created.Response.PreviousResponseID != id {
		t.Fatalf("successor opens with %s", created.raw)
	}
	r := completed(t, succ)
	if got := textOf(succ); got != "You said: say banana" {
		t.Fatalf("successor text %q", got)
	}

	// The lane's latest response is the successor: the next request chains on it.
	next := c.create(map[string]any{"previous_response_id": r.ID, "input": []any{userMsg("again")}})
	completed(t, next)

	recs := waitRecs(t, srv, 3)
	if recs[1].Type != "response.steer" || recs[1].Outcome != OutcomeSteerAccepted || recs[1].SteerID != accepted.Steer.ID || recs[1].CommittedTo != r.ID {
		t.Fatalf("steer record %+v", recs[1])
	}
	// A steer for the ended response is refused and returns its input.
	c.steer(id, "too late")
	if s := steerOf(t, c.read()); s.Type != "response.steer.failed" || s.Error.Code != "response_already_completed" || string(s.Steer.Input) != `"too late"` || s.Steer.ID != "" {
		t.Fatalf("late steer answered %+v", s)
	}
}

func TestSteerRefusals(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": []any{userMsg("slow")}, "stream_id": "a"})
	id := c.until("response.output_text.delta")[0].Response.ID

	cases := []struct {
		name  string
		frame map[string]any
		code  string
	}{
		{"stream_id", map[string]any{"previous_response_id": id, "input": "x", "stream_id": "a"}, "invalid_input"},
		{"assistant", map[string]any{"previous_response_id": id, "input": []any{map[string]any{"role": "assistant", "content": "x"}}}, "invalid_input"},
		{"tool output", map[string]any{"previous_response_id": id, "input": []any{map[string]any{"type": "function_call_output", "call_id": "c", "output": "x"}}}, "invalid_input"},
		{"output part", map[string]any{"previous_response_id": id, "input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "output_text", "text": "x"}}}}}, "invalid_input"},
		{"empty", map[string]any{"previous_response_id": id, "input": []any{}}, "invalid_input"},
		{"no target", map[string]any{"input": "x"}, "invalid_input"},
		{"unknown", map[string]any{"previous_response_id": "resp_nope", "input": "x"}, "response_not_found"},
	}
	for _, tc := range cases {
		tc.frame["type"] = "response.steer"
		c.send(tc.frame)
		var e event
		for e = c.read(); e.Type != "response.steer.failed"; e = c.read() {
		}
		if s := steerOf(t, e); s.Error == nil || s.Error.Code != tc.code || s.Error.Type != "invalid_request_error" {
			t.Fatalf("%s: %s", tc.name, e.raw)
		}
	}
	// A well-formed user message is accepted, and its events name the target's lane.
	c.steer(id, []any{userMsg("fine")})
	evs := c.until("response.steer.accepted")
	if e := last(evs); e.lane() != "a" {
		t.Fatalf("accepted %s", e.raw)
	}
}

func TestSteerTooManyPending(t *testing.T) {
	_, base := newSim(t, Options{Cost: Cost{FirstToken: time.Hour}})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": []any{userMsg("hello")}})
	id := c.until("response.in_progress")[0].Response.ID
	for range MaxPendingSteers {
		c.steer(id, "more")
	}
	c.steer(id, "one too many")
	if s := steerOf(t, c.read()); s.Type != "response.steer.failed" || s.Error.Code != "too_many_pending_steers" {
		t.Fatalf("answer %+v", s)
	}
}

func TestSteerNotSupported(t *testing.T) {
	_, base := newSim(t, Options{NoSteering: true})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": []any{userMsg("slow")}})
	id := c.until("response.output_text.delta")[0].Response.ID
	c.steer(id, "say banana")
	var e event
	for e = c.read(); e.Type != "response.steer.failed"; e = c.read() {
	}
	if s := steerOf(t, e); s.Error.Code != "steering_not_supported" || string(s.Steer.Input) != `"say banana"` {
		t.Fatalf("answer %s", e.raw)
	}
}

// A steer while the client runs the response's tool is held: accepted, then pending with the
// stubs of the outputs; the client's one continuation carries the outputs and the server
// prepends the steering input.
func TestSteerWaitingForToolOutput(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	tools := []any{fnTool("read_file")}
	evs := c.create(map[string]any{"tools": tools, "input": []any{userMsg("sim:calls=1")}})
	r := completed(t, evs)
	var call outItem
	_ = json.Unmarshal(r.Output[len(r.Output)-1], &call)

	c.steer(r.ID, "say banana")
	acc, pend := steerOf(t, c.read()), steerOf(t, c.read())
	if acc.Type != "response.steer.accepted" || pend.Type != "response.steer.pending" || pend.Reason != "waiting_for_required_input" || pend.Steer.ID != acc.Steer.ID {
		t.Fatalf("events %+v %+v", acc, pend)
	}
	want := []map[string]any{{"type": "function_call_output", "call_id": call.CallID, "name": "read_file"}}
	if !reflect.DeepEqual(pend.RequiredInput, want) {
		t.Fatalf("required_input %v, want %v", pend.RequiredInput, want)
	}

	out := map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "contents"}
	cont := c.create(map[string]any{"tools": tools, "previous_response_id": r.ID, "input": []any{out}})
	cr := completed(t, cont)
	if got := textOf(cont); !strings.HasPrefix(got, "I called a tool 1 time(s)") {
		t.Fatalf("continuation text %q", got)
	}
	recs := waitRecs(t, srv, 3)
	if len(recs[2].Input) != 1 || recs[1].CommittedTo != cr.ID {
		t.Fatalf("continuation input %s, steer committed to %q (want %q)", recs[2].Input, recs[1].CommittedTo, cr.ID)
	}
	// Once continued, the response no longer takes steering.
	c.steer(r.ID, "late")
	if s := steerOf(t, c.read()); s.Error == nil || s.Error.Code != "response_already_completed" {
		t.Fatalf("late steer %+v", s)
	}
}
