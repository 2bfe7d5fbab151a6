package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// readLanes reads events until n terminal events arrived and returns them in arrival order.
func (c *client) readLanes(n int) []event {
	c.t.Helper()
	var evs []event
	for n > 0 {
		e := c.read()
		evs = append(evs, e)
		if isTerminal(e.Type) {
			n--
		}
	}
	return evs
}

func indexOf(evs []event, lane, typ string) int {
	for i, e := range evs {
		if e.lane() == lane && e.Type == typ {
			return i
		}
	}
	return -1
}

func TestLanesInterleaveAndCarryStreamID(t *testing.T) {
	_, base := newSim(t, Options{Cost: Cost{FirstToken: 100 * time.Millisecond, TokensPerSecond: 200}})
	c := dial(t, base)
	for _, lane := range []string{"a", "b", ""} {
		req := map[string]any{"type": "response.create", "input": "sim:tokens=10 " + lane}
		if lane != "" {
			req["stream_id"] = lane
		}
		c.send(req)
	}
	evs := c.readLanes(3)
	seq := map[string]int{}
	for _, e := range evs {
		lane := e.lane()
		if e.StreamID != nil && *e.StreamID == "" {
			t.Fatalf("empty stream_id on %s", e.raw)
		}
		if *e.Seq != seq[lane] {
			t.Fatalf("lane %q: sequence_number %d, want %d", lane, *e.Seq, seq[lane])
		}
		seq[lane]++
		if e.Type == "response.completed" && !strings.HasPrefix(textOf(filterLane(evs, lane)), "tok0 tok1") {
			t.Fatalf("lane %q text %q", lane, textOf(filterLane(evs, lane)))
		}
	}
	if len(seq) != 3 {
		t.Fatalf("lanes seen %v", seq)
	}
	// Concurrent: every lane started before any finished (each takes ≥ 100 ms + 9 × 5 ms).
	firstDone := len(evs)
	for _, lane := range []string{"a", "b", ""} {
		if i := indexOf(evs, lane, "response.completed"); i < firstDone {
			firstDone = i
		}
	}
	for _, lane := range []string{"a", "b", ""} {
		if i := indexOf(evs, lane, "response.created"); i > firstDone {
			t.Fatalf("lane %q created at %d, after the first completion at %d", lane, i, firstDone)
		}
	}
}

func filterLane(evs []event, lane string) []event {
	var out []event
	for _, e := range evs {
		if e.lane() == lane {
			out = append(out, e)
		}
	}
	return out
}

func TestSameLaneIsFIFO(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("disableLanes=%v", disable), func(t *testing.T) {
			_, base := newSim(t, Options{DisableLanes: disable, Cost: Cost{TokensPerSecond: 500}})
			c := dial(t, base)
			lane := "x"
			if disable {
				lane = ""
			}
			for _, text := range []string{"first sim:tokens=5", "second"} {
				req := map[string]any{"type": "response.create", "input": text}
				if lane != "" {
					req["stream_id"] = lane
				}
				c.send(req)
			}
			evs := c.readLanes(2)
			firstDone := indexOf(evs, lane, "response.completed")
			if firstDone < 0 || textOf(evs[:firstDone]) != "tok0 tok1 tok2 tok3 tok4" {
				t.Fatalf("first response text %q", textOf(evs[:firstDone]))
			}
			for i, e := range evs[:firstDone] {
				if e.Type == "response.created" && i != 0 {
					t.Fatalf("second response created before the first completed")
				}
			}
			if textOf(evs[firstDone:]) != "You said: second" {
				t.Fatalf("second text %q", textOf(evs[firstDone:]))
			}
		})
	}
}

func TestDisabledLanesRejectStreamID(t *testing.T) {
	_, base := newSim(t, Options{DisableLanes: true})
	c := dial(t, base)
	e := c.create(map[string]any{"stream_id": "a", "input": "x"})[0]
	wantError(t, e, 400, "invalid_stream_id")
	if e.lane() != "a" {
		t.Fatalf("error does not echo stream_id: %s", e.raw)
	}
}

func TestInvalidStreamIDs(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	for _, id := range []any{"", "has space", "a/b", strings.Repeat("a", 257), 5} {
		wantError(t, c.create(map[string]any{"stream_id": id, "input": "x"})[0], 400, "invalid_stream_id")
	}
	ok := strings.Repeat("A", 256)
	if e := last(c.create(map[string]any{"stream_id": ok, "input": "x"})); e.Type != "response.completed" || e.lane() != ok {
		t.Fatalf("256-char name: %s", e.raw)
	}
	if e := last(c.create(map[string]any{"stream_id": "a-b_c.9", "input": "x"})); e.Type != "response.completed" {
		t.Fatalf("punctuated name: %s", e.raw)
	}
}

func TestActiveResponsesLimit(t *testing.T) {
	_, base := newSim(t, Options{Cost: Cost{FirstToken: 50_000_000}}) // 50 ms before any output
	c := dial(t, base)
	const n = MaxActiveResponses + 1
	for i := 0; i < n; i++ {
		c.send(map[string]any{"type": "response.create", "stream_id": fmt.Sprintf("l%d", i), "input": "x"})
	}
	evs := c.readLanes(n)
	created := 0
	for _, e := range evs {
		if isTerminal(e.Type) {
			break
		}
		if e.Type == "response.created" {
			created++
		}
	}
	if created != MaxActiveResponses {
		t.Fatalf("%d responses created before the first finished, want %d", created, MaxActiveResponses)
	}
	if i := indexOf(evs, fmt.Sprintf("l%d", n-1), "response.completed"); i < 0 {
		t.Fatal("the queued 17th response never completed")
	}
}

