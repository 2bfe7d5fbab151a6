package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

func isPrompt(r sim.Received) bool { return r.Generate == nil }

func hasToolOutput(r sim.Received) bool {
	for _, it := range r.Input {
		if itemType(it) == "function_call_output" {
			return true
		}
	}
	return false
}

// checkTranscript asserts the stored transcript has no duplicated item and
// every function call exactly one output, and that it matches memory (an
// output item stored with its response is held as its replay form).
func checkTranscript(t *testing.T, e *env, c *session.Conversation) []store.Item {
	t.Helper()
	items, err := e.db.Items().List(context.Background(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	mem := session.TranscriptOf(c)
	if len(mem) != len(items) {
		t.Fatalf("memory has %d items, store %d", len(mem), len(items))
	}
	calls, outs := map[string]int{}, map[string]int{}
	seen := map[string]bool{}
	for i, it := range items {
		if string(mem[i]) != string(it.Data) && string(mem[i]) != string(session.ReplayForm(it.Data)) {
			t.Fatalf("item %d differs between memory and store", i)
		}
		var h struct {
			Type, ID string
			CallID   string `json:"call_id"`
		}
		json.Unmarshal(it.Data, &h)
		if h.ID != "" {
			if seen[h.ID] {
				t.Fatalf("item %s stored twice", h.ID)
			}
			seen[h.ID] = true
		}
		switch h.Type {
		case "function_call":
			calls[h.CallID]++
		case "function_call_output":
			outs[h.CallID]++
		}
	}
	for id, n := range calls {
		if n != 1 || outs[id] != 1 {
			t.Fatalf("call %s: %d calls, %d outputs", id, n, outs[id])
		}
	}
	return items
}

// HTTP 426 on the warm-up's upgrade: the workspace switches to HTTP+SSE at
// once, for good, without spending retries; requests carry the whole
// transcript; status shows it; the editor is told once.
func TestUpgrade426SwitchesToHTTP(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
	c := e.open("s1")
	c.Warm()
	done, _ := c.WarmupDone()
	<-done
	rec := newRecorder()
	prompt(t, c, "please read a.txt", rec)
	prompt(t, c, "thanks", rec)
	recs := e.wait(3)
	if e.sim.Handshakes() != 1 {
		t.Errorf("handshakes = %d: a 426 must not be retried", e.sim.Handshakes())
	}
	for _, r := range recs {
		if r.Transport != "http" || r.PreviousResponseID != "" {
			t.Fatalf("request over %s with prev %q, want HTTP in full", r.Transport, r.PreviousResponseID)
		}
	}
	if n := len(recs[2].Input); n != 7 { // user, reasoning, call, output, reasoning, answer, user
		t.Errorf("third request carried %d items, want the whole transcript (7)", n)
	}
	st := e.client.Stats()
	if st.State != session.StateHTTPFallback || st.Transport != "http" || st.Fallbacks != 1 || st.Retries != 0 {
		t.Errorf("stats = %+v", st)
	}
	if len(rec.notices) != 1 || !strings.Contains(rec.notices[0], "426") {
		t.Errorf("notices = %q, want one naming the 426", rec.notices)
	}
	checkTranscript(t, e, c)
}

// 5xx on the upgrade is retried with backoff, then the WebSocket is used.
func TestUpgradeRetriedThenWebSocket(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, DialAttempts: 4}})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 503, Count: 2})
	c := e.open("s1")
	prompt(t, c, "hi", newRecorder())
	recs := e.wait(1)
	if e.sim.Handshakes() != 3 || recs[0].Transport != "ws" {
		t.Errorf("handshakes = %d, transport %s; want 3 attempts then the WebSocket", e.sim.Handshakes(), recs[0].Transport)
	}
	if st := e.client.Stats(); st.Retries != 2 || st.Fallbacks != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// Upgrades that keep failing exhaust the budget, then HTTP takes over.
func TestUpgradeFailuresFallBackToHTTP(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, DialAttempts: 3}})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 500, Count: 100})
	c := e.open("s1")
	rec := newRecorder()
	prompt(t, c, "hi", rec)
	recs := e.wait(1)
	if e.sim.Handshakes() != 3 || recs[0].Transport != "http" {
		t.Errorf("handshakes = %d, transport %s", e.sim.Handshakes(), recs[0].Transport)
	}
	if len(rec.notices) != 1 {
		t.Errorf("notices = %q, want one", rec.notices)
	}
}

