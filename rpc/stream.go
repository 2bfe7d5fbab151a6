package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// maxRetainedBuffer is the largest read or write buffer a stream keeps between
// frames. A bigger frame's buffer is dropped once the frame is done with, so
// one large message does not pin its size in memory for the connection's life.
const maxRetainedBuffer = 256 << 10

// errStreamClosed is returned by Read and Write once Close has been called. It
// wraps net.ErrClosed, which jsonrpc2 treats as a clean shutdown.
var errStreamClosed = fmt.Errorf("rpc: stream closed: %w", net.ErrClosed)

// wireStream is hearth's jsonrpc2.Stream: it reads frames in one framing,
// validates each before the library sees it, answers bad frames itself and
// keeps reading. One wireStream lives as long as its connection; Close ends
// both.
//
// Read is driven by a single goroutine (the connection's read loop) and owns
// in, buf and peakBuf. Write is safe for concurrent use.
type wireStream struct {
	conn    io.ReadWriteCloser
	in      *bufio.Reader
	framing Framing
	max     int // largest accepted frame body, in bytes

	// buf accumulates a frame that does not fit in the bufio window. A decoded
	// request borrows it until the next Read. Owned by the reading goroutine.
	buf []byte
	// peakBuf is the largest capacity buf ever had and bufCap its current
	// capacity: they show that an oversized frame was discarded rather than
	// buffered, and that a large buffer is not kept. Written by the reading
	// goroutine, readable from any.
	peakBuf atomic.Int64
	bufCap  atomic.Int64

	writeMu sync.Mutex // guards wbuf, hbuf and rest, and orders whole frames on conn
	wbuf    []byte     // compose buffer for the body
	hbuf    []byte     // compose buffer for header framing's header+body
	rest    []byte     // the part of a frame TryWrite began that the connection has yet to take

	// pending is a header line found inside a malformed one during header
	// resynchronisation; it is parsed before reading on. Owned by the reading
	// goroutine.
	pending []byte

	// readDone is closed when Read has failed for good (hang-up, Close): the
	// peer can no longer send, so work on its behalf can stop.
	readDone     chan struct{}
	readDoneOnce sync.Once

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// after holds what runs once the reply to a call is written, keyed by
	// the context its handler was given (AfterReply); afterN counts it,
	// so that other writes skip the lock.
	afterMu sync.Mutex
	after   map[context.Context]func()
	afterN  atomic.Int32
}

func newWireStream(conn io.ReadWriteCloser, in *bufio.Reader, framing Framing, max int) *wireStream {
	return &wireStream{conn: conn, in: in, framing: framing, max: max, readDone: make(chan struct{})}
}

// endRead records that the read side is finished.
func (s *wireStream) endRead() {
	s.readDoneOnce.Do(func() { close(s.readDone) })
}

// rejection is a frame the stream answers itself instead of passing it on.
type rejection struct {
	id      jsonrpc2.ID // zero (null) unless recoverable from a request
	code    jsonrpc2.Code
	message string
}

// readResult is what one framing reader produced: a frame body, or a rejection
// to answer, or (err) a condition that ends the stream.
type readResult struct {
	body   []byte
	n      int64 // wire bytes, framing included
	reject *rejection
	skip   bool // input was skipped and already answered: read on
}

// Read returns the next valid message. Invalid frames are answered with a
// JSON-RPC error response and skipped. A returned request borrows the stream's
// buffers until the next Read.
func (s *wireStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if s.closed.Load() {
			s.endRead()
			return nil, 0, errStreamClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		s.releaseReadBuffer()

		var (
			r   readResult
			err error
		)
		if s.framing == FramingHeader {
			r, err = s.readHeaderFrame()
		} else {
			r, err = s.readLine()
		}
		if err != nil {
			s.endRead()
			if s.closed.Load() {
				return nil, 0, errStreamClosed
			}
			return nil, 0, err
		}
		if r.skip {
			continue
		}
		if r.reject == nil {
			msg, rej := decodeFrame(r.body)
			if rej == nil {
				return msg, r.n, nil
			}
			r.reject = rej
		}
		if err := s.answer(r.reject); err != nil {
			s.endRead()
			return nil, 0, err
		}
	}
}

