package workspace

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// MaxProcesses bounds the processes one session's exec_command calls may
// leave running: starting one more ends the one least recently used.
const MaxProcesses = 16

// Processes are the processes a session's exec_command calls started and
// that have not been reported ended yet: each has an id the model writes
// to with write_stdin. Created with the session (NewProcesses), handed to
// its calls (Toolset.WithProcesses); Close, when the session closes, ends
// every one and waits for them. Safe for concurrent use.
type Processes struct {
	mu     sync.Mutex // guards procs, nextID, closed
	procs  map[int]*process
	nextID int
	closed bool
}

// NewProcesses returns an empty table.
func NewProcesses() *Processes {
	return &Processes{procs: map[int]*process{}, nextID: 1000}
}

// process is one command started by exec_command: the sandbox's Process
// and what it printed that no call has read. Lives from its start until a
// call reports its end, something kills it, or its table closes.
type process struct {
	id      int
	command string
	tty     bool
	started time.Time
	p       *sandbox.Process
	out     *pendingOutput
	hook    *commandHook // what it tells of its file changes, nil: nothing

	// guarded by Processes.mu:
	busy     int       // calls using it now
	lastUsed time.Time // its start, or the end of the last call that used it
}

// ProcessInfo describes one live process for the editor.
type ProcessInfo struct {
	ID      int
	Command string
	TTY     bool
	Started time.Time
	Running bool // false: it has ended, and no call has read its end yet
}

// add registers p under a new id and marks it in use. When the table is
// full it takes out the process least recently used (one that has ended
// first), which the caller must Kill; a closed table, or a full one whose
// every process is in use, refuses.
func (ps *Processes) add(p *process) (evicted *process, err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errors.New("the session is closing")
	}
	if len(ps.procs) >= MaxProcesses {
		evicted = ps.leastRecentLocked()
		if evicted == nil {
			return nil, fmt.Errorf("%d processes are running and every one is in use", MaxProcesses)
		}
		delete(ps.procs, evicted.id)
	}
	ps.nextID++
	p.id, p.busy, p.lastUsed = ps.nextID, 1, time.Now()
	ps.procs[p.id] = p
	return evicted, nil
}

// leastRecentLocked is the idle process to end first: an ended one, else
// the one whose last use is the oldest.
func (ps *Processes) leastRecentLocked() *process {
	var best *process
	for _, p := range ps.procs {
		if p.busy > 0 {
			continue
		}
		ended := isDone(p)
		switch {
		case best == nil,
			ended && !isDone(best),
			ended == isDone(best) && p.lastUsed.Before(best.lastUsed):
			best = p
		}
	}
	return best
}

func isDone(p *process) bool {
	select {
	case <-p.p.Done():
		return true
	default:
		return false
	}
}

// use marks the process id in use by a call; nil when there is none.
func (ps *Processes) use(id int) *process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.procs[id]
	if p != nil {
		p.busy++
	}
	return p
}

// release ends a call's use of p; ended takes it out of the table (its end
// has been reported).
func (ps *Processes) release(p *process, ended bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p.busy--
	p.lastUsed = time.Now()
	if ended && ps.procs[p.id] == p {
		delete(ps.procs, p.id)
	}
}

// List describes the processes, oldest first.
func (ps *Processes) List() []ProcessInfo {
	ps.mu.Lock()
	out := make([]ProcessInfo, 0, len(ps.procs))
	for _, p := range ps.procs {
		out = append(out, ProcessInfo{ID: p.id, Command: p.command, TTY: p.tty, Started: p.started, Running: !isDone(p)})
	}
	ps.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Kill ends the process id and takes it out of the table; false when
// there is none.
func (ps *Processes) Kill(id int) bool {
	ps.mu.Lock()
	p := ps.procs[id]
	delete(ps.procs, id)
	ps.mu.Unlock()
	if p == nil {
		return false
	}
	p.p.Kill()
	return true
}

// Close ends every process, all at once, and waits for them; a process
// started afterwards is refused. Closing twice does nothing more.
func (ps *Processes) Close() {
	ps.mu.Lock()
	ps.closed = true
	all := ps.procs
	ps.procs = map[int]*process{}
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.p.Kill()
		}()
	}
	wg.Wait()
}
