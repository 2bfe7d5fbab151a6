package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// steerSession sends _session/steering and returns its outcome.
func (e *editor) steer(id acp.SessionId, text string, meta map[string]any) string {
	e.t.Helper()
	params := map[string]any{"sessionId": id, "prompt": []acp.ContentBlock{acp.TextBlock(text)}}
	if meta != nil {
		params["_meta"] = meta
	}
	var r struct {
		Outcome string `json:"outcome"`
	}
	e.must(rpc.MethodSessionSteering, params, &r)
	return r.Outcome
}

// promptAsync sends session/prompt and returns a channel with its stop reason.
func (e *editor) promptAsync(id acp.SessionId, text string) <-chan acp.StopReason {
	done := make(chan acp.StopReason, 1)
	go func() {
		var r acp.PromptResponse
		if err := e.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r); err != nil {
			e.t.Errorf("prompt %q: %v", text, err)
		}
		done <- r.StopReason
	}()
	return done
}

func userTexts(ups []acp.SessionUpdate) []string {
	var out []string
	for _, u := range ups {
		if m := u.UserMessageChunk; m != nil && m.Content.Text != nil {
			out = append(out, m.Content.Text.Text)
		}
	}
	return out
}

func creates(recs []sim.Received) []sim.Received {
	var out []sim.Received
	for _, r := range recs {
		if r.Type == "response.create" {
			out = append(out, r)
		}
	}
	return out
}

// During a streaming answer, _session/steering is injected: the model API
// gets one response.steer for the running response and no new create, the
// turn ends end_turn with the successor's answer, the next prompt chains
// on the successor, and session/load replays the steering once, in place.
func TestSteeringStreamingAnswer(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	var init struct {
		Meta map[string]map[string]any `json:"_meta"`
	}
	e.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init)
	if init.Meta["steering"]["supported"] != true {
		t.Fatalf("initialize _meta %v", init.Meta)
	}
	id := e.newSession(td.root)
	done := e.promptAsync(id, "slow")
	e.waitFor("the answer streaming", func(ups []acp.SessionUpdate) bool { return agentText(ups) != "" })
	if out := e.steer(id, "say banana", nil); out != "injected" {
		t.Fatalf("outcome %q", out)
	}
	if stop := <-done; stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	if txt := agentText(e.updates()); !strings.HasSuffix(txt, "You said: say banana") {
		t.Fatalf("answer %q", txt)
	}
	recs := td.sim.Received()
	var steers []sim.Received
	for _, r := range recs {
		if r.Type == "response.steer" {
			steers = append(steers, r)
		}
	}
	cs := creates(recs)
	if len(steers) != 1 || len(cs) != 2 || steers[0].PreviousResponseID != cs[1].ResponseID || steers[0].CommittedTo == "" {
		t.Fatalf("%d steers %+v, %d creates", len(steers), steers, len(cs))
	}
	if stop := e.prompt(id, "next"); stop != acp.StopReasonEndTurn {
		t.Fatalf("next stop %q", stop)
	}
	cs = creates(td.sim.Received())
	if last := cs[len(cs)-1]; last.PreviousResponseID != steers[0].CommittedTo {
		t.Fatalf("next request chains on %q, want the successor %q", last.PreviousResponseID, steers[0].CommittedTo)
	}

	l := td.connect()
	l.initialize()
	l.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if got := strings.Join(userTexts(l.updates()), "|"); !strings.HasSuffix(got, "slow|say banana|next") || strings.Count(got, "say banana") != 1 {
		t.Fatalf("replayed user messages %q", got)
	}
}

// With no turn running, a steer starts one (startedNewTurn), unless the
// request needs a running turn (idleBehavior promptRequired: failed).
func TestSteeringIdleSession(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if out := e.steer(id, "hello", map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}}); out != "failed" {
		t.Fatalf("promptRequired outcome %q", out)
	}
	if out := e.steer(id, "hello", nil); out != "startedNewTurn" {
		t.Fatalf("idle outcome %q", out)
	}
	e.waitFor("the new turn's answer", func(ups []acp.SessionUpdate) bool {
		return strings.Contains(agentText(ups), "You said: hello")
	})
	if n := len(creates(td.waitRequests(2))); n != 2 { // warm-up, the turn
		t.Fatalf("%d creates", n)
	}
}