// A close, EOF, binary or malformed frame in the middle of a response: the
// response fails, the turn retries on a new connection with a full
// request, the tool runs once and every item is stored once.
func TestBrokenResponseRetriedInFull(t *testing.T) {
	faults := map[string]sim.Fault{
		// After 6 events the answer's first words have streamed.
		"close 1011":      {Kind: sim.FaultCloseMidResponse, CloseCode: 1011, AfterEvents: 6},
		"abrupt close":    {Kind: sim.FaultCloseMidResponse, CloseCode: sim.CloseAbrupt, AfterEvents: 6},
		"close 1000":      {Kind: sim.FaultCloseMidResponse, CloseCode: 1000, AfterEvents: 6},
		"binary frame":    {Kind: sim.FaultBinaryFrame, AfterEvents: 6},
		"malformed frame": {Kind: sim.FaultMalformedFrame, AfterEvents: 6},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
			c := e.open("s1")
			warm(t, c)
			f.Match = hasToolOutput // break the answer that follows the tool's output
			e.sim.InjectFault(f)
			rec := newRecorder()
			if stop := prompt(t, c, "please read a.txt", rec); stop != session.StopEndTurn {
				t.Fatalf("stop = %s", stop)
			}
			if e.tools.runs[firstCall(t, c)] != 1 {
				t.Errorf("the tool ran %d times", e.tools.runs[firstCall(t, c)])
			}
			items := checkTranscript(t, e, c)
			if len(items) != 6 { // user, reasoning, call, output, reasoning, answer
				t.Errorf("transcript has %d items, want 6", len(items))
			}
			recs := e.sim.Received()
			var broken, retry *sim.Received
			for i := range recs {
				if recs[i].Fault != 0 {
					broken = &recs[i]
				} else if broken != nil && retry == nil && isPrompt(recs[i]) {
					retry = &recs[i]
				}
			}
			if broken == nil || retry == nil {
				t.Fatalf("no fault consumed or no retry: %d requests", len(recs))
			}
			if retry.Conn == broken.Conn || retry.PreviousResponseID != "" || len(retry.Input) != 4 {
				t.Errorf("retry on conn %d (broken %d), prev %q, %d items; want a full request of 4 items on a new connection",
					retry.Conn, broken.Conn, retry.PreviousResponseID, len(retry.Input))
			}
			if st := e.client.Stats(); st.Retries < 1 {
				t.Errorf("retries = %d", st.Retries)
			}
			// The editor saw the first words, then was told the answer is retried.
			if len(rec.notices) != 1 || !strings.Contains(rec.notices[0], "retrying") {
				t.Errorf("notices = %q", rec.notices)
			}
		})
	}
}

func firstCall(t *testing.T, c *session.Conversation) string {
	for _, it := range session.TranscriptOf(c) {
		var h struct {
			Type   string
			CallID string `json:"call_id"`
		}
		json.Unmarshal(it, &h)
		if h.Type == "function_call" {
			return h.CallID
		}
	}
	t.Fatal("no function call in the transcript")
	return ""
}

// A close between requests is noticed by the reader at once: the client
// re-warms on a new connection in the background, before any prompt, and
// the next prompt chains on that.
func TestCloseBetweenRequestsRewarms(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultCloseAfterResponse, CloseCode: 1000, Match: isPrompt})
	prompt(t, c, "hello", newRecorder())
	recs := e.wait(3) // warm-up, prompt (then the close), re-warm — no prompt sent yet
	rw := recs[2]
	if rw.Generate == nil || *rw.Generate || rw.Conn == recs[1].Conn || len(rw.Input) != 3 {
		t.Fatalf("third request: %s on conn %d; want a generate:false re-warm of the 3-item transcript on a new connection", rw.Raw, rw.Conn)
	}
	prompt(t, c, "again", newRecorder())
	recs = e.wait(4)
	if recs[3].PreviousResponseID != rw.ResponseID || len(recs[3].Input) != 1 {
		t.Errorf("prompt after the re-warm: prev %q (want %q), %d items", recs[3].PreviousResponseID, rw.ResponseID, len(recs[3].Input))
	}
}

// previous_response_not_found: retried once, at once, in full; the user's
// message is in the transcript and in what was sent exactly once.
func TestPreviousResponseNotFound(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultDropCache, Match: isPrompt})
	prompt(t, c, "hello there", newRecorder())
	recs := e.wait(3)
	if recs[1].Outcome != "previous_response_not_found" {
		t.Fatalf("second request outcome %q", recs[1].Outcome)
	}
	full := recs[2]
	if full.PreviousResponseID != "" || len(full.Input) != 1 || userText(t, full.Input[0]) != "hello there" {
		t.Fatalf("retry: prev %q, input %s", full.PreviousResponseID, full.Input)
	}
	n := 0
	for _, it := range checkTranscript(t, e, c) {
		if strings.Contains(string(it.Data), "hello there") && it.Origin == store.OriginInput {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the user's message is stored %d times", n)
	}
}

