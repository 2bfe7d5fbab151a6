package session_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

func prompt(t *testing.T, c *session.Conversation, text string, sink session.Sink) session.StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(text)}, sink)
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return stop
}

// The spine: a warm-up with generate:false, then a tool loop in which every
// request chains on the previous response and carries only the new items,
// all over one handshake.
func TestWarmupThenIncrementalToolLoop(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	rec := newRecorder()
	stop := prompt(t, c, `look sim:calls=3 sim:tool=read_file sim:args={"path":"a.txt"}`, rec)
	if stop != session.StopEndTurn {
		t.Fatalf("stop = %s, want end_turn", stop)
	}
	recs := e.wait(5) // warm-up + 3 tool steps + the final answer
	if len(recs) != 5 {
		t.Fatalf("server saw %d requests, want 5", len(recs))
	}
	if e.sim.Handshakes() != 1 {
		t.Errorf("handshakes = %d, want 1", e.sim.Handshakes())
	}
	w := recs[0]
	if w.Generate == nil || *w.Generate {
		t.Fatalf("first request is not a warm-up: generate=%v", w.Generate)
	}
	if w.Instructions != "test instructions" || len(w.Tools) == 0 {
		t.Errorf("warm-up lacks the real instructions/tools: %q, %d bytes of tools", w.Instructions, len(w.Tools))
	}
	for i, r := range recs[1:] {
		if r.PreviousResponseID != recs[i].ResponseID || r.PreviousResponseID == "" {
			t.Errorf("request %d chains on %q, want the previous response %q", i+1, r.PreviousResponseID, recs[i].ResponseID)
		}
		if len(r.Input) != 1 {
			t.Errorf("request %d sent %d input items, want only the new one", i+1, len(r.Input))
		}
		if r.Instructions != w.Instructions || string(r.Tools) != string(w.Tools) {
			t.Errorf("request %d changed instructions or tools", i+1)
		}
	}
	if got := userText(t, recs[1].Input[0]); !strings.HasPrefix(got, "look") {
		t.Errorf("first prompt request carries %q, want the user's message", got)
	}
	for i := 2; i < 5; i++ {
		if typ := itemType(recs[i].Input[0]); typ != "function_call_output" {
			t.Errorf("request %d sent a %s, want the function_call_output only (output items are never resent)", i, typ)
		}
	}
	if !strings.Contains(rec.Text_(), "read_file") {
		t.Errorf("answer %q does not mention the tool", rec.Text_())
	}
	// The transcript in the store is what was sent and received, in order:
	// user message, then 3 × (function_call, function_call_output), then
	// the assistant's message.
	items, err := e.db.Items().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range items {
		types = append(types, it.Type)
	}
	want := "message reasoning function_call function_call_output reasoning function_call function_call_output reasoning function_call function_call_output reasoning message"
	if strings.Join(types, " ") != want {
		t.Errorf("stored transcript = %v\nwant %s", types, want)
	}
	reqs, err := e.db.Requests().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, r := range reqs {
		kinds = append(kinds, string(r.Kind))
		if r.Status != "completed" {
			t.Errorf("request %d status %s", r.ID, r.Status)
		}
	}
	if strings.Join(kinds, " ") != "warmup incremental incremental incremental incremental" {
		t.Errorf("request kinds = %v", kinds)
	}
	st := e.client.Stats()
	if st.Warmups != 1 || st.Incremental != 4 || st.Full != 0 || st.BytesSaved <= 0 {
		t.Errorf("stats = %+v", st)
	}
}

// Without a warm-up the first request is full, the rest incremental.
func TestFirstRequestFullWithoutWarmup(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	prompt(t, c, "read a.txt", newRecorder())
	recs := e.wait(2)
	if recs[0].PreviousResponseID != "" || len(recs[0].Input) != 1 {
		t.Errorf("first request: prev=%q items=%d, want a full request with the user message", recs[0].PreviousResponseID, len(recs[0].Input))
	}
	if recs[1].PreviousResponseID != recs[0].ResponseID {
		t.Errorf("second request does not chain")
	}
	reqs, _ := e.db.Requests().List(context.Background(), "s1")
	if reqs[0].Kind != store.KindFull || reqs[0].FullReason == "" {
		t.Errorf("first request recorded as %s (%q), want full with a reason", reqs[0].Kind, reqs[0].FullReason)
	}
}

