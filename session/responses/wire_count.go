package responses

import (
	"context"
	"net"
	"sync/atomic"
)

// countingConn counts the bytes that cross a model connection's TCP socket:
// what permessage-deflate (and TLS) actually put on the wire, for status
// and the benchmarks; its reads go through the connection's readGate. It
// lives as long as the net.Conn it wraps.
type countingConn struct {
	net.Conn
	sent, received *atomic.Int64
	gate           *readGate // nil: every read at once
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.gate.read(c.Conn, p)
	c.received.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.sent.Add(int64(n))
	return n, err
}

// countingDialer returns a NetDialContext for websocket.Dialer that dials
// with dial (nil: a net.Dialer), counts into sent and received, and reads
// through gate. gorilla runs TLS over the returned conn, so wss counts
// encrypted bytes.
func countingDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), sent, received *atomic.Int64, gate *readGate) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		gate.attach(conn)
		return countingConn{Conn: conn, sent: sent, received: received, gate: gate}, nil
	}
}
