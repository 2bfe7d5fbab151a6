package sim

import (
	"slices"
	"sync"
	"time"
)

// Connection limits of the lane model (late 2026 API).
const (
	MaxActiveResponses = 16 // responses in progress at once on one connection; more are queued
	MaxStreamNames     = 32 // distinct stream_id values over a connection's lifetime
)

// job is one accepted response.create waiting for or running on its lane.
type job struct {
	rec   int // index of its Received record
	req   *request
	lane  string // stream_id, "" for the default lane
	fault *Fault
	at    time.Time // when its frame arrived
	// waited: its lane (or the connection's limit) was busy when it
	// arrived, so its processing begins when it starts, not at arrival.
	// Written under the scheduler's mu before the job starts.
	waited bool
}

// scheduler decides when each job of one connection runs: FIFO within a lane, lanes
// concurrently, at most limit jobs at once (1 when lanes are disabled), in arrival order.
// Owned by a wsConn; close stops it from starting more and hands back the jobs never started.
type scheduler struct {
	limit int
	start func(*job) // launches a job; called with mu held so that it happens before close

	mu     sync.Mutex // guards the fields below
	closed bool
	active int
	busy   map[string]bool     // lanes with a running job
	queue  []*job              // accepted, not started, in arrival order
	names  map[string]struct{} // stream_id values seen on this connection
	onIdle func()              // run once when nothing is running or queued
}

func newScheduler(limit int, start func(*job)) *scheduler {
	return &scheduler{limit: limit, start: start, busy: make(map[string]bool), names: make(map[string]struct{})}
}

// admitName records a lane name; it fails once MaxStreamNames other names were used.
func (s *scheduler) admitName(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.names[name]; ok {
		return true
	}
	if len(s.names) >= MaxStreamNames {
		return false
	}
	s.names[name] = struct{}{}
	return true
}

// submit queues j and starts whatever may run; it reports false once the scheduler is closed.
func (s *scheduler) submit(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, j)
	s.pumpLocked()
	if slices.Contains(s.queue, j) {
		j.waited = true
	}
	return true
}

// done is called by a job when it has finished; it starts the next eligible jobs.
func (s *scheduler) done(j *job) {
	s.mu.Lock()
	s.active--
	delete(s.busy, j.lane)
	s.pumpLocked()
	f := s.idleLocked()
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// pumpLocked starts queued jobs in arrival order while the limit allows, skipping busy lanes.
func (s *scheduler) pumpLocked() {
	for i := 0; i < len(s.queue) && s.active < s.limit && !s.closed; {
		j := s.queue[i]
		if s.busy[j.lane] {
			i++
			continue
		}
		s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
		s.busy[j.lane] = true
		s.active++
		s.start(j)
	}
}

// whenIdle runs f now if no job is running or queued, else when that becomes true.
func (s *scheduler) whenIdle(f func()) {
	s.mu.Lock()
	s.onIdle = f
	f = s.idleLocked()
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

func (s *scheduler) idleLocked() func() {
	if s.onIdle == nil || s.active > 0 || len(s.queue) > 0 {
		return nil
	}
	f := s.onIdle
	s.onIdle = nil
	return f
}

// close stops the scheduler and returns the jobs that never started.
func (s *scheduler) close() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	q := s.queue
	s.queue = nil
	return q
}
