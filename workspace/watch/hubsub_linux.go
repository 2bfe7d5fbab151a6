//go:build linux

package watch

import (
	"sync"

	"github.com/fsnotify/fsnotify"
)

// hubQueueMax bounds the events a subscription holds for a Watcher busy
// flushing: as many as the kernel queues by default. Past it the events are
// dropped and the Watcher is told it lost some (fsnotify.ErrEventOverflow),
// so it rescans; a slow workspace never holds up the others.
const hubQueueMax = 16384

// hubItem is one event or one error for a Watcher.
type hubItem struct {
	ev  fsnotify.Event
	err error
}

// hubSub is one Watcher's view of its Hub: the directories it added,
// and the events routed to it, in the order the kernel queued them (so a
// Sync marker's event still comes after every event before it). Created by
// Hub.subscribe; owned by the Watcher's loop, which closes it. Its
// forwarding goroutine moves queued items to the channels; Close ends it
// and waits. When the hub's instance ends, the queue is delivered, then the
// channels close.
type hubSub struct {
	hub   *Hub
	inst  *inotifyInstance // guarded by hub.mu; nil once the hub ended this subscription
	paths map[string]int32 // guarded by hub.mu: path → its watch descriptor

	mu      sync.Mutex // guards queue, head, dropped, ended
	queue   []hubItem
	head    int  // queue[head:] is waiting
	dropped bool // events were dropped: an overflow error is owed after the queue
	ended   bool // no more items: close the channels once the queue is empty
	wake    chan struct{}

	events chan fsnotify.Event
	errs   chan error
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when forward returns
	once   sync.Once
}

func newHubSub(h *Hub, inst *inotifyInstance) *hubSub {
	s := &hubSub{hub: h, inst: inst, paths: map[string]int32{}, wake: make(chan struct{}, 1),
		events: make(chan fsnotify.Event), errs: make(chan error), stop: make(chan struct{}), done: make(chan struct{})}
	go s.forward()
	return s
}

func (s *hubSub) Add(path string) error         { return s.hub.add(s, path) }
func (s *hubSub) Remove(path string) error      { return s.hub.remove(s, path) }
func (s *hubSub) Events() <-chan fsnotify.Event { return s.events }
func (s *hubSub) Errors() <-chan error          { return s.errs }

// Close drops the subscription's watches (those no other Watcher holds) and
// waits for its goroutine.
func (s *hubSub) Close() error {
	s.once.Do(func() {
		s.hub.mu.Lock()
		s.hub.leave(s)
		s.hub.mu.Unlock()
		close(s.stop)
	})
	<-s.done
	return nil
}

// push queues an item; called by the hub's reader with the hub's mu held,
// so it never blocks.
func (s *hubSub) push(it hubItem) {
	s.mu.Lock()
	switch {
	case s.ended:
	case s.dropped || len(s.queue)-s.head >= hubQueueMax:
		s.dropped = true
	default:
		s.queue = append(s.queue, it)
	}
	s.mu.Unlock()
	s.signal()
}

// end says no item follows what is queued.
func (s *hubSub) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.signal()
}

func (s *hubSub) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next takes the item to deliver: the oldest queued, then the overflow
// owed for what was dropped. last says the queue is empty and ended.
func (s *hubSub) next() (it hubItem, ok, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.head < len(s.queue):
		it = s.queue[s.head]
		s.queue[s.head] = hubItem{}
		s.head++
		if s.head == len(s.queue) {
			s.queue, s.head = s.queue[:0], 0
		} else if s.head >= 1024 && s.head*2 >= len(s.queue) {
			n := copy(s.queue, s.queue[s.head:])
			clear(s.queue[n:])
			s.queue, s.head = s.queue[:n], 0
		}
		return it, true, false
	case s.dropped:
		s.dropped = false
		return hubItem{err: fsnotify.ErrEventOverflow}, true, false
	}
	return it, false, s.ended
}

// forward delivers the queue to the channels, one item at a time, so an
// error is seen after the events queued before it.
func (s *hubSub) forward() {
	defer close(s.done)
	for {
		it, ok, last := s.next()
		switch {
		case last:
			close(s.events) // the Watcher scans instead
			close(s.errs)
			return
		case !ok:
			select {
			case <-s.wake:
			case <-s.stop:
				return
			}
		case it.err != nil:
			select {
			case s.errs <- it.err:
			case <-s.stop:
				return
			}
		default:
			select {
			case s.events <- it.ev:
			case <-s.stop:
				return
			}
		}
	}
}
