package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// outbox is what waits to be written to one editor, and the goroutine that
// writes it: notifications in order, bounded in messages (outboxLimit) and
// in bytes (maxBytes), text chunks of a session merged while they wait.
// Created by ServeConn once the connection's stream exists, with its
// clientConn; its writer runs from start until the connection shuts down
// (quit) or a write fails, and the clientConn's close waits for it.
type outbox struct {
	ctx          context.Context // the daemon's: notifications are written under it
	conn         jsonrpc2.Conn
	stream       jsonrpc2.Stream // what sendNow writes to at once (rpc.TryWrite)
	direct       bool            // the connection is a socket: a text chunk may be written at once (sendNow)
	quit         <-chan struct{} // the connection's: closed when it shuts down
	disconnect   func(why string)
	shutdown     func()
	maxBytes     int           // outboxMaxBytes when accepted
	writeTimeout time.Duration // writeTimeout when accepted

	mu     sync.Mutex     // guards items, queued, peak, space, writing, finish
	items  []notification // waiting for the writer, in order
	queued int            // what the items count against maxBytes: the sum of their cost
	peak   int            // the most queued was ever (tests read it)
	space  chan struct{}  // non-nil: closed when the writer takes a message (replay waits on it)
	// writing: a message is being written, by the writer or at once by
	// enqueue (sendNow); the other waits, so messages keep their order.
	writing bool
	finish  bool          // a message written at once was taken only in part: the writer finishes it
	wake    chan struct{} // signals the writer (cap 1)
	wg      sync.WaitGroup
}

// messageCost is what a message (or a text delta) of size bytes counts
// against the outbox's byte bound.
func (o *outbox) messageCost(size int) int { return min(size, o.maxBytes/4) }

// replayBudget is how much of the outbox a session/load replay fills before
// it waits for the editor to read: the rest is left to live updates.
func (o *outbox) replayBudget() int { return o.maxBytes / 2 }

// start starts the writer.
func (o *outbox) start() {
	o.wg.Add(1)
	go o.write()
}

// wait waits for the writer to end (after quit, or a failed write).
func (o *outbox) wait() { o.wg.Wait() }

// write sends queued notifications in order (each write has the
// connection's deadline: deadlineWriter).
func (o *outbox) write() {
	defer o.wg.Done()
	for {
		o.mu.Lock()
		if o.finish && !o.writing {
			// The rest of a message sendNow began: before anything else.
			o.finish, o.writing = false, true
			o.mu.Unlock()
			err := rpc.Finish(o.stream)
			o.mu.Lock()
			o.writing = false
			o.mu.Unlock()
			if err != nil {
				o.shutdown()
				return
			}
			continue
		}
		if len(o.items) == 0 || o.writing {
			o.mu.Unlock()
			select {
			case <-o.wake:
				continue
			case <-o.quit:
				return
			}
		}
		n := o.items[0]
		o.items[0] = notification{}
		o.items = o.items[1:]
		o.queued -= n.cost
		if o.space != nil {
			close(o.space)
			o.space = nil
		}
		o.writing = n.flushed == nil
		o.mu.Unlock()
		if n.flushed != nil {
			close(n.flushed)
			continue
		}
		err := o.send(n)
		o.mu.Lock()
		o.writing = false
		o.mu.Unlock()
		if err != nil {
			o.shutdown()
			return
		}
	}
}

// enqueue adds n to the outbox without blocking the caller; a text chunk
// joins the chunk before it when that one is of the same session and still
// waiting. An editor whose outbox would outgrow its bounds (n counted by
// messageCost) is disconnected instead (and n dropped).
func (o *outbox) enqueue(n notification) {
	select {
	case <-o.quit:
		return // disconnected: nothing will be written
	default:
	}
	o.mu.Lock()
	k := len(o.items)
	if k == 0 && !o.writing && !o.finish && n.chunkSession != "" && o.direct && len(n.chunk) <= textPiece {
		o.sendNow(n) // unlocks
		return
	}
	merge := n.chunkSession != "" && k > 0 && o.items[k-1].chunkSession == n.chunkSession &&
		o.items[k-1].thought == n.thought
	grow := o.messageCost(n.size())
	if merge {
		grow = o.messageCost(len(n.chunk))
	}
	if o.queued > 0 && o.queued+grow > o.maxBytes {
		o.mu.Unlock()
		o.disconnect(fmt.Sprintf("editor not reading its updates (%d bytes queued); disconnecting it", o.queued))
		return
	}
	if !merge && k >= outboxLimit {
		o.mu.Unlock()
		o.disconnect(fmt.Sprintf("editor not reading its updates (%d messages queued); disconnecting it", k))
		return
	}
	o.queued += grow
	o.peak = max(o.peak, o.queued)
	if merge {
		o.items[k-1].chunk = append(o.items[k-1].chunk, n.chunk...)
		o.items[k-1].cost += grow
		o.mu.Unlock()
		return
	}
	n.cost = grow
	o.items = append(o.items, n)
	o.mu.Unlock()
	o.wakeWriter()
}

// wakeWriter tells the writer there is something to do.
func (o *outbox) wakeWriter() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// notify queues a notification.
func (o *outbox) notify(method string, params json.RawMessage) {
	o.enqueue(notification{method: method, params: params})
}

// notifyText queues a text chunk of session's agent message, or of its
// thoughts.
func (o *outbox) notifyText(session, text string, thought bool) {
	o.enqueue(notification{chunkSession: session, chunk: []byte(text), thought: thought})
}

// enqueueWithin queues n once the outbox holds less than budget bytes, so a
// producer that can wait (session/load's replay) never fills it. It fails
// when the editor is disconnected or ctx ends.
func (o *outbox) enqueueWithin(ctx context.Context, n notification, budget int) error {
	for {
		o.mu.Lock()
		if o.queued == 0 || o.queued+o.messageCost(n.size()) <= budget {
			o.mu.Unlock()
			o.enqueue(n)
			return nil
		}
		if o.space == nil {
			o.space = make(chan struct{})
		}
		space := o.space
		o.mu.Unlock()
		select {
		case <-space:
		case <-o.quit:
			return errDisconnected
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// queuedBytes returns the payload bytes waiting in the outbox, and the most
// that ever waited.
func (o *outbox) queuedBytes() (now, peak int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.queued, o.peak
}

// flush waits until every notification queued so far was written, so a
// reply sent after it cannot overtake them. An editor that has not read
// them within writeTimeout is disconnected: its reply would otherwise wait
// for a stranger.
func (o *outbox) flush(ctx context.Context) error {
	done := make(chan struct{})
	o.enqueue(notification{flushed: done})
	timer := time.NewTimer(o.writeTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-o.quit:
		return errDisconnected
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		o.disconnect(fmt.Sprintf("editor did not read its updates within %s; disconnecting it", o.writeTimeout))
		return errDisconnected
	}
}

// notification is one queued message to the editor.
type notification struct {
	method  string
	params  json.RawMessage
	flushed chan struct{} // non-nil: a marker, closed when reached

	// A text chunk of an agent message, kept unencoded so that later chunks
	// of the same session can join it while it waits.
	chunkSession string
	chunk        []byte
	thought      bool // the chunk is of the model's thoughts, not its answer

	cost int // what it counts against the outbox's bound, set by enqueue
}

// size is what n counts against the outbox's byte bound: its payload.
func (n notification) size() int {
	if n.chunkSession != "" {
		return len(n.chunk) + len(n.chunkSession) + 100 // the envelope of the update
	}
	return len(n.method) + len(n.params)
}
