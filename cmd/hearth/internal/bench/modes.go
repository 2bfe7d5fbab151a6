package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// Mode is one way of sending a turn's requests.
type Mode struct {
	key, name string
	ownClient bool // the bench's minimal HTTP client, not hearth's session
	cfg       func(*session.Config)
	// prepare runs before the timed turn: a warm-up, or a first turn and a
	// drop. It may replace the rig's conversation.
	prepare func(r *rig, ctx context.Context) error
}

func allModes() []Mode {
	full := func(c *session.Config) { c.DisableIncremental = true }
	return []Mode{
		{key: "http-full", name: "HTTP, every request full (store:false)", cfg: func(c *session.Config) { c.ForceHTTP = true }},
		{key: "http-chained", name: "HTTP, chained (store:true, previous_response_id)", ownClient: true},
		{key: "ws-full", name: "WebSocket, every request full", cfg: full},
		{key: "ws-incremental", name: "WebSocket, incremental", cfg: nil},
		{key: "ws-incremental-warm", name: "WebSocket, incremental + warm-up", prepare: (*rig).warm},
		{key: "ws-drop-rewarm", name: "WebSocket, after a drop, re-warmed", prepare: (*rig).dropRewarm},
		{key: "ws-drop-cold", name: "WebSocket, after a drop, no re-warm", prepare: (*rig).dropCold},
	}
}

// runner runs turns: one workspace (root, holding data.txt) for all of
// them, a fresh simulator and database per turn (dir/<id>).
type runner struct {
	dir, root string
	cost      sim.Cost
	seq       int
}

func turnPrompt(steps int) string {
	return fmt.Sprintf(`go sim:calls=%d sim:tool=read_file sim:args={"path":"data.txt"}`, steps)
}

// run times one turn of m from a cold start: a new simulator, database and
// client, as a user's first turn in a workspace.
func (b *runner) run(ctx context.Context, m Mode, steps int) (turnSample, error) {
	b.seq++
	srv := sim.New(sim.Options{Cost: b.cost})
	base, err := srv.Start()
	if err != nil {
		return turnSample{}, err
	}
	defer srv.Close()
	root, err := workspace.Open(b.root)
	if err != nil {
		return turnSample{}, err
	}
	defer root.Close()
	tools := readTools{workspace.NewToolset(root)}
	readOut := tools.ts.Run(ctx, "read_file", json.RawMessage(`{"path":"data.txt"}`))
	if readOut.IsError {
		return turnSample{}, fmt.Errorf("read_file: %s", readOut.Output)
	}
	minimal := minimalInputs(turnPrompt(steps), readOut.Output, steps)
	w := stopwatch{srv: srv}
	if m.ownClient {
		c := &chainClient{base: base, tools: tools}
		defer c.close()
		w.mark()
		first, err := c.turn(ctx, turnPrompt(steps))
		if err != nil {
			return turnSample{}, err
		}
		return w.sample(ctx, b.cost, minimal, first)
	}

	r := &rig{srv: srv, base: base, tools: tools, mode: m, id: fmt.Sprintf("b%d", b.seq), steps: steps}
	if r.db, err = store.Open(filepath.Join(b.dir, r.id, "hearth.db")); err != nil {
		return turnSample{}, err
	}
	defer r.db.Close()
	if err := r.db.CreateSession(ctx, store.Session{ID: r.id, Root: root.Path()}); err != nil {
		return turnSample{}, err
	}
	if err := r.open(ctx); err != nil {
		return turnSample{}, err
	}
	defer r.close()
	if m.prepare != nil {
		if err := m.prepare(r, ctx); err != nil {
			return turnSample{}, err
		}
	}
	w.mark()
	first, err := r.prompt(ctx)
	if err != nil {
		return turnSample{}, err
	}
	return w.sample(ctx, b.cost, minimal, first)
}

// rig is one hearth conversation against one simulator, for one timed
// turn. Created and closed by runner.run.
type rig struct {
	srv   *sim.Server
	base  string
	db    *store.DB
	tools readTools
	mode  Mode
	id    string
	steps int

	client *session.Client
	conv   *session.Conversation
}

func (r *rig) open(ctx context.Context) error {
	cfg := session.Config{Config: responses.Config{BaseURL: r.base, Lanes: responses.LanesOn}, Model: "sim-model", Instructions: "bench"}
	if r.mode.cfg != nil {
		r.mode.cfg(&cfg)
	}
	r.client = session.NewClient(cfg, nil)
	var err error
	r.conv, err = session.Open(ctx, session.Options{ID: r.id, Client: r.client, DB: r.db, Tools: r.tools})
	if err != nil {
		r.client.Close()
		r.client = nil
	}
	return err
}

func (r *rig) close() {
	if r.conv != nil {
		r.conv.Close()
	}
	if r.client != nil {
		r.client.Close()
	}
	r.conv, r.client = nil, nil
}

// prompt runs one turn of r.steps calls; it returns the time to the first
// output the sink saw.
func (r *rig) prompt(ctx context.Context) (time.Duration, error) {
	sink := &firstSink{start: time.Now()}
	if _, err := r.conv.Prompt(ctx, []json.RawMessage{session.UserMessage(turnPrompt(r.steps))}, sink); err != nil {
		return 0, err
	}
	return sink.first(), nil
}

// warm sends the warm-up and waits for it, as session/new does before the
// user has typed.
func (r *rig) warm(context.Context) error {
	r.conv.Warm()
	done, result := r.conv.WarmupDone()
	<-done
	if err := result(); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return nil
}

