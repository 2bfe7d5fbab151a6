package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// limitEditors lowers the per-editor limits for connections accepted from
// now on, until the test ends. Call it before startDaemon, so the daemon is
// closed before the limits are restored.
func limitEditors(t *testing.T, bytes int, timeout time.Duration) {
	oldBytes, oldTimeout := outboxMaxBytes, writeTimeout
	outboxMaxBytes, writeTimeout = bytes, timeout
	t.Cleanup(func() { outboxMaxBytes, writeTimeout = oldBytes, oldTimeout })
}

// stalledEditor connects an editor that reads nothing once the first
// notification reaches it, until the test ends.
func (td *testDaemon) stalledEditor(t *testing.T) *rpc.Client {
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(string, json.RawMessage) { <-gate }})
	// Cleanups run last-in first-out: the gate opens before Close waits
	// for the blocked reader.
	t.Cleanup(func() { c.Close() })
	t.Cleanup(func() { close(gate) })
	return c
}

// clientConns returns the daemon's editor connections by id.
func (td *testDaemon) clientConns() []*clientConn {
	td.d.mu.Lock()
	defer td.d.mu.Unlock()
	var out []*clientConn
	for c := range td.d.clients {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *clientConn) int { return a.id - b.id })
	return out
}

// waitTurnsDone waits until no turn runs on the daemon.
func (td *testDaemon) waitTurnsDone(t *testing.T, why string) {
	t.Helper()
	done := make(chan struct{})
	go func() { td.d.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: the session's turn was not released within a minute", why)
	}
}

// waitGone waits until c is disconnected.
func waitGone(t *testing.T, c *clientConn, why string) {
	t.Helper()
	select {
	case <-c.quit:
	case <-time.After(time.Minute):
		now, peak := c.out.queuedBytes()
		t.Fatalf("%s: client %d still connected (%d bytes queued, peak %d)", why, c.id, now, peak)
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An editor that stops reading during long answers holds no one hostage:
// once its turn ends on the daemon, another editor's prompt on the same
// session starts and its cancel works; what waits for the stalled editor
// stays within its byte bound, and it is disconnected when over it.
func TestStalledEditorHoldsNoOneHostage(t *testing.T) {
	const limit = 1 << 20
	// The byte bound is what is tested (the write timeout has its own test):
	// under load the answers below take seconds each, and a 30 s timeout
	// would disconnect the stalled editor first, for the other reason.
	limitEditors(t, limit, 10*time.Minute)
	td := startDaemon(t, sim.Options{}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	a := td.stalledEditor(t)
	if err := a.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := a.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	conns := td.clientConns()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2", len(conns))
	}
	stalled := conns[0]
	heapBefore := heapAlloc()

	// A's long answer: A reads none of it; B reads all of it.
	const words = 30000 // ~270 kB of text per answer
	go func() {
		a.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("talk sim:tokens=%d", words))}}, nil)
	}()
	last := fmt.Sprintf("tok%d", words-1)
	waitLong(t, b, "A's answer at B", func(ups []acp.SessionUpdate) bool { return strings.Contains(agentText(ups), last) })
	td.waitTurnsDone(t, "A stalled after its answer")

	// B prompts on the same session while A is still stalled: by the fourth
	// answer A's outbox is over its bound.
	for i := 0; i < 4; i++ {
		before := len(b.updates())
		start := time.Now()
		if stop := b.prompt(s.SessionId, fmt.Sprintf("again %d sim:tokens=%d", i, words)); stop != acp.StopReasonEndTurn {
			t.Fatalf("B's prompt %d: stop %q", i, stop)
		}
		if got := strings.Fields(agentText(b.updates()[before:])); len(got) != words {
			t.Fatalf("B's prompt %d: %d words, want %d", i, len(got), words)
		}
		now, peak := stalled.out.queuedBytes()
		t.Logf("B's answer %d in %v; stalled editor: %d bytes queued (peak %d)", i, time.Since(start), now, peak)
	}

	// B's cancel reaches B's own turn.
	before := len(b.updates())
	done := make(chan error, 1)
	var r acp.PromptResponse
	go func() {
		done <- b.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock("endless sim:tokens=5000000")}}, &r)
	}()
	waitLong(t, b, "B's endless answer to start", func(ups []acp.SessionUpdate) bool { return agentText(ups[before:]) != "" })
	if err := b.c.Notify(ctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || r.StopReason != acp.StopReasonCancelled {
			t.Fatalf("B's cancelled prompt: %v, stop %q", err, r.StopReason)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("B's cancel did not end B's turn")
	}

	waitGone(t, stalled, "the stalled editor, over its byte bound")
	_, peak := stalled.out.queuedBytes()
	if peak > limit+64<<10 {
		t.Errorf("the stalled editor's outbox peaked at %d bytes; bound %d", peak, limit)
	}
	heapAfter := heapAlloc()
	t.Logf("heap before A's prompt %.1f MB, after 6 long answers %.1f MB; stalled outbox peak %d bytes",
		float64(heapBefore)/1e6, float64(heapAfter)/1e6, peak)
	// B is still served.
	if stop := b.prompt(s.SessionId, "still there?"); stop != acp.StopReasonEndTurn {
		t.Errorf("B after A's disconnect: stop %q", stop)
	}
	td.d.Close() // the logs are read once nothing writes them
	if logs := td.logs.String(); !strings.Contains(logs, fmt.Sprintf("client=%d", stalled.id)) ||
		!strings.Contains(logs, "not reading its updates") {
		t.Errorf("no log of the disconnect of client %d", stalled.id)
	}
}

