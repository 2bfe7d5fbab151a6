package main

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// kill -9 in the middle of a turn: the next daemon marks the turn
// interrupted, the half-streamed answer is absent from the store (never
// half-written), session/load replays what was committed, the session
// re-warms from the store before the next prompt, and that prompt chains
// on the re-warm.
func TestKill9MidTurn(t *testing.T) {
	e := newE2EWith(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 500}})
	daemon := e.serve()

	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make(chan struct{}, 1)
	c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) != nil || n.Update.AgentMessageChunk == nil {
			return
		}
		select {
		case chunk <- struct{}{}:
		default:
		}
	}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
	<-chunk // the answer is streaming
	daemon.Process.Signal(syscall.SIGKILL)
	// Gone, not only disconnected: its socket closes before the kernel has
	// finished with the process (and let go of its locks), which under load
	// can take seconds.
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
	// The replay: every update but the commands offered and the context's
	// usage (sent after load's answer, once the meter is restored).
	var mu sync.Mutex
	var replayed []acp.SessionUpdate
	c2 := rpc.NewClient(c2conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.AvailableCommandsUpdate == nil && n.Update.UsageUpdate == nil {
			mu.Lock()
			replayed = append(replayed, n.Update)
			mu.Unlock()
		}
	}})
	defer c2.Close()
	call(c2, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
	call(c2, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: e.root, McpServers: []acp.McpServer{}}, nil)
	mu.Lock()
	got := slices.Clone(replayed)
	mu.Unlock()
	if len(got) != 1 || got[0].UserMessageChunk == nil {
		t.Fatalf("replay after kill -9: %d updates; want the user's message only (no half answer)", len(got))
	}
	var ins rpc.InspectResult
	call(c2, rpc.MethodHearthInspect, rpc.InspectParams{SessionID: string(s.SessionId)}, &ins)
	if d := ins.Session; d == nil || len(d.Turns) != 1 || d.Turns[0].Status != "interrupted" || len(d.Items) != 3 { // the permissions, the environment, the user's message
		t.Fatalf("after kill -9: %+v", ins.Session)
	}

	var r acp.PromptResponse
	call(c2, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi again")}}, &r)
	if r.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	recs, err := e.sim.WaitReceived(ctx, before+2)
	if err != nil {
		t.Fatal(err)
	}
	rewarm, next := recs[before], recs[before+1]
	if rewarm.Generate == nil || *rewarm.Generate || len(rewarm.Input) != 4 || !strings.Contains(string(rewarm.Input[3]), "100000") { // the guidance, the permissions, the environment, the user's message
		t.Fatalf("first request after restart: %s; want a generate:false re-warm of the stored transcript", rewarm.Raw)
	}
	if next.PreviousResponseID != rewarm.ResponseID || len(next.Input) != 1 {
		t.Fatalf("the prompt after restart did not chain on the re-warm: %s", next.Raw)
	}
}
