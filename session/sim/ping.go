package sim

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// handlePings counts the client's pings and answers them with a pong, unless
// Options.IgnorePings. Gorilla calls the handler from inside the reader loop's ReadMessage.
func (c *wsConn) handlePings() {
	c.conn.SetPingHandler(func(data string) error {
		c.s.pingsReceived.Add(1)
		c.s.signal()
		if c.s.opts.IgnorePings {
			return nil
		}
		err := c.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(c.s.opts.writeTimeout()))
		var ne net.Error
		if errors.Is(err, websocket.ErrCloseSent) || errors.As(err, &ne) {
			return nil // as gorilla's default handler: a failed pong is not a read error
		}
		return err
	})
}

// pingLoop sends a ping every Options.PingInterval until the connection ends. It is started
// by serve and owned by the connection's WaitGroup.
func (c *wsConn) pingLoop(every time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if c.closing.Load() {
			return
		}
		if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.s.opts.writeTimeout())); err != nil {
			return
		}
	}
}

// PingsReceived is the number of pings clients sent on the Server's WebSocket connections.
func (s *Server) PingsReceived() int { return int(s.pingsReceived.Load()) }

// WaitPings waits until clients have sent at least n pings, or ctx ends.
func (s *Server) WaitPings(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if s.PingsReceived() >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
