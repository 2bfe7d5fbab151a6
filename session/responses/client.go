package responses

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Client is one workspace's link to the Responses API. With lanes on it
// keeps one WebSocket shared by the workspace's conversations, each on its
// own stream_id lane (a second one only past the server's 32 lane names
// per connection); with lanes off, one WebSocket per conversation (so that
// sessions never evict each other's baseline from the server's
// one-response default-lane cache). When the WebSocket is refused it falls
// back to HTTP+SSE. Created by NewClient when its owner (session.Client)
// is; Close closes every connection and waits for their readers.
//
// Lock order: Client.mu before wsConn.mu; the dial token before Client.mu.
// No socket is closed or written while Client.mu is held (a TLS close
// waits up to 5 s for a peer that stopped reading): what must close is
// collected under it and closed after.
type Client struct {
	cfg atomic.Pointer[Config] // replaced whole by Reconfigure; read with Config()
	log *slog.Logger

	dialing1 chan struct{} // a token (cap 1) held while dialing: one handshake at a time, waited for within the caller's context

	mu            sync.Mutex           // guards everything below
	conns         map[string][]*wsConn // by key: "" with lanes, the conversation's id without
	retired       map[*wsConn]struct{} // rotated out, closing once idle
	http          *httpLink            // created at the first fallback, kept until Close
	useHTTP       bool                 // requests go over http
	fallbackUntil time.Time            // when to try the WebSocket again; zero: never (HTTP 426)
	fallbackWhy   string
	fallbacks     int    // fallbacks since the WebSocket last opened: each one waits twice as long before the next probe
	notice        string // said once to the editor by the next turn
	noLanesWhy    string // why the endpoint has no stream_id lanes; "" while it has them (or was never tried)
	closed        bool
	connSeq       int
	laneSeq       int
	freeLanes     []string

	noLanes  atomic.Bool // HEARTH_LANES=auto found the endpoint without lanes: one connection per conversation
	dialing  atomic.Int32
	counters counters
	lost     func(key string) // NewClient's: a connection that served responses was lost
	rates    rateBoard        // the latest rate limits the API said
}

// counters are the transport's statistics, shown by status.
type counters struct {
	handshakes, retries, fallbacks, wireSent, wireReceived atomic.Int64
}

// Stats is a snapshot of a Client's transport for status.
type Stats struct {
	Transport  string // ws | http
	HTTP       bool   // requests go over HTTP now
	Dialing    bool   // a handshake is under way
	Closed     bool
	ConnID     string // the oldest live WebSocket
	ConnAge    time.Duration
	Conns      int
	Handshakes int64
	Retries    int64 // handshakes retried
	Fallbacks  int64
	// WireSent and WireReceived are the bytes that crossed the WebSocket's
	// TCP connections, after permessage-deflate (and TLS).
	WireSent     int64
	WireReceived int64
	Fallback     string // why the workspace is on HTTP
	Lanes        string // "on", "off", or "off: " and why the endpoint was found without lanes
}

// NewClient returns a Client for cfg. It does not connect: the first
// request does. lost (may be nil) is called, outside the Client's locks,
// with the key of a connection that served responses and was lost rather
// than closed: the conversations on it re-warm.
func NewClient(cfg Config, log *slog.Logger, lost func(key string)) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{log: log, conns: map[string][]*wsConn{}, dialing1: make(chan struct{}, 1),
		retired: map[*wsConn]struct{}{}, lost: lost}
	cfg = cfg.WithDefaults()
	c.cfg.Store(&cfg)
	return c
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return *c.cfg.Load() }

// Reconfigure replaces the configuration (SIGHUP). Requests built after it
// use the new one: a changed model or instructions make the next request
// full; a new key or base URL applies to the next connection. Live
// connections are retired when the endpoint or key changed, so they close
// once their responses end.
func (c *Client) Reconfigure(cfg Config) {
	cfg = cfg.WithDefaults()
	old := c.cfg.Swap(&cfg)
	if old.BaseURL == cfg.BaseURL && old.APIKey == cfg.APIKey && old.Lanes == cfg.Lanes {
		return
	}
	c.mu.Lock()
	if old.BaseURL != cfg.BaseURL || old.Lanes != cfg.Lanes {
		c.noLanes.Store(false) // a new endpoint (or mode) is tried afresh
		c.noLanesWhy = ""
	}
	var live []*wsConn
	for key, pool := range c.conns {
		live = append(live, pool...)
		delete(c.conns, key)
	}
	c.retireLocked(live)
	c.useHTTP = false
	c.mu.Unlock()
	retire(live)
}

// retireLocked moves conns from the pools to the retired, which close once
// their responses have ended; the caller calls retire(conns) once it has
// released c.mu.
func (c *Client) retireLocked(conns []*wsConn) {
	for _, ws := range conns {
		c.retired[ws] = struct{}{}
	}
}

// retire rotates conns out; an idle one closes now. Called without c.mu.
func retire(conns []*wsConn) {
	for _, ws := range conns {
		ws.retire()
	}
}

