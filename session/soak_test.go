package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// The soak: 200 turns across 3 sessions sharing one workspace client, with
// random faults and some cancelled turns. It ends with every turn in a
// final state, and every transcript complete: no item lost or written
// twice, every function call answered exactly once, memory equal to the
// store.
func TestSoak200TurnsWithRandomFaults(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, FirstEventTimeout: 500 * time.Millisecond,
		MaxRetryWait: 50 * time.Millisecond})
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
	type failure struct {
		conv       string
		start, end time.Time
		err        error
	}
	var failures []failure
	for i, c := range convs {
		n := turns / len(convs)
		if i < turns%len(convs) {
			n++
		}
		wg.Add(1)
		go func(c *session.Conversation, n int) {
			defer wg.Done()
			for j := 0; j < n; j++ {
				switch roll(12) {
				case 0, 1, 2:
					e.sim.InjectFault(faults[roll(len(faults))])
				case 3:
					// A fault that outlasts the retries, on this session's
					// requests only: the turn fails, and must say why.
					id := c.ID()
					e.sim.InjectFault(sim.Fault{Kind: sim.FaultResponseFailed, Count: 6,
						Match: func(r sim.Received) bool { return r.PromptCacheKey == id }})
				}
				text := "hi"
				if roll(2) == 0 {
					text = "please read a.txt"
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if roll(10) == 0 {
					cancel() // some turns are cancelled before or while they run
				}
				start := time.Now()
				stop, err := c.Prompt(ctx, []json.RawMessage{session.UserMessage(fmt.Sprintf("%s (%d)", text, j))}, nil)
				cancel()
				mu.Lock()
				if err != nil {
					failures = append(failures, failure{c.ID(), start, time.Now(), err})
				} else {
					stops[stop]++
				}
				mu.Unlock()
			}
		}(c, n)
	}
	wg.Wait()
	// Every failed turn is explained by a fault injected into one of its
	// own requests, and fails with that fault's error, never "aborted" or
	// "internal" — or it lost the connection it shares with its siblings
	// while one of their faults cut it: each request has its own budget
	// of connection losses (MaxAttempts), and a long turn under this many
	// faults can spend it on cuts that were not its own.
	received := e.sim.Received()
	for _, f := range failures {
		var hit, cut []sim.FaultKind
		for _, r := range received {
			if r.Fault == sim.FaultNone || r.At.Before(f.start) || r.At.After(f.end) {
				continue
			}
			if r.PromptCacheKey == f.conv {
				hit = append(hit, r.Fault)
			} else if cutsConnection(r.Fault) {
				cut = append(cut, r.Fault)
			}
		}
		if len(hit) > 0 && explains(hit[len(hit)-1], f.err) {
			continue
		}
		if len(cut) > 0 && explains(cut[len(cut)-1], f.err) {
			continue
		}
		t.Errorf("%s: a turn failed with %q, which neither its own last fault (of %v) nor a cut of the shared connection (%v) explains",
			f.conv, f.err, hit, cut)
	}
	failed := len(failures)
	total := 0
	for _, c := range convs {
		checkTranscript(t, e, c)
		trs, err := e.db.Items().Turns(context.Background(), c.ID())
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
	if failed == 0 {
		t.Errorf("no turn failed: the attribution above checked nothing")
	}
	if stops[session.StopEndTurn] < turns/2 {
		t.Errorf("only %d of %d turns completed", stops[session.StopEndTurn], turns)
	}
	if st.Retries == 0 || st.Incremental == 0 {
		t.Errorf("the soak exercised nothing: %+v", st)
	}
}

// Faults on one lane only: the other sessions sharing the socket never see
// a failed turn, however often the faulted lane's requests are cut,
// silenced, refused or have their connection dropped under them.
func TestSoakFaultsOnOneLaneOnly(t *testing.T) {
	// A first-event timeout a loaded machine under -race never reaches by
	// itself, short enough that the silences cost little.
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, FirstEventTimeout: time.Second})
	// By session, not by lane: a conversation that walks away from a silent
	// lane goes on on another one.
	faulty := func(r sim.Received) bool { return r.PromptCacheKey == "lane-a" }
	faults := []sim.Fault{
		{Kind: sim.FaultCloseMidResponse, CloseCode: 1011, AfterEvents: 4, Match: faulty},
		{Kind: sim.FaultCloseMidResponse, CloseCode: sim.CloseAbrupt, AfterEvents: 2, Match: faulty},
		{Kind: sim.FaultCloseAfterResponse, CloseCode: 1000, Match: faulty},
		{Kind: sim.FaultBinaryFrame, AfterEvents: 3, Match: faulty},
		{Kind: sim.FaultDropCache, Match: faulty},
		{Kind: sim.FaultConnectionLimit, Match: faulty},
		{Kind: sim.FaultResponseFailed, Match: faulty},
		{Kind: sim.FaultSilence, Delay: time.Minute, Match: faulty},
	}
	a, b, c := e.open("lane-a"), e.open("lane-b"), e.open("lane-c")
	for _, conv := range []*session.Conversation{a, b, c} {
		warm(t, conv)
	}
	const perSession = 30
	var wg sync.WaitGroup
	errs := make(chan error, 2*perSession)
	run := func(conv *session.Conversation, inject bool) {
		defer wg.Done()
		for j := range perSession {
			if inject && j%2 == 0 {
				e.sim.InjectFault(faults[(j/2)%len(faults)])
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			stop, err := conv.Prompt(ctx, []json.RawMessage{session.UserMessage(fmt.Sprintf("please read a.txt (%d)", j))}, nil)
			cancel()
			if !inject && (err != nil || stop != session.StopEndTurn) {
				errs <- fmt.Errorf("%s turn %d: %s %v", conv.ID(), j, stop, err)
			}
		}
	}
	wg.Add(3)
	go run(a, true)
	go run(b, false)
	go run(c, false)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, conv := range []*session.Conversation{a, b, c} {
		checkTranscript(t, e, conv)
	}
	if e.sim.PendingFaults() == perSession/2 {
		t.Errorf("no fault fired")
	}
}

