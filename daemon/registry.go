package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// openWorkspace is a workspace with open sessions: its root, its tools and
// its one Responses client (one WebSocket shared by its sessions). Created
// by the first session/new or session/load for its root; closed by
// Daemon.Close.
type openWorkspace struct {
	root   *workspace.Root
	tools  *workspace.Toolset
	specs  []json.RawMessage // tool specs, built once: byte-identical on every request
	client *session.Client
}

// openSession is a session with a live Conversation and the editors
// attached to it. Created by session/new or session/load; closed by
// Daemon.Close.
type openSession struct {
	id   string
	ws   *openWorkspace
	conv *session.Conversation

	mu     sync.Mutex // guards subs, cancel
	subs   map[*clientConn]struct{}
	cancel context.CancelFunc // cancels the running turn; nil when idle
}

// workspaceFor returns the open workspace for dir, opening it on first use.
func (d *Daemon) workspaceFor(ctx context.Context, dir string) (*openWorkspace, error) {
	root, err := workspace.Open(dir)
	if err != nil {
		return nil, rpc.InvalidParams("cwd", "%v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errClosed
	}
	if w := d.workspaces[root.Path()]; w != nil {
		return w, nil
	}
	if _, err := d.db.EnsureWorkspace(ctx, root.Path()); err != nil {
		return nil, err
	}
	ts := workspace.NewToolset(root)
	w := &openWorkspace{root: root, tools: ts}
	for _, t := range ts.Tools() {
		w.specs = append(w.specs, t.Spec())
	}
	w.client = session.NewClient(session.Config{
		BaseURL:           d.cfg.BaseURL,
		APIKey:            d.cfg.APIKey,
		Model:             d.cfg.Model,
		Instructions:      Instructions,
		Lanes:             d.cfg.Lanes,
		WarmupTimeout:     d.cfg.WarmupTimeout,
		FirstEventTimeout: d.cfg.FirstEventTimeout,
		IdleTimeout:       d.cfg.IdleTimeout,
		MaxConnAge:        d.cfg.MaxConnAge,
	}, d.log.With("workspace", root.Path()))
	d.workspaces[root.Path()] = w
	return w, nil
}

// openConversation opens (or returns the already open) session id in w.
func (d *Daemon) openConversation(ctx context.Context, id string, w *openWorkspace, initial []json.RawMessage) (*openSession, error) {
	d.mu.Lock()
	if s := d.sessions[id]; s != nil {
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	conv, err := session.Open(ctx, session.Options{
		ID: id, Client: w.client, DB: d.db, Tools: &sessionTools{ws: w},
		Log: d.log, Initial: initial,
	})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.sessions[id]; s != nil { // opened meanwhile by another client
		conv.Close()
		return s, nil
	}
	if d.closed {
		conv.Close()
		return nil, errClosed
	}
	s := &openSession{id: id, ws: w, conv: conv, subs: map[*clientConn]struct{}{}}
	d.sessions[id] = s
	conv.Warm()
	return s, nil
}

// lookup returns an open session, opening a stored one on demand (a
// prompt after a daemon restart needs no session/load first).
func (d *Daemon) lookup(ctx context.Context, id string) (*openSession, error) {
	d.mu.Lock()
	s := d.sessions[id]
	d.mu.Unlock()
	if s != nil {
		return s, nil
	}
	row, err := d.db.Session(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", rpc.ErrUnknownSession, id)
	}
	w, err := d.workspaceFor(ctx, row.Root)
	if err != nil {
		return nil, err
	}
	return d.openConversation(ctx, id, w, nil)
}

// attach subscribes c to s's updates.
func (s *openSession) attach(c *clientConn) {
	s.mu.Lock()
	s.subs[c] = struct{}{}
	s.mu.Unlock()
}

// detach removes c from every session it was attached to.
func (d *Daemon) detach(c *clientConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sessions {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}
}

// broadcast sends a session/update to every attached client but skip.
func (s *openSession) broadcast(u acp.SessionUpdate, skip *clientConn) {
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id), Update: u})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		if c != skip {
			c.notify(rpc.MethodSessionUpdate, b)
		}
	}
}

// broadcastText sends an agent message chunk to every attached client;
// chunks merge in a client's outbox while it is behind.
func (s *openSession) broadcastText(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		c.notifyText(s.id, text)
	}
}

// agentsContext returns the workspace's AGENTS.md as the session's first
// input item, or nothing.
func agentsContext(root string) []json.RawMessage {
	b, err := os.ReadFile(filepath.Join(root, "AGENTS.md"))
	if err != nil || len(b) == 0 {
		return nil
	}
	const max = 64 << 10
	if len(b) > max {
		b = b[:max]
	}
	return []json.RawMessage{session.DeveloperMessage("Instructions from the workspace's AGENTS.md:\n\n" + string(b))}
}

// sessionTools is the session.Tools of one workspace.
type sessionTools struct{ ws *openWorkspace }

func (t *sessionTools) Specs() []json.RawMessage { return t.ws.specs }

func (t *sessionTools) Run(ctx context.Context, call session.ToolCall) session.ToolResult {
	r := t.ws.tools.Run(ctx, call.Name, json.RawMessage(call.Arguments))
	kind := ""
	if tool, ok := t.ws.tools.Lookup(call.Name); ok {
		kind = tool.Kind
	}
	return session.ToolResult{Output: r.Output, IsError: r.IsError, Title: r.Title, Kind: kind, Locations: r.Locations}
}
