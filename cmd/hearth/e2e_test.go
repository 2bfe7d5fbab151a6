package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/internal/testenv"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// binary is the hearth binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	// A test that runs a daemon in this process (ask --no-daemon, compact)
	// configures this binary as the sandbox helper: started as one, it is
	// that, never a second run of the tests (which would start helpers in
	// turn).
	if len(os.Args) > 1 && os.Args[1] == sandboxCommand {
		os.Exit(sandbox.Exec(os.Args[2:]))
	}
	dir, err := os.MkdirTemp("", "hearth-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "hearth")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build hearth: %v\n%s", err, out)
		os.Exit(1)
	}
	testenv.Main(func() int {
		defer os.RemoveAll(dir)
		return m.Run()
	})
}

// e2eEnv is a separate hearth process's environment: its own socket, data
// dir, and a simulator in this test process as its model API.
type e2eEnv struct {
	lines chan string // the serving daemon's stderr, line by line
	t     testing.TB
	sim   *sim.Server
	env   []string
	sock  string
	root  string
}

func newE2E(t testing.TB) *e2eEnv { return newE2EWith(t, sim.Options{}) }

func newE2EWith(t testing.TB, opts sim.Options) *e2eEnv {
	t.Helper()
	opts.APIKey = "sk-e2e"
	srv := sim.New(opts)
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir, err := os.MkdirTemp("", "he")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "ws")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from disk\n"), 0o644)
	sock := filepath.Join(dir, "s", "hearth.sock")
	env := append(os.Environ(), "HEARTH_SOCKET="+sock, "HEARTH_DATA_DIR="+filepath.Join(dir, "data"),
		"OPENAI_BASE_URL="+base, "OPENAI_API_KEY=sk-e2e", "HEARTH_MODEL=sim-model",
		// These tests follow one session's requests at the simulator; a
		// spare's warm-up would interleave (daemon/spare_test.go covers it).
		"HEARTH_SPARE=off")
	return &e2eEnv{t: t, sim: srv, env: env, sock: sock, root: root}
}

// serve starts `hearth serve` and waits for its socket to answer.
func (e *e2eEnv) serve(args ...string) *exec.Cmd {
	e.t.Helper()
	return e.serveBinary(binary, args...)
}

// serveBinary is serve with another build of hearth.
func (e *e2eEnv) serveBinary(bin string, args ...string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = e.env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ready := make(chan struct{})
	lines := make(chan string, 1024)
	e.lines = lines
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "hearth listening") {
				once = true
				close(ready)
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	e.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		var said []string
		for len(said) < 50 {
			select {
			case l := <-lines:
				said = append(said, l)
				continue
			default:
			}
			break
		}
		e.t.Fatalf("hearth serve did not report listening; it said:\n%s", strings.Join(said, "\n"))
	}
	return cmd
}

// waitLine waits for the daemon to print a line containing s.
func (e *e2eEnv) waitLine(s string) {
	e.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-e.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			e.t.Fatalf("the daemon never printed %q", s)
		}
	}
}

type acpClient struct {
	c    *rpc.Client
	text chan string
}

func newACP(t *testing.T, rw io.ReadWriteCloser) *acpClient {
	a := &acpClient{text: make(chan string, 1024)}
	a.c = rpc.NewClient(rw, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.AgentMessageChunk != nil && n.Update.AgentMessageChunk.Content.Text != nil {
			a.text <- n.Update.AgentMessageChunk.Content.Text.Text
		}
	}})
	t.Cleanup(func() { a.c.Close() })
	return a
}

// turn runs initialize → session/new → prompt and returns the streamed text.
func (a *acpClient) turn(t *testing.T, cwd, prompt string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var init acp.InitializeResponse
	if err := a.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &init); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := a.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}, &s); err != nil {
		t.Fatal(err)
	}
	var r acp.PromptResponse
	if err := a.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &r); err != nil {
		t.Fatal(err)
	}
	if r.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop reason %s", r.StopReason)
	}
	var b strings.Builder
	for {
		select {
		case s := <-a.text:
			b.WriteString(s)
		default:
			return b.String()
		}
	}
}

