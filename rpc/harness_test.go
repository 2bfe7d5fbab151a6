package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"
)

// testTimeout bounds every wait in these tests; nothing sleeps.
const testTimeout = 10 * time.Second

// served is one server-side connection under test.
type served struct {
	conn    jsonrpc2.Conn
	stream  *wireStream
	framing Framing
}

// serve runs the daemon side of one connection on c the way hearth's accept
// loop does (ServeConn): detect framing, wrap in a Conn, dispatch through mux. Detection
// blocks on the first byte, so it runs in the background; the returned
// function waits for it.
func serve(t testing.TB, c io.ReadWriteCloser, mux *Mux, maxMessage int) func() *served {
	t.Helper()
	ch := make(chan *served, 1)
	errc := make(chan error, 1)
	go func() {
		conn, stream, framing, err := serveConn(context.Background(), c, mux.Handler(), maxMessage)
		if err != nil {
			errc <- err
			return
		}
		ch <- &served{conn: conn, stream: stream, framing: framing}
	}()
	var got *served
	t.Cleanup(func() {
		_ = c.Close()
		if got == nil {
			select {
			case got = <-ch:
			case <-errc:
			case <-time.After(testTimeout):
				t.Error("server never started")
			}
		}
		if got != nil {
			closeWithin(t, got.conn.Close)
		}
	})
	return func() *served {
		t.Helper()
		if got != nil {
			return got
		}
		select {
		case got = <-ch:
			return got
		case err := <-errc:
			t.Fatalf("NewServerStream: %v", err)
		case <-time.After(testTimeout):
			t.Fatal("framing detection did not finish")
		}
		return nil
	}
}

// closeWithin runs a close function and fails the test if it hangs.
func closeWithin(t testing.TB, close func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(testTimeout):
		t.Error("close hung")
	}
}

// rawPeer drives a connection with raw bytes, the way a buggy editor would.
// Writes go through one goroutine (net.Pipe writes block until read) in order.
type rawPeer struct {
	t       testing.TB
	conn    net.Conn
	in      *bufio.Reader
	framing Framing
	writes  chan []byte
	werr    chan error
}

func newRawPeer(t testing.TB, conn net.Conn, framing Framing) *rawPeer {
	p := &rawPeer{
		t: t, conn: conn, in: bufio.NewReader(conn), framing: framing,
		writes: make(chan []byte, 64), werr: make(chan error, 1),
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case b := <-p.writes:
				if _, err := conn.Write(b); err != nil {
					p.werr <- err
					return
				}
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); _ = conn.Close() })
	return p
}

// raw queues bytes exactly as given.
func (p *rawPeer) raw(b string) { p.writes <- []byte(b) }

// frame queues body framed in the peer's framing.
func (p *rawPeer) frame(body string) {
	if p.framing == FramingHeader {
		p.raw("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		return
	}
	p.raw(body + "\n")
}

// wireReply is any message read back from the server.
type wireReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// recv reads one frame, with a deadline.
func (p *rawPeer) recv() wireReply {
	p.t.Helper()
	_ = p.conn.SetReadDeadline(time.Now().Add(testTimeout))
	var body []byte
	if p.framing == FramingHeader {
		body = p.readHeaderFrame()
	} else {
		line, err := p.in.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("read reply: %v", err)
		}
		body = line
	}
	var r wireReply
	if err := json.Unmarshal(body, &r); err != nil {
		p.t.Fatalf("reply %q is not JSON: %v", body, err)
	}
	if r.JSONRPC != "2.0" {
		p.t.Fatalf("reply %q lacks jsonrpc 2.0", body)
	}
	return r
}

func (p *rawPeer) readHeaderFrame() []byte {
	p.t.Helper()
	length := -1
	for {
		line, err := p.in.ReadString('\n')
		if err != nil {
			p.t.Fatalf("read header: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	if length < 0 {
		p.t.Fatal("reply without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(p.in, body); err != nil {
		p.t.Fatalf("read body: %v", err)
	}
	return body
}

// expectError reads a reply and checks its error code and id.
func (p *rawPeer) expectError(code jsonrpc2.Code, id string) wireReply {
	p.t.Helper()
	r := p.recv()
	if r.Error == nil {
		p.t.Fatalf("want error %d, got result %s (id %s)", code, r.Result, r.ID)
	}
	if r.Error.Code != int(code) {
		p.t.Fatalf("want code %d, got %d (%q)", code, r.Error.Code, r.Error.Message)
	}
	if gotID := string(r.ID); gotID != id {
		p.t.Fatalf("want id %s, got %s (%q)", id, gotID, r.Error.Message)
	}
	return r
}

// expectEcho sends an echo call with id and checks that it is answered: the
// connection is still serving.
func (p *rawPeer) expectEcho(id int) {
	p.t.Helper()
	p.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"n":%d}}`, id, id))
	r := p.recv()
	if r.Error != nil {
		p.t.Fatalf("echo %d: error %d %q", id, r.Error.Code, r.Error.Message)
	}
	if string(r.ID) != strconv.Itoa(id) || string(r.Result) != fmt.Sprintf(`{"n":%d}`, id) {
		p.t.Fatalf("echo %d: got id %s result %s", id, r.ID, r.Result)
	}
}

// testMux is the daemon stand-in: a Mux with methods that exercise each path.
type testMux struct {
	*Mux
	notes   chan string   // method names of notifications handled
	release chan struct{} // closed at cleanup: unblocks "block"
}

func newTestMux(t testing.TB) *testMux {
	m := &testMux{Mux: NewMux(nil), notes: make(chan string, 16), release: make(chan struct{})}
	t.Cleanup(func() { close(m.release) })
	m.Handle("echo", func(ctx context.Context, params json.RawMessage) (any, error) {
		return json.RawMessage(append([]byte(nil), params...)), nil
	})
	m.Handle("indented", func(ctx context.Context, params json.RawMessage) (any, error) {
		return json.RawMessage("{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}"), nil
	})
	m.Handle("panic", func(ctx context.Context, params json.RawMessage) (any, error) {
		panic("can't happen")
	})
	m.Handle("unknownSession", func(ctx context.Context, params json.RawMessage) (any, error) {
		return nil, fmt.Errorf("load: %w", UnknownSession("s-42"))
	})
	m.Handle(MethodSessionNew, func(ctx context.Context, params json.RawMessage) (any, error) {
		var req acp.NewSessionRequest
		if err := DecodeParams(params, &req); err != nil {
			return nil, err
		}
		return acp.NewSessionResponse{SessionId: "s-1"}, nil
	})
	m.HandleAsync("block", func(ctx context.Context, params json.RawMessage) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.release:
			return nil, ErrCancelled
		}
	})
	m.Handle("stream", func(ctx context.Context, params json.RawMessage) (any, error) {
		var p struct {
			Count int `json:"count"`
		}
		if err := DecodeParams(params, &p); err != nil {
			return nil, err
		}
		conn := ConnFromContext(ctx)
		for i := range p.Count {
			if err := Notify(ctx, conn, MethodSessionUpdate, map[string]int{"seq": i}); err != nil {
				return nil, err
			}
		}
		return map[string]int{"sent": p.Count}, nil
	})
	m.Notification("note/record", func(ctx context.Context, params json.RawMessage) {
		m.notes <- "note/record"
	})
	m.Notification("note/panic", func(ctx context.Context, params json.RawMessage) {
		panic("notification bug")
	})
	return m
}

// isClosedErr reports whether err is an expected end-of-connection error.
func isClosedErr(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, jsonrpc2.ErrClientClosing)
}