// Link returns what a request of the conversation keyed key, on lane, goes
// out on: the live WebSocket for key, a new one, or the HTTP fallback. The
// key is "" for the workspace's shared connection (lanes), the
// conversation's own otherwise.
func (c *Client) Link(ctx context.Context, key, lane string) (Link, error) {
	if c.Config().ForceHTTP {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.http == nil {
			c.http = newHTTPLink(c.Config)
			c.http.headers = c.rates.note
		}
		c.useHTTP, c.fallbackUntil, c.fallbackWhy = true, time.Time{}, "configured"
		return c.http, nil
	}
	if l := c.current(key, lane); l != nil {
		return l, nil
	}
	select {
	case c.dialing1 <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.dialing1 }()
	if l := c.current(key, lane); l != nil {
		return l, nil
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		ws, err := c.dialOnce(ctx, key)
		if err == nil {
			return ws, nil
		}
		switch dialRule(err, ctx.Err() != nil, attempt, time.Since(start), c.Config()) {
		case dialFail:
			return nil, err
		case dialHTTPForGood:
			return c.fallBack(time.Time{}, "the API answered the WebSocket upgrade with HTTP 426"), nil
		case dialFallBack:
			c.log.Warn("WebSocket unavailable; falling back to HTTP", "err", err)
			l := c.fallBack(time.Now().Add(c.probeAfter()), fmt.Sprintf("the WebSocket could not be opened (%v)", err))
			if errors.As(err, new(*unreachableError)) {
				c.TakeNotice() // nothing answered: HTTP meets the same address, and its error says so
			}
			return l, nil
		}
		c.counters.retries.Add(1)
		if err := sleep(ctx, backoff(attempt, 250*time.Millisecond, 5*time.Second)); err != nil {
			return nil, err
		}
	}
}

// current returns a usable link without dialing, retiring a WebSocket that
// is too old.
func (c *Client) current(key, lane string) Link {
	c.mu.Lock()
	l, old := c.currentLocked(key, lane)
	c.mu.Unlock()
	retire(old)
	return l
}

// currentLocked is current with c.mu held; it returns the connections to
// retire once it is released.
func (c *Client) currentLocked(key, lane string) (l Link, old []*wsConn) {
	if c.useHTTP {
		if c.fallbackUntil.IsZero() || time.Now().Before(c.fallbackUntil) {
			return c.http, nil
		}
		c.useHTTP = false // time to try the WebSocket again
	}
	pool := c.conns[key][:0]
	for _, ws := range c.conns[key] {
		switch {
		case !ws.Alive():
		case ws.age() > c.Config().MaxConnAge:
			// Rotate before the server's limit: new requests go to a new
			// connection; this one closes once its responses have ended.
			old = append(old, ws)
		default:
			pool = append(pool, ws)
		}
	}
	c.conns[key] = pool
	c.retireLocked(old)
	// The connection that knows the lane keeps it (its baseline is there);
	// a new lane goes to the first with a name left.
	for _, ws := range pool {
		if ws.knows(lane) {
			return ws, old
		}
	}
	for _, ws := range pool {
		if ws.reserve(lane) {
			return ws, old
		}
	}
	return nil, old
}

func (c *Client) dialOnce(ctx context.Context, key string) (*wsConn, error) {
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
	ws, err := dial(ctx, c.Config(), id, c.log, &c.counters, connHooks{dead: c.forget, noLanes: c.disableLanes, headers: c.rates.note})
	if err != nil {
		return nil, err
	}
	c.log.Info("connected", "conn", id)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		ws.close() // here, not in a goroutine nobody waits for
		return nil, ErrClosed
	}
	c.fallbacks = 0
	c.conns[key] = append(c.conns[key], ws)
	ws.reserve("")
	c.mu.Unlock()
	return ws, nil
}

// probeAfter is how long the workspace stays on HTTP before it tries the
// WebSocket again: FallbackRetry (30 s), doubled for each fallback since
// the WebSocket last opened, at most 5 minutes. A blip costs half a
// minute of full requests, a long outage few futile handshakes.
func (c *Client) probeAfter() time.Duration {
	c.mu.Lock()
	n := c.fallbacks
	c.mu.Unlock()
	d := c.Config().FallbackRetry << min(n, 10)
	return min(d, max(5*time.Minute, c.Config().FallbackRetry))
}

// fallBack switches the workspace to HTTP until until (zero: for good).
func (c *Client) fallBack(until time.Time, why string) Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.http == nil {
		c.http = newHTTPLink(c.Config)
		c.http.headers = c.rates.note
	}
	if !c.useHTTP {
		c.useHTTP = true
		c.fallbacks++
		c.counters.fallbacks.Add(1)
		c.notice = "hearth: " + why + "; using HTTP streaming (each request carries the whole conversation)."
	}
	c.fallbackUntil, c.fallbackWhy = until, why
	return c.http
}

// TakeNotice returns, once, what the editor should be told about the
// transport.
func (c *Client) TakeNotice() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notice
	c.notice = ""
	return n
}

