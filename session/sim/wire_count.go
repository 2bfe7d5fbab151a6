package sim

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// wireConns follows the TCP connections accepted on the Server's own listener (Start,
// ListenAndServe): the bytes they carry, for WireBytes, and those neither closed nor hijacked,
// for Close to wait on. One per Server; it lives as long as the Server. A Server used only as an
// http.Handler leaves it at zero.
type wireConns struct {
	in   atomic.Int64   // bytes read from the connections
	out  atomic.Int64   // bytes written to them
	open sync.WaitGroup // connections neither closed nor hijacked
}

// listener wraps ln so that every connection it accepts counts its bytes here.
func (w *wireConns) listener(ln net.Listener) net.Listener {
	return countingListener{Listener: ln, w: w}
}

// connState is the http.Server's ConnState hook: it counts the open connections so that Close
// can wait for their goroutines.
func (w *wireConns) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		w.open.Add(1)
	case http.StateHijacked, http.StateClosed:
		w.open.Done()
	}
}

// wait returns once every connection is closed or hijacked. Only after the listener's Serve
// has returned: no connection starts after that.
func (w *wireConns) wait() { w.open.Wait() }

// countingListener makes every accepted connection count its bytes into a wireConns, before
// and after a WebSocket hijack.
type countingListener struct {
	net.Listener
	w *wireConns
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, w: l.w}, nil
}

// countingConn is one accepted TCP connection that counts the bytes read and written, its own
// and the Server's.
type countingConn struct {
	net.Conn
	w       *wireConns
	in, out atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.in.Add(int64(n))
	c.in.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.w.out.Add(int64(n))
	c.out.Add(int64(n))
	return n, err
}

// wireMark is where a WebSocket connection's byte counts stood when its last request was answered.
type wireMark struct {
	c       *countingConn
	in, out int64
}

// countWire makes the records of WebSocket connection n carry the bytes its TCP connection c
// carried since the connection's previous answer (Received.WireIn, WireOut); nil c stops it.
func (l *recorder) countWire(n int, c *countingConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c == nil {
		delete(l.wire, n)
		return
	}
	if l.wire == nil {
		l.wire = map[int]*wireMark{}
	}
	l.wire[n] = &wireMark{c: c}
}

// markWireLocked fills r's wire bytes from its connection's counts.
func (l *recorder) markWireLocked(r *Received) {
	m := l.wire[r.Conn]
	if m == nil || r.Transport != "ws" {
		return
	}
	in, out := m.c.in.Load(), m.c.out.Load()
	r.WireIn, r.WireOut = in-m.in, out-m.out
	m.in, m.out = in, out
}

// WireBytes is the number of bytes read from and written to every TCP connection the Server
// accepted on its own listener (Start, ListenAndServe), HTTP headers and WebSocket frames
// (compressed, when permessage-deflate was negotiated) included. A Server used only as an
// http.Handler counts nothing.
func (s *Server) WireBytes() (in, out int64) {
	return s.wire.in.Load(), s.wire.out.Load()
}
