package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// mux is the method table of one client connection, sorted by method.
func (d *Daemon) mux(c *clientConn) *rpc.Mux {
	m := rpc.NewMux(d.log.With("client", c.id))
	m.HandleAsync(rpc.MethodHearthCompact, c.gated(c.compact))
	m.Handle(rpc.MethodHearthInspect, c.gated(c.inspect))
	m.Handle(rpc.MethodHearthProbe, c.gated(detached(c.probe)))
	m.Handle(rpc.MethodHearthStatus, c.gated(c.status))
	m.Handle(rpc.MethodInitialize, detached(c.initialize))
	m.Notification(rpc.MethodSessionCancel, c.cancel)
	m.Handle(rpc.MethodSessionList, c.gated(c.list))
	m.HandleStaged(rpc.MethodSessionLoad, c.storeErrors(c.prepareLoad))
	m.HandleStaged(rpc.MethodSessionNew, c.storeErrors(c.prepareNew))
	m.HandleStaged(rpc.MethodSessionPrompt, c.storeErrors(c.preparePrompt))
	m.Handle(rpc.MethodSessionSetMode, c.gated(c.setMode))
	return m
}

type handler = func(ctx context.Context, params json.RawMessage) (any, error)

// gated refuses every method but initialize until initialize succeeded;
// the database's failures are store errors (storeError).
func (c *clientConn) gated(h handler) handler {
	h = detached(h)
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		if !c.initialized.Load() {
			return nil, rpc.ErrNotInitialized
		}
		res, err := h(ctx, params)
		return res, c.d.storeError(err)
	}
}

// detached hands h a context that may safely outlive the request: jsonrpc2
// recycles the request's own context when the handler returns, and a
// context derived from it (database/sql derives one per transaction) can
// still be touched after that.
func detached(h handler) handler {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		return h(jsonrpc2.DetachContext(ctx), params)
	}
}

func (c *clientConn) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.InitializeRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	c.fsRead.Store(req.ClientCapabilities.Fs.ReadTextFile)
	c.fsWrite.Store(req.ClientCapabilities.Fs.WriteTextFile)
	c.initialized.Store(true)
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}},
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:     acp.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo:   &acp.Implementation{Name: "hearth", Version: c.d.Config().Version},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

func (c *clientConn) newSession(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.NewSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(req.Cwd) {
		return nil, rpc.InvalidParams("cwd", "must be an absolute path, got %q", req.Cwd)
	}
	servers, err := mcpServers(params)
	if err != nil {
		return nil, err
	}
	d := c.d
	// Before the session opens: its warm-up goes out as it opens, and the
	// answer must not wait behind anything after it.
	modes := d.modeState(ModeAsk)
	w, cwd, err := d.workspaceForCwd(ctx, req.Cwd)
	if err != nil {
		return nil, err
	}
	initial := d.initialContext(w, cwd)
	// The workspace's spare, warm already (its tools are the workspace's:
	// not for a session with MCP servers); else a new session whose warm-up
	// starts here, in the background: session/new answers once its MCP
	// servers are up.
	var s *openSession
	if len(servers) == 0 {
		s = d.takeSpare(ctx, w, cwd, initial)
	}
	if s == nil {
		id := newSessionID()
		if err := d.db.CreateSession(ctx, store.Session{ID: id, Root: w.root.Path(), Cwd: cwd, Mode: ModeAsk, Model: w.client.Config().Model}); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
		if s, err = d.openConversation(ctx, id, w, initial, nil, d.startMCP(d.ctx, w, servers)); err != nil {
			return nil, err
		}
	}
	s.attach(c)
	return acp.NewSessionResponse{SessionId: acp.SessionId(s.id), Modes: modes}, nil
}

func newSessionID() string {
	var b [12]byte
	rand.Read(b[:])
	return "ses_" + hex.EncodeToString(b[:])
}