// cutsConnection says whether a fault on one lane's request ends (or
// breaks the framing of) the WebSocket every lane shares.
func cutsConnection(k sim.FaultKind) bool {
	switch k {
	case sim.FaultCloseMidResponse, sim.FaultCloseAfterResponse, sim.FaultBinaryFrame,
		sim.FaultMalformedFrame, sim.FaultConnectionLimit:
		return true
	}
	return false
}

// explains says whether err is what a turn fails with when fault was the
// last to hit its requests (after the retries the failure judge allows).
func explains(fault sim.FaultKind, err error) bool {
	// "internal" is hearth's own failure; a WebSocket close 1011 quotes the
	// server's ("close 1011 (internal server error)"), which is the fault.
	msg := strings.ReplaceAll(err.Error(), "(internal server error)", "")
	if strings.Contains(msg, "aborted") || strings.Contains(msg, "internal") {
		return false
	}
	switch fault {
	case sim.FaultResponseFailed:
		var re *responses.ResponseError
		return errors.As(err, &re) && re.Code == "server_error"
	case sim.FaultSilence:
		return errors.Is(err, responses.ErrConnectionLost) || strings.Contains(msg, "no event")
	default: // the transport faults end in a lost connection once retries are spent
		return errors.Is(err, responses.ErrConnectionLost)
	}
}

// The soak's attribution takes a close 1011, whose text says "internal
// server error", for the transport fault it is, and still refuses
// hearth's own internal errors.
func TestExplainsClose1011(t *testing.T) {
	lost := fmt.Errorf("%w: websocket: close 1011 (internal server error): simulated fault", responses.ErrConnectionLost)
	if !explains(sim.FaultCloseMidResponse, lost) {
		t.Errorf("a close 1011 after retries is not explained by close_mid_response: %v", lost)
	}
	if own := fmt.Errorf("%w: internal error", responses.ErrConnectionLost); explains(sim.FaultCloseMidResponse, own) {
		t.Errorf("hearth's own internal error was taken for the fault: %v", own)
	}
}
