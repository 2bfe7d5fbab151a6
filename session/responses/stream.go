package responses

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Stream is the client side of one response: the queue of its events from
// the connection's reader. Created by Link.Send; ends at its terminal
// event or when the connection fails. The reader never blocks on it: the
// queue is unbounded so a slow editor cannot stall other lanes.
type Stream struct {
	conn Link
	lane string
	sent time.Time

	mu        sync.Mutex // guards q, err, ended, abandoned, last
	q         []*Event
	err       error // connection failure that ended the stream
	ended     bool  // terminal event queued or failure set
	abandoned bool  // the owner walked away; events are discarded
	signal    chan struct{}
	cancel    func()    // HTTP: ends this request alone; nil on WebSocket
	last      time.Time // when this stream's last event arrived (sent until then); guarded by mu
}

func newStream(c Link, lane string) *Stream {
	now := time.Now()
	return &Stream{conn: c, lane: lane, sent: now, last: now, signal: make(chan struct{}, 1)}
}

func (s *Stream) notify() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// push queues an event; it reports whether the event was terminal.
func (s *Stream) push(e *Event) {
	s.mu.Lock()
	s.last = time.Now()
	if !s.abandoned && !s.ended {
		s.q = append(s.q, e)
	}
	if isTerminal(e.Type) {
		s.ended = true
	}
	s.mu.Unlock()
	s.notify()
}

func (s *Stream) fail(err error) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.err = true, err
	}
	s.mu.Unlock()
	s.notify()
}

func (s *Stream) abandon() {
	s.mu.Lock()
	s.abandoned, s.q = true, nil
	s.mu.Unlock()
}

// Abandoned reports whether the owner walked away from the stream
// (Link.Abort with siblings on the socket): its lane is not to be used
// again.
func (s *Stream) Abandoned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// Next returns the next event. Before the first event the wait is bounded by
// firstEvent, afterwards by idle. Only this stream's own events count as
// liveness: pings and other lanes' events keep the connection alive, not a
// wedged response on it.
func (s *Stream) Next(ctx context.Context, first bool, firstEvent, idle time.Duration) (*Event, error) {
	limit := idle
	if first {
		limit = firstEvent
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if len(s.q) > 0 {
			e := s.q[0]
			s.q[0] = nil
			s.q = s.q[1:]
			s.mu.Unlock()
			return e, nil
		}
		if s.ended {
			err := s.err
			s.mu.Unlock()
			if err == nil {
				err = fmt.Errorf("stream ended without terminal event: %w", ErrConnectionLost)
			}
			return nil, err
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.signal:
		case <-timer.C:
			s.mu.Lock()
			quiet := time.Since(s.last)
			s.mu.Unlock()
			if quiet < limit {
				timer.Reset(limit - quiet)
				continue
			}
			what := "idle"
			if first {
				what = "first-event"
			}
			return nil, fmt.Errorf("no event for %s (%s timeout): %w", quiet.Round(time.Millisecond), what, ErrSilence)
		}
	}
}

func isTerminal(t string) bool {
	switch t {
	case "response.completed", "response.failed", "response.incomplete", "error":
		return true
	}
	return false
}