// An editor that reads nothing for the write timeout is disconnected and
// the daemon logs it with the client's id; the session stays usable.
func TestStalledEditorDisconnectedAfterWriteTimeout(t *testing.T) {
	limitEditors(t, 8<<20, 300*time.Millisecond)
	td := startDaemon(t, sim.Options{}, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := td.stalledEditor(t)
	if err := a.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := a.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	stalled := td.clientConns()[0]
	go a.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
		Prompt: []acp.ContentBlock{acp.TextBlock("talk sim:tokens=100000")}}, nil) // ~900 kB: more than the socket holds
	waitGone(t, stalled, "an editor that reads nothing")
	td.waitTurnsDone(t, "after the stalled editor left")
	b := td.connect()
	b.initialize()
	if stop := b.prompt(s.SessionId, "hello"); stop != acp.StopReasonEndTurn {
		t.Errorf("prompt after the disconnect: stop %q", stop)
	}
	td.d.Close() // the logs are read once nothing writes them
	if logs := td.logs.String(); !strings.Contains(logs, fmt.Sprintf("client=%d", stalled.id)) || !strings.Contains(logs, "disconnecting it") {
		t.Errorf("no log of the disconnect of client %d", stalled.id)
	}
}

// waitLong is editor.waitFor with room for a loaded machine under -race.
func waitLong(t *testing.T, e *editor, what string, pred func([]acp.SessionUpdate) bool) {
	t.Helper()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for !pred(e.updates()) {
		select {
		case <-e.signal:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; have %d updates", what, len(e.updates()))
		}
	}
}

// An editor that sends requests and never reads their replies is
// disconnected after the write timeout, as one that does not read its
// updates is: replies have the same deadline.
func TestEditorNotReadingRepliesDisconnected(t *testing.T) {
	limitEditors(t, 8<<20, 300*time.Millisecond)
	td := startDaemon(t, sim.Options{}, "")
	id, _ := seedSession(t, td.d.db, td.root, 500) // its inspection is a reply of megabytes
	e := td.dialRaw(t)                             // initialized; from here on it reads nothing
	c := td.clientConns()[0]
	for i := 0; i < 20; i++ {
		e.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": rpc.MethodHearthInspect,
			"params": rpc.InspectParams{SessionID: string(id), Limit: 500}})
		if _, err := e.conn.Write(append(b, '\n')); err != nil {
			break // the daemon hung up on it: what this test waits for
		}
	}
	waitGone(t, c, "an editor that reads no replies")
}
