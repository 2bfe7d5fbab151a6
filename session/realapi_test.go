package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// The real API's rules for reasoning models under store:false (transcript/replay.go
// says them), enforced by the simulator, against every path that resends
// the transcript.

// replayed fails the test when a request the client sent was refused, or
// when an input item carries an id, or a reasoning item comes back without
// its encrypted_content. It returns how many reasoning items were replayed.
func replayed(t *testing.T, recs []sim.Received) int {
	t.Helper()
	n := 0
	for i, r := range recs {
		if r.Type != "response.create" && r.Transport != "http" {
			continue
		}
		// A request that raced the server's close of its connection is
		// not a refusal (it is retried); anything else without a response is.
		if !strings.HasPrefix(r.Outcome, "resp_") && r.Fault == 0 && r.Outcome != sim.OutcomeClosed {
			t.Errorf("request %d (conn %d, %s) was refused: %s\n%s", i, r.Conn, r.Transport, r.Outcome, r.Raw)
		}
		for _, it := range r.Input {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(it, &m); err != nil {
				t.Fatalf("request %d: input item is not an object: %s", i, it)
			}
			if _, ok := m["id"]; ok {
				t.Errorf("request %d sent an item with its id under store:false: %s", i, it)
			}
			if string(m["type"]) == `"reasoning"` {
				n++
				if len(m["encrypted_content"]) < 3 {
					t.Errorf("request %d replayed a reasoning item without encrypted_content: %s", i, it)
				}
			}
		}
	}
	return n
}

// Every request asks for the encrypted reasoning, the configured effort
// and summary, and names the session's prompt cache.
func TestRequestsAskForReasoning(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ReasoningEffort: "high"})
	c := e.open("s1")
	warm(t, c)
	rec := newRecorder()
	prompt(t, c, "read a.txt", rec)
	recs := e.wait(3)
	for i, r := range recs {
		var body struct {
			Reasoning struct{ Effort, Summary string }
			Include   []string
			Store     *bool
			Key       string `json:"prompt_cache_key"`
		}
		if err := json.Unmarshal(r.Raw, &body); err != nil {
			t.Fatal(err)
		}
		if body.Reasoning.Effort != "high" || body.Reasoning.Summary != "auto" ||
			len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" ||
			body.Store == nil || *body.Store || body.Key != "s1" {
			t.Errorf("request %d: %s", i, r.Raw)
		}
	}
	// The summary streamed to the sink as thoughts, the answer as text.
	if th := rec.Thoughts(); th == "" || strings.Contains(rec.Text_(), th) {
		t.Errorf("thoughts %q, text %q", th, rec.Text_())
	}
}

// HEARTH_REASONING_EFFORT=none is for models without reasoning: no
// reasoning object and no include; summary none keeps the effort only.
func TestReasoningNone(t *testing.T) {
	e := newEnv(t, sim.Options{Reasoning: sim.ReasoningNever}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ReasoningEffort: "none"})
	c := e.open("s1")
	prompt(t, c, "hello", newRecorder())
	r := e.wait(1)[0]
	if strings.Contains(string(r.Raw), `"reasoning"`) || strings.Contains(string(r.Raw), `"include"`) || !strings.HasPrefix(r.Outcome, "resp_") {
		t.Errorf("effort none sent %s → %s", r.Raw, r.Outcome)
	}

	e2 := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ReasoningSummary: "none"})
	rec := newRecorder()
	prompt(t, e2.open("s2"), "hello", rec)
	r = e2.wait(1)[0]
	if !strings.Contains(string(r.Raw), `"reasoning":{"effort":"medium"}`) || rec.Thoughts() != "" {
		t.Errorf("summary none sent %s; thoughts %q", r.Raw, rec.Thoughts())
	}
}

