package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// session/fork (ACP unstable): a new session with another's history, its
// own title, lane and transcript. Its first request continues the parent's
// latest response on the fork's own lane of the workspace's connection
// (session.Conversation.Fork): nothing is sent again. Forking a session
// whose turn runs forks what the turns that ended left; "hearth/turn": N in
// _meta forks the history as it was before the Nth prompt.

// metaForkTurn is the _meta key of session/fork naming the prompt (counted
// from 1, as the hearth/turn of replayed user messages) the fork stops
// before.
const metaForkTurn = "hearth/turn"

// forkRequest is session/fork's params (ForkSessionRequest).
type forkRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  map[string]any  `json:"_meta,omitempty"`
	McpServers            json.RawMessage `json:"mcpServers,omitempty"` // read by mcpServers
}

// forkResponse is session/fork's result (ForkSessionResponse).
type forkResponse struct {
	SessionID     acp.SessionId             `json:"sessionId"`
	Modes         *acp.SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []acp.SessionConfigOption `json:"configOptions,omitempty"`
}

// turn is the prompt the fork stops before: 0 for none (all the history).
func (r forkRequest) turn() (int, error) {
	v, ok := r.Meta[metaForkTurn]
	if !ok || v == nil {
		return 0, nil
	}
	n, ok := v.(float64)
	if !ok || n != float64(int(n)) || n < 1 {
		return 0, rpc.InvalidParams("_meta."+metaForkTurn, "must be a prompt number from 1, got %v", v)
	}
	return int(n), nil
}

// forkCall serves session/fork for one client connection; made per call
// (a value), it holds nothing of its own.
type forkCall struct{ c *clientConn }

// prepare is session/fork's first stage, on the read loop: it checks
// the request. The fork is made in the second stage (it may start MCP
// servers and write the store), and the forked session's commands and
// title are told after the answer.
func (f forkCall) prepare(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	c := f.c
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	var req forkRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	switch {
	case req.SessionID == "":
		return nil, rpc.InvalidParams("sessionId", "required")
	case !filepath.IsAbs(req.Cwd):
		return nil, rpc.InvalidParams("cwd", "must be an absolute path, got %q", req.Cwd)
	}
	turn, err := req.turn()
	if err != nil {
		return nil, err
	}
	if err := c.d.Config().loginError(); err != nil {
		return nil, err
	}
	params = bytes.Clone(params)
	return func(rctx context.Context) (any, error) {
		s, res, err := f.fork(jsonrpc2.DetachContext(rctx), req, turn, params)
		if err != nil {
			return nil, err
		}
		c.offerAfterReply(rctx, s.id, false)
		c.usageAfterReply(rctx, s)
		f.titleAfterReply(rctx, s)
		return res, nil
	}, nil
}

// fork makes the fork of req.SessionID before prompt turn (0: all of it)
// and attaches c to it.
func (f forkCall) fork(ctx context.Context, req forkRequest, turn int, params json.RawMessage) (*openSession, forkResponse, error) {
	d := f.c.d
	servers, err := mcpServers(params)
	if err != nil {
		return nil, forkResponse{}, err
	}
	parent, err := d.lookup(ctx, req.SessionID)
	if err != nil {
		return nil, forkResponse{}, err
	}
	row, err := storedSession(ctx, d.db, parent.id)
	if err != nil {
		return nil, forkResponse{}, err
	}
	var before int64
	if turn > 0 {
		if before, err = promptTurnID(ctx, d.db, parent.id, turn); err != nil {
			return nil, forkResponse{}, err
		}
	}
	w, cwd, err := d.workspaceForCwd(ctx, req.Cwd)
	if err != nil {
		return nil, forkResponse{}, err
	}
	parent.mu.Lock()
	mode := parent.mode
	parent.mu.Unlock()
	id := newSessionID()
	if err := d.db.CreateSession(ctx, store.Session{ID: id, Root: w.root.Path(), Cwd: cwd, Mode: mode, Model: row.Model, Title: forkTitle(row.Title)}); err != nil {
		return nil, forkResponse{}, fmt.Errorf("create the fork of %s: %w", parent.id, err)
	}
	if row.ChosenModel != "" || row.ChosenEffort != "" {
		if err := d.db.SetSessionChoice(ctx, id, row.ChosenModel, row.ChosenEffort); err != nil {
			return nil, forkResponse{}, dropFork(d, id, fmt.Errorf("create the fork of %s: %w", parent.id, err))
		}
	}
	s, err := openConversationWith(ctx, d, id, w, startMCP(d.ctx, d.Config(), d.log, w, cwd, servers),
		func(ctx context.Context, o session.Options) (*session.Conversation, error) {
			return parent.conv.Fork(ctx, o, before)
		})
	if err != nil {
		return nil, forkResponse{}, dropFork(d, id, forkError(parent.id, err))
	}
	s.attach(f.c)
	return s, forkResponse{SessionID: acp.SessionId(id), Modes: d.settings.modeState(mode), ConfigOptions: d.settings.sessionOptions(s)}, nil
}

