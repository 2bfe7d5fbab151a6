package sim

import (
	"errors"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// handlePings counts the client's pings and answers them with a pong, unless
// Options.IgnorePings. Gorilla calls the handler from inside the reader loop's ReadMessage.
func (c *wsConn) handlePings() {
	c.conn.SetPingHandler(func(data string) error {
		c.s.records.ping()
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
