package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/mcp"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// list is session/list: the stored sessions, those opened in cwd when it is
// given, most recent first, listPage at a time. The cursor names the last
// session of the previous page; a client only hands it back.
func (c *clientConn) list(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.ListSessionsRequest
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
	}
	root := ""
	if req.Cwd != nil && *req.Cwd != "" {
		if !filepath.IsAbs(*req.Cwd) {
			return nil, rpc.InvalidParams("cwd", "must be an absolute path, got %q", *req.Cwd)
		}
		if r, err := filepath.EvalSymlinks(*req.Cwd); err == nil {
			root = r
		} else {
			root = filepath.Clean(*req.Cwd)
		}
	}
	var pos *store.SessionPos
	if req.Cursor != nil {
		p, err := decodeCursor(*req.Cursor)
		if err != nil {
			return nil, rpc.InvalidParams("cursor", "%v: pass back the nextCursor of an earlier answer, or none for the first page", err)
		}
		pos = &p
	}
	rows, err := c.d.db.SessionsAfter(ctx, root, pos, listPage+1, true) // a session opened and left without a prompt has nothing to go back to
	if err != nil {
		return nil, err
	}
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	if len(rows) > listPage {
		rows = rows[:listPage]
		last := rows[len(rows)-1]
		next := encodeCursor(store.SessionPos{LastActivity: last.LastActivity, ID: last.ID})
		out.NextCursor = &next
	}
	for _, r := range rows {
		info := acp.SessionInfo{SessionId: acp.SessionId(r.ID), Cwd: r.Cwd}
		if r.Title != "" {
			t := r.Title
			info.Title = &t
		}
		u := isoTime(r.LastActivity)
		info.UpdatedAt = &u
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// encodeCursor and decodeCursor turn a place in the list into the opaque
// text session/list hands out, and back: "v1.<unix nanos>.<id>", base64url.
func encodeCursor(p store.SessionPos) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1." + strconv.FormatInt(p.LastActivity.UnixNano(), 10) + "." + p.ID))
}

func decodeCursor(s string) (store.SessionPos, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	parts := strings.SplitN(string(b), ".", 3)
	if len(parts) != 3 || parts[0] != "v1" || parts[2] == "" {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	return store.SessionPos{LastActivity: time.Unix(0, n), ID: parts[2]}, nil
}

// isoTime is a time as ACP's updatedAt carries it (ISO 8601, UTC).
func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ended tells the session's editors, at the end of the turn, the time of the
// session's last activity and — after the first prompt of a session
// without one — its title, which it stores (session/list and hearth
// inspect show it). first is that prompt's title, "" for a turn that
// gives none (/compact).
func (t *promptTurn) ended(ctx context.Context, first string) {
	s := t.s
	u := &acp.SessionSessionInfoUpdate{}
	if first != "" {
		if row, err := t.db.Session(ctx, s.id); err == nil && row.Title == "" {
			if err := t.db.SetSessionTitle(ctx, s.id, first); err != nil {
				t.log.Warn("cannot store the session's title", "session", s.id, "err", err)
			} else {
				u.Title = &first
			}
		}
	}
	at := isoTime(time.Now())
	u.UpdatedAt = &at
	s.broadcast(acp.SessionUpdate{SessionInfoUpdate: u}, nil)
}

// titleMax is about how long a title is, in characters.
const titleMax = 60

// title is a session's title from its first prompt: the first line with
// text, without control characters, its spaces collapsed, cut at a word
// boundary near titleMax characters.
func title(prompt string) string {
	var line string
	for l := range strings.Lines(prompt) {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, line)
	r := []rune(strings.Join(strings.Fields(line), " "))
	if len(r) <= titleMax {
		return string(r)
	}
	cut := titleMax
	for i := titleMax; i > titleMax/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " .,;:") + "…"
}

// prepareResume is session/resume: session/load without the replay. The
// session opens (its warm-up starts in the background) if it is not open,
// with the editor's MCP servers; the editor is attached and answered with
// the session's modes, then offered its commands.
func (c *clientConn) prepareResume(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	var req acp.ResumeSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if err := c.d.Config().loginError(); err != nil {
		return nil, err
	}
	servers, err := mcpServers(params)
	if err != nil {
		return nil, err
	}
	id := string(req.SessionId)
	return func(rctx context.Context) (any, error) {
		s, err := c.d.resume(jsonrpc2.DetachContext(rctx), id, servers)
		if err != nil {
			return nil, err
		}
		s.attach(c)
		s.mu.Lock()
		mode := s.mode
		s.mu.Unlock()
		c.offerAfterReply(rctx, s.id, true)
		c.usageAfterReply(rctx, s)
		return acp.ResumeSessionResponse{Modes: c.d.settings.modeState(mode), ConfigOptions: c.d.settings.sessionOptions(s)}, nil
	}, nil
}

