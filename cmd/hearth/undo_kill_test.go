package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// kill -9 in the middle of an undo: every file is whole, either as the
// turn left it or as it was before (never half, never gone), no pre-image
// is lost, and the next daemon's undo finishes the job, naming no conflict.
// What the undo told the model is kept in the store: a daemon restarted
// before the next prompt still sends it, once.
func TestKill9MidUndo(t *testing.T) {
	const files = 600
	e := newE2E(t)
	before := func(i int) string { return fmt.Sprintf("before %d\n", i) }
	after := func(i int) string { return fmt.Sprintf("after %d\n", i) }
	path := func(i int) string { return filepath.Join(e.root, "f", fmt.Sprintf("%04d.txt", i)) }
	os.MkdirAll(filepath.Join(e.root, "f"), 0o755)
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for i := 0; i < files; i++ {
		os.WriteFile(path(i), []byte(before(i)), 0o644)
		fmt.Fprintf(&patch, "*** Update File: f/%04d.txt\n@@\n-%s+%s", i, before(i), after(i))
	}
	patch.WriteString("*** End Patch\n")
	steps, _ := json.Marshal([]any{[]any{"apply_patch", map[string]string{"input": patch.String()}}})
	prompt := "go sim:steps=" + strings.ReplaceAll(string(steps), " ", `\u0020`)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dial := func() *rpc.Client {
		conn, err := net.Dial("unix", e.sock)
		if err != nil {
			t.Fatal(err)
		}
		c := rpc.NewClient(conn, rpc.ClientOptions{})
		t.Cleanup(func() { c.Close() })
		if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	call := func(c *rpc.Client, method string, params, result any) {
		t.Helper()
		if err := c.Call(ctx, method, params, result); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}

	daemon := e.serve()
	c := dial()
	var s acp.NewSessionResponse
	call(c, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s)
	call(c, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "full-auto"}, nil)
	call(c, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, nil)
	for i := 0; i < files; i++ {
		if b, _ := os.ReadFile(path(i)); string(b) != after(i) {
			t.Fatalf("the turn left f/%04d.txt as %q", i, b)
		}
	}

	undone := make(chan error, 1)
	go func() {
		undone <- c.Call(ctx, rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(s.SessionId)}, nil)
	}()
	// The undo puts the last change back first: once the last file is
	// back, the daemon is killed with the rest on the way.
	for {
		if b, _ := os.ReadFile(path(files - 1)); string(b) == before(files-1) {
			break
		}
		select {
		case err := <-undone:
			t.Fatalf("the undo ended before the kill: %v", err)
		case <-ctx.Done():
			t.Fatal("the undo never began")
		default:
		}
	}
	daemon.Process.Signal(syscall.SIGKILL)
	waitExit(t, daemon, 30*time.Second)
	back := 0
	for i := 0; i < files; i++ {
		switch b, err := os.ReadFile(path(i)); {
		case string(b) == before(i):
			back++
		case string(b) != after(i):
			t.Errorf("after the kill f/%04d.txt is %q, %v: neither as before the undo nor as after it", i, b, err)
		}
	}
	t.Logf("the kill came with %d of %d files put back", back, files)

	daemon = e.serve()
	c = dial()
	var res rpc.UndoResult
	call(c, rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(s.SessionId)}, &res)
	if !res.Undone || len(res.Restored) != files || len(res.Conflicts) != 0 || len(res.Failed) != 0 {
		t.Errorf("the undo after the kill: undone %v, %d restored, conflicts %v, failed %v", res.Undone, len(res.Restored), res.Conflicts, res.Failed)
	}
	for i := 0; i < files; i++ {
		if b, _ := os.ReadFile(path(i)); string(b) != before(i) {
			t.Fatalf("after the second undo f/%04d.txt is %q", i, b)
		}
	}

	// The model hears of the undo after another restart, once.
	c.Close()
	daemon.Process.Signal(syscall.SIGKILL)
	waitExit(t, daemon, 30*time.Second)
	e.serve()
	c = dial()
	n := len(e.sim.Received())
	call(c, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: e.root, McpServers: []acp.McpServer{}}, nil)
	call(c, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("what now")}}, nil)
	call(c, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("and then")}}, nil)
	recs := e.sim.Received()[n:]
	told := 0
	for _, r := range recs {
		if r.Generate != nil && !*r.Generate {
			continue // the re-warm of the stored transcript
		}
		in, _ := json.Marshal(r.Input)
		told += strings.Count(string(in), "The user undid (/undo)")
	}
	if told != 1 {
		t.Errorf("the undo's note went to the model %d times after the restart, want once", told)
	}
}
