package daemon

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// stallDialer dials the network and, once armed, holds every Close of its
// connections until released: as a TLS close does (its close_notify waits
// up to 5 s) when the peer stopped reading.
type stallDialer struct {
	armed   atomic.Bool
	stalled chan struct{} // a value each time a Close begins to wait
	gate    chan struct{} // closed by release
	once    sync.Once
}

func (s *stallDialer) release() { s.once.Do(func() { close(s.gate) }) }

func (s *stallDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stallingConn{Conn: c, s: s}, nil
}

type stallingConn struct {
	net.Conn
	s *stallDialer
}

func (c *stallingConn) Close() error {
	if c.s.armed.Load() {
		c.s.stalled <- struct{}{}
		<-c.s.gate
	}
	return c.Conn.Close()
}

// A Reload (SIGHUP) retires the workspaces' model connections, and closing
// one may wait on the network. It waits outside the daemon's lock: while a
// close stalls, other calls are answered.
func TestReloadWhileACloseStalls(t *testing.T) {
	st := &stallDialer{stalled: make(chan struct{}, 16), gate: make(chan struct{})}
	td := startDaemon(t, sim.Options{}, "")
	t.Cleanup(st.release) // before the daemon's Close (cleanups run last first)
	td.d.mu.Lock()
	td.d.netDial = st.dial
	td.d.mu.Unlock()
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello") // the workspace's connection is open, and idle now

	st.armed.Store(true)
	cfg := td.d.Config()
	cfg.APIKey = "sk-a-new-key-0000"
	reloaded := make(chan error, 1)
	go func() { reloaded <- td.d.Reload(cfg) }()
	select {
	case <-st.stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the Reload closed no connection")
	}

	answered := make(chan error, 1)
	go func() {
		td.d.Status()
		var r acp.NewSessionResponse
		answered <- ed.call(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &r)
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("session/new during the Reload: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("status and session/new waited for the Reload's stalled close")
	}
	select {
	case err := <-reloaded:
		t.Fatalf("Reload returned (%v) while the close it made was stalled", err)
	default:
	}
	st.release()
	select {
	case err := <-reloaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Reload did not return once the close went through")
	}
	if got := td.d.Config().APIKey; got != cfg.APIKey {
		t.Errorf("after the Reload the daemon has key %q", got)
	}
}