// preparePrompt is session/prompt's first stage, on the read loop: it
// claims the session's turn, so a session/cancel that follows on the wire
// always finds it. The turn itself runs in the second stage.
func (c *clientConn) preparePrompt(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	ctx = jsonrpc2.DetachContext(ctx)
	var req acp.PromptRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	content, err := readPrompt(req.Prompt)
	if err != nil {
		return nil, err
	}
	d := c.d
	s, err := d.lookup(ctx, string(req.SessionId))
	if err != nil {
		return nil, err
	}
	// Counted under d.mu, before s.mu (d.mu is never taken under s.mu):
	// Shutdown's drain waits for exactly the turns that started before it.
	d.mu.Lock()
	if d.draining || d.closed {
		d.mu.Unlock()
		return nil, errClosed
	}
	d.turns.Add(1)
	d.mu.Unlock()
	tctx, cancel := context.WithCancel(d.ctx)
	s.mu.Lock()
	if s.cancel != nil {
		s.mu.Unlock()
		cancel()
		d.turns.Done()
		return nil, rpc.InvalidParams("sessionId", "a turn is already running in session %s; wait for it or send session/cancel", s.id)
	}
	s.cancel, s.prompter = cancel, c
	s.mu.Unlock()
	s.attach(c)
	// release ends the turn for the session: another prompt (from any
	// editor) may start, and a cancel no longer reaches this one.
	var releaseOnce sync.Once
	release := func() {
		releaseOnce.Do(func() {
			cancel()
			s.mu.Lock()
			s.cancel, s.prompter = nil, nil
			s.mu.Unlock()
			s.touch() // its idle time starts when the turn ends
			d.turns.Done()
		})
	}
	return func(rctx context.Context) (any, error) {
		defer release()
		s.offerCommands()
		if content.text != "" || len(content.images) == 0 {
			s.broadcast(acp.UpdateUserMessageText(content.text), c)
		}
		for _, v := range imageViews(content.images) {
			s.broadcast(acp.UpdateUserMessage(v), c)
		}
		if len(content.images) == 0 && isCompactCommand(content.text) {
			stop, err := s.conv.Compact(tctx, updates{s})
			release()
			c.flush(jsonrpc2.DetachContext(rctx))
			if err != nil {
				return nil, turnError(err)
			}
			return acp.PromptResponse{StopReason: acp.StopReason(stop)}, nil
		}
		var input []json.RawMessage
		if note := s.ws.watchNotice(); note != "" && !s.toldWatch {
			s.toldWatch = true
			updates{s}.Notice(note)
		}
		s.tellMCP(updates{s})
		if env := d.environmentChange(s); env != "" {
			input = append(input, session.DeveloperMessage(env)) // environment.go
		}
		if delta := d.contextDelta(tctx, s); delta != "" {
			input = append(input, session.DeveloperMessage(delta))
		}
		if cmd := commandPrompt(content.text); cmd != "" {
			input = append(input, session.DeveloperMessage(cmd)) // /init, /review: commands.go
		}
		input = append(input, session.UserMessage(content.text, content.images...))
		stop, err := s.conv.Prompt(tctx, input, updates{s})
		if err == nil {
			bg := context.WithoutCancel(tctx)
			if row, err := d.db.Session(bg, s.id); err == nil && row.Title == "" {
				d.db.SetSessionTitle(bg, s.id, content.title())
			}
		}
		// The session is free before this editor's answer waits for its
		// updates: an editor that stopped reading holds only its own reply.
		release()
		// The turn's updates reach this client before its answer; an editor
		// that is disconnected meanwhile gets no answer.
		c.flush(jsonrpc2.DetachContext(rctx))
		if err != nil {
			return nil, turnError(err)
		}
		return acp.PromptResponse{StopReason: acp.StopReason(stop)}, nil
	}, nil
}

// title is a session's title: the start of its first prompt.
func title(prompt string) string {
	t := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:60]) + "…"
	}
	return t
}

func (c *clientConn) cancel(ctx context.Context, params json.RawMessage) {
	var req acp.CancelNotification
	if err := rpc.DecodeParams(params, &req); err != nil {
		c.d.log.Debug("bad session/cancel", "err", err)
		return
	}
	c.d.mu.Lock()
	s := c.d.sessions[string(req.SessionId)]
	c.d.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
}

func (c *clientConn) list(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.ListSessionsRequest
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
	}
	root := ""
	if req.Cwd != nil && *req.Cwd != "" {
		if r, err := filepath.EvalSymlinks(*req.Cwd); err == nil {
			root = r
		} else {
			root = filepath.Clean(*req.Cwd)
		}
	}
	rows, err := c.d.db.Sessions(ctx, root, 200)
	if err != nil {
		return nil, err
	}
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, r := range rows {
		info := acp.SessionInfo{SessionId: acp.SessionId(r.ID), Cwd: r.Cwd}
		if r.Title != "" {
			t := r.Title
			info.Title = &t
		}
		u := r.LastActivity.UTC().Format(time.RFC3339)
		info.UpdatedAt = &u
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// prepareLoad is session/load's first stage, on the read loop: it checks
// the request. The replay runs in the second stage, concurrently, so the
// connection keeps serving (status, cancel, other sessions) while a long
// transcript streams.
func (c *clientConn) prepareLoad(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	var req acp.LoadSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	id := string(req.SessionId)
	servers, err := mcpServers(params)
	if err != nil {
		return nil, err
	}
	return func(rctx context.Context) (any, error) {
		ctx := jsonrpc2.DetachContext(rctx)
		// The replay goes to this client only, before the answer (ACP),
		// streamed from the store page by page (a session not open yet
		// opens with the items read).
		s, err := c.d.loadStreaming(ctx, id, servers, func(w *openWorkspace, page []store.Item) error {
			return c.replay(ctx, replayer{session: id, root: w.root.Path(),
				kind: func(name string) acp.ToolKind { return toolKind(w, name) }}, page)
		})
		if err != nil {
			return nil, err
		}
		s.attach(c)
		s.offerCommands()
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		s.mu.Lock()
		mode := s.mode
		s.mu.Unlock()
		return acp.LoadSessionResponse{Modes: c.d.modeState(mode)}, nil
	}, nil
}

func rawArgs(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}
