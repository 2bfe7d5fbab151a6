package responses

import (
	"math"
	"net"
	"time"
)

// readGate batches a WebSocket's reads while the server streams an
// answer. A model streams a text delta every millisecond or so, each in a
// frame of its own; handing each on as it arrives costs the process a
// wake-up chain per delta (the reader, the editor's writer, the runtime's
// idle threads) whose CPU dwarfs the bytes. So once the reader has routed
// a text delta that came at a model's pace (Stream.paced), its next read
// of the socket waits until window after the first delta of that batch
// (shorter when several streams share the batch: batchWindow), then takes
// everything that arrived meanwhile; the streams it fed are
// handed their events once per batch, before any read, so nothing waits
// behind a read that blocks. A delta waits at most window, and so does
// what follows the last one of an answer (its done events, the end of the
// response). Other events — the first delta, a burst read at once, calls
// and their arguments, reasoning summaries, which come before the rest of
// a response — never start a wait. A read that filled its buffer means
// more is waiting: the next one does not wait.
//
// While it waits, the socket's receive low-water mark (sock) is raised, so
// that the deltas arriving meanwhile do not wake the process either; it
// stays raised while reads find data, and comes down before a read that
// would block.
//
// A readGate belongs to one connection and is used only by the goroutine
// reading it (the dial's handshake, then the connection's reader).
type readGate struct {
	window time.Duration
	flush  func() // hands on what was read since the last read; nil until the reader starts
	sock   socket // the TCP socket under TLS and WebSocket framing; nil when not one

	armed   bool      // a delta was routed since the last read
	began   time.Time // when the first of them was routed
	streams int       // the streams whose paced deltas the batch holds
	due     time.Time // when the batch is due (batchWindow)
	full    bool      // the last read filled its buffer
	timer   *time.Timer
}

// socket is the system socket under a connection (gate_unix.go).
type socket interface {
	// read reads what is there; with the low-water mark raised, it lowers
	// it before it waits for data.
	read(p []byte) (int, error)
	// hold raises the low-water mark: data no longer wakes a reader.
	hold()
}

func newReadGate(window time.Duration) *readGate { return &readGate{window: window} }

// attach gives the gate the connection's socket.
func (g *readGate) attach(conn net.Conn) {
	if g != nil && g.window > 0 {
		g.sock = sockOf(conn)
	}
}

// delta notes that the reader routed a paced delta of a stream (once a
// batch per stream: its first one): the next read waits for the batch.
func (g *readGate) delta() {
	if g == nil || g.window <= 0 {
		return
	}
	if !g.armed {
		g.armed, g.began, g.streams = true, time.Now(), 0
	}
	g.streams++
	g.due = g.began.Add(batchWindow(g.window, g.streams))
}

// batchWindow is how long a batch of n streams' deltas gathers: window
// for one, shorter for more, as a batch's wake-up is then shared by n
// streams' deltas while the work of handing them on grows with n and
// delays the last stream's (measured in docs/BENCHMARKS.md: eight streams
// in windows of 12 ms had a p99 delay of 22 ms, in 6 ms, 12 ms). window
// over the square root of n, at least a third of window.
func batchWindow(window time.Duration, n int) time.Duration {
	if n <= 1 {
		return window
	}
	return max(time.Duration(float64(window)/math.Sqrt(float64(n))), window/3)
}

// read reads conn through the gate: it hands on the batch read so far,
// then waits for the next one when a delta began it.
func (g *readGate) read(conn net.Conn, p []byte) (int, error) {
	if g == nil {
		return conn.Read(p)
	}
	if g.flush != nil {
		g.flush()
	}
	// A read that filled its buffer left more to read: the batch goes on
	// gathering streams until the reader has caught up.
	if !g.full {
		g.pause()
	}
	var n int
	var err error
	if g.sock != nil {
		n, err = g.sock.read(p)
	} else {
		n, err = conn.Read(p)
	}
	g.full = n == len(p)
	return n, err
}

// pause waits for the batch a delta began, if one did: called before a
// read that would wait for data anyway.
func (g *readGate) pause() {
	if g == nil || !g.armed {
		return
	}
	g.armed = false
	if wait := time.Until(g.due); wait > 0 {
		g.sleep(wait)
	}
}

// sleep waits d with the socket held. A socket closed meanwhile fails the
// read that follows: a close waits at most window for the reader.
func (g *readGate) sleep(d time.Duration) {
	if g.sock != nil {
		g.sock.hold()
	}
	if g.timer == nil {
		g.timer = time.NewTimer(d)
	} else {
		g.timer.Reset(d)
	}
	<-g.timer.C
}
