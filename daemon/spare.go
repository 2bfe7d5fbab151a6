package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hearthd/hearth/store"
)

// A spare is a session made and warmed ahead of time in a workspace the
// daemon holds, so that the next session/new there hands out a session
// whose instructions, tools and initial context the server already holds:
// its first prompt chains on the spare's warm-up at once instead of waiting
// for a warm-up of its own. The spare is replaced in the background when
// taken. Its store row is marked spare (not listed) until taken; a spare is
// closed and deleted with its workspace, and spares left by a daemon that
// stopped are deleted when the next one starts.

// spareSession is a workspace's spare: its open session (not in
// Daemon.sessions: no editor knows it) and the initial context it was
// opened with, which a taker's must equal.
type spareSession struct {
	s       *openSession
	cwd     string // the working directory it was made for
	initial []json.RawMessage
}

// spares makes, hands out and discards the workspaces' spares. One per
// daemon, the Daemon's field, for its lifetime: the goroutines it starts to
// make spares are owned by Daemon.wg, and each workspace's spare
// (openWorkspace.spare, spareBusy, spareCwd) is guarded by Daemon.mu.
type spares struct{ d *Daemon }

// ensure starts making a spare for w in the background unless it has
// one, one is being made, spares are off, or the daemon is closing. The
// goroutine is owned by d.wg. After is a session the user holds: the spare
// waits for its warm-up to end first, so that on a cold workspace the
// user's own warm-up, which their first prompt chains on, is not queued
// behind the spare's (nil: no wait).
func (sps spares) ensure(w *openWorkspace, after *openSession) {
	d := sps.d
	d.mu.Lock()
	if d.closed || d.cfg.NoSpare || w.spare != nil || w.spareBusy || d.workspaces[w.root.Path()] != w {
		d.mu.Unlock()
		return
	}
	w.spareBusy = true
	cwd := w.spareCwd
	d.wg.Add(1) // under d.mu with closed checked: Close's Wait sees it
	d.mu.Unlock()
	var warming <-chan struct{}
	if after != nil {
		warming, _ = after.conv.WarmupDone()
	}
	go func() {
		defer d.wg.Done()
		if warming != nil {
			select {
			case <-warming:
			case <-d.ctx.Done():
			}
		}
		sp, err := sps.create(w, cwd)
		d.mu.Lock()
		w.spareBusy = false
		keep := err == nil && !d.closed && d.workspaces[w.root.Path()] == w
		if keep {
			w.spare = sp
		}
		d.mu.Unlock()
		switch {
		case err != nil:
			d.log.Info("no spare session for the workspace", "root", w.root.Path(), "err", err)
		case !keep:
			sp.discard(d.db, d.log)
		}
	}()
}

// create creates a spare session in w, working in cwd ("" for the
// root), and starts its warm-up.
func (sps spares) create(w *openWorkspace, cwd string) (*spareSession, error) {
	d := sps.d
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	id := newSessionID()
	if cwd == "" {
		cwd = w.root.Path()
	}
	if err := d.db.CreateSession(ctx, store.Session{ID: id, Root: w.root.Path(), Cwd: cwd, Mode: ModeAsk, Model: w.client.Config().Model, Spare: true}); err != nil {
		return nil, fmt.Errorf("create spare session: %w", err)
	}
	initial := initialContext(d.Config(), w, cwd)
	s, err := d.newOpenSession(ctx, id, w, initial, nil, nil)
	if err != nil {
		d.db.DeleteSession(context.WithoutCancel(ctx), id)
		return nil, err
	}
	s.conv.Warm()
	return &spareSession{s: s, cwd: cwd, initial: initial}, nil
}

// take hands out w's spare for a session/new in cwd whose initial
// context is initial, and starts making the next one, in cwd: where the
// last session/new was opened is where the next is likely to be. It
// returns nil when there is no spare, or one that does not fit (made for
// another directory, the AGENTS.md files or the day changed), which is
// discarded.
func (sps spares) take(ctx context.Context, w *openWorkspace, cwd string, initial []json.RawMessage) (taken *openSession) {
	d := sps.d
	defer func() {
		if taken != nil {
			sps.ensure(w, taken) // else the session opened instead makes it (openConversation)
		}
	}()
	d.mu.Lock()
	sp := w.spare
	w.spare = nil
	w.spareCwd = cwd
	d.mu.Unlock()
	if sp == nil {
		return nil
	}
	if sp.cwd != cwd || !slices.EqualFunc(sp.initial, initial, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		sp.discard(d.db, d.log)
		return nil
	}
	if err := d.db.TakeSpare(ctx, sp.s.id); err != nil {
		d.log.Warn("take spare session", "err", err)
		sp.discard(d.db, d.log)
		return nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		sp.s.conv.Close()
		return nil
	}
	d.sessions[sp.s.id] = sp.s
	sp.s.touch()
	d.mu.Unlock()
	return sp.s
}

// discard closes a spare and deletes its row from db.
func (sp *spareSession) discard(db *store.DB, log *slog.Logger) {
	sp.s.conv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.DeleteSession(ctx, sp.s.id); err != nil {
		log.Warn("delete spare session", "session", sp.s.id, "err", err)
	}
}

// closeWorkspace discards w's spare, then closes w. w is no longer in
// d.workspaces, so no new spare is made.
func (sps spares) closeWorkspace(w *openWorkspace) {
	d := sps.d
	d.mu.Lock()
	sp := w.spare
	w.spare = nil
	d.mu.Unlock()
	if sp != nil {
		sp.discard(d.db, d.log)
	}
	w.close()
}