// websocket_connection_limit_reached: reconnect and resend in full.
func TestConnectionLimitReconnects(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	warm(t, c)
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultConnectionLimit, Match: isPrompt})
	if stop := prompt(t, c, "hi", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := e.wait(3)
	if recs[1].Outcome != "websocket_connection_limit_reached" {
		t.Fatalf("second request outcome %q", recs[1].Outcome)
	}
	retry := recs[2]
	if retry.Conn == recs[1].Conn || retry.PreviousResponseID != "" || retry.Generate != nil || retry.Outcome != retry.ResponseID {
		t.Errorf("after the limit: conn %d (was %d), prev %q, outcome %q; want a full request on a new connection",
			retry.Conn, recs[1].Conn, retry.PreviousResponseID, retry.Outcome)
	}
}

// Connections are rotated between requests once older than MaxConnAge,
// never in the middle of a response.
func TestRotationBetweenRequests(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, MaxConnAge: time.Nanosecond}})
	c := e.open("s1")
	if stop := prompt(t, c, "please read a.txt", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := e.wait(2)
	if recs[0].Conn == recs[1].Conn {
		t.Errorf("an old connection was reused")
	}
	for _, r := range recs {
		if r.Outcome != r.ResponseID {
			t.Errorf("a response was cut by rotation: %q", r.Outcome)
		}
	}
	checkTranscript(t, e, c)
}

// rate_limit_exceeded: retried after the server's "try again in 1.5s".
func TestRateLimitHonoursHint(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultRateLimit})
	if stop := prompt(t, c, "hi", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := e.wait(2)
	if recs[0].Outcome != "rate_limit_exceeded" {
		t.Fatalf("first outcome %q", recs[0].Outcome)
	}
	if gap := recs[1].At.Sub(recs[0].At); gap < 1400*time.Millisecond {
		t.Errorf("retried after %v, before the hinted 1.5s", gap)
	}
	if st := e.client.Stats(); st.Retries != 1 {
		t.Errorf("retries = %d", st.Retries)
	}
}

// response.failed is retried with backoff; when it keeps failing the turn
// fails with a clear error. response.incomplete ends the turn as max_tokens.
func TestFailedAndIncompleteResponses(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, MaxAttempts: 2})
	c := e.open("s1")
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultResponseFailed, Match: isPrompt})
	if stop := prompt(t, c, "hi", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("one failure: stop %s", stop)
	}
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultResponseFailed, Count: 2, Match: isPrompt})
	_, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("again")}, newRecorder())
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("persistent failure: %v", err)
	}
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultResponseIncomplete, Match: isPrompt})
	if stop := prompt(t, c, "talk sim:tokens=20", newRecorder()); stop != session.StopMaxTokens {
		t.Fatalf("incomplete: stop %s", stop)
	}
	turns, _ := e.db.Items().Turns(context.Background(), "s1")
	want := []store.TurnStatus{store.TurnCompleted, store.TurnFailed, store.TurnCompleted}
	for i, tr := range turns {
		if tr.Status != want[i] {
			t.Errorf("turn %d: %s, want %s", i+1, tr.Status, want[i])
		}
	}
	checkTranscript(t, e, c)
}

// A first-event timeout drops the silent connection and retries; pings do
// not reset anything here because the simulator holds the event, not the
// socket.
func TestSilenceTimesOut(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, FirstEventTimeout: 300 * time.Millisecond})
	c := e.open("s1")
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultSilence, Delay: time.Minute})
	if stop := prompt(t, c, "hi", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("stop %s", stop)
	}
	recs := e.sim.Received()
	if len(recs) < 2 || recs[len(recs)-1].Conn == recs[0].Conn {
		t.Errorf("the silent connection was reused")
	}
}

// Lanes off: each conversation gets its own connection, so two sessions of
// one workspace never evict each other's baseline.
func TestLanesOffOwnConnections(t *testing.T) {
	e := newEnv(t, sim.Options{DisableLanes: true}, session.Config{Config: responses.Config{Lanes: responses.LanesOff}})
	a, b := e.open("a"), e.open("b")
	warm(t, a)
	warm(t, b)
	for i := 0; i < 2; i++ {
		prompt(t, a, "hi a", newRecorder())
		prompt(t, b, "hi b", newRecorder())
	}
	recs := e.wait(6)
	if e.sim.Handshakes() != 2 {
		t.Errorf("handshakes = %d, want one per conversation", e.sim.Handshakes())
	}
	for _, r := range recs {
		if r.StreamID != "" {
			t.Errorf("a stream_id was sent with lanes off")
		}
		if isPrompt(r) && r.PreviousResponseID == "" {
			t.Errorf("a prompt went out in full: %s", r.Raw)
		}
	}
}

