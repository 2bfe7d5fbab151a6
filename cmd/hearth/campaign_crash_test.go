package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

var (
	crashKills = flag.Int("crash-kills", 8, "SIGKILLs dealt by TestCrashCampaign (the long run: 200)")
	crashSeed  = flag.Uint64("crash-seed", 1, "random seed of TestCrashCampaign")
)

// The phases of a turn's life a kill is aimed at.
type crashPhase int

const (
	phaseWarmup crashPhase = iota // a session/new's or session/load's warm-up request is at the model API
	phaseStream                   // the answer is streaming to the editor
	phaseTool                     // a tool call is running (shell through the sandbox helper, or read_file)
	phaseCommit                   // the model API has just ended a response: its items are being committed
)

var phaseNames = [...]string{"warm-up", "stream", "tool", "commit"}

// crashLedger is what the editors were acknowledged across every daemon of
// the campaign: none of it may be missing from the store after any kill.
type crashLedger struct {
	sessions map[acp.SessionId]string // answered session/new → its cwd
	prompts  map[string]acp.SessionId // nonce of a prompt answered end_turn → its session
	running  map[string]bool          // tool calls reported in_progress: function_call committed
	finished map[string]bool          // and then completed or failed: output committed
}

func (l *crashLedger) merge(ed *campaignEditor) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	for id := range ed.running {
		l.running[id] = true
	}
	for id := range ed.finished {
		l.finished[id] = true
	}
}

// TestCrashCampaign SIGKILLs the real `hearth serve` at random points across
// warm-up, streaming, a tool call and the commit of a response, each kill
// aimed by waiting for an event (a warm-up request received by the model API,
// the k-th message chunk, the j-th tool call in progress, a response
// answered) plus a random extra delay. After each kill, with the daemon dead:
// SQLite's integrity and foreign-key checks pass, nothing acknowledged to an
// editor is missing (sessions created, prompts answered, tool calls and
// outputs reported), nothing is stored twice; then a new daemon starts and
// the session the kill hit answers a prompt. -crash-kills=200 is the long
// run (docs/RELIABILITY.md).
func TestCrashCampaign(t *testing.T) {
	opts := sim.Options{Cost: sim.Cost{TokensPerSecond: 3000}}
	events := newSimEvents(&opts)
	e := newE2EWith(t, opts)
	roots := []string{e.root, filepath.Join(filepath.Dir(e.root), "ws2")}
	mkWorkspace(t, roots[1])
	dbPath := filepath.Join(dataDir(e), "hearth.db")
	rng := rand.New(rand.NewPCG(*crashSeed, 11))
	t.Logf("seed %d, %d kills", *crashSeed, *crashKills)
	ledger := &crashLedger{sessions: map[acp.SessionId]string{}, prompts: map[string]acp.SessionId{},
		running: map[string]bool{}, finished: map[string]bool{}}
	var (
		prev     acp.SessionId // the session the last kill hit
		perPhase [4]int
		early    [4]int // kills whose event never came: the action had ended first
		started  []time.Duration
	)
	for k := range *crashKills {
		phase := crashPhase(k % 4)
		t0 := time.Now()
		daemon := e.serve()
		started = append(started, time.Since(t0))
		ed := dialEditor(t, e.sock)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)

		// The session the last kill hit still answers.
		if prev != "" {
			if err := ed.load(ctx, prev, ledger.sessions[prev]); err != nil {
				t.Fatalf("kill %d: after the restart: %v", k, err)
			}
			nonce := fmt.Sprintf("k%dhi", k)
			stop, _, err := ed.prompt(ctx, prev, "hi nonce="+nonce)
			if err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("kill %d: the session hit by the last kill does not answer: %s %v", k, stop, err)
			}
			ledger.prompts[nonce] = prev
		}

		target, action, event, phase := crashAction(ctx, k, phase, rng, ed, events, ledger, roots, prev)
		done := make(chan struct{})
		var actErr error
		go func() {
			defer close(done)
			actErr = action()
		}()
		if event(done) {
			time.Sleep(crashDelay(phase, rng)) // randomises where the kill lands after the event
		} else if ctx.Err() != nil {
			t.Fatalf("kill %d (%s): the event it waits for never came", k, phaseNames[phase])
		} else {
			early[phase]++
		}
		daemon.Process.Signal(syscall.SIGKILL)
		waitExit(t, daemon, 10*time.Second)
		<-done
		timedOut := ctx.Err() != nil
		cancel()
		ed.c.Close()
		ledger.merge(ed)
		perPhase[phase]++
		if *target != "" {
			prev = *target
		}
		if timedOut {
			t.Fatalf("kill %d (%s): the action timed out: %v", k, phaseNames[phase], actErr)
		}
		checkCrashStore(t, dbPath, ledger, false)
	}

	// A last daemon opens every session (which answers the calls a kill
	// left without output), the last one hit answers, and after a clean
	// stop every call has exactly one output and no turn is running.
	daemon := e.serve()
	ed := dialEditor(t, e.sock)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for id, cwd := range ledger.sessions {
		if err := ed.load(ctx, id, cwd); err != nil {
			t.Fatalf("after the campaign: %v", err)
		}
	}
	if prev != "" {
		if stop, _, err := ed.prompt(ctx, prev, "hi nonce=last"); err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("after the campaign the session hit last does not answer: %s %v", stop, err)
		}
		ledger.prompts["last"] = prev
	}
	ed.c.Close()
	daemon.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, daemon, 30*time.Second); code != 0 {
		t.Fatalf("the last daemon exited %d", code)
	}
	n := checkCrashStore(t, dbPath, ledger, true)
	slices.Sort(started)
	t.Logf("kills by phase %v: %v; event not reached (action ended first): %d; sessions %d, turns %d (interrupted %d), items %d, "+
		"prompts acknowledged %d, tool calls acknowledged %d/%d; restart to listening p50 %v max %v",
		phaseNames, perPhase, early, len(ledger.sessions), n.turns, n.interrupted, n.items,
		len(ledger.prompts), len(ledger.running), len(ledger.finished), started[len(started)/2], started[len(started)-1])
	if n.interrupted == 0 {
		t.Errorf("no kill interrupted a turn: the campaign aimed at nothing")
	}
}

