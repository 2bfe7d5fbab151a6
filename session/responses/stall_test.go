package responses

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// staller dials the network and, once armed, holds every Close of its
// connections until released: as a TLS close does (its close_notify waits
// up to 5 s) when the peer stopped reading.
type staller struct {
	armed   atomic.Bool
	stalled chan struct{} // a value each time a Close begins to wait
	gate    chan struct{} // closed by release
	once    sync.Once
}

func newStaller(t *testing.T) *staller {
	s := &staller{stalled: make(chan struct{}, 16), gate: make(chan struct{})}
	t.Cleanup(s.release)
	return s
}

func (s *staller) release() { s.once.Do(func() { close(s.gate) }) }

func (s *staller) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, s: s}, nil
}

// wait waits for a Close to stall.
func (s *staller) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("no connection was closed")
	}
}

type stallConn struct {
	net.Conn
	s *staller
}

func (c *stallConn) Close() error {
	if c.s.armed.Load() {
		c.s.stalled <- struct{}{}
		<-c.s.gate
	}
	return c.Conn.Close()
}

// A Reconfigure that retires a connection closes it outside the Client's
// lock: while the close waits on the network, the Client still answers.
func TestReconfigureClosesOutsideTheLock(t *testing.T) {
	srv := sim.New(sim.Options{})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st := newStaller(t)
	cfg := Config{BaseURL: base, Lanes: LanesOn, Dial: st.dial}
	c := NewClient(cfg, nil, nil)
	t.Cleanup(func() {
		st.release()
		c.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Link(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	cfg.APIKey = "sk-another-key"
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Reconfigure(cfg) // the idle connection is retired, so closed
	}()
	st.wait(t)
	answered := make(chan Stats, 1)
	go func() { answered <- c.Stats() }()
	select {
	case s := <-answered:
		if s.Conns != 0 {
			t.Errorf("the retired connection is still counted: %+v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stats waited for a connection's close")
	}
	select {
	case <-done:
		t.Fatal("Reconfigure returned while the close it made was stalled")
	default:
	}
	st.release()
	<-done
}