// answer writes the error response for a rejected frame.
func (s *wireStream) answer(rej *rejection) error {
	resp := jsonrpc2.NewResponse(rej.id, nil, jsonrpc2.NewError(rej.code, rej.message))
	if _, err := s.Write(context.Background(), resp); err != nil {
		return fmt.Errorf("rpc: answer rejected frame: %w", err)
	}
	return nil
}

// tooLarge is the rejection for a frame of n bytes over the limit.
func (s *wireStream) tooLarge(n int64) *rejection {
	return &rejection{
		code:    jsonrpc2.InvalidRequest,
		message: fmt.Sprintf("message too large (%d bytes, limit %d)", n, s.max),
	}
}

// releaseReadBuffer drops a large read buffer left by the previous frame,
// whose borrow ended with this Read.
func (s *wireStream) releaseReadBuffer() {
	if cap(s.buf) > maxRetainedBuffer {
		s.buf = nil
		s.bufCap.Store(0)
	}
}

// growBuffer returns s.buf resliced to length n (n <= s.max), growing it by
// doubling but never beyond s.max, and keeps its first keep bytes.
func (s *wireStream) growBuffer(n, keep int) []byte {
	if n <= cap(s.buf) {
		return s.buf[:n]
	}
	c := max(2*cap(s.buf), n, 4096)
	c = min(c, max(s.max, n))
	nb := make([]byte, n, c)
	copy(nb, s.buf[:keep])
	s.buf = nb
	s.bufCap.Store(int64(c))
	if int64(c) > s.peakBuf.Load() {
		s.peakBuf.Store(int64(c))
	}
	return nb
}

// Write frames msg and writes it with one conn.Write. Concurrent writers are
// serialized, so frames never interleave. Once a reply is written, what
// AfterReply arranged for its call runs.
func (s *wireStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	n, err := s.writeFrame(ctx, msg)
	s.afterWrite(ctx, err)
	return n, err
}

func (s *wireStream) writeFrame(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return 0, errStreamClosed
	}
	if err := s.finishLocked(); err != nil {
		return 0, err
	}
	frame, err := s.frame(msg)
	if err != nil {
		return 0, err
	}
	n, err := s.conn.Write(frame)
	s.release()
	if err != nil {
		if s.closed.Load() {
			return int64(n), errStreamClosed
		}
		return int64(n), fmt.Errorf("rpc: write: %w", err)
	}
	return int64(n), nil
}

// frame encodes msg in the stream's framing, in its compose buffers. Called
// with writeMu held.
func (s *wireStream) frame(msg jsonrpc2.Message) ([]byte, error) {
	body := jsonrpc2.AppendMessage(s.wbuf[:0], msg)
	if len(body) == 0 {
		return nil, fmt.Errorf("rpc: write: cannot encode message of type %T", msg)
	}
	if !utf8.Valid(body) {
		// A stand-in id (not UTF-8, by design) is the answer to a request
		// whose id was null: it goes back as null.
		body = restoreNullID(body)
		// JSON text is UTF-8 (RFC 8259 §8.1). Other bytes that are not can
		// only sit inside strings (an error message quoting what a peer
		// sent, a handler's text): replace them rather than send invalid
		// JSON.
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
	}
	var frame []byte
	if s.framing == FramingHeader {
		frame = append(s.hbuf[:0], "Content-Length: "...)
		frame = strconv.AppendInt(frame, int64(len(body)), 10)
		frame = append(frame, "\r\n\r\n"...)
		frame = append(frame, body...)
		s.hbuf = frame
	} else {
		if bytes.IndexByte(body, '\n') >= 0 {
			// A pre-encoded payload with a raw newline would split the frame:
			// compact it (JSON strings cannot hold raw newlines, so only
			// insignificant whitespace goes).
			var compact bytes.Buffer
			if err := json.Compact(&compact, body); err != nil {
				return nil, fmt.Errorf("rpc: write: payload is not valid JSON: %w", err)
			}
			body = append(body[:0], compact.Bytes()...)
		}
		frame = append(body, '\n')
	}
	s.wbuf = body
	return frame, nil
}