// crashAction picks what kill k interrupts: it returns the session it
// concerns (set once known), the action, a wait for the event the kill is
// aimed at (false when the action ended first), and the phase (a warm-up
// when there is no session yet).
func crashAction(ctx context.Context, k int, phase crashPhase, rng *rand.Rand, ed *campaignEditor, events *simEvents,
	ledger *crashLedger, roots []string, prev acp.SessionId) (*acp.SessionId, func() error, func(done <-chan struct{}) bool, crashPhase) {
	target := new(acp.SessionId)
	received, answered := events.mark()
	var ids []acp.SessionId
	for id := range ledger.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)

	if phase == phaseWarmup || len(ids) == 0 {
		phase = phaseWarmup
		// A new session's warm-up, or the one a session/load starts (every
		// session but prev is closed in a new daemon).
		var closed []acp.SessionId
		for _, id := range ids {
			if id != prev {
				closed = append(closed, id)
			}
		}
		// The warm-up comes even after the action has answered: it runs in
		// the background.
		warm := func(<-chan struct{}) bool { return events.waitReceived(ctx, nil, received, 1, isWarmup) }
		if len(closed) == 0 || rng.IntN(2) == 0 {
			cwd := roots[rng.IntN(len(roots))]
			return target, func() error {
				id, err := ed.newSession(ctx, cwd, "full-auto")
				if id != "" {
					*target = id
					ledger.sessions[id] = cwd // answered: it must survive
				}
				return err
			}, warm, phase
		}
		*target = closed[rng.IntN(len(closed))]
		return target, func() error { return ed.load(ctx, *target, ledger.sessions[*target]) }, warm, phase
	}

	*target = ids[rng.IntN(len(ids))]
	cwd := ledger.sessions[*target]
	nonce := fmt.Sprintf("k%d", k)
	var text string
	switch phase {
	case phaseStream:
		text = "talk sim:tokens=300 nonce=" + nonce
	case phaseTool, phaseCommit:
		if rng.IntN(2) == 0 {
			text = shellPrompt(3, "echo nonce="+nonce+"; ls", "")
		} else {
			text = `sim:calls=3 sim:tool=list_dir sim:args={"path":"."} nonce=` + nonce
		}
	}
	ed.mu.Lock()
	chunks, running := ed.chunks[*target], len(ed.running)
	ed.mu.Unlock()
	action := func() error {
		if *target != prev {
			if err := ed.load(ctx, *target, cwd); err != nil {
				return err
			}
		}
		if err := ed.setMode(ctx, *target, "full-auto"); err != nil {
			return err
		}
		stop, _, err := ed.prompt(ctx, *target, text)
		if err == nil && stop == acp.StopReasonEndTurn {
			ledger.prompts[nonce] = *target
		}
		return err
	}
	var event func(done <-chan struct{}) bool
	switch phase {
	case phaseStream:
		n := 1 + rng.IntN(40)
		event = func(done <-chan struct{}) bool {
			return ed.wait(ctx, done, func() bool { return ed.chunks[*target] >= chunks+n })
		}
	case phaseTool:
		n := 1 + rng.IntN(3)
		event = func(done <-chan struct{}) bool {
			return ed.wait(ctx, done, func() bool { return len(ed.running) >= running+n })
		}
	case phaseCommit:
		n := 1 + rng.IntN(4) // the 4th is the text answer's
		// Not cut short when the prompt returns: the simulator may report
		// the answer a moment after the daemon has used it.
		event = func(<-chan struct{}) bool {
			return events.waitAnswered(ctx, nil, answered, n, func(r sim.Received) bool {
				return !isWarmup(r) && r.ResponseID != "" && r.Outcome == r.ResponseID
			})
		}
	}
	return target, action, event, phase
}

