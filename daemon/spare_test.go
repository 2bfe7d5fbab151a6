package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// startDaemonWithSpare is startDaemon with spare sessions on, as they are
// by default outside tests.
func startDaemonWithSpare(t *testing.T) *testDaemon {
	spareInTests = false
	defer func() { spareInTests = true }()
	return startDaemon(t, sim.Options{}, "")
}

// waitSpare waits until td's workspace has a warm spare and returns its id.
func (td *testDaemon) waitSpare(t *testing.T) string {
	t.Helper()
	for {
		td.d.mu.Lock()
		var sp *spareSession
		for _, w := range td.d.workspaces {
			sp = w.spare
		}
		td.d.mu.Unlock()
		if sp != nil {
			done, wait := sp.s.conv.WarmupDone()
			if done != nil {
				if err := wait(); err != nil {
					t.Fatalf("spare warm-up: %v", err)
				}
				return sp.s.id
			}
		}
		// Each spare's warm-up is one request: wait for the next.
		td.waitRequests(len(td.sim.Received()) + 1)
	}
}

// In a workspace the daemon holds, session/new hands out the spare, warm
// already: the new session's first request chains on the spare's warm-up,
// and no warm-up of its own is sent. The spare is replaced, never listed,
// and its row is deleted with the daemon's next start when left over.
func TestNewSessionTakesWarmSpare(t *testing.T) {
	td := startDaemonWithSpare(t)
	ed := td.connect()
	ed.initialize()
	first := ed.newSession(td.root) // opens the workspace; its spare is made meanwhile
	spare := td.waitSpare(t)
	if string(first) == spare {
		t.Fatal("the first session is the spare")
	}
	var list acp.ListSessionsResponse
	ed.must(rpc.MethodSessionList, acp.ListSessionsRequest{}, &list)
	for _, s := range list.Sessions {
		if string(s.SessionId) == spare {
			t.Errorf("the spare %s is listed", spare)
		}
	}

	second := ed.newSession(td.root)
	if string(second) != spare {
		t.Fatalf("session/new gave %s, want the spare %s", second, spare)
	}
	ed.prompt(second, "hello")
	var own []sim.Received
	for _, r := range td.sim.Received() {
		if r.PromptCacheKey == spare {
			own = append(own, r)
		}
	}
	if len(own) != 2 || own[0].Generate == nil || *own[0].Generate || own[1].PreviousResponseID != own[0].ResponseID {
		t.Fatalf("the taken spare's requests: %d; want its warm-up then the prompt chained on it", len(own))
	}
	// In the client's own clock (the simulator stamps an answer after its
	// write returns, which a fast client can beat): the prompt's request
	// was sent after the warm-up's answer had been read.
	reqs, err := td.d.db.Requests().List(context.Background(), spare)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Kind != store.KindWarmup || reqs[0].Finished.IsZero() || reqs[1].Sent.Before(reqs[0].Finished) {
		t.Fatalf("the prompt went out before the spare's warm-up was answered: %+v", reqs)
	}
	next := td.waitSpare(t)
	if next == spare || next == string(first) {
		t.Fatalf("the spare was not replaced: %s", next)
	}

	// A daemon that stops leaves its spare; the next deletes it.
	td.d.Close()
	td.restart()
	if _, err := td.d.db.Session(context.Background(), next); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the previous daemon's spare %s survived its restart: %v", next, err)
	}
}

