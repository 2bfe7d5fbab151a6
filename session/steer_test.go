package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// steerWhenFirstText runs a prompt and steers it with text once the answer
// streams; it returns the turn's stop reason and Steer's outcome.
func steerWhenFirstText(t *testing.T, c *session.Conversation, prompt, text string) (session.StopReason, session.SteerOutcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := newRecorder()
	type result struct {
		stop session.StopReason
		err  error
	}
	done := make(chan result, 1)
	go func() {
		stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(prompt)}, rec)
		done <- result{stop, err}
	}()
	select {
	case <-rec.first:
	case r := <-done:
		t.Fatalf("turn ended before any text: %v %v", r.stop, r.err)
	}
	out, err := c.Steer(ctx, []json.RawMessage{session.UserMessage(text)})
	if err != nil {
		t.Fatalf("steer: %v", err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("prompt: %v", r.err)
	}
	return r.stop, out
}

// storedTexts lists the stored transcript as "role:text" (messages) or types,
// without the pending records of steering input.
func storedTexts(t *testing.T, e *env, id string) []string {
	t.Helper()
	items, err := e.db.Items().List(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		var m struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(it.Data, &m)
		switch _, pending := session.Shown(it.View); {
		case pending:
			// a pending record of steering input: the editor's and the model's transcript leave it out
		case it.Type == "message" && len(m.Content) > 0:
			txt := m.Content[0].Text
			if len(txt) > 20 {
				txt = txt[:20]
			}
			out = append(out, m.Role+":"+txt)
		case it.Type != "reasoning":
			out = append(out, it.Type)
		}
	}
	return out
}

func countType(recs []sim.Received, typ string) int {
	n := 0
	for _, r := range recs {
		if r.Type == typ {
			n++
		}
	}
	return n
}

