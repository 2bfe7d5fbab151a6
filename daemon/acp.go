package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// mux is the method table of one client connection, sorted by method.
func (d *Daemon) mux(c *clientConn) *rpc.Mux {
	m := rpc.NewMux(d.log.With("client", c.id))
	m.HandleAsync(rpc.MethodHearthCompact, c.gated(c.compact))
	m.HandleAsync(rpc.MethodHearthUndo, c.gated(func(ctx context.Context, p json.RawMessage) (any, error) { return hearthUndo(c, ctx, p) }))
	m.Handle(rpc.MethodHearthInspect, c.gated(c.inspect))
	m.Handle(rpc.MethodHearthProbe, c.gated(detached(func(ctx context.Context, _ json.RawMessage) (any, error) { return d.Probe(ctx), nil })))
	m.Handle(rpc.MethodHearthProcessKill, c.gated(killProcess(d)))
	m.Handle(rpc.MethodHearthProcesses, c.gated(listProcesses(d)))
	m.Handle(rpc.MethodHearthRules, c.gated(rulesAPI{d.db}.list))
	m.Handle(rpc.MethodHearthRulesRevoke, c.gated(rulesAPI{d.db}.revoke))
	m.Handle(rpc.MethodHearthStatus, c.gated(func(context.Context, json.RawMessage) (any, error) { return d.status(c), nil }))
	m.Handle(rpc.MethodAuthenticate, c.gated(c.authenticate))
	m.Handle(rpc.MethodInitialize, detached(c.initialize))
	m.Handle(rpc.MethodLogout, c.gated(c.logout))
	m.Notification(rpc.MethodSessionCancel, c.cancel)
	m.HandleStaged(rpc.MethodSessionClose, c.storeErrors(c.prepareClose))
	m.HandleStaged(rpc.MethodSessionDelete, c.storeErrors(c.prepareDelete))
	m.HandleStaged(rpc.MethodSessionFork, c.storeErrors(forkCall{c}.prepare))
	m.Handle(rpc.MethodSessionList, c.gated(c.list))
	m.HandleStaged(rpc.MethodSessionLoad, c.storeErrors(c.prepareLoad))
	m.HandleStaged(rpc.MethodSessionNew, c.storeErrors(c.prepareNew))
	m.HandleStaged(rpc.MethodSessionPrompt, c.storeErrors(c.preparePrompt))
	m.HandleStaged(rpc.MethodSessionResume, c.storeErrors(c.prepareResume))
	m.Handle(rpc.MethodSessionSetConfigOption, c.gated(c.setConfigOption))
	m.Handle(rpc.MethodSessionSetMode, c.gated(c.setMode))
	m.Handle(rpc.MethodSessionStatus, c.gated(sessionStatus(d)))
	m.HandleStaged(rpc.MethodSessionSteering, c.storeErrors(c.prepareSteering))
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
	c.asksOnWrite.Store(req.ClientInfo != nil && clientsAskingOnWrite[req.ClientInfo.Name])
	c.caps.read(params)
	c.initialized.Store(true)
	cfg := c.d.Config()
	var auth acp.AgentAuthCapabilities
	if cfg.Credentials != nil {
		auth.Logout = &acp.LogoutCapabilities{}
	}
	sessions := acp.SessionCapabilities{List: &acp.SessionListCapabilities{}, Resume: &acp.SessionResumeCapabilities{},
		Close: &acp.SessionCloseCapabilities{}, Delete: &acp.SessionDeleteCapabilities{}}
	return withUnstableCaps(acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			Auth:                auth,
			LoadSession:         true,
			SessionCapabilities: sessions,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:     acp.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo:   &acp.Implementation{Name: "hearth", Version: cfg.Version},
		AuthMethods: authMethods(req.ClientCapabilities.Auth.Terminal),
		Meta:        steeringMeta(),
	})
}

