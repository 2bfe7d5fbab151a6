package responses

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// A model streaming a delta a millisecond: the connection's reader reads
// them in batches of its window and hands each batch to the stream's
// OnDeltas function, in order, while the owner waits; the owner sees the
// rest. After the answer the socket wakes its reader at once again (its
// low-water mark is down): the next response's events arrive. Over
// HTTP+SSE (the fallback) the same.
func TestDeltasHandedOnInBatches(t *testing.T) {
	t.Run("websocket", func(t *testing.T) { testDeltasHandedOnInBatches(t, false) })
	t.Run("http", func(t *testing.T) { testDeltasHandedOnInBatches(t, true) })
}

func testDeltasHandedOnInBatches(t *testing.T, overHTTP bool) {
	srv := sim.New(sim.Options{Reasoning: sim.ReasoningNever, Cost: sim.Cost{TokensPerSecond: 1000}})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := NewClient(Config{BaseURL: base, Lanes: LanesOn, ForceHTTP: overHTTP}.WithDefaults(), nil, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link, err := c.Link(ctx, "", "l")
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if err := link.Acquire(ctx, "l"); err != nil {
			t.Fatal(err)
		}
		msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": "sim:tokens=300"})
		frame, _ := Create{Type: "response.create", Settings: Settings{Model: "m"}, StreamID: "l", Input: []json.RawMessage{msg}}.Frame()
		st, err := link.Send(ctx, "l", frame)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var text strings.Builder
		batches, owned := 0, 0
		st.OnDeltas(func(typ, delta string) {
			mu.Lock()
			defer mu.Unlock()
			batches++
			text.WriteString(delta)
		})
		for first := true; ; first = false {
			e, err := st.Next(ctx, first, 5*time.Second, 5*time.Second)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if e.Terminal() {
				break
			}
			if e.Type == "response.output_text.delta" {
				owned++
				mu.Lock()
				text.WriteString(st.JoinDeltas(e))
				mu.Unlock()
			}
		}
		words := strings.Fields(text.String())
		if len(words) != 300 || words[0] != "tok0" || words[299] != "tok299" {
			t.Fatalf("round %d: the answer arrived as %d words", round, len(words))
		}
		// 300 ms of deltas in windows of 12 ms: about 25 batches.
		if batches+owned > 100 {
			t.Errorf("round %d: 300 deltas came in %d batches and %d events: not batched", round, batches, owned)
		}
		t.Logf("round %d: %d batches to OnDeltas, %d delta events to the owner", round, batches, owned)
	}
}

// A batch that several streams share gathers for less time: window for
// one stream, window over the square root of their number for more, never
// under a third of window; the gate counts each stream's first paced delta
// of the batch from when the first one came.
func TestBatchWindowShrinksWithStreams(t *testing.T) {
	w := 12 * time.Millisecond
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, w}, {1, w}, {4, 6 * time.Millisecond}, {9, 4 * time.Millisecond}, {16, 4 * time.Millisecond}, {100, 4 * time.Millisecond}} {
		if got := batchWindow(w, c.n); got != c.want {
			t.Errorf("batchWindow(%v, %d) = %v, want %v", w, c.n, got, c.want)
		}
	}
	g := newReadGate(w)
	g.delta()
	began := g.began
	if g.due != began.Add(w) {
		t.Fatalf("one stream: due %v after the first delta, want %v", g.due.Sub(began), w)
	}
	for range 3 {
		g.delta()
	}
	if g.streams != 4 || g.began != began || g.due != began.Add(6*time.Millisecond) {
		t.Fatalf("four streams: %d counted, due %v after the first delta, want 4 and 6ms", g.streams, g.due.Sub(began))
	}
}