// forget is called by a connection's reader when it exits. A connection
// that served responses and was lost (not closed by Close) is reported to
// lost, so the idle conversations that used it re-warm on a new one and
// their next prompt is incremental again.
func (c *Client) forget(ws *wsConn) {
	c.mu.Lock()
	delete(c.retired, ws)
	var key string
	found := false
	for k, pool := range c.conns {
		for i, cur := range pool {
			if cur == ws {
				key, found = k, true
				c.conns[k] = append(pool[:i:i], pool[i+1:]...)
				break
			}
		}
	}
	lost := !c.closed && ws.completed.Load() > 0 && found
	c.mu.Unlock()
	if err := ws.deadErr(); errors.Is(err, errAborted) {
		// hearth's own doing (a cancel, a silent response): a WebSocket
		// response has no cancel event, so its socket goes.
		c.log.Info("connection closed to abandon a response", "conn", ws.id)
	} else {
		c.log.Info("connection ended", "conn", ws.id, "err", err)
	}
	if lost && c.lost != nil {
		c.lost(key)
	}
}

// FreeLane gives back the lane of a conversation that closed, for a new
// one to reuse.
func (c *Client) FreeLane(lane string) {
	if lane == "" {
		return
	}
	c.mu.Lock()
	c.freeLanes = append(c.freeLanes, lane)
	c.mu.Unlock()
}

// Lanes reports whether conversations go on stream_id lanes of a shared
// connection: HEARTH_LANES on, or auto until the endpoint showed it has
// none.
func (c *Client) Lanes() bool {
	switch c.Config().Lanes {
	case LanesOff:
		return false
	case LanesAuto:
		return !c.noLanes.Load()
	}
	return true
}

// disableLanes is a connection's report that the server ignores or
// refuses stream_id. With HEARTH_LANES=auto the workspace switches to one
// connection per conversation for the daemon's life (or until the
// endpoint changes) and the shared connections are retired; it reports
// whether it did, so the failed requests may be retried.
func (c *Client) disableLanes(from *wsConn, why string) bool {
	if c.Config().Lanes != LanesAuto {
		return false
	}
	c.mu.Lock()
	if c.noLanes.CompareAndSwap(false, true) {
		c.noLanesWhy = why
		c.log.Warn("the model API has no stream_id lanes; one WebSocket per session from now on", "why", why)
	}
	var old []*wsConn
	for _, ws := range c.conns[""] {
		if ws != from {
			old = append(old, ws)
		}
	}
	c.retireLocked(old)
	delete(c.conns, "")
	c.mu.Unlock()
	retire(old)
	return true
}

// NewLane returns a lane name, reusing those of closed conversations so a
// connection's 32 names last.
func (c *Client) NewLane() string {
	if c.Config().Lanes == LanesOff {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.freeLanes); n > 0 {
		l := c.freeLanes[n-1]
		c.freeLanes = c.freeLanes[:n-1]
		return l
	}
	c.laneSeq++
	return fmt.Sprintf("hearth-%d", c.laneSeq)
}

// HTTPMode reports whether requests currently go over HTTP.
func (c *Client) HTTPMode() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.useHTTP && (c.fallbackUntil.IsZero() || time.Now().Before(c.fallbackUntil))
}

// Stats returns a snapshot for status.
func (c *Client) Stats() Stats {
	s := Stats{
		Transport:    "ws",
		Dialing:      c.dialing.Load() > 0,
		Handshakes:   c.counters.handshakes.Load(),
		Retries:      c.counters.retries.Load(),
		Fallbacks:    c.counters.fallbacks.Load(),
		WireSent:     c.counters.wireSent.Load(),
		WireReceived: c.counters.wireReceived.Load(),
	}
	s.HTTP = c.HTTPMode()
	if s.HTTP {
		s.Transport = "http"
	}
	c.mu.Lock()
	s.Closed = c.closed
	switch {
	case c.Config().Lanes == LanesOff:
		s.Lanes = "off"
	case c.noLanes.Load():
		s.Lanes = "off: " + c.noLanesWhy
	default:
		s.Lanes = "on"
	}
	if s.HTTP {
		s.Fallback = c.fallbackWhy
	}
	var oldest *wsConn
	for _, pool := range c.conns {
		for _, ws := range pool {
			if ws.Alive() {
				s.Conns++
				if oldest == nil || ws.created.Before(oldest.created) {
					oldest = ws
				}
			}
		}
	}
	c.mu.Unlock()
	if oldest != nil {
		s.ConnID, s.ConnAge = oldest.id, oldest.age()
	}
	return s
}

// Close closes every connection and waits for their readers. Requests in
// flight fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	var conns []*wsConn
	for _, pool := range c.conns {
		conns = append(conns, pool...)
	}
	for ws := range c.retired {
		conns = append(conns, ws)
	}
	c.conns = map[string][]*wsConn{}
	c.retired = map[*wsConn]struct{}{}
	h := c.http
	c.http, c.useHTTP = nil, false
	c.mu.Unlock()
	for _, ws := range conns {
		ws.close()
	}
	if h != nil {
		h.close()
	}
	return nil
}

// backoff is exponential with full jitter: a random wait in [base·2ⁿ/2,
// base·2ⁿ], capped.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base << attempt
	if d > max || d <= 0 {
		d = max
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