// titleAfterReply tells c the fork's title once the answer naming the
// fork is written.
func (f forkCall) titleAfterReply(ctx context.Context, s *openSession) {
	c := f.c
	tell := func() {
		row, err := c.d.db.Session(context.WithoutCancel(ctx), s.id)
		if err != nil || row.Title == "" {
			return
		}
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id),
			Update: acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Title: &row.Title}}})
		if err == nil {
			c.out.notify(rpc.MethodSessionUpdate, b)
		}
	}
	if !rpc.AfterReply(c.stream, ctx, tell) {
		tell()
	}
}

// dropFork deletes the row of a fork that could not be made, and returns
// err.
func dropFork(d *Daemon, id string, err error) error {
	if derr := d.db.DeleteSession(context.Background(), id); derr != nil && !errors.Is(derr, store.ErrNotFound) {
		d.log.Warn("cannot delete the fork that failed", "session", id, "err", derr)
	}
	return err
}

// forkError says why a fork was refused in the user's terms.
func forkError(parent string, err error) error {
	switch {
	case errors.Is(err, session.ErrForkCompacted):
		return rpc.InvalidParams("_meta."+metaForkTurn, "session %s was compacted past that point: its history there is a summary now", parent)
	case errors.Is(err, session.ErrForkBusy):
		return fmt.Errorf("fork %s: its running turn cannot be forked yet; fork again once it ends: %w", parent, err)
	}
	return fmt.Errorf("fork %s: %w", parent, err)
}

// forkTitle is the title of a fork of a session titled parent.
func forkTitle(parent string) string {
	if parent == "" {
		return "Fork of an untitled session"
	}
	return "Fork of " + parent
}

// promptTurnID is the store id of session id's nth prompt turn: the turns
// with a user's message the model was sent (a command hearth ran itself,
// such as /compact, is kept for the editor only and is not one), counted
// from 1 in the order they ran, rewound ones included — the numbers
// session/load's replay and /rewind give them.
func promptTurnID(ctx context.Context, db *store.DB, id string, n int) (int64, error) {
	items, err := db.Items().List(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("read the turns of %s: %w", id, err)
	}
	k, last := 0, int64(0)
	for _, it := range items {
		if it.TurnID == 0 || it.TurnID == last || it.Origin != store.OriginInput || shownKind(it.View) != "" || !isUserMessage(it.Data) {
			continue
		}
		if k, last = k+1, it.TurnID; k == n {
			return it.TurnID, nil
		}
	}
	return 0, rpc.InvalidParams("_meta."+metaForkTurn, "session %s has %d prompts, not %d", id, k, n)
}

// isUserMessage reports whether an item is a message of the user's.
func isUserMessage(data json.RawMessage) bool {
	var m struct {
		Type string `json:"type"`
		Role string `json:"role"`
	}
	return json.Unmarshal(data, &m) == nil && m.Type == "message" && m.Role == "user"
}

// shownKind is the kind of an item kept for the editor only; "" for the
// model's items.
func shownKind(view json.RawMessage) string {
	kind, _ := session.Shown(view)
	return kind
}

// opening opens a stored conversation (session.Open) with initial and items.
func opening(initial []json.RawMessage, items []store.Item) openConv {
	return func(ctx context.Context, o session.Options) (*session.Conversation, error) {
		o.Initial, o.Items = initial, items
		return session.Open(ctx, o)
	}
}

// openConv makes an openSession's conversation from its options: Open, or a
// parent's Fork.
type openConv = func(ctx context.Context, o session.Options) (*session.Conversation, error)
