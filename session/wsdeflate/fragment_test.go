package wsdeflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// rawServer answers one handshake by hand with ext (nothing when "") and
// then runs script on the connection.
func rawServer(t *testing.T, ext string, script func(conn net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(ioTimeout))
		br := bufio.NewReader(conn)
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Errorf("server: %v", err)
			return
		}
		if got := req.Header.Get("Sec-WebSocket-Extensions"); got != Offer {
			t.Errorf("the client offered %q, want %q", got, Offer)
		}
		h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(h[:]) + "\r\n"
		if ext != "" {
			resp += "Sec-WebSocket-Extensions: " + ext + "\r\n"
		}
		if _, err := io.WriteString(conn, resp+"\r\n"); err != nil {
			return
		}
		script(conn, br)
	}()
	return "ws://" + ln.Addr().String() + "/"
}

// deflater compresses messages as a server with takeover does.
type deflater struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

func (d *deflater) message(t *testing.T, msg []byte) []byte {
	if d.fw == nil {
		d.fw, _ = flate.NewWriter(&d.buf, flate.DefaultCompression)
	}
	d.buf.Reset()
	d.fw.Write(msg)
	if err := d.fw.Flush(); err != nil {
		t.Fatal(err)
	}
	b := d.buf.Bytes()
	return append([]byte(nil), b[:len(b)-4]...)
}

func frame(fin bool, rsv, op byte, payload []byte) []byte {
	return append(appendHeader(nil, header{fin: fin, rsv: rsv, op: op, length: int64(len(payload))}), payload...)
}

// readClientFrame reads one masked frame from the client and unmasks it.
func readClientFrame(t *testing.T, br *bufio.Reader) (header, []byte) {
	h, _, err := readHeader(br)
	if err != nil {
		t.Errorf("server read: %v", err)
		return header{}, nil
	}
	p := make([]byte, h.length)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Errorf("server read: %v", err)
	}
	if !h.masked {
		t.Errorf("a client frame unmasked")
	}
	mask(h.key, 0, p)
	return h, p
}

// A compressed message the server splits into frames, with control frames
// between them, arrives whole; the second message refers back into the
// first (takeover); the client's pong and its own compressed message go out
// masked, RSV1 on the first frame only.
func TestServerFragments(t *testing.T) {
	first := []byte(strings.Repeat(`{"type":"response.output_text.delta","delta":"fox"}`, 100))
	second := []byte(strings.Repeat(`{"type":"response.output_text.delta","delta":"fox"}`, 3) + "end")
	got := make(chan []byte, 1)
	u := rawServer(t, "permessage-deflate", func(conn net.Conn, br *bufio.Reader) {
		var d deflater
		c1 := d.message(t, first)
		third := len(c1) / 3
		var w bytes.Buffer
		w.Write(frame(false, rsv1Bit, opText, c1[:third]))
		w.Write(frame(true, 0, websocket.PingMessage, []byte("p1")))
		w.Write(frame(false, 0, opContinuation, c1[third:2*third]))
		w.Write(frame(true, 0, websocket.PingMessage, []byte("p2")))
		w.Write(frame(true, 0, opContinuation, c1[2*third:]))
		c2 := d.message(t, second)
		if len(c2) > len(second)/3 {
			t.Errorf("the second message compressed to %d bytes: no takeover in the test's deflater", len(c2))
		}
		w.Write(frame(true, rsv1Bit, opText, c2))
		conn.Write(w.Bytes())
		for _, want := range []string{"p1", "p2"} {
			h, p := readClientFrame(t, br)
			if h.op != websocket.PongMessage || string(p) != want || h.rsv != 0 {
				t.Errorf("want pong %q, got op %d rsv %x %q", want, h.op, h.rsv, p)
			}
		}
		var msg []byte
		var inf bytes.Buffer
		for i := 0; ; i++ {
			h, p := readClientFrame(t, br)
			if h.rsv != 0 && (i > 0 || h.rsv != rsv1Bit) {
				t.Errorf("client frame %d: rsv %x", i, h.rsv)
			}
			msg = append(msg, p...)
			if h.fin || t.Failed() {
				break
			}
		}
		fr := flate.NewReader(io.MultiReader(bytes.NewReader(msg), bytes.NewReader(tail)))
		io.Copy(&inf, fr)
		got <- inf.Bytes()
	})
	c := dialClient(t, u, false, false)
	pongs := 0
	c.ws.SetPingHandler(func(data string) error {
		pongs++
		return c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(ioTimeout))
	})
	for _, want := range [][]byte{first, second} {
		c.ws.SetReadDeadline(time.Now().Add(ioTimeout))
		_, msg, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(msg, want) {
			t.Fatalf("got %q, want %q", msg, want)
		}
	}
	if pongs != 2 {
		t.Errorf("%d pings answered, want 2", pongs)
	}
	out := request(7)
	if err := c.ws.WriteMessage(websocket.TextMessage, out); err != nil {
		t.Fatal(err)
	}
	if msg := <-got; !bytes.Equal(msg, out) {
		t.Errorf("the server inflated %d bytes, want the %d sent", len(msg), len(out))
	}
}

// An answer the RFC makes the client refuse fails the dial.
func TestBadAnswerFails(t *testing.T) {
	for _, ext := range []string{"permessage-deflate; x_unknown", "permessage-deflate, permessage-deflate", "permessage-deflate; server_max_window_bits=99"} {
		u := rawServer(t, ext, func(net.Conn, *bufio.Reader) {})
		d := websocket.Dialer{HandshakeTimeout: ioTimeout, NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var nd net.Dialer
			raw, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return Client(raw, Options{}), nil
		}}
		if ws, _, err := d.Dial(u, nil); err == nil {
			ws.Close()
			t.Errorf("answer %q: the dial succeeded", ext)
		}
	}
}

// A refused handshake's body reaches gorilla as it came.
func TestRefusedHandshake(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no key", http.StatusUnauthorized)
	}))
	defer srv.Close()
	d := websocket.Dialer{HandshakeTimeout: ioTimeout, NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nd net.Dialer
		raw, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Client(raw, Options{}), nil
	}}
	_, resp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %v, %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "no key") {
		t.Errorf("body %q", body)
	}
}