// More conversations than the server's 16 active responses and 32 lane
// names: all complete; the 33rd lane name opens a second connection.
func TestManyConversationsWithinLimits(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 2000}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	var convs []*session.Conversation
	for i := 0; i < 33; i++ {
		convs = append(convs, e.open("s"+string(rune('A'+i))))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(convs))
	for _, c := range convs {
		wg.Add(1)
		go func(c *session.Conversation) {
			defer wg.Done()
			_, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("talk sim:tokens=40")}, newRecorder())
			errs <- err
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := e.sim.Handshakes(); n != 2 {
		t.Errorf("handshakes = %d, want 2 (32 lane names per connection)", n)
	}
	for _, r := range e.wait(len(convs)) {
		if r.Outcome != r.ResponseID {
			t.Errorf("request failed: %q conn %d gen %v prev %q answered %v: %.200s", r.Outcome, r.Conn, r.Generate, r.PreviousResponseID, r.Answered, r.Raw)
		}
	}
}

// A failure belongs to the stream that failed: the connection limit hits
// lane A's request while lane B streams on the same socket; B's turn is
// retried on a new connection and completes, and so does A's.
func TestSiblingSurvivesAnotherLanesFailure(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 400}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	a, b := e.open("a"), e.open("b")
	warm(t, a)
	warm(t, b)
	recB := newRecorder()
	doneB := make(chan error, 1)
	go func() {
		stop, err := b.Prompt(context.Background(), []json.RawMessage{session.UserMessage("sim:tokens=200")}, recB)
		if err == nil && stop != session.StopEndTurn {
			err = errors.New(string(stop))
		}
		doneB <- err
	}()
	select {
	case <-recB.first:
	case <-time.After(10 * time.Second):
		t.Fatal("b never streamed")
	}
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultConnectionLimit, Match: func(r sim.Received) bool { return r.StreamID == "hearth-1" }})
	if stop := prompt(t, a, "hello", newRecorder()); stop != session.StopEndTurn {
		t.Fatalf("a: %s", stop)
	}
	select {
	case err := <-doneB:
		if err != nil {
			t.Fatalf("b's healthy turn failed because of a's: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b never finished")
	}
	if !strings.Contains(recB.Text_(), "tok199") {
		t.Errorf("b's answer is incomplete: %q", recB.Text_())
	}
}

// A long session re-warms once after a restart, however long the server
// takes to process it, and the next prompt chains on that re-warm instead
// of resending the transcript in full (the warm-up deadline scales with
// the transcript).
func TestLongSessionRewarmsOnce(t *testing.T) {
	e := newEnv(t, sim.Options{Cost: sim.Cost{PerInputKB: time.Millisecond}},
		session.Config{Config: responses.Config{Lanes: responses.LanesOn}, WarmupTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	if err := e.db.CreateSession(ctx, store.Session{ID: "long", Root: e.root}); err != nil {
		t.Fatal(err)
	}
	var items []store.NewItem
	for i := range 1000 {
		items = append(items, store.NewItem{Origin: store.OriginInput,
			Data: session.UserMessage(fmt.Sprintf("message %d: %s", i, strings.Repeat("x", 400)))})
	}
	if _, err := e.db.Items().Append(ctx, "long", 0, items); err != nil {
		t.Fatal(err)
	}
	c := e.reopen("long")
	c.Warm()
	prompt(t, c, "and now?", newRecorder())
	recs := e.wait(2)
	if len(recs) != 2 {
		t.Fatalf("%d requests, want the re-warm and the prompt", len(recs))
	}
	if recs[0].ProcessDelay < 300*time.Millisecond {
		t.Fatalf("the re-warm took %s of server time: the test needs one longer than the warm-up timeout", recs[0].ProcessDelay)
	}
	if recs[0].Outcome != recs[0].ResponseID {
		t.Fatalf("the re-warm was cut short (%s): its deadline did not fit the transcript", recs[0].Outcome)
	}
	if recs[1].PreviousResponseID != recs[0].ResponseID || len(recs[1].Input) != 1 {
		t.Errorf("the prompt after the re-warm: prev %q, %d items; want it chained with only the new message", recs[1].PreviousResponseID, len(recs[1].Input))
	}
}
