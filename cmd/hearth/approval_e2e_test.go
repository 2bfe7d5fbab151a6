//go:build linux

package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// TestReadOnlyCommandWritesNothing: through the real `hearth serve` and its
// sandbox, `git status` runs without a permission request and with no write
// at all, in ask mode and in full-auto (where it runs as a read): the
// program the repository's own configuration makes git run (core.fsmonitor)
// cannot create a file in the workspace. The same git run by a command line
// hearth does not read as read-only (`env git status`) in full-auto, in the
// mode's sandbox, can: the difference is the read-only cell, not git.
func TestReadOnlyCommandWritesNothing(t *testing.T) {
	if st := sandbox.Status(); strings.HasPrefix(st, "not sandboxed") {
		t.Skip(st)
	}
	e := newE2E(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = e.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	git("add", "hello.txt")
	git("commit", "-qm", "one")
	pwned := filepath.Join(e.root, "pwned")
	git("config", "core.fsmonitor", "touch "+pwned+"; false")
	e.serve()

	var asked atomic.Int32
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClient(conn, rpc.ClientOptions{OnCall: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		asked.Add(1)
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("reject_once")}, nil
	}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	run := func(command string) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"command": command})
		prompt := "sim:calls=1 sim:tool=shell sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)
		var r acp.PromptResponse
		if err := c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &r); err != nil {
			t.Fatal(err)
		}
	}
	run("git status")
	if asked.Load() != 0 {
		t.Fatalf("git status asked %d times in ask mode", asked.Load())
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a read-only command's git ran a program that wrote the workspace")
	}
	if err := c.Call(ctx, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "full-auto"}, nil); err != nil {
		t.Fatal(err)
	}
	run("git status")
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("in full-auto a read-only command's git ran a program that wrote the workspace")
	}
	run("env git status")
	if _, err := os.Stat(pwned); err != nil {
		t.Errorf("in full-auto's sandbox the fsmonitor did not run, so the test proves nothing: %v", err)
	}
}

// TestEscalatedCommandWritesOutside: through the real `hearth serve`, a
// command allowed once in ask mode cannot write beside the workspace; the
// same command asking to escalate, allowed, can, and was asked about with
// its justification.
func TestEscalatedCommandWritesOutside(t *testing.T) {
	if st := sandbox.Status(); strings.HasPrefix(st, "not sandboxed") {
		t.Skip(st)
	}
	outside, err := os.MkdirTemp("/var/tmp", "hearth-esc-") // not under /tmp: commands see a /tmp of their own
	if err != nil {
		t.Skip("no /var/tmp here:", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	e := newE2E(t)
	e.serve()
	var mu sync.Mutex
	var shown []string // each permission request's text
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClient(conn, rpc.ClientOptions{OnCall: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var req acp.RequestPermissionRequest
		json.Unmarshal(params, &req)
		var text []string
		for _, b := range req.ToolCall.Content {
			if b.Content != nil && b.Content.Content.Text != nil {
				text = append(text, b.Content.Content.Text.Text)
			}
		}
		mu.Lock()
		shown = append(shown, strings.Join(text, "|"))
		mu.Unlock()
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("allow_once")}, nil
	}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	run := func(args map[string]string) {
		t.Helper()
		b, _ := json.Marshal(args)
		prompt := "sim:calls=1 sim:tool=shell sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)
		var r acp.PromptResponse
		if err := c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &r); err != nil {
			t.Fatal(err)
		}
	}
	confined, escaped := filepath.Join(outside, "confined"), filepath.Join(outside, "escalated")
	run(map[string]string{"command": "touch " + confined})
	if _, err := os.Stat(confined); err == nil {
		t.Error("a command allowed once wrote outside the workspace")
	}
	const why = "Allow writing the fixture outside the workspace?"
	run(map[string]string{"command": "touch " + escaped, "sandbox_permissions": "require_escalated", "justification": why})
	if _, err := os.Stat(escaped); err != nil {
		t.Errorf("the escalated command did not write outside the workspace: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 2 || !strings.Contains(shown[1], why) {
		t.Errorf("the permission requests showed %q", shown)
	}
}
