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

// One model delta larger than the outbox's bound reaches an editor that
// reads, behind a backlog of text it has not read yet: it is queued, not
// taken for a stalled editor, and sent as pieces no editor's frame limit
// refuses, cut between characters; the editor gets the whole answer in
// order. A second editor on the session, reading all along, is served the
// same. (At scale: a bound of 1 MiB and a delta of 1.5 MiB stand for the
// 8 MiB and the 9 MiB of a fault proxy's delta.)
func TestDeltaLargerThanOutbox(t *testing.T) {
	const bound = 1 << 20
	limitEditors(t, bound, 30*time.Second)
	td := startDaemon(t, sim.Options{}, "")
	// The model echoes the prompt a word per delta: 640 KiB of words (more
	// than the socket holds, so some wait in the outbox), then one word of
	// 1.5 MiB of two-byte characters.
	var prompt strings.Builder
	for i := 0; prompt.Len() < 640<<10; i++ {
		fmt.Fprintf(&prompt, "%s ", strings.Repeat(string(rune('a'+i%26)), 1000))
	}
	prompt.WriteString(strings.Repeat("é", bound*3/4))
	want := "You said: " + prompt.String()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gate := make(chan struct{})
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	a := newTextEditor(t, td, gate)
	defer release() // before a's Close waits for its blocked reader
	if err := a.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := a.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	b := newTextEditor(t, td, nil)
	if err := b.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.c.Call(ctx, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: td.root, McpServers: []acp.McpServer{}}, nil); err != nil {
		t.Fatal(err)
	}

	bFull := b.full(len(want))
	done := make(chan error, 1)
	go func() {
		done <- a.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock(prompt.String())}}, nil)
	}()
	// A reads nothing until B has the whole answer: by then the daemon has
	// queued all of it for A too.
	select {
	case <-bFull:
	case <-b.c.Done():
		t.Errorf("the editor reading all along was disconnected: %v", b.c.Err())
	case <-time.After(time.Minute):
		t.Errorf("B received %d of %d bytes", b.received(), len(want))
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("A's prompt: %v (A disconnected?)", err)
	}
	for name, e := range map[string]*textEditor{"A": a, "B": b} {
		text, largest := e.result()
		if text != want {
			t.Errorf("%s received %d bytes of text, want the %d of the answer in order", name, len(text), len(want))
		}
		if largest > textPiece+1024 {
			t.Errorf("%s received a notification of %d bytes: the text was not cut into pieces", name, largest)
		}
	}
}

// textEditor is an editor that keeps the agent text it receives (none of
// it before gate, when set, is closed), the size of the largest
// notification, and says when it has a given number of bytes.
type textEditor struct {
	c       *rpc.Client
	mu      sync.Mutex
	text    strings.Builder
	largest int
	want    int
	reached chan struct{}
}

func newTextEditor(t *testing.T, td *testDaemon, gate chan struct{}) *textEditor {
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	e := &textEditor{reached: make(chan struct{})}
	e.c = rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		if gate != nil {
			<-gate
		}
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) != nil || n.Update.AgentMessageChunk == nil || n.Update.AgentMessageChunk.Content.Text == nil {
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.largest = max(e.largest, len(params))
		e.text.WriteString(n.Update.AgentMessageChunk.Content.Text.Text)
		if e.want > 0 && e.text.Len() >= e.want {
			close(e.reached)
			e.want = 0
		}
	}})
	t.Cleanup(func() { e.c.Close() })
	return e
}

// full returns a channel closed once n bytes of text have arrived.
func (e *textEditor) full(n int) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.want = n
	return e.reached
}

func (e *textEditor) received() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.text.Len()
}

func (e *textEditor) result() (string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.text.String(), e.largest
}

// A piece of text ends before a character starts, never inside one.
func TestPieceEnd(t *testing.T) {
	for _, tc := range []struct {
		text string
		max  int
		want int
	}{
		{"abc", 8, 3},
		{"abcdef", 4, 4},
		{"aé", 2, 1},                   // é is two bytes: cut before it
		{"a€b", 3, 1},                  // € is three
		{"aa𝄞b", 4, 2},                 // 𝄞 is four
		{"\xff\xfe\xfd\xfc\xfb", 3, 3}, // not UTF-8: cut at max
	} {
		if got := pieceEnd([]byte(tc.text), tc.max); got != tc.want {
			t.Errorf("pieceEnd(%q, %d) = %d, want %d", tc.text, tc.max, got, tc.want)
		}
	}
}
