package session

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// Client is what one workspace's conversations share: the Responses
// transport (responses.Client: its connections, lanes and fallback), the
// conversations to re-warm when a connection they used is lost, and the
// workspace's request counters for status. Created by NewClient when the
// daemon opens the workspace; Close closes the transport (every connection,
// waiting for their readers). Conversations are closed by their owner.
type Client struct {
	cfg atomic.Pointer[Config] // replaced whole by Reconfigure; read with Config()
	api *responses.Client
	log *slog.Logger

	mu    sync.Mutex // guards convs
	convs map[*Conversation]struct{}

	warming   atomic.Int32
	rewarming atomic.Int32
	streaming atomic.Int32
	lastTurn  atomic.Int64 // nanoseconds of the last completed turn
	counters  counters
}

// counters are the workspace's request statistics, shown by status.
type counters struct {
	warmups, full, incremental, retries                atomic.Int64
	bytesSent, bytesSaved                              atomic.Int64
	inTokens, cachedTokens, outTokens, reasoningTokens atomic.Int64
}

func (k *counters) addUsage(u store.Usage) {
	k.inTokens.Add(u.Input)
	k.cachedTokens.Add(u.Cached)
	k.outTokens.Add(u.Output)
	k.reasoningTokens.Add(u.Reasoning)
}

// State is what a workspace's connection to the model API is doing, for
// status (the daemon gives each its wire name: rpc.Workspace*).
type State int

const (
	StateClosed       State = iota // no connection
	StateConnecting                // a handshake is under way
	StateWarming                   // a conversation's warm-up is in flight
	StateReady                     // connected, nothing in flight
	StateStreaming                 // a response is streaming
	StateRewarming                 // a conversation re-warms after a lost connection
	StateHTTPFallback              // on HTTP+SSE after the WebSocket failed
)

// States lists every State, for tables that must name them all.
var States = []State{StateClosed, StateConnecting, StateWarming, StateReady, StateStreaming, StateRewarming, StateHTTPFallback}

// Stats is a snapshot of a Client for status.
type Stats struct {
	State       State
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
	c := &Client{log: log, convs: map[*Conversation]struct{}{}}
	cfg = cfg.WithDefaults()
	c.cfg.Store(&cfg)
	c.api = responses.NewClient(cfg.Transport(), log, c.lost)
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
	c.cfg.Store(&cfg)
	c.api.Reconfigure(cfg.Transport())
}

// lost is the transport's report that a connection that served responses
// was lost: the idle conversations keyed key (all of them for the shared
// connection, key "") re-warm on a new one.
func (c *Client) lost(key string) {
	c.mu.Lock()
	var again []*Conversation
	for conv := range c.convs {
		if key == "" || conv.id == key {
			again = append(again, conv)
		}
	}
	c.mu.Unlock()
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
	c.mu.Unlock()
	c.api.FreeLane(lane)
}

// keyFor is the connection key of a conversation: one shared socket with
// lanes, one socket each without.
func (c *Client) keyFor(id string) string {
	if c.api.Lanes() {
		return ""
	}
	return id
}

// Stats returns a snapshot for status.
func (c *Client) Stats() Stats {
	t := c.api.Stats()
	s := Stats{
		Transport:    t.Transport,
		ConnID:       t.ConnID,
		ConnAge:      t.ConnAge,
		Conns:        t.Conns,
		Handshakes:   t.Handshakes,
		Warmups:      c.counters.warmups.Load(),
		Full:         c.counters.full.Load(),
		Incremental:  c.counters.incremental.Load(),
		Retries:      t.Retries + c.counters.retries.Load(),
		Fallbacks:    t.Fallbacks,
		BytesSent:    c.counters.bytesSent.Load(),
		BytesSaved:   c.counters.bytesSaved.Load(),
		WireSent:     t.WireSent,
		WireReceived: t.WireReceived,
		Usage: store.Usage{Input: c.counters.inTokens.Load(), Cached: c.counters.cachedTokens.Load(),
			Output: c.counters.outTokens.Load(), Reasoning: c.counters.reasoningTokens.Load()},
		LastTurn: time.Duration(c.lastTurn.Load()),
		Fallback: t.Fallback,
		Lanes:    t.Lanes,
	}
	switch {
	case t.Closed:
		s.State = StateClosed
	case t.HTTP:
		s.State = StateHTTPFallback
		if c.streaming.Load() > 0 {
			s.State = StateStreaming
		}
	case t.Dialing:
		s.State = StateConnecting
	case c.streaming.Load() > 0:
		s.State = StateStreaming
	case c.rewarming.Load() > 0:
		s.State = StateRewarming
	case c.warming.Load() > 0:
		s.State = StateWarming
	case t.Conns > 0:
		s.State = StateReady
	default:
		s.State = StateClosed
	}
	return s
}

// RateLimits returns the API's rate limits as its latest answer on this
// workspace's connections said them.
func (c *Client) RateLimits() responses.RateLimits { return c.api.RateLimits() }

// Close closes every connection and waits for their readers. Requests in
// flight fail with responses.ErrClosed.
func (c *Client) Close() error { return c.api.Close() }