// release drops compose buffers a big frame grew. Called with writeMu held.
func (s *wireStream) release() {
	if cap(s.wbuf) > maxRetainedBuffer {
		s.wbuf = nil
	}
	if cap(s.hbuf) > maxRetainedBuffer {
		s.hbuf = nil
	}
}

// TryWriter is a connection that can write without waiting (the daemon's
// editor sockets). TryWrite writes what the connection takes at once and
// returns how much, 0 when it would wait; ok is false when it cannot try.
type TryWriter interface {
	TryWrite(p []byte) (n int, ok bool, err error)
}

// TryWrite writes msg on st at once when st is idle and its connection (a
// TryWriter) takes the frame without waiting, so that a caller that must
// not wait (a model connection's reader relaying text) needs no goroutine
// to write for it. written is false when nothing was written: the caller
// sends msg the ordinary way. pending is true when the connection took
// only part of the frame: the next write on st, or Finish, writes the
// rest first, waiting as writes do.
func TryWrite(st jsonrpc2.Stream, msg jsonrpc2.Message) (written, pending bool, err error) {
	s, ok := st.(*wireStream)
	if !ok {
		return false, false, nil
	}
	tw, ok := s.conn.(TryWriter)
	if !ok || !s.writeMu.TryLock() {
		return false, false, nil
	}
	defer s.writeMu.Unlock()
	if s.closed.Load() || len(s.rest) > 0 {
		return false, false, nil
	}
	frame, err := s.frame(msg)
	if err != nil {
		return false, false, err
	}
	n, ok, err := tw.TryWrite(frame)
	switch {
	case err != nil:
		return n > 0, false, fmt.Errorf("rpc: write: %w", err)
	case !ok || n == 0:
		return false, false, nil
	case n < len(frame):
		s.rest = append(s.rest[:0], frame[n:]...)
	}
	s.release()
	return true, len(s.rest) > 0, nil
}

// Finish writes what TryWrite left of a frame on st, if anything.
func Finish(st jsonrpc2.Stream) error {
	s, ok := st.(*wireStream)
	if !ok {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.finishLocked()
}

// finishLocked writes the rest of a frame TryWrite began. Called with
// writeMu held.
func (s *wireStream) finishLocked() error {
	if len(s.rest) == 0 {
		return nil
	}
	_, err := s.conn.Write(s.rest)
	s.rest = s.rest[:0]
	if cap(s.rest) > maxRetainedBuffer {
		s.rest = nil
	}
	if err != nil {
		if s.closed.Load() {
			return errStreamClosed
		}
		return fmt.Errorf("rpc: write: %w", err)
	}
	return nil
}

// responseIDPrefix is how jsonrpc2 starts every response it encodes, up to
// the id.
const responseIDPrefix = `{"jsonrpc":"2.0","id":`

// restoreNullID rewrites the encoded response body in place if its id is a
// null stand-in (decodeFrame): the reply to a request with "id": null
// carries null. The conn encodes responses from its own unexported type, so
// the id is rewritten in the encoding rather than in the message.
func restoreNullID(body []byte) []byte {
	start := len(responseIDPrefix)
	if !bytes.HasPrefix(body, []byte(responseIDPrefix)) || !bytes.HasPrefix(body[start:], []byte(`"`+nullStandInPrefix)) {
		return body
	}
	end := bytes.IndexByte(body[start+1:], '"')
	if end < 0 {
		return body
	}
	end += start + 2 // past the closing quote
	n := copy(body[start:], "null")
	n += copy(body[start+n:], body[end:])
	return body[:start+n]
}

// Close closes the underlying connection, which unblocks a pending Read. It
// is idempotent and returns the first close's error every time.
func (s *wireStream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.endRead()
		if err := s.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("rpc: close: %w", err)
		}
	})
	return s.closeErr
}