func TestStreamNameLimit(t *testing.T) {
	srv, base := newSim(t, Options{})
	c := dial(t, base)
	for i := 0; i < MaxStreamNames; i++ {
		completed(t, c.create(map[string]any{"stream_id": fmt.Sprintf("n%d", i), "input": "x"}))
	}
	e := c.create(map[string]any{"stream_id": "one-too-many", "input": "x"})[0]
	wantError(t, e, 400, "websocket_stream_limit_reached")
	if e.lane() != "one-too-many" {
		t.Fatalf("error does not echo stream_id: %s", e.raw)
	}
	completed(t, c.create(map[string]any{"stream_id": "n0", "input": "x"})) // a known name still works
	completed(t, c.create(map[string]any{"input": "x"}))                    // and the default lane
	// The limit is per connection.
	completed(t, dial(t, base).create(map[string]any{"stream_id": "one-too-many", "input": "x"}))
	if recs := waitRecs(t, srv, MaxStreamNames+4); recs[MaxStreamNames].Outcome != "websocket_stream_limit_reached" {
		t.Fatalf("outcome %q", recs[MaxStreamNames].Outcome)
	}
}

func TestLaneCachesAreSeparate(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	ra := completed(t, c.create(map[string]any{"stream_id": "a", "input": "from a"}))
	rb := completed(t, c.create(map[string]any{"stream_id": "b", "input": "from b"}))
	// Each lane keeps its own latest response...
	completed(t, c.create(map[string]any{"stream_id": "a", "previous_response_id": ra.ID, "input": "again"}))
	// ...and only its latest: an older response of a lane is a miss, and the error names the lane.
	e := c.create(map[string]any{"stream_id": "a", "previous_response_id": ra.ID, "input": []any{}})[0]
	wantError(t, e, 400, "previous_response_not_found")
	if e.lane() != "a" {
		t.Fatalf("lane error without stream_id: %s", e.raw)
	}
	// Lane b was not touched by lane a's failure.
	completed(t, c.create(map[string]any{"stream_id": "b", "previous_response_id": rb.ID, "input": []any{}}))
}

// Lanes fork: stream_id routes and previous_response_id is lineage, so a new lane continues
// the latest response of another lane of the connection, and both lanes go on on their own.
// A new connection holds nothing: the fork's parent is not found there.
func TestLanesFork(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	r1 := completed(t, c.create(map[string]any{"stream_id": "parent", "input": "remember heliotrope"}))
	r2 := completed(t, c.create(map[string]any{"stream_id": "parent", "previous_response_id": r1.ID, "input": "and more"}))
	evs := c.create(map[string]any{"stream_id": "fork", "previous_response_id": r2.ID, "input": "in the fork"})
	fork := completed(t, evs)
	if got := textOf(evs); got != "You said: in the fork" {
		t.Fatalf("fork answer %q", got)
	}
	// The fork read the parent's whole chain: its usage counts the cached items.
	if fork.Usage == nil || fork.Usage.InputTokensDetails.CachedTokens == 0 {
		t.Fatalf("fork usage %+v: the parent's chain was not continued", fork.Usage)
	}
	// Both lanes go on: the parent from its own latest, the fork from its own.
	completed(t, c.create(map[string]any{"stream_id": "parent", "previous_response_id": r2.ID, "input": "parent goes on"}))
	completed(t, c.create(map[string]any{"stream_id": "fork", "previous_response_id": fork.ID, "input": "fork goes on"}))
	// The parent's older response is gone from every lane.
	wantError(t, c.create(map[string]any{"stream_id": "other", "previous_response_id": r1.ID, "input": []any{}})[0], 400, "previous_response_not_found")
	// A new connection has an empty cache.
	wantError(t, dial(t, base).create(map[string]any{"stream_id": "fork2", "previous_response_id": r2.ID, "input": []any{}})[0], 400, "previous_response_not_found")
}

// A job that finds its lane free begins its processing at its arrival; one
// that waits behind another on its lane begins when it starts: its time in
// the queue is not charged as processing.
func TestSchedulerMarksJobsThatWaited(t *testing.T) {
	var started []*job
	s := newScheduler(MaxActiveResponses, func(j *job) { started = append(started, j) })
	a, b, other := &job{lane: "a"}, &job{lane: "a"}, &job{lane: "b"}
	for _, j := range []*job{a, b, other} {
		if !s.submit(j) {
			t.Fatal("submit refused")
		}
	}
	if a.waited || other.waited || !b.waited {
		t.Fatalf("waited: first on lane a %v, second on lane a %v, lane b %v; want only the second", a.waited, b.waited, other.waited)
	}
	s.done(a)
	if len(started) != 3 || started[2] != b {
		t.Fatalf("started %d jobs, want the queued one last", len(started))
	}
}
