package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// env is one test's real parts: a simulator, a database, a workspace with
// real tools, and a Client on them.
type env struct {
	t      *testing.T
	sim    *sim.Server
	db     *store.DB
	root   string
	tools  *wsTools
	client *session.Client
}

func newEnv(t *testing.T, opts sim.Options, cfg session.Config) *env {
	t.Helper()
	srv := sim.New(opts)
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	db, err := store.Open(filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	root := t.TempDir()
	files := map[string]string{"a.txt": "alpha\nbeta\n", "b.txt": "bravo\n", "README.md": "# demo\n",
		"big.txt": strings.Repeat("a line of text in a two-kilobyte file\n", 54)}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cfg.BaseURL = base
	cfg.Instructions = "test instructions"
	if cfg.Model == "" {
		cfg.Model = "sim-model"
	}
	c := session.NewClient(cfg, nil)
	t.Cleanup(func() { c.Close() })
	return &env{t: t, sim: srv, db: db, root: r.Path(), tools: newTools(r), client: c}
}

// open creates a stored session and opens its conversation.
func (e *env) open(id string) *session.Conversation {
	e.t.Helper()
	ctx := context.Background()
	if err := e.db.CreateSession(ctx, store.Session{ID: id, Root: e.root}); err != nil {
		e.t.Fatal(err)
	}
	return e.reopen(id)
}

func (e *env) reopen(id string) *session.Conversation {
	e.t.Helper()
	return e.reopenWith(id, e.tools)
}

// openWith creates a stored session and opens it with tools of the test's own.
func (e *env) openWith(id string, tools session.Tools) *session.Conversation {
	e.t.Helper()
	if err := e.db.CreateSession(context.Background(), store.Session{ID: id, Root: e.root}); err != nil {
		e.t.Fatal(err)
	}
	return e.reopenWith(id, tools)
}

func (e *env) reopenWith(id string, tools session.Tools) *session.Conversation {
	e.t.Helper()
	c, err := session.Open(context.Background(), session.Options{ID: id, Client: e.client, DB: e.db, Tools: tools})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// wait returns the simulator's records once n requests were answered.
func (e *env) wait(n int) []sim.Received {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, err := e.sim.WaitReceived(ctx, n)
	if err != nil {
		e.t.Fatalf("waiting for %d requests: %v (have %d)", n, err, len(recs))
	}
	return recs
}

func warm(t *testing.T, c *session.Conversation) {
	t.Helper()
	c.Warm()
	done, result := c.WarmupDone()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("warm-up did not finish")
	}
	if err := result(); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
}

// wsTools adapts the real workspace toolset to session.Tools.
type wsTools struct {
	ts    *workspace.Toolset
	specs []json.RawMessage
	mu    sync.Mutex
	runs  map[string]int // call id → times run
}

func newTools(r *workspace.Root) *wsTools {
	ts := workspace.NewToolset(r)
	w := &wsTools{ts: ts, runs: map[string]int{}}
	for _, t := range ts.Tools() {
		w.specs = append(w.specs, t.Spec())
	}
	return w
}

func (w *wsTools) Specs() []json.RawMessage { return w.specs }

func (w *wsTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	w.mu.Lock()
	w.runs[call.CallID]++
	w.mu.Unlock()
	r := w.ts.Run(ctx, call.Name, json.RawMessage(call.Arguments))
	res := session.ToolResult{Output: r.Output, IsError: r.IsError, Title: r.Title}
	if r.Image != nil {
		res.Images = []session.Image{{MIME: r.Image.MIME, Data: r.Image.Data}}
	}
	return res
}

// recorder is a Sink that keeps what it was told.
type recorder struct {
	mu      sync.Mutex
	text    string
	thought string
	calls   []string // "name:status"
	notices []string
	first   chan struct{}
	once    sync.Once
}

func newRecorder() *recorder { return &recorder{first: make(chan struct{})} }

func (r *recorder) Text(d string) {
	r.mu.Lock()
	r.text += d
	r.mu.Unlock()
	r.once.Do(func() { close(r.first) })
}

func (r *recorder) Thought(d string) {
	r.mu.Lock()
	r.thought += d
	r.mu.Unlock()
}

func (r *recorder) Thoughts() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.thought
}

func (r *recorder) ToolCall(call session.ToolCall, status string, res *session.ToolResult) {
	r.mu.Lock()
	r.calls = append(r.calls, call.Name+":"+status)
	r.mu.Unlock()
}

func (r *recorder) Notice(text string) {
	r.mu.Lock()
	r.notices = append(r.notices, text)
	r.mu.Unlock()
}

func (r *recorder) Text_() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text
}

func userText(t *testing.T, item json.RawMessage) string {
	t.Helper()
	var m struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(item, &m); err != nil || len(m.Content) == 0 {
		return ""
	}
	return m.Content[0].Text
}

func itemType(item json.RawMessage) string {
	var m struct {
		Type string `json:"type"`
	}
	json.Unmarshal(item, &m)
	return m.Type
}
