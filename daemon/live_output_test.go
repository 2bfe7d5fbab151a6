package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// usages are the usage_updates an editor received, as [used, size].
func usages(ups []acp.SessionUpdate) [][2]int {
	var out [][2]int
	for _, u := range ups {
		if u.UsageUpdate != nil {
			out = append(out, [2]int{u.UsageUpdate.Used, u.UsageUpdate.Size})
		}
	}
	return out
}

// Every response of a turn is followed by a usage_update to every attached
// editor: the tokens in the context (the response's input and output, as
// the request log has them) of the window (HEARTH_CONTEXT_WINDOW here). A
// new model's window is told at once; an editor that resumes the session
// is told where it stands.
func TestUsageUpdateAfterEachResponse(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.ContextWindow = 40_000 })
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	b := td.connect()
	b.initialize()
	b.resume(id, td.root)
	a.prompt(id, `look sim:calls=2 sim:tool=read_file sim:args={"path":"a.txt"}`)
	in, err := td.d.Inspect(context.Background(), rpc.InspectParams{SessionID: string(id)})
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]int
	for _, r := range in.Session.Requests {
		if r.Kind != "warmup" {
			want = append(want, [2]int{int(r.Tokens.Input + r.Tokens.Output), 40_000})
		}
	}
	if len(want) != 3 {
		t.Fatalf("%d requests in the turn, want 3: %+v", len(want), in.Session.Requests)
	}
	if got := usages(a.updates()); !equalUsage(got, want) {
		t.Fatalf("usage updates %v, want %v", got, want)
	}
	// B also hears the usage when it resumes, if a response measured it by
	// then (the warm-up's, or the turn's first): then the turn's three
	// follow it, never one older after a newer.
	b.waitFor("B's usage updates", func(ups []acp.SessionUpdate) bool {
		got := usages(ups)
		return len(got) >= 3 && len(got) <= 4 && equalUsage(got[len(got)-3:], want)
	})

	// The window here is the user's: another model keeps it, but the
	// editors hear the choice's usage again.
	a.forget()
	a.setOption(id, optionModel, "gpt-4o")
	a.waitFor("the usage after a model change", func(ups []acp.SessionUpdate) bool { return equalUsage(usages(ups), want[2:]) })

	c := td.connect()
	c.initialize()
	c.resume(id, td.root)
	c.waitFor("the usage after resume", func(ups []acp.SessionUpdate) bool { return equalUsage(usages(ups), want[2:]) })
}

func equalUsage(a, b [][2]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A model no profile row matches, with no HEARTH_CONTEXT_WINDOW: every
// response of the session is still followed by a usage_update, of the
// tokens its usage counted against session.FallbackWindow (or the tokens,
// once they are more). The fallback is for display only: the session grows
// past the threshold it would give (0.8 of it) without compacting, until
// the server refuses a request for its length; then it compacts and the
// turn is answered.
func TestUsageUpdateForAModelWithoutAProfile(t *testing.T) {
	const serverWindow = 120_000 // tokens; past 0.8 × FallbackWindow
	if session.ProfileOf("sim-model").Family != "unknown" {
		t.Fatal("sim-model has a profile")
	}
	td := startDaemon(t, sim.Options{Windows: map[string]int{"sim-model": serverWindow}}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, `look sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`)
	for i := 0; i < 12; i++ {
		// 6,000 words of about 8 bytes: some 12,000 tokens an answer.
		if stop := ed.prompt(id, fmt.Sprintf("question %d sim:tokens=6000", i)); stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt %d: stop reason %q", i, stop)
		}
	}
	ctx := context.Background()
	comps, err := td.d.db.Branches().Compactions(ctx, string(id))
	if err != nil || len(comps) == 0 {
		t.Fatalf("compactions %v (%v); want the session compacted when the server refused it", comps, err)
	}
	reqs, err := td.d.db.Requests().List(ctx, string(id))
	if err != nil {
		t.Fatal(err)
	}
	// The summary's requests (sent after the refusal, until the compaction
	// is stored) are the compaction's own: no usage is shown for them.
	var want [][2]int
	biggest, refused := 0, time.Time{}
	for _, r := range reqs {
		used := int(r.Usage.Input + r.Usage.Output)
		if strings.Contains(r.Error, "context_length_exceeded") && refused.IsZero() {
			refused = r.Sent
			if biggest <= session.FallbackWindow*8/10 {
				t.Errorf("the server refused the session at %d tokens, before it passed the fallback window's threshold", biggest)
			}
		}
		summary := !refused.IsZero() && r.Sent.After(refused) && r.Sent.Before(comps[0].Created)
		if r.Kind == store.KindWarmup || used == 0 || summary {
			continue
		}
		if refused.IsZero() {
			biggest = max(biggest, used)
		}
		want = append(want, [2]int{used, max(session.FallbackWindow, used)})
	}
	if refused.IsZero() {
		t.Fatalf("no request was refused for its length: %+v", reqs)
	}
	if comps[0].Reason != session.CompactRefused {
		t.Errorf("the first compaction's reason is %q, want the server's refusal", comps[0].Reason)
	}
	if got := usages(ed.updates()); !equalUsage(got, want) {
		t.Fatalf("usage updates %v\nwant %v", got, want)
	}
}