func (c *clientConn) newSession(ctx context.Context, params json.RawMessage) (acp.NewSessionResponse, error) {
	var req acp.NewSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if !filepath.IsAbs(req.Cwd) {
		return acp.NewSessionResponse{}, rpc.InvalidParams("cwd", "must be an absolute path, got %q", req.Cwd)
	}
	if err := c.d.Config().loginError(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	servers, err := mcpServers(params)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	d := c.d
	// Before the session opens: its warm-up goes out as it opens, and the
	// answer must not wait behind anything after it.
	modes := d.settings.modeState(ModeAsk)
	w, cwd, err := d.workspaceForCwd(ctx, req.Cwd)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	cfg := w.client.Config() // a new session (a spare too) has chosen nothing
	options := d.settings.configOptions(ModeAsk, cfg, cfg.Model)
	initial := initialContext(d.Config(), w, cwd)
	// The workspace's spare, warm already (its tools are the workspace's:
	// not for a session with MCP servers); else a new session whose warm-up
	// starts here, in the background: session/new answers once its MCP
	// servers are up.
	var s *openSession
	if len(servers) == 0 {
		s = d.spares.take(ctx, w, cwd, initial)
	}
	if s == nil {
		id := newSessionID()
		if err := d.db.CreateSession(ctx, store.Session{ID: id, Root: w.root.Path(), Cwd: cwd, Mode: ModeAsk, Model: w.client.Config().Model}); err != nil {
			return acp.NewSessionResponse{}, fmt.Errorf("create session: %w", err)
		}
		if s, err = d.openConversation(ctx, id, w, initial, nil, startMCP(d.ctx, d.Config(), d.log, w, cwd, servers)); err != nil {
			return acp.NewSessionResponse{}, err
		}
	}
	s.attach(c)
	return acp.NewSessionResponse{SessionId: acp.SessionId(s.id), Modes: modes, ConfigOptions: options}, nil
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
	if err := d.Config().loginError(); err != nil {
		return nil, err
	}
	s, err := d.lookup(ctx, string(req.SessionId))
	if err != nil {
		return nil, err
	}
	tctx, release, await, closed, err := d.startTurn(c, s)
	if closed {
		return c.preparePrompt(ctx, params) // the next lookup opens it again
	}
	if err != nil {
		return nil, err
	}
	t := &promptTurn{c: c, s: s, content: content, tctx: tctx, release: release, db: d.db, log: d.log, cfg: d.Config()}
	return func(rctx context.Context) (any, error) {
		if !await() { // cancelled while queued behind the running turn
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		defer release()
		return t.run(rctx)
	}, nil
}

// startTurn counts a turn of s and claims s for it, for c, or queues it
// behind the turn that runs (and those queued before it). await waits
// until the turn is the session's, and reports false when it was
// cancelled first (it then never runs). release ends the turn for the
// session: the next queued prompt (from any editor) starts, and a cancel
// no longer reaches this one; it may be called more than once. closed: the
// session closed meanwhile (look it up again).
func (d *Daemon) startTurn(c *clientConn, s *openSession) (tctx context.Context, release func(), await func() bool, closed bool, err error) {
	// Counted under d.mu, before s.mu (d.mu is never taken under s.mu):
	// Shutdown's drain waits for exactly the turns that started before it.
	d.mu.Lock()
	if d.draining || d.closed {
		d.mu.Unlock()
		return nil, nil, nil, false, errClosed
	}
	d.turns.Add(1)
	d.mu.Unlock()
	tctx, cancel := context.WithCancel(d.ctx)
	q, closed := s.claim(c, cancel)
	if closed {
		cancel()
		d.turns.Done()
		return nil, nil, nil, true, nil
	}
	s.attach(c)
	var releaseOnce sync.Once
	release = func() {
		releaseOnce.Do(func() {
			cancel()
			s.unclaim()
			s.touch() // its idle time starts when the turn ends
			d.turns.Done()
		})
	}
	await = func() bool {
		if q == nil {
			return true
		}
		select {
		case <-q.ready:
			return true
		case <-tctx.Done():
		}
		if !s.leave(q) {
			return true // handed the turn as it was cancelled: it runs, cancelled, and releases
		}
		cancel()
		d.turns.Done()
		return false
	}
	return tctx, release, await, false, nil
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
	for _, q := range s.queue {
		q.cancel() // ACP's cancel ends every prompt of the session, the queued ones too
	}
	s.mu.Unlock()
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
	if err := c.d.Config().loginError(); err != nil {
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
			return replayer{session: id, root: w.root.Path(),
				kind:       func(name string) acp.ToolKind { return toolKind(w, name) },
				compaction: c.caps.compaction.Load()}.replay(ctx, c.out, page)
		})
		if err != nil {
			return nil, err
		}
		s.attach(c)
		if err := c.out.flush(ctx); err != nil {
			return nil, err
		}
		s.mu.Lock()
		mode := s.mode
		s.mu.Unlock()
		c.offerAfterReply(rctx, s.id, true)
		c.usageAfterReply(rctx, s)
		return acp.LoadSessionResponse{Modes: c.d.settings.modeState(mode), ConfigOptions: c.d.settings.sessionOptions(s)}, nil
	}, nil
}

func rawArgs(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}
