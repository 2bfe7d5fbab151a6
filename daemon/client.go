package daemon

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// outboxLimit bounds the notifications queued for one editor. Consecutive
// text chunks of a session merge while they wait, so a fast model only
// grows the queue by its tool-call updates; an editor that still falls this
// far behind is disconnected rather than allowed to stall the turn that
// streams to it (and to every other attached editor).
const outboxLimit = 1 << 14

// clientConn is one editor connection: one accept(2) on the socket, or the
// stdio pair. Created by ServeConn; lives until the peer hangs up or the
// daemon closes. Its writer goroutine sends notifications in order; close
// waits for it.
type clientConn struct {
	d           *Daemon
	id          int
	rw          io.ReadWriteCloser
	conn        jsonrpc2.Conn
	initialized atomic.Bool

	mu     sync.Mutex     // guards outbox
	outbox []notification // waiting for the writer, in order
	wake   chan struct{}  // signals the writer (cap 1)
	quit   chan struct{}  // closed by shutdown: stops the writer
	ready  chan struct{}  // closed once conn is set, or ServeConn gave up before
	once   sync.Once
	wg     sync.WaitGroup // the writer
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
}

func (n notification) encode() (string, json.RawMessage) {
	if n.chunkSession == "" {
		return n.method, n.params
	}
	u := acp.UpdateAgentMessageText(string(n.chunk))
	if n.thought {
		u = acp.UpdateAgentThoughtText(string(n.chunk))
	}
	b, _ := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(n.chunkSession), Update: u})
	return rpc.MethodSessionUpdate, b
}

// ServeConn serves one editor connection until it ends (Close ends it and
// waits for it, whoever called ServeConn). The framing (newline-delimited
// JSON or Content-Length headers) is detected from the first byte.
func (d *Daemon) ServeConn(rw io.ReadWriteCloser) {
	c := &clientConn{d: d, rw: rw, wake: make(chan struct{}, 1), quit: make(chan struct{}), ready: make(chan struct{})}
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

	stream, framing, err := rpc.NewServerStream(rw, rpc.DefaultMaxMessage)
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
	c.conn = jsonrpc2.NewConn(stream)
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

// write sends queued notifications in order.
func (c *clientConn) write() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if len(c.outbox) == 0 {
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
		c.mu.Unlock()
		if n.flushed != nil {
			close(n.flushed)
			continue
		}
		method, params := n.encode()
		if err := c.conn.Notify(c.d.ctx, method, params); err != nil {
			c.shutdown()
			return
		}
	}
}

// enqueue adds n to the outbox without blocking the caller; a text chunk
// joins the chunk before it when that one is of the same session and still
// waiting.
func (c *clientConn) enqueue(n notification) {
	c.mu.Lock()
	if k := len(c.outbox); n.chunkSession != "" && k > 0 && c.outbox[k-1].chunkSession == n.chunkSession &&
		c.outbox[k-1].thought == n.thought {
		c.outbox[k-1].chunk = append(c.outbox[k-1].chunk, n.chunk...)
		c.mu.Unlock()
		return
	}
	if len(c.outbox) >= outboxLimit {
		c.mu.Unlock()
		c.d.log.Warn("editor not reading its updates; disconnecting it", "client", c.id)
		c.shutdown()
		return
	}
	c.outbox = append(c.outbox, n)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
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
// reply sent after it cannot overtake them.
func (c *clientConn) flush(ctx context.Context) {
	done := make(chan struct{})
	c.enqueue(notification{flushed: done})
	select {
	case <-done:
	case <-c.quit:
	case <-ctx.Done():
	}
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
