package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Client is one workspace's link to the Responses API: at most one live
// WebSocket at a time, shared by the workspace's conversations (each on its
// own lane). Created by NewClient when the daemon opens the workspace; Close
// closes the socket and waits for its reader. A dead socket is replaced on
// the next request that needs one.
type Client struct {
	cfg Config
	log *slog.Logger

	dialMu sync.Mutex // held while dialing: one handshake at a time

	mu      sync.Mutex // guards cur, closed, connSeq, laneSeq
	cur     *wsConn
	closed  bool
	connSeq int
	laneSeq int

	dialing   atomic.Int32
	warming   atomic.Int32
	streaming atomic.Int32
	lastTurn  atomic.Int64 // nanoseconds of the last completed turn
	counters  counters
}

// counters are the workspace's request statistics, shown by status.
type counters struct {
	handshakes, warmups, full, incremental, retries, fallbacks atomic.Int64
	bytesSent, bytesSaved                                      atomic.Int64
}

// Stats is a snapshot of a Client for status.
type Stats struct {
	State       string // connecting | warming | ready | streaming | closed
	Transport   string // ws
	ConnID      string
	ConnAge     time.Duration
	Handshakes  int64
	Warmups     int64
	Full        int64
	Incremental int64
	Retries     int64
	Fallbacks   int64
	BytesSent   int64
	BytesSaved  int64 // what sending full requests instead of increments would have cost extra
	LastTurn    time.Duration
}

// NewClient returns a Client for cfg. It does not connect: the first
// warm-up or request does.
func NewClient(cfg Config, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg.WithDefaults(), log: log}
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// conn returns the live connection, dialing a new one when there is none.
func (c *Client) conn(ctx context.Context) (*wsConn, error) {
	if cur := c.live(); cur != nil {
		return cur, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	if cur := c.live(); cur != nil {
		return cur, nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.connSeq++
	id := fmt.Sprintf("ws-%d", c.connSeq)
	c.mu.Unlock()

	c.dialing.Add(1)
	defer c.dialing.Add(-1)
	c.counters.handshakes.Add(1)
	ws, err := dial(ctx, c.cfg, id, c.log, c.forget)
	if err != nil {
		return nil, err
	}
	c.log.Info("connected", "conn", id)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		ws.close()
		return nil, ErrClosed
	}
	c.cur = ws
	c.mu.Unlock()
	return ws, nil
}

func (c *Client) live() *wsConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.cur.alive() {
		return c.cur
	}
	return nil
}

// forget is called by a connection's reader when it exits.
func (c *Client) forget(ws *wsConn) {
	c.mu.Lock()
	if c.cur == ws {
		c.cur = nil
	}
	c.mu.Unlock()
	c.log.Info("connection ended", "conn", ws.id, "err", ws.deadErr())
}

// newLane returns a lane name unique within this client.
func (c *Client) newLane() string {
	if !c.cfg.Lanes {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.laneSeq++
	return fmt.Sprintf("hearth-%d", c.laneSeq)
}

// Stats returns a snapshot for status.
func (c *Client) Stats() Stats {
	s := Stats{
		Transport:   "ws",
		Handshakes:  c.counters.handshakes.Load(),
		Warmups:     c.counters.warmups.Load(),
		Full:        c.counters.full.Load(),
		Incremental: c.counters.incremental.Load(),
		Retries:     c.counters.retries.Load(),
		Fallbacks:   c.counters.fallbacks.Load(),
		BytesSent:   c.counters.bytesSent.Load(),
		BytesSaved:  c.counters.bytesSaved.Load(),
		LastTurn:    time.Duration(c.lastTurn.Load()),
	}
	c.mu.Lock()
	cur, closed := c.cur, c.closed
	c.mu.Unlock()
	live := cur != nil && cur.alive()
	if live {
		s.ConnID, s.ConnAge = cur.id, time.Since(cur.created)
	}
	switch {
	case closed:
		s.State = "closed"
	case c.dialing.Load() > 0:
		s.State = "connecting"
	case c.streaming.Load() > 0:
		s.State = "streaming"
	case c.warming.Load() > 0:
		s.State = "warming"
	case live:
		s.State = "ready"
	default:
		s.State = "closed"
	}
	return s
}

// Close closes the live connection and waits for its reader. Conversations
// using the client see their in-flight requests fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.close()
	}
	return nil
}