// dropRewarm: a warmed first turn, then the simulator drops the connection;
// hearth notices and re-warms in the background on a new one. The timed turn
// starts once that re-warm has ended.
func (r *rig) dropRewarm(ctx context.Context) error {
	if err := r.firstTurn(ctx); err != nil {
		return err
	}
	n := len(r.srv.Received())
	if r.srv.DropConnections() != 1 {
		return fmt.Errorf("expected one connection to drop")
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	recs, err := r.srv.WaitReceived(wctx, n+1)
	if err != nil {
		return fmt.Errorf("waiting for the re-warm: %w", err)
	}
	if g := recs[n].Generate; g == nil || *g {
		return fmt.Errorf("the request after the drop is not a warm-up")
	}
	done, result := r.conv.WarmupDone()
	<-done
	if err := result(); err != nil {
		return fmt.Errorf("re-warm: %w", err)
	}
	return nil
}

// dropCold: a warmed first turn, then the connection goes and nothing
// re-warms: the next prompt finds no connection and no baseline on the
// server. hearth always re-warms a dropped connection, so this is made the
// way a daemon restart makes it: the client closes (the drop) and a new
// client opens the stored session without a warm-up.
func (r *rig) dropCold(ctx context.Context) error {
	if err := r.firstTurn(ctx); err != nil {
		return err
	}
	r.close()
	return r.open(ctx)
}

func (r *rig) firstTurn(ctx context.Context) error {
	if err := r.warm(ctx); err != nil {
		return err
	}
	if _, err := r.prompt(ctx); err != nil {
		return fmt.Errorf("first turn: %w", err)
	}
	return nil
}

// firstSink records when the turn's first output reached the client: a
// reasoning summary delta, a text delta or a tool call.
type firstSink struct {
	start time.Time
	at    atomic.Int64 // nanoseconds after start; 0 = nothing yet
}

func (s *firstSink) mark() { s.at.CompareAndSwap(0, int64(time.Since(s.start))) }
func (s *firstSink) first() time.Duration {
	return time.Duration(s.at.Load())
}
func (s *firstSink) Text(string)                                            { s.mark() }
func (s *firstSink) Thought(string)                                         { s.mark() }
func (s *firstSink) ToolCall(session.ToolCall, string, *session.ToolResult) { s.mark() }
func (s *firstSink) Notice(string)                                          {}

// stopwatch measures a turn from the simulator's side: mark before the
// prompt, sample after it.
type stopwatch struct {
	srv      *sim.Server
	start    time.Time
	recs, hs int
	wire     int64
}

func (w *stopwatch) mark() {
	// The garbage of what ran before (another mode's turn: a full mode's
	// leaves megabytes) is collected now, not during this turn, as
	// go test -bench does before each benchmark.
	runtime.GC()
	w.recs, w.hs = len(w.srv.Received()), w.srv.Handshakes()
	w.wire, _ = w.srv.WireBytes()
	w.start = time.Now()
}

// sample ends the measure: the turn's time, then, once the simulator has
// recorded every answer, the requests, bytes and floor.
func (w *stopwatch) sample(ctx context.Context, cost sim.Cost, minimal []int, first time.Duration) (turnSample, error) {
	s := turnSample{turn: time.Since(w.start), firstToken: first}
	wire, _ := w.srv.WireBytes()
	s.wireBytes = wire - w.wire
	s.handshakes = w.srv.Handshakes() - w.hs
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	recs, err := w.srv.WaitReceived(wctx, len(w.srv.Received()))
	if err != nil {
		return s, fmt.Errorf("waiting for the simulator's records: %w", err)
	}
	var generating []sim.Received
	for _, rec := range recs[w.recs:] {
		s.jsonBytes += int64(rec.Bytes)
		took := rec.AnsweredAt.Sub(rec.At)
		s.server += took
		s.late += took - rec.ProcessDelay - rec.OutputDelay
		switch {
		case rec.Generate != nil && !*rec.Generate:
			s.requests.Warmup++
			continue
		case rec.PreviousResponseID != "":
			s.requests.Incremental++
		default:
			s.requests.Full++
		}
		generating = append(generating, rec)
	}
	s.server += time.Duration(s.handshakes) * cost.Handshake
	s.floor, err = floorOf(cost, generating, minimal)
	return s, err
}

type readTools struct{ ts *workspace.Toolset }

func (b readTools) Specs() []json.RawMessage {
	var out []json.RawMessage
	for _, t := range b.ts.Tools() {
		out = append(out, t.Spec())
	}
	return out
}

// Concurrent is the daemon's rule: calls that only read run side by side,
// and a response that only makes them commits with the next request.
func (b readTools) Concurrent(call session.ToolCall) bool {
	return workspace.ReadOnlyCall(call.Name, json.RawMessage(call.Arguments))
}

// Run runs the call and, as the daemon does, records what the model saw of
// the file it read (the read set, committed with the next request).
func (b readTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	r := b.ts.Run(ctx, call.Name, json.RawMessage(call.Arguments))
	res := session.ToolResult{Output: r.Output, IsError: r.IsError}
	if r.Hash != "" && len(r.Locations) == 1 {
		res.Seen = &store.SeenWrite{Path: r.Locations[0], Seen: store.Seen{Hash: r.Hash, Content: []byte(r.Content)}}
	}
	return res
}
