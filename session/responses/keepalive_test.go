package responses

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// slowConn reads at most 1 KiB at a time, each read after a pause: a slow
// link, over which one large message takes far longer than a keepalive's
// timeout to arrive.
type slowConn struct{ net.Conn }

func (c slowConn) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond) // the link's pace, not a wait for an event
	return c.Conn.Read(p[:min(len(p), 1<<10)])
}

// A message that takes longer to arrive than the keepalive allows a ping
// to go unanswered is traffic, not silence: the connection is kept.
func TestKeepaliveCountsALongMessageAsTraffic(t *testing.T) {
	srv := sim.New(sim.Options{Reasoning: sim.ReasoningNever, IgnorePings: true})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return slowConn{c}, nil
	}
	cfg := Config{BaseURL: base, Lanes: LanesOn, DisableCompression: true, Dial: dial,
		KeepaliveInterval: 50 * time.Millisecond, KeepaliveTimeout: 150 * time.Millisecond}.WithDefaults()
	c := NewClient(cfg, nil, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	link, err := c.Link(ctx, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := link.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": "sim:tokens=40000 sim:chunk=20000"})
	frame, err := Create{Type: "response.create", Settings: Settings{Model: "m"}, StreamID: "a", Input: []json.RawMessage{msg}}.Frame()
	if err != nil {
		t.Fatal(err)
	}
	st, err := link.Send(ctx, "a", frame)
	if err != nil {
		t.Fatal(err)
	}
	for first := true; ; first = false {
		e, err := st.Next(ctx, first, 30*time.Second, 30*time.Second)
		if err != nil {
			t.Fatalf("the response over a slow link: %v", err)
		}
		if e.Terminal() {
			if _, err := st.End(e); err != nil {
				t.Fatalf("the response over a slow link: %v", err)
			}
			break
		}
	}
	if srv.Handshakes() != 1 {
		t.Errorf("%d handshakes: the connection was dropped while a message arrived", srv.Handshakes())
	}
}
