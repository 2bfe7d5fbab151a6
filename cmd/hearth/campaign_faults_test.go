package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

var (
	faultPrompts = flag.Int("fault-prompts", 40, "prompts sent by TestFaultCampaign (the long run: 500)")
	faultSeed    = flag.Uint64("fault-seed", 1, "random seed of TestFaultCampaign")
)

// faultReasons says how a turn that a fault made fail must explain itself:
// the JSON-RPC code and words of the message. A kind absent here is one a
// turn must always survive (a dropped cache, a response cut short by max
// tokens). A close after the answer fails only the siblings still streaming
// on that socket.
var faultReasons = map[sim.FaultKind]struct {
	code jsonrpc2.Code
	says *regexp.Regexp
}{
	sim.FaultCloseMidResponse:   {rpc.CodeModelAPI, regexp.MustCompile(`connection to the model API lost`)},
	sim.FaultCloseAfterResponse: {rpc.CodeModelAPI, regexp.MustCompile(`connection to the model API lost`)},
	sim.FaultBinaryFrame:        {rpc.CodeModelAPI, regexp.MustCompile(`connection to the model API lost`)},
	sim.FaultMalformedFrame:     {rpc.CodeModelAPI, regexp.MustCompile(`connection to the model API lost`)},
	sim.FaultRateLimit:          {rpc.CodeModelAPI, regexp.MustCompile(`rate_limit_exceeded`)},
	sim.FaultResponseFailed:     {rpc.CodeModelAPI, regexp.MustCompile(`response resp_\w+ failed`)},
	sim.FaultConnectionLimit:    {rpc.CodeModelAPI, regexp.MustCompile(`websocket_connection_limit_reached`)},
	sim.FaultSilence:            {rpc.CodeModelAPI, regexp.MustCompile(`model API silent`)},
	sim.FaultServerError:        {rpc.CodeModelAPI, regexp.MustCompile(`server_error`)},
	sim.FaultInsufficientQuota:  {rpc.CodeModelAPI, regexp.MustCompile(`no quota left`)},
	sim.FaultContextLength:      {rpc.CodeModelAPI, regexp.MustCompile(`context window`)},
	sim.FaultInvalidAPIKey:      {rpc.CodeAuthRequired, regexp.MustCompile(`rejected the API key`)},
}

// dropsConnection reports whether kind ends the WebSocket the request is on.
func dropsConnection(kind sim.FaultKind) bool {
	switch kind {
	case sim.FaultCloseMidResponse, sim.FaultCloseAfterResponse, sim.FaultBinaryFrame, sim.FaultMalformedFrame, sim.FaultConnectionLimit:
		return true
	}
	return false
}

// finalFault reports whether no retry can get past kind: a turn that meets it
// fails. (A context window exceeded is got past by a compaction, once.)
func finalFault(kind sim.FaultKind) bool {
	switch kind {
	case sim.FaultInsufficientQuota, sim.FaultInvalidAPIKey:
		return true
	}
	return false
}

// faultTurn is one prompt of the campaign and how it ended.
type faultTurn struct {
	session    acp.SessionId
	injected   sim.Fault
	sent, done time.Time
	stop       acp.StopReason
	err        error
}