// The daemon as a separate process: an editor on its socket runs a tool
// loop; the model API sees one handshake, a warm-up, then only increments.
func TestServeProcess(t *testing.T) {
	e := newE2E(t)
	e.serve()
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	text := newACP(t, conn).turn(t, e.root, "please read hello.txt")
	if !strings.Contains(text, "hello from disk") {
		t.Fatalf("answer %q", text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, err := e.sim.WaitReceived(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if e.sim.Handshakes() != 1 || recs[0].Generate == nil || *recs[0].Generate || recs[1].PreviousResponseID == "" || recs[2].PreviousResponseID == "" {
		t.Fatalf("model API saw %d handshakes; requests %+v", e.sim.Handshakes(), recs)
	}
	// A second daemon on the same socket is refused.
	second := exec.Command(binary, "serve")
	second.Env = e.env
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already running") {
		t.Fatalf("second daemon: %v %s", err, out)
	}
}

// `hearth acp` starts the daemon when none answers, relays stdio, and the
// daemon it started keeps serving afterwards.
func TestACPRelayStartsDaemon(t *testing.T) {
	e := newE2E(t)
	cmd := exec.Command(binary, "acp")
	cmd.Env = e.env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	text := newACP(t, pipeRW{stdout, stdin}).turn(t, e.root, "hi there")
	if !strings.Contains(text, "hi there") {
		t.Fatalf("answer %q", text)
	}
	// Stop the daemon `hearth acp` started: it runs detached, so ask it its pid.
	c, err := rpc.Dial(context.Background(), e.sock)
	if err != nil {
		t.Fatalf("the auto-started daemon is not on %s: %v", e.sock, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
	var st rpc.Status
	if err := c.Call(ctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.PID == os.Getpid() || st.PID == cmd.Process.Pid {
		t.Fatalf("daemon pid %d is not a separate process", st.PID)
	}
	stdin.Close()
	p, _ := os.FindProcess(st.PID)
	p.Signal(syscall.SIGTERM)
}

type pipeRW struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipeRW) Close() error {
	p.WriteCloser.Close()
	return p.ReadCloser.Close()
}

// `hearth status` without a daemon says so and exits 3.
func TestStatusWithoutDaemon(t *testing.T) {
	e := newE2E(t)
	cmd := exec.Command(binary, "status")
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "not running") {
		t.Fatalf("status without daemon: %v %s", err, out)
	}
}

// `hearth ask` with no daemon starts one; without an API key it uses the
// simulator and says so (on stderr), and the answer used list_dir.
func TestAskWithoutKeyUsesSimulator(t *testing.T) {
	dir, _ := os.MkdirTemp("", "ha")
	defer os.RemoveAll(dir)
	defer stopDaemonAt(t, filepath.Join(dir, "s.sock"))
	root := filepath.Join(dir, "proj")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "marker.go"), []byte("package x\n"), 0o644)
	cmd := exec.Command(binary, "ask", "--cwd", root, "list the files here")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HEARTH_SOCKET="+filepath.Join(dir, "s.sock"), "HEARTH_DATA_DIR="+filepath.Join(dir, "data"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "marker.go") || !strings.Contains(stdout.String(), "list_dir") {
		t.Errorf("stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "simulator") || !strings.Contains(stderr.String(), "list_dir") {
		t.Errorf("stderr %q", stderr.String())
	}
	// A one-shot ask leaves its session stored (--continue reopens it), not
	// open in the daemon.
	st := exec.Command(binary, "status", "--json")
	st.Env = cmd.Env
	out, err := st.Output()
	var status rpc.Status
	if err != nil || json.Unmarshal(out, &status) != nil {
		t.Fatalf("status: %v %s", err, out)
	}
	if status.Sessions.Open != 0 {
		t.Errorf("%d sessions open after a one-shot ask, want 0", status.Sessions.Open)
	}
}
