package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// waitExit waits for cmd with a deadline and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("the daemon did not exit within %v", within)
		return -1
	}
}

// SIGTERM while a turn runs: the daemon gives it the drain time, then
// interrupts it, stores it as interrupted, and exits 0.
func TestSIGTERMDuringTurn(t *testing.T) {
	e := newE2EWith(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 500}})
	cmd := e.serve("--drain", "200ms")
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make(chan struct{}, 1)
	c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(_ string, params json.RawMessage) {
		var n acp.SessionNotification // the answer's first chunk: the turn runs
		if json.Unmarshal(params, &n) != nil || n.Update.AgentMessageChunk == nil {
			return
		}
		select {
		case chunk <- struct{}{}:
		default:
		}
	}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
	var s acp.NewSessionResponse
	if err := c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	go c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("talk sim:tokens=100000")}}, nil)
	<-chunk
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	db, err := store.Open(filepath.Join(dataDir(e), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	turns, err := db.Items().Turns(context.Background(), string(s.SessionId))
	if err != nil || len(turns) != 1 || turns[0].Status != store.TurnInterrupted || turns[0].Ended.IsZero() {
		t.Fatalf("turns after SIGTERM: %+v %v", turns, err)
	}
	log, _ := os.ReadFile(filepath.Join(dataDir(e), "hearth.log"))
	if !strings.Contains(string(log), "shutting down") || !strings.Contains(string(log), "stopped") {
		t.Errorf("hearth.log lacks the shutdown: %s", log)
	}
}

// A daemon started with --idle-exit leaves once no client is connected and
// no turn runs for that long.
func TestIdleExit(t *testing.T) {
	e := newE2E(t)
	cmd := exec.Command(binary, "serve", "--idle-exit", "300ms")
	cmd.Env = e.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if _, err := os.Stat(e.sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind: %v", err)
	}
}

func dataDir(e *e2eEnv) string {
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "HEARTH_DATA_DIR="); ok {
			return v
		}
	}
	return ""
}

// SIGHUP re-reads the environment file: a new model applies to the
// requests after it.
func TestSIGHUPReloads(t *testing.T) {
	e := newE2E(t)
	home := t.TempDir()
	envFile := filepath.Join(home, ".config", "hearth", "env")
	os.MkdirAll(filepath.Dir(envFile), 0o700)
	os.WriteFile(envFile, []byte("HEARTH_MODEL=model-one\n"), 0o600)
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "HEARTH_MODEL=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "HOME="+home)
	cmd := e.serve()
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	a := newACP(t, conn)
	a.turn(t, e.root, "hi")
	os.WriteFile(envFile, []byte("HEARTH_MODEL=model-two\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	e.waitLine("configuration reloaded")
	a.turn(t, e.root, "again")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, err := e.sim.WaitReceived(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if recs[1].Model != "model-one" || recs[3].Model != "model-two" {
		t.Fatalf("models: %q then %q", recs[1].Model, recs[3].Model)
	}
}

// SIGHUP into simulator mode and out of it: once the environment file no
// longer sets a key or a base URL, serve starts the built-in simulator and
// hands its URL to the daemon (status says simulator, and the next turn is
// answered without reaching the model API); once it sets them again, turns
// reach that API again.
func TestSIGHUPIntoSimulatorMode(t *testing.T) {
	e := newE2E(t)
	home := t.TempDir()
	envFile := filepath.Join(home, ".config", "hearth", "env")
	os.MkdirAll(filepath.Dir(envFile), 0o700)
	var api string
	var env []string
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "OPENAI_BASE_URL="); ok {
			api = "OPENAI_BASE_URL=" + v + "\nOPENAI_API_KEY=sk-e2e\n"
			continue
		}
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "HOME="+home)
	reload := func(cmd *exec.Cmd, contents string) {
		t.Helper()
		if err := os.WriteFile(envFile, []byte(contents), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(syscall.SIGHUP)
		e.waitLine("configuration reloaded")
	}
	status := func() rpc.Status {
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

	os.WriteFile(envFile, []byte(api), 0o600)
	cmd := e.serve()
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	a := newACP(t, conn)
	a.turn(t, e.root, "one")
	if st := status(); st.Simulator {
		t.Fatalf("started with a key and a base URL, status says simulator: %+v", st)
	}

	reload(cmd, "")
	before := len(e.sim.Received())
	if text := a.turn(t, e.root, "two"); !strings.Contains(text, "two") {
		t.Errorf("answer in simulator mode: %q", text)
	}
	if n := len(e.sim.Received()); n != before {
		t.Errorf("in simulator mode the model API got %d more requests", n-before)
	}
	if st := status(); !st.Simulator || st.BaseURL == "" || strings.Contains(api, st.BaseURL) {
		t.Errorf("after the reload into simulator mode: simulator %v, base %q", st.Simulator, st.BaseURL)
	}

	reload(cmd, api)
	a.turn(t, e.root, "three")
	if n := len(e.sim.Received()); n == before {
		t.Error("after the reload out of simulator mode the model API got no request")
	}
	if st := status(); st.Simulator {
		t.Errorf("after the reload out of simulator mode, status says simulator: %+v", st)
	}
}

// `hearth stop` stops a daemon that is not a service (started by serve or
// acp): it exits 0 and so does the daemon; a second stop says nothing runs
// and exits 0 too (stopping what is stopped is done).
func TestStopWithoutService(t *testing.T) {
	e := newE2E(t)
	cmd := e.serve()
	home := t.TempDir() // no unit installed here
	stop := func() (int, string) {
		c := exec.Command(binary, "stop")
		c.Env = append(append([]string(nil), e.env...), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := stop(); code != 0 || !strings.Contains(out, "stopped the daemon") {
		t.Fatalf("hearth stop: exit %d: %s", code, out)
	}
	if code := waitExit(t, cmd, 20*time.Second); code != 0 {
		t.Fatalf("the daemon exited %d", code)
	}
	if code, out := stop(); code != 0 || !strings.Contains(out, "not running") {
		t.Errorf("second stop: exit %d: %s", code, out)
	}
}

// `hearth acp` whose daemon cannot start (a corrupt database) says why at
// once, with the daemon's own error, instead of waiting 15 s for a socket.
func TestACPSaysWhyTheDaemonCouldNotStart(t *testing.T) {
	e := newE2E(t)
	if err := os.MkdirAll(dataDir(e), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir(e), "hearth.db"), []byte("this is not a database, just text long enough to be read as a header......."), 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(binary, "acp")
	c.Env = e.env
	// The editor's initialize gets the reason as its answer; stderr has it
	// too.
	c.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	took := time.Since(start)
	if err == nil {
		t.Fatalf("hearth acp succeeded without a daemon: %s", stderr.String())
	}
	if out := stderr.String(); !strings.Contains(out, "could not start") || !strings.Contains(out, "database") {
		t.Errorf("hearth acp said: %s", out)
	}
	var resp struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &resp); err != nil || resp.ID != 1 || resp.Error.Code != -32603 ||
		!strings.Contains(resp.Error.Message, "could not start") || !strings.Contains(resp.Error.Message, "database") {
		t.Errorf("the editor's initialize was answered %q (%v); want an error saying why", stdout.String(), err)
	}
	if took > 10*time.Second {
		t.Errorf("hearth acp took %s to report the failure", took)
	}
}
