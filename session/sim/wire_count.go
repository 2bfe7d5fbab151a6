package sim

import "net"

// countingListener wraps the listener of Start and ListenAndServe so that every accepted
// connection counts its bytes into the Server's totals, before and after a WebSocket hijack.
type countingListener struct {
	net.Listener
	s *Server
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, s: l.s}, nil
}

// countingConn is one accepted TCP connection that counts the bytes read and written.
type countingConn struct {
	net.Conn
	s *Server
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.s.wireIn.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.s.wireOut.Add(int64(n))
	return n, err
}

// WireBytes is the number of bytes read from and written to every TCP connection the Server
// accepted on its own listener (Start, ListenAndServe), HTTP headers and WebSocket frames
// (compressed, when permessage-deflate was negotiated) included. A Server used only as an
// http.Handler counts nothing.
func (s *Server) WireBytes() (in, out int64) {
	return s.wireIn.Load(), s.wireOut.Load()
}
