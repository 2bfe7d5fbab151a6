package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// outboxLimit bounds the notifications queued for one editor. Consecutive
// text chunks of a session merge while they wait, so a fast model only
// grows the queue by its tool-call updates; an editor that still falls this
// far behind is disconnected rather than allowed to stall the turn that
// streams to it (and to every other attached editor).
const outboxLimit = 1 << 14

// Limits of one editor connection, read when it is accepted (tests lower
// them before starting a daemon). An editor that does not keep up is
// disconnected; nothing else waits for it.
var (
	// outboxMaxBytes bounds the payload queued for one editor, merged text
	// chunks counted by their bytes. A message counts by its size up to a
	// quarter of the bound (messageCost), so one larger than that — a model
	// delta of megabytes, an edit's diff — is queued beside a backlog rather
	// than taken for an editor that does not read; an editor that does not
	// read fills the bound all the same, with at most four of them. One
	// message is always accepted into an empty outbox, however large.
	outboxMaxBytes = 8 << 20
	// writeTimeout bounds one write to the editor, and a reply's wait for
	// the notifications queued before it: an editor that reads nothing for
	// that long is disconnected.
	writeTimeout = 30 * time.Second
)

// textPiece bounds the text of one agent_message_chunk or
// agent_thought_chunk sent to an editor: a longer text (one huge model
// delta, or many merged while the editor was behind) goes out as several
// notifications, cut between characters. Editors take frames of a few MiB
// (hearth's own clients: rpc.DefaultMaxMessage).
const textPiece = 256 << 10

// messageCost is what a message (or a text delta) of size bytes counts
// against the outbox's byte bound.
func (c *clientConn) messageCost(size int) int { return min(size, c.maxBytes/4) }

// replayBudget is how much of the outbox a session/load replay fills before
// it waits for the editor to read: the rest is left to live updates.
func (c *clientConn) replayBudget() int { return c.maxBytes / 2 }

// clientConn is one editor connection: one accept(2) on the socket, or the
// stdio pair. Created by ServeConn; lives until the peer hangs up or the
// daemon closes. Its writer goroutine sends notifications in order; close
// waits for it.
type clientConn struct {
	d           *Daemon
	id          int
	rw          io.ReadWriteCloser
	stream      jsonrpc2.Stream // under conn: what afterReply hooks into, and writes at once (rpc.TryWrite)
	conn        jsonrpc2.Conn
	initialized atomic.Bool
	// The editor's clientCapabilities.fs, from its initialize: it serves
	// fs/read_text_file, fs/write_text_file (editor_files.go).
	fsRead, fsWrite atomic.Bool

	maxBytes     int           // outboxMaxBytes when accepted
	writeTimeout time.Duration // writeTimeout when accepted

	raw rawSocket // rw's socket, when it is one: writes without waiting (deadlineWriter.TryWrite)

	mu     sync.Mutex     // guards outbox, queued, peak, space, writing, finish
	outbox []notification // waiting for the writer, in order
	queued int            // what the outbox counts against maxBytes: the sum of its entries' cost
	peak   int            // the most queued was ever (tests read it)
	space  chan struct{}  // non-nil: closed when the writer takes a message (replay waits on it)
	// writing: a message is being written, by the writer or at once by
	// enqueue (sendNow); the other waits, so messages keep their order.
	writing bool
	finish  bool          // a message written at once was taken only in part: the writer finishes it
	wake    chan struct{} // signals the writer (cap 1)
	quit    chan struct{} // closed by shutdown: stops the writer
	ready   chan struct{} // closed once conn is set, or ServeConn gave up before
	once    sync.Once
	wg      sync.WaitGroup // the writer
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

// ServeConn serves one editor connection until it ends (Close ends it and
// waits for it, whoever called ServeConn). The framing (newline-delimited
// JSON, or Content-Length headers when the first line is one) is detected
// from the first line.
func (d *Daemon) ServeConn(rw io.ReadWriteCloser) {
	c := &clientConn{d: d, rw: rw, wake: make(chan struct{}, 1), quit: make(chan struct{}), ready: make(chan struct{}),
		maxBytes: outboxMaxBytes, writeTimeout: writeTimeout}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		rw.Close()
		return
	}
	d.nextClient++
	c.id = d.nextClient
	// Registered before the first byte arrives: a client that never sends
	// one is still closed (and waited for) by Close.
	d.clients[c] = struct{}{}
	d.wg.Add(1) // under d.mu with closed checked: Close's Wait sees it
	d.mu.Unlock()
	defer d.wg.Done()
	log := d.log.With("client", c.id)

	c.raw = rawSocketOf(rw)
	stream, framing, err := rpc.NewServerStream(deadlineWriter{rw, c}, maxEditorMessage)
	if err != nil {
		close(c.ready)
		log.Debug("connection ended before its first message", "err", err)
		rw.Close()
		d.mu.Lock()
		delete(d.clients, c)
		d.mu.Unlock()
		return
	}
	log.Debug("client connected", "framing", framing.String())
	c.conn, c.stream = jsonrpc2.NewConn(stream), stream
	close(c.ready)
	c.wg.Add(1)
	go c.write()
	c.conn.Go(d.ctx, d.mux(c).Handler())
	select {
	case <-c.conn.Done():
	case <-d.ctx.Done():
	}
	c.close()

	d.mu.Lock()
	delete(d.clients, c)
	d.mu.Unlock()
	d.detach(c)
	log.Debug("client disconnected", "err", c.conn.Err())
}