// The done-when of the real-API issue, on one conversation: a tool loop, a
// dropped connection (re-warm), a cache miss (full retry), an HTTP fallback
// and a restart all complete with zero refused requests, and every replay
// carries the reasoning items with their encrypted_content.
func TestReasoningReplaysAreNeverRefused(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, FallbackRetry: time.Hour, DialAttempts: 1}})
	c := e.open("s1")
	warm(t, c)
	// A tool loop.
	if stop := prompt(t, c, `look sim:calls=2 sim:tool=read_file sim:args={"path":"a.txt"}`, newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("tool loop: %s", stop)
	}
	// A dropped connection between turns: the re-warm replays everything.
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultCloseAfterResponse, Match: isPrompt})
	prompt(t, c, "one", newRecorder())
	n := len(e.wait(5)) // warm-up, 3 tool-loop steps, "one"
	recs := e.wait(n + 1)
	if rw := recs[n]; rw.Generate == nil || *rw.Generate {
		t.Fatalf("no re-warm after the drop: %s", rw.Raw)
	}
	// A cache miss: the full retry replays everything.
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultDropCache, Match: isPrompt})
	prompt(t, c, "two", newRecorder())
	// An HTTP fallback: every request replays everything. The refusal is
	// queued before the drop: the background re-warm dials at once, and
	// must meet it.
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultCloseAfterResponse, Match: isPrompt})
	prompt(t, c, "three", newRecorder())
	prompt(t, c, "four over http", newRecorder())
	all := e.sim.Received()
	last := all[len(all)-1]
	if last.Transport != "http" {
		t.Fatalf("the last prompt went over %s, want the HTTP fallback", last.Transport)
	}
	// A restart: a new client re-warms from the store.
	c.Close()
	e.client.Close()
	e.client = session.NewClient(e.client.Config(), nil)
	t.Cleanup(func() { e.client.Close() })
	c2 := e.reopen("s1")
	warm(t, c2)
	prompt(t, c2, "five after restart", newRecorder())

	recs = e.wait(len(e.sim.Received()))
	replayed(t, recs)
	transcript := session.TranscriptOf(c2)
	want := 0
	for _, it := range transcript {
		if itemType(it) == "reasoning" {
			want++
		}
	}
	// The re-warm after the restart (the last full request) carries every
	// reasoning item but the last prompt's.
	var rewarm sim.Received
	for _, r := range recs {
		if r.PreviousResponseID == "" {
			rewarm = r
		}
	}
	if got := replayed(t, []sim.Received{rewarm}); want < 6 || got != want-1 {
		t.Errorf("%d reasoning items in the transcript, %d replayed by the re-warm after the restart", want, got)
	}
	// The store keeps the items as received, ids included (inspect shows
	// them); memory holds what it stored with its response as replay forms.
	stored, err := e.db.Items().List(context.Background(), c2.ID())
	if err != nil {
		t.Fatal(err)
	}
	ids := 0
	for _, it := range stored {
		if strings.Contains(string(it.Data), `"id":"rs_`) {
			ids++
		}
	}
	if ids != want {
		t.Errorf("%d of %d stored reasoning items keep their id", ids, want)
	}
}

// A transcript stored before hearth asked for encrypted_content (reasoning
// items with ids and no encrypted_content, messages and calls with ids)
// replays without a refusal: ids dropped, empty reasoning left out.
func TestOldTranscriptReplays(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	ctx := context.Background()
	if err := e.db.CreateSession(ctx, store.Session{ID: "old", Root: e.root}); err != nil {
		t.Fatal(err)
	}
	old := []store.NewItem{
		{Origin: store.OriginInput, Data: session.UserMessage("what is in a.txt?")},
		{Origin: store.OriginOutput, Data: json.RawMessage(`{"type":"reasoning","id":"rs_old1","summary":[]}`)},
		{Origin: store.OriginOutput, Data: json.RawMessage(`{"type":"function_call","id":"fc_old1","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a.txt\"}","status":"completed"}`)},
		{Origin: store.OriginInput, Data: json.RawMessage(`{"type":"function_call_output","call_id":"call_1","output":"alpha"}`)},
		{Origin: store.OriginOutput, Data: json.RawMessage(`{"type":"message","id":"msg_old1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"alpha","annotations":[]}]}`)},
	}
	if _, err := e.db.Items().Append(ctx, "old", 0, old); err != nil {
		t.Fatal(err)
	}
	c := e.reopen("old")
	warm(t, c)
	prompt(t, c, "and now?", newRecorder())
	recs := e.wait(2)
	replayed(t, recs)
	if n := len(recs[0].Input); n != 4 {
		t.Errorf("the re-warm sent %d items, want 4 (the empty reasoning item left out)", n)
	}
	if recs[1].PreviousResponseID != recs[0].ResponseID {
		t.Errorf("the prompt did not chain on the re-warm")
	}
}

// Usage is recorded per request and summed per workspace; full requests
// and increments both name the prompt cache.
func TestUsageRecorded(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	prompt(t, c, "read a.txt", newRecorder())
	reqs, err := e.db.Requests().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var sum store.Usage
	for _, r := range reqs {
		if r.Kind != store.KindWarmup && (r.Usage.Input == 0 || r.Usage.Output == 0 || r.Usage.Reasoning == 0) {
			t.Errorf("request %d (%s) has no usage: %+v", r.ID, r.Kind, r.Usage)
		}
		sum = sum.Add(r.Usage)
	}
	if reqs[len(reqs)-1].Usage.Cached == 0 {
		t.Errorf("the chained request reports no cached tokens: %+v", reqs[len(reqs)-1].Usage)
	}
	if st := e.client.Stats(); st.Usage != sum {
		t.Errorf("workspace usage %+v, sum of requests %+v", st.Usage, sum)
	}
	if u, _ := e.db.Requests().Usage(context.Background(), "s1"); u != sum {
		t.Errorf("session usage %+v, want %+v", u, sum)
	}
}

