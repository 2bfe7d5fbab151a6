package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearthd/hearth/store"
)

// Client is one workspace's link to the Responses API. With lanes on it
// keeps one WebSocket shared by the workspace's conversations, each on its
// own stream_id lane (a second one only past the server's 32 lane names
// per connection); with lanes off, one WebSocket per conversation (so that
// sessions never evict each other's baseline from the server's
// one-response default-lane cache). When the WebSocket is refused it falls
// back to HTTP+SSE. Created by NewClient when the daemon opens the
// workspace; Close closes every connection and waits for their readers.
//
// Lock order: Client.mu before wsConn.mu; the dial token before Client.mu.
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
	convs         map[*Conversation]struct{}
	closed        bool
	connSeq       int
	laneSeq       int
	freeLanes     []string

	noLanes   atomic.Bool // HEARTH_LANES=auto found the endpoint without lanes: one connection per conversation
	dialing   atomic.Int32
	warming   atomic.Int32
	rewarming atomic.Int32
	streaming atomic.Int32
	lastTurn  atomic.Int64 // nanoseconds of the last completed turn
	counters  counters
}

// counters are the workspace's request statistics, shown by status.
type counters struct {
	handshakes, warmups, full, incremental, retries, fallbacks atomic.Int64
	bytesSent, bytesSaved, wireSent, wireReceived              atomic.Int64
	inTokens, cachedTokens, outTokens, reasoningTokens         atomic.Int64
}

func (k *counters) addUsage(u store.Usage) {
	k.inTokens.Add(u.Input)
	k.cachedTokens.Add(u.Cached)
	k.outTokens.Add(u.Output)
	k.reasoningTokens.Add(u.Reasoning)
}

// Stats is a snapshot of a Client for status.
type Stats struct {
	State       string // connecting | warming | ready | streaming | re-warming | http-fallback | closed
	Transport   string // ws | http
	ConnID      string
	ConnAge     time.Duration
	Conns       int
	Handshakes  int64
	Warmups     int64
	Full        int64
	Incremental int64
	Retries     int64
	Fallbacks   int64
	BytesSent   int64
	BytesSaved  int64 // what sending full requests instead of increments would have cost extra
	// WireSent and WireReceived are the bytes that crossed the WebSocket's
	// TCP connections, after permessage-deflate (and TLS).
	WireSent     int64
	WireReceived int64
	Usage        store.Usage // tokens of every response since the workspace opened
	LastTurn     time.Duration
	Fallback     string // why the workspace is on HTTP
	Lanes        string // "on", "off", or "off: " and why the endpoint was found without lanes
}

// NewClient returns a Client for cfg. It does not connect: the first
// warm-up or request does.
func NewClient(cfg Config, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{log: log, conns: map[string][]*wsConn{}, dialing1: make(chan struct{}, 1),
		retired: map[*wsConn]struct{}{}, convs: map[*Conversation]struct{}{}}
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
	defer c.mu.Unlock()
	if old.BaseURL != cfg.BaseURL || old.Lanes != cfg.Lanes {
		c.noLanes.Store(false) // a new endpoint (or mode) is tried afresh
		c.noLanesWhy = ""
	}
	for key, pool := range c.conns {
		for _, ws := range pool {
			c.retired[ws] = struct{}{}
			ws.retire()
		}
		delete(c.conns, key)
	}
	c.useHTTP = false
}