// Steering a streaming answer: one response.steer for the running
// response, no new create; the answer so far is kept, the successor's
// answers the steering in the same turn, and the transcript has the
// steering message between them. The next prompt chains on the successor.
func TestSteerStreamingAnswer(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	stop, out := steerWhenFirstText(t, c, "slow", "say banana")
	if stop != session.StopEndTurn || out != session.SteerInjected {
		t.Fatalf("stop %s outcome %v", stop, out)
	}
	recs := e.sim.Received()
	if countType(recs, "response.steer") != 1 || countType(recs, "response.create") != 2 { // warm-up + the prompt
		t.Fatalf("records: %d steer, %d create", countType(recs, "response.steer"), countType(recs, "response.create"))
	}
	steer := recs[len(recs)-1]
	if steer.Outcome != sim.OutcomeSteerAccepted || steer.CommittedTo == "" || steer.PreviousResponseID != recs[1].ResponseID {
		t.Fatalf("steer record %+v", steer)
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.HasPrefix(got, "user:slow | assistant:") || !strings.HasSuffix(got, " | user:say banana | assistant:You said: say banana") {
		t.Fatalf("stored transcript %s", got)
	}
	// The next prompt chains on the successor.
	prompt(t, c, "next", newRecorder())
	recs = e.wait(4)
	last := recs[len(recs)-1]
	if last.Type != "response.create" || last.PreviousResponseID != steer.CommittedTo || len(last.Input) != 1 {
		t.Fatalf("next request prev %q (successor %q), %d items", last.PreviousResponseID, steer.CommittedTo, len(last.Input))
	}
}

// With steering refused, the input still reaches the model once: in the
// turn's next request (here a new request after the answer).
func TestSteerRefusedReachesModelOnce(t *testing.T) {
	e := newEnv(t, sim.Options{NoSteering: true, Cost: sim.Cost{TokensPerSecond: 50}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	stop, out := steerWhenFirstText(t, c, "talk sim:tokens=30", "say banana")
	if stop != session.StopEndTurn || out != session.SteerInjected {
		t.Fatalf("stop %s outcome %v", stop, out)
	}
	recs := e.sim.Received()
	banana := 0
	for _, r := range recs {
		if r.Type != "response.create" {
			continue
		}
		for _, it := range r.Input {
			if strings.Contains(string(it), "say banana") {
				banana++
			}
		}
	}
	if banana != 1 {
		t.Fatalf("the steering reached the model %d times, want once", banana)
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.HasSuffix(got, " | user:say banana | assistant:You said: say banana") {
		t.Fatalf("stored transcript %s", got)
	}
}

// callSignal is a recorder that also says when the model's first tool call
// begins streaming.
type callSignal struct {
	*recorder
	call chan struct{}
	once bool
}

func (s *callSignal) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	s.recorder.ToolCall(call, status, res)
	if status == "pending" && !s.once {
		s.once = true
		close(s.call)
	}
}

// A steer while the model streams a tool call is held by the server
// (response.steer.pending); the continuation carries the tool output alone,
// the tool runs once, and the transcript has the steering message where the
// server put it: after the call, before its output.
func TestSteerHeldForToolContinuation(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 20}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink := &callSignal{recorder: newRecorder(), call: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(`go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt","why":"because"}`)}, sink)
		done <- err
	}()
	<-sink.call
	if out, err := c.Steer(ctx, []json.RawMessage{session.UserMessage("say banana")}); err != nil || out != session.SteerInjected {
		t.Fatalf("steer: %v %v", out, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := e.sim.Received()
	var creates []sim.Received
	for _, r := range recs {
		if r.Type == "response.create" {
			creates = append(creates, r)
		}
	}
	if countType(recs, "response.steer") != 1 || len(creates) != 3 {
		t.Fatalf("%d steers, %d creates", countType(recs, "response.steer"), len(creates))
	}
	cont := creates[2]
	if len(cont.Input) != 1 || itemType(cont.Input[0]) != "function_call_output" {
		t.Fatalf("continuation input %s", cont.Input)
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.Contains(got, "function_call | user:say banana | function_call_output | assistant:") {
		t.Fatalf("stored transcript %s", got)
	}
	for id, n := range e.tools.runs {
		if n != 1 {
			t.Fatalf("call %s ran %d times", id, n)
		}
	}
}

// gatedTools runs the workspace's tools once a test lets each call go.
type gatedTools struct {
	*wsTools
	started chan struct{}
	release chan struct{}
}

func (g *gatedTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	g.started <- struct{}{}
	<-g.release
	return g.wsTools.Run(ctx, call)
}

// A steer while a tool runs reaches the server as response.steer for the
// response that waits for the tool's output: held (response.steer.pending),
// and the one continuation carries only the tool output.
func TestSteerWhileToolRuns(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	tools := &gatedTools{wsTools: e.tools, started: make(chan struct{}), release: make(chan struct{})}
	c := e.openWith("s1", tools)
	warm(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(`go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`)}, newRecorder())
		done <- err
	}()
	<-tools.started
	if out, err := c.Steer(ctx, []json.RawMessage{session.UserMessage("say banana")}); err != nil || out != session.SteerInjected {
		t.Fatalf("steer: %v %v", out, err)
	}
	// Stored once answered: a kill while the tool runs loses nothing.
	if got := strings.Join(storedTexts(t, e, "s1"), " | "); !strings.HasSuffix(got, "function_call | user:say banana") {
		t.Fatalf("stored while the tool runs: %s", got)
	}
	close(tools.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := e.sim.Received()
	var creates []sim.Received
	for _, r := range recs {
		if r.Type == "response.create" {
			creates = append(creates, r)
		}
	}
	steers := countType(recs, "response.steer")
	if steers != 1 || len(creates) != 3 {
		t.Fatalf("%d steers, %d creates", steers, len(creates))
	}
	if cont := creates[2]; len(cont.Input) != 1 || itemType(cont.Input[0]) != "function_call_output" {
		t.Fatalf("continuation input %s", cont.Input)
	}
	// Stored as it came, while the tool ran: where the server put it,
	// after the call and before its output.
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.Contains(got, "function_call | user:say banana | function_call_output | assistant:") || strings.Count(got, "say banana") != 1 {
		t.Fatalf("stored transcript %s", got)
	}
}

// Over HTTP there is no steering: the input joins the turn's next request,
// a request of its own once the model has answered, and reaches the model
// once.
func TestSteerOverHTTPJoinsNextRequest(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 50}}, session.Config{Config: responses.Config{ForceHTTP: true}})
	c := e.open("s1")
	stop, out := steerWhenFirstText(t, c, "talk sim:tokens=30", "say banana")
	if stop != session.StopEndTurn || out != session.SteerInjected {
		t.Fatalf("stop %s outcome %v", stop, out)
	}
	n := 0
	for _, r := range e.sim.Received() {
		for _, it := range r.Input {
			if strings.Contains(string(it), "say banana") {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("the steering reached the model %d times", n)
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.HasSuffix(got, " | user:say banana | assistant:You said: say banana") {
		t.Fatalf("stored transcript %s", got)
	}
}

// A connection lost right after a steer leaves its outcome unknown: the
// turn's retry on a new connection carries the input once, and the
// transcript holds it once.
func TestSteerUnknownAfterDrop(t *testing.T) {
	var srv *sim.Server
	dropped := make(chan struct{})
	opts := sim.Options{OnReceived: func(r sim.Received) {
		if r.Type == "response.steer" {
			go func() { srv.DropConnections(); close(dropped) }()
		}
	}}
	e := newEnv(t, opts, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	srv = e.sim
	c := e.open("s1")
	warm(t, c)
	stop, out := steerWhenFirstText(t, c, "slow", "say banana")
	<-dropped
	if stop != session.StopEndTurn || out != session.SteerInjected {
		t.Fatalf("stop %s outcome %v", stop, out)
	}
	var creates []sim.Received
	for _, r := range e.sim.Received() {
		if r.Type == "response.create" {
			creates = append(creates, r)
		}
	}
	last := creates[len(creates)-1]
	raw, _ := json.Marshal(last.Input)
	if strings.Count(string(raw), "say banana") != 1 {
		t.Fatalf("the last request (%d items) carries the steering %d times", len(last.Input), strings.Count(string(raw), "say banana"))
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if strings.Count(got, "user:say banana") != 1 || !strings.HasSuffix(got, "assistant:You said: say banana") {
		t.Fatalf("stored transcript %s", got)
	}
}

// Input the server refused while a call streamed waits for the next
// request; it is stored before the tools run, so a kill loses nothing, and
// reaches the model once.
func TestSteerRefusedStoredBeforeTools(t *testing.T) {
	e := newEnv(t, sim.Options{NoSteering: true, Cost: sim.Cost{TokensPerSecond: 20}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	tools := &gatedTools{wsTools: e.tools, started: make(chan struct{}), release: make(chan struct{})}
	c := e.openWith("s1", tools)
	warm(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink := &callSignal{recorder: newRecorder(), call: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(`go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt","why":"because"}`)}, sink)
		done <- err
	}()
	<-sink.call
	if out, err := c.Steer(ctx, []json.RawMessage{session.UserMessage("say banana")}); err != nil || out != session.SteerInjected {
		t.Fatalf("steer: %v %v", out, err)
	}
	<-tools.started
	if got := strings.Join(storedTexts(t, e, "s1"), " | "); strings.Count(got, "user:say banana") != 1 {
		t.Fatalf("stored while the tool runs: %s", got)
	}
	close(tools.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range e.sim.Received() {
		if r.Type != "response.create" {
			continue
		}
		for _, it := range r.Input {
			if strings.Contains(string(it), "say banana") {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("the steering reached the model %d times", n)
	}
}

// A steered response whose successor the server cannot create
// (response.steer.failed, successor_creation_failed, after the response
// ended steered): the turn goes on at once, not after the stream's idle
// timeout; the input reaches the model once, in the next request, chained
// on the steered response.
func TestSteerSuccessorCreationFailed(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultSuccessorFailed})
	stop, out := steerWhenFirstText(t, c, "slow", "say banana")
	if stop != session.StopEndTurn || out != session.SteerInjected {
		t.Fatalf("stop %s outcome %v", stop, out)
	}
	recs := e.sim.Received()
	cs := []sim.Received{}
	for _, r := range recs {
		if r.Type == "response.create" {
			cs = append(cs, r)
		}
	}
	if countType(recs, "response.steer") != 1 || len(cs) != 3 { // warm-up, the prompt, the steering's
		t.Fatalf("records: %d steer, %d create", countType(recs, "response.steer"), len(cs))
	}
	if next := cs[2]; next.PreviousResponseID != cs[1].ResponseID || len(next.Input) != 1 || !strings.Contains(string(next.Input[0]), "say banana") {
		t.Fatalf("the request after the lost successor: %s", next.Raw)
	}
	got := strings.Join(storedTexts(t, e, "s1"), " | ")
	if !strings.HasPrefix(got, "user:slow | assistant:") || !strings.HasSuffix(got, " | user:say banana | assistant:You said: say banana") || strings.Count(got, "say banana") != 2 {
		t.Fatalf("stored transcript %s", got)
	}
}
