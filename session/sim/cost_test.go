package sim

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCostFullVersusChained: a full 100 KB request is charged for all of its input, a chained
// one only for its 1 KB delta, and the server really waits that long before response.created.
func TestCostFullVersusChained(t *testing.T) {
	cost := Cost{PerRequest: 2 * time.Millisecond, PerInputKB: time.Millisecond}
	srv, base := newSim(t, Options{Cost: cost})
	c := dial(t, base)

	var transcript []any
	for i := 0; i < 100; i++ {
		transcript = append(transcript, userMsg(strings.Repeat("x", 1000)))
	}
	transcript = append(transcript, userMsg("full"))
	start := time.Now()
	c.send(map[string]any{"type": "response.create", "input": transcript})
	if e := c.read(); e.Type != "response.created" {
		t.Fatalf("first event %s", e.Type)
	}
	fullWait := time.Since(start)
	r := completed(t, c.untilTerminal())

	start = time.Now()
	c.send(map[string]any{"type": "response.create", "previous_response_id": r.ID,
		"input": []any{userMsg(strings.Repeat("y", 1000))}})
	if e := c.read(); e.Type != "response.created" {
		t.Fatalf("first event %s", e.Type)
	}
	chainedWait := time.Since(start)
	c.untilTerminal()

	recs := waitRecs(t, srv, 2)
	full, chained := recs[0], recs[1]
	if full.InputBytes < 100*1024 || chained.InputBytes < 1000 || chained.InputBytes > 1200 {
		t.Fatalf("input bytes: full %d chained %d", full.InputBytes, chained.InputBytes)
	}
	for _, r := range []Received{full, chained} {
		want := cost.PerRequest + time.Duration(int64(cost.PerInputKB)*int64(r.InputBytes)/1024)
		if r.ProcessDelay != want || cost.ProcessDelay(r.InputBytes) != want {
			t.Fatalf("process delay %v for %d bytes, want %v", r.ProcessDelay, r.InputBytes, want)
		}
	}
	if full.ProcessDelay < 100*time.Millisecond || chained.ProcessDelay > 4*time.Millisecond {
		t.Fatalf("process delays: full %v chained %v", full.ProcessDelay, chained.ProcessDelay)
	}
	// The schedule begins at arrival, and no response is answered before
	// its cost model allows.
	for _, r := range []Received{full, chained} {
		if took := r.AnsweredAt.Sub(r.At); took < r.ProcessDelay+r.OutputDelay {
			t.Fatalf("answered %v after arrival, before its charge %v", took, r.ProcessDelay+r.OutputDelay)
		}
	}
	if fullWait < full.ProcessDelay || chainedWait < chained.ProcessDelay || fullWait <= chainedWait {
		t.Fatalf("measured waits: full %v (charged %v), chained %v (charged %v)", fullWait, full.ProcessDelay, chainedWait, chained.ProcessDelay)
	}
}

func TestCostHandshakeFirstTokenAndPace(t *testing.T) {
	cost := Cost{Handshake: 40 * time.Millisecond, FirstToken: 30 * time.Millisecond, TokensPerSecond: 200}
	srv, base := newSim(t, Options{Cost: cost})
	start := time.Now()
	c := dial(t, base)
	if d := time.Since(start); d < cost.Handshake {
		t.Fatalf("handshake took %v, want at least %v", d, cost.Handshake)
	}
	// The schedule begins when the request arrives, so the times are taken
	// from its sending: a lower bound of the server's.
	sent := time.Now()
	c.send(map[string]any{"type": "response.create", "input": "sim:tokens=11"})
	var firstDelta, lastDelta time.Time
	for {
		e := c.read()
		now := time.Now()
		switch e.Type {
		case "response.output_text.delta":
			if firstDelta.IsZero() {
				firstDelta = now
			}
			lastDelta = now
		}
		if isTerminal(e.Type) {
			break
		}
	}
	if d := firstDelta.Sub(sent); d < cost.FirstToken {
		t.Fatalf("first token after %v, want at least %v", d, cost.FirstToken)
	}
	// The schedule is absolute (pacer): a late first token makes the next
	// gaps shorter, but the last delta is never early.
	if d, want := lastDelta.Sub(sent), cost.FirstToken+10*cost.tokenGap(); d < want {
		t.Fatalf("11 deltas ended %v after the response began, want at least %v", d, want)
	}
	// The server's own record: the pacing it charged, and an answer no
	// earlier than that after the request's arrival.
	r := waitRecs(t, srv, 1)[0]
	if want := cost.FirstToken + 10*cost.tokenGap(); r.OutputDelay != want || r.AnsweredAt.Sub(r.At) < want {
		t.Fatalf("output delay %v, answered %v after arrival; want %v and no earlier", r.OutputDelay, r.AnsweredAt.Sub(r.At), want)
	}
	if !strings.Contains(cost.String(), "tokens_per_second=200") {
		t.Fatalf("String() = %q", cost.String())
	}
}

// A schedule that has fallen behind (a timer fired late) catches up: the
// next wait ends at once rather than a full d later, and the schedule's
// point moves by d, not to now.
func TestPacerCatchesUp(t *testing.T) {
	p := &pacer{due: time.Now().Add(-time.Hour)}
	before := p.due
	start := time.Now()
	if err := p.wait(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Minute/2 {
		t.Fatalf("a wait an hour behind schedule took %v", took)
	}
	if got := p.due.Sub(before); got != time.Minute {
		t.Fatalf("the schedule moved by %v, want 1m", got)
	}
	// Caught up (a silence fault), a wait lasts its whole d from now.
	p = &pacer{due: time.Now().Add(-time.Hour)}
	p.catchUp()
	start = time.Now()
	if err := p.wait(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Fatalf("a 20ms wait after catching up took %v", took)
	}
	// On schedule, a wait lasts its d, and a precise one ends on time.
	for _, precise := range []bool{false, true} {
		p = newPacer(Cost{Precise: precise}, time.Now())
		begun := p.due
		if err := p.wait(context.Background(), 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now.Sub(begun) < 20*time.Millisecond || now.Sub(begun) > 20*time.Millisecond+time.Second {
			t.Fatalf("a 20ms wait on schedule (precise %v) ended %v after the schedule began", precise, now.Sub(begun))
		}
	}
}
