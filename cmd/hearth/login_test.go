package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// hearth runs `hearth ARGS` with env added and stdin from a pipe, and
// waits (bounded) for it to exit.
func (e *e2eEnv) hearth(t *testing.T, env []string, stdin string, args ...string) askResult {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append([]string(nil), e.env...), env...)
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, 60*time.Second)
	return askResult{code, stdout.String(), stderr.String()}
}

// status is the running daemon's status.
func (e *e2eEnv) status(t *testing.T) rpc.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, e.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var st rpc.Status
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func without(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// hearth login checks the key with the model API's model list, stores a
// good one in the env file (0600, other lines kept) and a running daemon
// takes it at once; a refused key stores nothing. hearth logout removes it,
// and `hearth acp login` (how an editor runs the login) is hearth login.
func TestLoginAndLogout(t *testing.T) {
	e := newE2E(t) // the simulator takes sk-e2e
	home := t.TempDir()
	envFile := filepath.Join(home, ".config", "hearth", "env")
	os.MkdirAll(filepath.Dir(envFile), 0o700)
	os.WriteFile(envFile, []byte("# mine\nHEARTH_MODEL=sim-model\n"), 0o644)
	e.env = append(without(e.env, "OPENAI_API_KEY"), "HOME="+home)
	e.serve()
	if st := e.status(t); st.APIKey != rpc.MaskSecret("") {
		t.Fatalf("the daemon started with a key: %s", st.APIKey)
	}
	stored := func() string {
		b, _ := os.ReadFile(envFile)
		return string(b)
	}

	r := e.hearth(t, nil, "sk-wrong\n", "login")
	if r.code != 1 || !strings.Contains(r.stderr, "refused the key (HTTP 401") || !strings.Contains(r.stderr, "nothing was stored") {
		t.Fatalf("a wrong key: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(stored(), "OPENAI_API_KEY") {
		t.Fatalf("a refused key was stored:\n%s", stored())
	}
	if r := e.hearth(t, nil, "\n\n", "login"); r.code != 2 {
		t.Errorf("no key: exit %d, want 2; %s", r.code, r.stderr)
	}

	r = e.hearth(t, nil, "\n  sk-e2e  \n", "login")
	if r.code != 0 || !strings.Contains(r.stdout, "stored in "+envFile) || !strings.Contains(r.stdout, "uses it now") {
		t.Fatalf("login: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := stored(); got != "# mine\nHEARTH_MODEL=sim-model\nOPENAI_API_KEY=sk-e2e\n" {
		t.Errorf("env file:\n%s", got)
	}
	if fi, err := os.Stat(envFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("env file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if st := e.status(t); st.APIKey != rpc.MaskSecret("sk-e2e") {
		t.Fatalf("the running daemon's key after login: %s", st.APIKey)
	}
	if a := e.hearth(t, nil, "", "ask", "hello after login"); a.code != 0 || !strings.Contains(a.stdout, "hello after login") {
		t.Fatalf("ask after login: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}

	r = e.hearth(t, nil, "", "logout")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed the key from "+envFile) || !strings.Contains(r.stdout, "has no API key now") {
		t.Fatalf("logout: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := stored(); got != "# mine\nHEARTH_MODEL=sim-model\n" {
		t.Errorf("env file after logout:\n%s", got)
	}
	if st := e.status(t); st.APIKey != rpc.MaskSecret("") {
		t.Errorf("the running daemon's key after logout: %s", st.APIKey)
	}

	if r := e.hearth(t, nil, "sk-e2e\n", "acp", "login"); r.code != 0 || !strings.Contains(stored(), "OPENAI_API_KEY=sk-e2e") {
		t.Fatalf("hearth acp login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// On a terminal, hearth login asks for the key and does not show it as it
// is typed.
func TestLoginOnTerminalHidesTheKey(t *testing.T) {
	e := newE2E(t)
	home := t.TempDir()
	e.env = append(without(e.env, "OPENAI_API_KEY"), "HOME="+home)
	screen, code := e.onTerminal(t, "OpenAI API key", "sk-e2e", "login")
	if code != 0 || !strings.Contains(screen, "The key works") {
		t.Fatalf("exit %d; terminal:\n%s", code, screen)
	}
	if strings.Contains(screen, "sk-e2e") {
		t.Errorf("the key was shown on the terminal:\n%s", screen)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".config", "hearth", "env")); !strings.Contains(string(b), "OPENAI_API_KEY=sk-e2e") {
		t.Errorf("env file:\n%s", b)
	}
}