// A second turn chains on the first turn's last response: the previous
// assistant message is not resent.
func TestSecondTurnIsIncremental(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	prompt(t, c, "hello", newRecorder())
	prompt(t, c, "again", newRecorder())
	recs := e.wait(3)
	r := recs[2]
	if r.PreviousResponseID != recs[1].ResponseID || len(r.Input) != 1 || userText(t, r.Input[0]) != "again" {
		t.Errorf("second turn: prev=%q (want %q), %d items", r.PreviousResponseID, recs[1].ResponseID, len(r.Input))
	}
}

// A daemon restart: a new client and conversation rebuild the transcript
// from the store; the first request is full and carries everything once.
func TestReopenSendsFullTranscriptOnce(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	prompt(t, c, "read a.txt", newRecorder())
	c.Close()
	e.client.Close()
	before := len(e.wait(2))

	e.client = session.NewClient(e.client.Config(), nil)
	t.Cleanup(func() { e.client.Close() })
	c2 := e.reopen("s1")
	if len(session.TranscriptOf(c2)) != 6 { // user, reasoning, call, output, reasoning, message
		t.Fatalf("reopened transcript has %d items, want 6", len(session.TranscriptOf(c2)))
	}
	prompt(t, c2, "and b?", newRecorder())
	recs := e.wait(before + 1)
	r := recs[before]
	if r.PreviousResponseID != "" || len(r.Input) != 7 {
		t.Fatalf("after reopen: prev=%q, %d items; want a full request of 7 items", r.PreviousResponseID, len(r.Input))
	}
	seen := map[string]int{}
	for _, it := range r.Input {
		seen[string(it)]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("item sent %d times: %s", n, k)
		}
	}
	if e.sim.Handshakes() != 2 {
		t.Errorf("handshakes = %d, want 2 (one per client)", e.sim.Handshakes())
	}
}

// Two conversations of one workspace share one socket on separate lanes.
func TestConversationsShareOneSocket(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	a, b := e.open("a"), e.open("b")
	warm(t, a)
	warm(t, b)
	done := make(chan error, 2)
	for _, c := range []*session.Conversation{a, b} {
		go func(c *session.Conversation) {
			_, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("read a.txt")}, newRecorder())
			done <- err
		}(c)
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	recs := e.wait(6)
	if e.sim.Handshakes() != 1 {
		t.Errorf("handshakes = %d, want 1 shared socket", e.sim.Handshakes())
	}
	lanes := map[string]bool{}
	for _, r := range recs {
		lanes[r.StreamID] = true
		if r.Generate == nil && r.PreviousResponseID == "" {
			t.Errorf("a prompt request went out in full: %s", r.Raw)
		}
	}
	if len(lanes) != 2 {
		t.Errorf("lanes used = %v, want 2", lanes)
	}
}

// Cancelling mid-response ends the turn as cancelled and stores it so; the
// aborted socket is not reused, the baseline is rebuilt in the background
// on a new connection (generate:false with the whole transcript), and the
// next prompt chains on it.
func TestCancelMidResponse(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 200}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-rec.first
		cancel()
	}()
	stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage("talk sim:tokens=2000")}, rec)
	if err != nil || stop != session.StopCancelled {
		t.Fatalf("stop=%s err=%v, want cancelled", stop, err)
	}
	turns, _ := e.db.Items().Turns(context.Background(), "s1")
	if len(turns) != 1 || turns[0].Status != store.TurnCancelled {
		t.Fatalf("turns = %+v", turns)
	}
	prompt(t, c, "hello", newRecorder())
	recs := e.wait(3)
	rewarm, last := recs[1], recs[2]
	if rewarm.Conn == recs[0].Conn || rewarm.Generate == nil || *rewarm.Generate || len(rewarm.Input) != 1 {
		t.Fatalf("after the abort: %s on conn %d (aborted conn %d), want a generate:false re-warm of the transcript on a new connection", rewarm.Raw, rewarm.Conn, recs[0].Conn)
	}
	if last.PreviousResponseID != rewarm.ResponseID || len(last.Input) != 1 {
		t.Errorf("the next prompt did not chain on the re-warm: %s", last.Raw)
	}
}

