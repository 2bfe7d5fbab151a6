package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// testDaemon is a real daemon on a real socket, with the simulator as the
// model API, for the fake editors below.
type testDaemon struct {
	t    *testing.T
	d    *Daemon
	sim  *sim.Server
	cfg  Config
	root string // a workspace with a few files
	logs *bytes.Buffer
}

// spareInTests is Config.NoSpare for startDaemon (startDaemonWithSpare
// flips it).
var spareInTests = true

func startDaemon(t *testing.T, simOpts sim.Options, apiKey string) *testDaemon {
	t.Helper()
	return startDaemonWith(t, simOpts, apiKey, nil)
}

// startDaemonWith is startDaemon with configure applied to the daemon's
// Config before it starts.
func startDaemonWith(t *testing.T, simOpts sim.Options, apiKey string, configure func(*Config)) *testDaemon {
	t.Helper()
	srv := sim.New(simOpts)
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir, err := os.MkdirTemp("", "hd") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(root, "src", "main.go"), []byte("package main\n"), 0o644)
	root, _ = filepath.EvalSymlinks(root)
	cfg := Config{
		Socket: filepath.Join(dir, "run", "hearth.sock"), DataDir: filepath.Join(dir, "data"),
		BaseURL: base, APIKey: apiKey, Model: "sim-model", Lanes: responses.LanesOn, Version: "test",
		// Tests count and fault a session's own requests; the spare's
		// warm-ups would interleave. spare_test.go turns it on.
		NoSpare: spareInTests,
	}
	if configure != nil {
		configure(&cfg)
	}
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := safesocket.Listen(cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ln) }()
	t.Cleanup(func() {
		d.Close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &testDaemon{t: t, d: d, sim: srv, cfg: cfg, root: root, logs: logs}
}

// restart starts a new daemon on the same socket and data, after the test
// closed the old one; its Serve loop is awaited at cleanup.
func (td *testDaemon) restart() {
	td.t.Helper()
	d, err := New(td.cfg, nil)
	if err != nil {
		td.t.Fatal(err)
	}
	ln, err := safesocket.Listen(td.cfg.Socket)
	if err != nil {
		d.Close()
		td.t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ln) }()
	td.t.Cleanup(func() {
		d.Close()
		<-served
	})
	td.d = d
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// editor is a fake ACP client on the daemon's socket.
type editor struct {
	t      *testing.T
	c      *rpc.Client
	mu     sync.Mutex
	ups    []acp.SessionUpdate
	signal chan struct{}
}

func (td *testDaemon) connect() *editor {
	td.t.Helper()
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		td.t.Fatal(err)
	}
	return td.editorOn(conn)
}

func (td *testDaemon) editorOn(conn net.Conn) *editor {
	return td.editorWith(conn, nil)
}

// connectAnswering connects an editor that answers the daemon's calls
// (session/request_permission) with onCall.
func (td *testDaemon) connectAnswering(onCall func(ctx context.Context, method string, params json.RawMessage) (any, error)) *editor {
	td.t.Helper()
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		td.t.Fatal(err)
	}
	return td.editorWith(conn, onCall)
}

func (td *testDaemon) editorWith(conn net.Conn, onCall func(ctx context.Context, method string, params json.RawMessage) (any, error)) *editor {
	e := &editor{t: td.t, signal: make(chan struct{}, 1)}
	e.c = rpc.NewClient(conn, rpc.ClientOptions{OnNotify: e.notify, OnCall: onCall})
	td.t.Cleanup(func() { e.c.Close() })
	return e
}

func (e *editor) notify(method string, params json.RawMessage) {
	if method != rpc.MethodSessionUpdate {
		return
	}
	var n acp.SessionNotification
	if err := json.Unmarshal(params, &n); err != nil {
		e.t.Errorf("bad session/update: %v: %s", err, params)
		return
	}
	e.mu.Lock()
	e.ups = append(e.ups, n.Update)
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

func (e *editor) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.c.Call(ctx, method, params, result)
}

func (e *editor) must(method string, params, result any) {
	e.t.Helper()
	if err := e.call(method, params, result); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

func (e *editor) initialize() {
	e.t.Helper()
	var r acp.InitializeResponse
	e.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &r)
	if r.ProtocolVersion != acp.ProtocolVersionNumber || !r.AgentCapabilities.LoadSession {
		e.t.Fatalf("initialize answered %+v", r)
	}
}

func (e *editor) newSession(cwd string) acp.SessionId {
	e.t.Helper()
	var r acp.NewSessionResponse
	e.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}, &r)
	return r.SessionId
}

func (e *editor) prompt(id acp.SessionId, text string) acp.StopReason {
	e.t.Helper()
	var r acp.PromptResponse
	e.must(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
	return r.StopReason
}

// updates returns what this editor received so far.
func (e *editor) updates() []acp.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]acp.SessionUpdate(nil), e.ups...)
}

// waitFor waits until pred holds on the updates received so far.
func (e *editor) waitFor(what string, pred func([]acp.SessionUpdate) bool) {
	e.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !pred(e.updates()) {
		select {
		case <-e.signal:
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for %s; have %d updates", what, len(e.updates()))
		}
	}
}

// text joins the agent message chunks received.
func agentText(ups []acp.SessionUpdate) string {
	var s string
	for _, u := range ups {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			s += u.AgentMessageChunk.Content.Text.Text
		}
	}
	return s
}

func (td *testDaemon) waitRequests(n int) []sim.Received {
	td.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, err := td.sim.WaitReceived(ctx, n)
	if err != nil {
		td.t.Fatalf("waiting for %d model requests: %v (have %d)", n, err, len(recs))
	}
	return recs
}

// waitDetached waits until n open sessions have no editor attached.
func (td *testDaemon) waitDetached(n int) {
	td.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		td.d.mu.Lock()
		left := td.d.left
		td.d.mu.Unlock()
		if td.d.Status().Sessions.Idle >= n {
			return
		}
		select {
		case <-left:
		case <-deadline.C:
			td.t.Fatalf("timed out waiting for %d idle sessions", n)
		}
	}
}

// forget drops the updates this editor kept (memory measurements).
func (e *editor) forget() {
	e.mu.Lock()
	e.ups = nil
	e.mu.Unlock()
}
