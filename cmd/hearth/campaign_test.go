package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// The campaigns (campaign_*_test.go) drive the real `hearth serve` with
// editors that record what the daemon told them, and wait on those events
// and on the simulator's, never on time.

// campaignEditor is one editor connection of a campaign. It lives from
// dialEditor until its Client closes (the test's cleanup, or the daemon's
// death). It records, per session, what the daemon acknowledged: tool calls
// that reached in_progress (their function_call is committed) and then a
// final status (their output is committed), message chunks, and the time of
// the first update after a prompt was sent.
type campaignEditor struct {
	c *rpc.Client

	mu       sync.Mutex // guards the fields below
	changed  chan struct{}
	chunks   map[acp.SessionId]int
	running  map[string]bool // tool call id → reached in_progress
	finished map[string]bool // tool call id → completed or failed after in_progress
	sentAt   map[acp.SessionId]time.Time
	firstAt  map[acp.SessionId]time.Time // first update after sentAt
}

func dialEditor(t *testing.T, sock string) *campaignEditor {
	t.Helper()
	ed := &campaignEditor{
		changed:  make(chan struct{}),
		chunks:   map[acp.SessionId]int{},
		running:  map[string]bool{},
		finished: map[string]bool{},
		sentAt:   map[acp.SessionId]time.Time{},
		firstAt:  map[acp.SessionId]time.Time{},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rpc.DialOptions(ctx, sock, rpc.ClientOptions{OnNotify: ed.notify})
	if err != nil {
		t.Fatal(err)
	}
	ed.c = c
	t.Cleanup(func() { c.Close() })
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return ed
}

func (ed *campaignEditor) notify(method string, params json.RawMessage) {
	if method != rpc.MethodSessionUpdate {
		return
	}
	at := time.Now()
	var n acp.SessionNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if _, ok := ed.sentAt[n.SessionId]; ok {
		delete(ed.sentAt, n.SessionId)
		ed.firstAt[n.SessionId] = at
	}
	switch u := n.Update; {
	case u.AgentMessageChunk != nil:
		ed.chunks[n.SessionId]++
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		id := string(u.ToolCallUpdate.ToolCallId)
		switch *u.ToolCallUpdate.Status {
		case acp.ToolCallStatusInProgress:
			ed.running[id] = true
		case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
			// A call closed by a retry never reached in_progress: its
			// output was never written.
			if ed.running[id] {
				ed.finished[id] = true
			}
		}
	}
	close(ed.changed)
	ed.changed = make(chan struct{})
}

// wait waits until cond (called under the editor's lock) holds, or done is
// closed, or ctx ends; it reports whether cond held.
func (ed *campaignEditor) wait(ctx context.Context, done <-chan struct{}, cond func() bool) bool {
	for {
		ed.mu.Lock()
		ok, changed := cond(), ed.changed
		ed.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// newSession opens a session in cwd in the given mode.
func (ed *campaignEditor) newSession(ctx context.Context, cwd, mode string) (acp.SessionId, error) {
	var s acp.NewSessionResponse
	if err := ed.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}, &s); err != nil {
		return "", fmt.Errorf("session/new: %w", err)
	}
	if mode != "" {
		// The session exists once session/new answered, whatever becomes
		// of its mode (a kill may land first).
		if err := ed.setMode(ctx, s.SessionId, mode); err != nil {
			return s.SessionId, err
		}
	}
	return s.SessionId, nil
}

func (ed *campaignEditor) setMode(ctx context.Context, id acp.SessionId, mode string) error {
	if err := ed.c.Call(ctx, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(mode)}, nil); err != nil {
		return fmt.Errorf("session/set_mode: %w", err)
	}
	return nil
}

func (ed *campaignEditor) load(ctx context.Context, id acp.SessionId, cwd string) error {
	if err := ed.c.Call(ctx, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}}, nil); err != nil {
		return fmt.Errorf("session/load %s: %w", id, err)
	}
	return nil
}

// prompt runs one turn and returns its stop reason; firstUpdate is the time
// from sending it to the first session/update for the session (0 if none came).
func (ed *campaignEditor) prompt(ctx context.Context, id acp.SessionId, text string) (stop acp.StopReason, firstUpdate time.Duration, err error) {
	ed.mu.Lock()
	sent := time.Now()
	ed.sentAt[id] = sent
	delete(ed.firstAt, id)
	ed.mu.Unlock()
	var r acp.PromptResponse
	err = ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
	ed.mu.Lock()
	if at, ok := ed.firstAt[id]; ok {
		firstUpdate = at.Sub(sent)
	}
	delete(ed.sentAt, id)
	ed.mu.Unlock()
	return r.StopReason, firstUpdate, err
}

// simEvents records the simulator's requests as they arrive and as they are
// answered (sim.Options.OnReceived, OnAnswered), so that a campaign can wait
// for the next one that matches. It lives as long as its simulator.
type simEvents struct {
	mu       sync.Mutex
	changed  chan struct{}
	received []sim.Received
	answered []sim.Received
}

func newSimEvents(opts *sim.Options) *simEvents {
	s := &simEvents{changed: make(chan struct{})}
	opts.OnReceived = func(r sim.Received) { s.add(&s.received, r) }
	opts.OnAnswered = func(r sim.Received) { s.add(&s.answered, r) }
	return s
}

func (s *simEvents) add(list *[]sim.Received, r sim.Received) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// mark is where the next waits start: the numbers of requests received and
// answered so far.
func (s *simEvents) mark() (received, answered int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received), len(s.answered)
}

// waitReceived waits for n requests received after mark from that match,
// until done is closed or ctx ends; it reports whether they came.
func (s *simEvents) waitReceived(ctx context.Context, done <-chan struct{}, from, n int, match func(sim.Received) bool) bool {
	return s.wait(ctx, done, func() []sim.Received { return s.received[from:] }, n, match)
}

// waitAnswered is waitReceived for answered requests.
func (s *simEvents) waitAnswered(ctx context.Context, done <-chan struct{}, from, n int, match func(sim.Received) bool) bool {
	return s.wait(ctx, done, func() []sim.Received { return s.answered[from:] }, n, match)
}

func (s *simEvents) wait(ctx context.Context, done <-chan struct{}, list func() []sim.Received, n int, match func(sim.Received) bool) bool {
	for {
		s.mu.Lock()
		found := 0
		for _, r := range list() {
			if match(r) {
				found++
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if found >= n {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// mkWorkspace makes a workspace directory with a file in it.
func mkWorkspace(t *testing.T, root string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from "+filepath.Base(root)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// isWarmup reports whether r is a warm-up (generate: false).
func isWarmup(r sim.Received) bool { return r.Generate != nil && !*r.Generate }

// shellPrompt is a prompt that makes the simulated model call the shell
// tool calls times with command (sim:args takes JSON without white space).
func shellPrompt(calls int, command, tail string) string {
	b, _ := json.Marshal(map[string]string{"command": command})
	return fmt.Sprintf("sim:calls=%d sim:tool=shell sim:args=%s %s", calls, strings.ReplaceAll(string(b), " ", `\u0020`), tail)
}
