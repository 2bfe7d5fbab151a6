package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// kill -9 between a steer's acknowledgement and the successor that would
// commit it: the input hearth accepted is not lost. The next daemon
// commits it in the interrupted turn, session/load replays it once, and it
// reaches the model once (the re-warm of the stored transcript), never
// again after.
func TestKill9BetweenSteerAndSuccessor(t *testing.T) {
	accepted := make(chan struct{}, 1)
	release := make(chan struct{})
	e := newE2EWith(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 500}, OnSteerAccepted: func(string) {
		select {
		case accepted <- struct{}{}:
		default:
		}
		<-release // the response waits here: no successor while the daemon lives
	}})
	t.Cleanup(func() { close(release) }) // before the simulator's Close
	daemon := e.serve()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make(chan struct{}, 1)
	c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(_ string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.AgentMessageChunk != nil {
			select {
			case chunk <- struct{}{}:
			default:
			}
		}
	}})
	defer c.Close()
	call := func(c *rpc.Client, method string, params, result any) {
		t.Helper()
		if err := c.Call(ctx, method, params, result); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	call(c, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
	var s acp.NewSessionResponse
	call(c, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s)
	done := make(chan error, 1)
	go func() {
		done <- c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock("talk sim:tokens=100000")}}, nil)
	}()
	select {
	case <-chunk: // the answer is streaming
	case <-ctx.Done():
		t.Fatal("no answer streamed")
	}
	var out struct {
		Outcome string `json:"outcome"`
	}
	call(c, rpc.MethodSessionSteering, map[string]any{"sessionId": s.SessionId,
		"prompt": []acp.ContentBlock{acp.TextBlock("say banana")}}, &out)
	if out.Outcome != "injected" {
		t.Fatalf("steering outcome %q", out.Outcome)
	}
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("the simulator never accepted the steer")
	}
	daemon.Process.Signal(syscall.SIGKILL)
	waitExit(t, daemon, 30*time.Second)
	if err := <-done; err == nil {
		t.Fatal("the prompt succeeded although its daemon was killed")
	}
	before := len(e.sim.Received())

	e.serve()
	c2conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var users []string
	c2 := rpc.NewClient(c2conn, rpc.ClientOptions{OnNotify: func(_ string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.UserMessageChunk != nil && n.Update.UserMessageChunk.Content.Text != nil {
			mu.Lock()
			users = append(users, n.Update.UserMessageChunk.Content.Text.Text)
			mu.Unlock()
		}
	}})
	defer c2.Close()
	call(c2, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
	call(c2, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: e.root, McpServers: []acp.McpServer{}}, nil)
	mu.Lock()
	got := strings.Join(users, "|")
	mu.Unlock()
	if got != "talk sim:tokens=100000|say banana" {
		t.Fatalf("replayed user messages after kill -9: %q; want the prompt, then the steering once", got)
	}

	var r acp.PromptResponse
	call(c2, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi again")}}, &r)
	if r.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	// The prompt has its answer: its requests are recorded (the one held
	// before the kill never is answered, so WaitReceived would not do).
	recs := e.sim.Received()
	if len(recs) != before+2 {
		t.Fatalf("%d requests after restart; want a re-warm and the prompt", len(recs)-before)
	}
	seen := 0
	for _, rec := range recs[before:] {
		seen += strings.Count(string(rec.Raw), "say banana")
	}
	if rewarm := recs[before]; rewarm.Generate == nil || *rewarm.Generate || !strings.Contains(string(rewarm.Raw), "say banana") || seen != 1 {
		t.Fatalf("after restart the steering reached the model %d time(s); want once, in the re-warm: %s", seen, rewarm.Raw)
	}
	if next := recs[before+1]; next.PreviousResponseID != recs[before].ResponseID {
		t.Fatalf("the prompt after restart did not chain on the re-warm: %s", next.Raw)
	}
}
