package daemon

import "context"

// queuedTurn is a prompt that arrived while its session's turn ran: it
// waits, in arrival order, to be handed the session's turn (unclaim), or
// leaves the queue when it is cancelled first. Made by claim; it lives
// until it is handed the turn or leaves.
type queuedTurn struct {
	c      *clientConn
	cancel context.CancelFunc // cancels the queued prompt (session/cancel, the daemon's close)
	ready  chan struct{}      // closed when it is handed the session's turn
}

// claim makes the prompt of c, which cancel cancels, s's running turn; or,
// when a turn runs or prompts wait already, queues it and returns its
// place (a nil q: the turn is its now). It reports closed when s was
// closed (session/close, the reaper) since it was looked up.
func (s *openSession) claim(c *clientConn, cancel context.CancelFunc) (q *queuedTurn, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, true
	case s.cancel != nil || len(s.queue) > 0:
		q = &queuedTurn{c: c, cancel: cancel, ready: make(chan struct{})}
		s.queue = append(s.queue, q)
		return q, false
	}
	s.cancel, s.prompter = cancel, c
	s.turnDone = make(chan struct{})
	return nil, false
}

// unclaim ends s's running turn: the first queued prompt is handed the
// turn, else the session is idle; what waits for the turn's end
// (session/close) goes on.
func (s *openSession) unclaim() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel, s.prompter = nil, nil
	close(s.turnDone)
	s.turnDone = nil
	if len(s.queue) == 0 {
		return
	}
	q := s.queue[0]
	s.queue = s.queue[1:]
	s.cancel, s.prompter = q.cancel, q.c
	s.turnDone = make(chan struct{})
	close(q.ready)
}

// leave takes a cancelled q out of the queue; false when it was handed the
// turn already (it must run and release it).
func (s *openSession) leave(q *queuedTurn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, w := range s.queue {
		if w == q {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}