// TestFaultCampaign sends prompts over several sessions (in two workspaces,
// from two editors) through the real `hearth serve`, injecting a random
// fault into about half of the turns' model requests — once, or persistently
// (as many times as hearth tries) — and checks that every turn ends within
// its deadline, either completed or failed with a reason that names a fault
// its own requests met (never an internal error, never a fault it did not
// meet); faults no retry can fix (quota, API key) always fail the turn with
// their reason, and a single context window exceeded is got past by a
// compaction; the store agrees with what the editors were
// told. -fault-prompts=500 is the long run (docs/RELIABILITY.md).
func TestFaultCampaign(t *testing.T) {
	e := newE2E(t)
	e.env = append(e.env, "HEARTH_FIRST_EVENT_TIMEOUT=1s", "HEARTH_IDLE_TIMEOUT=1s")
	daemon := e.serve()
	roots := []string{e.root, filepath.Join(filepath.Dir(e.root), "ws2")}
	mkWorkspace(t, roots[1])
	editors := []*campaignEditor{dialEditor(t, e.sock), dialEditor(t, e.sock)}
	const sessions = 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := make([]acp.SessionId, sessions)
	for i := range ids {
		id, err := editors[i%2].newSession(ctx, roots[i%2], "")
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	faults := []sim.Fault{
		{Kind: sim.FaultCloseMidResponse, CloseCode: 1011, AfterEvents: 4},
		{Kind: sim.FaultCloseMidResponse, CloseCode: sim.CloseAbrupt, AfterEvents: 2},
		{Kind: sim.FaultCloseAfterResponse},
		{Kind: sim.FaultBinaryFrame, AfterEvents: 3},
		{Kind: sim.FaultMalformedFrame, AfterEvents: 5},
		{Kind: sim.FaultRateLimit},
		{Kind: sim.FaultRateLimit, AfterEvents: 3},
		{Kind: sim.FaultResponseFailed},
		{Kind: sim.FaultResponseIncomplete},
		{Kind: sim.FaultDropCache},
		{Kind: sim.FaultConnectionLimit},
		{Kind: sim.FaultSilence, Delay: time.Minute},
		{Kind: sim.FaultServerError},
		{Kind: sim.FaultInsufficientQuota},
		{Kind: sim.FaultContextLength},
		{Kind: sim.FaultInvalidAPIKey},
	}
	prompts := []string{"hi", "please read hello.txt", "talk sim:tokens=60", `sim:calls=2 sim:tool=list_dir sim:args={"path":"."}`}

	rng := rand.New(rand.NewPCG(*faultSeed, 7))
	var rngMu sync.Mutex
	roll := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	var (
		mu    sync.Mutex
		turns []faultTurn
		wg    sync.WaitGroup
	)
	for i, id := range ids {
		n := *faultPrompts / sessions
		if i < *faultPrompts%sessions {
			n++
		}
		ed := editors[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				var f sim.Fault
				if roll(2) == 0 {
					f = faults[roll(len(faults))]
					if roll(6) == 0 {
						f.Count = 4 // as many attempts as hearth makes
					}
					f.Match = func(r sim.Received) bool { return r.PromptCacheKey == string(id) && !isWarmup(r) }
					e.sim.InjectFault(f)
				}
				// Each turn's deadline: far beyond what its retries may take
				// (four attempts, waits of at most a few seconds).
				tctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
				tr := faultTurn{session: id, injected: f, sent: time.Now()}
				tr.stop, _, tr.err = ed.prompt(tctx, id, fmt.Sprintf("%s (turn %d)", prompts[roll(len(prompts))], j))
				tr.done = time.Now()
				if tctx.Err() != nil {
					t.Errorf("session %s turn %d hangs: no answer within its deadline (fault %s)", id, j, f.Kind)
				}
				// What a turn leaves of a persistent fault hits the session's
				// next turn: the faults are checked by what requests met.
				cancel()
				mu.Lock()
				turns = append(turns, tr)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	recs := e.sim.Received()
	stops := map[acp.StopReason]int{}
	failures := map[string]int{}
	met := map[sim.FaultKind]int{}
	failedBy := map[acp.SessionId]int{}
	for _, tr := range turns {
		// The faults this turn's requests met, and those that ended a
		// WebSocket one of them was on (a lane's siblings lose the
		// connection too, and are retried).
		var kinds []sim.FaultKind
		conns := map[int]bool{}
		for _, r := range recs {
			if r.PromptCacheKey == string(tr.session) && !r.At.Before(tr.sent) && !r.At.After(tr.done) {
				conns[r.Conn] = true
				if r.Fault != sim.FaultNone {
					kinds = append(kinds, r.Fault)
					met[r.Fault]++
				}
			}
		}
		for _, r := range recs {
			if r.PromptCacheKey != string(tr.session) && r.Conn != 0 && conns[r.Conn] && dropsConnection(r.Fault) &&
				!r.At.Before(tr.sent) && !r.At.After(tr.done) {
				kinds = append(kinds, r.Fault)
			}
		}
		checkFaultTurn(t, tr, kinds)
		if tr.err != nil {
			failedBy[tr.session]++
			var we *jsonrpc2.Error
			errors.As(tr.err, &we)
			failures[fmt.Sprintf("%d", we.Code)]++
		} else {
			stops[tr.stop]++
		}
	}

	// The store agrees: every turn ended, and as many failed as the editors
	// were told.
	daemon.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, daemon, 30*time.Second); code != 0 {
		t.Fatalf("the daemon exited %d", code)
	}
	db, err := store.Open(filepath.Join(dataDir(e), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	total := 0
	for _, id := range ids {
		trs, err := db.Items().Turns(context.Background(), string(id))
		if err != nil {
			t.Fatal(err)
		}
		total += len(trs)
		failed := 0
		for _, tr := range trs {
			switch tr.Status {
			case store.TurnFailed:
				failed++
			case store.TurnCompleted:
			default:
				t.Errorf("session %s turn %d ended %s", id, tr.Seq, tr.Status)
			}
		}
		if failed != failedBy[id] {
			t.Errorf("session %s: %d turns failed in the store, the editor was told %d", id, failed, failedBy[id])
		}
	}
	if total != len(turns) {
		t.Errorf("%d turns stored, %d prompts sent", total, len(turns))
	}
	var metList []string
	for k, n := range met {
		metList = append(metList, fmt.Sprintf("%s=%d", k, n))
	}
	slices.Sort(metList)
	t.Logf("%d prompts over %d sessions: stops %v, failures by code %v; faults met by requests: %s",
		len(turns), sessions, stops, failures, strings.Join(metList, " "))
	if len(met) == 0 {
		t.Errorf("no request met a fault")
	}
}

// checkFaultTurn checks how one turn ended against the faults its requests met.
func checkFaultTurn(t *testing.T, tr faultTurn, kinds []sim.FaultKind) {
	t.Helper()
	name := fmt.Sprintf("session %s turn sent %s (injected %s ×%d, met %v)", tr.session, tr.sent.Format("15:04:05.000"), tr.injected.Kind, max(tr.injected.Count, 1), kinds)
	if tr.err == nil {
		for _, k := range kinds {
			if finalFault(k) {
				t.Errorf("%s: completed (%s) although a request met %s", name, tr.stop, k)
			}
		}
		if tr.stop == acp.StopReasonMaxTokens && !slices.Contains(kinds, sim.FaultResponseIncomplete) {
			t.Errorf("%s: stopped on max tokens with no response cut short", name)
		} else if tr.stop != acp.StopReasonEndTurn && tr.stop != acp.StopReasonMaxTokens {
			t.Errorf("%s: stopped %s", name, tr.stop)
		}
		return
	}
	var we *jsonrpc2.Error
	if !errors.As(tr.err, &we) {
		t.Errorf("%s: failed without a JSON-RPC error: %v", name, tr.err)
		return
	}
	if len(kinds) == 0 {
		t.Errorf("%s: failed although none of its requests met a fault: %v", name, tr.err)
		return
	}
	// The reason is one of the faults met: the one no retry got past.
	explained := false
	for _, k := range kinds {
		want, ok := faultReasons[k]
		explained = explained || ok && we.Code == want.code && want.says.MatchString(we.Message)
	}
	if !explained {
		t.Errorf("%s: failed with %d %q, which none of the faults it met explains", name, we.Code, we.Message)
	}
	if only := kinds[0]; !finalFault(only) && len(kinds) == 1 {
		t.Errorf("%s: a single %s failed the turn: the retry should have got past it: %v", name, only, tr.err)
	}
}