// A warm-up that does not finish in time never blocks the turn.
func TestSlowWarmupDoesNotBlockTurn(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, WarmupTimeout: 300 * time.Millisecond})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultSilence, Delay: time.Minute})
	c := e.open("s1")
	c.Warm()
	stop := prompt(t, c, "hello", newRecorder())
	if stop != session.StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	reqs, _ := e.db.Requests().List(context.Background(), "s1")
	if len(reqs) != 2 || reqs[0].Kind != store.KindWarmup || reqs[0].Status != "cancelled" || reqs[1].Kind != store.KindFull {
		for _, r := range reqs {
			t.Logf("%+v", r)
		}
		t.Fatal("want a cancelled warm-up then a full request")
	}
}

// A transcript ending in an unanswered call (the daemon died mid-tool) is
// repaired on open, so the next request is valid.
func TestOpenRepairsUnansweredCall(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	ctx := context.Background()
	if err := e.db.CreateSession(ctx, store.Session{ID: "s1", Root: e.root}); err != nil {
		t.Fatal(err)
	}
	call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a.txt\"}","status":"completed"}`
	answered := `{"type":"function_call","id":"fc_0","call_id":"call_0","name":"read_file","arguments":"{\"path\":\"a.txt\"}","status":"completed"}`
	if _, err := e.db.Items().Append(ctx, "s1", 0, []store.NewItem{
		{Origin: store.OriginInput, Data: session.UserMessage("read a.txt")},
		{Origin: store.OriginOutput, Data: json.RawMessage(answered)},
		{Origin: store.OriginInput, Data: json.RawMessage(`{"type":"function_call_output","call_id":"call_0","output":"alpha"}`)},
		{Origin: store.OriginOutput, Data: json.RawMessage(call)},
	}); err != nil {
		t.Fatal(err)
	}
	c := e.reopen("s1")
	tr := session.TranscriptOf(c)
	if len(tr) != 5 || itemType(tr[4]) != "function_call_output" || !strings.Contains(string(tr[4]), "call_1") {
		t.Fatalf("transcript not repaired: %s", tr)
	}
	if e.tools.runs["call_1"] != 0 {
		t.Fatal("a tool ran again on open")
	}
}

// barrierTools runs read_file calls only once n of them are running at
// once (they fail after a timeout otherwise), and says read_file may run
// concurrently.
type barrierTools struct {
	*wsTools
	n       int
	mu      sync.Mutex
	running int
	all     chan struct{}
}

func (b *barrierTools) Concurrent(call session.ToolCall) bool { return call.Name == "read_file" }

func (b *barrierTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	if call.Name == "read_file" {
		b.mu.Lock()
		b.running++
		if b.running == b.n {
			close(b.all)
		}
		b.mu.Unlock()
		select {
		case <-b.all:
		case <-time.After(10 * time.Second):
			return session.ToolResult{Output: "error: ran alone", IsError: true}
		}
	}
	return b.wsTools.Run(ctx, call)
}

// The read calls of one response run side by side; their outputs are
// committed in call order, and the next request carries them in that order.
func TestReadCallsRunConcurrently(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	bt := &barrierTools{wsTools: e.tools, n: 4, all: make(chan struct{})}
	c := e.openWith("par", bt)
	warm(t, c)
	prompt(t, c, `go sim:calls=4 sim:parallel=4 sim:tool=read_file sim:args={"path":"a.txt"}`, nil)
	items, err := e.db.Items().List(context.Background(), "par")
	if err != nil {
		t.Fatal(err)
	}
	var calls, outputs []string
	for _, it := range items {
		var m struct {
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}
		json.Unmarshal(it.Data, &m)
		switch it.Type {
		case "function_call":
			calls = append(calls, m.CallID)
		case "function_call_output":
			outputs = append(outputs, m.CallID)
			if strings.Contains(m.Output, "ran alone") {
				t.Errorf("call %s ran alone: the reads did not run side by side", m.CallID)
			}
		}
	}
	if len(calls) != 4 || !slices.Equal(calls, outputs) {
		t.Fatalf("calls %v, outputs %v: want 4, in the same order", calls, outputs)
	}
}

// The settings' encoding is kept between requests, but a change of the tools
// or of the configuration is seen by the next request: it carries the new
// settings, in full.
func TestChangedSettingsReachTheNextRequest(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	tools := &wsTools{ts: e.tools.ts, runs: map[string]int{}, specs: e.tools.specs[:1]}
	c := e.openWith("s1", tools)
	warm(t, c)
	prompt(t, c, "hello", newRecorder())
	tools.specs = e.tools.specs // one tool more
	prompt(t, c, "again", newRecorder())
	cfg := e.client.Config()
	cfg.Instructions = "new instructions"
	e.client.Reconfigure(cfg)
	prompt(t, c, "and again", newRecorder())
	recs := e.wait(4)
	names := func(r sim.Received) int {
		var list []json.RawMessage
		json.Unmarshal(r.Tools, &list)
		return len(list)
	}
	if names(recs[1]) != 1 || recs[1].PreviousResponseID == "" {
		t.Errorf("first turn: %d tools, prev %q; want 1 tool, incremental", names(recs[1]), recs[1].PreviousResponseID)
	}
	if names(recs[2]) != len(e.tools.specs) || recs[2].PreviousResponseID != "" {
		t.Errorf("after the tools changed: %d tools, prev %q; want %d, full", names(recs[2]), recs[2].PreviousResponseID, len(e.tools.specs))
	}
	if recs[3].Instructions != "new instructions" || recs[3].PreviousResponseID != "" {
		t.Errorf("after Reconfigure: instructions %q, prev %q; want the new ones, full", recs[3].Instructions, recs[3].PreviousResponseID)
	}
}

// readTools says read_file may run concurrently.
type readTools struct{ *wsTools }

func (readTools) Concurrent(call session.ToolCall) bool { return call.Name == "read_file" }

// storedCheck is a Sink that checks, as it is told, that what it is told of
// is in the store: a call said to run has its function_call stored, a call
// said to have finished has its output stored.
type storedCheck struct {
	*recorder
	t  *testing.T
	db *store.DB
	id string
}

func (s storedCheck) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	want := map[string]string{"in_progress": "function_call", "completed": "function_call_output", "failed": "function_call_output"}[status]
	if want != "" {
		items, err := s.db.Items().List(context.Background(), s.id)
		found := false
		for _, it := range items {
			found = found || (it.Type == want && strings.Contains(string(it.Data), `"`+call.CallID+`"`))
		}
		if err != nil || !found {
			s.t.Errorf("told %s of %s before its %s was stored (%v)", status, call.CallID, want, err)
		}
	}
	s.recorder.ToolCall(call, status, res)
}

// Reads start while their calls are being committed, but the editor hears
// that a call runs only once it is stored, and that it finished only once
// its output is.
func TestReadsToldOnlyWhatIsStored(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.openWith("s1", readTools{e.tools})
	warm(t, c)
	rec := newRecorder()
	prompt(t, c, `go sim:calls=6 sim:parallel=2 sim:tool=read_file sim:args={"path":"big.txt"}`, storedCheck{recorder: rec, t: t, db: e.db, id: "s1"})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := strings.Count(strings.Join(rec.calls, " "), "read_file:completed"); n != 6 {
		t.Fatalf("%d reads completed, want 6: %v", n, rec.calls)
	}
}

// blockingReads is readTools whose read_file waits for the turn to be
// cancelled.
type blockingReads struct{ readTools }

func (b blockingReads) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	if call.Name == "read_file" {
		<-ctx.Done()
		return session.ToolResult{Output: "error: cancelled", IsError: true}
	}
	return b.wsTools.Run(ctx, call)
}

// cancelling is a recorder that cancels the turn once told a call runs.
type cancelling struct {
	*recorder
	cancel func()
}

func (s cancelling) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	s.recorder.ToolCall(call, status, res)
	if status == "in_progress" {
		s.cancel()
	}
}

// A response that only calls reads is staged while they run; a turn
// cancelled while a read still runs stores the response, its request's end
// and the reads' outputs, and the next turn goes on from them. (The read
// started while the response arrived, so the turn is cancelled once the
// editor hears it runs: the response has ended by then.)
func TestStagedResponseStoredWhenTheTurnEnds(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.openWith("s1", blockingReads{readTools{e.tools}})
	warm(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(`go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`)}, cancelling{newRecorder(), cancel})
	if err != nil || stop != session.StopCancelled {
		t.Fatalf("stop=%s err=%v, want cancelled", stop, err)
	}
	items, _ := e.db.Items().List(context.Background(), "s1")
	var types []string
	for _, it := range items {
		if it.Type != "reasoning" {
			types = append(types, it.Type)
		}
	}
	if !slices.Equal(types, []string{"message", "function_call", "function_call_output"}) {
		t.Fatalf("stored %v, want the message, the call and its output", types)
	}
	reqs, _ := e.db.Requests().List(context.Background(), "s1")
	if last := reqs[len(reqs)-1]; last.Status != store.RequestCompleted || last.ResponseID == "" {
		t.Fatalf("the staged response's request: %+v, want completed", last)
	}
	prompt(t, c, "and now?", newRecorder())
	recs := e.wait(3)
	if recs[2].PreviousResponseID != recs[1].ResponseID || len(recs[2].Input) != 2 {
		t.Errorf("the next turn: prev %q (want %q), %d items (want the output and the message)", recs[2].PreviousResponseID, recs[1].ResponseID, len(recs[2].Input))
	}
}

// slowReads is readTools whose read_file runs until the editor has been
// told it runs (release), or gives up after 10 s.
type slowReads struct {
	readTools
	release chan struct{}
}

func (s slowReads) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	if call.Name == "read_file" {
		select {
		case <-s.release:
		case <-time.After(10 * time.Second):
			return session.ToolResult{Output: "error: never shown running", IsError: true}
		}
	}
	return s.wsTools.Run(ctx, call)
}

// releasing is storedCheck that releases the slow read once told it runs.
type releasing struct {
	storedCheck
	release chan struct{}
	once    *sync.Once
}

func (r releasing) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	r.storedCheck.ToolCall(call, status, res)
	if status == "in_progress" {
		r.once.Do(func() { close(r.release) })
	}
}

// A read that takes long is shown running while it runs: its call, staged
// with the response, is stored early for it.
func TestSlowReadShownRunning(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	release := make(chan struct{})
	c := e.openWith("s1", slowReads{readTools{e.tools}, release})
	warm(t, c)
	rec := newRecorder()
	sink := releasing{storedCheck{recorder: rec, t: t, db: e.db, id: "s1"}, release, &sync.Once{}}
	prompt(t, c, `go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`, sink)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := strings.Join(rec.calls, " "); !strings.Contains(got, "read_file:in_progress read_file:completed") {
		t.Fatalf("tool call updates: %s; want in_progress while it ran, then completed", got)
	}
}

// probeReads is readTools whose read_file says, once, whether the
// simulator had answered the latest request when the read began.
type probeReads struct {
	readTools
	srv      *sim.Server
	answered chan bool
}

func (p probeReads) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	if call.Name == "read_file" {
		recs := p.srv.Received()
		select {
		case p.answered <- recs[len(recs)-1].Answered:
		default:
		}
	}
	return p.wsTools.Run(ctx, call)
}

// A read starts once the model has finished calling it, not once the whole
// response has arrived: here the response's end is held back a second, and
// the read has begun before it.
func TestReadStartsBeforeTheResponseEnds(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	p := probeReads{readTools{e.tools}, e.sim, make(chan bool, 1)}
	c := e.openWith("s1", p)
	warm(t, c)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultSilence, AfterEvents: 1 << 20, Delay: time.Second,
		Match: func(r sim.Received) bool { return r.Generate == nil || *r.Generate }})
	rec := newRecorder()
	prompt(t, c, `go sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`, rec)
	select {
	case answered := <-p.answered:
		if answered {
			t.Fatal("the read began after the response had ended")
		}
	default:
		t.Fatal("the read never ran")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := strings.Join(rec.calls, " "); !strings.Contains(got, "read_file:in_progress read_file:completed") {
		t.Fatalf("tool call updates: %s", got)
	}
	if items, _ := e.db.Items().List(context.Background(), "s1"); len(items) == 0 || items[len(items)-1].Type != "message" {
		t.Fatalf("the turn did not end with the answer stored: %d items", len(items))
	}
}