// crashDelay is the random time between the awaited event and the kill.
func crashDelay(phase crashPhase, rng *rand.Rand) time.Duration {
	switch phase {
	case phaseWarmup:
		return time.Duration(rng.IntN(20_000)) * time.Microsecond
	case phaseStream:
		return time.Duration(rng.IntN(10_000)) * time.Microsecond
	case phaseTool:
		return time.Duration(rng.IntN(60_000)) * time.Microsecond // the shell helper takes ~50 ms
	default:
		return time.Duration(rng.IntN(2_000)) * time.Microsecond
	}
}

type crashCounts struct{ turns, interrupted, items int }

var nonceRE = regexp.MustCompile(`nonce=(\w+)`)

// crashItem holds the fields of a stored item the checks read.
type crashItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	CallID  string `json:"call_id"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (it crashItem) text() string {
	var b strings.Builder
	for _, c := range it.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// checkCrashStore opens the database of a daemon that is not running and
// checks it against what the editors were acknowledged. final: the daemon
// stopped cleanly after opening every session, so every call is answered
// and no turn may be left running.
func checkCrashStore(t *testing.T, path string, l *crashLedger, final bool) crashCounts {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(path)
	if err != nil {
		t.Fatalf("open the store after a kill: %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("after a kill: %v", err)
	}
	var n crashCounts
	calls, outputs := map[string]int{}, map[string]int{}
	userNonces := map[string]store.Item{}
	for id := range l.sessions {
		if _, err := db.Session(ctx, string(id)); err != nil {
			t.Fatalf("session %s was answered to session/new and is gone: %v", id, err)
		}
		items, err := db.Items().List(ctx, string(id))
		if err != nil {
			t.Fatal(err)
		}
		turns, err := db.Items().Turns(ctx, string(id))
		if err != nil {
			t.Fatal(err)
		}
		n.items += len(items)
		n.turns += len(turns)
		status := map[int64]store.TurnStatus{}
		running := 0
		for _, tr := range turns {
			status[tr.ID] = tr.Status
			switch tr.Status {
			case store.TurnInterrupted:
				n.interrupted++
			case store.TurnRunning:
				running++
			}
		}
		if running > 1 || (final && running > 0) {
			t.Errorf("session %s has %d turns running", id, running)
		}
		seenInTurn := map[int64][][]byte{}
		for i, it := range items {
			if it.Seq != int64(i+1) {
				t.Fatalf("session %s: item %d has seq %d", id, i, it.Seq)
			}
			for _, other := range seenInTurn[it.TurnID] {
				if it.TurnID != 0 && bytes.Equal(other, it.Data) {
					t.Errorf("session %s: item %d stored twice in turn %d: %s", id, it.Seq, it.TurnID, it.Data)
				}
			}
			seenInTurn[it.TurnID] = append(seenInTurn[it.TurnID], it.Data)
			var ci crashItem
			if err := json.Unmarshal(it.Data, &ci); err != nil {
				t.Fatalf("session %s item %d: %v", id, it.Seq, err)
			}
			switch {
			case ci.Type == "function_call":
				calls[ci.CallID]++
			case ci.Type == "function_call_output":
				if calls[ci.CallID] == 0 {
					t.Errorf("session %s: output of %s before (or without) its call", id, ci.CallID)
				}
				outputs[ci.CallID]++
			case ci.Role == "user":
				if m := nonceRE.FindStringSubmatch(ci.text()); m != nil {
					if _, dup := userNonces[m[1]]; dup {
						t.Errorf("the prompt nonce=%s is stored twice", m[1])
					}
					userNonces[m[1]] = it
				}
			}
		}
		// Every prompt answered end_turn is there, completed, with its answer.
		for nonce, sid := range l.prompts {
			if sid != id {
				continue
			}
			u, ok := userNonces[nonce]
			if !ok {
				t.Errorf("session %s: the prompt nonce=%s was answered end_turn and is not stored", id, nonce)
				continue
			}
			if status[u.TurnID] != store.TurnCompleted {
				t.Errorf("session %s: the turn of nonce=%s, answered end_turn, is %s", id, nonce, status[u.TurnID])
			}
			answered := false
			for _, it := range items {
				var ci crashItem
				json.Unmarshal(it.Data, &ci)
				if it.TurnID == u.TurnID && ci.Type == "message" && ci.Role == "assistant" {
					answered = true
				}
			}
			if !answered {
				t.Errorf("session %s: the turn of nonce=%s, answered end_turn, has no answer stored", id, nonce)
			}
		}
	}
	for id, c := range calls {
		if c > 1 {
			t.Errorf("function call %s stored %d times", id, c)
		}
		if outputs[id] > 1 {
			t.Errorf("function call %s has %d outputs", id, outputs[id])
		}
		if final && outputs[id] != 1 {
			t.Errorf("after every session was opened, function call %s has %d outputs", id, outputs[id])
		}
	}
	for id := range l.running {
		if calls[id] != 1 {
			t.Errorf("tool call %s was reported in progress and its function_call is stored %d times", id, calls[id])
		}
	}
	for id := range l.finished {
		if outputs[id] != 1 {
			t.Errorf("tool call %s was reported finished and has %d outputs stored", id, outputs[id])
		}
	}
	return n
}