// resume returns the open session id with the MCP servers given, opening
// it from the store when it is not open.
func (d *Daemon) resume(ctx context.Context, id string, servers []mcp.Server) (*openSession, error) {
	d.mu.Lock()
	s := d.sessions[id]
	if s != nil {
		s.touch()
	}
	d.mu.Unlock()
	if s != nil {
		s.refreshMCP(d.ctx, d.Config(), d.log, servers)
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
	return d.openConversation(ctx, id, w, nil, nil, startMCP(d.ctx, d.Config(), d.log, w, row.Cwd, servers))
}

// prepareClose is session/close: the editor is done with the session. On
// the read loop, in wire order as session/cancel is: the editor is
// detached, and the running turn cancelled when it is this editor's (or
// no editor is left to see it). Then, once that turn has ended, the
// session closes — its conversation and MCP servers freed, as the reaper
// frees an idle one — unless another editor is still attached to it. The
// store keeps it: session/list shows it, a prompt or session/load opens
// it again.
func (c *clientConn) prepareClose(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	var req acp.CloseSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	id := string(req.SessionId)
	s, done, err := c.leave(jsonrpc2.DetachContext(ctx), id)
	if err != nil {
		return nil, err
	}
	return func(rctx context.Context) (any, error) {
		if err := c.d.closeWhenDone(jsonrpc2.DetachContext(rctx), s, done); err != nil {
			return nil, err
		}
		return acp.CloseSessionResponse{}, nil
	}, nil
}

// leave detaches c from session id and cancels its running turn when it
// is c's or no editor is left attached. It returns the open session (nil:
// it is not open) and, when a turn was cancelled, a channel closed when it
// has ended.
func (c *clientConn) leave(ctx context.Context, id string) (*openSession, <-chan struct{}, error) {
	c.d.mu.Lock()
	s := c.d.sessions[id]
	c.d.mu.Unlock()
	if s == nil {
		if _, err := c.d.db.Session(ctx, id); err != nil {
			return nil, nil, fmt.Errorf("%w: %s", rpc.ErrUnknownSession, id)
		}
		return nil, nil, nil // stored, not open: nothing to free
	}
	s.mu.Lock()
	delete(s.subs, c)
	delete(s.offered, c)
	var done <-chan struct{}
	if s.cancel != nil && (s.prompter == c || len(s.subs) == 0) {
		s.cancel()
		done = s.turnDone
	}
	s.mu.Unlock()
	s.touch()
	return s, done, nil
}

// closeWhenDone waits for done (a cancelled turn's end; nil: none), then
// closes s if no editor is attached and no turn runs. s may be nil.
func (d *Daemon) closeWhenDone(ctx context.Context, s *openSession, done <-chan struct{}) error {
	if s == nil {
		return nil
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	d.mu.Lock()
	s.mu.Lock()
	free := d.sessions[s.id] == s && len(s.subs) == 0 && s.cancel == nil
	s.closed = s.closed || free
	s.mu.Unlock()
	if free {
		delete(d.sessions, s.id)
		s.ws.lastUsed = time.Now() // the workspace's idle time starts with its last session's close
	}
	d.mu.Unlock()
	if free {
		s.close()
		d.reaper.closedSessions.Add(1)
		d.log.Info("session closed by its editor", "session", s.id)
	}
	return nil
}

// prepareDelete is session/delete: the session is closed as session/close
// closes it, then removed from the store with its turns, items, requests,
// read set, permissions and compactions (one transaction). A session
// another editor is attached to is refused: it would vanish under it.
func (c *clientConn) prepareDelete(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	var req acp.UnstableDeleteSessionRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	id := string(req.SessionId)
	d := c.d
	d.mu.Lock()
	s := d.sessions[id]
	d.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		others := len(s.subs)
		if _, mine := s.subs[c]; mine {
			others--
		}
		s.mu.Unlock()
		if others > 0 {
			return nil, rpc.InvalidParams("sessionId", "session %s is open in %d other editor(s); close it there first", id, others)
		}
	}
	s, done, err := c.leave(jsonrpc2.DetachContext(ctx), id)
	if err != nil {
		return nil, err
	}
	return func(rctx context.Context) (any, error) {
		ctx := jsonrpc2.DetachContext(rctx)
		if err := d.closeWhenDone(ctx, s, done); err != nil {
			return nil, err
		}
		// No open of it may start while its rows go.
		key := "session:" + id
		opened, err := d.beginOpen(ctx, key, func() bool { return d.sessions[id] != nil })
		if err != nil {
			return nil, err
		}
		if opened == nil {
			return nil, rpc.InvalidParams("sessionId", "session %s was opened again meanwhile; close it there first", id)
		}
		defer opened()
		if err := d.db.DeleteSession(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("%w: %s", rpc.ErrUnknownSession, id)
			}
			return nil, err
		}
		d.log.Info("session deleted", "session", id)
		if err := d.ckpt.sweep(ctx); err != nil { // its checkpoints' objects go with its rows
			d.log.Warn("sweeping the checkpoint store", "err", err)
		}
		return acp.UnstableDeleteSessionResponse{}, nil
	}, nil
}
