package daemon

import (
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

// clientConn is one editor connection: one accept(2) on the socket, or the
// stdio pair. Created by ServeConn; lives until the peer hangs up or the
// daemon closes. Its outbox's writer goroutine sends notifications in
// order; close waits for it.
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
	// asksOnWrite: the client asks its user before every fs/write_text_file
	// (clientsAskingOnWrite), so that question is the one a change gets.
	asksOnWrite atomic.Bool
	// caps: the session capabilities of ACP 1.34 it advertised (client_caps.go).
	caps clientCaps

	writeTimeout time.Duration // writeTimeout when accepted

	raw rawSocket // rw's socket, when it is one: writes without waiting (deadlineWriter.TryWrite)

	out   *outbox       // the notifications queued for the editor, and their writer
	quit  chan struct{} // closed by shutdown: stops the writer
	ready chan struct{} // closed once conn is set, or ServeConn gave up before
	once  sync.Once
}

// ServeConn serves one editor connection until it ends (Close ends it and
// waits for it, whoever called ServeConn). The framing (newline-delimited
// JSON, or Content-Length headers when the first line is one) is detected
// from the first line.
func (d *Daemon) ServeConn(rw io.ReadWriteCloser) {
	c := &clientConn{d: d, rw: rw, quit: make(chan struct{}), ready: make(chan struct{}), writeTimeout: writeTimeout}
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
	c.out = &outbox{ctx: d.ctx, conn: c.conn, stream: stream, direct: c.raw != nil, quit: c.quit,
		disconnect: c.disconnect, shutdown: c.shutdown, maxBytes: outboxMaxBytes, writeTimeout: c.writeTimeout,
		wake: make(chan struct{}, 1)}
	close(c.ready)
	c.out.start()
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
	if c.out != nil {
		c.out.wait()
	}
}