// After a restart, an editor that loads or resumes a session hears how
// full its context is right after the answer, as the last response left
// it: the reopened session's meter comes from the stored requests, not
// from its next turn.
func TestUsageAfterARestart(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, `look sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`)
	before := usages(a.updates())
	if len(before) != 2 {
		t.Fatalf("usage updates %v, want one a response", before)
	}
	want := before[len(before)-1]

	td.d.Close()
	td.restart()
	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	b.waitFor("the usage after load", func(ups []acp.SessionUpdate) bool { return equalUsage(usages(ups), [][2]int{want}) })
	c := td.connect()
	c.initialize()
	c.resume(id, td.root)
	c.waitFor("the usage after resume", func(ups []acp.SessionUpdate) bool { return equalUsage(usages(ups), [][2]int{want}) })
}

// A running command's output reaches every attached editor while it runs:
// the command prints, then waits on a FIFO the test holds; its first line
// is shown in the tool call before the test lets it go on. Every progress
// update comes before the call's completed one, which carries the whole
// output.
func TestLiveCommandOutput(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	fifo := filepath.Join(td.root, "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	b := td.connect()
	b.initialize()
	b.resume(id, td.root)

	done := make(chan acp.StopReason, 1)
	go func() {
		done <- a.prompt(id, `run sim:calls=1 sim:tool=shell sim:args={"command":"echo\u0020first;read\u0020x\u003cgo-on;echo\u0020second"}`)
	}()
	for name, e := range map[string]*editor{"A": a, "B": b} {
		e.waitFor(name+"'s live output", func(ups []acp.SessionUpdate) bool {
			return strings.Contains(toolOutputs(ups), "first\n")
		})
	}
	if completed(a.updates()) {
		t.Fatal("the call completed before the test let the command go on")
	}
	if err := os.WriteFile(fifo, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	for name, e := range map[string]*editor{"A": a, "B": b} {
		e.waitFor(name+"'s completed call", func(ups []acp.SessionUpdate) bool { return completed(ups) })
		var after bool
		for _, u := range e.updates() {
			tu := u.ToolCallUpdate
			if tu == nil {
				continue
			}
			if after {
				t.Errorf("%s: an update after the completed one: %+v", name, tu)
			}
			if tu.Status != nil && *tu.Status == acp.ToolCallStatusCompleted {
				after = true
				if text := toolOutputs([]acp.SessionUpdate{u}); !strings.Contains(text, "first\nsecond\n") {
					t.Errorf("%s: the completed call shows %q", name, text)
				}
			}
		}
	}
}

// completed says whether a tool call completed.
func completed(ups []acp.SessionUpdate) bool {
	for _, u := range ups {
		if tu := u.ToolCallUpdate; tu != nil && tu.Status != nil && *tu.Status == acp.ToolCallStatusCompleted {
			return true
		}
	}
	return false
}
