package sim

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestServerPings(t *testing.T) {
	_, base := newSim(t, Options{PingInterval: 5 * time.Millisecond})
	c := dial(t, base)
	pings := make(chan struct{}, 16)
	c.conn.SetPingHandler(func(string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	readerDone := make(chan struct{})
	go func() { // control frames are handled while reading
		defer close(readerDone)
		for {
			if _, _, err := c.conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	timeout := time.After(ioTimeout)
	for n := 0; n < 3; n++ {
		select {
		case <-pings:
		case <-timeout:
			t.Fatalf("%d server pings within %v, want 3", n, ioTimeout)
		}
	}
	c.conn.Close()
	<-readerDone
}

// The pong to a client ping precedes the events of a create sent after it; with IgnorePings
// no pong comes at all. Either way the server counts the ping.
func TestIgnorePings(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		srv, base := newSim(t, Options{IgnorePings: ignore})
		c := dial(t, base)
		pong := make(chan struct{}, 1)
		c.conn.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
		if err := c.conn.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(ioTimeout)); err != nil {
			t.Fatal(err)
		}
		completed(t, c.create(map[string]any{"input": "x"}))
		got := false
		select {
		case <-pong:
			got = true
		default:
		}
		if got == ignore || srv.PingsReceived() != 1 {
			t.Fatalf("ignore=%v: pong %v, pings received %d", ignore, got, srv.PingsReceived())
		}
	}
}
