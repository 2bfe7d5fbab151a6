package responses

import (
	"context"
	"net"
	"sync/atomic"
)

// countingConn counts the bytes that cross a model connection's TCP socket:
// what permessage-deflate (and TLS) actually put on the wire, for status
// and the benchmarks. It lives as long as the net.Conn it wraps.
type countingConn struct {
	net.Conn
	sent, received *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.received.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.sent.Add(int64(n))
	return n, err
}

// countingDialer returns a NetDialContext for websocket.Dialer that counts
// into sent and received. gorilla runs TLS over the returned conn, so wss
// counts encrypted bytes.
func countingDialer(sent, received *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, sent: sent, received: received}, nil
	}
}