// permessage-deflate is negotiated, and the bytes on the wire are far
// fewer than the frames' bytes.
func TestCompressionOnTheWire(t *testing.T) {
	for _, off := range []bool{false, true} {
		e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, DisableCompression: off}})
		c := e.open("s1")
		warm(t, c)
		prompt(t, c, `look sim:calls=3 sim:tool=read_file sim:args={"path":"big.txt"}`, newRecorder())
		recs := e.wait(5)
		st := e.client.Stats()
		if recs[0].Compressed == off {
			t.Errorf("compression off=%v: negotiated %v", off, recs[0].Compressed)
		}
		ratio := float64(st.BytesSent) / float64(st.WireSent)
		if off && ratio > 1.05 || !off && ratio < 2 {
			t.Errorf("compression off=%v: %d bytes of frames, %d on the wire (%.2f×)", off, st.BytesSent, st.WireSent, ratio)
		}
	}
}

// A server that ignores stream_id, or refuses it: with the default lanes
// (auto), two sessions of one workspace both answer at once, the endpoint
// is marked lane-less with the reason, and nothing is billed twice but the
// one request that showed it.
func TestServersWithoutLanes(t *testing.T) {
	for _, mode := range []sim.LaneMode{sim.LanesIgnore, sim.LanesRefuse} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnv(t, sim.Options{Lanes: mode}, session.Config{})
			a, b := e.open("a"), e.open("b")
			a.Warm()
			b.Warm()
			done := make(chan error, 2)
			start := time.Now()
			for _, c := range []*session.Conversation{a, b} {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage("hello")}, newRecorder())
					if err == nil && stop != session.StopEndTurn {
						err = errors.New(string(stop))
					}
					done <- err
				}()
			}
			for range 2 {
				if err := <-done; err != nil {
					t.Fatalf("prompt: %v", err)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the prompts took %s", d)
			}
			st := e.client.Stats()
			if !strings.HasPrefix(st.Lanes, "off: the server "+map[sim.LaneMode]string{sim.LanesIgnore: "ignores", sim.LanesRefuse: "refuses"}[mode]) {
				t.Errorf("lanes = %q", st.Lanes)
			}
			// Later prompts chain, each session on its own connection.
			prompt(t, a, "again", newRecorder())
			recs := e.sim.Received()
			last := recs[len(recs)-1]
			if last.StreamID != "" || last.PreviousResponseID == "" {
				t.Errorf("after the switch: stream_id %q, prev %q", last.StreamID, last.PreviousResponseID)
			}
			generated := 0
			for _, r := range recs {
				if r.Generate == nil && r.ResponseID != "" {
					generated++
				}
			}
			if generated > 4 {
				t.Errorf("%d generations billed for 3 prompts", generated)
			}
		})
	}
}

// Each stream has its own silence timers: server pings and a sibling's
// events keep the connection alive, not a wedged response on it.
func TestSilentStreamTimesOutDespitePings(t *testing.T) {
	e := newEnv(t, sim.Options{PingInterval: 20 * time.Millisecond, Cost: sim.Cost{TokensPerSecond: 200}},
		session.Config{Config: responses.Config{Lanes: responses.LanesOn}, FirstEventTimeout: 300 * time.Millisecond, MaxAttempts: 1})
	a, b := e.open("a"), e.open("b")
	warm(t, a)
	warm(t, b)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultSilence, Delay: time.Minute, Match: func(r sim.Received) bool {
		return r.Generate == nil && r.StreamID == "hearth-1"
	}})
	done := make(chan error, 1)
	go func() {
		_, err := a.Prompt(context.Background(), []json.RawMessage{session.UserMessage("hello")}, newRecorder())
		done <- err
	}()
	// b streams on the same socket meanwhile.
	prompt(t, b, "sim:tokens=80", newRecorder())
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "first-event timeout") {
			t.Fatalf("silent stream ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent stream hung while pings and a sibling kept the socket busy")
	}
}

// The client pings a quiet connection; one whose server never answers is
// declared dead and the conversation re-warms on a new one.
func TestKeepalive(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn,
		KeepaliveInterval: 30 * time.Millisecond, KeepaliveTimeout: 60 * time.Millisecond}})
	warm(t, e.open("s1"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.sim.WaitPings(ctx, 3); err != nil || e.sim.Handshakes() != 1 {
		t.Fatalf("pings %d, handshakes %d: want answered pings on one connection", e.sim.PingsReceived(), e.sim.Handshakes())
	}

	// Long enough for the warm-up to be answered on a loaded machine before
	// the first ping goes unanswered.
	e2 := newEnv(t, sim.Options{IgnorePings: true}, session.Config{Config: responses.Config{Lanes: responses.LanesOn,
		KeepaliveInterval: 150 * time.Millisecond, KeepaliveTimeout: 300 * time.Millisecond}})
	warm(t, e2.open("s1"))
	recs := e2.wait(2) // the warm-up, then the re-warm on a new connection
	if recs[1].Conn == recs[0].Conn || recs[1].Generate == nil || *recs[1].Generate {
		t.Errorf("after an unanswered ping: request on conn %d (first %d), generate %v", recs[1].Conn, recs[0].Conn, recs[1].Generate)
	}
}