// deadlineWriter is an editor connection whose every write — a reply or a
// notification — disconnects the editor when it does not complete within
// writeTimeout (the editor stopped reading). Nothing else can wait for an
// editor longer than that.
type deadlineWriter struct {
	io.ReadWriteCloser
	c *clientConn
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	watchdog := time.AfterFunc(w.c.writeTimeout, func() {
		w.c.disconnect(fmt.Sprintf("editor read nothing for %s; disconnecting it", w.c.writeTimeout))
	})
	defer watchdog.Stop()
	return w.ReadWriteCloser.Write(p)
}

// write sends queued notifications in order (each write has the
// connection's deadline: deadlineWriter).
func (c *clientConn) write() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if c.finish && !c.writing {
			// The rest of a message sendNow began: before anything else.
			c.finish, c.writing = false, true
			c.mu.Unlock()
			err := rpc.Finish(c.stream)
			c.mu.Lock()
			c.writing = false
			c.mu.Unlock()
			if err != nil {
				c.shutdown()
				return
			}
			continue
		}
		if len(c.outbox) == 0 || c.writing {
			c.mu.Unlock()
			select {
			case <-c.wake:
				continue
			case <-c.quit:
				return
			}
		}
		n := c.outbox[0]
		c.outbox[0] = notification{}
		c.outbox = c.outbox[1:]
		c.queued -= n.cost
		if c.space != nil {
			close(c.space)
			c.space = nil
		}
		c.writing = n.flushed == nil
		c.mu.Unlock()
		if n.flushed != nil {
			close(n.flushed)
			continue
		}
		err := c.send(n)
		c.mu.Lock()
		c.writing = false
		c.mu.Unlock()
		if err != nil {
			c.shutdown()
			return
		}
	}
}

