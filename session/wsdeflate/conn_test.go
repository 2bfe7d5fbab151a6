package wsdeflate

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

const ioTimeout = 10 * time.Second

// counted counts the bytes a connection carries each way.
type counted struct {
	net.Conn
	in, out *atomic.Int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(int64(n))
	return n, err
}

func (c counted) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.Add(int64(n))
	return n, err
}

// echo is a test server: it answers the handshake under mode (plain
// gorilla compression with gorilla=true) and echoes every message.
func echo(t *testing.T, mode Mode, gorilla bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{EnableCompression: gorilla, ReadBufferSize: 4096}
		var rw http.ResponseWriter = w
		if !gorilla {
			var p *Params
			if got, ok := Accept(r.Header.Values("Sec-WebSocket-Extensions"), mode); ok {
				p = &got
			}
			rw = Hijacking(w, p, Options{})
		}
		ws, err := up.Upgrade(rw, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			mt, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if ws.WriteMessage(mt, data) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// client dials u through a Client Conn (plain gorilla with plain=true,
// compressing as gorilla does when compress is set) and counts its bytes.
type client struct {
	ws      *websocket.Conn
	conn    *Conn
	in, out atomic.Int64
}

func dialClient(t *testing.T, u string, plain, compress bool) *client {
	t.Helper()
	c := &client{}
	d := websocket.Dialer{HandshakeTimeout: ioTimeout, EnableCompression: plain && compress,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var nd net.Dialer
			raw, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			conn := net.Conn(counted{Conn: raw, in: &c.in, out: &c.out})
			if plain {
				return conn, nil
			}
			c.conn = Client(conn, Options{})
			return c.conn, nil
		}}
	ws, resp, err := d.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { ws.Close() })
	c.ws = ws
	return c
}

// request is a Responses-like create: kilobytes of settings repeated
// every time, and a part of its own.
func request(i int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"response.create","model":"m","tools":[`)
	for k := range 40 {
		fmt.Fprintf(&b, `{"type":"function","name":"tool_%d","description":"does thing %d to the workspace, carefully","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},`, k, k*7)
	}
	fmt.Fprintf(&b, `{}],"input":[{"type":"function_call_output","call_id":"call_%d","output":"result number %d"}]}`, i, i*i)
	return b.Bytes()
}

func roundTrips(t *testing.T, c *client, n int) {
	t.Helper()
	for i := range n {
		msg := request(i)
		c.ws.SetWriteDeadline(time.Now().Add(ioTimeout))
		if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		c.ws.SetReadDeadline(time.Now().Add(ioTimeout))
		_, got, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("message %d came back changed: %d bytes, want %d", i, len(got), len(msg))
		}
	}
}

// perMessage runs n round trips after a first one and returns the wire
// bytes each way per message.
func perMessage(t *testing.T, c *client, n int) (out, in int64) {
	roundTrips(t, c, 1)
	out0, in0 := c.out.Load(), c.in.Load()
	roundTrips(t, c, n)
	return (c.out.Load() - out0) / int64(n), (c.in.Load() - in0) / int64(n)
}

func TestTakeoverBothWays(t *testing.T) {
	c := dialClient(t, echo(t, Takeover, false), false, false)
	p, ok := c.conn.Negotiated()
	if !ok || p.ServerNoTakeover || p.ClientNoTakeover {
		t.Fatalf("negotiated %+v, %v; want takeover both ways", p, ok)
	}
	out, in := perMessage(t, c, 200)
	size := len(request(1))
	t.Logf("a %d-byte message: %d bytes sent, %d received per message", size, out, in)
	if out > int64(size)/20 || in > int64(size)/20 {
		t.Errorf("with takeover a repeated %d-byte message costs %d bytes out, %d in; want under %d", size, out, in, size/20)
	}
}

func TestServerRefusesTakeover(t *testing.T) {
	for _, gorilla := range []bool{false, true} {
		c := dialClient(t, echo(t, NoTakeover, gorilla), false, false)
		p, ok := c.conn.Negotiated()
		if !ok || !p.ServerNoTakeover || !p.ClientNoTakeover {
			t.Fatalf("gorilla server %v: negotiated %+v, %v; want no takeover either way", gorilla, p, ok)
		}
		out, in := perMessage(t, c, 20)
		size := len(request(1))
		if out > int64(size)/2 || in > int64(size)/2 || out < int64(size)/20 {
			t.Errorf("gorilla server %v: without takeover %d out, %d in for %d bytes: not compressed per message", gorilla, out, in, size)
		}
	}
}

func TestServerRefusesExtension(t *testing.T) {
	for _, gorilla := range []bool{false, true} {
		mode := Off
		c := dialClient(t, echo(t, mode, false), false, false)
		if gorilla { // gorilla's upgrader with compression off answers no extension
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				up := websocket.Upgrader{}
				ws, err := up.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				defer ws.Close()
				for {
					mt, data, err := ws.ReadMessage()
					if err != nil || ws.WriteMessage(mt, data) != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			c = dialClient(t, "ws"+strings.TrimPrefix(srv.URL, "http"), false, false)
		}
		if _, ok := c.conn.Negotiated(); ok {
			t.Fatalf("negotiated against a server without the extension")
		}
		out, in := perMessage(t, c, 5)
		if size := int64(len(request(1))); out < size || in < size {
			t.Errorf("uncompressed: %d out, %d in for %d bytes", out, in, size)
		}
	}
}

// The server's side with clients that negotiate without takeover or
// without the extension (gorilla's own client).
func TestPlainClients(t *testing.T) {
	for _, compress := range []bool{false, true} {
		c := dialClient(t, echo(t, Takeover, false), true, compress)
		out, _ := perMessage(t, c, 10)
		if size := int64(len(request(1))); compress == (out >= size) {
			t.Errorf("gorilla client compress=%v: %d bytes out for %d", compress, out, size)
		}
	}
}

func TestLargeMessage(t *testing.T) {
	c := dialClient(t, echo(t, Takeover, false), false, false)
	var b bytes.Buffer
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "line %d of a long answer, %x\n", i, i*2654435761)
	}
	msg := b.Bytes()
	for range 2 {
		c.ws.SetWriteDeadline(time.Now().Add(ioTimeout))
		if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
			t.Fatal(err)
		}
		c.ws.SetReadDeadline(time.Now().Add(ioTimeout))
		_, got, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("a %d-byte message came back as %d bytes, changed", len(msg), len(got))
		}
	}
	roundTrips(t, c, 3) // the window after a large message still agrees
}
