package responses

import (
	"context"
	"fmt"
	"strings"
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

	mu        sync.Mutex // guards q, err, ended, abandoned, last, waiting, deltas
	q         []*Event
	err       error                  // connection failure that ended the stream
	ended     bool                   // terminal event queued or failure set
	abandoned bool                   // the owner walked away; events are discarded
	waiting   bool                   // the owner waits in Next with nothing queued
	deltas    func(typ, text string) // OnDeltas; nil: the owner takes every event
	signal    chan struct{}
	cancel    func()    // HTTP: ends this request alone; nil on WebSocket
	last      time.Time // when this stream's last event arrived (sent until then); guarded by mu
	lastText  time.Time // when its last text delta was read: the connection's reader's alone
	steer     SteerState
	successor bool // its last terminal event is followed by an automatic successor (Continues)
	awaiting  bool // that successor's response.created has not come yet
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

// push queues an event and tells the stream's reader.
func (s *Stream) push(e *Event) {
	s.queue(e)
	s.notify()
}

// queue queues an event without telling the stream's reader: the caller
// does (notify) once it has queued what it has.
func (s *Stream) queue(e *Event) {
	s.mu.Lock()
	s.last = time.Now()
	if !s.abandoned && !s.ended {
		s.q = append(s.q, e)
	}
	if isTerminal(e.Type) {
		s.successor = continuesAfter(e, s.steer)
		s.ended, e.continued, s.awaiting = !s.successor, s.successor, s.successor
	}
	if e.Type == "response.created" {
		s.awaiting = false
	}
	s.mu.Unlock()
}

// successorLost reports whether the stream waits for a successor that
// will not come: every submission it was to commit was returned.
func (s *Stream) successorLost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.awaiting && !s.ended && s.steer.Queued() == 0
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
// wedged response on it. While it waits, deltas may go to OnDeltas's
// function instead; once it returns, none do until it waits again.
func (s *Stream) Next(ctx context.Context, first bool, firstEvent, idle time.Duration) (*Event, error) {
	limit := idle
	if first {
		limit = firstEvent
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	s.mu.Lock()
	defer func() {
		s.waiting = false
		s.mu.Unlock()
	}()
	for {
		if len(s.q) > 0 {
			e := s.q[0]
			s.q[0] = nil
			s.q = s.q[1:]
			return e, nil
		}
		if s.ended {
			if s.err == nil {
				return nil, fmt.Errorf("stream ended without terminal event: %w", ErrConnectionLost)
			}
			return nil, s.err
		}
		s.waiting = true
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			s.mu.Lock()
			return nil, ctx.Err()
		case <-s.signal:
			s.mu.Lock()
		case <-timer.C:
			s.mu.Lock()
			quiet := time.Since(s.last)
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

// OnDeltas hands the stream's deltas to f on the connection's reader
// while the stream's owner waits in Next with nothing else queued: typ is
// the events' type (text, reasoning summary, call arguments), text their
// deltas joined, in order. A streamed answer then reaches f at the pace
// the reader reads (readGate), without waking the owner for each batch.
// f runs with the stream's lock held, so the owner never takes an event
// that followed those deltas before f has had them: it must be quick and
// must not call the Stream. Set it before the first Next.
func (s *Stream) OnDeltas(f func(typ, text string)) {
	s.mu.Lock()
	s.deltas = f
	s.mu.Unlock()
}

// pacedGap is the least time between two text deltas that shows a model
// streaming at its pace rather than a burst already read.
const pacedGap = 250 * time.Microsecond

// paced notes a text delta read now and reports whether it came at a
// model's pace, well after the one before: then the deltas that follow are
// worth gathering (readGate). A burst (the server writing a response back
// to back) is read at once: the events behind it wait for nothing. Called
// by the connection's reader.
func (s *Stream) paced() bool {
	now := time.Now()
	paced := !s.lastText.IsZero() && now.Sub(s.lastText) >= pacedGap
	s.lastText = now
	return paced
}

// handOn tells the stream's owner that events wait, or, when they are all
// deltas and it waits for them, hands them to the OnDeltas function.
func (s *Stream) handOn() {
	s.mu.Lock()
	if s.deltas == nil || !s.waiting || len(s.q) == 0 || !allDeltas(s.q) {
		s.mu.Unlock()
		s.notify()
		return
	}
	var b strings.Builder
	for i, e := range s.q {
		b.WriteString(e.Delta)
		if i == len(s.q)-1 || s.q[i+1].Type != e.Type {
			s.deltas(e.Type, b.String())
			b.Reset()
		}
		s.q[i] = nil
	}
	s.q = s.q[:0]
	s.mu.Unlock()
}

func allDeltas(q []*Event) bool {
	for _, e := range q {
		if !isDelta(e.Type) {
			return false
		}
	}
	return true
}

// isDelta reports whether events of type t carry a piece of an item
// (text, reasoning summary, call arguments) in Delta.
func isDelta(t string) bool { return strings.HasSuffix(t, ".delta") }

// JoinDeltas returns e's delta followed by the deltas of the events of e's
// type queued right behind it, which it takes off the queue: a reader that
// relays text hands on what arrived together at once.
func (s *Stream) JoinDeltas(e *Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := 0
	for k < len(s.q) && s.q[k].Type == e.Type {
		k++
	}
	if k == 0 {
		return e.Delta
	}
	var b strings.Builder
	b.WriteString(e.Delta)
	for i := range k {
		b.WriteString(s.q[i].Delta)
		s.q[i] = nil
	}
	s.q = s.q[k:]
	return b.String()
}

func isTerminal(t string) bool {
	switch t {
	case "response.completed", "response.failed", "response.incomplete", "error":
		return true
	}
	return false
}
