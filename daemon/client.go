package daemon

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// outboxSize bounds the notifications queued for one editor. An editor
// that falls this far behind is disconnected rather than allowed to stall
// the turn that streams to it (and to every other attached editor).
const outboxSize = 1 << 14

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

	outbox chan notification
	quit   chan struct{} // closed by close: stops the writer
	once   sync.Once
	wg     sync.WaitGroup // the writer
}

type notification struct {
	method  string
	params  json.RawMessage
	flushed chan struct{} // non-nil: a marker, closed when reached
}

// ServeConn serves one editor connection until it ends. The framing
// (newline-delimited JSON or Content-Length headers) is detected from the
// first byte.
func (d *Daemon) ServeConn(rw io.ReadWriteCloser) {
	stream, framing, err := rpc.NewServerStream(rw, rpc.DefaultMaxMessage)
	if err != nil {
		d.log.Warn("connection refused", "err", err)
		rw.Close()
		return
	}
	c := &clientConn{d: d, rw: rw, outbox: make(chan notification, outboxSize), quit: make(chan struct{})}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		rw.Close()
		return
	}
	d.nextClient++
	c.id = d.nextClient
	d.clients[c] = struct{}{}
	d.mu.Unlock()
	log := d.log.With("client", c.id)
	log.Debug("client connected", "framing", framing.String())

	c.conn = jsonrpc2.NewConn(stream)
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
		select {
		case n := <-c.outbox:
			if n.flushed != nil {
				close(n.flushed)
				continue
			}
			if err := c.conn.Notify(c.d.ctx, n.method, n.params); err != nil {
				c.shutdown()
				return
			}
		case <-c.quit:
			return
		}
	}
}

// notify queues a notification without blocking the caller.
func (c *clientConn) notify(method string, params json.RawMessage) {
	select {
	case c.outbox <- notification{method: method, params: params}:
	case <-c.quit:
	default:
		c.d.log.Warn("editor not reading its updates; disconnecting it", "client", c.id)
		c.shutdown()
	}
}

// flush waits until every notification queued so far was written, so a
// reply sent after it cannot overtake them.
func (c *clientConn) flush(ctx context.Context) {
	done := make(chan struct{})
	select {
	case c.outbox <- notification{flushed: done}:
	case <-c.quit:
		return
	case <-ctx.Done():
		return
	}
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
