//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// TestServeHidesSecrets starts the real `hearth serve` with OPENAI_API_KEY
// and a database URL with a password in its environment, and checks that
// /proc/PID/environ no longer shows them (the key reached the daemon through
// --key-fd: the model API, which requires it, answers), and that a shell
// call through the daemon, in full-auto, finds neither them (in the daemon's,
// its helper's or its own environ) nor can read hearth's database or env
// file.
func TestServeHidesSecrets(t *testing.T) {
	e := newE2E(t)
	home := t.TempDir()
	envFile := filepath.Join(home, ".config", "hearth", "env")
	if err := os.MkdirAll(filepath.Dir(envFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(envFile, []byte("HEARTH_REASONING_SUMMARY=auto\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "HOME="+home, "DATABASE_URL=postgres://u:e2e-db-pass@db/app")
	cmd := e.serve()
	pid := cmd.Process.Pid

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"OPENAI_API_KEY", "sk-e2e", "e2e-db-pass"} {
		if strings.Contains(string(environ), leak) {
			t.Errorf("/proc/%d/environ of hearth serve shows %q", pid, leak)
		}
	}
	if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !strings.Contains(string(cmdline), "--key-fd=") {
		t.Errorf("hearth serve was not re-executed: cmdline %q", cmdline)
	}

	data := dataDir(e)
	// The command runs in its cell's pid namespace: the daemon is not even
	// in its /proc.
	command := fmt.Sprintf(`D=%d; test -e /proc/$D && echo daemon=visible || echo daemon=hidden; `, pid) +
		`echo hits=$(cat /proc/$D/environ /proc/$PPID/environ /proc/self/environ 2>/dev/null | tr '\0' '\n' | grep -c -e sk-e2e -e e2e-db-pass -e OPENAI_API_KEY); ` +
		`cat ` + filepath.Join(data, "hearth.db") + ` >/dev/null 2>&1 && echo db=readable || echo db=refused; ` +
		`cat ` + envFile + ` >/dev/null 2>&1 && echo envfile=readable || echo envfile=refused`
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's sim:args takes a JSON object without white space.
	prompt := "sim:calls=1 sim:tool=shell sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)

	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	a := newACP(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := a.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := a.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	if err := a.c.Call(ctx, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "full-auto"}, nil); err != nil {
		t.Fatal(err)
	}
	var r acp.PromptResponse
	if err := a.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &r); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for done := false; !done; {
		select {
		case c := <-a.text:
			text.WriteString(c)
		default:
			done = true
		}
	}
	out := text.String()
	for _, want := range []string{"daemon=hidden\n", "hits=0\n", "db=refused\n", "envfile=refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("the shell call's answer lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`sk-e2e|e2e-db-pass`).MatchString(out) {
		t.Errorf("the shell call printed a secret:\n%s", out)
	}
}

func TestSecretLooking(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"GITHUB_TOKEN", "x", true},
		{"MY_API_KEY", "x", true},
		{"DB_PASSWORD", "x", true},
		{"DATABASE_URL", "postgres://u:p@h/db", true},
		{"REDIS_URL", "redis://:p@h:6379", true},
		{"DATABASE_URL", "postgres://h/db", false},
		{"REPO", "https://github.com/a/b", false},
		{"MAILTO", "user@example.com", false},
		{"HTTPS_PROXY", "http://u:p@proxy:3128", false},
		{"PATH", "/usr/bin", false},
		{"HEARTH_MODEL", "gpt", false},
	} {
		if got := secretLooking(tt.name, tt.value); got != tt.want {
			t.Errorf("secretLooking(%s=%s) = %v", tt.name, tt.value, got)
		}
	}
}
