package daemon

import (
	"sync/atomic"
	"time"
)

// Sessions and workspaces have lifetimes. A session with no attached editor
// and no running turn closes after Config.SessionIdle: its conversation
// frees its transcript and lane and is no longer re-warmed (a later prompt
// or session/load opens it again from the store). A workspace with no open
// session closes after Config.WorkspaceIdle: its watcher and its model
// connections go. The reaper goroutine is owned by the Daemon (started by
// New, ended and awaited by Close).

// Defaults of HEARTH_SESSION_IDLE and HEARTH_WORKSPACE_IDLE.
const (
	DefaultSessionIdle   = 30 * time.Minute
	DefaultWorkspaceIdle = 5 * time.Minute
)

func (c Config) sessionIdle() time.Duration {
	if c.SessionIdle <= 0 {
		return DefaultSessionIdle
	}
	return c.SessionIdle
}

func (c Config) workspaceIdle() time.Duration {
	if c.WorkspaceIdle <= 0 {
		return DefaultWorkspaceIdle
	}
	return c.WorkspaceIdle
}

// touch records that s was used now: its idle time starts over.
func (s *openSession) touch() { s.lastUsed.Store(time.Now().UnixNano()) }

// reaper closes the sessions and workspaces that have been idle too long,
// and counts what it and session/close closed (status shows it). One per
// daemon, the Daemon's field: its loop runs from New until Close cancels
// the daemon's context, owned by Daemon.wg. What it closes it takes out of
// the daemon's registry under Daemon.mu.
type reaper struct {
	d *Daemon

	closedSessions, closedWorkspaces atomic.Int64 // closed since start: by the reaper, or (sessions) session/close
}

// loop closes idle sessions and workspaces, looking every so often, until
// the daemon closes.
func (r *reaper) loop(every time.Duration) {
	d := r.d
	defer d.wg.Done()
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case now := <-t.C:
			r.reap(now)
		}
	}
}

// reap closes the sessions and workspaces idle at now and reports how many.
// The decisions are made under d.mu; the closing (goroutines, sockets,
// watches) happens outside it.
func (r *reaper) reap(now time.Time) (sessions, workspaces int) {
	d := r.d
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return 0, 0
	}
	var convs []*openSession
	for id, s := range d.sessions {
		s.mu.Lock()
		idle := len(s.subs) == 0 && s.cancel == nil &&
			now.Sub(time.Unix(0, s.lastUsed.Load())) >= d.cfg.sessionIdle()
		s.closed = idle
		s.mu.Unlock()
		if idle {
			delete(d.sessions, id)
			s.ws.lastUsed = now // the workspace's idle time starts with its last session's close
			convs = append(convs, s)
		}
	}
	used := map[*openWorkspace]bool{}
	for _, s := range d.sessions {
		used[s.ws] = true
	}
	var wss []*openWorkspace
	for root, w := range d.workspaces {
		if !used[w] && now.Sub(w.lastUsed) >= d.cfg.workspaceIdle() {
			delete(d.workspaces, root)
			wss = append(wss, w)
		}
	}
	d.mu.Unlock()
	for _, s := range convs {
		s.close()
		d.log.Info("session closed after being idle", "session", s.id)
	}
	for _, w := range wss {
		d.spares.closeWorkspace(w)
		d.log.Info("workspace closed after being idle", "root", w.root.Path())
	}
	r.closedSessions.Add(int64(len(convs)))
	r.closedWorkspaces.Add(int64(len(wss)))
	return len(convs), len(wss)
}

// close releases a workspace's model connections, watcher and root handle.
func (w *openWorkspace) close() {
	w.client.Close()
	if w.watcher != nil {
		w.watcher.Close()
	}
	w.root.Close()
}