// BenchmarkFirstPrompt measures a new session's first prompt in a
// workspace the daemon holds: from the prompt's send to its request's
// arrival at the server, and whether a warm-up of its own went first, with
// and without spares, against a server with a cost per request.
func BenchmarkFirstPrompt(b *testing.B) {
	for _, spare := range []bool{true, false} {
		name := "spare=off"
		if spare {
			name = "spare=on"
		}
		b.Run(name, func(b *testing.B) {
			t := &testing.T{}
			spareInTests = !spare
			// A server that takes 30 ms per request, 2 ms per KiB of input.
			td := startDaemon(t, sim.Options{Cost: sim.Cost{PerRequest: 30 * time.Millisecond, PerInputKB: 2 * time.Millisecond}}, "")
			spareInTests = true
			defer td.d.Close()
			ed := td.connect()
			ed.initialize()
			ed.newSession(td.root)
			var wait time.Duration
			ownWarmups := 0
			for i := 0; i < b.N; i++ {
				if spare {
					td.waitSpare(t)
				}
				id := ed.newSession(td.root)
				start := time.Now()
				ed.prompt(id, "hello")
				for _, r := range td.sim.Received() {
					if r.PromptCacheKey != string(id) {
						continue
					}
					if r.Generate != nil && !*r.Generate && r.At.After(start.Add(-time.Millisecond)) {
						ownWarmups++
					}
					if r.Generate == nil {
						wait += r.At.Sub(start)
					}
				}
			}
			b.ReportMetric(float64(wait.Microseconds())/float64(b.N), "µs-prompt-to-request")
			b.ReportMetric(float64(ownWarmups)/float64(b.N), "warmups-after-new")
		})
	}
}

// A spare works where the last session/new was opened: one made at the
// root does not go to a session/new in a subdirectory (its environment and
// AGENTS.md files are another directory's), and the next is made there,
// so the next session/new in that directory takes it.
// On a cold workspace the session the user holds is warmed first: its
// warm-up is the first request on the wire, before the spare's, and a prompt
// sent at once chains on it.
func TestColdWorkspaceWarmsTheUsersSessionFirst(t *testing.T) {
	td := startDaemonWithSpare(t)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	spare := td.waitSpare(t)
	recs := td.sim.Received()
	if len(recs) < 3 || recs[0].PromptCacheKey != string(id) || recs[0].Generate == nil || *recs[0].Generate {
		t.Fatalf("the first request is not the user's session's warm-up: %+v", firstKeys(recs))
	}
	var own []sim.Received
	for i, r := range recs {
		switch r.PromptCacheKey {
		case string(id):
			own = append(own, r)
		case spare:
			if len(own) == 0 {
				t.Errorf("the spare's request %d went out before the session's warm-up", i)
			}
		}
	}
	if len(own) != 2 || own[1].PreviousResponseID != own[0].ResponseID {
		t.Fatalf("the session's requests: %+v; want its warm-up, then the prompt chained on it", firstKeys(own))
	}
}

// firstKeys names requests by their session (prompt_cache_key) and kind.
func firstKeys(recs []sim.Received) []string {
	var out []string
	for _, r := range recs {
		kind := "create"
		if r.Generate != nil && !*r.Generate {
			kind = "warm-up"
		}
		out = append(out, r.PromptCacheKey+" "+kind)
	}
	return out
}

func TestSpareFollowsWorkingDirectory(t *testing.T) {
	td := startDaemonWithSpare(t)
	os.Mkdir(filepath.Join(td.root, ".git"), 0o755)
	sub := filepath.Join(td.root, "src")
	ed := td.connect()
	ed.initialize()
	ed.newSession(td.root)
	atRoot := td.waitSpare(t)
	first := ed.newSession(sub)
	if string(first) == atRoot {
		t.Fatal("the root's spare went to a session in src")
	}
	inSub := td.waitSpare(t)
	td.d.mu.Lock()
	cwd := td.d.workspaces[td.root].spare.cwd
	td.d.mu.Unlock()
	if cwd != sub {
		t.Fatalf("the next spare works in %s, want %s", cwd, sub)
	}
	second := ed.newSession(sub)
	if string(second) != inSub {
		t.Fatalf("session/new in src gave %s, want the spare %s", second, inSub)
	}
	ed.prompt(second, "list")
	if got := agentText(ed.updates()); !strings.Contains(got, "main.go") {
		t.Errorf("list in the spare taken in src answered %q", got)
	}
	var own []sim.Received
	for _, r := range td.sim.Received() {
		if r.PromptCacheKey == inSub {
			own = append(own, r)
		}
	}
	if len(own) < 2 || own[1].PreviousResponseID != own[0].ResponseID || len(contextTexts(own[1].Input)) != 0 {
		t.Errorf("the taken spare's first prompt did not chain on its warm-up with nothing to add: %d requests", len(own))
	}
}