// With steering refused by the model API, the input still reaches the
// model exactly once.
func TestSteeringRefusedReachesModelOnce(t *testing.T) {
	td := startDaemon(t, sim.Options{NoSteering: true, Cost: sim.Cost{TokensPerSecond: 50}}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	done := e.promptAsync(id, "talk sim:tokens=30")
	e.waitFor("the answer streaming", func(ups []acp.SessionUpdate) bool { return agentText(ups) != "" })
	if out := e.steer(id, "say banana", nil); out != "injected" {
		t.Fatalf("outcome %q", out)
	}
	if stop := <-done; stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	n := 0
	for _, r := range creates(td.sim.Received()) {
		for _, it := range r.Input {
			if strings.Contains(string(it), "say banana") {
				n++
			}
		}
	}
	if n != 1 {
		t.Fatalf("the steering reached the model %d times", n)
	}
	if txt := agentText(e.updates()); !strings.HasSuffix(txt, "You said: say banana") {
		t.Fatalf("answer %q", txt)
	}
}

// A session/prompt that arrives while the session's turn runs is queued
// and runs as the next turn, never refused, never interleaved.
func TestPromptDuringTurnIsQueued(t *testing.T) {
	td := startDaemon(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 50}}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	first := e.promptAsync(id, "talk sim:tokens=20")
	e.waitFor("the answer streaming", func(ups []acp.SessionUpdate) bool { return agentText(ups) != "" })
	second := e.promptAsync(id, "second")
	if stop := <-first; stop != acp.StopReasonEndTurn {
		t.Fatalf("first stop %q", stop)
	}
	if stop := <-second; stop != acp.StopReasonEndTurn {
		t.Fatalf("second stop %q", stop)
	}
	cs := creates(td.sim.Received())
	if len(cs) != 3 {
		t.Fatalf("%d creates", len(cs))
	}
	if !cs[2].At.After(cs[1].AnsweredAt) || cs[2].PreviousResponseID != cs[1].ResponseID {
		t.Fatalf("the second prompt's request did not follow the first's answer: %+v", cs[2])
	}
	raw, _ := json.Marshal(cs[2].Input)
	if !strings.Contains(string(raw), "second") {
		t.Fatalf("second request input %s", raw)
	}
}

// A steer while a tool waits for its approval reaches the model API as one
// response.steer for the response that called the tool, held there
// (response.steer.pending), and one continuation carries only the tool's
// output.
func TestSteeringWhileToolRuns(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	asked, allow := make(chan struct{}), make(chan struct{})
	e := td.connectAnswering(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(asked)
		<-allow
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("allow_once")}, nil
	})
	e.initialize()
	id := e.newSession(td.root)
	done := e.promptAsync(id, writeA)
	<-asked
	other := td.connect()
	other.initialize()
	if out := other.steer(id, "say banana", nil); out != "injected" {
		t.Fatalf("outcome %q", out)
	}
	close(allow)
	if stop := <-done; stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	recs := td.sim.Received()
	cs := creates(recs)
	steers := 0
	for _, r := range recs {
		if r.Type == "response.steer" {
			steers++
			if r.PreviousResponseID != cs[1].ResponseID || r.Outcome != sim.OutcomeSteerAccepted {
				t.Fatalf("steer record %+v", r)
			}
		}
	}
	if steers != 1 || len(cs) != 3 {
		t.Fatalf("%d steers, %d creates", steers, len(cs))
	}
	var item struct {
		Type string `json:"type"`
	}
	if cont := cs[2]; len(cont.Input) != 1 || json.Unmarshal(cont.Input[0], &item) != nil || item.Type != "function_call_output" || cont.PreviousResponseID != cs[1].ResponseID {
		t.Fatalf("continuation %+v", cont)
	}
}