// enqueue adds n to the outbox without blocking the caller; a text chunk
// joins the chunk before it when that one is of the same session and still
// waiting. An editor whose outbox would outgrow its bounds (n counted by
// messageCost) is disconnected instead (and n dropped).
func (c *clientConn) enqueue(n notification) {
	select {
	case <-c.quit:
		return // disconnected: nothing will be written
	default:
	}
	c.mu.Lock()
	k := len(c.outbox)
	if k == 0 && !c.writing && !c.finish && n.chunkSession != "" && c.raw != nil && len(n.chunk) <= textPiece {
		c.sendNow(n) // unlocks
		return
	}
	merge := n.chunkSession != "" && k > 0 && c.outbox[k-1].chunkSession == n.chunkSession &&
		c.outbox[k-1].thought == n.thought
	grow := c.messageCost(n.size())
	if merge {
		grow = c.messageCost(len(n.chunk))
	}
	if c.queued > 0 && c.queued+grow > c.maxBytes {
		c.mu.Unlock()
		c.disconnect(fmt.Sprintf("editor not reading its updates (%d bytes queued); disconnecting it", c.queued))
		return
	}
	if !merge && k >= outboxLimit {
		c.mu.Unlock()
		c.disconnect(fmt.Sprintf("editor not reading its updates (%d messages queued); disconnecting it", k))
		return
	}
	c.queued += grow
	c.peak = max(c.peak, c.queued)
	if merge {
		c.outbox[k-1].chunk = append(c.outbox[k-1].chunk, n.chunk...)
		c.outbox[k-1].cost += grow
		c.mu.Unlock()
		return
	}
	n.cost = grow
	c.outbox = append(c.outbox, n)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// enqueueWithin queues n once the outbox holds less than budget bytes, so a
// producer that can wait (session/load's replay) never fills it. It fails
// when the editor is disconnected or ctx ends.
func (c *clientConn) enqueueWithin(ctx context.Context, n notification, budget int) error {
	for {
		c.mu.Lock()
		if c.queued == 0 || c.queued+c.messageCost(n.size()) <= budget {
			c.mu.Unlock()
			c.enqueue(n)
			return nil
		}
		if c.space == nil {
			c.space = make(chan struct{})
		}
		space := c.space
		c.mu.Unlock()
		select {
		case <-space:
		case <-c.quit:
			return errDisconnected
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// queuedBytes returns the payload bytes waiting in the outbox, and the most
// that ever waited.
func (c *clientConn) queuedBytes() (now, peak int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued, c.peak
}

// notify queues a notification.
func (c *clientConn) notify(method string, params json.RawMessage) {
	c.enqueue(notification{method: method, params: params})
}

// notifyText queues a text chunk of session's agent message, or of its
// thoughts.
func (c *clientConn) notifyText(session, text string, thought bool) {
	c.enqueue(notification{chunkSession: session, chunk: []byte(text), thought: thought})
}

// flush waits until every notification queued so far was written, so a
// reply sent after it cannot overtake them. An editor that has not read
// them within writeTimeout is disconnected: its reply would otherwise wait
// for a stranger.
func (c *clientConn) flush(ctx context.Context) error {
	done := make(chan struct{})
	c.enqueue(notification{flushed: done})
	timer := time.NewTimer(c.writeTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-c.quit:
		return errDisconnected
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		c.disconnect(fmt.Sprintf("editor did not read its updates within %s; disconnecting it", c.writeTimeout))
		return errDisconnected
	}
}

// errDisconnected: the editor was disconnected while the daemon waited on it.
var errDisconnected = errors.New("editor disconnected")

// disconnect logs why the editor is dropped and starts closing its
// connection. Its sessions, their turns and other editors go on.
func (c *clientConn) disconnect(why string) {
	select {
	case <-c.quit:
		return // already going
	default:
	}
	c.d.log.Warn(why, "client", c.id)
	c.shutdown()
}

// shutdown starts closing the connection without waiting: the reader
// fails on the closed stream and ServeConn finishes the job.
func (c *clientConn) shutdown() {
	c.once.Do(func() {
		close(c.quit)
		c.rw.Close()
	})
}

// close ends the connection and waits for its reader, handlers and writer.
func (c *clientConn) close() {
	c.shutdown()
	<-c.ready
	if c.conn != nil {
		<-c.conn.Done()
	}
	c.wg.Wait()
}

// call makes a server→client request (e.g. permission) with the caller's
// deadline.
func (c *clientConn) call(ctx context.Context, method string, params any, result any) error {
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}
