package sim

import "sync"

// connSet is the Server's live WebSocket connections, numbered in upgrade order, with its count
// of upgrade attempts. One per Server; it lives as long as the Server, and once closeAll has run
// (at Close) it refuses every connection still being upgraded.
type connSet struct {
	mu         sync.Mutex // guards the fields below
	closed     bool
	live       map[*wsConn]struct{}
	last       int // number of the latest connection
	handshakes int
}

// handshake counts one upgrade attempt, refused ones included.
func (cs *connSet) handshake() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.handshakes++
}

func (cs *connSet) handshakeCount() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.handshakes
}

// add registers a live connection and numbers it; false once closeAll has run.
func (cs *connSet) add(c *wsConn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	if cs.live == nil {
		cs.live = make(map[*wsConn]struct{})
	}
	cs.last++
	c.n = cs.last
	cs.live[c] = struct{}{}
	return true
}

func (cs *connSet) remove(c *wsConn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.live, c)
}

// list returns the live connections.
func (cs *connSet) list() []*wsConn {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.listLocked()
}

// closeAll refuses every later connection and returns the live ones, for Close to shut down.
func (cs *connSet) closeAll() []*wsConn {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	return cs.listLocked()
}

func (cs *connSet) listLocked() []*wsConn {
	conns := make([]*wsConn, 0, len(cs.live))
	for c := range cs.live {
		conns = append(conns, c)
	}
	return conns
}