// link returns what a request of the conversation keyed key, on lane, goes
// out on: the live WebSocket for key, a new one, or the HTTP fallback.
func (c *Client) link(ctx context.Context, key, lane string) (link, error) {
	if c.Config().ForceHTTP {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.http == nil {
			c.http = newHTTPLink(c.Config)
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
		var he *HandshakeError
		switch {
		case errors.Is(err, ErrClosed) || ctx.Err() != nil:
			return nil, err
		case errors.As(err, &he) && he.StatusCode == 426:
			// This endpoint does not do WebSocket: switch at once, for good.
			return c.fallBack(time.Time{}, "the API answered the WebSocket upgrade with HTTP 426"), nil
		case errors.As(err, &he) && (he.StatusCode == 401 || he.StatusCode == 403 || he.StatusCode == 404):
			return nil, err
		}
		if attempt+1 >= c.Config().DialAttempts || time.Since(start) > c.Config().DialBudget {
			c.log.Warn("WebSocket unavailable; falling back to HTTP", "err", err)
			l := c.fallBack(time.Now().Add(c.probeAfter()), fmt.Sprintf("the WebSocket could not be opened (%v)", err))
			if errors.As(err, new(*unreachableError)) {
				c.takeNotice() // nothing answered: HTTP meets the same address, and its error says so
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
// is too old or has no lane name left for lane.
func (c *Client) current(key, lane string) link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.useHTTP {
		if c.fallbackUntil.IsZero() || time.Now().Before(c.fallbackUntil) {
			return c.http
		}
		c.useHTTP = false // time to try the WebSocket again
	}
	pool := c.conns[key][:0]
	for _, ws := range c.conns[key] {
		switch {
		case !ws.alive():
		case ws.age() > c.Config().MaxConnAge:
			// Rotate before the server's limit: new requests go to a new
			// connection; this one closes once its responses have ended.
			c.retired[ws] = struct{}{}
			ws.retire()
		default:
			pool = append(pool, ws)
		}
	}
	c.conns[key] = pool
	// The connection that knows the lane keeps it (its baseline is there);
	// a new lane goes to the first with a name left.
	for _, ws := range pool {
		if ws.knows(lane) {
			return ws
		}
	}
	for _, ws := range pool {
		if ws.reserve(lane) {
			return ws
		}
	}
	return nil
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
	ws, err := dial(ctx, c.Config(), id, c.log, &c.counters, connHooks{dead: c.forget, noLanes: c.disableLanes})
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
func (c *Client) fallBack(until time.Time, why string) link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.http == nil {
		c.http = newHTTPLink(c.Config)
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

// takeNotice returns, once, what the editor should be told about the
// transport.
func (c *Client) takeNotice() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notice
	c.notice = ""
	return n
}

// forget is called by a connection's reader when it exits. A connection
// that served responses and was lost (not closed by Close) makes the idle
// conversations that used it re-warm on a new one, so their next prompt is
// incremental again.
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
	closed := c.closed
	var again []*Conversation
	if !closed && ws.completed.Load() > 0 && found {
		for conv := range c.convs {
			if key != "" && conv.id != key {
				continue
			}
			again = append(again, conv)
		}
	}
	c.mu.Unlock()
	c.log.Info("connection ended", "conn", ws.id, "err", ws.deadErr())
	for _, conv := range again {
		conv.rewarm()
	}
}

// register and unregister track the conversations to re-warm.
func (c *Client) register(conv *Conversation) {
	c.mu.Lock()
	c.convs[conv] = struct{}{}
	c.mu.Unlock()
}

func (c *Client) unregister(conv *Conversation, lane string) {
	c.mu.Lock()
	delete(c.convs, conv)
	if lane != "" {
		c.freeLanes = append(c.freeLanes, lane)
	}
	c.mu.Unlock()
}

// keyFor is the connection key of a conversation: one shared socket with
// lanes, one socket each without.
func (c *Client) keyFor(conv *Conversation) string {
	if c.lanes() {
		return ""
	}
	return conv.id
}

// lanes reports whether conversations go on stream_id lanes of a shared
// connection: HEARTH_LANES on, or auto until the endpoint showed it has
// none.
func (c *Client) lanes() bool {
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
	defer c.mu.Unlock()
	if c.noLanes.CompareAndSwap(false, true) {
		c.noLanesWhy = why
		c.log.Warn("the model API has no stream_id lanes; one WebSocket per session from now on", "why", why)
	}
	for _, ws := range c.conns[""] {
		if ws != from {
			c.retired[ws] = struct{}{}
			ws.retire()
		}
	}
	delete(c.conns, "")
	return true
}

// newLane returns a lane name, reusing those of closed conversations so a
// connection's 32 names last.
func (c *Client) newLane() string {
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

// httpMode reports whether requests currently go over HTTP.
func (c *Client) httpMode() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.useHTTP && (c.fallbackUntil.IsZero() || time.Now().Before(c.fallbackUntil))
}

// Stats returns a snapshot for status.
func (c *Client) Stats() Stats {
	s := Stats{
		Transport:    "ws",
		Handshakes:   c.counters.handshakes.Load(),
		Warmups:      c.counters.warmups.Load(),
		Full:         c.counters.full.Load(),
		Incremental:  c.counters.incremental.Load(),
		Retries:      c.counters.retries.Load(),
		Fallbacks:    c.counters.fallbacks.Load(),
		BytesSent:    c.counters.bytesSent.Load(),
		BytesSaved:   c.counters.bytesSaved.Load(),
		WireSent:     c.counters.wireSent.Load(),
		WireReceived: c.counters.wireReceived.Load(),
		Usage: store.Usage{Input: c.counters.inTokens.Load(), Cached: c.counters.cachedTokens.Load(),
			Output: c.counters.outTokens.Load(), Reasoning: c.counters.reasoningTokens.Load()},
		LastTurn: time.Duration(c.lastTurn.Load()),
	}
	httpMode := c.httpMode()
	c.mu.Lock()
	closed := c.closed
	switch {
	case c.Config().Lanes == LanesOff:
		s.Lanes = "off"
	case c.noLanes.Load():
		s.Lanes = "off: " + c.noLanesWhy
	default:
		s.Lanes = "on"
	}
	if httpMode {
		s.Fallback = c.fallbackWhy
	}
	var oldest *wsConn
	for _, pool := range c.conns {
		for _, ws := range pool {
			if ws.alive() {
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
	switch {
	case closed:
		s.State = "closed"
	case httpMode:
		s.State, s.Transport = "http-fallback", "http"
		if c.streaming.Load() > 0 {
			s.State = "streaming"
		}
	case c.dialing.Load() > 0:
		s.State = "connecting"
	case c.streaming.Load() > 0:
		s.State = "streaming"
	case c.rewarming.Load() > 0:
		s.State = "re-warming"
	case c.warming.Load() > 0:
		s.State = "warming"
	case oldest != nil:
		s.State = "ready"
	default:
		s.State = "closed"
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
