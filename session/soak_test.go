package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// The soak: 200 turns across 3 sessions sharing one workspace client, with
// random faults and some cancelled turns. It ends with every turn in a
// final state, and every transcript complete: no item lost or written
// twice, every function call answered exactly once, memory equal to the
// store.
func TestSoak200TurnsWithRandomFaults(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Lanes: session.LanesOn, FirstEventTimeout: 150 * time.Millisecond})
	faults := []sim.Fault{
		{Kind: sim.FaultCloseMidResponse, CloseCode: 1011, AfterEvents: 4},
		{Kind: sim.FaultCloseMidResponse, CloseCode: sim.CloseAbrupt, AfterEvents: 2},
		{Kind: sim.FaultCloseAfterResponse, CloseCode: 1000},
		{Kind: sim.FaultBinaryFrame, AfterEvents: 3},
		{Kind: sim.FaultMalformedFrame, AfterEvents: 5},
		{Kind: sim.FaultDropCache},
		{Kind: sim.FaultConnectionLimit},
		{Kind: sim.FaultResponseFailed},
		{Kind: sim.FaultSilence, Delay: time.Minute},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var rngMu sync.Mutex
	roll := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	convs := []*session.Conversation{e.open("soak-a"), e.open("soak-b"), e.open("soak-c")}
	for _, c := range convs {
		c.Warm()
	}
	const turns = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	stops := map[session.StopReason]int{}
	failed := 0
	for i, c := range convs {
		n := turns / len(convs)
		if i < turns%len(convs) {
			n++
		}
		wg.Add(1)
		go func(c *session.Conversation, n int) {
			defer wg.Done()
			for j := 0; j < n; j++ {
				if roll(3) == 0 {
					e.sim.InjectFault(faults[roll(len(faults))])
				}
				text := "hi"
				if roll(2) == 0 {
					text = "please read a.txt"
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if roll(10) == 0 {
					cancel() // some turns are cancelled before or while they run
				}
				stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(fmt.Sprintf("%s (%d)", text, j))}, nil)
				cancel()
				mu.Lock()
				if err != nil {
					failed++
				} else {
					stops[stop]++
				}
				mu.Unlock()
			}
		}(c, n)
	}
	wg.Wait()
	total := 0
	for _, c := range convs {
		checkTranscript(t, e, c)
		trs, err := e.db.Turns(context.Background(), c.ID())
		if err != nil {
			t.Fatal(err)
		}
		total += len(trs)
		for _, tr := range trs {
			switch tr.Status {
			case store.TurnCompleted, store.TurnCancelled, store.TurnFailed:
			default:
				t.Errorf("turn %d of %s ended %s", tr.Seq, c.ID(), tr.Status)
			}
		}
	}
	if total != turns {
		t.Errorf("%d turns stored, want %d", total, turns)
	}
	st := e.client.Stats()
	t.Logf("stops %v, failed %d; stats: handshakes %d, warm-ups %d, full %d, incremental %d, retries %d",
		stops, failed, st.Handshakes, st.Warmups, st.Full, st.Incremental, st.Retries)
	if stops[session.StopEndTurn] < turns/2 {
		t.Errorf("only %d of %d turns completed", stops[session.StopEndTurn], turns)
	}
	if st.Retries == 0 || st.Incremental == 0 {
		t.Errorf("the soak exercised nothing: %+v", st)
	}
}
