package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// An editor that stops reading while a fast model streams is not
// disconnected: its waiting text chunks merge, and it receives the whole
// answer, in order, once it reads again.
func TestSlowEditorGetsMergedChunks(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	const words = 50000
	gate := make(chan struct{})
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	var chunks int
	var text strings.Builder
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		<-gate // stalled until the model has finished streaming
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.AgentMessageChunk != nil {
			chunks++
			text.WriteString(n.Update.AgentMessageChunk.Content.Text.Text)
		}
	}})
	// Deferred calls run last-in first-out: whatever fails, the gate opens
	// before Close waits for the reader blocked on it.
	defer c.Close()
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var r acp.PromptResponse
	go func() {
		done <- c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("talk sim:tokens=%d", words))}}, &r)
	}()
	// The warm-up and the answer: the model is streaming to a stalled editor.
	if recs, err := td.sim.WaitReceived(ctx, 2); err != nil {
		t.Fatalf("waiting for 2 model requests: %v (have %d)", err, len(recs))
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("prompt: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("no answer to the prompt within 60 s")
	}
	fields := strings.Fields(text.String())
	if len(fields) != words || fields[0] != "tok0" || fields[words-1] != fmt.Sprintf("tok%d", words-1) {
		t.Fatalf("received %d words (first %q), want %d in order", len(fields), fields[:min(3, len(fields))], words)
	}
	if chunks >= words {
		t.Errorf("%d chunk notifications for %d deltas: nothing merged", chunks, words)
	}
	t.Logf("%d deltas arrived as %d notifications", words, chunks)
}
